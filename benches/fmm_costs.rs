//! Throughput of the FMM's operators in units of one P2P pair: the constants of the depth and
//! tree cost models.
//!
//! ```text
//! cargo bench --bench fmm_costs                          # all operators, default orders
//! cargo bench --bench fmm_costs -- --m2l-orders 16 --point-orders 16 --reps 50
//! ```
//!
//! Arguments (all optional):
//! * `--m2l-orders P,P,…` — orders of the M2L measurement (default 6,10,16,25);
//! * `--point-orders P,P,…` — orders of the M2P and P2L measurement (default 6,10,16,21,30);
//! * `--reps R` — repetitions of each timed call (default 20).
//!
//! Thread CPU time (one thread, the AVX2 paths where the CPU has them) of:
//! * P2P (`fmm::p2p::p2p`): 512 targets against 4096 sources in a cube, potential and field —
//!   the unit, ns per pair;
//! * M2L (`fmm::m2l::m2l_tile`): one tile of target boxes against the 189 offsets of octant 3,
//!   random multipoles — µs per tile entry, ns per translation (one lane), and that in P2P
//!   pairs divided by `(p+1)³`: the constant `M2L_COST_C` of `params::m2l_cost`;
//! * M2P (`fmm::m2p::m2p`, one box's multipole at 4096 target particles, potential and field)
//!   and P2L (`fmm::m2p::p2l`, 4096 source particles into one local expansion): ns per
//!   particle, that in P2P pairs, and divided by `(p+1)²`: the constants `M2P_COST_C` of
//!   `params::m2p_cost` and `P2L_COST_C` of `params::p2l_cost`.
//!
//! The constants live in `src/fmm/params.rs`: `m2l_cost` weighs M2L against P2P in the choice
//! of the depth (`choose_depth`), `m2p_cost` and `p2l_cost` decide between the W/X lists and
//! P2P in the adaptive tree. Their values there are the ratios printed here on the AVX2 CPUs
//! they were measured on; update them when a kernel change moves a ratio.

mod common;

use common::fmm::{cluster, rng};
use common::{thread_cpu, Args};
use farfield::fmm::harmonics::ncoef;
use farfield::fmm::{lists, m2l, m2p, p2p, rotation};
use rand::Rng;

fn main() {
    let mut a = Args::parse(include_str!("fmm_costs.rs"), "--m2l-orders 6 --point-orders 6 --reps 2");
    let m2l_orders: Vec<usize> = a.list("m2l-orders", &[6, 10, 16, 25]);
    let point_orders: Vec<usize> = a.list("point-orders", &[6, 10, 16, 21, 30]);
    let reps: usize = a.get("reps", 20);
    a.finish();
    let reps = reps.max(1);

    // P2P: the unit
    let mut r = rng(40);
    let n = 4096;
    let nt = 512;
    let ([x, y, z], q) = cluster(&mut r, n, [0.0; 3], 1.0);
    let pt = p2p::Particles { x: &x, y: &y, z: &z, q: &q };
    let srcs = [p2p::SourceRange { start: 0, end: n as u32, shift: [0.0; 3] }];
    let (mut ph, mut ex, mut ey, mut ez) = (vec![0.0; nt], vec![0.0; nt], vec![0.0; nt], vec![0.0; nt]);
    let t = thread_cpu();
    for _ in 0..reps {
        p2p::p2p(pt, 0, nt, &srcs, &mut ph, Some((&mut ex, &mut ey, &mut ez)));
    }
    let pair = (thread_cpu() - t) / (reps * nt * n) as f64;
    println!("P2P: {:.2} ns per pair (potential + field)", pair * 1e9);

    for p in m2l_orders {
        let tab = rotation::M2lTables::new(p);
        let nsrc = 512;
        let mpole: Vec<f64> = (0..nsrc * 2 * ncoef(p)).map(|_| r.gen::<f64>() - 0.5).collect();
        let entries: Vec<m2l::M2lEntry> = lists::m2l_offsets(3)
            .iter()
            .map(|v| m2l::M2lEntry { dir: rotation::dir_index(*v) as u16, src: std::array::from_fn(|_| r.gen_range(0..nsrc as u32)) })
            .collect();
        let lanes = entries[0].src.len();
        let mut s = m2l::M2lScratch::new(p);
        let t = thread_cpu();
        for _ in 0..reps {
            m2l::m2l_tile(&tab, &entries, &mpole, &mut s);
        }
        let dt = (thread_cpu() - t) / (reps * entries.len()) as f64;
        let per = dt / lanes as f64;
        println!(
            "M2L p = {p:2}: {:.2} us per tile entry ({lanes} lanes), {:.0} ns per translation = {:.0} pairs = {:.3} (p+1)³",
            dt * 1e6, per * 1e9, per / pair, per / pair / ((p + 1) as f64).powi(3)
        );
    }

    let mut r = rng(5);
    let ([x, y, z], q) = cluster(&mut r, n, [3.0; 3], 0.5);
    let (mut ph, mut ex, mut ey, mut ez) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    for p in point_orders {
        let om: Vec<f64> = (0..2 * ncoef(p)).map(|_| r.gen::<f64>() - 0.5).collect();
        let mut s = m2p::PointScratch::new(p);
        let mut co = m2p::M2pCoefs::new(p);
        co.set(p, &om, true);
        let t = thread_cpu();
        for _ in 0..reps {
            m2p::m2p(p, &co, [0.0; 3], 1.0, &x, &y, &z, &mut ph, Some((&mut ex, &mut ey, &mut ez)), &mut s);
        }
        let m2p_t = (thread_cpu() - t) / (reps * n) as f64;
        let mut mu = vec![0.0; 2 * ncoef(p)];
        let t = thread_cpu();
        for _ in 0..reps {
            m2p::p2l(p, &x, &y, &z, &q, [0.0; 3], 1.0, &mut mu, &mut s);
        }
        let p2l_t = (thread_cpu() - t) / (reps * n) as f64;
        let q2 = ((p + 1) * (p + 1)) as f64;
        println!(
            "M2P/P2L p = {p:2}: M2P {:.0} ns = {:.0} pairs = {:.2} (p+1)²; P2L {:.0} ns = {:.0} pairs = {:.2} (p+1)²",
            m2p_t * 1e9, m2p_t / pair, m2p_t / pair / q2, p2l_t * 1e9, p2l_t / pair, p2l_t / pair / q2
        );
    }
}
