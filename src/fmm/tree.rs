//! The octree: a uniform octree of depth `D` on a cube (the bounding cube of the particles for
//! open boundaries, the periodic box otherwise), stored sparsely — per level only the occupied
//! boxes, in Morton order — with the particles sorted by leaf in Morton order (the permutation
//! is kept so that results go back to the caller's order).
//!
//! Morton keys interleave the box coordinates bitwise, x in bit 0, y in bit 1, z in bit 2 of
//! every triple, so the key of a box's parent is `key >> 3` and `key & 7` is the box's octant
//! in its parent (`ox + 2 oy + 4 oz`). Particles are keyed once at [`KEY_DEPTH`] bits per axis
//! and sorted by an LSD radix sort; any depth `D ≤ KEY_DEPTH` is a prefix of that order.

use crate::error::{try_filled_vec, try_grow, try_vec, Error, Result};
use crate::threads::{SyncPtr, Threads};

/// Bits per axis of the particle keys (the deepest possible tree).
pub(crate) const KEY_DEPTH: usize = 20;

/// Largest level for which a dense key → box map is kept (8^7 entries = 8 MiB).
const DENSE_MAX_LEVEL: usize = 7;

/// Spreads the low 21 bits of `x` to every third bit.
#[inline(always)]
pub fn part1by2(x: u64) -> u64 {
    let mut x = x & 0x1f_ffff;
    x = (x | x << 32) & 0x1f_0000_0000_ffff;
    x = (x | x << 16) & 0x1f_0000_ff00_00ff;
    x = (x | x << 8) & 0x100f_00f0_0f00_f00f;
    x = (x | x << 4) & 0x10c3_0c30_c30c_30c3;
    x = (x | x << 2) & 0x1249_2492_4924_9249;
    x
}

/// Inverse of [`part1by2`].
#[inline(always)]
pub fn compact1by2(x: u64) -> u64 {
    let mut x = x & 0x1249_2492_4924_9249;
    x = (x | x >> 2) & 0x10c3_0c30_c30c_30c3;
    x = (x | x >> 4) & 0x100f_00f0_0f00_f00f;
    x = (x | x >> 8) & 0x1f_0000_ff00_00ff;
    x = (x | x >> 16) & 0x1f_0000_0000_ffff;
    x = (x | x >> 32) & 0x1f_ffff;
    x
}

/// Morton key of integer box coordinates.
#[inline(always)]
pub fn encode(c: [u64; 3]) -> u64 {
    part1by2(c[0]) | part1by2(c[1]) << 1 | part1by2(c[2]) << 2
}

/// Integer box coordinates of a Morton key.
#[inline(always)]
pub fn decode(k: u64) -> [u64; 3] {
    [compact1by2(k), compact1by2(k >> 1), compact1by2(k >> 2)]
}

/// A periodic box made of cubes, as the tree sees it ([`Tree::build_in`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct PeriodicCells {
    /// The box's sides in the caller's units (the fold lengths of [`unit_coord_in`]).
    pub periods: [f64; 3],
    /// The level whose boxes are the cubes ([`Tree::root_level`]).
    pub root_level: usize,
    /// Cubes per side ([`Tree::cells`]).
    pub cells: [u64; 3],
}

/// The occupied boxes of one level.
#[derive(Debug, Default)]
pub struct Level {
    /// Morton keys of the occupied boxes, increasing.
    pub keys: Vec<u64>,
    /// For levels above the leaves: `child_start[b]..child_start[b+1]` are `b`'s children in
    /// the next level (length `keys.len() + 1`); empty at the leaf level.
    pub child_start: Vec<u32>,
    /// Parent (index in the previous level) of every box; empty at level 0.
    pub parent: Vec<u32>,
    /// Adaptive trees ([`Tree::build_adaptive`]): `range[b] = [a, e]`, box `b`'s sorted
    /// particles are `a..e`; empty in uniform trees.
    pub range: Vec<[u32; 2]>,
    /// Dense map key → index (`u32::MAX` where empty), for shallow levels; empty otherwise.
    map: Vec<u32>,
}

impl Level {
    /// Index of the occupied box with key `k`, if any.
    #[inline]
    pub fn find(&self, k: u64) -> Option<usize> {
        if !self.map.is_empty() {
            let i = self.map[k as usize];
            (i != u32::MAX).then_some(i as usize)
        } else {
            self.keys.binary_search(&k).ok()
        }
    }

    /// Number of occupied boxes.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Whether box `b` has no children (every box of the deepest level; in adaptive trees also
    /// the boxes that were not split).
    #[inline]
    pub fn is_leaf(&self, b: usize) -> bool {
        self.child_start.is_empty() || self.child_start[b] == self.child_start[b + 1]
    }

    /// Fills the dense key → index map of level `l` (levels ≤ [`DENSE_MAX_LEVEL`]).
    fn index(&mut self, l: usize) -> Result<()> {
        if l <= DENSE_MAX_LEVEL {
            let mut map = try_filled_vec(1usize << (3 * l), u32::MAX, "the FMM box map")?;
            for (i, &k) in self.keys.iter().enumerate() {
                map[k as usize] = i as u32;
            }
            self.map = map;
        }
        Ok(())
    }
}

/// Particles sorted into a uniform octree.
#[derive(Debug, Default)]
pub struct Tree {
    /// Depth `D` (leaves at level `D`).
    pub depth: usize,
    /// Lower corner of the root cube.
    pub lo: [f64; 3],
    /// Side of the root cube.
    pub size: f64,
    /// Periodic boundaries (the root cube is the periodic box, or for a rectangular box the
    /// power-of-two cube that holds its `cells` cubes at level `root_level`).
    pub periodic: bool,
    /// Periodic trees: the level whose boxes are the cubes the periodic box is made of (0 for a
    /// cubic box: the root; `e` with `2^e ≥ max cells` for a rectangular one). The periodic box
    /// is `[0, cells_d·2^{−e})` along axis `d` in units of the root cube; levels above it carry
    /// no expansions. 0 for open trees.
    pub root_level: usize,
    /// Periodic trees: the number of cubes along each side of the periodic box (`[1, 1, 1]`
    /// for a cubic box).
    pub cells: [u64; 3],
    /// Sorted x coordinates (folded into the box when periodic).
    pub x: Vec<f64>,
    /// Sorted y coordinates.
    pub y: Vec<f64>,
    /// Sorted z coordinates.
    pub z: Vec<f64>,
    /// Sorted charges.
    pub q: Vec<f64>,
    /// `perm[i]` = caller's index of sorted particle `i`.
    pub perm: Vec<u32>,
    /// Levels `0..=D`.
    pub levels: Vec<Level>,
    /// `leaf_start[b]..leaf_start[b+1]` are the sorted particles of leaf `b` (length nleaves + 1):
    /// the boxes of level `D` in a uniform tree, every leaf in particle (Morton) order in an
    /// adaptive one.
    pub leaf_start: Vec<u32>,
    /// Adaptive trees ([`Tree::build_adaptive`]): `[level, index]` of leaf `b` (the order of
    /// `leaf_start`); empty in uniform trees.
    pub leaves: Vec<[u32; 2]>,
}

/// Per-plan buffers of size `n`, kept between executes (no reallocation, no page faults on
/// repeated calls) and reserved before any input is read, so that a too large `n` fails
/// cleanly with [`Error::Alloc`].
#[derive(Debug, Default)]
pub struct Workspace {
    /// Particle keys at [`KEY_DEPTH`], sorted by [`Tree::sort_keys`].
    pub keys: Vec<u64>,
    keys2: Vec<u64>,
    /// `perm[i]` = caller's index of the particle with the `i`-th key.
    pub perm: Vec<u32>,
    perm2: Vec<u32>,
    /// Sorted coordinates and charges (moved into the [`Tree`] while it lives).
    pub x: Vec<f64>,
    /// Sorted y.
    pub y: Vec<f64>,
    /// Sorted z.
    pub z: Vec<f64>,
    /// Sorted charges.
    pub q: Vec<f64>,
    /// Potentials in sorted order.
    pub phi: Vec<f64>,
    /// Field in sorted order (x components; empty without field).
    pub ex: Vec<f64>,
    /// y components.
    pub ey: Vec<f64>,
    /// z components.
    pub ez: Vec<f64>,
}

/// Physical memory in bytes, where known.
fn physical_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        // SAFETY: sysconf has no preconditions.
        let (pages, size) = unsafe { (libc::sysconf(libc::_SC_PHYS_PAGES), libc::sysconf(libc::_SC_PAGESIZE)) };
        if pages > 0 && size > 0 {
            return Some(pages as u64 * size as u64);
        }
    }
    None
}

fn reserve_vec<T>(v: &mut Vec<T>, n: usize) -> Result<()> {
    v.clear();
    v.try_reserve_exact(n).map_err(|_| {
        Error::Alloc(format!("could not allocate the FMM work arrays for n = {n} particles ({} bytes each)", n.saturating_mul(std::mem::size_of::<T>())))
    })
}

impl Workspace {
    /// Makes sure every buffer can hold `n` particles (the field buffers only with `field`).
    pub fn reserve(&mut self, n: usize, field: bool) -> Result<()> {
        // refuse up front what cannot fit in physical memory (with overcommit, the reservations
        // alone might succeed and the process be killed later)
        let per = 2 * 8 + 2 * 4 + 5 * 8 + if field { 3 * 8 } else { 0 };
        let need = (n as u128) * per as u128;
        if let Some(mem) = physical_memory() {
            if need > mem as u128 {
                return Err(Error::Alloc(format!(
                    "could not allocate the FMM work arrays for n = {n} particles: {need} bytes exceed the machine's {mem} bytes of memory"
                )));
            }
        }
        reserve_vec(&mut self.keys, n)?;
        reserve_vec(&mut self.keys2, n)?;
        reserve_vec(&mut self.perm, n)?;
        reserve_vec(&mut self.perm2, n)?;
        for v in [&mut self.x, &mut self.y, &mut self.z, &mut self.q, &mut self.phi] {
            reserve_vec(v, n)?;
        }
        let nf = if field { n } else { 0 };
        for v in [&mut self.ex, &mut self.ey, &mut self.ez] {
            reserve_vec(v, nf)?;
        }
        Ok(())
    }

    /// Takes the sorted particle arrays back from a tree.
    pub fn restore(&mut self, t: Tree) {
        self.x = t.x;
        self.y = t.y;
        self.z = t.z;
        self.q = t.q;
        self.perm = t.perm;
    }
}

/// Folds `x` into `[0, l)`.
#[inline(always)]
pub fn fold(x: f64, l: f64) -> f64 {
    let y = x - l * (x / l).floor();
    if y >= l || y < 0.0 {
        0.0
    } else {
        y
    }
}

/// The coordinate `p` in units of the root cube `[lo, lo + size)`: `(p − lo)/size`, folded into
/// `[0, 1)` when periodic. The tree stores these (so that its arithmetic does not depend on the
/// caller's length scale) and the keys are computed from them.
#[inline(always)]
pub fn unit_coord(p: f64, lo: f64, size: f64, periodic: bool) -> f64 {
    unit_coord_in(p, lo, size, periodic.then_some(size))
}

/// [`unit_coord`] with the period `period` (caller's units) along this axis: `None` = open,
/// `Some(l)` folds `p − lo` into `[0, l)` and returns it in units of `size`, in
/// `[0, l/size)` (a rectangular periodic box inside its root cube). `Some(size)` is
/// [`unit_coord`]'s periodic case, operation for operation.
#[inline(always)]
pub fn unit_coord_in(p: f64, lo: f64, size: f64, period: Option<f64>) -> f64 {
    match period {
        Some(l) => {
            let u = fold(p - lo, l) / size;
            if u < l / size {
                u
            } else {
                0.0
            }
        }
        None => (p - lo) / size,
    }
}

/// The per-axis periods of a tree for [`unit_coord_in`]: `None` (open) or the box's sides.
pub type Periods = Option<[f64; 3]>;

/// The period of axis `d` of `periods`.
#[inline(always)]
fn axis(periods: Periods, d: usize) -> Option<f64> {
    periods.map(|l| l[d])
}

/// The open root cube from the per-axis bounds `lo`, `hi` of the (finite) coordinates: the
/// bounding cube, enlarged so that the largest coordinate falls strictly inside (side
/// `ext·(1 + 1e-9) + scale·1e-14`, `ext` the largest extent, `scale` the largest magnitude), or a
/// cube of side `max(scale, 1)` when all particles coincide; centred on the bounds. Returns
/// (lower corner, side). Error: [`Error::Range`] when the side is not a finite normal double
/// (the extent overflows or underflows). Shared by [`Tree::bounding_cube`] and the GPU tree.
pub fn cube_from_bounds(lo: [f64; 3], hi: [f64; 3]) -> Result<([f64; 3], f64)> {
    let ext = (0..3).map(|d| hi[d] - lo[d]).fold(0.0, f64::max);
    let scale = (0..3).map(|d| lo[d].abs().max(hi[d].abs())).fold(0.0, f64::max);
    // enlarge so that the largest coordinate falls strictly inside; a cube of side 1 (or
    // the coordinates' magnitude) when all particles coincide
    let size = if ext > 0.0 { ext * (1.0 + 1e-9) + scale * 1e-14 } else { scale.max(1.0) };
    if !(size.is_finite() && size >= f64::MIN_POSITIVE) {
        return Err(Error::Range(format!(
            "the coordinates span {ext:e} (from {:e} to {:e}): the FMM needs the extent of the particles, times 1 + 1e-9, between the smallest normal double (≈ 2.2e-308) and the largest (≈ 1.8e308)",
            lo.iter().fold(f64::INFINITY, |a, &b| a.min(b)),
            hi.iter().fold(f64::NEG_INFINITY, |a, &b| a.max(b))
        )));
    }
    let mut l = [0.0; 3];
    for d in 0..3 {
        l[d] = 0.5 * lo[d] + 0.5 * hi[d] - 0.5 * size;
    }
    Ok((l, size))
}

/// The sample of `n` particles that [`periodic_origin`] and [`open_cube`] look at: `s =
/// min(n, 4096)` particles `k·stride`, `k < s`, `stride = n / s`. Returns `(s, stride)`.
pub fn origin_sample(n: usize) -> (usize, usize) {
    let s = n.min(4096);
    (s, if s == 0 { 1 } else { n / s })
}

impl Tree {
    /// Side of the boxes at `level`.
    #[inline]
    pub fn h(&self, level: usize) -> f64 {
        self.size / (1u64 << level) as f64
    }

    /// Centre of the box with key `k` at `level`.
    #[inline]
    pub fn center(&self, level: usize, k: u64) -> [f64; 3] {
        let c = decode(k);
        let h = self.h(level);
        [self.lo[0] + (c[0] as f64 + 0.5) * h, self.lo[1] + (c[1] as f64 + 0.5) * h, self.lo[2] + (c[2] as f64 + 0.5) * h]
    }

    /// Number of leaves (occupied boxes at level `D`).
    pub fn nleaves(&self) -> usize {
        self.leaf_start.len() - 1
    }

    /// The root cube of `xyz` (open boundaries): the bounding cube, slightly enlarged.
    /// Error: [`Error::Range`] when the extent of the coordinates overflows (their spread
    /// exceeds ≈ 1.8e308).
    pub fn bounding_cube(threads: &Threads, xyz: &[f64]) -> Result<([f64; 3], f64)> {
        let (lo, hi) = Self::bounds(threads, xyz);
        cube_from_bounds(lo, hi)
    }

    /// Per-axis minimum and maximum of the coordinates `xyz` (interleaved, finite).
    pub fn bounds(threads: &Threads, xyz: &[f64]) -> ([f64; 3], [f64; 3]) {
        let n = xyz.len() / 3;
        const B: usize = 4096;
        let nb = n.div_ceil(B);
        let mut mm = vec![[f64::INFINITY, f64::INFINITY, f64::INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY, f64::NEG_INFINITY]; nb];
        threads.chunks2(&mut mm, 1, xyz, 3 * B, |_, out, c| {
            let o = &mut out[0];
            for p in c.chunks_exact(3) {
                for d in 0..3 {
                    o[d] = o[d].min(p[d]);
                    o[3 + d] = o[3 + d].max(p[d]);
                }
            }
        });
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for o in &mm {
            for d in 0..3 {
                lo[d] = lo[d].min(o[d]);
                hi[d] = hi[d].max(o[3 + d]);
            }
        }
        (lo, hi)
    }

    /// Keys of the particles at [`KEY_DEPTH`] (coordinates folded into the box when periodic),
    /// sorted, with the permutation, into `ws.keys` and `ws.perm`.
    pub fn sort_keys(threads: &Threads, xyz: &[f64], lo: [f64; 3], size: f64, periodic: bool, ws: &mut Workspace) -> Result<()> {
        Self::sort_keys_in(threads, xyz, lo, size, periodic.then_some([size; 3]), ws)
    }

    /// [`Tree::sort_keys`] with per-axis periods ([`unit_coord_in`]; a rectangular box in
    /// its root cube of side `size`).
    pub fn sort_keys_in(threads: &Threads, xyz: &[f64], lo: [f64; 3], size: f64, periods: Periods, ws: &mut Workspace) -> Result<()> {
        let n = xyz.len() / 3;
        super::check_count(n)?;
        ws.keys.resize(n, 0);
        let nk = (1u64 << KEY_DEPTH) as f64;
        let maxc = (1u64 << KEY_DEPTH) - 1;
        const B: usize = 4096;
        threads.chunks2(&mut ws.keys, B, xyz, 3 * B, |_, ks, c| {
            for (k, p) in ks.iter_mut().zip(c.chunks_exact(3)) {
                let mut ic = [0u64; 3];
                for d in 0..3 {
                    let t = (unit_coord_in(p[d], lo[d], size, axis(periods, d)) * nk).floor();
                    ic[d] = if t <= 0.0 { 0 } else { (t as u64).min(maxc) };
                }
                *k = encode(ic);
            }
        });
        ws.perm.clear();
        ws.perm.extend(0..n as u32);
        ws.keys2.resize(n, 0);
        ws.perm2.resize(n, 0);
        radix_sort(&mut ws.keys, &mut ws.perm, &mut ws.keys2, &mut ws.perm2);
        Ok(())
    }

    /// Builds the tree of depth `depth` from sorted keys. The tree is in units of the root
    /// cube: its particles are stored as [`unit_coord`]s, its root cube is `[0, 1)³` (the
    /// caller rescales the results by the side `size`). Error: [`Error::Alloc`].
    pub fn build(threads: &Threads, xyz: &[f64], q: &[f64], lo: [f64; 3], size: f64, periodic: bool, ws: &mut Workspace, depth: usize) -> Result<Tree> {
        let cells = if periodic { Some(PeriodicCells { periods: [size; 3], root_level: 0, cells: [1; 3] }) } else { None };
        Self::build_in(threads, xyz, q, lo, size, cells, ws, depth)
    }

    /// [`Tree::build`] for a periodic box made of cubes (`cells`; `None` = open), the keys
    /// sorted by [`Tree::sort_keys_in`] with `cells.periods`.
    #[allow(clippy::too_many_arguments)]
    pub fn build_in(threads: &Threads, xyz: &[f64], q: &[f64], lo: [f64; 3], size: f64, cells: Option<PeriodicCells>, ws: &mut Workspace, depth: usize) -> Result<Tree> {
        let periodic = cells.is_some();
        let periods = cells.map(|c| c.periods);
        let n = q.len();
        let shift = 3 * (KEY_DEPTH - depth);
        // leaves (counted first, so that the lists are reserved exactly and fallibly)
        let nleaves = ws.keys.windows(2).filter(|w| w[0] >> shift != w[1] >> shift).count() + usize::from(n > 0);
        let mut leaf_keys: Vec<u64> = try_vec(nleaves, "the FMM leaf list")?;
        let mut leaf_start: Vec<u32> = try_vec(nleaves + 1, "the FMM leaf list")?;
        for (i, &k) in ws.keys.iter().enumerate() {
            let lk = k >> shift;
            if leaf_keys.last() != Some(&lk) {
                leaf_keys.push(lk);
                leaf_start.push(i as u32);
            }
        }
        leaf_start.push(n as u32);
        // levels, bottom-up (a level has at most as many boxes as the one below)
        let mut levels: Vec<Level> = (0..=depth).map(|_| Level::default()).collect();
        levels[depth].keys = leaf_keys;
        for l in (0..depth).rev() {
            let (up, down) = levels.split_at_mut(l + 1);
            let (cur, child) = (&mut up[l], &mut down[0]);
            let nc = child.keys.len();
            child.parent = try_vec(nc, "the FMM tree levels")?;
            try_grow(&mut cur.keys, nc, "the FMM tree levels")?;
            try_grow(&mut cur.child_start, nc + 1, "the FMM tree levels")?;
            for (c, &ck) in child.keys.iter().enumerate() {
                let pk = ck >> 3;
                if cur.keys.last() != Some(&pk) {
                    cur.keys.push(pk);
                    cur.child_start.push(c as u32);
                }
                child.parent.push((cur.keys.len() - 1) as u32);
            }
            cur.child_start.push(child.keys.len() as u32);
        }
        for (l, lev) in levels.iter_mut().enumerate() {
            lev.index(l)?;
        }
        let (xs, ys, zs, qs, perm) = sorted_particles(threads, xyz, q, lo, size, periods, ws);
        let (root_level, cells) = cells.map_or((0, [0; 3]), |c| (c.root_level, c.cells));
        Ok(Tree { depth, lo: [0.0; 3], size: 1.0, periodic, root_level, cells, x: xs, y: ys, z: zs, q: qs, perm, levels, leaf_start, leaves: Vec::new() })
    }

    /// Builds the adaptive octree (open boundaries) from the sorted keys of [`Tree::sort_keys`]:
    /// from the root down, a box is split into its occupied octants while it holds more than
    /// `max_leaf` particles (at most to [`KEY_DEPTH`]); every level keeps its boxes in Morton
    /// order with their particle ranges ([`Level::start`]), the leaves (any level) are listed in
    /// particle order ([`Tree::leaves`], [`Tree::leaf_start`]), `depth` is the deepest level.
    /// Same units as [`Tree::build`]. Error: [`Error::Alloc`].
    pub fn build_adaptive(threads: &Threads, xyz: &[f64], q: &[f64], lo: [f64; 3], size: f64, ws: &mut Workspace, max_leaf: usize) -> Result<Tree> {
        let levels = adaptive_levels(&ws.keys, max_leaf)?;
        let nleaves: usize = levels.iter().map(|lev| (0..lev.len()).filter(|&b| lev.is_leaf(b)).count()).sum();
        let mut leaves: Vec<[u32; 2]> = try_vec(nleaves, "the FMM leaf list")?;
        for (l, lev) in levels.iter().enumerate() {
            leaves.extend((0..lev.len()).filter(|&b| lev.is_leaf(b)).map(|b| [l as u32, b as u32]));
        }
        leaves.sort_unstable_by_key(|&[l, b]| levels[l as usize].range[b as usize][0]);
        let mut leaf_start: Vec<u32> = try_vec(nleaves + 1, "the FMM leaf list")?;
        leaf_start.extend(leaves.iter().map(|&[l, b]| levels[l as usize].range[b as usize][0]));
        leaf_start.push(q.len() as u32);
        let (xs, ys, zs, qs, perm) = sorted_particles(threads, xyz, q, lo, size, None, ws);
        let depth = levels.len() - 1;
        Ok(Tree { depth, lo: [0.0; 3], size: 1.0, periodic: false, root_level: 0, cells: [0; 3], x: xs, y: ys, z: zs, q: qs, perm, levels, leaf_start, leaves })
    }

    /// Whether the tree is adaptive ([`Tree::build_adaptive`]).
    pub fn is_adaptive(&self) -> bool {
        !self.leaves.is_empty()
    }
}

/// The levels of the adaptive tree of the sorted `keys` (at [`KEY_DEPTH`]) with at most
/// `max_leaf ≥ 1` particles per leaf (deeper than [`KEY_DEPTH`] boxes are not split): per level
/// the keys, particle ranges, children and parents. Cost `O(boxes · log n)`. Error:
/// [`Error::Alloc`].
pub fn adaptive_levels(keys: &[u64], max_leaf: usize) -> Result<Vec<Level>> {
    let n = keys.len();
    let what = "the FMM tree levels";
    let mut root = Level::default();
    try_grow(&mut root.keys, 1, what)?;
    try_grow(&mut root.range, 1, what)?;
    root.keys.push(0);
    root.range.push([0, n as u32]);
    let mut levels = vec![root];
    for l in 0..KEY_DEPTH {
        let shift = 3 * (KEY_DEPTH - l - 1);
        let cur = levels.last_mut().expect("the root level exists");
        let split = |r: [u32; 2]| (r[1] - r[0]) as usize > max_leaf;
        let nsplit = cur.range.iter().filter(|&&r| split(r)).count();
        let mut next = Level::default();
        try_grow(&mut next.range, 8 * nsplit, what)?;
        try_grow(&mut next.keys, 8 * nsplit, what)?;
        try_grow(&mut next.parent, 8 * nsplit, what)?;
        let nb = cur.len();
        try_grow(&mut cur.child_start, nb + 1, what)?;
        for b in 0..cur.len() {
            cur.child_start.push(next.keys.len() as u32);
            let r = cur.range[b];
            if !split(r) {
                continue;
            }
            let (mut a, e) = (r[0] as usize, r[1] as usize);
            while a < e {
                // the run of keys in the box of keys[a] at level l + 1
                let ck = keys[a] >> shift;
                let end = a + keys[a..e].partition_point(|&k| k >> shift <= ck);
                next.keys.push(ck);
                next.range.push([a as u32, end as u32]);
                next.parent.push(b as u32);
                a = end;
            }
        }
        cur.child_start.push(next.keys.len() as u32);
        if next.keys.is_empty() {
            break;
        }
        levels.push(next);
    }
    let last = levels.last_mut().expect("the root level exists");
    if last.child_start.is_empty() {
        // the level KEY_DEPTH: all leaves
        let nb = last.len();
        try_grow(&mut last.child_start, nb + 1, what)?;
        last.child_start.resize(nb + 1, 0);
    }
    for (l, lev) in levels.iter_mut().enumerate() {
        lev.index(l)?;
    }
    Ok(levels)
}

/// The particle arrays of a tree: coordinates in units of the root cube (folded with
/// `periods`) and charges in the order of `ws.perm` (taken from the workspace, like the
/// permutation).
type SortedArrays = (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>, Vec<u32>);

fn sorted_particles(threads: &Threads, xyz: &[f64], q: &[f64], lo: [f64; 3], size: f64, periods: Periods, ws: &mut Workspace) -> SortedArrays {
    let n = q.len();
    let mut xs = std::mem::take(&mut ws.x);
    let mut ys = std::mem::take(&mut ws.y);
    let mut zs = std::mem::take(&mut ws.z);
    let mut qs = std::mem::take(&mut ws.q);
    for v in [&mut xs, &mut ys, &mut zs, &mut qs] {
        v.resize(n, 0.0); // capacity reserved by Workspace::reserve
    }
    {
        let perm = &ws.perm;
        let (py, pz, pq) = (SyncPtr(ys.as_mut_ptr()), SyncPtr(zs.as_mut_ptr()), SyncPtr(qs.as_mut_ptr()));
        const B: usize = 4096;
        threads.chunks(&mut xs, B, |ci, xc| {
            let (py, pz, pq) = (py, pz, pq);
            for (o, xv) in xc.iter_mut().enumerate() {
                let i = ci * B + o;
                let j = perm[i] as usize;
                let c: [f64; 3] = std::array::from_fn(|d| unit_coord_in(xyz[3 * j + d], lo[d], size, axis(periods, d)));
                *xv = c[0];
                // SAFETY: index i is written by this chunk only.
                unsafe {
                    *py.0.add(i) = c[1];
                    *pz.0.add(i) = c[2];
                    *pq.0.add(i) = q[j];
                }
            }
        });
    }
    let perm = std::mem::take(&mut ws.perm);
    (xs, ys, zs, qs, perm)
}

impl Tree {
    /// The first pair of distinct particles (caller's indices, smaller first) that coincide —
    /// in units of the root cube, folded into the box when periodic, i.e. as the method sees
    /// them — or `None`. Needs the keys sorted by [`Tree::sort_keys`]: coincident particles
    /// have equal keys, so only runs of equal keys are examined, each sorted by its
    /// coordinates and compared with its neighbours: `O(n log n)` at worst (all particles in
    /// one key cell), `O(n)` for distinct keys.
    pub fn find_coincident(xyz: &[f64], lo: [f64; 3], size: f64, periodic: bool, ws: &Workspace) -> Result<Option<(usize, usize)>> {
        Self::find_coincident_in(xyz, lo, size, periodic.then_some([size; 3]), ws)
    }

    /// [`Tree::find_coincident`] with per-axis periods ([`unit_coord_in`]).
    pub fn find_coincident_in(xyz: &[f64], lo: [f64; 3], size: f64, periods: Periods, ws: &Workspace) -> Result<Option<(usize, usize)>> {
        coincident_in_runs_in(&ws.keys, &ws.perm, |i| {
            let j = ws.perm[i] as usize;
            [xyz[3 * j], xyz[3 * j + 1], xyz[3 * j + 2]]
        }, lo, size, periods)
    }

    /// The period of axis `d` in units of the root cube (periodic trees): `cells_d·2^{−e}`,
    /// `e` = [`Tree::root_level`]; 1 for a cubic box.
    #[inline]
    pub fn period(&self, d: usize) -> f64 {
        self.cells[d] as f64 * self.h(self.root_level)
    }

    /// Looks up the box at `level` with integer coordinates `c + off`: `Some((index, image))`
    /// where `image` is the periodic image shift in units of the root cube (always zero for
    /// open boundaries, where out-of-range boxes give `None`).
    #[inline]
    pub fn neighbour(&self, level: usize, c: [u64; 3], off: [i32; 3]) -> Option<(usize, [i32; 3])> {
        let mut cc = [0u64; 3];
        let mut img = [0i32; 3];
        for d in 0..3 {
            let v = c[d] as i64 + off[d] as i64;
            if self.periodic {
                // boxes per period (levels ≥ root_level)
                let n = (self.cells[d] << (level - self.root_level)) as i64;
                let w = v.rem_euclid(n);
                img[d] = ((v - w) / n) as i32;
                cc[d] = w as u64;
            } else {
                let n = 1i64 << level;
                if v < 0 || v >= n {
                    return None;
                }
                cc[d] = v as u64;
            }
        }
        self.levels[level].find(encode(cc)).map(|i| (i, img))
    }
}

/// The core of [`Tree::find_coincident`], shared with the GPU tree: `keys` sorted (runs of
/// equal keys are examined), `perm[i]` the caller's index and `coord(i)` the caller's
/// coordinates of the particle at position `i`. The lists may hold only the particles of the
/// runs of equal keys (distinct runs keep distinct keys), as the GPU downloads them. Returns
/// the smallest pair (caller's indices, smaller first) of distinct particles whose
/// [`unit_coord`]s coincide. Error: [`Error::Alloc`].
pub fn coincident_in_runs(keys: &[u64], perm: &[u32], coord: impl Fn(usize) -> [f64; 3], lo: [f64; 3], size: f64, periodic: bool) -> Result<Option<(usize, usize)>> {
    coincident_in_runs_in(keys, perm, coord, lo, size, periodic.then_some([size; 3]))
}

/// [`coincident_in_runs`] with per-axis periods ([`unit_coord_in`]).
pub fn coincident_in_runs_in(keys: &[u64], perm: &[u32], coord: impl Fn(usize) -> [f64; 3], lo: [f64; 3], size: f64, periods: Periods) -> Result<Option<(usize, usize)>> {
    let n = keys.len();
    let mut run: Vec<([u64; 3], u32)> = Vec::new();
    let mut best: Option<(usize, usize)> = None;
    let mut a = 0;
    while a < n {
        let mut b = a + 1;
        while b < n && keys[b] == keys[a] {
            b += 1;
        }
        if b - a > 1 {
            run.clear();
            try_grow(&mut run, b - a, "the FMM coincidence check")?;
            for i in a..b {
                let j = perm[i];
                let p = coord(i);
                let c: [u64; 3] = std::array::from_fn(|d| (unit_coord_in(p[d], lo[d], size, axis(periods, d)) + 0.0).to_bits()); // −0 → +0
                run.push((c, j));
            }
            run.sort_unstable();
            for w in run.windows(2) {
                if w[0].0 == w[1].0 {
                    let pair = (w[0].1.min(w[1].1) as usize, w[0].1.max(w[1].1) as usize);
                    if best.is_none_or(|p| pair < p) {
                        best = Some(pair);
                    }
                }
            }
        }
        a = b;
    }
    Ok(best)
}

/// The origin (lower corner) of the periodic tree for particles `xyz` in the box of side `side`,
/// for a tree of depth `depth` and expansions of order `p` (M2L from level 1).
///
/// Any origin gives the same periodic sum, but not the same truncation error: the error of a
/// one-layer FMM (M2L between boxes two box sides apart) falls like `((ρ_s + ρ_t)/2)^{2p}`
/// with `ρ_{s,t}` the distances of source and target from their box centres in box units, so
/// the order rule ([`super::params::order_for_tol`], calibrated on particles spread through
/// their boxes) fails where many particles sit at the same worst position, near box corners
/// (`ρ = √3/2`) — as every atom of a crystal whose lattice is commensurate with the box
/// grid does when the tree's origin is a lattice site (e.g. NaCl at the origin: 1767× the
/// tolerance at 10⁻⁹). This chooses, per axis, the origin `o` that minimises
/// `Σ_i Σ_{l=1..depth} u_{i,l}^{2p}`, `u = |2 frac((x_i − o) 2^l/L) − 1|` (0 at a box centre,
/// 1 on a face), over a sample of ≤ 4096 particles, among `o = 0` and `x_r + cL` for two
/// reference particles `x_r` and `c ∈ {1/3, 1/6, 1/10, 1/14, 0.2882}` (`c = 1/3` keeps a
/// lattice commensurate with the grid at `1/3` or `2/3` of every box at every level; the others
/// serve lattices with 3, 5 or 7 sites per period). `o = 0` is kept unless a candidate halves the
/// measure, so particles spread through their boxes (whose measure hardly depends on `o`)
/// keep the plain grid. Cost `O(min(n, 4096) · depth)`.
pub fn periodic_origin(threads: &Threads, xyz: &[f64], side: f64, depth: usize, p: usize) -> [f64; 3] {
    let (s, stride) = origin_sample(xyz.len() / 3);
    periodic_origin_strided(threads, xyz, s, stride, side, depth, p)
}

/// [`periodic_origin`] on its sample: particle `k < s` of the sample is at
/// `xyz[3·k·stride..][..3]` (the whole array with the stride of [`origin_sample`] on the CPU, the
/// downloaded sample with stride 1 on the GPU).
pub fn periodic_origin_strided(threads: &Threads, xyz: &[f64], s: usize, stride: usize, side: f64, depth: usize, p: usize) -> [f64; 3] {
    periodic_origin_in(threads, xyz, s, stride, [side; 3], side, depth, p)
}

/// The corner measure `Σ_{k<s} Σ_{l=l0..=depth} |2 frac(t_k 2^l) − 1|^e` of the unit
/// coordinates `t_k = t(k)`, summed in this order (k outer, l inner). Bitwise the value of the
/// plain formula with `f64::floor` and `f64::powi`, without their library calls
/// ([`floor_exact`], [`powi_binary`]).
fn corner_measure(s: usize, l0: usize, depth: usize, e: u32, t: impl Fn(usize) -> f64) -> f64 {
    let mut m = 0.0;
    for k in 0..s {
        let t = t(k);
        for l in l0..=depth {
            let f = t * (1u64 << l) as f64;
            let u = (2.0 * (f - floor_exact(f)) - 1.0).abs();
            m += powi_binary(u, e);
        }
    }
    m
}

/// `f.floor()` from an integer conversion where `|f| < 2⁵²` (no library call); the sign of a
/// zero result may differ (`+0` for `−0`), which [`corner_measure`] does not see.
#[inline(always)]
fn floor_exact(f: f64) -> f64 {
    if f.abs() < 4503599627370496.0 {
        let i = (f as i64) as f64;
        if i > f {
            i - 1.0
        } else {
            i
        }
    } else {
        f.floor()
    }
}

/// `a^e` with the multiplications, in order, of `f64::powi` (binary powering as compiler-rt's
/// and libgcc's `__powidf2`: `r *= a` on each set bit from the lowest, `a *= a` between bits),
/// so the result is bitwise that of `a.powi(e)`.
#[inline(always)]
fn powi_binary(mut a: f64, mut e: u32) -> f64 {
    let mut r = 1.0;
    loop {
        if e & 1 == 1 {
            r *= a;
        }
        e >>= 1;
        if e == 0 {
            return r;
        }
        a *= a;
    }
}

/// [`periodic_origin_strided`] for a rectangular box of sides `periods` made of cubes of side
/// `cube` (`periods = [side; 3]`, `cube = side` for a cubic box): the measure runs over the
/// levels `1..=depth` below the cubes, the candidates are `x_r + c·cube`, folded per axis.
/// The 33 measures (3 axes × the 11 candidates) are evaluated on `threads`.
#[allow(clippy::too_many_arguments)]
pub fn periodic_origin_in(threads: &Threads, xyz: &[f64], s: usize, stride: usize, periods: [f64; 3], cube: f64, depth: usize, p: usize) -> [f64; 3] {
    if s == 0 || depth == 0 {
        return [0.0; 3];
    }
    let refs = [0, (s / 2) * stride];
    let e = 2 * p.max(1) as u32;
    const CS: [f64; 5] = [1.0 / 3.0, 1.0 / 6.0, 0.1, 1.0 / 14.0, 0.2882];
    // per axis: o = 0, then x_r + c·cube for r in refs, c in CS (the order of the choice below)
    let cands: Vec<(usize, f64)> = (0..3)
        .flat_map(|d| std::iter::once((d, 0.0)).chain(refs.iter().flat_map(move |&r| CS.iter().map(move |&c| (d, fold(xyz[3 * r + d] + c * cube, periods[d]))))))
        .collect();
    let mut meas = vec![0.0; cands.len()];
    threads.chunks(&mut meas, 1, |i, m| {
        let (d, o) = cands[i];
        m[0] = corner_measure(s, 1, depth, e, |k| unit_coord_in(xyz[3 * k * stride + d], o, cube, Some(periods[d])));
    });
    let per_axis = cands.len() / 3;
    let mut origin = [0.0; 3];
    for d in 0..3 {
        let (c, m) = (&cands[d * per_axis..][..per_axis], &meas[d * per_axis..][..per_axis]);
        let m0 = m[0];
        let mut best = (m0, 0.0);
        for (&(_, o), &mi) in c.iter().zip(m).skip(1) {
            if mi < best.0 {
                best = (mi, o);
            }
        }
        if best.0 < 0.5 * m0 {
            origin[d] = best.1;
        }
    }
    origin
}

/// The root cube of an open tree of depth `depth` (M2L from level 2) for particles `xyz` whose
/// bounding cube is `(lo, size)`: as [`periodic_origin`], but the cube must contain the
/// particles, so it is enlarged by a factor `f ∈ {1, 1.0625, 1.125, 1.25}` and shifted per axis
/// within the slack (`o = min_d − k·slack/8`, `k = 0..8`), choosing the cube that minimises the
/// corner measure of [`periodic_origin`] over the levels `2..=depth`; the bounding cube is kept
/// unless another halves the measure (so particles spread through the volume keep it). A
/// lattice with `2^k + 1` sites per side spanning the bounding cube has every site on a box
/// corner at every level up to `k` (e.g. 17³ ions at tol 10⁻⁶: potential error 1.9×, field 110×
/// the tolerance, before this choice). Cost `O(n + min(n, 4096) · depth)`.
pub fn open_cube(threads: &Threads, xyz: &[f64], lo: [f64; 3], size: f64, depth: usize, p: usize) -> ([f64; 3], f64) {
    let n = xyz.len() / 3;
    if n == 0 || depth < 2 {
        return (lo, size);
    }
    let mut mn = [f64::INFINITY; 3];
    let mut mx = [f64::NEG_INFINITY; 3];
    for c in xyz.chunks_exact(3) {
        for d in 0..3 {
            mn[d] = mn[d].min(c[d]);
            mx[d] = mx[d].max(c[d]);
        }
    }
    let (s, stride) = origin_sample(n);
    open_cube_strided(threads, xyz, s, stride, mn, mx, lo, size, depth, p)
}

/// [`open_cube`] on its sample (particle `k < s` at `xyz[3·k·stride..][..3]`, as in
/// [`periodic_origin_strided`]) and the per-axis bounds `mn`, `mx` of all particles. The
/// measures of the candidate cubes (up to 3 + 4·3·8) are evaluated on `threads`.
#[allow(clippy::too_many_arguments)]
pub fn open_cube_strided(threads: &Threads, xyz: &[f64], s: usize, stride: usize, mn: [f64; 3], mx: [f64; 3], lo: [f64; 3], size: f64, depth: usize, p: usize) -> ([f64; 3], f64) {
    if s == 0 || depth < 2 {
        return (lo, size);
    }
    const FACTORS: [f64; 4] = [1.0, 1.0625, 1.125, 1.25];
    let e = 2 * p.max(1) as u32;
    // (factor index or None for the bounding cube, axis, lower corner, side) of every measure
    // the choice below reads, in its order; shifts that would not hold the largest coordinate
    // strictly inside are left out
    let mut cands: Vec<(Option<usize>, usize, f64, f64)> = (0..3).map(|d| (None, d, lo[d], size)).collect();
    for (fi, f) in FACTORS.iter().enumerate() {
        let side = size * f;
        if !side.is_finite() {
            continue;
        }
        for d in 0..3 {
            let slack = side - (mx[d] - mn[d]);
            for k in 0..8 {
                let od = mn[d] - slack * k as f64 / 8.0;
                if (mx[d] - od) / side < 1.0 - 1e-12 {
                    cands.push((Some(fi), d, od, side));
                }
            }
        }
    }
    let mut meas = vec![0.0; cands.len()];
    threads.chunks(&mut meas, 1, |i, m| {
        let (_, d, o, side) = cands[i];
        m[0] = corner_measure(s, 2, depth, e, |k| (xyz[3 * k * stride + d] - o) / side);
    });
    let m0: f64 = meas[..3].iter().sum();
    // per factor and axis the best shift (measure, lower corner), the first of equal measures
    let mut by: [[(f64, f64); 3]; 4] = [std::array::from_fn(|d| (f64::INFINITY, mn[d])); 4];
    for (&(fi, d, o, _), &m) in cands.iter().zip(&meas) {
        if let Some(fi) = fi {
            if m < by[fi][d].0 {
                by[fi][d] = (m, o);
            }
        }
    }
    let mut best = (m0, lo, size);
    for (f, axes) in FACTORS.iter().zip(&by) {
        let side = size * f;
        // a factor whose side overflows, or an axis without a shift that holds the particles
        if !side.is_finite() || axes.iter().any(|b| !b.0.is_finite()) {
            continue;
        }
        let total = 0.0 + axes[0].0 + axes[1].0 + axes[2].0;
        if total < best.0 {
            best = (total, axes.map(|b| b.1), side);
        }
    }
    if best.0 < 0.5 * m0 {
        (best.1, best.2)
    } else {
        (lo, size)
    }
}

/// LSD radix sort of `keys` (carrying `perm`), 11-bit digits, skipping digits that are equal
/// in all keys; `k2`, `p2` are buffers of the same length.
pub fn radix_sort(keys: &mut Vec<u64>, perm: &mut Vec<u32>, k2: &mut Vec<u64>, p2: &mut Vec<u32>) {
    let n = keys.len();
    if n < 2 {
        return;
    }
    const BITS: usize = 11;
    const NB: usize = 1 << BITS;
    let all_or = keys.iter().fold(0u64, |a, &k| a | k);
    let all_and = keys.iter().fold(u64::MAX, |a, &k| a & k);
    let varying = all_or ^ all_and;
    let mut shift = 0;
    while shift < 64 {
        if (varying >> shift) & (NB as u64 - 1) != 0 {
            let mut cnt = vec![0usize; NB];
            for &k in keys.iter() {
                cnt[((k >> shift) as usize) & (NB - 1)] += 1;
            }
            let mut s = 0;
            for c in cnt.iter_mut() {
                let t = *c;
                *c = s;
                s += t;
            }
            for i in 0..n {
                let k = keys[i];
                let d = ((k >> shift) as usize) & (NB - 1);
                let o = cnt[d];
                cnt[d] += 1;
                k2[o] = k;
                p2[o] = perm[i];
            }
            std::mem::swap(keys, k2);
            std::mem::swap(perm, p2);
        }
        shift += BITS;
    }
}

/// Occupancy statistics of the sorted keys for every depth `0..=dmax`: number of occupied
/// boxes, and `Σ_b n_b²` over the boxes (the near-field work measure), summed exactly in
/// integers (as the GPU tree does) and then rounded to `f64`.
pub fn occupancy(keys: &[u64], dmax: usize) -> (Vec<usize>, Vec<f64>) {
    let mut nocc = vec![0usize; dmax + 1];
    let mut s2 = vec![0u64; dmax + 1];
    let mut run = vec![0u64; dmax + 1];
    for (i, &k) in keys.iter().enumerate() {
        // first level at which this key's box differs from the previous key's
        let first = if i == 0 {
            0
        } else {
            let x = k ^ keys[i - 1];
            if x == 0 {
                dmax + 1
            } else {
                let bit = 63 - x.leading_zeros() as usize; // highest differing bit
                let lev_from_bottom = bit / 3; // 0 = the KEY_DEPTH level
                KEY_DEPTH - lev_from_bottom
            }
        };
        for d in 0..=dmax {
            if d >= first {
                // a new box starts at level d: close the previous run
                s2[d] += run[d] * run[d];
                run[d] = 0;
                nocc[d] += 1;
            }
            run[d] += 1;
        }
    }
    for d in 0..=dmax {
        s2[d] += run[d] * run[d];
    }
    (nocc, s2.into_iter().map(|v| v as f64).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uniform doubles in `[0, 1)` from a fixed 64-bit LCG (no dependency for a test input).
    fn unit_values(n: usize, seed: u64) -> Vec<f64> {
        let mut s = seed;
        (0..n)
            .map(|_| {
                s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
                (s >> 11) as f64 / (1u64 << 53) as f64
            })
            .collect()
    }

    #[test]
    fn corner_measure_is_the_plain_formula_bitwise() {
        let mut t = unit_values(3000, 7);
        t.extend([0.0, -0.0, 0.5, 0.25, 1.0 - f64::EPSILON, 1.0 / 3.0]);
        for (l0, depth, e) in [(1, 1, 2), (1, 3, 24), (2, 5, 32), (2, 8, 33), (1, 12, 80)] {
            let mut plain = 0.0;
            for &tk in &t {
                for l in l0..=depth {
                    let f = tk * (1u64 << l) as f64;
                    plain += (2.0 * (f - f.floor()) - 1.0).abs().powi(e as i32);
                }
            }
            let m = corner_measure(t.len(), l0, depth, e, |k| t[k]);
            assert_eq!(m.to_bits(), plain.to_bits(), "l0 {l0} depth {depth} e {e}");
        }
    }

    #[test]
    fn floor_exact_and_powi_binary_match_the_library() {
        let mut v: Vec<f64> = unit_values(2000, 11).iter().map(|u| (u - 0.5) * 1e6).collect();
        v.extend([0.0, 1.0, -1.0, 2.5, -2.5, 4503599627370495.5, -4503599627370495.5, 4503599627370496.0, 1e300, -1e300, 0.999999999]);
        for &x in &v {
            assert_eq!(floor_exact(x), x.floor(), "floor({x:e})");
        }
        for &u in unit_values(500, 3).iter().chain(&[0.0, 1.0, 0.5]) {
            for e in 0..90u32 {
                assert_eq!(powi_binary(u, e).to_bits(), u.powi(e as i32).to_bits(), "{u:e}^{e}");
            }
        }
    }

    /// The root-cube choices move a lattice off the box corners, and the threads that
    /// evaluate the candidates do not change what they choose.
    #[test]
    fn origin_choices_do_not_depend_on_threads() {
        let (one, two) = (Threads::new(1).unwrap(), Threads::new(2).unwrap());
        // 16³ sites of spacing 1/16 in the unit box: every site on a box corner at levels ≤ 4
        let lattice: Vec<f64> = (0..16 * 16 * 16).flat_map(|i| [(i % 16) as f64 / 16.0, ((i / 16) % 16) as f64 / 16.0, (i / 256) as f64 / 16.0]).collect();
        let o1 = periodic_origin(&one, &lattice, 1.0, 3, 8);
        assert_ne!(o1, [0.0; 3]);
        assert_eq!(o1, periodic_origin(&two, &lattice, 1.0, 3, 8));
        // 17³ sites spanning their bounding cube: open tree
        let open: Vec<f64> = (0..17 * 17 * 17).flat_map(|i| [(i % 17) as f64, ((i / 17) % 17) as f64, (i / 289) as f64]).collect();
        let (lo, size) = Tree::bounding_cube(&one, &open).unwrap();
        let c1 = open_cube(&one, &open, lo, size, 4, 8);
        assert_ne!(c1, (lo, size));
        assert_eq!(c1, open_cube(&two, &open, lo, size, 4, 8));
    }
}
