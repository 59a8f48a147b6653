//! NUFFT type 3 (non-uniform → non-uniform): `f_k = Σ_{j<M} c_j e^{± i s_k·x_j}` for `N`
//! arbitrary real target frequencies `s_k` and `M` arbitrary real points `x_j`, in 1, 2 or 3
//! dimensions (Barnett, Magland, af Klinteberg, SIAM J. Sci. Comput. 41 (2019) C479, §3, the
//! "type 3" algorithm of Lee & Greengard 2005 with the ES kernel; set-up as FINUFFT 2.x).
//!
//! Per axis `d`, with `x ∈ [C − X, C + X]` and `s ∈ [D − S, D + S]` (centres and half-widths,
//! [`Extent`]; as FINUFFT a centre smaller than a tenth of the half-width is set to 0):
//!
//! 1. fine grid ([`Type3Grid`]): `nf = max(2w, next 2,3,5-smooth even ≥ 2σXS/π + w + 1)`,
//!    spacing `h = 2π/nf` (radians), scale `γ = nf/(2σS)`; the rescaled points
//!    `x'_j = (x_j − C)/γ` then lie within `|x'/h| ≤ nf/2 − (w + 1)/2` grid units, and the
//!    rescaled frequencies `s'_k = hγ(s_k − D)` in `[−π/σ, π/σ]`;
//! 2. pre-phase: `c'_j = c_j e^{± i D·x_j}` (skipped when `D = 0`);
//! 3. spread: `b_l = Σ_j c'_j ψ(l − x'_j/h)` on the `nf` grid ([`crate::spread::Spreader`],
//!    grid index `i` ↔ `l = i` for `i < nf/2`, `l = i − nf` otherwise, no wrap-around by (1));
//! 4. inner type 2 ([`NufftPlan`], `nf` "modes" per axis in FFT order, the plan's tolerance):
//!    `g_k = Σ_l b_l e^{± i l·s'_k}`, which is the trapezoidal rule for
//!    `∫ b(t) e^{± i s'_k t} dt = ψ̂(s'_k) Σ_j c'_j e^{± i s'_k x'_j/h}`, exact up to aliases at
//!    `|ω| ≥ 2π − π/σ`, where ψ̂ is as small as in types 1 and 2;
//! 5. deconvolution and post-phase: `f_k = g_k e^{± i (s_k − D)·C} / Π_d ψ̂(s'_{dk})`, with
//!    `ψ̂(ω) = ∫ ψ(t) e^{iωt} dt` (t in grid units) by Gauss–Legendre quadrature, interpolated
//!    on the band `|ω| ≤ π/σ` ([`KernelFt`]).
//!    Since `s'x'/h = (s − D)(x − C)`, this is the sum asked for.
//!
//! The host-side set-up — [`Type3Params`] (σ, tolerance, kernel, ψ̂) and [`Type3Geometry`]
//! (extents, grids, rescaled points and frequencies, phase and deconvolution factors) — is
//! shared by the CPU executor [`Type3Plan`] and the GPU one (`gpu::type3`, steps 2–5 on the
//! device), so both compute the same approximation (docs/design.md §9.4).
//!
//! Layout: `c[t*M + j]`, `f[t*N + k]` for `t < ntrans`; coordinate arrays separate (x, y, z
//! and s, t, u). Points and frequencies are any finite reals (not periodic); what limits them is
//! the space-bandwidth product `X_d·S_d` per axis, which sets the fine grid: `nf_d` above
//! [`MAX_FINE_AXIS`]`/σ` (the inner type 2 upsamples it again) or `Π nf_d` above
//! [`MAX_GRID_ELEMENTS`] → [`Error::Modes`]; extents that overflow → [`Error::Range`].
//! Memory: the fine grid (`2·sizeof(T)·Π nf_d` bytes) plus the inner type 2's grid
//! (`σ^d` times as many), the rescaled copies of the points and frequencies, and
//! `2·sizeof(T)·(M + N)` bytes of phase factors.

use super::cpu::CpuNufft;
use super::exec::{NufftExec, Points as ExecPoints, Timings};
use super::options::{BackendChoice, ModeOrder, NufftInfo, NufftOpts, FARFIELD_WARN_TOL_CLAMPED};
use super::params::{check_opts, coord_extent, es_width_for, grid_sigmas, rounding_floor, Backend, NufftParams, Precision, MAX_FINE_AXIS,
                    MAX_GRID_ELEMENTS, MAX_POINTS};
use crate::error::{try_vec, Error, Result};
use crate::fft::{next_smooth_even, AlignedVec};
use crate::kernel::es::{EsParams, MAX_ES_WIDTH};
use crate::kernel::{Kernel, KernelKind};
use crate::real::Real;
use crate::spread::{SpreadOpts, Spreader};
use crate::threads::Threads;
use num_complex::Complex;
use std::time::Instant;

/// Wall-clock seconds of the stages of the last type-3 `setpts`/`execute` (summed over
/// `ntrans`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Type3Timings {
    /// `setpts`: extents, rescaling, bin sort, the inner type 2's plan and points, phase and
    /// deconvolution factors.
    pub setpts_s: f64,
    /// Pre-phase multiply `c_j e^{± i D·x_j}`.
    pub prephase_s: f64,
    /// Spreading onto the fine grid (including zeroing it).
    pub spread_s: f64,
    /// The inner type 2 (its deconvolution, FFT and interpolation; see [`Type3Plan::inner_timings`]).
    pub inner_s: f64,
    /// Deconvolution and post-phase multiply of the outputs.
    pub deconv_s: f64,
}

/// Centre and half-width of a set of coordinates along one axis (FINUFFT's `arraywidcen`):
/// all values lie in `[centre − half, centre + half]`; a centre with
/// `|centre| < 0.1·half` is replaced by 0 (and `half` grown by `|centre|`), so that nearly
/// centred data need no phase factors.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Extent {
    /// Centre (C for points, D for frequencies).
    pub centre: f64,
    /// Half-width (X for points, S for frequencies), ≥ 0.
    pub half: f64,
}

impl Extent {
    /// The extent of `v` (`{0, 0}` when empty); halves are taken before the difference, so it
    /// is finite for all finite values. O(len).
    pub fn of<T: Real>(v: &[T]) -> Extent {
        if v.is_empty() {
            return Extent { centre: 0.0, half: 0.0 };
        }
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for &a in v {
            let a = a.to_f64v();
            lo = lo.min(a);
            hi = hi.max(a);
        }
        Extent::from_bounds(lo, hi)
    }

    /// The extent of values whose minimum is `lo` and maximum `hi` (finite, `lo ≤ hi`), as
    /// [`Extent::of`] computes it from them (the GPU's set-up reduces the bounds on the device).
    pub fn from_bounds(lo: f64, hi: f64) -> Extent {
        let half = 0.5 * hi - 0.5 * lo;
        let centre = 0.5 * hi + 0.5 * lo;
        if centre.abs() < 0.1 * half {
            Extent { centre: 0.0, half: half + centre.abs() }
        } else {
            Extent { centre, half }
        }
    }
}

/// The fine grid of one axis of a type-3 plan (FINUFFT's `set_nhg_type3`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Type3Grid {
    /// Fine grid size (even, 2,3,5-smooth, ≥ 2w).
    pub nf: usize,
    /// Grid spacing `2π/nf` (radians).
    pub h: f64,
    /// Point scale γ: `x' = (x − C)/γ`.
    pub gamma: f64,
}

impl Type3Grid {
    /// The grid for point half-width `x_half`, frequency half-width `s_half`, upsampling
    /// factor `sigma` and kernel width `w`. A zero half-width is replaced so that `X·S ≥ 1`
    /// (both 1 if both are 0). `nf = max(2w, next smooth even ≥ 2σXS/π + w + 1)`,
    /// `h = 2π/nf`, `γ = nf/(2σS)`.
    ///
    /// Errors: [`Error::Range`] when `X·S` overflows, [`Error::Modes`] when `nf` exceeds
    /// `max_axis` (both naming the axis, X, S and the limit). O(log² nf).
    pub fn new(axis: usize, x_half: f64, s_half: f64, sigma: f64, w: usize, max_axis: usize) -> Result<Type3Grid> {
        let (mut xs, mut ss) = (x_half, s_half);
        if xs == 0.0 {
            if ss == 0.0 {
                xs = 1.0;
                ss = 1.0;
            } else {
                xs = xs.max(1.0 / ss);
            }
        } else {
            ss = ss.max(1.0 / xs);
        }
        let want = 2.0 * sigma * xs * ss / std::f64::consts::PI + (w + 1) as f64;
        if !want.is_finite() {
            return Err(Error::Range(format!(
                "type 3 axis {axis}: the space-bandwidth product X·S = {x_half:e}·{s_half:e} (point half-width times \
                 frequency half-width) overflows; at most {max_axis} fine grid points per axis are possible")));
        }
        let size = if want <= max_axis as f64 { next_smooth_even((want as usize).max(2 * w)) } else { usize::MAX };
        if size > max_axis {
            return Err(Error::Modes(format!(
                "type 3 axis {axis}: the space-bandwidth product X·S = {x_half:e}·{s_half:e} (point half-width times \
                 frequency half-width) needs a fine grid of 2σXS/π + w + 1 = {want:e} points at σ = {sigma}, above the \
                 limit of {max_axis} per axis (the inner type 2 upsamples it again within FFTW's int range)")));
        }
        Ok(Type3Grid { nf: size, h: 2.0 * std::f64::consts::PI / size as f64, gamma: size as f64 / (2.0 * sigma * ss) })
    }
}

/// The kernel's Fourier transform at real frequencies, `ψ̂(ω) = ∫ ψ(t) e^{iωt} dt =
/// 2∫_0^{w/2} ψ(t) cos(ωt) dt` (t in grid units, ψ even), by Gauss–Legendre quadrature with
/// `q = 2w + 16` nodes on `[0, w/2]` (`crate::quad::gauss_legendre`, the rule [`crate::kernel::es::EsParams::fourier_series`]
/// uses at integer frequencies). Works for any kernel through [`Kernel::value`]; for the
/// truncated Gaussian it gives the transform of the truncated kernel that is spread.
///
/// Made by [`KernelFt::for_band`], it also holds a Chebyshev interpolant of `ln ψ̂(√u)` in
/// `u = ω²` on the band `|ω| ≤ 1.01·ω_max` that a type 3 evaluates (`ω_max = π/σ`), fitted
/// to the quadrature at plan time and checked against it (relative difference ≤ 1e-14 plus the
/// quadrature's own rounding bound); [`KernelFt::eval`] then costs one Clenshaw sum of 16–64
/// terms and one `exp` instead of `q` cosines (the cosines were 55–60 % of a 1D type-3
/// `setpts`). Frequencies outside the band, and kernels whose ψ̂ does not pass the check
/// (ψ̂ ≤ 0 in the band, or no degree ≤ 64 converges), use the quadrature.
#[derive(Clone)]
pub struct KernelFt {
    /// Nodes `t_i ∈ (0, w/2)`.
    t: Vec<f64>,
    /// `2·weight_i·ψ(t_i)`.
    a: Vec<f64>,
    /// The interpolant on the band, when fitted.
    band: Option<LogFtCheb>,
}

/// Chebyshev series of `ln ψ̂(√u)` for `u ∈ [0, u_max]`: `Σ_k c_k T_k(2u/u_max − 1)`.
#[derive(Clone)]
struct LogFtCheb {
    u_max: f64,
    c: Vec<f64>,
}

impl LogFtCheb {
    /// The series at `u ∈ [0, u_max]` (Clenshaw). O(len c).
    #[inline]
    fn eval(&self, u: f64) -> f64 {
        let x = 2.0 * u / self.u_max - 1.0;
        let (mut b1, mut b2) = (0.0, 0.0);
        for &ck in self.c[1..].iter().rev() {
            let b0 = ck + 2.0 * x * b1 - b2;
            b2 = b1;
            b1 = b0;
        }
        self.c[0] + x * b1 - b2
    }
}

/// The interpolated band reaches this factor beyond the `ω_max` asked for, so that rescaled
/// frequencies rounded just past `π/σ` still use the interpolant.
const BAND_MARGIN: f64 = 1.01;

impl KernelFt {
    /// Tabulates the quadrature for `kernel` (no interpolant: every [`KernelFt::eval`] sums
    /// the quadrature).
    pub fn new(kernel: &Kernel) -> KernelFt {
        let w = kernel.width();
        let (t, wq) = crate::quad::gauss_legendre(2 * w + 16, 0.0, 0.5 * w as f64);
        let a = t.iter().zip(&wq).map(|(&ti, &wi)| 2.0 * wi * kernel.value(ti)).collect();
        KernelFt { t, a, band: None }
    }

    /// The quadrature for `kernel` and, when it passes its check, the interpolant of
    /// `ln ψ̂` on `|ω| ≤ 1.01·omega_max` (radians per grid spacing; a type 3 passes `π/σ`).
    /// Degrees 16, 24, 32, 48, 64 are tried in turn, each checked at `4n + 1` points between
    /// its nodes; none passing (or `omega_max` not finite and positive) leaves the quadrature
    /// alone. O(n²) set-up, about 0.1 ms.
    pub fn for_band(kernel: &Kernel, omega_max: f64) -> KernelFt {
        let mut ft = KernelFt::new(kernel);
        if omega_max.is_finite() && omega_max > 0.0 {
            ft.band = ft.fit_band(omega_max * BAND_MARGIN);
        }
        ft
    }

    /// Whether [`KernelFt::eval`] uses an interpolant on a band (false: quadrature only).
    pub fn has_band(&self) -> bool {
        self.band.is_some()
    }

    fn fit_band(&self, om_max: f64) -> Option<LogFtCheb> {
        use std::f64::consts::PI;
        let u_max = om_max * om_max;
        // rounding bound of the quadrature sum: its terms are at most Σ|a_i| in size
        let floor = 8.0 * f64::EPSILON * self.a.iter().map(|a| a.abs()).sum::<f64>();
        for n in [16usize, 24, 32, 48, 64] {
            let mut g = Vec::with_capacity(n);
            for j in 0..n {
                let u = 0.5 * u_max * (1.0 + crate::quad::chebyshev_node(j, n));
                let v = self.eval_quadrature(u.sqrt());
                if !(v > 0.0 && v.is_finite()) {
                    return None;
                }
                g.push(v.ln());
            }
            let cheb = LogFtCheb { u_max, c: crate::quad::chebyshev_coeffs(&g) };
            let ok = (0..=4 * n).all(|i| {
                let u = 0.5 * u_max * (1.0 + (PI * i as f64 / (4 * n) as f64).cos());
                let q = self.eval_quadrature(u.sqrt());
                (cheb.eval(u).exp() - q).abs() <= 1e-14 * q.abs() + floor
            });
            if ok {
                return Some(cheb);
            }
        }
        None
    }

    /// `ψ̂(ω)`, ω in radians per grid spacing: the interpolant inside the band of
    /// [`KernelFt::for_band`] (O(n) and one `exp`), the quadrature elsewhere (O(w) cosines).
    #[inline]
    pub fn eval(&self, omega: f64) -> f64 {
        match self.ln_in_band(omega) {
            Some(l) => l.exp(),
            None => self.eval_quadrature(omega),
        }
    }

    /// `ln ψ̂(ω)` from the interpolant when ω lies in its band (O(n), no `exp`); `None`
    /// outside the band or without one.
    #[inline]
    pub fn ln_in_band(&self, omega: f64) -> Option<f64> {
        match &self.band {
            Some(b) if omega * omega <= b.u_max => Some(b.eval(omega * omega)),
            _ => None,
        }
    }

    /// `ψ̂(ω)` by the quadrature (`q = 2w + 16` cosines), whatever the band. O(w).
    #[inline]
    pub fn eval_quadrature(&self, omega: f64) -> f64 {
        self.t.iter().zip(&self.a).map(|(&t, &a)| a * (omega * t).cos()).sum()
    }

    /// What [`KernelFt::ln_in_band`] and [`KernelFt::eval_quadrature`] evaluate, for a device
    /// copy (the GPU's type-3 set-up): the band's `u_max` and the Chebyshev coefficients `c_k`
    /// of `ln ψ̂(√u) = Σ_k c_k T_k(2u/u_max − 1)` (`None`: no band), and the quadrature's nodes
    /// `t_i` and weights `a_i` (`ψ̂(ω) = Σ_i a_i cos(ω t_i)`).
    pub fn tables(&self) -> (Option<(f64, &[f64])>, &[f64], &[f64]) {
        (self.band.as_ref().map(|b| (b.u_max, &b.c[..])), &self.t, &self.a)
    }
}

/// The plan-level choices of a type-3 NUFFT (validated arguments, σ, the tolerance used and its
/// warnings, the kernel and its Fourier transform), shared by the CPU executor
/// ([`Type3Plan`]) and the GPU one (`gpu::type3`), so that both compute the same
/// approximation for the same arguments.
#[derive(Clone)]
pub struct Type3Params {
    /// Dimension (1–3).
    pub dim: usize,
    /// Sign of the exponent (`≥ 0` → `+i`).
    pub iflag: i32,
    /// Vectors per execute (≥ 1).
    pub ntrans: usize,
    /// Upsampling factor σ of the type-3 fine grid.
    pub sigma: f64,
    /// Tolerance used (after clamping).
    pub tol_used: f64,
    /// `FARFIELD_WARN_*` bits.
    pub warnings: i32,
    /// The spreading kernel.
    pub kernel: Kernel,
    /// Its Fourier transform ψ̂ (with the interpolant on `|ω| ≤ π/σ`).
    pub kft: KernelFt,
    /// The options the plan was made with.
    pub opts: NufftOpts,
}

impl Type3Params {
    /// Validates the arguments of a type-3 plan in precision `T` and chooses σ (`upsampfac`, 2
    /// when automatic), the tolerance used (clamped to what `T` and the kernel at σ reach, with
    /// [`FARFIELD_WARN_TOL_CLAMPED`]) and the kernel. `opts.backend` is not read (the caller,
    /// `crate::plans::NufftPlan::new`, resolves it). Errors: [`Error::Dim`], [`Error::InvalidArg`]
    /// (ntrans, options), [`Error::Tol`].
    pub fn new<T: Real>(dim: usize, iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<Self> {
        if !(1..=3).contains(&dim) {
            return Err(Error::Dim(format!("dim = {dim} is not 1, 2 or 3")));
        }
        if ntrans == 0 {
            return Err(Error::InvalidArg("ntrans must be at least 1".into()));
        }
        if !tol.is_finite() || tol <= 0.0 {
            return Err(Error::Tol(format!("tol = {tol:e} must be finite and positive")));
        }
        check_opts(opts)?;
        let kind = opts.kernel;
        let mut warnings = 0;
        let mut tol_used = tol;
        if tol < T::MIN_TOL {
            tol_used = T::MIN_TOL;
            warnings |= FARFIELD_WARN_TOL_CLAMPED;
        }
        let sigma = opts.upsampfac.unwrap_or(2.0);
        // ES: the width of the types 1 and 2 rule with the rounding floor's amplification part
        // (the coordinate part needs the grid, which comes with the points: accuracy_at)
        let (reachable, kernel) = if kind == KernelKind::Es {
            let (w, predicted) = es_width_for(tol_used, sigma, dim, None, Precision::of::<T>())
                .unwrap_or((MAX_ES_WIDTH, EsParams::error_estimate_dim(MAX_ES_WIDTH, sigma, dim)));
            (predicted, Some(Kernel::Es(EsParams::with_shape(w, sigma, tol_used.max(predicted)))))
        } else {
            (Kernel::achievable_tol_dim(kind, sigma, dim), None)
        };
        if tol_used < reachable {
            tol_used = reachable;
            warnings |= FARFIELD_WARN_TOL_CLAMPED;
        }
        let kernel = kernel.unwrap_or_else(|| Kernel::for_tolerance_dim(kind, tol_used, sigma, dim));
        // the rescaled frequencies of every type 3 lie in [−π/σ, π/σ] (module docs, step 1)
        let kft = KernelFt::for_band(&kernel, std::f64::consts::PI / sigma);
        Ok(Type3Params { dim, iflag, ntrans, sigma, tol_used, warnings, kernel, kft, opts: opts.clone() })
    }

    /// Checks the points `xs` (M per axis ≤ dim) and frequencies `ss` (N per axis) and sizes
    /// the fine grid from their extents (module docs, steps 1). Allocates nothing.
    /// Errors: [`Error::NPoints`] (length mismatch, M or N above [`MAX_POINTS`], `ntrans·M`
    /// or `ntrans·N` above 2⁴⁰), [`Error::NonFinite`] (first bad value, named),
    /// [`Error::Range`], [`Error::Modes`].
    pub fn geometry<T: Real>(&self, xs: [&[T]; 3], ss: [&[T]; 3], threads: &Threads) -> Result<Type3Geometry> {
        let dim = self.dim;
        let xs: [&[T]; 3] = [xs[0], if dim > 1 { xs[1] } else { &[] }, if dim > 2 { xs[2] } else { &[] }];
        let ss: [&[T]; 3] = [ss[0], if dim > 1 { ss[1] } else { &[] }, if dim > 2 { ss[2] } else { &[] }];
        let (m, n) = (xs[0].len(), ss[0].len());
        self.check_sizes(&xs, &ss)?;
        for (arrs, names, what) in [(&xs, ["x", "y", "z"], "point"), (&ss, ["s", "t", "u"], "target frequency")] {
            for d in 0..dim {
                if let Some(i) = threads.find_first(arrs[d].len(), |i| !arrs[d][i].is_finite()) {
                    return Err(non_finite(names[d], d, what, i, arrs[d][i]));
                }
            }
        }
        let mut ext_x = [Extent { centre: 0.0, half: 0.0 }; 3];
        let mut ext_s = ext_x;
        for d in 0..dim {
            ext_x[d] = Extent::of(xs[d]);
            ext_s[d] = Extent::of(ss[d]);
        }
        self.geometry_of(m, n, ext_x, ext_s)
    }

    /// [`Type3Params::geometry`] from the counts `m`, `n` (already checked by the caller,
    /// [`Type3Params::check_counts`]) and the extents of finite points and frequencies per axis
    /// (axes ≥ dim ignored), as the GPU's device-side set-up finds them. Errors:
    /// [`Error::Range`], [`Error::Modes`].
    pub fn geometry_of(&self, m: usize, n: usize, ext_x: [Extent; 3], ext_s: [Extent; 3]) -> Result<Type3Geometry> {
        let dim = self.dim;
        let w = self.kernel.width();
        let zero = Extent { centre: 0.0, half: 0.0 };
        let (mut ex, mut es) = ([zero; 3], [zero; 3]);
        ex[..dim].copy_from_slice(&ext_x[..dim]);
        es[..dim].copy_from_slice(&ext_s[..dim]);
        let (ext_x, ext_s) = (ex, es);
        let mut grids = [Type3Grid { nf: 1, h: 0.0, gamma: 1.0 }; 3];
        // the inner type 2 upsamples the grid by its own σ ≤ 4 (at most 2.5 when automatic)
        let inner_sigma = self.opts.upsampfac.unwrap_or(super::params::AUTO_SIGMA_MAX);
        let max_axis = (MAX_FINE_AXIS as f64 / inner_sigma) as usize;
        for d in 0..dim {
            grids[d] = Type3Grid::new(d, ext_x[d].half, ext_s[d].half, self.sigma, w, max_axis)?;
        }
        let nf = [grids[0].nf, grids[1].nf, grids[2].nf];
        let total = nf[..dim].iter().try_fold(1usize, |a, &b| a.checked_mul(b)).filter(|&t| t <= MAX_GRID_ELEMENTS);
        let Some(_) = total else {
            return Err(Error::Modes(format!(
                "type 3: the fine grid {} needed by the space-bandwidth products exceeds the limit 2^40 = {MAX_GRID_ELEMENTS} points",
                nf[..dim].iter().map(|v| v.to_string()).collect::<Vec<_>>().join("×"))));
        };
        Ok(Type3Geometry { dim, iflag: self.iflag, m, n, ext_x, ext_s, grids })
    }

    /// The tolerance used and the warnings once the points are set: the larger of the makeplan
    /// choice ([`Type3Params::tol_used`]), the inner type 2's, and the sum of the rounding
    /// floors ([`rounding_floor`]) of the type-3 grid (its coordinates are held in precision `T`
    /// on every axis) and of the inner type 2; [`FARFIELD_WARN_TOL_CLAMPED`] when that exceeds
    /// the makeplan choice. Single-precision type-3 errors measured at most 0.93 times this
    /// where it clamps (docs/design.md §9.5).
    pub fn accuracy_at<T: Real>(&self, geo: &Type3Geometry, inner: &NufftParams) -> (f64, i32) {
        let (prec, dim) = (Precision::of::<T>(), self.dim);
        let extent = geo.nf()[..dim].iter().map(|&v| (v as f64).powi(2)).sum::<f64>().sqrt();
        // the rescaled frequencies fill the band of σ whatever the grid's size (module docs)
        let floors = rounding_floor(prec, &self.kernel, &vec![self.sigma; dim], extent)
            + rounding_floor(prec, &inner.kernel, &grid_sigmas(dim, &inner.n, &inner.nf), coord_extent(dim, &inner.nf));
        let used = self.tol_used.max(inner.tol_used).max(floors);
        let clamped = if used > self.tol_used { FARFIELD_WARN_TOL_CLAMPED } else { 0 };
        (used, self.warnings | inner.warnings | clamped)
    }

    /// [`Type3Params::check_counts`], then equal lengths on every axis ≤ dim of the points
    /// `xs` and of the frequencies `ss`. Error: [`Error::NPoints`].
    pub fn check_sizes<T>(&self, xs: &[&[T]; 3], ss: &[&[T]; 3]) -> Result<()> {
        let (m, n) = (xs[0].len(), ss[0].len());
        self.check_counts(m, n)?;
        for d in 1..self.dim {
            if xs[d].len() != m {
                return Err(Error::NPoints(format!("{} has {} coordinates, x has M = {m}", ["x", "y", "z"][d], xs[d].len())));
            }
            if ss[d].len() != n {
                return Err(Error::NPoints(format!("{} has {} frequencies, s has N = {n}", ["s", "t", "u"][d], ss[d].len())));
            }
        }
        Ok(())
    }

    /// M and N within [`MAX_POINTS`], `ntrans·M` and `ntrans·N` within 2⁴⁰. Error: [`Error::NPoints`].
    pub fn check_counts(&self, m: usize, n: usize) -> Result<()> {
        for (len, name, max, what) in [(m, "M", MAX_POINTS, "points"), (n, "N", MAX_POINTS, "target frequencies")] {
            if len > max {
                return Err(Error::NPoints(format!("{name} = {len} {what} exceed the supported maximum of {max} (2^32 − 1)")));
            }
            if len.checked_mul(self.ntrans).is_none_or(|t| t > MAX_GRID_ELEMENTS) {
                return Err(Error::NPoints(format!(
                    "ntrans·{name} = {}·{len} exceeds the limit 2^40 = {MAX_GRID_ELEMENTS} values per execute", self.ntrans)));
            }
        }
        Ok(())
    }

    /// The parameters and options of the inner type 2 on the fine grid of `geo` (`nf` "modes"
    /// per axis in FFT order, one vector, the tolerance used) for `backend`.
    /// Errors: [`Error::Modes`] (the upsampled grid too large, with type-3 context), those of
    /// [`NufftParams::new`].
    pub fn inner_params<T: Real>(&self, geo: &Type3Geometry, backend: Backend) -> Result<(NufftParams, NufftOpts)> {
        let inner_opts = NufftOpts {
            modeord: ModeOrder::Fft,
            backend: match backend {
                Backend::Cpu => BackendChoice::Cpu,
                Backend::Cuda => BackendChoice::Cuda,
            },
            points_by_reference: false,
            debug: self.opts.debug.saturating_sub(1),
            ..self.opts.clone()
        };
        let nmodes: Vec<i64> = geo.nf()[..self.dim].iter().map(|&v| v as i64).collect();
        // the inner type 2 interpolates at the N target frequencies: σ and w for N points
        let params = NufftParams::new(2, self.dim, &nmodes, self.iflag, 1, self.tol_used, Precision::of::<T>(), &inner_opts,
                                      backend).and_then(|p| p.with_points(geo.n, &inner_opts)).map_err(|e| match e {
            Error::Modes(msg) => Error::Modes(format!("type 3: the inner type 2 on the {} fine grid: {msg}",
                                                      nmodes.iter().map(|v| v.to_string()).collect::<Vec<_>>().join("×"))),
            e => e,
        })?;
        Ok((params, inner_opts))
    }
}

/// The geometry of one type-3 `setpts` (module docs, step 1): point and frequency extents and
/// the fine grid per axis, and the host-side factor arrays derived from them; computed once by
/// [`Type3Params::geometry`] for the CPU and GPU executors alike.
#[derive(Debug, Clone, Copy)]
pub struct Type3Geometry {
    /// Dimension.
    pub dim: usize,
    /// Sign of the exponent.
    pub iflag: i32,
    /// Number of points M.
    pub m: usize,
    /// Number of target frequencies N.
    pub n: usize,
    /// Point extents (C, X) per axis (zeros beyond dim).
    pub ext_x: [Extent; 3],
    /// Frequency extents (D, S) per axis.
    pub ext_s: [Extent; 3],
    /// Fine grid per axis (`nf = 1` beyond dim).
    pub grids: [Type3Grid; 3],
}

impl Type3Geometry {
    /// Fine grid sizes `[nf1, nf2, nf3]` (1 beyond dim).
    pub fn nf(&self) -> [usize; 3] {
        [self.grids[0].nf, self.grids[1].nf, self.grids[2].nf]
    }

    /// Fine grid points `Π nf_d` (at most 2⁴⁰: checked by [`Type3Params::geometry`]).
    pub fn total(&self) -> usize {
        self.nf().iter().product()
    }

    /// The sign of the exponent, ±1.
    pub fn sign(&self) -> f64 {
        if self.iflag >= 0 { 1.0 } else { -1.0 }
    }

    /// Whether the strengths take a pre-phase `e^{± i D·x_j}`: the frequencies' centre `D` is
    /// not 0 on every axis.
    pub fn has_prephase(&self) -> bool {
        self.ext_s[..self.dim].iter().any(|e| e.centre != 0.0)
    }

    /// The rescaled points `x'_d = (x_d − C_d)/γ_d` (radians on the fine grid's 2π period),
    /// axes ≥ dim empty. Errors: [`Error::Alloc`].
    pub fn rescaled_points<T: Real>(&self, xs: [&[T]; 3]) -> Result<[Vec<T>; 3]> {
        let mut xr: [Vec<T>; 3] = Default::default();
        for d in 0..self.dim {
            xr[d] = rescale(xs[d], self.ext_x[d].centre, 1.0 / self.grids[d].gamma, "NUFFT type 3 rescaled points")?;
        }
        Ok(xr)
    }

    /// The rescaled frequencies `s'_d = h_d γ_d (s_d − D_d)` (the inner type 2's points),
    /// axes ≥ dim empty. Errors: [`Error::Alloc`].
    pub fn rescaled_freqs<T: Real>(&self, ss: [&[T]; 3]) -> Result<[Vec<T>; 3]> {
        let mut sr: [Vec<T>; 3] = Default::default();
        for d in 0..self.dim {
            let g = self.grids[d];
            sr[d] = rescale(ss[d], self.ext_s[d].centre, g.h * g.gamma, "NUFFT type 3 rescaled frequencies")?;
        }
        Ok(sr)
    }

    /// The pre-phase factors `e^{± i D·x_j}` (M values; empty when `D = 0` on every axis).
    /// Errors: [`Error::Alloc`].
    pub fn prephase<T: Real>(&self, xs: [&[T]; 3], threads: &Threads) -> Result<Vec<Complex<T>>> {
        let (dim, ext_s, sign) = (self.dim, self.ext_s, self.sign());
        if !self.has_prephase() {
            return Ok(Vec::new());
        }
        let mut prephase = zeroed_vec(self.m, "NUFFT type 3 pre-phase factors")?;
        threads.chunks(&mut prephase, CHUNK, |ci, out| {
            for (i, o) in out.iter_mut().enumerate() {
                let j = ci * CHUNK + i;
                let ph: f64 = (0..dim).map(|d| ext_s[d].centre * xs[d][j].to_f64v()).sum();
                *o = cplx(Complex::from_polar(1.0, sign * ph));
            }
        });
        Ok(prephase)
    }

    /// The deconvolution and post-phase factors `e^{± i (s_k − D)·C} / Π_d ψ̂(s'_{dk})`
    /// (N values). Errors: [`Error::Alloc`].
    pub fn deconv<T: Real>(&self, ss: [&[T]; 3], kft: &KernelFt, threads: &Threads) -> Result<Vec<Complex<T>>> {
        let (dim, ext_s, ext_x, grids, sign) = (self.dim, self.ext_s, self.ext_x, self.grids, self.sign());
        let mut deconv = zeroed_vec(self.n, "NUFFT type 3 deconvolution factors")?;
        threads.chunks(&mut deconv, CHUNK, |ci, out| {
            for (i, o) in out.iter_mut().enumerate() {
                let k = ci * CHUNK + i;
                // Π_d ψ̂ = e^{Σ ln ψ̂} (in-band axes: one exp per target) · Π ψ̂ (other axes)
                let (mut ph, mut ln_amp, mut amp) = (0.0, 0.0, 1.0);
                for d in 0..dim {
                    let sd = ss[d][k].to_f64v() - ext_s[d].centre;
                    let om = grids[d].h * grids[d].gamma * sd;
                    match kft.ln_in_band(om) {
                        Some(l) => ln_amp += l,
                        None => amp *= kft.eval_quadrature(om),
                    }
                    ph += sd * ext_x[d].centre;
                }
                let r = (-ln_amp).exp() / amp;
                // no post-phase when C = 0 on every axis (centred points): no sincos
                *o = cplx(if ph == 0.0 { Complex::new(r, 0.0) } else { Complex::from_polar(r, sign * ph) });
            }
        });
        Ok(deconv)
    }

    /// The set-up line printed with `opts.debug > 0`.
    pub fn describe(&self) -> String {
        let dim = self.dim;
        format!("M = {}, N = {}: X {:?} C {:?} S {:?} D {:?} nf {:?} gamma {:?}", self.m, self.n,
                self.ext_x[..dim].iter().map(|e| e.half).collect::<Vec<_>>(), self.ext_x[..dim].iter().map(|e| e.centre).collect::<Vec<_>>(),
                self.ext_s[..dim].iter().map(|e| e.half).collect::<Vec<_>>(), self.ext_s[..dim].iter().map(|e| e.centre).collect::<Vec<_>>(),
                &self.nf()[..dim], self.grids[..dim].iter().map(|g| g.gamma).collect::<Vec<_>>())
    }
}

/// What `setpts` builds: the geometry, the spreader on the fine grid, the inner type 2 and the
/// phase and deconvolution factors.
struct Points<T: Real> {
    m: usize,
    n: usize,
    grids: [Type3Grid; 3],
    spreader: Spreader<T>,
    fw: AlignedVec<Complex<T>>,
    inner: CpuNufft<T>,
    /// `e^{± i D·x_j}` (empty when `D = 0` on every axis).
    prephase: Vec<Complex<T>>,
    /// `e^{± i (s_k − D)·C} / Π_d ψ̂(s'_{dk})`.
    deconv: Vec<Complex<T>>,
    /// Pre-phased strengths of one transform (empty when there is no pre-phase).
    cwork: Vec<Complex<T>>,
    /// Tolerance used and warnings for these points ([`Type3Params::accuracy_at`]).
    accuracy: (f64, i32),
}

/// A NUFFT plan of type 3 in precision `T` on the CPU (see the module docs).
pub struct Type3Plan<T: Real> {
    params: Type3Params,
    threads: Threads,
    pts: Option<Points<T>>,
    timings: Type3Timings,
}

/// Points per parallel chunk of the phase and deconvolution loops.
const CHUNK: usize = 4096;

impl<T: Real> Type3Plan<T> {
    /// Makes a type-3 plan on the CPU.
    ///
    /// * `dim`: 1–3; `iflag`: sign of the exponent (`≥ 0` → `+i`); `ntrans ≥ 1` vectors per
    ///   execute;
    /// * `tol`: requested relative l2 accuracy, finite and > 0; clamped as for types 1 and 2
    ///   ([`NufftPlan::new`]) with [`FARFIELD_WARN_TOL_CLAMPED`] in [`Type3Plan::info`];
    /// * `opts`: as for types 1 and 2 (every field validated by [`NufftOpts::check`]);
    ///   `upsampfac` 0 means σ = 2 for the type-3 grid (the inner type 2 then chooses its own
    ///   as an automatic type 2 does); `modeord` and `points_by_reference` do not apply (the
    ///   rescaled points are always copies); `backend` CUDA → [`Error::NotSupported`] (this
    ///   is the CPU executor: [`NufftPlan::new`] routes a CUDA type 3 to the GPU executor).
    ///
    /// The fine grid depends on the points, so it is sized and allocated by
    /// [`Type3Plan::setpts`]. Errors: [`Error::Dim`], [`Error::InvalidArg`] (ntrans, options),
    /// [`Error::Tol`], [`Error::NotSupported`], [`Error::Alloc`].
    pub fn new(dim: usize, iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<Self> {
        let params = Type3Params::new::<T>(dim, iflag, ntrans, tol, opts)?;
        if opts.backend == BackendChoice::Cuda {
            return Err(Error::NotSupported(
                "Type3Plan is the CPU executor (opts.backend = CUDA: make the plan through NufftPlan::new)".into()));
        }
        opts.check_cpu()?;
        let threads = Threads::new(opts.nthreads)?;
        Ok(Type3Plan { params, threads, pts: None, timings: Type3Timings::default() })
    }

    /// Sets (or replaces) the `M` points `x` (and `y` for dim ≥ 2, `z` for dim 3; each of length
    /// M; unused axes may be empty) and the `N` target frequencies `s` (and `t`, `u`; each of
    /// length N). Any finite reals; the product of their half-widths per axis sets the fine
    /// grid (module docs). Everything is copied (rescaled).
    ///
    /// Errors: [`Error::NPoints`] (length mismatch, M or N above [`MAX_POINTS`] = 2³² − 1 (the
    /// targets are the inner type 2's points), `ntrans·M` or
    /// `ntrans·N` above 2⁴⁰), [`Error::NonFinite`] (first bad point or frequency, named),
    /// [`Error::Range`] (`X·S` overflows), [`Error::Modes`] (fine grid too large) keep the
    /// previous points; [`Error::Alloc`] and [`Error::Fft`] leave the plan without points.
    #[allow(clippy::too_many_arguments)]
    pub fn setpts(&mut self, x: &[T], y: &[T], z: &[T], s: &[T], t: &[T], u: &[T]) -> Result<()> {
        let t0 = Instant::now();
        let p = &self.params;
        let dim = p.dim;
        let xs: [&[T]; 3] = [x, if dim > 1 { y } else { &[] }, if dim > 2 { z } else { &[] }];
        let ss: [&[T]; 3] = [s, if dim > 1 { t } else { &[] }, if dim > 2 { u } else { &[] }];
        let geo = p.geometry(xs, ss, &self.threads)?;
        let nf = geo.nf();
        // from here on a failure leaves the plan without points
        self.pts = None;
        let fw = crate::spread::zeroed_grid::<T>(dim, geo.total(), "NUFFT type 3 fine grid")?;
        let mut spreader = Spreader::new(dim, &nf[..dim], &p.kernel, SpreadOpts {
            max_subprob_size: p.opts.spread_max_subprob_size,
            callers_order: true,
            ..Default::default()
        })?;
        {
            let xr = geo.rescaled_points(xs)?;
            spreader.setpts([&xr[0], &xr[1], &xr[2]], &self.threads)?;
        }
        // the inner type 2: nf "modes" per axis in FFT order (grid index i ↔ l = i or i − nf)
        let (inner_params, inner_opts) = p.inner_params::<T>(&geo, Backend::Cpu)?;
        let accuracy = p.accuracy_at::<T>(&geo, &inner_params);
        let mut inner = CpuNufft::<T>::new(inner_params, &inner_opts)?;
        {
            let sr = geo.rescaled_freqs(ss)?;
            inner.setpts(ExecPoints { x: [&sr[0], &sr[1], &sr[2]], s: [&[], &[], &[]] })?;
        }
        let prephase = geo.prephase(xs, &self.threads)?;
        let cwork = if prephase.is_empty() { Vec::new() } else { zeroed_vec(geo.m, "NUFFT type 3 pre-phased strengths")? };
        let deconv = geo.deconv(ss, &p.kft, &self.threads)?;
        self.pts = Some(Points { m: geo.m, n: geo.n, grids: geo.grids, spreader, fw, inner, prephase, deconv, cwork, accuracy });
        self.timings = Type3Timings { setpts_s: t0.elapsed().as_secs_f64(), ..Default::default() };
        if self.params.opts.debug > 0 {
            eprintln!("[farfield nufft{} type 3] setpts {}, inner type 2 nf {:?}: {:.3} s",
                      if T::NAME == "f32" { "f" } else { "" }, geo.describe(),
                      &self.pts.as_ref().map(|p| p.inner.info().nf).unwrap_or_default()[..dim], self.timings.setpts_s);
        }
        Ok(())
    }

    /// Executes: reads the strengths `c` (`ntrans·M`, `c[t*M + j]`), writes
    /// `f[t*N + k] = Σ_j c[t*M + j] e^{± i s_k·x_j}` (`ntrans·N`, overwritten).
    ///
    /// Errors: [`Error::NoPoints`] before `setpts`, [`Error::InvalidArg`] for wrong lengths,
    /// [`Error::Alloc`] (spreading scratch), [`Error::Range`] when an output is not finite
    /// (non-finite or overflowing strengths; `f` is then already overwritten).
    pub fn execute(&mut self, c: &[Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        let Some(p) = self.pts.as_mut() else {
            return Err(Error::NoPoints("call setpts before execute".into()));
        };
        let (m, n) = (p.m, p.n);
        let ntrans = self.params.ntrans;
        if c.len() != m * ntrans || f.len() != n * ntrans {
            return Err(Error::InvalidArg(format!(
                "array lengths c = {}, f = {} do not match ntrans·M = {}, ntrans·N = {}",
                c.len(), f.len(), m * ntrans, n * ntrans)));
        }
        let ntrans = self.params.ntrans;
        let mut tm = Type3Timings { setpts_s: self.timings.setpts_s, ..Default::default() };
        for tr in 0..ntrans {
            let ct = &c[tr * m..(tr + 1) * m];
            let ft = &mut f[tr * n..(tr + 1) * n];
            let t0 = Instant::now();
            let cin: &[Complex<T>] = if p.prephase.is_empty() {
                ct
            } else {
                self.threads.chunks2(&mut p.cwork, CHUNK, &p.prephase, CHUNK, |ci, out, ph| {
                    let src = &ct[ci * CHUNK..ci * CHUNK + out.len()];
                    for ((o, &a), &b) in out.iter_mut().zip(src).zip(ph) {
                        *o = a * b;
                    }
                });
                &p.cwork
            };
            let t1 = Instant::now();
            p.fw.zero();
            p.spreader.try_spread(cin, &mut p.fw, &self.threads)?;
            let t2 = Instant::now();
            match p.inner.execute(ft, &mut p.fw) {
                // a non-finite result is reported below with type-3 names
                Ok(()) | Err(Error::Range(_)) => {}
                Err(e) => return Err(e),
            }
            let t3 = Instant::now();
            self.threads.chunks2(ft, CHUNK, &p.deconv, CHUNK, |_, out, dc| {
                for (o, &b) in out.iter_mut().zip(dc) {
                    *o *= b;
                }
            });
            tm.prephase_s += (t1 - t0).as_secs_f64();
            tm.spread_s += (t2 - t1).as_secs_f64();
            tm.inner_s += (t3 - t2).as_secs_f64();
            tm.deconv_s += t3.elapsed().as_secs_f64();
        }
        self.timings = tm;
        if self.params.opts.debug > 0 {
            eprintln!("[farfield nufft type 3] execute: pre-phase {:.3} s, spread {:.3} s, inner type 2 {:.3} s, deconvolve {:.3} s",
                      tm.prephase_s, tm.spread_s, tm.inner_s, tm.deconv_s);
        }
        if let Some(i) = f.iter().position(|v| !(v.re.is_finite() && v.im.is_finite())) {
            return Err(Error::Range(format!(
                "output f[{i}] = ({:e}, {:e}) is not finite: the input c holds non-finite values or values too large for {} \
                 (their sum overflows)", f[i].re.to_f64v(), f[i].im.to_f64v(), T::NAME)));
        }
        Ok(())
    }

    /// What the plan chose: the type-3 fine grid `nf` (zeros before `setpts`), the spreading
    /// kernel's width and parameter, σ, the tolerance used and warnings (of the points, once
    /// set: [`Type3Params::accuracy_at`]).
    pub fn info(&self) -> NufftInfo {
        // axes beyond dim have nf = 1 (Type3Params::geometry)
        let nf = self.pts.as_ref().map_or([0; 3], |p| [p.grids[0].nf, p.grids[1].nf, p.grids[2].nf]);
        let (tol_used, warnings) = self.pts.as_ref().map_or((self.params.tol_used, self.params.warnings), |p| p.accuracy);
        NufftInfo {
            nf,
            kernel_width: self.params.kernel.width(),
            nthreads: self.threads.count(),
            upsampfac: self.params.sigma,
            kernel_param: self.params.kernel.shape_param(),
            tol_used,
            warnings,
            backend: Backend::Cpu,
        }
    }

    /// The fine grid of each axis (`None` before `setpts`).
    pub fn grids(&self) -> Option<[Type3Grid; 3]> {
        self.pts.as_ref().map(|p| p.grids)
    }
    /// What the inner type 2 chose (`None` before `setpts`).
    pub fn inner_info(&self) -> Option<NufftInfo> {
        self.pts.as_ref().map(|p| p.inner.info())
    }
    /// Stage timings of the inner type 2 in the last execute (its last transform).
    pub fn inner_timings(&self) -> Option<super::Timings> {
        self.pts.as_ref().map(|p| p.inner.timings())
    }
    /// Number of points M set (0 before `setpts`).
    pub fn num_points(&self) -> usize {
        self.pts.as_ref().map_or(0, |p| p.m)
    }
    /// Number of target frequencies N set (0 before `setpts`).
    pub fn num_targets(&self) -> usize {
        self.pts.as_ref().map_or(0, |p| p.n)
    }
    /// Dimension (1–3).
    pub fn dim(&self) -> usize {
        self.params.dim
    }
    /// Vectors per execute.
    pub fn ntrans(&self) -> usize {
        self.params.ntrans
    }
    /// The options the plan was made with.
    pub fn options(&self) -> &NufftOpts {
        &self.params.opts
    }
    /// The spreading kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.params.kernel
    }
    /// Stage timings of the last `setpts` + `execute`.
    pub fn timings(&self) -> Type3Timings {
        self.timings
    }
}

impl<T: Real> NufftExec<T> for Type3Plan<T> {
    fn setpts(&mut self, pts: ExecPoints<'_, T>) -> Result<()> {
        Type3Plan::setpts(self, pts.x[0], pts.x[1], pts.x[2], pts.s[0], pts.s[1], pts.s[2])
    }
    fn has_points(&self) -> bool {
        self.pts.is_some()
    }
    fn num_points(&self) -> usize {
        Type3Plan::num_points(self)
    }
    fn num_modes(&self) -> usize {
        self.num_targets()
    }
    fn execute(&mut self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        Type3Plan::execute(self, c, f)
    }
    fn info(&self) -> NufftInfo {
        Type3Plan::info(self)
    }
    fn kernel(&self) -> &Kernel {
        &self.params.kernel
    }
    /// The type-3 stages mapped onto [`Timings`]: spreading → `spread_s`, the inner type 2 →
    /// `fft_s`, pre-phase, deconvolution and post-phase → `deconv_s`.
    fn timings(&self) -> Timings {
        let t = self.timings;
        Timings { setpts_s: t.setpts_s, spread_s: t.spread_s, fft_s: t.inner_s, deconv_s: t.prephase_s + t.deconv_s }
    }
}

/// `(v − centre)·scale` in f64, rounded to `T`, into a fallibly allocated vector.
/// The error for a non-finite coordinate `v` at index `i` of axis `d` (array `name`, e.g.
/// "x"; `what`: "point" or "target frequency"), the same from the CPU's and the GPU's set-up.
pub fn non_finite<T: std::fmt::Display>(name: &str, d: usize, what: &str, i: usize, v: T) -> Error {
    Error::NonFinite(format!("{name}[{i}] (coordinate {d} of {what} {i}) is {v}"))
}

fn rescale<T: Real>(v: &[T], centre: f64, scale: f64, what: &str) -> Result<Vec<T>> {
    let mut out = try_vec(v.len(), what)?;
    out.extend(v.iter().map(|&a| T::of((a.to_f64v() - centre) * scale)));
    Ok(out)
}

fn zeroed_vec<T: Real>(n: usize, what: &str) -> Result<Vec<Complex<T>>> {
    crate::error::try_filled_vec(n, Complex::new(T::zero(), T::zero()), what)
}

#[inline(always)]
fn cplx<T: Real>(z: Complex<f64>) -> Complex<T> {
    Complex::new(T::of(z.re), T::of(z.im))
}

