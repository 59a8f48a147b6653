//! M2M: multipole expansion of a child box → multipole expansion of its parent.
//! From the regular addition theorem `O_lm(a + b) = Σ_jk O_jk(a) O_{l−j,m−k}(b)`:
//! `ω_lm(c') = Σ_{j≤l} Σ_k ω_jk(c) O_{l−j,m−k}(c − c')`; in box units (child side `h/2`, parent
//! side `h`): `ω̃^P_lm = Σ_jk 2^{−j} ω̃^C_jk O_{l−j,m−k}((c − c')/h)` (the seed paper's eq. 14).
//!
//! * [`m2m`]: the direct O(p⁴) form (the reference of the tests);
//! * [`m2m_lanes`]: rotation-based, O(p³), vectorised over `W` parents at a time (for one
//!   child octant all parents share the rotation; see [`super::rotation::ChildTables`]).

use super::harmonics::{get, idx, ncoef};
use super::m2l::{gather, yrotate, zrotate, NONE};
use super::rotation::ChildTables;
use super::simd::{Scalar, Simd, W};

/// Lane-major scratch of the M2M/L2L kernels.
pub struct ShiftScratch {
    pub(crate) par_re: Vec<[f64; W]>,
    pub(crate) par_im: Vec<[f64; W]>,
    pub(crate) a_re: Vec<[f64; W]>,
    pub(crate) a_im: Vec<[f64; W]>,
    pub(crate) b_re: Vec<[f64; W]>,
    pub(crate) b_im: Vec<[f64; W]>,
    pub(crate) zeros: Vec<f64>,
}

impl ShiftScratch {
    /// Scratch for order `p`.
    pub fn new(p: usize) -> Self {
        let nc = ncoef(p);
        let z = || vec![[0.0; W]; nc];
        ShiftScratch { par_re: z(), par_im: z(), a_re: z(), a_im: z(), b_re: z(), b_im: z(), zeros: vec![0.0; nc] }
    }
}

/// Rotation-based M2M of `W` parents at once: `children[o][lane]` is the child with octant
/// `o` of the parent in `lane` (index in `child_level`, or `NONE`); the parents' multipoles are
/// accumulated lane-major into `s.par_*` (zeroed first).
#[inline(always)]
pub fn m2m_lanes_body<S: Simd>(v: S, t: &ChildTables, children: &[[u32; W]; 8], child_level: &[f64], s: &mut ShiftScratch) {
    let p = t.p;
    let nc = ncoef(p);
    let n = p + 1;
    for i in 0..nc {
        s.par_re[i] = [0.0; W];
        s.par_im[i] = [0.0; W];
    }
    for (o, src) in children.iter().enumerate() {
        if src.iter().all(|&c| c == NONE) {
            continue;
        }
        let d = &t.oct[o];
        gather(v, src, child_level, nc, p, &s.zeros, &mut s.a_re, &mut s.a_im);
        zrotate(v, p, &d.cos, &d.sin, -1.0, &mut s.a_re, &mut s.a_im);
        yrotate(v, p, &t.minus[d.class].fwd, &s.a_re, &s.a_im, &mut s.b_re, &mut s.b_im);
        // translation along z: a_lm = Σ_{j=m}^{l} c_lj b_jm
        for m in 0..=p {
            for l in m..=p {
                let (mut r, mut x) = (v.splat(0.0), v.splat(0.0));
                for j in m..=l {
                    let c = v.splat(t.m2m[l * n + j]);
                    let k = idx(j, m);
                    r = v.fma(c, v.load(&s.b_re[k]), r);
                    x = v.fma(c, v.load(&s.b_im[k]), x);
                }
                v.store(&mut s.a_re[idx(l, m)], r);
                v.store(&mut s.a_im[idx(l, m)], x);
            }
        }
        yrotate(v, p, &t.plus[d.class].fwd, &s.a_re, &s.a_im, &mut s.b_re, &mut s.b_im);
        zrotate(v, p, &d.cos, &d.sin, 1.0, &mut s.b_re, &mut s.b_im);
        for i in 0..nc {
            let r = v.add(v.load(&s.par_re[i]), v.load(&s.b_re[i]));
            let x = v.add(v.load(&s.par_im[i]), v.load(&s.b_im[i]));
            v.store(&mut s.par_re[i], r);
            v.store(&mut s.par_im[i], x);
        }
    }
}

/// [`m2m_lanes_body`] with run-time CPU dispatch.
pub fn m2m_lanes(t: &ChildTables, children: &[[u32; W]; 8], child_level: &[f64], s: &mut ShiftScratch) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
        return unsafe { m2m_lanes_avx2(t, children, child_level, s) };
    }
    m2m_lanes_body(Scalar, t, children, child_level, s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn m2m_lanes_avx2(t: &ChildTables, children: &[[u32; W]; 8], child_level: &[f64], s: &mut ShiftScratch) {
    m2m_lanes_body(super::simd::Avx2::new_unchecked(), t, children, child_level, s)
}

/// Adds to `parent` the translation of `child` (both order `p`), where `shift` holds the
/// regular harmonics `O_lm(d)` (order `p`) of `d = (c_child − c_parent)/h_parent` and
/// `scale = h_child/h_parent`.
pub fn m2m(p: usize, child: &[f64], shift: &[f64], scale: f64, parent: &mut [f64]) {
    let nc = ncoef(p);
    // child coefficients scaled by scale^j
    let mut c = child[..2 * nc].to_vec();
    let mut sj = 1.0;
    for j in 0..=p {
        for k in 0..=j {
            c[idx(j, k)] *= sj;
            c[nc + idx(j, k)] *= sj;
        }
        sj *= scale;
    }
    for l in 0..=p as i64 {
        for m in 0..=l {
            let (mut sr, mut si) = (0.0, 0.0);
            for j in 0..=l {
                let n = l - j;
                let k0 = (-j).max(m - n);
                let k1 = j.min(m + n);
                for k in k0..=k1 {
                    let (ar, ai) = get(&c, nc, j, k);
                    let (br, bi) = get(shift, nc, n, m - k);
                    sr += ar * br - ai * bi;
                    si += ar * bi + ai * br;
                }
            }
            let i = idx(l as usize, m as usize);
            parent[i] += sr;
            parent[nc + i] += si;
        }
    }
}
