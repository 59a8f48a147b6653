//! `farfield ewald --mpi`: the distributed SPME (`farfield::ewald::dist`) under
//! `mpirun -np K`, on the same systems as the single-process command.
//!
//! Every rank reads the system and passes the block of charges `i·K/N == rank` (a caller's
//! decomposition in file order; the library routes the charges to its mesh slabs itself);
//! rank 0 first times the single-process plan alone (the others wait), then all ranks time the
//! distributed plan. Printed: per-rank mesh slab, charges, plan and evaluation times and mesh
//! memory; the evaluation time (slowest rank), the energy against the single-process energy,
//! and the strong-scaling efficiency `T_1 / (K·T_K)` with `T_1` the single-process evaluation
//! of the same run.

use super::{evaluate_with, EwaldArgs, KJ_PER_MOL};
use indicatif::ProgressBar;
use crate::system::System;
use crate::CliResult;
use farfield::ewald::dist::DistEwaldPlan;
use farfield::ewald::{EwaldOpts, Method};
use farfield::mpi::{Comm, Op};
use mpi::traits::*;
use std::time::Instant;

/// Runs `farfield ewald --mpi` (one process of an `mpirun` job).
pub fn run(args: &EwaldArgs, sys: &System, opts: &EwaldOpts) -> CliResult<()> {
    if args.method.method() != Method::Spme {
        return Err(format!("--mpi: the distributed plan implements SPME only (--method spme), not {}", args.method.name()));
    }
    let universe = mpi::initialize().ok_or("MPI was initialised already")?;
    let world = universe.world();
    let e = |e: farfield::Error| format!("ewald --mpi: {e}");
    let comm = Comm::duplicate(&world).map_err(e)?;
    let (rank, k) = (comm.rank(), comm.size());
    let cell = sys.cell.ok_or_else(|| format!("{}: no periodic cell", sys.name))?;
    let n = sys.n();

    // T_1 and the reference energy: the single-process plan on rank 0 alone
    let mut t1 = [0.0, 0.0];
    let mut serial_times = Vec::new();
    if rank == 0 {
        let r = evaluate_with(sys, Method::Spme, args.tol, opts, args.repeats, args.virial, &ProgressBar::hidden(), "")?;
        t1 = [r.time_s, r.energy];
        serial_times = r.times;
    }
    world.barrier();
    comm.allreduce_f64(&mut t1, Op::Sum).map_err(e)?;

    let own: Vec<usize> = (0..n).filter(|i| i * k / n == rank).collect();
    let xyz: Vec<f64> = own.iter().flat_map(|&i| sys.xyz[3 * i..3 * i + 3].to_vec()).collect();
    let q: Vec<f64> = own.iter().map(|&i| sys.q[i]).collect();
    let t = Instant::now();
    let mut plan = DistEwaldPlan::new(Comm::duplicate(&world).map_err(e)?, Method::Spme, &cell, own.len().max(1), args.tol, opts)
        .map_err(e)?;
    let plan_s = t.elapsed().as_secs_f64();
    let mut phi = vec![0.0; own.len()];
    let mut field = vec![0.0; 3 * own.len()];
    let mut energy = plan.execute(&xyz, &q, Some(&mut phi), Some(&mut field), args.virial).map_err(e)?.energy;
    let mut best = f64::INFINITY;
    let mut times = Vec::with_capacity(args.repeats);
    for _ in 0..args.repeats {
        world.barrier();
        let t = Instant::now();
        energy = plan.execute(&xyz, &q, Some(&mut phi), Some(&mut field), args.virial).map_err(e)?.energy;
        let mut dt = [t.elapsed().as_secs_f64()];
        comm.allreduce_f64(&mut dt, Op::Max).map_err(e)?;
        best = best.min(dt[0]);
        times.push(dt[0]);
    }
    let (start, count) = plan.local_slab();
    let p = plan.params().clone();
    let mine = [start as i64, count as i64, own.len() as i64, (plan_s * 1e9) as i64, (p.real_s * 1e9) as i64,
                (p.kspace_s * 1e9) as i64, plan.mesh_bytes() as i64];
    let all = comm.allgather_i64(&mine).map_err(e)?;
    if rank == 0 {
        let (t1, u1) = (t1[0], t1[1]);
        println!("farfield ewald --mpi — {} ({n} charges), SPME tol {:e}, {k} ranks × {} threads", sys.name, args.tol,
                 farfield::threads::Threads::new(opts.nthreads).map(|t| t.count()).unwrap_or(1));
        println!("parameters: xi = {:.6} 1/nm, r_c = {:.6} nm, grid {}x{}x{}, B-spline order {}",
                 p.xi, p.rc, p.grid[0], p.grid[1], p.grid[2], p.order);
        for (r, v) in all.chunks(7).enumerate() {
            println!("rank {r}: z-planes {}..{} ({} planes), {} charges passed, plan {:.4} s, last evaluation real {:.4} s + \
                      k-space {:.4} s, mesh {:.1} MB",
                     v[0], v[0] + v[1], v[1], v[2], v[3] as f64 * 1e-9, v[4] as f64 * 1e-9, v[5] as f64 * 1e-9, v[6] as f64 / 1e6);
        }
        println!("time:       {best:.4} s per evaluation on {k} ranks (slowest rank, fastest of {}); single process {t1:.4} s",
                 args.repeats);
        println!("scaling:    speed-up {:.2}, strong-scaling efficiency T_1/(K·T_K) = {:.2}", t1 / best, t1 / (k as f64 * best));
        println!("energy:     {energy:.10e} e^2/nm = {:.6} kJ/mol; single process {u1:.10e} (rel. difference {:.1e})",
                 energy * KJ_PER_MOL, (energy - u1).abs() / u1.abs());
        if args.json {
            println!(
                "{}",
                serde_json::json!({
                    "command": "ewald", "mpi": true, "system": sys.name, "n": n, "ranks": k, "tol": args.tol,
                    "threads_per_rank": opts.nthreads, "virial": args.virial,
                    "params": {"xi": p.xi, "rc": p.rc, "grid": p.grid, "order": p.order},
                    "time_s": best, "single_process_time_s": t1, "efficiency": t1 / (k as f64 * best),
                    "times_s": times, "single_process_times_s": serial_times,
                    "energy": energy, "single_process_energy": u1,
                    "per_rank": all.chunks(7).map(|v| serde_json::json!({
                        "start": v[0], "count": v[1], "charges": v[2], "plan_s": v[3] as f64 * 1e-9,
                        "real_s": v[4] as f64 * 1e-9, "kspace_s": v[5] as f64 * 1e-9, "mesh_bytes": v[6]})).collect::<Vec<_>>(),
                })
            );
        }
    }
    Ok(())
}
