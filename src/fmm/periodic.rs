//! Periodic boundaries (cubic box of side `L`, or a rectangular box made of cubes): the lattice
//! operator and the Ewald convention.
//!
//! The tree wraps periodically at every level ≥ 1, so P2P and M2L cover the central box and
//! its 26 neighbour images exactly (the "near zone" `|n|∞ ≤ 1`). All images beyond it
//! (`|n|∞ ≥ 2`, the far zone FF) act through lattice-summed M2L operators with tensors
//! `Σ_{n∈FF} M_LM(n + …)` (`L ≤ 2p`), applied between the eight level-1 boxes
//! ([`level1_lattice_tensors`]; the root-level tensor `Λ_LM = Σ_{n∈FF} M_LM(n)` is
//! [`lattice_tensor`]) — the approach of the ScaFaCoS/GROMACS FMM
//! (Kudin & Scuseria, Chem. Phys. Lett. 283, 61 (1998); Lambert, Darden & Board, J. Comput.
//! Phys. 126, 274 (1996)), here with the lattice sums computed *exactly* (to rounding) by
//! Ewald summation of the homogeneous harmonic functions
//! `M_LM(r) = (L−M)!(L+M)! O_LM(r)/r^{2L+1}` (Nijboer & De Wette, Physica 23, 309 (1957)):
//! with `1/r^{2L+1} = Γ(L+½)^{−1} ∫_0^∞ t^{L−½} e^{−r²t} dt` split at `t = α²`, and the Fourier
//! transform `∫ O_LM(r) e^{−tr²} e^{−ik·r} d³r = (π/t)^{3/2} (−i/(2t))^L O_LM(k) e^{−k²/4t}`
//! (Hobson's theorem),
//!
//! `Σ'_n M_LM(n) = Σ'_n M_LM(n) Q(L+½, α²n²)
//!              + (π^{3/2}/(V Γ(L+½))) (−i/2)^L Σ_{k≠0} M_LM(k)|k|^{2L+1} (4/k²) e^{−k²/4α²}`
//!
//! (`Q` the regularised upper incomplete gamma function, `k = 2πm/L`); for `L = 0` the terms
//! `−2α/√π − π/(α²V)` of the Ewald self/background constant are added. The near-zone terms are
//! then removed from the real-space sum as `−Σ_{0<|n|∞≤1} M_LM(n) P(L+½, α²n²)` (`P = 1 − Q`
//! evaluated by its series, so no cancellation at high `L`). For `L ≥ 3` these sums converge
//! absolutely; `L = 1, 2` vanish by cubic symmetry; `L = 0` is Ewald's regularised constant.
//!
//! # Convention: Ewald summation with tin-foil boundary (ε' = ∞)
//! The lattice sums are the Ewald-regularised ones (the `k = 0` term omitted), so the far-image
//! kernel they represent is `F(r) = ψ(r) − Σ_{|n|∞≤1} 1/|r − n|` with `ψ` the Ewald potential
//! of a unit charge with its neutralising background (conducting boundary). `F` is not
//! harmonic: `∇²ψ = −4πδ + 4π/V` gives `F = H + (2π/3V)|r|²` with `H` harmonic. An M2L
//! between level-1 boxes with centres `c_t`, `c_s` through the tensors `D_LM F(c_t − c_s)`
//! reproduces `H` and the constant and linear Taylor terms of the quadratic part, and misses
//! exactly `(2π/3V)|y_t − y_s|²` (`y` = positions relative to the level-1 centres). Summed over
//! the sources this is added afterwards ([`background_correction`]): with `c_i` the level-1
//! centre of particle `i`, `Q = Σ q_j`, `D' = Σ q_j (x_j − c_j)`, `S' = Σ q_j |x_j − c_j|²`,
//!
//! `φ_i += (2π/3V)(Q|x_i − c_i|² − 2 D'·(x_i − c_i) + S')`,  `E_i += (4π/3V)(D' − Q(x_i − c_i))`.
//!
//! The result is exactly the Ewald sum with conducting (tin-foil, ε' = ∞) boundary. Summed
//! instead over growing cubes (or spheres) in vacuum, a neutral system would differ by the
//! dipole term: energy `+2π|D|²/(3V)` with `D = Σ q_j x_j`, a uniform field `−4πD/(3V)`, and
//! the potentials by the Bethe constant `−(2π/3V)Σ q_j|x_j − c|²` (de Leeuw, Perram & Smith,
//! Proc. R. Soc. A 373, 27 (1980)); tin-foil is what Ewald/PME codes compute. A net charge
//! `Q ≠ 0` is neutralised by a uniform background, as in Ewald summation without the `k = 0`
//! term; the energy then includes the usual background terms implicitly (it is the
//! α-independent Ewald energy of the charged system with background, e.g. `−πQ²/(2α²V)` plus
//! the `−2α/√π` self terms of classic Ewald combined).
//!
//! # Rectangular boxes
//! A box `[0, a) × [0, b) × [0, c)` whose sides are integer multiples `a_d = n_d s` of one
//! length `s` ([`cube_cells`]: `n_d ≤` [`MAX_CELLS`], `n₀n₁n₂ ≤` [`MAX_CELL_PRODUCT`]) is built
//! from `n₀ × n₁ × n₂` cubes of side `s`, so that every operator keeps its cubic boxes of equal
//! side per level (the rotation-based M2L and its tables, the presorted tiles, P2P):
//!
//! * the tree's root cube has side `2^e s` with `2^e ≥ max n_d` ([`root_level`]) and holds the
//!   box in its lower corner; the cubes are its level-`e` boxes, levels above `e` carry no
//!   expansions, and the tree wraps at every level `l ≥ e` with `n_d 2^{l−e}` boxes per period
//!   along axis `d` (image shifts `n_d s` per period). Morton keys, the sparse levels and the
//!   lists are the cubic tree's unchanged (`Tree::root_level`, `Tree::cells`);
//! * M2L and P2P then cover, for a target in cube `P_t`, exactly the source images whose cube
//!   is a neighbour of `P_t` (`|·|∞ ≤ 1` in cubes, in the infinite lattice) — for `n_d = 1`
//!   the 27 images of the cubic case, otherwise a target-dependent set;
//! * everything else acts through lattice tensors between the boxes of level `e + 1` (the
//!   level-1 boxes of the cubic case; same convergence, source and target balls of radius
//!   `√3/4 s` at centre distance ≥ `1.5 s`): for target and source boxes `c_t`, `c_s` the tensor
//!   `Σ_{n ∉ S} M_LM(c_t − c_s + 2n∘N)` with `S` the images the tree covers ([`RectLattice`]),
//!   Ewald-summed over the rectangular lattice with reciprocal vectors
//!   `k = 2π(m₀/a₀, m₁/a₁, m₂/a₂)` and `V = abc` ([`lattice_sum_classes`]; the images of `S`
//!   enter through `P`, so again without cancellation). For a rectangular lattice the `L = 1, 2`
//!   sums no longer vanish by symmetry; the Ewald formula gives their tin-foil values. The
//!   pair's tensor depends on its offset and on its cubes' offset per axis (a few dozen
//!   classes per axis at most), and costs `(8n₀n₁n₂)²` direct `O(p⁴)` M2Ls per execute
//!   ([`super::m2l::m2l_tensor_order`]), each truncated at the order
//!   [`super::params::m2l_order`] gives for the nearest image the tensor holds (at least 3
//!   boxes away, so at most `⌈0.63p⌉ + 1`: 5–9× cheaper than order `p`, errors unchanged);
//! * the background correction is the cubic one with `V = abc` and the level-`(e+1)` centres
//!   ([`background_correction_at`]): its derivation uses only `∇²ψ = −4πδ + 4π/V`.
//!
//! A cubic box is the case `n = (1, 1, 1)`, `e = 0`, and keeps its own code path (the
//! [`level1_lattice_tensors`]), so its results are unchanged bit for bit. Sides with an
//! irrational ratio (or counts beyond the limits, whose `(8n₀n₁n₂)²` lattice M2Ls would
//! dominate) are refused; a general rectangular box would need boxes that are not cubes, i.e.
//! anisotropic M2L operators without the rotation scheme's `O(p³)` tables.
//!
//! # Triclinic boxes
//! Not supported. The lattice sums themselves extend (the same Ewald formula over a general
//! lattice), but the tree does not: with skewed lattice vectors the periodic images of a box
//! are not boxes of the same grid, so the wrap-around that makes M2L and P2P cover the near
//! images exactly (one box, an integer image shift) no longer exists; one would have to work
//! in fractional coordinates with sheared (non-cubic) boxes, losing the rotation-based
//! operators, or cover the near zone with a cubic tree over a larger region and explicit image
//! lists. MD codes with triclinic cells should use the Ewald module.

use super::harmonics::{idx, irregular, ncoef};
use super::tree::Tree;
use crate::threads::Threads;

/// Regularised incomplete gamma functions `(Q(L+½, x), P(L+½, x))` for `L = 0..=lmax`.
pub fn incomplete_gamma_half(lmax: usize, x: f64) -> Vec<(f64, f64)> {
    let mut out = Vec::with_capacity(lmax + 1);
    let sx = x.sqrt();
    let mut q = libm::erfc(sx);
    // t_a = x^a e^{−x} / Γ(a+1) at a = ½: 2 √(x/π) e^{−x}
    let mut t = 2.0 * (x / std::f64::consts::PI).sqrt() * (-x).exp();
    for l in 0..=lmax {
        let a = l as f64 + 0.5;
        // P by its series when x < a + 1 (P small there: no cancellation), else 1 − Q
        let p = if x < a + 1.0 {
            let mut sum = 1.0;
            let mut term = 1.0;
            let mut k = 1.0;
            while k < 1000.0 {
                term *= x / (a + k);
                sum += term;
                if term < 1e-17 * sum {
                    break;
                }
                k += 1.0;
            }
            t * sum
        } else {
            1.0 - q
        };
        out.push((q, p));
        // Q(a+1) = Q(a) + t_a, t_{a+1} = t_a x/(a+1)
        q += t;
        t *= x / (a + 1.0);
    }
    out
}

/// The lattice tensor `Λ_LM`, `L ≤ 2p`, of the far zone `|n|∞ ≥ 2` of a unit cubic lattice,
/// as a coefficient block of order `2p` (see the module docs).
pub fn lattice_tensor(p: usize) -> Vec<f64> {
    lattice_sum(2 * p, [0.0; 3], std::f64::consts::PI)
}

/// [`lattice_tensor`] with the Ewald splitting parameter `α² = alpha2` (the result does not
/// depend on it; `α² = π` balances the real and reciprocal sums for the unit box).
pub fn lattice_tensor_alpha(p: usize, alpha2: f64) -> Vec<f64> {
    lattice_sum(2 * p, [0.0; 3], alpha2)
}

/// Index of a level-1 offset `d ∈ {−1,0,1}³` (target minus source octant coordinates).
#[inline]
pub fn level1_index(d: [i32; 3]) -> usize {
    ((d[0] + 1) + 3 * (d[1] + 1) + 9 * (d[2] + 1)) as usize
}

/// The lattice operator applied between the level-1 boxes (side `L/2`): for each offset
/// `d = o_t − o_s ∈ {−1,0,1}³` of target and source octant, the tensor
/// `T_d = Σ_{n∈FF} M_LM(d + 2n)` in level-1 box units (`L ≤ 2p`), indexed by
/// [`level1_index`]. Translating the eight level-1 multipoles instead of the root multipole
/// makes the far-zone M2L converge like `(√3/2)/1.5 ≈ 0.58^p` instead of `0.87^p` (source and
/// target balls of radius `√3/4 L` at distance ≥ `1.5 L`), so the lattice part is never the
/// accuracy bottleneck, even for a handful of particles. Uses `T_{−d} = (−1)^L T_d`.
pub fn level1_lattice_tensors(p: usize) -> Vec<Vec<f64>> {
    let lmax = 2 * p;
    let nt = ncoef(lmax);
    let mut out: Vec<Vec<f64>> = vec![Vec::new(); 27];
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                let d = [dx, dy, dz];
                let i = level1_index(d);
                let j = level1_index([-dx, -dy, -dz]);
                if !out[j].is_empty() {
                    // T_{−d} = (−1)^L T_d
                    let mut t = out[j].clone();
                    for l in (1..=lmax).step_by(2) {
                        for m in 0..=l {
                            let k = idx(l, m);
                            t[k] = -t[k];
                            t[nt + k] = -t[nt + k];
                        }
                    }
                    out[i] = t;
                    continue;
                }
                // Σ_n M_LM(d + 2n) = 2^{−(L+1)} Σ_n M_LM(n + d/2) (root units)
                let mut t = lattice_sum(lmax, [0.5 * dx as f64, 0.5 * dy as f64, 0.5 * dz as f64], std::f64::consts::PI);
                let mut f = 0.5;
                for l in 0..=lmax {
                    for m in 0..=l {
                        let k = idx(l, m);
                        t[k] *= f;
                        t[nt + k] *= f;
                    }
                    f *= 0.5;
                }
                out[i] = t;
            }
        }
    }
    out
}

/// `Σ_{n ∈ Z³, |n|∞ ≥ 2} M_LM(n + s)` for `L ≤ lmax` (unit cubic lattice, shift `s` with
/// `|s_i| ≤ ½`), Ewald-summed with splitting `α² = alpha2` (module docs): real space over
/// `|n + s| ≤ 6` (beyond, `Q(L+½, α²r²) < 10^{−40}` for small `L`, and for large `L` the terms
/// are below `(2/6)^{L+1}` of the nearest far-zone terms), reciprocal space `|m| ≤ 4`
/// (`e^{−π m²} < 10^{−21}` beyond, which also bounds the relative size of the omitted high-`L`
/// reciprocal terms), the near zone `|n|∞ ≤ 1` removed with the lower incomplete gamma
/// function so that no cancellation occurs at high `L`. For `α² ≠ π` the cut-offs are scaled.
pub fn lattice_sum(lmax: usize, s: [f64; 3], alpha2: f64) -> Vec<f64> {
    let nt = ncoef(lmax);
    let alpha = alpha2.sqrt();
    let mut lam = vec![0.0; 2 * nt];
    let mut blk = vec![0.0; 2 * nt];
    let zero_shift = s == [0.0; 3];
    // real space
    let rcut = 6.0 * (std::f64::consts::PI / alpha2).sqrt().max(1.0);
    let rcut2 = rcut * rcut;
    let nr = rcut.ceil() as i32 + 1;
    for nz in -nr..=nr {
        for ny in -nr..=nr {
            for nx in -nr..=nr {
                let ninf = nx.abs().max(ny.abs()).max(nz.abs());
                let r = [nx as f64 + s[0], ny as f64 + s[1], nz as f64 + s[2]];
                let r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
                if (ninf == 0 && zero_shift) || r2 > rcut2 {
                    continue;
                }
                let g = incomplete_gamma_half(lmax, alpha2 * r2);
                irregular(lmax, r, &mut blk);
                for l in 0..=lmax {
                    let f = if ninf >= 2 { g[l].0 } else { -g[l].1 };
                    for m in 0..=l {
                        let i = idx(l, m);
                        lam[i] += f * blk[i];
                        lam[nt + i] += f * blk[nt + i];
                    }
                }
            }
        }
    }
    // reciprocal space (V = 1, k = 2π m), with the phase e^{ik·s} of the shifted lattice
    let kcut = 4.0 * (alpha2 / std::f64::consts::PI).sqrt().max(1.0);
    let kk = kcut.floor() as i32;
    let kcut2 = (kcut * kcut).floor() as i32;
    let two_pi = 2.0 * std::f64::consts::PI;
    let mut lngam = vec![0.0; lmax + 1]; // ln Γ(L+½)
    lngam[0] = 0.5 * std::f64::consts::PI.ln();
    for l in 1..=lmax {
        lngam[l] = lngam[l - 1] + (l as f64 - 0.5).ln();
    }
    let pi32 = std::f64::consts::PI.powf(1.5);
    for mz in -kk..=kk {
        for my in -kk..=kk {
            for mx in -kk..=kk {
                let m2 = mx * mx + my * my + mz * mz;
                if m2 == 0 || m2 > kcut2 {
                    continue;
                }
                let k = [two_pi * mx as f64, two_pi * my as f64, two_pi * mz as f64];
                let k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
                let kn = k2.sqrt();
                let ph = k[0] * s[0] + k[1] * s[1] + k[2] * s[2];
                let (pc, ps) = (ph.cos(), ph.sin());
                irregular(lmax, k, &mut blk);
                for l in 0..=lmax {
                    // |k|^{2L+1} 2^{−L} 4/k² e^{−k²/4α²} π^{3/2}/Γ(L+½), in logs
                    let lf = (2 * l + 1) as f64 * kn.ln() - l as f64 * std::f64::consts::LN_2 - k2 / (4.0 * alpha2) - lngam[l];
                    let f = pi32 * 4.0 / k2 * lf.exp();
                    // (−i)^L e^{ik·s}
                    let (ar, ai) = match l % 4 {
                        0 => (1.0, 0.0),
                        1 => (0.0, -1.0),
                        2 => (-1.0, 0.0),
                        _ => (0.0, 1.0),
                    };
                    let (cr, ci) = (ar * pc - ai * ps, ar * ps + ai * pc);
                    for m in 0..=l {
                        let i = idx(l, m);
                        let (br, bi) = (blk[i], blk[nt + i]);
                        lam[i] += f * (cr * br - ci * bi);
                        lam[nt + i] += f * (cr * bi + ci * br);
                    }
                }
            }
        }
    }
    // L = 0: the background (k = 0) term, and the smooth part of the excluded n = 0 term
    lam[0] -= std::f64::consts::PI / alpha2;
    if zero_shift {
        lam[0] -= 2.0 * alpha / std::f64::consts::PI.sqrt();
    }
    lam
}

/// Centre of the level-`level` box of every sorted particle (through its leaf's ancestor), in
/// order.
fn level_centres(tree: &Tree, level: usize) -> impl Iterator<Item = [f64; 3]> + '_ {
    let d = tree.depth;
    (0..tree.nleaves()).flat_map(move |b| {
        let k1 = tree.levels[d].keys[b] >> (3 * (d - level));
        let c = tree.center(level, k1);
        (tree.leaf_start[b]..tree.leaf_start[b + 1]).map(move |_| c)
    })
}

/// Adds the non-harmonic part of the Ewald kernel that the level-1 lattice operator leaves out
/// (module docs): with `c_i` the centre of particle `i`'s level-1 box, `Q = Σ q_j`,
/// `D' = Σ_j q_j (x_j − c_j)`, `S' = Σ_j q_j |x_j − c_j|²`:
/// `φ_i += (2π/3V)(Q|x_i − c_i|² − 2 D'·(x_i − c_i) + S')`, `E_i += (4π/3V)(D' − Q(x_i − c_i))`.
/// Requires a tree of depth ≥ 1; `field` = `(ex, ey, ez)` in sorted order, or `None`.
pub fn background_correction(tree: &Tree, side: f64, phi: &mut [f64], field: Option<(&mut [f64], &mut [f64], &mut [f64])>) {
    correction(tree, 1, side * side * side, phi, field)
}

fn correction(tree: &Tree, level: usize, volume: f64, phi: &mut [f64], field: Option<(&mut [f64], &mut [f64], &mut [f64])>) {
    let (mut qt, mut dp, mut sp) = (0.0, [0.0; 3], 0.0);
    for (i, c) in level_centres(tree, level).enumerate() {
        let r = [tree.x[i] - c[0], tree.y[i] - c[1], tree.z[i] - c[2]];
        let q = tree.q[i];
        qt += q;
        for a in 0..3 {
            dp[a] += q * r[a];
        }
        sp += q * (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    }
    let f = 2.0 * std::f64::consts::PI / (3.0 * volume);
    let mut field = field;
    for (i, c) in level_centres(tree, level).enumerate() {
        let r = [tree.x[i] - c[0], tree.y[i] - c[1], tree.z[i] - c[2]];
        let rr = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
        phi[i] += f * (qt * rr - 2.0 * (dp[0] * r[0] + dp[1] * r[1] + dp[2] * r[2]) + sp);
        if let Some((ex, ey, ez)) = field.as_mut() {
            ex[i] += 2.0 * f * (dp[0] - qt * r[0]);
            ey[i] += 2.0 * f * (dp[1] - qt * r[1]);
            ez[i] += 2.0 * f * (dp[2] - qt * r[2]);
        }
    }
}

/// The decomposition of a rectangular periodic box with sides `a₀, a₁, a₂` into cubes of one
/// side `s`: `a_d = n_d s` with integers `1 ≤ n_d ≤` [`MAX_CELLS`] and `n₀n₁n₂ ≤`
/// [`MAX_CELL_PRODUCT`], the largest such `s` (smallest counts); each ratio must be an integer
/// to a relative `1e-12` (the box used is then exactly `n_d s`, `s = a₀/n₀`). `None` when the
/// sides have no such common length. Cubic boxes give `n = [1, 1, 1]`.
pub fn cube_cells(sides: [f64; 3]) -> Option<(f64, [u64; 3])> {
    let amin = sides.iter().fold(f64::INFINITY, |a, &b| a.min(b));
    for k in 1..=MAX_CELLS {
        let s = amin / k as f64;
        let mut n = [0u64; 3];
        let mut ok = true;
        for d in 0..3 {
            let r = sides[d] / s;
            let nd = r.round();
            if !(nd >= 1.0 && nd <= MAX_CELLS as f64 && (r - nd).abs() <= 1e-12 * nd) {
                ok = false;
                break;
            }
            n[d] = nd as u64;
        }
        if ok && n.iter().product::<u64>() <= MAX_CELL_PRODUCT {
            return Some((sides[0] / n[0] as f64, n));
        }
    }
    None
}

/// The tree level of the cubes of a box with `cells` cubes per side: the smallest `e` with
/// `2^e ≥ max cells_d` (0 for a cubic box).
pub fn root_level(cells: [u64; 3]) -> usize {
    let m = cells.iter().copied().max().unwrap_or(1).max(1);
    (64 - (m - 1).leading_zeros()) as usize
}

/// Largest number of cubes along one side of a rectangular periodic box ([`cube_cells`]).
pub const MAX_CELLS: u64 = 4;
/// Largest number of cubes in a rectangular periodic box ([`cube_cells`]).
pub const MAX_CELL_PRODUCT: u64 = 16;

/// The lattice operator of a rectangular box made of `n₀ × n₁ × n₂` cubes (the tree's level
/// `e` boxes, `2^e ≥ max n_d`; see the module docs): for a target and a source box at the
/// level below the cubes (level `e + 1`, `2n_d` boxes per period along axis `d`), with
/// coordinates `c_t`, `c_s` in the box, the tensor
/// `T = Σ_{n ∉ S} M_LM(c_t − c_s + 2 n∘N)` (`L ≤ 2p`, level-`(e+1)` box units,
/// `N = (n₀, n₁, n₂)`), where `S` holds the images whose cube is a neighbour (`|·|∞ ≤ 1`, in
/// cubes) of the target's cube: those the tree covers by M2L and P2P. Per axis the class of a
/// pair is `(d, lo, hi)`: the offset `d = c_t − c_s` and the range `lo..=hi` of image indices in
/// `S` along the axis; the tensor of a pair is the one of its three per-axis classes.
#[derive(Debug, Clone)]
pub struct RectLattice {
    /// Cubes per side.
    pub cells: [u64; 3],
    /// Per axis, the class index of `(c_t, c_s)` at `class[d][c_t·2n_d + c_s]`.
    class: [Vec<u32>; 3],
    /// Number of classes per axis.
    nclass: [usize; 3],
    /// Tensors (blocks of order `2p`) by `k₀ + K₀(k₁ + K₁k₂)`, `k_d` the class on axis `d`.
    tensors: Vec<Vec<f64>>,
    /// Per tensor, the M2L order to apply it with: [`super::params::m2l_order`] of the
    /// nearest image it holds (`|v|² ≥ 9` in box units: the excluded images are at least one
    /// cube away from the target's cube neighbours).
    orders: Vec<usize>,
}

impl RectLattice {
    /// The lattice operator of order `p` for `cells` cubes per side (each `≥ 1`), computed by
    /// [`lattice_sum_classes`] (exact Ewald lattice sums) on `threads` (the result does not
    /// depend on the thread count). Cost: one Ewald sum for every distinct offset `d` (at most
    /// `Π(4n_d − 1)`, halved by `T_{−d} = (−1)^L T_d`), each ≈ 1200 evaluations of the `M_LM`
    /// of order `2p`: measured 0.7 s (1:2:3) and 1.8 s (3:2:2) at p = 16, 1.3 s and 2.9 s at
    /// p = 30, on one thread.
    pub fn new(p: usize, cells: [u64; 3], threads: &Threads) -> RectLattice {
        let lmax = 2 * p;
        let nt = ncoef(lmax);
        // per-axis classes: (d, lo, hi)
        let mut keys: [Vec<(i32, i32, i32)>; 3] = Default::default();
        let mut class: [Vec<u32>; 3] = Default::default();
        for ax in 0..3 {
            let n = cells[ax] as i32;
            let nb = 2 * n;
            for ct in 0..nb {
                for cs in 0..nb {
                    let d = ct - cs;
                    let pd = (ct >> 1) - (cs >> 1);
                    // image n of the source (offset d + 2n·n_d) is near iff |pd + n·n_d| ≤ 1
                    let lo = (-1 - pd).div_euclid(n) + i32::from((-1 - pd).rem_euclid(n) != 0);
                    let hi = (1 - pd).div_euclid(n);
                    let key = (d, lo, hi);
                    let k = match keys[ax].iter().position(|&x| x == key) {
                        Some(k) => k,
                        None => {
                            keys[ax].push(key);
                            keys[ax].len() - 1
                        }
                    };
                    class[ax].push(k as u32);
                }
            }
        }
        let nclass = [keys[0].len(), keys[1].len(), keys[2].len()];
        let a = [cells[0] as f64, cells[1] as f64, cells[2] as f64];
        let total = nclass[0] * nclass[1] * nclass[2];
        let mut tensors: Vec<Vec<f64>> = vec![Vec::new(); total];
        // group the class combinations by their offset d
        let mut by_d: Vec<([i32; 3], Vec<(usize, [[i32; 2]; 3])>)> = Vec::new();
        for k2 in 0..nclass[2] {
            for k1 in 0..nclass[1] {
                for k0 in 0..nclass[0] {
                    let ks = [keys[0][k0], keys[1][k1], keys[2][k2]];
                    let d = [ks[0].0, ks[1].0, ks[2].0];
                    let near = [[ks[0].1, ks[0].2], [ks[1].1, ks[1].2], [ks[2].1, ks[2].2]];
                    let i = k0 + nclass[0] * (k1 + nclass[1] * k2);
                    match by_d.iter_mut().find(|(dd, _)| *dd == d) {
                        Some((_, v)) => v.push((i, near)),
                        None => by_d.push((d, vec![(i, near)])),
                    }
                }
            }
        }
        let index_of = |d: [i32; 3], near: [[i32; 2]; 3]| -> usize {
            let k: [usize; 3] = std::array::from_fn(|ax| keys[ax].iter().position(|&x| x == (d[ax], near[ax][0], near[ax][1])).expect("a class"));
            k[0] + nclass[0] * (k[1] + nclass[1] * k[2])
        };
        // one Ewald sum per offset d with d ≥ −d (lexicographically), in parallel on the plan's
        // pool; the others by T(−d, −S) = (−1)^L T(d, S)
        let canonical = |d: &[i32; 3]| *d >= [-d[0], -d[1], -d[2]];
        let mut sums: Vec<Vec<Vec<f64>>> = vec![Vec::new(); by_d.len()];
        threads.chunks(&mut sums, 1, |g, out| {
            let (d, group) = &by_d[g];
            if !canonical(d) {
                return;
            }
            let shift = [0.5 * d[0] as f64, 0.5 * d[1] as f64, 0.5 * d[2] as f64];
            let nears: Vec<[[i32; 2]; 3]> = group.iter().map(|g| g.1).collect();
            out[0] = lattice_sum_classes(lmax, shift, a, &nears);
        });
        for ((d, group), sum) in by_d.iter().zip(sums) {
            if !canonical(d) {
                continue;
            }
            for ((i, _), mut t) in group.iter().zip(sum) {
                // cube units → level-(e+1) box units (side ½): M_LM(2x) = 2^{−(L+1)} M_LM(x)
                let mut f = 0.5;
                for l in 0..=lmax {
                    for mm in 0..=l {
                        let k = idx(l, mm);
                        t[k] *= f;
                        t[nt + k] *= f;
                    }
                    f *= 0.5;
                }
                tensors[*i] = t;
            }
        }
        for (d, group) in &by_d {
            if canonical(d) {
                continue;
            }
            let neg = [-d[0], -d[1], -d[2]];
            for (i, nr) in group {
                let j = index_of(neg, [[-nr[0][1], -nr[0][0]], [-nr[1][1], -nr[1][0]], [-nr[2][1], -nr[2][0]]]);
                let mut t = tensors[j].clone();
                for l in (1..=lmax).step_by(2) {
                    for mm in 0..=l {
                        let k = idx(l, mm);
                        t[k] = -t[k];
                        t[nt + k] = -t[nt + k];
                    }
                }
                tensors[*i] = t;
            }
        }
        // the nearest image each tensor holds → its truncation order
        let mut orders = vec![p; total];
        for k2 in 0..nclass[2] {
            for k1 in 0..nclass[1] {
                for k0 in 0..nclass[0] {
                    let ks = [keys[0][k0], keys[1][k1], keys[2][k2]];
                    let mut r2min = i64::MAX;
                    for nz in -2..=2 {
                        for ny in -2..=2 {
                            for nx in -2..=2 {
                                let n = [nx, ny, nz];
                                if (0..3).all(|ax| ks[ax].1 <= n[ax] && n[ax] <= ks[ax].2) {
                                    continue; // covered by the tree
                                }
                                let r2: i64 = (0..3).map(|ax| ((ks[ax].0 + 2 * n[ax] * cells[ax] as i32) as i64).pow(2)).sum();
                                r2min = r2min.min(r2);
                            }
                        }
                    }
                    debug_assert!(r2min >= 9);
                    orders[k0 + nclass[0] * (k1 + nclass[1] * k2)] = super::params::m2l_order(p, r2min as usize);
                }
            }
        }
        RectLattice { cells, class, nclass, tensors, orders }
    }

    /// The tensor between the target and source boxes with integer coordinates `ct`, `cs`
    /// (`0 ≤ c_d < 2n_d`) at the level below the cubes.
    /// Also returns the order to apply it with ([`super::m2l::m2l_tensor_order`]): the
    /// distance-dependent truncation [`super::params::m2l_order`] at the nearest image the
    /// tensor holds (at least 3 boxes away, so at most `⌈0.63 p⌉ + 1`).
    #[inline]
    pub fn tensor(&self, ct: [u64; 3], cs: [u64; 3]) -> (&[f64], usize) {
        let k: [usize; 3] = std::array::from_fn(|ax| {
            let nb = 2 * self.cells[ax] as usize;
            self.class[ax][ct[ax] as usize * nb + cs[ax] as usize] as usize
        });
        let i = k[0] + self.nclass[0] * (k[1] + self.nclass[1] * k[2]);
        (&self.tensors[i], self.orders[i])
    }

    /// Number of distinct tensors.
    pub fn len(&self) -> usize {
        self.tensors.len()
    }

    /// Whether there are no tensors (never, for a valid lattice).
    pub fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }
}

/// Rectangular-lattice Ewald sums for one shift `s` and several near sets: for each
/// `near[j] = [[lo₀, hi₀], [lo₁, hi₁], [lo₂, hi₂]]` (a box `S_j` of image indices, inside
/// `[−1, 1]³`), `Σ_{n ∈ Z³∖S_j} M_LM(s + n∘a)` for `L ≤ lmax`, lattice lengths `a` (`V = a₀a₁a₂`),
/// by the Ewald formula of the module docs with reciprocal vectors
/// `k = 2π(m₀/a₀, m₁/a₁, m₂/a₂)` and the `1/V` of the reciprocal sum and background term.
/// `α² = π/V^{2/3}` (the equal-volume cube's); real space over `|s + n∘a| ≤ 6√(π/α²)` (every
/// image of `[−1, 1]³` included whatever its distance), reciprocal over `|k| ≤ 8π√(α²/π)`
/// (`e^{−k²/4α²} < 10^{−21}` beyond): the cut-offs of [`lattice_sum`] scaled. The images in
/// `S_j` enter as `−P(L+½, α²r²) M_LM` (no cancellation at high `L`), the others as
/// `Q(L+½, α²r²) M_LM`. `s = 0` requires `0 ∈ S_j` (the `n = 0` term is then the self term).
pub fn lattice_sum_classes(lmax: usize, s: [f64; 3], a: [f64; 3], near: &[[[i32; 2]; 3]]) -> Vec<Vec<f64>> {
    let nt = ncoef(lmax);
    let vol = a[0] * a[1] * a[2];
    let alpha2 = std::f64::consts::PI / vol.powf(2.0 / 3.0);
    let alpha = alpha2.sqrt();
    let zero_shift = s == [0.0; 3];
    let mut base = vec![0.0; 2 * nt];
    let mut blk = vec![0.0; 2 * nt];
    let add = |acc: &mut [f64], f: &[f64], blk: &[f64]| {
        for l in 0..=lmax {
            for m in 0..=l {
                let i = idx(l, m);
                acc[i] += f[l] * blk[i];
                acc[nt + i] += f[l] * blk[nt + i];
            }
        }
    };
    // the 27 images of [−1, 1]³: M_LM, Q and P kept for the per-set sums
    let mut inner: Vec<([i32; 3], Vec<f64>, Vec<f64>, Vec<f64>)> = Vec::with_capacity(27);
    let rcut = 6.0 * (std::f64::consts::PI / alpha2).sqrt();
    let rcut2 = rcut * rcut;
    let nr: [i32; 3] = std::array::from_fn(|d| (rcut / a[d]).ceil() as i32 + 1);
    for nz in -nr[2]..=nr[2] {
        for ny in -nr[1]..=nr[1] {
            for nx in -nr[0]..=nr[0] {
                let n = [nx, ny, nz];
                let r = [s[0] + nx as f64 * a[0], s[1] + ny as f64 * a[1], s[2] + nz as f64 * a[2]];
                let r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
                let is_inner = n.iter().all(|c| c.abs() <= 1);
                if (!is_inner && r2 > rcut2) || (zero_shift && n == [0; 3]) {
                    continue;
                }
                let g = incomplete_gamma_half(lmax, alpha2 * r2);
                irregular(lmax, r, &mut blk);
                if is_inner {
                    inner.push((n, blk.clone(), g.iter().map(|x| x.0).collect(), g.iter().map(|x| -x.1).collect()));
                } else {
                    let q: Vec<f64> = g.iter().map(|x| x.0).collect();
                    add(&mut base, &q, &blk);
                }
            }
        }
    }
    // reciprocal space, with the phase e^{ik·s}
    let two_pi = 2.0 * std::f64::consts::PI;
    let kcut = 4.0 * two_pi * (alpha2 / std::f64::consts::PI).sqrt();
    let kcut2 = kcut * kcut;
    let mk: [i32; 3] = std::array::from_fn(|d| (kcut * a[d] / two_pi).floor() as i32);
    let mut lngam = vec![0.0; lmax + 1]; // ln Γ(L+½)
    lngam[0] = 0.5 * std::f64::consts::PI.ln();
    for l in 1..=lmax {
        lngam[l] = lngam[l - 1] + (l as f64 - 0.5).ln();
    }
    let pre = std::f64::consts::PI.powf(1.5) * 4.0 / vol;
    for mz in -mk[2]..=mk[2] {
        for my in -mk[1]..=mk[1] {
            for mx in -mk[0]..=mk[0] {
                if mx == 0 && my == 0 && mz == 0 {
                    continue;
                }
                let k = [two_pi * mx as f64 / a[0], two_pi * my as f64 / a[1], two_pi * mz as f64 / a[2]];
                let k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
                if k2 > kcut2 {
                    continue;
                }
                let kn = k2.sqrt();
                let ph = k[0] * s[0] + k[1] * s[1] + k[2] * s[2];
                let (pc, ps) = (ph.cos(), ph.sin());
                irregular(lmax, k, &mut blk);
                for l in 0..=lmax {
                    // (π^{3/2}/V)(4/k²)|k|^{2L+1} 2^{−L} e^{−k²/4α²}/Γ(L+½), in logs
                    let lf = (2 * l + 1) as f64 * kn.ln() - l as f64 * std::f64::consts::LN_2 - k2 / (4.0 * alpha2) - lngam[l];
                    let f = pre / k2 * lf.exp();
                    // (−i)^L e^{ik·s}
                    let (ar, ai) = match l % 4 {
                        0 => (1.0, 0.0),
                        1 => (0.0, -1.0),
                        2 => (-1.0, 0.0),
                        _ => (0.0, 1.0),
                    };
                    let (cr, ci) = (ar * pc - ai * ps, ar * ps + ai * pc);
                    for m in 0..=l {
                        let i = idx(l, m);
                        let (br, bi) = (blk[i], blk[nt + i]);
                        base[i] += f * (cr * br - ci * bi);
                        base[nt + i] += f * (cr * bi + ci * br);
                    }
                }
            }
        }
    }
    // L = 0: the background (k = 0) term, and the smooth part of the excluded n = 0 term
    base[0] -= std::f64::consts::PI / (alpha2 * vol);
    if zero_shift {
        base[0] -= 2.0 * alpha / std::f64::consts::PI.sqrt();
    }
    near.iter()
        .map(|sj| {
            assert!(!zero_shift || (0..3).all(|d| sj[d][0] <= 0 && 0 <= sj[d][1]), "s = 0 needs the n = 0 image in the near set");
            let mut t = base.clone();
            for (n, m, q, p) in &inner {
                let in_s = (0..3).all(|d| sj[d][0] <= n[d] && n[d] <= sj[d][1]);
                add(&mut t, if in_s { p } else { q }, m);
            }
            t
        })
        .collect()
}

/// [`background_correction`] for a tree whose lattice operator acts between the boxes of
/// `level` (≥ 1; the level below the cubes of a rectangular box), periodic cell volume `volume`
/// in the tree's units.
pub fn background_correction_at(tree: &Tree, level: usize, volume: f64, phi: &mut [f64], field: Option<(&mut [f64], &mut [f64], &mut [f64])>) {
    correction(tree, level, volume, phi, field)
}
