//! L2L: local expansion of a parent box → local expansion of a child.
//! From `φ(x) = Σ_lm μ_lm O_lm(x − c)` and the regular addition theorem:
//! `μ_jk(c') = Σ_{l≥j} Σ_m μ_lm(c) O_{l−j,m−k}(c' − c)`; in box units (parent side `h`, child
//! side `h/2`): `μ̃^C_jk = 2^{−(j+1)} Σ_lm μ̃^P_lm O_{l−j,m−k}((c' − c)/h)`. Direct O(p⁴) form.

use super::harmonics::{get, idx, ncoef};

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
