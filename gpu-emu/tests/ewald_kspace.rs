//! The device Ewald k-space part (`farfield::gpu::ewald`: positions → fractional coordinates,
//! spreading, FFT, influence function, interpolation, energy and virial reductions) on the
//! emulated kernels, against the CPU plan's k-space part on the same parameters
//! (`CpuEwald::set_parts`): SPME and spectral Ewald, orthorhombic and triclinic cells, neutral
//! and net-charged systems, positions outside the cell, every spreading method, and the self
//! and background terms. Both evaluate the same approximation, so they agree to rounding:
//! f64 ≤ 1e-12 relative in energy and virial, ≤ 1e-11 relative RMS in φ and field; f32 grids
//! (mixed precision) to ≤ 1e-5.

use farfield::ewald::{EwaldOpts, EwaldParts, CpuEwald, Method, Overrides};
use farfield::gpu::device::{download_vec, upload_new, Device};
use farfield::gpu::ewald::GpuEwaldPlan;
use farfield::gpu::spread::{GpuMethod, GpuSpreadOpts};
use farfield::gpu::types::GpuReal;
use farfield::Error;
use farfield_gpu_emu::EmuDevice;

use crate::ewald_common;
use ewald_common::{opts, rel_rms, system, ORTHO, TRICLINIC};

/// The options of `ewald_common::opts` on a smaller grid: the emulator's time goes mostly into
/// the influence-function kernel, whose block reductions (energy, virial) cost barriers per
/// 128 grid points. Both methods at order 6 (the spectral window at 8, `opts`' choice, runs in
/// ewald_exec.rs; the SPME gathers of other orders in `spme_orders`) on a 12 × 14 × 16 grid:
/// distinct even sizes ≥ 2·order, 21 blocks of grid points (several partial sums).
fn kopts(method: Method) -> EwaldOpts {
    let o = opts(method);
    EwaldOpts { overrides: Overrides { grid: [12, 14, 16], order: 6, ..o.overrides }, ..o }
}

struct Out {
    phi: Vec<f64>,
    field: Vec<f64>,
    energy: f64,
    virial: [f64; 9],
}

fn cpu(method: Method, cell: &[f64; 9], xyz: &[f64], q: &[f64], parts: EwaldParts) -> (Out, farfield::ewald::EwaldParams) {
    let n = q.len();
    let mut plan = CpuEwald::new(method, cell, n, 1e-6, &kopts(method)).unwrap();
    plan.set_parts(parts);
    let (mut phi, mut field) = (vec![0.0; n], vec![0.0; 3 * n]);
    let r = plan.execute(xyz, q, Some(&mut phi), Some(&mut field), true).unwrap();
    (Out { phi, field, energy: r.energy, virial: r.virial }, plan.params().clone())
}

fn gpu<T: GpuReal>(method: Method, cell: &[f64; 9], xyz: &[f64], q: &[f64], parts: EwaldParts, sopts: GpuSpreadOpts) -> (Out, farfield::ewald::EwaldParams, Option<GpuMethod>) {
    let n = q.len();
    let dev = EmuDevice::default();
    let mut plan = GpuEwaldPlan::<T, EmuDevice>::new(dev.clone(), method, cell, n, 1e-6, &kopts(method), sopts).unwrap();
    let xb = upload_new(&dev, xyz).unwrap();
    let qb = upload_new(&dev, q).unwrap();
    let mut pb = upload_new(&dev, &vec![7.0f64; n]).unwrap();
    let mut fb = upload_new(&dev, &vec![7.0f64; 3 * n]).unwrap();
    let r = plan.execute_parts(n, &xb, &qb, Some(&mut pb), Some(&mut fb), true, parts).unwrap();
    let out = Out { phi: download_vec(&dev, &pb, n).unwrap(), field: download_vec(&dev, &fb, 3 * n).unwrap(), energy: r.energy, virial: r.virial };
    (out, plan.params().clone(), plan.kspace().spreader().method())
}

fn compare(what: &str, g: &Out, c: &Out, tol_e: f64, tol_f: f64) {
    let e = (g.energy - c.energy).abs() / c.energy.abs();
    let p = rel_rms(&g.phi, &c.phi);
    let f = rel_rms(&g.field, &c.field);
    let wn: f64 = c.virial.iter().map(|v| v * v).sum::<f64>().sqrt();
    let w = g.virial.iter().zip(&c.virial).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt() / wn;
    eprintln!("{what}: energy {e:.1e} phi {p:.1e} field {f:.1e} virial {w:.1e}");
    assert!(e <= tol_e && w <= tol_e, "{what}: energy {e:e} virial {w:e} (GPU {} vs CPU {})", g.energy, c.energy);
    assert!(p <= tol_f && f <= tol_f, "{what}: phi {p:e} field {f:e}");
}

const KSPACE: EwaldParts = EwaldParts { real: false, kspace: true, self_bg: false };

#[test]
fn kspace_equals_cpu_f64() {
    // every pair of (method, cell, net charge) once (the full product, k-space included, runs
    // in `whole_plan_equals_cpu_with_exclusions`)
    for (method, oblique, net) in [(Method::Spme, false, 0.0), (Method::Spme, true, 2.5), (Method::Spectral, false, 2.5), (Method::Spectral, true, 0.0)] {
        let (cname, cell) = if oblique { ("triclinic", &TRICLINIC) } else { ("orthorhombic", &ORTHO) };
        let (xyz, q) = system(37, cell, net, 11 + net as u64);
        let (c, cp) = cpu(method, cell, &xyz, &q, KSPACE);
        let (g, gp, m) = gpu::<f64>(method, cell, &xyz, &q, KSPACE, GpuSpreadOpts::default());
        // the same parameters from the same rule
        assert_eq!((gp.xi, gp.rc, gp.grid, gp.order, gp.tau), (cp.xi, cp.rc, cp.grid, cp.order, cp.tau));
        compare(&format!("{method:?} {cname} net {net} ({m:?})"), &g, &c, 1e-12, 1e-11);
    }
}

#[test]
fn every_spreading_method() {
    let (xyz, q) = system(29, &TRICLINIC, 1.0, 5);
    for method in [Method::Spme, Method::Spectral] {
        let (c, _) = cpu(method, &TRICLINIC, &xyz, &q, KSPACE);
        for gm in GpuMethod::all() {
            let sopts = GpuSpreadOpts { method: Some(gm), ..GpuSpreadOpts::default() };
            let (g, _, used) = gpu::<f64>(method, &TRICLINIC, &xyz, &q, KSPACE, sopts);
            assert_eq!(used, Some(gm));
            compare(&format!("{method:?} {}", gm.name()), &g, &c, 1e-12, 1e-11);
        }
    }
}

#[test]
fn spme_orders() {
    // 4, 5, 6 and 8 have their own gather code; 3 and 7 take the general loop
    let (xyz, q) = system(17, &TRICLINIC, 0.5, 13);
    for order in [3, 4, 5, 7, 8] {
        // the smallest grids of `kopts`' shape that take the order (2·order ≤ each size)
        let g = 2 * order.max(6);
        let o = EwaldOpts { overrides: Overrides { order, grid: [g, g + 2, g + 4], ..kopts(Method::Spme).overrides }, ..kopts(Method::Spme) };
        let mut cp = CpuEwald::new(Method::Spme, &TRICLINIC, 17, 1e-6, &o).unwrap();
        cp.set_parts(KSPACE);
        let (mut phi, mut field) = (vec![0.0; 17], vec![0.0; 51]);
        let r = cp.execute(&xyz, &q, Some(&mut phi), Some(&mut field), true).unwrap();
        let c = Out { phi, field, energy: r.energy, virial: r.virial };
        let dev = EmuDevice::default();
        let mut gp = GpuEwaldPlan::<f64, EmuDevice>::new(dev.clone(), Method::Spme, &TRICLINIC, 17, 1e-6, &o, GpuSpreadOpts::default()).unwrap();
        assert_eq!(gp.params().order, order);
        let (xb, qb) = (upload_new(&dev, &xyz).unwrap(), upload_new(&dev, &q).unwrap());
        let (mut pb, mut fb) = (dev.alloc(8 * 17).unwrap(), dev.alloc(24 * 17).unwrap());
        let r = gp.execute_parts(17, &xb, &qb, Some(&mut pb), Some(&mut fb), true, KSPACE).unwrap();
        let g = Out { phi: download_vec(&dev, &pb, 17).unwrap(), field: download_vec(&dev, &fb, 51).unwrap(), energy: r.energy, virial: r.virial };
        compare(&format!("SPME order {order}"), &g, &c, 1e-12, 1e-11);
    }
}

#[test]
fn deterministic_under_staggered_threads() {
    // with the deterministic CSR spreading every stage is deterministic (fixed-order block and
    // partial sums, no atomics), so runs with threads delayed at random are bitwise equal
    let sopts = GpuSpreadOpts { method: Some(GpuMethod::Csr), ..GpuSpreadOpts::default() };
    let o = EwaldOpts { overrides: Overrides { grid: [12, 12, 12], order: 6, ..Overrides::default() }, ..EwaldOpts::default() };
    let (xyz, q) = system(150, &TRICLINIC, 1.5, 17);
    let dev = EmuDevice::default();
    let (xb, qb) = (upload_new(&dev, &xyz).unwrap(), upload_new(&dev, &q).unwrap());
    let run = |stagger: bool| {
        let mut plan = GpuEwaldPlan::<f64, EmuDevice>::new(dev.clone(), Method::Spme, &TRICLINIC, 150, 1e-6, &o, sopts).unwrap();
        let (mut pb, mut fb) = (dev.alloc(8 * 150).unwrap(), dev.alloc(24 * 150).unwrap());
        farfield_gpu_emu::set_stagger(stagger);
        let r = plan.execute_parts(150, &xb, &qb, Some(&mut pb), Some(&mut fb), true, KSPACE);
        farfield_gpu_emu::set_stagger(false);
        let r = r.unwrap();
        (r.energy, r.virial, download_vec::<_, f64>(&dev, &pb, 150).unwrap(), download_vec::<_, f64>(&dev, &fb, 450).unwrap())
    };
    assert!(run(false) == run(true));
}

#[test]
fn self_and_background_terms() {
    let parts = EwaldParts { real: false, kspace: true, self_bg: true };
    for method in [Method::Spme, Method::Spectral] {
        let (xyz, q) = system(23, &TRICLINIC, -1.75, 9);
        let (c, _) = cpu(method, &TRICLINIC, &xyz, &q, parts);
        let (g, _, _) = gpu::<f64>(method, &TRICLINIC, &xyz, &q, parts, GpuSpreadOpts::default());
        compare(&format!("{method:?} k-space + self + background"), &g, &c, 1e-12, 1e-11);
        // self and background alone: φ_i = −2ξ/√π q_i − πQ/(Vξ²), no field
        let only = EwaldParts { real: false, kspace: false, self_bg: true };
        let (c, _) = cpu(method, &TRICLINIC, &xyz, &q, only);
        let (g, _, _) = gpu::<f64>(method, &TRICLINIC, &xyz, &q, only, GpuSpreadOpts::default());
        assert!(g.field.iter().all(|&v| v == 0.0));
        assert!(rel_rms(&g.phi, &c.phi) <= 1e-14 && (g.energy - c.energy).abs() <= 1e-14 * c.energy.abs());
        assert!(g.virial.iter().zip(&c.virial).all(|(a, b)| (a - b).abs() <= 1e-14 * b.abs()));
    }
}

#[test]
fn mixed_precision_f32_grids() {
    for method in [Method::Spme, Method::Spectral] {
        let (xyz, q) = system(31, &TRICLINIC, 0.0, 21);
        let (c, _) = cpu(method, &TRICLINIC, &xyz, &q, KSPACE);
        let (g, _, _) = gpu::<f32>(method, &TRICLINIC, &xyz, &q, KSPACE, GpuSpreadOpts::default());
        compare(&format!("{method:?} f32 grids"), &g, &c, 1e-5, 1e-5);
    }
}

#[test]
fn set_box_follows_the_cpu_rule() {
    let method = Method::Spme;
    let (xyz, q) = system(19, &ORTHO, 0.0, 4);
    let dev = EmuDevice::default();
    let o = kopts(method);
    let mut g = GpuEwaldPlan::<f64, EmuDevice>::new(dev.clone(), method, &ORTHO, 19, 1e-6, &o, GpuSpreadOpts::default()).unwrap();
    let mut c = CpuEwald::new(method, &ORTHO, 19, 1e-6, &o).unwrap();
    c.set_parts(KSPACE);
    let xb = upload_new(&dev, &xyz).unwrap();
    let qb = upload_new(&dev, &q).unwrap();
    // a small change keeps the parameters, a large one re-plans: either way CPU and GPU agree
    for cell in [[3.12, 0.0, 0.0, 0.1, 2.69, 0.0, 0.05, -0.1, 3.41], [6.2, 0.0, 0.0, 0.0, 5.4, 0.0, 0.0, 0.0, 6.8]] {
        g.set_box(&cell).unwrap();
        c.set_box(&cell).unwrap();
        let (gp, cp) = (g.params(), c.params());
        assert_eq!((gp.xi, gp.grid, gp.order, gp.eta), (cp.xi, cp.grid, cp.order, cp.eta));
        let mut pb = dev.alloc(8 * 19).unwrap();
        let rg = g.execute_parts(19, &xb, &qb, Some(&mut pb), None, true, KSPACE).unwrap();
        let mut phi = vec![0.0; 19];
        let rc = c.execute(&xyz, &q, Some(&mut phi), None, true).unwrap();
        assert!((rg.energy - rc.energy).abs() <= 1e-12 * rc.energy.abs(), "{} vs {}", rg.energy, rc.energy);
        assert!(rel_rms(&download_vec::<_, f64>(&dev, &pb, 19).unwrap(), &phi) <= 1e-11);
        // energy and virial without output buffers (the plan's own scratch); equal up to the
        // order of the spreader's atomic additions
        let r0 = g.execute_parts(19, &xb, &qb, None, None, true, KSPACE).unwrap();
        let wn = rg.virial.iter().map(|v| v.abs()).fold(0.0, f64::max);
        assert!((r0.energy - rg.energy).abs() <= 1e-13 * rg.energy.abs(), "{} vs {}", r0.energy, rg.energy);
        assert!(r0.virial.iter().zip(&rg.virial).all(|(a, b)| (a - b).abs() <= 1e-13 * wn));
    }
}

#[test]
fn bad_input() {
    let dev = EmuDevice::default();
    let method = Method::Spectral;
    let mut g = GpuEwaldPlan::<f64, EmuDevice>::new(dev.clone(), method, &ORTHO, 8, 1e-6, &opts(method), GpuSpreadOpts::default()).unwrap();
    let (mut xyz, mut q) = system(8, &ORTHO, 0.0, 1);
    let mut pb = dev.alloc(8 * 8).unwrap();
    let run = |g: &mut GpuEwaldPlan<f64, EmuDevice>, n: usize, xyz: &[f64], q: &[f64], pb: &mut _| {
        let xb = upload_new(&dev, xyz).unwrap();
        let qb = upload_new(&dev, q).unwrap();
        g.execute_parts(n, &xb, &qb, Some(pb), None, false, KSPACE)
    };
    assert!(run(&mut g, 8, &xyz, &q, &mut pb).is_ok());
    // no charges: zeros
    let r = run(&mut g, 0, &xyz, &q, &mut pb).unwrap();
    assert_eq!((r.energy, r.virial), (0.0, [0.0; 9]));
    // more charges than n_max; buffers shorter than n
    assert!(matches!(run(&mut g, 9, &xyz, &q, &mut pb), Err(Error::NPoints(_))));
    assert!(matches!(run(&mut g, 8, &xyz[..21], &q, &mut pb), Err(Error::InvalidArg(_))));
    // non-finite positions and charges, named by index
    xyz[3 * 5 + 1] = f64::NAN;
    match run(&mut g, 8, &xyz, &q, &mut pb) {
        Err(Error::NonFinite(m)) => assert!(m.contains("xyz[16]") && m.contains("charge 5"), "{m}"),
        other => panic!("{other:?}"),
    }
    xyz[3 * 5 + 1] = 0.5;
    q[3] = f64::INFINITY;
    match run(&mut g, 8, &xyz, &q, &mut pb) {
        Err(Error::NonFinite(m)) => assert!(m.contains("q[3]"), "{m}"),
        other => panic!("{other:?}"),
    }
    q[3] = 0.25;
    // a position whose fractional coordinate overflows (cell edges of 0.5: s = 2x)
    let half = [0.5, 0.0, 0.0, 0.0, 0.5, 0.0, 0.0, 0.0, 0.5];
    let mut h = GpuEwaldPlan::<f64, EmuDevice>::new(dev.clone(), method, &half, 8, 1e-6, &opts(method), GpuSpreadOpts::default()).unwrap();
    xyz[3 * 2] = 1e308;
    match run(&mut h, 8, &xyz, &q, &mut pb) {
        Err(Error::Range(m)) => assert!(m.contains("charge 2"), "{m}"),
        other => panic!("{other:?}"),
    }
    let mut c = CpuEwald::new(method, &half, 8, 1e-6, &opts(method)).unwrap();
    assert!(matches!(c.execute(&xyz, &q, None, None, false), Err(Error::Range(_))));
    // the whole plan: coincident charges that are not excluded are refused by the real-space
    // part, as on the CPU; excluded, they are fine. The direct sum has no device path.
    let (mut xyz, q) = system(8, &ORTHO, 0.0, 1);
    xyz.copy_within(0..3, 3);
    let xb = upload_new(&dev, &xyz).unwrap();
    let qb = upload_new(&dev, &q).unwrap();
    match g.execute(8, &xb, &qb, Some(&mut pb), None, false) {
        Err(Error::InvalidArg(m)) => assert!(m.contains('0') && m.contains('1'), "{m}"),
        other => panic!("{other:?}"),
    }
    g.set_exclusions(&[[1, 0]], None).unwrap();
    assert!(g.execute(8, &xb, &qb, Some(&mut pb), None, false).is_ok());
    assert!(matches!(g.set_exclusions(&[[1, 8]], None), Err(Error::InvalidArg(_))));
    assert!(matches!(
        GpuEwaldPlan::<f64, EmuDevice>::new(dev.clone(), Method::Direct, &ORTHO, 8, 1e-6, &EwaldOpts::default(), GpuSpreadOpts::default()),
        Err(Error::NotSupported(_))
    ));
    // CPU argument checks apply
    assert!(matches!(
        GpuEwaldPlan::<f64, EmuDevice>::new(dev.clone(), method, &ORTHO, 8, 0.0, &EwaldOpts::default(), GpuSpreadOpts::default()),
        Err(Error::Tol(_))
    ));
    // an allocation the device refuses
    let small = EmuDevice { max_alloc_bytes: Some(1024), ..EmuDevice::default() };
    assert!(matches!(
        GpuEwaldPlan::<f64, EmuDevice>::new(small, method, &ORTHO, 8, 1e-6, &opts(method), GpuSpreadOpts::default()),
        Err(Error::Alloc(_))
    ));
}

// ---- the whole plan: k-space, real space (`gpu::ewald::real_space`), self and background ----

/// CPU and device plans with every part and the exclusions `excl`, on the same parameters
/// (the virial, when `virial`, else zeros).
fn whole(method: Method, cell: &[f64; 9], xyz: &[f64], q: &[f64], tol: f64, ov: Overrides, excl: &[[i64; 2]], virial: bool) -> (Out, Out) {
    let n = q.len();
    let o = EwaldOpts { nthreads: 1, overrides: ov, ..EwaldOpts::default() };
    let mut plan = CpuEwald::new(method, cell, n, tol, &o).unwrap();
    plan.set_exclusions(excl).unwrap();
    let (mut phi, mut field) = (vec![0.0; n], vec![0.0; 3 * n]);
    let r = plan.execute(xyz, q, Some(&mut phi), Some(&mut field), virial).unwrap();
    let c = Out { phi, field, energy: r.energy, virial: r.virial };
    let dev = EmuDevice::default();
    let mut gp = GpuEwaldPlan::<f64, EmuDevice>::new(dev.clone(), method, cell, n, tol, &o, GpuSpreadOpts::default()).unwrap();
    gp.set_exclusions(excl, None).unwrap();
    assert_eq!((gp.params().xi, gp.params().rc, gp.params().grid), (plan.params().xi, plan.params().rc, plan.params().grid));
    let xb = upload_new(&dev, xyz).unwrap();
    let qb = upload_new(&dev, q).unwrap();
    let mut pb = upload_new(&dev, &vec![7.0f64; n]).unwrap();
    let mut fb = upload_new(&dev, &vec![7.0f64; 3 * n]).unwrap();
    let r = gp.execute(n, &xb, &qb, Some(&mut pb), Some(&mut fb), virial).unwrap();
    let g = Out { phi: download_vec(&dev, &pb, n).unwrap(), field: download_vec(&dev, &fb, 3 * n).unwrap(), energy: r.energy, virial: r.virial };
    (g, c)
}

#[test]
fn whole_plan_equals_cpu_with_exclusions() {
    for method in [Method::Spme, Method::Spectral] {
        for (cname, cell) in [("orthorhombic", &ORTHO), ("triclinic", &TRICLINIC)] {
            for net in [0.0, 1.5] {
                let (xyz, q) = system(41, cell, net, 23 + net as u64);
                let excl = [[0, 1], [1, 2], [5, 40], [40, 5], [7, 9]];
                let (g, c) = whole(method, cell, &xyz, &q, 1e-6, kopts(method).overrides, &excl, true);
                compare(&format!("whole {method:?} {cname} net {net}"), &g, &c, 1e-12, 1e-11);
            }
        }
    }
}

#[test]
fn nacl_madelung_constant() {
    // rock salt: k³ conventional cells of side a, 8k³ ions; U = −(N/2) M q²/r0, r0 = a/2
    const MADELUNG: f64 = 1.747_564_594_633_182;
    let (k, a) = (2usize, 1.0f64);
    let mut xyz = Vec::new();
    let mut q = Vec::new();
    for i in 0..2 * k {
        for j in 0..2 * k {
            for l in 0..2 * k {
                xyz.extend_from_slice(&[i as f64 * a / 2.0, j as f64 * a / 2.0, l as f64 * a / 2.0]);
                q.push(if (i + j + l) % 2 == 0 { 1.0 } else { -1.0 });
            }
        }
    }
    let l = k as f64 * a;
    let cell = [l, 0.0, 0.0, 0.0, l, 0.0, 0.0, 0.0, l];
    for method in [Method::Spme, Method::Spectral] {
        // energies only: the virial's block reductions over the rule's large grids (80³, 40³)
        // would cost the emulator minutes, and this test checks no virial
        let (g, c) = whole(method, &cell, &xyz, &q, 1e-11, Overrides::default(), &[], false);
        let m = -g.energy / (q.len() as f64 / 2.0) * (a / 2.0);
        eprintln!("{method:?}: Madelung {m:.15} (CPU {:.15})", -c.energy / (q.len() as f64 / 2.0) * (a / 2.0));
        assert!((m - MADELUNG).abs() <= 1e-9 * MADELUNG, "{method:?}: Madelung constant {m} vs {MADELUNG}");
        assert!((g.energy - c.energy).abs() <= 1e-12 * c.energy.abs());
    }
}
