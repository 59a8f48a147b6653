//! The two point–expansion operators of the adaptive FMM (the W and X lists of Carrier,
//! Greengard & Rokhlin, SIAM J. Sci. Stat. Comput. 9, 669 (1988), §3), in box units (see
//! [`super::harmonics`]):
//!
//! * [`m2p`]: a box's multipole expansion evaluated at particles,
//!   `φ(x) = (1/h) Σ_lm ω̃_lm conj(M_lm(u))`, `u = (x − c)/h`, and the field `E = −∇φ` from the
//!   gradients of the irregular harmonics (from the irregular addition theorem with `j = 1`):
//!   `∂z M_lm = −M_{l+1,m}`, `∂x M_lm = (M_{l+1,m+1} − M_{l+1,m−1})/2`,
//!   `∂y M_lm = −i (M_{l+1,m+1} + M_{l+1,m−1})/2`;
//! * [`p2l`]: particles' contribution to a box's local expansion,
//!   `μ̃_lm += q conj(M_lm((s − c)/h))` (from `1/|x − s| = Σ conj(O_lm(u)) M_lm(w)`,
//!   `|u| < |w|`).
//!
//! Every sum over `m = −l…l` is real, and the terms at `±m` are complex conjugates (both
//! factors obey `X_{l,−m} = (−1)^m conj(X_lm)`), so it is taken as `Re t_0 + 2 Σ_{m>0} Re t_m`.
//! Scalar code: these lists are short next to M2L and P2P (one entry per W/X pair whose box
//! holds enough particles, [`super::params::m2p_cost`]).

use super::harmonics::{get, idx, irregular, ncoef};

/// Scratch of [`m2p`] and [`p2l`]: one block of irregular harmonics of order `p + 1`.
pub struct PointScratch {
    m: Vec<f64>,
}

impl PointScratch {
    /// Scratch for order `p`.
    pub fn new(p: usize) -> Self {
        PointScratch { m: vec![0.0; 2 * ncoef(p + 1)] }
    }
}

/// Adds the potential (`phi[i]`) and, if given, the field (`grad`: `E_x, E_y, E_z`) of the
/// multipole expansion `omega` (order `p`, box units, a block of `2·ncoef(p)`) of the box of
/// centre `c` and side `h` at the particles `x, y, z` (all units of the root cube; every
/// particle well outside the box's sphere, `|x − c| > √3 h/2`).
#[allow(clippy::too_many_arguments)]
pub fn m2p(p: usize, omega: &[f64], c: [f64; 3], h: f64, x: &[f64], y: &[f64], z: &[f64], phi: &mut [f64], mut grad: Option<(&mut [f64], &mut [f64], &mut [f64])>, s: &mut PointScratch) {
    let nc = ncoef(p);
    let q = p + 1;
    let ncq = ncoef(q);
    let inv_h = 1.0 / h;
    for i in 0..x.len() {
        let u = [(x[i] - c[0]) * inv_h, (y[i] - c[1]) * inv_h, (z[i] - c[2]) * inv_h];
        let order = if grad.is_some() { q } else { p };
        let m = &mut s.m[..2 * ncoef(order)];
        irregular(order, u, m);
        let ncm = ncoef(order);
        // Σ ω_lm conj(M_lm): Re(ω conj(M)) = ω_re M_re + ω_im M_im
        let mut pot = 0.0;
        for l in 0..=p {
            for mm in 0..=l {
                let (j, k) = (idx(l, mm), idx(l, mm));
                let t = omega[j] * m[k] + omega[nc + j] * m[ncm + k];
                pot += if mm == 0 { t } else { 2.0 * t };
            }
        }
        phi[i] += pot * inv_h;
        if let Some((ex, ey, ez)) = grad.as_mut() {
            debug_assert_eq!(ncm, ncq);
            let (mut gx, mut gy, mut gz) = (0.0, 0.0, 0.0);
            for l in 0..=p {
                let l1 = (l + 1) as i64;
                for mm in 0..=l {
                    let (ore, oim) = (omega[idx(l, mm)], omega[nc + idx(l, mm)]);
                    let w = if mm == 0 { 1.0 } else { 2.0 };
                    let mi = mm as i64;
                    let (ar, ai) = get(m, ncq, l1, mi); // M_{l+1,m}
                    let (br, bi) = get(m, ncq, l1, mi + 1); // M_{l+1,m+1}
                    let (cr, ci) = get(m, ncq, l1, mi - 1); // M_{l+1,m−1}
                    // E_z = Σ ω conj(M_{l+1,m})
                    gz += w * (ore * ar + oim * ai);
                    // E_x = −½ Σ ω conj(M_{l+1,m+1} − M_{l+1,m−1})
                    let (dr, di) = (br - cr, bi - ci);
                    gx -= 0.5 * w * (ore * dr + oim * di);
                    // E_y = −½ Σ ω i conj(M_{l+1,m+1} + M_{l+1,m−1}); Re(ω i conj(s)) = ω_re s_im − ω_im s_re
                    let (sr, si) = (br + cr, bi + ci);
                    gy -= 0.5 * w * (ore * si - oim * sr);
                }
            }
            let f = inv_h * inv_h;
            ex[i] += gx * f;
            ey[i] += gy * f;
            ez[i] += gz * f;
        }
    }
}

/// Adds to the local expansion `mu` (order `p`, box units, a block of `2·ncoef(p)`) of the box
/// of centre `c` and side `h` the charges `q` at `x, y, z` (units of the root cube; every
/// charge well outside the box's sphere).
#[allow(clippy::too_many_arguments)]
pub fn p2l(p: usize, x: &[f64], y: &[f64], z: &[f64], q: &[f64], c: [f64; 3], h: f64, mu: &mut [f64], s: &mut PointScratch) {
    let nc = ncoef(p);
    let inv_h = 1.0 / h;
    let m = &mut s.m[..2 * nc];
    for i in 0..x.len() {
        irregular(p, [(x[i] - c[0]) * inv_h, (y[i] - c[1]) * inv_h, (z[i] - c[2]) * inv_h], m);
        let qi = q[i];
        for k in 0..nc {
            mu[k] += qi * m[k];
            mu[nc + k] -= qi * m[nc + k];
        }
    }
}
