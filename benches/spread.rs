//! The CPU spreader alone (no FFT, no deconvolution): `setpts` (fold and bin sort), spread
//! (points → grid, the type-1 direction) and interpolation (grid → points, type 2), ES kernel
//! at tolerance 1e-6 with σ = 2, f64.
//!
//! Sizes (fine grids as a NUFFT of N modes per axis at σ = 2 would use), points uniform in
//! [−π, π)^d (fixed seed):
//! * 1D: grid 2·10⁶ (N = 10⁶);
//! * 2D: grid 1024² (N = 512²);
//! * 3D: grid 128³ (N = 64³).
//!
//! ```text
//! cargo bench --bench spread                                  # 1D, 2D, 3D; M = 1e6; all cores; 10 repetitions
//! cargo bench --bench spread -- --dims 3 --m 1e7 --threads 1 --reps 5
//! ```
//!
//! Options: `--dims` (comma-separated, 1–3), `--m` (points), `--threads` (0 = all cores),
//! `--reps` (timed repetitions after one warm-up; spreading adds into the grid, which is not
//! re-zeroed between them). Prints, per dimension and stage, the fastest and the median time
//! and points per second at the fastest. Without `--bench` on the command line (as under
//! `cargo test --benches`) it runs a smoke case of 10⁴ points and two repetitions.

mod common;

use common::Args;
use farfield::kernel::{Kernel, KernelKind};
use farfield::spread::{SpreadOpts, Spreader};
use farfield::threads::Threads;
use num_complex::Complex64;
use rand::{Rng, SeedableRng};
use std::f64::consts::PI;
use std::time::Instant;

const TOL: f64 = 1e-6;
const SIGMA: f64 = 2.0;

/// The fine grid of each dimension.
fn grid(dim: usize) -> &'static [usize] {
    match dim {
        1 => &[2_000_000],
        2 => &[1024, 1024],
        _ => &[128, 128, 128],
    }
}

fn points(dim: usize, m: usize) -> [Vec<f64>; 3] {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(2024);
    let mut axis = |d: usize| if d < dim { (0..m).map(|_| rng.gen_range(-PI..PI)).collect() } else { Vec::new() };
    [axis(0), axis(1), axis(2)]
}

fn strengths(m: usize) -> Vec<Complex64> {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    (0..m).map(|_| Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect()
}

/// Times `f` once untimed, then `reps` times; returns the times in seconds.
fn time(reps: usize, mut f: impl FnMut()) -> Vec<f64> {
    f();
    (0..reps)
        .map(|_| {
            let t0 = Instant::now();
            f();
            t0.elapsed().as_secs_f64()
        })
        .collect()
}

fn report(dim: usize, stage: &str, m: usize, mut t: Vec<f64>) {
    t.sort_by(f64::total_cmp);
    let (best, median) = (t[0], t[t.len() / 2]);
    println!("{dim}D {stage:<7} best {:9.3} ms  median {:9.3} ms  {:8.1} Mpts/s", 1e3 * best, 1e3 * median, m as f64 / best / 1e6);
}

fn main() {
    let mut args = Args::parse(include_str!("spread.rs"), "--dims 1,2,3 --m 1e4 --reps 2");
    let dims: Vec<usize> = args.list("dims", &[1, 2, 3]);
    let m: usize = args.get("m", 1_000_000);
    let nthreads: usize = args.get("threads", 0);
    let reps: usize = args.get("reps", 10);
    if dims.iter().any(|d| !(1..=3).contains(d)) || m == 0 || reps == 0 {
        args.fail("--dims takes 1, 2, 3; --m and --reps must be positive");
    }
    args.finish();
    let threads = Threads::new(nthreads).expect("thread pool");
    let kernel = Kernel::for_tolerance(KernelKind::Es, TOL, SIGMA);
    println!("ES kernel, tol {TOL:e}, σ = {SIGMA}, f64, M = {m}, {} threads, {reps} repetitions", threads.count());
    for &dim in &dims {
        let nf = grid(dim);
        let x = points(dim, m);
        let cs = strengths(m);
        let mut sp = Spreader::<f64>::new(dim, nf, &kernel, SpreadOpts::default()).expect("spreader");
        report(dim, "setpts", m, time(reps, || sp.setpts([&x[0], &x[1], &x[2]], &threads).expect("setpts")));
        let mut grid = vec![Complex64::default(); nf.iter().product()];
        report(dim, "spread", m, time(reps, || sp.spread(&cs, &mut grid, &threads)));
        // interpolation from the spread grid (values that are not zero)
        let mut out = vec![Complex64::default(); m];
        report(dim, "interp", m, time(reps, || sp.interp(&grid, &mut out, &threads)));
    }
}
