//! FMM error against the expansion order: the measurements behind the order rule.
//!
//! ```text
//! cargo bench --bench fmm_order                          # open: uniform and Plummer, N = 20000
//! cargo bench --bench fmm_order -- --periodic            # periodic unit box, uniform, N = 20000
//! cargo bench --bench fmm_order -- --n 5000 --orders 4,8,12
//! ```
//!
//! Arguments (all optional):
//! * `--n N` — particles (default 20000);
//! * `--orders P,P,…` — expansion orders (default 4,6,8,…,24);
//! * `--periodic` — the periodic cubic box `[0, 1)³` instead of open boundaries;
//! * `--targets T` — open: particles at which the direct sum is evaluated (default 300);
//! * `--ref-order P` — periodic: order of the reference run (default 26).
//!
//! Open (`Boundary::Open`): a uniform set in the unit cube (seed 20) and a Plummer sphere
//! (seed 21), the depth from the cost model; errors against direct sums at T particles.
//! Periodic: a uniform neutral set (seed 22) against a run at the reference order, every order
//! at the reference run's depth. All cores. One line per set and order: the depth, the
//! relative l2 errors of the potential and of the field, the execute time (and the stage
//! times, open).
//!
//! The errors calibrate the order rule `farfield::fmm::params::order_for_tol`
//! (`src/fmm/params.rs`: `p = ⌈3.23·d − 4.2⌉`, `d = log10(1/tol)`, aiming at half the tolerance
//! where the error behaves like `10^{−(0.31 p + 1.66)}`) together with the distance-dependent
//! M2L orders of `params::m2l_order`; a change to either is checked here on both boundaries.

mod common;

use common::fmm::{direct_at, pick, plummer, rng, run, targets, uniform};
use common::{rel_l2, Args};
use farfield::fmm::{Boundary, FmmOpts};

fn main() {
    let mut a = Args::parse(include_str!("fmm_order.rs"), "--n 2000 --orders 4,8");
    let n: usize = a.get("n", 20_000);
    let orders: Vec<usize> = a.list("orders", &(2..=12).map(|k| 2 * k).collect::<Vec<_>>());
    let periodic = a.flag("periodic");
    let ntargets: usize = a.get("targets", 300);
    let ref_order: usize = a.get("ref-order", 26);
    a.finish();
    if periodic {
        let (xyz, mut q) = uniform(&mut rng(22), n);
        let m = q.iter().sum::<f64>() / n as f64;
        q.iter_mut().for_each(|v| *v -= m);
        let boundary = Boundary::Periodic { side: 1.0 };
        let (pr, fr, _, st) = run(boundary, &xyz, &q, 1e-3, &FmmOpts { order: ref_order, ..Default::default() });
        println!("reference: p = {ref_order}, D = {:?}", st.depth);
        for p in orders {
            let o = FmmOpts { order: p, depth: st.depth, ..Default::default() };
            let (phi, field, _, st) = run(boundary, &xyz, &q, 1e-3, &o);
            println!("periodic n={n} p={p:2} D={:?}: phi {:.2e} field {:.2e}  t={:.3}s", st.depth, rel_l2(&phi, &pr), rel_l2(&field, &fr), st.times.total);
        }
        return;
    }
    for (name, (xyz, q)) in [("uniform", uniform(&mut rng(20), n)), ("plummer", plummer(&mut rng(21), n))] {
        let idx = targets(n, ntargets);
        let (pd, fd) = direct_at(&xyz, &q, &idx);
        for &p in &orders {
            let (phi, field, _, st) = run(Boundary::Open, &xyz, &q, 1e-3, &FmmOpts { order: p, ..Default::default() });
            let (ep, ef) = (rel_l2(&pick(&phi, &idx, 1), &pd), rel_l2(&pick(&field, &idx, 3), &fd));
            println!("{name} n={n} p={p:2} D={:?}: phi {ep:.2e} field {ef:.2e}  t={:.3}s {:?}", st.depth, st.times.total, st.times);
        }
    }
}
