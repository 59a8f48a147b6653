//! Periodic electrostatics of point charges: spectral Ewald, smooth particle-mesh Ewald and the
//! classic Ewald sum, in orthorhombic and triclinic cells.
//!
//! ## What is computed
//! For charges `q_i` at positions `r_i` (interleaved `xyz[3*i + d]`, any values: positions are
//! wrapped into the cell internally) in a cell with lattice vectors `a, b, c` (rows of a
//! lower-triangular 3×3 matrix, as GROMACS, LAMMPS and OpenMM give them):
//! * the potential `φ_i = Σ_j Σ_n' q_j / |r_i − r_j + n|` (all periodic images `n`; the prime
//!   drops `j = i, n = 0`), summed in the Ewald way (conditionally convergent sum taken with
//!   tin-foil boundary conditions), including the self-interaction correction, so that
//!   `φ_i = ∂U/∂q_i`;
//! * the field `E_i = −∇_i φ` (force `F_i = q_i E_i`);
//! * the energy `U = ½ Σ_i q_i φ_i`;
//! * the virial tensor `W_αβ = −∂U/∂ε_αβ`, the derivative of the energy under a homogeneous
//!   strain `r → (1 + ε) r` of positions and cell. For pair terms this is the familiar
//!   `W = Σ_{pairs} r_ij ⊗ F_ij` (`r_ij = r_i − r_j`, `F_ij` the force on `i` from `j`;
//!   LAMMPS's convention, `P = (2K + tr W)/(3V)`; GROMACS's `Ξ = −½ W`); the k-space part is
//!   `Σ_k ½θ|S|² [δ − 2(1/(4ξ²) + 1/k²) k ⊗ k]` (Essmann et al. 1995 eq. 2.9). For Coulomb
//!   `tr W = U`.
//!
//! Units are the caller's (docs/design.md §2): no Coulomb constant is applied; multiply `φ`, `E`,
//! `U`, `W` by yours (GROMACS 138.935458 kJ mol⁻¹ nm e⁻², LAMMPS `qqr2e`, 1/(4πε₀)).
//!
//! ## Splitting
//! `φ = φ^R + φ^F + φ^self + φ^bg` with the real-space sum of `erfc(ξr)/r` within `r_c`
//! ([`real_space`]), the smooth part from k-space ([`spectral`], [`spme`], or the explicit sum
//! of [`direct`]), the self term `φ^self_i = −2ξ/√π q_i` (energy `−ξ/√π Σ q_i²`) and, for a net
//! charge `Q = Σ q_i ≠ 0`, the uniform neutralising background: energy `−π Q²/(2 V ξ²)`, potential
//! `−π Q/(V ξ²)` on every charge, virial `−π Q²/(2 V ξ²) δ_αβ` (no force).
//!
//! ## Exclusions and scaled pairs
//! [`CpuEwald::set_exclusions`] takes index pairs whose full `1/r` interaction (nearest image)
//! is removed from potentials, fields, energy and virial, as MD codes need for bonded pairs:
//! the real-space `erfc` term is dropped and `erf(ξr)/r` subtracted (its `r → 0` limit
//! `2ξ/√π` for a coincident excluded pair, whose real-space term the pair kernel skips).
//! A pair is unordered: `(i, j)` and `(j, i)` are the same pair, and a pair listed several
//! times is excluded once. [`CpuEwald::set_exclusions_scaled`] gives each pair a scale `s`:
//! the pair then interacts as `s q_i q_j / r` (1-4 pairs of AMBER: `s = 1/1.2`, OPLS: 0.5;
//! `s = 0` is an exclusion), i.e. `(1 − s)` times the correction above is applied.
//!
//! ## Terms: k-space only, real space only
//! MD codes (GROMACS, LAMMPS, OpenMM) sum the real-space term in their own pair loop and ask
//! the long-range solver for the rest. [`EwaldOpts::terms`] selects what a plan evaluates:
//! * [`Terms::All`] (default): everything above;
//! * [`Terms::KSpace`]: `φ^F + φ^self + φ^bg` and, for each excluded or scaled pair, the
//!   k-space share of its correction, `−(1 − s) erf(ξr)/r` (nearest image). The caller's pair
//!   loop must add `Σ erfc(ξr)/r` over the pairs within its cutoff, using the plan's `ξ`
//!   ([`CpuEwald::params`]), skipping excluded pairs and scaling scaled ones (LAMMPS's
//!   `coul/long` styles instead keep every pair and subtract `(1 − s) q_i q_j / r` themselves:
//!   then give the plan no exclusions). Give the caller's cutoff as
//!   [`Overrides::rc`], so that `ξ` and the mesh are chosen for it and `tol`, or `ξ` (and the
//!   grid) directly. No real-space work or storage; no coincidence check (the caller's loop
//!   meets coincident charges).
//! * [`Terms::Real`]: `φ^R`, the pair sum of `erfc(ξr)/r` within `r_c`, each excluded pair
//!   dropped and each scaled pair scaled (`−(1 − s) erfc(ξr)/r` for `r < r_c`). No FFT grids.
//!
//! `KSpace` + `Real` = `All` for the same `ξ`, `r_c` and grid (tested to rounding): a code
//! that wants both from one set of parameters makes the `KSpace` plan first and passes its
//! `ξ` and `r_c` to the `Real` plan.
//!
//! ## Accuracy and parameters
//! `tol` is a relative RMS force accuracy — the RMS force error over the RMS Coulomb force of
//! all pairs (no exclusions) — calibrated on condensed molecular systems (their
//! measured errors land within `[tol/3, tol]`; see [`params`] for the error model, the
//! calibration and the cost model that picks `ξ`, `r_c`, the grid and the window); every
//! parameter can be overridden. The energy's relative error is of the order of `tol`: far
//! below it for molecular systems (water: < 0.1 tol), up to 4 tol for random charges, whose
//! energy is a sum of terms of both signs; the virial's (RMS over its nine components) up to
//! 8 tol on random charges (`ewald::tests`, the Fortran test). Force fields exclude 1-2 and
//! 1-3 pairs, whose forces dominate the all-pairs RMS force: relative to the RMS of the force
//! field's own Coulomb forces the same absolute error is 10–15× larger (the LAMMPS peptide and
//! SPC/E water, `examples/lammps`).
//! [`CpuEwald::set_box`] changes the cell, keeping the parameters while the estimated error
//! stays within 1.5× the target and re-planning (new grid, FFT plans) otherwise.
//!
//! ## Scale, limits and degenerate input
//! The Coulomb problem is scale-covariant: with `x' = x/s`, `q' = q/t` the results are
//! `φ = (t/s) φ'`, `E = (t/s²) E'`, `U = (t²/s) U'`, `W = (t²/s) W'`, and `ξ = ξ'/s`,
//! `r_c = s r_c'`. A plan works internally with `s` the power of two nearest above the cell's
//! largest entry (kept across `set_box` while the cell stays within a factor 2⁸ of it) and
//! `t` the power of two of the largest charge per `execute`, so every kernel sees numbers of
//! order one and every cell scale whose results are representable works (tested from 1e-150
//! to 1e150); scaling by powers of two is exact. A requested result that overflows, or whose
//! largest value underflows below the smallest normal double, is an [`Error::Range`].
//! Limits (all checked before anything is allocated or looped over, [`Error::Range`] beyond
//! them): the smallest cell height at least 2⁻²⁰ of the largest cell entry; particle-mesh grids
//! at most 2¹⁶ per axis and 2³³ points ([`params::MAX_GRID_AXIS`], [`params::MAX_GRID_POINTS`]);
//! the direct sum at most 2²⁶ wave vectors and `|m_d| ≤ 2²⁰`; tolerances below
//! [`params::min_tol`] are raised to it with the warning [`WARN_TOL_CLAMPED`].
//! Distinct charges closer than 2⁻⁴⁰ of the largest cell length (coincident) make the energy
//! infinite: unless the pair is excluded, `execute` fails with [`Error::InvalidArg`] naming
//! both (found in the real-space pass, which stops there: `O(n)` even when all coincide).
//!
//! ## Cost of repeated evaluation
//! A plan owns its thread pool, FFT plans, grids, cell-list storage and scratch; `execute` with
//! new positions re-bins the atoms and reuses everything else.

pub mod box_;
#[cfg(feature = "mpi")]
pub mod dist;
mod direct;
mod erfc;
pub(crate) mod influence;
pub(crate) mod pair_kernel;
pub mod params;
pub(crate) mod real_space;
mod spectral;
mod spme;
#[doc(hidden)]
pub mod testdata;
#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_terms;

pub use box_::PeriodicBox;
pub use params::{Method, Overrides};
#[doc(hidden)]
pub use real_space::real_space_only;

use crate::backend::{BackendChoice, GpuMethod, GpuStream};
use crate::error::{try_resize, Error, Result};
use crate::scale::{exponent_of, pow2, rescale};
use crate::fft::FFTW_ESTIMATE;
use crate::threads::{SyncPtr, Threads};
use direct::DirectKspace;
pub(crate) use crate::pairs::{check_exclusions, Exclusions};
use params::Chosen;
use real_space::RealSpace;
use spectral::Spectral;
use spme::Spme;
use std::time::Instant;

/// A raw pointer shared between the plan's threads for disjoint writes (each use documents
/// why they are disjoint); unlike `SyncPtr` it is `Copy` for any pointee.
pub(crate) struct Shared<E>(pub *mut E);
impl<E> Clone for Shared<E> {
    fn clone(&self) -> Self {
        *self
    }
}
impl<E> Copy for Shared<E> {}
// SAFETY: see each use: only disjoint elements are accessed from different threads.
unsafe impl<E> Send for Shared<E> {}
unsafe impl<E> Sync for Shared<E> {}

/// Warning bit of [`EwaldParams::warnings`]: the requested tolerance was below
/// [`params::min_tol`] and was raised to it (same value as the NUFFT's
/// `FARFIELD_WARN_TOL_CLAMPED`).
pub const WARN_TOL_CLAMPED: i32 = crate::nufft::options::FARFIELD_WARN_TOL_CLAMPED;

/// Warning bit of [`EwaldParams::warnings`]: the caller's overrides (window, grid, `ξ`, `r_c`)
/// keep the estimated error above the tolerance (`est_rel_err` says by how much).
pub const WARN_TOL_NOT_MET: i32 = 2;

/// The warning bits of a choice.
fn warn_bits(c: &Chosen, tol_used: f64, clamped: i32) -> i32 {
    clamped | if c.est_rel_err > 1.01 * tol_used { WARN_TOL_NOT_MET } else { 0 }
}

/// Smallest cell height relative to the cell's largest entry: 2⁻²⁰.
pub(crate) const MIN_ASPECT: f64 = 1.0 / (1u64 << 20) as f64;

/// The cell in internal units (entries divided by `2^e`), checked: [`Error::InvalidArg`] as
/// [`PeriodicBox::new`]; [`Error::Range`] for a cell flatter than [`MIN_ASPECT`].
fn internal_box(cell: &[f64; 9], e: i32) -> Result<PeriodicBox> {
    PeriodicBox::new(cell)?; // validation with the caller's numbers
    let m = cell.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let b = cell.map(|v| pow2(v, -e));
    let mi = b.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    let flat = |h: f64| Error::Range(format!(
        "the cell is too flat: its smallest height is {h:.3e} times its largest entry ({m:e}); the limit is 2^-20 = {MIN_ASPECT:.3e}"
    ));
    for i in [0, 4, 8] {
        if !(b[i] >= MIN_ASPECT * mi) {
            // the height along the last axis is the diagonal; others are at most it
            return Err(flat(cell[i] / m));
        }
    }
    let bx = PeriodicBox::new(&b)?;
    if !(bx.min_height() >= MIN_ASPECT * mi) {
        return Err(flat(bx.min_height() / mi));
    }
    Ok(bx)
}

/// The caller's overrides in internal units (`ξ' = ξ s`, `r_c' = r_c / s`); [`Error::Range`]
/// when one is not representable there.
fn internal_overrides(ov: &Overrides, e: i32) -> Result<Overrides> {
    let mut o = *ov;
    if ov.xi > 0.0 {
        o.xi = pow2(ov.xi, e);
        if !(o.xi.is_finite() && o.xi >= f64::MIN_POSITIVE) {
            return Err(Error::Range(format!("opts.xi = {:e} is outside the range this cell (scale 2^{e}) can serve", ov.xi)));
        }
    }
    if ov.rc > 0.0 {
        o.rc = pow2(ov.rc, -e);
        if !(o.rc.is_finite() && o.rc >= f64::MIN_POSITIVE) {
            return Err(Error::Range(format!("opts.rc = {:e} is outside the range this cell (scale 2^{e}) can serve", ov.rc)));
        }
    }
    Ok(o)
}


/// The symmetric virial tensor (`[3α + β]`) from its six components (xx, xy, xz, yy, yz, zz)
/// and the background energy `u_bg` on the diagonal (module docs).
pub(crate) fn virial_tensor(v: &[f64; 6], u_bg: f64) -> [f64; 9] {
    let mut w = [0.0; 9];
    let idx = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)];
    for (c, &(a, b)) in idx.iter().enumerate() {
        let val = v[c] + if a == b { u_bg } else { 0.0 };
        w[3 * a + b] = val;
        w[3 * b + a] = val;
    }
    w
}

/// Rescales the requested results from internal units (lengths `/2^e`, charges `/2^eq`) to
/// the caller's in place: `φ` by `2^(eq−e)`, `E` by `2^(eq−2e)`, energy and virial by
/// `2^(2eq−e)` (module docs, "Scale"). Errors: [`Error::Range`] (a result overflows or
/// underflows), before which some results may already be rescaled.
pub(crate) fn to_caller_units(e: i32, eq: i32, phi: Option<&mut [f64]>, field: Option<&mut [f64]>, energy: Option<&mut f64>,
                              virial: Option<&mut [f64; 9]>) -> Result<()> {
    let (ep, ef, eu) = (eq - e, eq - 2 * e, 2 * eq - e);
    if let Some(p) = phi {
        rescale(p, ep, "phi")?;
    }
    if let Some(f) = field {
        rescale(f, ef, "field")?;
    }
    if let Some(u) = energy {
        rescale(std::slice::from_mut(u), eu, "energy")?;
    }
    if let Some(w) = virial {
        rescale(w, eu, "virial")?;
    }
    Ok(())
}

/// Which terms of the Ewald sum a plan evaluates (module docs, "Terms").
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Terms {
    /// Everything (default).
    #[default]
    All,
    /// k-space, self and background terms and the k-space share of the exclusion corrections.
    KSpace,
    /// The real-space pair sum and the real-space share of the exclusion corrections.
    Real,
}

/// Options of an Ewald plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EwaldOpts {
    /// Threads (0 = all cores, 1 = the caller's thread only).
    pub nthreads: usize,
    /// `> 0`: print the chosen parameters and per-call timings to stderr; on a CUDA plan the
    /// device time of each phase, and for host arrays the host time of the upload, evaluation,
    /// download and copy-out (the call then also waits for the upload).
    pub debug: i32,
    /// Parameter overrides (0 = automatic).
    pub overrides: Overrides,
    /// FFTW planner flags (default `FFTW_ESTIMATE`).
    pub fftw_flags: u32,
    /// The terms evaluated (default [`Terms::All`]).
    pub terms: Terms,
    /// Backend (AUTO = the CPU until the GPU plan has been timed against it on hardware);
    /// read by the front `crate::plans::EwaldPlan`, which runs [`CpuEwald`] or the CUDA plan.
    pub backend: BackendChoice,
    /// CUDA backend only: single-precision grids and FFT with double-precision sums
    /// (`FARFIELD_EWALD_GPU_MIXED`); false = double precision throughout.
    pub gpu_mixed: bool,
    /// CUDA backend only: the spreading method of the k-space part (`None` = automatic).
    pub gpu_method: Option<GpuMethod>,
    /// CUDA backend only: the caller's stream (`None` = the default stream).
    pub gpu_stream: Option<GpuStream>,
}

impl Default for EwaldOpts {
    fn default() -> Self {
        EwaldOpts {
            nthreads: 0,
            debug: 0,
            overrides: Overrides::default(),
            fftw_flags: FFTW_ESTIMATE,
            terms: Terms::All,
            backend: BackendChoice::Auto,
            gpu_mixed: false,
            gpu_method: None,
            gpu_stream: None,
        }
    }
}

/// Parameters in use, and the timings of the last `execute`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct EwaldParams {
    /// Splitting parameter `ξ` (1/length).
    pub xi: f64,
    /// Real-space cutoff.
    pub rc: f64,
    /// Grid per axis (direct sum: `2 m_max + 1` wave vectors per axis).
    pub grid: [usize; 3],
    /// Spectral Ewald support `P` or SPME order (0 for the direct sum).
    pub order: usize,
    /// Spectral Ewald shape `η = 8ξ²h²τ` (largest over the axes, `h = |vec_d|/K_d`), else 0.
    pub eta: f64,
    /// Spectral Ewald Gaussian `τ` in grid units² (`ψ(u) = e^{−u²/4τ}`), else 0.
    pub tau: f64,
    /// Direct sum k-space cutoff, else 0.
    pub kc: f64,
    /// Estimated relative RMS force error (see [`params`]).
    pub est_rel_err: f64,
    /// Seconds spent in the real-space part (incl. exclusions) by the last `execute`.
    pub real_s: f64,
    /// Seconds spent in the k-space part by the last `execute`.
    pub kspace_s: f64,
    /// Tolerance in use (the request raised to [`params::min_tol`] if below it).
    pub tol_used: f64,
    /// Bit set of warnings ([`WARN_TOL_CLAMPED`], [`WARN_TOL_NOT_MET`]).
    pub warnings: i32,
}

/// Energy and virial of one evaluation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EwaldResult {
    /// `U = ½ Σ q_i φ_i` (0 when not requested from [`CpuEwald::execute_with`]).
    pub energy: f64,
    /// `W_αβ = −∂U/∂ε_αβ` at `[3α + β]` (symmetric); zeros unless requested.
    pub virial: [f64; 9],
}

enum KSpace {
    Spectral(Spectral),
    Spme(Spme),
    Direct(DirectKspace),
    /// A [`Terms::Real`] plan: no k-space part.
    None,
}

/// The CPU Ewald plan. Users make plans through the front `crate::plans::EwaldPlan`, which
/// runs this or the CUDA plan (`opts.backend`); this type ignores the backend and GPU options.
/// Three parts, each with one job: the configuration (what the plan was made with and chose,
/// replaced only by [`CpuEwald::set_box`]), the stages that evaluate the sum (real space,
/// k-space, exclusions) and the workspace of one evaluation ([`Workspace`]).
/// [`CpuEwald::execute_with`] drives them in order: load, real-space stage, k-space stage,
/// self and background terms, caller's units.
pub struct CpuEwald {
    method: Method,
    n_max: usize,
    opts: EwaldOpts,
    /// Tolerance in use, cell (caller's and internal units) and parameters.
    setup: Setup,
    threads: Threads,
    real: RealSpace,
    kspace: KSpace,
    /// Excluded and scaled pairs.
    excl: Exclusions,
    /// Parts evaluated by `execute` (those of `opts.terms` unless changed by
    /// [`CpuEwald::set_parts`]).
    parts: EwaldParts,
    work: Workspace,
}

/// The buffers of one evaluation, kept between evaluations (grown to the largest `n` seen):
/// charges, positions and per-stage results in the plan's internal units (module docs).
#[derive(Default)]
struct Workspace {
    /// Charges scaled by `2^-eq`.
    qs: Vec<f64>,
    /// Fractional positions wrapped into [0, 1)³.
    s: Vec<[f64; 3]>,
    /// Cartesian positions of `s`.
    r: Vec<[f64; 3]>,
    /// Real-space potentials (then the sum of all parts).
    phi_r: Vec<f64>,
    /// k-space potentials.
    phi_k: Vec<f64>,
    /// Real-space fields, `3n` (then the sum), empty when no field is asked for.
    f_r: Vec<f64>,
    /// k-space fields, `3n` or empty.
    f_k: Vec<f64>,
}

impl Workspace {
    /// Loads `n = q.len()` charges at `xyz` (caller's units, validated finite) into the cell
    /// `bx` of internal unit `2^e`: charges scaled by `2^-eq` (returned), positions wrapped
    /// into the cell, result buffers sized (fields only if `want_field`). Errors:
    /// [`Error::Range`] (a position whose fractional coordinate is not representable),
    /// [`Error::Alloc`].
    fn load(&mut self, bx: &PeriodicBox, e: i32, xyz: &[f64], q: &[f64], th: &Threads, want_field: bool) -> Result<i32> {
        let n = q.len();
        let eq = exponent_of(q.iter().fold(0.0f64, |a, v| a.max(v.abs())));
        try_resize(&mut self.qs, n, 0.0, "scaled charges")?;
        for (d, &v) in self.qs.iter_mut().zip(q) {
            *d = pow2(v, -eq);
        }
        try_resize(&mut self.s, n, [0.0; 3], "fractional positions")?;
        try_resize(&mut self.r, n, [0.0; 3], "wrapped positions")?;
        let sp = SyncPtr(self.s.as_mut_ptr());
        let rp = SyncPtr(self.r.as_mut_ptr());
        let chunk = 4096;
        th.for_each(n.div_ceil(chunk), |c| {
            let (sp, rp) = (sp, rp);
            for i in c * chunk..((c + 1) * chunk).min(n) {
                let f = bx.frac([pow2(xyz[3 * i], -e), pow2(xyz[3 * i + 1], -e), pow2(xyz[3 * i + 2], -e)]);
                let s = [box_::wrap01(f[0]), box_::wrap01(f[1]), box_::wrap01(f[2])];
                // SAFETY: index i belongs to chunk c only.
                unsafe {
                    *sp.0.add(i) = s;
                    *rp.0.add(i) = bx.cart(s);
                }
            }
        });
        if let Some(i) = th.find_first(n, |i| !self.s[i].iter().all(|v| v.is_finite())) {
            return Err(Error::Range(format!(
                "charge {i} at ({:e}, {:e}, {:e}) is too far outside the cell for its fractional coordinates to be represented",
                xyz[3 * i],
                xyz[3 * i + 1],
                xyz[3 * i + 2]
            )));
        }
        try_resize(&mut self.phi_r, n, 0.0, "real-space potentials")?;
        try_resize(&mut self.phi_k, n, 0.0, "k-space potentials")?;
        let fl = if want_field { 3 * n } else { 0 };
        try_resize(&mut self.f_r, fl, 0.0, "real-space fields")?;
        try_resize(&mut self.f_k, fl, 0.0, "k-space fields")?;
        Ok(eq)
    }
}

/// Errors: [`Error::Alloc`], [`Error::Fft`], [`Error::Range`] (a grid the spreader or FFTW
/// cannot index; their [`Error::Modes`] is reported as this, the documented status of Ewald).
fn build_kspace(method: Method, bx: &PeriodicBox, c: &Chosen, opts: &EwaldOpts, nthreads: usize) -> Result<KSpace> {
    if opts.terms == Terms::Real {
        return Ok(KSpace::None);
    }
    let k = match method {
        Method::Spectral => Spectral::new(bx, c.xi, c.grid, c.order, c.tau, opts.fftw_flags, nthreads).map(KSpace::Spectral),
        Method::Spme => Spme::new(bx, c.xi, c.grid, c.order, opts.fftw_flags, nthreads).map(KSpace::Spme),
        Method::Direct => DirectKspace::new(bx, c.xi, c.kc).map(KSpace::Direct),
    };
    k.map_err(|e| match e {
        Error::Modes(m) => Error::Range(m),
        e => e,
    })
}

/// Accuracy of the real-space `erfc` approximation for the tolerance `tol` in use.
pub(crate) fn erfc_accuracy(tol: f64) -> f64 {
    (0.01 * tol).clamp(1e-14, 1e-6)
}

/// The parameters in the caller's units (`ξ = ξ'/s`, `r_c = s r_c'`, `k_c = k_c'/s`).
fn make_params(method: Method, bx: &PeriodicBox, c: &Chosen, e: i32, tol_used: f64, warnings: i32) -> EwaldParams {
    let eta = if method == Method::Spectral {
        let h = (0..3).map(|d| bx.lengths[d] / c.grid[d] as f64).fold(0.0, f64::max);
        8.0 * c.xi * c.xi * h * h * c.tau
    } else {
        0.0
    };
    EwaldParams {
        xi: pow2(c.xi, -e),
        rc: pow2(c.rc, e),
        grid: c.grid,
        order: c.order,
        eta,
        tau: c.tau,
        kc: pow2(c.kc, -e),
        est_rel_err: c.est_rel_err,
        real_s: 0.0,
        kspace_s: 0.0,
        tol_used,
        warnings,
    }
}

/// What a plan decides before it allocates anything, shared by [`CpuEwald`] and the GPU plan
/// (`crate::gpu::ewald`), so that both backends use the same rule and the same parameters.
pub(crate) struct Setup {
    /// Tolerance in use (the request raised to [`params::min_tol`] if below it).
    pub tol_used: f64,
    /// The cell as the caller gave it.
    pub user_box: PeriodicBox,
    /// The internal length unit is `2^scale_e` (module docs).
    pub scale_e: i32,
    /// The cell in internal units.
    pub bx: PeriodicBox,
    /// The parameters in internal units.
    pub chosen: Chosen,
    /// The parameters in the caller's units.
    pub params: EwaldParams,
}

/// Validates the arguments of [`CpuEwald::new`] and chooses the parameters (errors there).
pub(crate) fn setup(method: Method, cell: &[f64; 9], n_max: usize, tol: f64, opts: &EwaldOpts) -> Result<Setup> {
    if !(tol > 0.0 && tol < 1.0) {
        return Err(Error::Tol(format!("tol = {tol:e}; the Ewald accuracy must satisfy 0 < tol < 1")));
    }
    if n_max == 0 || n_max >= u32::MAX as usize {
        return Err(Error::NPoints(format!("n_max = {n_max}; must be in 1 … 2^32 − 2")));
    }
    let (tol_used, warnings) = if tol < params::min_tol(method) { (params::min_tol(method), WARN_TOL_CLAMPED) } else { (tol, 0) };
    let user_box = PeriodicBox::new(cell)?;
    let scale_e = exponent_of(cell.iter().fold(0.0f64, |a, v| a.max(v.abs())));
    let bx = internal_box(cell, scale_e)?;
    CpuEwald::check_rc(&opts.overrides, &bx, scale_e)?;
    let ov = internal_overrides(&opts.overrides, scale_e)?;
    let chosen = params::choose(method, &bx, n_max, tol_used, &ov)?;
    let warnings = warn_bits(&chosen, tol_used, warnings);
    let params = make_params(method, &bx, &chosen, scale_e, tol_used, warnings);
    Ok(Setup { tol_used, user_box, scale_e, bx, chosen, params })
}

/// What a cell change does to a plan (the rule of [`CpuEwald::set_box`], shared with the GPU
/// plan).
pub(crate) enum NewBox {
    /// Same parameters and internal unit: only the influence function changes (`eta`: the
    /// spectral Ewald shape in the new cell).
    Keep { bx: PeriodicBox, user_box: PeriodicBox, eta: f64 },
    /// New parameters (caller overrides kept).
    Replan(Setup),
}

/// The rule of [`CpuEwald::set_box`] for a plan with internal unit `2^scale_e`, parameters
/// `chosen` (internal units) and `params` (caller's units, tolerance and warnings in use).
/// Errors as [`CpuEwald::set_box`].
pub(crate) fn new_box(
    method: Method, cell: &[f64; 9], n_max: usize, opts: &EwaldOpts, scale_e: i32, chosen: &Chosen, params: &EwaldParams,
) -> Result<NewBox> {
    let user_box = PeriodicBox::new(cell)?;
    let e_new = exponent_of(cell.iter().fold(0.0f64, |a, v| a.max(v.abs())));
    let e = if (e_new - scale_e).abs() <= 8 { scale_e } else { e_new };
    let bx = internal_box(cell, e)?;
    CpuEwald::check_rc(&opts.overrides, &bx, e)?;
    let ov = internal_overrides(&opts.overrides, e)?;
    let (tol_used, clamped) = (params.tol_used, params.warnings & WARN_TOL_CLAMPED);
    if e == scale_e && params::still_accurate(method, &bx, n_max, tol_used, chosen) {
        let eta = make_params(method, &bx, chosen, e, tol_used, 0).eta;
        return Ok(NewBox::Keep { bx, user_box, eta });
    }
    let chosen = params::choose(method, &bx, n_max, tol_used, &ov)?;
    let params = make_params(method, &bx, &chosen, e, tol_used, warn_bits(&chosen, tol_used, clamped));
    Ok(NewBox::Replan(Setup { tol_used, user_box, scale_e: e, bx, chosen, params }))
}

/// Which parts of the sum [`CpuEwald::execute_with`] evaluates (those of [`EwaldOpts::terms`]
/// by default): a diagnostic hook for comparing one part with another implementation of it (the
/// GPU parts are checked against these on the emulator). The real-space part includes the
/// coincidence check and the real-space share of the exclusion corrections; the
/// self/background part is the self term, for a net charge the neutralising background, and the
/// k-space share of the exclusion corrections (module docs).
#[doc(hidden)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct EwaldParts {
    /// Real-space sum and exclusions.
    pub real: bool,
    /// k-space part.
    pub kspace: bool,
    /// Self and background terms.
    pub self_bg: bool,
}

impl Default for EwaldParts {
    fn default() -> Self {
        EwaldParts { real: true, kspace: true, self_bg: true }
    }
}

impl EwaldParts {
    /// The parts of the terms `t`.
    pub fn of(t: Terms) -> Self {
        match t {
            Terms::All => EwaldParts::default(),
            Terms::KSpace => EwaldParts { real: false, kspace: true, self_bg: true },
            Terms::Real => EwaldParts { real: true, kspace: false, self_bg: false },
        }
    }

    /// The shares of the exclusion corrections these parts apply (module docs, "Exclusions and
    /// scaled pairs"): the real-space share `−(1 − s) erfc(ξr)/r` with the real-space sum, the
    /// k-space share `−(1 − s) erf(ξr)/r` with the self and background terms (so a k-space-only
    /// plan, [`Terms::KSpace`], applies it). The same on the CPU and the device.
    pub fn exclusion_shares(&self) -> (bool, bool) {
        (self.real, self.self_bg)
    }
}

impl CpuEwald {
    /// Makes a plan for up to `n_max` charges in the cell `cell` (`cell[3*i + j]` = component
    /// `j` of lattice vector `i`, lower-triangular) with relative RMS force accuracy `tol`.
    /// A `tol` below [`params::min_tol`] is raised to it ([`WARN_TOL_CLAMPED`] in
    /// [`CpuEwald::params`]). Errors: [`Error::Tol`] (`tol` not in (0, 1)), [`Error::NPoints`]
    /// (`n_max` 0 or ≥ 2³² − 1), [`Error::InvalidArg`] (cell, overrides), [`Error::Range`]
    /// (cell flatter than [`MIN_ASPECT`], a grid or wave-vector count above the limits of
    /// [`params`], an override not representable at the cell's scale), [`Error::Alloc`],
    /// [`Error::Fft`]. The cost is bounded by the problem size (no unbounded search).
    pub fn new(method: Method, cell: &[f64; 9], n_max: usize, tol: f64, opts: &EwaldOpts) -> Result<Self> {
        let Setup { tol_used, user_box, scale_e, bx, chosen, params } = setup(method, cell, n_max, tol, opts)?;
        let warnings = params.warnings;
        let threads = Threads::new(opts.nthreads)?;
        let real = RealSpace::new(chosen.xi, chosen.rc, erfc_accuracy(tol_used), method == Method::Direct);
        let kspace = build_kspace(method, &bx, &chosen, opts, threads.count())?;
        if opts.debug > 0 {
            eprintln!(
                "[farfield ewald] {method:?} n_max {n_max} tol {tol:e}{}: xi {:e} rc {:e} grid {:?} order {} eta {:.4} kc {:e} \
                 est. rel. error {:.2e} threads {}",
                if warnings & WARN_TOL_CLAMPED != 0 { format!(" [warning: tol raised to {tol_used:e}, the method's limit]") } else { String::new() }
                    + if warnings & WARN_TOL_NOT_MET != 0 { " [warning: the overrides keep the estimated error above tol]" } else { "" },
                params.xi, params.rc, params.grid, params.order, params.eta, params.kc, params.est_rel_err, threads.count()
            );
        }
        Ok(CpuEwald {
            method,
            n_max,
            opts: *opts,
            setup: Setup { tol_used, user_box, scale_e, bx, chosen, params },
            threads,
            real,
            kspace,
            excl: Exclusions::default(),
            parts: EwaldParts::of(opts.terms),
            work: Workspace::default(),
        })
    }

    /// A fixed cutoff above half the smallest height of the (internal) cell `bx`: error in the
    /// caller's units.
    fn check_rc(ov: &Overrides, bx: &PeriodicBox, e: i32) -> Result<()> {
        let half = pow2(0.5 * bx.min_height(), e);
        if ov.rc > 0.0 && ov.rc > half * (1.0 + 1e-12) {
            return Err(Error::InvalidArg(format!(
                "cutoff rc = {:e} exceeds half the smallest height ({half:.6e}) of the box; use a smaller cutoff or a larger box",
                ov.rc
            )));
        }
        Ok(())
    }

    /// The method.
    pub fn method(&self) -> Method {
        self.method
    }

    /// Largest number of charges per call.
    pub fn n_max(&self) -> usize {
        self.n_max
    }

    /// The cell (as the caller gave it).
    pub fn cell(&self) -> &PeriodicBox {
        &self.setup.user_box
    }

    /// Parameters in use and last timings.
    pub fn params(&self) -> &EwaldParams {
        &self.setup.params
    }

    /// Changes the cell. Keeps `ξ`, `r_c`, grid and window while the estimated error stays
    /// within 1.5× the target (only the influence function is recomputed); otherwise chooses
    /// new parameters (caller overrides kept) and re-plans. The internal length unit is kept
    /// while the cell's largest entry stays within a factor 2⁸ of it (else it is changed and
    /// the plan re-planned). Errors as [`CpuEwald::new`] (e.g. a fixed cutoff above half the
    /// new smallest height); on error the plan is unchanged.
    pub fn set_box(&mut self, cell: &[f64; 9]) -> Result<()> {
        let su = &mut self.setup;
        match new_box(self.method, cell, self.n_max, &self.opts, su.scale_e, &su.chosen, &su.params)? {
            NewBox::Keep { bx, user_box, eta } => {
                match &mut self.kspace {
                    KSpace::Spectral(s) => s.set_box(&bx)?,
                    KSpace::Spme(s) => s.set_box(&bx)?,
                    KSpace::Direct(d) => d.set_box(&bx)?,
                    KSpace::None => {}
                }
                su.params.eta = eta;
                su.bx = bx;
                su.user_box = user_box;
                return Ok(());
            }
            NewBox::Replan(new) => {
                self.kspace = build_kspace(self.method, &new.bx, &new.chosen, &self.opts, self.threads.count())?;
                self.real = RealSpace::new(new.chosen.xi, new.chosen.rc, erfc_accuracy(new.tol_used), self.method == Method::Direct);
                *su = new;
            }
        }
        if self.opts.debug > 0 {
            eprintln!("[farfield ewald] set_box re-planned: {:?}", self.setup.params);
        }
        Ok(())
    }

    /// Sets the excluded pairs (replacing earlier ones). A pair is unordered: `(i, j)` and
    /// `(j, i)` are the same pair, and a pair given several times is excluded once (the list is
    /// sorted and deduplicated). Indices are checked against `n_max` here and against the number
    /// of charges at `execute`. Errors: [`Error::InvalidArg`] (an index out of range or a pair
    /// `(i, i)`, naming the pair and the index), [`Error::Alloc`]. On error the earlier list is
    /// kept.
    pub fn set_exclusions(&mut self, pairs: &[[i64; 2]]) -> Result<()> {
        self.excl = Exclusions::new(pairs, None, self.n_max)?;
        Ok(())
    }

    /// Sets the excluded and scaled pairs (replacing earlier ones, those of
    /// [`CpuEwald::set_exclusions`] included): pair `k` = `pairs[k]` interacts as
    /// `scales[k] q_i q_j / r` (nearest image) instead of `q_i q_j / r` — `0` excludes it, `0.5`
    /// halves it (OPLS 1-4 pairs), `1` leaves it as it is (such pairs are dropped from the list);
    /// any finite value. A pair is unordered; one given several times with the same scale counts
    /// once. Only fully excluded pairs (`0`) may coincide. Errors: [`Error::InvalidArg`] (an
    /// index out of range, a pair `(i, i)`, `scales` of another length than `pairs`, a pair
    /// given with two different scales: each naming the pair), [`Error::NonFinite`] (a scale,
    /// naming it), [`Error::Alloc`]. On error the earlier list is kept.
    pub fn set_exclusions_scaled(&mut self, pairs: &[[i64; 2]], scales: &[f64]) -> Result<()> {
        self.excl = Exclusions::new(pairs, Some(scales), self.n_max)?;
        Ok(())
    }

    /// The terms this plan evaluates.
    pub fn terms(&self) -> Terms {
        self.opts.terms
    }

    /// Diagnostic hook: evaluate only the given parts of the sum from now on (the default is all
    /// of them); see [`EwaldParts`].
    #[doc(hidden)]
    pub fn set_parts(&mut self, parts: EwaldParts) {
        self.parts = parts;
    }

    /// Number of distinct excluded and scaled pairs.
    pub fn n_exclusions(&self) -> usize {
        self.excl.len()
    }

    /// Evaluates potentials (`phi`, length `n`), fields (`field`, length `3n`, `field[3i + d]`),
    /// energy and (if `virial`) the virial for `n = q.len()` charges at `xyz` (length `3n`).
    /// Same as [`CpuEwald::execute_with`] with the energy requested.
    pub fn execute(&mut self, xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>, virial: bool) -> Result<EwaldResult> {
        self.execute_with(xyz, q, phi, field, true, virial)
    }

    /// Evaluates the requested results (module docs): potentials (`phi`, length `n`), fields
    /// (`field`, length `3n`), the energy (if `energy`, else reported as 0) and the virial (if
    /// `virial`, else zeros). Outputs are written only on success. Errors: [`Error::NPoints`]
    /// (`n > n_max`), [`Error::InvalidArg`] (lengths, an exclusion index ≥ n, two distinct
    /// charges coinciding — closer than 2⁻⁴⁰ of the largest cell length — that are not an
    /// excluded pair, naming both), [`Error::NonFinite`] (naming the first bad position or
    /// charge), [`Error::Range`] (a position so far outside the cell that its fractional
    /// coordinate is not representable; a requested result that overflows or underflows at this
    /// cell and charge scale), [`Error::Alloc`].
    pub fn execute_with(
        &mut self, xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>, energy: bool, virial: bool,
    ) -> Result<EwaldResult> {
        let n = q.len();
        if n > self.n_max {
            return Err(Error::NPoints(format!("n = {n} exceeds the plan's n_max = {}", self.n_max)));
        }
        if xyz.len() != 3 * n {
            return Err(Error::InvalidArg(format!("xyz has {} values for {n} charges (need 3n)", xyz.len())));
        }
        if let Some(p) = &phi {
            if p.len() != n {
                return Err(Error::InvalidArg(format!("phi has {} entries for {n} charges", p.len())));
            }
        }
        if let Some(f) = &field {
            if f.len() != 3 * n {
                return Err(Error::InvalidArg(format!("field has {} entries for {n} charges (need 3n)", f.len())));
            }
        }
        let th = &self.threads;
        if let Some(i) = th.find_first(3 * n, |i| !xyz[i].is_finite()) {
            return Err(Error::NonFinite(format!("xyz[{i}] (coordinate {} of charge {}) is {}", ["x", "y", "z"][i % 3], i / 3, xyz[i])));
        }
        if let Some(i) = th.find_first(n, |i| !q[i].is_finite()) {
            return Err(Error::NonFinite(format!("q[{i}] is {}", q[i])));
        }
        check_exclusions(&self.excl.keys, n)?;
        let want_field = field.is_some();
        let e = self.setup.scale_e;
        // internal units: lengths / 2^scale_e, charges / 2^eq (module docs)
        let eq = self.work.load(&self.setup.bx, e, xyz, q, th, want_field)?;
        let t0 = Instant::now();
        let vir_r = self.real_stage(want_field, virial)?;
        let t1 = Instant::now();
        let vir_k = self.kspace_stage(want_field, virial)?;
        let t2 = Instant::now();
        self.setup.params.real_s = (t1 - t0).as_secs_f64();
        self.setup.params.kspace_s = (t2 - t1).as_secs_f64();
        let u_bg = self.self_and_background();
        let w = &mut self.work;
        let q = &w.qs[..];
        let mut u = 0.5 * q.iter().zip(&w.phi_r).map(|(q, p)| q * p).sum::<f64>();
        let vir: [f64; 6] = std::array::from_fn(|c| vir_r[c] + vir_k[c]);
        let mut vt = if virial { virial_tensor(&vir, u_bg) } else { [0.0; 9] };
        if want_field {
            for (a, b) in w.f_r.iter_mut().zip(&w.f_k) {
                *a += b;
            }
        }
        // back to the caller's units, checked before anything is written
        let phi_int = if phi.is_some() { Some(&mut w.phi_r[..]) } else { None };
        let field_int = if want_field { Some(&mut w.f_r[..]) } else { None };
        to_caller_units(e, eq, phi_int, field_int, energy.then_some(&mut u), virial.then_some(&mut vt))?;
        if !energy {
            u = 0.0;
        }
        if let Some(p) = phi {
            p.copy_from_slice(&w.phi_r);
        }
        if let Some(f) = field {
            f.copy_from_slice(&w.f_r);
        }
        let energy = u;
        if self.opts.debug > 0 {
            let pa = &self.setup.params;
            eprintln!("[farfield ewald] execute n {n}: real {:.3} ms, k-space {:.3} ms, U = {energy:.10e}", 1e3 * pa.real_s, 1e3 * pa.kspace_s);
        }
        Ok(EwaldResult { energy, virial: vt })
    }

    /// The real-space stage on the loaded workspace: the real-space sum into `phi_r` (and
    /// `f_r`), then the exclusion corrections (their real-space and k-space shares, as
    /// [`EwaldParts`] selects). Returns the real-space virial (upper triangle, internal units).
    fn real_stage(&mut self, want_field: bool, virial: bool) -> Result<[f64; 6]> {
        let (w, bx, parts) = (&mut self.work, &self.setup.bx, self.parts);
        let mut vir_r = [0.0; 6];
        if parts.real {
            let f = if want_field { Some(&mut w.f_r[..]) } else { None };
            vir_r = self.real.compute(bx, &w.s, &w.r, &w.qs, w.s.len(), &self.threads, &mut w.phi_r, f, virial, &self.excl)?;
        } else {
            w.phi_r.fill(0.0);
            w.f_r.fill(0.0);
        }
        let shares = parts.exclusion_shares();
        if !self.excl.is_empty() && (shares.0 || shares.1) {
            let f = if want_field { Some(&mut w.f_r[..]) } else { None };
            self.real.exclusions(bx, &w.s, &w.qs, &self.excl, shares, &mut w.phi_r, f, Some(&mut vir_r));
        }
        Ok(vir_r)
    }

    /// The k-space stage on the loaded workspace: potentials into `phi_k` (fields into `f_k`).
    /// Returns the k-space virial (upper triangle, internal units).
    fn kspace_stage(&mut self, want_field: bool, virial: bool) -> Result<[f64; 6]> {
        let (w, bx, th) = (&mut self.work, &self.setup.bx, &self.threads);
        let fk = if want_field { Some(&mut w.f_k[..]) } else { None };
        Ok(match &mut self.kspace {
            _ if !self.parts.kspace => {
                w.phi_k.fill(0.0);
                w.f_k.fill(0.0);
                [0.0; 6]
            }
            KSpace::Spectral(s) => s.compute(bx, &w.s, &w.qs, th, &mut w.phi_k, fk, virial)?,
            KSpace::Spme(s) => s.compute(bx, &w.s, &w.qs, th, &mut w.phi_k, fk, virial)?,
            KSpace::Direct(d) => d.compute(bx, &w.s, &w.qs, th, &mut w.phi_k, fk, virial)?,
            // a Terms::Real plan (f_k is empty without fields)
            KSpace::None => {
                w.phi_k.fill(0.0);
                w.f_k.fill(0.0);
                [0.0; 6]
            }
        })
    }

    /// Adds the k-space potentials, the self term `−2ξ/√π q_i` and, for a net charge `Q`, the
    /// neutralising background's `−πQ/(Vξ²)` to `phi_r` (internal units), which then holds the
    /// total potentials. Returns the background's energy `Q φ_bg / 2` (its virial share).
    fn self_and_background(&mut self) -> f64 {
        let w = &mut self.work;
        let xi = self.setup.chosen.xi;
        let qtot: f64 = w.qs.iter().sum();
        let sb = if self.parts.self_bg { 1.0 } else { 0.0 };
        let c_self = sb * 2.0 * xi / std::f64::consts::PI.sqrt();
        let phi_bg = -sb * std::f64::consts::PI * qtot / (self.setup.bx.volume * xi * xi);
        for ((p, &pk), &q) in w.phi_r.iter_mut().zip(&w.phi_k).zip(&w.qs) {
            *p += pk - c_self * q + phi_bg;
        }
        0.5 * qtot * phi_bg
    }
}
