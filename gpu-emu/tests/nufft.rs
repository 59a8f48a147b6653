//! The whole GPU NUFFT host path (buffers, launches, spreading/interpolation, FFT, deconvolution)
//! on the emulated kernels, with FFTW standing in for cuFFT, against the CPU NUFFT (same
//! parameters: agreement to round-off) and against direct sums (the requested tolerance).

use farfield::gpu::nufft::GpuNufft;
use farfield::gpu::spread::{GpuMethod, GpuSpreadOpts};
use farfield::gpu::types::GpuReal;
use farfield::nufft::{Backend, ModeOrder, NufftOpts, NufftParams, Precision};
use farfield::NufftPlan;
use farfield_gpu_emu::EmuDevice;
use num_complex::Complex;
use rand::{Rng, SeedableRng};

fn rel_l2<T: GpuReal>(a: &[Complex<T>], b: &[Complex<T>]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x.re.to_f64v() - y.re.to_f64v()).powi(2) + (x.im.to_f64v() - y.im.to_f64v()).powi(2)).sum();
    let den: f64 = b.iter().map(|y| y.re.to_f64v().powi(2) + y.im.to_f64v().powi(2)).sum();
    (num / den).sqrt()
}

/// The mode of output index `i` (from the definition, independent of the library).
fn mode(i: usize, n: usize, modeord: i32) -> i64 {
    let (i, n) = (i as i64, n as i64);
    if modeord == 1 {
        if i < (n + 1) / 2 { i } else { i - n }
    } else {
        i - n / 2
    }
}

/// A GPU plan on the emulator with the parameters the shared layer chooses for CUDA.
#[allow(clippy::too_many_arguments)]
fn gpu_plan<T: GpuReal>(ty: i32, dim: usize, nm: &[i64], iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts,
                        sopts: GpuSpreadOpts) -> farfield::Result<GpuNufft<T, EmuDevice>> {
    let params = NufftParams::new(ty, dim, nm, iflag, ntrans, tol, Precision::of::<T>(), opts, Backend::Cuda)?;
    GpuNufft::new(EmuDevice::default(), params, sopts)
}

/// Direct type-1 sums f_k = Σ c_j e^{i s k·x_j} (s = sign of iflag).
fn direct_t1(dim: usize, n: [usize; 3], modeord: i32, iflag: i32, x: &[Vec<f64>], c: &[Complex<f64>]) -> Vec<Complex<f64>> {
    let s = if iflag >= 0 { 1.0 } else { -1.0 };
    let total = n[0] * n[1] * n[2];
    (0..total)
        .map(|i| {
            let k = [mode(i % n[0], n[0], modeord), mode((i / n[0]) % n[1], n[1], modeord), mode(i / (n[0] * n[1]), n[2], modeord)];
            c.iter()
                .enumerate()
                .map(|(j, cj)| {
                    let ph: f64 = (0..dim).map(|d| k[d] as f64 * x[d][j]).sum();
                    cj * Complex::from_polar(1.0, s * ph)
                })
                .sum()
        })
        .collect()
}

fn check(dim: usize, modeord: i32, iflag: i32, method: Option<GpuMethod>, tol: f64) {
    let n: [usize; 3] = match dim {
        1 => [21, 1, 1],
        2 => [12, 9, 1],
        _ => [8, 6, 5],
    };
    let nm: Vec<i64> = n[..dim].iter().map(|&v| v as i64).collect();
    let m = 70;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(dim as u64 * 10 + modeord as u64);
    let x: Vec<Vec<f64>> = (0..3).map(|_| (0..m).map(|_| rng.gen_range(-4.0..4.0)).collect()).collect();
    let c: Vec<Complex<f64>> = (0..m).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
    let total: usize = n.iter().product();
    let fin: Vec<Complex<f64>> = (0..total).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
    let opts = NufftOpts { modeord: if modeord == 1 { ModeOrder::Fft } else { ModeOrder::Cmcl }, ..Default::default() };
    let sopts = GpuSpreadOpts { method, block: 64, ..Default::default() };
    let (y, z): (&[f64], &[f64]) = (if dim > 1 { &x[1] } else { &[] }, if dim > 2 { &x[2] } else { &[] });
    // type 1
    let mut cpu = NufftPlan::<f64>::new(1, dim, &nm, iflag, 1, tol, &opts).unwrap();
    cpu.setpts(&x[0], y, z).unwrap();
    let mut want = vec![Complex::new(0.0, 0.0); total];
    cpu.execute(&mut c.clone(), &mut want).unwrap();
    let mut gpu = gpu_plan::<f64>(1, dim, &nm, iflag, 1, tol, &opts, sopts).unwrap();
    assert_eq!(gpu.info().nf, cpu.info().nf);
    gpu.setpts(&x[0], y, z).unwrap();
    let mut got = vec![Complex::new(9.0, 9.0); total];
    gpu.execute(&mut c.clone(), &mut got).unwrap();
    let e_cpu = rel_l2(&got, &want);
    let exact = direct_t1(dim, n, modeord, iflag, &x, &c);
    let e_exact = rel_l2(&got, &exact);
    eprintln!("type 1 {dim}D modeord {modeord} iflag {iflag} {:?}: vs CPU {e_cpu:.1e}, vs direct {e_exact:.1e}", gpu.method());
    assert!(e_cpu < 1e-12, "type 1 vs CPU: {e_cpu}");
    assert!(e_exact < 10.0 * tol, "type 1 vs direct: {e_exact}");
    // type 2
    let mut cpu2 = NufftPlan::<f64>::new(2, dim, &nm, iflag, 1, tol, &opts).unwrap();
    cpu2.setpts(&x[0], y, z).unwrap();
    let mut want2 = vec![Complex::new(0.0, 0.0); m];
    cpu2.execute(&mut want2, &mut fin.clone()).unwrap();
    let mut gpu2 = gpu_plan::<f64>(2, dim, &nm, iflag, 1, tol, &opts, sopts).unwrap();
    gpu2.setpts(&x[0], y, z).unwrap();
    let mut got2 = vec![Complex::new(9.0, 9.0); m];
    gpu2.execute(&mut got2, &mut fin.clone()).unwrap();
    let e2 = rel_l2(&got2, &want2);
    // type 2 direct: c_j = Σ_k f_k e^{i s k·x_j}
    let s = if iflag >= 0 { 1.0 } else { -1.0 };
    let exact2: Vec<Complex<f64>> = (0..m)
        .map(|j| {
            (0..total)
                .map(|i| {
                    let k = [mode(i % n[0], n[0], modeord), mode((i / n[0]) % n[1], n[1], modeord), mode(i / (n[0] * n[1]), n[2], modeord)];
                    let ph: f64 = (0..dim).map(|d| k[d] as f64 * x[d][j]).sum();
                    fin[i] * Complex::from_polar(1.0, s * ph)
                })
                .sum()
        })
        .collect();
    let e2x = rel_l2(&got2, &exact2);
    eprintln!("type 2 {dim}D: vs CPU {e2:.1e}, vs direct {e2x:.1e}");
    assert!(e2 < 1e-12, "type 2 vs CPU: {e2}");
    assert!(e2x < 10.0 * tol, "type 2 vs direct: {e2x}");
}

#[test]
fn gpu_nufft_matches_cpu_and_direct_1d() {
    check(1, 0, 1, Some(GpuMethod::GmSort), 1e-6);
    check(1, 1, -1, Some(GpuMethod::Csr), 1e-9);
}

#[test]
fn gpu_nufft_matches_cpu_and_direct_2d() {
    check(2, 0, -1, Some(GpuMethod::Sm), 1e-6);
    check(2, 1, 1, Some(GpuMethod::Group), 1e-5);
}

#[test]
fn gpu_nufft_matches_cpu_and_direct_3d() {
    check(3, 0, 1, None, 1e-5);
    check(3, 1, -1, Some(GpuMethod::Gm), 1e-4);
}

#[test]
fn gpu_nufft_f32_and_errors() {
    let nm = [16i64, 10];
    let m = 50;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
    let x: Vec<f32> = (0..m).map(|_| rng.gen_range(-3.0..3.0)).collect();
    let y: Vec<f32> = (0..m).map(|_| rng.gen_range(-3.0..3.0)).collect();
    let c: Vec<Complex<f32>> = (0..m).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
    let opts = NufftOpts::default();
    let mut cpu = NufftPlan::<f32>::new(1, 2, &nm, 1, 1, 1e-4, &opts).unwrap();
    cpu.setpts(&x, &y, &[]).unwrap();
    let mut want = vec![Complex::new(0.0f32, 0.0); 160];
    cpu.execute(&mut c.clone(), &mut want).unwrap();
    let mut gpu = gpu_plan::<f32>(1, 2, &nm, 1, 1, 1e-4, &opts, GpuSpreadOpts { block: 64, ..Default::default() }).unwrap();
    let mut got = vec![Complex::new(0.0f32, 0.0); 160];
    assert!(matches!(gpu.execute(&mut c.clone(), &mut got), Err(farfield::Error::NoPoints(_))));
    gpu.setpts(&x, &y, &[]).unwrap();
    assert!(matches!(gpu.execute(&mut c[..10].to_vec(), &mut got), Err(farfield::Error::InvalidArg(_))));
    gpu.execute(&mut c.clone(), &mut got).unwrap();
    let e = rel_l2(&got, &want);
    assert!(e < 1e-5, "f32 type 1 vs CPU: {e}");
    // invalid plans are rejected as on the CPU
    assert!(matches!(gpu_plan::<f64>(3, 1, &[8], 1, 1, 1e-6, &NufftOpts::default(), GpuSpreadOpts::default()), Err(farfield::Error::NotSupported(_))));
    assert!(matches!(gpu_plan::<f64>(1, 1, &[8], 1, 1, -1.0, &NufftOpts::default(), GpuSpreadOpts::default()), Err(farfield::Error::Tol(_))));
}

/// Per-phase timing (`opts.debug > 0` on CUDA plans) records marks between the phases of every
/// chunk and prints one line per chunk; it changes no result: types 1 and 2, two chunks of
/// `ntrans = 3`, equal bit for bit with it off.
#[test]
fn gpu_phase_timing_changes_no_result() {
    let (nm, m, nt) = ([10i64, 8, 6], 50usize, 3usize);
    let n: usize = 480;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
    let x: Vec<Vec<f64>> = (0..3).map(|_| (0..m).map(|_| rng.gen_range(-3.0..3.0)).collect()).collect();
    let c: Vec<Complex<f64>> = (0..nt * m).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
    let f: Vec<Complex<f64>> = (0..nt * n).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
    let sopts = GpuSpreadOpts { method: Some(GpuMethod::Sm), block: 64, max_batch: 2, ..Default::default() };
    for ty in [1, 2] {
        let mut outs = Vec::new();
        for on in [false, true] {
            let mut gpu = gpu_plan::<f64>(ty, 3, &nm, 1, nt, 1e-9, &NufftOpts::default(), sopts).unwrap();
            gpu.set_phase_timing(on);
            gpu.setpts(&x[0], &x[1], &x[2]).unwrap();
            let (mut gc, mut gf) = (c.clone(), f.clone());
            gpu.execute(&mut gc, &mut gf).unwrap();
            outs.push(if ty == 1 { gf } else { gc });
        }
        assert!(outs[0] == outs[1], "type {ty}: phase timing changed the result");
    }
}

/// `ntrans > 1`: all vectors agree with the CPU plan, and a device failure in any launch of
/// any chunk leaves the output untouched (host arrays and device buffers); one batch (the
/// default bound) and chunks of at most 2 vectors (two chunks, the device output through
/// scratch).
#[test]
fn gpu_ntrans_is_all_or_nothing() {
    for max_batch in [0, 2] {
        ntrans_all_or_nothing(max_batch);
    }
}

fn ntrans_all_or_nothing(max_batch: usize) {
    use farfield::gpu::device::{download_vec, upload_new, Device};
    use std::sync::atomic::AtomicUsize;
    use std::sync::Arc;
    let (nm, m, nt) = ([10i64, 8], 40usize, 3usize);
    let n: usize = 80;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    let x: Vec<f64> = (0..m).map(|_| rng.gen_range(-3.0..3.0)).collect();
    let y: Vec<f64> = (0..m).map(|_| rng.gen_range(-3.0..3.0)).collect();
    let c: Vec<Complex<f64>> = (0..nt * m).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
    let f: Vec<Complex<f64>> = (0..nt * n).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
    let opts = NufftOpts::default();
    let sopts = GpuSpreadOpts { method: Some(GpuMethod::GmSort), block: 64, max_batch, ..Default::default() };
    for ty in [1, 2] {
        let mut cpu = NufftPlan::<f64>::new(ty, 2, &nm, 1, nt, 1e-8, &opts).unwrap();
        cpu.setpts(&x, &y, &[]).unwrap();
        let (mut wc, mut wf) = (c.clone(), f.clone());
        cpu.execute(&mut wc, &mut wf).unwrap();
        let want = if ty == 1 { wf } else { wc };
        let counter = Arc::new(AtomicUsize::new(usize::MAX));
        let dev = EmuDevice { fail_after_launches: Some(counter.clone()), ..EmuDevice::default() };
        let params = NufftParams::new(ty, 2, &nm, 1, nt, 1e-8, Precision::F64, &opts, Backend::Cuda).unwrap();
        let mut gpu = GpuNufft::<f64, EmuDevice>::new(dev.clone(), params, sopts).unwrap();
        gpu.setpts(&x, &y, &[]).unwrap();
        // launches of one full execute
        let before = counter.load(std::sync::atomic::Ordering::SeqCst);
        let (mut gc, mut gf) = (c.clone(), f.clone());
        gpu.execute(&mut gc, &mut gf).unwrap();
        let per_execute = before - counter.load(std::sync::atomic::Ordering::SeqCst);
        let got = if ty == 1 { &gf } else { &gc };
        let e = rel_l2(got, &want);
        assert!(e < 1e-12, "type {ty} ntrans {nt} vs CPU: {e:e}");
        // batched: two launches per chunk (GM-sort: spread + deconvolution, or deconvolution +
        // interpolation), not per vector
        let chunks = nt.div_ceil(gpu.batch());
        assert_eq!(gpu.batch(), if max_batch == 0 { nt } else { max_batch });
        assert_eq!(per_execute, 2 * chunks, "{per_execute} launches for {nt} vectors in {chunks} chunks");
        // a failure at every launch position: host output untouched
        for k in 0..per_execute {
            counter.store(k, std::sync::atomic::Ordering::SeqCst);
            let sentinel = Complex::new(7.0, -7.0);
            let (mut hc, mut hf) = if ty == 1 { (c.clone(), vec![sentinel; nt * n]) } else { (vec![sentinel; nt * m], f.clone()) };
            let r = gpu.execute(&mut hc, &mut hf);
            assert!(matches!(r, Err(farfield::Error::Internal(_))), "type {ty} failure at launch {k}: {r:?}");
            let out = if ty == 1 { &hf } else { &hc };
            assert!(out.iter().all(|&v| v == sentinel), "type {ty}: host output written before failure at launch {k}");
        }
        // device buffers: the output buffer keeps its bytes after a failure at any launch
        for k in 0..per_execute {
            counter.store(usize::MAX, std::sync::atomic::Ordering::SeqCst);
            let sentinel = vec![Complex::new(3.0, 4.0); nt * if ty == 1 { n } else { m }];
            let (mut cb, mut fb) = if ty == 1 { (upload_new(&dev, &c).unwrap(), upload_new(&dev, &sentinel).unwrap()) }
                                   else { (upload_new(&dev, &sentinel).unwrap(), upload_new(&dev, &f).unwrap()) };
            counter.store(k, std::sync::atomic::Ordering::SeqCst);
            assert!(gpu.execute_dev_all(&mut cb, &mut fb).is_err());
            counter.store(usize::MAX, std::sync::atomic::Ordering::SeqCst);
            let out: Vec<Complex<f64>> = download_vec(&dev, if ty == 1 { &fb } else { &cb }, sentinel.len()).unwrap();
            assert_eq!(out, sentinel, "type {ty}: device output written before failure at launch {k}");
            // and the same buffers give the right answer without a failure
            gpu.execute_dev_all(&mut cb, &mut fb).unwrap();
            let out: Vec<Complex<f64>> = download_vec(&dev, if ty == 1 { &fb } else { &cb }, sentinel.len()).unwrap();
            assert!(rel_l2(&out, &want) < 1e-12);
            let _ = dev.len(&cb);
        }
    }
}
