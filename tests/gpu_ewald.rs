//! The device Ewald k-space part (`farfield::gpu::ewald`) on a CUDA device against the CPU
//! plan's k-space part on the same parameters: SPME and spectral Ewald, a triclinic cell, a
//! net-charged random system, every spreading method; f64 to rounding (≤ 1e-11), f32 grids to
//! ≤ 1e-5. Prints the time per evaluation. Also the Ewald C API with
//! `opts.backend = FARFIELD_BACKEND_CUDA` against the CPU backend with the same arguments (SPME
//! and spectral Ewald, double and mixed precision, exclusions, scaled pairs with each `terms`
//! setting, `farfield_ewald_execute` and `farfield_ewald_execute_device`; tolerances as
//! `c_tests/c_ewald_device.c`: 1e-10 in double
//! precision, 1e-5 with f32 grids), also with device arrays on a caller's busy non-blocking
//! stream (the plan's second, real-space stream ordered into it). Skipped (passes) without a
//! CUDA device; the emulator tests
//! (`gpu-emu/tests/ewald_kspace.rs`, `ewald_exec.rs`) run the same host path everywhere.

use farfield::capi::ewald::*;
use farfield::ewald::{EwaldOpts, EwaldParts, CpuEwald, Method};
use farfield::gpu::cuda::CudaDevice;
use farfield::gpu::device::{download_vec, upload_new, Device};
use farfield::gpu::ewald::GpuEwaldPlan;
use farfield::gpu::spread::{GpuMethod, GpuSpreadOpts};
use farfield::gpu::types::GpuReal;
use farfield::nufft::options::{FARFIELD_BACKEND_CPU, FARFIELD_BACKEND_CUDA};
use rand::{Rng, SeedableRng};
use std::ptr::null_mut;
use std::time::Instant;

const KSPACE: EwaldParts = EwaldParts { real: false, kspace: true, self_bg: false };

fn rel_rms(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den).sqrt()
}

fn device() -> Option<CudaDevice> {
    match farfield::gpu::runtime::discover() {
        Ok(d) if !d.is_empty() => Some(CudaDevice::new(0).expect("CUDA device 0")),
        other => {
            eprintln!("gpu_ewald: skipped, no CUDA device ({other:?})");
            None
        }
    }
}

/// `n` charges at water-like density (100 per unit volume) in a triclinic cell, net charge 3.
fn system(n: usize) -> ([f64; 9], Vec<f64>, Vec<f64>) {
    let l = (n as f64 / 100.0).cbrt();
    let cell = [l, 0.0, 0.0, 0.1 * l, 0.95 * l, 0.0, -0.05 * l, 0.1 * l, 1.05 * l];
    let mut rng = rand_pcg::Pcg64::seed_from_u64(n as u64);
    let mut xyz = vec![0.0; 3 * n];
    for i in 0..n {
        let s: [f64; 3] = [0, 1, 2].map(|_| rng.gen_range(-0.5..1.5));
        for a in 0..3 {
            xyz[3 * i + a] = (0..3).map(|d| s[d] * cell[3 * d + a]).sum();
        }
    }
    let mut q: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let mean = q.iter().sum::<f64>() / n as f64;
    q.iter_mut().for_each(|v| *v += 3.0 / n as f64 - mean);
    (cell, xyz, q)
}

fn run<T: GpuReal>(dev: &CudaDevice, method: Method, cell: &[f64; 9], xyz: &[f64], q: &[f64], tol: f64, sopts: GpuSpreadOpts,
                   cpu: &(Vec<f64>, Vec<f64>, f64, [f64; 9]), reps: usize) -> (f64, f64, f64, f64, Option<GpuMethod>) {
    let n = q.len();
    let mut plan = GpuEwaldPlan::<T, CudaDevice>::new(dev.clone(), method, cell, n, tol, &EwaldOpts::default(), sopts).unwrap();
    let xb = upload_new(dev, xyz).unwrap();
    let qb = upload_new(dev, q).unwrap();
    let mut pb = dev.alloc(8 * n).unwrap();
    let mut fb = dev.alloc(24 * n).unwrap();
    let mut r = plan.execute_parts(n, &xb, &qb, Some(&mut pb), Some(&mut fb), true, KSPACE).unwrap();
    let mut times = Vec::new();
    for _ in 0..reps {
        let t = Instant::now();
        r = plan.execute_parts(n, &xb, &qb, Some(&mut pb), Some(&mut fb), true, KSPACE).unwrap();
        times.push(t.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let phi: Vec<f64> = download_vec(dev, &pb, n).unwrap();
    let field: Vec<f64> = download_vec(dev, &fb, 3 * n).unwrap();
    let e = (r.energy - cpu.2).abs() / cpu.2.abs();
    let wn: f64 = cpu.3.iter().map(|v| v * v).sum::<f64>().sqrt();
    let w = r.virial.iter().zip(&cpu.3).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt() / wn;
    let f = rel_rms(&field, &cpu.1).max(rel_rms(&phi, &cpu.0));
    let med = if times.is_empty() { f64::NAN } else { times[times.len() / 2] };
    (e.max(w), f, med, r.energy, plan.kspace().spreader().method())
}

#[test]
fn cuda_kspace_equals_cpu() {
    let Some(dev) = device() else { return };
    eprintln!("gpu_ewald on {}", dev.name());
    for (n, reps) in [(3000usize, 3usize), (23558, 20)] {
        let (cell, xyz, q) = system(n);
        for method in [Method::Spme, Method::Spectral] {
            let tol = 1e-5;
            let mut cp = CpuEwald::new(method, &cell, n, tol, &EwaldOpts::default()).unwrap();
            cp.set_parts(KSPACE);
            let (mut phi, mut field) = (vec![0.0; n], vec![0.0; 3 * n]);
            let t = Instant::now();
            let r = cp.execute(&xyz, &q, Some(&mut phi), Some(&mut field), true).unwrap();
            let cpu_s = t.elapsed().as_secs_f64();
            let p = cp.params();
            eprintln!("n {n} {method:?}: grid {:?} order {} tau {:.3} xi {:.4}; CPU k-space {:.2} ms", p.grid, p.order, p.tau, p.xi, 1e3 * cpu_s);
            let cpu = (phi, field, r.energy, r.virial);
            let methods: Vec<Option<GpuMethod>> = if n <= 3000 { GpuMethod::all().into_iter().map(Some).collect() } else { vec![None] };
            for gm in methods {
                let sopts = GpuSpreadOpts { method: gm, ..GpuSpreadOpts::default() };
                let (ew, ef, ms, _, used) = run::<f64>(&dev, method, &cell, &xyz, &q, tol, sopts, &cpu, reps);
                eprintln!("  f64 {used:?}: energy/virial {ew:.1e}, phi/field {ef:.1e}, {:.3} ms per k-space evaluation", 1e3 * ms);
                assert!(ew <= 1e-11 && ef <= 1e-11, "f64 {method:?} {used:?}: {ew:e} {ef:e}");
                let (ew, ef, ms, _, used) = run::<f32>(&dev, method, &cell, &xyz, &q, tol, sopts, &cpu, reps);
                eprintln!("  f32 {used:?}: energy/virial {ew:.1e}, phi/field {ef:.1e}, {:.3} ms per k-space evaluation", 1e3 * ms);
                assert!(ew <= 1e-5 && ef <= 1e-5, "f32 {method:?} {used:?}: {ew:e} {ef:e}");
            }
        }
    }
}

struct COut {
    phi: Vec<f64>,
    field: Vec<f64>,
    energy: f64,
    virial: [f64; 9],
}

/// A C API plan (`stream`: `opts.gpu_stream`, null for the default stream) with all terms and
/// the excluded pairs `pairs`.
#[allow(clippy::too_many_arguments)]
fn plan(method: i32, backend: i32, prec: i32, cell: &[f64; 9], n: usize, tol: f64, pairs: &[i64], stream: *mut std::ffi::c_void)
        -> farfield_ewald_plan {
    plan_terms(method, backend, prec, cell, n, tol, FARFIELD_EWALD_TERMS_ALL, pairs, None, stream)
}

/// [`plan`] with `opts.terms = terms` and the pairs' scales (`None`: excluded).
#[allow(clippy::too_many_arguments)]
fn plan_terms(method: i32, backend: i32, prec: i32, cell: &[f64; 9], n: usize, tol: f64, terms: i32, pairs: &[i64], scales: Option<&[f64]>,
              stream: *mut std::ffi::c_void) -> farfield_ewald_plan {
    let mut o: farfield_ewald_opts = unsafe { std::mem::zeroed() };
    let mut p = null_mut();
    unsafe {
        assert_eq!(farfield_ewald_default_opts(&mut o, std::mem::size_of::<farfield_ewald_opts>()), 0);
        o.backend = backend;
        o.gpu_precision = prec;
        o.gpu_stream = stream;
        o.terms = terms;
        assert_eq!(farfield_ewald_makeplan(method, cell.as_ptr(), n as i64, tol, &mut p, &o), 0);
        let np = (pairs.len() / 2) as i64;
        let s = match scales {
            None => farfield_ewald_set_exclusions(p, np, pairs.as_ptr()),
            Some(sc) => farfield_ewald_set_exclusions_scaled(p, np, pairs.as_ptr(), sc.as_ptr()),
        };
        assert_eq!(s, 0);
    }
    p
}

fn host(p: farfield_ewald_plan, xyz: &[f64], q: &[f64]) -> COut {
    let n = q.len();
    let mut o = COut { phi: vec![0.0; n], field: vec![0.0; 3 * n], energy: 0.0, virial: [0.0; 9] };
    let s = unsafe { farfield_ewald_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), o.phi.as_mut_ptr(), o.field.as_mut_ptr(), &mut o.energy, o.virial.as_mut_ptr()) };
    assert_eq!(s, 0);
    o
}

/// Largest of the relative RMS differences of φ and of the forces, and of U and W on the scale
/// `½ Σ |q_i φ_i|`.
fn diff(g: &COut, c: &COut, q: &[f64]) -> f64 {
    let force = |o: &COut| -> Vec<f64> { o.field.iter().enumerate().map(|(k, e)| q[k / 3] * e).collect() };
    let us: f64 = q.iter().zip(&c.phi).map(|(a, b)| 0.5 * (a * b).abs()).sum();
    let dw = g.virial.iter().zip(&c.virial).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    rel_rms(&g.phi, &c.phi).max(rel_rms(&force(g), &force(c))).max((g.energy - c.energy).abs() / us).max(dw / us)
}

#[test]
fn cuda_c_api_equals_the_cpu_backend() {
    let Some(dev) = device() else { return };
    eprintln!("gpu_ewald C API on {}", dev.name());
    let n = 3000;
    let (cell, mut xyz, q) = system(n);
    // charge 2k + 1 bonded to 2k (0.1 apart) and the pair excluded, k < n/10
    let mut pairs = Vec::new();
    for k in 0..n / 10 {
        for a in 0..3 {
            xyz[3 * (2 * k + 1) + a] = xyz[3 * 2 * k + a] + if a == k % 3 { 0.1 } else { 0.0 };
        }
        pairs.extend([2 * k as i64, 2 * k as i64 + 1]);
    }
    let (xb, qb) = (upload_new(&dev, &xyz).unwrap(), upload_new(&dev, &q).unwrap());
    let (pb, fb) = (dev.alloc(8 * n).unwrap(), dev.alloc(24 * n).unwrap());
    for (method, name) in [(FARFIELD_EWALD_SPME, "SPME"), (FARFIELD_EWALD_SPECTRAL, "spectral")] {
        for prec in [FARFIELD_EWALD_GPU_DOUBLE, FARFIELD_EWALD_GPU_MIXED] {
            let (tol, bound) = if prec == FARFIELD_EWALD_GPU_MIXED { (1e-5, 1e-5) } else { (1e-6, 1e-10) };
            let cp = plan(method, FARFIELD_BACKEND_CPU, 0, &cell, n, tol, &pairs, null_mut());
            let gp = plan(method, FARFIELD_BACKEND_CUDA, prec, &cell, n, tol, &pairs, null_mut());
            let (mut a, mut b) = (farfield_ewald_params::default(), farfield_ewald_params::default());
            unsafe {
                assert_eq!(farfield_ewald_get_params(cp, &mut a), 0);
                assert_eq!(farfield_ewald_get_params(gp, &mut b), 0);
            }
            assert_eq!((a.xi, a.rc, a.grid, a.order_or_support, a.est_rel_err), (b.xi, b.rc, b.grid, b.order_or_support, b.est_rel_err));
            let c = host(cp, &xyz, &q);
            let t = Instant::now();
            let g = host(gp, &xyz, &q);
            let t_host = t.elapsed().as_secs_f64();
            let dh = diff(&g, &c, &q);
            // device arrays: the outputs are complete in stream order; synchronise, then read
            let mut d = COut { phi: vec![], field: vec![], energy: 0.0, virial: [0.0; 9] };
            let ptr = |b: &_| dev.addr(b) as *mut f64;
            let mut t_dev = f64::INFINITY;
            for _ in 0..3 {
                let t = Instant::now();
                let s = unsafe { farfield_ewald_execute_device(gp, n as i64, ptr(&xb), ptr(&qb), ptr(&pb), ptr(&fb), &mut d.energy, d.virial.as_mut_ptr()) };
                assert_eq!(s, 0);
                dev.synchronize().unwrap();
                t_dev = t_dev.min(t.elapsed().as_secs_f64());
            }
            d.phi = download_vec(&dev, &pb, n).unwrap();
            d.field = download_vec(&dev, &fb, 3 * n).unwrap();
            let dd = diff(&d, &c, &q);
            eprintln!("  {name} {}: host arrays {dh:.1e} ({:.2} ms), device arrays {dd:.1e} ({:.2} ms)",
                      if prec == 1 { "mixed" } else { "double" }, 1e3 * t_host, 1e3 * t_dev);
            assert!(dh < bound && dd < bound, "{name} prec {prec}: {dh:e} {dd:e}");
            unsafe {
                farfield_ewald_destroy(gp);
                farfield_ewald_destroy(cp);
            }
        }
    }
}

/// Scaled pairs (excluded, AMBER's and OPLS's 1-4 scales) with each `opts.terms` setting, as an
/// MD code that sums the real-space term itself calls: the CUDA backend against the CPU backend
/// with the same arguments, host arrays, same bounds as `cuda_c_api_equals_the_cpu_backend`.
#[test]
fn cuda_c_api_scaled_pairs_and_terms() {
    if device().is_none() {
        return;
    }
    let n = 3000;
    let (cell, mut xyz, q) = system(n);
    // charge 3k + 1 bonded to 3k (0.1 apart), 3k + 2 at 0.3: the pairs with scales 0, 0.5, 1/1.2
    let (mut pairs, mut scales) = (Vec::new(), Vec::new());
    for k in 0..n / 30 {
        for a in 0..3 {
            xyz[3 * (3 * k + 1) + a] = xyz[3 * 3 * k + a] + if a == k % 3 { 0.1 } else { 0.0 };
            xyz[3 * (3 * k + 2) + a] = xyz[3 * 3 * k + a] + if a == (k + 1) % 3 { 0.3 } else { 0.0 };
        }
        let i = 3 * k as i64;
        pairs.extend([i, i + 1, i, i + 2, i + 1, i + 2]);
        scales.extend([0.0, 0.5, 1.0 / 1.2]);
    }
    for (terms, name) in [(FARFIELD_EWALD_TERMS_ALL, "all"), (FARFIELD_EWALD_TERMS_KSPACE, "k-space"), (FARFIELD_EWALD_TERMS_REAL, "real")] {
        for prec in [FARFIELD_EWALD_GPU_DOUBLE, FARFIELD_EWALD_GPU_MIXED] {
            let (tol, bound) = if prec == FARFIELD_EWALD_GPU_MIXED { (1e-5, 1e-5) } else { (1e-6, 1e-10) };
            let cp = plan_terms(FARFIELD_EWALD_SPME, FARFIELD_BACKEND_CPU, 0, &cell, n, tol, terms, &pairs, Some(&scales), null_mut());
            let gp = plan_terms(FARFIELD_EWALD_SPME, FARFIELD_BACKEND_CUDA, prec, &cell, n, tol, terms, &pairs, Some(&scales), null_mut());
            let d = diff(&host(gp, &xyz, &q), &host(cp, &xyz, &q), &q);
            eprintln!("  scaled pairs, {name} terms, prec {prec}: {d:.1e}");
            assert!(d < bound, "{name} terms, prec {prec}: {d:e}");
            unsafe {
                farfield_ewald_destroy(gp);
                farfield_ewald_destroy(cp);
            }
        }
    }
}

/// Device arrays on a caller's non-blocking stream (`opts.gpu_stream`), as a GPU MD code calls:
/// before each call the caller's stream is kept busy (a 256 MiB device copy) and only then
/// receives new positions, so a plan stream that did not wait for the caller's work would read
/// the previous call's positions; the outputs are read after synchronising the caller's stream
/// only, so a plan that returned before its second (real-space) stream was ordered into the
/// caller's would give partial sums. Positions change every call (a random jitter, not a rigid
/// shift, which would leave φ and E unchanged); each call against the CPU backend with the
/// same bounds as `cuda_c_api_equals_the_cpu_backend`.
#[test]
fn cuda_c_api_on_a_callers_stream() {
    if device().is_none() {
        return;
    }
    let ctx = cudarc::driver::CudaContext::new(0).expect("device 0's primary context");
    let stream = ctx.new_stream().expect("a non-blocking stream");
    // SAFETY: the stream belongs to device 0's primary context and outlives every use below.
    let dev = unsafe { CudaDevice::with_stream(0, stream.cu_stream() as u64, 0) }.expect("device 0 on the caller's stream");
    let n = 4000;
    let (cell, xyz0, q) = system(n);
    let big = 256 << 20;
    let (src, mut dst) = (dev.alloc(big).unwrap(), dev.alloc(big).unwrap());
    let mut xb = dev.alloc(24 * n).unwrap();
    let qb = upload_new(&dev, &q).unwrap();
    let (pb, fb) = (dev.alloc(8 * n).unwrap(), dev.alloc(24 * n).unwrap());
    let mut rng = rand_pcg::Pcg64::seed_from_u64(17);
    for prec in [FARFIELD_EWALD_GPU_DOUBLE, FARFIELD_EWALD_GPU_MIXED] {
        let (tol, bound) = if prec == FARFIELD_EWALD_GPU_MIXED { (1e-5, 1e-5) } else { (1e-6, 1e-10) };
        let cp = plan(FARFIELD_EWALD_SPME, FARFIELD_BACKEND_CPU, 0, &cell, n, tol, &[], null_mut());
        let gp = plan(FARFIELD_EWALD_SPME, FARFIELD_BACKEND_CUDA, prec, &cell, n, tol, &[], stream.cu_stream() as *mut std::ffi::c_void);
        for call in 0..4 {
            let xyz: Vec<f64> = xyz0.iter().map(|v| v + rng.gen_range(-0.05..0.05)).collect();
            let c = host(cp, &xyz, &q);
            dev.copy(&mut dst, 0, &src, 0, big).unwrap();
            dev.upload(&mut xb, unsafe { std::slice::from_raw_parts(xyz.as_ptr() as *const u8, 24 * n) }).unwrap();
            let mut d = COut { phi: vec![], field: vec![], energy: 0.0, virial: [0.0; 9] };
            let ptr = |b: &_| dev.addr(b) as *mut f64;
            let s = unsafe { farfield_ewald_execute_device(gp, n as i64, ptr(&xb), ptr(&qb), ptr(&pb), ptr(&fb), &mut d.energy, d.virial.as_mut_ptr()) };
            assert_eq!(s, 0);
            // downloads on the caller's stream wait for that stream only
            d.phi = download_vec(&dev, &pb, n).unwrap();
            d.field = download_vec(&dev, &fb, 3 * n).unwrap();
            let dd = diff(&d, &c, &q);
            eprintln!("  caller's stream, prec {prec}, call {call}: {dd:.1e}");
            assert!(dd < bound, "prec {prec}, call {call}: {dd:e}");
        }
        unsafe {
            farfield_ewald_destroy(gp);
            farfield_ewald_destroy(cp);
        }
    }
}
