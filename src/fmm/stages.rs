//! The stages of [`CpuFmm::execute`], in order. Each is a function whose argument and result
//! types admit only the states the next stage can use:
//!
//! 1. [`Request::new`] checks the slice lengths; after the plan's workspace is reserved,
//!    [`Request::check_finite`] gives the [`Particles`] (finite coordinates and charges) and
//!    the caller's [`Outputs`];
//! 2. [`CpuFmm::build_tree`] → [`RootTree`]: root cube and depth, particles sorted by leaf in
//!    units of the root cube (the scaling undone in stage 6);
//! 3. [`CpuFmm::interaction_lists`] → [`Lists`]: P2P source ranges and, where the tree has
//!    a far field ([`Far`]), the M2L tiles;
//! 4. far field: [`CpuFmm::upward`] (P2M, M2M) → [`Multipoles`]; [`CpuFmm::m2l`] (lattice
//!    operator, M2L) → [`Locals`]; [`CpuFmm::downward`] (L2L) → [`LeafLocals`];
//!    [`CpuFmm::l2p`] accumulates into the [`SortedOutputs`];
//! 5. [`CpuFmm::p2p`] accumulates the near field into the [`SortedOutputs`];
//! 6. [`CpuFmm::finish`]: periodic background correction, back to the caller's units
//!    (checked before anything is written), the caller's order.

use super::harmonics::ncoef;
use super::simd::{self, W};
use super::tree::{self, Tree, Workspace};
use super::{l2l, l2p, lists, m2l, m2m, p2m, p2p, params, periodic, Boundary, CpuFmm, StageTimes, TreeKind};
use crate::error::{ensure_finite, try_zeroed_vec, Error, Result};
use crate::threads::{SyncPtr, Threads};
use std::marker::PhantomData;
use std::time::Instant;

/// The arguments of one execute with consistent lengths: `xyz` has `3n` values, `q` has `n`,
/// and the requested outputs `n` (`phi`) and `3n` (`field`, interleaved).
pub(super) struct Request<'a, 'o> {
    xyz: &'a [f64],
    q: &'a [f64],
    out: Outputs<'o>,
}

/// The caller's output slices, lengths checked: `phi` has `n` values, `field` `3n`
/// (interleaved `field[3*i + d]`), caller's order; written only by [`CpuFmm::finish`].
pub(super) struct Outputs<'o> {
    phi: Option<&'o mut [f64]>,
    field: Option<&'o mut [f64]>,
}

impl Outputs<'_> {
    /// Whether the field is requested.
    pub(super) fn wants_field(&self) -> bool {
        self.field.is_some()
    }
}

/// The particles of one execute, checked: `n = q.len()` charges, `xyz` (length `3n`,
/// interleaved) and `q` all finite.
pub(super) struct Particles<'a> {
    xyz: &'a [f64],
    q: &'a [f64],
}

impl<'a, 'o> Request<'a, 'o> {
    /// Checks the slice lengths against `n = q.len()`. Error: [`Error::InvalidArg`].
    pub(super) fn new(xyz: &'a [f64], q: &'a [f64], phi: Option<&'o mut [f64]>, field: Option<&'o mut [f64]>) -> Result<Self> {
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
        Ok(Request { xyz, q, out: Outputs { phi, field } })
    }

    /// Number of particles.
    pub(super) fn len(&self) -> usize {
        self.q.len()
    }

    /// Whether the field is requested.
    pub(super) fn wants_field(&self) -> bool {
        self.out.wants_field()
    }

    /// Checks that every coordinate and charge is finite. Error: [`Error::NonFinite`] naming
    /// the first index.
    pub(super) fn check_finite(self, th: &Threads) -> Result<(Particles<'a>, Outputs<'o>)> {
        let Request { xyz, q, out } = self;
        if let Some(i) = th.find_first(xyz.len(), |i| !xyz[i].is_finite()) {
            return Err(Error::NonFinite(format!("xyz[{i}] (particle {}, coordinate {}) = {:e}", i / 3, i % 3, xyz[i])));
        }
        if let Some(i) = th.find_first(q.len(), |i| !q[i].is_finite()) {
            return Err(Error::NonFinite(format!("q[{i}] = {:e}", q[i])));
        }
        Ok((Particles { xyz, q }, out))
    }
}

/// The particles sorted into the octree in units of the root cube (`tree.size = 1`), and the
/// root cube's side in the caller's units, by which the results are scaled back.
pub(super) struct RootTree {
    pub(super) tree: Tree,
    /// The leaf size of an adaptive tree (`None`: uniform).
    pub(super) max_leaf: Option<usize>,
    side: f64,
    /// Lower corner of the root cube in the caller's units.
    lo: [f64; 3],
}

/// The levels that carry expansions, `top..=depth`: `top = 1` periodic (the lattice operator
/// acts between the level-1 boxes; for a rectangular box the level below its cubes,
/// `Tree::root_level + 1`), `top = 2` open (level-1 boxes are all neighbours). Exists
/// only for trees deep enough to have a far field.
#[derive(Debug, Clone, Copy)]
pub(super) struct Far {
    top: usize,
    depth: usize,
}

impl Far {
    /// The far levels of `tree`, or `None` (open tree of depth < 2: P2P only).
    pub(super) fn of(tree: &Tree) -> Option<Far> {
        let top = if tree.periodic { tree.root_level + 1 } else { 2 };
        (tree.depth >= top).then_some(Far { top, depth: tree.depth })
    }
}

/// Interaction lists of one tree.
pub(super) struct Lists {
    /// P2P source ranges, 27 per leaf ([`lists::p2p_lists`]).
    p2p: Vec<p2p::SourceRange>,
    /// M2L tiles per level (empty below [`Far::top`] and without a far field).
    m2l: Vec<Vec<lists::Tile>>,
}

/// Multipole expansions of every box at the far levels after P2M and M2M, per level in the
/// layout of the module documentation (`level[b·2nc + idx(l,m)]` real, `+ nc` imaginary);
/// levels above [`Far::top`] are empty.
pub(super) struct Multipoles(Vec<Vec<f64>>);

/// Local expansions of every box at the far levels after M2L (and the lattice operator), before
/// L2L; same layout as [`Multipoles`].
pub(super) struct Locals(Vec<Vec<f64>>);

/// Local expansions of the leaves after L2L (everything above them shifted down), ready for
/// L2P; leaf-major, same block layout as [`Multipoles`].
pub(super) struct LeafLocals(Vec<f64>);

/// Potentials and fields of the sorted particles in units of the root cube, accumulated by
/// L2P and P2P (zero at the start). The buffers are the plan workspace's, lent for one execute
/// ([`SortedOutputs::take`], [`SortedOutputs::give_back`]).
pub(super) struct SortedOutputs {
    phi: Vec<f64>,
    /// `[E_x, E_y, E_z]`, each of length `n`, when the field is requested.
    field: Option<[Vec<f64>; 3]>,
}

impl SortedOutputs {
    /// Zeroed outputs for `n` particles in the workspace's buffers (reserved by
    /// [`Workspace::reserve`]: no reallocation).
    pub(super) fn take(ws: &mut Workspace, n: usize, field: bool) -> Self {
        let zeroed = |v: &mut Vec<f64>| {
            let mut v = std::mem::take(v);
            v.clear();
            v.resize(n, 0.0);
            v
        };
        let phi = zeroed(&mut ws.phi);
        let field = field.then(|| [zeroed(&mut ws.ex), zeroed(&mut ws.ey), zeroed(&mut ws.ez)]);
        SortedOutputs { phi, field }
    }

    /// Returns the buffers to the workspace.
    pub(super) fn give_back(self, ws: &mut Workspace) {
        ws.phi = self.phi;
        if let Some([ex, ey, ez]) = self.field {
            (ws.ex, ws.ey, ws.ez) = (ex, ey, ez);
        }
    }

    /// Whether the field is requested.
    pub(super) fn wants_field(&self) -> bool {
        self.field.is_some()
    }

    /// Shared access for tasks that write disjoint particle ranges.
    pub(super) fn ranges(&mut self) -> Ranges<'_> {
        Ranges {
            phi: SyncPtr(self.phi.as_mut_ptr()),
            field: self.field.as_mut().map(|f| f.each_mut().map(|v| SyncPtr(v.as_mut_ptr()))),
            _out: PhantomData,
        }
    }
}

/// Pointers into a [`SortedOutputs`] for parallel tasks that own disjoint particle ranges
/// (leaves).
#[derive(Clone, Copy)]
pub(super) struct Ranges<'s> {
    phi: SyncPtr<f64>,
    field: Option<[SyncPtr<f64>; 3]>,
    _out: PhantomData<&'s mut SortedOutputs>,
}

/// The potential and (if requested) field components of one particle range.
pub(super) type RangeMut<'s> = (&'s mut [f64], Option<(&'s mut [f64], &'s mut [f64], &'s mut [f64])>);

impl<'s> Ranges<'s> {
    /// The outputs of particles `a..e`.
    ///
    /// # Safety
    /// `a ≤ e ≤ n`, and no two ranges in use at the same time overlap.
    pub(super) unsafe fn range(self, a: usize, e: usize) -> RangeMut<'s> {
        let part = |p: SyncPtr<f64>| std::slice::from_raw_parts_mut(p.0.add(a), e - a);
        (part(self.phi), self.field.map(|[x, y, z]| (part(x), part(y), part(z))))
    }
}

/// Zeroed per-level expansion arrays for the far levels of `tree` (`what` names them in the
/// allocation error). Error: [`Error::Alloc`].
fn expansion_levels(tree: &Tree, far: Far, nc2: usize, what: &str) -> Result<Vec<Vec<f64>>> {
    (0..=far.depth).map(|l| try_zeroed_vec(if l >= far.top { tree.levels[l].len() * nc2 } else { 0 }, what)).collect()
}

impl CpuFmm {
    /// Root cube (bounding cube, or the periodic box), depth (from the options or the cost
    /// model) and the particles sorted by leaf in units of the root cube. Errors:
    /// [`Error::InvalidArg`] (two particles coincide), [`Error::Range`], [`Error::Alloc`].
    pub(super) fn build_tree(&mut self, input: &Particles, allow_adaptive: bool) -> Result<RootTree> {
        if let Some((s, lat)) = &self.rect {
            return self.build_rect_tree(input, *s, lat.cells);
        }
        let (th, ws, p) = (&self.threads, &mut self.ws, self.p);
        let (xyz, q) = (input.xyz, input.q);
        let periodic = matches!(self.boundary, Boundary::Periodic { .. });
        let (mut lo, mut size) = match self.boundary {
            Boundary::Open => Tree::bounding_cube(th, xyz)?,
            Boundary::Periodic { side } => ([0.0; 3], side),
            Boundary::PeriodicBox { .. } => unreachable!("rectangular boxes take build_rect_tree"),
        };
        Tree::sort_keys(th, xyz, lo, size, periodic, ws)?;
        // coincident distinct particles (in the root cube at the plain origin, where x and x + L
        // fold onto the same value): the potential is infinite
        if let Some((i, j)) = Tree::find_coincident(xyz, lo, size, periodic, ws)? {
            let c = &xyz[3 * i..3 * i + 3];
            return Err(coincident_error(i, j, [c[0], c[1], c[2]], periodic));
        }
        let m2l_top = if periodic { 1 } else { 2 };
        let choice = match (self.opts.depth, self.opts.tree) {
            (Some(d), _) => params::TreeChoice::Uniform(d),
            (None, TreeKind::Adaptive { max_leaf }) if allow_adaptive && max_leaf > 0 => params::TreeChoice::Adaptive(max_leaf),
            (None, TreeKind::Adaptive { .. }) if allow_adaptive => params::TreeChoice::Adaptive(params::choose_max_leaf(&ws.keys, p)?),
            (None, TreeKind::Auto) if allow_adaptive && !periodic => params::choose_tree(&ws.keys, p)?,
            (None, _) => params::TreeChoice::Uniform(params::choose_depth(&ws.keys, p, m2l_top)),
        };
        let depth = match choice {
            params::TreeChoice::Adaptive(s) => {
                let tree = Tree::build_adaptive(th, xyz, q, lo, size, ws, s)?;
                return Ok(RootTree { tree, side: size, lo, max_leaf: Some(s) });
            }
            // periodic trees have at least one level (the lattice operator acts between level-1 boxes)
            params::TreeChoice::Uniform(d) => d.max(if periodic { 1 } else { 0 }),
        };
        // keep lattices off the box corners (tree::periodic_origin, tree::open_cube)
        let (o, s) = if periodic { (tree::periodic_origin(th, xyz, size, depth, p), size) } else { tree::open_cube(th, xyz, lo, size, depth, p) };
        if o != lo || s != size {
            (lo, size) = (o, s);
            Tree::sort_keys(th, xyz, lo, size, periodic, ws)?;
        }
        let tree = Tree::build(th, xyz, q, lo, size, periodic, ws, depth)?;
        Ok(RootTree { tree, side: size, lo, max_leaf: None })
    }

    /// [`Self::build_tree`] for a rectangular box of `cells` cubes of side `s` per side: the
    /// root cube has side `2^e s` (`e` = [`periodic::root_level`]) and holds the box
    /// `[0, n_d s)` in its lower corner; the cubes are the boxes of level `e`, the tree wraps at
    /// every level ≥ `e` with `n_d 2^{l−e}` boxes per period, and its depth is `e + D` (`D` from
    /// the options, or the cost model over the levels below the cubes, at least 1).
    fn build_rect_tree(&mut self, input: &Particles, s: f64, cells: [u64; 3]) -> Result<RootTree> {
        let (th, ws, p) = (&self.threads, &mut self.ws, self.p);
        let (xyz, q) = (input.xyz, input.q);
        let e = periodic::root_level(cells);
        let size = s * (1u64 << e) as f64;
        // the periods n_d s, lowered by an ulp where n_d s rounded up, so that the folded unit
        // coordinates stay below n_d 2^{−e} and every key inside the box's 2n_d boxes per axis
        let periods: [f64; 3] = std::array::from_fn(|d| {
            let mut l = cells[d] as f64 * s;
            while l / size > cells[d] as f64 / (1u64 << e) as f64 {
                l = l.next_down();
            }
            l
        });
        if !(size.is_finite() && periods.iter().all(|l| l.is_finite())) {
            return Err(Error::Range(format!("periodic box of cubes of side {s:e}: the tree's root cube (side {size:e}) overflows")));
        }
        let mut lo = [0.0; 3];
        Tree::sort_keys_in(th, xyz, lo, size, Some(periods), ws)?;
        if let Some((i, j)) = Tree::find_coincident_in(xyz, lo, size, Some(periods), ws)? {
            let c = &xyz[3 * i..3 * i + 3];
            return Err(coincident_error(i, j, [c[0], c[1], c[2]], true));
        }
        let depth = match self.opts.depth {
            Some(d) => e + d.max(1),
            None => params::choose_depth(&ws.keys, p, e + 1).max(e + 1),
        };
        let (ns, stride) = tree::origin_sample(q.len());
        let o = tree::periodic_origin_in(th, xyz, ns, stride, periods, s, depth - e, p);
        if o != lo {
            lo = o;
            Tree::sort_keys_in(th, xyz, lo, size, Some(periods), ws)?;
        }
        let pc = tree::PeriodicCells { periods, root_level: e, cells };
        let tree = Tree::build_in(th, xyz, q, lo, size, Some(pc), ws, depth)?;
        Ok(RootTree { tree, side: size, lo, max_leaf: None })
    }

    /// Stages 3–5 on a built tree: interaction lists, the far field (if the tree has one) and
    /// the near field, accumulated into `out`; the stage times go to `times`. Error:
    /// [`Error::Alloc`].
    pub(super) fn evaluate(&self, tree: &Tree, out: &mut SortedOutputs, times: &mut StageTimes) -> Result<()> {
        if tree.is_adaptive() {
            return self.evaluate_adaptive(tree, out, times);
        }
        let t = Instant::now();
        let lists = self.interaction_lists(tree)?;
        times.lists = t.elapsed().as_secs_f64();
        if let Some(far) = Far::of(tree) {
            let mp = self.upward(tree, far, times)?;
            let t = Instant::now();
            let loc = self.m2l(tree, far, &lists, &mp)?;
            times.m2l = t.elapsed().as_secs_f64();
            let t = Instant::now();
            let leaf = self.downward(tree, far, loc);
            times.l2l = t.elapsed().as_secs_f64();
            let t = Instant::now();
            self.l2p(tree, &leaf, out);
            times.l2p = t.elapsed().as_secs_f64();
        }
        let t = Instant::now();
        self.p2p(tree, &lists, out);
        times.p2p = t.elapsed().as_secs_f64();
        Ok(())
    }

    /// P2P ranges of every leaf and, at the far levels, the M2L tiles. Error: [`Error::Alloc`].
    fn interaction_lists(&self, tree: &Tree) -> Result<Lists> {
        let th = &self.threads;
        let p2p = lists::p2p_lists(th, tree)?;
        let far = Far::of(tree);
        let m2l = (0..=tree.depth)
            .map(|l| match far {
                Some(f) if l >= f.top => lists::m2l_tiles(th, tree, l),
                _ => Ok(Vec::new()),
            })
            .collect::<Result<_>>()?;
        Ok(Lists { p2p, m2l })
    }

    /// Upward pass: P2M at the leaves, then M2M level by level up to [`Far::top`] (times in
    /// `times.p2m`, `times.m2m`). Error: [`Error::Alloc`].
    fn upward(&self, tree: &Tree, far: Far, times: &mut StageTimes) -> Result<Multipoles> {
        let (th, p, depth) = (&self.threads, self.p, far.depth);
        let nc2 = 2 * ncoef(p);
        let mut mp = expansion_levels(tree, far, nc2, "FMM multipole expansions")?;

        let t = Instant::now();
        let hd = tree.h(depth);
        let reg = &self.reg;
        const G: usize = 8;
        th.chunks(&mut mp[depth], G * nc2, |ci, chunk| {
            let mut s = p2m::LaneScratch::new(p);
            for (o, blk) in chunk.chunks_mut(nc2).enumerate() {
                let b = ci * G + o;
                let (a, e) = (tree.leaf_start[b] as usize, tree.leaf_start[b + 1] as usize);
                let c = tree.center(depth, tree.levels[depth].keys[b]);
                p2m::p2m(reg, &tree.x[a..e], &tree.y[a..e], &tree.z[a..e], &tree.q[a..e], c, 1.0 / hd, blk, &mut s);
            }
        });
        times.p2m = t.elapsed().as_secs_f64();

        let t = Instant::now();
        for l in (far.top..depth).rev() {
            let (up, down) = mp.split_at_mut(l + 1);
            self.m2m_level(tree, l, &mut up[l], &down[0]);
        }
        times.m2m = t.elapsed().as_secs_f64();
        Ok(Multipoles(mp))
    }

    /// Multipoles → locals: the level-1 lattice operator (periodic: far images, between all
    /// pairs of level-1 boxes), then M2L over the tiles of every far level. Error:
    /// [`Error::Alloc`].
    fn m2l(&self, tree: &Tree, far: Far, lists: &Lists, mp: &Multipoles) -> Result<Locals> {
        let (th, p) = (&self.threads, self.p);
        let nc2 = 2 * ncoef(p);
        let mp = &mp.0;
        let mut loc = expansion_levels(tree, far, nc2, "FMM local expansions")?;
        if let Some((_, rl)) = &self.rect {
            // rectangular box: between all pairs of boxes of the level below the cubes
            let top = far.top;
            let lev = &tree.levels[top];
            let (src, dst) = (&mp[top], &mut loc[top]);
            th.chunks(dst, nc2, |t, blk| {
                let ct = tree::decode(lev.keys[t]);
                for (s, &ks) in lev.keys.iter().enumerate() {
                    let (t, pe) = rl.tensor(ct, tree::decode(ks));
                    m2l::m2l_tensor_order(p, pe, &src[s * nc2..(s + 1) * nc2], t, blk);
                }
            });
        }
        if let Some(lat) = &self.lattice {
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
        for l in far.top..=far.depth {
            self.m2l_level(&lists.m2l[l], &mp[l], &mut loc[l]);
        }
        Ok(Locals(loc))
    }

    /// Downward pass: L2L from [`Far::top`] to the leaves; keeps the leaves' locals.
    fn downward(&self, tree: &Tree, far: Far, loc: Locals) -> LeafLocals {
        let mut loc = loc.0;
        for l in far.top..far.depth {
            let (up, down) = loc.split_at_mut(l + 1);
            self.l2l_level(tree, l, &up[l], &mut down[0]);
        }
        LeafLocals(loc.swap_remove(far.depth))
    }

    /// M2M: the multipoles of level `l + 1` (`ch`) shifted to their parents at level `l` and
    /// added to `par` (boxes without children get nothing).
    pub(super) fn m2m_level(&self, tree: &Tree, l: usize, par: &mut [f64], ch: &[f64]) {
        let (th, p) = (&self.threads, self.p);
        let nc2 = 2 * ncoef(p);
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
            if children.iter().all(|cs| cs.iter().all(|&c| c == m2l::NONE)) {
                return;
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

    /// M2L over the tiles `ts` of one level: multipoles `src` → locals added to `dst`.
    pub(super) fn m2l_level(&self, ts: &[lists::Tile], src: &[f64], dst: &mut [f64]) {
        let (th, p) = (&self.threads, self.p);
        let nc2 = 2 * ncoef(p);
        let dst = SyncPtr(dst.as_mut_ptr());
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

    /// L2L: the locals of level `l` (`par`) shifted to their children at level `l + 1` and
    /// added to `ch`.
    pub(super) fn l2l_level(&self, tree: &Tree, l: usize, par: &[f64], ch: &mut [f64]) {
        let (th, p) = (&self.threads, self.p);
        let nc2 = 2 * ncoef(p);
        let ch = SyncPtr(ch.as_mut_ptr());
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
            if children.iter().all(|cs| cs.iter().all(|&c| c == m2l::NONE)) {
                return;
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

    /// L2P: the leaves' local expansions evaluated at their particles (and their gradients for
    /// the field), added to `out`.
    fn l2p(&self, tree: &Tree, leaf: &LeafLocals, out: &mut SortedOutputs) {
        let (th, p, reg) = (&self.threads, self.p, &self.reg);
        let nc2 = 2 * ncoef(p);
        let depth = tree.depth;
        let hd = tree.h(depth);
        let want_field = out.field.is_some();
        let nl = tree.nleaves();
        let ranges = out.ranges();
        let leaf_loc = &leaf.0;
        const LG: usize = 16;
        th.for_each(nl.div_ceil(LG), |ci| {
            let mut s = p2m::LaneScratch::new(p);
            let mut co = l2p::EvalCoefs::new(p);
            for b in ci * LG..((ci + 1) * LG).min(nl) {
                let (a, e) = (tree.leaf_start[b] as usize, tree.leaf_start[b + 1] as usize);
                co.set(p, &leaf_loc[b * nc2..(b + 1) * nc2], want_field);
                let c = tree.center(depth, tree.levels[depth].keys[b]);
                // SAFETY: leaves own disjoint particle ranges a..e ⊂ 0..n.
                let (ph, g) = unsafe { ranges.range(a, e) };
                l2p::l2p(reg, &co, &tree.x[a..e], &tree.y[a..e], &tree.z[a..e], c, hd, ph, g, &mut s);
            }
        });
    }

    /// P2P: the direct interactions of every leaf with its 27 neighbour leaves, added to `out`.
    fn p2p(&self, tree: &Tree, lists: &Lists, out: &mut SortedOutputs) {
        let th = &self.threads;
        let nl = tree.nleaves();
        let ranges = out.ranges();
        let pt = p2p::Particles { x: &tree.x, y: &tree.y, z: &tree.z, q: &tree.q };
        let src = &lists.p2p;
        const LG: usize = 8;
        th.for_each(nl.div_ceil(LG), |ci| {
            for b in ci * LG..((ci + 1) * LG).min(nl) {
                let (a, e) = (tree.leaf_start[b] as usize, tree.leaf_start[b + 1] as usize);
                // SAFETY: leaves own disjoint particle ranges a..e ⊂ 0..n.
                let (ph, g) = unsafe { ranges.range(a, e) };
                p2p::p2p(pt, a, e, &src[27 * b..27 * b + 27], ph, g);
            }
        });
    }

    /// Stage 6: the periodic background correction, the results back to the caller's units
    /// (checked first), then written to the caller's outputs in the caller's order; returns
    /// the energy. Nothing is written on error ([`Error::Range`], see [`to_caller_units`]).
    pub(super) fn finish(&self, root: &RootTree, sorted: &mut SortedOutputs, out: Outputs) -> Result<f64> {
        let (th, tree) = (&self.threads, &root.tree);
        let n = tree.q.len();
        if tree.periodic {
            let g = sorted.field.as_mut().map(|[x, y, z]| (&mut x[..], &mut y[..], &mut z[..]));
            if self.rect.is_some() {
                let volume = tree.period(0) * tree.period(1) * tree.period(2);
                periodic::background_correction_at(tree, tree.root_level + 1, volume, &mut sorted.phi, g);
            } else {
                periodic::background_correction(tree, 1.0, &mut sorted.phi, g);
            }
        }
        let energy = to_caller_units(th, root.side, &tree.q, &mut sorted.phi, sorted.field.as_mut())?;
        let perm = &tree.perm;
        if let Some(dst) = out.phi {
            let o = SyncPtr(dst.as_mut_ptr());
            let ps = &sorted.phi;
            th.for_each(n.div_ceil(4096), |ci| {
                let o = o;
                for i in ci * 4096..((ci + 1) * 4096).min(n) {
                    // SAFETY: perm is a permutation, so the writes are disjoint.
                    unsafe { *o.0.add(perm[i] as usize) = ps[i] };
                }
            });
        }
        if let (Some(dst), Some([a, b, c])) = (out.field, &sorted.field) {
            let o = SyncPtr(dst.as_mut_ptr());
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
        Ok(energy)
    }
}

/// The intermediate results of one CPU execute, stage by stage (for the stage-by-stage tests
/// of the GPU port, `gpu::fmm`; not a stable interface). Expansions per level in the layout of
/// the module documentation (box-major blocks of `2·ncoef(p)`; levels above `top` empty);
/// potentials and fields in the tree's sorted order and in units of the root cube (before
/// the periodic background correction and the scaling of [`CpuFmm::finish`]).
#[doc(hidden)]
pub struct StageDump {
    /// The tree in units of the root cube (`tree.lo = 0`, `tree.size = 1`).
    pub tree: Tree,
    /// Root cube side in the caller's units.
    pub side: f64,
    /// Root cube lower corner in the caller's units.
    pub lo: [f64; 3],
    /// First level that carries expansions (0 when the tree has no far field).
    pub top: usize,
    /// Multipoles after P2M and M2M, per level.
    pub multipoles: Vec<Vec<f64>>,
    /// Locals after M2L (and the periodic lattice operator), before L2L, per level.
    pub locals: Vec<Vec<f64>>,
    /// Leaf locals after L2L.
    pub leaf_locals: Vec<f64>,
    /// L2P alone: potentials and `[E_x, E_y, E_z]`.
    pub far: (Vec<f64>, [Vec<f64>; 3]),
    /// P2P alone: potentials and `[E_x, E_y, E_z]`.
    pub near: (Vec<f64>, [Vec<f64>; 3]),
}

impl CpuFmm {
    /// Runs stages 1–5 of [`CpuFmm::execute`] on `n = q.len()` particles (`xyz` interleaved,
    /// `3n`; `n ≥ 1`) and returns every intermediate result ([`StageDump`]). Errors: those of
    /// [`CpuFmm::execute`].
    #[doc(hidden)]
    pub fn stage_dump(&mut self, xyz: &[f64], q: &[f64]) -> Result<StageDump> {
        let n = q.len();
        if n == 0 {
            return Err(Error::InvalidArg("stage_dump needs at least one particle".into()));
        }
        let request = Request::new(xyz, q, None, None)?;
        self.reserve(n, true)?;
        let (particles, _) = request.check_finite(&self.threads)?;
        let root = self.build_tree(&particles, false)?;
        let tree = &root.tree;
        let lists = self.interaction_lists(tree)?;
        let zeroed = || -> Result<SortedOutputs> {
            let z = || try_zeroed_vec(n, "the FMM stage dump");
            Ok(SortedOutputs { phi: z()?, field: Some([z()?, z()?, z()?]) })
        };
        let (mut far_out, mut near_out) = (zeroed()?, zeroed()?);
        let (mut multipoles, mut locals, mut leaf_locals, mut top) = (Vec::new(), Vec::new(), Vec::new(), 0);
        if let Some(far) = Far::of(tree) {
            let mp = self.upward(tree, far, &mut StageTimes::default())?;
            let loc = self.m2l(tree, far, &lists, &mp)?;
            locals = loc.0.clone();
            let leaf = self.downward(tree, far, loc);
            self.l2p(tree, &leaf, &mut far_out);
            (multipoles, leaf_locals, top) = (mp.0, leaf.0, far.top);
        }
        self.p2p(tree, &lists, &mut near_out);
        let split = |o: SortedOutputs| (o.phi, o.field.expect("requested above"));
        Ok(StageDump { side: root.side, lo: root.lo, top, multipoles, locals, leaf_locals, far: split(far_out), near: split(near_out), tree: root.tree })
    }
}

/// The error for particles `i < j` (caller's indices) that coincide at `c`. Shared by the CPU
/// and GPU trees.
pub(crate) fn coincident_error(i: usize, j: usize, c: [f64; 3], periodic: bool) -> Error {
    Error::InvalidArg(format!(
        "particles {i} and {j} coincide (at ({:e}, {:e}, {:e}){}): their interaction is infinite; merge them or remove one",
        c[0],
        c[1],
        c[2],
        if periodic { ", up to a period" } else { "" }
    ))
}

/// [`Error::Range`] when a requested output would underflow entirely on the way to the
/// caller's units: `mp`, `mf` are the largest magnitudes of the potentials and fields in units
/// of the root cube of side `size` (0 when not requested or all zero); potentials scale like
/// `1/size`, fields like `1/size²`. Shared by the CPU and GPU finish stages.
pub(crate) fn check_underflow(mp: f64, mf: f64, size: f64) -> Result<()> {
    let under = |m: f64, scaled: f64| m > 0.0 && m.is_finite() && scaled < f64::MIN_POSITIVE;
    let underflow = if under(mp, mp / size) {
        Some(("potentials", mp / size))
    } else if under(mf, mf / size / size) {
        Some(("fields", mf / size / size))
    } else {
        None
    };
    match underflow {
        Some((what, v)) => Err(Error::Range(format!(
            "the {what} underflow (largest magnitude {v:e}, below the smallest normal double) at box side {size:e}: potentials scale like 1/side, fields like 1/side²"
        ))),
        None => Ok(()),
    }
}

/// Takes the sorted outputs of an execute from units of the root cube (side `size`) to the
/// caller's: `φ = φ'/s`, `E = E'/s²`, and returns the energy `½ Σ_i q_i φ_i` (`q` the sorted
/// charges). A requested output whose every value underflows (zero or subnormal: nothing
/// representable left) or any value that is not finite is an [`Error::Range`] (the caller then
/// writes nothing).
fn to_caller_units(th: &Threads, size: f64, q: &[f64], phi: &mut [f64], field: Option<&mut [Vec<f64>; 3]>) -> Result<f64> {
    let field: &mut [Vec<f64>] = match field {
        Some(f) => f,
        None => &mut [],
    };
    let amax = |v: &[f64]| crate::scale::max_abs(0.0, v);
    let (mp, mf) = (amax(phi), field.iter().map(|v| amax(v)).fold(0.0, f64::max));
    check_underflow(mp, mf, size)?;
    th.chunks(phi, 4096, |_, c| c.iter_mut().for_each(|v| *v /= size));
    for v in field.iter_mut() {
        th.chunks(v, 4096, |_, c| c.iter_mut().for_each(|v| *v = *v / size / size));
    }
    let energy = {
        let phi = &*phi;
        0.5 * th.sum(q.len(), |i| q[i] * phi[i])
    };
    // a result that is not finite is never returned with success
    let components = ["the field x component (sorted order)", "the field y component (sorted order)", "the field z component (sorted order)"];
    ensure_finite(phi, "the potential (sorted order)")
        .and_then(|_| field.iter().zip(components).try_for_each(|(v, what)| ensure_finite(v, what)))
        .and_then(|_| ensure_finite(&[energy], "the energy"))
        .map_err(|e| {
            Error::Range(format!(
                "{} (box side {size:e}: potentials scale like 1/side, fields like 1/side²; or charges too large)",
                e.message()
            ))
        })?;
    Ok(energy)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fmm::FmmOpts;
    use rand::{Rng, SeedableRng};

    fn particles(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let xyz = (0..3 * n).map(|_| rng.gen_range(0.0..2.0)).collect();
        let q = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
        (xyz, q)
    }

    #[test]
    fn far_levels_follow_the_boundary() {
        let tree = |depth, periodic| Tree { depth, periodic, ..Default::default() };
        assert!(Far::of(&tree(0, false)).is_none() && Far::of(&tree(1, false)).is_none());
        let f = Far::of(&tree(3, false)).unwrap();
        assert_eq!((f.top, f.depth), (2, 3));
        let f = Far::of(&tree(1, true)).unwrap();
        assert_eq!((f.top, f.depth), (1, 1));
    }

    #[test]
    fn to_caller_units_scales_and_sums() {
        let th = Threads::new(1).unwrap();
        let (q, mut phi) = (vec![1.0, -2.0], vec![4.0, 8.0]);
        let mut field = [vec![2.0, 4.0], vec![-6.0, 0.0], vec![8.0, 2.0]];
        let u = to_caller_units(&th, 2.0, &q, &mut phi, Some(&mut field)).unwrap();
        assert_eq!(phi, [2.0, 4.0]);
        assert_eq!(field, [vec![0.5, 1.0], vec![-1.5, 0.0], vec![2.0, 0.5]]);
        assert_eq!(u, 0.5 * (2.0 - 8.0));
        let mut bad = vec![f64::INFINITY, 1.0];
        assert!(matches!(to_caller_units(&th, 2.0, &q, &mut bad, None), Err(Error::Range(_))));
    }

    /// A plan's reused workspace (after a field run on more particles and after a failed
    /// execute) gives bit for bit the results of a fresh plan: every stage starts from zeroed
    /// outputs and the buffers come back on every path.
    #[test]
    fn reused_workspace_matches_a_fresh_plan() {
        let opts = FmmOpts { nthreads: 1, depth: Some(3), ..Default::default() };
        let (xyz1, q1) = particles(900, 1);
        let (xyz2, q2) = particles(500, 2);
        let run = |plan: &mut CpuFmm, xyz: &[f64], q: &[f64], field: bool| {
            let mut phi = vec![0.0; q.len()];
            let mut f = vec![0.0; 3 * q.len()];
            let u = plan.execute(xyz, q, Some(&mut phi), field.then_some(&mut f[..])).unwrap();
            (phi, f, u)
        };
        for boundary in [Boundary::Open, Boundary::Periodic { side: 2.0 }] {
            let mut fresh = CpuFmm::new(boundary, 1e-6, &opts).unwrap();
            let want = run(&mut fresh, &xyz2, &q2, false);
            let want_field = run(&mut CpuFmm::new(boundary, 1e-6, &opts).unwrap(), &xyz2, &q2, true);
            let mut reused = CpuFmm::new(boundary, 1e-6, &opts).unwrap();
            run(&mut reused, &xyz1, &q1, true);
            assert_eq!(run(&mut reused, &xyz2, &q2, false), want, "{boundary:?}");
            let mut twice = xyz2.clone();
            twice[3..6].copy_from_slice(&xyz2[..3]);
            assert!(reused.execute(&twice, &q2, None, None).is_err(), "coincident particles");
            assert_eq!(run(&mut reused, &xyz2, &q2, true), want_field, "{boundary:?}");
            assert_eq!(run(&mut reused, &xyz2, &q2, true), want_field, "{boundary:?}");
        }
    }
}
