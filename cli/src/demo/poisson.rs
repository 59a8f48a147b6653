//! Demo section: the free-space Poisson solvers on the Gaussian test problem (σ = 0.05 centred
//! in the unit cube, exact φ = erf(r/(√2σ))/(4πr)) at N = 64 with all three methods: errors,
//! energy errors, plan and solve times. A few seconds; JSON keys under `poisson`.

use super::DemoArgs;
use crate::poisson::{solve, MethodArg, SourceArg};
use crate::CliResult;
use farfield::poisson::PoissonOpts;
use serde_json::{json, Map, Value};
use std::time::Instant;

/// Grid size of the demo.
pub const N: usize = 64;

/// Runs the section, prints its lines and adds `poisson` to the summary.
pub fn section(args: &DemoArgs, summary: &mut Map<String, Value>) -> CliResult<()> {
    let t0 = Instant::now();
    let src = SourceArg::Gaussian;
    let tc = src.make(N);
    let opts = PoissonOpts { nthreads: args.threads, ..PoissonOpts::default() };
    println!();
    println!("farfield demo — free-space Poisson: {}, N = {N} ({N}^3 nodes, doubled grid {}^3)", src.describe(), 2 * N);
    let mut obj = Map::new();
    obj.insert("source".into(), json!(src.name()));
    obj.insert("n".into(), json!(N));
    obj.insert("energy_exact".into(), json!(tc.energy));
    let mut threads = 0;
    for m in MethodArg::ALL {
        let r = solve(m, &tc, &opts, 1)?;
        threads = r.threads;
        println!("{:20} rel L2 error {:.2e}, energy rel error {:.2e}; plan {:.3} s, solve {:.3} s",
                 format!("{}:", m.label()), r.rel_error, r.energy_rel_error, r.plan_s, r.best_solve());
        obj.insert(m.name().replace('-', "_"), json!({
            "rel_error": r.rel_error,
            "energy_rel_error": r.energy_rel_error,
            "plan_s": r.plan_s,
            "solve_s": r.best_solve(),
        }));
    }
    let wall = t0.elapsed().as_secs_f64();
    println!("(Hockney–Eastwood is second order; Vico–Greengard is spectral and at rounding here. \
              `farfield poisson --convergence` sweeps N.)");
    println!("section:    {wall:.3} s wall, {threads} threads");
    obj.insert("threads".into(), json!(threads));
    obj.insert("wall_s".into(), json!(wall));
    summary.insert("poisson".into(), Value::Object(obj));
    Ok(())
}
