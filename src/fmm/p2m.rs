//! P2M: particles → multipole expansion of their leaf box,
//! `ω̃_lm = Σ_i q_i O_lm((s_i − c)/h)` (box units, see [`super::harmonics`]).
//! Vectorised over `W` particles at a time (lane-major harmonics, one recurrence per lane).

use super::harmonics::{ncoef, RegTables};
use super::simd::{Scalar, Simd, W};

/// Scratch space of [`p2m`] / [`super::l2p`] (lane-major rows of `ncoef(p)`).
pub struct LaneScratch {
    pub(crate) re: Vec<[f64; W]>,
    pub(crate) im: Vec<[f64; W]>,
    pub(crate) acc_re: Vec<[f64; W]>,
    pub(crate) acc_im: Vec<[f64; W]>,
}

impl LaneScratch {
    /// Scratch for order `p`.
    pub fn new(p: usize) -> Self {
        let nc = ncoef(p);
        LaneScratch { re: vec![[0.0; W]; nc], im: vec![[0.0; W]; nc], acc_re: vec![[0.0; W]; nc], acc_im: vec![[0.0; W]; nc] }
    }
}

/// Adds the multipole expansion (order `tab.p`, box units) of the particles `x, y, z, q` about
/// `center` with box side `1/inv_h` to `out` (a coefficient block, `2·ncoef(p)` doubles).
#[inline(always)]
pub fn p2m_body<S: Simd>(v: S, tab: &RegTables, x: &[f64], y: &[f64], z: &[f64], q: &[f64], center: [f64; 3], inv_h: f64, out: &mut [f64], s: &mut LaneScratch) {
    let nc = ncoef(tab.p);
    let n = x.len();
    for i in 0..nc {
        s.acc_re[i] = [0.0; W];
        s.acc_im[i] = [0.0; W];
    }
    let mut i0 = 0;
    while i0 < n {
        let (mut xl, mut yl, mut zl, mut ql) = ([0.0; W], [0.0; W], [0.0; W], [0.0; W]);
        for k in 0..W.min(n - i0) {
            let i = i0 + k;
            xl[k] = (x[i] - center[0]) * inv_h;
            yl[k] = (y[i] - center[1]) * inv_h;
            zl[k] = (z[i] - center[2]) * inv_h;
            ql[k] = q[i];
        }
        tab.regular_lanes(v, &xl, &yl, &zl, &mut s.re, &mut s.im);
        accumulate_charges(v, &ql, &s.re, &s.im, &mut s.acc_re, &mut s.acc_im, nc);
        i0 += W;
    }
    for i in 0..nc {
        out[i] += v.sum(v.load(&s.acc_re[i]));
        out[nc + i] += v.sum(v.load(&s.acc_im[i]));
    }
}

/// `acc += q · X` over the first `nc` lane-major rows (charges `q` per lane, harmonics `re`,
/// `im`). Shared by P2M and P2L ([`super::m2p`]).
#[inline(always)]
pub(crate) fn accumulate_charges<S: Simd>(v: S, q: &[f64; W], re: &[[f64; W]], im: &[[f64; W]], acc_re: &mut [[f64; W]], acc_im: &mut [[f64; W]], nc: usize) {
    let qv = v.load(q);
    for i in 0..nc {
        let ar = v.fma(qv, v.load(&re[i]), v.load(&acc_re[i]));
        let ai = v.fma(qv, v.load(&im[i]), v.load(&acc_im[i]));
        v.store(&mut acc_re[i], ar);
        v.store(&mut acc_im[i], ai);
    }
}

/// [`p2m_body`] with run-time CPU dispatch.
pub fn p2m(tab: &RegTables, x: &[f64], y: &[f64], z: &[f64], q: &[f64], center: [f64; 3], inv_h: f64, out: &mut [f64], s: &mut LaneScratch) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
        return unsafe { p2m_avx2(tab, x, y, z, q, center, inv_h, out, s) };
    }
    p2m_body(Scalar, tab, x, y, z, q, center, inv_h, out, s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn p2m_avx2(tab: &RegTables, x: &[f64], y: &[f64], z: &[f64], q: &[f64], center: [f64; 3], inv_h: f64, out: &mut [f64], s: &mut LaneScratch) {
    p2m_body(super::simd::Avx2::new_unchecked(), tab, x, y, z, q, center, inv_h, out, s)
}
