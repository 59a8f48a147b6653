//! Time and error of the CPU FMM on a large uniform set (open boundaries).
//!
//! ```text
//! cargo bench --bench fmm_uniform                        # N = 10⁶, tol 1e-6, 2 threads
//! cargo bench --bench fmm_uniform -- --n 2e5 --tol 1e-9 --threads 0
//! cargo bench --bench fmm_uniform -- --order 16 --depth 5
//! ```
//!
//! Arguments (all optional):
//! * `--n N` — particles uniform in the unit cube, charges in `[−½, ½)` (default 10⁶, seed 30);
//! * `--tol T` — tolerance (default 1e-6);
//! * `--threads K` — threads, 0 = all cores (default 2);
//! * `--order P` — expansion order, 0 = from the tolerance (default 0);
//! * `--depth D` — depth of the uniform tree (default: from the cost model);
//! * `--targets T` — particles at which the direct sum checks the result (default 200).
//!
//! The plan runs with `debug = 1`, so each of its two executes (the first warms the caches and
//! the per-order tables) prints its parameters and stage times to stderr. Then one line: the
//! order, depth and leaves, the stage times and total of the second execute, and the relative
//! l2 errors of the potential and the field at the T targets against direct sums.
//!
//! A record, not a constant: it shows what the order rule (`params::order_for_tol`) and the
//! depth's cost model (`params::choose_depth`, `src/fmm/params.rs`) give at this size, and where
//! the time goes.

mod common;

use common::fmm::{direct_at, pick, rng, targets, uniform};
use common::{rel_l2, Args};
use farfield::fmm::{Boundary, CpuFmm, FmmOpts};

fn main() {
    let mut a = Args::parse(include_str!("fmm_uniform.rs"), "--n 20000 --targets 50");
    let n: usize = a.get("n", 1_000_000);
    let tol: f64 = a.get("tol", 1e-6);
    let nthreads: usize = a.get("threads", 2);
    let order: usize = a.get("order", 0);
    let depth: Option<usize> = a.opt("depth");
    let ntargets: usize = a.get("targets", 200);
    a.finish();
    let (xyz, q) = uniform(&mut rng(30), n);
    let o = FmmOpts { nthreads, depth, order, debug: 1, ..Default::default() };
    let mut plan = CpuFmm::new(Boundary::Open, tol, &o).expect("FMM plan");
    let mut phi = vec![0.0; n];
    let mut field = vec![0.0; 3 * n];
    for _ in 0..2 {
        plan.execute(&xyz, &q, Some(&mut phi), Some(&mut field)).expect("FMM execute");
    }
    let st = plan.stats();
    let idx = targets(n, ntargets);
    let (pd, fd) = direct_at(&xyz, &q, &idx);
    println!(
        "n = {n}, tol = {tol:e}, {} threads: p = {} D = {:?} leaves = {}; {:.3} s {:?}; phi err {:.2e}, field err {:.2e}",
        st.nthreads, st.order, st.depth, st.nleaves, st.times.total, st.times,
        rel_l2(&pick(&phi, &idx, 1), &pd), rel_l2(&pick(&field, &idx, 3), &fd)
    );
}
