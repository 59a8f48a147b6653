//! `farfield poisson --mpi`: the distributed solver (`farfield::poisson::dist`) under
//! `mpirun -np K`, on the same exact test problems as the single-process command.
//!
//! Every rank samples the test problem and keeps its slab of planes; rank 0 first times the
//! single-process plan alone (the others wait), then all ranks time the distributed plan.
//! Printed: per-rank slab, plan and solve times and plan memory; the solve time (slowest
//! rank), the error against the exact solution, and the strong-scaling efficiency
//! `T_1 / (K·T_K)` with `T_1` the single-process solve of the same run.

use super::{solve, MethodArg, PoissonArgs, SourceArg};
use crate::CliResult;
use farfield::mpi::{Comm, Op};
use farfield::poisson::dist::DistPoissonPlan;
use farfield::poisson::PoissonOpts;
use mpi::traits::*;
use std::time::Instant;

/// Runs `farfield poisson --mpi` (one process of an `mpirun` job).
pub fn run(a: &PoissonArgs, method: MethodArg, n: usize, source: SourceArg, opts: &PoissonOpts) -> CliResult<()> {
    let universe = mpi::initialize().ok_or("MPI was initialised already")?;
    let world = universe.world();
    let e = |e: farfield::Error| format!("Poisson --mpi ({}): {e}", method.name());
    let comm = Comm::duplicate(&world).map_err(e)?;
    let (rank, k) = (comm.rank(), comm.size());
    let reps = a.reps as usize;
    let tc = source.make(n);

    // T_1: the single-process plan on rank 0 alone
    let t1 = if rank == 0 { solve(method, &tc, opts, reps)?.best_solve() } else { 0.0 };
    world.barrier();
    let mut t1v = [t1];
    comm.allreduce_f64(&mut t1v, Op::Max).map_err(e)?;

    let t0 = Instant::now();
    let mut plan = DistPoissonPlan::new(Comm::duplicate(&world).map_err(e)?, method.method(), &tc.dims(), &tc.spacing(), opts)
        .map_err(e)?;
    let plan_s = t0.elapsed().as_secs_f64();
    let (start, count) = plan.local_slab();
    let lo = start * n * n;
    let npl = plan.local_npts();
    let rho = &tc.rho[lo..lo + npl];
    let mut phi = vec![0.0; npl];
    let mut best = f64::INFINITY;
    let mut energy = 0.0;
    for _ in 0..reps.max(1) {
        world.barrier();
        let t0 = Instant::now();
        plan.execute_into(rho, &mut phi, None, Some(&mut energy)).map_err(e)?;
        best = best.min(t0.elapsed().as_secs_f64());
    }
    // error against the exact potential, over all ranks
    let exact = &tc.exact[lo..lo + npl];
    let mut sums = [
        phi.iter().zip(exact).map(|(p, x)| (p - x) * (p - x)).sum::<f64>(),
        exact.iter().map(|x| x * x).sum::<f64>(),
    ];
    comm.allreduce_f64(&mut sums, Op::Sum).map_err(e)?;
    let rel = (sums[0] / sums[1]).sqrt();
    let mine = [start as i64, count as i64, (plan_s * 1e9) as i64, (best * 1e9) as i64, plan.memory().plan_bytes as i64];
    let all = comm.allgather_i64(&mine).map_err(e)?;
    if rank == 0 {
        println!(
            "farfield poisson --mpi: {}, {} (h = {:.6}), N = {n}, {k} ranks × {} threads",
            method.label(), source.describe(), tc.h,
            farfield::threads::Threads::new(opts.nthreads).map(|t| t.count()).unwrap_or(1)
        );
        let mut tk = 0f64;
        for (r, v) in all.chunks(5).enumerate() {
            let solve_s = v[3] as f64 * 1e-9;
            tk = tk.max(solve_s);
            println!(
                "rank {r}: z-planes {}..{} ({} planes), plan {:.4} s, solve {:.4} s, plan memory {:.1} MB",
                v[0], v[0] + v[1], v[1], v[2] as f64 * 1e-9, solve_s, v[4] as f64 / 1e6
            );
        }
        let t1 = t1v[0];
        println!("solve:     {tk:.4} s on {k} ranks (slowest rank, best of {reps}); single process {t1:.4} s");
        println!("scaling:   speed-up {:.2}, strong-scaling efficiency T_1/(K·T_K) = {:.2}", t1 / tk, t1 / (k as f64 * tk));
        println!("accuracy:  relative L2 error of φ {rel:.3e}; energy {energy:.12e} (exact {:.12e})", tc.energy);
        if a.json {
            println!(
                "{}",
                serde_json::json!({
                    "command": "poisson", "mpi": true, "method": method.name(), "n": n, "ranks": k,
                    "solve_s": tk, "single_process_solve_s": t1, "efficiency": t1 / (k as f64 * tk),
                    "rel_error": rel, "energy": energy,
                    "per_rank": all.chunks(5).map(|v| serde_json::json!({
                        "start": v[0], "count": v[1], "plan_s": v[2] as f64 * 1e-9, "solve_s": v[3] as f64 * 1e-9,
                        "plan_bytes": v[4]})).collect::<Vec<_>>(),
                })
            );
        }
    }
    Ok(())
}
