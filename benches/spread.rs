//! Criterion benchmarks of the spreader alone (no FFT, no deconvolution): spread
//! (points → grid, the type-1 direction) and interp (grid → points, type 2), in 1D, 2D and 3D,
//! ES kernel at tolerance 1e-6 with σ = 2, f64, all cores.
//!
//! Sizes (fine grids as a NUFFT of N modes per axis at σ = 2 would use):
//! * 1D: M = 1e6 points, grid 2·10⁶ (N = 1e6);
//! * 2D: M = 1e6, grid 1024² (N = 512²);
//! * 3D: M = 1e6, grid 128³ (N = 64³).
//!
//! Points are uniform random in [−π, π)^d (fixed seed); `setpts` (fold + bin sort) is timed
//! separately from spread and interp. Throughput is reported in points per second.
//! Sample counts are kept small so that the whole run finishes in a few minutes:
//! `cargo bench --bench spread`, or `cargo bench --bench spread -- 3d` for one group.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use farfield::kernel::{Kernel, KernelKind};
use farfield::spread::{SpreadOpts, Spreader};
use farfield::threads::Threads;
use num_complex::Complex64;
use rand::{Rng, SeedableRng};
use std::f64::consts::PI;
use std::time::Duration;

const TOL: f64 = 1e-6;
const SIGMA: f64 = 2.0;
const M: usize = 1_000_000;

struct Case {
    name: &'static str,
    dim: usize,
    nf: &'static [usize],
}

const CASES: [Case; 3] = [
    Case { name: "1d", dim: 1, nf: &[2_000_000] },
    Case { name: "2d", dim: 2, nf: &[1024, 1024] },
    Case { name: "3d", dim: 3, nf: &[128, 128, 128] },
];

fn points(dim: usize, m: usize) -> [Vec<f64>; 3] {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(2024);
    let mut axis = |d: usize| if d < dim { (0..m).map(|_| rng.gen_range(-PI..PI)).collect() } else { Vec::new() };
    [axis(0), axis(1), axis(2)]
}

fn strengths(m: usize) -> Vec<Complex64> {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    (0..m).map(|_| Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect()
}

fn bench_spreader(c: &mut Criterion) {
    let threads = Threads::new(0).expect("thread pool");
    let kernel = Kernel::for_tolerance(KernelKind::Es, TOL, SIGMA);
    for case in &CASES {
        let mut g = c.benchmark_group(format!("spread_es_1e-6/{}", case.name));
        g.sample_size(10).warm_up_time(Duration::from_millis(500)).measurement_time(Duration::from_secs(4));
        g.throughput(Throughput::Elements(M as u64));
        let x = points(case.dim, M);
        let cs = strengths(M);
        let mut sp = Spreader::<f64>::new(case.dim, case.nf, &kernel, SpreadOpts::default()).expect("spreader");
        let total: usize = case.nf.iter().product();
        let label = format!("M=1e6 grid={}", case.nf.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("x"));

        g.bench_function(BenchmarkId::new("setpts", &label), |b| {
            b.iter(|| sp.setpts([&x[0], &x[1], &x[2]], &threads).expect("setpts"))
        });
        sp.setpts([&x[0], &x[1], &x[2]], &threads).expect("setpts");

        let mut grid = vec![Complex64::default(); total];
        g.bench_function(BenchmarkId::new("spread", &label), |b| {
            // spreading adds into the grid; it is not re-zeroed between iterations
            b.iter(|| sp.spread(&cs, &mut grid, &threads))
        });
        // interpolate from the spread grid (non-trivial values)
        let mut out = vec![Complex64::default(); M];
        g.bench_function(BenchmarkId::new("interp", &label), |b| b.iter(|| sp.interp(&grid, &mut out, &threads)));
        g.finish();
    }
}

criterion_group!(benches, bench_spreader);
criterion_main!(benches);
