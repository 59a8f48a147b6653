//! Vico–Greengard kernel by a DCT-I on `(P_d/2 + 1)` points per axis — `2n_d + 1` for the
//! default `P_d = 4n_d` (Mayani et al. 2025 §2.4, the "modified Vico–Greengard method").
//!
//! `Ĝ_L` is real and even in every `k_d`, so the `P`-point inverse DFT of [`super::vico`]
//! reduces per axis to
//! `Σ_{j=−P/2+1}^{P/2} X_{|j|} e^{2πi j m/P} = X_0 + (−1)^m X_{P/2} + 2 Σ_{j=1}^{P/2−1} X_j cos(πjm/(P/2))`,
//! which is exactly FFTW's `REDFT00` of length `P/2 + 1`. Only the `Π (P_d/2 + 1)` unique
//! samples are stored, and the result equals the `4n` variant to rounding.

use super::green;
use crate::threads::Threads;
use super::vico::Table;
use super::Geom;
use crate::error::{Error, Result};
use crate::fft::{AlignedVec, FftPlan, FFTW_ESTIMATE};
use std::f64::consts::PI;

/// `K(o·h)` for `o_d ≤ n_d` from a DCT-I of `Ĝ_L` sampled at `k_d = 2π a_d/(P_d h_d)`,
/// `0 ≤ a_d ≤ P_d/2`; also returns the bytes allocated for it (see [`table_bytes`]).
/// Errors: [`Error::Alloc`] (the grid, or the FFTW headroom), [`Error::Fft`], [`Error::Modes`].
pub(crate) fn kernel_table(g: &Geom, l: f64, p: [usize; 3], nthreads: usize, exec: &Threads) -> Result<(Table, usize)> {
    let mut m = [1usize; 3];
    for d in 0..g.dim {
        m[d] = p[d] / 2 + 1;
    }
    let dims = &m[..g.dim];
    let total = dims.iter().try_fold(1usize, |a, &b| a.checked_mul(b)).ok_or_else(|| {
        Error::Alloc(format!("Vico DCT grid {dims:?} overflows"))
    })?;
    let mut buf = AlignedVec::<f64>::zeroed(total, "Vico DCT grid")?;
    let bytes = 8 * buf.len();
    let plan = FftPlan::dct1_inplace(dims, &mut buf, FFTW_ESTIMATE, nthreads)?;
    let dk = [0, 1, 2].map(|d| 2.0 * PI / (p[d] as f64 * g.h[d]));
    let dim = g.dim;
    // 2D: log in units of L; the plan adds −ln(L)/(2π) to the zero mode
    let ln_l = 0.0;
    exec.chunks(&mut buf, m[0], |row, r| {
        let (j, k) = (row % m[1], row / m[1]);
        let ky = dk[1] * j as f64;
        let kz = dk[2] * k as f64;
        let kyz2 = ky * ky + kz * kz;
        for (i, v) in r.iter_mut().enumerate() {
            let kx = dk[0] * i as f64;
            *v = green::vico_hat_log(dim, l, ln_l, (kx * kx + kyz2).sqrt());
        }
    });
    plan.execute_dct1(&mut buf);
    let vol: f64 = (0..g.dim).map(|d| p[d] as f64 * g.h[d]).product();
    Ok((Table::new(buf, m, 1.0 / vol), bytes))
}

/// Bytes the DCT variant allocates for the grid `p`: `8·Π (P_d/2 + 1)`.
pub(crate) fn table_bytes(dim: usize, p: [usize; 3]) -> usize {
    8 * p[..dim].iter().map(|&v| v / 2 + 1).product::<usize>()
}
