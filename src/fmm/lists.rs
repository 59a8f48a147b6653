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
use crate::error::{try_filled_vec, try_vec, Error, Result};
use crate::threads::Threads;
use std::sync::atomic::{AtomicBool, Ordering};

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
/// Memory is reserved fallibly ([`Error::Alloc`]).
pub fn m2l_tiles(threads: &Threads, tree: &Tree, level: usize) -> Result<Vec<Tile>> {
    let lev = &tree.levels[level];
    let mut count = [0usize; 8];
    lev.keys.iter().for_each(|&k| count[(k & 7) as usize] += 1);
    let ntiles: usize = count.iter().map(|c| c.div_ceil(W)).sum();
    let mut tiles: Vec<Tile> = try_vec(ntiles, "the FMM M2L lists")?;
    for oct in 0..8u64 {
        let mut targets = [NONE; W];
        let mut nt = 0;
        for b in (0..lev.len() as u32).filter(|&b| lev.keys[b as usize] & 7 == oct) {
            targets[nt] = b;
            nt += 1;
            if nt == W {
                tiles.push(Tile { targets, n: nt, entries: Vec::new() });
                (targets, nt) = ([NONE; W], 0);
            }
        }
        if nt > 0 {
            tiles.push(Tile { targets, n: nt, entries: Vec::new() });
        }
    }
    let failed = AtomicBool::new(false);
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
            let used = slots.iter().filter(|src| src.iter().any(|&s| s != NONE)).count();
            let Ok(mut entries) = try_vec(used, "the FMM M2L lists") else {
                failed.store(true, Ordering::Relaxed);
                return;
            };
            entries.extend(
                offs[oct]
                    .iter()
                    .zip(&slots)
                    .filter(|(_, src)| src.iter().any(|&s| s != NONE))
                    .map(|(v, src)| M2lEntry { dir: dir_index(*v) as u16, src: *src }),
            );
            t.entries = entries;
        }
    });
    if failed.load(Ordering::Relaxed) {
        return Err(Error::Alloc(format!("could not allocate the FMM M2L lists of level {level} ({} boxes)", lev.len())));
    }
    Ok(tiles)
}

/// The P2P source ranges of every leaf, flat: leaf `b`'s are `ranges[27 b .. 27 b + 27]`
/// (empty ranges where a neighbour box is unoccupied). Reserved fallibly ([`Error::Alloc`]).
pub fn p2p_lists(threads: &Threads, tree: &Tree) -> Result<Vec<SourceRange>> {
    let d = tree.depth;
    let lev = &tree.levels[d];
    let empty = SourceRange { start: 0, end: 0, shift: [0.0; 3] };
    let mut lists = try_filled_vec(lev.len().saturating_mul(27), empty, "the FMM P2P lists")?;
    threads.chunks(&mut lists, 27 * 64, |ci, ls| {
        for (o, list) in ls.chunks_mut(27).enumerate() {
            let b = ci * 64 + o;
            let c = decode(lev.keys[b]);
            let mut k = 0;
            for dz in -1..=1 {
                for dy in -1..=1 {
                    for dx in -1..=1 {
                        if let Some((s, img)) = tree.neighbour(d, c, [dx, dy, dz]) {
                            let shift = if tree.root_level == 0 {
                                [img[0] as f64 * tree.size, img[1] as f64 * tree.size, img[2] as f64 * tree.size]
                            } else {
                                [img[0] as f64 * tree.period(0), img[1] as f64 * tree.period(1), img[2] as f64 * tree.period(2)]
                            };
                            list[k] = SourceRange { start: tree.leaf_start[s], end: tree.leaf_start[s + 1], shift };
                            k += 1;
                        }
                    }
                }
            }
        }
    });
    Ok(lists)
}
