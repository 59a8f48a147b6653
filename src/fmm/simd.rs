//! Explicit SIMD for the FMM's hot loops (docs/design.md §8). The kernels are written once,
//! `#[inline(always)]` and generic over [`Simd`], a vector of `W = 8` doubles with the few
//! operations they need; they are instantiated with [`Scalar`] (baseline x86-64, any CPU) and
//! with [`Avx2`] inside `#[target_feature(enable = "avx2,fma")]` wrappers chosen at run time
//! (the auto-vectoriser does not reliably vectorise the lane loops, and Rust never contracts
//! `a*b + c` into an FMA on its own) by `crate::simd::has_avx2_fma`, which also documents
//! `FARFIELD_NO_AVX2`.

/// Lane count of the vectorised kernels (particles per P2M/L2P/P2P step, target boxes per M2L
/// tile): 8 doubles = one AVX-512 or two AVX2 registers.
pub(crate) const W: usize = 8;

/// A vector of `W` doubles and its operations (a zero-sized token type selects the
/// implementation).
pub trait Simd: Copy {
    /// The vector type.
    type V: Copy;
    /// All lanes `x`.
    fn splat(self, x: f64) -> Self::V;
    /// Loads `W` lanes.
    fn load(self, p: &[f64; W]) -> Self::V;
    /// Stores `W` lanes.
    fn store(self, p: &mut [f64; W], v: Self::V);
    /// `a + b`.
    fn add(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a − b`.
    fn sub(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a · b`.
    fn mul(self, a: Self::V, b: Self::V) -> Self::V;
    /// `a · b + c` (fused where the hardware has FMA).
    fn fma(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `c − a · b` (fused where the hardware has FMA).
    fn fnma(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V;
    /// `1/√x` where `x > 0`, and 0 where `x ≤ 0` (branch-free).
    fn rsqrt_or_zero(self, x: Self::V) -> Self::V;
    /// Lane sum.
    fn sum(self, a: Self::V) -> f64;
    /// Transposes `W` rows into lanes: `out[i][lane] = rows[lane][i]` for `i < n` (every row
    /// must hold `n` values).
    #[inline(always)]
    fn transpose_in(self, rows: [&[f64]; W], n: usize, out: &mut [[f64; W]]) {
        for (lane, r) in rows.iter().enumerate() {
            for (o, &x) in out[..n].iter_mut().zip(&r[..n]) {
                o[lane] = x;
            }
        }
    }
}

/// Hints the CPU to fetch the cache lines of `data` (no effect where unsupported).
#[inline(always)]
pub fn prefetch(data: &[f64]) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{_mm_prefetch, _MM_HINT_T0};
        let mut i = 0;
        while i < data.len() {
            // SAFETY: prefetching is a hint; the address is inside `data`.
            unsafe { _mm_prefetch::<_MM_HINT_T0>(data.as_ptr().add(i) as *const i8) };
            i += 8;
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = data;
}

/// Portable implementation (plain arrays).
#[derive(Clone, Copy, Debug, Default)]
pub struct Scalar;

impl Simd for Scalar {
    type V = [f64; W];
    #[inline(always)]
    fn splat(self, x: f64) -> Self::V {
        [x; W]
    }
    #[inline(always)]
    fn load(self, p: &[f64; W]) -> Self::V {
        *p
    }
    #[inline(always)]
    fn store(self, p: &mut [f64; W], v: Self::V) {
        *p = v;
    }
    #[inline(always)]
    fn add(self, a: Self::V, b: Self::V) -> Self::V {
        std::array::from_fn(|k| a[k] + b[k])
    }
    #[inline(always)]
    fn sub(self, a: Self::V, b: Self::V) -> Self::V {
        std::array::from_fn(|k| a[k] - b[k])
    }
    #[inline(always)]
    fn mul(self, a: Self::V, b: Self::V) -> Self::V {
        std::array::from_fn(|k| a[k] * b[k])
    }
    #[inline(always)]
    fn fma(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V {
        std::array::from_fn(|k| a[k] * b[k] + c[k])
    }
    #[inline(always)]
    fn fnma(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V {
        std::array::from_fn(|k| c[k] - a[k] * b[k])
    }
    #[inline(always)]
    fn rsqrt_or_zero(self, x: Self::V) -> Self::V {
        std::array::from_fn(|k| if x[k] > 0.0 { 1.0 / x[k].sqrt() } else { 0.0 })
    }
    #[inline(always)]
    fn sum(self, a: Self::V) -> f64 {
        a.iter().sum()
    }
}

#[cfg(target_arch = "x86_64")]
pub use avx2::Avx2;

#[cfg(target_arch = "x86_64")]
mod avx2 {
    use super::{Simd, W};
    use std::arch::x86_64::*;

    /// AVX2 + FMA implementation (two 256-bit registers). Only constructible through the
    /// `unsafe` [`Avx2::new_unchecked`], to be called where the features are known present.
    #[derive(Clone, Copy, Debug)]
    pub struct Avx2(());

    impl Avx2 {
        /// # Safety
        /// The CPU must support AVX2 and FMA, and the code using the token should be compiled
        /// with those features enabled (inside a `#[target_feature]` function) to be fast.
        #[inline(always)]
        pub unsafe fn new_unchecked() -> Self {
            Avx2(())
        }
    }

    // SAFETY (all methods): an `Avx2` token exists only when the CPU has AVX2 and FMA.
    impl Simd for Avx2 {
        type V = (__m256d, __m256d);
        #[inline(always)]
        fn splat(self, x: f64) -> Self::V {
            unsafe { (_mm256_set1_pd(x), _mm256_set1_pd(x)) }
        }
        #[inline(always)]
        fn load(self, p: &[f64; W]) -> Self::V {
            unsafe { (_mm256_loadu_pd(p.as_ptr()), _mm256_loadu_pd(p.as_ptr().add(4))) }
        }
        #[inline(always)]
        fn store(self, p: &mut [f64; W], v: Self::V) {
            unsafe {
                _mm256_storeu_pd(p.as_mut_ptr(), v.0);
                _mm256_storeu_pd(p.as_mut_ptr().add(4), v.1);
            }
        }
        #[inline(always)]
        fn add(self, a: Self::V, b: Self::V) -> Self::V {
            unsafe { (_mm256_add_pd(a.0, b.0), _mm256_add_pd(a.1, b.1)) }
        }
        #[inline(always)]
        fn sub(self, a: Self::V, b: Self::V) -> Self::V {
            unsafe { (_mm256_sub_pd(a.0, b.0), _mm256_sub_pd(a.1, b.1)) }
        }
        #[inline(always)]
        fn mul(self, a: Self::V, b: Self::V) -> Self::V {
            unsafe { (_mm256_mul_pd(a.0, b.0), _mm256_mul_pd(a.1, b.1)) }
        }
        #[inline(always)]
        fn fma(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V {
            unsafe { (_mm256_fmadd_pd(a.0, b.0, c.0), _mm256_fmadd_pd(a.1, b.1, c.1)) }
        }
        #[inline(always)]
        fn fnma(self, a: Self::V, b: Self::V, c: Self::V) -> Self::V {
            unsafe { (_mm256_fnmadd_pd(a.0, b.0, c.0), _mm256_fnmadd_pd(a.1, b.1, c.1)) }
        }
        #[inline(always)]
        fn rsqrt_or_zero(self, x: Self::V) -> Self::V {
            unsafe {
                let one = _mm256_set1_pd(1.0);
                let zero = _mm256_setzero_pd();
                let f = |v: __m256d| {
                    let r = _mm256_div_pd(one, _mm256_sqrt_pd(v));
                    _mm256_and_pd(r, _mm256_cmp_pd::<_CMP_GT_OQ>(v, zero))
                };
                (f(x.0), f(x.1))
            }
        }
        #[inline(always)]
        fn sum(self, a: Self::V) -> f64 {
            unsafe {
                let s = _mm256_add_pd(a.0, a.1);
                let h = _mm_add_pd(_mm256_castpd256_pd128(s), _mm256_extractf128_pd::<1>(s));
                _mm_cvtsd_f64(_mm_add_sd(h, _mm_unpackhi_pd(h, h)))
            }
        }
        #[inline(always)]
        fn transpose_in(self, rows: [&[f64]; W], n: usize, out: &mut [[f64; W]]) {
            let out = &mut out[..n];
            for r in rows.iter() {
                assert!(r.len() >= n);
            }
            let n4 = n / 4 * 4;
            for g in 0..2 {
                let (r0, r1, r2, r3) = (rows[4 * g].as_ptr(), rows[4 * g + 1].as_ptr(), rows[4 * g + 2].as_ptr(), rows[4 * g + 3].as_ptr());
                let mut i = 0;
                while i < n4 {
                    // SAFETY: i + 4 ≤ n ≤ every row's length (asserted above).
                    unsafe {
                        let a = _mm256_loadu_pd(r0.add(i));
                        let b = _mm256_loadu_pd(r1.add(i));
                        let c = _mm256_loadu_pd(r2.add(i));
                        let d = _mm256_loadu_pd(r3.add(i));
                        let ab0 = _mm256_unpacklo_pd(a, b); // a0 b0 a2 b2
                        let ab1 = _mm256_unpackhi_pd(a, b); // a1 b1 a3 b3
                        let cd0 = _mm256_unpacklo_pd(c, d);
                        let cd1 = _mm256_unpackhi_pd(c, d);
                        let t0 = _mm256_permute2f128_pd::<0x20>(ab0, cd0); // a0 b0 c0 d0
                        let t1 = _mm256_permute2f128_pd::<0x20>(ab1, cd1);
                        let t2 = _mm256_permute2f128_pd::<0x31>(ab0, cd0);
                        let t3 = _mm256_permute2f128_pd::<0x31>(ab1, cd1);
                        _mm256_storeu_pd(out[i].as_mut_ptr().add(4 * g), t0);
                        _mm256_storeu_pd(out[i + 1].as_mut_ptr().add(4 * g), t1);
                        _mm256_storeu_pd(out[i + 2].as_mut_ptr().add(4 * g), t2);
                        _mm256_storeu_pd(out[i + 3].as_mut_ptr().add(4 * g), t3);
                    }
                    i += 4;
                }
            }
            for (lane, r) in rows.iter().enumerate() {
                for i in n4..n {
                    out[i][lane] = r[i];
                }
            }
        }
    }
}
