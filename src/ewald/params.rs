//! Parameter selection: from a requested relative RMS force accuracy, choose the splitting
//! parameter `ξ`, the real-space cutoff `r_c`, the grid `K_1 × K_2 × K_3` and the window
//! (spectral Ewald support `P`, SPME order `n`), minimising an estimated cost; every parameter
//! can be fixed by the caller and the others are then chosen around it.
//!
//! ## Error model
//! For `N` charges at random positions the RMS force error is `ΔF ≈ Q ε/√N`, `Q = Σ q_i²`,
//! where `ε² = ⟨|∇e|²⟩` is the mean square gradient of the pair-interaction error `e` over
//! relative positions (Kolafa & Perram, Mol. Simul. 9 (1992) 351; Deserno & Holm, J. Chem.
//! Phys. 109 (1998) 7678). Contributions:
//! * real space (truncation at `r_c`, Kolafa–Perram): `ε_R = 2 e^{−ξ²r_c²}/√(V r_c)`;
//! * k-space truncation at the grid's Nyquist radius `k_N = π/h`:
//!   `ε_T² = (8/V) ξ √(π/2) erfc(k_N/(√2 ξ))`;
//! * aliasing and window errors of the particle-mesh method, averaged over the positions of the
//!   particles relative to the grid (Hockney–Eastwood / Deserno–Holm style): with the window
//!   transform `ψ̂`, the deconvolution `C` of [`super::influence`] and `ĝ = 4π e^{−k²/4ξ²}/k²`,
//!   `ε_A² = (1/V²) Σ_m Σ_{p,p'} |κ_{p'} c_{pp'}(m) − k δ_{p0}δ_{p'0}|² ĝ(m)²` with
//!   `c_{pp'} = Π_d ψ̂(m_d + p_d K_d) ψ̂(m_d + p'_d K_d)/C_d(m_d)` and `κ_{p'} = k(m + p'K)` for
//!   analytic differentiation (SPME) or `κ = k(m)` for ik-differentiation (spectral Ewald).
//!   In grid units this is `ε_A² = I(ξh)/(8π³ V h)` with a universal function `I` of `ξh` for
//!   each window, computed once per process by Gauss–Legendre quadrature over the Brillouin zone
//!   (the cell is treated as orthorhombic with spacing `h = max_d |vec_d|/K_d`, which is
//!   conservative for triclinic cells). The Gaussian's truncation to `P` points is added as a
//!   relative window error `erfc(P/(4√τ))`.
//!
//! The request `tol` is read as a relative RMS force error of a condensed molecular system:
//! `ΔF ≤ s · tol · F_mol` with `F_mol = κ F_s`, where `F_s = (Q/N) (N/V)^{2/3}` is the force
//! between two r.m.s. charges at the mean interparticle distance and `κ` ([`FORCE_SCALE`]) the
//! measured ratio `F_rms / F_s` of such systems (4.2–5.3 on the five systems of the data folder:
//! TIP3P water, a DNA dodecamer in water, JAC DHFR, adenylate kinase, Src kinase;
//! `benches/calibrate_ewald.py`), and `s` ([`SAFETY`]) a margin for the model's scatter. So the
//! target is `ε ≤ ε* = s κ tol (N/V)^{2/3}/√N` (independent of the charges; `N` is the plan's
//! `n_max`). Calibrated so that the measured relative RMS force error of those systems lands
//! within `[tol/3, tol]` (0.4–0.7 tol for SPME and spectral Ewald, 1e-3 ≥ tol ≥ 1e-6). Random
//! charges with a minimum separation of 0.3 mean spacings have `F_rms ≈ 6.5 F_s` and land lower;
//! a system whose RMS force is below `κ F_s` (e.g. a perturbed ionic lattice, whose forces
//! vanish at the ideal sites) has larger relative errors in proportion: its absolute force error
//! is still `ΔF ≤ s tol F_mol`, and [`super::EwaldParams::est_rel_err`] reports the estimate in units of
//! `F_mol`. The budget is split evenly: `ε_R = ε_K = ε*/√2`.
//!
//! ## Cost model
//! Relative costs calibrated from instruction counts (see the constants): real space per pair
//! inside the cutoff (`N ρ (2π/3) r_c³` pairs), spreading and interpolation per point and
//! window cell (`P³` or `n³`; spectral Ewald spreads once and interpolates twice, complex;
//! SPME spreads once, real, and interpolates value and gradient), FFTs per `K³ log₂ K³`
//! (three complex FFTs for spectral Ewald, one real pair for SPME).

use super::box_::PeriodicBox;
use crate::error::{Error, Result};
use crate::fft::next_smooth_even;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// Which solver (C: `FARFIELD_EWALD_SPECTRAL` 0, `FARFIELD_EWALD_SPME` 1, `FARFIELD_EWALD_DIRECT` 2).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Spectral Ewald (Lindbo–Tornberg), Gaussian windows.
    Spectral,
    /// Smooth particle-mesh Ewald (Essmann et al.), cardinal B-splines.
    Spme,
    /// Classic Ewald sum with an explicit k-space sum (reference).
    Direct,
}

/// Caller overrides (0 = choose automatically).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Overrides {
    /// Splitting parameter `ξ` (1/length).
    pub xi: f64,
    /// Real-space cutoff.
    pub rc: f64,
    /// Grid size per axis (all three, or none); for the direct sum, `2 m_max + 1` modes per axis.
    pub grid: [usize; 3],
    /// Spectral Ewald support `P` (even) or SPME order.
    pub order: usize,
}

/// The chosen parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct Chosen {
    /// Splitting parameter `ξ`.
    pub xi: f64,
    /// Real-space cutoff.
    pub rc: f64,
    /// Grid (or, for the direct sum, `2 m_max + 1` per axis).
    pub grid: [usize; 3],
    /// Window support `P` (spectral Ewald) or B-spline order (SPME); 0 for the direct sum.
    pub order: usize,
    /// Gaussian shape in grid units² (spectral Ewald), else 0.
    pub tau: f64,
    /// k-space cutoff of the direct sum (else 0).
    pub kc: f64,
    /// Estimated relative RMS force error (in units of the force scale of the module docs).
    pub est_rel_err: f64,
    /// Estimated cost (single-core nanoseconds).
    pub cost: f64,
}

// Cost model constants (ns, one core), calibrated from instruction counts of the JAC DHFR
// benchmark (23,558 atoms): real space ≈ 90 instructions per pair inside the cutoff, SPME
// spreading + value/gradient interpolation ≈ 20 per point and window cell, the SPME FFT pair
// ≈ 7 per K³ log₂K³, spectral Ewald's complex spread + two interpolations ≈ 30 per point and
// window cell.
const C_PAIR: f64 = 3.0;
const C_SPREAD_SPME: f64 = 0.65;
const C_SPREAD_SE: f64 = 1.0;
const C_FFT: f64 = 0.23;
const C_MODE: f64 = 0.1;
const C_KSUM: f64 = 4.0;

/// Spectral Ewald Gaussian shape for support `p` (Lindbo–Tornberg's `m = 0.95 √(πP)`):
/// `τ = P² / (8 m²)` grid units², truncation at `e^{−m²/2}`.
pub fn se_tau(p: usize) -> f64 {
    let m2 = 0.9025 * std::f64::consts::PI * p as f64;
    (p * p) as f64 / (8.0 * m2)
}

/// `κ = F_rms / F_s` of condensed molecular systems (module docs; measured 4.2–5.3).
pub(crate) const FORCE_SCALE: f64 = 4.5;

/// Margin `s` on the target (module docs): the model's estimate is 0.8–1.0× the measured force
/// error of the data folder's systems, and the discrete grids land below the target.
pub(crate) const SAFETY: f64 = 0.75;

/// Target `ε*` of the module docs (including the force scale and the safety factor).
pub fn target(tol: f64, n: usize, v: f64) -> f64 {
    let n = n.max(1) as f64;
    SAFETY * FORCE_SCALE * tol * (n / v).powf(2.0 / 3.0) / n.sqrt()
}

/// Kolafa–Perram real-space error `ε_R`.
pub fn eps_real(xi: f64, rc: f64, v: f64) -> f64 {
    2.0 * (-(xi * rc) * (xi * rc)).exp() / (v * rc).sqrt()
}

/// `ξ` with `ε_R(ξ, r_c) = eps`.
fn xi_for_real(rc: f64, v: f64, eps: f64) -> f64 {
    let a = (2.0 / (eps * (v * rc).sqrt())).ln();
    a.max(0.25).sqrt() / rc
}

/// Smallest `r_c ≤ rmax` with `ε_R(ξ, r_c) ≤ eps` (`rmax` if none).
fn rc_for_real(xi: f64, v: f64, eps: f64, rmax: f64) -> f64 {
    if eps_real(xi, rmax, v) > eps {
        return rmax;
    }
    let (mut lo, mut hi) = (1e-6 * rmax, rmax);
    for _ in 0..80 {
        let mid = 0.5 * (lo + hi);
        if eps_real(xi, mid, v) > eps {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// k-space truncation error `ε_T²` for Nyquist radius `kn`.
fn eps_trunc2(xi: f64, kn: f64, v: f64) -> f64 {
    8.0 / v * xi * (0.5 * std::f64::consts::PI).sqrt() * libm::erfc(kn / (std::f64::consts::SQRT_2 * xi))
}

/// A window of a particle-mesh method.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Window {
    Gauss(usize),
    BSpline(usize),
}

/// `ln Ĩ` tabulated against `ln ξ̃` (see [`itilde`]).
struct Table {
    lx: Vec<f64>,
    li: Vec<f64>,
}

/// Per-axis window factors at wave number `kt = 2πν` (grid units, `ν ∈ [0, 1/2]`), split into
/// the main term and the alias sums so that the error is computed without cancellation:
/// `a = c_0²` (main term, `c_p = t_p / D`), `α = Σ_{p≠0} c_p²`, `1 − a`, `β = Σ_{p≠0} κ_p² c_p²`.
/// SPME: `t_p = (sin πν / (π(ν + p)))^n` (the Poisson-summed transform of the B-spline; Essmann's
/// denominator is `D = Σ_p t_p` for both parities). Spectral Ewald: `c_p = ψ̂(ν+p)/ψ̂(ν)`, `D = 1`,
/// `a = 1`, plus the Gaussian's truncation as a relative window error `e_t/ψ̂(ν)` on each side.
#[derive(Debug, Clone, Copy)]
struct AxisFactors {
    a: f64,
    alpha: f64,
    one_minus_a: f64,
    beta: f64,
}

fn axis_factors(w: Window, kt: f64) -> AxisFactors {
    let pi = std::f64::consts::PI;
    let nu = kt / (2.0 * pi);
    match w {
        Window::Gauss(p) => {
            let tau = se_tau(p);
            let et = libm::erfc(p as f64 / (4.0 * tau.sqrt()));
            let psin = (-tau * kt * kt).exp();
            let mut alpha = 0.0;
            let mut beta = 0.0;
            for pp in [-3i32, -2, -1, 1, 2, 3] {
                let pf = pp as f64;
                let r2 = (-2.0 * tau * 4.0 * pi * pi * ((nu + pf) * (nu + pf) - nu * nu)).exp();
                alpha += r2;
                beta += kt * kt * r2;
            }
            let t = 2.0 * (et / psin) * (et / psin);
            AxisFactors { a: 1.0, alpha: alpha + t, one_minus_a: 0.0, beta: beta + kt * kt * t }
        }
        Window::BSpline(n) => {
            let sn = (pi * nu).sin();
            let tp = |pp: i32| -> f64 {
                let x = pi * (nu + pp as f64);
                if x == 0.0 {
                    1.0
                } else {
                    (sn / x).powi(n as i32)
                }
            };
            let t0 = tp(0);
            let mut delta = 0.0;
            let mut alias2 = 0.0;
            let mut beta = 0.0;
            for pp in (-6i32..=6).filter(|&p| p != 0) {
                let t = tp(pp);
                delta += t;
                alias2 += t * t;
                let kap = 2.0 * pi * (nu + pp as f64);
                beta += kap * kap * t * t;
            }
            let d = t0 + delta;
            let d2 = (d * d).max(1e-300);
            AxisFactors { a: t0 * t0 / d2, alpha: alias2 / d2, one_minus_a: delta * (d + t0) / d2, beta: beta / d2 }
        }
    }
}

/// Mean-square field error factor `Σ_{p,p'} |κ_{p'} c_{pp'} − k δ|²` (without `ĝ²`) for the
/// three axes' factors and `k² = Σ k_d²`, computed without cancellation.
fn window_error(w: Window, f: [&AxisFactors; 3], kd2: [f64; 3]) -> f64 {
    let k2 = kd2[0] + kd2[1] + kd2[2];
    match w {
        Window::Gauss(_) => {
            // ik-differentiation: k² ((ΠS)² − 1), S_d = 1 + α_d
            let s = [1.0 + f[0].alpha, 1.0 + f[1].alpha, 1.0 + f[2].alpha];
            let sm1 = f[0].alpha * s[1] * s[2] + f[1].alpha * s[2] + f[2].alpha;
            k2 * sm1 * (sm1 + 2.0)
        }
        Window::BSpline(_) => {
            // analytic differentiation
            let a = [f[0].a, f[1].a, f[2].a];
            let al = [f[0].alpha, f[1].alpha, f[2].alpha];
            let aa = [a[0] + al[0], a[1] + al[1], a[2] + al[2]];
            let p = a[0] * a[1] * a[2];
            let dp = al[0] * aa[1] * aa[2] + a[0] * (al[1] * aa[2] + a[1] * al[2]);
            let one_minus_p = f[0].one_minus_a + a[0] * (f[1].one_minus_a + a[1] * f[2].one_minus_a);
            let mut second = 0.0;
            for x in 0..3 {
                let (d1, d2) = ((x + 1) % 3, (x + 2) % 3);
                let q = aa[d1] * aa[d2] * (kd2[x] * a[x] + f[x].beta);
                let dq2 = al[d1] * aa[d2] + a[d1] * al[d2];
                let dq = f[x].beta * aa[d1] * aa[d2] + kd2[x] * a[x] * dq2;
                second += dp * q + p * dq;
            }
            k2 * one_minus_p * one_minus_p + second
        }
    }
}

/// `Ĩ(ξ̃) = I(ξ̃)/(8π³) + 8√(π/2) ξ̃ erfc(π/(√2 ξ̃))`, so that `ε_K² = Ĩ(ξh)/(V h)`.
///
/// The integrand is symmetric under permutations of the three axes (the windows are
/// isotropic: [`window_error`] and `ĝ²` depend on the axes' factors symmetrically), so the
/// product-rule sum runs over the node triples `i ≤ j ≤ k` only, each weighted by the number of
/// its distinct permutations (1, 3 or 6): a sixth of the evaluations of the full cube, the same
/// value to rounding (`itilde_symmetric_sum_equals_the_full_cube`). This table is made on the
/// first plan of each window in a process (72 values, 5,984 rather than 32,768 evaluations each).
fn itilde_direct(w: Window, nodes: &[f64], wts: &[f64], fac: &[AxisFactors], xit: f64) -> f64 {
    let nq = nodes.len();
    let mut sum = 0.0;
    let ex = gaussian_factors(nodes, xit);
    for i in 0..nq {
        for j in i..nq {
            for k in j..nq {
                let perms = if i == k {
                    1.0
                } else if i == j || j == k {
                    3.0
                } else {
                    6.0
                };
                sum += perms * itilde_term(w, nodes, wts, fac, &ex, [i, j, k]);
            }
        }
    }
    itilde_from_sum(sum, xit)
}

/// `exp(−k²/(2ξ̃²))` at the quadrature nodes (one axis' factor of `ĝ²` without `16π²/k⁴`).
fn gaussian_factors(nodes: &[f64], xit: f64) -> Vec<f64> {
    let a = 1.0 / (4.0 * xit * xit);
    nodes.iter().map(|&k| (-2.0 * a * k * k).exp()).collect()
}

/// One node triple's term of [`itilde_direct`]'s product-rule sum: weights × `ĝ²` × window error.
fn itilde_term(w: Window, nodes: &[f64], wts: &[f64], fac: &[AxisFactors], ex: &[f64], [i, j, k]: [usize; 3]) -> f64 {
    let sixteen_pi2 = 16.0 * std::f64::consts::PI * std::f64::consts::PI;
    let kd2 = [nodes[i] * nodes[i], nodes[j] * nodes[j], nodes[k] * nodes[k]];
    let k2 = kd2[0] + kd2[1] + kd2[2];
    let g2 = sixteen_pi2 * ex[i] * ex[j] * ex[k] / (k2 * k2);
    if g2 == 0.0 {
        return 0.0;
    }
    wts[i] * wts[j] * wts[k] * g2 * window_error(w, [&fac[i], &fac[j], &fac[k]], kd2)
}

/// `Ĩ(ξ̃)` from the product-rule sum over the octant `[0, π]³`.
fn itilde_from_sum(sum: f64, xit: f64) -> f64 {
    let pi = std::f64::consts::PI;
    8.0 * sum / (8.0 * pi * pi * pi) + 8.0 * (0.5 * pi).sqrt() * xit * libm::erfc(pi / (std::f64::consts::SQRT_2 * xit))
}

fn table(w: Window) -> Arc<Table> {
    static CACHE: OnceLock<Mutex<HashMap<Window, Arc<Table>>>> = OnceLock::new();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(t) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&w) {
        return t.clone();
    }
    let (nodes, wts) = crate::quad::gauss_legendre(32, 0.0, std::f64::consts::PI);
    let fac: Vec<AxisFactors> = nodes.iter().map(|&k| axis_factors(w, k)).collect();
    let npts = 72;
    let (x0, x1) = (0.02f64.ln(), 4.0f64.ln());
    let mut lx = Vec::with_capacity(npts);
    let mut li = Vec::with_capacity(npts);
    for i in 0..npts {
        let l = x0 + (x1 - x0) * i as f64 / (npts - 1) as f64;
        let v = itilde_direct(w, &nodes, &wts, &fac, l.exp()).max(1e-300);
        lx.push(l);
        li.push(v.ln());
    }
    // enforce monotonicity (quadrature noise at the small end)
    for i in (0..npts - 1).rev() {
        if li[i] > li[i + 1] {
            li[i] = li[i + 1];
        }
    }
    let t = Arc::new(Table { lx, li });
    cache.lock().unwrap_or_else(|e| e.into_inner()).insert(w, t.clone());
    t
}

/// `Ĩ(ξ̃)` by interpolation in the table (log–log, extrapolated at the ends).
fn itilde(w: Window, xit: f64) -> f64 {
    let t = table(w);
    let l = xit.ln();
    let n = t.lx.len();
    let i = ((l - t.lx[0]) / (t.lx[1] - t.lx[0])).floor().clamp(0.0, (n - 2) as f64) as usize;
    let f = (l - t.lx[i]) / (t.lx[i + 1] - t.lx[i]);
    (t.li[i] + f * (t.li[i + 1] - t.li[i])).exp()
}

/// Largest `ξ̃` (≤ 4) with `Ĩ(ξ̃)/ξ̃ ≤ bound`.
fn max_xit(w: Window, bound: f64) -> f64 {
    let (mut lo, mut hi) = (0.02f64, 4.0f64);
    if itilde(w, hi) / hi <= bound {
        return hi;
    }
    if itilde(w, lo) / lo > bound {
        return lo;
    }
    for _ in 0..60 {
        let mid = (lo * hi).sqrt();
        if itilde(w, mid) / mid <= bound {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    lo
}

/// Largest grid size per axis of the particle-mesh methods (and of `opts.grid`): 2¹⁶.
pub(crate) const MAX_GRID_AXIS: usize = 1 << 16;
/// Largest number of grid points `K_1 K_2 K_3` of the particle-mesh methods: 2³³.
pub(crate) const MAX_GRID_POINTS: usize = 1 << 33;
/// Largest number of half-space wave vectors of the direct sum: 2²⁶.
pub(crate) const MAX_DIRECT_MODES: usize = 1 << 26;
/// Largest `m_max` per axis of the direct sum (so `2 m_max + 1` modes per axis): 2²⁰.
pub(crate) const MAX_DIRECT_MMAX: usize = 1 << 20;

/// Smallest tolerance each method can reach in double precision with its error model (a
/// smaller request is raised to this, with a warning readable from the plan).
pub fn min_tol(method: Method) -> f64 {
    match method {
        Method::Spectral | Method::Spme => MIN_TOL_MESH,
        Method::Direct => MIN_TOL_DIRECT,
    }
}
const MIN_TOL_MESH: f64 = 1e-12;
const MIN_TOL_DIRECT: f64 = 1e-14;

/// Checks a grid against [`MAX_GRID_AXIS`] and [`MAX_GRID_POINTS`] (sizes as `f64`, so that an
/// unrepresentable request is caught before it is converted). Errors: [`Error::Range`].
pub fn check_grid(g: [f64; 3], what: &str) -> Result<[usize; 3]> {
    if let Some(d) = (0..3).find(|&d| !(g[d] <= MAX_GRID_AXIS as f64)) {
        return Err(Error::Range(format!(
            "{what} needs {:.3e} grid points along axis {d}, above the limit of {MAX_GRID_AXIS} per axis \
             (tolerance, box shape or the xi / rc override too demanding)",
            g[d]
        )));
    }
    let tot = g[0] * g[1] * g[2];
    if !(tot <= MAX_GRID_POINTS as f64) {
        return Err(Error::Range(format!(
            "{what} needs a grid of {:.3e} x {:.3e} x {:.3e} = {tot:.3e} points, above the limit of 2^33",
            g[0], g[1], g[2]
        )));
    }
    Ok(g.map(|v| v as usize))
}

/// Estimated k-space error `ε_K` of a particle-mesh method with window `w` on grid `nf`.
fn eps_kspace(w: Window, bx: &PeriodicBox, xi: f64, nf: [usize; 3]) -> f64 {
    let h = (0..3).map(|d| bx.lengths[d] / nf[d] as f64).fold(0.0, f64::max);
    (itilde(w, xi * h) / (bx.volume * h)).sqrt()
}

/// Smallest grid with `ε_K ≤ eps` for window `w` (each axis even, smooth, ≥ 2·width).
/// Errors: [`Error::Range`] when it exceeds [`MAX_GRID_AXIS`] or [`MAX_GRID_POINTS`] (checked
/// before the smooth size is searched, so the search is bounded).
fn grid_for(w: Window, bx: &PeriodicBox, xi: f64, eps: f64) -> Result<[usize; 3]> {
    let xit = max_xit(w, eps * eps * bx.volume / xi);
    let h = xit / xi;
    let width = match w {
        Window::Gauss(p) | Window::BSpline(p) => p,
    };
    let g = [0, 1, 2].map(|d| (bx.lengths[d] / h).ceil().max((2 * width) as f64));
    // the smooth size is at most 25/24 of the request: check with that margin
    check_grid(g.map(|v| v * 1.1), "the error target")?;
    let g = [0, 1, 2].map(|d| next_smooth_even(g[d] as usize));
    check_grid(g.map(|v| v as f64), "the error target")
}

fn kspace_cost(method: Method, n: usize, width: usize, nf: [usize; 3]) -> f64 {
    let k3 = (nf[0] * nf[1] * nf[2]) as f64;
    let w3 = (width * width * width) as f64;
    let lg = k3.log2().max(1.0);
    match method {
        // one forward and two inverse complex FFTs ≈ 3× the real-to-complex pair
        Method::Spectral => C_SPREAD_SE * n as f64 * w3 + 3.0 * C_FFT * k3 * lg + 2.0 * C_MODE * k3,
        Method::Spme => C_SPREAD_SPME * n as f64 * w3 + C_FFT * k3 * lg + C_MODE * k3,
        Method::Direct => 0.0,
    }
}

/// Chooses the parameters (module docs). `n` = the plan's `n_max`; the cell is expected in
/// the plan's internal units (largest entry of order 1). Errors: [`Error::InvalidArg`] for an
/// override that cannot work (cutoff above half the smallest height, grid below twice the
/// window, bad order); [`Error::Range`] when the grid or the number of wave vectors the target
/// needs exceeds the stated limits ([`MAX_GRID_AXIS`], [`MAX_GRID_POINTS`],
/// [`MAX_DIRECT_MODES`], [`MAX_DIRECT_MMAX`]). The cost is bounded (a fixed number of
/// candidates, each with bounded work).
pub fn choose(method: Method, bx: &PeriodicBox, n: usize, tol: f64, ov: &Overrides) -> Result<Chosen> {
    let v = bx.volume;
    let rmax = 0.5 * bx.min_height();
    if ov.xi < 0.0 || !ov.xi.is_finite() || ov.rc < 0.0 || !ov.rc.is_finite() {
        return Err(Error::InvalidArg(format!("xi = {:e} and rc = {:e} must be finite and ≥ 0 (0 = automatic)", ov.xi, ov.rc)));
    }
    if ov.rc > 0.0 && ov.rc > rmax * (1.0 + 1e-12) {
        return Err(Error::InvalidArg(format!(
            "cutoff rc = {:e} exceeds half the smallest box height ({rmax:.6e}); use a smaller cutoff or a larger box",
            ov.rc
        )));
    }
    let grid_set = ov.grid.iter().all(|&g| g > 0);
    if !grid_set && ov.grid.iter().any(|&g| g > 0) {
        return Err(Error::InvalidArg(format!("grid = {:?}: give all three sizes or none (0)", ov.grid)));
    }
    if grid_set {
        check_grid(ov.grid.map(|g| g as f64), "opts.grid")?;
    }
    let eps = target(tol, n, v);
    let eps_r = eps / std::f64::consts::SQRT_2;
    let nf = n as f64;
    let pairs = |rc: f64| nf * (nf / v) * (2.0 * std::f64::consts::PI / 3.0) * rc * rc * rc;
    if method == Method::Direct {
        let (xi, rc) = match (ov.xi > 0.0, ov.rc > 0.0) {
            (true, true) => (ov.xi, ov.rc),
            (false, true) => (xi_for_real(ov.rc, v, eps_r), ov.rc),
            (true, false) => (ov.xi, rc_for_real(ov.xi, v, eps_r, rmax)),
            (false, false) => {
                let xi0 = std::f64::consts::PI.sqrt() * (nf / (v * v)).powf(1.0 / 6.0);
                let rc = rc_for_real(xi0, v, eps_r, rmax);
                if rc >= rmax {
                    (xi_for_real(rmax, v, eps_r), rmax)
                } else {
                    (xi0, rc)
                }
            }
        };
        let er = eps_real(xi, rc, v);
        let ek2 = (eps * eps - er * er).max(0.5 * eps * eps);
        let kc = if grid_set {
            let tp = 2.0 * std::f64::consts::PI;
            (0..3).map(|d| tp * ((ov.grid[d] / 2) as f64 + 0.5) / bx.lengths[d]).fold(f64::INFINITY, f64::min)
        } else {
            let (mut lo, mut hi) = (0.0, 100.0 * xi);
            for _ in 0..100 {
                let mid = 0.5 * (lo + hi);
                if eps_trunc2(xi, mid, v) > ek2 {
                    lo = mid;
                } else {
                    hi = mid;
                }
            }
            hi
        };
        let mm = direct_mmax(bx, kc)?;
        let nk = 2.0 / 3.0 * std::f64::consts::PI * (kc * kc * kc) * v / (8.0 * std::f64::consts::PI.powi(3));
        let est = (er * er + eps_trunc2(xi, kc, v)).sqrt() / eps * SAFETY * tol;
        return Ok(Chosen {
            xi,
            rc,
            grid: mm.map(|m| 2 * m + 1),
            order: 0,
            tau: 0.0,
            kc,
            est_rel_err: est,
            cost: C_PAIR * pairs(rc) + C_KSUM * nf * nk,
        });
    }
    let windows: Vec<usize> = if ov.order > 0 {
        match method {
            Method::Spectral if !ov.order.is_multiple_of(2) || !(4..=32).contains(&ov.order) => {
                return Err(Error::InvalidArg(format!(
                    "order_or_support = {}: the spectral Ewald support P must be even, 4 ≤ P ≤ 32",
                    ov.order
                )))
            }
            Method::Spme if !(2..=16).contains(&ov.order) => {
                return Err(Error::InvalidArg(format!("order_or_support = {}: the SPME order must be in 2..=16", ov.order)))
            }
            _ => vec![ov.order],
        }
    } else {
        match method {
            Method::Spectral => (4..=24).step_by(2).collect(),
            _ => (4..=10).collect(),
        }
    };
    if grid_set {
        let wmax = windows.iter().cloned().min().unwrap_or(4);
        if let Some(d) = (0..3).find(|&d| ov.grid[d] < 2 * wmax || !ov.grid[d].is_multiple_of(2)) {
            return Err(Error::InvalidArg(format!(
                "grid[{d}] = {}: grid sizes must be even and at least twice the window width ({})",
                ov.grid[d], wmax
            )));
        }
    }
    let rcs: Vec<f64> = if ov.rc > 0.0 {
        vec![ov.rc]
    } else if ov.xi > 0.0 {
        vec![rc_for_real(ov.xi, v, eps_r, rmax)]
    } else {
        let ell = (v / nf.max(1.0)).cbrt();
        let lo = (0.75 * ell).min(rmax).max(0.05 * rmax);
        let nc = 40;
        (0..nc).map(|i| lo * (rmax / lo).powf(i as f64 / (nc - 1) as f64)).collect()
    };
    let mut best: Option<Chosen> = None;
    let mut range_err: Option<Error> = None;
    for &rc in &rcs {
        let xi = if ov.xi > 0.0 { ov.xi } else { xi_for_real(rc, v, eps_r) };
        let er = eps_real(xi, rc, v);
        let ek = (eps * eps - er * er).max(0.5 * eps * eps).sqrt();
        for &wd in &windows {
            let w = match method {
                Method::Spectral => Window::Gauss(wd),
                _ => Window::BSpline(wd),
            };
            let nfg = if grid_set {
                ov.grid
            } else {
                match grid_for(w, bx, xi, ek) {
                    Ok(g) => g,
                    Err(e) => {
                        range_err.get_or_insert(e);
                        continue;
                    }
                }
            };
            if nfg.iter().any(|&g| g < 2 * wd) {
                continue;
            }
            let ekk = eps_kspace(w, bx, xi, nfg);
            let cost = C_PAIR * pairs(rc) + kspace_cost(method, n, wd, nfg);
            let c = Chosen {
                xi,
                rc,
                grid: nfg,
                order: wd,
                tau: if method == Method::Spectral { se_tau(wd) } else { 0.0 },
                kc: 0.0,
                est_rel_err: (er * er + ekk * ekk).sqrt() / eps * SAFETY * tol,
                cost,
            };
            if best.as_ref().is_none_or(|b| c.cost < b.cost) {
                best = Some(c);
            }
        }
    }
    match (best, range_err) {
        (Some(b), _) => Ok(b),
        (None, Some(e)) => Err(e),
        (None, None) => Err(Error::InvalidArg("no admissible parameters: the grid is too small for every window width".into())),
    }
}

/// `m_max` per axis of the direct sum with cutoff `kc` (the modes with `|k| ≤ kc` lie within
/// `|m_d| ≤ kc |vec_d| / 2π`), checked against [`MAX_DIRECT_MMAX`] and, for the number of
/// half-space wave vectors (`≈ (2π/3) kc³ V / (2π)³`) and of the columns the enumeration visits,
/// against [`MAX_DIRECT_MODES`]. Errors: [`Error::Range`].
pub fn direct_mmax(bx: &PeriodicBox, kc: f64) -> Result<[usize; 3]> {
    let tp = 2.0 * std::f64::consts::PI;
    let mm = [0, 1, 2].map(|d| (kc * bx.lengths[d] / tp).floor());
    if let Some(d) = (0..3).find(|&d| !(mm[d] <= MAX_DIRECT_MMAX as f64)) {
        return Err(Error::Range(format!(
            "the direct sum needs wave vectors up to |m_{d}| = {:.3e}, above the limit of 2^20 \
             (box too elongated or skewed for the tolerance, or the xi / rc override too demanding)",
            mm[d]
        )));
    }
    let nk = (2.0 / 3.0) * std::f64::consts::PI * (kc * kc * kc) * bx.volume / (tp * tp * tp);
    // columns (m0, m1) the enumeration visits: bounded by the sphere's extent along a*_0, a*_1
    let cols = (kc / (tp * bx.recip[0][0]) + 1.0) * (2.0 * kc / (tp * bx.recip[1][1]) + 1.0);
    if !(nk <= MAX_DIRECT_MODES as f64) || !(cols <= MAX_DIRECT_MODES as f64) {
        return Err(Error::Range(format!(
            "the direct sum needs about {:.3e} wave vectors ({:.3e} columns), above the limit of 2^26 \
             (box too large against the splitting, or the tolerance too small; use SPME or spectral Ewald)",
            nk, cols
        )));
    }
    Ok(mm.map(|v| v as usize))
}

/// Whether the chosen grid still meets the target for a new cell (used by `set_box`).
pub fn still_accurate(method: Method, bx: &PeriodicBox, n: usize, tol: f64, c: &Chosen) -> bool {
    if 2.0 * c.rc > bx.min_height() * (1.0 + 1e-12) {
        return false;
    }
    let eps = target(tol, n, bx.volume);
    let er = eps_real(c.xi, c.rc, bx.volume);
    let ek = match method {
        Method::Direct => eps_trunc2(c.xi, c.kc, bx.volume).sqrt(),
        Method::Spectral => eps_kspace(Window::Gauss(c.order), bx, c.xi, c.grid),
        Method::Spme => eps_kspace(Window::BSpline(c.order), bx, c.xi, c.grid),
    };
    (er * er + ek * ek).sqrt() <= 1.5 * eps
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sum over the node triples `i ≤ j ≤ k` with their permutation counts equals the
    /// product rule over the whole cube of nodes (an independent evaluation: every triple, no
    /// symmetry assumed), for both windows, several orders and the table's range of `ξ̃`.
    #[test]
    fn itilde_symmetric_sum_equals_the_full_cube() {
        let (nodes, wts) = crate::quad::gauss_legendre(32, 0.0, std::f64::consts::PI);
        for w in [Window::Gauss(4), Window::Gauss(12), Window::BSpline(3), Window::BSpline(6), Window::BSpline(10)] {
            let fac: Vec<AxisFactors> = nodes.iter().map(|&k| axis_factors(w, k)).collect();
            for xit in [0.02, 0.3, 1.0, 4.0] {
                let ex = gaussian_factors(&nodes, xit);
                let mut full = 0.0;
                for i in 0..nodes.len() {
                    for j in 0..nodes.len() {
                        for k in 0..nodes.len() {
                            full += itilde_term(w, &nodes, &wts, &fac, &ex, [i, j, k]);
                        }
                    }
                }
                let (want, got) = (itilde_from_sum(full, xit), itilde_direct(w, &nodes, &wts, &fac, xit));
                assert!((got - want).abs() <= 1e-13 * want, "{w:?} ξ̃ {xit}: {got:e} vs the full cube {want:e}");
            }
        }
    }

    #[test]
    fn tables_are_monotone_and_grids_shrink_with_tol() {
        let bx = PeriodicBox::orthorhombic([3.0, 3.0, 3.0]).unwrap();
        let mut prev = [0usize; 3];
        for tol in [1e-3, 1e-5, 1e-7, 1e-9] {
            let c = choose(Method::Spme, &bx, 2700, tol, &Overrides::default()).unwrap();
            assert!(c.grid[0] >= prev[0], "{c:?}");
            prev = c.grid;
            assert!(c.est_rel_err <= 1.01 * tol, "{c:?}");
            let s = choose(Method::Spectral, &bx, 2700, tol, &Overrides::default()).unwrap();
            assert!(s.est_rel_err <= 1.01 * tol, "{s:?}");
        }
        for p in [4usize, 8, 16] {
            let t = table(Window::Gauss(p));
            assert!(t.li.windows(2).all(|w| w[0] <= w[1]));
        }
    }
}
