//! Parameter selection: the expansion order `p` from the tolerance, the depth `D` from the
//! particle distribution (balancing near and far field). Both can be overridden in the options.

use super::tree::{occupancy, KEY_DEPTH};

/// Largest supported expansion order.
pub(crate) const MAX_ORDER: usize = 40;
/// Largest supported depth.
pub(crate) const MAX_DEPTH: usize = KEY_DEPTH;

/// Expansion order for a relative tolerance `tol` (of the potential and of the field, in the
/// relative l2 norm over all particles).
///
/// With one well-separated layer the worst-case M2L truncation error decays only like
/// `(√3/(4 − √3))^{p+1} ≈ 0.76^{p+1}` (source and target balls of radius `√3/2 h` at distance
/// `2h`), far too pessimistic on average. Measured (`cargo bench --bench fmm_order`: uniform
/// and Plummer distributions, open and periodic, N = 2·10⁴, the worse of potential and field
/// errors, with the distance-dependent M2L orders of [`m2l_order`]), the relative l2 error
/// behaves like `10^{−(0.31 p + 1.66)}` up to `p ≈ 16`; the rule `p = ⌈3.23·d − 4.2⌉`
/// (`d = log10(1/tol)`) aims at half the tolerance there. At higher orders the decay slows
/// to ≈ 0.18 decades per order (the worst-case geometry, particles near box corners, whose
/// error falls only like `(√3/(4 − √3))^p`, takes over; measured with `farfield fmm` on
/// uniform sets of 2·10⁵ and 10⁶ particles, fields checked at 1000–4000 random targets,
/// p = 16…31), and the relative field error on a 1000-target subset scatters by ≈ 3× between
/// samples (the norm of the field is dominated by the few targets with a very close
/// neighbour; with a few hundred particles one particle near a corner dominates it, and its
/// error oscillates with `p`). Beyond `d = 6` the rule therefore adds one order per 0.22
/// decades: `p = 16 + ⌈(d − 6)/0.22⌉`. Hence p = 6, 16, 21, 30 for tol = 10⁻³, 10⁻⁶, 10⁻⁷,
/// 10⁻⁹. Tolerances below ≈ 5·10⁻¹² are clamped to [`MAX_ORDER`] (and flagged: they may not
/// be reached).
pub fn order_for_tol(tol: f64) -> usize {
    let p = order_for_tol_unclamped(tol);
    p.min(MAX_ORDER as f64) as usize
}

/// The order the rule of [`order_for_tol`] asks for, before clamping to [`MAX_ORDER`].
pub fn order_for_tol_unclamped(tol: f64) -> f64 {
    let digits = -tol.log10();
    if digits <= 6.0 {
        (3.23 * digits - 4.2).ceil().max(1.0)
    } else {
        16.0 + ((digits - 6.0) / 0.22 - 1e-9).ceil()
    }
}

/// Order of the M2L translations over the offset `v` with `|v|² = r2` (box units) in a plan
/// of order `p`: distance-dependent truncation (cf. Petersen et al., J. Chem. Phys. 101, 8870
/// (1994)). The measured M2L error of the one-layer FMM falls about like `ρ^{−p}` with the
/// offset length `ρ = |v|`, so the farther offsets (most of the 189) reach the error of the
/// nearest ones (`ρ = 2`) with `p·ln 2/ln ρ` terms; one extra order is kept as a margin.
pub fn m2l_order(p: usize, r2: usize) -> usize {
    if r2 <= 4 {
        return p;
    }
    let rho = (r2 as f64).sqrt();
    let pe = (p as f64 * M2L_DECAY.ln() / rho.ln()).ceil() as usize + M2L_MARGIN;
    pe.clamp(1, p)
}

const M2L_DECAY: f64 = 2.0;
const M2L_MARGIN: usize = 1;

/// Relative cost of one M2L translation (rotation-based, O(p³), with the distance-dependent
/// orders) in units of one P2P pair interaction (potential + field), measured with AVX2 (see
/// `cargo bench --bench fmm_costs`; ≈ 1.2 ns per pair, ≈ 0.66 µs per translation at p = 16
/// including the gathers, i.e. ≈ 0.11 (p+1)³ pairs).
pub fn m2l_cost(p: usize) -> f64 {
    let q = (p + 1) as f64;
    M2L_COST_C * q * q * q
}

const M2L_COST_C: f64 = 0.12;

/// Chooses the depth for particles with the given sorted keys (at `KEY_DEPTH`) by minimising
/// a cost model: `min(Σ_b n_b·(27 n_b), N²)` P2P pairs (per-box occupancy `n_b`) plus
/// `m2l_cost(p) · 189 · (occupied boxes at levels ≥ m2l_top)` — for uniform data this puts
/// ~30–60 particles in a leaf. `m2l_top` is 2 for open and 1 for periodic boundaries.
pub fn choose_depth(keys: &[u64], p: usize, m2l_top: usize) -> usize {
    let n = keys.len();
    if n <= 1 {
        return 0;
    }
    let (nocc, s2) = occupancy(keys, depth_stats_max(n));
    choose_depth_from(n, &nocc, &s2, p, m2l_top)
}

/// The deepest level whose occupancy [`choose_depth`] looks at for `n ≥ 2` particles: where
/// leaves hold about one particle on average (`⌈ln n/ln 8⌉ + 6`, at most [`MAX_DEPTH`]).
pub fn depth_stats_max(n: usize) -> usize {
    MAX_DEPTH.min(((n as f64).ln() / 8f64.ln()).ceil() as usize + 6)
}

/// The cost model of [`choose_depth`] on the occupancy statistics of `n ≥ 2` particles
/// (`nocc[d]` occupied boxes and `s2[d] = Σ_b n_b²` at the levels `d = 0..=dmax`, as
/// [`super::tree::occupancy`] gives them; the GPU tree computes them on the device).
pub fn choose_depth_from(n: usize, nocc: &[usize], s2: &[f64], p: usize, m2l_top: usize) -> usize {
    depth_and_cost(n, nocc, s2, p, m2l_top).0
}

/// [`choose_depth_from`] with the model's cost of the chosen depth.
fn depth_and_cost(n: usize, nocc: &[usize], s2: &[f64], p: usize, m2l_top: usize) -> (usize, f64) {
    let dmax = nocc.len() - 1;
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
    (best.1, best.0)
}

/// The number of particles above which one M2P evaluation (a W-list box's multipole at one
/// target particle, potential and field, [`super::m2p::m2p`]) is cheaper than the P2P pairs
/// with the box's particles: the measured cost of one M2P in units of one P2P pair,
/// `≈ 0.55 (p+1)²` (AVX2, p = 6…30; `cargo bench --bench fmm_costs`).
pub fn m2p_cost(p: usize) -> usize {
    (M2P_COST_C * ((p + 1) * (p + 1)) as f64) as usize
}

/// The number of target particles above which P2L (one source particle into a box's local
/// expansion, [`super::m2p::p2l`], plus the box's share of L2P) is cheaper than the P2P pairs
/// with every particle of the box, `≈ 0.4 (p+1)²` P2P pairs (`cargo bench --bench fmm_costs`).
pub fn p2l_cost(p: usize) -> usize {
    (P2L_COST_C * ((p + 1) * (p + 1)) as f64) as usize
}

const M2P_COST_C: f64 = 0.55;
const P2L_COST_C: f64 = 0.4;

/// The tree an open-boundary execute uses ([`choose_tree`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TreeChoice {
    /// The uniform tree of this depth.
    Uniform(usize),
    /// The adaptive tree with at most this many particles per leaf.
    Adaptive(usize),
}

/// Smallest leaf size [`choose_tree`] considers.
const MIN_LEAF: usize = 4;

/// Cost model of the adaptive tree with at most `s` particles per leaf, on the tree `levels` of
/// [`MIN_LEAF`] ([`super::tree::adaptive_levels`]): `27 Σ_leaves n_b²` P2P pairs plus
/// `m2l_cost(p) · 189` per box at the levels ≥ 2 — the model of [`choose_depth`], summed over
/// the boxes the adaptive tree keeps.
///
/// Error: [`crate::error::Error::Alloc`].
pub fn adaptive_cost(levels: &[super::tree::Level], s: usize, p: usize) -> crate::error::Result<f64> {
    let c = 189.0 * m2l_cost(p);
    let mut cost = 0.0;
    // kept[b]: box b of the current level is in the tree of leaf size s
    let mut kept = vec![true];
    for (l, lev) in levels.iter().enumerate() {
        let mut next = crate::error::try_filled_vec(levels.get(l + 1).map_or(0, |n| n.len()), false, "the FMM cost model")?;
        for b in 0..lev.len() {
            if !kept[b] {
                continue;
            }
            let nb = (lev.range[b][1] - lev.range[b][0]) as f64;
            if l >= 2 {
                cost += c;
            }
            if nb as usize <= s || lev.is_leaf(b) {
                cost += 27.0 * nb * nb;
            } else {
                for ch in lev.child_start[b] as usize..lev.child_start[b + 1] as usize {
                    next[ch] = true;
                }
            }
        }
        kept = next;
    }
    Ok(cost)
}

/// Chooses between the uniform tree of [`choose_depth`] and the adaptive tree (open
/// boundaries) by the cost model: the adaptive tree with the leaf size `s ∈ {4, 6, 8, …, 512}`
/// of least [`adaptive_cost`], when that is below 0.8× the uniform tree's cost (the margin
/// covers the W and X lists, which the model leaves out); the uniform tree otherwise.
/// Error: [`crate::error::Error::Alloc`].
pub fn choose_tree(keys: &[u64], p: usize) -> crate::error::Result<TreeChoice> {
    let n = keys.len();
    if n <= 1 {
        return Ok(TreeChoice::Uniform(0));
    }
    let (nocc, s2) = occupancy(keys, depth_stats_max(n));
    let (d, uniform) = depth_and_cost(n, &nocc, &s2, p, 2);
    let (s, adaptive) = best_leaf(keys, p)?;
    Ok(if adaptive < 0.8 * uniform { TreeChoice::Adaptive(s) } else { TreeChoice::Uniform(d) })
}

/// The leaf size of the adaptive tree ([`choose_tree`]'s choice among `4, 6, 8, …, 512`).
/// Error: [`crate::error::Error::Alloc`].
pub fn choose_max_leaf(keys: &[u64], p: usize) -> crate::error::Result<usize> {
    Ok(best_leaf(keys, p)?.0)
}

/// The leaf size of least [`adaptive_cost`], with its cost.
fn best_leaf(keys: &[u64], p: usize) -> crate::error::Result<(usize, f64)> {
    let levels = super::tree::adaptive_levels(keys, MIN_LEAF)?;
    let mut best = (0, f64::INFINITY);
    let mut s = MIN_LEAF as f64;
    while s <= 512.0 {
        let si = s.round() as usize;
        let cost = adaptive_cost(&levels, si, p)?;
        if cost < best.1 {
            best = (si, cost);
        }
        s *= std::f64::consts::SQRT_2;
    }
    Ok(best)
}
