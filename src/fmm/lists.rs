//! Interaction lists, precomputed per execute and presorted (seed paper §3.3.4):
//!
//! * P2P: per leaf, its occupied neighbour leaves (26 + itself) as sorted-particle ranges with
//!   the periodic image shift;
//! * M2L: per level, *tiles* of up to `W` target boxes that have the same octant in their
//!   parents (hence the same 189 offsets `v = c_t − c_s`: children of the parent's 26
//!   neighbours and of the parent itself, minus the boxes adjacent to the target), each with its
//!   list of offsets and the source box per lane (periodic: wrapped, the offset stays the
//!   geometric one, so images are handled exactly).

use super::m2l::{M2lEntry, NONE};
use super::p2p::SourceRange;
use super::rotation::dir_index;
use super::simd::W;
use super::tree::{decode, Tree};
use crate::threads::Threads;

/// The offsets `v = c_t − c_s` (box units) of the M2L sources of a box with octant `oct` in
/// its parent: `v = o − b − 2δ`, `δ ∈ {−1,0,1}³`, `b ∈ {0,1}³`, `max|v_i| ≥ 2` (189 of them).
pub fn m2l_offsets(oct: usize) -> Vec<[i32; 3]> {
    let o = [(oct & 1) as i32, ((oct >> 1) & 1) as i32, ((oct >> 2) & 1) as i32];
    let mut out = Vec::with_capacity(189);
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                for b in 0..8 {
                    let bb = [b & 1, (b >> 1) & 1, (b >> 2) & 1];
                    let d = [dx, dy, dz];
                    let v = [o[0] - bb[0] - 2 * d[0], o[1] - bb[1] - 2 * d[1], o[2] - bb[2] - 2 * d[2]];
                    if v.iter().any(|c| c.abs() >= 2) {
                        out.push(v);
                    }
                }
            }
        }
    }
    out
}

/// One M2L tile: up to `W` target boxes (indices in the level) and their offset entries.
#[derive(Debug, Clone)]
pub struct Tile {
    /// Target boxes (the first `n` are valid).
    pub targets: [u32; W],
    /// Number of valid targets.
    pub n: usize,
    /// Offsets with at least one source.
    pub entries: Vec<M2lEntry>,
}

/// The M2L tiles of `level` (≥ 1). The sources of a box are found through its parent's 27
/// neighbours and their children (27 look-ups per box instead of 189).
pub fn m2l_tiles(threads: &Threads, tree: &Tree, level: usize) -> Vec<Tile> {
    let lev = &tree.levels[level];
    let mut tiles: Vec<Tile> = Vec::new();
    for oct in 0..8u64 {
        let members: Vec<u32> = (0..lev.len() as u32).filter(|&b| lev.keys[b as usize] & 7 == oct).collect();
        for ch in members.chunks(W) {
            let mut targets = [NONE; W];
            targets[..ch.len()].copy_from_slice(ch);
            tiles.push(Tile { targets, n: ch.len(), entries: Vec::new() });
        }
    }
    let offs: Vec<Vec<[i32; 3]>> = (0..8).map(m2l_offsets).collect();
    // position of each offset in its octant's list, by direction index (u16::MAX: not in it)
    let pos: Vec<Vec<u16>> = offs
        .iter()
        .map(|o| {
            let mut t = vec![u16::MAX; 343];
            for (i, v) in o.iter().enumerate() {
                t[dir_index(*v)] = i as u16;
            }
            t
        })
        .collect();
    let plev = &tree.levels[level - 1];
    threads.chunks(&mut tiles, 4, |_, ts| {
        let mut slots = vec![[NONE; W]; 189];
        for t in ts.iter_mut() {
            let oct = (lev.keys[t.targets[0] as usize] & 7) as usize;
            let o = [(oct & 1) as i32, ((oct >> 1) & 1) as i32, ((oct >> 2) & 1) as i32];
            slots.iter_mut().for_each(|s| *s = [NONE; W]);
            // the sources are the children of the parent's neighbours (26 + itself, periodic
            // images included) that are not adjacent to the target: offset v = o − b − 2δ for
            // the child with octant b of the parent neighbour at δ, kept where max|v_i| ≥ 2
            for lane in 0..t.n {
                let pb = lev.parent[t.targets[lane] as usize] as usize;
                let pc = decode(plev.keys[pb]);
                for dz in -1..=1 {
                    for dy in -1..=1 {
                        for dx in -1..=1 {
                            let Some((ps, _)) = tree.neighbour(level - 1, pc, [dx, dy, dz]) else { continue };
                            for c in plev.child_start[ps] as usize..plev.child_start[ps + 1] as usize {
                                let bo = lev.keys[c] & 7;
                                let b = [(bo & 1) as i32, ((bo >> 1) & 1) as i32, ((bo >> 2) & 1) as i32];
                                let v = [o[0] - b[0] - 2 * dx, o[1] - b[1] - 2 * dy, o[2] - b[2] - 2 * dz];
                                if v.iter().any(|x| x.abs() >= 2) {
                                    slots[pos[oct][dir_index(v)] as usize][lane] = c as u32;
                                }
                            }
                        }
                    }
                }
            }
            t.entries = offs[oct]
                .iter()
                .zip(&slots)
                .filter(|(_, src)| src.iter().any(|&s| s != NONE))
                .map(|(v, src)| M2lEntry { dir: dir_index(*v) as u16, src: *src })
                .collect();
        }
    });
    tiles
}

/// The P2P source ranges of every leaf.
pub fn p2p_lists(threads: &Threads, tree: &Tree) -> Vec<Vec<SourceRange>> {
    let d = tree.depth;
    let lev = &tree.levels[d];
    let mut lists: Vec<Vec<SourceRange>> = vec![Vec::new(); lev.len()];
    threads.chunks(&mut lists, 64, |ci, ls| {
        for (o, list) in ls.iter_mut().enumerate() {
            let b = ci * 64 + o;
            let c = decode(lev.keys[b]);
            let mut v = Vec::with_capacity(27);
            for dz in -1..=1 {
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        if let Some((s, img)) = tree.neighbour(d, c, [dx, dy, dz]) {
                            let shift = [img[0] as f64 * tree.size, img[1] as f64 * tree.size, img[2] as f64 * tree.size];
                            v.push(SourceRange { start: tree.leaf_start[s], end: tree.leaf_start[s + 1], shift });
                        }
                    }
                }
            }
            *list = v;
        }
    });
    lists
}
