//! Streams: a GPU NUFFT plan built on a device handle for a stream issues all of its work on
//! that stream. The emulated device records every launch under its stream tag
//! (`EmuDevice::stream`, as a CUDA device handle made on a caller's `opts.gpu_stream`); plans
//! on different tags, run concurrently from two threads, must each log exactly their own
//! kernels (setpts: fold and bin sort; execute: spreading or interpolation and the
//! deconvolution of their type), and the inner type 2 of a type 3 plan runs on the type 3
//! plan's stream. The results are checked against the CPU NUFFT, so the tagged plans did the
//! work they logged.

use farfield::gpu::nufft::GpuNufft;
use farfield::gpu::spread::{GpuMethod, GpuSpreadOpts};
use farfield::gpu::type3::GpuType3;
use farfield::nufft::{Backend, NufftOpts, NufftParams, Precision};
use farfield::NufftPlan;
use farfield_gpu_emu::{stream_launches, EmuDevice};
use num_complex::Complex;
use rand::{Rng, SeedableRng};

fn rel_l2(a: &[Complex<f64>], b: &[Complex<f64>]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    let den: f64 = b.iter().map(|y| y.norm_sqr()).sum();
    (num / den).sqrt()
}

/// Type `ty` in 2D on stream tag `tag` with `method`; returns the GPU and CPU outputs.
fn run(ty: i32, tag: u64, method: GpuMethod) -> (Vec<Complex<f64>>, Vec<Complex<f64>>) {
    let nm = [16i64, 12];
    let m = 200;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(tag);
    let x: Vec<f64> = (0..m).map(|_| rng.gen_range(-3.0..3.0)).collect();
    let y: Vec<f64> = (0..m).map(|_| rng.gen_range(-3.0..3.0)).collect();
    let (nc, nf) = (m, 16 * 12);
    let c: Vec<Complex<f64>> = (0..nc).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
    let f: Vec<Complex<f64>> = (0..nf).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
    let opts = NufftOpts { nthreads: 1, ..NufftOpts::default() };
    let params = NufftParams::new(ty, 2, &nm, 1, 1, 1e-9, Precision::F64, &opts, Backend::Cuda).unwrap();
    let sopts = GpuSpreadOpts { method: Some(method), block: 64, ..Default::default() };
    let mut gpu = GpuNufft::<f64, EmuDevice>::new(EmuDevice::on_stream(tag), params, sopts).unwrap();
    gpu.setpts(&x, &y, &[]).unwrap();
    let mut cpu = NufftPlan::<f64>::new(ty, 2, &nm, 1, 1, 1e-9, &opts).unwrap();
    cpu.setpts(&x, &y, &[]).unwrap();
    let (mut cg, mut fg, mut cc, mut fc) = (c.clone(), f.clone(), c.clone(), f.clone());
    gpu.execute(&mut cg, &mut fg).unwrap();
    cpu.execute(&mut cc, &mut fc).unwrap();
    if ty == 1 {
        (fg, fc)
    } else {
        (cg, cc)
    }
}

#[test]
fn each_plan_launches_on_its_own_stream() {
    const T1: u64 = 0x5157_0001;
    const T2: u64 = 0x5157_0002;
    let a = std::thread::spawn(|| run(1, T1, GpuMethod::Sm));
    let b = std::thread::spawn(|| run(2, T2, GpuMethod::GmSort));
    let (ga, ca) = a.join().unwrap();
    let (gb, cb) = b.join().unwrap();
    assert!(rel_l2(&ga, &ca) < 1e-12 && rel_l2(&gb, &cb) < 1e-12);
    let (l1, l2) = (stream_launches(T1), stream_launches(T2));
    eprintln!("stream {T1:#x}: {l1:?}\nstream {T2:#x}: {l2:?}");
    let has = |l: &[String], k: &str| l.iter().any(|n| n.contains(k));
    // setpts and execute of each plan, all on its own stream
    for (l, own, other) in [(&l1, "ff_deconv_t1", "ff_deconv_t2"), (&l2, "ff_deconv_t2", "ff_deconv_t1")] {
        assert!(has(l, "fold") && has(l, "bin_count") && has(l, own), "{l:?}");
        assert!(!has(l, other), "{l:?}");
    }
    assert!(has(&l1, "sm_spread") && !has(&l1, "interp"), "{l1:?}");
    assert!(has(&l2, "gm_interp") && !has(&l2, "spread"), "{l2:?}");
    // the default stream (tag 0) is not logged (every other test runs there), other tags saw nothing
    assert!(stream_launches(0).is_empty() && stream_launches(0x5157_0003).is_empty());
}

#[test]
fn the_inner_type_2_of_type_3_runs_on_the_plans_stream() {
    const T3: u64 = 0x5157_0033;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
    let (m, n) = (60, 50);
    let x: Vec<f64> = (0..m).map(|_| rng.gen_range(-2.0..3.0)).collect();
    let s: Vec<f64> = (0..n).map(|_| rng.gen_range(-10.0..14.0)).collect();
    let c: Vec<Complex<f64>> = (0..m).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
    let opts = NufftOpts { nthreads: 1, ..NufftOpts::default() };
    let sopts = GpuSpreadOpts { block: 64, ..Default::default() };
    let mut gpu = GpuType3::<f64, EmuDevice>::new(EmuDevice::on_stream(T3), 1, 1, 1, 1e-9, &opts, sopts).unwrap();
    gpu.setpts([&x, &[], &[]], [&s, &[], &[]]).unwrap();
    let mut got = vec![Complex::new(0.0, 0.0); n];
    gpu.execute(&c, &mut got).unwrap();
    let mut cpu = NufftPlan::<f64>::new(3, 1, &[], 1, 1, 1e-9, &opts).unwrap();
    cpu.setpts_type3(&x, &[], &[], &s, &[], &[]).unwrap();
    let mut want = vec![Complex::new(0.0, 0.0); n];
    cpu.execute(&mut c.clone(), &mut want).unwrap();
    assert!(rel_l2(&got, &want) < 1e-12, "{}", rel_l2(&got, &want));
    let l = stream_launches(T3);
    // pre-phase and deconvolution (ff_cmul), the spreading onto the type-3 grid, and the inner
    // type 2's deconvolution and interpolation: one stream
    for k in ["ff_cmul", "spread", "ff_deconv_t2", "interp"] {
        assert!(l.iter().any(|n| n.contains(k)), "{k} not on the plan's stream: {l:?}");
    }
}
