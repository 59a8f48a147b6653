//! L2L: local expansion of a parent box → local expansion of a child.
//! From `φ(x) = Σ_lm μ_lm O_lm(x − c)` and the regular addition theorem:
//! `μ_jk(c') = Σ_{l≥j} Σ_m μ_lm(c) O_{l−j,m−k}(c' − c)`; in box units (parent side `h`, child
//! side `h/2`): `μ̃^C_jk = 2^{−(j+1)} Σ_lm μ̃^P_lm O_{l−j,m−k}((c' − c)/h)`.
//!
//! * [`l2l`]: the direct O(p⁴) form (the reference of the tests);
//! * [`l2l_lanes`]: rotation-based, O(p³), vectorised over `W` parents at a time, one child
//!   octant per call (see [`super::rotation::ChildTables`]). Local expansions transform
//!   contragrediently to multipoles: into the frame of `d` with `e^{+imφ}` and the transposed
//!   rotation by `+θ`, back with the transposed rotation by `−θ` and `e^{−imφ}`.

use super::harmonics::{get, idx, ncoef};
use super::m2l::{yrotate, zrotate};
use super::m2m::ShiftScratch;
use super::rotation::ChildTables;
use super::simd::{Scalar, Simd};

/// Rotation-based L2L of `W` parents (their local expansions lane-major in `s.par_*`) to their
/// children of octant `o`; the children's local expansions (lane-major) are left in
/// `s.b_re`, `s.b_im`.
#[inline(always)]
pub fn l2l_lanes_body<S: Simd>(v: S, t: &ChildTables, o: usize, s: &mut ShiftScratch) {
    let p = t.p;
    let nc = ncoef(p);
    let n = p + 1;
    let d = &t.oct[o];
    for i in 0..nc {
        s.a_re[i] = s.par_re[i];
        s.a_im[i] = s.par_im[i];
    }
    zrotate(v, p, &d.cos, &d.sin, 1.0, &mut s.a_re, &mut s.a_im);
    yrotate(v, p, &t.plus[d.class].back, &s.a_re, &s.a_im, &mut s.b_re, &mut s.b_im);
    // translation along z: a_jk = Σ_{l=j}^{p} e_jl b_lk
    for k in 0..=p {
        for j in k..=p {
            let (mut r, mut x) = (v.splat(0.0), v.splat(0.0));
            for l in j..=p {
                let c = v.splat(t.l2l[j * n + l]);
                let i = idx(l, k);
                r = v.fma(c, v.load(&s.b_re[i]), r);
                x = v.fma(c, v.load(&s.b_im[i]), x);
            }
            v.store(&mut s.a_re[idx(j, k)], r);
            v.store(&mut s.a_im[idx(j, k)], x);
        }
    }
    yrotate(v, p, &t.minus[d.class].back, &s.a_re, &s.a_im, &mut s.b_re, &mut s.b_im);
    zrotate(v, p, &d.cos, &d.sin, -1.0, &mut s.b_re, &mut s.b_im);
}

/// [`l2l_lanes_body`] with run-time CPU dispatch.
pub fn l2l_lanes(t: &ChildTables, o: usize, s: &mut ShiftScratch) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
        return unsafe { l2l_lanes_avx2(t, o, s) };
    }
    l2l_lanes_body(Scalar, t, o, s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn l2l_lanes_avx2(t: &ChildTables, o: usize, s: &mut ShiftScratch) {
    l2l_lanes_body(super::simd::Avx2::new_unchecked(), t, o, s)
}

/// Adds to `child` the translation of `parent` (both order `p`), where `shift` holds `O_lm(d)`
/// (order `p`) of `d = (c_child − c_parent)/h_parent` and `scale = h_child/h_parent`.
pub fn l2l(p: usize, parent: &[f64], shift: &[f64], scale: f64, child: &mut [f64]) {
    let nc = ncoef(p);
    let pi = p as i64;
    let mut sj = scale;
    for j in 0..=pi {
        for k in 0..=j {
            let (mut sr, mut si) = (0.0, 0.0);
            for l in j..=pi {
                let n = l - j;
                let m0 = (-l).max(k - n);
                let m1 = l.min(k + n);
                for m in m0..=m1 {
                    let (ar, ai) = get(parent, nc, l, m);
                    let (br, bi) = get(shift, nc, n, m - k);
                    sr += ar * br - ai * bi;
                    si += ar * bi + ai * br;
                }
            }
            let i = idx(j as usize, k as usize);
            child[i] += sj * sr;
            child[nc + i] += sj * si;
        }
        sj *= scale;
    }
}
