//! GPU FMM operators other than M2L (`src/gpu/fmm/ops.rs`, `kernels/fmm_ops.cu`) on the
//! emulated kernels, stage by stage against the CPU FMM (`CpuFmm::stage_dump`): each GPU stage
//! runs on the uploaded CPU tree with the CPU's inputs of that stage and must agree with the CPU
//! stage to rounding (max |gpu − cpu| / max |cpu| ≤ 1e-12 per array): `upward` (P2M + M2M) vs
//! the multipoles, `downward` (L2L) on the CPU's locals vs the leaf locals, `l2p` on the leaf
//! locals vs the L2P-only potentials and fields, `p2p` (device-built lists) vs the P2P-only
//! ones, and `finish` on `far + near` vs `CpuFmm::execute` (potentials, fields and energy in
//! the caller's order and units; periodic background included). Orders 2, 6, 10, 16, depths
//! 2, 3, 4, uniform and Plummer distributions, open and periodic boundaries; small shared
//! memory (forcing small P2P tiles, one staged child in M2M and the global L2P table) in one case.

use farfield::fmm::{Boundary, FmmOpts, CpuFmm};
use farfield::gpu::device::{download_vec, upload_new, Device};
use farfield::gpu::fmm::ops::{downward, finish, l2p, p2p, p2p_lists, upward, OpTables};
use farfield::gpu::fmm::{DeviceTree, Expansions, SortedOut};
use farfield::gpu::pairs::DevicePairs;
use farfield::Error;
use farfield_gpu_emu::EmuDevice;
use rand::{Rng, SeedableRng};

const TOL: f64 = 1e-12;

/// max |a − b| / max |b| (b nonzero somewhere).
fn rel(a: &[f64], b: &[f64]) -> f64 {
    assert_eq!(a.len(), b.len());
    let num = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
    let den = b.iter().map(|y| y.abs()).fold(0.0, f64::max);
    assert!(den > 0.0, "reference is all zero");
    num / den
}

fn check(what: &str, case: &str, a: &[f64], b: &[f64]) -> f64 {
    let r = rel(a, b);
    assert!(r <= TOL, "{case}: {what}: relative difference {r:e} > {TOL:e}");
    r
}

/// `n` particles in `[0, side)³`: uniform, or a Plummer sphere (`r = (u^(−2/3) − 1)^(−1/2)`,
/// clipped at 4 scale radii, scale radius side/10, centred) folded into the box; charges in
/// [−1, 1] (not neutral).
fn particles(n: usize, plummer: bool, side: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut xyz = Vec::with_capacity(3 * n);
    for _ in 0..n {
        if plummer {
            let r = loop {
                let u: f64 = rng.gen_range(1e-6..1.0);
                let r = (u.powf(-2.0 / 3.0) - 1.0).powf(-0.5);
                if r < 4.0 {
                    break r;
                }
            };
            let ct: f64 = rng.gen_range(-1.0..1.0);
            let ph: f64 = rng.gen_range(0.0..std::f64::consts::TAU);
            let st = (1.0 - ct * ct).sqrt();
            let a = 0.1 * side * r;
            for v in [a * st * ph.cos(), a * st * ph.sin(), a * ct] {
                xyz.push((0.5 * side + v).rem_euclid(side));
            }
        } else {
            for _ in 0..3 {
                xyz.push(rng.gen_range(0.0..side));
            }
        }
    }
    let q = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    (xyz, q)
}

fn down(dev: &EmuDevice, b: &<EmuDevice as Device>::Buf, n: usize) -> Vec<f64> {
    download_vec::<_, f64>(dev, b, n).unwrap()
}

struct Case {
    p: usize,
    depth: usize,
    plummer: bool,
    periodic: bool,
    n: usize,
    shared: usize,
}

fn run(c: &Case, seed: u64) {
    let dev = EmuDevice { shared_bytes: c.shared, ..EmuDevice::default() };
    let side = 2.5;
    let (xyz, q) = particles(c.n, c.plummer, side, seed);
    let boundary = if c.periodic { Boundary::Periodic { side } } else { Boundary::Open };
    let opts = FmmOpts { nthreads: 1, order: c.p, depth: Some(c.depth), ..Default::default() };
    let name = format!("p={} D={} {} {} n={} smem={}", c.p, c.depth, if c.plummer { "plummer" } else { "uniform" }, if c.periodic { "periodic" } else { "open" }, c.n, c.shared);
    let dump = CpuFmm::new(boundary, 1e-6, &opts).unwrap().stage_dump(&xyz, &q).unwrap();
    assert_eq!(dump.tree.depth, c.depth, "{name}");
    let n = c.n;
    let tree = DeviceTree::upload(&dev, &dump.tree, dump.lo, dump.side).unwrap();
    let t = OpTables::new(&dev, c.p).unwrap();
    let nc2 = (c.p + 1) * (c.p + 2);
    let top = dump.top;
    assert_eq!(top, if c.periodic { 1 } else { 2 }, "{name}");
    let mut worst = [0.0f64; 5];

    // upward: P2M + M2M vs the CPU multipoles, every far level
    let mp = upward(&dev, &t, &tree, top).unwrap();
    for l in top..=c.depth {
        let len = dump.tree.levels[l].keys.len() * nc2;
        let g = down(&dev, mp.levels[l].as_ref().unwrap(), len);
        worst[0] = worst[0].max(check(&format!("multipoles level {l}"), &name, &g, &dump.multipoles[l]));
    }

    // downward: L2L on the CPU's locals vs the CPU's leaf locals
    let levels = (0..=c.depth).map(|l| if l >= top { Some(upload_new(&dev, &dump.locals[l]).unwrap()) } else { None }).collect();
    let mut loc = Expansions { p: c.p, top, levels };
    downward(&dev, &t, &tree, &mut loc).unwrap();
    let g = down(&dev, loc.levels[c.depth].as_ref().unwrap(), dump.leaf_locals.len());
    worst[1] = check("leaf locals", &name, &g, &dump.leaf_locals);

    // l2p on the CPU's leaf locals vs the L2P-only outputs (with and without the field)
    let leaf = Expansions { p: c.p, top: c.depth, levels: (0..=c.depth).map(|l| if l == c.depth { Some(upload_new(&dev, &dump.leaf_locals).unwrap()) } else { None }).collect() };
    let mut far = SortedOut::zeroed(&dev, n, true).unwrap();
    l2p(&dev, &t, &tree, &leaf, &mut far).unwrap();
    let mut w = check("far phi", &name, &down(&dev, &far.phi, n), &dump.far.0);
    for (k, b) in far.field.as_ref().unwrap().iter().enumerate() {
        w = w.max(check(&format!("far E{k}"), &name, &down(&dev, b, n), &dump.far.1[k]));
    }
    let mut far_phi = SortedOut::zeroed(&dev, n, false).unwrap();
    l2p(&dev, &t, &tree, &leaf, &mut far_phi).unwrap();
    assert_eq!(down(&dev, &far_phi.phi, n), down(&dev, &far.phi, n), "{name}: far phi without the field");
    worst[2] = w;

    // p2p with the device-built lists vs the P2P-only outputs
    let lists = p2p_lists(&dev, &tree).unwrap();
    let mut near = SortedOut::zeroed(&dev, n, true).unwrap();
    p2p(&dev, &tree, &lists, &mut near).unwrap();
    let mut w = check("near phi", &name, &down(&dev, &near.phi, n), &dump.near.0);
    for (k, b) in near.field.as_ref().unwrap().iter().enumerate() {
        w = w.max(check(&format!("near E{k}"), &name, &down(&dev, b, n), &dump.near.1[k]));
    }
    worst[3] = w;

    // finish on far + near (the CPU's) vs execute
    let mut phi_want = vec![0.0; n];
    let mut field_want = vec![0.0; 3 * n];
    let u_want = CpuFmm::new(boundary, 1e-6, &opts).unwrap().execute(&xyz, &q, Some(&mut phi_want), Some(&mut field_want)).unwrap();
    let sum = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x + y).collect::<Vec<f64>>();
    let mut sorted = SortedOut {
        phi: upload_new(&dev, &sum(&dump.far.0, &dump.near.0)).unwrap(),
        field: Some([0, 1, 2].map(|k| upload_new(&dev, &sum(&dump.far.1[k], &dump.near.1[k])).unwrap())),
    };
    let mut phi_out = dev.alloc(8 * n).unwrap();
    let mut field_out = dev.alloc(24 * n).unwrap();
    let none = DevicePairs::new(&dev).unwrap();
    let u = finish(&dev, &tree, &mut sorted, &none, Some(&mut phi_out), Some(&mut field_out)).unwrap();
    let mut w = check("phi", &name, &down(&dev, &phi_out, n), &phi_want);
    w = w.max(check("field", &name, &down(&dev, &field_out, 3 * n), &field_want));
    let ru = (u - u_want).abs() / u_want.abs();
    assert!(ru <= TOL, "{name}: energy {u} vs {u_want}: {ru:e}");
    worst[4] = w.max(ru);
    println!("{name}: upward {:.1e} downward {:.1e} l2p {:.1e} p2p {:.1e} finish {:.1e}", worst[0], worst[1], worst[2], worst[3], worst[4]);
}

#[test]
fn stages_match_the_cpu() {
    let k48 = 48 * 1024;
    let cases = [
        Case { p: 2, depth: 2, plummer: false, periodic: false, n: 300, shared: k48 },
        Case { p: 6, depth: 3, plummer: true, periodic: true, n: 700, shared: k48 },
        Case { p: 10, depth: 4, plummer: false, periodic: true, n: 1200, shared: k48 },
        Case { p: 16, depth: 3, plummer: true, periodic: false, n: 900, shared: k48 },
        Case { p: 6, depth: 4, plummer: true, periodic: false, n: 1000, shared: k48 },
        Case { p: 2, depth: 2, plummer: false, periodic: true, n: 250, shared: k48 },
        // small shared memory: P2P tiles of 104 sources, P2M blocks of 128, M2M one child at a
        // time, L2P's table in global memory
        Case { p: 16, depth: 3, plummer: false, periodic: true, n: 400, shared: 4096 },
    ];
    for (i, c) in cases.iter().enumerate() {
        let t = std::time::Instant::now();
        run(c, 10 + i as u64);
        println!("  {:.2} s", t.elapsed().as_secs_f64());
    }
}

/// finish without requested outputs returns the energy only; the field requested without a
/// computed field, too small outputs and a non-finite potential are errors, and nothing is
/// written to the caller's buffers on error.
#[test]
fn finish_checks_before_writing() {
    let dev = EmuDevice::default();
    let (xyz, q) = particles(200, false, 1.0, 3);
    let opts = FmmOpts { nthreads: 1, order: 4, depth: Some(2), ..Default::default() };
    let dump = CpuFmm::new(Boundary::Open, 1e-6, &opts).unwrap().stage_dump(&xyz, &q).unwrap();
    let tree = DeviceTree::upload(&dev, &dump.tree, dump.lo, dump.side).unwrap();
    let n = q.len();
    let none = DevicePairs::new(&dev).unwrap();
    let mk = |phi: &[f64], field: bool| SortedOut { phi: upload_new(&dev, phi).unwrap(), field: field.then(|| [0, 1, 2].map(|k| upload_new(&dev, &dump.near.1[k]).unwrap())) };
    let mut plan = CpuFmm::new(Boundary::Open, 1e-6, &opts).unwrap();
    let mut phi_cpu = vec![0.0; n];
    let sum: Vec<f64> = dump.far.0.iter().zip(&dump.near.0).map(|(a, b)| a + b).collect();
    let u_want = plan.execute(&xyz, &q, Some(&mut phi_cpu), None).unwrap();
    let u = finish(&dev, &tree, &mut mk(&sum, false), &none, None, None).unwrap();
    assert!((u - u_want).abs() <= TOL * u_want.abs(), "{u} vs {u_want}");

    let mut field_out = dev.alloc(24 * n).unwrap();
    let e = finish(&dev, &tree, &mut mk(&sum, false), &none, None, Some(&mut field_out)).unwrap_err();
    assert!(matches!(e, Error::InvalidArg(_)), "{e:?}");
    let mut small = dev.alloc(8 * n - 8).unwrap();
    let e = finish(&dev, &tree, &mut mk(&sum, false), &none, Some(&mut small), None).unwrap_err();
    assert!(matches!(e, Error::InvalidArg(_)), "{e:?}");

    let mut bad = sum.clone();
    bad[17] = f64::NAN;
    bad[40] = f64::INFINITY;
    let sentinel = vec![7.0; n];
    let mut phi_out = upload_new(&dev, &sentinel).unwrap();
    let e = finish(&dev, &tree, &mut mk(&bad, true), &none, Some(&mut phi_out), None).unwrap_err();
    match &e {
        Error::Range(m) => assert!(m.contains("the potential (sorted order)[17]"), "{m}"),
        _ => panic!("{e:?}"),
    }
    assert_eq!(down(&dev, &phi_out, n), sentinel, "written despite the error");
    let mut badf = dump.near.1[1].clone();
    badf[5] = f64::NEG_INFINITY;
    let mut s = mk(&sum, true);
    s.field.as_mut().unwrap()[1] = upload_new(&dev, &badf).unwrap();
    let e = finish(&dev, &tree, &mut s, &none, Some(&mut phi_out), None).unwrap_err();
    match &e {
        Error::Range(m) => assert!(m.contains("the field y component (sorted order)[5]"), "{m}"),
        _ => panic!("{e:?}"),
    }
    assert_eq!(down(&dev, &phi_out, n), sentinel, "written despite the error");
}
