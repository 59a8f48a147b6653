//! Batched `ntrans` on the emulated kernels: the GPU NUFFT with ntrans = 1, 3, 5 and a chunk
//! bound of 2 vectors (so 1, 2 and 3 chunks run, the last one smaller: both batched FFT plans)
//! against the CPU NUFFT with the same ntrans — types 1 and 2, dims 1–3, f32/f64, every
//! spreading method, host arrays and device buffers. Agreement: 1e-12 relative l2 (f64),
//! 2e-5 (f32), the round-off of the same approximation.

use farfield::gpu::device::{download_vec, upload_new};
use farfield::gpu::nufft::GpuNufft;
use farfield::gpu::spread::{GpuMethod, GpuSpreadOpts};
use farfield::gpu::types::GpuReal;
use farfield::nufft::{Backend, NufftOpts, NufftParams, Precision};
use farfield::NufftPlan;
use farfield_gpu_emu::EmuDevice;
use num_complex::Complex;
use rand::{Rng, SeedableRng};

fn rel_l2<T: GpuReal>(a: &[Complex<T>], b: &[Complex<T>]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x.re.to_f64v() - y.re.to_f64v()).powi(2) + (x.im.to_f64v() - y.im.to_f64v()).powi(2)).sum();
    let den: f64 = b.iter().map(|y| y.re.to_f64v().powi(2) + y.im.to_f64v().powi(2)).sum();
    assert!(den > 0.0);
    (num / den).sqrt()
}

fn cplx<T: GpuReal>(rng: &mut rand_pcg::Pcg64, n: usize) -> Vec<Complex<T>> {
    (0..n).map(|_| Complex::new(T::of(rng.gen_range(-1.0..1.0)), T::of(rng.gen_range(-1.0..1.0)))).collect()
}

/// Every method, ntrans 1, 3, 5, both types, host and device arrays, for one dim and precision
/// — except CSR, whose spreading costs the emulator a shuffle reduction per grid point and
/// vector: it runs ntrans 3 (two chunks, the last one smaller: both batched FFT plans) in every
/// dim, ntrans 1 in 1D and 2D, ntrans 5 (three chunks) in 1D.
fn check<T: GpuReal>(dim: usize, tol: f64, agree: f64) {
    let csr_ntrans: &[usize] = match dim {
        1 => &[1, 3, 5],
        2 => &[1, 3],
        _ => &[3],
    };
    let nm: Vec<i64> = match dim {
        1 => vec![20],
        2 => vec![10, 8],
        _ => vec![6, 5, 4],
    };
    let n: usize = nm.iter().product::<i64>() as usize;
    let m = 80;
    let mut rng = rand_pcg::Pcg64::seed_from_u64(40 + dim as u64);
    let x: Vec<Vec<T>> = (0..3).map(|_| (0..m).map(|_| T::of(rng.gen_range(-4.0..4.0))).collect()).collect();
    let (y, z): (&[T], &[T]) = (if dim > 1 { &x[1] } else { &[] }, if dim > 2 { &x[2] } else { &[] });
    let opts = NufftOpts::default();
    for nt in [1usize, 3, 5] {
        let c = cplx::<T>(&mut rng, nt * m);
        let f = cplx::<T>(&mut rng, nt * n);
        for ty in [1, 2] {
            let mut cpu = NufftPlan::<T>::new(ty, dim, &nm, 1, nt, tol, &opts).unwrap();
            cpu.setpts(&x[0], y, z).unwrap();
            let (mut wc, mut wf) = (c.clone(), f.clone());
            cpu.execute(&mut wc, &mut wf).unwrap();
            let want = if ty == 1 { wf } else { wc };
            for method in GpuMethod::all() {
                if method == GpuMethod::Csr && !csr_ntrans.contains(&nt) {
                    continue;
                }
                let sopts = GpuSpreadOpts { method: Some(method), block: 64, max_subprob: 32, max_batch: 2, ..Default::default() };
                let params = NufftParams::new(ty, dim, &nm, 1, nt, tol, Precision::of::<T>(), &opts, Backend::Cuda).unwrap();
                let dev = EmuDevice::default();
                let mut gpu = GpuNufft::<T, EmuDevice>::new(dev.clone(), params, sopts).unwrap();
                assert_eq!(gpu.batch(), nt.min(2));
                gpu.setpts(&x[0], y, z).unwrap();
                assert_eq!(gpu.method(), Some(method));
                // host arrays
                let sentinel = Complex::new(T::of(9.0), T::of(9.0));
                let (mut gc, mut gf) = if ty == 1 { (c.clone(), vec![sentinel; nt * n]) } else { (vec![sentinel; nt * m], f.clone()) };
                gpu.execute(&mut gc, &mut gf).unwrap();
                let got = if ty == 1 { &gf } else { &gc };
                let e = rel_l2(got, &want);
                // each vector on its own too (a chunk offset error could hide in the total)
                let per = if ty == 1 { n } else { m };
                let ev = (0..nt).map(|t| rel_l2(&got[t * per..(t + 1) * per], &want[t * per..(t + 1) * per])).fold(0.0, f64::max);
                eprintln!("{dim}D {} type {ty} ntrans {nt} {}: vs CPU {e:.1e} (worst vector {ev:.1e})", T::NAME, method.name());
                assert!(ev < agree, "{dim}D {} type {ty} ntrans {nt} {}: {ev:e}", T::NAME, method.name());
                // device buffers (through scratch when there are several chunks)
                let (mut cb, mut fb) = if ty == 1 { (upload_new(&dev, &c).unwrap(), upload_new(&dev, &vec![sentinel; nt * n]).unwrap()) }
                                       else { (upload_new(&dev, &vec![sentinel; nt * m]).unwrap(), upload_new(&dev, &f).unwrap()) };
                gpu.execute_dev_all(&mut cb, &mut fb).unwrap();
                let out: Vec<Complex<T>> = download_vec(&dev, if ty == 1 { &fb } else { &cb }, want.len()).unwrap();
                let ed = rel_l2(&out, &want);
                assert!(ed < agree, "device arrays {dim}D {} type {ty} ntrans {nt} {}: {ed:e}", T::NAME, method.name());
            }
        }
    }
}

#[test]
fn batched_ntrans_1d() {
    check::<f64>(1, 1e-9, 1e-12);
    check::<f32>(1, 1e-4, 2e-5);
}

#[test]
fn batched_ntrans_2d() {
    check::<f64>(2, 1e-7, 1e-12);
    check::<f32>(2, 1e-4, 2e-5);
}

#[test]
fn batched_ntrans_3d() {
    check::<f64>(3, 1e-5, 1e-12);
    check::<f32>(3, 1e-3, 2e-5);
}
