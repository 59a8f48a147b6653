//! FINUFFT's `spreadinterponly = 1` for types 1 and 2: spreading (type 1) or interpolation
//! (type 2) with the kernel alone, on a grid of exactly the mode counts given at makeplan, with
//! no FFT and no deconvolution (FINUFFT 2.5's definition; MRI codes use it for gridding and
//! density compensation, e.g. mri-nufft's `pipe`).
//!
//! * Grid: `N1×N2×N3` values, x fastest; grid point `i` of axis `d` sits at
//!   `x = −π + 2π i / N_d` (FINUFFT's fold: a point at `x` lands at `(x/2π + ½ mod 1)·N_d`).
//! * Type 1: `f[i] = Σ_j c_j ψ(i − g_j)` (periodic in every axis); type 2:
//!   `c_j = Σ_i f[i] ψ(i − g_j)`, its adjoint, with `g_j` the point's grid coordinate.
//! * Kernel ψ: farfield's exponential of semicircle (peak 1 at its centre, width w in grid
//!   points), chosen for `tol` at `σ = opts.upsampfac` (2 when automatic) as a NUFFT at that σ
//!   would be ([`farfield::nufft::params::choose_kernel`]). FINUFFT 2.5's default kernel is a
//!   prolate spheroidal function of its own width rule, so the values differ from FINUFFT's by
//!   the kernels' difference; the operation and the layout are the same.
//! * Errors: a mode count below `2w` → [`FINUFFT_ERR_SPREAD_BOX_SMALL`] (as FINUFFT's
//!   `spreadcheck`).

use crate::ier::*;
use farfield::nufft::params::{choose_kernel, Precision};
use farfield::nufft::NufftOpts;
use farfield::spread::{SpreadOpts, Spreader};
use farfield::threads::Threads;
use farfield::Real;
use num_complex::Complex;

/// σ of a spread/interpolate-only plan made with `upsampfac = 0` (automatic).
pub const DEFAULT_SIGMA: f64 = 2.0;

/// The spreader of a `spreadinterponly` plan (see the module docs).
pub struct Gridding<T: Real> {
    dim: usize,
    /// Grid points `N1·N2·N3`.
    total: usize,
    spreader: Spreader<T>,
    threads: Threads,
    /// The tolerance the kernel was chosen for (the requested one unless clamped).
    pub tol_used: f64,
    /// The kernel could not reach the requested tolerance at σ (FINUFFT's warning 1).
    pub clamped: bool,
}

impl<T: Real> Gridding<T> {
    /// The plan for the grid `modes` (`dim` counts, each ≥ 1), tolerance `tol` and the options
    /// `opts` (σ from `opts.upsampfac`, threads, subproblem size). Errors:
    /// [`FINUFFT_ERR_SPREAD_BOX_SMALL`] (a grid axis below twice the kernel width), farfield's
    /// spreader and thread errors mapped by [`ier_of`].
    pub fn new(dim: usize, modes: &[i64; 3], tol: f64, opts: &NufftOpts) -> Result<Self, Failure> {
        let sigma = opts.upsampfac.unwrap_or(DEFAULT_SIGMA);
        let o = NufftOpts { upsampfac: Some(sigma), ..opts.clone() };
        let n: [usize; 3] = std::array::from_fn(|d| modes[d] as usize);
        let (_, kernel, tol_used, warnings) = choose_kernel(tol, Precision::of::<T>(), dim, n, &o, None);
        let w = kernel.width();
        if let Some(d) = (0..dim).find(|&d| n[d] < 2 * w) {
            return Err(Failure::new(FINUFFT_ERR_SPREAD_BOX_SMALL, format!(
                "spreadinterponly: n_modes[{d}] = {} is below twice the kernel width {w} (tol {tol:e}, upsampfac {sigma})", n[d])));
        }
        let threads = Threads::new(opts.nthreads)?;
        let spreader = Spreader::new(dim, &n[..dim], &kernel, SpreadOpts { max_subprob_size: opts.spread_max_subprob_size, ..Default::default() })?;
        Ok(Gridding { dim, total: n.iter().product(), spreader, threads, tol_used, clamped: warnings != 0 })
    }

    /// Grid points per vector `N1·N2·N3`.
    pub fn grid_len(&self) -> usize {
        self.total
    }

    /// Sets the points (`x[d]` for the used axes, M each): copied, shifted by π so that the
    /// spreader's fold (`x/2π mod 1`) is FINUFFT's. Errors: farfield's ([`ier_of`]).
    pub fn setpts(&mut self, x: [&[T]; 3]) -> Result<(), Failure> {
        let mut shifted: [Vec<T>; 3] = Default::default();
        for d in 0..self.dim {
            let mut v = farfield::error::try_vec(x[d].len(), "spreadinterponly coordinates")?;
            v.extend(x[d].iter().map(|&c| T::of(c.to_f64v() + std::f64::consts::PI)));
            shifted[d] = v;
        }
        self.spreader.setpts([&shifted[0], &shifted[1], &shifted[2]], &self.threads)?;
        Ok(())
    }

    /// Spreads (`spread = true`: strengths `c` → grid `f`, overwritten) or interpolates (grid `f`
    /// → `c`, overwritten) each of the `c.len() / M` stacked vectors. Errors: farfield's
    /// ([`ier_of`]).
    pub fn execute(&self, c: &mut [Complex<T>], f: &mut [Complex<T>], spread: bool) -> Result<(), Failure> {
        let m = self.spreader.num_points();
        for (ct, ft) in c.chunks_exact_mut(m.max(1)).zip(f.chunks_exact_mut(self.total)) {
            if spread {
                self.spreader.try_spread(ct, ft, &self.threads)?;
            } else {
                self.spreader.try_interp(ft, ct, &self.threads)?;
            }
        }
        Ok(())
    }
}
