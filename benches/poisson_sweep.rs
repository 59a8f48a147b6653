//! Accuracy sweep of the free-space Poisson solvers on the exact test problems: the
//! measurements behind the accuracy table of the `poisson` module.
//!
//! ```text
//! cargo bench --bench poisson_sweep                      # every method, N up to 128
//! cargo bench --bench poisson_sweep -- --max-n 32 --methods hockney,vico-dct
//! ```
//!
//! Arguments (all optional):
//! * `--methods M,M,…` — `hockney`, `vico`, `vico-dct` (default all three);
//! * `--max-n N` — the largest grid per axis (default 128; Vico with its 4N precomputation grid
//!   stops at 64);
//! * `--threads K` — threads of the field and energy solves, 0 = all cores (default 2; the
//!   potential-only solves run on one thread).
//!
//! Per method (`farfield::poisson::testcases`, n³ cell-centred nodes): the relative L2 error
//! of φ on the Gaussian (σ = 0.05 in the unit cube) for N = 8, 16, 24, 32, 48, 64, 96, 128 and
//! Hockney's fitted order over N ≥ 16; on the uniform ball for N = 16, 32, 64; the relative
//! L2 error of the field `E = −∇φ` and the relative energy error on the Gaussian for N = 16,
//! 24, 32, 48, 64. Where timings matter instead: `cargo bench --bench poisson`.
//!
//! The figures are the accuracy table in the module docs of `farfield::poisson`
//! (`src/poisson/mod.rs`, "Accuracy") and the orders the unit tests assert; rerun after a
//! change to a Green's function (`src/poisson/green.rs`) and update the table.
//! `farfield poisson --convergence` draws the potential's errors for larger N as a plot.

mod common;

use common::{rel_l2, Args};
use farfield::poisson::testcases::{self, fitted_order, TestCase};
use farfield::poisson::{Method, PoissonOpts, PoissonPlan};

/// φ (and with `field` the field and the energy) of the test case `tc` by `method`.
fn solve(method: Method, tc: &TestCase, nthreads: usize, field: bool) -> (Vec<f64>, Vec<f64>, f64) {
    let mut plan = PoissonPlan::new(method, &tc.dims(), &tc.spacing(), &PoissonOpts { nthreads, ..Default::default() }).expect("plan");
    let mut phi = vec![0.0; tc.rho.len()];
    let mut e = vec![0.0; if field { 3 * tc.rho.len() } else { 0 }];
    let u = plan.execute(&tc.rho, &mut phi, field.then_some(&mut e[..])).expect("execute");
    (phi, e, u)
}

fn fmt_errs(ns: &[usize], errs: &[f64]) -> String {
    ns.iter().zip(errs).map(|(n, e)| format!("N={n}: {e:.3e}")).collect::<Vec<_>>().join(", ")
}

fn main() {
    let mut a = Args::parse(include_str!("poisson_sweep.rs"), "--max-n 16");
    let names: Vec<String> = a.list("methods", &["hockney".to_string(), "vico".to_string(), "vico-dct".to_string()]);
    let max_n: usize = a.get("max-n", 128);
    let nthreads: usize = a.get("threads", 2);
    let methods: Vec<Method> = names
        .iter()
        .map(|m| match m.as_str() {
            "hockney" => Method::Hockney,
            "vico" => Method::Vico,
            "vico-dct" => Method::VicoDct,
            _ => a.fail(&format!("--methods: {m} is not hockney, vico or vico-dct")),
        })
        .collect();
    a.finish();
    let upto = |ns: &[usize], cap: usize| -> Vec<usize> { ns.iter().copied().filter(|&n| n <= cap.min(max_n)).collect() };
    for m in methods {
        let ns = upto(&[8, 16, 24, 32, 48, 64, 96, 128], if m == Method::Vico { 64 } else { usize::MAX });
        let errs: Vec<f64> = ns.iter().map(|&n| testcases::gaussian(n)).map(|tc| tc.rel_error(&solve(m, &tc, 1, false).0)).collect();
        println!("Gaussian {m:?}: {}", fmt_errs(&ns, &errs));
        let from16 = ns.iter().position(|&n| n >= 16).unwrap_or(ns.len());
        if m == Method::Hockney && ns.len() - from16 >= 2 {
            println!("  slope {}..{}: {:.3}", ns[from16], ns[ns.len() - 1], fitted_order(&ns[from16..], &errs[from16..]));
        }
        let ns = upto(&[16, 32, 64], usize::MAX);
        let errs: Vec<f64> = ns.iter().map(|&n| testcases::uniform_ball(n)).map(|tc| tc.rel_error(&solve(m, &tc, 1, false).0)).collect();
        println!("Sphere {m:?}: {}", fmt_errs(&ns, &errs));
        let ns = upto(&[16, 24, 32, 48, 64], usize::MAX);
        let fe: Vec<(f64, f64)> = ns
            .iter()
            .map(|&n| {
                let tc = testcases::gaussian(n);
                let (_, e, u) = solve(m, &tc, nthreads, true);
                (rel_l2(&e, &testcases::gaussian_field(n)), ((u - tc.energy) / tc.energy).abs())
            })
            .collect();
        println!("Field {m:?}: {}", fmt_errs(&ns, &fe.iter().map(|x| x.0).collect::<Vec<_>>()));
        println!("Energy {m:?}: {}", fmt_errs(&ns, &fe.iter().map(|x| x.1).collect::<Vec<_>>()));
    }
}
