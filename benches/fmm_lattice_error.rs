//! Errors of the periodic FMM on NaCl lattices against the Madelung constant, by shift, depth
//! and order: the experiment behind the choice of the periodic tree's origin.
//!
//! ```text
//! cargo bench --bench fmm_lattice_error                  # k = 1 (8 ions), the default table
//! cargo bench --bench fmm_lattice_error -- --k 2 --shifts 0,0.25 --depths 2 --orders 20,30
//! ```
//!
//! Arguments (all optional):
//! * `--k K` — NaCl cells per half side: `(2K)³` ions at the integer sites of the box of side
//!   `2K`, charges `±1` by the parity of `i + j + l` (default 1);
//! * `--shifts S,S,…` — every ion moved by `(S, S, S)` (default
//!   0,1e-12,-1e-12,1e-6,0.01,0.1,0.3,0.5);
//! * `--depths D,D,…` — tree depths (default 1,2,3);
//! * `--orders P,P,…` — expansion orders (default 10,20,30,40).
//!
//! One line per shift and depth, per order the relative error of the energy against
//! `−N M/2` and the RMS relative error of the potentials against `∓M` (`M` the NaCl Madelung
//! constant 1.747564594633182, nearest-neighbour distance 1).
//!
//! It measures the effect of the tree's origin, chosen by `fmm::tree::periodic_origin`
//! (`src/fmm/tree.rs`), which keeps the ions of a lattice commensurate with the box grid off
//! the box corners. With the origin at a lattice site (before that choice) the error did not
//! change between the shifts 0, ±1e−12 and 1e−6 (no wrapping or box-assignment
//! discontinuity), fell smoothly as the ions left the corners (0.01: 3×, 0.1: 10⁶× smaller at
//! p = 30), vanished with the ions at the level-1 centres (shift ½ at D = 1) and came back at
//! D = 2 (there ½ is a corner again), and decayed like 0.74^p — the
//! ((√3/2 + √3/2)/2)^{2p} = 0.75^p of corner-to-corner M2L. Rerun it after a change to the
//! origin's choice; the unit test `nacl_lattices_at_every_tolerance` checks that the lattices
//! reach every tolerance with the automatic order and depth.

mod common;

use common::fmm::run;
use common::Args;
use farfield::fmm::{Boundary, FmmOpts};

/// NaCl Madelung constant.
const MADELUNG: f64 = 1.747_564_594_633_182;

/// `(2k)³` ions at the integer sites shifted by `shift`, charges `±1`; and the box side `2k`.
fn nacl_lattice(k: usize, shift: [f64; 3]) -> (Vec<f64>, Vec<f64>, f64) {
    let (mut xyz, mut q) = (Vec::new(), Vec::new());
    for i in 0..2 * k {
        for j in 0..2 * k {
            for l in 0..2 * k {
                xyz.extend([i as f64 + shift[0], j as f64 + shift[1], l as f64 + shift[2]]);
                q.push(if (i + j + l) % 2 == 0 { 1.0 } else { -1.0 });
            }
        }
    }
    (xyz, q, 2.0 * k as f64)
}

fn main() {
    let mut a = Args::parse(include_str!("fmm_lattice_error.rs"), "--shifts 0,0.1 --depths 1 --orders 10");
    let k: usize = a.get("k", 1);
    let shifts: Vec<f64> = a.list("shifts", &[0.0, 1e-12, -1e-12, 1e-6, 0.01, 0.1, 0.3, 0.5]);
    let depths: Vec<usize> = a.list("depths", &[1, 2, 3]);
    let orders: Vec<usize> = a.list("orders", &[10, 20, 30, 40]);
    a.finish();
    let m = MADELUNG;
    for &s in &shifts {
        let (xyz, q, l) = nacl_lattice(k, [s, s, s]);
        let n = q.len();
        let ue = -(n as f64) / 2.0 * m;
        for &d in &depths {
            let mut line = format!("k {k} s {s:e} D {d}:");
            for &p in &orders {
                let o = FmmOpts { depth: Some(d), order: p, ..Default::default() };
                let (phi, _, u, _) = run(Boundary::Periodic { side: l }, &xyz, &q, 1e-3, &o);
                let ep = (0..n).map(|i| (phi[i] * q[i] + m).powi(2)).sum::<f64>().sqrt() / (m * (n as f64).sqrt());
                line += &format!("  p{p}: U {:.1e} phi {:.1e}", (u - ue).abs() / ue.abs(), ep);
            }
            println!("{line}");
        }
    }
}
