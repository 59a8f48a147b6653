//! The NUFFT parameter layer shared by every backend: from the problem (type, dimension, modes,
//! `ntrans`, tolerance, precision) and the options to the numerical choices — upsampling factor
//! σ, kernel (family, width w, ES β or Gaussian τ), fine grid sizes `nf`, the tolerance used and
//! the deconvolution factors `1/ψ̂(k)` — as FINUFFT's `common/kernel.cpp` is for its CPU
//! and GPU libraries (Barnett, Magland, af Klinteberg, SIAM J. Sci. Comput. 41 (2019) C479,
//! §2, §4).
//!
//! [`NufftParams::new`] is a pure function: it validates, allocates nothing of the problem's
//! size and knows nothing of plans, spreaders, FFT plans or devices. The CPU plan
//! ([`super::cpu::CpuNufft`]) and the CUDA plan (`GpuNufft` in the gpu module) are built
//! from its result, so both backends compute the same approximation for the same arguments.

use super::deconv::mode_of;
use super::options::{ModeOrder, NufftOpts, FARFIELD_WARN_TOL_CLAMPED};
use crate::error::{Error, Result};
use crate::memo::Memo;
use crate::fft::{next_fft_size, FFTW_DESTROY_INPUT, FFTW_ESTIMATE, FFTW_PATIENT};
use crate::kernel::es::{table_sigma, EsParams, MAX_ES_WIDTH, TABLE_NSIGMA, TABLE_W0};
use crate::kernel::{Kernel, KernelKind};
use crate::real::Real;

/// FFTW planner flags accepted in `opts.fftw`: FFTW_ESTIMATE (64), FFTW_MEASURE (0),
/// FFTW_PATIENT (32), FFTW_EXHAUSTIVE (8), and FFTW_DESTROY_INPUT (1).
pub const FFTW_FLAGS_ACCEPTED: u32 = FFTW_ESTIMATE | FFTW_PATIENT | 8 | FFTW_DESTROY_INPUT;

/// Largest fine (upsampled) grid size along one axis: FFTW's `int` range, 2³¹ − 1. With
/// σ = 2 an axis therefore holds at most about 1.07·10⁹ modes (1.7·10⁹ at σ = 1.25).
pub const MAX_FINE_AXIS: usize = i32::MAX as usize;

/// Largest fine grid (points, all axes together), largest number of modes `N1·N2·N3` and
/// largest `ntrans·N1·N2·N3`: [`crate::error::MAX_ELEMENTS`] (2⁴⁰). Checked before anything
/// is allocated or computed, so that makeplan's cost is bounded by the problem size.
pub const MAX_GRID_ELEMENTS: usize = crate::error::MAX_ELEMENTS;

/// Largest number of non-uniform points M: 2³² − 1 (point indices are stored as `u32`).
pub const MAX_POINTS: usize = u32::MAX as usize;

pub use crate::backend::Backend;

/// Precision of a plan's data (the kernels are chosen in f64 either way).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Precision {
    /// Single precision (`f32`): tolerances below 1e-7 are clamped.
    F32,
    /// Double precision (`f64`): tolerances below 1e-15 are clamped.
    F64,
}

impl Precision {
    /// The precision of `T`.
    pub fn of<T: Real>() -> Precision {
        if T::NAME == "f32" {
            Precision::F32
        } else {
            Precision::F64
        }
    }
    /// Smallest tolerance honoured ([`Real::MIN_TOL`]).
    pub fn min_tol(self) -> f64 {
        match self {
            Precision::F32 => f32::MIN_TOL,
            Precision::F64 => f64::MIN_TOL,
        }
    }
    /// Unit roundoff: 2⁻²⁴ (f32) or 2⁻⁵³ (f64).
    pub fn unit_roundoff(self) -> f64 {
        match self {
            Precision::F32 => f32::EPS / 2.0,
            Precision::F64 => f64::EPS / 2.0,
        }
    }
    /// `"f32"` or `"f64"`.
    pub fn name(self) -> &'static str {
        match self {
            Precision::F32 => "f32",
            Precision::F64 => "f64",
        }
    }
}

/// Everything a NUFFT of type 1 or 2 chose, independent of the backend.
#[derive(Debug, Clone, PartialEq)]
pub struct NufftParams {
    /// Transform type, 1 or 2.
    pub ty: i32,
    /// Dimension 1–3.
    pub dim: usize,
    /// Modes per axis `[N1, N2, N3]` (1 for unused axes).
    pub n: [usize; 3],
    /// Vectors per execute (≥ 1).
    pub ntrans: usize,
    /// Sign of the exponent: +1 for `iflag ≥ 0`, −1 otherwise.
    pub sign: i32,
    /// Upsampling factor σ.
    pub sigma: f64,
    /// The spreading kernel (family and shape parameters, width w).
    pub kernel: Kernel,
    /// Fine grid sizes per axis (1 for unused axes): even, 2,3,5,7-smooth, ≥ max(⌈σN⌉, 2w).
    pub nf: [usize; 3],
    /// Requested tolerance.
    pub tol: f64,
    /// Tolerance the kernel was chosen for (the requested one unless clamped).
    pub tol_used: f64,
    /// Bit set of `FARFIELD_WARN_*` ([`FARFIELD_WARN_TOL_CLAMPED`]).
    pub warnings: i32,
    /// Mode order of the user's arrays.
    pub modeord: ModeOrder,
    /// Precision of the data.
    pub precision: Precision,
    /// Backend the plan runs on.
    pub backend: Backend,
}

/// Checks and converts the mode counts; returns `[N1, N2, N3]` (1 for unused axes).
/// Errors: [`Error::Modes`] (fewer than `dim` counts, a count ≤ 0, more than
/// [`MAX_FINE_AXIS`] per axis, N or ntrans·N above [`MAX_GRID_ELEMENTS`]).
pub fn check_modes(dim: usize, n_modes: &[i64], ntrans: usize) -> Result<[usize; 3]> {
    if n_modes.len() < dim {
        return Err(Error::Modes(format!("{} mode counts given for dimension {dim}", n_modes.len())));
    }
    let mut n = [1usize; 3];
    for d in 0..dim {
        if n_modes[d] <= 0 {
            return Err(Error::Modes(format!("n_modes[{d}] = {} must be positive", n_modes[d])));
        }
        // i64 > 0 always fits in usize on the 64-bit targets; the limits below do the rest
        n[d] = usize::try_from(n_modes[d]).map_err(|_| Error::Modes(format!("n_modes[{d}] = {} is too large", n_modes[d])))?;
        if n[d] > MAX_FINE_AXIS / 2 * 2 {
            return Err(Error::Modes(format!(
                "n_modes[{d}] = {} exceeds the limit of {} modes per axis (the fine grid of σ·N points must fit FFTW's int range)",
                n[d], MAX_FINE_AXIS / 2 * 2)));
        }
    }
    let total = n.iter().try_fold(1usize, |a, &b| a.checked_mul(b)).filter(|&t| t <= MAX_GRID_ELEMENTS);
    let Some(total) = total else {
        return Err(Error::Modes(format!(
            "number of modes {} exceeds the limit 2^40 = {MAX_GRID_ELEMENTS}",
            n_modes[..dim].iter().map(|v| v.to_string()).collect::<Vec<_>>().join("×"))));
    };
    if total.checked_mul(ntrans).is_none_or(|t| t > MAX_GRID_ELEMENTS) {
        return Err(Error::Modes(format!(
            "ntrans·N = {ntrans}·{total} exceeds the limit 2^40 = {MAX_GRID_ELEMENTS} values per execute")));
    }
    Ok(n)
}

/// The fine grid sizes for modes `n`, factor `sigma` and kernel width `w`: per axis the
/// smallest even 2,3,5,7-smooth size ≥ max(⌈σN⌉, 2w) ([`crate::fft::next_fft_size`]); each at most [`MAX_FINE_AXIS`], the
/// product at most [`MAX_GRID_ELEMENTS`] ([`Error::Modes`] naming the axis, the size and the
/// limit). O(log² N) per axis.
pub fn fine_grid(dim: usize, n: [usize; 3], sigma: f64, w: usize) -> Result<[usize; 3]> {
    let mut nf = [1usize; 3];
    for d in 0..dim {
        let want = (sigma * n[d] as f64).ceil().max((2 * w) as f64);
        let size = if want <= MAX_FINE_AXIS as f64 { next_fft_size(want as usize).unwrap_or(usize::MAX) } else { usize::MAX };
        if size > MAX_FINE_AXIS {
            return Err(Error::Modes(format!(
                "n_modes[{d}] = {} needs a fine grid of {want:e} points at upsampfac {sigma:e} (next FFT size {}), above FFTW's limit {MAX_FINE_AXIS} per axis",
                n[d], if size == usize::MAX { "-".to_string() } else { size.to_string() })));
        }
        nf[d] = size;
    }
    match nf.iter().try_fold(1usize, |a, &b| a.checked_mul(b)) {
        Some(t) if t <= MAX_GRID_ELEMENTS => Ok(nf),
        t => Err(Error::Modes(format!(
            "fine grid {} = {} points exceeds the limit 2^40 = {MAX_GRID_ELEMENTS}",
            nf[..dim].iter().map(|v| v.to_string()).collect::<Vec<_>>().join("×"),
            t.map_or_else(|| format!("{:e}", nf.iter().map(|&v| v as f64).product::<f64>()), |t| t.to_string())))),
    }
}

/// Largest σ the automatic choice takes (the last column of the ES table,
/// [`crate::kernel::es::table::ES_TABLE`]); type 3 bounds its grid by it.
pub const AUTO_SIGMA_MAX: f64 = 2.5;

/// Weight of the deconvolution's amplification in [`rounding_floor`], by dimension − 1:
/// errors where the amplification dominates measured 1.15–1.6 times `u·A` in 1D, 0.4–0.5
/// times `u·A²` in 2D and 0.27–0.64 times `u·A³` in 3D (σ = 1.25, f32 and f64;
/// `benches/calibrate_f32_floor.py`, `benches/results/nufft_f32_floor_2026-12-02.json`,
/// docs/design.md §9.5), so the floor is the expected error, well within the contract's
/// factor 10 of the measured one.
pub const FLOOR_C_AMP: [f64; 3] = [1.0, 0.5, 0.3];

/// Weight of the grid-coordinate rounding in [`rounding_floor`]: floors measured at σ = 2,
/// where the amplification is near 1, are 0.23–0.26 times `u·|nf|` in 2D and 3D.
pub const FLOOR_C_COORD: f64 = 0.25;

/// The deconvolution's amplification of rounding errors along one axis: the root mean square
/// of `ψ̂(0)/ψ̂(ξ)` over the band `|ξ| ≤ 1/(2σ)` (cycles per grid point) that the modes occupy
/// on a grid upsampled by `sigma`, sampled at 17 frequencies. 1.2–3 at σ = 2, 25 at
/// σ = 1.25 and w = 10, 350 at σ = 1.25 and w = 16 for the ES kernels of the table. Cost
/// O(w²) (one quadrature of [`Kernel::fourier_series_range`]); ES kernels' values are memoised
/// ([`crate::memo`]) by (w, β, e, the sampling grid), which is all they depend on.
pub fn amplification(kernel: &Kernel, sigma: f64) -> f64 {
    const K: usize = 16;
    static ES: Memo<(usize, u64, u64, usize), f64> = Memo::new(1 << 14);
    let nf = ((2 * K) as f64 * sigma).round().max((2 * K) as f64) as usize;
    let compute = || {
        let mut ft = [0.0f64; K + 1];
        kernel.fourier_series_range(nf, 0, &mut ft);
        let sq: f64 = ft.iter().map(|&v| (ft[0] / v).powi(2)).sum();
        (sq / (K + 1) as f64).sqrt()
    };
    match kernel {
        Kernel::Es(p) => ES.get_or((p.w, p.beta.to_bits(), p.e.to_bits(), nf), compute),
        _ => compute(),
    }
}

/// The relative l2 error that rounding in `precision` adds to a NUFFT of type 1 or 2 with
/// `kernel` on a grid upsampled by `sigmas[d]` along each of its `dim = sigmas.len()` axes
/// (docs/design.md §9.5):
///
/// `u · (C_amp[dim] · Π_d A(σ_d) + C_coord · coord_extent)`,
///
/// with `u` the unit roundoff ([`Precision::unit_roundoff`]), `A` the deconvolution's amplification
/// ([`amplification`]; rounding errors on the fine grid come out multiplied by `1/ψ̂(k)`), and
/// `coord_extent` the size of the grid coordinates held in the data precision (the CPU and
/// CUDA spreaders keep 2D and 3D grid coordinates `x·nf/2π` in it, each rounded to
/// `u·nf` grid points: `|nf| = (Σ nf_d²)^½`; 1D CPU coordinates are kept as double-doubles
/// and give 0). [`FLOOR_C_AMP`], [`FLOOR_C_COORD`] are the calibrated weights. The factors
/// are the grid's own, `nf_d/N_d` ([`grid_sigmas`]): a grid widened to `2w` points
/// amplifies less than its nominal σ. About 6e-8 at σ = 2 in single precision, growing to
/// 1e-5 at σ = 1.25 and w = 10 in 2D; in double precision below 1e-13 except at σ near 1.2
/// with wide kernels in 3D.
pub fn rounding_floor(precision: Precision, kernel: &Kernel, sigmas: &[f64], coord_extent: f64) -> f64 {
    let dim = sigmas.len().clamp(1, 3);
    let amp: f64 = sigmas.iter().map(|&s| amplification(kernel, s)).product();
    precision.unit_roundoff() * (FLOOR_C_AMP[dim - 1] * amp + FLOOR_C_COORD * coord_extent)
}

/// The upsampling factors `nf_d/N_d` of the first `dim` axes of a fine grid `nf` for modes `n`.
pub fn grid_sigmas(dim: usize, n: &[usize; 3], nf: &[usize; 3]) -> Vec<f64> {
    (0..dim).map(|d| nf[d] as f64 / n[d].max(1) as f64).collect()
}

/// `(Σ nf_d²)^½` over the first `dim` axes: the extent of the grid coordinates of a 2D or 3D
/// spreader (0 in 1D, whose coordinates are double-doubles), for [`rounding_floor`].
pub fn coord_extent(dim: usize, nf: &[usize; 3]) -> f64 {
    if dim < 2 {
        0.0
    } else {
        nf[..dim].iter().map(|&v| (v as f64).powi(2)).sum::<f64>().sqrt()
    }
}

/// The predicted relative error of an ES kernel of width `w` at factor `sigma` for modes `n`
/// in `precision`: the kernel's estimate ([`EsParams::error_estimate_dim`]) plus the rounding
/// floor ([`rounding_floor`]) on its fine grid (`n = None`: the amplification part alone, for
/// type 3, whose grid comes with the points); `None` when the fine grid exceeds the limits.
pub fn es_total_error(w: usize, sigma: f64, dim: usize, n: Option<[usize; 3]>, precision: Precision) -> Option<f64> {
    let (sigmas, extent) = match n {
        Some(n) => {
            let nf = fine_grid(dim, n, sigma, w).ok()?;
            (grid_sigmas(dim, &n, &nf), coord_extent(dim, &nf))
        }
        None => (vec![sigma; dim], 0.0),
    };
    let kernel = Kernel::Es(EsParams::with_shape(w, sigma, 0.0));
    Some(EsParams::error_estimate_dim(w, sigma, dim) + rounding_floor(precision, &kernel, &sigmas, extent))
}

/// When no kernel meets a tolerance (below what the precision's rounding floor or the widest
/// kernel allows), the choice is the cheapest whose predicted error is within this factor of the
/// least predicted error, and the tolerance is clamped to its prediction: the floor's weights
/// were measured to within about ±30 % (docs/design.md §9.5), so predictions closer than this
/// do not tell kernels apart, while the kernel of least error costs more for nothing
/// measurable (3D single precision at 1e-6, 32³ modes, M = 2·10⁵: w = 9 at σ = 1.85, predicted 1.72e-6,
/// measured 1.46–1.54e-6; w = 8 at σ = 1.75, 2.00e-6, measured 1.58–1.59e-6 in 0.74–0.90× the time;
/// `benches/results/finufft_plan_overhead_2026-12-03.json`).
pub const UNREACHABLE_TOL_SLACK: f64 = 1.25;

/// The narrowest ES width at factor `sigma` whose predicted error ([`es_total_error`]) meets
/// `tol`, with that error; `None` when none does.
fn narrowest_meeting(tol: f64, sigma: f64, dim: usize, n: Option<[usize; 3]>, precision: Precision) -> Option<(usize, f64)> {
    // a width whose kernel estimate misses tol misses it with the floor too
    let first = (TABLE_W0..=MAX_ES_WIDTH).find(|&w| EsParams::error_estimate_dim(w, sigma, dim) <= tol)?;
    (first..=MAX_ES_WIDTH).find_map(|w| es_total_error(w, sigma, dim, n, precision).filter(|&t| t <= tol).map(|t| (w, t)))
}

/// The ES width of least predicted error at factor `sigma` (the floor grows with w while the
/// kernel's error falls), with that error; `None` when no width's fine grid fits the limits.
fn least_error_width(sigma: f64, dim: usize, n: Option<[usize; 3]>, precision: Precision) -> Option<(usize, f64)> {
    (TABLE_W0..=MAX_ES_WIDTH)
        .filter_map(|w| es_total_error(w, sigma, dim, n, precision).map(|t| (w, t)))
        .fold(None, |best: Option<(usize, f64)>, c| if best.is_none_or(|b| c.1 < b.1) { Some(c) } else { best })
}

/// The ES width at factor `sigma` for tolerance `tol`: the narrowest `w` whose predicted error
/// ([`es_total_error`]) meets `tol`, else the narrowest within [`UNREACHABLE_TOL_SLACK`] of the
/// least predicted error at `sigma`. Returns `(w, predicted error)`, `None` when no width's
/// fine grid fits the limits. O(15 · w²) on first use, memoised after ([`amplification`]).
pub fn es_width_for(tol: f64, sigma: f64, dim: usize, n: Option<[usize; 3]>, precision: Precision) -> Option<(usize, f64)> {
    narrowest_meeting(tol, sigma, dim, n, precision).or_else(|| {
        let (_, least) = least_error_width(sigma, dim, n, precision)?;
        narrowest_meeting(least * UNREACHABLE_TOL_SLACK, sigma, dim, n, precision)
    })
}

/// The cost model of the automatic choice of σ and w (types 1 and 2, ES kernel), in seconds on
/// one thread:
///
/// `t(σ, w) = M·(c_pt[d] + c_tap[d]·w^d) + Nf·(c_grid[d] + c_fft[d]·log2 Nf)`,
///
/// `M` points, `d` dimensions, `Nf = Π nf_d` fine-grid points ([`fine_grid`]). The first term
/// is spreading or interpolation (a cost per point — sorting, kernel evaluation — and per
/// kernel tap), the second the FFT and the passes over the fine grid (zeroing, wrap-add).
/// Calibrated on a 2-core x86-64 (AVX2) with the release binary, one thread, f64, type 1:
/// `farfield bench nufft --type 1 --dim D --modes N --points 2e6 --tol T --upsampfac S
/// --threads 1 --check 0 --json` for D = 1, 2, 3 (N = 10⁶, 1000², 128³), S ∈ {1.25, 1.5, 2,
/// 2.5} and T ∈ {1e-3, 1e-6, 1e-9, 1e-12} (w from 3 to 16), best of two runs; `spread_s` was
/// fitted by least squares to `M(c_pt + c_tap w^d) + c_grid Nf` per dimension and `fft_s` to
/// `c_fft Nf log2 Nf` (FFTW_ESTIMATE plans; 3D FFTs cost about 3× more per point than 1D ones,
/// and 256³ is as slow as 320³ there). docs/design.md §9.1 lists the choices it makes for the benchmark cases.
/// `python3 benches/calibrate_nufft_cost.py` repeats the runs and the fit on another machine
/// (`benches/results/nufft_cost_calibration_2026-11-28.md`: on an AVX-512 Intel Xeon the FFT
/// is 3–4× cheaper per point in 3D, and this linear form misses 3D spreading past the L1
/// limit at w = 16; not adopted there).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CostModel {
    /// Seconds per point, by dimension − 1.
    pub c_pt: [f64; 3],
    /// Seconds per point and kernel tap (`w^d` taps), by dimension − 1.
    pub c_tap: [f64; 3],
    /// Seconds per fine-grid point (zeroing, wrap-add, copies), by dimension − 1.
    pub c_grid: [f64; 3],
    /// Seconds per fine-grid point and `log2 Nf` (the FFT), by dimension − 1.
    pub c_fft: [f64; 3],
}

/// The calibrated constants of [`CostModel`].
pub const COST_MODEL: CostModel = CostModel {
    c_pt: [1.13e-8, 2.82e-8, 1.39e-8],
    c_tap: [2.30e-9, 4.01e-10, 3.12e-10],
    c_grid: [1.42e-8, 1.68e-8, 2.83e-8],
    c_fft: [0.59e-9, 0.72e-9, 2.35e-9],
};

impl CostModel {
    /// Modelled seconds for `m` points, `dim` dimensions, width `w` and fine grid `nf`.
    pub fn time(&self, m: usize, dim: usize, w: usize, nf: [usize; 3]) -> f64 {
        let d = dim.clamp(1, 3) - 1;
        let taps = (w as f64).powi(dim as i32);
        let total: f64 = nf[..dim].iter().map(|&v| v as f64).product();
        m as f64 * (self.c_pt[d] + self.c_tap[d] * taps) + total * (self.c_grid[d] + self.c_fft[d] * total.max(2.0).log2())
    }
}

/// The automatic choice of σ and the ES width for tolerance `tol` (already clamped to the
/// precision), dimension `dim`, modes `n`, `m` points and data `precision`: over the σ of the
/// ES table (1.20, 1.25, …, [`AUTO_SIGMA_MAX`]), the narrowest width whose predicted error —
/// the kernel's estimate plus the rounding floor ([`es_total_error`]) — meets `tol` at that σ,
/// and the pair of least modelled time ([`COST_MODEL`]; ties go to the smaller grid). Returns
/// `(σ, w, predicted error)`. When no pair meets `tol`, the same choice for the tolerance
/// [`UNREACHABLE_TOL_SLACK`] times the least predicted error over every σ and width, and the
/// caller clamps the tolerance to the prediction. The fine grid can be at most `⌈2.5^d⌉·N`
/// points (plus the 7-smooth rounding), the most ducc0 chooses at the same tolerances.
/// O(27 · 15 · w² · dim) on first use; the choices, grid sizes and amplifications are memoised.
pub fn auto_sigma_width(tol: f64, dim: usize, n: [usize; 3], m: usize, precision: Precision) -> (f64, usize, f64) {
    static CHOICES: Memo<(u64, usize, [usize; 3], usize, Precision), (f64, usize, f64)> = Memo::new(1 << 12);
    CHOICES.get_or((tol.to_bits(), dim, n, m, precision), || search_sigma_width(tol, dim, n, m, precision))
}

/// [`auto_sigma_width`] without the memo.
fn search_sigma_width(tol: f64, dim: usize, n: [usize; 3], m: usize, precision: Precision) -> (f64, usize, f64) {
    if let Some(c) = cheapest_meeting(tol, dim, n, m, precision) {
        return c;
    }
    let least = (0..TABLE_NSIGMA)
        .filter_map(|i| least_error_width(table_sigma(i), dim, Some(n), precision))
        .fold(f64::INFINITY, |a, (_, e)| a.min(e));
    if least.is_finite() {
        if let Some(c) = cheapest_meeting(least * UNREACHABLE_TOL_SLACK, dim, n, m, precision) {
            return c;
        }
    }
    (AUTO_SIGMA_MAX, MAX_ES_WIDTH, EsParams::error_estimate_dim(MAX_ES_WIDTH, AUTO_SIGMA_MAX, dim))
}

/// [`auto_sigma_width`]'s choice among the pairs that meet `tol`; `None` when none does.
fn cheapest_meeting(tol: f64, dim: usize, n: [usize; 3], m: usize, precision: Precision) -> Option<(f64, usize, f64)> {
    let mut best: Option<(f64, f64, usize, f64, usize)> = None; // (time, σ, w, predicted, Nf)
    for i in 0..TABLE_NSIGMA {
        let sigma = table_sigma(i);
        let Some((w, err)) = narrowest_meeting(tol, sigma, dim, Some(n), precision) else { continue };
        let Ok(nf) = fine_grid(dim, n, sigma, w) else { continue };
        let total: usize = nf.iter().product();
        let t = COST_MODEL.time(m, dim, w, nf);
        let better = match best {
            None => true,
            Some((bt, _, _, _, bn)) => t < bt * (1.0 - 1e-9) || (t <= bt * (1.0 + 1e-9) && total < bn),
        };
        if better {
            best = Some((t, sigma, w, err, total));
        }
    }
    best.map(|(_, sigma, w, err, _)| (sigma, w, err))
}

/// Validates the options that are not choices by construction (`upsampfac`, `fftw`).
/// Errors: [`Error::InvalidArg`] naming the field.
pub fn check_opts(opts: &NufftOpts) -> Result<()> {
    if let Some(s) = opts.upsampfac {
        if !(s > 1.0 && s <= 4.0) {
            return Err(Error::InvalidArg(format!("opts.upsampfac = {s:e} is not in (1, 4] (or automatic)")));
        }
    }
    if opts.fftw & !FFTW_FLAGS_ACCEPTED != 0 {
        return Err(Error::InvalidArg(format!(
            "opts.fftw = {} is not a combination of FFTW_ESTIMATE (64), FFTW_MEASURE (0), FFTW_PATIENT (32), \
             FFTW_EXHAUSTIVE (8) and FFTW_DESTROY_INPUT (1)", opts.fftw)));
    }
    Ok(())
}

impl NufftParams {
    /// Chooses the parameters of a type-`ty` NUFFT.
    ///
    /// * `ty`: 1 or 2 (3 → [`Error::NotSupported`]: type 3 sizes its grid from the points and
    ///   has its own plan); `dim`: 1–3; `n_modes`: at least `dim` positive counts, x first;
    /// * `iflag`: sign of the exponent (`≥ 0` → `+i`); `ntrans ≥ 1`;
    /// * `tol`: requested relative l2 accuracy, finite and > 0; below what `precision` can give,
    ///   or below what the widest kernel reaches at σ ([`Kernel::achievable_tol`]), it is
    ///   clamped and [`FARFIELD_WARN_TOL_CLAMPED`] is set;
    /// * `backend`: recorded only — the choices are the same for every backend.
    ///
    /// Errors: [`Error::Type`], [`Error::NotSupported`], [`Error::Dim`], [`Error::Modes`]
    /// ([`check_modes`], [`fine_grid`]), [`Error::Tol`], [`Error::InvalidArg`] (`ntrans`,
    /// [`check_opts`]). Cost O(dim·log² N); nothing of the problem's size is allocated.
    #[allow(clippy::too_many_arguments)]
    pub fn new(ty: i32, dim: usize, n_modes: &[i64], iflag: i32, ntrans: usize, tol: f64, precision: Precision,
               opts: &NufftOpts, backend: Backend) -> Result<NufftParams> {
        match ty {
            1 | 2 => {}
            3 => return Err(Error::NotSupported("NUFFT type 3 has its own parameter choice (nufft::type3)".into())),
            _ => return Err(Error::Type(format!("type {ty} is not 1, 2 or 3"))),
        }
        if !(1..=3).contains(&dim) {
            return Err(Error::Dim(format!("dim = {dim} is not 1, 2 or 3")));
        }
        if ntrans == 0 {
            return Err(Error::InvalidArg("ntrans must be at least 1".into()));
        }
        let n = check_modes(dim, n_modes, ntrans)?;
        if !tol.is_finite() || tol <= 0.0 {
            return Err(Error::Tol(format!("tol = {tol:e} must be finite and positive")));
        }
        check_opts(opts)?;
        let (sigma, kernel, tol_used, warnings) = choose_kernel(tol, precision, dim, n, opts, None);
        let nf = fine_grid(dim, n, sigma, kernel.width())?;
        Ok(NufftParams {
            ty, dim, n, ntrans, sign: if iflag >= 0 { 1 } else { -1 }, sigma, kernel, nf, tol, tol_used, warnings,
            modeord: opts.modeord, precision, backend,
        })
    }

    /// The parameters re-chosen for `m` non-uniform points (makeplan assumes as many points as
    /// modes, [`choose_kernel`]): the same as `self` when `opts.upsampfac` is set, for the
    /// Gaussian kernel, or when the cost model makes the same choice for `m`; otherwise σ,
    /// the kernel, the fine grid, the tolerance used and the warnings for `m`. `opts` are the
    /// options the plan was made with. Errors: [`Error::Modes`] ([`fine_grid`]).
    /// Cost O(dim·log³ N) per σ of the table.
    pub fn with_points(&self, m: usize, opts: &NufftOpts) -> Result<NufftParams> {
        if opts.upsampfac.is_some() || opts.kernel != KernelKind::Es {
            return Ok(self.clone());
        }
        let (sigma, kernel, tol_used, warnings) = choose_kernel(self.tol, self.precision, self.dim, self.n, opts, Some(m));
        if sigma == self.sigma && kernel == self.kernel {
            return Ok(self.clone());
        }
        let nf = fine_grid(self.dim, self.n, sigma, kernel.width())?;
        Ok(NufftParams { sigma, kernel, nf, tol_used, warnings, ..self.clone() })
    }

    /// Total number of modes `N1·N2·N3`.
    pub fn num_modes(&self) -> usize {
        self.n.iter().product()
    }

    /// Total number of fine grid points `nf1·nf2·nf3`.
    pub fn fine_total(&self) -> usize {
        self.nf.iter().product()
    }

    /// Kernel width w in grid points.
    pub fn width(&self) -> usize {
        self.kernel.width()
    }

    /// For output index `i` of axis `d` (in the plan's mode order): the index of its mode `k`
    /// on the fine grid, `k mod nf_d`.
    pub fn fine_index(&self, d: usize, i: usize) -> usize {
        mode_of(i, self.n[d], self.modeord).rem_euclid(self.nf[d] as i64) as usize
    }

    /// The deconvolution factors by frequency (Barnett et al. 2019 eq. 2.4): per axis `d < 3`,
    /// `1/ψ̂(k)` for `k = 0 … N_d/2` with ψ̂ the kernel's Fourier series on the fine grid
    /// ([`Kernel::try_fourier_series_on`], on `threads`, the same values on any number of
    /// threads); `[1.0]` for unused axes. Output index `i` takes entry `|k_i|` ([`mode_of`]);
    /// the GPU deconvolution uploads these tables. Cost O(Σ N_d·w); errors: [`Error::Alloc`].
    pub fn inverse_series(&self, threads: &crate::threads::Threads) -> Result<[Vec<f64>; 3]> {
        let mut out: [Vec<f64>; 3] = Default::default();
        for d in 0..3 {
            out[d] = if d >= self.dim {
                vec![1.0]
            } else {
                let mut v = self.kernel.try_fourier_series_on(self.nf[d], self.n[d] / 2, threads)?;
                v.iter_mut().for_each(|p| *p = 1.0 / *p);
                v
            };
        }
        Ok(out)
    }

    /// The deconvolution factors per output index: per axis `d < 3` and index `i < N_d` (in the
    /// plan's mode order), `1/ψ̂(k_i)` from [`NufftParams::inverse_series`]; `[1.0]` for unused
    /// axes. Errors: [`Error::Alloc`].
    pub fn deconv_factors(&self, threads: &crate::threads::Threads) -> Result<[Vec<f64>; 3]> {
        let mut out = self.inverse_series(threads)?;
        for d in 0..self.dim {
            let mut v = crate::error::try_vec(self.n[d], "NUFFT deconvolution factors")?;
            v.extend((0..self.n[d]).map(|i| out[d][mode_of(i, self.n[d], self.modeord).unsigned_abs() as usize]));
            out[d] = v;
        }
        Ok(out)
    }

    /// The factor `1/ψ̂(k_i)` of output index `i` of axis `d`, from `phihat` = the kernel's
    /// Fourier series `ψ̂(0 … N_d/2)` on that axis's fine grid.
    pub fn deconv_factor(&self, d: usize, i: usize, phihat: &[f64]) -> f64 {
        1.0 / phihat[mode_of(i, self.n[d], self.modeord).unsigned_abs() as usize]
    }

    /// A one-line description for `opts.debug` prints.
    pub fn describe(&self, nthreads: usize) -> String {
        let clamp = if self.warnings & FARFIELD_WARN_TOL_CLAMPED == 0 {
            String::new()
        } else {
            format!(" [warning: tol {:e} clamped to {:e}: below what {} reaches for these modes (predicted; \
                     docs/design.md §9.5)]", self.tol, self.tol_used, self.precision.name())
        };
        format!("type {} dim {} modes {:?} ntrans {} tol {:e} (used {:e}) sigma {:e} kernel {:?} w {} nf {:?} backend {:?} threads {}{clamp}",
                self.ty, self.dim, &self.n[..self.dim], self.ntrans, self.tol, self.tol_used, self.sigma, self.kernel.family(),
                self.width(), &self.nf[..self.dim], self.backend, nthreads)
    }
}

/// σ, the kernel, the tolerance used and the warnings for a validated tolerance (the part of
/// [`NufftParams::new`] that type 3 shares: it calls this with the modes of its inner grid).
///
/// * ES with automatic σ: σ and w from the cost model ([`auto_sigma_width`]) for `m` points
///   (`None`: as many points as modes, `N1·N2·N3`), β from the ES table;
/// * ES with `opts.upsampfac` set: that σ and the narrowest width whose predicted error, the
///   kernel's estimate plus the rounding floor of `precision` ([`es_width_for`]), meets `tol`
///   — or, when none does, the narrowest within [`UNREACHABLE_TOL_SLACK`] of the least;
/// * Gaussian: σ = `opts.upsampfac` or 2 and its width rule.
///
/// A tolerance below what the precision reaches ([`Precision::min_tol`]), or below the
/// predicted error of the chosen kernel (ES), or of the widest kernel at σ (Gaussian), is
/// raised to it ([`FARFIELD_WARN_TOL_CLAMPED`]).
pub fn choose_kernel(tol: f64, precision: Precision, dim: usize, n: [usize; 3], opts: &NufftOpts,
                     m: Option<usize>) -> (f64, Kernel, f64, i32) {
    let mut warnings = 0;
    let mut tol_used = tol;
    if tol < precision.min_tol() {
        tol_used = precision.min_tol();
        warnings |= FARFIELD_WARN_TOL_CLAMPED;
    }
    if opts.kernel == KernelKind::Es {
        let (sigma, w, predicted) = match opts.upsampfac {
            None => auto_sigma_width(tol_used, dim, n, m.unwrap_or_else(|| n.iter().product()), precision),
            Some(sigma) => {
                let (w, p) = es_width_for(tol_used, sigma, dim, Some(n), precision)
                    .unwrap_or((MAX_ES_WIDTH, EsParams::error_estimate_dim(MAX_ES_WIDTH, sigma, dim)));
                (sigma, w, p)
            }
        };
        if predicted > tol_used {
            tol_used = predicted;
            warnings |= FARFIELD_WARN_TOL_CLAMPED;
        }
        return (sigma, Kernel::Es(EsParams::with_shape(w, sigma, tol_used)), tol_used, warnings);
    }
    let sigma = opts.upsampfac.unwrap_or(2.0);
    // below σ = 2 the widest kernel may not reach tol: clamp to what it reaches
    let reachable = Kernel::achievable_tol_dim(opts.kernel, sigma, dim);
    if tol_used < reachable {
        tol_used = reachable;
        warnings |= FARFIELD_WARN_TOL_CLAMPED;
    }
    (sigma, Kernel::for_tolerance_dim(opts.kernel, tol_used, sigma, dim), tol_used, warnings)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::threads::Threads;

    #[test]
    fn same_choices_for_cpu_and_cuda() {
        for (ty, dim, modes, tol, prec) in [(1, 1, vec![100i64], 1e-6, Precision::F64), (2, 3, vec![128, 128, 128], 1e-4, Precision::F64),
                                            (1, 2, vec![1000, 1000], 1e-5, Precision::F32), (2, 2, vec![33, 20], 1e-20, Precision::F32)] {
            let o = NufftOpts::default();
            let a = NufftParams::new(ty, dim, &modes, 1, 2, tol, prec, &o, Backend::Cpu).unwrap();
            let b = NufftParams::new(ty, dim, &modes, 1, 2, tol, prec, &o, Backend::Cuda).unwrap();
            assert_eq!(a.backend, Backend::Cpu);
            assert_eq!(NufftParams { backend: Backend::Cpu, ..b.clone() }, a);
            assert_eq!((a.sigma, a.nf, a.width(), a.tol_used), (b.sigma, b.nf, b.width(), b.tol_used));
            let (one, two) = (Threads::new(1).unwrap(), Threads::new(2).unwrap());
            assert_eq!(a.deconv_factors(&one).unwrap(), b.deconv_factors(&two).unwrap());
        }
    }

    #[test]
    fn choices_follow_the_rules() {
        let o = NufftOpts::default();
        let p = NufftParams::new(1, 3, &[128, 128, 128], 1, 1, 1e-6, Precision::F64, &o, Backend::Cpu).unwrap();
        // the cost model's choice: σ on the table's grid, the narrowest width meeting tol there
        assert!((1.2..=2.5).contains(&p.sigma), "σ {}", p.sigma);
        assert!(es_total_error(p.width(), p.sigma, 3, Some([128; 3]), Precision::F64).unwrap() <= 1e-6);
        assert!(es_total_error(p.width() - 1, p.sigma, 3, Some([128; 3]), Precision::F64).unwrap() > 1e-6);
        assert_eq!(p.kernel, Kernel::Es(EsParams::with_shape(p.width(), p.sigma, 1e-6)));
        assert!(p.nf.iter().all(|&v| v as f64 >= p.sigma * 128.0 && v % 2 == 0));
        // upsampfac given: that σ, the width rule at it
        let o2 = NufftOpts { upsampfac: Some(1.25), ..o.clone() };
        let p = NufftParams::new(1, 3, &[128, 128, 128], 1, 1, 1e-6, Precision::F64, &o2, Backend::Cpu).unwrap();
        assert_eq!((p.sigma, p.nf), (1.25, [160, 160, 160]));
        assert_eq!(p.kernel, Kernel::for_tolerance_dim(KernelKind::Es, 1e-6, 1.25, 3));
        // the Gaussian keeps σ = 2
        let og = NufftOpts { kernel: KernelKind::Gaussian, ..o.clone() };
        let p = NufftParams::new(1, 2, &[100, 100], 1, 1, 1e-6, Precision::F64, &og, Backend::Cpu).unwrap();
        assert_eq!((p.sigma, p.nf), (2.0, [200, 200, 1]));
        let p = NufftParams::new(1, 1, &[100], -1, 1, 1e-20, Precision::F32, &o, Backend::Cpu).unwrap();
        assert_eq!((p.sign, p.tol_used, p.warnings), (-1, f32::MIN_TOL, FARFIELD_WARN_TOL_CLAMPED));
        assert_eq!(p.nf[1..], [1, 1]);
        // deconvolution factors: 1/ψ̂ at the modes in order, ψ̂ decreasing from k = 0
        let f = p.deconv_factors(&Threads::new(1).unwrap()).unwrap();
        assert_eq!((f[0].len(), f[1].as_slice()), (100, &[1.0][..]));
        let phihat = p.kernel.fourier_series(p.nf[0], 50);
        assert_eq!(f[0][50], 1.0 / phihat[0]);
        assert_eq!(f[0][0], 1.0 / phihat[50]);
        assert_eq!((p.fine_index(0, 0), p.fine_index(0, 50)), (p.nf[0] - 50, 0));
        // below what any σ reaches in f64: clamped to the prediction (estimate plus rounding
        // floor) of the cheapest kernel within the slack of the least over every σ and width
        let p = NufftParams::new(1, 3, &[16, 16, 16], 1, 1, 1e-15, Precision::F64, &o, Backend::Cpu).unwrap();
        assert_eq!(p.warnings, FARFIELD_WARN_TOL_CLAMPED);
        assert_eq!(p.tol_used, es_total_error(p.width(), p.sigma, 3, Some([16, 16, 16]), Precision::F64).unwrap());
        let all = (0..TABLE_NSIGMA).flat_map(|i| (TABLE_W0..=MAX_ES_WIDTH).map(move |w| (table_sigma(i), w)));
        let least = all.clone().map(|(s, w)| es_total_error(w, s, 3, Some([16; 3]), Precision::F64).unwrap()).fold(1.0, f64::min);
        assert!(p.tol_used <= least * UNREACHABLE_TOL_SLACK && p.tol_used >= least, "{:e} vs least {least:e}", p.tol_used);
        let time = |s: f64, w: usize| COST_MODEL.time(16 * 16 * 16, 3, w, fine_grid(3, [16; 3], s, w).unwrap());
        for (s, w) in all {
            if es_total_error(w, s, 3, Some([16; 3]), Precision::F64).unwrap() <= least * UNREACHABLE_TOL_SLACK {
                assert!(time(p.sigma, p.width()) <= time(s, w) * (1.0 + 1e-9), "σ {s} w {w} is cheaper");
            }
        }
        assert!(matches!(NufftParams::new(3, 1, &[10], 1, 1, 1e-6, Precision::F64, &o, Backend::Cpu), Err(Error::NotSupported(_))));
        let bad = NufftOpts { upsampfac: Some(1.0), ..o.clone() };
        assert!(matches!(NufftParams::new(1, 1, &[10], 1, 1, 1e-6, Precision::F64, &bad, Backend::Cpu), Err(Error::InvalidArg(_))));
        let bad = NufftOpts { fftw: 2, ..o };
        assert!(matches!(NufftParams::new(1, 1, &[10], 1, 1, 1e-6, Precision::F64, &bad, Backend::Cpu), Err(Error::InvalidArg(_))));
    }

    /// The choice is the minimum of the modelled time over every (σ of the table, width
    /// meeting tol), recomputed here by brute force, and respects the memory bound; the
    /// choices for the benchmark cases (M = 10⁷) are printed (docs/design.md §9.1).
    #[test]
    fn cost_model_choice_is_the_minimum() {
        let cases: [(usize, [usize; 3]); 3] = [(1, [1_000_000, 1, 1]), (2, [1000, 1000, 1]), (3, [128, 128, 128])];
        for (dim, n) in cases {
            for tol in [1e-3, 1e-6, 1e-9, 1e-12] {
                for m in [10_000_000usize, n.iter().product(), 1000] {
                    let (sigma, w, est) = auto_sigma_width(tol, dim, n, m, Precision::F64);
                    let nf = fine_grid(dim, n, sigma, w).unwrap();
                    let t = COST_MODEL.time(m, dim, w, nf);
                    assert!(est <= tol && Some(est) == es_total_error(w, sigma, dim, Some(n), Precision::F64));
                    let total: usize = nf.iter().product();
                    let bound = (2.5f64.powi(dim as i32) * n.iter().product::<usize>() as f64 * 1.1) as usize;
                    assert!(total <= bound, "grid {nf:?} above 2.5^d·N");
                    let mut cands = 0;
                    for i in 0..TABLE_NSIGMA {
                        let s = table_sigma(i);
                        for ww in 2..=16 {
                            if es_total_error(ww, s, dim, Some(n), Precision::F64).unwrap() <= tol {
                                let tt = COST_MODEL.time(m, dim, ww, fine_grid(dim, n, s, ww).unwrap());
                                assert!(t <= tt * (1.0 + 1e-9), "dim {dim} tol {tol} m {m}: chose σ {sigma} w {w} ({t:e} s) but σ {s} w {ww} costs {tt:e} s");
                                cands += 1;
                                break;
                            }
                        }
                    }
                    assert!(cands > 0);
                    if m == 10_000_000 {
                        eprintln!("dim {dim} tol {tol:e} M 1e7: σ {sigma:.2} w {w} (β, e) {:.3?} nf {:?} est {est:.2e} modelled {t:.3} s",
                                  EsParams::shape_for(w, sigma), &nf[..dim]);
                    }
                }
            }
        }
    }

    /// The single-precision floor: the amplification grows as σ falls and w grows, the choice
    /// at a given σ stops widening where the floor overtakes the kernel's error, and a tolerance
    /// below the least predicted error is clamped with the warning.
    #[test]
    fn rounding_floor_bounds_the_width() {
        let a = |w: usize, s: f64| amplification(&Kernel::Es(EsParams::with_shape(w, s, 0.0)), s);
        assert!(a(8, 2.0) < 2.0 && a(10, 1.25) > 10.0 && a(16, 1.25) > a(10, 1.25));
        let o = NufftOpts { upsampfac: Some(1.25), ..NufftOpts::default() };
        let p = NufftParams::new(1, 2, &[64, 64], 1, 1, 1e-7, Precision::F32, &o, Backend::Cpu).unwrap();
        assert_eq!(p.warnings, FARFIELD_WARN_TOL_CLAMPED);
        assert!(p.width() < 12 && p.tol_used > 1e-6, "w {} tol_used {:e}", p.width(), p.tol_used);
        // the narrowest width within the slack of the least predicted error at σ
        let e = |w: usize| es_total_error(w, 1.25, 2, Some([64, 64, 1]), Precision::F32).unwrap();
        let least = (TABLE_W0..=MAX_ES_WIDTH).map(e).fold(1.0, f64::min);
        assert_eq!(p.tol_used, e(p.width()));
        assert!(p.tol_used <= least * UNREACHABLE_TOL_SLACK && e(p.width() - 1) > least * UNREACHABLE_TOL_SLACK);
        // the same request in double precision is met without a clamp
        let q = NufftParams::new(1, 2, &[64, 64], 1, 1, 1e-7, Precision::F64, &o, Backend::Cpu).unwrap();
        assert_eq!((q.warnings, q.tol_used), (0, 1e-7));
        // automatic σ in single precision: 1e-5 is met on a 64² grid; 1e-6 is below the floor of
        // its 2D grid coordinates (about 3e-6, docs/design.md §9.5) and clamped to it
        let auto = NufftOpts::default();
        let r = NufftParams::new(1, 2, &[64, 64], 1, 1, 1e-5, Precision::F32, &auto, Backend::Cpu).unwrap();
        assert_eq!((r.warnings, r.tol_used), (0, 1e-5));
        let r = NufftParams::new(1, 2, &[64, 64], 1, 1, 1e-6, Precision::F32, &auto, Backend::Cpu).unwrap();
        assert!(r.warnings == FARFIELD_WARN_TOL_CLAMPED && r.tol_used < 5e-6, "{:e}", r.tol_used);
        // 3D, 32³ modes, 1e-6 (mri-nufft's request): the least predicted error is w = 9 at
        // σ = 1.85 (1.72e-6); within the slack w = 8 at σ = 1.75 (2.00e-6) costs less
        let r = NufftParams::new(1, 3, &[32, 32, 32], 1, 1, 1e-6, Precision::F32, &auto, Backend::Cpu).unwrap();
        assert!(r.warnings == FARFIELD_WARN_TOL_CLAMPED && r.width() < 9 && r.tol_used < 2.2e-6, "w {} {:e}", r.width(), r.tol_used);
    }

    /// `with_points`: the same parameters when σ is given or the choice does not change, a
    /// re-chosen σ/w/grid (and the same everything else) when it does.
    #[test]
    fn with_points_rechooses_for_m() {
        let o = NufftOpts::default();
        let p = NufftParams::new(1, 3, &[64, 64, 64], 1, 2, 1e-9, Precision::F64, &o, Backend::Cpu).unwrap();
        assert_eq!(p.with_points(p.num_modes(), &o).unwrap(), p);
        let q = p.with_points(100_000_000, &o).unwrap();
        let (sigma, w, _) = auto_sigma_width(1e-9, 3, [64, 64, 64], 100_000_000, Precision::F64);
        assert_eq!((q.sigma, q.width(), q.nf), (sigma, w, fine_grid(3, [64, 64, 64], sigma, w).unwrap()));
        assert_eq!((q.ty, q.n, q.ntrans, q.tol, q.modeord), (p.ty, p.n, p.ntrans, p.tol, p.modeord));
        // many points make the kernel narrower (or no wider) at a larger (or equal) σ
        assert!(q.width() <= p.width() && q.sigma >= p.sigma, "{} {} vs {} {}", q.sigma, q.width(), p.sigma, p.width());
        let few = p.with_points(10, &o).unwrap();
        assert!(few.fine_total() <= p.fine_total());
        let given = NufftOpts { upsampfac: Some(2.0), ..o };
        let p = NufftParams::new(1, 3, &[64, 64, 64], 1, 2, 1e-9, Precision::F64, &given, Backend::Cpu).unwrap();
        assert_eq!(p.with_points(100_000_000, &given).unwrap(), p);
    }
}
