//! Vico–Greengard kernel from the `4n` grid (seed 001 §2.3; Vico, Greengard & Ferrando,
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
/// used axes, 1 for an unused one. Errors: [`Error::Alloc`] when a size overflows.
pub(crate) fn precompute_dims(g: &Geom, l: f64) -> Result<[usize; 3]> {
    let mut p = [1usize; 3];
    for (d, pd) in p.iter_mut().enumerate().take(g.dim) {
        let four = g.n[d]
            .checked_mul(4)
            .ok_or_else(|| Error::Alloc(format!("Vico precomputation grid 4·n[{d}] overflows")))?;
        let need = (1.5 * g.n[d] as f64 + l / g.h[d]).ceil();
        if need.is_nan() || need >= (usize::MAX / 4) as f64 {
            return Err(Error::Alloc(format!("Vico precomputation grid along axis {d} ({need} points) is too large")));
        }
        *pd = four.max(next_smooth_even(need as usize));
    }
    Ok(p)
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

/// `K(o·h)` for `o_d ≤ n_d` from an inverse c2r FFT of `Ĝ_L` on the `P` grid.
/// Errors: [`Error::Alloc`] (the `P` grid), [`Error::Fft`], [`Error::Modes`] (`P_d` beyond FFTW's `int`).
pub(crate) fn kernel_table(g: &Geom, l: f64, p: [usize; 3], nthreads: usize, exec: &Threads) -> Result<Table> {
    let dims = &p[..g.dim];
    let total = dims.iter().try_fold(1usize, |a, &b| a.checked_mul(b)).ok_or_else(|| {
        Error::Alloc(format!("Vico precomputation grid {dims:?} overflows"))
    })?;
    let mut spec = AlignedVec::<Complex64>::zeroed(half_len(dims), "Vico 4n-grid spectrum")?;
    let mut real = AlignedVec::<f64>::zeroed(total, "Vico 4n grid")?;
    let plan = FftPlan::c2r(dims, &mut spec, &mut real, FFTW_ESTIMATE, nthreads)?;
    let hx = p[0] / 2 + 1;
    let dk = [0, 1, 2].map(|d| 2.0 * PI / (p[d] as f64 * g.h[d]));
    let dim = g.dim;
    exec.chunks(&mut spec, hx, |row, r| {
        let (j, k) = (row % p[1], row / p[1]);
        let ky = dk[1] * signed(j, p[1]);
        let kz = dk[2] * signed(k, p[2]);
        let kyz2 = ky * ky + kz * kz;
        for (i, v) in r.iter_mut().enumerate() {
            let kx = dk[0] * i as f64;
            *v = Complex64::new(green::vico_hat(dim, l, (kx * kx + kyz2).sqrt()), 0.0);
        }
    });
    plan.execute_c2r(&mut spec, &mut real);
    drop(spec);
    let vol: f64 = (0..g.dim).map(|d| p[d] as f64 * g.h[d]).product();
    Ok(Table::new(real, p, 1.0 / vol))
}
