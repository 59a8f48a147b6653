//! The one Gauss–Legendre rule of the crate: nodes and weights from the `gauss_quad` crate
//! (Bogaert's O(n) iteration-free evaluation, I. Bogaert, SIAM J. Sci. Comput. 36 (2014)
//! A1008–A1026, accurate to a few ulps for every `n`), mapped affinely to an interval `[a, b]`.
//! Used for the ES kernel's Fourier transform, the Ewald error-estimate tables and the FMM's
//! rotation projections; add callers here rather than another rule. Also the Chebyshev
//! interpolation coefficients at first-kind nodes ([`chebyshev_coeffs`]).

use gauss_quad::GaussLegendre;
use std::num::NonZeroUsize;

/// The `n`-point Gauss–Legendre rule on `[a, b]`: nodes `x_i = (a+b)/2 + (b−a)/2·s_i` in
/// increasing order and weights `w_i = (b−a)/2·ω_i`, where `(s_i, ω_i)` is the rule on
/// `[−1, 1]`; `Σ_i w_i f(x_i) = ∫_a^b f` exactly for polynomials of degree `≤ 2n − 1`.
/// `n = 0` gives the empty rule. The two vectors have length `n` each.
pub(crate) fn gauss_legendre(n: usize, a: f64, b: f64) -> (Vec<f64>, Vec<f64>) {
    let Some(n) = NonZeroUsize::new(n) else { return (Vec::new(), Vec::new()) };
    let gl = GaussLegendre::new(n);
    let (mid, half) = (0.5 * (a + b), 0.5 * (b - a));
    let mut pairs: Vec<(f64, f64)> = gl.iter().map(|(s, w)| (mid + half * s, half * w)).collect();
    pairs.sort_by(|p, q| p.0.total_cmp(&q.0));
    pairs.into_iter().unzip()
}

#[cfg(test)]
mod tests {
    use super::gauss_legendre;

    /// `∫_a^b x^k dx = (b^{k+1} − a^{k+1})/(k+1)`, exact for `k ≤ 2n − 1` up to rounding.
    #[test]
    fn integrates_polynomials_exactly() {
        for (n, a, b) in [(1usize, -1.0, 1.0), (3, 0.0, 1.0), (12, 0.0, 2.0), (17, -0.5, 3.0), (32, 0.0, std::f64::consts::PI)] {
            let (x, w) = gauss_legendre(n, a, b);
            assert_eq!((x.len(), w.len()), (n, n));
            assert!(x.windows(2).all(|p| p[0] < p[1]) && x[0] > a && x[n - 1] < b, "nodes sorted inside ({a}, {b})");
            for k in 0..2 * n as i32 {
                let q: f64 = x.iter().zip(&w).map(|(x, w)| w * x.powi(k)).sum();
                let exact = (b.powi(k + 1) - a.powi(k + 1)) / (k + 1) as f64;
                let scale = a.abs().max(b.abs()).powi(k + 1).max(1.0);
                assert!((q - exact).abs() <= 1e-13 * scale, "n={n} k={k}: {q} vs {exact}");
            }
        }
        assert_eq!(gauss_legendre(0, 0.0, 1.0), (vec![], vec![]));
    }
}

/// The first-kind Chebyshev node `x_k = cos(π(k + ½)/n)` on `[−1, 1]`, `k < n`.
#[inline]
pub(crate) fn chebyshev_node(k: usize, n: usize) -> f64 {
    (std::f64::consts::PI * (k as f64 + 0.5) / n as f64).cos()
}

/// Coefficients `c_0 … c_{n−1}` of the degree `n − 1` Chebyshev interpolant `Σ c_j T_j(x)` of
/// the values `vals[k] = f(x_k)` at the nodes [`chebyshev_node`]`(k, n)`, `n = vals.len()`:
/// `c_j = (2/n) Σ_k f(x_k) cos(π j (k + ½)/n)`, `c_0` halved (the discrete orthogonality of
/// `T_j` at these nodes; e.g. Trefethen, *Approximation Theory and Approximation Practice*,
/// SIAM 2013, ch. 3). O(n²), for the plan-time fits of a few dozen nodes.
pub(crate) fn chebyshev_coeffs(vals: &[f64]) -> Vec<f64> {
    let n = vals.len();
    (0..n)
        .map(|j| {
            let s: f64 = (0..n).map(|k| vals[k] * (std::f64::consts::PI * j as f64 * (k as f64 + 0.5) / n as f64).cos()).sum();
            if j == 0 {
                s / n as f64
            } else {
                2.0 * s / n as f64
            }
        })
        .collect()
}
