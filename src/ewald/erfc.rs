//! Fast `erfc` for the real-space loop: `erfc(x) = e^{−x²} R(x)` on `[0, X]`, with the scaled
//! complementary error function `R(x) = e^{x²} erfc(x)` approximated by a Chebyshev series in
//! the variable `t = 1/(1 + p x)` (`p = 0.3`), fitted when a plan is made to the requested
//! relative accuracy (degree 4–28; erfcx is smooth in `t`, so ~12 terms give 1e-10 for
//! `X = 4.5`). The exponential is computed separately (it is needed for the force anyway).
//! Evaluation is branch-free (Clenshaw), so the SIMD loop evaluates it lane-wise.

/// A fitted approximation of `erfcx` on `[0, xmax]`.
#[derive(Debug, Clone)]
pub struct ErfcFit {
    /// Map parameter `p` of `t = 1/(1 + p x)`.
    pub p: f64,
    /// `z = zs·t + zo` maps `t ∈ [1/(1 + p X), 1]` onto `[−1, 1]`.
    pub zs: f64,
    /// See `zs`.
    pub zo: f64,
    /// Chebyshev coefficients `c_0 … c_n` in `z`.
    pub coef: Vec<f64>,
    /// Largest relative error of `R` found on a fine sample of `[0, X]`.
    pub max_rel_err: f64,
}

/// `e^{x²} erfc(x)` in double precision (reference for the fit).
pub fn erfcx_ref(x: f64) -> f64 {
    if x < 0.5 {
        (x * x).exp() * (1.0 - libm::erf(x))
    } else {
        (x * x).exp() * libm::erfc(x)
    }
}

const MAP_P: f64 = 0.3;

impl ErfcFit {
    /// Fits `R` on `[0, xmax]` to relative accuracy `rel_acc` (clamped to `[1e-14, 1e-3]`),
    /// with the smallest degree that reaches it (at most 28).
    pub fn new(xmax: f64, rel_acc: f64) -> Self {
        let xmax = xmax.max(0.5);
        let acc = rel_acc.clamp(1e-14, 1e-3);
        let tlo = 1.0 / (1.0 + MAP_P * xmax);
        let zs = 2.0 / (1.0 - tlo);
        let zo = -(1.0 + tlo) / (1.0 - tlo);
        let mut best: Option<ErfcFit> = None;
        for n in (4..=28).step_by(2) {
            // interpolate at n Chebyshev nodes in z
            let nodes: Vec<f64> = (0..n).map(|k| (std::f64::consts::PI * (k as f64 + 0.5) / n as f64).cos()).collect();
            let vals: Vec<f64> = nodes
                .iter()
                .map(|&z| {
                    let t = (z - zo) / zs;
                    let x = (1.0 / t - 1.0) / MAP_P;
                    erfcx_ref(x.max(0.0))
                })
                .collect();
            let coef: Vec<f64> = (0..n)
                .map(|j| {
                    let s: f64 = (0..n).map(|k| vals[k] * (std::f64::consts::PI * j as f64 * (k as f64 + 0.5) / n as f64).cos()).sum();
                    let c = 2.0 / n as f64 * s;
                    if j == 0 {
                        0.5 * c
                    } else {
                        c
                    }
                })
                .collect();
            let mut fit = ErfcFit { p: MAP_P, zs, zo, coef, max_rel_err: 0.0 };
            let ns = 4000;
            let err = (0..=ns)
                .map(|i| {
                    let x = xmax * i as f64 / ns as f64;
                    (fit.erfcx(x) / erfcx_ref(x) - 1.0).abs()
                })
                .fold(0.0, f64::max);
            fit.max_rel_err = err;
            let done = err <= acc;
            best = Some(fit);
            if done {
                break;
            }
        }
        best.expect("at least one fit")
    }

    /// `R(x) ≈ e^{x²} erfc(x)` for `0 ≤ x ≤ X` (Clenshaw).
    #[inline(always)]
    pub fn erfcx(&self, x: f64) -> f64 {
        let t = 1.0 / (1.0 + self.p * x);
        let z = self.zs * t + self.zo;
        let z2 = 2.0 * z;
        let (mut b1, mut b2) = (0.0, 0.0);
        for &c in self.coef[1..].iter().rev() {
            let b0 = z2.mul_add(b1, c - b2);
            b2 = b1;
            b1 = b0;
        }
        z.mul_add(b1, self.coef[0] - b2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fit_reaches_accuracy() {
        for &(x, acc) in &[(3.0, 1e-6), (4.5, 1e-10), (6.0, 1e-13), (5.5, 1e-14)] {
            let f = ErfcFit::new(x, acc);
            assert!(f.max_rel_err <= acc.max(2e-14), "X {x} acc {acc}: {} with {} terms", f.max_rel_err, f.coef.len());
            for i in 0..=100 {
                let xx = x * i as f64 / 100.0;
                let e = f.erfcx(xx) * (-xx * xx).exp();
                let r = libm::erfc(xx);
                assert!((e / r - 1.0).abs() < 10.0 * acc.max(1e-14), "{xx}");
            }
        }
    }
}
