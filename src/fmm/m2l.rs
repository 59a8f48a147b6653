//! M2L: multipole expansion of a source box → local expansion of a well-separated target box.
//!
//! From the irregular addition theorem `M_lm(R + y) = Σ_jk (−1)^j conj(O_jk(y)) M_{l+j,m+k}(R)`
//! (`R = c_t − c_s`): `μ_jk = (−1)^j Σ_lm ω_lm conj(M_{l+j,m+k}(R))` (the seed paper's eq. 15),
//! in box units with `R/h = v`, the integer offset of the two boxes.
//!
//! * [`m2l_tensor`]: the direct O(p⁴) form for any tensor `T_LM` (`M_LM(v)`, or the lattice
//!   sum of the periodic operator); the reference the fast kernel is tested against.
//! * [`m2l_tile`]: the O(p³) rotation-based kernel (see [`super::rotation`]) applied to a
//!   *tile* of up to `W` target boxes with the same position in their parents (so they share
//!   their list of offsets), vectorised over the tile's lanes: per offset, the `W` source
//!   expansions are gathered lane-major, z-rotated, y-rotated, translated along z, rotated back
//!   and accumulated; each tile owns its targets, so tiles run in parallel without atomics.

use super::harmonics::{get, idx, ncoef, sgn};
use super::rotation::{yrot_offset, M2lTables};
use super::simd::W;

/// Adds to `mu` (order `p`) the M2L translation of `omega` (order `p`) through the tensor
/// `t` (a block of order `2p`): `μ_jk += (−1)^j Σ_lm ω_lm conj(T_{l+j,m+k})`.
pub fn m2l_tensor(p: usize, omega: &[f64], t: &[f64], mu: &mut [f64]) {
    let nc = ncoef(p);
    let nt = ncoef(2 * p);
    let pi = p as i64;
    for j in 0..=pi {
        for k in 0..=j {
            let (mut sr, mut si) = (0.0, 0.0);
            for l in 0..=pi {
                for m in -l..=l {
                    let (ar, ai) = get(omega, nc, l, m);
                    let (br, bi) = get(t, nt, l + j, m + k);
                    // a · conj(b)
                    sr += ar * br + ai * bi;
                    si += ai * br - ar * bi;
                }
            }
            let s = sgn(j);
            let i = idx(j as usize, k as usize);
            mu[i] += s * sr;
            mu[nc + i] += s * si;
        }
    }
}

/// "No source in this lane".
pub const NONE: u32 = u32::MAX;

/// One offset of a tile: the direction index and the source box (index in the level) of each
/// lane, [`NONE`] where that lane's target has no (occupied) source at this offset.
#[derive(Debug, Clone, Copy)]
pub struct M2lEntry {
    /// Index into [`M2lTables::dirs`].
    pub dir: u16,
    /// Source boxes per lane.
    pub src: [u32; W],
}

/// Lane-major scratch of the tile kernel.
pub struct M2lScratch {
    a_re: Vec<[f64; W]>,
    a_im: Vec<[f64; W]>,
    b_re: Vec<[f64; W]>,
    b_im: Vec<[f64; W]>,
    /// Accumulated local expansions of the tile's targets (real parts), lane-major.
    pub acc_re: Vec<[f64; W]>,
    /// Imaginary parts.
    pub acc_im: Vec<[f64; W]>,
}

impl M2lScratch {
    /// Scratch for order `p`.
    pub fn new(p: usize) -> Self {
        let nc = ncoef(p);
        let z = || vec![[0.0; W]; nc];
        M2lScratch { a_re: z(), a_im: z(), b_re: z(), b_im: z(), acc_re: z(), acc_im: z() }
    }
}

/// `out[m] = Σ_{m'} mat[m][m'] · inp[m']` on lanes, for the rows of one degree.
#[inline(always)]
fn matvec(mat: &[f64], n: usize, inp: &[[f64; W]], out: &mut [[f64; W]]) {
    for (r, o) in out.iter_mut().enumerate().take(n) {
        let row = &mat[r * n..r * n + n];
        let mut acc = [0.0; W];
        for (c, &a) in row.iter().enumerate() {
            let v = &inp[c];
            for k in 0..W {
                acc[k] += a * v[k];
            }
        }
        *o = acc;
    }
}

/// Applies the real/imaginary y-rotation matrices `mats` (layout of [`super::rotation::YRot`])
/// to `(ire, iim)` giving `(ore, oim)`.
#[inline(always)]
fn yrotate(p: usize, mats: &[f64], ire: &[[f64; W]], iim: &[[f64; W]], ore: &mut [[f64; W]], oim: &mut [[f64; W]]) {
    for l in 0..=p {
        let off = yrot_offset(l);
        let b = idx(l, 0);
        let n1 = l + 1;
        matvec(&mats[off..off + n1 * n1], n1, &ire[b..b + n1], &mut ore[b..b + n1]);
        oim[b] = [0.0; W];
        if l > 0 {
            let off2 = off + n1 * n1;
            matvec(&mats[off2..off2 + l * l], l, &iim[b + 1..b + n1], &mut oim[b + 1..b + n1]);
        }
    }
}

/// The tile kernel: accumulates into `s.acc_*` (zeroed first) the M2L translations of all
/// `entries` of one tile, reading source expansions from the level array `mpole` (box-major
/// blocks of `2·ncoef(p)`).
#[inline(always)]
pub fn m2l_tile_body(tab: &M2lTables, entries: &[M2lEntry], mpole: &[f64], s: &mut M2lScratch) {
    let p = tab.p;
    let nc = ncoef(p);
    for i in 0..nc {
        s.acc_re[i] = [0.0; W];
        s.acc_im[i] = [0.0; W];
    }
    for e in entries {
        let d = &tab.dirs[e.dir as usize];
        let yr = &tab.yrot[d.class];
        let t = &tab.ztrans[d.r2];
        // 1. gather the sources lane-major
        for (lane, &src) in e.src.iter().enumerate() {
            if src == NONE {
                for i in 0..nc {
                    s.a_re[i][lane] = 0.0;
                    s.a_im[i][lane] = 0.0;
                }
            } else {
                let blk = &mpole[src as usize * 2 * nc..(src as usize + 1) * 2 * nc];
                for i in 0..nc {
                    s.a_re[i][lane] = blk[i];
                    s.a_im[i][lane] = blk[nc + i];
                }
            }
        }
        // 2. z-rotation: a ← e^{−imφ} a
        for l in 0..=p {
            for m in 1..=l {
                let i = idx(l, m);
                let (c, sn) = (d.cos[m], d.sin[m]);
                let (r, im) = (s.a_re[i], s.a_im[i]);
                let (mut nr, mut ni) = ([0.0; W], [0.0; W]);
                for k in 0..W {
                    nr[k] = r[k] * c + im[k] * sn;
                    ni[k] = im[k] * c - r[k] * sn;
                }
                s.a_re[i] = nr;
                s.a_im[i] = ni;
            }
        }
        // 3. y-rotation (forward): b ← A a
        yrotate(p, &yr.fwd, &s.a_re, &s.a_im, &mut s.b_re, &mut s.b_im);
        // 4. translation along z: a_jk ← (−1)^{j+k} Σ_l T_{l+j} conj(b_lk)
        for k in 0..=p {
            for j in k..=p {
                let (mut sr, mut si) = ([0.0; W], [0.0; W]);
                for l in k..=p {
                    let c = t[l + j];
                    let i = idx(l, k);
                    let (r, im) = (&s.b_re[i], &s.b_im[i]);
                    for q in 0..W {
                        sr[q] += c * r[q];
                        si[q] += c * im[q];
                    }
                }
                let sg = sgn((j + k) as i64);
                let o = idx(j, k);
                for q in 0..W {
                    s.a_re[o][q] = sg * sr[q];
                    s.a_im[o][q] = -sg * si[q];
                }
            }
        }
        // 5. y-rotation back: b ← A^T-like a
        yrotate(p, &yr.back, &s.a_re, &s.a_im, &mut s.b_re, &mut s.b_im);
        // 6. z-rotation back and accumulate: acc += e^{−ikφ} b
        for l in 0..=p {
            let i0 = idx(l, 0);
            let r = s.b_re[i0];
            for q in 0..W {
                s.acc_re[i0][q] += r[q];
            }
            for m in 1..=l {
                let i = idx(l, m);
                let (c, sn) = (d.cos[m], d.sin[m]);
                let (r, im) = (s.b_re[i], s.b_im[i]);
                for q in 0..W {
                    s.acc_re[i][q] += r[q] * c + im[q] * sn;
                    s.acc_im[i][q] += im[q] * c - r[q] * sn;
                }
            }
        }
    }
}

/// [`m2l_tile_body`] with run-time CPU dispatch.
pub fn m2l_tile(tab: &M2lTables, entries: &[M2lEntry], mpole: &[f64], s: &mut M2lScratch) {
    #[cfg(target_arch = "x86_64")]
    if super::simd::has_avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
        return unsafe { m2l_tile_avx2(tab, entries, mpole, s) };
    }
    m2l_tile_body(tab, entries, mpole, s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn m2l_tile_avx2(tab: &M2lTables, entries: &[M2lEntry], mpole: &[f64], s: &mut M2lScratch) {
    m2l_tile_body(tab, entries, mpole, s)
}
