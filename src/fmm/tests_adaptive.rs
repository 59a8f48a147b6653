//! Tests of the adaptive octree ([`tree::Tree::build_adaptive`], [`adaptive_lists`],
//! [`adaptive`]): the tree's invariants, the M2P and P2L operators against direct sums, the
//! interaction lists against their definitions (every pair of leaves covered exactly once), and
//! the whole method against direct sums on clustered inputs (Plummer, a thin spherical shell,
//! two distant clusters) at every tolerance, including tiny leaves that make W and X lists at
//! many levels.

use super::adaptive_lists::{adjacent, AdaptiveLists};
use super::harmonics::ncoef;
use super::tests::{block, check_open_with, cluster, direct_pot, p2m_ref, plummer, rng, uniform};
use super::tree::{decode, Tree, Workspace};
use super::*;
use rand::Rng;

/// Points uniform on the sphere of radius 1 about the origin, charges in [−½, ½).
fn shell(r: &mut rand_pcg::Pcg64, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut xyz = Vec::with_capacity(3 * n);
    for _ in 0..n {
        let ct: f64 = 2.0 * r.gen::<f64>() - 1.0;
        let ph: f64 = 2.0 * std::f64::consts::PI * r.gen::<f64>();
        let st = (1.0 - ct * ct).sqrt();
        xyz.extend_from_slice(&[st * ph.cos(), st * ph.sin(), ct]);
    }
    (xyz, (0..n).map(|_| r.gen::<f64>() - 0.5).collect())
}

/// Two Plummer clusters of half the particles each, 1000 scale radii apart.
fn two_clusters(r: &mut rand_pcg::Pcg64, n: usize) -> (Vec<f64>, Vec<f64>) {
    let (mut xyz, q) = plummer(r, n);
    for i in n / 2..n {
        xyz[3 * i] += 1000.0;
    }
    (xyz, q)
}

fn adaptive_tree(xyz: &[f64], q: &[f64], max_leaf: usize) -> Tree {
    let th = crate::threads::Threads::new(1).unwrap();
    let mut ws = Workspace::default();
    ws.reserve(q.len(), false).unwrap();
    let (lo, size) = Tree::bounding_cube(&th, xyz).unwrap();
    Tree::sort_keys(&th, xyz, lo, size, false, &mut ws).unwrap();
    Tree::build_adaptive(&th, xyz, q, lo, size, &mut ws, max_leaf).unwrap()
}

#[test]
fn adaptive_tree_invariants() {
    let (xyz, q) = plummer(&mut rng(7), 3000);
    for s in [1, 5, 40, 5000] {
        let t = adaptive_tree(&xyz, &q, s);
        // leaves partition the particles in order; every leaf holds ≤ s unless at the deepest key level
        assert_eq!(t.leaf_start[0], 0);
        assert_eq!(*t.leaf_start.last().unwrap() as usize, q.len());
        for (i, &[l, b]) in t.leaves.iter().enumerate() {
            let r = t.levels[l as usize].range[b as usize];
            assert_eq!([t.leaf_start[i], t.leaf_start[i + 1]], r);
            assert!(r[1] > r[0] && ((r[1] - r[0]) as usize <= s || l as usize == tree::KEY_DEPTH));
        }
        // a split box holds more than s and its children partition its range
        for l in 0..t.depth {
            let (lev, next) = (&t.levels[l], &t.levels[l + 1]);
            for b in 0..lev.len() {
                let (c0, c1) = (lev.child_start[b] as usize, lev.child_start[b + 1] as usize);
                if c0 == c1 {
                    continue;
                }
                assert!((lev.range[b][1] - lev.range[b][0]) as usize > s);
                assert_eq!(next.range[c0][0], lev.range[b][0]);
                assert_eq!(next.range[c1 - 1][1], lev.range[b][1]);
                for c in c0..c1 {
                    assert_eq!(next.parent[c] as usize, b);
                    assert_eq!(next.keys[c] >> 3, lev.keys[b]);
                    if c > c0 {
                        assert_eq!(next.range[c][0], next.range[c - 1][1]);
                    }
                }
            }
        }
        if s >= q.len() {
            assert_eq!((t.depth, t.nleaves()), (0, 1));
        }
    }
}

/// Every ordered pair of particles is covered exactly once: by P2P (U, small W and X), by M2P
/// (W), by P2L (X, at the target's box or an ancestor), or by M2L (V, between ancestors).
#[test]
fn adaptive_lists_cover_every_pair_once() {
    let (xyz, q) = two_clusters(&mut rng(3), 600);
    let th = crate::threads::Threads::new(1).unwrap();
    for (s, p) in [(1, 4), (3, 2), (8, 16), (30, 1)] {
        let t = adaptive_tree(&xyz, &q, s);
        let lists = AdaptiveLists::new(&th, &t, p).unwrap();
        let n = q.len();
        let mut cover = vec![0u8; n * n];
        let mut add = |ta: u32, te: u32, sa: u32, se: u32| {
            for i in ta..te {
                for j in sa..se {
                    cover[i as usize * n + j as usize] += 1;
                }
            }
        };
        let rng_of = |l: usize, b: usize| t.levels[l].range[b];
        for (i, &[l, b]) in t.leaves.iter().enumerate() {
            let (ta, te) = (t.leaf_start[i], t.leaf_start[i + 1]);
            for r in &lists.p2p[lists.p2p_start[i] as usize..lists.p2p_start[i + 1] as usize] {
                add(ta, te, r.start, r.end);
            }
            for &[sl, sb] in &lists.m2p[lists.m2p_start[i] as usize..lists.m2p_start[i + 1] as usize] {
                let r = rng_of(sl as usize, sb as usize);
                // the W box is not adjacent to the leaf
                assert!(!adjacent(l as usize, decode(t.levels[l as usize].keys[b as usize]), sl as usize, decode(t.levels[sl as usize].keys[sb as usize])));
                add(ta, te, r[0], r[1]);
            }
        }
        for l in 2..=t.depth {
            for b in 0..t.levels[l].len() {
                let tr = rng_of(l, b);
                for r in &lists.p2l[l][lists.p2l_start[l][b] as usize..lists.p2l_start[l][b + 1] as usize] {
                    add(tr[0], tr[1], r[0], r[1]);
                }
            }
            for tile in &lists.m2l[l] {
                for e in &tile.entries {
                    for lane in 0..tile.n {
                        if e.src[lane] != m2l::NONE {
                            let tr = rng_of(l, tile.targets[lane] as usize);
                            let sr = rng_of(l, e.src[lane] as usize);
                            add(tr[0], tr[1], sr[0], sr[1]);
                        }
                    }
                }
            }
        }
        let bad: Vec<usize> = (0..n * n).filter(|&k| cover[k] != 1).collect();
        assert!(bad.is_empty(), "max_leaf {s}: {} pairs covered ≠ once, e.g. ({}, {}) × {}", bad.len(), bad[0] / n, bad[0] % n, cover[bad[0]]);
    }
}

/// M2P and P2L against direct sums: potential and field of a cluster's multipole at points one
/// box away, and the local expansion of distant charges evaluated inside the box.
#[test]
fn m2p_and_p2l_against_direct() {
    let mut r = rng(11);
    let (c, h) = ([0.3, -0.2, 0.1], 0.5);
    let src = cluster(&mut r, 40, c, 0.5 * h);
    for p in [4usize, 10, 20] {
        let om = p2m_ref(p, &src, c, h);
        let tg = cluster(&mut r, 30, [c[0] + 1.6 * h, c[1] - 0.9 * h, c[2] + 1.2 * h], 0.3 * h);
        let (x, y, z): (Vec<f64>, Vec<f64>, Vec<f64>) = (tg.iter().map(|t| t.0[0]).collect(), tg.iter().map(|t| t.0[1]).collect(), tg.iter().map(|t| t.0[2]).collect());
        let (mut ph, mut ex, mut ey, mut ez) = (vec![0.0; 30], vec![0.0; 30], vec![0.0; 30], vec![0.0; 30]);
        let mut s = m2p::PointScratch::new(p);
        let mut co = m2p::M2pCoefs::new(p);
        co.set(p, &om, true);
        m2p::m2p(p, &co, c, h, &x, &y, &z, &mut ph, Some((&mut ex, &mut ey, &mut ez)), &mut s);
        let mut ph_only = vec![0.0; 30];
        co.set(p, &om, false);
        m2p::m2p(p, &co, c, h, &x, &y, &z, &mut ph_only, None, &mut s);
        assert_eq!(ph, ph_only);
        // truncation error ~ ratio^(p+1), ratio = (√3/2·h·0.5)/(distance)
        let bound = 4.0 * 0.45f64.powi(p as i32 + 1);
        for (k, t) in tg.iter().enumerate() {
            let d = direct_pot(&src, t.0);
            let e: Vec<f64> = (0..3)
                .map(|a| src.iter().map(|&(sp, qs)| {
                    let dv = [t.0[0] - sp[0], t.0[1] - sp[1], t.0[2] - sp[2]];
                    let r2 = dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2];
                    qs * dv[a] / (r2 * r2.sqrt())
                }).sum())
                .collect();
            let scale = src.iter().map(|s| s.1.abs()).sum::<f64>() / (1.6 * h);
            assert!((ph[k] - d).abs() <= bound * scale, "p {p}: phi {} vs {d}", ph[k]);
            let fscale = scale / h;
            for (a, g) in [&ex, &ey, &ez].iter().enumerate() {
                assert!((g[k] - e[a]).abs() <= 4.0 * bound * fscale, "p {p}: E[{a}] {} vs {}", g[k], e[a]);
            }
        }
        // P2L: distant charges into the box's local expansion, evaluated inside
        let far = cluster(&mut r, 25, [c[0] - 1.7 * h, c[1] + 1.5 * h, c[2]], 0.3 * h);
        let (fx, fy, fz, fq): (Vec<f64>, Vec<f64>, Vec<f64>, Vec<f64>) =
            (far.iter().map(|t| t.0[0]).collect(), far.iter().map(|t| t.0[1]).collect(), far.iter().map(|t| t.0[2]).collect(), far.iter().map(|t| t.1).collect());
        let mut mu = block(p);
        m2p::p2l(p, &fx, &fy, &fz, &fq, c, h, &mut mu, &mut s);
        let reg = harmonics::RegTables::new(p);
        let mut o = block(p);
        for t in cluster(&mut r, 10, c, 0.45 * h) {
            reg.regular([(t.0[0] - c[0]) / h, (t.0[1] - c[1]) / h, (t.0[2] - c[2]) / h], &mut o);
            let v = harmonics::dot_local(p, &mu, &o) / h;
            let d = direct_pot(&far, t.0);
            let scale = far.iter().map(|s| s.1.abs()).sum::<f64>() / (1.7 * h);
            assert!((v - d).abs() <= bound * scale, "p {p}: P2L {v} vs {d}");
        }
        assert_eq!(mu.len(), 2 * ncoef(p));
    }
}

fn check_adaptive(name: &str, xyz: &[f64], q: &[f64], tols: &[f64], tree: TreeKind) {
    check_open_with(&format!("{name} {tree:?}"), xyz, q, tols, FmmOpts { tree, ..Default::default() });
}

#[test]
fn adaptive_accuracy_clustered() {
    let tols = [1e-3, 1e-6, 1e-9];
    let mut r = rng(21);
    let (xyz, q) = plummer(&mut r, 20000);
    check_adaptive("plummer", &xyz, &q, &tols, TreeKind::Auto);
    check_adaptive("plummer", &xyz, &q, &tols[1..2], TreeKind::Adaptive { max_leaf: 3 });
    let (xyz, q) = shell(&mut r, 20000);
    check_adaptive("shell", &xyz, &q, &tols, TreeKind::Adaptive { max_leaf: 0 });
    let (xyz, q) = two_clusters(&mut r, 20000);
    check_adaptive("two clusters", &xyz, &q, &tols, TreeKind::Adaptive { max_leaf: 0 });
    let (xyz, q) = uniform(&mut r, 20000);
    check_adaptive("uniform", &xyz, &q, &tols[1..2], TreeKind::Adaptive { max_leaf: 0 });
}
