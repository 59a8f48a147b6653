//! L2P: local expansion of a leaf → potential and field at its particles.
//! `φ(x) = (1/h) Σ_lm μ̃_lm O_lm(u)`, `u = (x − c)/h`; the gradient uses the derived local
//! expansions of order `p − 1` (from `∂z O_lm = O_{l−1,m}`, `∂x O_lm = (O_{l−1,m+1} −
//! O_{l−1,m−1})/2`, `∂y O_lm = −i(O_{l−1,m−1} + O_{l−1,m+1})/2`):
//! `g^z_lm = μ̃_{l+1,m}`, `g^x_lm = (μ̃_{l+1,m−1} − μ̃_{l+1,m+1})/2`,
//! `g^y_lm = −i(μ̃_{l+1,m+1} + μ̃_{l+1,m−1})/2`, and `∂_a φ = (1/h²) Σ g^a_lm O_lm(u)`.
//! Vectorised over `W` particles at a time.

use super::harmonics::{get, idx, ncoef, RegTables};
use super::p2m::LaneScratch;
use super::simd::{Scalar, Simd, W};

/// Evaluation coefficients of one leaf: `value = Σ_i cre[i]·Re O_i + cim[i]·Im O_i` for the
/// potential (order `p`) and the three gradient components (order `p − 1`).
pub struct EvalCoefs {
    /// `[φ, ∂x, ∂y, ∂z]`, each `(cre, cim)` of length `ncoef(p)` (gradients zero-padded).
    pub c: [(Vec<f64>, Vec<f64>); 4],
}

impl EvalCoefs {
    /// Zeroed coefficients for order `p`.
    pub fn new(p: usize) -> Self {
        let nc = ncoef(p);
        let z = || (vec![0.0; nc], vec![0.0; nc]);
        EvalCoefs { c: [z(), z(), z(), z()] }
    }

    /// Fills the coefficients from a local expansion block `mu` of order `p`.
    pub fn set(&mut self, p: usize, mu: &[f64], with_grad: bool) {
        let nc = ncoef(p);
        for l in 0..=p {
            for m in 0..=l {
                let i = idx(l, m);
                let w = if m == 0 { 1.0 } else { 2.0 };
                self.c[0].0[i] = w * mu[i];
                self.c[0].1[i] = -w * mu[nc + i];
                if !with_grad {
                    continue;
                }
                if l + 1 > p {
                    for a in 1..4 {
                        self.c[a].0[i] = 0.0;
                        self.c[a].1[i] = 0.0;
                    }
                    continue;
                }
                let (l1, mi) = ((l + 1) as i64, m as i64);
                let (am_r, am_i) = get(mu, nc, l1, mi - 1);
                let (ap_r, ap_i) = get(mu, nc, l1, mi + 1);
                let (a0_r, a0_i) = get(mu, nc, l1, mi);
                let gx = (0.5 * (am_r - ap_r), 0.5 * (am_i - ap_i));
                // −i (a + b)/2 with a + b = (sr, si): (si/2, −sr/2)
                let (sr, si) = (ap_r + am_r, ap_i + am_i);
                let gy = (0.5 * si, -0.5 * sr);
                let gz = (a0_r, a0_i);
                for (a, g) in [(1, gx), (2, gy), (3, gz)] {
                    self.c[a].0[i] = w * g.0;
                    self.c[a].1[i] = -w * g.1;
                }
            }
        }
    }
}

/// Adds the potential (`phi[i] += φ`) and, when `grad` is given, the field (`E = −∇φ` into
/// `ex, ey, ez`) of the local expansion `co` (leaf centre `center`, side `h`) at the particles.
#[inline(always)]
pub fn l2p_body<S: Simd>(v: S, tab: &RegTables, co: &EvalCoefs, x: &[f64], y: &[f64], z: &[f64], center: [f64; 3], h: f64, phi: &mut [f64], grad: Option<(&mut [f64], &mut [f64], &mut [f64])>, s: &mut LaneScratch) {
    let p = tab.p;
    let nc = ncoef(p);
    let ncg = if p == 0 { 0 } else { ncoef(p - 1) };
    let inv_h = 1.0 / h;
    let inv_h2 = inv_h * inv_h;
    let n = x.len();
    let mut grad = grad;
    let mut i0 = 0;
    while i0 < n {
        let cnt = W.min(n - i0);
        let (mut xl, mut yl, mut zl) = ([0.0; W], [0.0; W], [0.0; W]);
        for k in 0..cnt {
            let i = i0 + k;
            xl[k] = (x[i] - center[0]) * inv_h;
            yl[k] = (y[i] - center[1]) * inv_h;
            zl[k] = (z[i] - center[2]) * inv_h;
        }
        tab.regular_lanes(v, &xl, &yl, &zl, &mut s.re, &mut s.im);
        let out = contract_lanes(v, &co.c, &s.re, &s.im, nc, ncg, grad.is_some());
        for k in 0..cnt {
            phi[i0 + k] += out[0][k] * inv_h;
        }
        if let Some((ex, ey, ez)) = grad.as_mut() {
            for k in 0..cnt {
                ex[i0 + k] -= out[1][k] * inv_h2;
                ey[i0 + k] -= out[2][k] * inv_h2;
                ez[i0 + k] -= out[3][k] * inv_h2;
            }
        }
        i0 += W;
    }
}

/// The lane sums `Σ_i (c_k.re[i]·re[i] + c_k.im[i]·im[i])` of four coefficient sets `c`
/// (`(re, im)` planes, e.g. [`EvalCoefs::c`]) against lane-major harmonics `re`, `im`: set 0
/// over the rows `0..npot`, sets 1–3 over `0..ngrad` and only `with_grad` (else zero). Shared
/// by L2P and M2P ([`super::m2p`]).
#[inline(always)]
pub(crate) fn contract_lanes<S: Simd>(v: S, c: &[(Vec<f64>, Vec<f64>); 4], re: &[[f64; W]], im: &[[f64; W]], npot: usize, ngrad: usize, with_grad: bool) -> [[f64; W]; 4] {
    let mut out = [[0.0; W]; 4];
    let (cr, ci) = (&c[0].0, &c[0].1);
    let mut a = v.splat(0.0);
    for i in 0..npot {
        a = v.fma(v.splat(cr[i]), v.load(&re[i]), a);
        a = v.fma(v.splat(ci[i]), v.load(&im[i]), a);
    }
    v.store(&mut out[0], a);
    if with_grad {
        let (mut gx, mut gy, mut gz) = (v.splat(0.0), v.splat(0.0), v.splat(0.0));
        let (xr, xi) = (&c[1].0, &c[1].1);
        let (yr, yi) = (&c[2].0, &c[2].1);
        let (zr, zi) = (&c[3].0, &c[3].1);
        for i in 0..ngrad {
            let (r, m) = (v.load(&re[i]), v.load(&im[i]));
            gx = v.fma(v.splat(xr[i]), r, v.fma(v.splat(xi[i]), m, gx));
            gy = v.fma(v.splat(yr[i]), r, v.fma(v.splat(yi[i]), m, gy));
            gz = v.fma(v.splat(zr[i]), r, v.fma(v.splat(zi[i]), m, gz));
        }
        v.store(&mut out[1], gx);
        v.store(&mut out[2], gy);
        v.store(&mut out[3], gz);
    }
    out
}

/// [`l2p_body`] with run-time CPU dispatch.
pub fn l2p(tab: &RegTables, co: &EvalCoefs, x: &[f64], y: &[f64], z: &[f64], center: [f64; 3], h: f64, phi: &mut [f64], grad: Option<(&mut [f64], &mut [f64], &mut [f64])>, s: &mut LaneScratch) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
        return unsafe { l2p_avx2(tab, co, x, y, z, center, h, phi, grad, s) };
    }
    l2p_body(Scalar, tab, co, x, y, z, center, h, phi, grad, s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn l2p_avx2(tab: &RegTables, co: &EvalCoefs, x: &[f64], y: &[f64], z: &[f64], center: [f64; 3], h: f64, phi: &mut [f64], grad: Option<(&mut [f64], &mut [f64], &mut [f64])>, s: &mut LaneScratch) {
    l2p_body(super::simd::Avx2::new_unchecked(), tab, co, x, y, z, center, h, phi, grad, s)
}
