//! Free-space Poisson solvers on uniform grids (seed 001: Mayani et al., IPPL; Hockney &
//! Eastwood 1988; Vico, Greengard & Ferrando, J. Comput. Phys. 323 (2016) 191).
//!
//! Solves `∇²φ = −ρ` in 2D or 3D with free-space boundary conditions (φ → 0 at infinity in 3D,
//! φ ~ −Q ln|x|/(2π) in 2D), i.e. `φ = G ∗ ρ` with `G(x) = 1/(4π|x|)` (3D) or
//! `G(x) = −ln|x|/(2π)` (2D).
//!
//! # Grid convention
//! Values sit at the **nodes** `x_{ijk} = origin + (i h_x, j h_y, k h_z)`, `0 ≤ i < n_x`, …;
//! the origin is the caller's and does not enter the convolution. Storage is **x fastest**,
//! `rho[i + n_x (j + n_y k)]`, `f64`. The source is taken to be zero outside the grid.
//! Units are the caller's: lengths in the unit of `h`, `φ` in units of `ρ·length²`.
//!
//! # Methods ([`Method`])
//! * [`Method::Hockney`] — Hockney–Eastwood: the node-sampled Green's function, mirrored onto
//!   the doubled grid, with a regularised `G(0)` ([`green::g0_cell_average`]); second order.
//! * [`Method::Vico`] — Vico–Greengard: the band-limited kernel of the Green's function
//!   truncated at `L = vico_factor · √(Σ (n_d h_d)²)` ([`green::vico_hat`]), obtained by an
//!   inverse FFT on a grid of `4n_d` points per axis (seed 001 §2.3); spectrally accurate for
//!   smooth sources.
//! * [`Method::VicoDct`] — the same kernel from a DCT-I on `(2n_d + 1)` points per axis
//!   (seed 001 §2.4), never allocating the `4n` grid; agrees with [`Method::Vico`] to
//!   rounding (≈1e-15 relative).
//!
//! All three share one execute path: the plan holds the real-to-complex transform (half
//! spectrum, real because the mirrored kernel is even) of the kernel on the doubled grid
//! `2n_x × 2n_y (× 2n_z)`, scaled by the cell volume and FFT normalisation. `execute` zero-pads
//! ρ, transforms (r2c), multiplies, transforms back (c2r) and restricts to the physical grid
//! (seed 001 §2.2 steps 1–5).
//!
//! # Cost
//! Plan: `O(M log M)` with `M = Π 2n_d` (Hockney), `Π 4n_d` (Vico, memory `≈ 16·Π 4n_d` bytes
//! during planning), `Π (2n_d + 1)` (Vico-DCT). Execute: one r2c and one c2r of size `M`,
//! plus one c2r per field component. Plan memory: `≈ 20·M` bytes (+`8·M` once a field has
//! been requested).
//!
//! # Accuracy (measured, relative L2 error on the nodes; `cargo test --lib poisson_sweep -- --ignored`)
//! Gaussian σ = 0.05 centred in the unit cube (seed 001 eq. 4), n³ cell-centred nodes:
//!
//! | n | Hockney | Vico = Vico-DCT | field (Vico) |
//! |---|---------|-----------------|--------------|
//! | 16 | 7.2e-3 | 2.9e-4 | 1.9e-2 |
//! | 32 | 2.1e-3 | 1.2e-9 | 5.8e-7 |
//! | 64 | 5.6e-4 | 3.3e-16 | 4.8e-16 |
//! | 128 | 1.4e-4 | 3.6e-16 | |
//!
//! Hockney–Eastwood: fitted order 1.91 over n = 16…128. Uniform ball (eq. 5, cell-averaged
//! source): second order for all methods (order 2.1–2.2 over n = 16…64).
//! The exact test problems are in [`testcases`] (shared with `farfield poisson`, which
//! prints this table for any range of n: `farfield poisson --convergence`).

pub mod green;
pub mod testcases;

mod field;
mod hockney;
mod vico;
mod vico_dct;

#[cfg(test)]
mod tests;

use crate::error::{Error, Result};
use crate::fft::{half_len, AlignedVec, FftPlan, FFTW_ESTIMATE};
use num_complex::Complex64;
use crate::threads::Threads;

/// Which free-space solver a plan uses (C: `FARFIELD_POISSON_HOCKNEY = 0`,
/// `FARFIELD_POISSON_VICO = 1`, `FARFIELD_POISSON_VICO_DCT = 2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Hockney–Eastwood (seed 001 §2.2): second order.
    Hockney,
    /// Vico–Greengard with the kernel precomputed on the `4n` grid (seed 001 §2.3).
    Vico,
    /// Vico–Greengard with the kernel precomputed by a DCT-I on `2n + 1` points (seed 001 §2.4).
    VicoDct,
}

/// Options of a Poisson plan.
#[derive(Debug, Clone, PartialEq)]
pub struct PoissonOpts {
    /// Threads for FFTW and the pointwise loops; 0 = all available cores; 1 = the caller's
    /// thread only (no pool is created).
    pub nthreads: usize,
    /// FFTW planner flags for the execute transforms (default `FFTW_ESTIMATE`). The one-shot
    /// transforms of the kernel precomputation always use `FFTW_ESTIMATE`.
    pub fftw_flags: u32,
    /// `L / √(Σ (n_d h_d)²)` for the Vico methods, `> 1` and finite (default 1.1, seed 001 §2.3).
    pub vico_factor: f64,
    /// Check ρ for NaN/Inf on every execute (default on; error names the first bad index).
    pub check_input: bool,
    /// `> 0`: print plan sizes and timings to stderr.
    pub debug: i32,
}

impl Default for PoissonOpts {
    fn default() -> Self {
        PoissonOpts { nthreads: 0, fftw_flags: FFTW_ESTIMATE, vico_factor: 1.1, check_input: true, debug: 0 }
    }
}

/// Grid geometry shared by the kernel builders. Unused axes (dim 2) have `n = n2 = 1`, `h = 1`.
#[derive(Debug, Clone)]
pub(crate) struct Geom {
    pub dim: usize,
    /// Physical grid size per axis.
    pub n: [usize; 3],
    /// Spacing per axis.
    pub h: [f64; 3],
    /// Doubled grid size per axis (`2n`, 1 for an unused axis).
    pub n2: [usize; 3],
}

impl Geom {
    /// Physical number of points.
    pub fn npts(&self) -> usize {
        self.n.iter().product()
    }
    /// Doubled-grid sizes as an FFT dimension list (x fastest, `dim` entries).
    pub fn dims2(&self) -> &[usize] {
        &self.n2[..self.dim]
    }
    /// Cell volume `Π h_d` (area in 2D).
    pub fn cell_volume(&self) -> f64 {
        self.h[..self.dim].iter().product()
    }
    /// Box diagonal `√(Σ (n_d h_d)²)`.
    pub fn diagonal(&self) -> f64 {
        (0..self.dim).map(|d| (self.n[d] as f64 * self.h[d]).powi(2)).sum::<f64>().sqrt()
    }
}

/// Writes the even kernel `f(|offset|)` onto the doubled grid `buf` (length `Π n2`): entry
/// `m` per axis holds the offset `min(m, 2n − m)` (the mirrored layout of seed 001 §2.2 step 3).
pub(crate) fn fill_mirrored<F>(g: &Geom, exec: &Threads, buf: &mut [f64], f: F)
where
    F: Fn([usize; 3]) -> f64 + Sync + Send,
{
    let [n2x, n2y, n2z] = g.n2;
    exec.chunks(buf, n2x, |row, r| {
        let (j, k) = (row % n2y, row / n2y);
        let o = [0, j.min(n2y - j), k.min(n2z - k)];
        for (i, v) in r.iter_mut().enumerate() {
            *v = f([i.min(n2x - i), o[1], o[2]]);
        }
    });
}

/// A free-space Poisson plan: geometry, the kernel's half spectrum on the doubled grid, FFT
/// plans and work buffers. Reusable for any number of right-hand sides ([`PoissonPlan::execute`]);
/// `Send` (use one plan per thread, or share it behind a lock as the C API does).
pub struct PoissonPlan {
    method: Method,
    geom: Geom,
    opts: PoissonOpts,
    /// Kernel spectrum on the doubled grid's half spectrum (real), scaled by `Π h / Π 2n`.
    green_hat: AlignedVec<f64>,
    work_r: AlignedVec<f64>,
    work_c: AlignedVec<Complex64>,
    /// Second spectrum buffer for field components, allocated on first use.
    work_f: Option<AlignedVec<Complex64>>,
    fwd: FftPlan<f64>,
    bwd: FftPlan<f64>,
    exec: Threads,
    /// Precomputation grid of the Vico methods (the `4n`-like FFT grid; DCT size is half + 1).
    precompute: [usize; 3],
}

impl std::fmt::Debug for PoissonPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PoissonPlan")
            .field("method", &self.method)
            .field("geom", &self.geom)
            .field("opts", &self.opts)
            .field("precompute", &self.precompute)
            .finish_non_exhaustive()
    }
}

fn checked_product(v: &[usize], what: &str, err: fn(String) -> Error) -> Result<usize> {
    v.iter()
        .try_fold(1usize, |a, &b| a.checked_mul(b))
        .ok_or_else(|| err(format!("{what} {v:?} has more points than fit in memory indices")))
}

impl PoissonPlan {
    /// Makes a plan for grids of `n = [n_x, n_y(, n_z)]` nodes (`dim = n.len()` is 2 or 3) with
    /// spacings `h` (same length), solving `∇²φ = −ρ` in free space by `method`.
    ///
    /// Errors: [`Error::Dim`] (`n.len()` not 2 or 3, or `h.len() ≠ n.len()`),
    /// [`Error::Modes`] (a size 0, or the grid too large for indices / FFTW's `int`),
    /// [`Error::InvalidArg`] (a spacing not finite and positive, `vico_factor` not finite and
    /// `> 1` for the Vico methods), [`Error::Alloc`] (the doubled or precomputation grid cannot
    /// be allocated, including byte-size overflow), [`Error::Fft`], [`Error::Internal`] (no pool).
    pub fn new(method: Method, n: &[usize], h: &[f64], opts: &PoissonOpts) -> Result<PoissonPlan> {
        let t0 = std::time::Instant::now();
        let dim = n.len();
        if dim != 2 && dim != 3 {
            return Err(Error::Dim(format!("Poisson solvers need dim 2 or 3, got {dim}")));
        }
        if h.len() != dim {
            return Err(Error::Dim(format!("{} spacings given for a {dim}D grid", h.len())));
        }
        for (d, &nd) in n.iter().enumerate() {
            if nd == 0 {
                return Err(Error::Modes(format!("grid size n[{d}] = 0; every size must be ≥ 1")));
            }
        }
        for (d, &hd) in h.iter().enumerate() {
            if !(hd.is_finite() && hd > 0.0) {
                return Err(Error::InvalidArg(format!("grid spacing h[{d}] = {hd}; must be finite and > 0")));
            }
        }
        if method != Method::Hockney && !(opts.vico_factor.is_finite() && opts.vico_factor > 1.0) {
            return Err(Error::InvalidArg(format!(
                "vico_factor = {}; must be finite and > 1 (the truncation radius must exceed the box diagonal)",
                opts.vico_factor
            )));
        }
        checked_product(n, "grid", Error::Modes)?;
        let mut geom = Geom { dim, n: [1; 3], h: [1.0; 3], n2: [1; 3] };
        for d in 0..dim {
            geom.n[d] = n[d];
            geom.h[d] = h[d];
            geom.n2[d] = n[d]
                .checked_mul(2)
                .ok_or_else(|| Error::Modes(format!("doubled grid size 2·n[{d}] overflows")))?;
        }
        let m2 = checked_product(geom.dims2(), "doubled grid", Error::Alloc)?;
        let exec = Threads::new(opts.nthreads)?;
        let nthreads = exec.count();
        let mut work_r = AlignedVec::<f64>::zeroed(m2, "Poisson doubled grid")?;
        let mut work_c = AlignedVec::<Complex64>::zeroed(half_len(geom.dims2()), "Poisson doubled-grid spectrum")?;
        let mut green_hat = AlignedVec::<f64>::zeroed(work_c.len(), "Poisson kernel spectrum")?;
        let fwd = FftPlan::r2c(geom.dims2(), &mut work_r, &mut work_c, opts.fftw_flags, nthreads)?;
        let bwd = FftPlan::c2r(geom.dims2(), &mut work_c, &mut work_r, opts.fftw_flags, nthreads)?;
        let t_fft = t0.elapsed();

        // Kernel K(offset) on the doubled grid (mirrored), method by method.
        let mut precompute = [0usize; 3];
        match method {
            Method::Hockney => hockney::fill_kernel(&geom, &exec, &mut work_r),
            Method::Vico | Method::VicoDct => {
                let l = opts.vico_factor * geom.diagonal();
                precompute = vico::precompute_dims(&geom, l)?;
                let table = if method == Method::Vico {
                    vico::kernel_table(&geom, l, precompute, nthreads, &exec)?
                } else {
                    vico_dct::kernel_table(&geom, l, precompute, nthreads, &exec)?
                };
                fill_mirrored(&geom, &exec, &mut work_r, |o| table.get(o));
            }
        }
        let t_kernel = t0.elapsed();
        // Scale by the cell volume (quadrature weight) and the 1/Π(2n) of the unnormalised c2r.
        let scale = geom.cell_volume() / m2 as f64;
        fwd.execute_r2c(&mut work_r, &mut work_c);
        exec.chunks2(&mut green_hat, 4096, &work_c, 4096, |_, g, c| {
            for (gi, ci) in g.iter_mut().zip(c) {
                *gi = ci.re * scale;
            }
        });
        if opts.debug > 0 {
            eprintln!(
                "farfield poisson: {method:?} dim {dim} n {:?} h {:?} doubled {:?} precompute {:?} threads {nthreads}; \
                 fft plans {:.3} s, kernel {:.3} s, total {:.3} s",
                &geom.n[..dim], &geom.h[..dim], geom.dims2(), &precompute[..dim],
                t_fft.as_secs_f64(), (t_kernel - t_fft).as_secs_f64(), t0.elapsed().as_secs_f64()
            );
        }
        Ok(PoissonPlan {
            method, geom, opts: opts.clone(), green_hat, work_r, work_c, work_f: None, fwd, bwd, exec, precompute,
        })
    }

    /// The method of this plan.
    pub fn method(&self) -> Method {
        self.method
    }
    /// Dimension (2 or 3).
    pub fn dim(&self) -> usize {
        self.geom.dim
    }
    /// Grid sizes `[n_x, n_y, n_z]` (`n_z = 1` in 2D).
    pub fn n(&self) -> [usize; 3] {
        self.geom.n
    }
    /// Number of grid points `Π n_d` (length of ρ and φ; the field has `dim` times as many).
    pub fn npts(&self) -> usize {
        self.geom.npts()
    }
    /// Size per axis of the Vico precomputation FFT grid (`4n_d`, or more for very elongated
    /// boxes, see [`Method::Vico`]); zeros for Hockney. The DCT variant uses half of it plus one.
    pub fn precompute_dims(&self) -> [usize; 3] {
        self.precompute
    }

    /// Solves for one right-hand side.
    ///
    /// * `rho`: source on the nodes, `npts()` values, x fastest.
    /// * `phi`: output potential, `npts()` values, same layout.
    /// * `efield`: optional output `E = −∇φ`, **component-major**: `e[idx + npts·d]` for
    ///   component `d < dim` at node `idx` (Fortran `e(nx,ny,nz,3)`), `dim·npts()` values.
    ///   Computed by spectral differentiation of the doubled-grid potential (multiplication by
    ///   `−i k_d`, Nyquist mode dropped, in the same pass; one extra c2r per component). The
    ///   mirrored kernel has a kink at the doubled grid's mid-plane, so the field converges
    ///   like φ but with a larger constant (Vico, Gaussian test: 5.8e-7 at 32³, 5e-14 at 48³);
    ///   expect lower order near the faces for sources that do not vanish there.
    ///
    /// Returns the electrostatic energy `U = ½ Σ ρ_i φ_i · Π h_d` (≈ ½∫ρφ).
    ///
    /// Errors (nothing is written on error): [`Error::InvalidArg`] (a slice length differs from
    /// the plan's), [`Error::NonFinite`] (with `check_input`: the first non-finite ρ, naming its
    /// index), [`Error::Alloc`] (the field buffer on first use).
    pub fn execute(&mut self, rho: &[f64], phi: &mut [f64], efield: Option<&mut [f64]>) -> Result<f64> {
        let g = self.geom.clone();
        let npts = g.npts();
        if rho.len() != npts || phi.len() != npts {
            return Err(Error::InvalidArg(format!(
                "rho has {} and phi {} values; the grid has {npts}",
                rho.len(),
                phi.len()
            )));
        }
        if let Some(e) = &efield {
            if e.len() != g.dim * npts {
                return Err(Error::InvalidArg(format!("efield has {} values, expected dim·npts = {}", e.len(), g.dim * npts)));
            }
        }
        if self.opts.check_input {
            if let Some(i) = self.exec.find_first(npts, |i| !rho[i].is_finite()) {
                let (x, y, z) = (i % g.n[0], (i / g.n[0]) % g.n[1], i / (g.n[0] * g.n[1]));
                return Err(Error::NonFinite(format!("rho[{i}] = {} (node i={x}, j={y}, k={z})", rho[i])));
            }
        }
        if efield.is_some() && self.work_f.is_none() {
            self.work_f = Some(AlignedVec::zeroed(self.work_c.len(), "Poisson field spectrum")?);
        }

        // Zero-pad ρ onto the doubled grid (step 2), transform, multiply by the kernel.
        let [n2x, n2y, _] = g.n2;
        let [nx, ny, nz] = g.n;
        self.exec.chunks(&mut self.work_r, n2x, |row, r| {
            let (j, k) = (row % n2y, row / n2y);
            if j < ny && k < nz {
                let s = nx * (j + ny * k);
                r[..nx].copy_from_slice(&rho[s..s + nx]);
                r[nx..].fill(0.0);
            } else {
                r.fill(0.0);
            }
        });
        self.fwd.execute_r2c(&mut self.work_r, &mut self.work_c);
        self.exec.chunks2(&mut self.work_c, 4096, &self.green_hat, 4096, |_, c, gh| {
            for (ci, gi) in c.iter_mut().zip(gh) {
                *ci *= *gi;
            }
        });

        if let Some(e) = efield {
            let wf = self.work_f.as_mut().expect("allocated above");
            for d in 0..g.dim {
                field::derivative(&g, &self.exec, &self.work_c, wf, d);
                self.bwd.execute_c2r(wf, &mut self.work_r);
                restrict(&g, &self.exec, &self.work_r, &mut e[d * npts..(d + 1) * npts]);
            }
        }
        self.bwd.execute_c2r(&mut self.work_c, &mut self.work_r);
        restrict(&g, &self.exec, &self.work_r, phi);
        let phi: &[f64] = phi;
        Ok(0.5 * g.cell_volume() * self.exec.sum(npts, |i| rho[i] * phi[i]))
    }
}

/// Copies the physical part of the doubled grid `src` into `dst` (`npts` values).
fn restrict(g: &Geom, exec: &Threads, src: &[f64], dst: &mut [f64]) {
    let [nx, ny, _] = g.n;
    let [n2x, n2y, _] = g.n2;
    exec.chunks(dst, nx, |row, r| {
        let (j, k) = (row % ny, row / ny);
        let s = n2x * (j + n2y * k);
        r.copy_from_slice(&src[s..s + nx]);
    });
}
