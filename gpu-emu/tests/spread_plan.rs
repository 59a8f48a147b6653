//! The spreading API's CUDA backend ([`SpreadPlan::with_device`]) on the emulated kernels
//! against its CPU backend: a box with a shifted origin and non-unit lengths, periodic and
//! free axes, dims 1–3, f32/f64, ES/Gaussian/B-spline (orders 1, 2, 3, 5), real and complex
//! values, methods GM-sort and SM. Tolerance: 1e-12 relative (f64), 1e-5 (f32), relative to
//! the largest CPU value (both backends evaluate the same kernel at the same coordinates).
//! The device-array entries (`setpts_device`, `spread_device`, `interp_device`) against the
//! same plan's host arrays: equal bit for bit, and the same errors.

use farfield::gpu::device::{download_vec, upload_new, Device};
use farfield::gpu::spread::{GpuMethod, GpuSpreadOpts};
use farfield::kernel::Kernel;
use farfield::gpu::types::GpuReal;
use farfield::plans::spread::{kernel_for, SpreadBox, SpreadKernelKind, SpreadPlan, SpreadPlanOpts};
use farfield_gpu_emu::EmuDevice;
use num_complex::Complex;
use rand::{Rng, SeedableRng};

fn max_rel<T: GpuReal>(a: &[T], b: &[T]) -> f64 {
    let s = b.iter().map(|v| v.to_f64v().abs()).fold(0.0, f64::max);
    assert!(s > 0.0);
    a.iter().zip(b).map(|(x, y)| (x.to_f64v() - y.to_f64v()).abs()).fold(0.0, f64::max) / s
}

fn check<T: GpuReal>(dim: usize, periodic: [bool; 3], k: &Kernel, method: GpuMethod, reltol: f64) {
    let w = k.width();
    let mut n = [1usize; 3];
    for d in 0..dim {
        n[d] = 2 * w + 6 + 2 * d;
    }
    let bx = SpreadBox { dim, n, lo: [-1.5, 0.25, 3.0], len: [2.0, 0.75, 1.25], periodic };
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3 + dim as u64 + w as u64);
    let m = if dim == 3 { 60 } else { 120 };
    let xs: Vec<Vec<T>> = (0..3)
        .map(|d| {
            (0..m)
                .map(|_| {
                    if d >= dim {
                        return T::zero();
                    }
                    let h = bx.len[d] / n[d] as f64;
                    T::of(if periodic[d] {
                        bx.lo[d] + rng.gen_range(-1.0..2.0) * bx.len[d]
                    } else {
                        bx.lo[d] + h * rng.gen_range(0.5 * w as f64 + 0.01..n[d] as f64 - 0.5 * w as f64 - 1.01)
                    })
                })
                .collect()
        })
        .collect();
    let coords: [&[T]; 3] = [&xs[0], if dim > 1 { &xs[1] } else { &[] }, if dim > 2 { &xs[2] } else { &[] }];
    let opts = SpreadPlanOpts { nthreads: 1, gpu: GpuSpreadOpts { method: Some(method), block: 64, ..Default::default() }, max_subprob_size: 16, ..Default::default() };
    let mut cpu = SpreadPlan::<T>::new(bx, k.clone(), &SpreadPlanOpts { nthreads: 1, ..Default::default() }).unwrap();
    let mut gpu = SpreadPlan::<T>::with_device(EmuDevice::default(), bx, k.clone(), &opts).unwrap();
    cpu.setpts(coords).unwrap();
    gpu.setpts(coords).unwrap();
    assert_eq!(gpu.backend_name(), "cuda");
    assert_eq!(gpu.gpu_method(), Some(method));
    let ng = cpu.grid_len();
    let what = format!("{dim}D {} periodic {:?} {k:?} {}", T::SUFFIX, &periodic[..dim], method.name());
    // real values
    let c: Vec<T> = (0..m).map(|_| T::of(rng.gen_range(-1.0..1.0))).collect();
    let (mut g1, mut g2) = (vec![T::zero(); ng], vec![T::of(5.0); ng]);
    cpu.spread_real(&c, &mut g1).unwrap();
    gpu.spread_real(&c, &mut g2).unwrap();
    let e = max_rel(&g2, &g1);
    assert!(e <= reltol, "spread real {what}: {e:e}");
    let grid: Vec<T> = (0..ng).map(|_| T::of(rng.gen_range(-1.0..1.0))).collect();
    let (mut v1, mut v2) = (vec![T::zero(); m], vec![T::zero(); m]);
    cpu.interp_real(&grid, &mut v1, None).unwrap();
    gpu.interp_real(&grid, &mut v2, None).unwrap();
    let e2 = max_rel(&v2, &v1);
    assert!(e2 <= reltol, "interp real {what}: {e2:e}");
    // complex values
    let cc: Vec<Complex<T>> = c.iter().map(|&v| Complex::new(v, T::of(0.5) * v)).collect();
    let (mut gc1, mut gc2) = (vec![Complex::new(T::zero(), T::zero()); ng], vec![Complex::new(T::zero(), T::zero()); ng]);
    cpu.spread_complex(&cc, &mut gc1).unwrap();
    gpu.spread_complex(&cc, &mut gc2).unwrap();
    let (re1, re2): (Vec<T>, Vec<T>) = (gc1.iter().map(|v| v.im).collect(), gc2.iter().map(|v| v.im).collect());
    assert!(max_rel(&re2, &re1) <= reltol, "spread complex {what}");
    // the gradient is CPU-only: refused, not wrong
    if let Kernel::BSpline(p) = k {
        if p.order >= 2 {
            let mut gr = vec![T::zero(); m * dim];
            assert!(matches!(gpu.interp_real(&grid, &mut v2, Some(&mut gr)), Err(farfield::Error::NotSupported(_))));
        }
    }
    device_arrays_equal_host_arrays(&gpu, bx, k, &opts, coords, &c, &grid, &what);
    eprintln!("{what}: spread {e:.1e} interp {e2:.1e}");
}

/// A plan set from device coordinates, run on device arrays, gives what `host` (the same
/// options, set from host arrays) gives with host arrays, bit for bit.
fn device_arrays_equal_host_arrays<T: GpuReal>(host: &SpreadPlan<T>, bx: SpreadBox, k: &Kernel, opts: &SpreadPlanOpts,
                                               coords: [&[T]; 3], c: &[T], grid: &[T], what: &str) {
    let dev = EmuDevice::default();
    let m = c.len();
    let ng = host.grid_len();
    let xb: Vec<_> = (0..bx.dim).map(|d| upload_new(&dev, coords[d]).unwrap()).collect();
    let a = |d: usize| xb.get(d).map_or(0, |b| dev.addr(b));
    let mut p = SpreadPlan::<T>::with_device(dev.clone(), bx, k.clone(), opts).unwrap();
    unsafe { p.setpts_device(m, a(0), a(1), a(2)) }.unwrap();
    assert_eq!((p.num_points(), p.gpu_method()), (m, host.gpu_method()));
    // real: spread, interp
    let cb = upload_new(&dev, c).unwrap();
    let gb = dev.alloc(ng * std::mem::size_of::<T>()).unwrap();
    unsafe { p.spread_device(dev.addr(&cb), dev.addr(&gb), false) }.unwrap();
    let mut want = vec![T::zero(); ng];
    host.spread_real(c, &mut want).unwrap();
    assert!(download_vec::<_, T>(&dev, &gb, ng).unwrap() == want, "spread_device (real) {what}");
    let gin = upload_new(&dev, grid).unwrap();
    let vb = dev.alloc(m * std::mem::size_of::<T>()).unwrap();
    unsafe { p.interp_device(dev.addr(&gin), dev.addr(&vb), false) }.unwrap();
    let mut want = vec![T::zero(); m];
    host.interp_real(grid, &mut want, None).unwrap();
    assert!(download_vec::<_, T>(&dev, &vb, m).unwrap() == want, "interp_device (real) {what}");
    // complex: spread, interp
    let cc: Vec<Complex<T>> = c.iter().map(|&v| Complex::new(v, T::of(-0.25) * v)).collect();
    let gc: Vec<Complex<T>> = grid.iter().map(|&v| Complex::new(T::of(0.5) * v, v)).collect();
    let ccb = upload_new(&dev, &cc).unwrap();
    let gcb = dev.alloc(ng * std::mem::size_of::<Complex<T>>()).unwrap();
    unsafe { p.spread_device(dev.addr(&ccb), dev.addr(&gcb), true) }.unwrap();
    let mut want = vec![Complex::new(T::zero(), T::zero()); ng];
    host.spread_complex(&cc, &mut want).unwrap();
    assert!(download_vec::<_, Complex<T>>(&dev, &gcb, ng).unwrap() == want, "spread_device (complex) {what}");
    let gcin = upload_new(&dev, &gc).unwrap();
    let vcb = dev.alloc(m * std::mem::size_of::<Complex<T>>()).unwrap();
    unsafe { p.interp_device(dev.addr(&gcin), dev.addr(&vcb), true) }.unwrap();
    let mut want = vec![Complex::new(T::zero(), T::zero()); m];
    host.interp_complex(&gc, &mut want).unwrap();
    assert!(download_vec::<_, Complex<T>>(&dev, &vcb, m).unwrap() == want, "interp_device (complex) {what}");
}

fn all<T: GpuReal>(reltol: f64, min_tol: f64) {
    let mut ks = vec![kernel_for(SpreadKernelKind::Es, 1e-5, min_tol).unwrap(), kernel_for(SpreadKernelKind::Gaussian, 1e-4, min_tol).unwrap()];
    for p in [1.0, 2.0, 3.0, 5.0] {
        ks.push(kernel_for(SpreadKernelKind::BSpline, p, min_tol).unwrap());
    }
    for dim in 1..=3 {
        for periodic in [[true; 3], [false, true, false]] {
            for k in &ks {
                for method in [GpuMethod::GmSort, GpuMethod::Sm] {
                    check::<T>(dim, periodic, k, method, reltol);
                }
            }
        }
    }
}

/// Bad device input gets the host path's status and message, and keeps the previous points;
/// device entries on a CPU plan, NULL and overlapping arrays are refused.
fn device_errors<T: GpuReal>() {
    let dev = EmuDevice::default();
    let k = kernel_for(SpreadKernelKind::BSpline, 4.0, 1e-6).unwrap();
    let bx = SpreadBox { dim: 2, n: [16, 20, 1], lo: [1.0, -2.0, 0.0], len: [0.5, 5.0, 1.0], periodic: [true, false, false] };
    let opts = SpreadPlanOpts { nthreads: 1, ..Default::default() };
    let mut host = SpreadPlan::<T>::with_device(dev.clone(), bx, k.clone(), &opts).unwrap();
    let mut p = SpreadPlan::<T>::with_device(dev.clone(), bx, k.clone(), &opts).unwrap();
    let good: [Vec<T>; 2] = [vec![T::of(1.5), T::of(-7.0), T::of(4.9)], vec![T::of(0.0), T::of(-0.5), T::of(1.0)]];
    let up = |v: &[T]| upload_new(&dev, v).unwrap();
    let (gx, gy) = (up(&good[0]), up(&good[1]));
    unsafe { p.setpts_device(3, dev.addr(&gx), dev.addr(&gy), 0) }.unwrap();
    let before = {
        let gb = dev.alloc(16 * 20 * std::mem::size_of::<T>()).unwrap();
        let cb = up(&[T::one(), T::of(2.0), T::of(-1.0)]);
        unsafe { p.spread_device(dev.addr(&cb), dev.addr(&gb), false) }.unwrap();
        download_vec::<_, T>(&dev, &gb, 16 * 20).unwrap()
    };
    // y = -2.0 + 0.1: the kernel (w = 4) leaves the free y axis; NaN in x at point 2 (a lower
    // axis, so named first); a coordinate whose (x − lo)/len overflows
    let cases: Vec<[Vec<T>; 2]> = vec![
        [good[0].clone(), vec![T::of(0.0), T::of(-1.9), T::of(1.0)]],
        [vec![T::of(1.5), T::of(0.0), T::nan()], vec![T::of(0.0), T::of(-1.9), T::of(1.0)]],
        [vec![T::of(1.5), T::max_value(), T::of(0.0)], good[1].clone()],
    ];
    for (ci, [x, y]) in cases.iter().enumerate() {
        if ci == 2 && T::SUFFIX == "f32" {
            continue; // f32::MAX / 0.5 is finite in double precision: no overflow to name
        }
        let want = host.setpts([x, y, &[]]).unwrap_err();
        let (bxb, byb) = (up(x), up(y));
        let got = unsafe { p.setpts_device(3, dev.addr(&bxb), dev.addr(&byb), 0) }.unwrap_err();
        assert_eq!(got.to_string(), want.to_string(), "case {ci}");
        assert_eq!(std::mem::discriminant(&got), std::mem::discriminant(&want), "case {ci}");
        // the previous points are kept
        let gb = dev.alloc(16 * 20 * std::mem::size_of::<T>()).unwrap();
        let cb = up(&[T::one(), T::of(2.0), T::of(-1.0)]);
        unsafe { p.spread_device(dev.addr(&cb), dev.addr(&gb), false) }.unwrap();
        assert!(download_vec::<_, T>(&dev, &gb, 16 * 20).unwrap() == before, "case {ci}: points kept");
    }
    assert!(matches!(unsafe { p.setpts_device(3, 0, dev.addr(&gy), 0) }, Err(farfield::Error::NullPointer(_))));
    let gb = dev.alloc(16 * 20 * std::mem::size_of::<T>()).unwrap();
    assert!(matches!(unsafe { p.spread_device(0, dev.addr(&gb), false) }, Err(farfield::Error::NullPointer(_))));
    // values overlapping the grid
    let a = dev.addr(&gb);
    let e = unsafe { p.interp_device(a, a + 8, false) }.unwrap_err();
    assert!(matches!(e, farfield::Error::InvalidArg(_)) && e.to_string().contains("overlap"), "{e}");
    // a CPU plan
    let mut cpu = SpreadPlan::<T>::new(bx, k, &opts).unwrap();
    let e = unsafe { cpu.setpts_device(3, dev.addr(&gx), dev.addr(&gy), 0) }.unwrap_err();
    assert!(matches!(e, farfield::Error::InvalidArg(_)) && e.to_string().contains("needs a CUDA plan"), "{e}");
    cpu.setpts([&good[0], &good[1], &[]]).unwrap();
    let e = unsafe { cpu.spread_device(dev.addr(&gx), dev.addr(&gb), false) }.unwrap_err();
    assert!(e.to_string().contains("needs a CUDA plan"), "{e}");
    // M = 0 clears the points
    unsafe { p.setpts_device(0, 0, 0, 0) }.unwrap();
    assert_eq!(p.num_points(), 0);
}

#[test]
fn spread_plan_device_errors_f64() {
    device_errors::<f64>();
}

#[test]
fn spread_plan_device_errors_f32() {
    device_errors::<f32>();
}

#[test]
fn spread_plan_cuda_backend_matches_cpu_f64() {
    all::<f64>(1e-12, 1e-15);
}

#[test]
fn spread_plan_cuda_backend_matches_cpu_f32() {
    all::<f32>(1e-5, 1e-6);
}
