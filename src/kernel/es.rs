//! Exponential-of-semicircle ("ES") kernel, Barnett–Magland–af Klinteberg 2019 (SIAM J. Sci.
//! Comput. 41, C479), eq. (1.8): `φ(z) = exp(β(√(1 − z²) − 1))` on `|z| ≤ 1`, used as
//! `ψ(x) = φ(2x/w)` with `x` in grid units and width `w`.
//!
//! Parameters from a tolerance ε and upsampling factor σ follow the paper's §4 / FINUFFT's
//! choices: `w = ⌈log10(10/ε)⌉` for σ = 2 and `w = ⌈−ln ε / (π√(1 − 1/σ))⌉` otherwise
//! (clamped to 2…16); `β = 2.30·w` for σ = 2 (2.20, 2.26, 2.38 for w = 2, 3, 4) and
//! `β = 0.97·π(1 − 1/(2σ))·w` otherwise.
//!
//! The inner loops never call `exp`/`sqrt`: [`EsHorner`] holds, for each of the `w` kernel
//! pieces, a polynomial in the point's fractional offset fitted at plan time by Chebyshev
//! interpolation, with the degree increased until the fit error is below half the
//! tolerance (checked on a fine sample).
//!
//! The Fourier transform for deconvolution is computed by Gauss–Legendre quadrature
//! (paper §3.1, eq. 3.5), with the phases advanced by complex multiplication.

use super::{KernelEval, MAX_WIDTH};
use crate::real::Real;
use num_complex::Complex64;

/// Largest ES width (the width for ε ≈ 1e-15 at σ = 2).
pub const MAX_ES_WIDTH: usize = 16;

/// ES kernel parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct EsParams {
    /// Width in grid points.
    pub w: usize,
    /// Shape parameter β.
    pub beta: f64,
    /// Requested tolerance the parameters were chosen for.
    pub tol: f64,
}

impl EsParams {
    /// Parameters for tolerance `tol` and upsampling factor `sigma` (see module docs).
    pub fn for_tolerance(tol: f64, sigma: f64) -> EsParams {
        let w = if (sigma - 2.0).abs() < 1e-12 {
            (10.0 / tol).log10().ceil()
        } else {
            (-tol.ln() / (std::f64::consts::PI * (1.0 - 1.0 / sigma).sqrt())).ceil()
        };
        let w = (w.max(2.0) as usize).min(MAX_ES_WIDTH);
        let beta_over_w = if (sigma - 2.0).abs() < 1e-12 {
            match w {
                2 => 2.20,
                3 => 2.26,
                4 => 2.38,
                _ => 2.30,
            }
        } else {
            0.97 * std::f64::consts::PI * (1.0 - 1.0 / (2.0 * sigma))
        };
        EsParams { w, beta: beta_over_w * w as f64, tol }
    }

    /// The error estimate behind the width rule for σ ≠ 2: `ε ≈ exp(−π w √(1 − 1/σ))`
    /// (at σ = 2 the rule `w = ⌈log10(10/ε)⌉` is slightly more generous: 1e-15 at w = 16).
    pub fn error_estimate(w: usize, sigma: f64) -> f64 {
        if (sigma - 2.0).abs() < 1e-12 {
            return 10f64.powi(1 - w as i32);
        }
        (-std::f64::consts::PI * w as f64 * (1.0 - 1.0 / sigma).sqrt()).exp()
    }

    /// `φ(z) = exp(β(√(1 − z²) − 1))` for the normalised argument `z ∈ [−1, 1]`, else 0.
    pub fn phi(&self, z: f64) -> f64 {
        if z.abs() >= 1.0 {
            0.0
        } else {
            (self.beta * ((1.0 - z * z).sqrt() - 1.0)).exp()
        }
    }

    /// `ψ(x) = φ(2x/w)`, `x` in grid units.
    pub fn value(&self, x: f64) -> f64 {
        self.phi(2.0 * x / self.w as f64)
    }

    /// `ψ̂(k) = (w/2) ∫_{−1}^{1} φ(z) cos(π k w z / nf) dz` for `k = 0 … kmax`, by
    /// Gauss–Legendre quadrature with `q = 2w + 16` nodes on `[0, 1]` (the integrand is even).
    /// Errors: [`crate::Error::Alloc`] (the `kmax + 1` outputs).
    pub fn fourier_series(&self, nf: usize, kmax: usize) -> crate::Result<Vec<f64>> {
        let q = 2 * self.w + 16;
        let (z, wz) = crate::quad::gauss_legendre(q, 0.0, 1.0);
        let f: Vec<f64> = z.iter().zip(&wz).map(|(&zz, &wq)| wq * self.phi(zz)).collect();
        let half = 0.5 * self.w as f64;
        // e^{i π w z k / nf}, advanced by multiplication in k
        let step: Vec<Complex64> = z.iter()
            .map(|&zz| Complex64::from_polar(1.0, std::f64::consts::PI * self.w as f64 * zz / nf as f64))
            .collect();
        let mut ph = vec![Complex64::new(1.0, 0.0); q];
        let mut out = crate::error::try_vec(kmax.saturating_add(1), "kernel Fourier series")?;
        for k in 0..=kmax {
            let mut s = 0.0;
            for i in 0..q {
                s += f[i] * ph[i].re;
            }
            out.push(2.0 * half * s);
            if k % 64 == 63 {
                // re-anchor the recurrence to keep round-off at machine precision
                for i in 0..q {
                    ph[i] = Complex64::from_polar(1.0, std::f64::consts::PI * self.w as f64 * z[i] * (k + 1) as f64 / nf as f64);
                }
            } else {
                for i in 0..q {
                    ph[i] *= step[i];
                }
            }
        }
        Ok(out)
    }
}

/// Piecewise-polynomial (Horner) evaluator of the ES kernel in precision `T`.
///
/// `coeffs[m * WP + j]` is the coefficient of `s^(deg − m)` of piece `j`, where
/// `s = 2(t + w/2) − 1 ∈ [−1, 1)` and `t` is the offset of [`KernelEval::eval`]; pieces past
/// `w` (up to the padded width `WP`) are zero so the loop vectorises.
#[derive(Debug, Clone)]
pub struct EsHorner<T: Real> {
    w: usize,
    deg: usize,
    coeffs: Vec<T>,
    /// Largest fit error measured at plan time (absolute; φ ≤ 1).
    pub fit_error: f64,
}

/// Padded width of the Horner coefficient rows.
const WP: usize = MAX_ES_WIDTH;

impl<T: Real> EsHorner<T> {
    /// Fits the polynomials for `p`, increasing the degree from `w + 1` until the maximum error
    /// on a fine sample is below `max(tol/2, 4·eps_T)` (or degree 24 is reached).
    pub fn new(p: &EsParams) -> Self {
        let target = (p.tol * 0.5).max(4.0 * T::EPS);
        let w = p.w;
        let mut best: Option<(usize, Vec<f64>, f64)> = None;
        for deg in (w + 1).max(4)..=24 {
            let c = fit(p, deg);
            let err = fit_error(p, deg, &c);
            let better = best.as_ref().map_or(true, |b| err < b.2);
            if better {
                best = Some((deg, c, err));
            }
            if err <= target {
                break;
            }
        }
        let (deg, c, err) = best.expect("at least one degree tried");
        EsHorner { w, deg, coeffs: c.iter().map(|&v| T::of(v)).collect(), fit_error: err }
    }

    /// Polynomial degree used.
    pub fn degree(&self) -> usize {
        self.deg
    }

    /// The Horner coefficients, `(degree + 1)` rows of 16: `coeffs()[m * 16 + j]` is the
    /// coefficient of `s^(degree − m)` of piece `j` (used by the GPU kernels, which evaluate
    /// the same polynomials).
    pub fn coeffs(&self) -> &[T] {
        &self.coeffs
    }
}

/// Chebyshev interpolation of each piece at `deg + 1` nodes, converted to monomials in `s`.
fn fit(p: &EsParams, deg: usize) -> Vec<f64> {
    let n = deg + 1;
    let w = p.w;
    let mut coeffs = vec![0.0; n * WP];
    // monomial coefficients of T_0..T_deg (low power first)
    let mut cheb: Vec<Vec<f64>> = vec![vec![0.0; n]; n];
    cheb[0][0] = 1.0;
    if n > 1 {
        cheb[1][1] = 1.0;
    }
    for m in 2..n {
        for i in 0..n {
            let up = if i > 0 { 2.0 * cheb[m - 1][i - 1] } else { 0.0 };
            cheb[m][i] = up - cheb[m - 2][i];
        }
    }
    let nodes: Vec<f64> = (0..n).map(|i| (std::f64::consts::PI * (i as f64 + 0.5) / n as f64).cos()).collect();
    for j in 0..w {
        let vals: Vec<f64> = nodes.iter().map(|&s| piece(p, j, s)).collect();
        // Chebyshev coefficients a_m = (2/n) Σ_i f(s_i) T_m(s_i) (a_0 halved)
        let mut mono = vec![0.0; n];
        for m in 0..n {
            let mut a = 0.0;
            for i in 0..n {
                a += vals[i] * (m as f64 * (std::f64::consts::PI * (i as f64 + 0.5) / n as f64)).cos();
            }
            a *= 2.0 / n as f64;
            if m == 0 {
                a *= 0.5;
            }
            for i in 0..n {
                mono[i] += a * cheb[m][i];
            }
        }
        for pw in 0..n {
            // row m holds power deg - m
            coeffs[(deg - pw) * WP + j] = mono[pw];
        }
    }
    coeffs
}

/// Piece `j` as a function of `s ∈ [−1, 1]`: ψ(t + j) with `t = (s + 1)/2 − w/2`.
fn piece(p: &EsParams, j: usize, s: f64) -> f64 {
    let t = 0.5 * (s + 1.0) - 0.5 * p.w as f64;
    p.value(t + j as f64)
}

fn fit_error(p: &EsParams, deg: usize, c: &[f64]) -> f64 {
    let mut err: f64 = 0.0;
    let ns = 400;
    for i in 0..=ns {
        let s = -1.0 + 2.0 * i as f64 / ns as f64;
        for j in 0..p.w {
            let mut v = 0.0;
            for m in 0..=deg {
                v = v * s + c[m * WP + j];
            }
            err = err.max((v - piece(p, j, s)).abs());
        }
    }
    err
}

impl<T: Real> KernelEval<T> for EsHorner<T> {
    #[inline(always)]
    fn width(&self) -> usize {
        self.w
    }
    #[inline(always)]
    fn eval(&self, t: T, out: &mut [T; MAX_WIDTH]) {
        let half = T::of(0.5 * self.w as f64);
        let s = (t + half) * T::of(2.0) - T::one();
        let mut acc = [T::zero(); WP];
        acc.copy_from_slice(&self.coeffs[..WP]);
        for m in 1..=self.deg {
            let row = &self.coeffs[m * WP..(m + 1) * WP];
            for j in 0..WP {
                acc[j] = acc[j] * s + row[j];
            }
        }
        out[..WP].copy_from_slice(&acc);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_follow_tolerance() {
        assert_eq!(EsParams::for_tolerance(1e-6, 2.0).w, 7);
        assert_eq!(EsParams::for_tolerance(1e-12, 2.0).w, 13);
        assert_eq!(EsParams::for_tolerance(1e-6, 1.25).w, 10);
        assert_eq!(EsParams::for_tolerance(1e-1, 2.0).w, 2);
    }

    #[test]
    fn horner_matches_exact_kernel() {
        for &(tol, sigma) in &[(1e-2, 2.0), (1e-6, 2.0), (1e-12, 2.0), (1e-14, 2.0), (1e-8, 1.25)] {
            let p = EsParams::for_tolerance(tol, sigma);
            let h = EsHorner::<f64>::new(&p);
            let mut out = [0.0; MAX_WIDTH];
            let mut maxerr: f64 = 0.0;
            for i in 0..997 {
                let t = -0.5 * p.w as f64 + i as f64 / 997.0;
                h.eval(t, &mut out);
                for j in 0..p.w {
                    maxerr = maxerr.max((out[j] - p.value(t + j as f64)).abs());
                }
            }
            eprintln!("tol {tol} sigma {sigma}: w {} deg {} err {maxerr:e}", p.w, h.degree());
            // the fit must not add more than half the tolerance to the kernel error
            assert!(maxerr <= (tol * 0.5).max(1e-14), "tol {tol}: err {maxerr} deg {}", h.degree());
        }
    }

    #[test]
    fn fourier_series_matches_fine_quadrature() {
        let p = EsParams::for_tolerance(1e-10, 2.0);
        let nf = 64;
        let fs = p.fourier_series(nf, 32).unwrap();
        for &k in &[0usize, 1, 7, 20, 32] {
            // composite midpoint rule with many points on the support
            let n = 200_000;
            let a = 0.5 * p.w as f64;
            let h = 2.0 * a / n as f64;
            let mut s = 0.0;
            for i in 0..n {
                let x = -a + (i as f64 + 0.5) * h;
                s += p.value(x) * (2.0 * std::f64::consts::PI * k as f64 * x / nf as f64).cos() * h;
            }
            assert!((s - fs[k]).abs() < 1e-8 * fs[0], "k={k}: {s} vs {}", fs[k]);
        }
    }
}
