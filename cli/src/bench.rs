//! `farfield bench nufft`: one timed NUFFT case.
//!
//! Points are uniform random in `[−π, π)^d` and strengths/coefficients uniform random in
//! the complex square `[−1, 1]²`, from a fixed seed (PCG64), generated in f64 and rounded to
//! the benchmark precision. Timed: makeplan, setpts, execute (one transform), plus the
//! plan's own stage split (spread or interp, FFT, deconvolve). Throughput = M / exec_s.
//! Type 3 (`--type 3`) is run by `bench_type3` (arbitrary target frequencies). `--backend cuda`
//! runs types 1 and 2 on CUDA device 0 from host arrays (the copies inside setpts and execute).
//!
//! Accuracy: relative l2 error over a random subset of outputs (type 1: `--check` random
//! modes, each summed directly over all M points; type 2: `--check` random points, each
//! summed over all modes), direct sums in f64 from the exact inputs the NUFFT saw, in
//! parallel (rayon, all cores — not part of the timings). Modes are in CMCL order
//! (`k = −N/2 … (N−1)/2`, x fastest) with sign `+` for `iflag ≥ 0`, as the library
//! documents; the direct sums here are written independently of the library.

use crate::direct;
use crate::json;
use crate::mem::try_vec;
use crate::npy;
use crate::CliResult;
use clap::{Args, ValueEnum};
use farfield::nufft::NufftOpts;
use farfield::NufftPlan;
use farfield::Real;
use num_complex::{Complex, Complex64};
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::f64::consts::PI;
use std::path::PathBuf;
use std::time::Instant;

/// Spreading kernel choice.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelArg {
    /// Exponential of semicircle.
    Es,
    /// Gaussian (fast Gaussian gridding).
    Gauss,
}

/// Floating-point precision.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrecArg {
    /// Double precision.
    F64,
    /// Single precision.
    F32,
}

/// FFTW planner effort.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum FftwArg {
    /// `FFTW_ESTIMATE` (the library's default).
    Estimate,
    /// `FFTW_MEASURE` (slower planning, sometimes faster transforms).
    Measure,
}

impl FftwArg {
    /// The FFTW planner flags.
    pub fn flags(self) -> u32 {
        match self {
            FftwArg::Estimate => farfield::fft::FFTW_ESTIMATE,
            FftwArg::Measure => farfield::fft::FFTW_MEASURE,
        }
    }
}

/// Arguments of `farfield bench nufft`.
#[derive(Args, Debug, Clone)]
pub struct NufftBenchArgs {
    /// Transform type: 1 (points → modes), 2 (modes → points) or 3 (points → arbitrary
    /// frequencies in `[−N/2, N/2)^d`, N from `--modes`).
    #[arg(long = "type", value_name = "1|2|3", value_parser = clap::value_parser!(i32).range(1..=3))]
    pub ty: i32,
    /// Dimension.
    #[arg(long, value_name = "1|2|3", value_parser = clap::value_parser!(u8).range(1..=3))]
    pub dim: u8,
    /// Modes per axis, x first: `N` (every axis) or `N1,N2[,N3]`; `1e6` notation accepted.
    #[arg(long, value_name = "N1[,N2,N3]")]
    pub modes: String,
    /// Number of non-uniform points M (`1e7` notation accepted).
    #[arg(long, value_name = "M")]
    pub points: String,
    /// Type 3 only: number of target frequencies (default: M).
    #[arg(long, value_name = "N")]
    pub targets: Option<String>,
    /// Requested relative tolerance.
    #[arg(long, value_name = "T", default_value_t = 1e-6)]
    pub tol: f64,
    /// Threads (0 = all cores).
    #[arg(long, value_name = "K", default_value_t = 0, value_parser = crate::args::whole::<usize>)]
    pub threads: usize,
    /// Upsampling factor σ (0 = automatic).
    #[arg(long, value_name = "S", default_value_t = 0.0)]
    pub upsampfac: f64,
    /// Spreading kernel.
    #[arg(long, value_enum, default_value_t = KernelArg::Es)]
    pub kernel: KernelArg,
    /// Precision.
    #[arg(long, value_enum, default_value_t = PrecArg::F64)]
    pub prec: PrecArg,
    /// Sign of the exponent (default: +1 for type 1, −1 for type 2, as FINUFFT's Python
    /// interface).
    #[arg(long, value_name = "±1")]
    pub iflag: Option<i32>,
    /// FFTW planner effort.
    #[arg(long, value_enum, default_value_t = FftwArg::Estimate)]
    pub fftw: FftwArg,
    /// Outputs checked against direct sums (0 = no check).
    #[arg(long, value_name = "N", default_value_t = 100, value_parser = crate::args::whole::<usize>)]
    pub check: usize,
    /// Random seed.
    #[arg(long, default_value_t = 42, value_parser = crate::args::whole::<u64>)]
    pub seed: u64,
    /// Write the inputs and the output as .npy to DIR, for comparisons with other libraries:
    /// x.npy, y.npy, z.npy, input.npy, output.npy (modes flat, x fastest), and the checked
    /// output indices and their direct sums (check_idx.npy, check_exact.npy, complex128).
    #[arg(long, value_name = "DIR")]
    pub save: Option<PathBuf>,
    /// Print a JSON object as the last line of stdout.
    #[arg(long)]
    pub json: bool,
    /// Types 1 and 2: set the points by reference (`NufftPlan::setpts_by_reference`: only the
    /// sort permutation is kept, as FINUFFT and ducc0 keep references to the caller's
    /// coordinates) instead of copying them in sorted order.
    #[arg(long)]
    pub by_reference: bool,
    /// Diagnostic output of the library on stderr (`NufftOpts::debug`, as FINUFFT's `debug`):
    /// 0 none, 1 the plan's choices and the setpts passes' times.
    #[arg(long, value_name = "LEVEL", default_value_t = 0, value_parser = crate::args::whole::<u32>)]
    pub debug: u32,
    /// Where the transform runs: the CPU, or CUDA device 0 (types 1 and 2; host arrays, so
    /// setpts and execute include their copies to and from the device; the stage split is
    /// the CPU plan's only: with `--debug 1` a CUDA plan prints its plan stages and the device
    /// time of each execute phase on stderr).
    #[arg(long, value_enum, default_value_t = crate::bench_spread::BackendArg::Cpu)]
    pub backend: crate::bench_spread::BackendArg,
}

/// Parses a count such as `1000`, `1e6`, `2.5e5` (must be a positive integer value).
pub fn parse_count(s: &str) -> CliResult<usize> {
    let s = s.trim().replace('_', "");
    if let Ok(v) = s.parse::<usize>() {
        return if v > 0 { Ok(v) } else { Err(format!("'{s}' must be positive")) };
    }
    match s.parse::<f64>() {
        Ok(v) if v >= 1.0 && v.fract() == 0.0 && v < 9.0e15 => Ok(v as usize),
        _ => Err(format!("'{s}' is not a positive integer")),
    }
}

/// Parses `--modes` for dimension `dim`: one value (used for every axis) or `dim` values.
pub fn parse_modes(s: &str, dim: usize) -> CliResult<Vec<usize>> {
    let v: Vec<usize> = s.split(',').map(parse_count).collect::<CliResult<_>>().map_err(|e| format!("--modes: {e}"))?;
    match v.len() {
        1 => Ok(vec![v[0]; dim]),
        n if n == dim => Ok(v),
        n => Err(format!("--modes has {n} values for dimension {dim} (give 1 or {dim})")),
    }
}

/// Inputs of one case in the benchmark precision (the NUFFT reads them in place: no copies,
/// so the process's memory is what a user's would be).
struct Inputs<T: Real> {
    coords: [Vec<T>; 3],
    data: Vec<Complex<T>>,
}

fn make_inputs<T: Real>(dim: usize, m: usize, nin: usize, seed: u64) -> CliResult<Inputs<T>> {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut coords: [Vec<T>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    for c in coords.iter_mut().take(dim) {
        *c = try_vec(m, "benchmark coordinates", || T::of(rng.gen_range(-PI..PI)))?;
    }
    let data = try_vec(nin, "benchmark input", || Complex::new(T::of(rng.gen_range(-1.0..1.0)), T::of(rng.gen_range(-1.0..1.0))))?;
    Ok(Inputs { coords, data })
}

fn c64<T: Real>(z: Complex<T>) -> Complex64 {
    Complex64::new(z.re.to_f64v(), z.im.to_f64v())
}

/// Picks `k` distinct indices below `n` (all of them when `k ≥ n`), sorted.
pub(crate) fn sample_indices(n: usize, k: usize, seed: u64) -> Vec<usize> {
    if k >= n {
        return (0..n).collect();
    }
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed ^ 0x9e37_79b9_7f4a_7c15);
    let mut v = rand::seq::index::sample(&mut rng, n, k).into_vec();
    v.sort_unstable();
    v
}

/// Result of one case.
struct CaseResult<T: Real> {
    plan_s: f64,
    setpts_s: f64,
    exec_s: f64,
    stages: farfield::nufft::Timings,
    info: farfield::nufft::NufftInfo,
    output: Vec<Complex<T>>,
}

/// Runs one case on a plan made (and timed, `plan_s`) by the caller: the plan is made before
/// any user-sized buffer, so sizes beyond the library's limits are reported with the library's
/// message, and the inputs are allocated fallibly.
fn run_case<T: Real>(ty: i32, m: usize, mut plan: NufftPlan<T>, plan_s: f64,
                     inp: &mut Inputs<T>, by_reference: bool) -> CliResult<CaseResult<T>> {
    let e = |e: farfield::Error| format!("NUFFT: {e}");
    let nm = plan.num_modes();
    let nout = if ty == 1 { nm } else { m };
    let mut out = try_vec(nout, "benchmark output", || Complex::<T>::new(T::zero(), T::zero()))?;
    let t0 = Instant::now();
    if by_reference {
        // SAFETY: the coordinates live in `inp`, unchanged until the plan is dropped below.
        unsafe { plan.setpts_by_reference(&inp.coords[0], &inp.coords[1], &inp.coords[2]) }.map_err(e)?;
    } else {
        plan.setpts(&inp.coords[0], &inp.coords[1], &inp.coords[2]).map_err(e)?;
    }
    let setpts_s = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    if ty == 1 {
        plan.execute(&mut inp.data, &mut out).map_err(e)?;
    } else {
        plan.execute(&mut out, &mut inp.data).map_err(e)?;
    }
    let exec_s = t0.elapsed().as_secs_f64();
    let stages = plan.timings();
    let info = plan.info();
    Ok(CaseResult { plan_s, setpts_s, exec_s, stages, info, output: out })
}

fn save_case<T: Real + npyz::Serialize + npyz::AutoSerialize>(dir: &std::path::Path, dim: usize, inp: &Inputs<T>,
                                                               out: &[Complex<T>]) -> CliResult<()>
where
    Complex<T>: npyz::Serialize + npyz::AutoSerialize,
{
    std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    for (d, name) in ["x.npy", "y.npy", "z.npy"].iter().enumerate().take(dim) {
        npy::write_array(&dir.join(name), &[inp.coords[d].len() as u64], &inp.coords[d])?;
    }
    npy::write_array(&dir.join("input.npy"), &[inp.data.len() as u64], &inp.data)?;
    npy::write_array(&dir.join("output.npy"), &[out.len() as u64], out)?;
    Ok(())
}

/// Runs `farfield bench nufft`.
pub fn run_nufft(a: &NufftBenchArgs) -> CliResult<()> {
    let dim = a.dim as usize;
    let nv = parse_modes(&a.modes, dim)?;
    let mut n = [1usize; 3];
    n[..dim].copy_from_slice(&nv);
    let m = parse_count(&a.points).map_err(|e| format!("--points: {e}"))?;
    if m > farfield::nufft::params::MAX_POINTS {
        return Err(format!("--points: M = {m} exceeds the library's limit of {} points (2^32 − 1)",
                           farfield::nufft::params::MAX_POINTS));
    }
    if !(a.tol.is_finite() && a.tol > 0.0) {
        return Err(format!("--tol {} must be positive", a.tol));
    }
    if !(a.upsampfac == 0.0 || (a.upsampfac > 1.0 && a.upsampfac <= 4.0)) {
        return Err(format!("--upsampfac {} must be 0 (automatic) or in (1, 4]", a.upsampfac));
    }
    let iflag = a.iflag.unwrap_or(if a.ty == 1 { 1 } else { -1 });
    let fftw = a.fftw.flags();
    let opts = NufftOpts {
        nthreads: a.threads,
        kernel: if a.kernel == KernelArg::Gauss { farfield::kernel::KernelKind::Gaussian } else { farfield::kernel::KernelKind::Es },
        upsampfac: (a.upsampfac != 0.0).then_some(a.upsampfac),
        fftw,
        debug: a.debug,
        backend: a.backend.choice(),
        ..NufftOpts::default()
    };
    if a.ty == 3 {
        if a.backend == crate::bench_spread::BackendArg::Cuda {
            return Err("--backend cuda: type 3 is timed by the GPU kit (benches/peers/nufft_vs_cufinufft.py), not here".into());
        }
        return crate::bench_type3::run(a, opts, iflag);
    }
    let spec = Spec { dim, n, m, iflag, opts };
    if a.prec == PrecArg::F32 {
        run_typed::<f32>(a, &spec)
    } else {
        run_typed::<f64>(a, &spec)
    }
}

/// The parsed case.
struct Spec {
    dim: usize,
    n: [usize; 3],
    m: usize,
    iflag: i32,
    opts: NufftOpts,
}

fn run_typed<T: Real + npyz::Serialize + npyz::AutoSerialize>(a: &NufftBenchArgs, spec: &Spec) -> CliResult<()>
where
    Complex<T>: npyz::Serialize + npyz::AutoSerialize,
{
    let Spec { dim, n, m, iflag, ref opts } = *spec;
    // the plan first: it checks the sizes against the library's limits before allocating
    let modes: Vec<i64> = n[..dim].iter().map(|&v| i64::try_from(v).unwrap_or(i64::MAX)).collect();
    let t0 = Instant::now();
    let plan = NufftPlan::<T>::new(a.ty, dim, &modes, iflag, 1, a.tol, &opts).map_err(|e| format!("NUFFT: {e}"))?;
    let plan_s = t0.elapsed().as_secs_f64();
    let nm = plan.num_modes();
    let nin = if a.ty == 1 { m } else { nm };
    let mut inp = make_inputs::<T>(dim, m, nin, a.seed)?;
    let r = run_case::<T>(a.ty, m, plan, plan_s, &mut inp, a.by_reference)?;
    let total_s = r.plan_s + r.setpts_s + r.exec_s;
    let pps = m as f64 / r.exec_s;

    // accuracy on a random subset of outputs
    let tcheck = Instant::now();
    let sign = if iflag >= 0 { 1.0 } else { -1.0 };
    let nout = if a.ty == 1 { nm } else { m };
    let which = if a.check == 0 { Vec::new() } else { sample_indices(nout, a.check, a.seed) };
    let exact = if which.is_empty() {
        Vec::new()
    } else if a.ty == 1 {
        direct::type1(&n, dim, &inp.coords, &inp.data, sign, &which)
    } else {
        direct::type2(&n, dim, &inp.coords, &inp.data, sign, &which)
    };
    let rel_error = if which.is_empty() {
        None
    } else {
        let num: f64 = which.iter().zip(&exact).map(|(&i, e)| (c64(r.output[i]) - e).norm_sqr()).sum();
        let den: f64 = exact.iter().map(|e| e.norm_sqr()).sum();
        Some((num / den).sqrt())
    };
    let checked = which.len();
    let check_s = tcheck.elapsed().as_secs_f64();

    if let Some(dir) = &a.save {
        save_case(dir, dim, &inp, &r.output)?;
        let idx: Vec<u64> = which.iter().map(|&i| i as u64).collect();
        npy::write_array(&dir.join("check_idx.npy"), &[idx.len() as u64], &idx)?;
        npy::write_array(&dir.join("check_exact.npy"), &[exact.len() as u64], &exact)?;
    }

    let modes_s: Vec<String> = n[..dim].iter().map(|v| v.to_string()).collect();
    let nf_s: Vec<String> = r.info.nf[..dim].iter().map(|v| v.to_string()).collect();
    let prec = T::NAME;
    let kernel = if a.kernel == KernelArg::Gauss { "gauss" } else { "es" };
    let stage = if a.ty == 1 { "spread" } else { "interp" };
    println!("farfield bench nufft: type {} dim {dim} modes {} M {m} tol {:e} {prec} iflag {iflag:+} threads {}",
             a.ty, modes_s.join("x"), a.tol, r.info.nthreads);
    println!("plan:    kernel {kernel} w {} sigma {} fine grid {} (tol used {:e}{})",
             r.info.kernel_width, r.info.upsampfac, nf_s.join("x"), r.info.tol_used,
             if r.info.warnings != 0 { ", clamped" } else { "" });
    println!("time:    makeplan {:.4} s, setpts {:.4} s, execute {:.4} s, total {:.4} s",
             r.plan_s, r.setpts_s, r.exec_s, total_s);
    let cuda = r.info.backend == farfield::backend::Backend::Cuda;
    if cuda {
        println!("stages:  CUDA device 0 (host arrays: setpts and execute include the copies); device phases with --debug 1");
    } else {
        println!("stages:  sort {:.4} s; {stage} {:.4} s, fft {:.4} s, deconvolve {:.4} s",
                 r.stages.setpts_s, r.stages.spread_s, r.stages.fft_s, r.stages.deconv_s);
    }
    println!("rate:    {:.3e} points/s (execute), {:.3e} points/s (setpts + execute)", pps,
             m as f64 / (r.setpts_s + r.exec_s));
    match rel_error {
        Some(e) => println!("error:   rel l2 {e:.3e} over {checked} random {} ({:.1}x tol; direct sums {:.2} s)",
                            if a.ty == 1 { "modes" } else { "points" }, e / a.tol, check_s),
        None => println!("error:   not checked"),
    }

    if a.json {
        json::emit(&json!({
            "type": a.ty,
            "dim": dim,
            "modes": &n[..dim],
            "points": m,
            "tol": a.tol,
            "prec": prec,
            "kernel": kernel,
            "iflag": iflag,
            "threads": r.info.nthreads,
            "upsampfac": r.info.upsampfac,
            "kernel_width": r.info.kernel_width,
            "nf": &r.info.nf[..dim],
            "tol_used": r.info.tol_used,
            "by_reference": a.by_reference,
            "backend": if cuda { "cuda" } else { "cpu" },
            "plan_s": r.plan_s,
            "setpts_s": r.setpts_s,
            "exec_s": r.exec_s,
            "total_s": total_s,
            "points_per_s": pps,
            "sort_s": (!cuda).then_some(r.stages.setpts_s),
            "spread_s": (!cuda).then_some(r.stages.spread_s),
            "fft_s": (!cuda).then_some(r.stages.fft_s),
            "deconv_s": (!cuda).then_some(r.stages.deconv_s),
            "rel_error": rel_error,
            "checked": checked,
            "check_s": check_s,
        }));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_and_modes() {
        assert_eq!(parse_count("1000").unwrap(), 1000);
        assert_eq!(parse_count("1e7").unwrap(), 10_000_000);
        assert_eq!(parse_count("2.5e3").unwrap(), 2500);
        assert_eq!(parse_count("1_000").unwrap(), 1000);
        assert!(parse_count("0").is_err());
        assert!(parse_count("1.5").is_err());
        assert!(parse_count("x").is_err());
        assert_eq!(parse_modes("128", 3).unwrap(), vec![128, 128, 128]);
        assert_eq!(parse_modes("10,20", 2).unwrap(), vec![10, 20]);
        assert_eq!(parse_modes("1e6", 1).unwrap(), vec![1_000_000]);
        assert!(parse_modes("10,20", 3).is_err());
    }

    #[test]
    fn sampled_indices_are_distinct() {
        let v = sample_indices(1000, 100, 3);
        assert_eq!(v.len(), 100);
        assert!(v.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(sample_indices(5, 100, 3), vec![0, 1, 2, 3, 4]);
    }
}
