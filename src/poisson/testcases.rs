//! Exact test problems for the free-space solvers (Mayani et al. 2025 §3.1), shared by the
//! library's tests, the `farfield poisson` command and the Poisson benches.
//!
//! Both problems solve `∇²φ = −ρ` in 3D free space (the convention of [`super`]) on `n³`
//! **cell-centred** nodes `x_i = (i + ½) h`, `0 ≤ i < n`, of a cube `[0, n h]³`, stored x fastest:
//!
//! * [`gaussian`]: the normalised Gaussian `ρ = e^{−r²/(2σ²)} / ((2π)^{3/2} σ³)` with
//!   `σ = 0.05` centred in the unit cube (`h = 1/n`); exact `φ = erf(r/(√2σ))/(4πr)`
//!   (Mayani et al. 2025 eq. 4), energy `½∫ρφ = 1/(8π^{3/2}σ)`. Smooth to rounding on the box
//!   faces, so the Vico–Greengard methods converge spectrally (≈1e-9 at `n = 32`).
//! * [`uniform_ball`]: density 1 in the ball of radius 1 centred in the cube of side 2.4
//!   (`h = 2.4/n`); exact `φ = (3 − r²)/6` inside, `1/(3r)` outside (Mayani et al. 2025 eq. 5 with
//!   `ρ₀ = R = 1`), energy `4π/15`. The source is **cell-averaged**: cells cut by the sphere get
//!   the fraction of `8³` sub-points inside it (node sampling alone makes the enclosed charge
//!   fluctuate by ~2e-3 at `n = 64`, which would mask the solvers' convergence). The jump of ρ
//!   limits every method to second order.
//!
//! Errors are measured as the relative L2 norm over all nodes ([`rel_l2`]); orders as the
//! least-squares slope of `log(error)` against `log(n)` ([`fitted_order`]).

use std::f64::consts::PI;

/// Width of the Gaussian test problem ([`gaussian`]).
pub const GAUSSIAN_SIGMA: f64 = 0.05;
/// Side of the cube holding the uniform ball of radius 1 ([`uniform_ball`]).
pub const BALL_BOX: f64 = 2.4;

/// A sampled test problem on a cubic grid of `n³` cell-centred nodes.
#[derive(Debug, Clone)]
pub struct TestCase {
    /// Short name (`"gaussian"`, `"sphere"`).
    pub name: &'static str,
    /// Nodes per axis.
    pub n: usize,
    /// Grid spacing (the same on every axis).
    pub h: f64,
    /// Source ρ on the nodes, `n³` values, x fastest.
    pub rho: Vec<f64>,
    /// Exact potential φ on the nodes, same layout.
    pub exact: Vec<f64>,
    /// Exact electrostatic energy `½∫ρφ` of the continuous problem.
    pub energy: f64,
}

impl TestCase {
    /// Grid size `[n, n, n]` as [`super::PoissonPlan::new`] takes it.
    pub fn dims(&self) -> [usize; 3] {
        [self.n; 3]
    }
    /// Spacings `[h, h, h]`.
    pub fn spacing(&self) -> [f64; 3] {
        [self.h; 3]
    }
    /// Relative L2 error of a computed potential against [`TestCase::exact`].
    pub fn rel_error(&self, phi: &[f64]) -> f64 {
        rel_l2(phi, &self.exact)
    }
}

/// Node coordinate `(i + ½) h` (cell-centred nodes of the box `[0, n h]`).
#[inline]
pub fn node_coord(i: usize, h: f64) -> f64 {
    (i as f64 + 0.5) * h
}

/// Samples `f([x, y, z])` on the cell-centred nodes of a 2D (`n.len() = 2`, `z = 0`) or 3D
/// grid with spacings `h`, x fastest.
pub fn sample(n: &[usize], h: &[f64], f: impl Fn([f64; 3]) -> f64) -> Vec<f64> {
    let three = n.len() == 3;
    let nz = if three { n[2] } else { 1 };
    let mut v = Vec::with_capacity(n[0] * n[1] * nz);
    for k in 0..nz {
        let z = if three { node_coord(k, h[2]) } else { 0.0 };
        for j in 0..n[1] {
            let y = node_coord(j, h[1]);
            for i in 0..n[0] {
                v.push(f([node_coord(i, h[0]), y, z]));
            }
        }
    }
    v
}

/// Relative L2 error `‖a − b‖ / ‖b‖`.
pub fn rel_l2(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den).sqrt()
}

/// Least-squares slope of `log(err)` against `log(n)`: the observed order is its negative.
pub fn fitted_order(ns: &[usize], errs: &[f64]) -> f64 {
    let xs: Vec<f64> = ns.iter().map(|&n| (n as f64).ln()).collect();
    let ys: Vec<f64> = errs.iter().map(|e| e.ln()).collect();
    let m = xs.len() as f64;
    let (mx, my) = (xs.iter().sum::<f64>() / m, ys.iter().sum::<f64>() / m);
    let sxy: f64 = xs.iter().zip(&ys).map(|(x, y)| (x - mx) * (y - my)).sum();
    let sxx: f64 = xs.iter().map(|x| (x - mx) * (x - mx)).sum();
    sxy / sxx
}

/// 3D normalised Gaussian (total charge 1) of width `sigma` centred at `c`, and its exact
/// free-space potential `φ = erf(r/(√2σ))/(4πr)` (`(2/π)^{1/2}/(4πσ)` at `r = 0`).
pub fn gaussian_fns(sigma: f64, c: [f64; 3]) -> (impl Fn([f64; 3]) -> f64, impl Fn([f64; 3]) -> f64) {
    let r = move |x: [f64; 3]| ((x[0] - c[0]).powi(2) + (x[1] - c[1]).powi(2) + (x[2] - c[2]).powi(2)).sqrt();
    let rho = move |x: [f64; 3]| (-r(x).powi(2) / (2.0 * sigma * sigma)).exp() / ((2.0 * PI).powf(1.5) * sigma.powi(3));
    let phi = move |x: [f64; 3]| {
        let rr = r(x);
        if rr < 1e-12 {
            (2.0 / PI).sqrt() / (4.0 * PI * sigma)
        } else {
            libm::erf(rr / (2f64.sqrt() * sigma)) / (4.0 * PI * rr)
        }
    };
    (rho, phi)
}

/// The Gaussian test problem: σ = [`GAUSSIAN_SIGMA`] centred in the unit cube, `n³` nodes,
/// `h = 1/n`.
pub fn gaussian(n: usize) -> TestCase {
    let h = 1.0 / n as f64;
    let (rho_f, phi_f) = gaussian_fns(GAUSSIAN_SIGMA, [0.5; 3]);
    TestCase {
        name: "gaussian",
        n,
        h,
        rho: sample(&[n; 3], &[h; 3], rho_f),
        exact: sample(&[n; 3], &[h; 3], phi_f),
        energy: 1.0 / (8.0 * PI.powf(1.5) * GAUSSIAN_SIGMA),
    }
}

/// The exact field `E = −∇φ` of the Gaussian test problem ([`gaussian`]) on its `n³` nodes:
/// `E = E_r r̂`, `E_r = (erf(r/(√2σ)) − √(2/π)(r/σ) e^{−r²/(2σ²)})/(4πr²)` (0 at the centre),
/// `3n³` values **component-major** (`E_x` on every node, then `E_y`, then `E_z`, each x
/// fastest), the layout in which [`super::PoissonPlan::execute`] returns the field.
pub fn gaussian_field(n: usize) -> Vec<f64> {
    let h = 1.0 / n as f64;
    let component = |x: [f64; 3], d: usize| {
        let v = [x[0] - 0.5, x[1] - 0.5, x[2] - 0.5];
        let r = (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        if r < 1e-12 {
            return 0.0;
        }
        let s = r / GAUSSIAN_SIGMA;
        let er = (libm::erf(s / 2f64.sqrt()) - (2.0 / PI).sqrt() * s * (-s * s / 2.0).exp()) / (4.0 * PI * r * r);
        er * v[d] / r
    };
    (0..3).flat_map(|d| sample(&[n; 3], &[h; 3], |x| component(x, d))).collect()
}

/// The uniform-ball test problem: density 1 in the ball of radius 1 centred in the cube of
/// side [`BALL_BOX`], `n³` nodes, `h = 2.4/n`, cell-averaged source (module docs).
pub fn uniform_ball(n: usize) -> TestCase {
    let h = BALL_BOX / n as f64;
    let c = 0.5 * BALL_BOX;
    let r = |x: [f64; 3]| ((x[0] - c).powi(2) + (x[1] - c).powi(2) + (x[2] - c).powi(2)).sqrt();
    let half_diag = 0.5 * 3f64.sqrt() * h;
    const SUB: usize = 8;
    let rho = sample(&[n; 3], &[h; 3], |x| {
        let rc = r(x);
        if rc + half_diag <= 1.0 {
            1.0
        } else if rc - half_diag > 1.0 {
            0.0
        } else {
            let o = |t: usize| ((t as f64 + 0.5) / SUB as f64 - 0.5) * h;
            let mut inside = 0usize;
            for a in 0..SUB {
                for b in 0..SUB {
                    for d in 0..SUB {
                        inside += (r([x[0] + o(a), x[1] + o(b), x[2] + o(d)]) <= 1.0) as usize;
                    }
                }
            }
            inside as f64 / (SUB * SUB * SUB) as f64
        }
    });
    let exact = sample(&[n; 3], &[h; 3], |x| {
        let rr = r(x);
        if rr <= 1.0 {
            (3.0 - rr * rr) / 6.0
        } else {
            1.0 / (3.0 * rr)
        }
    });
    TestCase { name: "sphere", n, h, rho, exact, energy: 4.0 * PI / 15.0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn charges_and_energies() {
        // total charge Σρ h³ ≈ 1 (Gaussian) and 4π/3 (ball)
        let g = gaussian(32);
        let q: f64 = g.rho.iter().sum::<f64>() * g.h.powi(3);
        assert!((q - 1.0).abs() < 1e-10, "{q}");
        let b = uniform_ball(48);
        let q: f64 = b.rho.iter().sum::<f64>() * b.h.powi(3);
        assert!((q - 4.0 * PI / 3.0).abs() < 2e-4 * q, "{q}");
        // quadrature of ½∫ρφ with the exact φ reproduces the stated energies
        let u = 0.5 * g.rho.iter().zip(&g.exact).map(|(r, p)| r * p).sum::<f64>() * g.h.powi(3);
        assert!(((u - g.energy) / g.energy).abs() < 1e-10, "{u} {}", g.energy);
        let u = 0.5 * b.rho.iter().zip(&b.exact).map(|(r, p)| r * p).sum::<f64>() * b.h.powi(3);
        assert!(((u - b.energy) / b.energy).abs() < 1e-3, "{u} {}", b.energy);
        assert!((fitted_order(&[10, 20, 40], &[1.0, 0.25, 0.0625]) + 2.0).abs() < 1e-12);
    }
}
