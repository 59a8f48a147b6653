//! Device-side `setpts` on the emulated kernels: `GpuSpreader::setpts_dev` (device coordinate
//! buffers) against `setpts` (host arrays) for every method, dims 1–3, f32/f64 — the same
//! spread grids and interpolated values; the caller's buffers may be freed right after the
//! call; a non-finite device coordinate is `NonFinite` naming the point and axis and keeps the
//! previous points; the NUFFT through `GpuNufft::setpts_dev` against the CPU NUFFT; the
//! interpolation rule (type 2 and the inner type 2 of type 3 use GM-sort by default).

use farfield::gpu::device::{upload_new, Device};
use farfield::gpu::nufft::GpuNufft;
use farfield::gpu::spread::{GpuMethod, GpuSpreadOpts, GpuSpreader};
use farfield::gpu::type3::GpuType3;
use farfield::gpu::types::GpuReal;
use farfield::kernel::{Kernel, KernelKind};
use farfield::nufft::{Backend, NufftOpts, NufftParams, Precision};
use farfield::NufftPlan;
use farfield_gpu_emu::EmuDevice;
use num_complex::Complex;
use rand::{Rng, SeedableRng};
use std::f64::consts::PI;

fn max_rel<T: GpuReal>(a: &[Complex<T>], b: &[Complex<T>]) -> f64 {
    let scale = b.iter().map(|v| v.re.to_f64v().hypot(v.im.to_f64v())).fold(0.0, f64::max);
    assert!(scale > 0.0);
    a.iter().zip(b).map(|(x, y)| (x.re.to_f64v() - y.re.to_f64v()).hypot(x.im.to_f64v() - y.im.to_f64v())).fold(0.0, f64::max) / scale
}

fn cplx<T: GpuReal>(rng: &mut rand_pcg::Pcg64, n: usize) -> Vec<Complex<T>> {
    (0..n).map(|_| Complex::new(T::of(rng.gen_range(-1.0..1.0)), T::of(rng.gen_range(-1.0..1.0)))).collect()
}

fn nf_for(dim: usize) -> Vec<usize> {
    match dim {
        1 => vec![48],
        2 => vec![24, 20],
        _ => vec![16, 14, 12],
    }
}

/// Coordinates (−3π … 3π, a few on grid nodes and the period boundary) per axis.
fn coords<T: GpuReal>(m: usize, seed: u64) -> Vec<Vec<T>> {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut x: Vec<Vec<f64>> = (0..3).map(|_| (0..m).map(|_| rng.gen_range(-3.0 * PI..3.0 * PI)).collect()).collect();
    for v in x.iter_mut() {
        v[0] = 0.0;
        v[1] = 2.0 * PI;
        v[2] = -2.0 * PI + 1e-15;
    }
    x.iter().map(|v| v.iter().map(|&a| T::of(a)).collect()).collect()
}

fn same_results<T: GpuReal>(dim: usize, reltol: f64) {
    let nf = nf_for(dim);
    let n: usize = nf.iter().product();
    // 1D: several subproblems per bin (max_subprob 16); 2D and 3D: two blocks of points, and
    // ASM = m·w^dim/Πnf below 8, so CSR's compute units (and the emulator's shuffle
    // reductions per grid point) are 8 threads, not 16
    let m = if dim == 1 { 150 } else { 70 };
    let x = coords::<T>(m, 3 + dim as u64);
    let empty: &[T] = &[];
    let host: [&[T]; 3] = [&x[0], if dim > 1 { &x[1] } else { empty }, if dim > 2 { &x[2] } else { empty }];
    let ker = Kernel::for_tolerance(KernelKind::Es, 2e-5, 2.0); // w = 6: 2w fits the 12-point axis
    let mut rng = rand_pcg::Pcg64::seed_from_u64(17);
    let c = cplx::<T>(&mut rng, m);
    let grid_in = cplx::<T>(&mut rng, n);
    let bins = match dim {
        1 => [8, 1, 1],
        2 => [8, 4, 1],
        _ => [4, 4, 4],
    };
    for method in GpuMethod::all() {
        let dev = EmuDevice::default();
        let opts = GpuSpreadOpts { method: Some(method), block: 64, max_subprob: 16, bin_size: Some(bins), ..Default::default() };
        let mut a = GpuSpreader::<T, EmuDevice>::new(dev.clone(), dim, &nf, &ker, opts).unwrap();
        a.setpts(host).unwrap();
        let mut b = GpuSpreader::<T, EmuDevice>::new(dev.clone(), dim, &nf, &ker, opts).unwrap();
        {
            // device coordinate buffers, freed right after the call (setpts_dev copies)
            let bufs: Vec<_> = (0..dim).map(|d| upload_new(&dev, &x[d]).unwrap()).collect();
            b.setpts_dev(m, [bufs.first(), bufs.get(1), bufs.get(2)]).unwrap();
        }
        assert_eq!((a.method(), b.method(), b.num_points()), (Some(method), Some(method), m));
        let (mut ga, mut gb) = (vec![Complex::new(T::of(5.0), T::zero()); n], vec![Complex::new(T::of(6.0), T::zero()); n]);
        a.spread(&c, &mut ga).unwrap();
        b.spread(&c, &mut gb).unwrap();
        let (mut ca, mut cb) = (vec![Complex::new(T::of(5.0), T::zero()); m], vec![Complex::new(T::of(6.0), T::zero()); m]);
        a.interp(&grid_in, &mut ca).unwrap();
        b.interp(&grid_in, &mut cb).unwrap();
        let (es, ei) = (max_rel(&gb, &ga), max_rel(&cb, &ca));
        eprintln!("{dim}D {} {}: setpts_dev vs setpts: spread {es:.1e}, interp {ei:.1e}", T::NAME, method.name());
        // the same folded points, sort and structures: interpolation without atomics is
        // bitwise equal, and atomics only reorder the additions of a sum
        if matches!(method, GpuMethod::Gm | GpuMethod::GmSort | GpuMethod::Sm | GpuMethod::Csr) {
            assert!(cb == ca, "{dim}D {} {}: interpolation differs ({ei:e})", T::NAME, method.name());
        }
        if method == GpuMethod::Csr {
            assert!(gb == ga, "{dim}D {} csr: spreading differs ({es:e})", T::NAME);
        }
        assert!(es <= reltol && ei <= reltol, "{dim}D {} {}: {es:e} {ei:e}", T::NAME, method.name());
    }
}

#[test]
fn setpts_dev_equals_setpts_f64() {
    for dim in 1..=3 {
        same_results::<f64>(dim, 1e-14);
    }
}

#[test]
fn setpts_dev_equals_setpts_f32() {
    for dim in 1..=3 {
        same_results::<f32>(dim, 1e-6);
    }
}

#[test]
fn nonfinite_device_coordinate_is_named_and_keeps_the_points() {
    let dev = EmuDevice::default();
    let nf = nf_for(3);
    let ker = Kernel::for_tolerance(KernelKind::Es, 1e-4, 2.0);
    let m = 300;
    let x = coords::<f64>(m, 9);
    let mut s = GpuSpreader::<f64, EmuDevice>::new(dev.clone(), 3, &nf, &ker, GpuSpreadOpts { method: Some(GpuMethod::GmSort), ..Default::default() }).unwrap();
    s.setpts([&x[0][..100], &x[1][..100], &x[2][..100]]).unwrap();
    let run = |s: &mut GpuSpreader<f64, EmuDevice>, bad: &[(usize, usize, f64)]| -> farfield::Error {
        let mut v = x.clone();
        for &(d, i, val) in bad {
            v[d][i] = val;
        }
        let bufs: Vec<_> = v.iter().map(|a| upload_new(&dev, a).unwrap()).collect();
        s.setpts_dev(m, [Some(&bufs[0]), Some(&bufs[1]), Some(&bufs[2])]).unwrap_err()
    };
    // one NaN on y: named with its index and axis
    match run(&mut s, &[(1, 217, f64::NAN)]) {
        farfield::Error::NonFinite(msg) => assert_eq!(msg, "coordinate y of point 217 is NaN"),
        e => panic!("{e:?}"),
    }
    // several bad values: the first index of the lowest axis (as the host check reads them)
    match run(&mut s, &[(2, 3, f64::INFINITY), (0, 250, f64::NEG_INFINITY), (0, 40, f64::NAN), (0, 260, f64::NAN)]) {
        farfield::Error::NonFinite(msg) => assert_eq!(msg, "coordinate x of point 40 is NaN"),
        e => panic!("{e:?}"),
    }
    match run(&mut s, &[(2, 299, f64::NEG_INFINITY)]) {
        farfield::Error::NonFinite(msg) => assert_eq!(msg, "coordinate z of point 299 is -inf"),
        e => panic!("{e:?}"),
    }
    // the previous points are kept and still work
    assert_eq!(s.num_points(), 100);
    let mut g = vec![Complex::new(0.0, 0.0); nf.iter().product()];
    s.spread(&vec![Complex::new(1.0, 0.0); 100], &mut g).unwrap();
    assert!(g.iter().any(|v| v.re != 0.0));
    // f32, and the host setpts takes the same path (same message)
    let mut s32 = GpuSpreader::<f32, EmuDevice>::new(dev.clone(), 1, &[48], &ker, GpuSpreadOpts::default()).unwrap();
    let mut x32: Vec<f32> = (0..50).map(|i| i as f32 * 0.1).collect();
    x32[33] = f32::INFINITY;
    match s32.setpts([&x32, &[], &[]]) {
        Err(farfield::Error::NonFinite(msg)) => assert_eq!(msg, "coordinate x of point 33 is inf"),
        e => panic!("{e:?}"),
    }
    // a used axis without a buffer, or a short buffer
    let short = upload_new(&dev, &x[0][..10]).unwrap();
    let full = upload_new(&dev, &x[0]).unwrap();
    assert!(matches!(s.setpts_dev(m, [Some(&full), None, Some(&full)]), Err(farfield::Error::InvalidArg(_))));
    assert!(matches!(s.setpts_dev(m, [Some(&full), Some(&short), Some(&full)]), Err(farfield::Error::InvalidArg(_))));
    assert_eq!(s.num_points(), 100);
    // no points at all is fine without buffers
    s.setpts_dev(0, [None, None, None]).unwrap();
    assert_eq!(s.num_points(), 0);
    let _ = dev.len(&full);
}

/// The NUFFT (types 1 and 2) with its points set from device buffers against the CPU NUFFT.
fn nufft_through_setpts_dev<T: GpuReal>(dim: usize, tol: f64, agree: f64) {
    let nm: Vec<i64> = match dim {
        1 => vec![24],
        2 => vec![12, 10],
        _ => vec![8, 6, 5],
    };
    let n: usize = nm.iter().product::<i64>() as usize;
    let m = 120;
    let x = coords::<T>(m, 50 + dim as u64);
    let (y, z): (&[T], &[T]) = (if dim > 1 { &x[1] } else { &[] }, if dim > 2 { &x[2] } else { &[] });
    let mut rng = rand_pcg::Pcg64::seed_from_u64(8);
    let c = cplx::<T>(&mut rng, m);
    let f = cplx::<T>(&mut rng, n);
    let opts = NufftOpts::default();
    for ty in [1, 2] {
        let mut cpu = NufftPlan::<T>::new(ty, dim, &nm, -1, 1, tol, &opts).unwrap();
        cpu.setpts(&x[0], y, z).unwrap();
        let (mut wc, mut wf) = (c.clone(), f.clone());
        cpu.execute(&mut wc, &mut wf).unwrap();
        let dev = EmuDevice::default();
        let params = NufftParams::new(ty, dim, &nm, -1, 1, tol, Precision::of::<T>(), &opts, Backend::Cuda).unwrap();
        let mut gpu = GpuNufft::<T, EmuDevice>::new(dev.clone(), params, GpuSpreadOpts { block: 64, ..Default::default() }).unwrap();
        {
            let bufs: Vec<_> = (0..dim).map(|d| upload_new(&dev, &x[d]).unwrap()).collect();
            gpu.setpts_dev(m, [bufs.first(), bufs.get(1), bufs.get(2)]).unwrap();
        }
        let (mut gc, mut gf) = (c.clone(), f.clone());
        gpu.execute(&mut gc, &mut gf).unwrap();
        let e = if ty == 1 { max_rel(&gf, &wf) } else { max_rel(&gc, &wc) };
        eprintln!("{dim}D {} type {ty} via setpts_dev ({:?}): vs CPU {e:.1e}", T::NAME, gpu.method());
        assert!(e < agree, "{dim}D {} type {ty}: {e:e}", T::NAME);
    }
}

#[test]
fn nufft_with_device_points_matches_cpu() {
    for dim in 1..=3 {
        nufft_through_setpts_dev::<f64>(dim, 1e-8, 1e-12);
        nufft_through_setpts_dev::<f32>(dim, 1e-4, 2e-5);
    }
}

#[test]
fn interpolating_plans_choose_as_spreading_plans() {
    // dense points (ASM ≥ 1, more than 1024) and a 48 KiB tile that is not mostly padding:
    // type 1 spreads and type 2 interpolates with SM (docs/gpu-methods.md)
    let (nm, m) = ([16i64, 12], 3000);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(2);
    let x: Vec<f64> = (0..m).map(|_| rng.gen_range(-PI..PI)).collect();
    let y: Vec<f64> = (0..m).map(|_| rng.gen_range(-PI..PI)).collect();
    let opts = NufftOpts::default();
    let mut methods = Vec::new();
    for ty in [1, 2] {
        let params = NufftParams::new(ty, 2, &nm, 1, 1, 1e-6, Precision::F64, &opts, Backend::Cuda).unwrap();
        let mut p = GpuNufft::<f64, EmuDevice>::new(EmuDevice::default(), params, GpuSpreadOpts::default()).unwrap();
        p.setpts(&x, &y, &[]).unwrap();
        methods.push(p.method().unwrap());
    }
    assert_eq!(methods, [GpuMethod::Sm, GpuMethod::Sm]);
    // an explicit method still wins
    let params = NufftParams::new(2, 2, &nm, 1, 1, 1e-6, Precision::F64, &opts, Backend::Cuda).unwrap();
    let mut p = GpuNufft::<f64, EmuDevice>::new(EmuDevice::default(), params, GpuSpreadOpts { method: Some(GpuMethod::GmSort), ..Default::default() }).unwrap();
    p.setpts(&x, &y, &[]).unwrap();
    assert_eq!(p.method(), Some(GpuMethod::GmSort));
    // type 3: the spreading step spreads, the inner type 2 interpolates
    let s: Vec<f64> = (0..m).map(|_| rng.gen_range(-6.0..6.0)).collect();
    let t: Vec<f64> = (0..m).map(|_| rng.gen_range(-6.0..6.0)).collect();
    let mut t3 = GpuType3::<f64, EmuDevice>::new(EmuDevice::default(), 2, 1, 1, 1e-6, &opts, GpuSpreadOpts::default()).unwrap();
    t3.setpts([&x, &y, &[]], [&s, &t, &[]]).unwrap();
    let (spread, inner) = t3.methods().unwrap();
    assert!(matches!(inner, Some(GpuMethod::Sm | GpuMethod::GmSort)), "{inner:?}");
    assert!(matches!(spread, Some(GpuMethod::Sm | GpuMethod::GmSort)), "{spread:?}");
}
