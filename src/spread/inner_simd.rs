//! AVX2/FMA (256-bit) and AVX-512 (512-bit) versions of the row loops of [`super::inner`] for
//! `f64` and `f32` (LLVM vectorises the generic loops on 128-bit halves and keeps the
//! accumulators on the stack). A row of `W` interleaved complex values is `2W` reals, processed
//! as `NV` vectors of `L` lanes from the last `L`-aligned index at or before the row's start
//! ([`BOX_ALIGN`]); lanes outside the row carry zero weights. The vectors may therefore read
//! (and, for spreading, rewrite unchanged) up to `L − 1` reals past the end of the last row:
//! every box handed to these functions has [`BOX_PAD`] extra complex entries at its end.
//!
//! The 256-bit functions are only called from the `#[target_feature(enable = "avx2,fma")]`
//! clones of the spreader, after the run-time check [`crate::simd::has_avx2_fma`]; the 512-bit
//! ones from the `avx512f` clones, after [`crate::simd::has_avx512`]. With 512-bit vectors a
//! row of w = 13 takes 4 vector updates instead of 7 (ducc0 0.42 dispatches to 512-bit
//! spreading loops on such CPUs too).

use super::inner::PointKernel;
use crate::kernel::MAX_WIDTH;
use num_complex::Complex;
use std::arch::x86_64::*;

/// Complex entries a box must have past its last row (f32 vectors of 16 lanes: up to 15 reals).
pub const BOX_PAD: usize = 8;

/// Bytes of the alignment of the boxes and of their row strides (one cache line, one 512-bit
/// vector): every row of a point then starts at the same offset `o` into a vector, and the
/// row loops below run over whole aligned vectors from `o` reals before the row, with the
/// kernel shifted by `o` lanes (zero weights outside the row), so no vector access straddles
/// two cache lines. Alignment is a speed matter only: the loads and stores are unaligned ones.
pub(super) const BOX_ALIGN: usize = 64;

/// Vectors per row at most (f64 on 256-bit vectors: `⌈(2 + 2·16)/4⌉ = 9`).
const MAX_VECTORS: usize = 9;

/// Checks that the vectors of `reals` reals from `o` reals before the start of every row of
/// the point's block (corner `l`, `wyz` rows, strides `s`) lie inside a box of `len` complex
/// entries.
#[inline(always)]
fn check_rows(len: usize, s: [usize; 2], l: [usize; 3], wyz: [usize; 2], o: usize, reals: usize) {
    let last = l[0] + s[0] * (l[1] + wyz[0] - 1 + s[1] * (l[2] + wyz[1] - 1));
    assert!(o <= 2 * l[0] && 2 * last + reals <= 2 * len + o, "rows in the padded box");
}

// The row loop is written out in both functions below on purpose: moved into a shared helper
// taking a closure, the intrinsics inside the closure are no longer inlined into the AVX2/FMA
// clone (closures do not inherit `target_feature`) and spreading ran 15× slower (measured).
macro_rules! row_kernels {
    ($t:ty, $lanes:expr, $v:ty, $zero:ident, $add:ident, $set1:ident, $loadu:ident, $storeu:ident, $fmadd:ident, $kvec:ident, $spread:ident, $interp:ident) => {
        /// Spreads one point into a box (as [`super::inner::spread_w`], `W ≤ 16`).
        ///
        /// # Safety
        /// The vector extension of the lane width available (AVX2 and FMA, or AVX-512F); `bx` has [`BOX_PAD`] entries past every row touched.
        ///
        /// `FROM_START`: the vectors start at the row's first entry (`o = 0`, a constant number
        /// of vectors), for boxes in which every row starts on a vector boundary
        /// ([`super::Spreader`]'s paired boxes); correct for any row, only slower where the
        /// row does not start on a boundary.
        #[inline(always)]
        pub unsafe fn $spread<const W: usize, const FROM_START: bool>(bx: &mut [[$t; 2]], s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<$t>, c: Complex<$t>) {
            const L: usize = $lanes;
            let o = if FROM_START { 0 } else { 2 * (l[0] % (L / 2)) };
            let nv = (o + 2 * W).div_ceil(L);
            let mut kv = [$zero(); MAX_VECTORS];
            $kvec(&ker[0], W, o, nv, [c.re, c.im], &mut kv);
            check_rows(bx.len(), s, l, wyz, o, nv * L);
            // the row counts as constants where they are the width (every NUFFT: the y and z
            // loops unrolled, the kernel indices unchecked), else as read
            // (WY, WZ = 0: from `wyz`)
            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            unsafe fn rows<const WY: usize, const WZ: usize>(p0: *mut $t, s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<$t>, o: usize, nv: usize, kv: &[$v; MAX_VECTORS]) {
                let wy = if WY == 0 { wyz[0] } else { WY };
                let wz = if WZ == 0 { wyz[1] } else { WZ };
                for k in 0..wz {
                    let vz = ker[2][k];
                    for j in 0..wy {
                        let v = $set1(vz * ker[1][j]);
                        let p = p0.add(2 * (l[0] + s[0] * (l[1] + j + s[1] * (l[2] + k))) - o);
                        for q in 0..nv {
                            $storeu(p.add(q * L), $fmadd(kv[q], v, $loadu(p.add(q * L))));
                        }
                    }
                }
            }
            let p0 = bx.as_mut_ptr() as *mut $t;
            match wyz {
                [a, b] if a == W && b == W => rows::<W, W>(p0, s, l, wyz, ker, o, nv, &kv),
                [a, 1] if a == W => rows::<W, 1>(p0, s, l, wyz, ker, o, nv, &kv),
                _ => rows::<0, 0>(p0, s, l, wyz, ker, o, nv, &kv),
            }
        }

        /// Interpolates one point from a box (as [`super::inner::interp_w`], `W ≤ 16`).
        ///
        /// # Safety
        /// The vector extension of the lane width available (AVX2 and FMA, or AVX-512F); `bx` has [`BOX_PAD`] entries past every row touched.
        #[inline(always)]
        pub unsafe fn $interp<const W: usize>(bx: &[[$t; 2]], s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<$t>) -> Complex<$t> {
            const L: usize = $lanes;
            let o = 2 * (l[0] % (L / 2));
            let nv = (o + 2 * W).div_ceil(L);
            check_rows(bx.len(), s, l, wyz, o, nv * L);
            // the rows weighted by their y and z kernel values and summed, the row counts as
            // constants where they are the width (as in the spreading loop above)
            #[inline(always)]
            unsafe fn rows<const WY: usize, const WZ: usize>(p0: *const $t, s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<$t>, o: usize, nv: usize) -> [$v; MAX_VECTORS] {
                let wy = if WY == 0 { wyz[0] } else { WY };
                let wz = if WZ == 0 { wyz[1] } else { WZ };
                // two accumulator banks, even and odd rows: with one, every row's FMAs wait for
                // the previous row's (4 cycles), and once the rows come from L1 (points ordered by
                // sub-cell, super::sort::sub_cells) that latency is what bounds the loop
                let mut acc = [$zero(); MAX_VECTORS];
                let mut acc2 = [$zero(); MAX_VECTORS];
                for k in 0..wz {
                    let vz = ker[2][k];
                    let mut j = 0;
                    while j + 1 < wy {
                        let (v, v2) = ($set1(vz * ker[1][j]), $set1(vz * ker[1][j + 1]));
                        let p = p0.add(2 * (l[0] + s[0] * (l[1] + j + s[1] * (l[2] + k))) - o);
                        let p2 = p.add(2 * s[0]);
                        for q in 0..nv {
                            acc[q] = $fmadd($loadu(p.add(q * L)), v, acc[q]);
                            acc2[q] = $fmadd($loadu(p2.add(q * L)), v2, acc2[q]);
                        }
                        j += 2;
                    }
                    if j < wy {
                        let v = $set1(vz * ker[1][j]);
                        let p = p0.add(2 * (l[0] + s[0] * (l[1] + j + s[1] * (l[2] + k))) - o);
                        for q in 0..nv {
                            acc[q] = $fmadd($loadu(p.add(q * L)), v, acc[q]);
                        }
                    }
                }
                for q in 0..nv {
                    acc[q] = $add(acc[q], acc2[q]);
                }
                acc
            }
            // the rows summed and contracted with the x-kernel for a vector count `nv` that the
            // caller passes as a constant: a width's rows are one of two counts, by the
            // point's start in its first vector, and each branch below inlines this with its
            // own, so every loop over the vectors is unrolled and the accumulators stay in
            // registers (with the count read at run time, the 512-bit f64 loops on Zen 4 kept
            // them in stack arrays at w ≤ 4 and w = 12, twice as slow, and the AVX2 loops were
            // 20–30 % slower at w = 6, 11 and 13; docs/performance.md)
            #[inline(always)]
            unsafe fn sum_rows<const W: usize>(p0: *const $t, s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<$t>, o: usize, nv: usize) -> Complex<$t> {
                let acc = match wyz {
                    [a, b] if a == W && b == W => rows::<W, W>(p0, s, l, wyz, ker, o, nv),
                    [a, 1] if a == W => rows::<W, 1>(p0, s, l, wyz, ker, o, nv),
                    _ => rows::<0, 0>(p0, s, l, wyz, ker, o, nv),
                };
                // contract with the x-kernel, duplicated for the re/im lanes (zero outside the row)
                let mut kx2 = [$zero(); MAX_VECTORS];
                $kvec(&ker[0], W, o, nv, [1.0, 1.0], &mut kx2);
                let mut sum = $zero();
                for q in 0..nv {
                    sum = $fmadd(acc[q], kx2[q], sum);
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
            let p0 = bx.as_ptr() as *const $t;
            let nv_row_start = (2 * W).div_ceil(L);
            if nv == nv_row_start {
                sum_rows::<W>(p0, s, l, wyz, ker, o, nv_row_start)
            } else {
                sum_rows::<W>(p0, s, l, wyz, ker, o, nv_row_start + 1)
            }
        }
    };
}

// The x-kernel of a point as the row loops' vectors: lane j of vector q weights real
// q·L + j − o of the row, `kx[i]·c[0]` at 2i and `kx[i]·c[1]` at 2i + 1, zero outside the row.
// The f64 versions (256- and 512-bit) permute the kernel's vectors in registers; the 256-bit
// f32 one goes through memory (a vector load of values just written by scalar stores cannot be
// forwarded from the store buffer and waits for them to retire, and the compiler turned the
// copy-out of f64's into a call of `memcpy` with a `vzeroupper` per point: 1D type 1 spreading
// at M = 1e7 on an AVX2 AMD EPYC spent 12–17 % of its time in that call).
macro_rules! kvec_mem {
    ($name:ident, $t:ty, $lanes:expr, $v:ty, $loadu:ident) => {
        #[inline(always)]
        unsafe fn $name(kx: &[$t; MAX_WIDTH], w: usize, o: usize, nv: usize, c: [$t; 2], out: &mut [$v; MAX_VECTORS]) {
            let mut kc = [0.0 as $t; 2 * MAX_WIDTH + 2 * $lanes];
            for i in 0..w {
                kc[o + 2 * i] = kx[i] * c[0];
                kc[o + 2 * i + 1] = kx[i] * c[1];
            }
            for q in 0..nv {
                out[q] = $loadu(kc.as_ptr().add(q * $lanes));
            }
        }
    };
}
kvec_mem!(kvec_f32_256, f32, 8, __m256, _mm256_loadu_ps);

/// The f64 x-kernel vectors with 256-bit registers: the kernel's values four at a time (for an
/// odd row start, `o = 2`, shifted by one value, the previous vector's last value rotated in),
/// each half duplicated onto the re/im lanes by a permute, masked past the row, times `c`.
#[inline(always)]
unsafe fn kvec_f64_256(kx: &[f64; MAX_WIDTH], w: usize, o: usize, nv: usize, c: [f64; 2], out: &mut [__m256d; MAX_VECTORS]) {
    let cv = _mm256_setr_pd(c[0], c[1], c[0], c[1]);
    // lanes hold values 2q, 2q, 2q + 1, 2q + 1 of the shifted sequence kx[i − o/2]
    let lim = _mm256_set1_pd((w + o / 2) as f64);
    let two = _mm256_set1_pd(2.0);
    let mut idx = _mm256_setr_pd(0.0, 0.0, 1.0, 1.0);
    let mut prev = _mm256_setzero_pd();
    for j in 0..nv.div_ceil(2) {
        let v = _mm256_loadu_pd(kx.as_ptr().add(4 * j));
        let s = if o != 0 {
            // [prev₃, v₀, v₁, v₂]
            let rot = _mm256_permute4x64_pd::<0b10_01_00_11>(v);
            let last = _mm256_permute4x64_pd::<0b10_01_00_11>(prev);
            prev = v;
            _mm256_blend_pd::<0b0001>(rot, last)
        } else {
            v
        };
        for h in 0..2 {
            let q = 2 * j + h;
            if q < nv {
                let d = if h == 0 { _mm256_permute4x64_pd::<0b01_01_00_00>(s) } else { _mm256_permute4x64_pd::<0b11_11_10_10>(s) };
                let keep = _mm256_cmp_pd::<_CMP_LT_OQ>(idx, lim);
                out[q] = _mm256_mul_pd(_mm256_and_pd(d, keep), cv);
                idx = _mm256_add_pd(idx, two);
            }
        }
    }
}

#[inline(always)]
unsafe fn kvec_f64_512(kx: &[f64; MAX_WIDTH], w: usize, o: usize, nv: usize, c: [f64; 2], out: &mut [__m512d; MAX_VECTORS]) {
    let (a, b) = (_mm512_loadu_pd(kx.as_ptr()), _mm512_loadu_pd(kx.as_ptr().add(8)));
    let cv = _mm512_setr_pd(c[0], c[1], c[0], c[1], c[0], c[1], c[0], c[1]);
    let lane = _mm512_setr_epi64(0, 1, 2, 3, 4, 5, 6, 7);
    let end = _mm512_set1_epi64(2 * w as i64);
    for q in 0..nv {
        let r = _mm512_add_epi64(lane, _mm512_set1_epi64((8 * q) as i64 - o as i64));
        let valid = _mm512_cmpge_epi64_mask(r, _mm512_setzero_si512()) & _mm512_cmplt_epi64_mask(r, end);
        out[q] = _mm512_mul_pd(_mm512_maskz_permutex2var_pd(valid, a, _mm512_srai_epi64::<1>(r), b), cv);
    }
}

#[inline(always)]
unsafe fn kvec_f32_512(kx: &[f32; MAX_WIDTH], w: usize, o: usize, nv: usize, c: [f32; 2], out: &mut [__m512; MAX_VECTORS]) {
    let a = _mm512_loadu_ps(kx.as_ptr());
    let cv = _mm512_setr_ps(c[0], c[1], c[0], c[1], c[0], c[1], c[0], c[1], c[0], c[1], c[0], c[1], c[0], c[1], c[0], c[1]);
    let lane = _mm512_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
    let end = _mm512_set1_epi32(2 * w as i32);
    for q in 0..nv {
        let r = _mm512_add_epi32(lane, _mm512_set1_epi32((16 * q) as i32 - o as i32));
        let valid = _mm512_cmpge_epi32_mask(r, _mm512_setzero_si512()) & _mm512_cmplt_epi32_mask(r, end);
        out[q] = _mm512_mul_ps(_mm512_maskz_permutexvar_ps(valid, _mm512_srai_epi32::<1>(r), a), cv);
    }
}

row_kernels!(f64, 4, __m256d, _mm256_setzero_pd, _mm256_add_pd, _mm256_set1_pd, _mm256_loadu_pd, _mm256_storeu_pd, _mm256_fmadd_pd, kvec_f64_256, spread_f64, interp_f64);
row_kernels!(f32, 8, __m256, _mm256_setzero_ps, _mm256_add_ps, _mm256_set1_ps, _mm256_loadu_ps, _mm256_storeu_ps, _mm256_fmadd_ps, kvec_f32_256, spread_f32, interp_f32);
row_kernels!(f64, 8, __m512d, _mm512_setzero_pd, _mm512_add_pd, _mm512_set1_pd, _mm512_loadu_pd, _mm512_storeu_pd, _mm512_fmadd_pd, kvec_f64_512, spread_f64_512, interp_f64_512);
row_kernels!(f32, 16, __m512, _mm512_setzero_ps, _mm512_add_ps, _mm512_set1_ps, _mm512_loadu_ps, _mm512_storeu_ps, _mm512_fmadd_ps, kvec_f32_512, spread_f32_512, interp_f32_512);

// ---------------------------------------------------------------------------------------------
// 1D interpolation: one row per point, so the per-point overheads of the general row loops
// above (accumulator banks of MAX_VECTORS zeroed on the stack, the x-kernel built through a
// kernel array of MAX_VECTORS, the lane sum through memory) are most of the work. These take
// the row from its first complex entry with unaligned loads (masked past the row), the
// x-kernel duplicated onto the re/im lanes in registers (a permute, or for f64 on 256-bit
// vectors two broadcasts and a blend), `⌈2W/L⌉` vectors only,
// and sum the lanes pairwise in registers; the value is written straight to `out`.
//
// Store forwarding: the kernel evaluation writes a point's values `kx[..8]` with one vector
// store (512-bit for f64, 256-bit for f32 in the AVX-512 clones) and, from w = 9, `kx[w−8..w]`
// with a second. A load that covers only part of a store, or parts of two, is not forwarded
// from the store buffer: it waits until the stores have been written to L1 (20–30 cycles per
// point). So up to w = 8 the f64 kernel is loaded as the whole 512-bit vector `kx[0..8]`; from
// w = 9, and in the AVX2 clones, f64 rows take each value by a 64-bit broadcast ([`kd_f64`]);
// f32 rows, also in the AVX-512 clones, use the 256-bit function, whose 128-bit loads lie in
// the one 256-bit store up to w = 8 (a 256-bit load widened by LLVM into the memory operand of
// a 512-bit permute read 64 bytes after a 32-byte store). Measured on a 2-core Intel Xeon
// (AVX-512), one thread, M = 10⁷, 1D type 2: f64 w = 7, N = 10⁶: interpolation 0.56 → 0.42 s
// (two threads 0.31 → 0.29 s, bound by the grid's cache misses); f64 w = 10: 0.80 → 0.47 s;
// f32 w = 5, N = 2000: 0.32 → 0.23 s.
//
// Tail loads: a row's last vector, when the window ends inside it, is read by plain loads that
// end with the window (128/256-bit for f64, 64/128-bit for f32) and zero-extended, not by a
// masked load of the whole vector. In the caller's order the window's cache lines are
// prefetched, the bytes past it are not, and the masked load's full width reached into the
// next line: f64 w = 5 on the AVX-512 Zen 4 VM (2026-11-30, M = 10⁷, N = 10⁶, σ = 2, one
// thread) spent 73 % of its loop on the FMA after that load (interpolation 0.385–0.401 s,
// against 0.147–0.152 s with tail loads); docs/performance.md.
// ---------------------------------------------------------------------------------------------

/// Interpolates one 1D point (row starting at complex entry `l0` of `bx`, x-kernel `kx[..W]`)
/// into `*out`, with 512-bit vectors (f64, `W ≤ 16`; the AVX-512 clones call it up to `W = 8`).
/// The kernel values are read as the 512-bit vectors `kx[0..8]` and `kx[8..16]` and duplicated
/// onto the re/im lanes by permutes in registers (store forwarding, above).
///
/// # Safety
/// AVX-512F available; `out` valid for a write.
#[inline(always)]
pub unsafe fn interp1d_f64_512<const W: usize>(bx: &[[f64; 2]], l0: usize, kx: &[f64; MAX_WIDTH], out: *mut Complex<f64>) {
    const L: usize = 8;
    assert!(W <= 16 && l0 + W <= bx.len(), "row in box");
    let nv = (2 * W).div_ceil(L);
    let p = (bx.as_ptr() as *const f64).add(2 * l0);
    let idx = [_mm512_setr_epi64(0, 0, 1, 1, 2, 2, 3, 3), _mm512_setr_epi64(4, 4, 5, 5, 6, 6, 7, 7)];
    let k8 = [_mm512_loadu_pd(kx.as_ptr()), _mm512_loadu_pd(kx.as_ptr().add(8))];
    let mut sum = _mm512_setzero_pd();
    for q in 0..nv {
        let rem = 2 * W - q * L;
        let m: __mmask8 = if rem >= L { 0xff } else { (1u8 << rem) - 1 };
        let kd = _mm512_maskz_permutexvar_pd(m, idx[q % 2], k8[q / 2]);
        let g = if rem >= L {
            _mm512_loadu_pd(p.add(q * L))
        } else {
            // the row's last values by loads that end with the window (tail loads, above)
            let a = p.add(q * L);
            let lo = if rem >= 4 { _mm256_loadu_pd(a) } else { _mm256_zextpd128_pd256(_mm_loadu_pd(a)) };
            let hi = if rem == 6 { _mm256_zextpd128_pd256(_mm_loadu_pd(a.add(4))) } else { _mm256_setzero_pd() };
            _mm512_insertf64x4::<1>(_mm512_zextpd256_pd512(lo), hi)
        };
        sum = _mm512_fmadd_pd(g, kd, sum);
    }
    let s4 = _mm256_add_pd(_mm512_castpd512_pd256(sum), _mm512_extractf64x4_pd::<1>(sum));
    let s2 = _mm_add_pd(_mm256_castpd256_pd128(s4), _mm256_extractf128_pd::<1>(s4));
    _mm_storeu_pd(out as *mut f64, s2);
}

/// The f64 kernel values `kx[2q]` (lanes 0, 1) and `kx[2q + 1]` (lanes 2, 3, zero unless
/// `both`) for vector `q` of a 256-bit 1D row: each value by a 64-bit broadcast load, which lies
/// inside whichever store wrote it (store forwarding, above: from w = 9 the kernel evaluation's
/// two stores overlap, and a 128-bit load could straddle them).
#[inline(always)]
unsafe fn kd_f64(kx: &[f64; MAX_WIDTH], q: usize, both: bool) -> __m256d {
    let hi = if both { _mm256_broadcast_sd(&kx[2 * q + 1]) } else { _mm256_setzero_pd() };
    _mm256_blend_pd::<0b1100>(_mm256_broadcast_sd(&kx[2 * q]), hi)
}

/// [`interp1d_f64_512`] for f32 with 256-bit vectors (AVX2 and FMA; the AVX-512 clones use it
/// too, store forwarding above).
///
/// # Safety
/// AVX2 and FMA available; `out` valid for a write.
#[inline(always)]
pub unsafe fn interp1d_f32<const W: usize>(bx: &[[f32; 2]], l0: usize, kx: &[f32; MAX_WIDTH], out: *mut Complex<f32>) {
    const L: usize = 8;
    assert!(W <= 16 && l0 + W <= bx.len(), "row in box");
    let nv = (2 * W).div_ceil(L);
    let p = (bx.as_ptr() as *const f32).add(2 * l0);
    let idx = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
    let lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    let mut sum = _mm256_setzero_ps();
    for q in 0..nv {
        let rem = 2 * W - q * L;
        let kd = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(kx.as_ptr().add(4 * q))), idx);
        let (g, kd) = if rem >= L {
            (_mm256_loadu_ps(p.add(q * L)), kd)
        } else {
            // rem = 2, 4 or 6 values by 64- and 128-bit loads that end with the window (tail
            // loads, above), the other lanes zero
            let m = _mm256_cmpgt_epi32(_mm256_set1_epi32(rem as i32), lane);
            let a = p.add(q * L);
            let lo = if rem >= 4 { _mm_loadu_ps(a) } else { _mm_castpd_ps(_mm_load_sd(a as *const f64)) };
            let hi = if rem == 6 { _mm_castpd_ps(_mm_load_sd(a.add(4) as *const f64)) } else { _mm_setzero_ps() };
            (_mm256_insertf128_ps::<1>(_mm256_castps128_ps256(lo), hi), _mm256_and_ps(kd, _mm256_castsi256_ps(m)))
        };
        sum = _mm256_fmadd_ps(g, kd, sum);
    }
    let s4 = _mm_add_ps(_mm256_castps256_ps128(sum), _mm256_extractf128_ps::<1>(sum));
    let s2 = _mm_add_ps(s4, _mm_movehl_ps(s4, s4));
    _mm_storel_epi64(out as *mut __m128i, _mm_castps_si128(s2));
}

/// [`interp1d_f64_512`] with 256-bit vectors (AVX2 and FMA).
///
/// # Safety
/// AVX2 and FMA available; `out` valid for a write.
#[inline(always)]
pub unsafe fn interp1d_f64<const W: usize>(bx: &[[f64; 2]], l0: usize, kx: &[f64; MAX_WIDTH], out: *mut Complex<f64>) {
    const L: usize = 4;
    assert!(W <= 16 && l0 + W <= bx.len(), "row in box");
    let nv = (2 * W).div_ceil(L);
    let p = (bx.as_ptr() as *const f64).add(2 * l0);
    let mut sum = _mm256_setzero_pd();
    for q in 0..nv {
        let rem = 2 * W - q * L;
        let (g, kd) = if rem >= L {
            (_mm256_loadu_pd(p.add(q * L)), kd_f64(kx, q, true))
        } else {
            // rem = 2: the low complex entry only, by a 128-bit load (tail loads, above)
            (_mm256_zextpd128_pd256(_mm_loadu_pd(p.add(q * L))), kd_f64(kx, q, false))
        };
        sum = _mm256_fmadd_pd(g, kd, sum);
    }
    let s2 = _mm_add_pd(_mm256_castpd256_pd128(sum), _mm256_extractf128_pd::<1>(sum));
    _mm_storeu_pd(out as *mut f64, s2);
}

/// Adds `kx[i]·v` to `bx[l0 + i]` for `i < W`: one 1D kernel window, as unaligned 256-bit
/// vectors of interleaved (re, im) pairs, the window's last one to three entries by 128- and
/// 64-bit accesses that end with it: nothing past the window is read or written, whose cache
/// line the caller's prefetch did not fetch (tail loads, above).
///
/// # Safety
/// AVX2 and FMA available.
#[inline(always)]
pub unsafe fn spread1d_f32<const W: usize>(bx: &mut [[f32; 2]], l0: usize, kx: &[f32; MAX_WIDTH], v: Complex<f32>) {
    const L: usize = 8;
    assert!(W <= 16 && l0 + W <= bx.len(), "window in the row");
    let p = (bx.as_mut_ptr() as *mut f32).add(2 * l0);
    let idx = _mm256_setr_epi32(0, 0, 1, 1, 2, 2, 3, 3);
    let cv = _mm256_setr_ps(v.re, v.im, v.re, v.im, v.re, v.im, v.re, v.im);
    for q in 0..(2 * W) / L {
        let kd = _mm256_permutevar8x32_ps(_mm256_castps128_ps256(_mm_loadu_ps(kx.as_ptr().add(4 * q))), idx);
        _mm256_storeu_ps(p.add(q * L), _mm256_fmadd_ps(kd, cv, _mm256_loadu_ps(p.add(q * L))));
    }
    let (c2, mut j) = (_mm256_castps256_ps128(cv), 4 * (W / 4));
    if W - j >= 2 {
        // two entries: kx[j], kx[j], kx[j + 1], kx[j + 1] onto (re, im, re, im)
        let k2 = _mm_castpd_ps(_mm_load_sd(kx.as_ptr().add(j) as *const f64));
        let a = p.add(2 * j);
        _mm_storeu_ps(a, _mm_fmadd_ps(_mm_unpacklo_ps(k2, k2), c2, _mm_loadu_ps(a)));
        j += 2;
    }
    if W > j {
        let a = p.add(2 * j) as *mut f64;
        let g = _mm_castpd_ps(_mm_load_sd(a));
        _mm_store_sd(a, _mm_castps_pd(_mm_fmadd_ps(_mm_set1_ps(kx[j]), c2, g)));
    }
}

/// [`spread1d_f32`] for f64: 256-bit vectors of two entries, an odd window's last entry by a
/// 128-bit access.
///
/// # Safety
/// AVX2 and FMA available.
#[inline(always)]
pub unsafe fn spread1d_f64<const W: usize>(bx: &mut [[f64; 2]], l0: usize, kx: &[f64; MAX_WIDTH], v: Complex<f64>) {
    const L: usize = 4;
    assert!(W <= 16 && l0 + W <= bx.len(), "window in the row");
    let p = (bx.as_mut_ptr() as *mut f64).add(2 * l0);
    let cv = _mm256_setr_pd(v.re, v.im, v.re, v.im);
    for q in 0..W / 2 {
        let kd = kd_f64(kx, q, true);
        _mm256_storeu_pd(p.add(q * L), _mm256_fmadd_pd(kd, cv, _mm256_loadu_pd(p.add(q * L))));
    }
    if W % 2 == 1 {
        let a = p.add(2 * (W - 1));
        _mm_storeu_pd(a, _mm_fmadd_pd(_mm_set1_pd(kx[W - 1]), _mm256_castpd256_pd128(cv), _mm_loadu_pd(a)));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::spread::inner::{interp_w, spread_w};

    /// The 256-bit and 512-bit row loops against the portable ones, for every width, both
    /// precisions, every alignment of the row start and an unaligned box base, whichever clone
    /// the CPU running the tests would pick; spreading also with the vectors from the row's
    /// start (`FROM_START`), which must be right whether or not the start is aligned.
    macro_rules! check {
        ($name:ident, $t:ty, $tol:expr, $s256:ident, $i256:ident, $s512:ident, $i512:ident) => {
            #[test]
            fn $name() {
                let has256 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
                let has512 = is_x86_feature_detected!("avx512f");
                if !has256 {
                    return;
                }
                fn run<const W: usize>(has512: bool) {
                    let (sx, sy, sz) = (W + 11, W + 3, W + 2);
                    let len = sx * sy * sz + BOX_PAD + 8;
                    let mut ker: PointKernel<$t> = [[0.0; MAX_WIDTH]; 3];
                    for d in 0..3 {
                        for i in 0..W {
                            ker[d][i] = (0.3 + 0.07 * (i * (d + 2)) as f64).sin() as $t;
                        }
                    }
                    let base: Vec<[$t; 2]> = (0..len).map(|i| [((i % 17) as $t) * 0.25 - 1.0, ((i % 13) as $t) * 0.5 - 2.0]).collect();
                    let c = Complex::new(0.75 as $t, -1.25 as $t);
                    for shift in 0..3 {
                        for lx in 0..8 {
                            let l = [lx, 1, 2];
                            let (s, wyz) = ([sx, sy], [W, W]);
                            let bx = &base[shift..];
                            let mut want = bx.to_vec();
                            spread_w::<$t, W, false>(&mut want, s, l, wyz, &ker, c);
                            let iw = interp_w::<$t, W, false>(bx, s, l, wyz, &ker);
                            let mut results = Vec::new();
                            let mut got = bx.to_vec();
                            // SAFETY: AVX2 and FMA checked above; the box has BOX_PAD past its rows.
                            let ig = unsafe {
                                spread_f_256::<W, false>(&mut got, s, l, wyz, &ker, c);
                                interp_f_256::<W>(bx, s, l, wyz, &ker)
                            };
                            results.push(("256-bit", got, ig));
                            // from the row's start (FROM_START): right at every start, aligned or not
                            let mut got = bx.to_vec();
                            // SAFETY: as above.
                            unsafe { spread_f_256::<W, true>(&mut got, s, l, wyz, &ker, c) };
                            results.push(("256-bit from the row's start", got, iw));
                            if has512 {
                                let mut got = bx.to_vec();
                                // SAFETY: AVX-512F checked above.
                                let ig = unsafe {
                                    spread_f_512::<W, false>(&mut got, s, l, wyz, &ker, c);
                                    interp_f_512::<W>(bx, s, l, wyz, &ker)
                                };
                                results.push(("512-bit", got, ig));
                                let mut got = bx.to_vec();
                                // SAFETY: as above.
                                unsafe { spread_f_512::<W, true>(&mut got, s, l, wyz, &ker, c) };
                                results.push(("512-bit from the row's start", got, iw));
                            }
                            let scale = 8.0;
                            for (name, got, ig) in results {
                                for (a, b) in got.iter().zip(&want) {
                                    assert!((a[0] - b[0]).abs() <= $tol * scale && (a[1] - b[1]).abs() <= $tol * scale, "{name} spread, W {W}");
                                }
                                assert!((ig - iw).norm() <= $tol * 100.0 * scale, "{name} interp, W {W}: {ig} vs {iw}");
                            }
                        }
                    }
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn spread_f_256<const W: usize, const FROM_START: bool>(bx: &mut [[$t; 2]], s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<$t>, c: Complex<$t>) {
                    $s256::<W, FROM_START>(bx, s, l, wyz, ker, c)
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn interp_f_256<const W: usize>(bx: &[[$t; 2]], s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<$t>) -> Complex<$t> {
                    $i256::<W>(bx, s, l, wyz, ker)
                }
                #[target_feature(enable = "avx512f,avx2,fma")]
                unsafe fn spread_f_512<const W: usize, const FROM_START: bool>(bx: &mut [[$t; 2]], s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<$t>, c: Complex<$t>) {
                    $s512::<W, FROM_START>(bx, s, l, wyz, ker, c)
                }
                #[target_feature(enable = "avx512f,avx2,fma")]
                unsafe fn interp_f_512<const W: usize>(bx: &[[$t; 2]], s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<$t>) -> Complex<$t> {
                    $i512::<W>(bx, s, l, wyz, ker)
                }
                run::<2>(has512);
                run::<3>(has512);
                run::<4>(has512);
                run::<5>(has512);
                run::<6>(has512);
                run::<7>(has512);
                run::<8>(has512);
                run::<9>(has512);
                run::<10>(has512);
                run::<11>(has512);
                run::<12>(has512);
                run::<13>(has512);
                run::<14>(has512);
                run::<15>(has512);
                run::<16>(has512);
            }
        };
    }

    /// The 1D one-row kernels against the portable row loop, for every width, both
    /// precisions, every row start modulo the vector length, a row ending at the end of the
    /// box (the masked loads read nothing past it; spreading's vectors reach exactly to the
    /// end and leave the entries past the window bit for bit as they were) and kernel values
    /// past `W` that must not count.
    macro_rules! check1d {
        ($name:ident, $t:ty, $tol:expr, $s256:ident, $i256:ident, $i512:ident) => {
            #[test]
            fn $name() {
                let has256 = is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma");
                let has512 = is_x86_feature_detected!("avx512f");
                if !has256 {
                    return;
                }
                fn run<const W: usize>(has512: bool) {
                    let mut ker: PointKernel<$t> = [[0.0; MAX_WIDTH]; 3];
                    for i in 0..MAX_WIDTH {
                        // garbage past W (eval may leave any values there)
                        ker[0][i] = if i < W { (0.3 + 0.07 * (2 * i) as f64).sin() as $t } else { 1e3 };
                    }
                    ker[1][0] = 1.0;
                    ker[2][0] = 1.0;
                    for l0 in 0..9 {
                        let len = l0 + W;
                        let bx: Vec<[$t; 2]> = (0..len).map(|i| [((i % 17) as $t) * 0.25 - 1.0, ((i % 13) as $t) * 0.5 - 2.0]).collect();
                        let want = interp_w::<$t, W, false>(&bx, [len, 1], [l0, 0, 0], [1, 1], &ker);
                        let mut got = vec![Complex::new(0.0 as $t, 0.0); 3];
                        // SAFETY: AVX2 and FMA checked above; got[1] is valid.
                        unsafe { i256::<W>(&bx, l0, &ker[0], &mut got[1]) };
                        if has512 {
                            // SAFETY: AVX-512F checked above.
                            unsafe { i512::<W>(&bx, l0, &ker[0], &mut got[2]) };
                        } else {
                            got[2] = got[1];
                        }
                        assert_eq!(got[0], Complex::new(0.0, 0.0), "no write outside the slot");
                        for g in &got[1..] {
                            assert!((g - want).norm() <= $tol * 100.0, "W {W} l0 {l0}: {g} vs {want}");
                        }
                        // spreading; the entries past the window are −0.0, which an access
                        // past it that adds a zero kernel lane would turn into +0.0
                        let len = l0 + W + 3;
                        let bx: Vec<[$t; 2]> = (0..len)
                            .map(|i| if i < l0 + W { [((i % 17) as $t) * 0.25 - 1.0, ((i % 13) as $t) * 0.5 - 2.0] } else { [-0.0, -0.0] })
                            .collect();
                        let c = Complex::new(0.75 as $t, -1.25 as $t);
                        let mut want = bx.clone();
                        spread_w::<$t, W, false>(&mut want, [len, 1], [l0, 0, 0], [1, 1], &ker, c);
                        let mut got = bx.clone();
                        // SAFETY: AVX2 and FMA checked above.
                        unsafe { s256::<W>(&mut got, l0, &ker[0], c) };
                        for (i, (a, b)) in got.iter().zip(&want).enumerate() {
                            if (l0..l0 + W).contains(&i) {
                                assert!((a[0] - b[0]).abs() <= $tol * 8.0 && (a[1] - b[1]).abs() <= $tol * 8.0, "spread W {W} l0 {l0} entry {i}");
                            } else {
                                assert_eq!(a.map(<$t>::to_bits), bx[i].map(<$t>::to_bits), "spread W {W} l0 {l0}: entry {i} outside the window changed");
                            }
                        }
                    }
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn s256<const W: usize>(bx: &mut [[$t; 2]], l0: usize, kx: &[$t; MAX_WIDTH], c: Complex<$t>) {
                    $s256::<W>(bx, l0, kx, c)
                }
                #[target_feature(enable = "avx2,fma")]
                unsafe fn i256<const W: usize>(bx: &[[$t; 2]], l0: usize, kx: &[$t; MAX_WIDTH], out: *mut Complex<$t>) {
                    $i256::<W>(bx, l0, kx, out)
                }
                #[target_feature(enable = "avx512f,avx2,fma")]
                unsafe fn i512<const W: usize>(bx: &[[$t; 2]], l0: usize, kx: &[$t; MAX_WIDTH], out: *mut Complex<$t>) {
                    $i512::<W>(bx, l0, kx, out)
                }
                run::<2>(has512);
                run::<3>(has512);
                run::<4>(has512);
                run::<5>(has512);
                run::<6>(has512);
                run::<7>(has512);
                run::<8>(has512);
                run::<9>(has512);
                run::<10>(has512);
                run::<11>(has512);
                run::<12>(has512);
                run::<13>(has512);
                run::<14>(has512);
                run::<15>(has512);
                run::<16>(has512);
            }
        };
    }

    check1d!(rows_1d_f64_match_portable_loop, f64, 1e-14, spread1d_f64, interp1d_f64, interp1d_f64_512);
    check1d!(rows_1d_f32_match_portable_loop, f32, 2e-6, spread1d_f32, interp1d_f32, interp1d_f32);

    check!(rows_f64_match_portable_loops, f64, 1e-14, spread_f64, interp_f64, spread_f64_512, interp_f64_512);
    check!(rows_f32_match_portable_loops, f32, 2e-6, spread_f32, interp_f32, spread_f32_512, interp_f32_512);
}
