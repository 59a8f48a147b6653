//! Real-space part of the Ewald sum: `φ_i^R = Σ_{j, n}' q_j erfc(ξ|r_ij + n|)/|r_ij + n|` over
//! the pairs (and periodic images `n`) closer than `r_c`, with fields and the virial, by cell
//! lists; plus the correction for excluded pairs.
//!
//! * Cells: the wrapped fractional coordinates are binned on an `n_1 × n_2 × n_3` grid of
//!   cells (at least `r_c` wide, so the stencil is 3×3×3 cells and a cell holds ~20 atoms at
//!   liquid density), each cell's atoms
//!   roughly sorted by z (8 sub-bins), stored as padded structure-of-arrays (slot counts a
//!   multiple of 4; padding slots have zero charge and a far-away position). The cells are
//!   parallelepipeds, so triclinic cells need no special case: a neighbour cell at offset `o`
//!   can hold atoms within `r_c` only if `(|o_d| − 1) h_d / n_d < r_c` on every axis (`h_d` the
//!   heights), and each atom is tested against the Cartesian bounding box of each neighbour
//!   cell's atoms before its pairs are computed.
//! * Newton's third law: only half of the neighbour offsets are visited (each unordered pair of
//!   atom images once); both atoms are updated. Cells are distributed over the plan's threads,
//!   each thread adds into its own accumulator, and the accumulators are summed at the end (the
//!   result does not depend on the scheduling up to rounding).
//! * Requires `r_c ≤ min height / 2`, so an atom pair has at most one image within `r_c` and no
//!   atom meets its own image.
//! * Exclusions: for an excluded pair `(i, j)`, the whole `1/r` interaction of the nearest image
//!   is removed: the real-space term `erfc(ξr)/r` (if `r < r_c`, computed exactly as the loop
//!   computed it, so the two cancel) and the `erf(ξr)/r` that the k-space sum contains; for a
//!   pair with scale `s` ([`crate::pairs`]), `(1 − s)` times both. Each share can be
//!   applied alone (the terms of [`super::Terms`]).

use super::box_::PeriodicBox;
use crate::pairs::Exclusions;
use super::pair_kernel::{block, Acc, Coinc, Nbr, PairConsts, Soa};
use crate::error::{try_resize, try_zeroed_vec, Error, Result};
use crate::threads::{SyncPtr, Threads};
use std::sync::atomic::AtomicBool;
use std::sync::Mutex;

/// Coincidence distance relative to the largest cell length: distinct charges closer than
/// `2⁻⁴⁰ ≈ 9.1e-13` times it count as coincident (below the resolution of positions wrapped
/// into the cell, a few ulps of the cell length, the `1/r` interaction is not resolved).
pub(crate) const COINC_REL: f64 = 1.0 / (1u64 << 40) as f64;

/// The error for two distinct, not excluded charges `i < j` closer than [`COINC_REL`] times
/// the largest cell length (`rel`: their distance in units of that length); shared with the GPU
/// real-space pass.
pub(crate) fn coincident_error(i: usize, j: usize, rel: f64) -> Error {
    Error::InvalidArg(format!(
        "charges {i} and {j} coincide (distance {rel:.3e} times the largest cell length, at most 2^-40): \
         their interaction energy is infinite; exclude the pair or move them apart"
    ))
}

/// Sub-bins along z within a cell (for spatially coherent blocks of 4).
const ZSUB: usize = 8;

struct ThreadBuf {
    /// `[φ | E_x | E_y | E_z]`, each `npad` slots.
    acc: Vec<f64>,
    vir: [f64; 6],
}

/// The cell list of one evaluation: the grid of cells at least r_c wide, its half-shell
/// stencil, and per cell its padded slot range, atom count, bounding box and ghost flag (with
/// the scratch of the counting sort that fills it).
#[derive(Default)]
struct CellList {
    nc: [usize; 3],
    stencil: Vec<[i32; 3]>,
    /// The grid and cell the stencil was built for.
    stencil_for: Option<([usize; 3], [u64; 9])>,
    /// Per cell: its first slot (`ncell + 1` entries; each cell padded to a multiple of 4).
    start: Vec<usize>,
    /// Per cell: its atoms.
    cnt: Vec<u32>,
    /// Per cell: the bounding box of its atoms (min x, y, z, max x, y, z).
    bbox: Vec<[f64; 6]>,
    /// Per cell: it holds ghosts only (pairs of two such cells are skipped).
    ghost_only: Vec<bool>,
    keys: Vec<u32>,
    order: Vec<u32>,
    hist: Vec<u32>,
}

/// The atoms in cell order: `npad` slots (padding slots far away, charge 0), structure of
/// arrays.
#[derive(Default)]
struct CellAtoms {
    x: Vec<f64>,
    y: Vec<f64>,
    z: Vec<f64>,
    q: Vec<f64>,
    /// Virial charges ([`super::pair_kernel`]): `q`, or 0 for a ghost; filled only when the
    /// atoms include ghosts (`q` serves otherwise).
    qv: Vec<f64>,
    has_ghosts: bool,
    /// Per slot: the caller's index of its atom (`u32::MAX` for padding).
    orig: Vec<u32>,
    npad: usize,
}

/// Real-space evaluator: the pair constants and cutoff, and the reusable cell list, sorted
/// atoms and per-thread accumulators.
pub(crate) struct RealSpace {
    pub consts: PairConsts,
    pub rc: f64,
    cells: CellList,
    atoms: CellAtoms,
    bufs: Vec<ThreadBuf>,
    /// Distributed plans with exclusions: the global id of each atom passed to
    /// [`RealSpace::compute`] (home atoms, then ghosts), by which its `excl` is keyed for the
    /// coincidence check ([`super::pair_kernel::Coinc`]); empty otherwise.
    pub global_ids: Vec<u32>,
    n_home: usize,
}

#[inline(always)]
fn pad4(n: usize) -> usize {
    (n + 3) & !3
}

impl RealSpace {
    /// A real-space evaluator for splitting parameter `xi` and cutoff `rc`; `erfc_acc` is the
    /// relative accuracy of the erfc fit, `exact` selects `libm::erfc` (reference path).
    pub fn new(xi: f64, rc: f64, erfc_acc: f64, exact: bool) -> Self {
        RealSpace {
            consts: PairConsts::new(xi, rc, erfc_acc, exact),
            rc,
            cells: CellList::default(),
            atoms: CellAtoms::default(),
            bufs: Vec::new(),
            global_ids: Vec::new(),
            n_home: 0,
        }
    }

    /// Cell grid for `n` atoms in `bx`.
    fn cell_grid(&self, bx: &PeriodicBox, n: usize) -> [usize; 3] {
        // cells at least r_c wide (the 27-cell stencil; measured fastest: fewer bounding-box
        // tests outweigh the larger candidate volume) holding at least ~8 atoms on average
        let dens = (bx.volume * 8.0 / n.max(1) as f64).cbrt();
        let cs = self.rc.max(dens);
        let mut nc = [1usize; 3];
        for d in 0..3 {
            nc[d] = ((bx.heights[d] / cs).floor() as usize).clamp(1, 1 << 10);
        }
        nc
    }

    /// Half-shell neighbour offsets for the cell grid `nc` (the zero offset first).
    fn build_stencil(&mut self, bx: &PeriodicBox, nc: [usize; 3]) {
        let key = (nc, bx.as_array().map(f64::to_bits));
        if self.cells.stencil_for == Some(key) {
            return;
        }
        let mut r = [0i32; 3];
        for d in 0..3 {
            r[d] = (self.rc * nc[d] as f64 / bx.heights[d] - 1e-12).ceil().max(1.0) as i32;
        }
        let mut st = vec![[0i32; 3]];
        for o2 in -r[2]..=r[2] {
            for o1 in -r[1]..=r[1] {
                for o0 in -r[0]..=r[0] {
                    let later = o2 > 0 || (o2 == 0 && (o1 > 0 || (o1 == 0 && o0 > 0)));
                    if !later {
                        continue;
                    }
                    let o = [o0, o1, o2];
                    let lb = (0..3)
                        .map(|d| (o[d].unsigned_abs().saturating_sub(1)) as f64 / nc[d] as f64 * bx.heights[d])
                        .fold(0.0, f64::max);
                    if lb < self.rc {
                        st.push(o);
                    }
                }
            }
        }
        self.cells.stencil = st;
        self.cells.stencil_for = Some(key);
    }

    /// Bins and sorts the atoms (wrapped fractional `s`, wrapped Cartesian `r`; those from
    /// `n_home` on are ghosts) into padded cells. Errors: [`crate::Error::Alloc`].
    fn sort(&mut self, bx: &PeriodicBox, s: &[[f64; 3]], r: &[[f64; 3]], q: &[f64], n_home: usize, threads: &Threads) -> Result<()> {
        let n = s.len();
        let nc = self.cell_grid(bx, n);
        self.build_stencil(bx, nc);
        self.cells.nc = nc;
        let (cl, at) = (&mut self.cells, &mut self.atoms);
        let ncell = nc[0] * nc[1] * nc[2];
        let nkey = ncell * ZSUB;
        try_resize(&mut cl.keys, n, 0, "real-space cell keys")?;
        threads.chunks(&mut cl.keys, 8192, |c, ks| {
            for (t, k) in ks.iter_mut().enumerate() {
                let si = s[c * 8192 + t];
                let mut cc = [0usize; 3];
                for d in 0..3 {
                    cc[d] = ((si[d] * nc[d] as f64) as usize).min(nc[d] - 1);
                }
                let fz = si[2] * nc[2] as f64 - cc[2] as f64;
                let sub = ((fz * ZSUB as f64) as usize).min(ZSUB - 1);
                *k = ((cc[0] + nc[0] * (cc[1] + nc[1] * cc[2])) * ZSUB + sub) as u32;
            }
        });
        cl.hist.clear();
        try_resize(&mut cl.hist, nkey + 1, 0, "real-space cell histogram")?;
        for &k in &cl.keys {
            cl.hist[k as usize + 1] += 1;
        }
        for k in 0..nkey {
            cl.hist[k + 1] += cl.hist[k];
        }
        try_resize(&mut cl.order, n, 0, "real-space cell order")?;
        for i in 0..n {
            let k = cl.keys[i] as usize;
            cl.order[cl.hist[k] as usize] = i as u32;
            cl.hist[k] += 1;
        }
        // hist[k] is now the end of key k; cell c ends at hist[(c+1)·ZSUB − 1]
        cl.cnt.clear();
        try_resize(&mut cl.cnt, ncell, 0, "real-space cell counts")?;
        cl.start.clear();
        try_resize(&mut cl.start, ncell + 1, 0, "real-space cell starts")?;
        let mut prev_end = 0usize;
        for c in 0..ncell {
            let end = cl.hist[(c + 1) * ZSUB - 1] as usize;
            cl.cnt[c] = (end - prev_end) as u32;
            cl.start[c + 1] = cl.start[c] + pad4(end - prev_end);
            prev_end = end;
        }
        let npad = cl.start[ncell];
        at.npad = npad;
        for v in [&mut at.x, &mut at.y, &mut at.z] {
            v.clear();
            try_resize(v, npad, 1e30, "real-space cell arrays")?;
        }
        at.q.clear();
        try_resize(&mut at.q, npad, 0.0, "real-space cell charges")?;
        at.has_ghosts = n_home < n;
        at.qv.clear();
        if at.has_ghosts {
            try_resize(&mut at.qv, npad, 0.0, "real-space cell charges")?;
        }
        cl.ghost_only.clear();
        try_resize(&mut cl.ghost_only, ncell, false, "real-space cell flags")?;
        at.orig.clear();
        try_resize(&mut at.orig, npad, u32::MAX, "real-space cell indices")?;
        cl.bbox.clear();
        let empty = [f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY];
        try_resize(&mut cl.bbox, ncell, empty, "real-space cell bounds")?;
        let mut p = 0usize;
        for c in 0..ncell {
            let st = cl.start[c];
            let bb = &mut cl.bbox[c];
            let mut ghosts = 0usize;
            for k in 0..cl.cnt[c] as usize {
                let i = cl.order[p] as usize;
                p += 1;
                let slot = st + k;
                let ri = r[i];
                at.x[slot] = ri[0];
                at.y[slot] = ri[1];
                at.z[slot] = ri[2];
                at.q[slot] = q[i];
                if i >= n_home {
                    ghosts += 1;
                } else if at.has_ghosts {
                    at.qv[slot] = q[i];
                }
                at.orig[slot] = i as u32;
                for d in 0..3 {
                    bb[d] = bb[d].min(ri[d]);
                    bb[3 + d] = bb[3 + d].max(ri[d]);
                }
            }
            cl.ghost_only[c] = ghosts > 0 && ghosts == cl.cnt[c] as usize;
        }
        Ok(())
    }

    /// Computes the real-space potentials (into `phi`, overwritten, caller's atom order), fields
    /// (`field[3i + d]`, overwritten, when given) and returns the virial (xx, xy, xz, yy, yz, zz;
    /// zeros unless `virial`). `s`, `r`: wrapped fractional and Cartesian positions; `excl`:
    /// the excluded and scaled pairs (only for the coincidence check: the pair sum includes
    /// every pair, [`RealSpace::exclusions`] corrects them). Errors: [`Error::Alloc`];
    /// [`Error::InvalidArg`] naming two distinct charges closer than [`COINC_REL`] times the
    /// largest cell length that are not a fully excluded pair (found in the cell-list pass, which
    /// stops there).
    ///
    /// The atoms from `n_home` on are ghosts (copies of other processes' atoms, [`super::dist`];
    /// `n_home = s.len()` when there are none): only the φ and E of the atoms before `n_home` are
    /// complete (pairs of two cells that hold ghosts only are skipped), and the virial counts a
    /// pair of two atoms fully, of an atom and a ghost half, of two ghosts not at all
    /// ([`super::pair_kernel`]), so that summed over the processes each pair counts once.
    #[allow(clippy::too_many_arguments)]
    pub fn compute(
        &mut self, bx: &PeriodicBox, s: &[[f64; 3]], r: &[[f64; 3]], q: &[f64], n_home: usize, threads: &Threads,
        phi: &mut [f64], field: Option<&mut [f64]>, virial: bool, excl: &Exclusions,
    ) -> Result<[f64; 6]> {
        let lmax = bx.lengths.iter().cloned().fold(0.0, f64::max);
        self.consts.r2_coinc = (COINC_REL * lmax) * (COINC_REL * lmax);
        self.n_home = n_home;
        self.sort(bx, s, r, q, n_home, threads)?;
        let nt = threads.count().max(1);
        let npad = self.atoms.npad;
        if self.bufs.len() != nt {
            self.bufs = (0..nt).map(|_| ThreadBuf { acc: Vec::new(), vir: [0.0; 6] }).collect();
        }
        for b in self.bufs.iter_mut() {
            if b.acc.len() != 4 * npad {
                b.acc = try_zeroed_vec(4 * npad, "real-space accumulators")?;
            } else {
                threads.chunks(&mut b.acc, 8192, |_, c| c.iter_mut().for_each(|v| *v = 0.0));
            }
            b.vir = [0.0; 6];
        }
        let want_field = field.is_some();
        let found = match (want_field, virial) {
            (false, false) => self.run::<false, false>(bx, threads, excl),
            (true, false) => self.run::<true, false>(bx, threads, excl),
            (false, true) => self.run::<false, true>(bx, threads, excl),
            (true, true) => self.run::<true, true>(bx, threads, excl),
        };
        if let Some((i, j, r2)) = found {
            if let (Some(&a), Some(&b)) = (self.global_ids.get(i as usize), self.global_ids.get(j as usize)) {
                // a distributed plan: name the charges by their global ids
                let e = coincident_error(a.min(b) as usize, a.max(b) as usize, r2.sqrt() / lmax);
                return Err(Error::InvalidArg(format!("{} (the charges named by their global ids)", e.message())));
            }
            return Err(coincident_error(i as usize, j as usize, r2.sqrt() / lmax));
        }
        // reduce the thread accumulators into the caller's order
        let pp = SyncPtr(phi.as_mut_ptr());
        let fp = field.map(|f| SyncPtr(f.as_mut_ptr()));
        let chunk = 4096;
        let nchunks = npad.div_ceil(chunk);
        let bufs = &self.bufs;
        let orig = &self.atoms.orig;
        threads.for_each(nchunks, |c| {
            let (pp, fp) = (pp, fp);
            for slot in c * chunk..((c + 1) * chunk).min(npad) {
                let o = orig[slot];
                if o == u32::MAX {
                    continue;
                }
                let o = o as usize;
                let mut v = [0.0; 4];
                for b in bufs {
                    for (d, vd) in v.iter_mut().enumerate() {
                        *vd += b.acc[d * npad + slot];
                    }
                }
                // SAFETY: orig is injective on real slots: each output index written once.
                unsafe {
                    *pp.0.add(o) = v[0];
                    if let Some(fp) = fp {
                        for d in 0..3 {
                            *fp.0.add(3 * o + d) = v[1 + d];
                        }
                    }
                }
            }
        });
        let mut vir = [0.0; 6];
        for b in &self.bufs {
            for d in 0..6 {
                vir[d] += b.vir[d];
            }
        }
        Ok(vir)
    }

    /// Runs the pair kernels over all cells; returns the coincident pair found, if any.
    fn run<const FIELD: bool, const VIR: bool>(&mut self, bx: &PeriodicBox, threads: &Threads, excl: &Exclusions) -> Option<(u32, u32, f64)> {
        let (cl, at) = (&self.cells, &self.atoms);
        let nc = cl.nc;
        let ncell = nc[0] * nc[1] * nc[2];
        let npad = at.npad;
        let parallel = threads.parallel();
        let nbuf = self.bufs.len();
        let bp = super::Shared(self.bufs.as_mut_ptr());
        let soa = Soa { x: at.x.as_ptr(), y: at.y.as_ptr(), z: at.z.as_ptr(), q: at.q.as_ptr(),
                        qv: if at.has_ghosts { at.qv.as_ptr() } else { at.q.as_ptr() } };
        // disjoint field borrows: the closure never touches `bufs` except through `bp`
        let (stencil, cnt, start, bbox, consts, ghost_only) = (&cl.stencil, &cl.cnt, &cl.start, &cl.bbox, &self.consts, &cl.ghost_only);
        let ids = if self.global_ids.is_empty() { None } else { Some((&self.global_ids[..], self.n_home as u32)) };
        let co = Coinc { orig: &at.orig, excl, ids, stop: AtomicBool::new(false), found: Mutex::new(None) };
        let co = &co;
        let chunk = (ncell / (16 * threads.count().max(1))).clamp(1, 64);
        let ntask = ncell.div_ceil(chunk);
        threads.for_each(ntask, |task| {
            let bp = bp;
            let t = if parallel { rayon::current_thread_index().expect("running in the plan's pool") } else { 0 };
            assert!(t < nbuf);
            // SAFETY: each pool thread uses only its own buffer (index t), and tasks on one
            // thread run one after the other.
            let buf = unsafe { &mut *bp.0.add(t) };
            let base = buf.acc.as_mut_ptr();
            // SAFETY: 4·npad entries.
            let acc = unsafe { Acc { phi: base, ex: base.add(npad), ey: base.add(2 * npad), ez: base.add(3 * npad) } };
            let mut nbr: Vec<Nbr> = Vec::with_capacity(stencil.len());
            #[cfg(target_arch = "x86_64")]
            let avx = !consts.exact && crate::simd::has_avx2_fma();
            #[cfg(target_arch = "x86_64")]
            let avx512 = !consts.exact && crate::simd::has_avx512();
            for a in task * chunk..((task + 1) * chunk).min(ncell) {
                let na = cnt[a] as usize;
                if na == 0 || co.stopped() {
                    continue;
                }
                let ac = [a % nc[0], (a / nc[0]) % nc[1], a / (nc[0] * nc[1])];
                nbr.clear();
                for o in stencil.iter() {
                    let mut bcell = [0usize; 3];
                    let mut shift = [0.0f64; 3];
                    for d in 0..3 {
                        let c = ac[d] as i64 + o[d] as i64;
                        let img = c.div_euclid(nc[d] as i64);
                        bcell[d] = c.rem_euclid(nc[d] as i64) as usize;
                        if img != 0 {
                            for e in 0..3 {
                                shift[e] += img as f64 * bx.vecs[d][e];
                            }
                        }
                    }
                    let b = bcell[0] + nc[0] * (bcell[1] + nc[1] * bcell[2]);
                    if cnt[b] == 0 || (ghost_only[a] && ghost_only[b]) {
                        continue;
                    }
                    // cell-level test: the bounding boxes (B moved by the shift) closer than r_c
                    let (ba, bb) = (&bbox[a], &bbox[b]);
                    let mut d2 = 0.0;
                    for d in 0..3 {
                        let e = (bb[d] + shift[d] - ba[3 + d]).max(ba[d] - bb[3 + d] - shift[d]).max(0.0);
                        d2 += e * e;
                    }
                    if d2 < consts.rc2 {
                        nbr.push(Nbr {
                            j0: start[b],
                            j1: start[b] + pad4(cnt[b] as usize),
                            shift,
                            bbox: bbox[b],
                            is_self: *o == [0, 0, 0],
                        });
                    }
                }
                #[cfg(target_arch = "x86_64")]
                if avx512 {
                    // SAFETY: as below; the CPU has AVX-512F.
                    unsafe { super::pair_kernel::cell_avx512::<FIELD, VIR>(consts, soa, start[a], start[a] + na, &nbr, acc, &mut buf.vir, co) };
                    continue;
                }
                #[cfg(target_arch = "x86_64")]
                if avx {
                    // SAFETY: the slots of cell a and of its neighbours are valid; acc is this
                    // thread's; the CPU has AVX2 and FMA.
                    unsafe { super::pair_kernel::cell_avx2::<FIELD, VIR>(consts, soa, start[a], start[a] + na, &nbr, acc, &mut buf.vir, co) };
                    continue;
                }
                let rc2 = consts.rc2;
                for i in start[a]..start[a] + na {
                    if co.stopped() {
                        break;
                    }
                    // SAFETY: i is a real slot.
                    let (xi, qi, qvi) = unsafe { ([*soa.x.add(i), *soa.y.add(i), *soa.z.add(i)], *soa.q.add(i), *soa.qv.add(i)) };
                    let mut oi = [0.0f64; 4];
                    for nb in &nbr {
                        let Some((xs, j0, jmin)) = nb.range_for(i, xi, rc2) else {
                            continue;
                        };
                        if j0 >= nb.j1 {
                            continue;
                        }
                        // SAFETY: slots j0..j1 lie in the neighbour cell (padded); acc is this thread's.
                        unsafe { block::<FIELD, VIR>(consts, soa, i, xs, qi, qvi, jmin, j0, nb.j1, acc, &mut oi, &mut buf.vir, co) };
                    }
                    // SAFETY: slot i < npad, this thread's accumulator.
                    unsafe {
                        *acc.phi.add(i) += oi[0];
                        if FIELD {
                            *acc.ex.add(i) += oi[1];
                            *acc.ey.add(i) += oi[2];
                            *acc.ez.add(i) += oi[3];
                        }
                    }
                }
            }
        });
        let found = co.found.lock().unwrap_or_else(|e| e.into_inner()).take();
        found
    }

    /// Removes `(1 − s)` times the `1/r` interaction of the nearest image of each pair of
    /// `ex` (module docs) from `phi`, `field` (when given) and `vir`: its real-space share
    /// `erfc(ξr)/r` (for `r < r_c`) if `shares.0`, its k-space share `erf(ξr)/r` if `shares.1`.
    /// `s`: wrapped fractional positions. A pair closer than the coincidence distance (see
    /// [`COINC_REL`]; the real-space pass skipped it) has no real-space share, and the `r → 0`
    /// limit `2ξ/√π` as its k-space share.
    #[allow(clippy::too_many_arguments)]
    pub fn exclusions(
        &self, bx: &PeriodicBox, s: &[[f64; 3]], q: &[f64], ex: &Exclusions, shares: (bool, bool), phi: &mut [f64],
        mut field: Option<&mut [f64]>, vir: Option<&mut [f64; 6]>,
    ) {
        let k = &self.consts;
        let xi = k.xi;
        let sqpi = std::f64::consts::PI.sqrt();
        let tri = !bx.is_orthorhombic();
        let mut w = [0.0f64; 6];
        for (m, &key) in ex.keys.iter().enumerate() {
            let (i, j) = ((key >> 32) as usize, (key & 0xffff_ffff) as usize);
            let w1 = 1.0 - ex.scale_of(m);
            let mut ds = [0.0; 3];
            for d in 0..3 {
                let v = s[i][d] - s[j][d];
                ds[d] = v - v.round();
            }
            let mut dv = bx.cart(ds);
            let mut r2 = dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2];
            if tri {
                for n in 0..27 {
                    let o = [(n % 3) as f64 - 1.0, ((n / 3) % 3) as f64 - 1.0, (n / 9) as f64 - 1.0];
                    let c = bx.cart([ds[0] + o[0], ds[1] + o[1], ds[2] + o[2]]);
                    let c2 = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
                    if c2 < r2 {
                        r2 = c2;
                        dv = c;
                    }
                }
            }
            let (mut pot, mut fs) = if shares.0 && r2 < k.rc2 && r2 > k.r2_coinc { k.pair(r2) } else { (0.0, 0.0) };
            let r = r2.sqrt();
            let x = xi * r;
            if shares.1 {
                if x < 1e-4 {
                    pot += k.c2 * (1.0 - x * x / 3.0);
                    fs += 4.0 * xi * xi * xi / (3.0 * sqpi) * (1.0 - 0.6 * x * x);
                } else {
                    let p2 = libm::erf(x) / r;
                    pot += p2;
                    fs += (p2 - k.c2 * (-x * x).exp()) / r2;
                }
            }
            pot *= w1;
            fs *= w1;
            phi[i] -= q[j] * pot;
            phi[j] -= q[i] * pot;
            if let Some(f) = field.as_deref_mut() {
                for d in 0..3 {
                    f[3 * i + d] -= q[j] * fs * dv[d];
                    f[3 * j + d] += q[i] * fs * dv[d];
                }
            }
            let c = q[i] * q[j] * fs;
            w[0] += c * dv[0] * dv[0];
            w[1] += c * dv[0] * dv[1];
            w[2] += c * dv[0] * dv[2];
            w[3] += c * dv[1] * dv[1];
            w[4] += c * dv[1] * dv[2];
            w[5] += c * dv[2] * dv[2];
        }
        if let Some(v) = vir {
            for d in 0..6 {
                v[d] -= w[d];
            }
        }
    }
}

/// Test hook (re-exported, doc-hidden, as `crate::ewald::real_space_only`): the CPU real-space
/// part alone, as [`super::CpuEwald::execute`] computes it — the pair sum of
/// `erfc(ξr)/r` within `r_c` by cell lists and the exclusion corrections of this module — on
/// one thread, for the GPU emulator tests (`gpu-emu/tests/ewald_real.rs`) to compare the device
/// pass ([`crate::gpu::ewald::real_space::GpuRealSpace`]) with.
///
/// Input in the units the plan's real-space pass works in: the cell `bx`, positions `xyz`
/// (`xyz[3i + d]`, `n = q.len()` charges; wrapped into the cell here exactly as `execute` wraps
/// them), charges `q`, splitting parameter `xi`, cutoff `rc` (at most half the smallest
/// height), erfc fit accuracy `erfc_acc` (`exact`: `libm::erfc` instead of the fit) and the
/// excluded pairs `excl` (validated as [`super::CpuEwald::set_exclusions`] with `n_max = n`).
/// Returns `(φ^R [n], E^R [3n] (empty unless want_field), U^R = ½ Σ q_i φ^R_i, W^R)` with the
/// virial at `[3α + β]` (zeros unless `virial`). Errors: [`Error::InvalidArg`] (lengths, the
/// cutoff, the exclusions, coincident charges), [`Error::NonFinite`], [`Error::Alloc`].
#[doc(hidden)]
#[allow(clippy::too_many_arguments, clippy::type_complexity)]
pub fn real_space_only(
    bx: &PeriodicBox, xyz: &[f64], q: &[f64], xi: f64, rc: f64, erfc_acc: f64, exact: bool, excl: &[[i64; 2]], want_field: bool,
    virial: bool,
) -> Result<(Vec<f64>, Vec<f64>, f64, [f64; 9])> {
    let n = q.len();
    if xyz.len() != 3 * n {
        return Err(Error::InvalidArg(format!("xyz has {} values for {n} charges (need 3n)", xyz.len())));
    }
    if !(rc > 0.0 && rc <= 0.5 * bx.min_height() * (1.0 + 1e-12)) {
        return Err(Error::InvalidArg(format!("cutoff rc = {rc:e} not in (0, half the smallest height {:e}]", 0.5 * bx.min_height())));
    }
    if let Some(i) = xyz.iter().chain(q).position(|v| !v.is_finite()) {
        return Err(Error::NonFinite(format!("input value {i} is not finite")));
    }
    let keys = Exclusions::new(excl, None, n.max(1))?;
    let mut s = try_zeroed_vec::<[f64; 3]>(n, "fractional positions")?;
    let mut r = try_zeroed_vec::<[f64; 3]>(n, "wrapped positions")?;
    for i in 0..n {
        let f = bx.frac([xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]]);
        s[i] = [super::box_::wrap01(f[0]), super::box_::wrap01(f[1]), super::box_::wrap01(f[2])];
        r[i] = bx.cart(s[i]);
    }
    let threads = Threads::new(1)?;
    let mut rs = RealSpace::new(xi, rc, erfc_acc, exact);
    let mut phi = try_zeroed_vec::<f64>(n, "real-space potentials")?;
    let mut field = try_zeroed_vec::<f64>(if want_field { 3 * n } else { 0 }, "real-space fields")?;
    let mut w6 = rs.compute(bx, &s, &r, q, s.len(), &threads, &mut phi, want_field.then_some(&mut field[..]), virial, &keys)?;
    if !keys.is_empty() {
        rs.exclusions(bx, &s, q, &keys, (true, true), &mut phi, want_field.then_some(&mut field[..]), Some(&mut w6));
    }
    let energy = 0.5 * q.iter().zip(&phi).map(|(a, b)| a * b).sum::<f64>();
    let mut w = [0.0; 9];
    if virial {
        for (c, &(a, b)) in [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)].iter().enumerate() {
            w[3 * a + b] = w6[c];
            w[3 * b + a] = w6[c];
        }
    }
    Ok((phi, field, energy, w))
}
