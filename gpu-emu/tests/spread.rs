//! Every GPU spreading/interpolation method, run through the library's GPU host code on the
//! emulated kernels, against the CPU spreader: dims 1–3, f32/f64, ES/Gaussian/B-spline, points
//! on grid nodes, bin/tile edges and the period boundary, many points in one cell (several
//! subproblems per bin). Tolerance: 1e-12 relative (f64), 1e-5 (f32), relative to the largest
//! CPU value.

use farfield::gpu::spread::{GpuMethod, GpuSpreadOpts, GpuSpreader};
use farfield::gpu::types::GpuReal;
use farfield::kernel::bspline::BSplineParams;
use farfield::kernel::{Kernel, KernelKind};
use farfield::spread::{SpreadOpts, Spreader};
use farfield::threads::Threads;
use farfield_gpu_emu::EmuDevice;
use num_complex::Complex;
use rand::{Rng, SeedableRng};
use std::f64::consts::PI;

#[derive(Clone, Copy, Debug)]
enum Ker {
    Es,
    Gauss,
    BSpline(usize),
}

struct Case {
    dim: usize,
    nf: Vec<usize>,
    pts: Vec<[f64; 3]>,
    bins: [usize; 3],
}

fn case(dim: usize, m: usize, seed: u64) -> Case {
    let nf: Vec<usize> = match dim {
        1 => vec![48],
        2 => vec![24, 20],
        _ => vec![16, 14, 12],
    };
    let bins = match dim {
        1 => [8, 1, 1],
        2 => [8, 4, 1],
        _ => [4, 4, 4],
    };
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut pts: Vec<[f64; 3]> = (0..m).map(|_| [rng.gen_range(-3.0 * PI..3.0 * PI), rng.gen_range(-PI..PI), rng.gen_range(0.0..2.0 * PI)]).collect();
    let node = |d: usize, k: f64| 2.0 * PI * k / nf[d.min(dim - 1)] as f64;
    // grid nodes, bin/tile edges, the period boundary (both sides), negative multiples
    pts[0] = [0.0, 0.0, 0.0];
    pts[1] = [2.0 * PI, -PI, 2.0 * PI];
    pts[2] = [node(0, bins[0] as f64), node(1, bins[1] as f64), node(2, bins[2] as f64)];
    pts[3] = [node(0, 2.0 * bins[0] as f64) - 1e-13, node(1, 2.0 * bins[1] as f64) + 1e-13, node(2, 1.0)];
    pts[4] = [2.0 * PI - 1e-14, 2.0 * PI * (1.0 - 1e-15), -1e-15];
    pts[5] = [-4.0 * PI, 6.0 * PI, -2.0 * PI];
    // many points in one cell (more than a subproblem holds)
    for (i, p) in pts.iter_mut().enumerate().skip(6).take(40) {
        let f = 0.3 * (i as f64 / 40.0);
        *p = [node(0, 5.0 + f), node(1, 3.0 + f), node(2, 2.0 + f)];
    }
    Case { dim, nf, pts, bins }
}

fn spec(k: Ker, tol: f64) -> Kernel {
    match k {
        Ker::Es => Kernel::for_tolerance(KernelKind::Es, tol, 2.0),
        Ker::Gauss => Kernel::for_tolerance(KernelKind::Gaussian, tol, 2.0),
        Ker::BSpline(n) => Kernel::BSpline(BSplineParams { order: n }),
    }
}

fn max_rel<T: GpuReal>(a: &[Complex<T>], b: &[Complex<T>]) -> f64 {
    let scale = b.iter().map(|v| v.re.to_f64v().hypot(v.im.to_f64v())).fold(0.0, f64::max);
    let err = a
        .iter()
        .zip(b)
        .map(|(x, y)| (x.re.to_f64v() - y.re.to_f64v()).hypot(x.im.to_f64v() - y.im.to_f64v()))
        .fold(0.0, f64::max);
    assert!(scale > 0.0);
    err / scale
}

/// Runs every method for one case and kernel; returns the methods that ran.
fn check<T: GpuReal>(c: &Case, k: Ker, tol: f64, methods: &[GpuMethod], cu: Option<u32>, reltol: f64) {
    let th = Threads::new(1).unwrap();
    let sp = spec(k, tol);
    let mut cpu = Spreader::<T>::new(c.dim, &c.nf, &sp, SpreadOpts::default()).unwrap();
    let m = c.pts.len();
    let xs: Vec<Vec<T>> = (0..3).map(|d| c.pts.iter().map(|p| T::of(p[d])).collect()).collect();
    let empty: &[T] = &[];
    let coords: [&[T]; 3] = [&xs[0], if c.dim > 1 { &xs[1] } else { empty }, if c.dim > 2 { &xs[2] } else { empty }];
    cpu.setpts(coords, &th).unwrap();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
    let str_: Vec<Complex<T>> = (0..m).map(|_| Complex::new(T::of(rng.gen_range(-1.0..1.0)), T::of(rng.gen_range(-1.0..1.0)))).collect();
    let n: usize = c.nf.iter().product();
    let mut want_grid = vec![Complex::new(T::zero(), T::zero()); n];
    cpu.spread(&str_, &mut want_grid, &th);
    let grid_in: Vec<Complex<T>> = (0..n).map(|_| Complex::new(T::of(rng.gen_range(-1.0..1.0)), T::of(rng.gen_range(-1.0..1.0)))).collect();
    let mut want_c = vec![Complex::new(T::zero(), T::zero()); m];
    cpu.interp(&grid_in, &mut want_c, &th);
    for &method in methods {
        let opts = GpuSpreadOpts { method: Some(method), block: 64, max_subprob: 16, bin_size: Some(c.bins), cu, ..Default::default() };
        let mut gs = GpuSpreader::<T, EmuDevice>::new(EmuDevice::default(), c.dim, &c.nf, &sp, opts).unwrap();
        gs.setpts(coords).unwrap();
        assert_eq!(gs.method(), Some(method));
        let mut grid = vec![Complex::new(T::of(7.0), T::zero()); n];
        gs.spread(&str_, &mut grid).unwrap();
        let e = max_rel(&grid, &want_grid);
        let what = format!("{}D {} {k:?} {} cu {cu:?}", c.dim, T::SUFFIX, method.name());
        assert!(e <= reltol, "spread {what}: rel err {e:e}");
        let mut out = vec![Complex::new(T::of(7.0), T::zero()); m];
        gs.interp(&grid_in, &mut out).unwrap();
        let e2 = max_rel(&out, &want_c);
        assert!(e2 <= reltol, "interp {what}: rel err {e2:e}");
        eprintln!("{what}: spread {e:.1e} interp {e2:.1e}");
    }
}

/// Every method with the ES, Gaussian and B-spline kernels — in 3D f32 the ES kernel only (3D
/// costs the emulator most; the Gaussian and B-spline kernels run in f32 in 1D and 2D, and in
/// 3D in f64).
fn all_kernels<T: GpuReal>(dim: usize, reltol: f64) {
    let c = case(dim, if dim == 3 { 90 } else { 100 }, 5 + dim as u64);
    check::<T>(&c, Ker::Es, 2e-5, &GpuMethod::all(), None, reltol);
    if dim == 3 && T::NAME == "f32" {
        return;
    }
    check::<T>(&c, Ker::Gauss, 1e-2, &GpuMethod::all(), None, reltol);
    check::<T>(&c, Ker::BSpline(if dim == 3 { 4 } else { 5 }), 0.0, &GpuMethod::all(), None, reltol);
}

#[test]
fn methods_match_cpu_1d_f64() {
    all_kernels::<f64>(1, 1e-12);
}
#[test]
fn methods_match_cpu_2d_f64() {
    all_kernels::<f64>(2, 1e-12);
}
#[test]
fn methods_match_cpu_3d_f64() {
    all_kernels::<f64>(3, 1e-12);
}
#[test]
fn methods_match_cpu_1d_f32() {
    all_kernels::<f32>(1, 1e-5);
}
#[test]
fn methods_match_cpu_2d_f32() {
    all_kernels::<f32>(2, 1e-5);
}
#[test]
fn methods_match_cpu_3d_f32() {
    all_kernels::<f32>(3, 1e-5);
}

#[test]
fn csr_every_compute_unit_size() {
    let c = case(2, 120, 3);
    for cu in [1u32, 2, 4, 8, 16] {
        check::<f64>(&c, Ker::Es, 1e-6, &[GpuMethod::Csr], Some(cu), 1e-12);
    }
}

#[test]
fn wide_kernel_high_accuracy() {
    // ES at 1e-12 (w = 13) in 1D and 2D: long Horner polynomials, wide tiles
    let c = case(1, 100, 9);
    let c1 = Case { nf: vec![64], ..c };
    check::<f64>(&c1, Ker::Es, 1e-12, &GpuMethod::all(), None, 1e-12);
}

#[test]
fn auto_selection_and_errors() {
    let c = case(3, 60, 4);
    let sp = spec(Ker::Es, 2e-5);
    let xs: Vec<Vec<f64>> = (0..3).map(|d| c.pts.iter().map(|p| p[d]).collect()).collect();
    // a reuse hint of 100 on a sparse configuration picks CSR, none picks a particle method
    let mut a = GpuSpreader::<f64, EmuDevice>::new(EmuDevice::default(), 3, &c.nf, &sp, GpuSpreadOpts { reuse_hint: 100, ..Default::default() }).unwrap();
    a.setpts([&xs[0], &xs[1], &xs[2]]).unwrap();
    assert_eq!(a.method(), Some(GpuMethod::Csr));
    let mut b = GpuSpreader::<f64, EmuDevice>::new(EmuDevice::default(), 3, &c.nf, &sp, GpuSpreadOpts::default()).unwrap();
    b.setpts([&xs[0], &xs[1], &xs[2]]).unwrap();
    assert!(matches!(b.method(), Some(GpuMethod::Gm | GpuMethod::GmSort | GpuMethod::Sm)));
    // SM demanded where no tile fits in 1 KiB of shared memory
    let tiny = EmuDevice { shared_bytes: 1024, ..EmuDevice::default() };
    let mut s = GpuSpreader::<f64, EmuDevice>::new(tiny, 3, &c.nf, &sp, GpuSpreadOpts { method: Some(GpuMethod::Sm), ..Default::default() }).unwrap();
    assert!(!s.sm_available());
    assert!(matches!(s.setpts([&xs[0], &xs[1], &xs[2]]), Err(farfield::Error::NotSupported(_))));
    // non-finite coordinates are rejected with the index
    let mut bad = xs[1].clone();
    bad[7] = f64::NAN;
    match b.setpts([&xs[0], &bad, &xs[2]]) {
        Err(farfield::Error::NonFinite(m)) => assert!(m.contains("point 7"), "{m}"),
        other => panic!("{other:?}"),
    }
    // execute before setpts
    let fresh = GpuSpreader::<f64, EmuDevice>::new(EmuDevice::default(), 3, &c.nf, &sp, GpuSpreadOpts::default()).unwrap();
    let mut g = vec![Complex::new(0.0, 0.0); c.nf.iter().product()];
    assert!(matches!(fresh.spread(&[], &mut g), Err(farfield::Error::NoPoints(_))));
}

#[test]
fn staggered_threads_do_not_change_results() {
    // the kernels with barriers and shuffles (SM, CSR, group) under the race-exposing schedule
    let c = case(2, 100, 21);
    farfield_gpu_emu::set_stagger(true);
    check::<f64>(&c, Ker::Es, 2e-5, &[GpuMethod::Sm, GpuMethod::Csr, GpuMethod::Group, GpuMethod::GmSort], None, 1e-12);
    farfield_gpu_emu::set_stagger(false);
}
