//! CPU fast multipole method for the Coulomb kernel `1/r` (Greengard & Rokhlin, J. Comput.
//! Phys. 73, 325 (1987); operators in solid harmonics after White & Head-Gordon, J. Chem. Phys.
//! 101, 6593 (1994) and Dachsel, J. Chem. Phys. 132, 119901 (2010); structure after the
//! GROMACS/ScaFaCoS FMM of Kohnke et al., Int. J. HPC Appl. 35, 97 (2021)).
//!
//! For `N` charges `q_i` at `x_i` it computes `φ_i = Σ_{j≠i} q_j/r_ij`, the field
//! `E_i = −∇φ(x_i) = Σ_{j≠i} q_j (x_i − x_j)/r_ij³` and the energy `U = ½ Σ_i q_i φ_i`, in the
//! caller's units (no Coulomb constant inside; multiply by yours). With periodic boundaries
//! (a cubic box, [`Boundary::Periodic`], or a rectangular one whose sides are integer
//! multiples of a common length, [`Boundary::PeriodicBox`]) the sums run over all periodic
//! images (Ewald convention with tin-foil boundary and a neutralising background for a net
//! charge, see [`periodic`]).
//!
//! # Data conventions
//! Positions are interleaved `xyz[3*i + d]` (N×3, as MD codes store them), charges `q[i]`, the
//! field is returned interleaved `field[3*i + d]`, all `f64`, in the caller's order.
//!
//! # Algorithm
//! * [`tree`]: a uniform octree of depth `D` on the bounding cube (open) or the box
//!   (periodic; particles outside are folded in; a rectangular box of `n₀ × n₁ × n₂` cubes sits
//!   in a root cube of `2^e` cubes per side, its cubes at level `e`), stored sparsely (occupied boxes per level,
//!   Morton order); particles sorted by leaf in Morton order (radix sort of 60-bit keys), the
//!   permutation kept; the per-particle work arrays live in the plan and are reused.
//! * [`harmonics`]: complex solid harmonics with the `±m` symmetry stored once (`m ≥ 0`);
//!   expansions of order `p` in box units (so the operators do not depend on the level),
//!   stored box-major per level: `level[b·2nc + idx(l,m)]` real part, `level[b·2nc + nc +
//!   idx(l,m)]` imaginary part, `nc = (p+1)(p+2)/2`, `idx(l,m) = l(l+1)/2 + m`, boxes in Morton
//!   order — the layout the GPU port reuses (one box per block, coefficients per thread).
//! * Operators, one file each, each with its own test against the direct evaluation of the
//!   expansion it represents: [`p2m`], [`m2m`], [`m2l`], [`l2l`], [`l2p`] (with the field from
//!   derived local expansions), [`p2p`]. M2M, M2L and L2L are rotation-based ("point and
//!   shoot", O(p³)): rotate the expansion so that the translation is along z (y-rotation tables
//!   shared by all offsets with the same polar angle, z-rotations as phases), translate along z,
//!   rotate back ([`rotation`]). M2L uses one well-separated layer (≤ 189 sources per box),
//!   presorted per level into tiles of 8 target boxes with the same octant in their parents
//!   (hence the same offsets) so that the kernel is vectorised across the tile ([`lists`]),
//!   with orders decreasing with the offset length (distance-dependent truncation,
//!   [`params::m2l_order`]). P2P (27 neighbour leaves) is vectorised and branch-free. The hot
//!   loops are explicit AVX2+FMA with run-time dispatch ([`simd`]).
//! * Adaptive octree (open boundaries, [`TreeKind`]): boxes split until they hold at most `s`
//!   particles, leaves at any level; the U/V/W/X lists of Carrier, Greengard & Rokhlin (SIAM
//!   J. Sci. Stat. Comput. 9, 669 (1988)) in [`adaptive_lists`], M2P and P2L in [`m2p`], the
//!   passes in `adaptive.rs` (the same per-level M2M, M2L tiles and L2L as the uniform tree).
//!   The cost model chooses it for clustered inputs ([`params::choose_tree`]).
//! * [`periodic`]: the lattice operator (exact Ewald lattice sums of the far images, applied
//!   between the level-1 boxes) and the non-harmonic background part of the Ewald kernel; the
//!   result is the Ewald sum with tin-foil boundary.
//! * [`params`]: `p` from the tolerance (calibrated), `D` from the particle distribution by a
//!   near/far cost model; both overridable.
//! * `stages.rs`: [`CpuFmm::execute`] as a sequence of stages (input checks; the tree in units
//!   of the root cube; interaction lists; upward pass; M2L; downward pass and L2P; P2P; back
//!   to the caller's units and order), each a function whose argument and result types admit
//!   only the states the next stage can use.
//!
//! All passes run on the plan's rayon pool ([`crate::threads::Threads`]) over disjoint
//! outputs (leaves, parent boxes, target tiles), without atomics; the results do not depend on
//! the thread count. Per-order tables (rotations, lattice sums) are cached process-wide.
//!
//! # Accuracy
//! `tol` is the target of the relative l2 error of the potentials and of the fields over all
//! particles (the order rule in [`params::order_for_tol`] is calibrated on uniform and
//! clustered random sets with margin ≈ 2–10). It is a statistical target: with a few hundred
//! particles a single particle near a box corner can dominate the norm.

mod adaptive;
pub mod adaptive_lists;
pub mod harmonics;
pub mod l2l;
pub mod l2p;
pub mod lists;
pub mod m2l;
pub mod m2m;
pub mod m2p;
pub mod p2m;
pub mod p2p;
pub mod params;
pub mod periodic;
pub mod rotation;
pub mod simd;
pub(crate) mod exclusions;
mod stages;
#[doc(hidden)]
pub use stages::StageDump;
pub(crate) use stages::{check_underflow, coincident_error};
pub mod tree;

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_adaptive;
#[cfg(test)]
mod tests_rect;

use crate::backend::{BackendChoice, GpuStream};
use crate::error::{Error, Result};
use crate::threads::Threads;
use harmonics::RegTables;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

/// A process-wide cache of per-order tables (plans of the same order share them; the few most
/// recent orders are kept).
type TableCache<T> = OnceLock<Mutex<Vec<(usize, Arc<T>)>>>;

fn cached<T>(cache: &'static TableCache<T>, p: usize, make: impl FnOnce() -> T) -> Arc<T> {
    let m = cache.get_or_init(|| Mutex::new(Vec::new()));
    let mut v = m.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, t)) = v.iter().find(|(q, _)| *q == p) {
        return t.clone();
    }
    let t = Arc::new(make());
    if v.len() >= 4 {
        v.remove(0);
    }
    v.push((p, t.clone()));
    t
}

/// Checks a boundary: [`Error::InvalidArg`] (periodic side not finite and positive; a
/// rectangular box whose sides are not integer multiples of a common cube side, see
/// [`periodic::cube_cells`]), [`Error::Range`] (a subnormal side). Shared by the CPU and GPU
/// plans.
pub(crate) fn check_boundary(boundary: Boundary) -> Result<()> {
    if let Boundary::PeriodicBox { sides } = boundary {
        for side in sides {
            check_boundary(Boundary::Periodic { side })?;
        }
        if periodic::cube_cells(sides).is_none() {
            return Err(Error::InvalidArg(format!(
                "periodic box sides ({:e}, {:e}, {:e}): the FMM needs sides that are integer multiples n₀, n₁, n₂ of one common length (to a relative 1e-12), with every n_d ≤ {} and n₀n₁n₂ ≤ {} (e.g. 2:1:1 or 1:2:3)",
                sides[0],
                sides[1],
                sides[2],
                periodic::MAX_CELLS,
                periodic::MAX_CELL_PRODUCT
            )));
        }
    }
    if let Boundary::Periodic { side } = boundary {
        if !(side.is_finite() && side > 0.0) {
            return Err(Error::InvalidArg(format!("periodic box side = {side:e}; must be finite and > 0")));
        }
        if side < f64::MIN_POSITIVE {
            return Err(Error::Range(format!(
                "periodic box side = {side:e} is subnormal: coordinates at this scale lose precision; the FMM serves sides from {:e} to {:e}",
                f64::MIN_POSITIVE,
                f64::MAX
            )));
        }
    }
    Ok(())
}

/// Checks a requested depth: [`Error::InvalidArg`] above [`params::MAX_DEPTH`].
pub(crate) fn check_depth(depth: Option<usize>) -> Result<()> {
    match depth {
        Some(d) if d > params::MAX_DEPTH => Err(Error::InvalidArg(format!("depth = {d}; at most {} is supported", params::MAX_DEPTH))),
        _ => Ok(()),
    }
}

/// The level-1 lattice tensors of order `p` ([`periodic::level1_lattice_tensors`]), computed
/// once per process and order and shared by the CPU and GPU plans.
pub(crate) fn lattice_tensors(p: usize) -> Arc<Vec<Vec<f64>>> {
    static LATTICE_CACHE: TableCache<Vec<Vec<f64>>> = OnceLock::new();
    cached(&LATTICE_CACHE, p, || periodic::level1_lattice_tensors(p))
}

/// Boundary conditions.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Boundary {
    /// Free space (open boundaries).
    Open,
    /// Periodic cubic box `[0, side)³` (lattice vectors `side·e_x`, `side·e_y`, `side·e_z`).
    Periodic {
        /// Box side.
        side: f64,
    },
    /// Periodic rectangular box `[0, a) × [0, b) × [0, c)`, `sides = [a, b, c]` (lattice vectors
    /// `a·e_x`, `b·e_y`, `c·e_z`), in the caller's length unit. The sides must be integer
    /// multiples `n_d s` of one common length `s` (to a relative `1e-12`; the box used is
    /// `n_d s` with `s = a/n₀`), with `n_d ≤` [`periodic::MAX_CELLS`] and `n₀n₁n₂ ≤`
    /// [`periodic::MAX_CELL_PRODUCT`] ([`periodic::cube_cells`]; e.g. `2:1:1`, `1:2:3`, `3:3:2`);
    /// others are an [`Error::InvalidArg`]. Equal sides are exactly [`Boundary::Periodic`]. CPU
    /// only (the CUDA backend answers [`Error::NotSupported`]).
    PeriodicBox {
        /// Sides `[a, b, c]`, each finite and positive.
        sides: [f64; 3],
    },
}

impl Boundary {
    /// The boundary as the plans use it: a [`Boundary::PeriodicBox`] whose sides are equal (to
    /// the relative `1e-12` of [`periodic::cube_cells`]) becomes [`Boundary::Periodic`] with
    /// side `sides[0]` (three exactly equal sides: the same results, bit for bit); others are
    /// unchanged.
    pub fn normalized(self) -> Boundary {
        match self {
            Boundary::PeriodicBox { sides } if sides[0] == sides[1] && sides[1] == sides[2] => Boundary::Periodic { side: sides[0] },
            Boundary::PeriodicBox { sides } if matches!(periodic::cube_cells(sides), Some((_, [1, 1, 1]))) => Boundary::Periodic { side: sides[0] },
            b => b,
        }
    }

    /// Whether the boundary is periodic (cubic or rectangular).
    pub fn is_periodic(self) -> bool {
        !matches!(self, Boundary::Open)
    }
}

/// The lattice operator of a rectangular box of `cells` cubes per side at order `p`
/// ([`periodic::RectLattice`]), computed once per process, order and shape.
pub(crate) fn rect_lattice(p: usize, cells: [u64; 3], threads: &Threads) -> Arc<periodic::RectLattice> {
    type RectCache = OnceLock<Mutex<Vec<((usize, [u64; 3]), Arc<periodic::RectLattice>)>>>;
    static RECT_CACHE: RectCache = OnceLock::new();
    let m = RECT_CACHE.get_or_init(|| Mutex::new(Vec::new()));
    if let Some((_, t)) = m.lock().unwrap_or_else(|e| e.into_inner()).iter().find(|(k, _)| *k == (p, cells)) {
        return t.clone();
    }
    // computed outside the lock (seconds at high orders); a concurrent duplicate is harmless
    let t = Arc::new(periodic::RectLattice::new(p, cells, threads));
    let mut v = m.lock().unwrap_or_else(|e| e.into_inner());
    if v.len() >= 4 {
        v.remove(0);
    }
    v.push(((p, cells), t.clone()));
    t
}

/// The octree of an open-boundary CPU plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TreeKind {
    /// Chosen at every execute by the cost model ([`params::choose_tree`]): the adaptive tree
    /// where it pays (clustered particles), else the uniform one. A set [`FmmOpts::depth`]
    /// means the uniform tree.
    #[default]
    Auto,
    /// The uniform tree of depth [`FmmOpts::depth`] (or the depth of the cost model).
    Uniform,
    /// The adaptive tree ([`adaptive`], [`adaptive_lists`]): boxes split until they hold at
    /// most `max_leaf` particles (`0` = the leaf size of the cost model), leaves at any level.
    Adaptive {
        /// Largest number of particles per leaf (0 = from the cost model).
        max_leaf: usize,
    },
}

/// Options of an FMM plan.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FmmOpts {
    /// Threads: 0 = all cores, 1 = the caller's thread only (no pool).
    pub nthreads: usize,
    /// `> 0`: print parameters and stage timings of every execute to stderr.
    pub debug: i32,
    /// Expansion order `p` (0 = from the tolerance), at most [`params::MAX_ORDER`].
    pub order: usize,
    /// Depth `D` of the uniform tree (`None` = from the particle distribution, or the adaptive
    /// tree where [`FmmOpts::tree`] allows it), at most [`params::MAX_DEPTH`]; `Some` selects
    /// the uniform tree. Periodic trees have at least depth 1.
    pub depth: Option<usize>,
    /// The octree (open boundaries; periodic plans and the CUDA backend use the uniform tree).
    pub tree: TreeKind,
    /// Backend (AUTO = the CPU, until the CUDA FMM has been timed on hardware); read by the
    /// front `crate::plans::CpuFmm`, which runs [`CpuFmm`] or the CUDA FMM.
    pub backend: BackendChoice,
    /// CUDA backend only: the caller's stream (every launch and copy of the plan runs on
    /// it); `None` = the default stream. A stream with a CPU plan → [`Error::InvalidArg`].
    pub gpu_stream: Option<GpuStream>,
}

/// Wall-clock seconds of the stages of the last execute.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct StageTimes {
    /// Input checks, sorting, tree and depth selection.
    pub tree: f64,
    /// Interaction lists.
    pub lists: f64,
    /// P2M.
    pub p2m: f64,
    /// M2M.
    pub m2m: f64,
    /// M2L (including the periodic lattice operator).
    pub m2l: f64,
    /// L2L.
    pub l2l: f64,
    /// L2P.
    pub l2p: f64,
    /// P2P.
    pub p2p: f64,
    /// Periodic corrections, unpermuting and the energy.
    pub post: f64,
    /// Total.
    pub total: f64,
}

/// Parameters of a plan and statistics of its last execute.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct FmmStats {
    /// Expansion order `p`.
    pub order: usize,
    /// Depth `D` of the last execute (`None` before the first one).
    pub depth: Option<usize>,
    /// Number of (occupied) leaves of the last execute.
    pub nleaves: usize,
    /// The leaf size of the adaptive tree of the last execute (`None`: the uniform tree).
    pub max_leaf: Option<usize>,
    /// Number of particles of the last execute.
    pub npoints: usize,
    /// Stage timings of the last execute.
    pub times: StageTimes,
    /// Whether the tolerance asked for an order above [`params::MAX_ORDER`] (then clamped; the
    /// tolerance may not be reached).
    pub tol_clamped: bool,
    /// Threads used.
    pub nthreads: usize,
    /// CUDA plans: M2L operator coefficients loaded and complex multiplications of the last
    /// execute with the plain and with the symmetric kernel (`[plain, symmetric]`, each
    /// `[loads, mults]`); zero on the CPU.
    pub gpu_m2l_counts: [[u64; 2]; 2],
    /// CUDA plans: the tree stage of the last execute split into the steps
    /// [`GPU_TREE_STEPS`] (seconds between stream marks, host work and waits included, so they
    /// add up to `times.tree`); zero on the CPU.
    pub gpu_tree_steps: [f64; GPU_TREE_STEPS.len()],
}

/// The steps of the CUDA FMM's tree stage, in order ([`FmmStats::gpu_tree_steps`]): input
/// checks and bounds (one download); keys and their radix sort; the coincidence check; the
/// depth (occupancy statistics and the cost model, when the depth is not given); the root cube
/// (sample download, the host's choice, keys and sort again when it moved); leaves, levels and
/// the sorted particles.
pub const GPU_TREE_STEPS: [&str; 6] = ["bounds", "keys and sort", "coincident", "depth", "root cube", "levels"];

/// The FMM's particle limit: `n ≤ 2³² − 1` (particle indices are `u32`), else
/// [`Error::NPoints`].
pub fn check_count(n: usize) -> Result<()> {
    if n > u32::MAX as usize {
        return Err(Error::NPoints(format!("n = {n} exceeds the FMM's limit of 2^32 − 1 particles")));
    }
    Ok(())
}

/// The CPU FMM: boundary, tolerance, options and the precomputed operator tables; `execute`
/// may be called any number of times with any particles. Users make plans through the front
/// `crate::plans::FmmPlan`, which runs this or the CUDA FMM (`opts.backend`); this type
/// ignores `opts.backend` and `opts.gpu_stream`.
pub struct CpuFmm {
    boundary: Boundary,
    tol: f64,
    p: usize,
    opts: FmmOpts,
    threads: Threads,
    reg: RegTables,
    m2l: Arc<rotation::M2lTables>,
    /// Rotation-based M2M/L2L tables.
    child: Arc<rotation::ChildTables>,
    /// Level-1 lattice tensors (periodic only), order `2p`, level-1 box units, indexed by
    /// [`periodic::level1_index`].
    lattice: Option<Arc<Vec<Vec<f64>>>>,
    /// Rectangular boxes: the cube side (caller's units) and the lattice operator.
    rect: Option<(f64, Arc<periodic::RectLattice>)>,
    stats: FmmStats,
    ws: tree::Workspace,
}

impl CpuFmm {
    /// Makes a plan. Errors: [`Error::Tol`] (tol not in (0, 1)), [`Error::InvalidArg`] (box side
    /// not finite and positive, a rectangular box without a common cube side
    /// ([`Boundary::PeriodicBox`]), order or depth too large).
    pub fn new(boundary: Boundary, tol: f64, opts: &FmmOpts) -> Result<Self> {
        if !(tol.is_finite() && tol > 0.0 && tol < 1.0) {
            return Err(Error::Tol(format!("tol = {tol:e}; the FMM needs 0 < tol < 1")));
        }
        let boundary = boundary.normalized();
        check_boundary(boundary)?;
        let cells = match boundary {
            Boundary::PeriodicBox { sides } => periodic::cube_cells(sides),
            _ => None,
        };
        if let Some((_, n)) = cells {
            let e = periodic::root_level(n);
            if let Some(d) = opts.depth {
                if d + e > params::MAX_DEPTH {
                    return Err(Error::InvalidArg(format!(
                        "depth = {d}; a periodic box of {}×{}×{} cubes supports at most {} (the cubes sit at level {e} of a tree of at most {} levels)",
                        n[0],
                        n[1],
                        n[2],
                        params::MAX_DEPTH - e,
                        params::MAX_DEPTH
                    )));
                }
            }
        }
        if opts.order > params::MAX_ORDER {
            return Err(Error::InvalidArg(format!("order = {}; at most {} is supported", opts.order, params::MAX_ORDER)));
        }
        check_depth(opts.depth)?;
        match opts.tree {
            TreeKind::Auto | TreeKind::Uniform => {}
            TreeKind::Adaptive { max_leaf } => {
                if max_leaf > u32::MAX as usize {
                    return Err(Error::InvalidArg(format!("max_leaf = {max_leaf}; at most 2^32 − 1")));
                }
                if opts.depth.is_some() {
                    return Err(Error::InvalidArg("the adaptive tree (max_leaf) and a depth (the uniform tree) are both set; set one".into()));
                }
                if boundary.is_periodic() {
                    return Err(Error::InvalidArg("the adaptive tree (max_leaf) serves open boundaries; periodic boxes use the uniform tree".into()));
                }
            }
        }
        let p = if opts.order > 0 { opts.order } else { params::order_for_tol(tol) };
        let threads = Threads::new(opts.nthreads)?;
        let reg = RegTables::new(p);
        static M2L_CACHE: TableCache<rotation::M2lTables> = OnceLock::new();
        static BASIS_CACHE: TableCache<rotation::YRotBasis> = OnceLock::new();
        let basis = cached(&BASIS_CACHE, p, || rotation::YRotBasis::new(p));
        let m2l = cached(&M2L_CACHE, p, || rotation::M2lTables::with_basis(&basis));
        static CHILD_CACHE: TableCache<rotation::ChildTables> = OnceLock::new();
        let child = cached(&CHILD_CACHE, p, || rotation::ChildTables::with_basis(&basis));
        let lattice = match boundary {
            Boundary::Periodic { .. } => Some(lattice_tensors(p)),
            Boundary::Open | Boundary::PeriodicBox { .. } => None,
        };
        let rect = cells.map(|(s, n)| (s, rect_lattice(p, n, &threads)));
        let tol_clamped = opts.order == 0 && params::order_for_tol_unclamped(tol) > params::MAX_ORDER as f64;
        if tol_clamped && opts.debug > 0 {
            eprintln!("farfield fmm: warning: tol = {tol:e} needs an order above {}; clamped to it", params::MAX_ORDER);
        }
        let stats = FmmStats { order: p, tol_clamped, nthreads: threads.count(), ..Default::default() };
        Ok(CpuFmm { boundary, tol, p, opts: *opts, threads, reg, m2l, child, lattice, rect, stats, ws: tree::Workspace::default() })
    }

    /// Expansion order.
    pub fn order(&self) -> usize {
        self.p
    }

    /// The requested tolerance.
    pub fn tol(&self) -> f64 {
        self.tol
    }

    /// Boundary conditions (a [`Boundary::PeriodicBox`] with equal sides is reported as the
    /// [`Boundary::Periodic`] it is, see [`Boundary::normalized`]).
    pub fn boundary(&self) -> Boundary {
        self.boundary
    }

    /// The debug level of the options (`> 0`: print every execute's parameters and times).
    pub fn debug(&self) -> i32 {
        self.opts.debug
    }

    /// Parameters and statistics of the last execute.
    pub fn stats(&self) -> FmmStats {
        self.stats
    }

    /// Reserves the plan's work arrays for `n` particles (with the field buffers if `field`);
    /// [`Self::execute`] does this itself, before reading its inputs. Error: [`Error::Alloc`].
    pub fn reserve(&mut self, n: usize, field: bool) -> Result<()> {
        check_count(n)?;
        self.ws.reserve(n, field)
    }

    /// Computes potentials (`phi`, length `n`), fields (`field`, length `3n`, interleaved) and
    /// returns the energy `½ Σ q_i φ_i`, for `n = q.len()` particles at `xyz` (length `3n`).
    /// `n = 0` is a valid no-op (energy 0). Outputs are written only on success.
    ///
    /// Errors: [`Error::InvalidArg`] (slice lengths), [`Error::NonFinite`] (a coordinate or
    /// charge NaN/Inf; the message names the index), [`Error::NPoints`] (more than 2³² − 1
    /// particles), [`Error::Alloc`].
    pub fn execute(&mut self, xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>) -> Result<f64> {
        let t_start = Instant::now();
        let request = stages::Request::new(xyz, q, phi, field)?;
        let n = request.len();
        self.reserve(n, request.wants_field())?;
        let (particles, out) = request.check_finite(&self.threads)?;
        self.stats = FmmStats { depth: None, nleaves: 0, npoints: n, times: StageTimes::default(), ..self.stats };
        if n == 0 {
            self.stats.depth = Some(0);
            return Ok(0.0);
        }
        let mut times = StageTimes::default();
        let t = Instant::now();
        let root = self.build_tree(&particles, true)?;
        times.tree = t.elapsed().as_secs_f64();
        let mut sorted = stages::SortedOutputs::take(&mut self.ws, n, out.wants_field());
        let evaluated = self.evaluate(&root.tree, &mut sorted, &mut times);
        let t = Instant::now();
        let result = evaluated.and_then(|()| self.finish(&root, &mut sorted, out));
        // the workspace gets its buffers back on every path
        // rectangular boxes: the depth below the cubes (the levels above them are unused)
        let (depth, nleaves, max_leaf) = (root.tree.depth - root.tree.root_level, root.tree.nleaves(), root.max_leaf);
        sorted.give_back(&mut self.ws);
        self.ws.restore(root.tree);
        let energy = result?;
        times.post = t.elapsed().as_secs_f64();
        times.total = t_start.elapsed().as_secs_f64();
        self.stats = FmmStats { depth: Some(depth), nleaves, max_leaf, npoints: n, times, ..self.stats };
        if self.opts.debug > 0 {
            eprintln!(
                "farfield fmm: n = {n}, p = {}, D = {depth}, leaves = {nleaves}{}, threads = {}; times [s]: tree {:.4} lists {:.4} p2m {:.4} m2m {:.4} m2l {:.4} l2l {:.4} l2p {:.4} p2p {:.4} post {:.4} total {:.4}",
                self.p,
                max_leaf.map_or(String::new(), |s| format!(" (adaptive, ≤ {s} per leaf)")),
                self.threads.count(),
                times.tree,
                times.lists,
                times.p2m,
                times.m2m,
                times.m2l,
                times.l2l,
                times.l2p,
                times.p2p,
                times.post,
                times.total
            );
        }
        Ok(energy)
    }
}
