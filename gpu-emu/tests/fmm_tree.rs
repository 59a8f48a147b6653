//! The FMM tree on the device (`farfield::gpu::fmm::tree::build`, kernels of
//! `fmm_tree.cu`) against the CPU's tree (`CpuFmm::stage_dump(...).tree`, `side`, `lo`):
//! bitwise equal arrays for uniform and Plummer particles, open and periodic boundaries
//! (periodic particles outside the box, negative coordinates), n ∈ {1, 2, 7, 1000, 20000},
//! automatic depth and depth ∈ {0, 2, 3, 4}; lattices whose root cube the CPU moves; the same
//! errors and messages as the CPU for NaN/Inf and coincident particles; the device radix sort
//! against a stable host sort with many equal keys.

use farfield::fmm::tree::cube_from_bounds;
use farfield::fmm::{Boundary, FmmOpts, CpuFmm};
use farfield::gpu::device::{download_vec, upload_new, Device};
use farfield::gpu::fmm::tree::{build, radix_sort};
use farfield::gpu::fmm::DeviceTree;
use farfield::threads::Threads;
use farfield_gpu_emu::EmuDevice;
use rand::{Rng, SeedableRng};

type Rng64 = rand_pcg::Pcg64;

fn uniform(rng: &mut Rng64, n: usize, lo: f64, hi: f64) -> Vec<f64> {
    (0..3 * n).map(|_| rng.gen_range(lo..hi)).collect()
}

/// A Plummer sphere of scale radius `a` centred at `c`: r = a (u^(−2/3) − 1)^(−1/2), u uniform,
/// r < 10a, isotropic directions.
fn plummer(rng: &mut Rng64, n: usize, a: f64, c: f64) -> Vec<f64> {
    let mut v = Vec::with_capacity(3 * n);
    while v.len() < 3 * n {
        let u: f64 = rng.gen_range(1e-12..1.0);
        let r = (u.powf(-2.0 / 3.0) - 1.0).powf(-0.5);
        if !(r < 10.0) {
            continue;
        }
        let ct: f64 = rng.gen_range(-1.0..1.0);
        let ph: f64 = rng.gen_range(0.0..std::f64::consts::TAU);
        let st = (1.0 - ct * ct).sqrt();
        v.extend([c + a * r * st * ph.cos(), c + a * r * st * ph.sin(), c + a * r * ct]);
    }
    v
}

fn charges(rng: &mut Rng64, n: usize) -> Vec<f64> {
    (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect()
}

fn bits(v: &[f64]) -> Vec<u64> {
    v.iter().map(|x| x.to_bits()).collect()
}

/// Asserts that the device tree is the CPU tree, bitwise.
fn assert_same_tree(dev: &EmuDevice, g: &DeviceTree<EmuDevice>, d: &farfield::fmm::StageDump, label: &str) {
    let t = &d.tree;
    let n = t.q.len();
    assert_eq!(g.n, n, "{label}: n");
    assert_eq!(g.depth, t.depth, "{label}: depth");
    assert_eq!(g.periodic, t.periodic, "{label}: periodic");
    assert_eq!(bits(&g.lo), bits(&d.lo), "{label}: lo {:?} vs {:?}", g.lo, d.lo);
    assert_eq!(g.side.to_bits(), d.side.to_bits(), "{label}: side {} vs {}", g.side, d.side);
    let f = |b: &<EmuDevice as Device>::Buf| bits(&download_vec::<_, f64>(dev, b, n).unwrap());
    assert_eq!(f(&g.x), bits(&t.x), "{label}: x");
    assert_eq!(f(&g.y), bits(&t.y), "{label}: y");
    assert_eq!(f(&g.z), bits(&t.z), "{label}: z");
    assert_eq!(f(&g.q), bits(&t.q), "{label}: q");
    assert_eq!(download_vec::<_, u32>(dev, &g.perm, n).unwrap(), t.perm, "{label}: perm");
    assert_eq!(g.nleaves(), t.nleaves(), "{label}: nleaves");
    assert_eq!(download_vec::<_, u32>(dev, &g.leaf_start, t.leaf_start.len()).unwrap(), t.leaf_start, "{label}: leaf_start");
    assert_eq!(g.levels.len(), t.levels.len(), "{label}: levels");
    for (l, (gl, cl)) in g.levels.iter().zip(&t.levels).enumerate() {
        assert_eq!(gl.len, cl.len(), "{label}: level {l} size");
        assert_eq!(download_vec::<_, u64>(dev, &gl.keys, gl.len).unwrap(), cl.keys, "{label}: level {l} keys");
        if l > 0 {
            assert_eq!(download_vec::<_, u32>(dev, &gl.parent, gl.len).unwrap(), cl.parent, "{label}: level {l} parent");
        }
        if l < t.depth {
            assert_eq!(download_vec::<_, u32>(dev, &gl.child_start, gl.len + 1).unwrap(), cl.child_start, "{label}: level {l} child_start");
        }
    }
}

/// Builds the tree on the CPU (stage dump) and on the device; both succeed with the same tree
/// or fail with the same error. Returns the CPU's dump when it succeeded.
fn compare(dev: &EmuDevice, xyz: &[f64], q: &[f64], boundary: Boundary, depth: Option<usize>, label: &str) -> Option<farfield::fmm::StageDump> {
    let opts = FmmOpts { depth, nthreads: 1, ..Default::default() };
    let mut plan = CpuFmm::new(boundary, 1e-3, &opts).unwrap();
    let cpu = plan.stage_dump(xyz, q);
    let (xb, qb) = (upload_new(dev, xyz).unwrap(), upload_new(dev, q).unwrap());
    // the host part of the device build on two threads, the CPU plan's on one
    let mut marks = Vec::new();
    let gpu = build(dev, &Threads::new(2).unwrap(), &xb, &qb, q.len(), boundary, plan.order(), depth, &mut marks);
    match (cpu, gpu) {
        (Ok(c), Ok(g)) => {
            assert_same_tree(dev, &g, &c, label);
            assert_eq!(marks.len(), farfield::fmm::GPU_TREE_STEPS.len(), "{label}: a mark after each step");
            Some(c)
        }
        (Err(a), Err(b)) => {
            assert_eq!(format!("{a:?}"), format!("{b:?}"), "{label}: errors");
            None
        }
        (Ok(_), Err(e)) => panic!("{label}: CPU built the tree, the device failed: {e:?}"),
        (Err(e), Ok(_)) => panic!("{label}: the device built a tree, the CPU failed: {e:?}"),
    }
}

#[test]
fn device_tree_equals_cpu_tree() {
    let dev = EmuDevice::default();
    let mut rng = Rng64::seed_from_u64(13);
    let side = 3.0;
    let mut built = 0;
    for n in [1usize, 2, 7, 1000, 20000] {
        for plum in [false, true] {
            if plum && n < 1000 {
                continue;
            }
            let xyz = if plum { plummer(&mut rng, n, 0.4, 1.1) } else { uniform(&mut rng, n, -1.3, 2.1) };
            // periodic: the box [0, 3) with particles from −1.5 to 4.5 (outside the box,
            // negative), the Plummer sphere reaching out by up to 10 scale radii
            let xyz_p: Vec<f64> = if plum { xyz.clone() } else { xyz.iter().map(|v| (v + 1.3) / 3.4 * 2.0 * side - 0.5 * side).collect() };
            let q = charges(&mut rng, n);
            let depths: &[Option<usize>] = if n >= 20000 { &[None, Some(3), Some(4)] } else { &[None, Some(0), Some(2), Some(3), Some(4)] };
            for &depth in depths {
                for periodic in [false, true] {
                    let (b, x) = if periodic { (Boundary::Periodic { side }, &xyz_p) } else { (Boundary::Open, &xyz) };
                    let label = format!("n = {n}, {}, {}, depth {depth:?}", if plum { "Plummer" } else { "uniform" }, if periodic { "periodic" } else { "open" });
                    if compare(&dev, x, &q, b, depth, &label).is_some() {
                        built += 1;
                    }
                }
            }
        }
    }
    assert_eq!(built, 2 * (3 * 5 + 2 * 5 + 2 * 3));
}

#[test]
fn lattices_move_the_root_cube_as_on_the_cpu() {
    let dev = EmuDevice::default();
    // open: 9³ sites spanning the bounding cube sit on box corners; the CPU moves the cube
    let m = 9;
    let mut xyz = Vec::new();
    for k in 0..m {
        for j in 0..m {
            for i in 0..m {
                xyz.extend([i as f64 * 0.5 - 1.0, j as f64 * 0.5 + 3.0, k as f64 * 0.5]);
            }
        }
    }
    let n = m * m * m;
    let q: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
    for depth in [None, Some(3)] {
        let d = compare(&dev, &xyz, &q, Boundary::Open, depth, &format!("open lattice, depth {depth:?}")).expect("builds");
        let (blo, bside) = cube_from_bounds([-1.0, 3.0, 0.0], [3.0, 7.0, 4.0]).unwrap();
        if depth.is_some() {
            assert!(d.lo != blo || d.side != bside, "the CPU kept the bounding cube: the test shows nothing");
        }
    }
    // periodic: a rock-salt lattice of 8³ sites with a site at the origin, in a box of side 4
    let (m, side) = (8, 4.0);
    let mut xyz = Vec::new();
    let mut q = Vec::new();
    for k in 0..m {
        for j in 0..m {
            for i in 0..m {
                xyz.extend([i as f64 * 0.5, j as f64 * 0.5, k as f64 * 0.5]);
                q.push(if (i + j + k) % 2 == 0 { 1.0 } else { -1.0 });
            }
        }
    }
    for depth in [None, Some(2)] {
        let d = compare(&dev, &xyz, &q, Boundary::Periodic { side }, depth, &format!("periodic lattice, depth {depth:?}")).expect("builds");
        if depth.is_some() {
            assert!(d.lo != [0.0; 3], "the CPU kept the origin: the test shows nothing");
        }
    }
}

#[test]
fn errors_as_on_the_cpu() {
    let dev = EmuDevice::default();
    let mut rng = Rng64::seed_from_u64(7);
    let n = 600;
    let xyz0 = uniform(&mut rng, n, -2.0, 5.0);
    let q0 = charges(&mut rng, n);
    let mut cases = 0;
    for b in [Boundary::Open, Boundary::Periodic { side: 3.0 }] {
        // non-finite values: the first index over xyz, then over q
        for (bad_x, bad_q) in [(vec![0usize], vec![]), (vec![3 * n - 1], vec![]), (vec![1000, 200], vec![5]), (vec![], vec![n - 1, 17]), (vec![], vec![0])] {
            for v in [f64::NAN, f64::INFINITY, f64::NEG_INFINITY] {
                let (mut xyz, mut q) = (xyz0.clone(), q0.clone());
                for &i in &bad_x {
                    xyz[i] = v;
                }
                for &i in &bad_q {
                    q[i] = v;
                }
                assert!(compare(&dev, &xyz, &q, b, None, &format!("non-finite {bad_x:?} {bad_q:?} {v}")).is_none());
                cases += 1;
            }
        }
        // coincident particles (caller's indices, smaller first; several pairs: the smallest)
        for pairs in [vec![(10usize, 500usize)], vec![(400, 3)], vec![(599, 598), (50, 51)]] {
            let mut xyz = xyz0.clone();
            for &(src, dst) in &pairs {
                let p = [xyz[3 * src], xyz[3 * src + 1], xyz[3 * src + 2]];
                xyz[3 * dst..3 * dst + 3].copy_from_slice(&p);
            }
            assert!(compare(&dev, &xyz, &q0, b, None, &format!("coincident {pairs:?}")).is_none());
            cases += 1;
        }
    }
    // periodic: coincident up to a period
    let mut xyz = xyz0.clone();
    for d in 0..3 {
        xyz[3 * 42 + d] = xyz[3 * 7 + d] + 3.0 * (d as f64 - 1.0);
    }
    assert!(compare(&dev, &xyz, &q0, Boundary::Periodic { side: 3.0 }, Some(2), "coincident up to a period").is_none());
    // equal keys without coincidence: the device downloads the runs and finds none
    let mut xyz = xyz0.clone();
    xyz[3 * 9] = xyz[3 * 8] * (1.0 + 1e-15);
    xyz[3 * 9 + 1] = xyz[3 * 8 + 1];
    xyz[3 * 9 + 2] = xyz[3 * 8 + 2];
    assert!(compare(&dev, &xyz, &q0, Boundary::Open, None, "equal keys, distinct particles").is_some());
    // extent out of range
    let mut xyz = xyz0.clone();
    xyz[0] = -1.7e308;
    xyz[3] = 1.7e308;
    assert!(compare(&dev, &xyz, &q0, Boundary::Open, None, "extent overflow").is_none());
    cases += 2;
    assert_eq!(cases, 2 * (5 * 3 + 3) + 2);
}

#[test]
fn radix_sort_is_stable() {
    let dev = EmuDevice::default();
    let mut rng = Rng64::seed_from_u64(99);
    // many equal keys; digits in various positions (skipped passes, every digit), n over the
    // single-block scan size of the histograms
    let cases: Vec<Vec<u64>> = vec![
        (0..3000).map(|_| rng.gen_range(0..16u64)).collect(),
        (0..3000).map(|_| rng.gen_range(0..8u64) << 37 | rng.gen_range(0..3u64) << 5).collect(),
        (0..5000).map(|_| rng.gen_range(0..1u64 << 60) & !0xff00).collect(),
        (0..70000).map(|_| rng.gen_range(0..40u64) << 9).collect(),
        vec![5; 100],
        vec![7],
    ];
    for keys in cases {
        let n = keys.len();
        let perm: Vec<u32> = (0..n as u32).collect();
        let (mut kb, mut pb) = (upload_new(&dev, &keys).unwrap(), upload_new(&dev, &perm).unwrap());
        let (mut k2, mut p2) = (dev.alloc(8 * n).unwrap(), dev.alloc(4 * n).unwrap());
        radix_sort(&dev, &mut kb, &mut pb, &mut k2, &mut p2, n as u64).unwrap();
        let mut want: Vec<(u64, u32)> = keys.iter().copied().zip(perm).collect();
        want.sort_by_key(|e| e.0); // stable
        let gk: Vec<u64> = download_vec(&dev, &kb, n).unwrap();
        let gp: Vec<u32> = download_vec(&dev, &pb, n).unwrap();
        assert_eq!(gk, want.iter().map(|e| e.0).collect::<Vec<_>>(), "keys, n = {n}");
        assert_eq!(gp, want.iter().map(|e| e.1).collect::<Vec<_>>(), "permutation, n = {n}");
    }
}
