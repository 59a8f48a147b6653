//! M2M: multipole expansion of a child box → multipole expansion of its parent.
//! From the regular addition theorem `O_lm(a + b) = Σ_jk O_jk(a) O_{l−j,m−k}(b)`:
//! `ω_lm(c') = Σ_{j≤l} Σ_k ω_jk(c) O_{l−j,m−k}(c − c')`; in box units (child side `h/2`, parent
//! side `h`): `ω̃^P_lm = Σ_jk 2^{−j} ω̃^C_jk O_{l−j,m−k}((c − c')/h)` (the seed paper's eq. 14).
//! Direct O(p⁴) form: it runs once per box (not 189 times like M2L).

use super::harmonics::{get, idx, ncoef};

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
