//! Spreading kernels.
//!
//! A kernel ψ is a compactly supported (or truncated) even bump of width `w` grid points. All
//! kernels share one offset convention, used by the spreader: for a point at grid coordinate
//! `x` (grid units), the first grid index it touches is `i0 = ceil(x − w/2)` and the kernel
//! values are `v[j] = ψ(i0 + j − x)` for `j = 0 … w−1`. The argument passed to
//! [`KernelEval::eval`] is `t = i0 − x ∈ [−w/2, −w/2 + 1)`.
//!
//! * [`es`]: exponential of semicircle (Barnett, Magland, af Klinteberg, SIAM J. Sci. Comput.
//!   41 (2019) C479, eq. 1.8), evaluated by piecewise Horner polynomials fitted at plan time;
//! * [`gaussian`]: truncated Gaussian with fast Gaussian gridding (Greengard–Lee, SIAM Rev. 46
//!   (2004) 443, §2; Boström's gridding report, Algorithm 3);
//! * [`bspline`]: cardinal B-splines with derivatives (smooth particle-mesh Ewald).
//!
//! [`Kernel`] is the one description of a kernel: the NUFFT parameter layer chooses it, the
//! CPU spreader builds its evaluator from it ([`crate::spread::Spreader::new`]), and the GPU
//! kernel descriptor and its table are made from it in one function
//! (`crate::gpu::types::ff_kernel`). Adding a kernel touches this module, the CPU
//! evaluator, that function and `kernels/spread.cu`.

pub mod bspline;
pub mod es;
pub mod gaussian;

use crate::real::Real;

/// Frequencies per parallel piece of [`Kernel::try_fourier_series_on`]: a multiple of
/// `es::FOURIER_RESTART`, so the pieces reproduce the serial series exactly.
pub(crate) const FOURIER_CHUNK: usize = 64 * es::FOURIER_RESTART;

/// The kernel family a NUFFT user chooses (C value in parentheses, `farfield_nufft_opts.kernel`);
/// the plan turns it into a [`Kernel`] for its tolerance and σ.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KernelKind {
    /// Exponential of semicircle (0, the default).
    Es,
    /// Gaussian with fast Gaussian gridding (1).
    Gaussian,
}

/// Per-point kernel evaluation used in the spreader's inner loops.
pub trait KernelEval<T: Real>: Sync + Send {
    /// Width `w` in grid points (2 ≤ w ≤ [`MAX_WIDTH`]).
    fn width(&self) -> usize;
    /// Writes `ψ(t + j)` for `j = 0 … w−1` into `out[..w]`, where `t ∈ [−w/2, −w/2 + 1)`
    /// (see the module docs). `out` has at least [`MAX_WIDTH`] entries; entries past `w`
    /// may be overwritten with unspecified values.
    fn eval(&self, t: T, out: &mut [T; MAX_WIDTH]);
    /// [`Self::eval`] with fused multiply-adds where the kernel has them (one rounding per
    /// step; results differ from `eval` by rounding only). Called only inside the spreader's
    /// FMA-enabled clones, where `mul_add` is one instruction.
    #[inline(always)]
    fn eval_fused(&self, t: T, out: &mut [T; MAX_WIDTH]) {
        self.eval(t, out)
    }
    /// [`Self::eval_fused`] at the `N` offsets `t`, into `out[i]`, as independent evaluations
    /// the CPU can overlap (a 1D point's kernel is the only work per point besides one row, so
    /// evaluated alone it is bound by the latency of its Horner chain). Same calling rule as
    /// `eval_fused`.
    #[inline(always)]
    fn eval_fused_n<const N: usize>(&self, t: [T; N], out: &mut [[T; MAX_WIDTH]; N]) {
        for (t, o) in t.into_iter().zip(out.iter_mut()) {
            self.eval_fused(t, o)
        }
    }
}

/// Largest kernel width supported (ES at tol 1e-15 needs 16; the Gaussian up to 32).
pub const MAX_WIDTH: usize = 32;

/// A spreading kernel: family and shape parameters (the one kernel description of the crate).
#[derive(Debug, Clone, PartialEq)]
pub enum Kernel {
    /// Exponential of semicircle.
    Es(es::EsParams),
    /// Truncated Gaussian.
    Gaussian(gaussian::GaussParams),
    /// Centred cardinal B-spline of order n = w (smooth PME, particle-in-cell).
    BSpline(bspline::BSplineParams),
}

impl Kernel {
    /// Chooses the kernel parameters for relative tolerance `tol` (already clamped to what the
    /// precision supports) and upsampling factor `sigma > 1`.
    pub fn for_tolerance(kind: KernelKind, tol: f64, sigma: f64) -> Kernel {
        match kind {
            KernelKind::Es => Kernel::Es(es::EsParams::for_tolerance(tol, sigma)),
            KernelKind::Gaussian => Kernel::Gaussian(gaussian::GaussParams::for_tolerance(tol, sigma)),
        }
    }

    /// [`Kernel::for_tolerance`] for a NUFFT in dimension `dim` (1–3): the ES width meets the
    /// estimate of [`es::EsParams::error_estimate_dim`], which grows with the dimension; the
    /// Gaussian's rule does not depend on it.
    pub fn for_tolerance_dim(kind: KernelKind, tol: f64, sigma: f64, dim: usize) -> Kernel {
        match kind {
            KernelKind::Es => Kernel::Es(es::EsParams::for_tolerance_dim(tol, sigma, dim)),
            KernelKind::Gaussian => Kernel::Gaussian(gaussian::GaussParams::for_tolerance(tol, sigma)),
        }
    }

    /// Width `w` in grid points.
    pub fn width(&self) -> usize {
        match self {
            Kernel::Es(p) => p.w,
            Kernel::Gaussian(p) => p.w,
            Kernel::BSpline(p) => p.order,
        }
    }

    /// The family (`None` for B-splines, which are not a NUFFT choice).
    pub fn family(&self) -> Option<KernelKind> {
        match self {
            Kernel::Es(_) => Some(KernelKind::Es),
            Kernel::Gaussian(_) => Some(KernelKind::Gaussian),
            Kernel::BSpline(_) => None,
        }
    }

    /// The shape parameter: β for ES, τ (grid units²) for the Gaussian, the order for B-splines.
    pub fn shape_param(&self) -> f64 {
        match self {
            Kernel::Es(p) => p.beta,
            Kernel::Gaussian(p) => p.tau,
            Kernel::BSpline(p) => p.order as f64,
        }
    }

    /// The exact kernel value ψ(z) at `z` grid units from its centre (0 for `|z| ≥ w/2`).
    pub fn value(&self, z: f64) -> f64 {
        match self {
            Kernel::Es(p) => p.value(z),
            Kernel::Gaussian(p) => p.value(z),
            Kernel::BSpline(p) => p.value(z),
        }
    }

    /// Fourier transform `ψ̂(k) = ∫ ψ(x) e^{2πikx/nf} dx` (x in grid units) for the integer
    /// frequencies `k = 0 … kmax` of a periodic grid of `nf` points. ψ is even, so
    /// `ψ̂(−k) = ψ̂(k)`. Used for deconvolution (NUFFT step 3 / type-2 pre-correction).
    /// Panics if the `kmax + 1` values cannot be allocated (use
    /// [`Kernel::try_fourier_series`] for user-sized `kmax`).
    pub fn fourier_series(&self, nf: usize, kmax: usize) -> Vec<f64> {
        self.try_fourier_series(nf, kmax).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Kernel::fourier_series`] with the output allocated fallibly ([`crate::Error::Alloc`]).
    /// Cost O(kmax·w).
    pub fn try_fourier_series(&self, nf: usize, kmax: usize) -> crate::Result<Vec<f64>> {
        let mut out = crate::error::try_zeroed_vec(kmax.saturating_add(1), "kernel Fourier series")?;
        self.fourier_series_range(nf, 0, &mut out);
        Ok(out)
    }

    /// [`Kernel::try_fourier_series`] computed in pieces of 8192 frequencies on
    /// the plan's `threads`, with the same values bit for bit.
    /// Errors: [`crate::Error::Alloc`].
    pub fn try_fourier_series_on(&self, nf: usize, kmax: usize, threads: &crate::threads::Threads) -> crate::Result<Vec<f64>> {
        let mut out = crate::error::try_zeroed_vec(kmax.saturating_add(1), "kernel Fourier series")?;
        threads.chunks(&mut out, FOURIER_CHUNK, |c, piece| self.fourier_series_range(nf, c * FOURIER_CHUNK, piece));
        Ok(out)
    }

    /// `ψ̂(k)` for `k = k0 … k0 + out.len() − 1` into `out` (see [`Kernel::fourier_series`]).
    pub fn fourier_series_range(&self, nf: usize, k0: usize, out: &mut [f64]) {
        match self {
            Kernel::Es(p) => p.fourier_series_range(nf, k0, out),
            Kernel::Gaussian(p) => out.iter_mut().enumerate().for_each(|(j, o)| *o = p.fourier_coeff(nf, k0 + j)),
            Kernel::BSpline(p) => out.iter_mut().enumerate().for_each(|(j, o)| *o = p.fourier_coeff(nf, k0 + j)),
        }
    }

    /// The smallest relative error the kernel `kind` can reach at upsampling factor `sigma`
    /// with its widest kernel in one dimension: [`Kernel::achievable_tol_dim`] with `dim = 1`.
    /// A requested tolerance below this is clamped to it (NUFFT: `FARFIELD_WARN_TOL_CLAMPED`,
    /// `tol_used`).
    pub fn achievable_tol(kind: KernelKind, sigma: f64) -> f64 {
        Self::achievable_tol_dim(kind, sigma, 1)
    }

    /// The smallest relative error of a NUFFT in dimension `dim` with the widest kernel of
    /// `kind` at factor `sigma`, from the estimate the width rule inverts:
    /// ES: [`es::EsParams::error_estimate_dim`] at `w =` [`es::MAX_ES_WIDTH`] (16), from the
    /// fitted table (σ ≥ 1.2; about 1e-8 at σ = 1.2, 2e-12 at σ = 1.5 and the model's
    /// rounding floor 1e-14 from σ ≈ 2, times the dimension's safety factor);
    /// Gaussian (Greengard–Lee 2004): `ε ≈ exp(−π M_sp (1 − 1/(2σ − 1)))` at `M_sp = 16`
    /// (w = 32): 5e-8 at σ = 1.25, 1.2e-11 at σ = 1.5, 3e-15 at σ = 2, for every `dim`.
    /// Measured errors against direct sums stay below this value (`nufft::tests`).
    pub fn achievable_tol_dim(kind: KernelKind, sigma: f64, dim: usize) -> f64 {
        match kind {
            KernelKind::Es => es::EsParams::error_estimate_dim(es::MAX_ES_WIDTH, sigma, dim),
            KernelKind::Gaussian => gaussian::GaussParams::error_estimate(MAX_WIDTH / 2, sigma),
        }
    }
}
