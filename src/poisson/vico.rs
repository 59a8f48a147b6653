//! Vico–Greengard kernel from the `4n` grid (Mayani et al. 2025 §2.3; Vico, Greengard & Ferrando,
//! J. Comput. Phys. 323 (2016) 191).
//!
//! The truncated Green's function `G_L = G·1{|x| < L}` (with `L` larger than the box diagonal)
//! equals `G` wherever the convolution needs it, and its Fourier transform
//! [`green::vico_hat`] is smooth. The band-limited kernel at the node offsets,
//!
//! `K(m h) = (2π)^{−d} ∫_{|k_d| < π/h_d} Ĝ_L(k) e^{i k·m h} dk
//!        ≈ (1/Π P_d h_d) Σ_j Ĝ_L(k_j) e^{i k_j·m h},   k_j = 2π j / (P h),`
//!
//! is an inverse FFT of `Ĝ_L` sampled with the k-spacing of a grid of `P_d` points per axis.
//! The sum is `K` periodised with period `P_d h_d`; the periodic images of the support of `G_L`
//! must not reach the offsets used (`|m_d| < n_d`), i.e. `P_d > n_d + L/h_d`. The paper's
//! `P_d = 4n_d` satisfies this for boxes of moderate aspect ratio (cube: `n + 1.91 n < 4n`);
//! for elongated boxes the short axes are enlarged to `next_smooth_even(⌈1.5 n_d + L/h_d⌉)`
//! (see [`precompute_dims`]). `Ĝ_L` is real and even, so a c2r of its half spectrum gives `K`
//! (real); `K` is then restricted to the doubled grid (offsets `|m_d| ≤ n_d`).

use super::green;
use crate::threads::Threads;
use super::Geom;
use crate::error::{Error, Result};
use crate::fft::{half_len, next_smooth_even, AlignedVec, FftPlan, FFTW_ESTIMATE};
use num_complex::Complex64;
use std::f64::consts::PI;

/// Kernel values `K(o·h)` for non-negative offsets `o_d ≤ n_d`, stored on a real grid of
/// `dims` (x fastest) and multiplied by `scale` on lookup.
pub(crate) struct Table {
    data: AlignedVec<f64>,
    dims: [usize; 3],
    scale: f64,
}

impl Table {
    pub(crate) fn new(data: AlignedVec<f64>, dims: [usize; 3], scale: f64) -> Table {
        Table { data, dims, scale }
    }
    /// `K` at the offset `o` (each `o_d < dims_d`).
    #[inline]
    pub(crate) fn get(&self, o: [usize; 3]) -> f64 {
        self.data[o[0] + self.dims[0] * (o[1] + self.dims[1] * o[2])] * self.scale
    }
}

/// Precomputation FFT grid `P_d = max(4 n_d, next_smooth_even(⌈1.5 n_d + L/h_d⌉))` for the
/// used axes, 1 for an unused one (`L` and `h` in the plan's units).
///
/// Bounded before any search or allocation depends on it: `Π P_d ≤`
/// [`super::MAX_PRECOMPUTE_RATIO`]` · Π 2n_d` (the doubled grid) and every `P_d ≤ i32::MAX`
/// (FFTW's `int`). Flat or strongly anisotropic grids (`L/h_d ≫ n_d` on a short or finely
/// spaced axis) exceed it. Errors: [`Error::Range`] (the grid and the limit, with the sizes).
pub(crate) fn precompute_dims(g: &Geom, l: f64) -> Result<[usize; 3]> {
    let m2: f64 = g.dims2().iter().map(|&v| v as f64).product();
    let limit = super::MAX_PRECOMPUTE_RATIO as f64 * m2;
    let mut need = [1f64; 3];
    for d in 0..g.dim {
        need[d] = (4.0 * g.n[d] as f64).max((1.5 * g.n[d] as f64 + l / g.h[d]).ceil());
    }
    let total: f64 = need[..g.dim].iter().product();
    let too_large = |what: f64| {
        Error::Range(format!(
            "the Vico precomputation grid for this grid (n = {:?}, spacings {:?} in units of their geometric mean, \
             truncation radius L = {l:e}) needs {what:e} points (per axis ≥ {:?}), more than the supported \
             {} × the doubled grid ({m2:e} points) = {limit:e}; the grid is too flat or too anisotropic for the \
             Vico methods (use FARFIELD_POISSON_HOCKNEY, a less anisotropic spacing, or a smaller vico_factor)",
            &g.n[..g.dim],
            g.h[..g.dim].iter().map(|v| format!("{v:e}")).collect::<Vec<_>>(),
            need[..g.dim].iter().map(|v| format!("{v:e}")).collect::<Vec<_>>(),
            super::MAX_PRECOMPUTE_RATIO
        ))
    };
    if !(total <= limit) || need.iter().any(|&v| !(v <= i32::MAX as f64)) {
        return Err(too_large(total));
    }
    let mut p = [1usize; 3];
    for d in 0..g.dim {
        // need[d] ≤ limit ≤ 2^49: the smooth-number scan is short
        p[d] = next_smooth_even(need[d] as usize);
    }
    let total_p: f64 = p[..g.dim].iter().map(|&v| v as f64).product();
    if total_p > limit || p.iter().any(|&v| v > i32::MAX as usize) {
        return Err(too_large(total_p));
    }
    Ok(p)
}

/// Bytes the Vico precomputation allocates for the grid `p` (`dim` axes): the real grid
/// (`8·Π P_d`) and its half spectrum (`16·(P_x/2+1)·Π_{d>0} P_d`), both alive during the c2r.
pub(crate) fn table_bytes(dim: usize, p: [usize; 3]) -> usize {
    let dims = &p[..dim];
    8 * dims.iter().product::<usize>() + 16 * half_len(dims)
}

/// Signed frequency index of `j` on an axis of `n` points (FFT order).
#[inline]
pub(crate) fn signed(j: usize, n: usize) -> f64 {
    if 2 * j <= n {
        j as f64
    } else {
        j as f64 - n as f64
    }
}

/// `K(o·h)` for `o_d ≤ n_d` from an inverse c2r FFT of `Ĝ_L` on the `P` grid; also returns
/// the bytes allocated for it (the two grids, see [`table_bytes`]).
/// Errors: [`Error::Alloc`] (the `P` grid, or the FFTW headroom), [`Error::Fft`].
pub(crate) fn kernel_table(g: &Geom, l: f64, p: [usize; 3], nthreads: usize, exec: &Threads) -> Result<(Table, usize)> {
    let dims = &p[..g.dim];
    let total = dims.iter().try_fold(1usize, |a, &b| a.checked_mul(b)).ok_or_else(|| {
        Error::Alloc(format!("Vico precomputation grid {dims:?} overflows"))
    })?;
    let mut spec = AlignedVec::<Complex64>::zeroed(half_len(dims), "Vico 4n-grid spectrum")?;
    let mut real = AlignedVec::<f64>::zeroed(total, "Vico 4n grid")?;
    let bytes = 8 * real.len() + 16 * spec.len();
    let plan = FftPlan::c2r(dims, &mut spec, &mut real, FFTW_ESTIMATE, nthreads)?;
    let hx = p[0] / 2 + 1;
    let dk = [0, 1, 2].map(|d| 2.0 * PI / (p[d] as f64 * g.h[d]));
    let dim = g.dim;
    // 2D: log in units of L; the plan adds −ln(L)/(2π) to the zero mode
    let ln_l = 0.0;
    exec.chunks(&mut spec, hx, |row, r| {
        let (j, k) = (row % p[1], row / p[1]);
        let ky = dk[1] * signed(j, p[1]);
        let kz = dk[2] * signed(k, p[2]);
        let kyz2 = ky * ky + kz * kz;
        for (i, v) in r.iter_mut().enumerate() {
            let kx = dk[0] * i as f64;
            *v = Complex64::new(green::vico_hat_log(dim, l, ln_l, (kx * kx + kyz2).sqrt()), 0.0);
        }
    });
    plan.execute_c2r(&mut spec, &mut real);
    drop(spec);
    let vol: f64 = (0..g.dim).map(|d| p[d] as f64 * g.h[d]).product();
    Ok((Table::new(real, p, 1.0 / vol), bytes))
}
