//! The x86-64 baseline clone of the spreader (a CPU without AVX2/FMA, or `FARFIELD_NO_AVX2`)
//! takes the runtime-width loops (`W = 0` in `src/spread/mod.rs`, `grad.rs`, `in_order.rs`),
//! while the AVX2/FMA and AVX-512 clones take the loops specialised per width. This test runs
//! the same spreading and interpolation in a child process with `FARFIELD_NO_AVX2=1` (the
//! CPU probe is read once per process) and compares with this process's clone: every width
//! 2–16 of the ES kernel (1D, 2D, 3D, f64 and f32, sorted and caller's order in 1D), the
//! Gaussian kernel, and B-spline real spreading, interpolation and gradients of orders 2–16.
//! The library's unit tests check the spreader against direct sums (its test binary
//! specialises only some widths, `specialised_widths!` in `src/spread/mod.rs`, and runs the
//! others on the runtime-width loops of the same clone), so agreement to rounding here ties
//! the shipped loops of every width to those references.

use farfield::kernel::bspline::BSplineParams;
use farfield::kernel::{Kernel, KernelKind};
use farfield::spread::{SpreadOpts, Spreader};
use farfield::threads::Threads;
use farfield::Real;
use num_complex::Complex;
use rand::{Rng, SeedableRng};
use std::f64::consts::PI;

const CHILD_OUT: &str = "FARFIELD_TEST_BASELINE_OUT";

fn points<T: Real>(dim: usize, m: usize, seed: u64) -> [Vec<T>; 3] {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    std::array::from_fn(|d| if d < dim { (0..m).map(|_| T::of(rng.gen_range(-PI..PI))).collect() } else { Vec::new() })
}

fn grid_of(dim: usize, w: usize) -> Vec<usize> {
    // at least 2w per axis (the spreader's minimum)
    let n = [600, 72, 36][dim - 1].max(2 * w + 3);
    vec![n; dim]
}

/// One case's results as f64, with its name and the relative agreement expected of it.
struct Case {
    name: String,
    tol: f64,
    values: Vec<f64>,
}

/// Every case, in a fixed order.
fn run_all() -> Vec<Case> {
    let th = Threads::new(1).unwrap();
    let mut out = Vec::new();
    let m = 700;
    // ES kernel of every width (the tolerance sets the width), and the Gaussian kernel
    for kind in [KernelKind::Es, KernelKind::Gaussian] {
        for e in 1..=15 {
            let tol = 10f64.powi(-e);
            let k = Kernel::for_tolerance(kind, tol, 2.0);
            for dim in 1..=3 {
                for callers_order in [false, true] {
                    if callers_order && dim > 1 {
                        continue;
                    }
                    let opts = SpreadOpts { callers_order, ..SpreadOpts::default() };
                    let name = format!("{kind:?} w = {} {dim}D callers_order = {callers_order}", k.width());
                    out.push(Case { name: format!("{name} f64"), tol: 1e-12, values: complex_case::<f64>(dim, &k, opts, m, &th) });
                    if e <= 6 {
                        out.push(Case { name: format!("{name} f32"), tol: 1e-5, values: complex_case::<f32>(dim, &k, opts, m, &th) });
                    }
                }
            }
        }
    }
    // B-spline real spreading, interpolation and gradients
    for order in 2..=16 {
        for dim in 1..=3 {
            out.push(Case { name: format!("B-spline order {order} {dim}D"), tol: 1e-12, values: real_case(dim, order, m, &th) });
        }
    }
    out
}

fn complex_case<T: Real>(dim: usize, k: &Kernel, opts: SpreadOpts, m: usize, th: &Threads) -> Vec<f64> {
    let nf = grid_of(dim, k.width());
    let x = points::<T>(dim, m, 11 + dim as u64);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
    let c: Vec<Complex<T>> = (0..m).map(|_| Complex::new(T::of(rng.gen_range(-1.0..1.0)), T::of(rng.gen_range(-1.0..1.0)))).collect();
    let mut sp = Spreader::<T>::new(dim, &nf, k, opts).unwrap();
    sp.setpts([&x[0], &x[1], &x[2]], th).unwrap();
    let mut grid = vec![Complex::<T>::default(); nf.iter().product()];
    sp.try_spread(&c, &mut grid, th).unwrap();
    let mut back = vec![Complex::<T>::default(); m];
    sp.try_interp(&grid, &mut back, th).unwrap();
    grid.iter().chain(&back).flat_map(|v| [v.re.to_f64v(), v.im.to_f64v()]).collect()
}

fn real_case(dim: usize, order: usize, m: usize, th: &Threads) -> Vec<f64> {
    let nf = grid_of(dim, order);
    let x = points::<f64>(dim, m, 21 + dim as u64);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(9);
    let c: Vec<f64> = (0..m).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let mut sp = Spreader::<f64>::new_bspline(dim, &nf, &BSplineParams { order }, SpreadOpts::default()).unwrap();
    sp.setpts([&x[0], &x[1], &x[2]], th).unwrap();
    let mut grid = vec![0.0; nf.iter().product()];
    sp.try_spread_real(&c, &mut grid, th).unwrap();
    let mut v = vec![0.0; m];
    sp.try_interp_real(&grid, &mut v, th).unwrap();
    let mut g = vec![[0.0; 4]; m];
    sp.interp_grad_real(&grid, &mut g, th).unwrap();
    grid.into_iter().chain(v).chain(g.into_iter().flatten()).collect()
}

#[test]
fn baseline_clone_matches_the_simd_clones() {
    if let Some(path) = std::env::var_os(CHILD_OUT) {
        let bytes: Vec<u8> = run_all().iter().flat_map(|c| &c.values).flat_map(|v| v.to_le_bytes()).collect();
        std::fs::write(path, bytes).unwrap();
        return;
    }
    let path = std::env::temp_dir().join(format!("farfield-spread-baseline-{}.bin", std::process::id()));
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "baseline_clone_matches_the_simd_clones", "--test-threads=1"])
        .env("FARFIELD_NO_AVX2", "1")
        .env(CHILD_OUT, &path)
        .status()
        .unwrap();
    assert!(status.success(), "the baseline child failed");
    let bytes = std::fs::read(&path).unwrap();
    let _ = std::fs::remove_file(&path);
    let base: Vec<f64> = bytes.chunks_exact(8).map(|b| f64::from_le_bytes(b.try_into().unwrap())).collect();
    let simd = run_all();
    assert_eq!(base.len(), simd.iter().map(|c| c.values.len()).sum::<usize>());
    let mut at = 0;
    for case in &simd {
        let b = &base[at..at + case.values.len()];
        at += case.values.len();
        let scale = case.values.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        assert!(scale > 0.0, "{}: all zero", case.name);
        let worst = b.iter().zip(&case.values).map(|(a, b)| (a - b).abs()).fold(0.0f64, f64::max);
        assert!(worst <= case.tol * scale, "{}: baseline and SIMD clones differ by {worst:e} (scale {scale:e})", case.name);
    }
}
