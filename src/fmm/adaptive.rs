//! The far and near field on an adaptive octree ([`Tree::build_adaptive`], open boundaries):
//! the adaptive FMM of Carrier, Greengard & Rokhlin (SIAM J. Sci. Stat. Comput. 9, 669
//! (1988)) with the operators of the uniform tree. Expansions are stored per level, box-major,
//! in the layout of [`super::harmonics`] (every box of the levels ≥ 2, leaf or not, has a
//! block), so the level-wise passes of the uniform tree apply unchanged:
//!
//! 1. P2M at every leaf of the levels ≥ 2 (its own level's box side), M2M level by level
//!    (boxes without children receive nothing);
//! 2. M2L over the V-list tiles of every level, then P2L of the X lists;
//! 3. L2L level by level, L2P at every leaf of the levels ≥ 2;
//! 4. M2P of the W lists and P2P of the U lists (and of the small W and X boxes) per leaf.
//!
//! Lists in [`super::adaptive_lists`].

use super::adaptive_lists::{AdaptiveLists, TOP};
use super::harmonics::ncoef;
use super::stages::SortedOutputs;
use super::tree::Tree;
use super::{l2p, m2p, p2m, p2p, CpuFmm, StageTimes};
use crate::error::{try_zeroed_vec, Result};
use crate::threads::SyncPtr;
use std::time::Instant;

/// Per-level expansion arrays of the adaptive tree (levels below [`TOP`] empty).
fn expansions(tree: &Tree, nc2: usize, what: &str) -> Result<Vec<Vec<f64>>> {
    (0..=tree.depth).map(|l| try_zeroed_vec(if l >= TOP { tree.levels[l].len() * nc2 } else { 0 }, what)).collect()
}

impl CpuFmm {
    /// Stages 3–5 on an adaptive tree (see the module documentation), accumulated into `out`;
    /// stage times to `times`. Error: [`crate::error::Error::Alloc`].
    pub(super) fn evaluate_adaptive(&self, tree: &Tree, out: &mut SortedOutputs, times: &mut StageTimes) -> Result<()> {
        let (th, p) = (&self.threads, self.p);
        let nc2 = 2 * ncoef(p);
        let t = Instant::now();
        let lists = AdaptiveLists::new(th, tree, p)?;
        times.lists = t.elapsed().as_secs_f64();
        let depth = tree.depth;
        let nl = tree.nleaves();
        let want_field = out.wants_field();
        let ranges = out.ranges();

        // P2M at the leaves of the far levels
        let t = Instant::now();
        let mut mp = expansions(tree, nc2, "FMM multipole expansions")?;
        {
            let ptrs: Vec<SyncPtr<f64>> = mp.iter_mut().map(|v| SyncPtr(v.as_mut_ptr())).collect();
            let reg = &self.reg;
            const G: usize = 16;
            th.for_each(nl.div_ceil(G), |ci| {
                let mut s = p2m::LaneScratch::new(p);
                for i in ci * G..((ci + 1) * G).min(nl) {
                    let [l, b] = tree.leaves[i];
                    let (l, b) = (l as usize, b as usize);
                    if l < TOP {
                        continue;
                    }
                    let (a, e) = (tree.leaf_start[i] as usize, tree.leaf_start[i + 1] as usize);
                    // SAFETY: every leaf owns its block of its level.
                    let blk = unsafe { std::slice::from_raw_parts_mut(ptrs[l].0.add(b * nc2), nc2) };
                    let c = tree.center(l, tree.levels[l].keys[b]);
                    p2m::p2m(reg, &tree.x[a..e], &tree.y[a..e], &tree.z[a..e], &tree.q[a..e], c, 1.0 / tree.h(l), blk, &mut s);
                }
            });
        }
        times.p2m = t.elapsed().as_secs_f64();
        let t = Instant::now();
        for l in (TOP..depth).rev() {
            let (up, down) = mp.split_at_mut(l + 1);
            self.m2m_level(tree, l, &mut up[l], &down[0]);
        }
        times.m2m = t.elapsed().as_secs_f64();

        // M2L (V lists), P2L (X lists)
        let t = Instant::now();
        let mut loc = expansions(tree, nc2, "FMM local expansions")?;
        for l in TOP..=depth {
            self.m2l_level(&lists.m2l[l], &mp[l], &mut loc[l]);
            let (starts, srcs) = (&lists.p2l_start[l], &lists.p2l[l]);
            let lev = &tree.levels[l];
            th.chunks(&mut loc[l], 16 * nc2, |ci, chunk| {
                let mut s = m2p::PointScratch::new(p);
                for (o, blk) in chunk.chunks_mut(nc2).enumerate() {
                    let b = ci * 16 + o;
                    let (c, h) = (tree.center(l, lev.keys[b]), tree.h(l));
                    for &[a, e] in &srcs[starts[b] as usize..starts[b + 1] as usize] {
                        let (a, e) = (a as usize, e as usize);
                        m2p::p2l(p, &tree.x[a..e], &tree.y[a..e], &tree.z[a..e], &tree.q[a..e], c, h, blk, &mut s);
                    }
                }
            });
        }
        times.m2l = t.elapsed().as_secs_f64();

        // L2L
        let t = Instant::now();
        for l in TOP..depth {
            let (up, down) = loc.split_at_mut(l + 1);
            self.l2l_level(tree, l, &up[l], &mut down[0]);
        }
        times.l2l = t.elapsed().as_secs_f64();

        // L2P and M2P per leaf
        let t = Instant::now();
        {
            let (reg, loc, mp) = (&self.reg, &loc, &mp);
            const LG: usize = 16;
            th.for_each(nl.div_ceil(LG), |ci| {
                let mut s = p2m::LaneScratch::new(p);
                let mut co = l2p::EvalCoefs::new(p);
                let mut ps = m2p::PointScratch::new(p);
                let mut mc = m2p::M2pCoefs::new(p);
                for i in ci * LG..((ci + 1) * LG).min(nl) {
                    let [l, b] = tree.leaves[i];
                    let (l, b) = (l as usize, b as usize);
                    let (a, e) = (tree.leaf_start[i] as usize, tree.leaf_start[i + 1] as usize);
                    let (x, y, z) = (&tree.x[a..e], &tree.y[a..e], &tree.z[a..e]);
                    // SAFETY: leaves own disjoint particle ranges a..e ⊂ 0..n.
                    let (ph, mut g) = unsafe { ranges.range(a, e) };
                    if l >= TOP {
                        co.set(p, &loc[l][b * nc2..(b + 1) * nc2], want_field);
                        let c = tree.center(l, tree.levels[l].keys[b]);
                        l2p::l2p(reg, &co, x, y, z, c, tree.h(l), &mut ph[..], g.as_mut().map(|(a, b, c)| (&mut a[..], &mut b[..], &mut c[..])), &mut s);
                    }
                    for &[sl, sb] in &lists.m2p[lists.m2p_start[i] as usize..lists.m2p_start[i + 1] as usize] {
                        let (sl, sb) = (sl as usize, sb as usize);
                        let c = tree.center(sl, tree.levels[sl].keys[sb]);
                        mc.set(p, &mp[sl][sb * nc2..(sb + 1) * nc2], want_field);
                        m2p::m2p(p, &mc, c, tree.h(sl), x, y, z, &mut ph[..], g.as_mut().map(|(a, b, c)| (&mut a[..], &mut b[..], &mut c[..])), &mut ps);
                    }
                }
            });
        }
        times.l2p = t.elapsed().as_secs_f64();

        // P2P
        let t = Instant::now();
        let pt = p2p::Particles { x: &tree.x, y: &tree.y, z: &tree.z, q: &tree.q };
        const PG: usize = 8;
        th.for_each(nl.div_ceil(PG), |ci| {
            for i in ci * PG..((ci + 1) * PG).min(nl) {
                let (a, e) = (tree.leaf_start[i] as usize, tree.leaf_start[i + 1] as usize);
                // SAFETY: leaves own disjoint particle ranges a..e ⊂ 0..n.
                let (ph, g) = unsafe { ranges.range(a, e) };
                p2p::p2p(pt, a, e, &lists.p2p[lists.p2p_start[i] as usize..lists.p2p_start[i + 1] as usize], ph, g);
            }
        });
        times.p2p = t.elapsed().as_secs_f64();
        Ok(())
    }
}
