//! `farfield poisson`: the free-space Poisson solvers on the exact test problems of Mayani et al.,
//! ACM Trans. Math. Softw. 51(3) (2025), §3.1 ([`farfield::poisson::testcases`]).
//!
//! * One case (`--method M --n N [--source gaussian|sphere]`): plan creation and solve times,
//!   relative L2 error of φ on the nodes, energy error, the time of one forward + inverse
//!   r2c/c2r FFTW transform of the doubled `(2N)³` grid made in the same process (the lower
//!   bound of a solve), peak memory of the process and of plan creation alone.
//! * `--convergence`: errors of all methods for N = 16…256 ([`convergence`]): Markdown table
//!   and log-log PNG (as Mayani et al. 2025 Fig. 1).

pub mod convergence;
#[cfg(feature = "mpi")]
mod dist;

use crate::bench::FftwArg;
use crate::json;
use crate::mem;
use crate::CliResult;
use clap::{Args, ValueEnum};
use farfield::fft::{half_len, AlignedVec, FftPlan, FFTW_ESTIMATE, FFTW_MEASURE};
use farfield::poisson::testcases::{self, TestCase};
use farfield::poisson::{Method, PoissonOpts, PoissonPlan};
use serde_json::json;
use std::path::PathBuf;
use std::time::Instant;

/// Solver choice on the command line.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodArg {
    /// Hockney–Eastwood (second order).
    Hockney,
    /// Vico–Greengard, kernel precomputed on the 4N grid.
    Vico,
    /// Vico–Greengard, kernel precomputed by a DCT-I on 2N+1 points.
    VicoDct,
}

impl MethodArg {
    /// All methods, in table order.
    pub const ALL: [MethodArg; 3] = [MethodArg::Hockney, MethodArg::Vico, MethodArg::VicoDct];
    /// The library's method.
    pub fn method(self) -> Method {
        match self {
            MethodArg::Hockney => Method::Hockney,
            MethodArg::Vico => Method::Vico,
            MethodArg::VicoDct => Method::VicoDct,
        }
    }
    /// Command-line / JSON name.
    pub fn name(self) -> &'static str {
        match self {
            MethodArg::Hockney => "hockney",
            MethodArg::Vico => "vico",
            MethodArg::VicoDct => "vico-dct",
        }
    }
    /// Name for tables and plots.
    pub fn label(self) -> &'static str {
        match self {
            MethodArg::Hockney => "Hockney–Eastwood",
            MethodArg::Vico => "Vico–Greengard (4N)",
            MethodArg::VicoDct => "Vico–Greengard DCT",
        }
    }
}

/// Test problem on the command line.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum SourceArg {
    /// Gaussian σ = 0.05 centred in the unit cube; φ = erf(r/(√2σ))/(4πr).
    Gaussian,
    /// Uniform ball of radius 1 centred in a cube of side 2.4; piecewise exact φ.
    Sphere,
}

impl SourceArg {
    /// Both problems.
    pub const ALL: [SourceArg; 2] = [SourceArg::Gaussian, SourceArg::Sphere];
    /// Command-line / JSON name.
    pub fn name(self) -> &'static str {
        match self {
            SourceArg::Gaussian => "gaussian",
            SourceArg::Sphere => "sphere",
        }
    }
    /// One-line description.
    pub fn describe(self) -> &'static str {
        match self {
            SourceArg::Gaussian => "Gaussian σ = 0.05 centred in the unit cube",
            SourceArg::Sphere => "uniform ball R = 1 centred in a cube of side 2.4 (cell-averaged)",
        }
    }
    /// Samples the problem on `n³` nodes.
    pub fn make(self, n: usize) -> TestCase {
        match self {
            SourceArg::Gaussian => testcases::gaussian(n),
            SourceArg::Sphere => testcases::uniform_ball(n),
        }
    }
}

/// Arguments of `farfield poisson`.
#[derive(Args, Debug, Clone)]
pub struct PoissonArgs {
    /// Solver (with --convergence: only this one; default all three).
    #[arg(long, value_enum, required_unless_present = "convergence")]
    pub method: Option<MethodArg>,
    /// Grid nodes per axis (N³ nodes; the solve works on the doubled (2N)³ grid).
    #[arg(long, value_name = "N", required_unless_present = "convergence", conflicts_with = "convergence",
          value_parser = crate::args::whole_in::<u64>(2, 4096))]
    pub n: Option<u64>,
    /// Test problem (default gaussian; with --convergence default both).
    #[arg(long, value_enum)]
    pub source: Option<SourceArg>,
    /// Threads for FFTW and the pointwise loops (0 = all cores).
    #[arg(long, value_name = "K", default_value_t = 0, value_parser = crate::args::whole::<usize>)]
    pub threads: usize,
    /// Timed repetitions of the solve and of the FFT pair (the minimum is reported).
    #[arg(long, value_name = "R", default_value_t = 3, value_parser = crate::args::whole_in::<u64>(1, u64::MAX))]
    pub reps: u64,
    /// FFTW planner effort (for the solver's transforms and the reference FFT pair alike).
    #[arg(long, value_enum, default_value_t = FftwArg::Estimate)]
    pub fftw: FftwArg,
    /// Print a JSON object as the last line of stdout.
    #[arg(long)]
    pub json: bool,
    /// Sweep N = 16, 24, 32, 48, 64, 96, 128, 192, 256 for every method and write a log-log
    /// PNG of the error against N and a Markdown table.
    #[arg(long)]
    pub convergence: bool,
    /// Largest N of the sweep.
    #[arg(long, value_name = "N", default_value_t = 256, requires = "convergence", value_parser = crate::args::whole::<usize>)]
    pub max_n: usize,
    /// Run the distributed solver (one process of `mpirun -np K farfield poisson --mpi …`):
    /// per-rank and total times, and the strong-scaling efficiency against the single-process
    /// solve of the same run (needs a build with the cargo feature `mpi`).
    #[arg(long, conflicts_with = "convergence")]
    pub mpi: bool,
    /// Output directory of the sweep (created if missing).
    #[arg(long, value_name = "DIR", default_value = "farfield-poisson")]
    pub out: PathBuf,
}

/// FFTW flags for the `--fftw` choice.
pub fn fftw_flags(a: FftwArg) -> u32 {
    match a {
        FftwArg::Estimate => FFTW_ESTIMATE,
        FftwArg::Measure => FFTW_MEASURE,
    }
}

/// Plan, solve(s) and error of one method on one test problem.
#[derive(Debug, Clone)]
pub struct Solved {
    /// Plan creation (s).
    pub plan_s: f64,
    /// Solve times (s), one per repetition.
    pub solve_s: Vec<f64>,
    /// Relative L2 error of φ on the nodes.
    pub rel_error: f64,
    /// Computed energy ½Σρφ h³.
    pub energy: f64,
    /// Its relative error against the exact energy.
    pub energy_rel_error: f64,
    /// Vico precomputation grid (zeros for Hockney).
    pub precompute: [usize; 3],
    /// Threads the plan used.
    pub threads: usize,
    /// Peak RSS increase during plan creation (bytes).
    pub plan_peak: Option<u64>,
    /// RSS increase held by the plan after creation (bytes).
    pub plan_retained: Option<u64>,
    /// The library's memory estimate of the plan (from the grids it builds).
    pub estimate: farfield::poisson::MemoryEstimate,
}

impl Solved {
    /// Fastest solve (s).
    pub fn best_solve(&self) -> f64 {
        self.solve_s.iter().copied().fold(f64::INFINITY, f64::min)
    }
}

/// Makes a plan for `tc` (measuring the peak memory of plan creation) and solves `reps` times.
pub fn solve(method: MethodArg, tc: &TestCase, opts: &PoissonOpts, reps: usize) -> CliResult<Solved> {
    let e = |e: farfield::Error| format!("Poisson ({}): {e}", method.name());
    let phase = mem::Phase::begin();
    let t0 = Instant::now();
    let mut plan = PoissonPlan::new(method.method(), &tc.dims(), &tc.spacing(), opts).map_err(e)?;
    let plan_s = t0.elapsed().as_secs_f64();
    let (plan_peak, plan_retained) = (phase.peak_increase(), phase.retained());
    let mut phi = vec![0.0; tc.rho.len()];
    let mut solve_s = Vec::with_capacity(reps);
    let mut energy = 0.0;
    for _ in 0..reps.max(1) {
        let t0 = Instant::now();
        energy = plan.execute(&tc.rho, &mut phi, None).map_err(e)?;
        solve_s.push(t0.elapsed().as_secs_f64());
    }
    Ok(Solved {
        plan_s,
        solve_s,
        rel_error: tc.rel_error(&phi),
        energy,
        energy_rel_error: ((energy - tc.energy) / tc.energy).abs(),
        precompute: plan.precompute_dims(),
        estimate: plan.memory(),
        threads: farfield::threads::Threads::new(opts.nthreads).map(|t| t.count()).unwrap_or(1),
        plan_peak,
        plan_retained,
    })
}

/// Times one forward r2c plus one inverse c2r FFTW transform of the real grid `dims` (the
/// two transforms of a solve), `reps` times after one untimed warm-up; returns the times (s).
pub fn fft_pair_seconds(dims: &[usize], nthreads: usize, flags: u32, reps: usize) -> CliResult<Vec<f64>> {
    let e = |e: farfield::Error| format!("FFT pair: {e}");
    let total: usize = dims.iter().product();
    let mut real = AlignedVec::<f64>::zeroed(total, "FFT pair real grid").map_err(e)?;
    let mut spec = AlignedVec::<num_complex::Complex64>::zeroed(half_len(dims), "FFT pair spectrum").map_err(e)?;
    let fwd = FftPlan::r2c(dims, &mut real, &mut spec, flags, nthreads).map_err(e)?;
    let bwd = FftPlan::c2r(dims, &mut spec, &mut real, flags, nthreads).map_err(e)?;
    // non-trivial data (FFTW_MEASURE overwrote the arrays while planning)
    for (i, v) in real.iter_mut().enumerate() {
        *v = ((i % 1013) as f64 * 0.37).sin();
    }
    let mut times = Vec::with_capacity(reps);
    for r in 0..=reps.max(1) {
        let t0 = Instant::now();
        fwd.execute_r2c(&mut real, &mut spec);
        bwd.execute_c2r(&mut spec, &mut real);
        if r > 0 {
            times.push(t0.elapsed().as_secs_f64());
        }
        // keep the values bounded between repetitions (c2r ∘ r2c multiplies by the grid size)
        let s = 1.0 / total as f64;
        real.iter_mut().for_each(|v| *v *= s);
    }
    Ok(times)
}

fn min(v: &[f64]) -> f64 {
    v.iter().copied().fold(f64::INFINITY, f64::min)
}

fn mean(v: &[f64]) -> f64 {
    v.iter().sum::<f64>() / v.len().max(1) as f64
}

/// Runs `farfield poisson`.
pub fn run(a: &PoissonArgs) -> CliResult<()> {
    if a.convergence {
        return convergence::run(a);
    }
    let method = a.method.ok_or("--method is required")?;
    let n = a.n.ok_or("--n is required")? as usize;
    let source = a.source.unwrap_or(SourceArg::Gaussian);
    let reps = a.reps as usize;
    let flags = fftw_flags(a.fftw);
    let opts = PoissonOpts { nthreads: a.threads, fftw_flags: flags, ..PoissonOpts::default() };
    // per node: source, exact solution, potential and field (6 doubles), the FFT pair of the
    // doubled grid timed alongside (2 · 8 · 16 bytes), and the plan's Green's function and
    // scratch — on the 4N precomputation grid for Vico–Greengard (64 · 16 bytes)
    let per_node = 48.0 + 256.0 + if method == MethodArg::Vico { 1024.0 } else { 256.0 };
    crate::mem::ensure_fits((n as f64).powi(3) * per_node, &format!("--n {n}"))?;
    if a.mpi {
        #[cfg(feature = "mpi")]
        return dist::run(a, method, n, source, &opts);
        #[cfg(not(feature = "mpi"))]
        return Err("--mpi: this farfield was built without MPI (cargo build --release -p farfield-cli --features mpi)".into());
    }

    let t0 = Instant::now();
    let tc = source.make(n);
    let setup_s = t0.elapsed().as_secs_f64();
    let s = solve(method, &tc, &opts, reps)?;
    let n2 = [2 * n; 3];
    let fft = fft_pair_seconds(&n2, s.threads, flags, reps)?;
    let peak = mem::peak_rss_bytes();
    let (solve_s, fft_s) = (s.best_solve(), min(&fft));
    let ratio = solve_s / fft_s;
    let fftw = if a.fftw == FftwArg::Measure { "measure" } else { "estimate" };

    println!("farfield poisson: {}, {} (h = {:.6}), N = {n}, {} threads, FFTW {fftw}",
             method.label(), source.describe(), tc.h, s.threads);
    let pre = if method == MethodArg::Hockney {
        String::new()
    } else {
        let p = s.precompute;
        if method == MethodArg::Vico {
            format!(", kernel precomputation grid {}x{}x{}", p[0], p[1], p[2])
        } else {
            format!(", kernel precomputation DCT-I {}x{}x{}", p[0] / 2 + 1, p[1] / 2 + 1, p[2] / 2 + 1)
        }
    };
    println!("grid:      {n}^3 nodes, doubled grid {}^3{pre}; test problem sampled in {setup_s:.3} s", 2 * n);
    println!("plan:      {:.4} s, peak memory +{} during creation, {} held by the plan (estimated +{}, {})",
             s.plan_s, mem::mib(s.plan_peak), mem::mib(s.plan_retained),
             mem::mib(Some(s.estimate.peak_bytes as u64)), mem::mib(Some(s.estimate.plan_bytes as u64)));
    println!("solve:     {:.4} s (fastest of {reps}; mean {:.4} s, first {:.4} s)", solve_s, mean(&s.solve_s), s.solve_s[0]);
    println!("fft pair:  {:.4} s (one r2c + one c2r of {}^3, fastest of {reps}); solve / fft pair = {ratio:.3}",
             fft_s, 2 * n);
    println!("error:     rel L2 {:.3e} on the nodes; energy {:.12} (exact {:.12}, rel error {:.2e})",
             s.rel_error, s.energy, tc.energy, s.energy_rel_error);
    println!("memory:    process peak RSS {}", mem::mib(peak));

    if a.json {
        json::emit(&json!({
            "method": method.name(),
            "n": n,
            "source": source.name(),
            "h": tc.h,
            "threads": s.threads,
            "fftw": fftw,
            "reps": reps,
            "rel_error": s.rel_error,
            "energy": s.energy,
            "energy_exact": tc.energy,
            "energy_rel_error": s.energy_rel_error,
            "plan_s": s.plan_s,
            "solve_s": solve_s,
            "solve_mean_s": mean(&s.solve_s),
            "solve_first_s": s.solve_s[0],
            "fft_pair_s": fft_s,
            "solve_over_fft_pair": ratio,
            "doubled_grid": n2,
            "precompute": s.precompute,
            "peak_rss_bytes": peak,
            "plan_peak_rss_bytes": s.plan_peak,
            "plan_retained_bytes": s.plan_retained,
            "plan_peak_estimate_bytes": s.estimate.peak_bytes,
            "plan_estimate_bytes": s.estimate.plan_bytes,
            "setup_s": setup_s,
        }));
    }
    Ok(())
}
