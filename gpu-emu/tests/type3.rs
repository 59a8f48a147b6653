//! GPU NUFFT type 3 on the emulated kernels (FFTW standing in for cuFFT): against the CPU type 3
//! (same host set-up: agreement to round-off) and against direct sums `f_k = Σ_j c_j e^{± i s_k·x_j}`
//! (the requested tolerance), 1D/2D/3D, f32 and f64, ntrans = 2, off-centre points and
//! frequencies; and the all-or-nothing output of a failing `ntrans > 1` execute.

use farfield::gpu::device::{download_vec, upload_new};
use farfield::gpu::spread::{GpuMethod, GpuSpreadOpts};
use farfield::gpu::type3::GpuType3;
use farfield::gpu::types::GpuReal;
use farfield::nufft::NufftOpts;
use farfield::NufftPlan;
use farfield_gpu_emu::EmuDevice;
use num_complex::Complex;
use rand::{Rng, SeedableRng};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;

fn rel_l2<A: GpuReal, B: GpuReal>(a: &[Complex<A>], b: &[Complex<B>]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x.re.to_f64v() - y.re.to_f64v()).powi(2) + (x.im.to_f64v() - y.im.to_f64v()).powi(2)).sum();
    let den: f64 = b.iter().map(|y| y.re.to_f64v().powi(2) + y.im.to_f64v().powi(2)).sum();
    (num / den).sqrt()
}

/// Direct sums `f[t*N + k] = Σ_j c[t*M + j] e^{± i s_k·x_j}` in f64 (from the definition).
fn direct(dim: usize, x: &[Vec<f64>], s: &[Vec<f64>], c: &[Complex<f64>], iflag: i32, nt: usize) -> Vec<Complex<f64>> {
    let sign = if iflag >= 0 { 1.0 } else { -1.0 };
    let (m, n) = (x[0].len(), s[0].len());
    let mut out = Vec::with_capacity(nt * n);
    for t in 0..nt {
        for k in 0..n {
            out.push((0..m).map(|j| {
                let ph: f64 = (0..dim).map(|d| s[d][k] * x[d][j]).sum();
                c[t * m + j] * Complex::from_polar(1.0, sign * ph)
            }).sum());
        }
    }
    out
}

struct Problem {
    x: Vec<Vec<f64>>,
    s: Vec<Vec<f64>>,
    c: Vec<Complex<f64>>,
}

/// M points around centres 3, −2, 1.5 (half-widths 4, 2, 1) and N frequencies around 20, −11, 6
/// (half-widths 15, 9, 7): off-centre on every axis, so both phase corrections act.
fn problem(dim: usize, m: usize, n: usize, nt: usize, seed: u64) -> Problem {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let (xc, xh, sc, sh) = ([3.0, -2.0, 1.5], [4.0, 2.0, 1.0], [20.0, -11.0, 6.0], [15.0, 9.0, 7.0]);
    let x = (0..dim).map(|d| (0..m).map(|_| xc[d] + rng.gen_range(-xh[d]..xh[d])).collect()).collect();
    let s = (0..dim).map(|d| (0..n).map(|_| sc[d] + rng.gen_range(-sh[d]..sh[d])).collect()).collect();
    let c = (0..nt * m).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
    Problem { x, s, c }
}

fn cast<T: GpuReal>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&a| T::of(a)).collect()
}

fn axes<T>(v: &[Vec<T>]) -> [&[T]; 3] {
    let e: &[T] = &[];
    [&v[0], v.get(1).map_or(e, |a| a), v.get(2).map_or(e, |a| a)]
}

/// GPU type 3 in precision `T` against the CPU type 3 (same precision) and the direct sums.
fn check<T: GpuReal>(dim: usize, iflag: i32, tol: f64, method: Option<GpuMethod>, agree: f64) {
    check_batched::<T>(dim, iflag, tol, method, agree, 2, 0);
}

/// As `check` with `nt` vectors in batches of at most `max_batch` (0 = automatic).
fn check_batched<T: GpuReal>(dim: usize, iflag: i32, tol: f64, method: Option<GpuMethod>, agree: f64, nt: usize, max_batch: usize) {
    let (m, n) = (60, 50);
    let pr = problem(dim, m, n, nt, 100 + dim as u64);
    let x: Vec<Vec<T>> = pr.x.iter().map(|v| cast(v)).collect();
    let s: Vec<Vec<T>> = pr.s.iter().map(|v| cast(v)).collect();
    let c: Vec<Complex<T>> = pr.c.iter().map(|z| Complex::new(T::of(z.re), T::of(z.im))).collect();
    // the oracle sums the inputs as rounded to T
    let xd: Vec<Vec<f64>> = x.iter().map(|v| v.iter().map(|a| a.to_f64v()).collect()).collect();
    let sd: Vec<Vec<f64>> = s.iter().map(|v| v.iter().map(|a| a.to_f64v()).collect()).collect();
    let cd: Vec<Complex<f64>> = c.iter().map(|z| Complex::new(z.re.to_f64v(), z.im.to_f64v())).collect();
    let exact = direct(dim, &xd, &sd, &cd, iflag, nt);
    let opts = NufftOpts::default();
    let (xa, sa) = (axes(&x), axes(&s));
    let mut cpu = NufftPlan::<T>::new(3, dim, &[], iflag, nt, tol, &opts).unwrap();
    cpu.setpts_type3(xa[0], xa[1], xa[2], sa[0], sa[1], sa[2]).unwrap();
    let mut want = vec![Complex::new(T::of(0.0), T::of(0.0)); nt * n];
    cpu.execute(&mut c.clone(), &mut want).unwrap();
    let sopts = GpuSpreadOpts { method, block: 64, max_batch, ..Default::default() };
    let mut gpu = GpuType3::<T, EmuDevice>::new(EmuDevice::default(), dim, iflag, nt, tol, &opts, sopts).unwrap();
    gpu.setpts(xa, sa).unwrap();
    assert_eq!(gpu.info().nf, cpu.info().nf, "type-3 fine grid");
    assert_eq!(gpu.info().tol_used, cpu.info().tol_used);
    let mut got = vec![Complex::new(T::of(9.0), T::of(9.0)); nt * n];
    gpu.execute(&c, &mut got).unwrap();
    let e_cpu = rel_l2(&got, &want);
    let e_exact = rel_l2(&got, &exact);
    let e_cpu_exact = rel_l2(&want, &exact);
    eprintln!("type 3 {} {dim}D iflag {iflag} tol {tol:e} {:?}: GPU vs CPU {e_cpu:.1e}, GPU vs direct {e_exact:.1e} (CPU {e_cpu_exact:.1e})",
              T::NAME, gpu.methods());
    assert!(e_cpu < agree, "GPU vs CPU type 3: {e_cpu:e}");
    assert!(e_exact < 10.0 * tol, "GPU type 3 vs direct: {e_exact:e} at tol {tol:e}");
    // each of the ntrans vectors separately
    for t in 0..nt {
        let e = rel_l2(&got[t * n..(t + 1) * n], &exact[t * n..(t + 1) * n]);
        assert!(e < 10.0 * tol, "vector {t}: {e:e}");
    }
}

#[test]
fn gpu_type3_1d_matches_cpu_and_direct() {
    check::<f64>(1, 1, 1e-6, Some(GpuMethod::GmSort), 1e-12);
    check::<f64>(1, -1, 1e-9, Some(GpuMethod::Csr), 1e-12);
    check::<f32>(1, 1, 1e-4, None, 1e-5);
}

#[test]
fn gpu_type3_2d_matches_cpu_and_direct() {
    check::<f64>(2, -1, 1e-6, Some(GpuMethod::Sm), 1e-12);
    check::<f64>(2, 1, 1e-9, None, 1e-12);
    check::<f32>(2, -1, 1e-4, Some(GpuMethod::Group), 1e-5);
}

/// ntrans = 5 in batches of 2 (two full batches and one of 1: both batched FFT plans of the
/// inner type 2), every method, against the CPU type 3 and the direct sums.
#[test]
fn gpu_type3_batched_ntrans() {
    for method in GpuMethod::all() {
        check_batched::<f64>(2, 1, 1e-8, Some(method), 1e-12, 5, 2);
    }
    check_batched::<f32>(1, -1, 1e-4, None, 1e-5, 5, 2);
    check_batched::<f64>(3, -1, 1e-6, None, 1e-12, 3, 2);
}

#[test]
fn gpu_type3_3d_matches_cpu_and_direct() {
    check::<f64>(3, 1, 1e-6, None, 1e-12);
    check::<f64>(3, -1, 1e-9, Some(GpuMethod::Gm), 1e-12);
    check::<f32>(3, 1, 1e-4, None, 1e-5);
}

/// Errors, and a device failure at any launch of an `ntrans = 2` execute leaves the output
/// untouched (host array and device buffer); the same buffers then give the right answer.
#[test]
fn gpu_type3_errors_and_all_or_nothing() {
    let (dim, m, n, nt, tol) = (2, 40, 30, 2, 1e-8);
    let pr = problem(dim, m, n, nt, 7);
    let (xa, sa) = (axes(&pr.x), axes(&pr.s));
    let exact = direct(dim, &pr.x, &pr.s, &pr.c, 1, nt);
    let opts = NufftOpts::default();
    let counter = Arc::new(AtomicUsize::new(usize::MAX));
    let dev = EmuDevice { fail_after_launches: Some(counter.clone()), ..EmuDevice::default() };
    let sopts = GpuSpreadOpts { block: 64, ..Default::default() };
    assert!(matches!(GpuType3::<f64, EmuDevice>::new(dev.clone(), 4, 1, 1, tol, &opts, sopts), Err(farfield::Error::Dim(_))));
    assert!(matches!(GpuType3::<f64, EmuDevice>::new(dev.clone(), 2, 1, 0, tol, &opts, sopts), Err(farfield::Error::InvalidArg(_))));
    assert!(matches!(GpuType3::<f64, EmuDevice>::new(dev.clone(), 2, 1, 1, -1.0, &opts, sopts), Err(farfield::Error::Tol(_))));
    let mut gpu = GpuType3::<f64, EmuDevice>::new(dev.clone(), dim, 1, nt, tol, &opts, sopts).unwrap();
    let mut f = vec![Complex::new(0.0, 0.0); nt * n];
    assert!(matches!(gpu.execute(&pr.c, &mut f), Err(farfield::Error::NoPoints(_))));
    let bad = vec![f64::NAN; m];
    assert!(matches!(gpu.setpts([xa[0], &bad, &[]], sa), Err(farfield::Error::NonFinite(m)) if m.contains("y[0]")));
    assert!(matches!(gpu.setpts([xa[0], &xa[1][..m - 1], &[]], sa), Err(farfield::Error::NPoints(_))));
    gpu.setpts(xa, sa).unwrap();
    assert!(matches!(gpu.execute(&pr.c[..m], &mut f), Err(farfield::Error::InvalidArg(_))));
    let before = counter.load(Ordering::SeqCst);
    gpu.execute(&pr.c, &mut f).unwrap();
    let per_execute = before - counter.load(Ordering::SeqCst);
    let e = rel_l2(&f, &exact);
    assert!(e < 10.0 * tol, "vs direct: {e:e}");
    // batched: the pre-phase, then for the one batch of both vectors spreading, the inner type
    // 2's deconvolution and interpolation, and the deconvolution/post-phase
    assert_eq!(per_execute, 5, "{per_execute} launches for {nt} vectors");
    let sentinel = Complex::new(7.0, -7.0);
    for k in 0..per_execute {
        counter.store(k, Ordering::SeqCst);
        let mut hf = vec![sentinel; nt * n];
        let r = gpu.execute(&pr.c, &mut hf);
        assert!(matches!(r, Err(farfield::Error::Internal(_))), "failure at launch {k}: {r:?}");
        assert!(hf.iter().all(|&v| v == sentinel), "host output written before the failure at launch {k}");
    }
    for k in 0..per_execute {
        counter.store(usize::MAX, Ordering::SeqCst);
        let cb = upload_new(&dev, &pr.c).unwrap();
        let mut fb = upload_new(&dev, &vec![sentinel; nt * n]).unwrap();
        counter.store(k, Ordering::SeqCst);
        assert!(gpu.execute_dev_all(&cb, &mut fb).is_err());
        counter.store(usize::MAX, Ordering::SeqCst);
        let out: Vec<Complex<f64>> = download_vec(&dev, &fb, nt * n).unwrap();
        assert!(out.iter().all(|&v| v == sentinel), "device output written before the failure at launch {k}");
        gpu.execute_dev_all(&cb, &mut fb).unwrap();
        let out: Vec<Complex<f64>> = download_vec(&dev, &fb, nt * n).unwrap();
        assert!(rel_l2(&out, &exact) < 10.0 * tol);
    }
}

/// Points and frequencies from device buffers (`GpuType3::setpts_dev`: copied, the whole
/// set-up on the device) give the plan of host arrays exactly — same grids, same results bit for
/// bit — in f32 and f64; the caller's buffers are not changed (the set-up rescales its own
/// copies). Bad input: a non-finite frequency is named as on the CPU and keeps the previous
/// points; a missing or short buffer is `InvalidArg`; M = 0 gives zeros, N = 0 an empty output.
#[test]
fn gpu_type3_setpts_from_device_buffers() {
    fn run<T: GpuReal>(dim: usize) {
        let (m, n, nt) = (50, 40, 2);
        let pr = problem(dim, m, n, nt, 31 + dim as u64);
        let x: Vec<Vec<T>> = pr.x.iter().map(|v| cast(v)).collect();
        let s: Vec<Vec<T>> = pr.s.iter().map(|v| cast(v)).collect();
        let c: Vec<Complex<T>> = pr.c.iter().map(|z| Complex::new(T::of(z.re), T::of(z.im))).collect();
        let dev = EmuDevice::default();
        let opts = NufftOpts::default();
        let sopts = GpuSpreadOpts { block: 64, ..Default::default() };
        let tol = if T::NAME == "f32" { 1e-4 } else { 1e-9 };
        let mut host = GpuType3::<T, EmuDevice>::new(dev.clone(), dim, -1, nt, tol, &opts, sopts).unwrap();
        host.setpts(axes(&x), axes(&s)).unwrap();
        let mut want = vec![Complex::new(T::of(0.0), T::of(0.0)); nt * n];
        host.execute(&c, &mut want).unwrap();
        let xb: Vec<_> = x.iter().map(|v| upload_new(&dev, v).unwrap()).collect();
        let sb: Vec<_> = s.iter().map(|v| upload_new(&dev, v).unwrap()).collect();
        let mut gpu = GpuType3::<T, EmuDevice>::new(dev.clone(), dim, -1, nt, tol, &opts, sopts).unwrap();
        gpu.setpts_dev(m, [opt(&xb, 0), opt(&xb, 1), opt(&xb, 2)], n, [opt(&sb, 0), opt(&sb, 1), opt(&sb, 2)]).unwrap();
        assert_eq!((gpu.info().nf, gpu.grids()), (host.info().nf, host.grids()));
        let mut got = vec![Complex::new(T::of(0.0), T::of(0.0)); nt * n];
        gpu.execute(&c, &mut got).unwrap();
        assert!(got == want, "{} {dim}D: device set-up differs from host arrays' ({:e})", T::NAME, rel_l2(&got, &want));
        let exact = direct(dim, &pr.x, &pr.s, &pr.c, -1, nt);
        assert!(rel_l2(&got, &exact) < 10.0 * tol.max(1e-6));
        for (b, v) in xb.iter().zip(&x).chain(sb.iter().zip(&s)) {
            assert!(download_vec::<_, T>(&dev, b, v.len()).unwrap() == *v, "a caller's buffer changed");
        }
        // a non-finite frequency on the last axis: named, the previous points kept
        let mut bad = s[dim - 1].clone();
        bad[3] = T::of(f64::INFINITY);
        let badb = upload_new(&dev, &bad).unwrap();
        let mut sbad = [opt(&sb, 0), opt(&sb, 1), opt(&sb, 2)];
        sbad[dim - 1] = Some(&badb);
        let name = ["s", "t", "u"][dim - 1];
        let r = gpu.setpts_dev(m, [opt(&xb, 0), opt(&xb, 1), opt(&xb, 2)], n, sbad);
        assert!(matches!(&r, Err(farfield::Error::NonFinite(msg)) if msg.starts_with(&format!("{name}[3] (coordinate {} of target frequency 3) is inf", dim - 1))), "{r:?}");
        let mut again = vec![Complex::new(T::of(0.0), T::of(0.0)); nt * n];
        gpu.execute(&c, &mut again).unwrap();
        assert!(again == want);
        // missing and short buffers
        let r = gpu.setpts_dev(m, [None, opt(&xb, 1), opt(&xb, 2)], n, [opt(&sb, 0), opt(&sb, 1), opt(&sb, 2)]);
        assert!(matches!(r, Err(farfield::Error::InvalidArg(_))), "{r:?}");
        let r = gpu.setpts_dev(m + 1, [opt(&xb, 0), opt(&xb, 1), opt(&xb, 2)], n, [opt(&sb, 0), opt(&sb, 1), opt(&sb, 2)]);
        assert!(matches!(r, Err(farfield::Error::InvalidArg(_))), "{r:?}");
        // empty sets
        gpu.setpts_dev(0, [None; 3], n, [opt(&sb, 0), opt(&sb, 1), opt(&sb, 2)]).unwrap();
        let mut f = vec![Complex::new(T::of(5.0), T::of(5.0)); nt * n];
        gpu.execute(&[], &mut f).unwrap();
        assert!(f.iter().all(|z| z.re == T::of(0.0) && z.im == T::of(0.0)), "M = 0: not zeros");
        gpu.setpts_dev(m, [opt(&xb, 0), opt(&xb, 1), opt(&xb, 2)], 0, [None; 3]).unwrap();
        gpu.execute(&c, &mut []).unwrap();
    }
    for dim in 1..=3 {
        run::<f64>(dim);
        run::<f32>(dim);
    }
}

fn opt<B>(v: &[B], d: usize) -> Option<&B> {
    v.get(d)
}
