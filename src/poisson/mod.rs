//! Free-space Poisson solvers on uniform grids (Mayani, Montanaro, Cerfon, Frey,
//! Muralikrishnan & Adelmann, "A massively parallel performance portable free-space spectral
//! Poisson solver", ACM Trans. Math. Softw. 51(3) (2025), the IPPL solvers — cited below as
//! "Mayani et al. 2025"; Hockney & Eastwood 1988; Vico, Greengard & Ferrando, J. Comput. Phys.
//! 323 (2016) 191).
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
//!   inverse FFT on a grid of `4n_d` points per axis (Mayani et al. 2025 §2.3); spectrally accurate
//!   for smooth sources.
//! * [`Method::VicoDct`] — the same kernel from a DCT-I on `(2n_d + 1)` points per axis
//!   (Mayani et al. 2025 §2.4), never allocating the `4n` grid; agrees with [`Method::Vico`] to
//!   rounding (≈1e-15 relative).
//!
//! All three share one execute path: the plan holds the real-to-complex transform (half
//! spectrum, real because the mirrored kernel is even) of the kernel on the doubled grid
//! `2n_x × 2n_y (× 2n_z)`, scaled by the cell volume and FFT normalisation. `execute` zero-pads
//! ρ, transforms (r2c), multiplies, transforms back (c2r) and restricts to the physical grid
//! (Mayani et al. 2025 §2.2 steps 1–5).
//!
//! # Cost and limits
//! Plan: `O(M log M)` with `M = Π 2n_d` (Hockney), `Π P_d` (Vico), `Π (P_d/2 + 1)` (Vico-DCT),
//! where `P_d = max(4n_d, next_smooth_even(⌈1.5 n_d + L/h_d⌉))` is the precomputation grid
//! ([`PoissonPlan::precompute_dims`]): `4n_d` for near-cubic cells and boxes, larger on short
//! or finely spaced axes (a 64×64×2 slab of cubic cells: `P = 256×256×108`, 13× the "Π 4n_d"
//! of a cube). Memory, exactly as allocated ([`PoissonPlan::estimate`], [`MemoryEstimate`]):
//! plan `8·M + 24·H` bytes (`H = (n_x+1)·Π_{d>0} 2n_d`), `+16·H + 8·dim·Π n_d` once a field
//! has been requested, and during planning the precomputation grids, Vico
//! `8·Π P_d + 16·(P_x/2+1)·Π_{d>0} P_d`, Vico-DCT `8·Π (P_d/2+1)`. Execute: one r2c and one
//! c2r of size `M`, plus one c2r per field component.
//!
//! Limits, all checked before anything is allocated ([`Error::Range`] naming value and limit):
//! `2n_d ≤ 2³¹ − 1`, `M ≤` [`MAX_GRID_POINTS`] (2⁴⁰), `h_max/h_min ≤` [`MAX_ANISOTROPY`]
//! (1e150), Vico `Π P_d ≤` [`MAX_PRECOMPUTE_RATIO`]` · M` (512; the precomputation cost is
//! bounded by the problem size) and `1 < vico_factor ≤` [`MAX_VICO_FACTOR`] (4, else
//! [`Error::InvalidArg`]).
//!
//! # Scale
//! Plans work in units of `u = 2^e` near the geometric mean of the spacings (exact rescaling:
//! `h' = h/u`); [`PoissonPlan::execute_into`] normalises ρ by a power of two and rescales the
//! outputs exactly (`φ = u²φ'`, `E = uE'`, `U = u^{dim+2}U'`; in 2D the log kernel's constant
//! `−ln(λ)/(2π)` is added to the kernel's zero mode exactly). Any spacing magnitude works
//! wherever the requested outputs are representable; otherwise [`Error::Range`].
//!
//! # Accuracy (measured, relative L2 error on the nodes; `cargo bench --bench poisson_sweep`)
//! Gaussian σ = 0.05 centred in the unit cube (Mayani et al. 2025 eq. 4), n³ cell-centred nodes:
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
#[cfg(feature = "mpi")]
pub mod dist;

mod field;
mod hockney;
mod vico;
mod vico_dct;

#[cfg(test)]
mod tests;

use crate::error::{try_zeroed_vec, Error, Result, MAX_ELEMENTS};
use crate::fft::{half_len, AlignedVec, FftPlan, FFTW_ESTIMATE};
use crate::scale::{check_scaled, max_abs, pow2};
use num_complex::Complex64;
use crate::threads::Threads;

/// Which free-space solver a plan uses (C: `FARFIELD_POISSON_HOCKNEY = 0`,
/// `FARFIELD_POISSON_VICO = 1`, `FARFIELD_POISSON_VICO_DCT = 2`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Method {
    /// Hockney–Eastwood (Mayani et al. 2025 §2.2): second order.
    Hockney,
    /// Vico–Greengard with the kernel precomputed on the `4n` grid (Mayani et al. 2025 §2.3).
    Vico,
    /// Vico–Greengard with the kernel precomputed by a DCT-I on `2n + 1` points (Mayani et al. 2025
    /// §2.4).
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
    /// `L / √(Σ (n_d h_d)²)` for the Vico methods, `> 1` and finite (default 1.1, Mayani et al.
    /// 2025 §2.3).
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
    /// `ln u` of the plan's length unit `u` (in caller units); `h` above is in units of `u`.
    pub ln_unit: f64,
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
/// `m` per axis holds the offset `min(m, 2n − m)` (the mirrored layout of Mayani et al. 2025 §2.2
/// step 3).
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
    /// Field components before scaling (`dim·npts`), allocated on first use.
    field_scratch: Option<Vec<f64>>,
    /// Plan length unit `2^scale_exp` (caller units): `φ = 2^{2e}·φ'`, `E = 2^e·E'`.
    scale_exp: i32,
    est: MemoryEstimate,
    /// Bytes the precomputation actually allocated (checked against `est` in the tests).
    #[allow(dead_code)]
    precompute_allocated: usize,
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

/// Largest spacing ratio `h_max / h_min` a plan accepts (every method): 1e150. Within it, the
/// kernel is evaluated in scaled units (spacings divided by a power of two near their geometric
/// mean) where every intermediate (`|x|²`, the cell average of `G`, the spectrum) is a normal
/// double; beyond it → [`Error::Range`]. The Vico methods are further limited by
/// [`MAX_PRECOMPUTE_RATIO`] (in practice to ratios of order 10–100).
pub const MAX_ANISOTROPY: f64 = 1e150;
/// Largest `vico_factor` (the Vico truncation radius `L` in units of the box diagonal): 4.
/// The precomputation grid grows like `vico_factor^dim`; the default 1.1 (Mayani et al. 2025)
/// suffices.
pub const MAX_VICO_FACTOR: f64 = 4.0;
/// Largest Vico precomputation grid relative to the doubled grid: `Π P_d ≤ 512 · Π 2n_d`
/// (a cube at the default `vico_factor` uses `4^dim/2^dim`, i.e. 8 in 3D; a 64×64×2 slab 108).
pub const MAX_PRECOMPUTE_RATIO: usize = 512;
/// Largest doubled grid `Π 2n_d` (= [`crate::error::MAX_ELEMENTS`], 2⁴⁰ points: 8 TiB per
/// real buffer); each `2n_d` must also fit FFTW's `int` (`≤ 2³¹ − 1`).
pub const MAX_GRID_POINTS: usize = MAX_ELEMENTS;
/// Address space probed (allocated and freed, [`crate::fft::fftw_headroom`]) at the start of
/// every execute: 32 MiB. FFTW aborts the process when its own `malloc` fails, and its buffered
/// solvers allocate while they run (a few 1D lines and scratch, far less than this for the
/// grid sizes allowed here), so the probe turns an imminent FFTW abort into [`Error::Alloc`].
/// (Plans are probed by [`crate::fft::FftPlan`] itself.)
pub const FFTW_HEADROOM_BYTES: usize = 32 << 20;

/// Memory of a Poisson plan, derived from the grids the plan builds (no allocation).
/// See [`PoissonPlan::estimate`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemoryEstimate {
    /// The Vico precomputation FFT grid `P_d` per axis (`1` for unused axes; zeros for Hockney).
    pub precompute: [usize; 3],
    /// Bytes held by the plan after planning: the doubled real grid `8·Π 2n_d`, its half
    /// spectrum `16·H` and the kernel spectrum `8·H` (`H = (n_x+1)·Π_{d>0} 2n_d`).
    pub plan_bytes: usize,
    /// Further bytes held once a field has been requested: a second spectrum `16·H` and the
    /// field scratch `8·dim·Π n_d`.
    pub field_bytes: usize,
    /// Transient bytes of the kernel precomputation: Vico `8·Π P_d + 16·(P_x/2+1)·Π_{d>0} P_d`,
    /// Vico-DCT `8·Π (P_d/2+1)`, Hockney 0.
    pub precompute_bytes: usize,
    /// Peak during planning: `plan_bytes + precompute_bytes` (plus FFTW's small tables and the
    /// transient [`FFTW_HEADROOM_BYTES`] probe of address space).
    pub peak_bytes: usize,
}

/// Validated plan set-up: the geometry in scaled units and the scale.
struct Setup {
    geom: Geom,
    /// The plan's length unit is `2^scale_exp` caller units (spacings `h' = h / 2^scale_exp`).
    scale_exp: i32,
    /// Vico truncation radius in plan units (0 for Hockney).
    l: f64,
    precompute: [usize; 3],
}

impl Setup {
    fn new(method: Method, n: &[usize], h: &[f64], opts: &PoissonOpts) -> Result<Setup> {
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
            if nd > (i32::MAX / 2) as usize {
                return Err(Error::Range(format!(
                    "grid size n[{d}] = {nd}: the doubled axis 2·n[{d}] must fit FFTW's int (n[{d}] ≤ {})",
                    i32::MAX / 2
                )));
            }
        }
        for (d, &hd) in h.iter().enumerate() {
            if !(hd.is_finite() && hd > 0.0) {
                return Err(Error::InvalidArg(format!("grid spacing h[{d}] = {hd:e}; must be finite and > 0")));
            }
        }
        if method != Method::Hockney
            && !(opts.vico_factor.is_finite() && opts.vico_factor > 1.0 && opts.vico_factor <= MAX_VICO_FACTOR)
        {
            return Err(Error::InvalidArg(format!(
                "vico_factor = {:e}; must be > 1 (the truncation radius must exceed the box diagonal) and ≤ {MAX_VICO_FACTOR:e}",
                opts.vico_factor
            )));
        }
        let m2 = n.iter().try_fold(1usize, |a, &b| a.checked_mul(2 * b).filter(|&v| v <= MAX_GRID_POINTS));
        if m2.is_none() {
            let pts: f64 = n.iter().map(|&v| 2.0 * v as f64).product();
            return Err(Error::Range(format!(
                "the doubled grid 2n = {:?} has {pts:e} points, more than the supported {MAX_GRID_POINTS:e}",
                n.iter().map(|&v| 2 * v as u128).collect::<Vec<_>>()
            )));
        }
        // Anisotropy, from the binary exponents (no overflow at any finite spacing).
        let lg: Vec<f64> = h.iter().map(|v| v.log2()).collect();
        let (lmin, lmax) = lg.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &v| (a.min(v), b.max(v)));
        if lmax - lmin > MAX_ANISOTROPY.log2() {
            let (hmin, hmax) = h.iter().fold((f64::INFINITY, 0f64), |(a, b), &v| (a.min(v), b.max(v)));
            return Err(Error::Range(format!(
                "spacing ratio h_max/h_min = {hmax:e}/{hmin:e} = 2^{:.1} exceeds the supported {MAX_ANISOTROPY:e}",
                lmax - lmin
            )));
        }
        // Plan units: a power of two near the geometric mean (exact rescaling).
        let scale_exp = (lg.iter().sum::<f64>() / dim as f64).round() as i32;
        let mut geom = Geom { dim, n: [1; 3], h: [1.0; 3], n2: [1; 3], ln_unit: scale_exp as f64 * std::f64::consts::LN_2 };
        for d in 0..dim {
            geom.n[d] = n[d];
            geom.h[d] = libm::scalbn(h[d], -scale_exp);
            geom.n2[d] = 2 * n[d];
        }
        let (l, precompute) = if method == Method::Hockney {
            (0.0, [0; 3])
        } else {
            let l = opts.vico_factor * geom.diagonal();
            (l, vico::precompute_dims(&geom, l)?)
        };
        Ok(Setup { geom, scale_exp, l, precompute })
    }

    fn estimate(&self, method: Method) -> MemoryEstimate {
        let g = &self.geom;
        let m2: usize = g.dims2().iter().product();
        let hl = half_len(g.dims2());
        let plan_bytes = 8 * m2 + 16 * hl + 8 * hl;
        let field_bytes = 16 * hl + 8 * g.dim * g.npts();
        let precompute_bytes = match method {
            Method::Hockney => 0,
            Method::Vico => vico::table_bytes(g.dim, self.precompute),
            Method::VicoDct => vico_dct::table_bytes(g.dim, self.precompute),
        };
        MemoryEstimate {
            precompute: self.precompute,
            plan_bytes,
            field_bytes,
            precompute_bytes,
            peak_bytes: plan_bytes + precompute_bytes,
        }
    }
}

impl PoissonPlan {
    /// Makes a plan for grids of `n = [n_x, n_y(, n_z)]` nodes (`dim = n.len()` is 2 or 3) with
    /// spacings `h` (same length), solving `∇²φ = −ρ` in free space by `method`.
    ///
    /// Limits: every `n_d ≥ 1` with `2n_d ≤ 2³¹ − 1` and `Π 2n_d ≤` [`MAX_GRID_POINTS`];
    /// spacings finite, `> 0`, any magnitude (including subnormal), with
    /// `h_max/h_min ≤` [`MAX_ANISOTROPY`]; Vico: `1 < vico_factor ≤` [`MAX_VICO_FACTOR`] and the
    /// precomputation grid `≤` [`MAX_PRECOMPUTE_RATIO`]` × Π 2n_d`. The kernel is built in
    /// plan units (spacings divided by a power of two near their geometric mean), so a change
    /// of length unit changes nothing but the exact power-of-two rescaling of the outputs.
    /// Memory: [`PoissonPlan::estimate`].
    ///
    /// Errors: [`Error::Dim`] (`n.len()` not 2 or 3, or `h.len() ≠ n.len()`),
    /// [`Error::Modes`] (a size 0), [`Error::Range`] (a size, the anisotropy or the Vico
    /// precomputation grid beyond the limits above; the message states the value and the
    /// limit), [`Error::InvalidArg`] (a spacing not finite and positive, `vico_factor` outside
    /// `(1, 4]` for the Vico methods), [`Error::Alloc`] (a grid or the FFTW headroom cannot be
    /// allocated, with the byte count), [`Error::Fft`], [`Error::Internal`] (no pool).
    pub fn new(method: Method, n: &[usize], h: &[f64], opts: &PoissonOpts) -> Result<PoissonPlan> {
        let t0 = std::time::Instant::now();
        let setup = Setup::new(method, n, h, opts)?;
        let est = setup.estimate(method);
        let Setup { geom, scale_exp, l, precompute } = setup;
        let dim = geom.dim;
        let m2: usize = geom.dims2().iter().product();
        let exec = Threads::new(opts.nthreads)?;
        let nthreads = exec.count();
        let mut work_r = AlignedVec::<f64>::zeroed(m2, "Poisson doubled grid")?;
        let mut work_c = AlignedVec::<Complex64>::zeroed(half_len(geom.dims2()), "Poisson doubled-grid spectrum")?;
        let mut green_hat = AlignedVec::<f64>::zeroed(work_c.len(), "Poisson kernel spectrum")?;
        let fwd = FftPlan::r2c(geom.dims2(), &mut work_r, &mut work_c, opts.fftw_flags, nthreads)?;
        let bwd = FftPlan::c2r(geom.dims2(), &mut work_c, &mut work_r, opts.fftw_flags, nthreads)?;
        let t_fft = t0.elapsed();

        // Kernel K(offset) on the doubled grid (mirrored), method by method, in plan units.
        let mut precompute_allocated = 0;
        match method {
            Method::Hockney => hockney::fill_kernel(&geom, &exec, &mut work_r),
            Method::Vico | Method::VicoDct => {
                let (table, bytes) = if method == Method::Vico {
                    vico::kernel_table(&geom, l, precompute, nthreads, &exec)?
                } else {
                    vico_dct::kernel_table(&geom, l, precompute, nthreads, &exec)?
                };
                precompute_allocated = bytes;
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
        if dim == 2 {
            // The 2D kernel was built for −ln(|x|/λ)/(2π) with λ the plan unit u = 2^e (Hockney)
            // or the truncation radius L (Vico, see green::vico_hat_log); G = that − ln(λ)/(2π) in
            // caller units. A constant c on every node of the kernel adds c·Π 2n_d to its DFT's
            // zero mode, i.e. c·Π h' after the scaling above: exact, and scale covariant.
            let ln_lambda = geom.ln_unit + if method == Method::Hockney { 0.0 } else { l.ln() };
            green_hat[0] -= ln_lambda / (2.0 * std::f64::consts::PI) * geom.cell_volume();
        }
        if let Some(i) = green_hat.iter().position(|v| !v.is_finite()) {
            return Err(Error::Internal(format!("Poisson kernel spectrum [{i}] = {:e} is not finite", green_hat[i])));
        }
        if opts.debug > 0 {
            eprintln!(
                "farfield poisson: {method:?} dim {dim} n {:?} h {:?} (plan unit 2^{scale_exp}) doubled {:?} \
                 precompute {:?} threads {nthreads}; memory: plan {} B, precompute {} B (transient), peak {} B, \
                 +{} B with field; fft plans {:.3} s, kernel {:.3} s, total {:.3} s",
                &geom.n[..dim], h.iter().map(|v| format!("{v:e}")).collect::<Vec<_>>(), geom.dims2(), &precompute[..dim],
                est.plan_bytes, est.precompute_bytes, est.peak_bytes, est.field_bytes,
                t_fft.as_secs_f64(), (t_kernel - t_fft).as_secs_f64(), t0.elapsed().as_secs_f64()
            );
        }
        Ok(PoissonPlan {
            method, geom, opts: opts.clone(), green_hat, work_r, work_c, work_f: None, field_scratch: None, fwd, bwd,
            exec, precompute, scale_exp, est, precompute_allocated,
        })
    }

    /// Memory a plan for these arguments would use (see [`MemoryEstimate`]), derived from the
    /// same grids [`PoissonPlan::new`] builds, without allocating; fails exactly where `new`
    /// fails on the limits (same errors, except allocation and FFTW failures).
    pub fn estimate(method: Method, n: &[usize], h: &[f64], opts: &PoissonOpts) -> Result<MemoryEstimate> {
        Ok(Setup::new(method, n, h, opts)?.estimate(method))
    }

    /// The memory estimate of this plan (see [`PoissonPlan::estimate`]).
    pub fn memory(&self) -> MemoryEstimate {
        self.est
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

    /// Solves for one right-hand side and returns the energy (see [`PoissonPlan::execute_into`],
    /// with the energy requested).
    pub fn execute(&mut self, rho: &[f64], phi: &mut [f64], efield: Option<&mut [f64]>) -> Result<f64> {
        let mut u = 0.0;
        self.execute_into(rho, phi, efield, Some(&mut u))?;
        Ok(u)
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
    /// * `energy`: optional output `U = ½ Σ ρ_i φ_i · Π h_d` (≈ ½∫ρφ).
    ///
    /// Scale: the solve runs in plan units with ρ normalised by a power of two (its largest
    /// magnitude scaled into `[1, 2)`), and the outputs are rescaled exactly by powers of two:
    /// any finite ρ and spacing whose result is representable works. An output whose largest
    /// magnitude would overflow, or underflow below the smallest normal double (`2.2e-308`)
    /// while not zero, is an error; nothing is returned that is not finite.
    ///
    /// Errors (nothing is written on error): [`Error::InvalidArg`] (a slice length differs from
    /// the plan's), [`Error::NonFinite`] (with `check_input`: the first non-finite ρ, naming its
    /// index), [`Error::Range`] (an output would overflow or underflow at this scale, or is not
    /// finite: ρ with NaN/Inf and `check_input` off), [`Error::Alloc`] (the field buffers on
    /// first use, or the FFTW headroom).
    pub fn execute_into(
        &mut self,
        rho: &[f64],
        phi: &mut [f64],
        efield: Option<&mut [f64]>,
        energy: Option<&mut f64>,
    ) -> Result<()> {
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
        if efield.is_some() && self.field_scratch.is_none() {
            self.field_scratch = Some(try_zeroed_vec(g.dim * npts, "Poisson field scratch")?);
        }
        crate::fft::fftw_headroom(FFTW_HEADROOM_BYTES, "the Poisson transforms")?;

        // ρ̃ = ρ·2^{-j} with max|ρ̃| in [1, 2) (exact; j = 0 for ρ = 0 or non-finite ρ).
        let rmax = rho.iter().fold(0f64, |a, &v| a.max(v.abs()));
        let j = if rmax > 0.0 && rmax.is_finite() { libm::ilogb(rmax) } else { 0 };
        // Zero-pad ρ̃ onto the doubled grid (step 2), transform, multiply by the kernel.
        let [n2x, n2y, _] = g.n2;
        let [nx, ny, nz] = g.n;
        self.exec.chunks(&mut self.work_r, n2x, |row, r| {
            let (y, z) = (row % n2y, row / n2y);
            if y < ny && z < nz {
                let s = nx * (y + ny * z);
                for (d, &v) in r[..nx].iter_mut().zip(&rho[s..s + nx]) {
                    *d = pow2(v, -j);
                }
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

        // φ = 2^{2e+j}·φ', E = 2^{e+j}·E' (e = plan unit exponent).
        let e_phi = 2 * self.scale_exp + j;
        let e_field = self.scale_exp + j;
        let mut field_max = 0f64;
        if efield.is_some() {
            let wf = self.work_f.as_mut().expect("allocated above");
            let fs = self.field_scratch.as_mut().expect("allocated above");
            for d in 0..g.dim {
                field::derivative(&g, &self.exec, &self.work_c, wf, d);
                self.bwd.execute_c2r(wf, &mut self.work_r);
                let part = &mut fs[d * npts..(d + 1) * npts];
                restrict(&g, &self.exec, &self.work_r, part);
                field_max = max_abs(field_max, part);
            }
        }
        self.bwd.execute_c2r(&mut self.work_c, &mut self.work_r);
        // Largest |φ'| on the physical grid, and the energy sum Σ ρ̃ φ' (both unscaled).
        let wr: &[f64] = &self.work_r;
        let phys = |i: usize| {
            let (x, y, z) = (i % nx, (i / nx) % ny, i / (nx * ny));
            wr[x + n2x * (y + n2y * z)]
        };
        let mut phi_max = 0f64;
        for row in 0..ny * nz {
            let (y, z) = (row % ny, row / ny);
            let st = n2x * (y + n2y * z);
            phi_max = max_abs(phi_max, &wr[st..st + nx]);
        }
        check_scaled("phi", phi_max, e_phi)?;
        if efield.is_some() {
            check_scaled("efield", field_max, e_field)?;
        }
        let u = if energy.is_some() {
            let s = 0.5 * g.cell_volume() * self.exec.sum(npts, |i| pow2(rho[i], -j) * phys(i));
            // U = ½ Π h Σ ρ φ = 2^{dim·e + 2e + 2j} · ½ Π h' Σ ρ̃ φ'
            let ex = (g.dim as i32 + 2) * self.scale_exp + 2 * j;
            check_scaled("energy", s.abs(), ex)?;
            Some(libm::scalbn(s, ex))
        } else {
            None
        };

        // Every output is finite and representable: write them.
        self.exec.chunks(phi, nx, |row, r| {
            let (y, z) = (row % ny, row / ny);
            let s = n2x * (y + n2y * z);
            for (d, &v) in r.iter_mut().zip(&wr[s..s + nx]) {
                *d = pow2(v, e_phi);
            }
        });
        if let Some(e) = efield {
            let fs = self.field_scratch.as_ref().expect("allocated above");
            self.exec.chunks2(e, 4096, fs, 4096, |_, out, inp| {
                for (o, &v) in out.iter_mut().zip(inp) {
                    *o = pow2(v, e_field);
                }
            });
        }
        if let (Some(dst), Some(u)) = (energy, u) {
            *dst = u;
        }
        Ok(())
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
