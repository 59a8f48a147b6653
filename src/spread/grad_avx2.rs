//! AVX2/FMA loops of [`super::grad`] for `f64` (LLVM does not vectorise the generic loops with
//! fused multiply-adds): x rows are processed as `NV` vectors of 4 (`4·NV ≥ w`, zero weights
//! past `w`), so every row update is `NV` loads and fused multiply-adds. On CPUs with AVX-512F
//! ([`crate::simd::has_avx512`]) widths ≥ 5 take the 512-bit loops instead: rows as `NV`
//! vectors of 8, the last one masked to the width (no access past `w`), which halves the row
//! updates of the SPME orders 5–8 (one vector instead of two).

use super::super::Spreader;
use crate::kernel::bspline::BSplineEval;
use crate::kernel::MAX_WIDTH;
use crate::threads::{SyncPtr, Threads};
use std::arch::x86_64::*;

#[inline(always)]
unsafe fn hsum(v: __m256d) -> f64 {
    let lo = _mm256_castpd256_pd128(v);
    let hi = _mm256_extractf128_pd(v, 1);
    let s = _mm_add_pd(lo, hi);
    _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)))
}

#[inline(always)]
fn wrap(v: isize, n: usize) -> usize {
    if v < 0 {
        (v + n as isize) as usize
    } else if v as usize >= n {
        v as usize - n
    } else {
        v as usize
    }
}

impl Spreader<f64> {
    /// [`Spreader::interp_grad_real`] for `f64` with AVX2/FMA (the caller checked the CPU and
    /// the kernel).
    pub(super) fn interp_grad_f64_avx2(&self, k: &BSplineEval<f64>, grid: &[f64], out: &mut [[f64; 4]], threads: &Threads) {
        let op = SyncPtr(out.as_mut_ptr());
        let nv = self.w[0].div_ceil(4);
        let (wide, nv8) = (crate::simd::has_avx512() && self.w[0] >= 5, self.w[0].div_ceil(8));
        threads.for_each(self.subprobs.len(), |s| {
            let (a, b) = self.subprobs[s];
            let mut loc = vec![[0.0f64; 4]; b - a];
            // SAFETY: the caller checked that the CPU has AVX2 and FMA; AVX-512F is probed.
            unsafe {
                if wide {
                    match nv8 {
                        1 => grad_points512::<1>(self, k, a, grid, &mut loc),
                        _ => grad_points512::<2>(self, k, a, grid, &mut loc),
                    }
                } else {
                    match nv {
                    1 => grad_points::<1>(self, k, a, grid, &mut loc),
                    2 => grad_points::<2>(self, k, a, grid, &mut loc),
                    3 => grad_points::<3>(self, k, a, grid, &mut loc),
                    4 => grad_points::<4>(self, k, a, grid, &mut loc),
                    _ => unreachable!("B-spline width above 16 handled by the generic loop"),
                    }
                }
            }
            let op = op;
            for (q, v) in loc.into_iter().enumerate() {
                // SAFETY: perm is a permutation and subproblems are disjoint: each index once.
                unsafe { *op.0.add(self.perm[a + q] as usize) = v };
            }
        });
    }

    /// Real spreading of the sorted points `a..a+cs.len()` into a box (see
    /// [`Spreader::spread_real`]); the box has 4 spare entries at its end.
    ///
    /// # Safety
    /// The CPU must support AVX2 and FMA.
    pub(super) unsafe fn spread_real_points_f64_avx2(&self, k: &BSplineEval<f64>, a: usize, cs: &[f64], lo: [isize; 3], bsz: [usize; 3], bx: &mut [f64]) {
        if self.w[0] >= 5 && crate::simd::has_avx512() {
            return match self.w[0].div_ceil(8) {
                1 => spread_points512::<1>(self, k, a, cs, lo, bsz, bx),
                _ => spread_points512::<2>(self, k, a, cs, lo, bsz, bx),
            };
        }
        match self.w[0].div_ceil(4) {
            1 => spread_points::<1>(self, k, a, cs, lo, bsz, bx),
            2 => spread_points::<2>(self, k, a, cs, lo, bsz, bx),
            3 => spread_points::<3>(self, k, a, cs, lo, bsz, bx),
            4 => spread_points::<4>(self, k, a, cs, lo, bsz, bx),
            _ => unreachable!("widths above 16 handled by the generic loop"),
        }
    }
}

/// The window of sorted point `p`: B-spline values and derivatives per axis into `vd`, the
/// window's first grid index per axis, its wrapped y rows (`gyi`) and z plane offsets
/// (`gzi`, in rows of `nf[1]`), and whether `xlen` entries from its first x index lie inside
/// the grid row (else the row is gathered with wrap-around).
#[inline(always)]
#[allow(clippy::type_complexity)]
fn window(sp: &Spreader<f64>, k: &BSplineEval<f64>, p: usize, half: f64, xlen: usize, vd: [&mut [[f64; MAX_WIDTH]; 3]; 2],
          gyi: &mut [usize; MAX_WIDTH], gzi: &mut [usize; MAX_WIDTH]) -> ([isize; 3], bool) {
    let (w, nf) = (sp.w[0], sp.nf);
    let [v, dv] = vd;
    // SAFETY: inlined into the AVX2 clones only.
    let i0 = unsafe { kernel3(sp, k, p, half, v, Some(dv)) };
    for t in 0..w {
        gyi[t] = wrap(i0[1] + t as isize, nf[1]);
        gzi[t] = nf[1] * wrap(i0[2] + t as isize, nf[2]);
    }
    (i0, i0[0] >= 0 && i0[0] as usize + xlen <= nf[0])
}

/// First grid index per axis of sorted 3D point `p`'s window (kernel half-width `half`) and
/// the B-spline values `v` (with `dv`: derivatives) at its offsets, the three axes in the lanes
/// of one vector ([`BSplineEval::eval3_avx`]); the same indices and values, bit for bit, as
/// [`Spreader::point_kernel`] or `ceil` and [`BSplineEval::eval_with_deriv`] per axis.
///
/// # Safety
/// The CPU supports AVX2 (inlined into the AVX2 clones).
#[inline(always)]
unsafe fn kernel3(sp: &Spreader<f64>, k: &BSplineEval<f64>, p: usize, half: f64, v: &mut [[f64; MAX_WIDTH]; 3],
                  dv: Option<&mut [[f64; MAX_WIDTH]; 3]>) -> [isize; 3] {
    let g = _mm256_setr_pd(sp.g[0][p], sp.g[1][p], sp.g[2][p], 0.0);
    let start = _mm256_round_pd::<{ _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC }>(_mm256_sub_pd(g, _mm256_set1_pd(half)));
    k.eval3_avx(_mm256_sub_pd(start, g), v, dv);
    let mut s = [0.0f64; 4];
    _mm256_storeu_pd(s.as_mut_ptr(), start);
    [s[0] as isize, s[1] as isize, s[2] as isize]
}

/// Value and gradient of the interpolant at sorted points `a..a+out.len()`.
#[target_feature(enable = "avx2,fma")]
unsafe fn grad_points<const NV: usize>(sp: &Spreader<f64>, k: &BSplineEval<f64>, a: usize, grid: &[f64], out: &mut [[f64; 4]]) {
    let w = sp.w[0];
    let wp = 4 * NV;
    let nf = sp.nf;
    let half = 0.5 * w as f64;
    let mut v = [[0.0f64; MAX_WIDTH]; 3];
    let mut dv = [[0.0f64; MAX_WIDTH]; 3];
    let mut scratch = [0.0f64; MAX_WIDTH];
    let gp = grid.as_ptr();
    let (mut gyi, mut gzi) = ([0usize; MAX_WIDTH], [0usize; MAX_WIDTH]);
    for (q, o) in out.iter_mut().enumerate() {
        let (i0, contiguous) = window(sp, k, a + q, half, wp, [&mut v, &mut dv], &mut gyi, &mut gzi);
        for i in w..wp {
            v[0][i] = 0.0;
            dv[0][i] = 0.0;
        }
        let mut av = [_mm256_setzero_pd(); NV];
        let mut ay = [_mm256_setzero_pd(); NV];
        let mut az = [_mm256_setzero_pd(); NV];
        for kz in 0..w {
            let (vz, dvz) = (v[2][kz], dv[2][kz]);
            for jy in 0..w {
                let base = nf[0] * (gyi[jy] + gzi[kz]);
                let rp: *const f64 = if contiguous {
                    gp.add(base + i0[0] as usize)
                } else {
                    for (dx, sv) in scratch[..w].iter_mut().enumerate() {
                        *sv = *grid.get_unchecked(base + wrap(i0[0] + dx as isize, nf[0]));
                    }
                    scratch.as_ptr()
                };
                let wv = _mm256_set1_pd(v[1][jy] * vz);
                let wy = _mm256_set1_pd(dv[1][jy] * vz);
                let wz = _mm256_set1_pd(v[1][jy] * dvz);
                for t in 0..NV {
                    let r = _mm256_loadu_pd(rp.add(4 * t));
                    av[t] = _mm256_fmadd_pd(r, wv, av[t]);
                    ay[t] = _mm256_fmadd_pd(r, wy, ay[t]);
                    az[t] = _mm256_fmadd_pd(r, wz, az[t]);
                }
            }
        }
        let z = _mm256_setzero_pd();
        let (mut sv, mut sx, mut sy, mut sz) = (z, z, z, z);
        for t in 0..NV {
            let vx = _mm256_loadu_pd(v[0].as_ptr().add(4 * t));
            let dvx = _mm256_loadu_pd(dv[0].as_ptr().add(4 * t));
            sv = _mm256_fmadd_pd(av[t], vx, sv);
            sx = _mm256_fmadd_pd(av[t], dvx, sx);
            sy = _mm256_fmadd_pd(ay[t], vx, sy);
            sz = _mm256_fmadd_pd(az[t], vx, sz);
        }
        // ∂/∂g ψ(l − g) = −ψ'(l − g)
        *o = [hsum(sv), -hsum(sx), -hsum(sy), -hsum(sz)];
    }
}

/// [`Spreader::point_kernel`] of sorted point `p` for the real spreading loops: in 3D from
/// order 2 on by [`kernel3`] (the same values).
#[inline(always)]
unsafe fn real_point_kernel(sp: &Spreader<f64>, k: &BSplineEval<f64>, g: &[&[f64]; 3], p: usize, ker: &mut [[f64; MAX_WIDTH]; 3], i0: &mut [isize; 3]) {
    if sp.dim == 3 && sp.w[0] >= 2 {
        *i0 = kernel3(sp, k, p, 0.5 * sp.w[0] as f64, ker, None);
    } else {
        sp.point_kernel::<BSplineEval<f64>, false>(k, g, p, ker, i0);
    }
}

/// Real spreading, rows as `NV` vectors (zero weights past `w`).
#[target_feature(enable = "avx2,fma")]
unsafe fn spread_points<const NV: usize>(sp: &Spreader<f64>, k: &BSplineEval<f64>, a: usize, cs: &[f64], lo: [isize; 3], bsz: [usize; 3], bx: &mut [f64]) {
    let w = sp.w[0];
    let wp = 4 * NV;
    let mut ker = sp.kernel_buffer();
    let mut i0 = [0isize; 3];
    debug_assert!(bx.len() >= bsz[0] * bsz[1] * bsz[2] + wp - w);
    let bp = bx.as_mut_ptr();
    let g: [&[f64]; 3] = [&sp.g[0], &sp.g[1], &sp.g[2]];
    for (q, &cv) in cs.iter().enumerate() {
        real_point_kernel(sp, k, &g, a + q, &mut ker, &mut i0);
        for i in w..wp {
            ker[0][i] = 0.0;
        }
        let l = [(i0[0] - lo[0]) as usize, (i0[1] - lo[1]) as usize, (i0[2] - lo[2]) as usize];
        let c = _mm256_set1_pd(cv);
        let mut kc = [_mm256_setzero_pd(); NV];
        for t in 0..NV {
            kc[t] = _mm256_mul_pd(_mm256_loadu_pd(ker[0].as_ptr().add(4 * t)), c);
        }
        // unused axes (dim < 3) have width 1 and weight 1
        for kz in 0..sp.w[2] {
            let vz = ker[2][kz];
            for jy in 0..sp.w[1] {
                let vv = _mm256_set1_pd(vz * ker[1][jy]);
                let rp = bp.add(l[0] + bsz[0] * (l[1] + jy + bsz[1] * (l[2] + kz)));
                for t in 0..NV {
                    let d = rp.add(4 * t);
                    _mm256_storeu_pd(d, _mm256_fmadd_pd(kc[t], vv, _mm256_loadu_pd(d)));
                }
            }
        }
    }
}

/// Lane masks of the `NV` 512-bit vectors of a row of width `w` (`8·NV ≥ w`).
#[inline(always)]
fn masks512<const NV: usize>(w: usize) -> [__mmask8; NV] {
    let mut m = [0 as __mmask8; NV];
    for (t, mt) in m.iter_mut().enumerate() {
        let n = w.saturating_sub(8 * t).min(8);
        *mt = ((1u32 << n) - 1) as __mmask8;
    }
    m
}

/// [`grad_points`] with 512-bit vectors: rows as `NV` vectors of 8, masked to the width.
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn grad_points512<const NV: usize>(sp: &Spreader<f64>, k: &BSplineEval<f64>, a: usize, grid: &[f64], out: &mut [[f64; 4]]) {
    let w = sp.w[0];
    let mk = masks512::<NV>(w);
    let nf = sp.nf;
    let half = 0.5 * w as f64;
    let mut v = [[0.0f64; MAX_WIDTH]; 3];
    let mut dv = [[0.0f64; MAX_WIDTH]; 3];
    let mut scratch = [0.0f64; MAX_WIDTH];
    let gp = grid.as_ptr();
    let (mut gyi, mut gzi) = ([0usize; MAX_WIDTH], [0usize; MAX_WIDTH]);
    for (q, o) in out.iter_mut().enumerate() {
        let (i0, contiguous) = window(sp, k, a + q, half, w, [&mut v, &mut dv], &mut gyi, &mut gzi);
        let mut av = [_mm512_setzero_pd(); NV];
        let mut ay = [_mm512_setzero_pd(); NV];
        let mut az = [_mm512_setzero_pd(); NV];
        for kz in 0..w {
            let (vz, dvz) = (v[2][kz], dv[2][kz]);
            for jy in 0..w {
                let base = nf[0] * (gyi[jy] + gzi[kz]);
                let rp: *const f64 = if contiguous {
                    gp.add(base + i0[0] as usize)
                } else {
                    for (dx, sv) in scratch[..w].iter_mut().enumerate() {
                        *sv = *grid.get_unchecked(base + wrap(i0[0] + dx as isize, nf[0]));
                    }
                    scratch.as_ptr()
                };
                let wv = _mm512_set1_pd(v[1][jy] * vz);
                let wy = _mm512_set1_pd(dv[1][jy] * vz);
                let wz = _mm512_set1_pd(v[1][jy] * dvz);
                for t in 0..NV {
                    let r = _mm512_maskz_loadu_pd(mk[t], rp.add(8 * t));
                    av[t] = _mm512_fmadd_pd(r, wv, av[t]);
                    ay[t] = _mm512_fmadd_pd(r, wy, ay[t]);
                    az[t] = _mm512_fmadd_pd(r, wz, az[t]);
                }
            }
        }
        let z = _mm512_setzero_pd();
        let (mut sv, mut sx, mut sy, mut sz) = (z, z, z, z);
        for t in 0..NV {
            let vx = _mm512_maskz_loadu_pd(mk[t], v[0].as_ptr().add(8 * t));
            let dvx = _mm512_maskz_loadu_pd(mk[t], dv[0].as_ptr().add(8 * t));
            sv = _mm512_fmadd_pd(av[t], vx, sv);
            sx = _mm512_fmadd_pd(av[t], dvx, sx);
            sy = _mm512_fmadd_pd(ay[t], vx, sy);
            sz = _mm512_fmadd_pd(az[t], vx, sz);
        }
        // ∂/∂g ψ(l − g) = −ψ'(l − g)
        *o = [_mm512_reduce_add_pd(sv), -_mm512_reduce_add_pd(sx), -_mm512_reduce_add_pd(sy), -_mm512_reduce_add_pd(sz)];
    }
}

/// [`spread_points`] with 512-bit vectors: rows as `NV` vectors of 8, masked to the width (no
/// write past `w`).
#[target_feature(enable = "avx512f,avx2,fma")]
unsafe fn spread_points512<const NV: usize>(sp: &Spreader<f64>, k: &BSplineEval<f64>, a: usize, cs: &[f64], lo: [isize; 3], bsz: [usize; 3], bx: &mut [f64]) {
    let w = sp.w[0];
    let mk = masks512::<NV>(w);
    let mut ker = sp.kernel_buffer();
    let mut i0 = [0isize; 3];
    let bp = bx.as_mut_ptr();
    let g: [&[f64]; 3] = [&sp.g[0], &sp.g[1], &sp.g[2]];
    for (q, &cv) in cs.iter().enumerate() {
        real_point_kernel(sp, k, &g, a + q, &mut ker, &mut i0);
        let l = [(i0[0] - lo[0]) as usize, (i0[1] - lo[1]) as usize, (i0[2] - lo[2]) as usize];
        let c = _mm512_set1_pd(cv);
        let mut kc = [_mm512_setzero_pd(); NV];
        for t in 0..NV {
            kc[t] = _mm512_mul_pd(_mm512_maskz_loadu_pd(mk[t], ker[0].as_ptr().add(8 * t)), c);
        }
        // unused axes (dim < 3) have width 1 and weight 1
        for kz in 0..sp.w[2] {
            let vz = ker[2][kz];
            for jy in 0..sp.w[1] {
                let vv = _mm512_set1_pd(vz * ker[1][jy]);
                let rp = bp.add(l[0] + bsz[0] * (l[1] + jy + bsz[1] * (l[2] + kz)));
                for t in 0..NV {
                    let d = rp.add(8 * t);
                    _mm512_mask_storeu_pd(d, mk[t], _mm512_fmadd_pd(kc[t], vv, _mm512_maskz_loadu_pd(mk[t], d)));
                }
            }
        }
    }
}
