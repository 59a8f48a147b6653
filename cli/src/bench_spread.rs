//! `farfield bench spread`: times spreading and interpolation of M random points on a grid,
//! on the CPU (`--backend cpu`) or on a CUDA device (`--backend cuda`, with `--method`), and
//! compares the GPU results with the CPU spreader. Without a device, `--backend cuda` fails with
//! the reason discovery gave (no driver, no device).

use crate::bench::parse_count;
use crate::json;
use crate::mem::try_vec;
use crate::CliResult;
use clap::{Args, ValueEnum};
use farfield::gpu::spread::{GpuMethod, GpuSpreadOpts, GpuSpreader};
use farfield::kernel::{Kernel, KernelKind};
use farfield::spread::{SpreadOpts, Spreader};
use farfield::threads::Threads;
use num_complex::Complex64;
use rand::{Rng, SeedableRng};
use serde_json::json;
use std::time::Instant;

/// Backend of `bench spread`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendArg {
    /// CPU spreader.
    Cpu,
    /// CUDA device 0.
    Cuda,
}

/// GPU method of `bench spread`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum MethodArg {
    /// Selection rule (ASM and --reuse).
    Auto,
    /// Particle-based, global atomics.
    Gm,
    /// GM after a device bin sort.
    GmSort,
    /// Shared-memory subproblem tiles.
    Sm,
    /// CSR single mesh (compute units, warp shuffles).
    Csr,
    /// Group mesh (64 grid points per group).
    Group,
}

/// Arguments of `farfield bench spread`.
#[derive(Args, Debug)]
pub struct SpreadBenchArgs {
    /// Dimension 1, 2 or 3.
    #[arg(long, default_value_t = 3)]
    pub dim: usize,
    /// Grid points per axis.
    #[arg(long, value_parser = parse_count, default_value = "128")]
    pub grid: usize,
    /// Number of points (e.g. 1e6).
    #[arg(long, value_parser = parse_count, default_value = "1e6")]
    pub m: usize,
    /// Kernel tolerance (sets the ES width, σ = 2).
    #[arg(long, default_value_t = 1e-6)]
    pub tol: f64,
    /// Backend.
    #[arg(long, value_enum, default_value_t = BackendArg::Cpu)]
    pub backend: BackendArg,
    /// GPU method.
    #[arg(long, value_enum, default_value_t = MethodArg::Auto)]
    pub method: MethodArg,
    /// Executes announced per point configuration (GPU selection rule).
    #[arg(long, default_value_t = 1)]
    pub reuse: usize,
    /// Timed repetitions of spread and interp.
    #[arg(long, default_value_t = 3)]
    pub reps: usize,
    /// CPU threads (0 = all).
    #[arg(long, default_value_t = 0)]
    pub threads: usize,
    /// Print a JSON object as the last line of stdout.
    #[arg(long)]
    pub json: bool,
}

fn method_of(m: MethodArg) -> Option<GpuMethod> {
    match m {
        MethodArg::Auto => None,
        MethodArg::Gm => Some(GpuMethod::Gm),
        MethodArg::GmSort => Some(GpuMethod::GmSort),
        MethodArg::Sm => Some(GpuMethod::Sm),
        MethodArg::Csr => Some(GpuMethod::Csr),
        MethodArg::Group => Some(GpuMethod::Group),
    }
}

fn best(ts: &[f64]) -> f64 {
    ts.iter().cloned().fold(f64::INFINITY, f64::min)
}

/// Runs the benchmark.
pub fn run(a: &SpreadBenchArgs) -> CliResult<()> {
    if !(1..=3).contains(&a.dim) {
        return Err("--dim must be 1, 2 or 3".into());
    }
    let e = |e: farfield::Error| e.to_string();
    if !(a.tol.is_finite() && a.tol > 0.0) {
        return Err(format!("--tol {:e} must be finite and positive", a.tol));
    }
    if a.m > farfield::spread::MAX_POINTS {
        return Err(format!("--m: M = {} exceeds the library's limit of {} points (2^32 − 1)", a.m, farfield::spread::MAX_POINTS));
    }
    // points: coordinates, strengths, outputs, sorted copies (CPU and device); grid: input,
    // CPU and device outputs — an upper estimate, checked before anything is generated
    let ng_f = (a.grid as f64).powi(a.dim as i32);
    crate::mem::ensure_fits(a.m as f64 * (24.0 * a.dim as f64 + 96.0) + ng_f * 64.0,
                            &format!("--m {} with --grid {} in {}D", a.m, a.grid, a.dim))?;
    let nf = vec![a.grid; a.dim];
    let kernel = Kernel::for_tolerance(KernelKind::Es, a.tol, 2.0);
    let th = Threads::new(a.threads).map_err(e)?;
    // the spreader first: it checks the grid against the library's limits before anything
    // grid-sized is allocated here (fallibly: an error, never an abort)
    let mut cpu = Spreader::<f64>::new(a.dim, &nf, &kernel, SpreadOpts { max_subprob_size: 0 }).map_err(e)?;
    let ng: usize = nf.iter().product();
    let zero = || Complex64::new(0.0, 0.0);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
    let mut xs: Vec<Vec<f64>> = Vec::new();
    for _ in 0..a.dim {
        xs.push(try_vec(a.m, "benchmark coordinates", || rng.gen_range(-std::f64::consts::PI..std::f64::consts::PI))?);
    }
    let coords: [&[f64]; 3] = [&xs[0], xs.get(1).map_or(&[][..], |v| v), xs.get(2).map_or(&[][..], |v| v)];
    let c = try_vec(a.m, "benchmark strengths", || Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)))?;
    let gin = try_vec(ng, "benchmark grid", || Complex64::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)))?;
    // CPU reference (and the CPU timings)
    let t0 = Instant::now();
    cpu.setpts(coords, &th).map_err(e)?;
    let cpu_setpts = t0.elapsed().as_secs_f64();
    let mut grid_cpu = try_vec(ng, "benchmark grid", zero)?;
    let mut c_cpu = try_vec(a.m, "benchmark values", zero)?;
    let (mut ts, mut ti) = (Vec::new(), Vec::new());
    for _ in 0..a.reps.max(1) {
        grid_cpu.iter_mut().for_each(|v| *v = Complex64::new(0.0, 0.0));
        let t = Instant::now();
        cpu.try_spread(&c, &mut grid_cpu, &th).map_err(e)?;
        ts.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        cpu.try_interp(&gin, &mut c_cpu, &th).map_err(e)?;
        ti.push(t.elapsed().as_secs_f64());
    }
    let asm = farfield::gpu::spread::asm(a.dim, [nf[0], *nf.get(1).unwrap_or(&1), *nf.get(2).unwrap_or(&1)], kernel.width(), a.m);
    println!("grid {nf:?}, M = {}, ES w = {}, ASM = {asm:.2}", a.m, kernel.width());
    println!("cpu ({} threads): setpts {cpu_setpts:.4} s, spread {:.4} s, interp {:.4} s", th.count(), best(&ts), best(&ti));
    let mut out = json!({
        "dim": a.dim, "grid": nf, "m": a.m, "w": kernel.width(), "asm": asm, "backend": "cpu",
        "cpu": {"setpts_s": cpu_setpts, "spread_s": best(&ts), "interp_s": best(&ti), "threads": th.count()},
    });
    if a.backend == BackendArg::Cuda {
        let dev = farfield::gpu::cuda::CudaDevice::new(0).map_err(e)?;
        let opts = GpuSpreadOpts { method: method_of(a.method), reuse_hint: a.reuse, ..Default::default() };
        let mut g = GpuSpreader::<f64, _>::new(dev.clone(), a.dim, &nf, &kernel, opts).map_err(e)?;
        let t = Instant::now();
        g.setpts(coords).map_err(e)?;
        dev.synchronize().map_err(e)?;
        let setpts = t.elapsed().as_secs_f64();
        use farfield::gpu::device::{upload_new, Device};
        let cb = upload_new(&dev, &c).map_err(e)?;
        let gb = upload_new(&dev, &gin).map_err(e)?;
        let mut grid_dev = dev.alloc(ng * 16).map_err(e)?;
        let mut c_dev = dev.alloc(a.m * 16).map_err(e)?;
        let (mut gs, mut gi) = (Vec::new(), Vec::new());
        for _ in 0..a.reps.max(1) {
            let t = Instant::now();
            g.spread_dev(&cb, &mut grid_dev).map_err(e)?;
            dev.synchronize().map_err(e)?;
            gs.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            g.interp_dev(&gb, &mut c_dev).map_err(e)?;
            dev.synchronize().map_err(e)?;
            gi.push(t.elapsed().as_secs_f64());
        }
        let grid_gpu: Vec<Complex64> = farfield::gpu::device::download_vec(&dev, &grid_dev, ng).map_err(e)?;
        let c_gpu: Vec<Complex64> = farfield::gpu::device::download_vec(&dev, &c_dev, a.m).map_err(e)?;
        let rel = |x: &[Complex64], y: &[Complex64]| {
            let s = y.iter().map(|v| v.norm()).fold(0.0, f64::max);
            x.iter().zip(y).map(|(p, q)| (p - q).norm()).fold(0.0, f64::max) / s.max(f64::MIN_POSITIVE)
        };
        let (es, ei) = (rel(&grid_gpu, &grid_cpu), rel(&c_gpu, &c_cpu));
        let method = g.method().map_or("?", |m| m.name());
        println!("cuda {} method {method}: setpts {setpts:.4} s, spread {:.4} s, interp {:.4} s; max rel diff vs CPU: spread {es:.1e}, interp {ei:.1e}",
                 dev.name(), best(&gs), best(&gi));
        out["backend"] = json!("cuda");
        out["cuda"] = json!({"device": dev.name(), "method": method, "setpts_s": setpts, "spread_s": best(&gs), "interp_s": best(&gi),
                             "spread_rel_diff": es, "interp_rel_diff": ei, "cu": g.compute_units().map(|c| c.0)});
    }
    if a.json {
        json::emit(&out);
    }
    Ok(())
}
