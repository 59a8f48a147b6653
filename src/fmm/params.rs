//! Parameter selection: the expansion order `p` from the tolerance, the depth `D` from the
//! particle distribution (balancing near and far field). Both can be overridden in the options.

use super::tree::{occupancy, KEY_DEPTH};

/// Largest supported expansion order.
pub const MAX_ORDER: usize = 30;
/// Largest supported depth.
pub const MAX_DEPTH: usize = KEY_DEPTH;

/// Expansion order for a relative tolerance `tol` (of the potential and of the field, in the
/// relative l2 norm over all particles).
///
/// With one well-separated layer the worst-case M2L truncation error decays like
/// `(√3/(4 − √3))^{p+1} ≈ 0.76^{p+1}` (source and target balls of radius `√3/2 h` at distance
/// `2h`), far too pessimistic on average. The rule used here, `p = ⌈a·log10(1/tol) + b⌉`, was
/// calibrated by measuring the l2 error of the field on uniform and Plummer distributions (the
/// field error exceeds the potential error; see `tests.rs`, `calibrate_order`), with a margin.
pub fn order_for_tol(tol: f64) -> usize {
    let digits = -tol.log10();
    let p = (A_ORDER * digits + B_ORDER).ceil() as usize;
    p.clamp(1, MAX_ORDER)
}

const A_ORDER: f64 = 1.8;
const B_ORDER: f64 = 0.0;

/// Relative cost of one M2L translation (rotation-based, O(p³)) in units of one P2P pair
/// interaction (potential + field), measured on AVX2 (see `tests.rs`, `calibrate_costs`).
pub fn m2l_cost(p: usize) -> f64 {
    let q = (p + 1) as f64;
    M2L_COST_C * q * q * q
}

const M2L_COST_C: f64 = 0.25;

/// Chooses the depth for particles with the given sorted keys (at `KEY_DEPTH`) by minimising
/// a cost model: `min(Σ_b n_b·(27 n_b), N²)` P2P pairs (per-box occupancy `n_b`) plus
/// `m2l_cost(p) · 189 · (occupied boxes at levels ≥ m2l_top)` — for uniform data this puts
/// ~30–60 particles in a leaf. `m2l_top` is 2 for open and 1 for periodic boundaries.
pub fn choose_depth(keys: &[u64], p: usize, m2l_top: usize) -> usize {
    let n = keys.len();
    if n <= 1 {
        return 0;
    }
    // occupancy of all levels up to a depth where leaves hold ~1 particle on average
    let dmax = MAX_DEPTH.min(((n as f64).ln() / 8f64.ln()).ceil() as usize + 6);
    let (nocc, s2) = occupancy(keys, dmax);
    let c = m2l_cost(p);
    let mut best = (f64::INFINITY, 0);
    let mut far = 0.0;
    for d in 0..=dmax {
        if d >= m2l_top {
            far += 189.0 * c * nocc[d] as f64;
        }
        let pairs = (27.0 * s2[d]).min(n as f64 * n as f64);
        let cost = pairs + far;
        if cost < best.0 {
            best = (cost, d);
        }
        if nocc[d] >= n {
            break;
        }
    }
    best.1
}
