//! Truncated Gaussian kernel with fast Gaussian gridding (FGG): Greengard & Lee, "Accelerating
//! the nonuniform fast Fourier transform", SIAM Rev. 46 (2004) 443, §2–3, and Boström's report
//! on shared-memory parallel gridding (docs/design.md §12), §3.2, Algorithm 3.
//!
//! `ψ(x) = exp(−x²/(4τ))` with `x` in grid units, truncated to `w = 2·M_sp` grid points. With
//! upsampling factor σ (the paper's R) the paper's `τ = π M_sp / (M² R (R − 0.5))` in radians²
//! becomes `τ = M_sp σ / (4π(σ − 0.5))` in grid units², and the error decays like
//! `exp(−π M_sp (1 − 1/(2σ − 1)))`, so `M_sp = ⌈ln(1/ε) / (π(1 − 1/(2σ − 1)))⌉`.
//!
//! FGG (Boström's report, eq. (18)): with `d = x − m ∈ (0, 1]` the distance to the grid
//! point `m` at or below the point and `l = −M_sp+1 … M_sp`,
//! `ψ(d − l) = E1 · E2^l · E3(l)`, `E1 = e^{−d²/4τ}`, `E2 = e^{d/2τ}`, `E3(l) = e^{−l²/4τ}`:
//! two exponentials per point and axis instead of `w`, E3 precomputed per plan.

use super::{KernelEval, MAX_WIDTH};
use crate::real::Real;

/// Gaussian kernel parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct GaussParams {
    /// Width `w = 2 M_sp` in grid points.
    pub w: usize,
    /// Variance parameter τ in grid units² (`ψ(x) = e^{−x²/4τ}`).
    pub tau: f64,
}

impl GaussParams {
    /// Parameters for tolerance `tol` and upsampling factor `sigma > 1` (module docs).
    pub fn for_tolerance(tol: f64, sigma: f64) -> GaussParams {
        let rate = std::f64::consts::PI * (1.0 - 1.0 / (2.0 * sigma - 1.0));
        let msp = ((1.0 / tol).ln() / rate).ceil().max(1.0) as usize;
        let msp = msp.min(MAX_WIDTH / 2);
        GaussParams { w: 2 * msp, tau: msp as f64 * sigma / (4.0 * std::f64::consts::PI * (sigma - 0.5)) }
    }

    /// The error estimate behind the width rule: `ε ≈ exp(−π M_sp (1 − 1/(2σ − 1)))`.
    pub fn error_estimate(msp: usize, sigma: f64) -> f64 {
        (-std::f64::consts::PI * msp as f64 * (1.0 - 1.0 / (2.0 * sigma - 1.0))).exp()
    }

    /// `ψ(x)`, zero outside the truncation window `|x| < w/2`.
    pub fn value(&self, x: f64) -> f64 {
        if x.abs() >= 0.5 * self.w as f64 {
            0.0
        } else {
            (-x * x / (4.0 * self.tau)).exp()
        }
    }

    /// `ψ̂(k) = √(4πτ) exp(−τ (2πk/nf)²)` for `k = 0 … kmax` (the transform of the untruncated
    /// Gaussian; the truncation error is part of the kernel's error budget).
    /// Errors: [`crate::Error::Alloc`] (the `kmax + 1` outputs).
    pub fn fourier_series(&self, nf: usize, kmax: usize) -> crate::Result<Vec<f64>> {
        let mut out = crate::error::try_vec(kmax.saturating_add(1), "kernel Fourier series")?;
        out.extend((0..=kmax).map(|k| self.fourier_coeff(nf, k)));
        Ok(out)
    }

    /// One value of [`GaussianParams::fourier_series`]: `√(4πτ) exp(−τ (2πk/nf)²)`.
    pub fn fourier_coeff(&self, nf: usize, k: usize) -> f64 {
        let om = 2.0 * std::f64::consts::PI * k as f64 / nf as f64;
        (4.0 * std::f64::consts::PI * self.tau).sqrt() * (-self.tau * om * om).exp()
    }
}

/// FGG evaluator in precision `T`.
#[derive(Debug, Clone)]
pub struct Fgg<T: Real> {
    w: usize,
    msp: usize,
    inv4tau: T,
    inv2tau: T,
    /// `E3(l)` for `l = −M_sp+1 … M_sp`, stored at `l + M_sp − 1`.
    e3: [T; MAX_WIDTH],
}

impl<T: Real> Fgg<T> {
    /// Precomputes `E3`.
    pub fn new(p: &GaussParams) -> Self {
        let msp = p.w / 2;
        let mut e3 = [T::zero(); MAX_WIDTH];
        for j in 0..p.w {
            let l = j as f64 - (msp as f64 - 1.0);
            e3[j] = T::of((-l * l / (4.0 * p.tau)).exp());
        }
        Fgg { w: p.w, msp, inv4tau: T::of(0.25 / p.tau), inv2tau: T::of(0.5 / p.tau), e3 }
    }
}

impl<T: Real> KernelEval<T> for Fgg<T> {
    #[inline(always)]
    fn width(&self) -> usize {
        self.w
    }
    #[inline(always)]
    fn eval(&self, t: T, out: &mut [T; MAX_WIDTH]) {
        // t = i0 − x with i0 = m − M_sp + 1, so d = x − m = −(t + M_sp − 1) ∈ (0, 1].
        let d = -(t + T::of(self.msp as f64 - 1.0));
        let e1 = (-d * d * self.inv4tau).exp();
        let e2 = (d * self.inv2tau).exp();
        let e2inv = T::one() / e2;
        // l = 0 sits at index M_sp − 1; walk up with E2 and down with 1/E2.
        let c = self.msp - 1;
        let mut p = e1;
        for j in c..self.w {
            out[j] = p * self.e3[j];
            p = p * e2;
        }
        let mut p = e1 * e2inv;
        for j in (0..c).rev() {
            out[j] = p * self.e3[j];
            p = p * e2inv;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fgg_matches_direct_gaussian() {
        let p = GaussParams::for_tolerance(1e-12, 2.0);
        assert_eq!(p.w, 28);
        let f = Fgg::<f64>::new(&p);
        let mut out = [0.0; MAX_WIDTH];
        for i in 0..101 {
            let t = -0.5 * p.w as f64 + i as f64 / 101.0;
            f.eval(t, &mut out);
            for j in 0..p.w {
                let ex = (-(t + j as f64).powi(2) / (4.0 * p.tau)).exp();
                assert!((out[j] - ex).abs() < 1e-14, "{} {}", out[j], ex);
            }
        }
    }
}
