//! `farfield ewald`: periodic electrostatics of a charge system (spectral Ewald, SPME or the
//! classic Ewald sum): energy, time per evaluation split into real and k-space parts, the
//! chosen parameters and, with `--check`, the relative RMS force error against a tighter
//! classic Ewald sum.
//!
//! Units: the shared data's (positions and box in nm, charges in e), so potentials are in
//! e/nm, fields in e/nm², the energy in e²/nm; the energy is also printed in kJ/mol with
//! GROMACS's/OpenMM's Coulomb constant [`KJ_PER_MOL`].

#[cfg(feature = "mpi")]
mod dist;

use crate::json;
use crate::progress::{self, say};
use crate::npy;
use crate::system::{self, System};
use crate::CliResult;
use clap::{Args, ValueEnum};
use farfield::ewald::{EwaldOpts, EwaldParams, CpuEwald, Method, Overrides};
use indicatif::ProgressBar;
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::time::Instant;

/// Coulomb constant 1/(4πε₀) in kJ mol⁻¹ nm e⁻² (GROMACS's and OpenMM's `ONE_4PI_EPS0`).
pub const KJ_PER_MOL: f64 = 138.935458;

/// Lattice constant of rock salt (nm), used for the built-in crystal.
pub const NACL_A: f64 = 0.5640;

/// NaCl Madelung constant (energy per ion pair `−M/d`, `d` the nearest-neighbour distance).
pub const NACL_MADELUNG: f64 = 1.747564594633;

/// The solver, as named on the command line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum MethodArg {
    /// Spectral Ewald (Lindbo–Tornberg, Gaussian windows).
    Spectral,
    /// Smooth particle-mesh Ewald (Essmann et al., cardinal B-splines).
    Spme,
    /// Classic Ewald sum (explicit k-space sum; O(N^1.5)).
    Direct,
}

impl MethodArg {
    /// The library's method.
    pub fn method(self) -> Method {
        match self {
            MethodArg::Spectral => Method::Spectral,
            MethodArg::Spme => Method::Spme,
            MethodArg::Direct => Method::Direct,
        }
    }

    /// Name as on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            MethodArg::Spectral => "spectral",
            MethodArg::Spme => "spme",
            MethodArg::Direct => "direct",
        }
    }
}

/// Arguments of `farfield ewald`.
#[derive(Args, Debug, Clone)]
pub struct EwaldArgs {
    /// Folder with positions.npy (N×3, nm), charges.npy (N, e) and box.npy (3 lengths or 3×3
    /// lattice vectors as rows, nm), e.g. $FARFIELD_DATA_DIR/jac_dhfr. Default: an NaCl crystal.
    #[arg(long, value_name = "DIR")]
    pub input: Option<PathBuf>,
    /// Repeat the system A×B×C times along its lattice vectors ("A,B,C", or one count for all
    /// three), e.g. `--input data/water_tip3p_900 --replicate 7,7,8` for a water box of about
    /// 10⁶ atoms.
    #[arg(long, value_name = "A,B,C", value_parser = crate::args::counts3)]
    pub replicate: Option<[usize; 3]>,
    /// Without --input: conventional cells per axis of the built-in NaCl crystal (8k³ ions).
    #[arg(long, value_name = "K", default_value_t = 8, value_parser = crate::args::whole::<usize>)]
    pub nacl_cells: usize,
    /// Solver.
    #[arg(long, value_enum, default_value_t = MethodArg::Spme)]
    pub method: MethodArg,
    /// Requested relative RMS force accuracy.
    #[arg(long, value_name = "T", default_value_t = 1e-5)]
    pub tol: f64,
    /// Threads (0 = all cores).
    #[arg(long, value_name = "K", default_value_t = 0, value_parser = crate::args::whole::<usize>)]
    pub threads: usize,
    /// Timed evaluations after one warm-up (the fastest is reported as time_s).
    #[arg(long, value_name = "R", default_value_t = 5, value_parser = crate::args::whole_in::<usize>(1, u64::MAX))]
    pub repeats: usize,
    /// Also compute the classic Ewald sum at a 100× tighter tolerance and report the relative
    /// RMS force and energy errors against it.
    #[arg(long)]
    pub check: bool,
    /// Compute the virial in every evaluation too (CPU backend; timed with it, as an NPT step
    /// needs it).
    #[arg(long)]
    pub virial: bool,
    /// Write potential.npy (N, e/nm) and field.npy (N×3, e/nm²) to this folder.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Override ξ (1/nm).
    #[arg(long, value_name = "XI")]
    pub xi: Option<f64>,
    /// Override the real-space cutoff r_c (nm).
    #[arg(long, value_name = "RC")]
    pub rc: Option<f64>,
    /// Override the grid (one size for all axes).
    #[arg(long, value_name = "K", value_parser = crate::args::whole::<usize>)]
    pub grid: Option<usize>,
    /// Override the SPME order or the spectral Ewald support P.
    #[arg(long, value_name = "P", value_parser = crate::args::whole::<usize>)]
    pub order: Option<usize>,
    /// FFTW planner: estimate (default) or measure (slower plans, sometimes faster FFTs).
    #[arg(long, value_enum, default_value_t = crate::bench::FftwArg::Estimate)]
    pub fftw: crate::bench::FftwArg,
    /// Print a JSON summary as the last line of stdout.
    #[arg(long)]
    pub json: bool,
    /// Diagnostic output of the library on stderr (`EwaldOpts::debug`): 1 = the chosen
    /// parameters and per-call timings (with --backend cuda: the device time of each phase).
    #[arg(long, default_value_t = 0, value_name = "LEVEL", value_parser = crate::args::whole::<i32>)]
    pub debug: i32,
    /// Where to evaluate: the CPU plan, or the device plan on CUDA device 0 (positions, charges,
    /// potentials and fields in device memory; each timed evaluation ends when its energy is
    /// back on the host).
    #[arg(long, value_enum, default_value_t = crate::bench_spread::BackendArg::Cpu)]
    pub backend: crate::bench_spread::BackendArg,
    /// With --backend cuda: precision of the grids and FFTs (f32 = mixed precision: f64
    /// positions, interpolation sums, outputs and reductions).
    #[arg(long, value_enum, default_value_t = crate::bench::PrecArg::F64)]
    pub prec: crate::bench::PrecArg,
    /// With --backend cuda: the spreading method of the k-space part (default: the selection
    /// rule).
    #[arg(long, value_enum, default_value_t = crate::bench_spread::MethodArg::Auto)]
    pub gpu_method: crate::bench_spread::MethodArg,
    /// Run the distributed SPME (one process of `mpirun -np K farfield ewald --mpi …`): per-rank
    /// and total times and the strong-scaling efficiency against rank 0's single-process
    /// evaluation of the same run (needs a build with the cargo feature `mpi`).
    #[arg(long)]
    pub mpi: bool,
}

/// What one run measured.
#[derive(Debug, Clone)]
pub struct EwaldRun {
    /// Energy `U = ½ Σ q_i φ_i` (e²/nm).
    pub energy: f64,
    /// Fastest evaluation (energy + fields) after the warm-up (s).
    pub time_s: f64,
    /// Median evaluation time (s).
    pub median_s: f64,
    /// Every timed evaluation (s), in the order run.
    pub times: Vec<f64>,
    /// Real-space and k-space seconds of the fastest evaluation.
    pub real_s: f64,
    /// See `real_s`.
    pub kspace_s: f64,
    /// Plan creation (s).
    pub plan_s: f64,
    /// Parameters in use.
    pub params: EwaldParams,
    /// Threads used.
    pub threads: usize,
    /// Potentials (N).
    pub phi: Vec<f64>,
    /// Fields (N×3, interleaved).
    pub field: Vec<f64>,
}

/// Plans and evaluates `sys` with `method` at `tol`: one warm-up, then `repeats` timed
/// evaluations of potentials, fields and energy.
pub fn evaluate(sys: &System, method: Method, tol: f64, opts: &EwaldOpts, repeats: usize) -> CliResult<EwaldRun> {
    evaluate_with(sys, method, tol, opts, repeats, false, &ProgressBar::hidden(), "")
}

/// [`evaluate`], with the virial in every evaluation if `virial`, advancing `pb` by one step
/// for the plan, one for the warm-up and one per timed evaluation (`2 + repeats` steps), with
/// messages prefixed by `what`.
#[allow(clippy::too_many_arguments)]
pub fn evaluate_with(sys: &System, method: Method, tol: f64, opts: &EwaldOpts, repeats: usize, virial: bool, pb: &ProgressBar,
                     what: &str) -> CliResult<EwaldRun> {
    let cell = sys.cell.ok_or_else(|| format!("{}: no periodic cell", sys.name))?;
    let n = sys.n();
    pb.set_message(format!("{what}plan"));
    let t = Instant::now();
    let mut plan = CpuEwald::new(method, &cell, n, tol, opts).map_err(|e| format!("ewald plan: {e}"))?;
    let plan_s = t.elapsed().as_secs_f64();
    pb.inc(1);
    pb.set_message(format!("{what}{}", if repeats > 0 { "warm-up evaluation" } else { "evaluation" }));
    let mut phi = vec![0.0; n];
    let mut field = vec![0.0; 3 * n];
    let mut energy = plan.execute(&sys.xyz, &sys.q, Some(&mut phi), Some(&mut field), virial).map_err(|e| format!("ewald execute: {e}"))?.energy;
    pb.inc(1);
    let mut times = Vec::with_capacity(repeats);
    let (mut real_s, mut kspace_s) = (plan.params().real_s, plan.params().kspace_s);
    for k in 0..repeats {
        pb.set_message(format!("{what}evaluation {}/{repeats}", k + 1));
        let t = Instant::now();
        energy = plan.execute(&sys.xyz, &sys.q, Some(&mut phi), Some(&mut field), virial).map_err(|e| format!("ewald execute: {e}"))?.energy;
        let dt = t.elapsed().as_secs_f64();
        if times.iter().all(|&b| dt < b) {
            real_s = plan.params().real_s;
            kspace_s = plan.params().kspace_s;
        }
        times.push(dt);
        pb.inc(1);
    }
    let (time_s, median_s) = fastest_and_median(&mut times.clone());
    let threads = if opts.nthreads == 0 { rayon::current_num_threads() } else { opts.nthreads };
    Ok(EwaldRun { energy, time_s, median_s, times, real_s, kspace_s, plan_s, params: plan.params().clone(), threads, phi, field })
}

/// The fastest and the median of `times` (sorted in place); NaN for none.
fn fastest_and_median(times: &mut [f64]) -> (f64, f64) {
    times.sort_by(f64::total_cmp);
    if times.is_empty() { (f64::NAN, f64::NAN) } else { (times[0], times[times.len() / 2]) }
}

/// [`evaluate_with`] on CUDA device 0 with the device plan (`farfield::gpu::ewald::GpuEwaldPlan`,
/// grids in precision `T`): the system uploaded once, one warm-up, then `repeats` timed
/// evaluations from device arrays (wall clock until the energy is on the host); the real-space
/// and k-space times are those of the last evaluation (`EwaldParams::real_s`, `kspace_s`).
pub fn evaluate_cuda<T: farfield::gpu::types::GpuReal>(sys: &System, method: Method, tol: f64, opts: &EwaldOpts, sopts: farfield::gpu::spread::GpuSpreadOpts,
                                                       repeats: usize, bar: &ProgressBar) -> CliResult<EwaldRun> {
    use farfield::gpu::device::{download_vec, upload_new, Device};
    let e = |e: farfield::Error| format!("ewald (cuda): {e}");
    let cell = sys.cell.ok_or_else(|| format!("{}: no periodic cell", sys.name))?;
    let n = sys.n();
    bar.set_message("plan (CUDA device 0)");
    let dev = farfield::gpu::cuda::CudaDevice::new(0).map_err(e)?;
    let t = Instant::now();
    let mut plan = farfield::gpu::ewald::GpuEwaldPlan::<T, _>::new(dev.clone(), method, &cell, n, tol, opts, sopts).map_err(e)?;
    dev.synchronize().map_err(e)?;
    let plan_s = t.elapsed().as_secs_f64();
    bar.inc(1);
    bar.set_message("warm-up evaluation");
    let xb = upload_new(&dev, &sys.xyz).map_err(e)?;
    let qb = upload_new(&dev, &sys.q).map_err(e)?;
    let mut pb = dev.alloc(8 * n).map_err(e)?;
    let mut fb = dev.alloc(24 * n).map_err(e)?;
    let mut energy = plan.execute(n, &xb, &qb, Some(&mut pb), Some(&mut fb), false).map_err(e)?.energy;
    bar.inc(1);
    let mut times = Vec::with_capacity(repeats);
    for k in 0..repeats {
        bar.set_message(format!("evaluation {}/{repeats}", k + 1));
        let t = Instant::now();
        energy = plan.execute(n, &xb, &qb, Some(&mut pb), Some(&mut fb), false).map_err(e)?.energy;
        times.push(t.elapsed().as_secs_f64());
        bar.inc(1);
    }
    let phi = download_vec(&dev, &pb, n).map_err(e)?;
    let field = download_vec(&dev, &fb, 3 * n).map_err(e)?;
    let (time_s, median_s) = fastest_and_median(&mut times.clone());
    let (real_s, kspace_s) = (plan.params().real_s, plan.params().kspace_s);
    Ok(EwaldRun { energy, time_s, median_s, times, real_s, kspace_s, plan_s, params: plan.params().clone(), threads: 0, phi, field })
}

/// Relative RMS difference of the forces `q_i E_i`: `‖F − F_ref‖ / ‖F_ref‖` over all
/// components.
pub fn rel_rms_force(q: &[f64], field: &[f64], field_ref: &[f64]) -> f64 {
    let (mut num, mut den) = (0.0, 0.0);
    for (i, &qi) in q.iter().enumerate() {
        for d in 0..3 {
            let (f, r) = (qi * field[3 * i + d], qi * field_ref[3 * i + d]);
            num += (f - r) * (f - r);
            den += r * r;
        }
    }
    (num / den).sqrt()
}

/// The reference: classic Ewald sum at `min(tol/100, 1e-7)` (its estimated error), timed;
/// two steps of `pb` (plan, evaluation).
pub fn reference(sys: &System, tol: f64, nthreads: usize, pb: &ProgressBar) -> CliResult<(EwaldRun, f64)> {
    let ref_tol = (0.01 * tol).min(1e-7);
    let opts = EwaldOpts { nthreads, ..EwaldOpts::default() };
    let what = format!("check: classic Ewald sum at tol {ref_tol:e}: ");
    Ok((evaluate_with(sys, Method::Direct, ref_tol, &opts, 0, false, pb, &what)?, ref_tol))
}

/// The system to run: `--input` or the NaCl crystal.
pub fn load(args: &EwaldArgs) -> CliResult<System> {
    let sys = load_unreplicated(args)?;
    match args.replicate {
        Some(reps) => sys.replicate(reps),
        None => Ok(sys),
    }
}

fn load_unreplicated(args: &EwaldArgs) -> CliResult<System> {
    match &args.input {
        Some(d) => system::read_dir(d, true),
        None => {
            if args.nacl_cells == 0 {
                return Err("--nacl-cells must be at least 1".into());
            }
            // 8k³ ions; inputs, outputs and the plan's per-charge arrays stay below ~1 kB each
            let ions = 8.0 * (args.nacl_cells as f64).powi(3);
            crate::mem::ensure_fits(ions * 1024.0, &format!("--nacl-cells {} ({ions:e} ions)", args.nacl_cells))?;
            Ok(system::nacl(args.nacl_cells, NACL_A))
        }
    }
}

/// Runs `farfield ewald`.
pub fn run(args: &EwaldArgs) -> CliResult<()> {
    if !(args.tol > 0.0 && args.tol < 1.0) {
        return Err(format!("--tol {} must be in (0, 1)", args.tol));
    }
    for (name, v, what) in [("--xi", args.xi, "ξ from --tol"), ("--rc", args.rc, "r_c from --tol")] {
        if let Some(v) = v.filter(|v| !(v.is_finite() && *v > 0.0)) {
            return Err(format!("{name} {v} must be a positive number (leave it out to choose {what})"));
        }
    }
    let sys = load(args)?;
    let n = sys.n();
    let overrides = Overrides {
        xi: args.xi.unwrap_or(0.0),
        rc: args.rc.unwrap_or(0.0),
        grid: args.grid.map(|k| [k; 3]).unwrap_or([0; 3]),
        order: args.order.unwrap_or(0),
    };
    let opts = EwaldOpts { nthreads: args.threads, overrides, fftw_flags: args.fftw.flags(), debug: args.debug, ..EwaldOpts::default() };
    if args.mpi {
        #[cfg(feature = "mpi")]
        return dist::run(args, &sys, &opts);
        #[cfg(not(feature = "mpi"))]
        return Err("--mpi: this farfield was built without MPI (cargo build --release -p farfield-cli --features mpi)".into());
    }
    let cell = sys.cell.expect("read_dir/nacl give a cell");
    println!("farfield ewald — {} ({} charges, net charge {:+.6} e)", sys.name, n, sys.net_charge());
    println!("cell (nm):  a = ({:.6}, {:.6}, {:.6}), b = ({:.6}, {:.6}, {:.6}), c = ({:.6}, {:.6}, {:.6})",
             cell[0], cell[1], cell[2], cell[3], cell[4], cell[5], cell[6], cell[7], cell[8]);
    use crate::bench::PrecArg;
    use crate::bench_spread::BackendArg;
    let sopts = farfield::gpu::spread::GpuSpreadOpts { method: crate::bench_spread::method_of(args.gpu_method), ..Default::default() };
    // steps: plan, warm-up, the timed evaluations, and with --check the reference's plan and
    // evaluation (stderr, only when it is a terminal)
    let steps = 2 + args.repeats + if args.check { 2 } else { 0 };
    let pb = progress::bar(steps as u64, "ewald", progress::visible());
    let r = match (args.backend, args.prec) {
        (BackendArg::Cpu, _) => evaluate_with(&sys, args.method.method(), args.tol, &opts, args.repeats, args.virial, &pb, "")?,
        (BackendArg::Cuda, PrecArg::F64) => evaluate_cuda::<f64>(&sys, args.method.method(), args.tol, &opts, sopts, args.repeats, &pb)?,
        (BackendArg::Cuda, PrecArg::F32) => evaluate_cuda::<f32>(&sys, args.method.method(), args.tol, &opts, sopts, args.repeats, &pb)?,
    };
    let device = match args.backend {
        BackendArg::Cpu => format!("{} threads", r.threads),
        BackendArg::Cuda => format!("CUDA device 0, grids in {}", if args.prec == PrecArg::F32 { "f32" } else { "f64" }),
    };
    let p = &r.params;
    let order_label = match args.method {
        MethodArg::Spectral => format!("support P = {}, eta = {:.4}", p.order, p.eta),
        MethodArg::Spme => format!("B-spline order {}", p.order),
        MethodArg::Direct => format!("k cutoff {:.4} 1/nm", p.kc),
    };
    say!(pb, "method:     {}, tol {:e}, {device}", args.method.name(), args.tol);
    say!(pb, "parameters: xi = {:.6} 1/nm, r_c = {:.6} nm, grid {}x{}x{}, {}; estimated rel. RMS force error {:.2e}",
             p.xi, p.rc, p.grid[0], p.grid[1], p.grid[2], order_label, p.est_rel_err);
    say!(pb, "energy:     {:.10e} e^2/nm = {:.6} kJ/mol{}", r.energy, r.energy * KJ_PER_MOL,
             if sys.net_charge().abs() > 1e-9 { " (incl. the neutralising-background term)" } else { "" });
    say!(pb, "time:       {:.4} s per evaluation (fastest of {}; median {:.4} s): real space {:.4} s, k-space {:.4} s; plan {:.4} s",
             r.time_s, args.repeats, r.median_s, r.real_s, r.kspace_s, r.plan_s);

    let mut obj = Map::new();
    obj.insert("system".into(), json!(sys.name));
    obj.insert("method".into(), json!(args.method.name()));
    obj.insert("n".into(), json!(n));
    obj.insert("tol".into(), json!(args.tol));
    obj.insert("threads".into(), json!(r.threads));
    obj.insert("backend".into(), json!(if args.backend == BackendArg::Cuda { "cuda" } else { "cpu" }));
    obj.insert("prec".into(), json!(if args.prec == PrecArg::F32 { "f32" } else { "f64" }));
    obj.insert("energy".into(), json!(r.energy));
    obj.insert("energy_kj_mol".into(), json!(r.energy * KJ_PER_MOL));
    obj.insert("time_s".into(), json!(r.time_s));
    obj.insert("median_s".into(), json!(r.median_s));
    obj.insert("times_s".into(), json!(r.times));
    obj.insert("real_s".into(), json!(r.real_s));
    obj.insert("kspace_s".into(), json!(r.kspace_s));
    obj.insert("plan_s".into(), json!(r.plan_s));
    obj.insert("xi".into(), json!(p.xi));
    obj.insert("rc".into(), json!(p.rc));
    obj.insert("grid".into(), json!(p.grid));
    obj.insert("order_or_support".into(), json!(p.order));
    obj.insert("est_rel_err".into(), json!(p.est_rel_err));

    if args.check {
        let t = Instant::now();
        let (rf, ref_tol) = reference(&sys, args.tol, args.threads, &pb)?;
        let ef = rel_rms_force(&sys.q, &r.field, &rf.field);
        let eu = (r.energy - rf.energy).abs() / rf.energy.abs();
        say!(pb, "check:      classic Ewald sum at tol {:e} ({:.2} s): rel. RMS force error {:.3e}, energy rel. error {:.3e} — {}",
                 ref_tol, t.elapsed().as_secs_f64(), ef, eu,
                 if ef <= args.tol { "within tol" } else { "ABOVE tol" });
        obj.insert("rel_rms_force_error".into(), json!(ef));
        obj.insert("energy_rel_error".into(), json!(eu));
        obj.insert("reference_tol".into(), json!(ref_tol));
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        npy::write_array(&dir.join("potential.npy"), &[n as u64], &r.phi)?;
        npy::write_array(&dir.join("field.npy"), &[n as u64, 3], &r.field)?;
        say!(pb, "wrote:      {}/potential.npy (e/nm), field.npy (e/nm^2)", dir.display());
    }
    pb.finish_and_clear();
    if args.json {
        json::emit(&Value::Object(obj));
    }
    Ok(())
}
