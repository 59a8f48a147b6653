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
use super::simd::{Scalar, Simd, W};

/// Adds to `mu` (order `p`) the M2L translation of `omega` (order `p`) through the tensor
/// `t` (a block of order `2p`): `μ_jk += (−1)^j Σ_lm ω_lm conj(T_{l+j,m+k})`.
pub fn m2l_tensor(p: usize, omega: &[f64], t: &[f64], mu: &mut [f64]) {
    m2l_tensor_order(p, p, omega, t, mu)
}

/// [`m2l_tensor`] truncated at degree `pe ≤ p` (distance-dependent truncation, as the tile
/// kernel's [`super::params::m2l_order`]): source degrees `> pe` are not read, target degrees
/// `> pe` not produced; blocks of order `p` (`omega`, `mu`) and `2p` (`t`). `pe = p` is
/// [`m2l_tensor`], operation for operation.
pub fn m2l_tensor_order(p: usize, pe: usize, omega: &[f64], t: &[f64], mu: &mut [f64]) {
    let nc = ncoef(p);
    let nt = ncoef(2 * p);
    let pi = pe.min(p) as i64;
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
pub(crate) const NONE: u32 = u32::MAX;

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
    zeros: Vec<f64>,
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
        M2lScratch { a_re: z(), a_im: z(), b_re: z(), b_im: z(), zeros: vec![0.0; nc], acc_re: z(), acc_im: z() }
    }
}

/// `out[r] = Σ_c mat[r·n + c] · inp[c]` on lanes (`n × n` row-major), four rows at a time so
/// that each input load feeds four FMAs.
#[inline(always)]
fn matvec<S: Simd>(v: S, mat: &[f64], n: usize, inp: &[[f64; W]], out: &mut [[f64; W]]) {
    let mut r = 0;
    while r + 4 <= n {
        let z = v.splat(0.0);
        let (mut a0, mut a1, mut a2, mut a3) = (z, z, z, z);
        let (m0, m1, m2, m3) = (&mat[r * n..r * n + n], &mat[(r + 1) * n..(r + 1) * n + n], &mat[(r + 2) * n..(r + 2) * n + n], &mat[(r + 3) * n..(r + 3) * n + n]);
        for c in 0..n {
            let x = v.load(&inp[c]);
            a0 = v.fma(v.splat(m0[c]), x, a0);
            a1 = v.fma(v.splat(m1[c]), x, a1);
            a2 = v.fma(v.splat(m2[c]), x, a2);
            a3 = v.fma(v.splat(m3[c]), x, a3);
        }
        v.store(&mut out[r], a0);
        v.store(&mut out[r + 1], a1);
        v.store(&mut out[r + 2], a2);
        v.store(&mut out[r + 3], a3);
        r += 4;
    }
    while r < n {
        let row = &mat[r * n..r * n + n];
        let mut a = v.splat(0.0);
        for c in 0..n {
            a = v.fma(v.splat(row[c]), v.load(&inp[c]), a);
        }
        v.store(&mut out[r], a);
        r += 1;
    }
}

/// Applies the real/imaginary y-rotation matrices `mats` (layout of [`super::rotation::YRot`])
/// to `(ire, iim)` giving `(ore, oim)`.
#[inline(always)]
pub(crate) fn yrotate<S: Simd>(v: S, p: usize, mats: &[f64], ire: &[[f64; W]], iim: &[[f64; W]], ore: &mut [[f64; W]], oim: &mut [[f64; W]]) {
    for l in 0..=p {
        let off = yrot_offset(l);
        let b = idx(l, 0);
        let n1 = l + 1;
        matvec(v, &mats[off..off + n1 * n1], n1, &ire[b..b + n1], &mut ore[b..b + n1]);
        oim[b] = [0.0; W];
        if l > 0 {
            let off2 = off + n1 * n1;
            matvec(v, &mats[off2..off2 + l * l], l, &iim[b + 1..b + n1], &mut oim[b + 1..b + n1]);
        }
    }
}

/// Gathers the blocks `src` (`NONE` → zeros) of a level array (blocks of `2·nc`) lane-major,
/// degrees `≤ pe` only; `zeros` holds at least `ncoef(pe)` zeros.
#[inline(always)]
pub(crate) fn gather<S: Simd>(v: S, src: &[u32; W], level: &[f64], nc: usize, pe: usize, zeros: &[f64], re: &mut [[f64; W]], im: &mut [[f64; W]]) {
    let nce = ncoef(pe);
    let rows = |part: usize| -> [&[f64]; W] {
        std::array::from_fn(|lane| {
            let b = src[lane];
            if b == NONE {
                &zeros[..nce]
            } else {
                let o = b as usize * 2 * nc + part * nc;
                &level[o..o + nce]
            }
        })
    };
    v.transpose_in(rows(0), nce, re);
    v.transpose_in(rows(1), nce, im);
}

/// Prefetches the source blocks (degrees `≤ pe`) of an entry.
#[inline(always)]
fn prefetch_sources(src: &[u32; W], level: &[f64], nc: usize, pe: usize) {
    let nce = ncoef(pe);
    for &b in src {
        if b != NONE {
            let o = b as usize * 2 * nc;
            super::simd::prefetch(&level[o..o + nce]);
            super::simd::prefetch(&level[o + nc..o + nc + nce]);
        }
    }
}

/// z-rotation on lanes: `x_lm ← e^{∓imφ} x_lm` (`sign = −1` or `+1`), degrees `≤ p`, with
/// `cos(mφ)`, `sin(mφ)` given.
#[inline(always)]
pub(crate) fn zrotate<S: Simd>(v: S, p: usize, cos: &[f64], sin: &[f64], sign: f64, re: &mut [[f64; W]], im: &mut [[f64; W]]) {
    for l in 1..=p {
        for m in 1..=l {
            let i = idx(l, m);
            let (c, sn) = (v.splat(cos[m]), v.splat(sign * sin[m]));
            let (r, x) = (v.load(&re[i]), v.load(&im[i]));
            // (r + i x)(c + i sn)
            v.store(&mut re[i], v.fnma(x, sn, v.mul(r, c)));
            v.store(&mut im[i], v.fma(r, sn, v.mul(x, c)));
        }
    }
}

/// The tile kernel: accumulates into `s.acc_*` (zeroed first) the M2L translations of all
/// `entries` of one tile, reading source expansions from the level array `mpole` (box-major
/// blocks of `2·ncoef(p)`).
#[inline(always)]
pub fn m2l_tile_body<S: Simd>(v: S, tab: &M2lTables, entries: &[M2lEntry], mpole: &[f64], s: &mut M2lScratch) {
    let p = tab.p;
    let nc = ncoef(p);
    for i in 0..nc {
        s.acc_re[i] = [0.0; W];
        s.acc_im[i] = [0.0; W];
    }
    for (ei, e) in entries.iter().enumerate() {
        if let Some(next) = entries.get(ei + 1) {
            prefetch_sources(&next.src, mpole, nc, tab.porder[tab.dirs[next.dir as usize].r2]);
        }
        let d = &tab.dirs[e.dir as usize];
        let yr = &tab.yrot[d.class];
        let t = &tab.ztrans[d.r2];
        // distance-dependent truncation: degrees above pe neither read nor produced
        let p = tab.porder[d.r2];
        // 1. gather the sources lane-major
        gather(v, &e.src, mpole, nc, p, &s.zeros, &mut s.a_re, &mut s.a_im);
        // 2. z-rotation: a ← e^{−imφ} a
        zrotate(v, p, &d.cos, &d.sin, -1.0, &mut s.a_re, &mut s.a_im);
        // 3. y-rotation (forward): b ← A a
        yrotate(v, p, &yr.fwd, &s.a_re, &s.a_im, &mut s.b_re, &mut s.b_im);
        // 4. translation along z: a_jk ← (−1)^{j+k} Σ_l T_{l+j} conj(b_lk) (a Hankel
        //    matrix-vector product per k), real and imaginary parts separately, four j at a time
        for k in 0..=p {
            for (src, dst, sg0) in [(&s.b_re, &mut s.a_re, 1.0), (&s.b_im, &mut s.a_im, -1.0)] {
                if sg0 < 0.0 && k == 0 {
                    for j in 0..=p {
                        dst[idx(j, 0)] = [0.0; W];
                    }
                    continue;
                }
                let mut j = k;
                while j <= p {
                    let nj = (p + 1 - j).min(4);
                    let z = v.splat(0.0);
                    let (mut r0, mut r1, mut r2, mut r3) = (z, z, z, z);
                    for l in k..=p {
                        let b = v.load(&src[idx(l, k)]);
                        let tt = &t[l + j..];
                        r0 = v.fma(v.splat(tt[0]), b, r0);
                        if nj > 1 {
                            r1 = v.fma(v.splat(tt[1]), b, r1);
                        }
                        if nj > 2 {
                            r2 = v.fma(v.splat(tt[2]), b, r2);
                        }
                        if nj > 3 {
                            r3 = v.fma(v.splat(tt[3]), b, r3);
                        }
                    }
                    for (q, rr) in [r0, r1, r2, r3].into_iter().enumerate().take(nj) {
                        let jj = j + q;
                        let sg = sg0 * sgn((jj + k) as i64);
                        v.store(&mut dst[idx(jj, k)], v.mul(v.splat(sg), rr));
                    }
                    j += nj;
                }
            }
        }
        // 5. y-rotation back: b ← A^T-like a
        yrotate(v, p, &yr.back, &s.a_re, &s.a_im, &mut s.b_re, &mut s.b_im);
        // 6. z-rotation back and accumulate: acc += e^{−ikφ} b
        for l in 0..=p {
            let i0 = idx(l, 0);
            let a0 = v.add(v.load(&s.acc_re[i0]), v.load(&s.b_re[i0]));
            v.store(&mut s.acc_re[i0], a0);
            for m in 1..=l {
                let i = idx(l, m);
                let (c, sn) = (v.splat(d.cos[m]), v.splat(d.sin[m]));
                let (r, im) = (v.load(&s.b_re[i]), v.load(&s.b_im[i]));
                let ar = v.fma(r, c, v.fma(im, sn, v.load(&s.acc_re[i])));
                let ai = v.fnma(r, sn, v.fma(im, c, v.load(&s.acc_im[i])));
                v.store(&mut s.acc_re[i], ar);
                v.store(&mut s.acc_im[i], ai);
            }
        }
    }
}

/// [`m2l_tile_body`] with run-time CPU dispatch.
pub fn m2l_tile(tab: &M2lTables, entries: &[M2lEntry], mpole: &[f64], s: &mut M2lScratch) {
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
        return unsafe { m2l_tile_avx2(tab, entries, mpole, s) };
    }
    m2l_tile_body(Scalar, tab, entries, mpole, s)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn m2l_tile_avx2(tab: &M2lTables, entries: &[M2lEntry], mpole: &[f64], s: &mut M2lScratch) {
    m2l_tile_body(super::simd::Avx2::new_unchecked(), tab, entries, mpole, s)
}
