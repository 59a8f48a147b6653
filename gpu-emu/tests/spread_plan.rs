//! The spreading API's CUDA backend ([`SpreadPlan::with_device`]) on the emulated kernels
//! against its CPU backend: a box with a shifted origin and non-unit lengths, periodic and
//! free axes, dims 1–3, f32/f64, ES/Gaussian/B-spline (orders 1, 2, 3, 5), real and complex
//! values, methods GM-sort and SM. Tolerance: 1e-12 relative (f64), 1e-5 (f32), relative to
//! the largest CPU value (both backends evaluate the same kernel at the same coordinates).

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
    eprintln!("{what}: spread {e:.1e} interp {e2:.1e}");
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

#[test]
fn spread_plan_cuda_backend_matches_cpu_f64() {
    all::<f64>(1e-12, 1e-15);
}

#[test]
fn spread_plan_cuda_backend_matches_cpu_f32() {
    all::<f32>(1e-5, 1e-6);
}
