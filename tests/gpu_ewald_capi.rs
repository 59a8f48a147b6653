//! The Ewald C API with `opts.backend = FARFIELD_BACKEND_CUDA` on a CUDA device against the
//! CPU backend with the same arguments: SPME and spectral Ewald, double and mixed precision, a
//! triclinic cell, a net-charged random system with exclusions, `farfield_ewald_execute` (host
//! arrays) and `farfield_ewald_execute_device` (device arrays), the same parameters from
//! `farfield_ewald_get_params`. Tolerances as `c_tests/c_ewald_device.c` (same approximation,
//! rounding only): 1e-10 in double precision, 1e-5 with f32 grids (f32 roundoff 6e-8 through
//! the spreading sums and the FFT levels, ~1e-6, with a factor 10). Prints the time per call.
//! Skipped (passes) without a CUDA device; `gpu-emu/tests/ewald_exec.rs` runs the same host
//! code on the emulator everywhere.

use farfield::capi::ewald::*;
use farfield::gpu::cuda::CudaDevice;
use farfield::gpu::device::{download_vec, upload_new, Device};
use farfield::nufft::options::{FARFIELD_BACKEND_CPU, FARFIELD_BACKEND_CUDA};
use rand::{Rng, SeedableRng};
use std::ptr::null_mut;
use std::time::Instant;

fn device() -> Option<CudaDevice> {
    match farfield::gpu::runtime::discover() {
        Ok(d) if !d.is_empty() => Some(CudaDevice::new(0).expect("CUDA device 0")),
        other => {
            eprintln!("gpu_ewald_capi: skipped, no CUDA device ({other:?})");
            None
        }
    }
}

/// `n` charges at 100 per unit volume in a triclinic cell, net charge 2; charge `2k + 1` bonded
/// to `2k` (0.1 apart) and the pair excluded for `k < n/10`.
fn system(n: usize) -> ([f64; 9], Vec<f64>, Vec<f64>, Vec<i64>) {
    let l = (n as f64 / 100.0).cbrt();
    let cell = [l, 0.0, 0.0, 0.1 * l, 0.95 * l, 0.0, -0.05 * l, 0.1 * l, 1.05 * l];
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    let mut xyz = vec![0.0; 3 * n];
    for i in 0..n {
        let s: [f64; 3] = [0, 1, 2].map(|_| rng.gen_range(-0.5..1.5));
        for a in 0..3 {
            xyz[3 * i + a] = (0..3).map(|d| s[d] * cell[3 * d + a]).sum();
        }
    }
    let mut pairs = Vec::new();
    for k in 0..n / 10 {
        for a in 0..3 {
            xyz[3 * (2 * k + 1) + a] = xyz[3 * 2 * k + a] + if a == k % 3 { 0.1 } else { 0.0 };
        }
        pairs.extend([2 * k as i64, 2 * k as i64 + 1]);
    }
    let mut q: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let mean = q.iter().sum::<f64>() / n as f64;
    q.iter_mut().for_each(|v| *v += 2.0 / n as f64 - mean);
    (cell, xyz, q, pairs)
}

struct Out {
    phi: Vec<f64>,
    field: Vec<f64>,
    energy: f64,
    virial: [f64; 9],
}

fn plan(method: i32, backend: i32, prec: i32, cell: &[f64; 9], n: usize, tol: f64, pairs: &[i64]) -> farfield_ewald_plan {
    let mut o: farfield_ewald_opts = unsafe { std::mem::zeroed() };
    let mut p = null_mut();
    unsafe {
        assert_eq!(farfield_ewald_default_opts(&mut o, std::mem::size_of::<farfield_ewald_opts>()), 0);
        o.backend = backend;
        o.gpu_precision = prec;
        assert_eq!(farfield_ewald_makeplan(method, cell.as_ptr(), n as i64, tol, &mut p, &o), 0);
        assert_eq!(farfield_ewald_set_exclusions(p, (pairs.len() / 2) as i64, pairs.as_ptr()), 0);
    }
    p
}

fn host(p: farfield_ewald_plan, xyz: &[f64], q: &[f64]) -> Out {
    let n = q.len();
    let mut o = Out { phi: vec![0.0; n], field: vec![0.0; 3 * n], energy: 0.0, virial: [0.0; 9] };
    let s = unsafe { farfield_ewald_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), o.phi.as_mut_ptr(), o.field.as_mut_ptr(), &mut o.energy, o.virial.as_mut_ptr()) };
    assert_eq!(s, 0);
    o
}

/// Largest of the relative RMS differences of φ and of the forces, and of U and W on the scale
/// `½ Σ |q_i φ_i|`.
fn diff(g: &Out, c: &Out, q: &[f64]) -> f64 {
    let rms = |a: &[f64], b: &[f64]| {
        let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
        (num / b.iter().map(|y| y * y).sum::<f64>()).sqrt()
    };
    let force = |o: &Out| -> Vec<f64> { o.field.iter().enumerate().map(|(k, e)| q[k / 3] * e).collect() };
    let us: f64 = q.iter().zip(&c.phi).map(|(a, b)| 0.5 * (a * b).abs()).sum();
    let dw = g.virial.iter().zip(&c.virial).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
    rms(&g.phi, &c.phi).max(rms(&force(g), &force(c))).max((g.energy - c.energy).abs() / us).max(dw / us)
}

#[test]
fn cuda_c_api_equals_the_cpu_backend() {
    let Some(dev) = device() else { return };
    eprintln!("gpu_ewald_capi on {}", dev.name());
    let n = 3000;
    let (cell, xyz, q, pairs) = system(n);
    let (xb, qb) = (upload_new(&dev, &xyz).unwrap(), upload_new(&dev, &q).unwrap());
    let (pb, fb) = (dev.alloc(8 * n).unwrap(), dev.alloc(24 * n).unwrap());
    for (method, name) in [(FARFIELD_EWALD_SPME, "SPME"), (FARFIELD_EWALD_SPECTRAL, "spectral")] {
        for prec in [FARFIELD_EWALD_GPU_DOUBLE, FARFIELD_EWALD_GPU_MIXED] {
            let (tol, bound) = if prec == FARFIELD_EWALD_GPU_MIXED { (1e-5, 1e-5) } else { (1e-6, 1e-10) };
            let cp = plan(method, FARFIELD_BACKEND_CPU, 0, &cell, n, tol, &pairs);
            let gp = plan(method, FARFIELD_BACKEND_CUDA, prec, &cell, n, tol, &pairs);
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
            let mut d = Out { phi: vec![], field: vec![], energy: 0.0, virial: [0.0; 9] };
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
