//! Free-space Poisson solve time against its lower bound, one forward r2c plus one inverse c2r
//! FFTW transform of the doubled `(2N)³` grid, both measured in this process.
//!
//! A plain `harness = false` program (no criterion: at N = 256 one real array of the doubled
//! grid is 1 GiB and one solve takes seconds, so a few timed repetitions are all that fits):
//!
//! ```text
//! cargo bench --bench poisson                       # N = 128 and 256, 2 threads, 3 repetitions
//! cargo bench --bench poisson -- 64 128 --threads 0 --reps 5
//! ```
//!
//! For every N and method it prints plan time, the fastest and mean solve, the fastest FFT pair
//! and the ratio solve / FFT pair (the issue's target: ≤ 1.3), and the relative L2 error on the
//! Gaussian test problem (σ = 0.05 in the unit cube). Vico–Greengard with the 4N precomputation
//! grid is skipped when that grid (`16·(4N)³` bytes) would need more than half the available
//! memory (N = 256: 16 GiB); its solve is the same as the other two methods' anyway.
//!
//! Plan and solve times on one thread and on all cores: `-- 64 128 --threads 1` and
//! `-- 64 128 --threads 0`. The accuracy against N of every method: `--bench poisson_sweep`.
//!
//! Without `--bench` on the command line (as under `cargo test --all-targets`) it runs a quick
//! smoke check at N = 16 instead, like criterion's test mode.

use farfield::fft::{half_len, AlignedVec, FftPlan, FFTW_ESTIMATE};
use farfield::poisson::testcases;
use farfield::poisson::{Method, PoissonOpts, PoissonPlan};
use num_complex::Complex64;
use std::time::Instant;

struct Config {
    ns: Vec<usize>,
    threads: usize,
    reps: usize,
}

fn parse_args() -> Result<(bool, Config), String> {
    let mut bench = false;
    let mut cfg = Config { ns: Vec::new(), threads: 2, reps: 3 };
    let mut it = std::env::args().skip(1);
    while let Some(a) = it.next() {
        match a.as_str() {
            "--bench" => bench = true,
            "--threads" => cfg.threads = it.next().and_then(|v| v.parse().ok()).ok_or("--threads needs a number")?,
            "--reps" => cfg.reps = it.next().and_then(|v| v.parse().ok()).filter(|&r| r > 0).ok_or("--reps needs a number > 0")?,
            s if s.starts_with("--") => {} // cargo/libtest flags such as --nocapture
            s => cfg.ns.push(s.parse().map_err(|_| format!("not a grid size: {s}"))?),
        }
    }
    if cfg.ns.is_empty() {
        cfg.ns = vec![128, 256];
    }
    Ok((bench, cfg))
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len() as f64
}

/// Fastest of `reps` forward+inverse r2c/c2r pairs of the real grid `dims` (after a warm-up).
fn fft_pair(dims: &[usize], nthreads: usize, reps: usize) -> f64 {
    let total: usize = dims.iter().product();
    let mut real = AlignedVec::<f64>::zeroed(total, "real").expect("alloc");
    let mut spec = AlignedVec::<Complex64>::zeroed(half_len(dims), "spectrum").expect("alloc");
    let fwd = FftPlan::r2c(dims, &mut real, &mut spec, FFTW_ESTIMATE, nthreads).expect("r2c plan");
    let bwd = FftPlan::c2r(dims, &mut spec, &mut real, FFTW_ESTIMATE, nthreads).expect("c2r plan");
    for (i, v) in real.iter_mut().enumerate() {
        *v = ((i % 1013) as f64 * 0.37).sin();
    }
    let mut t = Vec::new();
    for r in 0..=reps {
        let t0 = Instant::now();
        fwd.execute_r2c(&mut real, &mut spec);
        bwd.execute_c2r(&mut spec, &mut real);
        if r > 0 {
            t.push(t0.elapsed().as_secs_f64());
        }
        real.iter_mut().for_each(|v| *v /= total as f64);
    }
    min(&t)
}

fn mem_available() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let l = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    Some(l["MemAvailable:".len()..].trim().trim_end_matches("kB").trim().parse::<u64>().ok()? * 1024)
}

fn main() {
    let (bench, mut cfg) = match parse_args() {
        Ok(v) => v,
        Err(e) => {
            eprintln!("poisson bench: {e}");
            std::process::exit(2);
        }
    };
    if !bench {
        // smoke mode (cargo test --all-targets): tiny sizes, one repetition
        cfg = Config { ns: vec![16], threads: 1, reps: 1 };
    }
    let nthreads = farfield::threads::Threads::new(cfg.threads).expect("threads").count();
    println!("Poisson solve vs FFT pair of the doubled grid: Gaussian σ = 0.05, {nthreads} threads, FFTW_ESTIMATE, \
              fastest of {} repetitions", cfg.reps);
    println!("{:>5} {:>9} {:>10} {:>10} {:>10} {:>11} {:>8} {:>10}",
             "N", "method", "plan_s", "solve_s", "mean_s", "fftpair_s", "ratio", "rel_err");
    for &n in &cfg.ns {
        let tc = testcases::gaussian(n);
        let mut phi = vec![0.0; tc.rho.len()];
        let opts = PoissonOpts { nthreads, ..PoissonOpts::default() };
        // the FFT pair first, with no plan alive (the plans' arrays are the same size)
        let pair = fft_pair(&[2 * n; 3], nthreads, cfg.reps);
        for (name, m) in [("hockney", Method::Hockney), ("vico", Method::Vico), ("vico-dct", Method::VicoDct)] {
            if m == Method::Vico {
                let need = 16 * (4 * n as u64).pow(3);
                if mem_available().is_some_and(|a| need > a / 2) {
                    println!("{n:>5} {name:>9}  skipped: the 4N precomputation grid needs {:.1} GiB", need as f64 / (1u64 << 30) as f64);
                    continue;
                }
            }
            let t0 = Instant::now();
            let mut plan = PoissonPlan::new(m, &tc.dims(), &tc.spacing(), &opts).expect("plan");
            let plan_s = t0.elapsed().as_secs_f64();
            let mut t = Vec::new();
            for _ in 0..cfg.reps {
                let t0 = Instant::now();
                plan.execute(&tc.rho, &mut phi, None).expect("execute");
                t.push(t0.elapsed().as_secs_f64());
            }
            let err = tc.rel_error(&phi);
            let solve = min(&t);
            println!("{n:>5} {name:>9} {plan_s:>10.4} {solve:>10.4} {:>10.4} {pair:>11.4} {:>8.3} {err:>10.2e}",
                     mean(&t), solve / pair);
            if !bench {
                let tol = if m == Method::Hockney { 1e-2 } else { 1e-3 };
                assert!(err < tol, "{name}: rel error {err}");
            }
        }
    }
}
