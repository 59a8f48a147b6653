//! k-space pieces shared by the particle-mesh methods (spectral Ewald, SPME): the influence
//! function on the FFT grid and the k-space virial.
//!
//! With the grid charge `b_l = Σ_j q_j Π_d ψ(l_d − u_jd)` (`u = K s` in grid units) and its DFT
//! `B(m) = Σ_l b_l e^{−2πi m·l/K} ≈ c(m) S(m)`, `S(m) = Σ_j q_j e^{−i k·r_j}`, the k-space
//! potential at the grid is the inverse DFT of `θ(m) B(m)` with
//! `θ(m) = (4π/V) e^{−k²/4ξ²}/k² / Π_d C_d(m_d)`, and interpolating it with the same window
//! gives `φ^F(r_i) ≈ (4π/V) Σ_{m≠0} e^{−k²/4ξ²}/k² S(m) e^{ik·r_i}` when `C_d ≈ ψ̂_d²`
//! (spectral Ewald: `C_d = ψ̂_d²` exactly, Lindbo–Tornberg's `e^{−(1−η)k²/4ξ²}/k²` scaling in an
//! orthorhombic cell; SPME: `C_d = |Σ_k M_n(k+1) e^{2πimk/K}|²`, Essmann's `1/|b(m)|²`).
//! `θ` is zero at `m = 0` (neutralising background) and on the Nyquist planes `m_d = −K/2`.
//!
//! The k-space energy `U_k = ½ Σ_m θ(m) |B(m)|²` depends on the strain only through `V` and `k`
//! (fractional coordinates, hence `B`, are invariant), so its exact strain derivative gives the
//! virial `W_αβ = −∂U_k/∂ε_αβ = Σ_m ½ θ|B|² [δ_αβ − 2(1/(4ξ²) + 1/k²) k_α k_β]`.

use super::box_::PeriodicBox;
use crate::error::{try_zeroed_vec, Result};
use crate::kernel::bspline::BSplineParams;
use crate::kernel::Kernel;

/// SPME's `C_d` at every FFT index of each axis of the grid `nf`: Essmann's `1/|b_d(m)|²`
/// (eq. 4.7–4.8) for cardinal B-splines of order `order`.
pub(crate) fn spme_corr(nf: [usize; 3], order: usize) -> [Vec<f64>; 3] {
    let p = BSplineParams { order };
    [0, 1, 2].map(|d| p.euler_denominator(nf[d]))
}

/// Spectral Ewald's `C_d = ψ̂_d(m)²` at every FFT index of each axis of the grid `nf`, for the
/// window `kernel` (the truncated Gaussian).
pub(crate) fn spectral_corr(nf: [usize; 3], kernel: &Kernel) -> [Vec<f64>; 3] {
    [0, 1, 2].map(|d| {
        let n = nf[d];
        let fs = kernel.fourier_series(n, n / 2);
        (0..n)
            .map(|i| {
                let m = if 2 * i <= n { i } else { n - i };
                fs[m] * fs[m]
            })
            .collect()
    })
}

/// The integer mode of FFT index `i` on an axis of `n` points (`None` on the Nyquist index).
#[inline(always)]
pub(crate) fn mode_of(i: usize, n: usize) -> Option<i64> {
    if 2 * i < n {
        Some(i as i64)
    } else if 2 * i == n {
        None
    } else {
        Some(i as i64 - n as i64)
    }
}

/// `θ(m)` at the FFT index `i` of the grid `nf` (zero at `m = 0` and on the Nyquist planes),
/// `corr[d][i_d]` = `C_d` at FFT index `i_d` of axis `d`.
#[inline]
pub(crate) fn theta_at(bx: &PeriodicBox, xi: f64, nf: [usize; 3], corr: &[Vec<f64>; 3], i: [usize; 3]) -> f64 {
    let (Some(m0), Some(m1), Some(m2)) = (mode_of(i[0], nf[0]), mode_of(i[1], nf[1]), mode_of(i[2], nf[2])) else {
        return 0.0;
    };
    if m0 == 0 && m1 == 0 && m2 == 0 {
        return 0.0;
    }
    let pref = 4.0 * std::f64::consts::PI / bx.volume;
    let a = 1.0 / (4.0 * xi * xi);
    let k = bx.kvec([m0 as f64, m1 as f64, m2 as f64]);
    let k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
    let c = corr[0][i[0]] * corr[1][i[1]] * corr[2][i[2]];
    pref * (-a * k2).exp() / (k2 * c)
}

/// `θ` on a grid with `nx` stored x-indices (`nf[0]` for a full complex grid, `nf[0]/2 + 1` for
/// a real-to-complex half spectrum), `corr[d][i]` = `C_d` at FFT index `i` of axis `d`.
/// Errors: [`crate::Error::Alloc`].
pub(crate) fn influence(bx: &PeriodicBox, xi: f64, nf: [usize; 3], nx: usize, corr: &[Vec<f64>; 3]) -> Result<Vec<f64>> {
    let mut th = try_zeroed_vec::<f64>(nx * nf[1] * nf[2], "Ewald influence function")?;
    for i2 in 0..nf[2] {
        for i1 in 0..nf[1] {
            for i0 in 0..nx {
                th[i0 + nx * (i1 + nf[1] * i2)] = theta_at(bx, xi, nf, corr, [i0, i1, i2]);
            }
        }
    }
    Ok(th)
}

/// Adds the virial contribution of mode `m` with weight `w·½θ|B|²` (`w` counts the modes a
/// stored half-spectrum entry stands for) into `v` (xx, xy, xz, yy, yz, zz).
#[inline(always)]
pub(crate) fn add_virial(bx: &PeriodicBox, xi: f64, m: [i64; 3], e: f64, v: &mut [f64; 6]) {
    let k = bx.kvec([m[0] as f64, m[1] as f64, m[2] as f64]);
    let k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
    let b = 2.0 * (1.0 / (4.0 * xi * xi) + 1.0 / k2);
    v[0] += e * (1.0 - b * k[0] * k[0]);
    v[1] -= e * b * k[0] * k[1];
    v[2] -= e * b * k[0] * k[2];
    v[3] += e * (1.0 - b * k[1] * k[1]);
    v[4] -= e * b * k[1] * k[2];
    v[5] += e * (1.0 - b * k[2] * k[2]);
}
