//! Green's functions of the free-space Laplacian, `−∇²G = δ`, in real and Fourier space.
//!
//! * 3D: `G(x) = 1/(4π|x|)`; 2D: `G(x) = −ln|x|/(2π)` (lengths in the caller's unit; in 2D the
//!   additive constant of the potential therefore depends on that unit).
//! * Regularised value at the origin for Hockney–Eastwood ([`g0_cell_average`]).
//! * Fourier transforms of the kernel truncated at radius `L` (Vico, Greengard, Ferrando,
//!   "Fast convolution with free-space Green's functions", J. Comput. Phys. 323 (2016) 191;
//!   Mayani et al. 2025 eq. 3) ([`vico_hat`]).

use std::f64::consts::PI;

/// Free-space Green's function at distance `r > 0`: `1/(4πr)` (dim 3) or `−ln(r)/(2π)` (dim 2).
#[inline]
pub fn green(dim: usize, r: f64) -> f64 {
    if dim == 3 {
        1.0 / (4.0 * PI * r)
    } else {
        -r.ln() / (2.0 * PI)
    }
}

/// `∫_0^a ∫_0^b ∫_0^c dx dy dz / √(x²+y²+z²)` in closed form (a, b, c > 0).
#[cfg(test)]
fn inv_r_octant(a: f64, b: f64, c: f64) -> f64 {
    let d = (a * a + b * b + c * c).sqrt();
    a * b * (c / (a * a + b * b).sqrt()).asinh()
        + b * c * (a / (b * b + c * c).sqrt()).asinh()
        + c * a * (b / (c * c + a * a).sqrt()).asinh()
        - 0.5 * a * a * (b * c / (a * d)).atan()
        - 0.5 * b * b * (c * a / (b * d)).atan()
        - 0.5 * c * c * (a * b / (c * d)).atan()
}

/// `∫_0^a ∫_0^b ln(x²+y²) dx dy` in closed form (a, b > 0).
#[cfg(test)]
fn log_r2_quadrant(a: f64, b: f64) -> f64 {
    a * b * ((a * a + b * b).ln() - 3.0) + a * a * (b / a).atan() + b * b * (a / b).atan()
}

/// Regularised `G(0)` used by Hockney–Eastwood: the mean of `G` over one grid cell
/// `[−h_x/2, h_x/2] × [−h_y/2, h_y/2] (× [−h_z/2, h_z/2])` centred on the singularity,
///
/// * 3D: `G(0) = (1/(4π h_x h_y h_z)) ∫_cell dV/|x|` (= 0.18940…/h for a cubic cell),
/// * 2D: `G(0) = −(1/(4π h_x h_y)) ∫_cell ln|x|² dA`,
///
/// both evaluated in closed form. The IPPL paper (Mayani et al. 2025, §2.2 step 3) sets the
/// customary `G(0) = 1/(4π)` (their `−1/(4π)` with the opposite sign convention), a value that does
/// not scale with the grid spacing; the cell average does (the result transforms correctly under
/// a change of length unit) and is the natural second-order choice: the discrete sum then
/// integrates the singular cell exactly for a locally constant source. Both give the method's
/// second order; the cell average has the smaller error constant (measured on the paper's
/// Gaussian test, σ = 0.05 in the unit cube: relative L2 error 2.1e-3 at 32³ and 5.6e-4 at 64³,
/// against 1.4e-2 and 3.5e-3 with `G(0) = 1/(4π)`, the latter matching the paper's Table 3).
pub fn g0_cell_average(dim: usize, h: &[f64]) -> f64 {
    // Evaluated in normalised form (the largest half-side scaled to 1), term by term divided
    // by the cell volume, so that no product of three half-sides is formed: finite and accurate
    // for every spacing ratio h_max/h_min ≤ 1e150 (the squares of the normalised sides stay
    // normal numbers), at any absolute scale.
    let atanc = |q: f64| if q < 1e-8 { 1.0 - q * q / 3.0 } else { q.atan() / q };
    if dim == 3 {
        let t = 0.5 * h[0].max(h[1]).max(h[2]);
        let (a, b, c) = (0.5 * h[0] / t, 0.5 * h[1] / t, 0.5 * h[2] / t);
        let d = (a * a + b * b + c * c).sqrt();
        // I(a,b,c)/(abc) with I = inv_r_octant: asinh(x/y)/x and (x/(2yz))·atan(yz/(xd)) terms
        let f = (c / (a * a + b * b).sqrt()).asinh() / c
            + (a / (b * b + c * c).sqrt()).asinh() / a
            + (b / (c * c + a * a).sqrt()).asinh() / b
            - 0.5 * atanc(b * c / (a * d)) / d
            - 0.5 * atanc(c * a / (b * d)) / d
            - 0.5 * atanc(a * b / (c * d)) / d;
        f / (4.0 * PI * t)
    } else {
        let t = 0.5 * h[0].max(h[1]);
        let (a, b) = (0.5 * h[0] / t, 0.5 * h[1] / t);
        // I(a,b)/(ab) with I = log_r2_quadrant, and ln((ta)²+(tb)²) = 2 ln t + ln(a²+b²)
        let f = 2.0 * t.ln() + (a * a + b * b).ln() - 3.0 + atanc(b / a) + atanc(a / b);
        -f / (4.0 * PI)
    }
}

/// Fourier transform `Ĝ_L(k) = ∫_{|x|<L} G(x) e^{−ik·x} dx` of the Green's function truncated
/// at radius `L`, as a function of `k = |k|` (Vico–Greengard–Ferrando 2016, eqs. for the
/// Laplace kernel; Mayani et al. 2025 eq. 3 for 3D):
///
/// * 3D: `Ĝ_L(k) = 2 (sin(Lk/2)/k)² = (1 − cos(Lk))/k²`, `Ĝ_L(0) = L²/2`;
/// * 2D: `Ĝ_L(k) = (1 − J₀(Lk))/k² − L ln(L) J₁(Lk)/k`, `Ĝ_L(0) = L²/4 − (L²/2) ln L`.
///
/// Derivation of the 2D form: `Ĝ_L(k) = −∫_0^L r ln r J₀(kr) dr`; integrating by parts with
/// `d/dr[r J₁(kr)] = k r J₀(kr)` and `∫_0^L J₁(kr) dr = (1 − J₀(kL))/k` gives the formula.
/// `Lk < 1` uses the power series to avoid the cancellation in `1 − J₀`.
#[inline]
pub fn vico_hat(dim: usize, l: f64, k: f64) -> f64 {
    vico_hat_log(dim, l, l.ln(), k)
}

/// [`vico_hat`] with the logarithm of the truncation radius given separately (2D only; 3D
/// ignores `ln_l`): `(1 − J₀(Lk))/k² − L·ln_l·J₁(Lk)/k`. The second term is the transform of
/// the constant `−ln(L)/(2π)` on the ball `|x| < L`; `ln_l = 0` gives the kernel
/// `−ln(|x|/L)/(2π)` (logarithm in units of `L`), to which a plan adds the constant
/// `−ln(L)/(2π)` exactly (the convolution of a constant with a source supported in the box is
/// the constant times the total charge), which makes the 2D Vico plans scale covariant.
#[inline]
pub fn vico_hat_log(dim: usize, l: f64, ln_l: f64, k: f64) -> f64 {
    let x = l * k;
    if dim == 3 {
        if x < 1e-8 {
            0.5 * l * l
        } else {
            let s = (0.5 * x).sin() / k;
            2.0 * s * s
        }
    } else if x < 1.0 {
        // Power series (no cancellation in 1 − J₀), q = (x/2)²:
        // c = (1 − J₀(x))/x² = ¼ Σ_{m≥1} (−q)^{m−1}/(m!)²,  b = 2 J₁(x)/x = Σ_{m≥0} (−q)^m/(m!(m+1)!).
        let q = 0.25 * x * x;
        let (mut c, mut b) = (0.0, 0.0);
        let (mut tc, mut tb) = (0.25, 1.0);
        for m in 1..30 {
            c += tc;
            b += tb;
            let mf = m as f64;
            tc *= -q / ((mf + 1.0) * (mf + 1.0));
            tb *= -q / (mf * (mf + 1.0));
            if tc.abs() < 1e-17 * c && tb.abs() < 1e-17 * b {
                break;
            }
        }
        l * l * (c - 0.5 * ln_l * b)
    } else {
        (1.0 - libm::j0(x)) / (k * k) - l * ln_l * libm::j1(x) / k
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Midpoint-rule reference for the cell averages (with the singular cell split).
    #[test]
    fn closed_forms_match_quadrature() {
        let m = 400;
        let (a, b, c) = (0.3, 0.5, 0.7);
        let mut s3 = 0.0;
        let mut s2 = 0.0;
        for i in 0..m {
            let x = (i as f64 + 0.5) * a / m as f64;
            for j in 0..m {
                let y = (j as f64 + 0.5) * b / m as f64;
                s2 += (x * x + y * y).ln();
                for k in 0..40 {
                    let z = (k as f64 + 0.5) * c / 40.0;
                    s3 += 1.0 / (x * x + y * y + z * z).sqrt();
                }
            }
        }
        s2 *= a * b / (m * m) as f64;
        s3 *= a * b * c / (m * m * 40) as f64;
        assert!((s2 - log_r2_quadrant(a, b)).abs() < 1e-4 * s2.abs(), "{s2} {}", log_r2_quadrant(a, b));
        assert!((s3 - inv_r_octant(a, b, c)).abs() < 1e-3 * s3, "{s3} {}", inv_r_octant(a, b, c));
        // known constant: potential at the centre of a unit cube of unit density = 2.38008…
        assert!((8.0 * inv_r_octant(0.5, 0.5, 0.5) - 2.380077).abs() < 1e-5);
    }

    /// The normalised evaluation equals the direct closed forms where those are safe, and
    /// stays finite with the right asymptotics at extreme aspect ratios and scales.
    #[test]
    fn g0_normalised_form() {
        for h in [[0.3, 0.5, 0.7], [1.0, 1.0, 1.0], [2.0, 0.01, 0.5], [1e-3, 1.0, 1.0]] {
            let (a, b, c) = (0.5 * h[0], 0.5 * h[1], 0.5 * h[2]);
            let g3 = 8.0 * inv_r_octant(a, b, c) / (4.0 * PI * h[0] * h[1] * h[2]);
            assert!((g0_cell_average(3, &h) - g3).abs() < 1e-13 * g3.abs(), "{h:?}");
            let g2 = -4.0 * log_r2_quadrant(a, b) / (4.0 * PI * h[0] * h[1]);
            assert!((g0_cell_average(2, &h) - g2).abs() < 1e-13 * g2.abs().max(1.0), "{h:?}");
        }
        // degree −1 homogeneity in 3D, exact for power-of-two scale factors
        let g = g0_cell_average(3, &[0.3, 0.5, 0.7]);
        assert_eq!(g0_cell_average(3, &[0.3 * 2f64.powi(-900), 0.5 * 2f64.powi(-900), 0.7 * 2f64.powi(-900)]), g * 2f64.powi(900));
        // 2D: g0(s h) = g0(h) − ln(s)/(2π)
        let s = 2f64.powi(600);
        let g2 = g0_cell_average(2, &[0.3, 0.5]);
        let g2s = g0_cell_average(2, &[0.3 * s, 0.5 * s]);
        assert!((g2s - (g2 - s.ln() / (2.0 * PI))).abs() < 1e-13 * g2s.abs());
        // a flat cell (c → 0): G(0)·h_x h_y h_z → 0 like c; a needle: ~ ln(1/ε)/(2π h)
        let e = 1e-150;
        let flat = g0_cell_average(3, &[1.0, 1.0, e]);
        // (1/(4π abc))·∫dV/r → (1/(4π ab))·∫∫dA/ρ over the square [-½,½]²: 4·ln(1+√2)/(4π)
        let want = 4.0 * (1.0 + 2f64.sqrt()).ln() / (4.0 * PI);
        assert!((flat - want).abs() < 1e-12 * want, "{flat} {want}");
        let needle = g0_cell_average(3, &[1.0, e, e]);
        assert!(needle.is_finite() && needle > 0.0);
        assert!((needle - 2.0 * (1.0 / e).ln() / (4.0 * PI)).abs() < 0.1 * needle, "{needle}");
    }

    #[test]
    fn vico_hat_limits_and_2d_series() {
        let l = 1.7;
        assert!((vico_hat(3, l, 1e-9) - vico_hat(3, l, 1e-6)).abs() < 1e-10);
        // series branch and Bessel branch agree at the switch point
        let k0 = 1.0 / l;
        let a = vico_hat(2, l, k0 * (1.0 - 1e-12));
        let b = vico_hat(2, l, k0 * (1.0 + 1e-12));
        // (the arguments differ by 2e-12 relative; exact value 0.0037542277655224800)
        assert!((a - 0.00375422776552248).abs() < 2e-13 && (b - 0.00375422776552248).abs() < 2e-13, "{a} {b}");
        let z = vico_hat(2, l, 0.0);
        assert!((z - l * l * (0.25 - 0.5 * l.ln())).abs() < 1e-15 * z.abs());
        assert!((vico_hat(2, l, 1e-9) - z).abs() < 1e-15);
        // 2D: −∫_0^L r ln r J0(kr) dr by the midpoint rule
        let m = 200_000;
        for k in [0.3, 3.3] {
            let mut s = 0.0;
            for i in 0..m {
                let r = (i as f64 + 0.5) * l / m as f64;
                s -= r * r.ln() * libm::j0(k * r);
            }
            s *= l / m as f64;
            assert!((s - vico_hat(2, l, k)).abs() < 1e-8, "{s} {}", vico_hat(2, l, k));
        }
        let k = 3.3;
        // 3D: ∫_0^L sin(kr)/k dr (= ∫ r² · sin(kr)/(kr) · 1/r)
        let mut s = 0.0;
        for i in 0..m {
            let r = (i as f64 + 0.5) * l / m as f64;
            s += (k * r).sin() / k;
        }
        s *= l / m as f64;
        assert!((s - vico_hat(3, l, k)).abs() < 1e-8);
    }
}
