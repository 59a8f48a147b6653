//! The real-space pair kernel: for one atom `i` against a run of atoms `j` (structure of arrays,
//! padded to multiples of 4), accumulates `erfc(ξr)/r` potentials, fields and the virial,
//! updating both atoms (each pair is visited once).
//!
//! Per pair, with `d = r_i − r_j`, `r = |d| < r_c`, `x = ξ r`:
//! `v(r) = erfc(x)/r`, `φ_i += q_j v`, `φ_j += q_i v`, `E_i += q_j f d`, `E_j −= q_i f d`,
//! `W += ½(q^v_i q_j + q_i q^v_j) f d⊗d` with `f = −v'(r)/r = (erfc(x)/r + (2ξ/√π) e^{−x²}) / r²`,
//! where the virial charge `q^v` is `q` for an atom whose virial counts and 0 for a ghost (a
//! copy of another process's atom, [`super::dist`]): a pair of counted atoms adds
//! `q_i q_j f d⊗d` (bit for bit: `½(a + a) = a`), a counted atom and a ghost half of it, two
//! ghosts nothing.
//!
//! Two implementations with the same arithmetic: a portable scalar loop, and an AVX2/FMA loop
//! (4 pairs per step, chosen at run time) with `1/r` from `rsqrtps` refined by two Newton steps
//! (relative error ≈ 1e-13) and the pair functions from the polynomials of
//! [`super::erfc::PairFit`] (no `exp`, no division; the even and odd parts of both polynomials
//! are four independent Horner chains). Blocks of 4 with no pair inside the cutoff are skipped
//! after the distance test. Coincident atoms (`r² ≤ r²_coinc`, see [`Coinc`]) contribute
//! nothing here and are reported to the [`Coinc`] sink, which stops the pass at the first pair
//! that is not excluded (so an all-coincident input costs `O(n)`, not `O(n²)`).

use super::erfc::{poly, PairFit};
use crate::pairs::Exclusions;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;

/// Coincident pairs met by the pair kernels: a pair with `r² ≤ PairConsts::r2_coinc` (the
/// plan's coincidence distance) is skipped; unless it is a fully excluded pair of `excl`
/// (caller's indices), it is recorded and `stop` is raised, which ends every kernel at
/// its next atom.
pub(crate) struct Coinc<'a> {
    pub orig: &'a [u32],
    pub excl: &'a Exclusions,
    /// Distributed plans with exclusions ([`super::dist`]): the global id of each local atom
    /// (home atoms before `n_home`, ghosts after), by which `excl` is keyed; pairs of two
    /// ghosts are not reported (their home ranks report them). `None`: `excl` is keyed by the
    /// local indices.
    pub ids: Option<(&'a [u32], u32)>,
    pub stop: AtomicBool,
    pub found: Mutex<Option<(u32, u32, f64)>>,
}

impl Coinc<'_> {
    /// Whether a kernel should stop.
    #[inline(always)]
    pub fn stopped(&self) -> bool {
        self.stop.load(Ordering::Relaxed)
    }

    /// A pair of slots `si`, `sj` at squared distance `r2 ≤ self.r2`.
    #[cold]
    #[inline(never)]
    pub fn report(&self, si: usize, sj: usize, r2: f64) {
        let (a, b) = (self.orig[si], self.orig[sj]);
        if a == u32::MAX || b == u32::MAX {
            return;
        }
        let (lo, hi) = (a.min(b), a.max(b));
        let allowed = match self.ids {
            None => self.excl.allows_coincident(lo, hi),
            Some((_, n_home)) if a >= n_home && b >= n_home => true,
            Some((ids, _)) => {
                let (x, y) = (ids[a as usize], ids[b as usize]);
                self.excl.allows_coincident(x.min(y), x.max(y))
            }
        };
        if allowed {
            return;
        }
        let mut f = self.found.lock().unwrap_or_else(|e| e.into_inner());
        if f.is_none_or(|(l, h, _)| (lo, hi) < (l, h)) {
            *f = Some((lo, hi, r2));
        }
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// Constants of the pair kernel.
#[derive(Debug, Clone)]
pub(crate) struct PairConsts {
    pub xi: f64,
    pub rc2: f64,
    /// `2ξ/√π`.
    pub c2: f64,
    pub fit: PairFit,
    /// Use `libm::erfc` (the reference path of the direct sum) instead of the fit.
    pub exact: bool,
    /// The fit's coefficients pre-broadcast for the SIMD loop (so each Horner step is one FMA
    /// with a memory operand): entry `k` = `[g_2k, g_2k+1, h_2k, h_2k+1]`, each repeated 4×
    /// (the degree padded to an even number of coefficients with a zero).
    pub tab: Vec<[[f64; 4]; 4]>,
    /// Squared coincidence distance: pairs with `r² ≤ r2_coinc` are skipped (see [`Coinc`]).
    pub r2_coinc: f64,
}

impl PairConsts {
    pub fn new(xi: f64, rc: f64, rel_acc: f64, exact: bool) -> Self {
        let fit = PairFit::new(xi, rc, if exact { 1e-3 } else { rel_acc });
        let n = fit.g.len();
        let at = |c: &Vec<f64>, i: usize| if i < n { c[i] } else { 0.0 };
        let tab = (0..n.div_ceil(2))
            .map(|k| [[at(&fit.g, 2 * k); 4], [at(&fit.g, 2 * k + 1); 4], [at(&fit.h, 2 * k); 4], [at(&fit.h, 2 * k + 1); 4]])
            .collect();
        PairConsts { xi, rc2: rc * rc, c2: 2.0 * xi / std::f64::consts::PI.sqrt(), fit, exact, tab, r2_coinc: 0.0 }
    }

    /// `(v(r), f(r))` of the module docs for `0 < r² ≤ r_c²`.
    #[inline(always)]
    pub fn pair(&self, r2: f64) -> (f64, f64) {
        let rinv = 1.0 / r2.sqrt();
        if self.exact {
            let r = r2 * rinv;
            let x = self.xi * r;
            let pot = libm::erfc(x) * rinv;
            return (pot, (pot + self.c2 * (-x * x).exp()) * rinv * rinv);
        }
        let w = r2 * self.fit.s - 1.0;
        let pot = rinv - poly(&self.fit.g, w);
        (pot, rinv * rinv * rinv - poly(&self.fit.h, w))
    }
}

/// Sorted atoms, structure of arrays (padding slots have `q = qv = 0` and far-away positions).
#[derive(Clone, Copy)]
pub(crate) struct Soa {
    pub x: *const f64,
    pub y: *const f64,
    pub z: *const f64,
    pub q: *const f64,
    /// Virial charges (module docs): `q`, or 0 for a ghost.
    pub qv: *const f64,
}
// SAFETY: the arrays behind `Soa` are only read while a kernel runs.
unsafe impl Send for Soa {}
unsafe impl Sync for Soa {}

/// Per-thread accumulators of the `j` side, same slots as [`Soa`].
#[derive(Clone, Copy)]
pub(crate) struct Acc {
    pub phi: *mut f64,
    pub ex: *mut f64,
    pub ey: *mut f64,
    pub ez: *mut f64,
}

/// Interactions of atom `i` (position `xi`, already moved to the image of the `j` run, charge
/// `qi`, virial charge `qvi`) with the slots `j0..j1` (`j1 − j0` a multiple of 4), counting
/// only slots `j ≥ jmin`; portable version (also the exact-`erfc` path of the reference sum).
/// Adds `[φ_i, E_i]` into `out_i`, the `j` side into `acc`, `W` (xx, xy, xz, yy, yz, zz) into
/// `vir`.
///
/// # Safety
/// `s` and `acc` must be valid for the slots `j0..j1`; no other thread may write `acc` there.
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn block<const FIELD: bool, const VIR: bool>(
    k: &PairConsts, s: Soa, islot: usize, xi: [f64; 3], qi: f64, qvi: f64, jmin: usize, j0: usize, j1: usize, acc: Acc,
    out_i: &mut [f64; 4], vir: &mut [f64; 6], co: &Coinc,
) {
    let mut oi = [0.0f64; 4];
    let mut w = [0.0f64; 6];
    for j in j0.max(jmin)..j1 {
        let dx = xi[0] - *s.x.add(j);
        let dy = xi[1] - *s.y.add(j);
        let dz = xi[2] - *s.z.add(j);
        let r2 = dx * dx + dy * dy + dz * dz;
        if r2 <= k.r2_coinc {
            co.report(islot, j, r2);
            continue;
        }
        if !(r2 < k.rc2) {
            continue;
        }
        let qj = *s.q.add(j);
        let (pot, fs) = k.pair(r2);
        oi[0] += qj * pot;
        *acc.phi.add(j) += qi * pot;
        if FIELD {
            let (fx, fy, fz) = (fs * dx, fs * dy, fs * dz);
            oi[1] += qj * fx;
            oi[2] += qj * fy;
            oi[3] += qj * fz;
            *acc.ex.add(j) -= qi * fx;
            *acc.ey.add(j) -= qi * fy;
            *acc.ez.add(j) -= qi * fz;
        }
        if VIR {
            let c = 0.5 * (qvi * qj + qi * *s.qv.add(j)) * fs;
            w[0] += c * dx * dx;
            w[1] += c * dx * dy;
            w[2] += c * dx * dz;
            w[3] += c * dy * dy;
            w[4] += c * dy * dz;
            w[5] += c * dz * dz;
        }
    }
    for d in 0..4 {
        out_i[d] += oi[d];
    }
    for d in 0..6 {
        vir[d] += w[d];
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
unsafe fn hsum(v: std::arch::x86_64::__m256d) -> f64 {
    use std::arch::x86_64::*;
    let lo = _mm256_castpd256_pd128(v);
    let hi = _mm256_extractf128_pd(v, 1);
    let s = _mm_add_pd(lo, hi);
    _mm_cvtsd_f64(_mm_add_sd(s, _mm_unpackhi_pd(s, s)))
}

/// A neighbour cell of the current cell: slots `j0..j1` (padded), the lattice shift to subtract
/// from the `i` positions, the bounding box of its atoms, and whether it is the cell itself.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Nbr {
    pub j0: usize,
    pub j1: usize,
    pub shift: [f64; 3],
    pub bbox: [f64; 6],
    pub is_self: bool,
}

impl Nbr {
    /// For the atom in slot `i` at `xi`: its position moved by the cell's lattice shift, the
    /// first slot to visit (a multiple of 4 into the padded run) and the first slot that
    /// counts; `None` when `xi` is at least `√rc2` from the cell's bounding box. The cell
    /// itself is never skipped, and in it only the slots after `i` count (each pair once).
    #[inline(always)]
    pub(crate) fn range_for(&self, i: usize, xi: [f64; 3], rc2: f64) -> Option<([f64; 3], usize, usize)> {
        let xs = [xi[0] - self.shift[0], xi[1] - self.shift[1], xi[2] - self.shift[2]];
        if self.is_self {
            return Some((xs, (i + 1) & !3, i + 1));
        }
        let bb = &self.bbox;
        let ex = (bb[0] - xs[0]).max(xs[0] - bb[3]).max(0.0);
        let ey = (bb[1] - xs[1]).max(xs[1] - bb[4]).max(0.0);
        let ez = (bb[2] - xs[2]).max(xs[2] - bb[5]).max(0.0);
        if ex * ex + ey * ey + ez * ez >= rc2 {
            return None;
        }
        Some((xs, self.j0, self.j0))
    }
}

/// All interactions of the atoms in slots `i0..i1` (one cell) with their neighbour cells
/// `nbr` (the half shell, the cell itself first), AVX2/FMA: the constants are loaded once per
/// cell, the `i` sums stay in registers across all neighbour cells, and each atom is tested
/// against each neighbour's bounding box before its blocks are visited. Same arithmetic as
/// [`block`] (up to the `1/r` refinement). The `i` sums are added into `acc` at the slots `i`.
///
/// # Safety
/// As [`block`] for all slots involved, and the CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn cell_avx2<const FIELD: bool, const VIR: bool>(
    k: &PairConsts, s: Soa, i0: usize, i1: usize, nbr: &[Nbr], acc: Acc, vir: &mut [f64; 6], co: &Coinc,
) {
    use std::arch::x86_64::*;
    let r2co = _mm256_set1_pd(k.r2_coinc);
    let zero = _mm256_setzero_pd();
    let one = _mm256_set1_pd(1.0);
    let rc2 = _mm256_set1_pd(k.rc2);
    let r2min = _mm256_set1_pd(k.rc2 * 1e-24);
    let half = _mm256_set1_pd(0.5);
    let three_half = _mm256_set1_pd(1.5);
    let lane = _mm256_set_pd(3.0, 2.0, 1.0, 0.0);
    let sv = _mm256_set1_pd(k.fit.s);
    let tab = &k.tab;
    let (mut wxx, mut wxy, mut wxz, mut wyy, mut wyz, mut wzz) = (zero, zero, zero, zero, zero, zero);
    for i in i0..i1 {
        if co.stopped() {
            return;
        }
        let xi = [*s.x.add(i), *s.y.add(i), *s.z.add(i)];
        let qi = *s.q.add(i);
        let qiv = _mm256_set1_pd(qi);
        let qviv = _mm256_set1_pd(*s.qv.add(i));
        let (mut phi_i, mut ex_i, mut ey_i, mut ez_i) = (zero, zero, zero, zero);
        for nb in nbr {
            let Some((xs, j0, jmin)) = nb.range_for(i, xi, k.rc2) else {
                continue;
            };
            let xv = _mm256_set1_pd(xs[0]);
            let yv = _mm256_set1_pd(xs[1]);
            let zv = _mm256_set1_pd(xs[2]);
            let jminv = _mm256_set1_pd(jmin as f64);
            let mut j = j0;
            while j < nb.j1 {
                let dx = _mm256_sub_pd(xv, _mm256_loadu_pd(s.x.add(j)));
                let dy = _mm256_sub_pd(yv, _mm256_loadu_pd(s.y.add(j)));
                let dz = _mm256_sub_pd(zv, _mm256_loadu_pd(s.z.add(j)));
                let r2 = _mm256_fmadd_pd(dx, dx, _mm256_fmadd_pd(dy, dy, _mm256_mul_pd(dz, dz)));
                let mut m = _mm256_and_pd(_mm256_cmp_pd(r2, rc2, _CMP_LT_OQ), _mm256_cmp_pd(r2, r2co, _CMP_GT_OQ));
                let mut mc = _mm256_cmp_pd(r2, r2co, _CMP_LE_OQ);
                if jmin > j {
                    let jv = _mm256_add_pd(_mm256_set1_pd(j as f64), lane);
                    let mj = _mm256_cmp_pd(jv, jminv, _CMP_GE_OQ);
                    m = _mm256_and_pd(m, mj);
                    mc = _mm256_and_pd(mc, mj);
                }
                let cm = _mm256_movemask_pd(mc);
                if cm != 0 {
                    let mut r2a = [0.0f64; 4];
                    _mm256_storeu_pd(r2a.as_mut_ptr(), r2);
                    for l in 0..4 {
                        if cm & (1 << l) != 0 {
                            co.report(i, j + l, r2a[l]);
                        }
                    }
                }
                if _mm256_movemask_pd(m) == 0 {
                    j += 4;
                    continue;
                }
                let r2c = _mm256_max_pd(_mm256_min_pd(r2, rc2), r2min);
                let y = _mm256_cvtps_pd(_mm_rsqrt_ps(_mm256_cvtpd_ps(r2c)));
                let h = _mm256_mul_pd(half, r2c);
                let y = _mm256_mul_pd(y, _mm256_fnmadd_pd(h, _mm256_mul_pd(y, y), three_half));
                let rinv = _mm256_mul_pd(y, _mm256_fnmadd_pd(h, _mm256_mul_pd(y, y), three_half));
                let w = _mm256_fmsub_pd(r2c, sv, one);
                let w2 = _mm256_mul_pd(w, w);
                let (mut ge, mut go, mut he, mut ho) = (zero, zero, zero, zero);
                for c in tab.iter().rev() {
                    ge = _mm256_fmadd_pd(ge, w2, _mm256_loadu_pd(c[0].as_ptr()));
                    go = _mm256_fmadd_pd(go, w2, _mm256_loadu_pd(c[1].as_ptr()));
                    he = _mm256_fmadd_pd(he, w2, _mm256_loadu_pd(c[2].as_ptr()));
                    ho = _mm256_fmadd_pd(ho, w2, _mm256_loadu_pd(c[3].as_ptr()));
                }
                let pot = _mm256_and_pd(m, _mm256_sub_pd(rinv, _mm256_fmadd_pd(go, w, ge)));
                let fs = _mm256_and_pd(m, _mm256_fmsub_pd(_mm256_mul_pd(rinv, rinv), rinv, _mm256_fmadd_pd(ho, w, he)));
                let qj = _mm256_loadu_pd(s.q.add(j));
                phi_i = _mm256_fmadd_pd(qj, pot, phi_i);
                let ap = acc.phi.add(j);
                _mm256_storeu_pd(ap, _mm256_fmadd_pd(qiv, pot, _mm256_loadu_pd(ap)));
                if FIELD {
                    let fx = _mm256_mul_pd(fs, dx);
                    let fy = _mm256_mul_pd(fs, dy);
                    let fz = _mm256_mul_pd(fs, dz);
                    ex_i = _mm256_fmadd_pd(qj, fx, ex_i);
                    ey_i = _mm256_fmadd_pd(qj, fy, ey_i);
                    ez_i = _mm256_fmadd_pd(qj, fz, ez_i);
                    let (px, py, pz) = (acc.ex.add(j), acc.ey.add(j), acc.ez.add(j));
                    _mm256_storeu_pd(px, _mm256_fnmadd_pd(qiv, fx, _mm256_loadu_pd(px)));
                    _mm256_storeu_pd(py, _mm256_fnmadd_pd(qiv, fy, _mm256_loadu_pd(py)));
                    _mm256_storeu_pd(pz, _mm256_fnmadd_pd(qiv, fz, _mm256_loadu_pd(pz)));
                }
                if VIR {
                    // ½(q^v_i q_j + q_i q^v_j), unfused so that q^v = q gives q_i q_j exactly
                    let qq = _mm256_add_pd(_mm256_mul_pd(qviv, qj), _mm256_mul_pd(qiv, _mm256_loadu_pd(s.qv.add(j))));
                    let w = _mm256_mul_pd(_mm256_mul_pd(half, qq), fs);
                    let wx = _mm256_mul_pd(w, dx);
                    let wy = _mm256_mul_pd(w, dy);
                    wxx = _mm256_fmadd_pd(wx, dx, wxx);
                    wxy = _mm256_fmadd_pd(wx, dy, wxy);
                    wxz = _mm256_fmadd_pd(wx, dz, wxz);
                    wyy = _mm256_fmadd_pd(wy, dy, wyy);
                    wyz = _mm256_fmadd_pd(wy, dz, wyz);
                    wzz = _mm256_fmadd_pd(_mm256_mul_pd(w, dz), dz, wzz);
                }
                j += 4;
            }
        }
        *acc.phi.add(i) += hsum(phi_i);
        if FIELD {
            *acc.ex.add(i) += hsum(ex_i);
            *acc.ey.add(i) += hsum(ey_i);
            *acc.ez.add(i) += hsum(ez_i);
        }
    }
    if VIR {
        for (v, r) in vir.iter_mut().zip([wxx, wxy, wxz, wyy, wyz, wzz]) {
            *v += hsum(r);
        }
    }
}

/// [`cell_avx2`] with 512-bit vectors (8 `j` slots per step; a cell's padded run is a multiple
/// of 4, so the last step of a run may be a half vector, masked). Same arithmetic as
/// [`cell_avx2`], except that `1/r` starts from the 14-bit `rsqrt14` estimate (two Newton
/// steps: ~52 bits, against ~46 from the 12-bit single-precision estimate there).
///
/// # Safety
/// As [`block`] for all slots involved, and the CPU must support AVX-512F
/// ([`crate::simd::has_avx512`]).
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx2,fma")]
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn cell_avx512<const FIELD: bool, const VIR: bool>(
    k: &PairConsts, s: Soa, i0: usize, i1: usize, nbr: &[Nbr], acc: Acc, vir: &mut [f64; 6], co: &Coinc,
) {
    use std::arch::x86_64::*;
    let r2co = _mm512_set1_pd(k.r2_coinc);
    let zero = _mm512_setzero_pd();
    let one = _mm512_set1_pd(1.0);
    let rc2 = _mm512_set1_pd(k.rc2);
    let r2min = _mm512_set1_pd(k.rc2 * 1e-24);
    let half = _mm512_set1_pd(0.5);
    let three_half = _mm512_set1_pd(1.5);
    let sv = _mm512_set1_pd(k.fit.s);
    let tab = &k.tab;
    let (mut wxx, mut wxy, mut wxz, mut wyy, mut wyz, mut wzz) = (zero, zero, zero, zero, zero, zero);
    for i in i0..i1 {
        if co.stopped() {
            return;
        }
        let xi = [*s.x.add(i), *s.y.add(i), *s.z.add(i)];
        let qi = *s.q.add(i);
        let qiv = _mm512_set1_pd(qi);
        let qviv = _mm512_set1_pd(*s.qv.add(i));
        let (mut phi_i, mut ex_i, mut ey_i, mut ez_i) = (zero, zero, zero, zero);
        for nb in nbr {
            let Some((xs, j0, jmin)) = nb.range_for(i, xi, k.rc2) else {
                continue;
            };
            let xv = _mm512_set1_pd(xs[0]);
            let yv = _mm512_set1_pd(xs[1]);
            let zv = _mm512_set1_pd(xs[2]);
            let mut j = j0;
            while j < nb.j1 {
                // lanes in the run (a half vector at its end) and at or after jmin
                let mut live: __mmask8 = if nb.j1 - j >= 8 { 0xff } else { 0x0f };
                if jmin > j {
                    live &= (0xffu32 << (jmin - j).min(8)) as __mmask8;
                }
                let dx = _mm512_sub_pd(xv, _mm512_maskz_loadu_pd(live, s.x.add(j)));
                let dy = _mm512_sub_pd(yv, _mm512_maskz_loadu_pd(live, s.y.add(j)));
                let dz = _mm512_sub_pd(zv, _mm512_maskz_loadu_pd(live, s.z.add(j)));
                let r2 = _mm512_fmadd_pd(dx, dx, _mm512_fmadd_pd(dy, dy, _mm512_mul_pd(dz, dz)));
                let m = _mm512_mask_cmp_pd_mask(live, r2, rc2, _CMP_LT_OQ) & _mm512_cmp_pd_mask(r2, r2co, _CMP_GT_OQ);
                let mc = _mm512_mask_cmp_pd_mask(live, r2, r2co, _CMP_LE_OQ);
                if mc != 0 {
                    let mut r2a = [0.0f64; 8];
                    _mm512_storeu_pd(r2a.as_mut_ptr(), r2);
                    for l in 0..8 {
                        if mc & (1 << l) != 0 {
                            co.report(i, j + l, r2a[l]);
                        }
                    }
                }
                if m == 0 {
                    j += 8;
                    continue;
                }
                let r2c = _mm512_max_pd(_mm512_min_pd(r2, rc2), r2min);
                let y = _mm512_rsqrt14_pd(r2c);
                let h = _mm512_mul_pd(half, r2c);
                let y = _mm512_mul_pd(y, _mm512_fnmadd_pd(h, _mm512_mul_pd(y, y), three_half));
                let rinv = _mm512_mul_pd(y, _mm512_fnmadd_pd(h, _mm512_mul_pd(y, y), three_half));
                let w = _mm512_fmsub_pd(r2c, sv, one);
                let w2 = _mm512_mul_pd(w, w);
                let (mut ge, mut go, mut he, mut ho) = (zero, zero, zero, zero);
                for c in tab.iter().rev() {
                    ge = _mm512_fmadd_pd(ge, w2, _mm512_set1_pd(c[0][0]));
                    go = _mm512_fmadd_pd(go, w2, _mm512_set1_pd(c[1][0]));
                    he = _mm512_fmadd_pd(he, w2, _mm512_set1_pd(c[2][0]));
                    ho = _mm512_fmadd_pd(ho, w2, _mm512_set1_pd(c[3][0]));
                }
                let pot = _mm512_maskz_sub_pd(m, rinv, _mm512_fmadd_pd(go, w, ge));
                let fs = _mm512_maskz_sub_pd(m, _mm512_mul_pd(_mm512_mul_pd(rinv, rinv), rinv), _mm512_fmadd_pd(ho, w, he));
                let qj = _mm512_maskz_loadu_pd(live, s.q.add(j));
                phi_i = _mm512_fmadd_pd(qj, pot, phi_i);
                let ap = acc.phi.add(j);
                _mm512_mask_storeu_pd(ap, live, _mm512_fmadd_pd(qiv, pot, _mm512_maskz_loadu_pd(live, ap)));
                if FIELD {
                    let fx = _mm512_mul_pd(fs, dx);
                    let fy = _mm512_mul_pd(fs, dy);
                    let fz = _mm512_mul_pd(fs, dz);
                    ex_i = _mm512_fmadd_pd(qj, fx, ex_i);
                    ey_i = _mm512_fmadd_pd(qj, fy, ey_i);
                    ez_i = _mm512_fmadd_pd(qj, fz, ez_i);
                    let (px, py, pz) = (acc.ex.add(j), acc.ey.add(j), acc.ez.add(j));
                    _mm512_mask_storeu_pd(px, live, _mm512_fnmadd_pd(qiv, fx, _mm512_maskz_loadu_pd(live, px)));
                    _mm512_mask_storeu_pd(py, live, _mm512_fnmadd_pd(qiv, fy, _mm512_maskz_loadu_pd(live, py)));
                    _mm512_mask_storeu_pd(pz, live, _mm512_fnmadd_pd(qiv, fz, _mm512_maskz_loadu_pd(live, pz)));
                }
                if VIR {
                    // ½(q^v_i q_j + q_i q^v_j), unfused so that q^v = q gives q_i q_j exactly
                    let qq = _mm512_add_pd(_mm512_mul_pd(qviv, qj), _mm512_mul_pd(qiv, _mm512_maskz_loadu_pd(live, s.qv.add(j))));
                    let w = _mm512_mul_pd(_mm512_mul_pd(half, qq), fs);
                    let wx = _mm512_mul_pd(w, dx);
                    let wy = _mm512_mul_pd(w, dy);
                    wxx = _mm512_fmadd_pd(wx, dx, wxx);
                    wxy = _mm512_fmadd_pd(wx, dy, wxy);
                    wxz = _mm512_fmadd_pd(wx, dz, wxz);
                    wyy = _mm512_fmadd_pd(wy, dy, wyy);
                    wyz = _mm512_fmadd_pd(wy, dz, wyz);
                    wzz = _mm512_fmadd_pd(_mm512_mul_pd(w, dz), dz, wzz);
                }
                j += 8;
            }
        }
        *acc.phi.add(i) += _mm512_reduce_add_pd(phi_i);
        if FIELD {
            *acc.ex.add(i) += _mm512_reduce_add_pd(ex_i);
            *acc.ey.add(i) += _mm512_reduce_add_pd(ey_i);
            *acc.ez.add(i) += _mm512_reduce_add_pd(ez_i);
        }
    }
    if VIR {
        for (v, r) in vir.iter_mut().zip([wxx, wxy, wxz, wyy, wyz, wzz]) {
            *v += _mm512_reduce_add_pd(r);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn avx2_cell_matches_scalar() {
        #[cfg(target_arch = "x86_64")]
        if crate::simd::has_avx2_fma() {
            // SAFETY: the CPU has AVX2 and FMA.
            simd_cell_matches_scalar(|k, s, i0, i1, nbr, acc, vir, co| unsafe { cell_avx2::<true, true>(k, s, i0, i1, nbr, acc, vir, co) });
        }
    }

    #[test]
    fn avx512_cell_matches_scalar() {
        #[cfg(target_arch = "x86_64")]
        if crate::simd::has_avx512() {
            // SAFETY: the CPU has AVX-512F.
            simd_cell_matches_scalar(|k, s, i0, i1, nbr, acc, vir, co| unsafe { cell_avx512::<true, true>(k, s, i0, i1, nbr, acc, vir, co) });
        }
    }

    /// Random-ish atoms in two cells (29 and 27 atoms: runs ending in half 512-bit vectors);
    /// a SIMD cell routine against the portable block loop.
    #[allow(clippy::type_complexity)]
    fn simd_cell_matches_scalar(cell: impl Fn(&PairConsts, Soa, usize, usize, &[Nbr], Acc, &mut [f64; 6], &Coinc)) {
        {
            let k = PairConsts::new(3.1, 1.2, 1e-13, false);
            let n = 60; // cell A: slots 0..32 (29 atoms + padding), cell B: 32..60 (27 + 1)
            let (mut x, mut y, mut z, mut q) = (vec![1e30; n], vec![1e30; n], vec![1e30; n], vec![0.0; n]);
            for j in (0..29).chain(32..59) {
                let t = j as f64 * 0.37;
                x[j] = 0.9 * t.sin();
                y[j] = 0.8 * (1.3 * t).cos();
                z[j] = 0.7 * (0.7 * t).sin();
                q[j] = if j % 3 == 0 { -0.8 } else { 0.4 };
            }
            // every fifth atom a ghost (virial charge 0)
            let qv: Vec<f64> = q.iter().enumerate().map(|(j, &v)| if j % 5 == 2 { 0.0 } else { v }).collect();
            let s = Soa { x: x.as_ptr(), y: y.as_ptr(), z: z.as_ptr(), q: q.as_ptr(), qv: qv.as_ptr() };
            let shift = [0.3, -0.2, 0.1];
            let bb = |r: std::ops::Range<usize>| {
                let mut b = [f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
                for j in r {
                    for (d, v) in [x[j], y[j], z[j]].into_iter().enumerate() {
                        b[d] = b[d].min(v);
                        b[3 + d] = b[3 + d].max(v);
                    }
                }
                b
            };
            let nbr = [
                Nbr { j0: 0, j1: 32, shift: [0.0; 3], bbox: bb(0..29), is_self: true },
                Nbr { j0: 32, j1: 60, shift, bbox: bb(32..59), is_self: false },
            ];
            let mut a1 = vec![0.0; 4 * n];
            let mut a2 = vec![0.0; 4 * n];
            let orig: Vec<u32> = (0..n as u32).collect();
            let co = Coinc { orig: &orig, excl: &Exclusions::default(), ids: None, stop: AtomicBool::new(false), found: Mutex::new(None) };
            let (mut v1, mut v2) = ([0.0; 6], [0.0; 6]);
            unsafe {
                let p = a1.as_mut_ptr();
                let acc = Acc { phi: p, ex: p.add(n), ey: p.add(2 * n), ez: p.add(3 * n) };
                cell(&k, s, 0, 29, &nbr, acc, &mut v1, &co);
                let p = a2.as_mut_ptr();
                let acc = Acc { phi: p, ex: p.add(n), ey: p.add(2 * n), ez: p.add(3 * n) };
                for i in 0..29 {
                    let mut oi = [0.0; 4];
                    block::<true, true>(&k, s, i, [x[i], y[i], z[i]], q[i], qv[i], i + 1, (i + 1) & !3, 32, acc, &mut oi, &mut v2, &co);
                    block::<true, true>(&k, s, i, [x[i] - shift[0], y[i] - shift[1], z[i] - shift[2]], q[i], qv[i], 32, 32, 60, acc, &mut oi, &mut v2,
                                        &co);
                    for d in 0..4 {
                        *p.add(d * n + i) += oi[d];
                    }
                }
            }
            for i in 0..4 * n {
                assert!((a1[i] - a2[i]).abs() <= 1e-11 * (1.0 + a2[i].abs()), "{i}: {} {}", a1[i], a2[i]);
            }
            for i in 0..6 {
                assert!((v1[i] - v2[i]).abs() <= 1e-11 * (1.0 + v2[i].abs()));
            }
            assert!(a2[40] != 0.0 && a2[29] == 0.0 && a2[1] != 0.0);
        }
    }
}
