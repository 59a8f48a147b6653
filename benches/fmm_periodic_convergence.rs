//! Convergence of the periodic FMM with the expansion order, against the classic Ewald sum.
//!
//! ```text
//! cargo bench --bench fmm_periodic_convergence           # N = 150 in the unit box, seed 51
//! cargo bench --bench fmm_periodic_convergence -- --n 300 --margin 0.2 --orders 20,30,40
//! ```
//!
//! Arguments (all optional):
//! * `--n N` — particles (default 150), charges uniform in `[−½, ½)` made neutral;
//! * `--seed S` — random seed (default 51);
//! * `--side L` — side of the periodic cubic box (default 1);
//! * `--margin F` — positions uniform in `[F·L, (1 − F)·L)³` (default 0: the whole box);
//! * `--depths D,D,…` — tree depths (default 0,1,2);
//! * `--orders P,P,…` — expansion orders (default 10,15,…,40).
//!
//! The reference is the library's classic Ewald sum (`farfield::ewald::CpuEwald` with
//! `Method::Direct`, tin-foil boundary like the FMM's periodic sum) at its tolerance floor
//! 1e-14: errors near 1e-14 are the reference's. One line per depth and order: the relative
//! l2 errors of the potential and of the field, and the particle with the largest field error
//! (index, position, error).
//!
//! A record of how far the periodic method converges (to ≈1e-14 with the order), the evidence
//! for the upper end of the order rule `params::order_for_tol` (`src/fmm/params.rs`) and for the
//! lattice operator (`src/fmm/periodic.rs`); the unit test `periodic_against_ewald` keeps
//! moderate tolerances and refers here for the convergence.

mod common;

use common::fmm::{rng, run};
use common::{rel_l2, Args};
use farfield::ewald::{CpuEwald, EwaldOpts, Method};
use farfield::fmm::{Boundary, FmmOpts};
use rand::Rng;

fn main() {
    let mut a = Args::parse(include_str!("fmm_periodic_convergence.rs"), "--n 40 --depths 1 --orders 10,20");
    let n: usize = a.get("n", 150);
    let seed: u64 = a.get("seed", 51);
    let l: f64 = a.get("side", 1.0);
    let lo: f64 = a.get("margin", 0.0);
    let depths: Vec<usize> = a.list("depths", &[0, 1, 2]);
    let orders: Vec<usize> = a.list("orders", &[10, 15, 20, 25, 30, 35, 40]);
    a.finish();
    let mut r = rng(seed);
    let xyz: Vec<f64> = (0..3 * n).map(|_| l * (lo + (1.0 - 2.0 * lo) * r.gen::<f64>())).collect();
    let mut q: Vec<f64> = (0..n).map(|_| r.gen::<f64>() - 0.5).collect();
    let m = q.iter().sum::<f64>() / n as f64;
    q.iter_mut().for_each(|v| *v -= m);
    let cell = [l, 0.0, 0.0, 0.0, l, 0.0, 0.0, 0.0, l];
    let mut ew = CpuEwald::new(Method::Direct, &cell, n, 1e-14, &EwaldOpts::default()).expect("Ewald plan");
    let (mut pe, mut fe) = (vec![0.0; n], vec![0.0; 3 * n]);
    ew.execute(&xyz, &q, Some(&mut pe), Some(&mut fe), false).expect("Ewald execute");
    println!("reference: classic Ewald sum, estimated relative error {:.1e}", ew.params().est_rel_err);
    for &depth in &depths {
        for &p in &orders {
            let o = FmmOpts { depth: Some(depth), order: p, ..Default::default() };
            let (phi, field, _, _) = run(Boundary::Periodic { side: l }, &xyz, &q, 1e-3, &o);
            let err = |i: usize| (0..3).map(|a| (field[3 * i + a] - fe[3 * i + a]).powi(2)).sum::<f64>().sqrt();
            let worst = (0..n).max_by(|&i, &j| err(i).total_cmp(&err(j))).unwrap_or(0);
            println!(
                "D = {depth} p = {p}: phi {:.2e} field {:.2e}; worst particle {worst} at {:?} err {:.2e}",
                rel_l2(&phi, &pe), rel_l2(&field, &fe), &xyz[3 * worst..3 * worst + 3], err(worst)
            );
        }
    }
}
