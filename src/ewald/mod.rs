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
//! Units are the caller's (DESIGN.md §2): no Coulomb constant is applied; multiply `φ`, `E`,
//! `U`, `W` by yours (GROMACS 138.935458 kJ mol⁻¹ nm e⁻², LAMMPS `qqr2e`, 1/(4πε₀)).
//!
//! ## Splitting
//! `φ = φ^R + φ^F + φ^self + φ^bg` with the real-space sum of `erfc(ξr)/r` within `r_c`
//! ([`real_space`]), the smooth part from k-space ([`spectral`], [`spme`], or the explicit sum
//! of [`direct`]), the self term `φ^self_i = −2ξ/√π q_i` (energy `−ξ/√π Σ q_i²`) and, for a net
//! charge `Q = Σ q_i ≠ 0`, the uniform neutralising background: energy `−π Q²/(2 V ξ²)`, potential
//! `−π Q/(V ξ²)` on every charge, virial `−π Q²/(2 V ξ²) δ_αβ` (no force).
//!
//! ## Exclusions
//! [`EwaldPlan::set_exclusions`] takes index pairs whose full `1/r` interaction (nearest image)
//! is removed from potentials, fields, energy and virial, as MD codes need for bonded pairs:
//! the real-space `erfc` term is dropped and `erf(ξr)/r` subtracted.
//!
//! ## Accuracy and parameters
//! `tol` is a relative RMS force accuracy (see [`params`] for the error model and the cost
//! model that picks `ξ`, `r_c`, the grid and the window); every parameter can be overridden.
//! [`EwaldPlan::set_box`] changes the cell, keeping the parameters while the estimated error
//! stays within 1.5× the target and re-planning (new grid, FFT plans) otherwise.
//!
//! ## Cost of repeated evaluation
//! A plan owns its thread pool, FFT plans, grids, cell-list storage and scratch; `execute` with
//! new positions re-bins the atoms and reuses everything else.

pub mod box_;
mod direct;
mod erfc;
mod influence;
mod pair_kernel;
pub mod params;
mod real_space;
mod spectral;
mod spme;
#[cfg(test)]
mod tests;

pub use box_::PeriodicBox;
pub use params::{Method, Overrides};

use crate::error::{Error, Result};
use crate::fft::FFTW_ESTIMATE;
use crate::threads::{SyncPtr, Threads};
use direct::DirectKspace;
use params::Chosen;
use real_space::RealSpace;
use spectral::Spectral;
use spme::Spme;
use std::time::Instant;

/// Whether the AVX2+FMA real-space kernel may be used (detected once; `FARFIELD_NO_AVX2=1` in
/// the environment forces the portable path).
pub(crate) fn simd_ok() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            std::env::var_os("FARFIELD_NO_AVX2").is_none()
                && std::is_x86_feature_detected!("avx2")
                && std::is_x86_feature_detected!("fma")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

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

/// Options of an Ewald plan.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EwaldOpts {
    /// Threads (0 = all cores, 1 = the caller's thread only).
    pub nthreads: usize,
    /// `> 0`: print the chosen parameters and per-call timings to stderr.
    pub debug: i32,
    /// Parameter overrides (0 = automatic).
    pub overrides: Overrides,
    /// FFTW planner flags (default `FFTW_ESTIMATE`).
    pub fftw_flags: u32,
}

impl Default for EwaldOpts {
    fn default() -> Self {
        EwaldOpts { nthreads: 0, debug: 0, overrides: Overrides::default(), fftw_flags: FFTW_ESTIMATE }
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
}

/// Energy and virial of one evaluation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct EwaldResult {
    /// `U = ½ Σ q_i φ_i`.
    pub energy: f64,
    /// `W_αβ = −∂U/∂ε_αβ` at `[3α + β]` (symmetric); zeros unless requested.
    pub virial: [f64; 9],
}

enum KSpace {
    Spectral(Spectral),
    Spme(Spme),
    Direct(DirectKspace),
}

/// An Ewald plan: method, cell, parameters and all reusable state.
pub struct EwaldPlan {
    method: Method,
    tol: f64,
    n_max: usize,
    opts: EwaldOpts,
    bx: PeriodicBox,
    chosen: Chosen,
    params: EwaldParams,
    threads: Threads,
    real: RealSpace,
    kspace: KSpace,
    excl: Vec<[u32; 2]>,
    s: Vec<[f64; 3]>,
    r: Vec<[f64; 3]>,
    phi_r: Vec<f64>,
    phi_k: Vec<f64>,
    f_r: Vec<f64>,
    f_k: Vec<f64>,
}

fn build_kspace(method: Method, bx: &PeriodicBox, c: &Chosen, opts: &EwaldOpts, nthreads: usize) -> Result<KSpace> {
    Ok(match method {
        Method::Spectral => KSpace::Spectral(Spectral::new(bx, c.xi, c.grid, c.order, c.tau, opts.fftw_flags, nthreads)?),
        Method::Spme => KSpace::Spme(Spme::new(bx, c.xi, c.grid, c.order, opts.fftw_flags, nthreads)?),
        Method::Direct => KSpace::Direct(DirectKspace::new(bx, c.xi, c.kc)),
    })
}

fn erfc_accuracy(tol: f64) -> f64 {
    (0.01 * tol).clamp(1e-14, 1e-6)
}

fn make_params(method: Method, bx: &PeriodicBox, c: &Chosen) -> EwaldParams {
    let eta = if method == Method::Spectral {
        let h = (0..3).map(|d| bx.lengths[d] / c.grid[d] as f64).fold(0.0, f64::max);
        8.0 * c.xi * c.xi * h * h * c.tau
    } else {
        0.0
    };
    EwaldParams {
        xi: c.xi,
        rc: c.rc,
        grid: c.grid,
        order: c.order,
        eta,
        tau: c.tau,
        kc: c.kc,
        est_rel_err: c.est_rel_err,
        real_s: 0.0,
        kspace_s: 0.0,
    }
}

impl EwaldPlan {
    /// Makes a plan for up to `n_max` charges in the cell `cell` (`cell[3*i + j]` = component
    /// `j` of lattice vector `i`, lower-triangular) with relative RMS force accuracy `tol`.
    /// Errors: [`Error::Tol`] (`tol` not in (0, 1)), [`Error::NPoints`] (`n_max` 0 or ≥ 2³²),
    /// [`Error::InvalidArg`] (cell, overrides), [`Error::Alloc`], [`Error::Fft`].
    pub fn new(method: Method, cell: &[f64; 9], n_max: usize, tol: f64, opts: &EwaldOpts) -> Result<Self> {
        if !(tol > 0.0 && tol < 1.0) {
            return Err(Error::Tol(format!("tol = {tol}; the Ewald accuracy must satisfy 0 < tol < 1")));
        }
        if n_max == 0 || n_max >= u32::MAX as usize {
            return Err(Error::NPoints(format!("n_max = {n_max}; must be in 1 … 2^32 − 2")));
        }
        let bx = PeriodicBox::new(cell)?;
        let threads = Threads::new(opts.nthreads)?;
        let chosen = params::choose(method, &bx, n_max, tol, &opts.overrides)?;
        let real = RealSpace::new(chosen.xi, chosen.rc, erfc_accuracy(tol), method == Method::Direct);
        let kspace = build_kspace(method, &bx, &chosen, opts, threads.count())?;
        let params = make_params(method, &bx, &chosen);
        if opts.debug > 0 {
            eprintln!(
                "[farfield ewald] {method:?} n_max {n_max} tol {tol:e}: xi {:.6} rc {:.6} grid {:?} order {} eta {:.4} kc {:.4} \
                 est. rel. error {:.2e} threads {}",
                params.xi, params.rc, params.grid, params.order, params.eta, params.kc, params.est_rel_err, threads.count()
            );
        }
        Ok(EwaldPlan {
            method,
            tol,
            n_max,
            opts: *opts,
            bx,
            chosen,
            params,
            threads,
            real,
            kspace,
            excl: Vec::new(),
            s: Vec::new(),
            r: Vec::new(),
            phi_r: Vec::new(),
            phi_k: Vec::new(),
            f_r: Vec::new(),
            f_k: Vec::new(),
        })
    }

    /// The method.
    pub fn method(&self) -> Method {
        self.method
    }

    /// Largest number of charges per call.
    pub fn n_max(&self) -> usize {
        self.n_max
    }

    /// The cell.
    pub fn cell(&self) -> &PeriodicBox {
        &self.bx
    }

    /// Parameters in use and last timings.
    pub fn params(&self) -> &EwaldParams {
        &self.params
    }

    /// Changes the cell. Keeps `ξ`, `r_c`, grid and window while the estimated error stays
    /// within 1.5× the target (only the influence function is recomputed); otherwise chooses
    /// new parameters (caller overrides kept) and re-plans. Errors as [`EwaldPlan::new`]
    /// (e.g. a fixed cutoff above half the new smallest height); on error the plan is unchanged.
    pub fn set_box(&mut self, cell: &[f64; 9]) -> Result<()> {
        let bx = PeriodicBox::new(cell)?;
        let ov = &self.opts.overrides;
        if ov.rc > 0.0 && 2.0 * ov.rc > bx.min_height() * (1.0 + 1e-12) {
            return Err(Error::InvalidArg(format!(
                "cutoff rc = {} exceeds half the smallest height ({}) of the new box",
                ov.rc,
                0.5 * bx.min_height()
            )));
        }
        if params::still_accurate(self.method, &bx, self.n_max, self.tol, &self.chosen) {
            match &mut self.kspace {
                KSpace::Spectral(s) => s.set_box(&bx),
                KSpace::Spme(s) => s.set_box(&bx),
                KSpace::Direct(d) => d.set_box(&bx),
            }
            self.params.eta = make_params(self.method, &bx, &self.chosen).eta;
            self.bx = bx;
            return Ok(());
        }
        let chosen = params::choose(self.method, &bx, self.n_max, self.tol, ov)?;
        let kspace = build_kspace(self.method, &bx, &chosen, &self.opts, self.threads.count())?;
        self.real = RealSpace::new(chosen.xi, chosen.rc, erfc_accuracy(self.tol), self.method == Method::Direct);
        self.kspace = kspace;
        self.params = make_params(self.method, &bx, &chosen);
        self.chosen = chosen;
        self.bx = bx;
        if self.opts.debug > 0 {
            eprintln!("[farfield ewald] set_box re-planned: {:?}", self.params);
        }
        Ok(())
    }

    /// Sets the excluded pairs (replacing earlier ones); indices are checked against `n_max`
    /// here and against the number of charges at `execute`. Errors: [`Error::InvalidArg`]
    /// (an index out of range or a pair `(i, i)`), [`Error::Alloc`].
    pub fn set_exclusions(&mut self, pairs: &[[i64; 2]]) -> Result<()> {
        let mut v: Vec<[u32; 2]> = Vec::new();
        v.try_reserve_exact(pairs.len()).map_err(|_| Error::Alloc(format!("{} exclusion pairs", pairs.len())))?;
        for (k, p) in pairs.iter().enumerate() {
            for &i in p {
                if i < 0 || i as u64 >= self.n_max as u64 {
                    return Err(Error::InvalidArg(format!("exclusion pair {k} = ({}, {}): index outside 0 … n_max − 1 = {}", p[0], p[1], self.n_max - 1)));
                }
            }
            if p[0] == p[1] {
                return Err(Error::InvalidArg(format!("exclusion pair {k} = ({}, {}) pairs an atom with itself", p[0], p[1])));
            }
            v.push([p[0] as u32, p[1] as u32]);
        }
        self.excl = v;
        Ok(())
    }

    /// Evaluates potentials (`phi`, length `n`), fields (`field`, length `3n`, `field[3i + d]`),
    /// energy and (if `virial`) the virial for `n = q.len()` charges at `xyz` (length `3n`).
    /// Outputs are written only on success. Errors: [`Error::NPoints`] (`n > n_max`),
    /// [`Error::InvalidArg`] (lengths, an exclusion index ≥ n), [`Error::NonFinite`] (naming the
    /// first bad position or charge), [`Error::Alloc`].
    pub fn execute(&mut self, xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>, virial: bool) -> Result<EwaldResult> {
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
        if let Some((k, p)) = self.excl.iter().enumerate().find(|(_, p)| p[0] as usize >= n || p[1] as usize >= n) {
            return Err(Error::InvalidArg(format!("exclusion pair {k} = ({}, {}) refers to a charge ≥ n = {n}", p[0], p[1])));
        }
        let want_field = field.is_some();
        // wrap into the cell
        self.s.resize(n, [0.0; 3]);
        self.r.resize(n, [0.0; 3]);
        {
            let bx = &self.bx;
            let sp = SyncPtr(self.s.as_mut_ptr());
            let rp = SyncPtr(self.r.as_mut_ptr());
            let chunk = 4096;
            th.for_each(n.div_ceil(chunk), |c| {
                let (sp, rp) = (sp, rp);
                for i in c * chunk..((c + 1) * chunk).min(n) {
                    let f = bx.frac([xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]]);
                    let s = [box_::wrap01(f[0]), box_::wrap01(f[1]), box_::wrap01(f[2])];
                    // SAFETY: index i belongs to chunk c only.
                    unsafe {
                        *sp.0.add(i) = s;
                        *rp.0.add(i) = bx.cart(s);
                    }
                }
            });
        }
        self.phi_r.resize(n, 0.0);
        self.phi_k.resize(n, 0.0);
        let fl = if want_field { 3 * n } else { 0 };
        self.f_r.resize(fl, 0.0);
        self.f_k.resize(fl, 0.0);
        let t0 = Instant::now();
        let mut vir_r = self.real.compute(
            &self.bx,
            &self.s,
            &self.r,
            q,
            &self.threads,
            &mut self.phi_r,
            if want_field { Some(&mut self.f_r[..]) } else { None },
            virial,
        )?;
        if !self.excl.is_empty() {
            self.real.exclusions(
                &self.bx,
                &self.s,
                q,
                &self.excl,
                &mut self.phi_r,
                if want_field { Some(&mut self.f_r[..]) } else { None },
                Some(&mut vir_r),
            );
        }
        let t1 = Instant::now();
        let fk = if want_field { Some(&mut self.f_k[..]) } else { None };
        let vir_k = match &mut self.kspace {
            KSpace::Spectral(s) => s.compute(&self.bx, &self.s, q, &self.threads, &mut self.phi_k, fk, virial)?,
            KSpace::Spme(s) => s.compute(&self.bx, &self.s, q, &self.threads, &mut self.phi_k, fk, virial)?,
            KSpace::Direct(d) => d.compute(&self.bx, &self.s, q, &self.threads, &mut self.phi_k, fk, virial)?,
        };
        let t2 = Instant::now();
        self.params.real_s = (t1 - t0).as_secs_f64();
        self.params.kspace_s = (t2 - t1).as_secs_f64();
        // self and background terms
        let xi = self.chosen.xi;
        let qtot: f64 = q.iter().sum();
        let v = self.bx.volume;
        let c_self = 2.0 * xi / std::f64::consts::PI.sqrt();
        let phi_bg = -std::f64::consts::PI * qtot / (v * xi * xi);
        let u_bg = 0.5 * qtot * phi_bg;
        let mut energy = 0.0;
        for i in 0..n {
            let p = self.phi_r[i] + self.phi_k[i] - c_self * q[i] + phi_bg;
            self.phi_r[i] = p;
            energy += q[i] * p;
        }
        energy *= 0.5;
        let mut w = [0.0; 9];
        if virial {
            let idx = [(0, 0), (0, 1), (0, 2), (1, 1), (1, 2), (2, 2)];
            for (c, &(a, b)) in idx.iter().enumerate() {
                let val = vir_r[c] + vir_k[c] + if a == b { u_bg } else { 0.0 };
                w[3 * a + b] = val;
                w[3 * b + a] = val;
            }
        }
        if let Some(p) = phi {
            p.copy_from_slice(&self.phi_r);
        }
        if let Some(f) = field {
            for (o, (a, b)) in f.iter_mut().zip(self.f_r.iter().zip(&self.f_k)) {
                *o = a + b;
            }
        }
        if self.opts.debug > 0 {
            eprintln!(
                "[farfield ewald] execute n {n}: real {:.3} ms, k-space {:.3} ms, U = {energy:.10e}",
                1e3 * self.params.real_s,
                1e3 * self.params.kspace_s
            );
        }
        Ok(EwaldResult { energy, virial: w })
    }
}
