//! AVX2/FMA versions of the row loops of [`super::inner`] for `f64` and `f32` (LLVM vectorises
//! the generic loops on 128-bit halves and keeps the accumulators on the stack). A row of `W`
//! interleaved complex values is `2W` reals, processed as `NV` vectors of `L` lanes
//! (`L·NV ≥ 2W`); lanes past `2W` carry zero weights. The vectors may therefore read (and, for
//! spreading, rewrite unchanged) up to `L − 1` reals past the end of the last row: every box
//! handed to these functions has [`BOX_PAD`] extra complex entries at its end.
//!
//! Only called from the `#[target_feature(enable = "avx2,fma")]` clones of the spreader, after
//! the run-time check [`crate::simd::has_avx2_fma`].

use super::inner::PointKernel;
use crate::kernel::MAX_WIDTH;
use num_complex::Complex;
use std::arch::x86_64::*;

/// Complex entries a box must have past its last row (f32 vectors of 8 lanes: 3 complex).
pub const BOX_PAD: usize = 4;

/// Checks that the vectors of `reals` reals from the start of every row of the point's block
/// (corner `l`, `wyz` rows, strides `s`) lie inside a box of `len` complex entries.
#[inline(always)]
fn check_rows(len: usize, s: [usize; 2], l: [usize; 3], wyz: [usize; 2], reals: usize) {
    let last = l[0] + s[0] * (l[1] + wyz[0] - 1 + s[1] * (l[2] + wyz[1] - 1));
    assert!(2 * last + reals <= 2 * len, "rows in the padded box");
}

// The row loop is written out in both functions below on purpose: moved into a shared helper
// taking a closure, the intrinsics inside the closure are no longer inlined into the AVX2/FMA
// clone (closures do not inherit `target_feature`) and spreading ran 15× slower (measured).
macro_rules! row_kernels {
    ($t:ty, $lanes:expr, $v:ty, $zero:ident, $set1:ident, $loadu:ident, $storeu:ident, $fmadd:ident, $spread:ident, $interp:ident) => {
        /// Spreads one point into a box (as [`super::inner::spread_w`], `W ≤ 16`).
        ///
        /// # Safety
        /// AVX2 and FMA available; `bx` has [`BOX_PAD`] entries past every row touched.
        #[inline(always)]
        pub unsafe fn $spread<const W: usize>(bx: &mut [[$t; 2]], s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<$t>, c: Complex<$t>) {
            const L: usize = $lanes;
            let nv = (2 * W).div_ceil(L);
            let mut kc = [0.0 as $t; 2 * MAX_WIDTH + 8];
            for i in 0..W {
                kc[2 * i] = ker[0][i] * c.re;
                kc[2 * i + 1] = ker[0][i] * c.im;
            }
            let mut kv = [$zero(); 8];
            for q in 0..nv {
                kv[q] = $loadu(kc.as_ptr().add(q * L));
            }
            check_rows(bx.len(), s, l, wyz, nv * L);
            let p0 = bx.as_mut_ptr() as *mut $t;
            for k in 0..wyz[1] {
                let vz = ker[2][k];
                for j in 0..wyz[0] {
                    let v = $set1(vz * ker[1][j]);
                    let p = p0.add(2 * (l[0] + s[0] * (l[1] + j + s[1] * (l[2] + k))));
                    for q in 0..nv {
                        $storeu(p.add(q * L), $fmadd(kv[q], v, $loadu(p.add(q * L))));
                    }
                }
            }
        }

        /// Interpolates one point from a box (as [`super::inner::interp_w`], `W ≤ 16`).
        ///
        /// # Safety
        /// AVX2 and FMA available; `bx` has [`BOX_PAD`] entries past every row touched.
        #[inline(always)]
        pub unsafe fn $interp<const W: usize>(bx: &[[$t; 2]], s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<$t>) -> Complex<$t> {
            const L: usize = $lanes;
            let nv = (2 * W).div_ceil(L);
            check_rows(bx.len(), s, l, wyz, nv * L);
            let p0 = bx.as_ptr() as *const $t;
            let mut acc = [$zero(); 8];
            for k in 0..wyz[1] {
                let vz = ker[2][k];
                for j in 0..wyz[0] {
                    let v = $set1(vz * ker[1][j]);
                    let p = p0.add(2 * (l[0] + s[0] * (l[1] + j + s[1] * (l[2] + k))));
                    for q in 0..nv {
                        acc[q] = $fmadd($loadu(p.add(q * L)), v, acc[q]);
                    }
                }
            }
            // contract with the x-kernel, duplicated for the re/im lanes (zero past W)
            let mut kx2 = [0.0 as $t; 2 * MAX_WIDTH + 8];
            for i in 0..W {
                kx2[2 * i] = ker[0][i];
                kx2[2 * i + 1] = ker[0][i];
            }
            let mut sum = $zero();
            for q in 0..nv {
                sum = $fmadd(acc[q], $loadu(kx2.as_ptr().add(q * L)), sum);
            }
            let mut lanes = [0.0 as $t; L];
            $storeu(lanes.as_mut_ptr(), sum);
            let (mut re, mut im) = (0.0 as $t, 0.0 as $t);
            for i in 0..L / 2 {
                re += lanes[2 * i];
                im += lanes[2 * i + 1];
            }
            Complex::new(re, im)
        }
    };
}

row_kernels!(f64, 4, __m256d, _mm256_setzero_pd, _mm256_set1_pd, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_fmadd_pd, spread_f64, interp_f64);
row_kernels!(f32, 8, __m256, _mm256_setzero_ps, _mm256_set1_ps, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_fmadd_ps, spread_f32, interp_f32);
