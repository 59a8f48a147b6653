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
//! The field of M2P is itself a sum over irregular harmonics of order `p + 1`,
//! `E_a = (1/h²) Σ_lm G^a_lm conj(M_lm(u))` with the derived coefficients
//! `G^z_lm = ω̃_{l−1,m}`, `G^x_lm = −½(ω̃_{l−1,m−1} − ω̃_{l−1,m+1})`,
//! `G^y_lm = −½ i (ω̃_{l−1,m−1} + ω̃_{l−1,m+1})` (which obey the same `±m` symmetry), so one
//! set of harmonics per particle serves the potential and the field ([`M2pCoefs`]). Every sum
//! over `m = −l…l` is real and its terms at `±m` are complex conjugates, so it is taken as
//! `Re t_0 + 2 Σ_{m>0} Re t_m`. Vectorised over `W` particles at a time, like P2M and L2P.

use super::harmonics::{get, idx, irregular_lanes, ncoef};
use super::l2p::contract_lanes;
use super::p2m::accumulate_charges;
use super::simd::{Scalar, Simd, W};

/// Lane-major scratch of [`m2p`] and [`p2l`] (harmonics of order `p + 1`, accumulators).
pub struct PointScratch {
    re: Vec<[f64; W]>,
    im: Vec<[f64; W]>,
    acc_re: Vec<[f64; W]>,
    acc_im: Vec<[f64; W]>,
}

impl PointScratch {
    /// Scratch for order `p`.
    pub fn new(p: usize) -> Self {
        let n = ncoef(p + 1);
        PointScratch { re: vec![[0.0; W]; n], im: vec![[0.0; W]; n], acc_re: vec![[0.0; W]; n], acc_im: vec![[0.0; W]; n] }
    }
}

/// The coefficients [`m2p`] contracts with the irregular harmonics of order `p + 1`: the
/// multipole (`[0]`, zero at degree `p + 1`) and `G^x, G^y, G^z` (module docs), each as
/// `(re, im)` planes of `ncoef(p + 1)` with the weight 2 of `m > 0` folded in.
pub struct M2pCoefs {
    /// `[ω̃, G^x, G^y, G^z]`.
    pub c: [(Vec<f64>, Vec<f64>); 4],
}

impl M2pCoefs {
    /// Zeroed coefficients for order `p`.
    pub fn new(p: usize) -> Self {
        let n = ncoef(p + 1);
        let z = || (vec![0.0; n], vec![0.0; n]);
        M2pCoefs { c: [z(), z(), z(), z()] }
    }

    /// Fills the coefficients from the multipole block `omega` (order `p`).
    pub fn set(&mut self, p: usize, omega: &[f64], with_grad: bool) {
        let nc = ncoef(p);
        for l in 0..=p + 1 {
            for m in 0..=l {
                let i = idx(l, m);
                let w = if m == 0 { 1.0 } else { 2.0 };
                let (or, oi) = if l <= p { (omega[i], omega[nc + i]) } else { (0.0, 0.0) };
                self.c[0].0[i] = w * or;
                self.c[0].1[i] = w * oi;
                if !with_grad {
                    continue;
                }
                let (ll, mm) = (l as i64 - 1, m as i64);
                let (ar, ai) = if l >= 1 { get(omega, nc, ll, mm - 1) } else { (0.0, 0.0) }; // ω_{l−1,m−1}
                let (br, bi) = if l >= 1 { get(omega, nc, ll, mm + 1) } else { (0.0, 0.0) }; // ω_{l−1,m+1}
                let (zr, zi) = if l >= 1 { get(omega, nc, ll, mm) } else { (0.0, 0.0) };
                // G^x = −½(a − b); G^y = −½ i (a + b) = (½ Im(a + b), −½ Re(a + b))
                self.c[1].0[i] = -0.5 * w * (ar - br);
                self.c[1].1[i] = -0.5 * w * (ai - bi);
                self.c[2].0[i] = 0.5 * w * (ai + bi);
                self.c[2].1[i] = -0.5 * w * (ar + br);
                self.c[3].0[i] = w * zr;
                self.c[3].1[i] = w * zi;
            }
        }
    }
}

/// Adds the potential (`phi[i]`) and, if given, the field (`grad`: `E_x, E_y, E_z`) of the
/// multipole expansion of [`M2pCoefs`] `co` (order `p`; the field needs it filled with
/// `with_grad`) of the box of centre `c` and side `h` at the particles `x, y, z` (units of the
/// root cube; every particle well outside the box's sphere, `|x − c| > √3 h/2`).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn m2p_body<S: Simd>(v: S, p: usize, co: &M2pCoefs, c: [f64; 3], h: f64, x: &[f64], y: &[f64], z: &[f64], phi: &mut [f64], mut grad: Option<(&mut [f64], &mut [f64], &mut [f64])>, s: &mut PointScratch) {
    let order = if grad.is_some() { p + 1 } else { p };
    let nc = ncoef(order);
    let inv_h = 1.0 / h;
    let inv_h2 = inv_h * inv_h;
    let n = x.len();
    let mut i0 = 0;
    while i0 < n {
        let cnt = W.min(n - i0);
        let (mut xl, mut yl, mut zl) = ([0.0; W], [0.0; W], [0.0; W]);
        for k in 0..cnt {
            let i = i0 + k;
            xl[k] = (x[i] - c[0]) * inv_h;
            yl[k] = (y[i] - c[1]) * inv_h;
            zl[k] = (z[i] - c[2]) * inv_h;
        }
        irregular_lanes(v, order, &xl, &yl, &zl, &mut s.re, &mut s.im);
        let out = contract_lanes(v, &co.c, &s.re, &s.im, ncoef(p), nc, grad.is_some());
        for k in 0..cnt {
            phi[i0 + k] += out[0][k] * inv_h;
        }
        if let Some((ex, ey, ez)) = grad.as_mut() {
            for k in 0..cnt {
                ex[i0 + k] += out[1][k] * inv_h2;
                ey[i0 + k] += out[2][k] * inv_h2;
                ez[i0 + k] += out[3][k] * inv_h2;
            }
        }
        i0 += W;
    }
}

/// [`m2p_body`] with run-time CPU dispatch.
#[allow(clippy::too_many_arguments)]
pub fn m2p(p: usize, co: &M2pCoefs, c: [f64; 3], h: f64, x: &[f64], y: &[f64], z: &[f64], phi: &mut [f64], grad: Option<(&mut [f64], &mut [f64], &mut [f64])>, s: &mut PointScratch) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
        return unsafe { m2p_avx2(p, co, c, h, x, y, z, phi, grad, s) };
    }
    m2p_body(Scalar, p, co, c, h, x, y, z, phi, grad, s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn m2p_avx2(p: usize, co: &M2pCoefs, c: [f64; 3], h: f64, x: &[f64], y: &[f64], z: &[f64], phi: &mut [f64], grad: Option<(&mut [f64], &mut [f64], &mut [f64])>, s: &mut PointScratch) {
    m2p_body(super::simd::Avx2::new_unchecked(), p, co, c, h, x, y, z, phi, grad, s)
}

/// Adds to the local expansion `mu` (order `p`, box units, a block of `2·ncoef(p)`) of the box
/// of centre `c` and side `h` the charges `q` at `x, y, z` (units of the root cube; every
/// charge well outside the box's sphere).
#[inline(always)]
#[allow(clippy::too_many_arguments)]
pub fn p2l_body<S: Simd>(v: S, p: usize, x: &[f64], y: &[f64], z: &[f64], q: &[f64], c: [f64; 3], h: f64, mu: &mut [f64], s: &mut PointScratch) {
    let nc = ncoef(p);
    let inv_h = 1.0 / h;
    for i in 0..nc {
        s.acc_re[i] = [0.0; W];
        s.acc_im[i] = [0.0; W];
    }
    let n = x.len();
    let mut i0 = 0;
    while i0 < n {
        let (mut xl, mut yl, mut zl, mut ql) = ([0.0; W], [0.0; W], [0.0; W], [0.0; W]);
        for k in 0..W.min(n - i0) {
            let i = i0 + k;
            xl[k] = (x[i] - c[0]) * inv_h;
            yl[k] = (y[i] - c[1]) * inv_h;
            zl[k] = (z[i] - c[2]) * inv_h;
            ql[k] = q[i];
        }
        irregular_lanes(v, p, &xl, &yl, &zl, &mut s.re, &mut s.im);
        accumulate_charges(v, &ql, &s.re, &s.im, &mut s.acc_re, &mut s.acc_im, nc);
        i0 += W;
    }
    for i in 0..nc {
        mu[i] += v.sum(v.load(&s.acc_re[i]));
        mu[nc + i] -= v.sum(v.load(&s.acc_im[i]));
    }
}

/// [`p2l_body`] with run-time CPU dispatch.
#[allow(clippy::too_many_arguments)]
pub fn p2l(p: usize, x: &[f64], y: &[f64], z: &[f64], q: &[f64], c: [f64; 3], h: f64, mu: &mut [f64], s: &mut PointScratch) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
        return unsafe { p2l_avx2(p, x, y, z, q, c, h, mu, s) };
    }
    p2l_body(Scalar, p, x, y, z, q, c, h, mu, s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn p2l_avx2(p: usize, x: &[f64], y: &[f64], z: &[f64], q: &[f64], c: [f64; 3], h: f64, mu: &mut [f64], s: &mut PointScratch) {
    p2l_body(super::simd::Avx2::new_unchecked(), p, x, y, z, q, c, h, mu, s)
}
