//! The whole CUDA FMM ([`farfield::gpu::fmm::GpuFmm`]) on the CUDA-on-CPU emulator: errors
//! against direct sums written here (open boundaries, tol 1e-3/1e-6/1e-9), the same answer as
//! the CPU FMM for the same p and D (open and periodic), the NaCl Madelung constant through the
//! periodic path, excluded and scaled pairs as the CPU front corrects them, bad input with the
//! CPU path's errors, device failures (launch, allocation)
//! leaving the caller's outputs untouched, and every launch on the device handle's stream.
//! The stage-by-stage comparisons are in fmm_tree.rs, fmm_ops.rs and fmm_m2l.rs.

use farfield::fmm::{params, Boundary, FmmOpts, CpuFmm};
use farfield::gpu::fmm::GpuFmm;
use farfield::Error;
use farfield_gpu_emu::{stream_launches, EmuDevice};
use rand::{Rng, SeedableRng};

/// Uniform in [0, 1)³ or a Plummer sphere (scale 0.05, clipped at 10 scale radii), charges in
/// [−1, 1) (neutral when `neutral`).
fn particles(n: usize, plummer: bool, neutral: bool, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut r = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut xyz = Vec::with_capacity(3 * n);
    for _ in 0..n {
        if plummer {
            let rad = loop {
                let u: f64 = r.gen_range(1e-6..1.0);
                let s = 1.0 / (u.powf(-2.0 / 3.0) - 1.0).sqrt();
                if s < 10.0 {
                    break 0.05 * s;
                }
            };
            let ct: f64 = r.gen_range(-1.0..1.0);
            let ph: f64 = r.gen_range(0.0..std::f64::consts::TAU);
            let st = (1.0 - ct * ct).sqrt();
            xyz.extend_from_slice(&[0.5 + rad * st * ph.cos(), 0.5 + rad * st * ph.sin(), 0.5 + rad * ct]);
        } else {
            xyz.extend_from_slice(&[r.gen(), r.gen(), r.gen()]);
        }
    }
    let mut q: Vec<f64> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
    if neutral {
        let m = q.iter().sum::<f64>() / n as f64;
        q.iter_mut().for_each(|v| *v -= m);
    }
    (xyz, q)
}

/// Direct sums `φ_i = Σ_{j≠i} q_j/r_ij`, `E_i = Σ_{j≠i} q_j (x_i − x_j)/r_ij³`.
fn direct(xyz: &[f64], q: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let n = q.len();
    let mut phi = vec![0.0; n];
    let mut e = vec![0.0; 3 * n];
    for i in 0..n {
        for j in 0..n {
            if i == j {
                continue;
            }
            let d = [xyz[3 * i] - xyz[3 * j], xyz[3 * i + 1] - xyz[3 * j + 1], xyz[3 * i + 2] - xyz[3 * j + 2]];
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            let r = r2.sqrt();
            phi[i] += q[j] / r;
            for k in 0..3 {
                e[3 * i + k] += q[j] * d[k] / (r2 * r);
            }
        }
    }
    (phi, e)
}

fn rel_l2(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den).sqrt()
}

fn run(g: &GpuFmm<EmuDevice>, xyz: &[f64], q: &[f64]) -> (Vec<f64>, Vec<f64>, f64) {
    let n = q.len();
    let (mut phi, mut e) = (vec![0.0; n], vec![0.0; 3 * n]);
    let r = g.execute(xyz, q, Some(&mut phi), Some(&mut e)).unwrap();
    // the tree's steps split its stage (marks on the emulator's host clock)
    let steps: f64 = r.tree_steps.iter().sum();
    assert!(r.tree_steps.iter().all(|&t| t >= 0.0) && steps <= r.times.tree * (1.0 + 1e-12) + 1e-9 && steps > 0.0, "{:?} vs {}", r.tree_steps, r.times.tree);
    (phi, e, r.energy)
}

#[test]
fn errors_against_direct_sums_are_within_tol() {
    // depths forced so that the far field carries most of the sums (the cost model would pick
    // D ≤ 1, the direct sum, for so few particles at these orders). The emulator's time is the
    // M2L per occupied box at the order of the tolerance: p = 16 (1e-6) runs its several M2L
    // levels on the Plummer sphere (D = 4, a few hundred boxes) and the uniform case at D = 2
    // (64 boxes, three quarters of the pairs in the far field); p = 6 (1e-3) has both at D ≥ 3.
    for (tol, n, plummer, depth) in
        [(1e-3, 1500, false, 3), (1e-3, 1500, true, 4), (1e-6, 2000, false, 2), (1e-6, 1200, true, 4), (1e-9, 800, false, 2)]
    {
        let (xyz, q) = particles(n, plummer, false, 7 + n as u64);
        let (phi0, e0) = direct(&xyz, &q);
        let p = params::order_for_tol(tol);
        let g = GpuFmm::new(EmuDevice::default(), Boundary::Open, p, Some(depth)).unwrap();
        let (phi, e, u) = run(&g, &xyz, &q);
        let u0 = 0.5 * q.iter().zip(&phi0).map(|(a, b)| a * b).sum::<f64>();
        let (ep, ef) = (rel_l2(&phi, &phi0), rel_l2(&e, &e0));
        eprintln!("open tol {tol:e} n {n} plummer {plummer}: p = {p}, D = {depth}: potential {ep:.2e}, field {ef:.2e}, energy {:.2e}", ((u - u0) / u0).abs());
        assert!(ep <= tol && ef <= tol, "tol {tol:e}: {ep:e} {ef:e}");
    }
}

#[test]
fn gpu_equals_cpu_for_the_same_order_and_depth() {
    for (periodic, plummer, p, depth) in [(false, false, 6, Some(3)), (false, true, 10, Some(4)), (true, false, 8, Some(2)), (true, true, 4, Some(3))] {
        let n = 600;
        let (xyz, q) = particles(n, plummer, periodic, 11);
        let boundary = if periodic { Boundary::Periodic { side: 1.0 } } else { Boundary::Open };
        let mut cpu = CpuFmm::new(boundary, 1e-6, &FmmOpts { order: p, depth, nthreads: 1, ..Default::default() }).unwrap();
        let (mut phi0, mut e0) = (vec![0.0; n], vec![0.0; 3 * n]);
        let u0 = cpu.execute(&xyz, &q, Some(&mut phi0), Some(&mut e0)).unwrap();
        let g = GpuFmm::new(EmuDevice::default(), boundary, p, depth).unwrap();
        let (phi, e, u) = run(&g, &xyz, &q);
        let (dp, df) = (rel_l2(&phi, &phi0), rel_l2(&e, &e0));
        eprintln!("periodic {periodic} plummer {plummer} p {p} D {depth:?} (CPU D {:?}): GPU vs CPU potential {dp:.1e} field {df:.1e}", cpu.stats().depth);
        assert!(dp < 1e-12 && df < 1e-12 && ((u - u0) / u0).abs() < 1e-12, "{dp:e} {df:e} {u} {u0}");
    }
}

/// Excluded and scaled pairs (scales 0, 0.5, 1/1.2; a pair across the periodic faces): the
/// device's corrections (`ff_fmm_excl`) give the CPU front's answer (its host corrections) for
/// the same p and D, open and periodic; an index ≥ n is the CPU's error, outputs untouched.
#[test]
fn exclusions_equal_the_cpu_plan() {
    let n = 500;
    for (periodic, p, depth) in [(false, 6, Some(3)), (true, 8, Some(2))] {
        let (mut xyz, q) = particles(n, false, periodic, 23);
        let (mut pairs, mut scales) = (Vec::new(), Vec::new());
        for k in 0..n / 3 - 1 {
            for a in 0..3 {
                xyz[3 * (3 * k + 1) + a] = (xyz[9 * k + a] + if a == k % 3 { 0.01 } else { 0.0 }).min(0.999);
                xyz[3 * (3 * k + 2) + a] = (xyz[9 * k + a] + if a == (k + 1) % 3 { 0.02 } else { 0.0 }).min(0.998);
            }
            let i = 3 * k as i64;
            pairs.extend([[i, i + 1], [i + 2, i], [i + 1, i + 2]]);
            scales.extend([0.0, 0.5, 1.0 / 1.2]);
        }
        xyz[3 * (n - 2)..3 * (n - 1)].copy_from_slice(&[0.01, 0.5, 0.3]);
        xyz[3 * (n - 1)..3 * n].copy_from_slice(&[0.99, 0.5, 0.3]);
        pairs.push([(n - 2) as i64, (n - 1) as i64]);
        scales.push(0.0);
        let boundary = if periodic { Boundary::Periodic { side: 1.0 } } else { Boundary::Open };
        let opts = FmmOpts { order: p, depth, nthreads: 1, ..Default::default() };
        let mut cpu = farfield::FmmPlan::new(boundary, 1e-6, &opts).unwrap();
        cpu.set_exclusions(&pairs, Some(&scales)).unwrap();
        let (mut phi0, mut e0) = (vec![0.0; n], vec![0.0; 3 * n]);
        let u0 = cpu.execute(&xyz, &q, Some(&mut phi0), Some(&mut e0)).unwrap();
        let mut g = GpuFmm::new(EmuDevice::default(), boundary, p, depth).unwrap();
        g.set_exclusions(&pairs, Some(&scales)).unwrap();
        assert_eq!(g.n_exclusions(), pairs.len());
        let (phi, e, u) = run(&g, &xyz, &q);
        let (dp, df) = (rel_l2(&phi, &phi0), rel_l2(&e, &e0));
        eprintln!("exclusions, periodic {periodic}: GPU vs CPU potential {dp:.1e} field {df:.1e} energy {:.1e}", ((u - u0) / u0).abs());
        assert!(dp < 1e-12 && df < 1e-12 && ((u - u0) / u0).abs() < 1e-12, "{dp:e} {df:e} {u} {u0}");
        // the list changes the answer (a list ignored would pass the equality above only if
        // the CPU ignored it too)
        let plain = run(&GpuFmm::new(EmuDevice::default(), boundary, p, depth).unwrap(), &xyz, &q);
        assert!(rel_l2(&plain.0, &phi0) > 1e-3, "the exclusions made no difference");
        let (mut ph, mut f) = (vec![7.0; n - 1], vec![7.0; 3 * (n - 1)]);
        let err = g.execute(&xyz[..3 * (n - 1)], &q[..n - 1], Some(&mut ph), Some(&mut f)).unwrap_err();
        assert!(matches!(&err, Error::InvalidArg(m) if m.contains("exclusion pair")), "{err:?}");
        assert!(ph.iter().chain(&f).all(|&v| v == 7.0));
    }
}

#[test]
fn nacl_madelung_constant_through_the_periodic_gpu_path() {
    // conventional 8-ion cell of side 1 shifted off the box corners; U = −4·M·q²/r0, r0 = 1/2
    let exact = 1.747_564_594_633;
    let na = [[0.0, 0.0, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5], [0.5, 0.5, 0.0]];
    let cl = [[0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.5], [0.5, 0.5, 0.5]];
    let (mut xyz, mut q) = (Vec::new(), Vec::new());
    for (set, c) in [(na, 1.0), (cl, -1.0)] {
        for p in set {
            xyz.extend(p.iter().map(|v| v + 0.25));
            q.push(c);
        }
    }
    let g = GpuFmm::new(EmuDevice::default(), Boundary::Periodic { side: 1.0 }, params::order_for_tol(1e-10), None).unwrap();
    let (phi, e, u) = run(&g, &xyz, &q);
    let m = -u * 0.5 / 4.0;
    eprintln!("NaCl through the GPU path: M = {m:.15} (error {:.1e})", (m - exact).abs() / exact);
    assert!((m - exact).abs() / exact < 1e-9, "M = {m}");
    for (i, &qi) in q.iter().enumerate() {
        assert!((-qi * phi[i] * 0.5 - exact).abs() / exact < 1e-9, "ion {i}: {}", phi[i]);
        assert!(e[3 * i..3 * i + 3].iter().all(|v| v.abs() < 1e-8), "field of ion {i} is zero by symmetry");
    }
}

#[test]
fn bad_input_gets_the_cpu_errors_and_outputs_stay_untouched() {
    let (xyz, q) = particles(300, false, false, 3);
    let g = GpuFmm::new(EmuDevice::default(), Boundary::Open, 4, None).unwrap();
    let mut cpu = CpuFmm::new(Boundary::Open, 1e-3, &FmmOpts { order: 4, ..Default::default() }).unwrap();
    let sentinel = 12345.0;
    let check = |xyz: &[f64], q: &[f64]| {
        let (mut phi, mut e) = (vec![sentinel; q.len()], vec![sentinel; 3 * q.len()]);
        let got = g.execute(xyz, q, Some(&mut phi), Some(&mut e)).unwrap_err();
        assert!(phi.iter().chain(&e).all(|&v| v == sentinel), "outputs written on error");
        got
    };
    // non-finite coordinate and charge: the same error and message (first index) as the CPU
    for (k, v) in [(5usize, f64::NAN), (601, f64::INFINITY), (899, f64::NEG_INFINITY)] {
        let mut x = xyz.clone();
        x[k] = v;
        let want = cpu.execute(&x, &q, None, None).unwrap_err();
        let got = check(&x, &q);
        assert!(matches!(got, Error::NonFinite(_)) && got.to_string() == want.to_string(), "{got} vs {want}");
    }
    let mut c = q.clone();
    c[17] = f64::NAN;
    let got = check(&xyz, &c);
    assert!(matches!(got, Error::NonFinite(_)) && got.to_string().contains("q[17]"), "{got}");
    // coincident particles
    let mut x = xyz.clone();
    x.copy_within(3 * 40..3 * 41, 3 * 200);
    let want = cpu.execute(&x, &q, None, None).unwrap_err();
    let got = check(&x, &q);
    assert!(matches!(got, Error::InvalidArg(_)) && got.to_string() == want.to_string(), "{got} vs {want}");
    // lengths, and n = 0
    assert!(matches!(g.execute(&xyz[..10], &q, None, None), Err(Error::InvalidArg(_))));
    assert_eq!(g.execute(&[], &[], None, None).unwrap().energy, 0.0);
}

#[test]
fn device_failures_are_errors_and_leave_outputs_untouched() {
    let (xyz, q) = particles(600, false, true, 5);
    let sentinel = -7.0;
    // a device allocation failure → Error::Alloc, never an abort
    let small = EmuDevice { max_alloc_bytes: Some(4096), ..EmuDevice::default() };
    let g = GpuFmm::new(small, Boundary::Periodic { side: 1.0 }, 4, Some(2));
    match g {
        Err(e) => assert!(matches!(e, Error::Alloc(_)), "{e}"),
        Ok(g) => {
            let mut phi = vec![sentinel; q.len()];
            let e = g.execute(&xyz, &q, Some(&mut phi), None).unwrap_err();
            assert!(matches!(e, Error::Alloc(_)), "{e}");
            assert!(phi.iter().all(|&v| v == sentinel));
        }
    }
    // a launch failing at every position of the pipeline
    let counter = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(usize::MAX));
    let dev = EmuDevice { fail_after_launches: Some(counter.clone()), ..EmuDevice::default() };
    let g = GpuFmm::new(dev, Boundary::Periodic { side: 1.0 }, 4, Some(2)).unwrap();
    counter.store(usize::MAX, std::sync::atomic::Ordering::SeqCst);
    let (mut phi, mut e) = (vec![0.0; q.len()], vec![0.0; 3 * q.len()]);
    g.execute(&xyz, &q, Some(&mut phi), Some(&mut e)).unwrap();
    let launches = usize::MAX - counter.load(std::sync::atomic::Ordering::SeqCst);
    assert!(launches > 10, "{launches} launches");
    for at in (0..launches).step_by((launches / 12).max(1)) {
        counter.store(at, std::sync::atomic::Ordering::SeqCst);
        let (mut ph, mut f) = (vec![sentinel; q.len()], vec![sentinel; 3 * q.len()]);
        assert!(g.execute(&xyz, &q, Some(&mut ph), Some(&mut f)).is_err(), "failure at launch {at}");
        assert!(ph.iter().chain(&f).all(|&v| v == sentinel), "outputs written after a failure at launch {at}");
    }
    counter.store(usize::MAX, std::sync::atomic::Ordering::SeqCst);
    let (ph, f, _) = run(&g, &xyz, &q);
    assert_eq!((ph, f), (phi, e), "a failed execute leaves the plan usable");
}

#[test]
fn every_launch_runs_on_the_device_handles_stream() {
    let (xyz, q) = particles(150, false, false, 9);
    let g = GpuFmm::new(EmuDevice::on_stream(0x13), Boundary::Open, 4, Some(3)).unwrap();
    run(&g, &xyz, &q);
    let names = stream_launches(0x13);
    for stage in ["ff_fmm_"] {
        assert!(names.iter().any(|n| n.starts_with(stage)), "{names:?}");
    }
    assert!(stream_launches(0).is_empty());
}
