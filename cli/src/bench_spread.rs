//! `farfield bench spread`: times spreading and interpolation of M random points through the
//! spreading API (`farfield::plans::spread::SpreadPlan`, what `farfield_spread_*` runs): a box
//! `[−0.5, 0.5)^dim` (periodic, or free with the points kept a half kernel width inside),
//! the ES/Gaussian kernel at `--tol` or a B-spline of `--order` (`--kernel`), real or complex
//! values; per stage (setpts, spread, interp, interp with gradient for B-splines) the best
//! time of `--reps` and points per second. With `--backend cuda` the same through the CUDA
//! backend (host arrays, transfers included), plus the device-resident kernels alone
//! (`--method`, a comma-separated list timed in turn against one CPU run; a method the
//! configuration does not support is listed with its message in the JSON's `cuda_runs`, and
//! the others still run), compared with the CPU, in f64 or f32 (`--precision`). Without a device, `--backend cuda` fails with the reason
//! discovery gave (no driver, no device).

use crate::bench::parse_count;
use crate::json;
use crate::mem::try_vec;
use crate::CliResult;
use clap::{Args, ValueEnum};
use farfield::gpu::spread::{GpuMethod, GpuSpreadOpts, GpuSpreader};
use farfield::gpu::types::GpuReal;
use farfield::plans::spread::{kernel_for, SpreadBox, SpreadKernelKind, SpreadPlan, SpreadPlanOpts};
use num_complex::{Complex, Complex64};
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

impl BackendArg {
    /// The library's backend choice for this argument.
    pub fn choice(self) -> farfield::backend::BackendChoice {
        match self {
            BackendArg::Cpu => farfield::backend::BackendChoice::Cpu,
            BackendArg::Cuda => farfield::backend::BackendChoice::Cuda,
        }
    }
}

/// Kernel of `bench spread`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum KernelArg {
    /// Exponential of semicircle at --tol.
    Es,
    /// Truncated Gaussian at --tol.
    Gauss,
    /// Cardinal B-spline of --order (2 = CIC, 3 = TSC).
    Bspline,
}

/// Precision of `bench spread`'s points, values and grid.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrecisionArg {
    /// Single precision (f32).
    F32,
    /// Double precision (f64).
    F64,
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
    #[arg(long, default_value_t = 3, value_parser = crate::args::whole::<usize>)]
    pub dim: usize,
    /// Grid points per axis.
    #[arg(long, value_parser = parse_count, default_value = "128")]
    pub grid: usize,
    /// Number of points (e.g. 1e6).
    #[arg(long, value_parser = parse_count, default_value = "1e6")]
    pub m: usize,
    /// Kernel.
    #[arg(long, value_enum, default_value_t = KernelArg::Es)]
    pub kernel: KernelArg,
    /// Kernel tolerance (ES/Gaussian width, σ = 2 rules).
    #[arg(long, default_value_t = 1e-6)]
    pub tol: f64,
    /// B-spline order 1–8 (--kernel bspline).
    #[arg(long, default_value_t = 3, value_parser = crate::args::whole::<usize>)]
    pub order: usize,
    /// Free (non-periodic) axes instead of periodic ones.
    #[arg(long)]
    pub free: bool,
    /// Real values and grid (as PIC charge deposition) instead of complex ones.
    #[arg(long)]
    pub real: bool,
    /// Precision of coordinates, values and grid (the kernel tolerance is raised to 1e-7 in f32).
    #[arg(long, value_enum, default_value_t = PrecisionArg::F64)]
    pub precision: PrecisionArg,
    /// Backend.
    #[arg(long, value_enum, default_value_t = BackendArg::Cpu)]
    pub backend: BackendArg,
    /// GPU methods, comma-separated (e.g. `sm,gm-sort`): each is timed in turn against the one
    /// CPU run of this process; the JSON's `cuda_runs` lists them (`cuda`, `cuda_plan`: the first).
    #[arg(long, value_enum, default_value = "auto", value_delimiter = ',')]
    pub method: Vec<MethodArg>,
    /// Executes announced per point configuration (GPU selection rule).
    #[arg(long, default_value_t = 1, value_parser = crate::args::whole::<usize>)]
    pub reuse: usize,
    /// Timed repetitions of spread and interp.
    #[arg(long, default_value_t = 3, value_parser = crate::args::whole::<usize>)]
    pub reps: usize,
    /// CPU threads (0 = all).
    #[arg(long, default_value_t = 0, value_parser = crate::args::whole::<usize>)]
    pub threads: usize,
    /// Print a JSON object as the last line of stdout.
    #[arg(long)]
    pub json: bool,
}

pub(crate) fn method_of(m: MethodArg) -> Option<GpuMethod> {
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

fn rate(m: usize, t: f64) -> f64 {
    m as f64 / t.max(1e-12)
}

/// Stage timings of one plan (every repetition, seconds) and its outputs (widened to f64).
struct Run {
    setpts: f64,
    spread: Vec<f64>,
    interp: Vec<f64>,
    grad: Vec<f64>,
    grid: Vec<Complex64>,
    vals: Vec<Complex64>,
}

fn widen<T: GpuReal>(v: &[Complex<T>]) -> CliResult<Vec<Complex64>> {
    let mut it = v.iter().map(|z| Complex64::new(z.re.to_f64v(), z.im.to_f64v()));
    try_vec(v.len(), "benchmark output copy", || it.next().unwrap_or_default())
}

/// Times setpts, spread, interp (and interp with gradient) of one plan.
fn time_plan<T: GpuReal>(a: &SpreadBenchArgs, plan: &mut SpreadPlan<T>, coords: [&[T]; 3], c: &[Complex<T>], gin: &[Complex<T>]) -> CliResult<Run> {
    let e = |e: farfield::Error| e.to_string();
    let (m, ng) = (c.len(), gin.len());
    let t = Instant::now();
    plan.setpts(coords).map_err(e)?;
    let setpts = t.elapsed().as_secs_f64();
    let zero = || Complex::new(T::zero(), T::zero());
    let mut grid = try_vec(ng, "benchmark grid", zero)?;
    let mut vals = try_vec(m, "benchmark values", zero)?;
    let (mut ts, mut ti, mut tg) = (Vec::new(), Vec::new(), Vec::new());
    if a.real {
        let mut it = c.iter().map(|v| v.re);
        let cr = try_vec(m, "benchmark values", || it.next().unwrap_or_else(T::zero))?;
        let mut it = gin.iter().map(|v| v.re);
        let gr = try_vec(ng, "benchmark grid", || it.next().unwrap_or_else(T::zero))?;
        let mut grid_r = try_vec(ng, "benchmark grid", T::zero)?;
        let mut vals_r = try_vec(m, "benchmark values", T::zero)?;
        let bspline = a.kernel == KernelArg::Bspline && a.order >= 2;
        let mut grad = try_vec(if bspline { m * a.dim } else { 0 }, "benchmark gradients", T::zero)?;
        for _ in 0..a.reps.max(1) {
            let t = Instant::now();
            plan.spread_real(&cr, &mut grid_r).map_err(e)?;
            ts.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            plan.interp_real(&gr, &mut vals_r, None).map_err(e)?;
            ti.push(t.elapsed().as_secs_f64());
            if bspline && plan.backend_name() == "cpu" {
                let t = Instant::now();
                plan.interp_real(&gr, &mut vals_r, Some(&mut grad)).map_err(e)?;
                tg.push(t.elapsed().as_secs_f64());
            }
        }
        grid.iter_mut().zip(&grid_r).for_each(|(o, &v)| *o = Complex::new(v, T::zero()));
        vals.iter_mut().zip(&vals_r).for_each(|(o, &v)| *o = Complex::new(v, T::zero()));
    } else {
        for _ in 0..a.reps.max(1) {
            let t = Instant::now();
            plan.spread_complex(c, &mut grid).map_err(e)?;
            ts.push(t.elapsed().as_secs_f64());
            let t = Instant::now();
            plan.interp_complex(gin, &mut vals).map_err(e)?;
            ti.push(t.elapsed().as_secs_f64());
        }
    }
    Ok(Run { setpts, spread: ts, interp: ti, grad: tg, grid: widen(&grid)?, vals: widen(&vals)? })
}

fn print_run(label: &str, m: usize, r: &Run) {
    let (sp, ip) = (best(&r.spread), best(&r.interp));
    print!("{label}: setpts {:.4} s ({:.3e} pts/s), spread {sp:.4} s ({:.3e} pts/s), interp {ip:.4} s ({:.3e} pts/s)",
           r.setpts, rate(m, r.setpts), rate(m, sp), rate(m, ip));
    if !r.grad.is_empty() {
        let g = best(&r.grad);
        print!(", interp+grad {g:.4} s ({:.3e} pts/s)", rate(m, g));
    }
    println!();
}

/// A stage's JSON: the best time of the repetitions and every repetition.
fn run_json(r: &Run) -> serde_json::Value {
    json!({"setpts_s": r.setpts, "spread_s": best(&r.spread), "interp_s": best(&r.interp),
           "interp_grad_s": if r.grad.is_empty() { None } else { Some(best(&r.grad)) },
           "spread_reps_s": r.spread, "interp_reps_s": r.interp, "interp_grad_reps_s": r.grad})
}

/// The kernels-only inputs and outputs on the device, made once for all methods of a run: the
/// points in radians (host), the strengths and the input grid (uploaded), the output buffers.
struct DeviceData<T> {
    rad: Vec<Vec<T>>,
    c: CudaBuf,
    grid_in: CudaBuf,
    grid_out: CudaBuf,
    vals_out: CudaBuf,
}

type CudaBuf = <farfield::gpu::cuda::CudaDevice as farfield::gpu::device::Device>::Buf;

impl<T: GpuReal> DeviceData<T> {
    fn new(dev: &farfield::gpu::cuda::CudaDevice, coords: [&[T]; 3], dim: usize, c: &[Complex<T>], gin: &[Complex<T>]) -> CliResult<Self> {
        use farfield::gpu::device::{upload_new, Device};
        let e = |e: farfield::Error| e.to_string();
        Ok(DeviceData {
            rad: coords[..dim].iter().map(|v| v.iter().map(|&x| T::of(std::f64::consts::TAU * (x.to_f64v() + 0.5))).collect()).collect(),
            c: upload_new(dev, c).map_err(e)?,
            grid_in: upload_new(dev, gin).map_err(e)?,
            grid_out: dev.alloc(std::mem::size_of_val(gin)).map_err(e)?,
            vals_out: dev.alloc(std::mem::size_of_val(c)).map_err(e)?,
        })
    }
}

/// One GPU method: the CUDA plan with host arrays (transfers included; its outputs compared
/// with the CPU run `rc`), then the device-resident kernels alone on `dd`. Returns the JSON of
/// both.
#[allow(clippy::too_many_arguments)]
fn cuda_method<T: GpuReal>(a: &SpreadBenchArgs, m: MethodArg, dev: &farfield::gpu::cuda::CudaDevice, bx: SpreadBox,
                           kernel: &farfield::kernel::Kernel, opts: &SpreadPlanOpts, coords: [&[T]; 3], c: &[Complex<T>],
                           gin: &[Complex<T>], rc: &Run, dd: &mut DeviceData<T>) -> CliResult<(serde_json::Value, serde_json::Value)> {
    use farfield::gpu::device::Device;
    let e = |e: farfield::Error| e.to_string();
    let rel = |x: &[Complex64], y: &[Complex64]| {
        let s = y.iter().map(|v| v.norm()).fold(0.0, f64::max);
        x.iter().zip(y).map(|(p, q)| (p - q).norm()).fold(0.0, f64::max) / s.max(f64::MIN_POSITIVE)
    };
    let gso = GpuSpreadOpts { method: method_of(m), reuse_hint: a.reuse, ..Default::default() };
    let gopts = SpreadPlanOpts { backend: farfield::backend::BackendChoice::Cuda, gpu: gso, ..*opts };
    let mut gp = SpreadPlan::<T>::new(bx, kernel.clone(), &gopts).map_err(e)?;
    let rg = time_plan(a, &mut gp, coords, c, gin)?;
    let method = gp.gpu_method().map_or("?", |m| m.name());
    print_run(&format!("cuda plan, method {method} (host arrays)"), a.m, &rg);
    let (es, ei) = (rel(&rg.grid, &rc.grid), rel(&rg.vals, &rc.vals));
    println!("  max rel diff vs CPU: spread {es:.1e}, interp {ei:.1e}");
    let mut plan = run_json(&rg);
    plan["method"] = json!(method);
    plan["spread_rel_diff"] = json!(es);
    plan["interp_rel_diff"] = json!(ei);
    // the device-resident kernels alone (no transfers), with the plan's radian coordinates
    let nf: Vec<usize> = bx.n[..a.dim].to_vec();
    let mut g = GpuSpreader::<T, _>::new(dev.clone(), a.dim, &nf, kernel, gso).map_err(e)?;
    let rc3: [&[T]; 3] = [&dd.rad[0], dd.rad.get(1).map_or(&[][..], |v| v), dd.rad.get(2).map_or(&[][..], |v| v)];
    let t = Instant::now();
    g.setpts(rc3).map_err(e)?;
    dev.synchronize().map_err(e)?;
    let setpts = t.elapsed().as_secs_f64();
    let (mut gs, mut gi) = (Vec::new(), Vec::new());
    for _ in 0..a.reps.max(1) {
        let t = Instant::now();
        g.spread_dev(&dd.c, &mut dd.grid_out).map_err(e)?;
        dev.synchronize().map_err(e)?;
        gs.push(t.elapsed().as_secs_f64());
        let t = Instant::now();
        g.interp_dev(&dd.grid_in, &mut dd.vals_out).map_err(e)?;
        dev.synchronize().map_err(e)?;
        gi.push(t.elapsed().as_secs_f64());
    }
    let dm = g.method().map_or("?", |m| m.name());
    println!("cuda {} kernels only, method {dm}: setpts {setpts:.4} s, spread {:.4} s ({:.3e} pts/s), interp {:.4} s ({:.3e} pts/s)",
             dev.name(), best(&gs), rate(a.m, best(&gs)), best(&gi), rate(a.m, best(&gi)));
    let kernels = json!({"device": dev.name(), "method": dm, "setpts_s": setpts, "spread_s": best(&gs), "interp_s": best(&gi),
                         "spread_reps_s": gs, "interp_reps_s": gi, "cu": g.compute_units().map(|c| c.0)});
    Ok((plan, kernels))
}

/// Runs the benchmark.
pub fn run(a: &SpreadBenchArgs) -> CliResult<()> {
    match a.precision {
        PrecisionArg::F32 => run_t::<f32>(a),
        PrecisionArg::F64 => run_t::<f64>(a),
    }
}

fn run_t<T: GpuReal>(a: &SpreadBenchArgs) -> CliResult<()> {
    if !(1..=3).contains(&a.dim) {
        return Err("--dim must be 1, 2 or 3".into());
    }
    if a.kernel != KernelArg::Bspline && !(a.tol > 0.0 && a.tol < 1.0) {
        return Err(format!("--tol {} must be in (0, 1) (the ES and Gaussian kernels' relative tolerance)", a.tol));
    }
    let e = |e: farfield::Error| e.to_string();
    if a.m > farfield::spread::MAX_POINTS {
        return Err(format!("--m: M = {} exceeds the library's limit of {} points (2^32 − 1)", a.m, farfield::spread::MAX_POINTS));
    }
    // points: coordinates, values, outputs, sorted copies (CPU and device); grid: input,
    // CPU and device outputs — an upper estimate, checked before anything is generated
    let ng_f = (a.grid as f64).powi(a.dim as i32);
    crate::mem::ensure_fits(a.m as f64 * (48.0 * a.dim as f64 + 128.0) + ng_f * 96.0,
                            &format!("--m {} with --grid {} in {}D", a.m, a.grid, a.dim))?;
    let (kind, wt) = match a.kernel {
        KernelArg::Es => (SpreadKernelKind::Es, a.tol),
        KernelArg::Gauss => (SpreadKernelKind::Gaussian, a.tol),
        KernelArg::Bspline => (SpreadKernelKind::BSpline, a.order as f64),
    };
    let kernel = kernel_for(kind, wt, T::MIN_TOL).map_err(e)?;
    let w = kernel.width();
    let mut n = [1usize; 3];
    n[..a.dim].iter_mut().for_each(|v| *v = a.grid);
    let bx = SpreadBox { dim: a.dim, n, lo: [-0.5; 3], len: [1.0; 3], periodic: [!a.free; 3] };
    // the plan first: it checks the grid against the library's limits before anything
    // grid-sized is allocated here (fallibly: an error, never an abort)
    let opts = SpreadPlanOpts { nthreads: a.threads, backend: farfield::backend::BackendChoice::Cpu, ..Default::default() };
    let mut cpu = SpreadPlan::<T>::new(bx, kernel.clone(), &opts).map_err(e)?;
    let ng = cpu.grid_len();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(1);
    // free axes: keep every kernel window on the grid
    let h = 1.0 / a.grid as f64;
    let (x0, x1) = if a.free { (-0.5 + 0.5 * w as f64 * h, 0.5 - (0.5 * w as f64 + 1.0) * h) } else { (-0.5, 0.5) };
    let mut xs: Vec<Vec<T>> = Vec::new();
    for _ in 0..a.dim {
        xs.push(try_vec(a.m, "benchmark coordinates", || T::of(rng.gen_range(x0..x1)))?);
    }
    let coords: [&[T]; 3] = [&xs[0], xs.get(1).map_or(&[][..], |v| v), xs.get(2).map_or(&[][..], |v| v)];
    let mut rand_c = || Complex::new(T::of(rng.gen_range(-1.0..1.0)), T::of(rng.gen_range(-1.0..1.0)));
    let c = try_vec(a.m, "benchmark strengths", &mut rand_c)?;
    let gin = try_vec(ng, "benchmark grid", &mut rand_c)?;
    let nf: Vec<usize> = n[..a.dim].to_vec();
    let asm = farfield::gpu::spread::asm(a.dim, n, w, a.m);
    println!("grid {nf:?}, M = {}, kernel {:?} (w = {w}), {} axes, {} {} values, ASM = {asm:.2}",
             a.m, a.kernel, if a.free { "free" } else { "periodic" }, if a.real { "real" } else { "complex" }, T::SUFFIX);
    let rc = time_plan(a, &mut cpu, coords, &c, &gin)?;
    let threads = farfield::threads::Threads::new(a.threads).map_err(e)?.count();
    print_run(&format!("cpu ({threads} threads)"), a.m, &rc);
    let mut out = json!({
        "dim": a.dim, "grid": nf, "m": a.m, "w": w, "asm": asm, "backend": "cpu", "kernel": format!("{:?}", a.kernel),
        "periodic": !a.free, "real": a.real, "precision": T::SUFFIX, "cpu": run_json(&rc),
    });
    out["cpu"]["threads"] = json!(threads);
    if a.backend == BackendArg::Cuda {
        let dev = farfield::gpu::cuda::CudaDevice::new(0).map_err(e)?;
        let mut dd = DeviceData::new(&dev, coords, a.dim, &c, &gin)?;
        // a method the configuration does not support (e.g. CSR beyond 2^32 - 1 entries) is
        // recorded with its message and the others still run
        let mut runs = Vec::new();
        for &m in &a.method {
            let requested = method_of(m).map_or("auto", |g| g.name());
            match cuda_method(a, m, &dev, bx, &kernel, &opts, coords, &c, &gin, &rc, &mut dd) {
                Ok((plan, kernels)) => runs.push(json!({"method_requested": requested, "cuda_plan": plan, "cuda": kernels})),
                Err(msg) => {
                    println!("cuda method {requested}: {msg}");
                    runs.push(json!({"method_requested": requested, "error": msg}));
                }
            }
        }
        out["backend"] = json!("cuda");
        if let Some(first) = runs.iter().find(|r| r.get("error").is_none()) {
            out["cuda_plan"] = first["cuda_plan"].clone();
            out["cuda"] = first["cuda"].clone();
        }
        out["cuda_runs"] = json!(runs);
    }
    if a.json {
        json::emit(&out);
    }
    Ok(())
}
