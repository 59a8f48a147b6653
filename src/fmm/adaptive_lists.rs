//! Interaction lists of the adaptive octree ([`Tree::build_adaptive`]; open boundaries), after
//! Carrier, Greengard & Rokhlin, SIAM J. Sci. Stat. Comput. 9, 669 (1988), §3, with the list
//! names of FMM3D's documentation. For a box `B` at level `l`, *colleagues* are the boxes of
//! level `l` adjacent to it (touching, corners included), and two boxes of any levels are
//! *adjacent* when their closed cubes touch:
//!
//! * **U** (leaf `B`): the leaves adjacent to `B`, itself included, at any level → P2P;
//! * **V** (any box): the children of the colleagues of `B`'s parent not adjacent to `B` → M2L,
//!   the presorted tiles of [`super::lists::m2l_tiles`] unchanged (their sources are exactly
//!   the boxes that exist at that level);
//! * **W** (leaf `B`): descendants of `B`'s colleagues not adjacent to `B` whose parents are →
//!   M2P ([`super::m2p::m2p`]) when the box holds more than [`params::m2p_cost`] particles,
//!   else P2P from its particles (every box's particles are one contiguous range);
//! * **X** (any box `A`): the leaves coarser than `A` adjacent to `A`'s parent but not to `A`
//!   (the dual of W) → P2L ([`super::m2p::p2l`]) when `A` holds more than
//!   [`params::p2l_cost`] particles, else P2P into every leaf below `A`.
//!
//! U, W and the small X boxes are gathered per target leaf, the P2L sources per target box,
//! so every pass writes only its own targets (no atomics, results independent of the thread
//! count).

use super::lists::{m2l_tiles, Tile};
use super::p2p::SourceRange;
use super::params;
use super::tree::{decode, encode, Tree};
use crate::error::{try_grow, try_vec, Error, Result};
use crate::threads::Threads;

/// The lists of one adaptive tree (leaves in the order of [`Tree::leaves`]).
pub struct AdaptiveLists {
    /// P2P sources (U, small W and small X boxes) of leaf `i`:
    /// `p2p[p2p_start[i]..p2p_start[i + 1]]`.
    pub p2p_start: Vec<u32>,
    /// Flat P2P source ranges.
    pub p2p: Vec<SourceRange>,
    /// M2P sources (`[level, box]`) of leaf `i`: `m2p[m2p_start[i]..m2p_start[i + 1]]`.
    pub m2p_start: Vec<u32>,
    /// Flat M2P sources.
    pub m2p: Vec<[u32; 2]>,
    /// P2L sources of level `l`'s boxes (levels ≥ 2; empty above): box `b`'s are the particle
    /// ranges `p2l[l][p2l_start[l][b]..p2l_start[l][b + 1]]`.
    pub p2l_start: Vec<Vec<u32>>,
    /// Flat P2L particle ranges `[a, e]` per level.
    pub p2l: Vec<Vec<[u32; 2]>>,
    /// M2L tiles per level (levels ≥ 2).
    pub m2l: Vec<Vec<Tile>>,
}

/// First level with expansions (open boundaries: the level-1 boxes are all adjacent).
pub(crate) const TOP: usize = 2;

/// Whether box `c1` at level `l1` and box `c2` at level `l2` touch (closed cubes).
#[inline]
pub fn adjacent(l1: usize, c1: [u64; 3], l2: usize, c2: [u64; 3]) -> bool {
    let lf = l1.max(l2);
    (0..3).all(|d| {
        let (a1, b1) = (c1[d] << (lf - l1), (c1[d] + 1) << (lf - l1));
        let (a2, b2) = (c2[d] << (lf - l2), (c2[d] + 1) << (lf - l2));
        a1 <= b2 && a2 <= b1
    })
}

/// A box of the tree: level and index in it.
type BoxRef = (usize, usize);

fn coords(tree: &Tree, (l, b): BoxRef) -> [u64; 3] {
    decode(tree.levels[l].keys[b])
}

fn count(tree: &Tree, (l, b): BoxRef) -> usize {
    let r = tree.levels[l].range[b];
    (r[1] - r[0]) as usize
}

fn range(tree: &Tree, (l, b): BoxRef) -> SourceRange {
    let r = tree.levels[l].range[b];
    SourceRange { start: r[0], end: r[1], shift: [0.0; 3] }
}

/// The position `c + off` at `level`, if inside the root cube.
fn offset(level: usize, c: [u64; 3], off: [i32; 3]) -> Option<[u64; 3]> {
    let n = 1i64 << level;
    let mut out = [0; 3];
    for d in 0..3 {
        let v = c[d] as i64 + off[d] as i64;
        if v < 0 || v >= n {
            return None;
        }
        out[d] = v as u64;
    }
    Some(out)
}

/// The leaf coarser than `level` that covers the (absent) box at `c`, if any: the first
/// existing ancestor position, when it is a leaf (otherwise the region holds no particles).
fn coarser_leaf(tree: &Tree, level: usize, c: [u64; 3]) -> Option<BoxRef> {
    for l in (0..level).rev() {
        let s = level - l;
        if let Some(i) = tree.levels[l].find(encode([c[0] >> s, c[1] >> s, c[2] >> s])) {
            return tree.levels[l].is_leaf(i).then_some((l, i));
        }
    }
    None
}

/// The 27 offsets `{−1, 0, 1}³`.
fn offsets() -> impl Iterator<Item = [i32; 3]> {
    (0..27).map(|i| [i % 3 - 1, (i / 3) % 3 - 1, i / 9 - 1])
}

/// The X list of box `a` at `level ≥ 1`: the leaves coarser than `a` adjacent to its parent and
/// not to `a`, into `out` (cleared first).
fn x_list(tree: &Tree, (level, a): BoxRef, out: &mut Vec<BoxRef>) {
    out.clear();
    let c = coords(tree, (level, a));
    let pc = [c[0] >> 1, c[1] >> 1, c[2] >> 1];
    let pl = level - 1;
    for off in offsets().filter(|o| *o != [0, 0, 0]) {
        let Some(pn) = offset(pl, pc, off) else { continue };
        let cand = match tree.levels[pl].find(encode(pn)) {
            Some(i) => tree.levels[pl].is_leaf(i).then_some((pl, i)),
            None => coarser_leaf(tree, pl, pn),
        };
        if let Some(x) = cand {
            if !adjacent(x.0, coords(tree, x), level, c) && !out.contains(&x) {
                out.push(x);
            }
        }
    }
}

/// Per-leaf list building state.
struct LeafLists {
    p2p: Vec<SourceRange>,
    m2p: Vec<[u32; 2]>,
    counts: Vec<[u32; 2]>,
}

impl AdaptiveLists {
    /// All lists of the adaptive `tree` for expansion order `p`. Error: [`Error::Alloc`].
    pub fn new(threads: &Threads, tree: &Tree, p: usize) -> Result<Self> {
        let what = "the FMM interaction lists";
        let (thr_w, thr_x) = (params::m2p_cost(p), params::p2l_cost(p));
        let nl = tree.leaves.len();
        // per chunk of leaves: flat lists and per-leaf counts
        const G: usize = 64;
        let nchunks = nl.div_ceil(G);
        let mut parts: Vec<Result<LeafLists>> = try_vec(nchunks, what)?;
        parts.extend((0..nchunks).map(|_| Ok(LeafLists { p2p: Vec::new(), m2p: Vec::new(), counts: Vec::new() })));
        threads.chunks(&mut parts, 1, |ci, part| {
            let r = (|| -> Result<LeafLists> {
                let mut ll = LeafLists { p2p: Vec::new(), m2p: Vec::new(), counts: try_vec(G, what)? };
                let (mut stack, mut coarse, mut xs) = (Vec::new(), Vec::new(), Vec::new());
                for i in ci * G..((ci + 1) * G).min(nl) {
                    let [l, b] = tree.leaves[i];
                    let leaf = (l as usize, b as usize);
                    let (n0, m0) = (ll.p2p.len(), ll.m2p.len());
                    Self::u_and_w(tree, leaf, thr_w, &mut ll, &mut stack, &mut coarse)?;
                    // X boxes of the leaf and of its ancestors small enough for P2P
                    let mut a = leaf;
                    while a.0 >= TOP && count(tree, a) <= thr_x {
                        x_list(tree, a, &mut xs);
                        try_grow(&mut ll.p2p, xs.len(), what)?;
                        ll.p2p.extend(xs.iter().map(|&x| range(tree, x)));
                        a = (a.0 - 1, tree.levels[a.0].parent[a.1] as usize);
                    }
                    ll.counts.push([(ll.p2p.len() - n0) as u32, (ll.m2p.len() - m0) as u32]);
                }
                Ok(ll)
            })();
            part[0] = r;
        });
        let mut p2p_start: Vec<u32> = try_vec(nl + 1, what)?;
        let mut m2p_start: Vec<u32> = try_vec(nl + 1, what)?;
        let (mut np, mut nm) = (0usize, 0usize);
        let mut ok = Vec::with_capacity(nchunks);
        for part in parts {
            ok.push(part?);
        }
        for part in &ok {
            for c in &part.counts {
                p2p_start.push(np as u32);
                m2p_start.push(nm as u32);
                np += c[0] as usize;
                nm += c[1] as usize;
            }
        }
        p2p_start.push(np as u32);
        m2p_start.push(nm as u32);
        if np > u32::MAX as usize || nm > u32::MAX as usize {
            return Err(Error::Alloc(format!("{what}: more than 2^32 entries")));
        }
        let mut p2p: Vec<SourceRange> = try_vec(np, what)?;
        let mut m2p: Vec<[u32; 2]> = try_vec(nm, what)?;
        for part in ok {
            p2p.extend_from_slice(&part.p2p);
            m2p.extend_from_slice(&part.m2p);
        }
        // P2L sources of the boxes with more than thr_x particles, and the M2L tiles
        let depth = tree.depth;
        let (mut p2l_start, mut p2l) = (Vec::with_capacity(depth + 1), Vec::with_capacity(depth + 1));
        let mut m2l = Vec::with_capacity(depth + 1);
        for l in 0..=depth {
            if l < TOP {
                p2l_start.push(Vec::new());
                p2l.push(Vec::new());
                m2l.push(Vec::new());
                continue;
            }
            let (s, v) = Self::p2l_level(threads, tree, l, thr_x)?;
            p2l_start.push(s);
            p2l.push(v);
            m2l.push(m2l_tiles(threads, tree, l)?);
        }
        Ok(AdaptiveLists { p2p_start, p2p, m2p_start, m2p, p2l_start, p2l, m2l })
    }

    /// U and W of `leaf`: colleagues, the finer leaves adjacent to it (descending through
    /// adjacent boxes; the non-adjacent children met on the way are W) and the coarser adjacent
    /// leaves (found above the absent colleagues).
    fn u_and_w(tree: &Tree, leaf: BoxRef, thr_w: usize, ll: &mut LeafLists, stack: &mut Vec<BoxRef>, coarse: &mut Vec<BoxRef>) -> Result<()> {
        let what = "the FMM interaction lists";
        let (l, _) = leaf;
        let c = coords(tree, leaf);
        coarse.clear();
        for off in offsets() {
            let Some(cn) = offset(l, c, off) else { continue };
            match tree.levels[l].find(encode(cn)) {
                Some(i) => {
                    stack.clear();
                    stack.push((l, i));
                    while let Some(bx) = stack.pop() {
                        let lev = &tree.levels[bx.0];
                        if lev.is_leaf(bx.1) {
                            try_grow(&mut ll.p2p, 1, what)?;
                            ll.p2p.push(range(tree, bx));
                            continue;
                        }
                        for ch in lev.child_start[bx.1] as usize..lev.child_start[bx.1 + 1] as usize {
                            let cb = (bx.0 + 1, ch);
                            if adjacent(cb.0, coords(tree, cb), l, c) {
                                try_grow(stack, 1, what)?;
                                stack.push(cb);
                            } else if count(tree, cb) > thr_w {
                                try_grow(&mut ll.m2p, 1, what)?;
                                ll.m2p.push([cb.0 as u32, cb.1 as u32]);
                            } else {
                                try_grow(&mut ll.p2p, 1, what)?;
                                ll.p2p.push(range(tree, cb));
                            }
                        }
                    }
                }
                None => {
                    if let Some(x) = coarser_leaf(tree, l, cn) {
                        if !coarse.contains(&x) {
                            coarse.push(x);
                            try_grow(&mut ll.p2p, 1, what)?;
                            ll.p2p.push(range(tree, x));
                        }
                    }
                }
            }
        }
        Ok(())
    }

    /// The P2L particle ranges (X lists) of the boxes of level `l` with more than `thr_x`
    /// particles, as (starts, ranges).
    fn p2l_level(threads: &Threads, tree: &Tree, l: usize, thr_x: usize) -> Result<(Vec<u32>, Vec<[u32; 2]>)> {
        let what = "the FMM P2L lists";
        let nb = tree.levels[l].len();
        const G: usize = 256;
        let nchunks = nb.div_ceil(G);
        let mut parts: Vec<Option<(Vec<u32>, Vec<[u32; 2]>)>> = try_vec(nchunks, what)?;
        parts.resize(nchunks, None);
        threads.chunks(&mut parts, 1, |ci, part| {
            let (mut counts, mut ranges, mut xs) = (Vec::with_capacity(G), Vec::new(), Vec::new());
            for b in ci * G..((ci + 1) * G).min(nb) {
                let n0 = ranges.len();
                if count(tree, (l, b)) > thr_x {
                    x_list(tree, (l, b), &mut xs);
                    if ranges.try_reserve(xs.len()).is_err() {
                        return;
                    }
                    ranges.extend(xs.iter().map(|&x| tree.levels[x.0].range[x.1]));
                }
                counts.push((ranges.len() - n0) as u32);
            }
            part[0] = Some((counts, ranges));
        });
        let mut start: Vec<u32> = try_vec(nb + 1, what)?;
        let mut total = 0usize;
        for part in &parts {
            let Some((counts, _)) = part else { return Err(Error::Alloc(format!("could not allocate {what} of level {l}"))) };
            for &c in counts {
                start.push(total as u32);
                total += c as usize;
            }
        }
        start.push(total as u32);
        let mut flat: Vec<[u32; 2]> = try_vec(total, what)?;
        for (_, r) in parts.into_iter().flatten() {
            flat.extend_from_slice(&r);
        }
        Ok((start, flat))
    }
}
