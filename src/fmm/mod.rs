//! CPU fast multipole method for the Coulomb kernel `1/r` (Greengard & Rokhlin, J. Comput.
//! Phys. 73, 325 (1987); operators in solid harmonics after White & Head-Gordon, J. Chem. Phys.
//! 101, 6593 (1994) and Dachsel, J. Chem. Phys. 132, 119901 (2010); structure after the
//! GROMACS/ScaFaCoS FMM of Kohnke et al., Int. J. HPC Appl. 35, 97 (2021)).
//!
//! For `N` charges `q_i` at `x_i` it computes `φ_i = Σ_{j≠i} q_j/r_ij`, the field
//! `E_i = −∇φ(x_i) = Σ_{j≠i} q_j (x_i − x_j)/r_ij³` and the energy `U = ½ Σ_i q_i φ_i`, in the
//! caller's units (no Coulomb constant inside; multiply by yours). With periodic boundaries
//! the sums run over all periodic images (Ewald convention with tin-foil boundary and a
//! neutralising background for a net charge, see [`periodic`]).
//!
//! # Data conventions
//! Positions are interleaved `xyz[3*i + d]` (N×3, as MD codes store them), charges `q[i]`, the
//! field is returned interleaved `field[3*i + d]`, all `f64`, in the caller's order.
//!
//! # Algorithm
//! * [`tree`]: a uniform octree of depth `D` on the bounding cube (open) or the box
//!   (periodic; particles outside are folded in), stored sparsely (occupied boxes per level,
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
//! * [`periodic`]: the lattice operator (exact Ewald lattice sums of the far images, applied
//!   between the level-1 boxes) and the non-harmonic background part of the Ewald kernel; the
//!   result is the Ewald sum with tin-foil boundary.
//! * [`params`]: `p` from the tolerance (calibrated), `D` from the particle distribution by a
//!   near/far cost model; both overridable.
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

pub mod harmonics;
pub mod l2l;
pub mod l2p;
pub mod lists;
pub mod m2l;
pub mod m2m;
pub mod p2m;
pub mod p2p;
pub mod params;
pub mod periodic;
pub mod rotation;
pub mod simd;
pub mod tree;

#[cfg(test)]
mod tests;

use crate::error::{ensure_finite, try_zeroed_vec, Error, Result};
use crate::threads::{SyncPtr, Threads};
use harmonics::{ncoef, RegTables};
use simd::W;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;
use tree::Tree;

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
}

/// Compute backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// The best available (currently always the CPU).
    #[default]
    Auto,
    /// CPU (rayon).
    Cpu,
    /// CUDA (not available yet: plan creation fails with `FARFIELD_ERR_NOT_SUPPORTED`).
    Cuda,
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
    /// Tree depth `D` (`None` = from the particle distribution), at most [`params::MAX_DEPTH`];
    /// periodic trees have at least depth 1.
    pub depth: Option<usize>,
    /// Backend.
    pub backend: Backend,
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
    /// Number of particles of the last execute.
    pub npoints: usize,
    /// Stage timings of the last execute.
    pub times: StageTimes,
    /// Whether the tolerance asked for an order above [`params::MAX_ORDER`] (then clamped; the
    /// tolerance may not be reached).
    pub tol_clamped: bool,
    /// Threads used.
    pub nthreads: usize,
}

/// An FMM plan: boundary, tolerance, options and the precomputed operator tables; `execute`
/// may be called any number of times with any particles.
pub struct FmmPlan {
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
    stats: FmmStats,
    ws: tree::Workspace,
}

impl FmmPlan {
    /// Makes a plan. Errors: [`Error::Tol`] (tol not in (0, 1)), [`Error::InvalidArg`] (box side
    /// not finite and positive, order or depth too large), [`Error::NotSupported`] (CUDA).
    pub fn new(boundary: Boundary, tol: f64, opts: &FmmOpts) -> Result<Self> {
        if !(tol.is_finite() && tol > 0.0 && tol < 1.0) {
            return Err(Error::Tol(format!("tol = {tol:e}; the FMM needs 0 < tol < 1")));
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
        if opts.backend == Backend::Cuda {
            return Err(Error::NotSupported("CUDA FMM not available yet".into()));
        }
        if opts.order > params::MAX_ORDER {
            return Err(Error::InvalidArg(format!("order = {}; at most {} is supported", opts.order, params::MAX_ORDER)));
        }
        if let Some(d) = opts.depth {
            if d > params::MAX_DEPTH {
                return Err(Error::InvalidArg(format!("depth = {d}; at most {} is supported", params::MAX_DEPTH)));
            }
        }
        let p = if opts.order > 0 { opts.order } else { params::order_for_tol(tol) };
        let threads = Threads::new(opts.nthreads)?;
        let reg = RegTables::new(p);
        static M2L_CACHE: TableCache<rotation::M2lTables> = OnceLock::new();
        static LATTICE_CACHE: TableCache<Vec<Vec<f64>>> = OnceLock::new();
        static BASIS_CACHE: TableCache<rotation::YRotBasis> = OnceLock::new();
        let basis = cached(&BASIS_CACHE, p, || rotation::YRotBasis::new(p));
        let m2l = cached(&M2L_CACHE, p, || rotation::M2lTables::with_basis(&basis));
        static CHILD_CACHE: TableCache<rotation::ChildTables> = OnceLock::new();
        let child = cached(&CHILD_CACHE, p, || rotation::ChildTables::with_basis(&basis));
        let lattice = match boundary {
            Boundary::Periodic { .. } => Some(cached(&LATTICE_CACHE, p, || periodic::level1_lattice_tensors(p))),
            Boundary::Open => None,
        };
        let tol_clamped = opts.order == 0 && params::order_for_tol_unclamped(tol) > params::MAX_ORDER as f64;
        if tol_clamped && opts.debug > 0 {
            eprintln!("farfield fmm: warning: tol = {tol:e} needs an order above {}; clamped to it", params::MAX_ORDER);
        }
        let stats = FmmStats { order: p, tol_clamped, nthreads: threads.count(), ..Default::default() };
        Ok(FmmPlan { boundary, tol, p, opts: *opts, threads, reg, m2l, child, lattice, stats, ws: tree::Workspace::default() })
    }

    /// Expansion order.
    pub fn order(&self) -> usize {
        self.p
    }

    /// The requested tolerance.
    pub fn tol(&self) -> f64 {
        self.tol
    }

    /// Boundary conditions.
    pub fn boundary(&self) -> Boundary {
        self.boundary
    }

    /// Parameters and statistics of the last execute.
    pub fn stats(&self) -> FmmStats {
        self.stats
    }

    /// Reserves the plan's work arrays for `n` particles (with the field buffers if `field`);
    /// [`Self::execute`] does this itself, before reading its inputs. Error: [`Error::Alloc`].
    pub fn reserve(&mut self, n: usize, field: bool) -> Result<()> {
        if n > u32::MAX as usize {
            return Err(Error::NPoints(format!("n = {n} exceeds the FMM's limit of 2^32 − 1 particles")));
        }
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
        let n = q.len();
        if xyz.len() != 3 * n {
            return Err(Error::InvalidArg(format!("xyz has {} values; expected 3n = {}", xyz.len(), 3 * n)));
        }
        if let Some(ph) = &phi {
            if ph.len() != n {
                return Err(Error::InvalidArg(format!("phi has {} values; expected n = {n}", ph.len())));
            }
        }
        if let Some(f) = &field {
            if f.len() != 3 * n {
                return Err(Error::InvalidArg(format!("field has {} values; expected 3n = {}", f.len(), 3 * n)));
            }
        }
        let want_field = field.is_some();
        self.reserve(n, want_field)?;
        if let Some(i) = self.threads.find_first(3 * n, |i| !xyz[i].is_finite()) {
            return Err(Error::NonFinite(format!("xyz[{i}] (particle {}, coordinate {}) = {:e}", i / 3, i % 3, xyz[i])));
        }
        if let Some(i) = self.threads.find_first(n, |i| !q[i].is_finite()) {
            return Err(Error::NonFinite(format!("q[{i}] = {:e}", q[i])));
        }
        let p = self.p;
        self.stats = FmmStats { depth: None, nleaves: 0, npoints: n, times: StageTimes::default(), ..self.stats };
        if n == 0 {
            self.stats.depth = Some(0);
            return Ok(0.0);
        }
        let th = &self.threads;
        let periodic = matches!(self.boundary, Boundary::Periodic { .. });
        let mut times = StageTimes::default();

        // ---- tree
        let t = Instant::now();
        let (mut lo, mut size) = match self.boundary {
            Boundary::Open => Tree::bounding_cube(th, xyz)?,
            Boundary::Periodic { side } => ([0.0; 3], side),
        };
        let ws = &mut self.ws;
        Tree::sort_keys(th, xyz, lo, size, periodic, ws)?;
        // coincident distinct particles (in the root cube at the plain origin, where x and x + L
        // fold onto the same value): the potential is infinite
        if let Some((i, j)) = Tree::find_coincident(xyz, lo, size, periodic, ws)? {
            let c = &xyz[3 * i..3 * i + 3];
            return Err(Error::InvalidArg(format!(
                "particles {i} and {j} coincide (at ({:e}, {:e}, {:e}){}): their interaction is infinite; merge them or remove one",
                c[0],
                c[1],
                c[2],
                if periodic { ", up to a period" } else { "" }
            )));
        }
        let m2l_top = if periodic { 1 } else { 2 };
        // periodic trees have at least one level (the lattice operator acts between level-1 boxes)
        let depth = self.opts.depth.unwrap_or_else(|| params::choose_depth(&ws.keys, p, m2l_top)).max(if periodic { 1 } else { 0 });
        // keep lattices off the box corners (tree::periodic_origin, tree::open_cube)
        let (o, s) = if periodic { (tree::periodic_origin(xyz, size, depth, p), size) } else { tree::open_cube(xyz, lo, size, depth, p) };
        if o != lo || s != size {
            (lo, size) = (o, s);
            Tree::sort_keys(th, xyz, lo, size, periodic, ws)?;
        }
        let tree = Tree::build(th, xyz, q, lo, size, periodic, ws, depth)?;
        times.tree = t.elapsed().as_secs_f64();

        // ---- lists
        let t = Instant::now();
        let p2p_lists = lists::p2p_lists(th, &tree)?;
        let far = periodic || depth >= 2;
        let top = if periodic { 1 } else { 2 };
        let tiles: Vec<Vec<lists::Tile>> = (0..=depth)
            .map(|l| if far && l >= m2l_top { lists::m2l_tiles(th, &tree, l) } else { Ok(Vec::new()) })
            .collect::<Result<_>>()?;
        times.lists = t.elapsed().as_secs_f64();

        // ---- upward pass
        let nc2 = 2 * ncoef(p);
        let mut mp: Vec<Vec<f64>> = Vec::with_capacity(depth + 1);
        let mut loc: Vec<Vec<f64>> = Vec::with_capacity(depth + 1);
        for l in 0..=depth {
            let nb = if far && l >= top { tree.levels[l].len() } else { 0 };
            mp.push(try_zeroed_vec(nb * nc2, "FMM multipole expansions")?);
            loc.push(try_zeroed_vec(nb * nc2, "FMM local expansions")?);
        }
        let nf = if want_field { n } else { 0 };
        let mut phi_s = std::mem::take(&mut ws.phi);
        let mut ex_s = std::mem::take(&mut ws.ex);
        let mut ey_s = std::mem::take(&mut ws.ey);
        let mut ez_s = std::mem::take(&mut ws.ez);
        // capacities were reserved above: no reallocation
        phi_s.resize(n, 0.0);
        for v in [&mut ex_s, &mut ey_s, &mut ez_s] {
            v.resize(nf, 0.0);
        }

        if far {
            let t = Instant::now();
            let hd = tree.h(depth);
            let reg = &self.reg;
            let tr = &tree;
            const G: usize = 8;
            th.chunks(&mut mp[depth], G * nc2, |ci, chunk| {
                let mut s = p2m::LaneScratch::new(p);
                for (o, blk) in chunk.chunks_mut(nc2).enumerate() {
                    let b = ci * G + o;
                    let (a, e) = (tr.leaf_start[b] as usize, tr.leaf_start[b + 1] as usize);
                    let c = tr.center(depth, tr.levels[depth].keys[b]);
                    p2m::p2m(reg, &tr.x[a..e], &tr.y[a..e], &tr.z[a..e], &tr.q[a..e], c, 1.0 / hd, blk, &mut s);
                }
            });
            times.p2m = t.elapsed().as_secs_f64();

            let t = Instant::now();
            for l in (top..depth).rev() {
                let (up, down) = mp.split_at_mut(l + 1);
                let (par, ch) = (&mut up[l], &down[0]);
                let lev = &tree.levels[l];
                let clev = &tree.levels[l + 1];
                let ct = &*self.child;
                // W parents per task; their blocks are contiguous, so the task owns them
                th.chunks(par, W * nc2, |ci, chunk| {
                    let nb = chunk.len() / nc2;
                    let mut children = [[m2l::NONE; W]; 8];
                    for lane in 0..nb {
                        let b = ci * W + lane;
                        for c in lev.child_start[b] as usize..lev.child_start[b + 1] as usize {
                            children[(clev.keys[c] & 7) as usize][lane] = c as u32;
                        }
                    }
                    let mut s = m2m::ShiftScratch::new(p);
                    m2m::m2m_lanes(ct, &children, ch, &mut s);
                    let nc = nc2 / 2;
                    for lane in 0..nb {
                        let blk = &mut chunk[lane * nc2..(lane + 1) * nc2];
                        for i in 0..nc {
                            blk[i] += s.par_re[i][lane];
                            blk[nc + i] += s.par_im[i][lane];
                        }
                    }
                });
            }
            times.m2m = t.elapsed().as_secs_f64();

            // ---- M2L (and the lattice operator at the root)
            let t = Instant::now();
            if let Some(lat) = &self.lattice {
                // far images: the level-1 lattice operator between all pairs of level-1 boxes
                let lev = &tree.levels[1];
                let (src, dst) = (&mp[1], &mut loc[1]);
                th.chunks(dst, nc2, |t, blk| {
                    let ct = tree::decode(lev.keys[t]);
                    for (s, &ks) in lev.keys.iter().enumerate() {
                        let cs = tree::decode(ks);
                        let d = [ct[0] as i32 - cs[0] as i32, ct[1] as i32 - cs[1] as i32, ct[2] as i32 - cs[2] as i32];
                        m2l::m2l_tensor(p, &src[s * nc2..(s + 1) * nc2], &lat[periodic::level1_index(d)], blk);
                    }
                });
            }
            for l in m2l_top..=depth {
                let ts = &tiles[l];
                let src = &mp[l];
                let dst = SyncPtr(loc[l].as_mut_ptr());
                let tab = &*self.m2l;
                const TG: usize = 4;
                th.for_each(ts.len().div_ceil(TG), |ci| {
                    let dst = dst;
                    let mut s = m2l::M2lScratch::new(p);
                    for tile in &ts[ci * TG..((ci + 1) * TG).min(ts.len())] {
                        m2l::m2l_tile(tab, &tile.entries, src, &mut s);
                        let nc = nc2 / 2;
                        for lane in 0..tile.n {
                            let b = tile.targets[lane] as usize;
                            // SAFETY: every box belongs to exactly one tile, so the blocks
                            // written by different tasks are disjoint.
                            let blk = unsafe { std::slice::from_raw_parts_mut(dst.0.add(b * nc2), nc2) };
                            for i in 0..nc {
                                blk[i] += s.acc_re[i][lane];
                                blk[nc + i] += s.acc_im[i][lane];
                            }
                        }
                    }
                });
            }
            times.m2l = t.elapsed().as_secs_f64();

            // ---- downward pass
            let t = Instant::now();
            for l in top..depth {
                let (up, down) = loc.split_at_mut(l + 1);
                let (par, ch) = (&up[l], SyncPtr(down[0].as_mut_ptr()));
                let lev = &tree.levels[l];
                let clev = &tree.levels[l + 1];
                let ct = &*self.child;
                let npar = lev.len();
                th.for_each(npar.div_ceil(W), |ci| {
                    let ch = ch;
                    let b0 = ci * W;
                    let nb = W.min(npar - b0);
                    let mut children = [[m2l::NONE; W]; 8];
                    let mut parents = [m2l::NONE; W];
                    for lane in 0..nb {
                        let b = b0 + lane;
                        parents[lane] = b as u32;
                        for c in lev.child_start[b] as usize..lev.child_start[b + 1] as usize {
                            children[(clev.keys[c] & 7) as usize][lane] = c as u32;
                        }
                    }
                    let mut s = m2m::ShiftScratch::new(p);
                    m2l::gather(simd::Scalar, &parents, par, nc2 / 2, p, &s.zeros, &mut s.par_re, &mut s.par_im);
                    let nc = nc2 / 2;
                    for (o, cs) in children.iter().enumerate() {
                        if cs.iter().all(|&c| c == m2l::NONE) {
                            continue;
                        }
                        l2l::l2l_lanes(ct, o, &mut s);
                        for (lane, &c) in cs.iter().enumerate() {
                            if c == m2l::NONE {
                                continue;
                            }
                            // SAFETY: every child has one parent, handled by one task.
                            let blk = unsafe { std::slice::from_raw_parts_mut(ch.0.add(c as usize * nc2), nc2) };
                            for i in 0..nc {
                                blk[i] += s.b_re[i][lane];
                                blk[nc + i] += s.b_im[i][lane];
                            }
                        }
                    }
                });
            }
            times.l2l = t.elapsed().as_secs_f64();

            // ---- L2P
            let t = Instant::now();
            let nl = tree.nleaves();
            let (pp, px, py, pz) = (SyncPtr(phi_s.as_mut_ptr()), SyncPtr(ex_s.as_mut_ptr()), SyncPtr(ey_s.as_mut_ptr()), SyncPtr(ez_s.as_mut_ptr()));
            let leaf_loc = &loc[depth];
            const LG: usize = 16;
            th.for_each(nl.div_ceil(LG), |ci| {
                let (pp, px, py, pz) = (pp, px, py, pz);
                let mut s = p2m::LaneScratch::new(p);
                let mut co = l2p::EvalCoefs::new(p);
                for b in ci * LG..((ci + 1) * LG).min(nl) {
                    let (a, e) = (tr.leaf_start[b] as usize, tr.leaf_start[b + 1] as usize);
                    co.set(p, &leaf_loc[b * nc2..(b + 1) * nc2], want_field);
                    let c = tr.center(depth, tr.levels[depth].keys[b]);
                    // SAFETY: leaves own disjoint particle ranges a..e.
                    let ph = unsafe { std::slice::from_raw_parts_mut(pp.0.add(a), e - a) };
                    let g = if want_field {
                        unsafe {
                            Some((
                                std::slice::from_raw_parts_mut(px.0.add(a), e - a),
                                std::slice::from_raw_parts_mut(py.0.add(a), e - a),
                                std::slice::from_raw_parts_mut(pz.0.add(a), e - a),
                            ))
                        }
                    } else {
                        None
                    };
                    l2p::l2p(reg, &co, &tr.x[a..e], &tr.y[a..e], &tr.z[a..e], c, hd, ph, g, &mut s);
                }
            });
            times.l2p = t.elapsed().as_secs_f64();
        }

        // ---- P2P
        let t = Instant::now();
        {
            let tr = &tree;
            let nl = tr.nleaves();
            let (pp, px, py, pz) = (SyncPtr(phi_s.as_mut_ptr()), SyncPtr(ex_s.as_mut_ptr()), SyncPtr(ey_s.as_mut_ptr()), SyncPtr(ez_s.as_mut_ptr()));
            let pt = p2p::Particles { x: &tr.x, y: &tr.y, z: &tr.z, q: &tr.q };
            let lists = &p2p_lists;
            const LG: usize = 8;
            th.for_each(nl.div_ceil(LG), |ci| {
                let (pp, px, py, pz) = (pp, px, py, pz);
                for b in ci * LG..((ci + 1) * LG).min(nl) {
                    let (a, e) = (tr.leaf_start[b] as usize, tr.leaf_start[b + 1] as usize);
                    // SAFETY: leaves own disjoint particle ranges a..e.
                    let ph = unsafe { std::slice::from_raw_parts_mut(pp.0.add(a), e - a) };
                    let g = if want_field {
                        unsafe {
                            Some((
                                std::slice::from_raw_parts_mut(px.0.add(a), e - a),
                                std::slice::from_raw_parts_mut(py.0.add(a), e - a),
                                std::slice::from_raw_parts_mut(pz.0.add(a), e - a),
                            ))
                        }
                    } else {
                        None
                    };
                    p2p::p2p(pt, a, e, &lists[27 * b..27 * b + 27], ph, g);
                }
            });
        }
        times.p2p = t.elapsed().as_secs_f64();

        // ---- periodic corrections, energy, caller's order
        let t = Instant::now();
        if periodic {
            let g = if want_field { Some((&mut ex_s[..], &mut ey_s[..], &mut ez_s[..])) } else { None };
            periodic::background_correction(&tree, 1.0, &mut phi_s, g);
        }
        // back from units of the root cube, checked before anything is written
        let result = to_caller_units(th, size, n, &tree.q, &mut phi_s, [&mut ex_s, &mut ey_s, &mut ez_s]);
        if result.is_ok() {
            if let Some(out) = phi {
                let o = SyncPtr(out.as_mut_ptr());
                let (perm, ps) = (&tree.perm, &phi_s);
                th.for_each(n.div_ceil(4096), |ci| {
                    let o = o;
                    for i in ci * 4096..((ci + 1) * 4096).min(n) {
                        // SAFETY: perm is a permutation, so the writes are disjoint.
                        unsafe { *o.0.add(perm[i] as usize) = ps[i] };
                    }
                });
            }
            if let Some(out) = field {
                let o = SyncPtr(out.as_mut_ptr());
                let (perm, a, b, c) = (&tree.perm, &ex_s, &ey_s, &ez_s);
                th.for_each(n.div_ceil(4096), |ci| {
                    let o = o;
                    for i in ci * 4096..((ci + 1) * 4096).min(n) {
                        let j = 3 * perm[i] as usize;
                        // SAFETY: perm is a permutation, so the writes are disjoint.
                        unsafe {
                            *o.0.add(j) = a[i];
                            *o.0.add(j + 1) = b[i];
                            *o.0.add(j + 2) = c[i];
                        }
                    }
                });
            }
        }
        let nleaves = tree.nleaves();
        ws.phi = phi_s;
        ws.ex = ex_s;
        ws.ey = ey_s;
        ws.ez = ez_s;
        ws.restore(tree);
        let energy = result?;
        times.post = t.elapsed().as_secs_f64();
        times.total = t_start.elapsed().as_secs_f64();
        self.stats = FmmStats { depth: Some(depth), nleaves, npoints: n, times, ..self.stats };
        if self.opts.debug > 0 {
            eprintln!(
                "farfield fmm: n = {n}, p = {p}, D = {depth}, leaves = {nleaves}, threads = {}; times [s]: tree {:.4} lists {:.4} p2m {:.4} m2m {:.4} m2l {:.4} l2l {:.4} l2p {:.4} p2p {:.4} post {:.4} total {:.4}",
                th.count(),
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

/// Takes the sorted outputs of an execute from units of the root cube (side `size`) to the
/// caller's: `φ = φ'/s`, `E = E'/s²`, and returns the energy `½ Σ_{i<n} q_i φ_i`. A
/// requested output whose every value underflows (zero or subnormal: nothing representable left) or any value
/// that is not finite is an [`Error::Range`] (the caller then writes nothing).
fn to_caller_units(th: &Threads, size: f64, n: usize, q: &[f64], phi: &mut [f64], mut field: [&mut Vec<f64>; 3]) -> Result<f64> {
    let amax = |v: &[f64]| crate::scale::max_abs(0.0, v);
    let (mp, mf) = (amax(phi), field.iter().map(|v| amax(v)).fold(0.0, f64::max));
    let under = |m: f64, scaled: f64| m > 0.0 && m.is_finite() && scaled < f64::MIN_POSITIVE;
    let underflow = if under(mp, mp / size) {
        Some(("potentials", mp / size))
    } else if under(mf, mf / size / size) {
        Some(("fields", mf / size / size))
    } else {
        None
    };
    if let Some((what, v)) = underflow {
        return Err(Error::Range(format!(
            "the {what} underflow (largest magnitude {v:e}, below the smallest normal double) at box side {size:e}: potentials scale like 1/side, fields like 1/side²"
        )));
    }
    th.chunks(phi, 4096, |_, c| c.iter_mut().for_each(|v| *v /= size));
    for v in field.iter_mut() {
        th.chunks(v, 4096, |_, c| c.iter_mut().for_each(|v| *v = *v / size / size));
    }
    let energy = {
        let phi = &*phi;
        0.5 * th.sum(n, |i| q[i] * phi[i])
    };
    // a result that is not finite is never returned with success
    let [ex, ey, ez] = &field;
    ensure_finite(phi, "the potential (sorted order)")
        .and_then(|_| ensure_finite(ex, "the field x component (sorted order)"))
        .and_then(|_| ensure_finite(ey, "the field y component (sorted order)"))
        .and_then(|_| ensure_finite(ez, "the field z component (sorted order)"))
        .and_then(|_| ensure_finite(&[energy], "the energy"))
        .map_err(|e| {
            Error::Range(format!(
                "{} (box side {size:e}: potentials scale like 1/side, fields like 1/side²; or charges too large)",
                e.message()
            ))
        })?;
    Ok(energy)
}
