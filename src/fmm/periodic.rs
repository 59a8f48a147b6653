//! Periodic boundaries (cubic box of side `L`): the lattice operator and the Ewald convention.
//!
//! The tree wraps periodically at every level ≥ 1, so P2P and M2L cover the central box and
//! its 26 neighbour images exactly (the "near zone" `|n|∞ ≤ 1`). All images beyond it
//! (`|n|∞ ≥ 2`, the far zone FF) act through one M2L at the root with the lattice tensor
//! `Λ_LM = Σ_{n∈FF} M_LM(n)` (unit box, `L ≤ 2p`) — the approach of the ScaFaCoS/GROMACS FMM
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
//! The harmonic lattice sums miss the non-harmonic part of the Ewald kernel: near the origin
//! `ψ(r) − Σ_{near} 1/|r+n| = (harmonic terms) + (2π/3V)|r|²` (from `∇²ψ = −4πδ + 4π/V`). Summed
//! over pairs this adds, with `c` the box centre, `Q = Σ q_j`, `D = Σ q_j (x_j − c)`,
//! `S = Σ q_j |x_j − c|²`:
//!
//! `φ_i += (2π/3V) (Q|x_i − c|² − 2 D·(x_i − c) + S)`,  `E_i += (4π/3V) (D − Q (x_i − c))`,
//!
//! which turns the (cubically summed, vacuum-like) lattice result into exactly the Ewald sum
//! with conducting (tin-foil) boundary: for a neutral system the energy changes by
//! `−2π|D|²/(3V)`, the well-known dipole term (de Leeuw, Perram & Smith, Proc. R. Soc. A 373,
//! 27 (1980)), and the potentials get the Ewald (zero-mean) constant. A net charge `Q ≠ 0` is
//! neutralised by a uniform background, as in Ewald summation without the `k = 0` term: the
//! energy then includes the usual `−πQ²/(2α²V)`-type background terms implicitly (the result is
//! the α-independent Ewald energy of the charged system with background).

use super::harmonics::{irregular, ncoef};

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
    lattice_tensor_alpha(p, std::f64::consts::PI)
}

/// [`lattice_tensor`] with the Ewald splitting parameter `α² = alpha2` (the result does not
/// depend on it; `α² = π` balances the real and reciprocal sums for the unit box).
pub fn lattice_tensor_alpha(p: usize, alpha2: f64) -> Vec<f64> {
    let lmax = 2 * p;
    let nt = ncoef(lmax);
    let alpha = alpha2.sqrt();
    let mut lam = vec![0.0; 2 * nt];
    let mut blk = vec![0.0; 2 * nt];
    // real space
    const R: i32 = 7;
    for nz in -R..=R {
        for ny in -R..=R {
            for nx in -R..=R {
                let ninf = nx.abs().max(ny.abs()).max(nz.abs());
                if ninf == 0 {
                    continue;
                }
                let r2 = (nx * nx + ny * ny + nz * nz) as f64;
                let g = incomplete_gamma_half(lmax, alpha2 * r2);
                irregular(lmax, [nx as f64, ny as f64, nz as f64], &mut blk);
                for l in 0..=lmax {
                    let f = if ninf >= 2 { g[l].0 } else { -g[l].1 };
                    for m in 0..=l {
                        let i = super::harmonics::idx(l, m);
                        lam[i] += f * blk[i];
                        lam[nt + i] += f * blk[nt + i];
                    }
                }
            }
        }
    }
    // reciprocal space (V = 1, k = 2π m)
    const K: i32 = 6;
    let two_pi = 2.0 * std::f64::consts::PI;
    // ln Γ(L+½)
    let mut lngam = vec![0.0; lmax + 1];
    lngam[0] = 0.5 * std::f64::consts::PI.ln();
    for l in 1..=lmax {
        lngam[l] = lngam[l - 1] + (l as f64 - 0.5).ln();
    }
    let pi32 = std::f64::consts::PI.powf(1.5);
    for mz in -K..=K {
        for my in -K..=K {
            for mx in -K..=K {
                if mx == 0 && my == 0 && mz == 0 {
                    continue;
                }
                let k = [two_pi * mx as f64, two_pi * my as f64, two_pi * mz as f64];
                let k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
                let kn = k2.sqrt();
                irregular(lmax, k, &mut blk);
                for l in 0..=lmax {
                    // |k|^{2L+1} 2^{−L} 4/k² e^{−k²/4α²} π^{3/2}/Γ(L+½), in logs
                    let lf = (2 * l + 1) as f64 * kn.ln() - l as f64 * std::f64::consts::LN_2 - k2 / (4.0 * alpha2) - lngam[l];
                    let f = pi32 * 4.0 / k2 * lf.exp();
                    // (−i)^L
                    let (cr, ci) = match l % 4 {
                        0 => (1.0, 0.0),
                        1 => (0.0, -1.0),
                        2 => (-1.0, 0.0),
                        _ => (0.0, 1.0),
                    };
                    for m in 0..=l {
                        let i = super::harmonics::idx(l, m);
                        let (br, bi) = (blk[i], blk[nt + i]);
                        lam[i] += f * (cr * br - ci * bi);
                        lam[nt + i] += f * (cr * bi + ci * br);
                    }
                }
            }
        }
    }
    lam[0] += -2.0 * alpha / std::f64::consts::PI.sqrt() - std::f64::consts::PI / alpha2;
    lam
}

/// Sums `(Q, D, S)` of the tin-foil/background correction (see the module docs) over sorted
/// particles, relative to the box centre `c`.
pub fn moments(x: &[f64], y: &[f64], z: &[f64], q: &[f64], c: [f64; 3]) -> (f64, [f64; 3], f64) {
    let mut qs = 0.0;
    let mut d = [0.0; 3];
    let mut s = 0.0;
    for i in 0..q.len() {
        let r = [x[i] - c[0], y[i] - c[1], z[i] - c[2]];
        qs += q[i];
        for a in 0..3 {
            d[a] += q[i] * r[a];
        }
        s += q[i] * (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]);
    }
    (qs, d, s)
}
