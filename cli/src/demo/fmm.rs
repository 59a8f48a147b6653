//! Demo section: the fast multipole method for `1/r` on a Plummer cluster (N = 10⁵, scale
//! radius 1/40 in the unit cube, the strongly clustered set of `farfield fmm --dist plummer`)
//! at tolerance 10⁻⁶: chosen order `p` and depth `D`, time per stage, and the relative l2
//! error of potentials and fields against the direct sum at 1000 random targets. A few
//! seconds; JSON keys under `fmm`.

use super::DemoArgs;
use crate::fmm::{check_open, generate, solve, stages_json, stages_line, DistArg};
use crate::CliResult;
use farfield::fmm::{Boundary, FmmOpts};
use serde_json::{json, Map, Value};
use std::time::Instant;

/// Number of particles.
pub const N: usize = 100_000;
/// Requested relative accuracy.
pub const TOL: f64 = 1e-6;
/// Targets of the direct-sum check.
pub const CHECK: usize = 1000;

/// Runs the section, prints its lines and adds `fmm` to the summary.
pub fn section(args: &DemoArgs, summary: &mut Map<String, Value>) -> CliResult<()> {
    let t0 = Instant::now();
    let dist = DistArg::Plummer;
    let (xyz, q) = generate(dist, N, 42, false);
    println!();
    println!("farfield demo — FMM for 1/r: Plummer cluster, N = {N}, charges uniform in [-1/2, 1/2), open boundary, tol {TOL:e}");
    let opts = FmmOpts { nthreads: args.threads, ..FmmOpts::default() };
    let s = solve(&xyz, &q, Boundary::Open, TOL, &opts, 1)?;
    let st = &s.stats;
    let c = check_open(&xyz, &q, &s, CHECK, 0, 42);
    let tree = st.max_leaf.map_or("uniform tree".to_string(), |s| format!("adaptive tree (≤ {s} per leaf)"));
    println!("params:     p = {}, {tree}, D = {}, {} occupied leaves, {} threads", st.order, st.depth.unwrap_or(0), st.nleaves, st.nthreads);
    println!("time:       plan {:.3} s + execute {:.3} s; {:.3e} particles/s", s.plan_s, s.execute_s, N as f64 / s.execute_s);
    println!("stages [s]: {}", stages_line(&st.times));
    println!("error:      rel l2 potential {:.2e}, field {:.2e} against the {} ({:.2} s)", c.rel_phi, c.rel_field, c.reference, c.ref_s);
    let wall = t0.elapsed().as_secs_f64();
    println!("(`farfield fmm --n N --dist uniform|sphere|plummer|clusters --tol T [--tree auto|uniform|adaptive] [--periodic]` runs other cases.)");
    println!("section:    {wall:.3} s wall");
    summary.insert(
        "fmm".into(),
        json!({
            "dist": dist.name(), "n": N, "tol": TOL, "p": st.order, "depth": st.depth.unwrap_or(0), "max_leaf": st.max_leaf,
            "threads": st.nthreads, "plan_s": s.plan_s, "execute_s": s.execute_s, "time_s": s.time_s(),
            "stages": stages_json(&st.times), "rel_error_potential": c.rel_phi, "rel_error_field": c.rel_field,
            "check_targets": c.targets, "wall_s": wall,
        }),
    );
    Ok(())
}
