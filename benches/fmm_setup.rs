//! Set-up cost of the FMM's per-order tables: the M2L rotation tables and the periodic
//! lattice operator's level-1 tensors.
//!
//! ```text
//! cargo bench --bench fmm_setup                          # p = 6, 10, 16, 25, 32, 40
//! cargo bench --bench fmm_setup -- --orders 16,30
//! ```
//!
//! Arguments: `--orders P,P,…` — expansion orders (default 6,10,16,25,32,40).
//!
//! Per order, one line: thread CPU time of `fmm::rotation::M2lTables::new` (and the number of
//! y-rotation classes) and of `fmm::periodic::level1_lattice_tensors` (and the number of
//! tensors). A plan computes these once per order and process (`src/fmm/mod.rs`, the tables'
//! caches), so this is the first plan's extra cost at that order, not a constant of the
//! library; it tells whether a change to the tables' construction made plans slower to make.

mod common;

use common::{thread_cpu, Args};
use farfield::fmm::{periodic, rotation};

fn main() {
    let mut a = Args::parse(include_str!("fmm_setup.rs"), "--orders 6");
    let orders: Vec<usize> = a.list("orders", &[6, 10, 16, 25, 32, 40]);
    a.finish();
    for p in orders {
        let t = thread_cpu();
        let tab = rotation::M2lTables::new(p);
        let t1 = thread_cpu();
        let lat = periodic::level1_lattice_tensors(p);
        let t2 = thread_cpu();
        println!("p = {p:2}: M2L tables {:.3} s ({} classes), level-1 lattice tensors {:.3} s ({})", t1 - t, tab.yrot.len(), t2 - t1, lat.len());
    }
}
