//! The real-space part of the Ewald sum on the device (kernels in `kernels/ewald_real.cu`),
//! written once against [`Device`] so that it runs on CUDA and on the CPU emulator alike. It
//! computes exactly what the CPU pass [`crate::ewald`] computes in its real-space step
//! (`src/ewald/real_space.rs`): with the Ewald split of Essmann et al., J. Chem. Phys. 103
//! (1995) 8577, eq. 2.1–2.3,
//! `φ_i^R = Σ_{j, n}' q_j erfc(ξ|r_ij + n|)/|r_ij + n|` over the pairs (and periodic images
//! `n`) closer than `r_c`, the field `E_i^R = −∇_i φ^R`, the energy `U^R = ½ Σ q_i φ_i^R` and the
//! virial `W^R = Σ_pairs q_i q_j f(r) d ⊗ d` (`d = r_i − r_j`, `f = −v'(r)/r`), minus the full
//! `1/r` interaction (nearest image) of every excluded pair. `erfc(ξr)/r` and `f` come from the
//! CPU's polynomial fit ([`crate::ewald`]'s `erfc` module: `1/r − ξG(r²)`, `1/r³ − ξ³H(r²)`,
//! Chebyshev fits in `r²`, coefficients uploaded once) or, when `exact`, from `erfc` and `exp`.
//!
//! ## Per call, all on the device
//! 1. **Wrap and bin** (`ff_ewr_wrap`, one thread per atom): fractional coordinates wrapped into
//!    `[0, 1)` as `CpuEwald::execute` wraps them, the cell key of each atom on an
//!    `n_1 × n_2 × n_3` grid of parallelepiped cells (cells at least `r_c/2` high and holding
//!    about 8 atoms on average or more, at most 1024 per axis), and the finiteness checks
//!    (first bad index by `atomicMin`).
//! 2. **Sort** by cell with a counting sort: the wrap kernel counts the atoms of each cell
//!    (`atomicAdd`), an exclusive scan ([`crate::gpu::fmm::tree::scan`]) gives the cell
//!    starts, `ff_ewr_bucket` puts each atom in a slot of its cell, and `ff_ewr_cell_order`
//!    sorts each cell's atoms by index, so the order within a cell is the caller's order (that
//!    of a stable sort by cell) and every sum is deterministic — no host synchronisation and
//!    no allocation on the way; then the sorted positions and charges (`ff_ewr_gather`,
//!    `[x, y, z, q]` per slot) and each cell's bounding box (`ff_ewr_cell_bounds`).
//! 3. **Pairs** (`ff_ewr_pairs_*`, one kernel per pair precision and with or without the
//!    virial): `k` threads per atom (adjacent lanes of a warp, `k` = 1, 2,
//!    4 or 8: the smallest giving at least 2¹⁷ threads, so that ~25 000 atoms still fill an
//!    H100), thread `p` of an atom taking the neighbour offsets `p, p + k, …` of the full-shell
//!    stencil (the CPU's stencil rule: offset `o` is kept when `(|o_d| − 1) h_d/n_d < r_c` on
//!    every axis; each offset is one cell image, so small cell grids need no minimum-image
//!    convention and triclinic cells no special case) and the same share of the atom's
//!    exclusion list. A neighbour cell whose atoms' bounding box lies at least `r_c` from the
//!    atom is skipped. Each pair is met from both sides, so every thread writes only its own
//!    atom (no atomics; the `k` partial sums are added by warp shuffles) and the energy and
//!    virial partials (per block) count each pair twice and are halved. Reading the neighbour
//!    atoms straight from the cached sorted array keeps the kernel free of block barriers in its
//!    loops. The lanes of a warp work in step (warp votes), because lanes that loop on their own
//!    are scheduled group by group (on an H200 the pair functions ran with 8 of 32 lanes busy, a
//!    candidate loop of its own with 4): in chunks of up to 16 entries per thread, each thread
//!    first culls its entries into a list in shared memory (empty cells, bounding boxes at least
//!    `r_c` away), then the warp steps through the lists — per vote, every lane without a pair in
//!    hand tests one candidate — and evaluates the pair functions once 16 lanes hold a pair (about
//!    a third of the candidates of a `r_c/2` cell stencil pass, so a plain loop would run the
//!    polynomials with most lanes idle). The order of the pairs per thread is that of a plain loop,
//!    so sums stay deterministic.
//! 4. **Totals** (`ff_ewr_finish`, one block): energy, virial and the status words (the
//!    coincidence flag and the three first-bad indices), downloaded together (88 bytes).
//! 5. **Results** (`ff_ewr_scatter`): only after the status is clean, the potentials and fields
//!    are *added* into the caller's arrays in the caller's order — a failed call leaves them
//!    untouched.
//!
//! Exclusions are stored on the device as CSR per atom (row `i`: the partners of atom `i`,
//! sorted), so that the pair kernel corrects each atom from its own row and looks up a
//! coincident pair by binary search. Coincident charges (closer than 2⁻⁴⁰ of the largest cell
//! length) that are not excluded lower a flag to the smallest such pair `(i, j)`; threads stop
//! at their next chunk of neighbour cells once it is set, and the call fails with the CPU's
//! [`Error::InvalidArg`] naming both.

use crate::error::{Error, Result};
use crate::ewald::box_::PeriodicBox;
use crate::ewald::pair_kernel::PairConsts;
use crate::ewald::real_space::{coincident_error, COINC_REL};
use crate::ewald::{check_exclusions, EwaldParts, Exclusions};
use crate::gpu::pairs::DevicePairs;
use crate::gpu::device::{download_vec, upload_new, Arg, Device};
use crate::gpu::phases::Phases;
use crate::gpu::fmm::tree::scan;
use crate::gpu::types::{as_bytes, as_bytes_mut};

/// Threads per block of the pair and total kernels (`FF_EWR_BLOCK`).
const PAIR_BLOCK: u32 = 128;
/// Threads per block of the per-atom and per-cell kernels.
const BLOCK: u32 = 128;
/// Cells are at least `r_c / CELL_DIV` high.
const CELL_DIV: f64 = 2.0;
/// ... and hold at least this many atoms on average.
const ATOMS_PER_CELL: f64 = 8.0;
/// Most cells per axis.
const MAX_CELLS_AXIS: usize = 1024;
/// The automatic threads per atom give at least this many threads.
const TARGET_THREADS: usize = 1 << 17;
/// Most coefficients per fit polynomial the kernel holds (`FF_EWR_MAXC`).
const MAX_COEF: usize = 40;
/// Doubles of the parameter block (`FF_EWR_P_*` of the kernels).
const N_PAR: usize = 18;
/// Byte offsets of the coincidence flag (`u64`) and of the three first-bad indices (`u32`)
/// behind the parameter block in the same buffer.
const FLAG_OFF: usize = 8 * N_PAR;
const BAD_OFF: usize = FLAG_OFF + 8;
/// The bits of the pair kernels' `shares` argument (`FF_EWR_SHARE_*`): the exclusion
/// corrections' real-space and k-space shares.
const SHARE_REAL: i32 = 1;
const SHARE_K: i32 = 2;
/// Largest number of atoms (so that `8n` threads and `4n` values index with 32-bit ints).
const MAX_ATOMS: usize = 1 << 28;

/// Per-atom device buffers (capacity `cap` atoms).
struct AtomBufs<B> {
    cap: usize,
    /// `u64` cell keys (caller's order, then sorted) and `u32` atom indices of the sorted
    /// slots; the second key buffer.
    keys: B,
    perm: B,
    k2: B,
    /// Wrapped fractional coordinates, caller's order, `f64[3n]`.
    sfrac: B,
    /// Sorted `[x, y, z, q]`, `f64[4n]`.
    pos: B,
    /// Sorted results `φ | E_x | E_y | E_z`, `f64[4n]`.
    out: B,
}

/// Per-cell device buffers (capacity `cap` cells).
struct CellBufs<B> {
    cap: usize,
    /// `u32[ncell + 1]` first sorted slot of each cell (the counts before the scan).
    start: B,
    /// `u32[ncell]` arrivals per cell in `ff_ewr_bucket`.
    fill: B,
    /// `f64[6 ncell]` bounding boxes.
    bbox: B,
}

/// The full-shell neighbour stencil for one cell grid and cell.
struct Stencil<B> {
    key: ([usize; 3], [u64; 9]),
    buf: B,
    n: usize,
}

/// The real-space Ewald pass on device `D` (module docs): splitting parameter `ξ` (`xi`,
/// 1/length), cutoff `r_c` (`rc`), the pair functions' fit and the excluded pairs; device
/// buffers are kept between calls and grown when needed.
pub struct GpuRealSpace<D: Device> {
    dev: D,
    consts: PairConsts,
    rc: f64,
    /// Fit coefficients `g | h` (`ncoef` each).
    coef: D::Buf,
    ncoef: usize,
    /// Excluded and scaled pairs, on the host and as CSR on the device.
    pairs: DevicePairs<D>,
    /// Threads per atom (`None`: automatic).
    kpa: Option<u32>,
    atoms: Option<AtomBufs<D::Buf>>,
    cells: Option<CellBufs<D::Buf>>,
    stencil: Option<Stencil<D::Buf>>,
    /// Parameter block, coincidence flag and first-bad indices (uploaded per call).
    par: D::Buf,
    /// The totals of `ff_ewr_finish`, `u64[11]`.
    status: D::Buf,
    /// Per-block energy and virial partials of the pair kernel (capacity in blocks, buffer).
    part: Option<(usize, D::Buf)>,
    /// Print per-phase device timings of each call ([`crate::gpu::phases::Phases`]).
    debug: bool,
    /// Pair functions and per-thread sums in `f32` ([`GpuRealSpace::set_mixed`]).
    mixed: bool,
}

/// The work of one [`GpuRealSpace::launch`] that [`GpuRealSpace::complete`] waits for.
#[must_use = "complete() must wait for the launched kernels"]
pub struct RealPending<D: Device> {
    n: usize,
    virial: bool,
    /// Whether the fields were computed (a `field` buffer given to `launch`).
    field: bool,
    /// The phase marks so far (`None`: nothing was launched, `n` = 0).
    ph: Option<Phases<D>>,
}

/// The cell grid for `n` atoms in `bx` with cutoff `rc` (module docs).
fn cell_grid(bx: &PeriodicBox, n: usize, rc: f64) -> [usize; 3] {
    let dens = (bx.volume * ATOMS_PER_CELL / n.max(1) as f64).cbrt();
    let cs = (rc / CELL_DIV).max(dens);
    let mut nc = [1usize; 3];
    for d in 0..3 {
        let v = (bx.heights[d] / cs).floor();
        nc[d] = if v >= MAX_CELLS_AXIS as f64 { MAX_CELLS_AXIS } else { (v as usize).max(1) };
    }
    nc
}

/// The full-shell stencil of the cell grid `nc` (the rule of the CPU's half shell, both
/// halves and the zero offset): offsets `o` with `(|o_d| − 1) h_d / n_d < r_c` on every axis,
/// flattened `[o_0, o_1, o_2]` per entry.
fn stencil_offsets(bx: &PeriodicBox, nc: [usize; 3], rc: f64) -> Vec<i32> {
    let mut r = [0i32; 3];
    for d in 0..3 {
        r[d] = (rc * nc[d] as f64 / bx.heights[d] - 1e-12).ceil().max(1.0) as i32;
    }
    let mut st = Vec::new();
    for o2 in -r[2]..=r[2] {
        for o1 in -r[1]..=r[1] {
            for o0 in -r[0]..=r[0] {
                let o = [o0, o1, o2];
                let lb = (0..3)
                    .map(|d| (o[d].unsigned_abs().saturating_sub(1)) as f64 / nc[d] as f64 * bx.heights[d])
                    .fold(0.0, f64::max);
                if lb < rc {
                    st.extend_from_slice(&o);
                }
            }
        }
    }
    st
}

fn nblocks(threads: usize, block: u32) -> u32 {
    threads.div_ceil(block as usize).max(1) as u32
}

impl<D: Device> GpuRealSpace<D> {
    /// A real-space pass on `dev` with splitting parameter `xi` (1/length) and cutoff `rc`
    /// (length), in the units the caller's positions will have; `erfc_acc` is the relative
    /// accuracy of the polynomial fit of `erfc(ξr)/r` and its derivative (as the CPU pass:
    /// clamped to `[1e-15, 1e-3]`), `exact` selects `erfc`/`exp` on the device instead (the
    /// reference path of the direct Ewald sum). Same meaning as the CPU's real-space
    /// constructor. Errors: [`Error::InvalidArg`] (`xi`, `rc` not finite and positive,
    /// `erfc_acc` not finite and positive), device errors ([`Error::Alloc`]).
    pub fn new(dev: D, xi: f64, rc: f64, erfc_acc: f64, exact: bool) -> Result<Self> {
        for (name, v) in [("xi", xi), ("rc", rc), ("erfc_acc", erfc_acc)] {
            if !(v.is_finite() && v > 0.0) {
                return Err(Error::InvalidArg(format!("GPU Ewald real space: {name} = {v:e} must be finite and positive")));
            }
        }
        let consts = PairConsts::new(xi, rc, erfc_acc, exact);
        let ncoef = consts.fit.g.len();
        if ncoef > MAX_COEF || consts.fit.h.len() != ncoef {
            return Err(Error::Internal(format!("erfc fit with {ncoef} coefficients (the kernel holds {MAX_COEF})")));
        }
        let mut c = consts.fit.g.clone();
        c.extend_from_slice(&consts.fit.h);
        let coef = upload_new(&dev, &c)?;
        let pairs = DevicePairs::new(&dev)?;
        let par = dev.alloc(BAD_OFF + 16)?;
        let status = dev.alloc(11 * 8)?;
        Ok(GpuRealSpace {
            dev,
            consts,
            rc,
            coef,
            ncoef,
            pairs,
            kpa: None,
            atoms: None,
            cells: None,
            stencil: None,
            par,
            status,
            part: None,
            debug: false,
            mixed: false,
        })
    }

    /// Prints the device time of each phase of every call to stderr when `on`.
    pub fn set_debug(&mut self, on: bool) {
        self.debug = on;
    }

    /// Mixed precision when `on`: the pair functions (the fit, `1/r`) and each device thread's
    /// sums over its pairs in `f32`, with positions, distances, cutoff tests, exclusion
    /// corrections and every sum across threads (potentials, fields, energy, virial) in `f64`
    /// (kernel `ff_ewr_pairs_f32`). Each pair term then carries a relative rounding error of
    /// about 2⁻²³ (`1/r` and the fit subtract in `f32`, so near `r_c` it is relative to
    /// `1/r`, not to `erfc(ξr)/r`). Off (the default): everything in `f64`, the CPU pass's
    /// arithmetic. [`super::GpuEwaldPlan`] turns it on for its `f32`-grid (mixed) plans.
    pub fn set_mixed(&mut self, on: bool) {
        self.mixed = on;
    }

    /// The device handle (and so the stream) the pass issues its work on.
    pub fn device(&self) -> &D {
        &self.dev
    }

    /// Sets the excluded and scaled pairs (replacing earlier ones), as
    /// [`crate::ewald::CpuEwald::set_exclusions`] (`scales = None`) and
    /// [`crate::ewald::CpuEwald::set_exclusions_scaled`]: a pair is unordered, `(i, j)` and
    /// `(j, i)` are the same pair, one given several times with the same scale counts once, and
    /// scale-1 pairs are no exclusions. For a pair with scale `s` (0 when `scales` is `None`)
    /// `(1 − s)` times the `1/r` interaction of the nearest image is removed from potentials,
    /// fields, energy and virial, as [`EwaldParts`] selects its shares at [`Self::launch`]:
    /// its real-space `erfc(ξr)/r` term (within `r_c`) and its k-space share `erf(ξr)/r` (the
    /// `r → 0` limit `2ξ/√π` for a coincident pair, which only a fully excluded pair may be).
    /// Stored on the device as CSR per atom. Indices are checked here against `0 … 2³² − 2` and
    /// against `n` at [`GpuRealSpace::compute`]. Errors: [`Error::InvalidArg`] (a negative or
    /// too large index, a pair `(i, i)`, a pair listed with two scales, a `scales` array of
    /// another length, naming the pair), [`Error::NonFinite`] (a scale), [`Error::Alloc`]; on
    /// error the earlier list is kept.
    pub fn set_exclusions(&mut self, pairs: &[[i64; 2]], scales: Option<&[f64]>) -> Result<()> {
        self.set_exclusion_list(Exclusions::new(pairs, scales, u32::MAX as usize)?)
    }

    /// [`Self::set_exclusions`] with a checked list. Errors: [`Error::Alloc`] and device errors;
    /// on error the earlier list is kept.
    pub(crate) fn set_exclusion_list(&mut self, ex: Exclusions) -> Result<()> {
        self.pairs.set(&self.dev, ex)
    }

    /// Whether the pass has work for the parts `parts`: the real-space sum, or the exclusion
    /// corrections' k-space shares of a plan without it.
    pub fn runs_for(&self, parts: EwaldParts) -> bool {
        let (real_share, k_share) = parts.exclusion_shares();
        parts.real || (!self.pairs.is_empty() && (real_share || k_share))
    }

    /// Moves the exclusions of `other` (host keys and device CSR) into this pass, leaving
    /// `other`'s in their place: a plan rebuilt for new `ξ`, `r_c` keeps its exclusions
    /// without converting or uploading them again.
    pub(crate) fn take_exclusions(&mut self, other: &mut Self) {
        std::mem::swap(&mut self.pairs, &mut other.pairs);
    }

    /// Test and tuning hook: threads per atom of the pair kernel (1, 2, 4, 8, 16 or 32;
    /// `None`: automatic, module docs). Error: [`Error::InvalidArg`] for another value.
    #[doc(hidden)]
    pub fn set_threads_per_atom(&mut self, k: Option<u32>) -> Result<()> {
        if let Some(k) = k {
            if !matches!(k, 1 | 2 | 4 | 8 | 16 | 32) {
                return Err(Error::InvalidArg(format!("threads per atom {k} is not 1, 2, 4, 8, 16 or 32")));
            }
        }
        self.kpa = k;
        Ok(())
    }

    /// Threads per atom for `n` atoms: the setting, or automatic (module docs); lowered until
    /// `n·k` threads stay below 2³¹ (32-bit thread indices).
    fn threads_per_atom(&self, n: usize) -> u32 {
        let mut k = self.kpa.unwrap_or_else(|| {
            let mut k = 1u32;
            while k < 8 && n * (k as usize) < TARGET_THREADS {
                k *= 2;
            }
            k
        });
        while k > 1 && n * k as usize > i32::MAX as usize {
            k /= 2;
        }
        k
    }

    /// Per-atom buffers for at least `n` atoms.
    fn ensure_atoms(&mut self, n: usize) -> Result<()> {
        if self.atoms.as_ref().is_some_and(|a| a.cap >= n) {
            return Ok(());
        }
        self.atoms = None;
        let d = &self.dev;
        self.atoms = Some(AtomBufs {
            cap: n,
            keys: d.alloc(8 * n)?,
            perm: d.alloc(4 * n)?,
            k2: d.alloc(8 * n)?,
            sfrac: d.alloc(24 * n)?,
            pos: d.alloc(32 * n)?,
            out: d.alloc(32 * n)?,
        });
        Ok(())
    }

    /// Per-cell buffers for at least `ncell` cells.
    fn ensure_cells(&mut self, ncell: usize) -> Result<()> {
        if self.cells.as_ref().is_some_and(|c| c.cap >= ncell) {
            return Ok(());
        }
        self.cells = None;
        self.cells = Some(CellBufs {
            cap: ncell,
            start: self.dev.alloc(4 * (ncell + 1))?,
            fill: self.dev.alloc(4 * ncell)?,
            bbox: self.dev.alloc(48 * ncell)?,
        });
        Ok(())
    }

    /// The stencil of the cell grid `nc` in `bx` (re-uploaded only when either changed).
    fn ensure_stencil(&mut self, bx: &PeriodicBox, nc: [usize; 3]) -> Result<()> {
        let key = (nc, bx.as_array().map(f64::to_bits));
        if self.stencil.as_ref().is_some_and(|s| s.key == key) {
            return Ok(());
        }
        let st = stencil_offsets(bx, nc, self.rc);
        let buf = upload_new(&self.dev, &st)?;
        self.stencil = Some(Stencil { key, buf, n: st.len() / 3 });
        Ok(())
    }

    /// Adds the real-space potentials and fields of `n` charges to device arrays and returns
    /// the real-space energy `U^R = ½ Σ q_i φ_i^R` and virial `W^R` (`[3α + β]`, symmetric;
    /// zeros unless `virial`), both summed on the device (module docs; the CPU's real-space
    /// step with its exclusion corrections, [`crate::ewald`]).
    ///
    /// * `bx`: the cell (lower-triangular lattice vectors, [`PeriodicBox`]), in the units of
    ///   the positions; `rc` must not exceed half its smallest height.
    /// * `xyz`: `f64[3n]` positions interleaved (`xyz[3i + d]`), any finite values (wrapped
    ///   into the cell here); `q`: `f64[n]` charges. The units are those the CPU real-space
    ///   pass of an Ewald plan receives (its internal, power-of-two scaled units); nothing is
    ///   rescaled here.
    /// * `phi`: `f64[n]`, `φ_i^R` is **added** (caller's order); `field`: `f64[3n]`, `E_i^R`
    ///   is **added** at `field[3i + d]`. Both optional; buffers are only read or added to
    ///   after every check has passed, so a failed call leaves them unchanged.
    ///
    /// Work is issued on the device's stream; the call waits for it (it downloads the totals).
    /// Errors: [`Error::InvalidArg`] (`rc` above half the smallest height; a buffer shorter
    /// than `n` values; an excluded pair with an index ≥ n; two distinct charges closer than
    /// 2⁻⁴⁰ of the largest cell length that are not an excluded pair, naming both, smaller
    /// first), [`Error::NonFinite`] (the first non-finite position, else charge, as the CPU
    /// plan names it), [`Error::Range`] (a position so far outside the cell that its
    /// fractional coordinates are not representable), [`Error::NPoints`] (`n ≥ 2²⁸`),
    /// [`Error::Alloc`] and device errors.
    #[allow(clippy::too_many_arguments)]
    pub fn compute(
        &mut self, bx: &PeriodicBox, n: usize, xyz: &D::Buf, q: &D::Buf, phi: Option<&mut D::Buf>, field: Option<&mut D::Buf>,
        virial: bool,
    ) -> Result<(f64, [f64; 9])> {
        let pending = self.launch(bx, n, xyz, q, phi.as_deref(), field.as_deref(), virial, EwaldParts::default())?;
        self.complete(pending, bx, xyz, q, phi, field)
    }

    /// The first half of [`Self::compute`]: every check that needs no device result, then the
    /// kernels up to the totals, issued on the device's stream without waiting for them
    /// (`phi` and `field` are only checked for their lengths here, not written). The call must
    /// be followed by [`Self::complete`] with the returned [`RealPending`] and the same `bx`,
    /// `xyz` and `q` (the device buffers unchanged in between), which waits for the work, so
    /// that a caller can issue other work on another stream while the pairs run. `parts`
    /// selects the work as on the CPU ([`EwaldParts::exclusion_shares`]): the pair sum when
    /// `parts.real`, and the exclusion corrections' real-space and k-space shares; without
    /// the pair sum the cutoff is not checked and no pair is visited (the coincidence check
    /// included). Errors: those of [`Self::compute`] that need no device result (cutoff, `n`,
    /// buffer lengths, exclusion indices), [`Error::Alloc`] and device errors; nothing is
    /// pending then.
    #[allow(clippy::too_many_arguments)]
    pub fn launch(
        &mut self, bx: &PeriodicBox, n: usize, xyz: &D::Buf, q: &D::Buf, phi: Option<&D::Buf>, field: Option<&D::Buf>, virial: bool,
        parts: EwaldParts,
    ) -> Result<RealPending<D>> {
        let half = 0.5 * bx.min_height();
        if parts.real && self.rc > half * (1.0 + 1e-12) {
            return Err(Error::InvalidArg(format!(
                "cutoff rc = {:e} exceeds half the smallest height ({half:.6e}) of the box; use a smaller cutoff or a larger box",
                self.rc
            )));
        }
        if n >= MAX_ATOMS {
            return Err(Error::NPoints(format!("n = {n} charges exceed the GPU real-space limit 2^28 − 1")));
        }
        let dev = self.dev.clone();
        let short = |what: &str, b: &D::Buf, per: usize| -> Result<()> {
            if dev.len(b) < 8 * per * n {
                return Err(Error::InvalidArg(format!(
                    "{what}: a device buffer of {} bytes holds fewer than {} values for n = {n} charges",
                    dev.len(b),
                    per * n
                )));
            }
            Ok(())
        };
        short("xyz", xyz, 3)?;
        short("q", q, 1)?;
        if let Some(p) = &phi {
            short("phi", p, 1)?;
        }
        if let Some(f) = &field {
            short("field", f, 3)?;
        }
        check_exclusions(&self.pairs.host.keys, n)?;
        if n == 0 {
            return Ok(RealPending { n, virial, field: field.is_some(), ph: None });
        }
        // without the pair sum one cell (the corrections need the wrapped coordinates only)
        let nc = if parts.real { cell_grid(bx, n, self.rc) } else { [1; 3] };
        let ncell = nc[0] * nc[1] * nc[2];
        if parts.real {
            self.ensure_stencil(bx, nc)?;
        }
        self.ensure_atoms(n)?;
        self.ensure_cells(ncell)?;
        let kpa = self.threads_per_atom(n);
        // allocations before the first launch, so that a failed one leaves nothing running
        let nb = nblocks(n * kpa as usize, PAIR_BLOCK);
        if self.part.as_ref().is_none_or(|p| p.0 < nb as usize) {
            self.part = None;
            self.part = Some((nb as usize, dev.alloc(7 * 8 * nb as usize)?));
        }
        // parameter block, flag and first-bad indices
        let lmax = bx.lengths.iter().cloned().fold(0.0, f64::max);
        let (v, r) = (&bx.vecs, &bx.recip);
        let pv: [f64; N_PAR] = [
            v[0][0],
            v[1][0],
            v[1][1],
            v[2][0],
            v[2][1],
            v[2][2],
            r[0][0],
            r[0][1],
            r[0][2],
            r[1][1],
            r[1][2],
            r[2][2],
            self.consts.rc2,
            (COINC_REL * lmax) * (COINC_REL * lmax),
            self.consts.fit.s,
            self.consts.c2,
            self.consts.xi,
            if bx.is_orthorhombic() { 0.0 } else { 1.0 },
        ];
        let mut ph = Phases::start(&dev, self.debug, "ewald gpu")?;
        let mut bytes = as_bytes(&pv).to_vec();
        bytes.extend_from_slice(&u64::MAX.to_ne_bytes());
        bytes.extend_from_slice(as_bytes(&[u32::MAX; 3]));
        dev.upload(&mut self.par, &bytes)?;
        let paddr = dev.addr(&self.par);
        let (flag, bad) = (paddr + FLAG_OFF as u64, paddr + BAD_OFF as u64);
        let n32 = n as i32;
        let nc32 = nc.map(|v| v as i32);
        let at = self.atoms.as_mut().expect("ensured above");
        let cl = self.cells.as_mut().expect("ensured above");
        dev.zero(&mut cl.start)?;
        dev.zero(&mut cl.fill)?;
        dev.launch("ff_ewr_wrap", nblocks(n, BLOCK), BLOCK, 0, &[
            Arg::I32(n32), Arg::Buf(xyz), Arg::Buf(q), Arg::Buf(&self.par), Arg::I32(nc32[0]), Arg::I32(nc32[1]), Arg::I32(nc32[2]),
            Arg::Buf(&at.sfrac), Arg::Buf(&at.keys), Arg::Buf(&cl.start), Arg::U64(bad),
        ])?;
        ph.end("wrap")?;
        scan(&dev, &cl.start, ncell as u64 + 1)?;
        dev.launch("ff_ewr_bucket", nblocks(n, BLOCK), BLOCK, 0, &[
            Arg::I32(n32), Arg::Buf(&at.keys), Arg::Buf(&cl.start), Arg::Buf(&cl.fill), Arg::Buf(&at.perm), Arg::Buf(&at.k2),
        ])?;
        dev.launch("ff_ewr_cell_order", nblocks(ncell, BLOCK), BLOCK, 0, &[Arg::I32(ncell as i32), Arg::Buf(&cl.start), Arg::Buf(&at.perm)])?;
        std::mem::swap(&mut at.keys, &mut at.k2);
        ph.end("sort")?;
        let cl = self.cells.as_ref().expect("ensured above");
        let (st, nst) = match &self.stencil {
            Some(st) if parts.real => (Arg::Buf(&st.buf), st.n),
            _ => (Arg::Null, 0),
        };
        let (real_share, k_share) = parts.exclusion_shares();
        let shares = SHARE_REAL * real_share as i32 + SHARE_K * k_share as i32;
        let [xa0, xa1, xa2, xa3] = self.pairs.args();
        dev.launch("ff_ewr_gather", nblocks(n, BLOCK), BLOCK, 0, &[
            Arg::I32(n32), Arg::Buf(&at.perm), Arg::Buf(&at.sfrac), Arg::Buf(q), Arg::Buf(&self.par), Arg::Buf(&at.pos),
        ])?;
        dev.launch("ff_ewr_cell_bounds", nblocks(ncell, BLOCK), BLOCK, 0, &[
            Arg::I32(ncell as i32), Arg::Buf(&cl.start), Arg::Buf(&at.pos), Arg::Buf(&cl.bbox),
        ])?;
        ph.end("cells")?;
        let part = &self.part.as_ref().expect("allocated above").1;
        let want_field = field.is_some();
        let kernel = match (self.mixed, virial) {
            (false, false) => "ff_ewr_pairs_f64",
            (false, true) => "ff_ewr_pairs_f64_virial",
            (true, false) => "ff_ewr_pairs_f32",
            (true, true) => "ff_ewr_pairs_f32_virial",
        };
        dev.launch(kernel, nb, PAIR_BLOCK, 0, &[
            Arg::I32(n32), Arg::I32(kpa as i32), Arg::Buf(&at.pos), Arg::Buf(&at.perm), Arg::Buf(&at.keys), Arg::Buf(&cl.start),
            Arg::Buf(&cl.bbox), st, Arg::I32(nst as i32), Arg::I32(nc32[0]), Arg::I32(nc32[1]), Arg::I32(nc32[2]), Arg::Buf(&self.par),
            Arg::Buf(&self.coef), Arg::I32(self.ncoef as i32), Arg::I32(self.consts.exact as i32), xa0, xa1, xa2, xa3, Arg::I32(shares),
            Arg::Buf(&at.sfrac), Arg::Buf(q), Arg::I32(want_field as i32),
            Arg::Buf(&at.out), Arg::Buf(part), Arg::U64(flag),
        ])?;
        ph.end("pairs")?;
        dev.launch("ff_ewr_finish", 1, PAIR_BLOCK, 0, &[Arg::I32(nb as i32), Arg::Buf(part), Arg::U64(flag), Arg::U64(bad), Arg::Buf(&self.status)])?;
        Ok(RealPending { n, virial, field: want_field, ph: Some(ph) })
    }

    /// The second half of [`Self::compute`] after [`Self::launch`]: waits for the totals
    /// (downloads them), checks them, then adds `φ^R` to `phi` and `E^R` to `field` (either
    /// may be `None`, e.g. to discard the results after another part failed), issued on the
    /// device's stream, and returns the energy and the virial. It must be called once for each
    /// successful [`Self::launch`], also when the results are not wanted: only then has the
    /// device finished reading `xyz` and `q`. Errors: those of [`Self::compute`] that the
    /// kernels record, [`Error::Internal`] for a `field` when `launch` was given none (the
    /// fields were not computed), and device errors.
    pub fn complete(
        &mut self, pending: RealPending<D>, bx: &PeriodicBox, xyz: &D::Buf, q: &D::Buf, phi: Option<&mut D::Buf>, field: Option<&mut D::Buf>,
    ) -> Result<(f64, [f64; 9])> {
        let RealPending { n, virial, field: computed, ph } = pending;
        let Some(mut ph) = ph else { return Ok((0.0, [0.0; 9])) };
        let dev = self.dev.clone();
        let s: Vec<u64> = download_vec(&dev, &self.status, 11)?;
        if field.is_some() && !computed {
            return Err(Error::Internal("GPU Ewald real space: complete() was given a field that launch() did not compute".into()));
        }
        ph.end("finish")?;
        self.check_status(bx, &s, n, xyz, q)?;
        if phi.is_some() || field.is_some() {
            let n32 = n as i32;
            let at = self.atoms.as_ref().expect("ensured above");
            let (pa, fa) = (phi.as_deref().map_or(Arg::Null, Arg::Buf), field.as_deref().map_or(Arg::Null, Arg::Buf));
            dev.launch("ff_ewr_scatter", nblocks(n, BLOCK), BLOCK, 0, &[Arg::I32(n32), Arg::Buf(&at.perm), Arg::Buf(&at.out), pa, fa])?;
        }
        ph.end("scatter")?;
        ph.report("real space (ms)")?;
        let energy = 0.5 * f64::from_bits(s[4]);
        let mut w = [0.0; 9];
        if virial {
            for (c, &(a, b)) in [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)].iter().enumerate() {
                let val = 0.5 * f64::from_bits(s[5 + c]);
                w[3 * a + b] = val;
                w[3 * b + a] = val;
            }
        }
        Ok((energy, w))
    }

    /// The errors recorded by the kernels (`s`: the status words of `ff_ewr_finish`), in the
    /// CPU plan's order: non-finite positions, charges, unrepresentable fractional
    /// coordinates, then coincident charges. Only the offending values are downloaded.
    fn check_status(&self, bx: &PeriodicBox, s: &[u64], n: usize, xyz: &D::Buf, q: &D::Buf) -> Result<()> {
        let dev = &self.dev;
        let one = |b: &D::Buf, i: usize| -> Result<f64> {
            let mut v = [0.0f64];
            dev.download(b, 8 * i, as_bytes_mut(&mut v))?;
            Ok(v[0])
        };
        let first = |k: usize| (s[k] < n as u64).then_some(s[k] as usize);
        if let Some(a) = first(1) {
            for d in 0..3 {
                let v = one(xyz, 3 * a + d)?;
                if !v.is_finite() {
                    let i = 3 * a + d;
                    return Err(Error::NonFinite(format!("xyz[{i}] (coordinate {} of charge {a}) is {v}", ["x", "y", "z"][d])));
                }
            }
        }
        if let Some(i) = first(2) {
            return Err(Error::NonFinite(format!("q[{i}] is {}", one(q, i)?)));
        }
        if let Some(i) = first(3) {
            let (x, y, z) = (one(xyz, 3 * i)?, one(xyz, 3 * i + 1)?, one(xyz, 3 * i + 2)?);
            return Err(Error::Range(format!(
                "charge {i} at ({x:e}, {y:e}, {z:e}) is too far outside the cell for its fractional coordinates to be represented"
            )));
        }
        if s[0] != u64::MAX {
            let (i, j) = ((s[0] >> 32) as usize, (s[0] & 0xffff_ffff) as usize);
            let at = self.atoms.as_ref().expect("allocated by compute");
            let mut si = [0.0f64; 3];
            let mut sj = [0.0f64; 3];
            dev.download(&at.sfrac, 24 * i, as_bytes_mut(&mut si))?;
            dev.download(&at.sfrac, 24 * j, as_bytes_mut(&mut sj))?;
            let ds: [f64; 3] = std::array::from_fn(|d| {
                let v = si[d] - sj[d];
                v - v.round()
            });
            let mut r2 = f64::INFINITY;
            for m in 0..27 {
                let c = bx.cart([ds[0] + (m % 3) as f64 - 1.0, ds[1] + ((m / 3) % 3) as f64 - 1.0, ds[2] + (m / 9) as f64 - 1.0]);
                r2 = r2.min(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
            }
            let lmax = bx.lengths.iter().cloned().fold(0.0, f64::max);
            return Err(coincident_error(i, j, r2.sqrt() / lmax));
        }
        Ok(())
    }
}
