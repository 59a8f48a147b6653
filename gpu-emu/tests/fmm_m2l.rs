//! GPU M2L (src/gpu/fmm/m2l.rs, kernels/fmm_m2l.cu) on the emulator against the CPU FMM's
//! stages (`CpuFmm::stage_dump`): the device-built lists against the CPU lists
//! (`fmm::lists::m2l_tiles`: the same (target, source, offset) triples, and the symmetry
//! classes a regrouping of them), the locals after M2L (and the periodic lattice operator) of
//! both kernels against the CPU's to rounding (relative difference ≤ 1e-12, symmetric vs plain
//! ≤ 1e-13), and the operator loads and multiplications the symmetry saves (exactly the
//! expected factors on full levels).

use farfield::fmm::harmonics::ncoef;
use farfield::fmm::lists::m2l_tiles;
use farfield::fmm::params::m2l_order;
use farfield::fmm::rotation::dir_vector;
use farfield::fmm::{Boundary, FmmOpts, CpuFmm, StageDump};
use farfield::gpu::device::{download_vec, upload_new};
use farfield::gpu::fmm::m2l::{m2l, m2l_counts, m2l_lists, m2l_split, m2l_with, reference_offsets, M2lMethod, M2lTables, M2L_MIN_BLOCKS, NREFS};
use farfield::gpu::fmm::{DeviceTree, Expansions};
use farfield::threads::Threads;
use farfield_gpu_emu::EmuDevice;
use rand::{Rng, SeedableRng};
use std::time::Instant;

#[derive(Debug, Clone, Copy, PartialEq)]
enum Dist {
    Uniform,
    Plummer,
}

/// `n` particles in the unit cube (uniform) or a Plummer sphere (`r = (u^{−2/3} − 1)^{−1/2}`,
/// clipped at 4, scale 0.08, centred at (0.45, 0.5, 0.55); folded into the box when periodic),
/// charges uniform in [−1, 1].
fn particles(n: usize, dist: Dist, periodic: bool, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut r = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut xyz = Vec::with_capacity(3 * n);
    for _ in 0..n {
        match dist {
            Dist::Uniform => (0..3).for_each(|_| xyz.push(r.gen::<f64>())),
            Dist::Plummer => {
                let u: f64 = r.gen_range(1e-6..1.0);
                let rad = (u.powf(-2.0 / 3.0) - 1.0).powf(-0.5).min(4.0);
                let ct: f64 = r.gen_range(-1.0..1.0);
                let ph: f64 = r.gen_range(0.0..std::f64::consts::TAU);
                let st = (1.0 - ct * ct).sqrt();
                let d = [st * ph.cos(), st * ph.sin(), ct];
                let c = [0.45, 0.5, 0.55];
                for k in 0..3 {
                    let x = c[k] + 0.08 * rad * d[k];
                    xyz.push(if periodic { x.rem_euclid(1.0) } else { x });
                }
            }
        }
    }
    let q = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
    (xyz, q)
}

fn rel_diff(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let m = b.iter().fold(0.0f64, |m, x| m.max(x.abs()));
    let d = a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs()));
    if m == 0.0 {
        d
    } else {
        d / m
    }
}

fn dump(p: usize, depth: usize, dist: Dist, periodic: bool, n: usize, seed: u64) -> StageDump {
    let (xyz, q) = particles(n, dist, periodic, seed);
    let opts = FmmOpts { order: p, depth: Some(depth), nthreads: 1, ..Default::default() };
    let boundary = if periodic { Boundary::Periodic { side: 1.0 } } else { Boundary::Open };
    let mut plan = CpuFmm::new(boundary, 1e-6, &opts).unwrap();
    plan.stage_dump(&xyz, &q).unwrap()
}

/// Uploads the dump's tree and multipoles.
fn upload(dev: &EmuDevice, d: &StageDump, p: usize) -> (DeviceTree<EmuDevice>, Expansions<EmuDevice>) {
    let tree = DeviceTree::upload(dev, &d.tree, d.lo, d.side).unwrap();
    let levels = (0..=d.tree.depth).map(|l| if l >= d.top { Some(upload_new(dev, &d.multipoles[l]).unwrap()) } else { None }).collect();
    (tree, Expansions { p, top: d.top, levels })
}

fn download_locals(dev: &EmuDevice, e: &Expansions<EmuDevice>, d: &StageDump) -> Vec<Vec<f64>> {
    (0..=d.tree.depth).map(|l| e.levels[l].as_ref().map(|b| download_vec(dev, b, d.locals[l].len()).unwrap()).unwrap_or_default()).collect()
}

/// The CPU's M2L lists of `level` as sorted (target, source, offset) triples.
fn cpu_triples(d: &StageDump, level: usize) -> Vec<(u32, u32, [i32; 3])> {
    let th = Threads::new(1).unwrap();
    let mut out = Vec::new();
    for t in m2l_tiles(&th, &d.tree, level).unwrap() {
        for e in &t.entries {
            for lane in 0..t.n {
                if e.src[lane] != u32::MAX {
                    out.push((t.targets[lane], e.src[lane], dir_vector(e.dir as usize)));
                }
            }
        }
    }
    out.sort();
    out
}

#[test]
fn gpu_m2l_matches_cpu_stage_lists_and_counts() {
    let t0 = Instant::now();
    // (p, D, distribution, periodic, n, shared bytes); few occupied boxes at every p (the
    // emulator runs the O(p⁴) kernels and every barrier with OS threads: its time goes with
    // the pairs and classes)
    let full = 48 * 1024;
    let cases = [
        (2, 2, Dist::Plummer, false, 250, full),
        (2, 3, Dist::Uniform, false, 50, full),
        (2, 4, Dist::Plummer, false, 60, full),
        (6, 2, Dist::Plummer, false, 300, full),
        (6, 3, Dist::Plummer, false, 100, full),
        (10, 2, Dist::Plummer, false, 100, full),
        (16, 2, Dist::Uniform, false, 30, full),
        (16, 3, Dist::Plummer, false, 25, full),
        (2, 2, Dist::Plummer, true, 250, full),
        (2, 3, Dist::Uniform, true, 20, full),
        (2, 4, Dist::Plummer, true, 70, full),
        (6, 3, Dist::Plummer, true, 100, full),
        (10, 3, Dist::Plummer, true, 50, full),
        (16, 2, Dist::Plummer, true, 60, full),
        (16, 3, Dist::Plummer, true, 25, full),
        // a small shared memory: the operator streams through it in chunks of degrees
        (10, 2, Dist::Plummer, false, 100, 4 * 1024),
        (16, 2, Dist::Plummer, true, 30, 6 * 1024),
    ];
    let mut worst = (0.0f64, 0.0f64);
    for (ci, &(p, depth, dist, periodic, n, smem)) in cases.iter().enumerate() {
        let tc = Instant::now();
        let d = dump(p, depth, dist, periodic, n, 100 + ci as u64);
        assert_eq!(d.tree.depth, depth);
        let dev = EmuDevice { shared_bytes: smem, ..EmuDevice::default() };
        let (tree, mp) = upload(&dev, &d, p);
        let tab = M2lTables::new(&dev, p, periodic).unwrap();
        let lists = m2l_lists(&dev, &tree, d.top).unwrap();
        // lists: the same triples as the CPU, the classes a regrouping of them
        for l in d.top..=depth {
            let ll = lists.levels[l].as_ref().unwrap();
            let mut gpu = ll.triples(&dev).unwrap();
            // rows presorted by octant group
            let keys = &d.tree.levels[l].keys;
            let rows: Vec<u32> = download_vec(&dev, &ll.targets, ll.rows).unwrap();
            for s in 0..8 {
                for r in ll.group_start[s] as usize..ll.group_start[s + 1] as usize {
                    assert_eq!(keys[rows[r] as usize] & 7, s as u64);
                }
            }
            assert!(rows.windows(2).all(|w| keys[w[0] as usize] & 7 < keys[w[1] as usize] & 7 || w[0] < w[1]));
            let mut cls: Vec<(u32, u32, [i32; 3])> = ll.class_triples(&dev).unwrap().into_iter().map(|(t, s, v, _)| (t, s, v)).collect();
            gpu.sort();
            cls.sort();
            let cpu = cpu_triples(&d, l);
            assert_eq!(gpu.len(), cpu.len(), "case {ci}: level {l} pair count");
            assert!(gpu == cpu, "case {ci}: level {l}: device lists differ from the CPU's");
            assert!(cls == cpu, "case {ci}: level {l}: symmetry classes are not a regrouping of the pairs");
        }
        // locals
        let sym = m2l(&dev, &tab, &lists, &tree, &mp, M2lMethod::Symmetric).unwrap();
        let plain = m2l(&dev, &tab, &lists, &tree, &mp, M2lMethod::Plain).unwrap();
        let (ls, lp) = (download_locals(&dev, &sym, &d), download_locals(&dev, &plain, &d));
        // these small levels split their rows over several blocks; unsplit, the same to rounding
        assert!(lists.levels.iter().flatten().any(|l| m2l_split(l.rows, l.npairs, M2L_MIN_BLOCKS) > 1), "case {ci}: no split row");
        let lu = download_locals(&dev, &m2l_with(&dev, &tab, &lists, &tree, &mp, M2lMethod::Plain, 0).unwrap(), &d);
        for l in d.top..=depth {
            let (es, ep, esp) = (rel_diff(&ls[l], &d.locals[l]), rel_diff(&lp[l], &d.locals[l]), rel_diff(&ls[l], &lp[l]));
            let eu = rel_diff(&lu[l], &lp[l]);
            assert!(eu <= 1e-13, "case {ci}: level {l}: unsplit vs split rows {eu:e}");
            assert!(es <= 1e-12, "case {ci} (p {p}, D {depth}, {dist:?}, periodic {periodic}): level {l}: symmetric vs CPU {es:e}");
            assert!(ep <= 1e-12, "case {ci}: level {l}: plain vs CPU {ep:e}");
            assert!(esp <= 1e-13, "case {ci}: level {l}: symmetric vs plain {esp:e}");
            assert!(d.locals[l].iter().any(|&x| x != 0.0), "case {ci}: level {l}: no far field to compare");
            worst = (worst.0.max(es.max(ep)), worst.1.max(esp));
        }
        // counts: the symmetry saves loads and multiplications whenever a class has ≥ 2 pairs
        let (cp, cs) = (m2l_counts(&lists, &tab, M2lMethod::Plain), m2l_counts(&lists, &tab, M2lMethod::Symmetric));
        let npairs: usize = lists.levels.iter().flatten().map(|l| l.npairs).sum();
        let nclasses: usize = lists.levels.iter().flatten().map(|l| l.nclasses).sum();
        assert!(nclasses <= npairs);
        if nclasses < npairs {
            assert!(cs.operator_loads < cp.operator_loads && cs.complex_mults < cp.complex_mults, "case {ci}: {cs:?} vs {cp:?}");
        }
        eprintln!(
            "case {ci}: p {p} D {depth} {dist:?} periodic {periodic} n {n}: {npairs} pairs in {nclasses} classes, {:.2}s",
            tc.elapsed().as_secs_f64()
        );
    }
    eprintln!("worst: GPU vs CPU {:.2e}, symmetric vs plain {:.2e}", worst.0, worst.1);

    // full uniform levels (periodic, D = 2: the 8 level-1 and 64 level-2 boxes all occupied,
    // every box has all 189 sources): the counts are exactly 72 × the per-box sums over the
    // 189 offsets (plain) and the 56 classes (symmetric)
    let p = 2;
    let d = dump(p, 2, Dist::Uniform, true, 1500, 7);
    assert_eq!((d.tree.levels[1].keys.len(), d.tree.levels[2].keys.len()), (8, 64));
    let dev = EmuDevice::default();
    let (tree, mp) = upload(&dev, &d, p);
    let tab = M2lTables::new(&dev, p, true).unwrap();
    let lists = m2l_lists(&dev, &tree, d.top).unwrap();
    let loc = download_locals(&dev, &m2l(&dev, &tab, &lists, &tree, &mp, M2lMethod::Symmetric).unwrap(), &d);
    for l in 1..=2 {
        let e = rel_diff(&loc[l], &d.locals[l]);
        assert!(e <= 1e-12, "full level: level {l}: symmetric vs CPU {e:e}");
    }
    let cost = |v: [i32; 3]| {
        let pe = m2l_order(p, (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) as usize);
        (ncoef(2 * pe) as u64, (ncoef(pe) * (pe + 1) * (pe + 1)) as u64)
    };
    let per_box = |vs: &[[i32; 3]]| vs.iter().map(|&v| cost(v)).fold((0, 0), |a, c| (a.0 + c.0, a.1 + c.1));
    let plain_box = per_box(&farfield::fmm::lists::m2l_offsets(0));
    let sym_box = per_box(&reference_offsets());
    let (cp, cs) = (m2l_counts(&lists, &tab, M2lMethod::Plain), m2l_counts(&lists, &tab, M2lMethod::Symmetric));
    assert_eq!((cp.operator_loads, cp.complex_mults), (72 * plain_box.0, 72 * plain_box.1));
    assert_eq!((cs.operator_loads, cs.complex_mults), (72 * sym_box.0, 72 * sym_box.1));
    let (fl, fm) = (cp.operator_loads as f64 / cs.operator_loads as f64, cp.complex_mults as f64 / cs.complex_mults as f64);
    eprintln!("full level, p = {p}: symmetric saves {fl:.3}x operator loads, {fm:.3}x complex multiplications (189/56 = 3.375)");
    // at p = 2 every offset has pe = p: both factors are exactly 189/56
    assert!((0..NREFS).all(|r| tab.ref_pe_host[r] == p as u32));
    assert_eq!((189 * cs.operator_loads, 189 * cs.complex_mults), (56 * cp.operator_loads, 56 * cp.complex_mults));
    let npairs: usize = lists.levels.iter().flatten().map(|l| l.npairs).sum();
    let nclasses: usize = lists.levels.iter().flatten().map(|l| l.nclasses).sum();
    assert_eq!((npairs, nclasses), (72 * 189, 72 * 56));
    eprintln!("total {:.1}s", t0.elapsed().as_secs_f64());
}
