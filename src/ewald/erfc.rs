//! Fast real-space pair functions without `exp`, `erfc` or a division (besides `1/r`): with
//! `x = ξr` and `z = x²`,
//! `erfc(ξr)/r = 1/r − ξ G(z)`, `G(z) = erf(x)/x`, and
//! `f(r) = −v'(r)/r = 1/r³ − ξ³ H(z)`, `H(z) = (erf(x) − (2/√π) x e^{−x²})/x³`.
//! `G` and `H` are smooth (entire) functions of `z`, so on `[0, Z]` (`Z = (ξ r_c)²`) each is a
//! polynomial of modest degree in `w = 2z/Z − 1 ∈ [−1, 1]` (Chebyshev interpolation converted to
//! monomials; about 14 terms for 1e-7 and 26 for 1e-12 at `ξ r_c ≈ 3.3 … 5`). The polynomials
//! are fitted when a plan is made to an absolute accuracy of `acc · G(0)` and `acc · H(0)`, the
//! degree being the smallest that reaches it; the achieved error is checked on a fine sample.
//! This is the approach of GROMACS's analytical Ewald correction, in double precision.
//! The subtraction `1/r − ξG` loses nothing that matters: its absolute error is `~ε/r`.

/// Polynomial fits of `ξ G` and `ξ³ H` (coefficients already scaled) in `w = r² s − 1`.
#[derive(Debug, Clone)]
pub struct PairFit {
    /// `s = 2ξ²/Z` (so `w = r² s − 1`).
    pub s: f64,
    /// Monomial coefficients of `ξ G(w)`, lowest first.
    pub g: Vec<f64>,
    /// Monomial coefficients of `ξ³ H(w)`, lowest first.
    pub h: Vec<f64>,
    /// Largest absolute errors found (relative to `G(0)`, `H(0)`); read by the tests.
    #[cfg_attr(not(test), allow(dead_code))]
    pub max_err: [f64; 2],
}

const TWO_OVER_SQRT_PI: f64 = std::f64::consts::FRAC_2_SQRT_PI;

/// `G(z) = erf(√z)/√z` (reference).
pub fn g_ref(z: f64) -> f64 {
    let x = z.sqrt();
    if x < 0.5 {
        // (2/√π) Σ (−1)^n z^n / (n! (2n+1))
        let mut s = 0.0;
        let mut t = 1.0;
        for n in 0..30 {
            s += t / (2 * n + 1) as f64;
            t *= -z / (n + 1) as f64;
        }
        TWO_OVER_SQRT_PI * s
    } else {
        libm::erf(x) / x
    }
}

/// `H(z) = (erf(x) − (2/√π) x e^{−z})/x³`, `x = √z` (reference).
pub fn h_ref(z: f64) -> f64 {
    let x = z.sqrt();
    if x < 0.7 {
        // (2/√π) Σ_{n≥1} (−1)^{n+1} 2n z^{n−1} / (n! (2n+1))
        let mut s = 0.0;
        let mut t = 1.0; // (−1)^{n+1} z^{n−1}/n!
        for n in 1..40 {
            t /= n as f64;
            s += t * (2 * n) as f64 / (2 * n + 1) as f64;
            t *= -z;
        }
        TWO_OVER_SQRT_PI * s
    } else {
        (libm::erf(x) - TWO_OVER_SQRT_PI * x * (-z).exp()) / (x * z)
    }
}

/// Monomial coefficients (in `w ∈ [−1, 1]`) of the degree `n − 1` Chebyshev interpolant of `f`.
fn cheb_monomial(f: &dyn Fn(f64) -> f64, n: usize) -> Vec<f64> {
    let vals: Vec<f64> = (0..n).map(|k| f(crate::quad::chebyshev_node(k, n))).collect();
    let c = crate::quad::chebyshev_coeffs(&vals);
    // T_j in monomials: T_0 = 1, T_1 = w, T_{j+1} = 2w T_j − T_{j−1}
    let mut out = vec![0.0; n];
    let mut tm1 = vec![0.0; n];
    let mut t = vec![0.0; n];
    tm1[0] = 1.0;
    for (j, &cj) in c.iter().enumerate() {
        if j == 0 {
            out[0] += cj;
            if n > 1 {
                t[1] = 1.0;
            }
            continue;
        }
        for (o, &tv) in out.iter_mut().zip(&t) {
            *o += cj * tv;
        }
        let mut next = vec![0.0; n];
        for i in 0..n {
            if i + 1 < n {
                next[i + 1] += 2.0 * t[i];
            }
            next[i] -= tm1[i];
        }
        tm1 = std::mem::replace(&mut t, next);
    }
    out
}

/// Horner evaluation split into even and odd parts (two independent chains); plain
/// multiply-adds, so the portable build does not call a software `fma`.
#[inline(always)]
pub fn poly(c: &[f64], w: f64) -> f64 {
    let w2 = w * w;
    let n = c.len();
    let mut e = 0.0f64;
    let mut o = 0.0f64;
    let mut i = n;
    while i > 0 {
        i -= 1;
        if i.is_multiple_of(2) {
            e = e * w2 + c[i];
        } else {
            o = o * w2 + c[i];
        }
    }
    o * w + e
}

impl PairFit {
    /// Fits for splitting parameter `xi` and cutoff `rc` to accuracy `acc` (clamped to
    /// `[1e-15, 1e-3]`), degree ≤ 39.
    pub fn new(xi: f64, rc: f64, acc: f64) -> Self {
        let acc = acc.clamp(1e-15, 1e-3);
        let zmax = (xi * rc * xi * rc).max(0.25);
        let zof = |w: f64| 0.5 * (w + 1.0) * zmax;
        let (g0, h0) = (g_ref(0.0), h_ref(0.0));
        let ns = 4000;
        let samples: Vec<f64> = (0..=ns).map(|i| -1.0 + 2.0 * i as f64 / ns as f64).collect();
        let gv: Vec<f64> = samples.iter().map(|&w| g_ref(zof(w))).collect();
        let hv: Vec<f64> = samples.iter().map(|&w| h_ref(zof(w))).collect();
        let mut best = None;
        for n in 6..=40 {
            let g = cheb_monomial(&|w| g_ref(zof(w)), n);
            let h = cheb_monomial(&|w| h_ref(zof(w)), n);
            let eg = samples.iter().zip(&gv).map(|(&w, &v)| (poly(&g, w) - v).abs()).fold(0.0, f64::max) / g0;
            let eh = samples.iter().zip(&hv).map(|(&w, &v)| (poly(&h, w) - v).abs()).fold(0.0, f64::max) / h0;
            let done = eg <= acc && eh <= acc;
            let better = best.as_ref().is_none_or(|b: &(Vec<f64>, Vec<f64>, [f64; 2])| eg.max(eh) < b.2[0].max(b.2[1]));
            if better {
                best = Some((g, h, [eg, eh]));
            }
            if done {
                break;
            }
        }
        let (g, h, max_err) = best.expect("a fit");
        let xi3 = xi * xi * xi;
        PairFit {
            s: 2.0 * xi * xi / zmax,
            g: g.iter().map(|c| c * xi).collect(),
            h: h.iter().map(|c| c * xi3).collect(),
            max_err,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn references_agree_across_branches() {
        for &z in &[0.2401f64, 0.25, 0.4899, 0.49] {
            let x: f64 = z.sqrt();
            let g = libm::erf(x) / x;
            let h = (libm::erf(x) - TWO_OVER_SQRT_PI * x * (-z).exp()) / (x * z);
            assert!((g_ref(z) - g).abs() < 1e-15);
            assert!((h_ref(z) - h).abs() < 1e-13, "{z}: {} {h}", h_ref(z));
        }
    }

    #[test]
    fn fits_reach_accuracy() {
        for &(xi, rc, acc) in &[(4.74, 0.68, 1e-7), (3.5, 1.0, 1e-9), (10.0, 0.49, 1e-12), (17.0, 0.29, 1e-12), (3.0, 1.2, 1e-4)] {
            let f = PairFit::new(xi, rc, acc);
            assert!(f.max_err[0] <= acc && f.max_err[1] <= acc, "{xi} {rc} {acc}: {:?} with {} terms", f.max_err, f.g.len());
            for i in 1..=200 {
                let r = rc * i as f64 / 200.0;
                let w = r * r * f.s - 1.0;
                let pot = 1.0 / r - poly(&f.g, w);
                let x = xi * r;
                let exact = libm::erfc(x) / r;
                assert!((pot - exact).abs() <= 2.0 * acc * xi * g_ref(0.0) + 1e-14 / r, "r {r}: {pot} {exact}");
                let fs = 1.0 / (r * r * r) - poly(&f.h, w);
                let fex = (libm::erfc(x) / r + TWO_OVER_SQRT_PI * xi * (-x * x).exp()) / (r * r);
                assert!((fs - fex).abs() <= 2.0 * acc * xi.powi(3) * h_ref(0.0) + 1e-13 / (r * r * r), "r {r}: {fs} {fex}");
            }
        }
    }
}
