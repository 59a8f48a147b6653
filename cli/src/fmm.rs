//! `farfield fmm`: one timed run of the fast multipole method for `1/r`
//! ([`farfield::fmm`]), with the stage breakdown and the error against a reference.
//!
//! # Inputs
//! * Generated (`--n N --dist D`, fixed seed, PCG64), all in the unit cube `[0, 1)³`:
//!   `uniform` (uniform in the cube), `sphere` (uniform on the sphere of radius ½ centred at
//!   (½, ½, ½): a 2D surface, the classic non-uniform FMM test), `plummer` (Plummer model
//!   centred at (½, ½, ½) with scale radius 1/40, radii truncated at 20 scale radii = ½: a
//!   strongly clustered set). Charges uniform in `[−½, ½)`; with `--periodic` shifted to zero
//!   net charge. `--box a,b,c`: periodic boundaries in the rectangular box
//!   `[0, a) × [0, b) × [0, c)` (sides integer multiples of one common length, see
//!   [`farfield::fmm::Boundary::PeriodicBox`]), the generated positions scaled per axis from the
//!   unit cube to the box.
//! * `--input DIR`: `positions.npy` (N×3, float64 or any real dtype) and `charges.npy` (N), as
//!   in the shared data folders; `box.npy` (3×3, rows = lattice vectors) gives the box with
//!   `--periodic` (cubic, or rectangular with sides integer multiples of one common length:
//!   a diagonal box; positions may lie outside, they are folded in).
//!
//! # What is timed
//! Plan creation (`plan_s`: order selection and the per-order operator tables) and the
//! execute (`execute_s`: tree, lists, P2M, M2M, M2L, L2L, L2P, P2P, periodic corrections, with
//! the plan's own per-stage split from [`farfield::FmmPlan::stats`]). `time_s` is
//! `plan_s + execute_s`, the cost of one cold solve (what a one-call library such as fmm3d
//! measures); with `--reps R` the fastest of R executes is reported.
//!
//! # Error
//! Relative l2 errors of the potentials and of the fields (all three components):
//! * open boundary: against the direct sum `φ_i = Σ_{j≠i} q_j/r_ij`, `E_i = Σ_{j≠i} q_j
//!   (x_i − x_j)/r_ij³` (coincident particles skipped), exact over all particles for
//!   `N ≤ --full-check-max`, else over `--check` random targets (each summed over all N
//!   sources). The direct sum here is written independently of the library.
//! * `--periodic`: against the repository's Ewald module (spectral Ewald, tin-foil boundary,
//!   neutralising background — the FMM's convention) run at a tolerance 100× tighter (at most
//!   1e-13), over all particles; the energy error is reported too.

use crate::bench::parse_count;
use crate::json;
use crate::npy;
use crate::progress::{self, say};
use crate::CliResult;
use clap::{Args, ValueEnum};
use farfield::ewald::{self, EwaldOpts, CpuEwald};
use farfield::fmm::{Boundary, FmmOpts, FmmStats, StageTimes, TreeKind, GPU_TREE_STEPS};
use farfield::backend::BackendChoice;
use farfield::FmmPlan;
use farfield::gpu::fmm::m2l::M2lMethod;
use indicatif::ProgressBar;
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde_json::{json, Map, Value};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// Particle distribution of the generated inputs (module docs).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum DistArg {
    /// Uniform in the unit cube.
    Uniform,
    /// Uniform on the sphere of radius ½ centred in the unit cube (a surface).
    Sphere,
    /// Plummer cluster (scale radius 1/40, truncated at radius ½) centred in the unit cube.
    Plummer,
    /// Two Plummer clusters of half the particles each (scale radius 1/400, truncated at
    /// 1/20), centred at (¼, ½, ½) and (¾, ½, ½): two distant clusters.
    Clusters,
}

impl DistArg {
    /// Command-line / JSON name.
    pub fn name(self) -> &'static str {
        match self {
            DistArg::Uniform => "uniform",
            DistArg::Sphere => "sphere",
            DistArg::Plummer => "plummer",
            DistArg::Clusters => "clusters",
        }
    }
}

/// The octree of `farfield fmm` ([`farfield::fmm::TreeKind`]).
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum TreeArg {
    /// The cost model chooses the uniform or the adaptive tree at every execute.
    Auto,
    /// The uniform tree (depth from --depth or the cost model).
    Uniform,
    /// The adaptive tree (leaf size from --max-leaf or the cost model).
    Adaptive,
}

/// Compute backend of `farfield fmm`.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum BackendArg {
    /// The CPU FMM (rayon).
    Cpu,
    /// The CUDA FMM on device 0 (stage times from CUDA events).
    Cuda,
}

/// M2L kernel of the CUDA FMM.
#[derive(ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum M2lArg {
    /// One operator load per pair (the library's default).
    Plain,
    /// Presorted lists with operator symmetries (Kohnke et al. 2021, §3.3.5).
    Symmetric,
}

/// Arguments of `farfield fmm`.
#[derive(Args, Debug, Clone)]
pub struct FmmArgs {
    /// Number of particles (`1e6` notation accepted); not with --input.
    #[arg(long, value_name = "N", required_unless_present = "input", conflicts_with = "input")]
    pub n: Option<String>,
    /// Particle distribution of the generated input.
    #[arg(long, value_enum, default_value_t = DistArg::Uniform, conflicts_with = "input")]
    pub dist: DistArg,
    /// Read positions.npy (N×3) and charges.npy (N) from DIR (and box.npy with --periodic).
    #[arg(long, value_name = "DIR")]
    pub input: Option<PathBuf>,
    /// Requested relative accuracy of potentials and fields (0 < T < 1).
    #[arg(long, value_name = "T", default_value_t = 1e-6)]
    pub tol: f64,
    /// Periodic boundaries: the unit cube for generated inputs, box.npy (cubic or rectangular)
    /// with --input.
    #[arg(long)]
    pub periodic: bool,
    /// Periodic boundaries in the rectangular box [0,A)×[0,B)×[0,C) (generated inputs, scaled
    /// per axis from the unit cube; sides integer multiples of one common length, e.g. 2,1,1).
    #[arg(long = "box", value_name = "A,B,C", conflicts_with = "input", value_parser = parse_box)]
    pub r#box: Option<[f64; 3]>,
    /// Threads (0 = all cores).
    #[arg(long, value_name = "K", default_value_t = 0, value_parser = crate::args::whole::<usize>)]
    pub threads: usize,
    /// Expansion order p (0 = from the tolerance).
    #[arg(long, value_name = "P", default_value_t = 0, value_parser = crate::args::whole::<usize>)]
    pub order: usize,
    /// Tree depth D of the uniform tree (default: from the particle distribution).
    #[arg(long, value_name = "D", value_parser = crate::args::whole::<usize>, conflicts_with = "max_leaf")]
    pub depth: Option<usize>,
    /// The octree (open boundaries): auto (the cost model chooses), uniform or adaptive.
    #[arg(long, value_enum, default_value_t = TreeArg::Auto)]
    pub tree: TreeArg,
    /// Adaptive tree: at most S particles per leaf (default: from the cost model); implies
    /// --tree adaptive.
    #[arg(long, value_name = "S", value_parser = crate::args::whole::<usize>)]
    pub max_leaf: Option<usize>,
    /// Backend: the CPU FMM or the CUDA FMM (device 0; no device → an error naming what was
    /// looked for).
    #[arg(long, value_enum, default_value_t = BackendArg::Cpu)]
    pub backend: BackendArg,
    /// M2L kernel of the CUDA backend.
    #[arg(long, value_enum, default_value_t = M2lArg::Plain)]
    pub m2l: M2lArg,
    /// With --backend cuda: also run the CPU FMM with the same p and D, and report the largest
    /// relative difference of potentials and fields and the time ratio.
    #[arg(long)]
    pub compare_cpu: bool,
    /// Timed executes (the fastest is reported).
    #[arg(long, value_name = "R", default_value_t = 1, value_parser = crate::args::whole_in::<u64>(1, u64::MAX))]
    pub reps: u64,
    /// Random targets of the direct-sum check for N > --full-check-max (0 = no check).
    #[arg(long, value_name = "M", default_value_t = 1000, value_parser = crate::args::whole::<usize>)]
    pub check: usize,
    /// Largest N checked exactly against the full direct sum (open boundary).
    #[arg(long, value_name = "N", default_value_t = 20000, value_parser = crate::args::whole::<usize>)]
    pub full_check_max: usize,
    /// Random seed (inputs and check targets).
    #[arg(long, default_value_t = 42, value_parser = crate::args::whole::<u64>)]
    pub seed: u64,
    /// Write potential.npy (N) and field.npy (N×3), in the input order, to DIR.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Print a JSON object as the last line of stdout.
    #[arg(long)]
    pub json: bool,
}

/// Particles of one run.
#[derive(Debug, Clone)]
pub struct Particles {
    /// Description (distribution or input folder).
    pub name: String,
    /// Positions, interleaved `xyz[3*i + d]`.
    pub xyz: Vec<f64>,
    /// Charges.
    pub q: Vec<f64>,
    /// Periodic box sides `[a, b, c]` (equal for a cubic box), if any.
    pub sides: Option<[f64; 3]>,
}

/// Parses `--box A,B,C`: three finite positive numbers.
pub fn parse_box(s: &str) -> Result<[f64; 3], String> {
    let v: Vec<&str> = s.split(',').map(str::trim).collect();
    if v.len() != 3 {
        return Err(format!("'{s}': expected three box sides A,B,C"));
    }
    let mut out = [0.0; 3];
    for (o, t) in out.iter_mut().zip(&v) {
        let x: f64 = t.parse().map_err(|_| format!("'{t}' is not a number: expected three box sides A,B,C"))?;
        if !(x.is_finite() && x > 0.0) {
            return Err(format!("box side {t} must be finite and positive"));
        }
        *o = x;
    }
    Ok(out)
}

/// The FMM boundary of a periodic box with `sides` (cubic when all three are equal).
pub fn box_boundary(sides: [f64; 3]) -> Boundary {
    Boundary::PeriodicBox { sides }.normalized()
}

/// Generates `n` particles of distribution `dist` in the unit cube (module docs), charges in
/// `[−½, ½)`, shifted to zero net charge when `neutral`.
pub fn generate(dist: DistArg, n: usize, seed: u64, neutral: bool) -> (Vec<f64>, Vec<f64>) {
    let mut r = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut xyz = Vec::with_capacity(3 * n);
    let mut q = Vec::with_capacity(n);
    for _ in 0..n {
        match dist {
            DistArg::Uniform => xyz.extend_from_slice(&[r.gen::<f64>(), r.gen::<f64>(), r.gen::<f64>()]),
            DistArg::Sphere | DistArg::Plummer | DistArg::Clusters => {
                let rad = if dist == DistArg::Sphere {
                    0.5
                } else {
                    // Plummer: enclosed mass fraction u = (1 + a²/r²)^{−3/2}
                    let a = if dist == DistArg::Plummer { 1.0 / 40.0 } else { 1.0 / 400.0 };
                    loop {
                        let u: f64 = r.gen::<f64>();
                        let s = 1.0 / (u.powf(-2.0 / 3.0) - 1.0).sqrt();
                        if s < 20.0 {
                            break a * s;
                        }
                    }
                };
                // the second half of the two clusters sits at x = ¾, the first at x = ¼
                let cx = match dist {
                    DistArg::Clusters if xyz.len() / 3 < n / 2 => 0.25,
                    DistArg::Clusters => 0.75,
                    _ => 0.5,
                };
                let ct: f64 = 2.0 * r.gen::<f64>() - 1.0;
                let ph: f64 = 2.0 * std::f64::consts::PI * r.gen::<f64>();
                let st = (1.0 - ct * ct).max(0.0).sqrt();
                // (a point exactly at radius ½ may land on the cube face 1.0: fine for the open
                // tree; the periodic tree folds it to 0)
                xyz.extend_from_slice(&[cx + rad * st * ph.cos(), 0.5 + rad * st * ph.sin(), 0.5 + rad * ct]);
            }
        }
        q.push(r.gen::<f64>() - 0.5);
    }
    if neutral && n > 0 {
        let m = q.iter().sum::<f64>() / n as f64;
        q.iter_mut().for_each(|v| *v -= m);
    }
    (xyz, q)
}

/// Reads `positions.npy`, `charges.npy` and, when `periodic`, the `box.npy` from `dir`: a
/// cubic box (diagonal entries equal to a relative 1e-12, as before rectangular boxes were
/// accepted: the side `box[0]`) or a rectangular one (the diagonal). Errors: missing or
/// malformed files, shape mismatch, non-finite values, a box with off-diagonal entries
/// (triclinic: the FMM takes cubic and rectangular boxes only).
pub fn load_input(dir: &Path, periodic: bool) -> CliResult<Particles> {
    let sys = crate::system::read_dir(dir, periodic)?;
    let sides = if periodic {
        let b = sys.cell.expect("read_dir returns the box when asked for it");
        let l = b[0];
        let m = b[0].max(b[4]).max(b[8]);
        let off = [b[1], b[2], b[3], b[5], b[6], b[7]];
        if !(l > 0.0 && b[4] > 0.0 && b[8] > 0.0 && off.iter().all(|v| v.abs() <= 1e-12 * m)) {
            return Err(format!(
                "{}: the periodic FMM supports cubic and rectangular (diagonal) boxes only, not triclinic ones; box = {b:?}",
                dir.join("box.npy").display()
            ));
        }
        let cubic = (b[4] - l).abs() <= 1e-12 * l && (b[8] - l).abs() <= 1e-12 * l;
        Some(if cubic { [l; 3] } else { [b[0], b[4], b[8]] })
    } else {
        None
    };
    Ok(Particles { name: sys.name, xyz: sys.xyz, q: sys.q, sides })
}

/// Result of one FMM run.
#[derive(Debug, Clone)]
pub struct Solved {
    /// Plan creation (s).
    pub plan_s: f64,
    /// Fastest execute (s).
    pub execute_s: f64,
    /// Statistics (order, depth, stage times) of the fastest execute.
    pub stats: FmmStats,
    /// Potentials, input order.
    pub phi: Vec<f64>,
    /// Fields, interleaved, input order.
    pub field: Vec<f64>,
    /// Energy `½ Σ q_i φ_i`.
    pub energy: f64,
}

impl Solved {
    /// `plan_s + execute_s`.
    pub fn time_s(&self) -> f64 {
        self.plan_s + self.execute_s
    }
}

/// Plans and executes the FMM `reps` times (fastest kept) with potentials and fields.
/// Errors: the library's (bad tolerance, order, depth, non-finite input).
pub fn solve(xyz: &[f64], q: &[f64], boundary: Boundary, tol: f64, opts: &FmmOpts, reps: usize) -> CliResult<Solved> {
    solve_with(xyz, q, boundary, tol, opts, reps, M2lMethod::default(), &ProgressBar::hidden(), "")
}

/// [`solve`] with the M2L kernel of a CUDA plan, advancing `pb` by one step for the plan and
/// one per execute (`1 + max(reps, 1)` steps), with messages prefixed by `what`.
#[allow(clippy::too_many_arguments)]
pub fn solve_with(xyz: &[f64], q: &[f64], boundary: Boundary, tol: f64, opts: &FmmOpts, reps: usize, m2l: M2lMethod, pb: &ProgressBar,
                  what: &str) -> CliResult<Solved> {
    let n = q.len();
    pb.set_message(format!("{what}plan"));
    let t = Instant::now();
    let mut plan = FmmPlan::new(boundary, tol, opts).map_err(|e| format!("fmm plan: {e}"))?;
    if let Some(g) = plan.gpu() {
        g.set_m2l_method(m2l);
    }
    let plan_s = t.elapsed().as_secs_f64();
    pb.inc(1);
    let mut phi = crate::mem::try_vec(n, "potentials", || 0.0)?;
    let mut field = crate::mem::try_vec(3 * n, "fields", || 0.0)?;
    let mut best: Option<(f64, FmmStats, f64)> = None;
    let reps = reps.max(1);
    for k in 0..reps {
        pb.set_message(format!("{what}execute{}", if reps > 1 { format!(" {}/{reps}", k + 1) } else { String::new() }));
        let t = Instant::now();
        let u = plan.execute(xyz, q, Some(&mut phi), Some(&mut field)).map_err(|e| format!("fmm execute: {e}"))?;
        let s = t.elapsed().as_secs_f64();
        if best.as_ref().map_or(true, |b| s < b.0) {
            best = Some((s, plan.stats(), u));
        }
        pb.inc(1);
    }
    let (execute_s, stats, energy) = best.expect("at least one repetition");
    Ok(Solved { plan_s, execute_s, stats, phi, field, energy })
}

/// The stage times as a JSON object (seconds).
pub fn stages_json(t: &StageTimes) -> Value {
    json!({
        "tree": t.tree, "lists": t.lists, "p2m": t.p2m, "m2m": t.m2m, "m2l": t.m2l,
        "l2l": t.l2l, "l2p": t.l2p, "p2p": t.p2p, "post": t.post,
    })
}

/// One line of stage times.
pub fn stages_line(t: &StageTimes) -> String {
    format!(
        "tree {:.4}  lists {:.4}  P2M {:.4}  M2M {:.4}  M2L {:.4}  L2L {:.4}  L2P {:.4}  P2P {:.4}  post {:.4}  (total {:.4} s; M2L {:.0} %, P2P {:.0} %)",
        t.tree, t.lists, t.p2m, t.m2m, t.m2l, t.l2l, t.l2p, t.p2p, t.post, t.total,
        100.0 * t.m2l / t.total.max(1e-300), 100.0 * t.p2p / t.total.max(1e-300)
    )
}

/// Error of a run against a reference.
#[derive(Debug, Clone)]
pub struct Check {
    /// Relative l2 error of the potentials.
    pub rel_phi: f64,
    /// Relative l2 error of the fields (all components).
    pub rel_field: f64,
    /// Relative energy error (periodic check, or the full open check), if computed.
    pub rel_energy: Option<f64>,
    /// Number of targets compared.
    pub targets: usize,
    /// Description of the reference.
    pub reference: String,
    /// Seconds spent on the reference.
    pub ref_s: f64,
}

const LANES: usize = 8;

/// Adds the direct potential and field at `t` of the sources (SoA, padded to a multiple of
/// [`LANES`] with zero charges far away) to `acc` = (φ, Ex, Ey, Ez); coincident sources skipped.
#[inline(always)]
fn direct_one_impl(t: [f64; 3], xs: &[f64], ys: &[f64], zs: &[f64], qs: &[f64]) -> [f64; 4] {
    let mut ph = [0.0; LANES];
    let mut ex = [0.0; LANES];
    let mut ey = [0.0; LANES];
    let mut ez = [0.0; LANES];
    for (((xa, ya), za), qa) in xs.chunks_exact(LANES).zip(ys.chunks_exact(LANES)).zip(zs.chunks_exact(LANES)).zip(qs.chunks_exact(LANES)) {
        for l in 0..LANES {
            let (dx, dy, dz) = (t[0] - xa[l], t[1] - ya[l], t[2] - za[l]);
            let r2 = dx * dx + dy * dy + dz * dz;
            let inv = if r2 > 0.0 { 1.0 / r2.sqrt() } else { 0.0 };
            let qi = qa[l] * inv;
            let g = qi * inv * inv;
            ph[l] += qi;
            ex[l] += g * dx;
            ey[l] += g * dy;
            ez[l] += g * dz;
        }
    }
    [ph.iter().sum(), ex.iter().sum(), ey.iter().sum(), ez.iter().sum()]
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn direct_one_avx2(t: [f64; 3], xs: &[f64], ys: &[f64], zs: &[f64], qs: &[f64]) -> [f64; 4] {
    direct_one_impl(t, xs, ys, zs, qs)
}

fn direct_one(t: [f64; 3], xs: &[f64], ys: &[f64], zs: &[f64], qs: &[f64]) -> [f64; 4] {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports AVX2 and FMA (checked just above).
        return unsafe { direct_one_avx2(t, xs, ys, zs, qs) };
    }
    direct_one_impl(t, xs, ys, zs, qs)
}

/// Direct (exact) potentials and fields of all `q` at `xyz` at the particles `targets`:
/// returns `(φ, E)` with `E` interleaved, in `targets` order; parallel over targets (rayon's
/// global pool).
pub fn direct_at(xyz: &[f64], q: &[f64], targets: &[usize]) -> (Vec<f64>, Vec<f64>) {
    let n = q.len();
    let np = n.div_ceil(LANES) * LANES;
    let mut xs = vec![0.0; np];
    let mut ys = vec![0.0; np];
    let mut zs = vec![0.0; np];
    let mut qs = vec![0.0; np];
    for i in 0..n {
        xs[i] = xyz[3 * i];
        ys[i] = xyz[3 * i + 1];
        zs[i] = xyz[3 * i + 2];
        qs[i] = q[i];
    }
    // padding: zero charges at a point no target coincides with
    for i in n..np {
        xs[i] = f64::MAX.sqrt();
    }
    let res: Vec<[f64; 4]> =
        targets.par_iter().map(|&i| direct_one([xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]], &xs, &ys, &zs, &qs)).collect();
    let phi = res.iter().map(|r| r[0]).collect();
    let field = res.iter().flat_map(|r| [r[1], r[2], r[3]]).collect();
    (phi, field)
}

/// Relative l2 error of `a` against `b`.
pub fn rel_l2(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den.max(f64::MIN_POSITIVE)).sqrt()
}

/// Open-boundary check against the direct sum (module docs): all particles when
/// `n ≤ full_max`, else `ntargets` distinct random targets drawn with `seed`.
pub fn check_open(xyz: &[f64], q: &[f64], s: &Solved, ntargets: usize, full_max: usize, seed: u64) -> Check {
    let n = q.len();
    let t = Instant::now();
    let full = n <= full_max;
    let targets: Vec<usize> = if full {
        (0..n).collect()
    } else {
        let mut r = rand_pcg::Pcg64::seed_from_u64(seed ^ 0x5eed);
        rand::seq::index::sample(&mut r, n, ntargets.min(n)).into_vec()
    };
    let (pd, fd) = direct_at(xyz, q, &targets);
    let pf: Vec<f64> = targets.iter().map(|&i| s.phi[i]).collect();
    let ff: Vec<f64> = targets.iter().flat_map(|&i| [s.field[3 * i], s.field[3 * i + 1], s.field[3 * i + 2]]).collect();
    let rel_energy = if full {
        let ud = 0.5 * q.iter().zip(&pd).map(|(a, b)| a * b).sum::<f64>();
        Some((s.energy - ud).abs() / ud.abs().max(f64::MIN_POSITIVE))
    } else {
        None
    };
    Check {
        rel_phi: rel_l2(&pf, &pd),
        rel_field: rel_l2(&ff, &fd),
        rel_energy,
        targets: targets.len(),
        reference: if full { "direct sum, all particles".into() } else { format!("direct sum at {} random targets", targets.len()) },
        ref_s: t.elapsed().as_secs_f64(),
    }
}

/// Periodic check against the repository's spectral Ewald solver (tin-foil boundary, the FMM's
/// convention) at tolerance `min(tol/100, …)` ≥ 1e-13, over all particles.
/// Errors: the Ewald module's.
/// The box is `[0, a) × [0, b) × [0, c)`, `sides = [a, b, c]` (equal for a cubic box).
pub fn check_periodic(xyz: &[f64], q: &[f64], sides: [f64; 3], s: &Solved, tol: f64, threads: usize) -> CliResult<Check> {
    let n = q.len();
    let t = Instant::now();
    let cell = [sides[0], 0.0, 0.0, 0.0, sides[1], 0.0, 0.0, 0.0, sides[2]];
    let ref_tol = (tol * 1e-2).max(1e-13);
    let opts = EwaldOpts { nthreads: threads, ..EwaldOpts::default() };
    let mut plan = CpuEwald::new(ewald::Method::Spectral, &cell, n, ref_tol, &opts).map_err(|e| format!("ewald plan: {e}"))?;
    let mut pe = vec![0.0; n];
    let mut fe = vec![0.0; 3 * n];
    let r = plan.execute(xyz, q, Some(&mut pe), Some(&mut fe), false).map_err(|e| format!("ewald execute: {e}"))?;
    let uabs = 0.5 * q.iter().zip(&pe).map(|(a, b)| (a * b).abs()).sum::<f64>();
    Ok(Check {
        rel_phi: rel_l2(&s.phi, &pe),
        rel_field: rel_l2(&s.field, &fe),
        rel_energy: Some((s.energy - r.energy).abs() / uabs.max(f64::MIN_POSITIVE)),
        targets: n,
        reference: format!("spectral Ewald (tin-foil) at tol {ref_tol:.0e}, all particles"),
        ref_s: t.elapsed().as_secs_f64(),
    })
}

/// Runs `farfield fmm`.
pub fn run(args: &FmmArgs) -> CliResult<()> {
    if !(args.tol.is_finite() && args.tol > 0.0 && args.tol < 1.0) {
        return Err(format!("--tol {} must lie in (0, 1)", args.tol));
    }
    let t0 = Instant::now();
    let periodic = args.periodic || args.r#box.is_some();
    let parts = match &args.input {
        Some(dir) => load_input(dir, args.periodic)?,
        None => {
            let n = parse_count(args.n.as_deref().unwrap_or("0")).map_err(|e| format!("--n: {e}"))?;
            // positions, charges, potentials, fields, the tree's sorted copies and the
            // reference: well under 512 bytes per particle
            crate::mem::ensure_fits(n as f64 * 512.0, &format!("--n {n}"))?;
            let (mut xyz, q) = generate(args.dist, n, args.seed, periodic);
            if let Some(b) = args.r#box {
                xyz.iter_mut().enumerate().for_each(|(i, v)| *v *= b[i % 3]);
            }
            Particles { name: args.dist.name().into(), xyz, q, sides: args.r#box.or(args.periodic.then_some([1.0; 3])) }
        }
    };
    let n = parts.q.len();
    let gen_s = t0.elapsed().as_secs_f64();
    let boundary = match parts.sides {
        Some(sides) => box_boundary(sides),
        None => Boundary::Open,
    };
    let backend = match args.backend {
        BackendArg::Cpu => BackendChoice::Cpu,
        BackendArg::Cuda => BackendChoice::Cuda,
    };
    let m2l = match args.m2l {
        M2lArg::Symmetric => M2lMethod::Symmetric,
        M2lArg::Plain => M2lMethod::Plain,
    };
    let tree = match (args.tree, args.max_leaf) {
        (TreeArg::Uniform, Some(_)) => return Err("--max-leaf sets the adaptive tree; it conflicts with --tree uniform".into()),
        (_, Some(s)) if s >= 1 => TreeKind::Adaptive { max_leaf: s },
        (_, Some(_)) => return Err("--max-leaf must be at least 1".into()),
        (TreeArg::Adaptive, None) => TreeKind::Adaptive { max_leaf: 0 },
        (TreeArg::Uniform, None) => TreeKind::Uniform,
        (TreeArg::Auto, None) => TreeKind::Auto,
    };
    let opts = FmmOpts { nthreads: args.threads, order: args.order, depth: args.depth, tree, backend, ..FmmOpts::default() };
    let bname = if periodic { "periodic" } else { "open" };
    let reps = args.reps as usize;
    let compare = args.compare_cpu && backend == BackendChoice::Cuda && n > 0;
    let will_check = n > 0 && (parts.sides.is_some() || args.check > 0 || n <= args.full_check_max);
    // steps: plan and executes, the same for the CPU comparison, the error check (stderr, only
    // when it is a terminal)
    let steps = (1 + reps) * if compare { 2 } else { 1 } + will_check as usize;
    let pb = progress::bar(steps as u64, "fmm", progress::visible());
    say!(pb, "farfield fmm — {} N = {n}, {bname} boundary{}, tol {:e}, backend {}", parts.name,
             parts.sides.map(|b| if b[0] == b[1] && b[1] == b[2] { format!(" (cubic box side {})", b[0]) } else { format!(" (box {} × {} × {})", b[0], b[1], b[2]) }).unwrap_or_default(), args.tol,
             if backend == BackendChoice::Cuda { format!("cuda ({} M2L)", if m2l == M2lMethod::Plain { "plain" } else { "symmetric" }) } else { "cpu".into() });
    let s = solve_with(&parts.xyz, &parts.q, boundary, args.tol, &opts, reps, m2l, &pb, "")?;
    let st = &s.stats;
    let depth = st.depth.unwrap_or(0);
    if backend == BackendChoice::Cuda {
        say!(pb, "params:     p = {}, D = {depth}, {} occupied leaves ({:.1} particles per leaf); stage times from CUDA events",
                 st.order, st.nleaves, n as f64 / st.nleaves.max(1) as f64);
    } else {
        say!(pb, "params:     p = {}, {}, D = {depth}, {} occupied leaves ({:.1} particles per leaf), {} threads{}",
                 st.order, st.max_leaf.map_or("uniform tree".to_string(), |s| format!("adaptive tree (≤ {s} per leaf)")),
                 st.nleaves, n as f64 / st.nleaves.max(1) as f64, st.nthreads,
                 if st.tol_clamped { " (tol clamped: order limit reached)" } else { "" });
    }
    if backend == BackendChoice::Cuda && st.gpu_m2l_counts[0][0] > 0 {
        let [pl, sy] = st.gpu_m2l_counts;
        say!(pb, "M2L work:   operator coefficients loaded {:.3e} (plain {:.3e}, {:.2}× saved), complex multiplications {:.3e} (plain {:.3e}, {:.2}× saved)",
                 sy[0] as f64, pl[0] as f64, pl[0] as f64 / sy[0].max(1) as f64, sy[1] as f64, pl[1] as f64, pl[1] as f64 / sy[1].max(1) as f64);
    }
    let vs_cpu = if compare {
        let o = FmmOpts { backend: BackendChoice::Cpu, order: st.order, depth: Some(depth), ..opts };
        let c = solve_with(&parts.xyz, &parts.q, boundary, args.tol, &o, reps, M2lMethod::default(), &pb, "CPU comparison: ")?;
        let rel = |a: &[f64], b: &[f64]| {
            let m = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
            a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / m
        };
        let (dp, df) = (rel(&s.phi, &c.phi), rel(&s.field, &c.field));
        say!(pb, "vs CPU:     same p, D on {} threads: max rel difference potential {dp:.3e}, field {df:.3e}; CPU execute {:.4} s = {:.2}× the CUDA execute",
                 c.stats.nthreads, c.execute_s, c.execute_s / s.execute_s.max(1e-300));
        Some((dp, df, c.execute_s))
    } else {
        None
    };
    say!(pb, "time:       plan {:.4} s + execute {:.4} s = {:.4} s{}; {:.3e} particles/s", s.plan_s, s.execute_s, s.time_s(),
             if args.reps > 1 { format!(" (fastest of {})", args.reps) } else { String::new() }, n as f64 / s.execute_s);
    say!(pb, "stages [s]: {}", stages_line(&st.times));
    if backend == BackendChoice::Cuda {
        let steps: Vec<String> = GPU_TREE_STEPS.iter().zip(st.gpu_tree_steps).map(|(k, v)| format!("{k} {v:.4}")).collect();
        say!(pb, "tree [s]:   {}", steps.join("  "));
    }
    say!(pb, "energy:     {:.15e}", s.energy);
    let check = if !will_check {
        None
    } else if let Some(sides) = parts.sides {
        pb.set_message("check: spectral Ewald reference");
        Some(check_periodic(&parts.xyz, &parts.q, sides, &s, args.tol, args.threads)?)
    } else {
        pb.set_message("check: direct sum");
        Some(check_open(&parts.xyz, &parts.q, &s, args.check, args.full_check_max, args.seed))
    };
    pb.inc(will_check as u64);
    if let Some(c) = &check {
        say!(pb, "error:      rel l2 potential {:.3e}, field {:.3e}{} against {} ({:.2} s){}",
                 c.rel_phi, c.rel_field,
                 c.rel_energy.map(|e| format!(", energy {e:.3e}")).unwrap_or_default(),
                 c.reference, c.ref_s,
                 if c.rel_phi <= args.tol && c.rel_field <= args.tol { "; within tol" } else { "; ABOVE tol" });
    }
    if let Some(dir) = &args.out {
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        npy::write_array(&dir.join("potential.npy"), &[n as u64], &s.phi)?;
        npy::write_array(&dir.join("field.npy"), &[n as u64, 3], &s.field)?;
        say!(pb, "wrote:      {} (potential.npy, field.npy)", dir.display());
    }
    pb.finish_and_clear();
    if args.json {
        let mut o = Map::new();
        o.insert("n".into(), json!(n));
        o.insert("dist".into(), json!(if args.input.is_some() { "input" } else { args.dist.name() }));
        if let Some(d) = &args.input {
            o.insert("input".into(), json!(d.display().to_string()));
        }
        o.insert("boundary".into(), json!(bname));
        if let Some(b) = parts.sides {
            o.insert("box".into(), json!(b));
        }
        o.insert("tol".into(), json!(args.tol));
        o.insert("p".into(), json!(st.order));
        o.insert("depth".into(), json!(depth));
        o.insert("tree".into(), json!(if st.max_leaf.is_some() { "adaptive" } else { "uniform" }));
        o.insert("max_leaf".into(), json!(st.max_leaf));
        o.insert("leaves".into(), json!(st.nleaves));
        o.insert("threads".into(), json!(st.nthreads));
        o.insert("time_s".into(), json!(s.time_s()));
        o.insert("plan_s".into(), json!(s.plan_s));
        o.insert("execute_s".into(), json!(s.execute_s));
        o.insert("reps".into(), json!(args.reps));
        o.insert("stages".into(), stages_json(&st.times));
        o.insert("m2l_share".into(), json!(st.times.m2l / st.times.total.max(1e-300)));
        o.insert("backend".into(), json!(if backend == BackendChoice::Cuda { "cuda" } else { "cpu" }));
        if backend == BackendChoice::Cuda {
            let [pl, sy] = st.gpu_m2l_counts;
            o.insert("m2l_counts".into(), json!({"plain": {"operator_loads": pl[0], "complex_mults": pl[1]},
                                                  "symmetric": {"operator_loads": sy[0], "complex_mults": sy[1]}}));
            let steps: Map<String, Value> = GPU_TREE_STEPS.iter().zip(st.gpu_tree_steps).map(|(k, v)| (k.to_string(), json!(v))).collect();
            o.insert("tree_steps".into(), Value::Object(steps));
        }
        if let Some((dp, df, cs)) = vs_cpu {
            o.insert("vs_cpu".into(), json!({"max_rel_diff_potential": dp, "max_rel_diff_field": df, "cpu_execute_s": cs}));
        }
        o.insert("energy".into(), json!(s.energy));
        o.insert("rel_error_potential".into(), json!(check.as_ref().map(|c| c.rel_phi)));
        o.insert("rel_error_field".into(), json!(check.as_ref().map(|c| c.rel_field)));
        o.insert("rel_error_energy".into(), json!(check.as_ref().and_then(|c| c.rel_energy)));
        o.insert("check_targets".into(), json!(check.as_ref().map(|c| c.targets).unwrap_or(0)));
        o.insert("reference".into(), json!(check.as_ref().map(|c| c.reference.clone())));
        o.insert("input_s".into(), json!(gen_s));
        json::emit(&Value::Object(o));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn direct_sum_matches_naive_pairs() {
        let (xyz, q) = generate(DistArg::Uniform, 37, 3, false);
        let (pd, fd) = direct_at(&xyz, &q, &[0, 5, 36]);
        for (o, &i) in [0usize, 5, 36].iter().enumerate() {
            let (mut p, mut f) = (0.0, [0.0; 3]);
            for j in 0..37 {
                if j != i {
                    let d: Vec<f64> = (0..3).map(|a| xyz[3 * i + a] - xyz[3 * j + a]).collect();
                    let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                    p += q[j] / r;
                    for a in 0..3 {
                        f[a] += q[j] * d[a] / (r * r * r);
                    }
                }
            }
            assert!((pd[o] - p).abs() < 1e-13 * p.abs().max(1.0));
            for a in 0..3 {
                assert!((fd[3 * o + a] - f[a]).abs() < 1e-12 * f[a].abs().max(1.0));
            }
        }
    }

    #[test]
    fn distributions_lie_in_the_unit_cube() {
        for d in [DistArg::Uniform, DistArg::Sphere, DistArg::Plummer, DistArg::Clusters] {
            let (xyz, q) = generate(d, 2000, 1, true);
            assert!(xyz.iter().all(|v| (0.0..=1.0).contains(v)), "{d:?}");
            assert!(q.iter().sum::<f64>().abs() < 1e-12);
        }
        // the Plummer set is clustered: half of the particles within ~1.3 scale radii
        let (xyz, _) = generate(DistArg::Plummer, 2000, 1, false);
        let inner = (0..2000).filter(|&i| (0..3).map(|a| (xyz[3 * i + a] - 0.5).powi(2)).sum::<f64>().sqrt() < 1.31 / 40.0).count();
        assert!((900..1100).contains(&inner), "{inner}");
        // two clusters: the first half about x = ¼, the second about x = ¾, within 1/20
        let (xyz, _) = generate(DistArg::Clusters, 2000, 1, false);
        for i in 0..2000 {
            let cx = if i < 1000 { 0.25 } else { 0.75 };
            let r = ((xyz[3 * i] - cx).powi(2) + (xyz[3 * i + 1] - 0.5).powi(2) + (xyz[3 * i + 2] - 0.5).powi(2)).sqrt();
            assert!(r < 0.05, "particle {i} at distance {r} from its centre");
        }
    }

    #[test]
    fn open_and_periodic_runs_meet_the_tolerance() {
        let (xyz, q) = generate(DistArg::Plummer, 3000, 7, false);
        let s = solve(&xyz, &q, Boundary::Open, 1e-6, &FmmOpts::default(), 1).unwrap();
        let c = check_open(&xyz, &q, &s, 100, 20000, 7);
        assert_eq!(c.targets, 3000);
        assert!(c.rel_phi <= 1e-6 && c.rel_field <= 1e-6, "{c:?}");
        // subset check on the same run agrees in magnitude
        let c2 = check_open(&xyz, &q, &s, 200, 100, 7);
        assert_eq!(c2.targets, 200);
        assert!(c2.rel_phi <= 1e-6 && c2.rel_field <= 1e-6, "{c2:?}");
        let (xyz, q) = generate(DistArg::Uniform, 1000, 8, true);
        let s = solve(&xyz, &q, Boundary::Periodic { side: 1.0 }, 1e-5, &FmmOpts::default(), 1).unwrap();
        let c = check_periodic(&xyz, &q, [1.0; 3], &s, 1e-5, 0).unwrap();
        assert!(c.rel_phi <= 1e-5 && c.rel_field <= 1e-5, "{c:?}");
        // a wrong answer is detected
        let mut bad = s.clone();
        bad.field[0] += 1.0;
        assert!(check_periodic(&xyz, &q, [1.0; 3], &bad, 1e-5, 0).unwrap().rel_field > 1e-5);
        // a rectangular box (--box 1,2,1)
        let (mut xyz, q) = generate(DistArg::Uniform, 1000, 9, true);
        xyz.iter_mut().skip(1).step_by(3).for_each(|v| *v *= 2.0);
        let s = solve(&xyz, &q, box_boundary([1.0, 2.0, 1.0]), 1e-5, &FmmOpts::default(), 1).unwrap();
        let c = check_periodic(&xyz, &q, [1.0, 2.0, 1.0], &s, 1e-5, 0).unwrap();
        assert!(c.rel_phi <= 1e-5 && c.rel_field <= 1e-5, "{c:?}");
    }

    #[test]
    fn box_option_parses_three_sides() {
        assert_eq!(parse_box("2,1, 1.5").unwrap(), [2.0, 1.0, 1.5]);
        for bad in ["2,1", "2,1,1,1", "2,x,1", "2,0,1", "2,-1,1", "inf,1,1"] {
            assert!(parse_box(bad).is_err(), "{bad}");
        }
        assert_eq!(box_boundary([3.0; 3]), Boundary::Periodic { side: 3.0 });
    }
}
