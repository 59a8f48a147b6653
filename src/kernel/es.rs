//! Exponential-of-semicircle ("ES") kernel, Barnett–Magland–af Klinteberg 2019 (SIAM J. Sci.
//! Comput. 41, C479), eq. (1.8): `φ(z) = exp(β(√(1 − z²) − 1))` on `|z| ≤ 1`, used as
//! `ψ(x) = φ(2x/w)` with `x` in grid units and width `w`, here with the semicircle raised to a
//! fitted exponent: `φ(z) = exp(β((1 − z²)^e − 1))` (e = ½ is the ES kernel).
//!
//! Shape from the aliasing-error model ([`aliasing_error`], docs/design.md §9.1): for every
//! width w = 2 … 16 and σ = 1.20 … 2.50 the table [`table::ES_TABLE`] holds the (β, e) that
//! minimise the model and the error reached. Fitting e as well as β lowers the model error by
//! 2–4× at the same (w, σ) (e ≈ 0.51–0.53 for w ≥ 5; measured NUFFT errors fall by 1.7–2.7×,
//! docs/design.md §9.1), which the cost model turns into a smaller grid or a narrower kernel.
//! The width for a tolerance is the narrowest whose estimate ([`EsParams::error_estimate_dim`])
//! meets it. Below σ = 1.2 (outside the table) the classic rules hold: e = ½,
//! `β = 0.97π(1 − 1/(2σ))·w`, `ε ≈ e^{−πw√(1−1/σ)}`.
//!
//! The inner loops never call `exp`/`pow`: [`EsHorner`] holds, for each of the `w` kernel
//! pieces, a polynomial in the point's fractional offset fitted at plan time by Chebyshev
//! interpolation, with the degree increased until the fit error is below half the
//! tolerance (checked on a fine sample).
//!
//! The Fourier transform for deconvolution is computed by Gauss–Legendre quadrature
//! (paper §3.1, eq. 3.5), with the phases advanced by complex multiplication.

use super::{KernelEval, MAX_WIDTH};
use crate::real::Real;
use crate::memo::Memo;

#[path = "es_table.rs"]
pub mod table;

/// The factor from the model error [`aliasing_error`] (max over ξ of the per-frequency RMS
/// aliasing error) to the measured relative l2 error of a NUFFT of types 1 and 2 in dimension
/// `dim` (1–3; others are treated as 3): 0.95, 1.3, 1.4. Calibrated by
/// `python3 benches/calibrate_es_safety.py` (`farfield bench nufft --type 1|2 --points 1e6
/// --upsampfac S --tol T --check 100` for 1D N = 10⁶, 2D 1000², 3D 128³, S ∈ {1.25, 1.5, 2,
/// 2.5}, T ∈ {1e-3, 1e-6, 1e-9, 1e-12}; 96 runs) with the fitted kernels of the table:
/// measured ÷ model was 0.18–0.91 in 1D (median 0.52), 0.24–1.26 in 2D (0.70), 0.43–1.37 in
/// 3D (0.86), leaving out the 1D runs at 1e-12, whose error (6e-11 at N = 10⁶ for every kernel)
/// is the rounding of the phases `k·x` (about ε_mach·N), and one 3D type-1 run at σ = 1.25
/// with w = 16, the widest kernel on the coarsest grid, which measured 2.9e-9 against the
/// model's 6.1e-10 (4.8×; the ES kernel of β alone measured 5.3e-9 there). The fitted kernels
/// spread their error evenly over the frequencies, so the measured RMS error is closer to the
/// model's maximum than with the ES kernel (0.75, 1.0, 1.3 before; docs/design.md §9.1).
pub fn safety_factor(dim: usize) -> f64 {
    match dim {
        0 | 1 => 0.95,
        2 => 1.3,
        _ => 1.4,
    }
}

/// Largest ES width (the width for ε ≈ 1e-15 at σ = 2).
pub const MAX_ES_WIDTH: usize = 16;

/// ES kernel parameters.
#[derive(Debug, Clone, PartialEq)]
pub struct EsParams {
    /// Width in grid points.
    pub w: usize,
    /// Shape parameter β.
    pub beta: f64,
    /// Exponent `e` of the semicircle, `φ(z) = exp(β((1 − z²)^e − 1))`: 0.5 is the ES kernel of
    /// Barnett et al.; the table's fitted values lie in about [0.50, 0.53] (module docs).
    pub e: f64,
    /// Requested tolerance the parameters were chosen for.
    pub tol: f64,
}

impl EsParams {
    /// Parameters for tolerance `tol` and upsampling factor `sigma` in one dimension:
    /// [`EsParams::for_tolerance_dim`] with `dim = 1`.
    pub fn for_tolerance(tol: f64, sigma: f64) -> EsParams {
        Self::for_tolerance_dim(tol, sigma, 1)
    }

    /// Parameters for tolerance `tol` (relative l2 error of a NUFFT in dimension `dim`, 1–3)
    /// and upsampling factor `sigma > 1`: the smallest width `w ∈ 2 … 16` whose estimate
    /// [`EsParams::error_estimate_dim`] is ≤ `tol` (16 if none is), with the β of the table
    /// [`table::ES_TABLE`] at that width (interpolated in σ, [`table_lookup`]); for σ < 1.2,
    /// below the table, β = 0.97π(1 − 1/(2σ))·w (Barnett et al. 2019 §4).
    pub fn for_tolerance_dim(tol: f64, sigma: f64, dim: usize) -> EsParams {
        let mut w = MAX_ES_WIDTH;
        for cand in TABLE_W0..=MAX_ES_WIDTH {
            if Self::error_estimate_dim(cand, sigma, dim) <= tol {
                w = cand;
                break;
            }
        }
        Self::with_shape(w, sigma, tol)
    }

    /// The parameters of width `w` at factor `sigma` for tolerance `tol`: β and the exponent `e`
    /// from [`EsParams::shape_for`].
    pub fn with_shape(w: usize, sigma: f64, tol: f64) -> EsParams {
        let (beta, e) = Self::shape_for(w, sigma);
        EsParams { w, beta, e, tol }
    }

    /// (β, e) for width `w` at factor `sigma`: the table's fitted values ([`table_lookup`]) for
    /// σ ≥ 1.2; below, the classic ES kernel (e = ½) with β = 0.97π(1 − 1/(2σ))·w.
    pub fn shape_for(w: usize, sigma: f64) -> (f64, f64) {
        if sigma < TABLE_SIGMA0 {
            (0.97 * std::f64::consts::PI * (1.0 - 1.0 / (2.0 * sigma)) * w as f64, 0.5)
        } else {
            let (beta, e, _) = table_lookup(w, sigma);
            (beta, e)
        }
    }

    /// The estimated relative l2 error of a one-dimensional NUFFT with width `w` at factor
    /// `sigma`: [`EsParams::error_estimate_dim`] with `dim = 1`.
    pub fn error_estimate(w: usize, sigma: f64) -> f64 {
        Self::error_estimate_dim(w, sigma, 1)
    }

    /// The estimated relative l2 error of a NUFFT (types 1 and 2) in dimension `dim` with the
    /// kernel of width `w` and the table's β at factor `sigma`: [`safety_factor`]`(dim)` times
    /// the model error [`aliasing_error`] from the table (σ ≥ 1.2, [`table_lookup`]), or
    /// times `exp(−π w √(1 − 1/σ))` (Barnett et al. 2019 §4) for σ < 1.2; at least
    /// `safety_factor(dim)·`[`ALIAS_FLOOR`].
    pub fn error_estimate_dim(w: usize, sigma: f64, dim: usize) -> f64 {
        let e = if sigma < TABLE_SIGMA0 {
            (-std::f64::consts::PI * w as f64 * (1.0 - 1.0 / sigma).sqrt()).exp()
        } else {
            table_lookup(w, sigma).2
        };
        safety_factor(dim) * e.max(ALIAS_FLOOR)
    }

    /// `φ(z) = exp(β((1 − z²)^e − 1))` for the normalised argument `z ∈ [−1, 1]`, else 0.
    pub fn phi(&self, z: f64) -> f64 {
        if z.abs() >= 1.0 {
            0.0
        } else {
            let u = (1.0 - z) * (1.0 + z);
            let p = if self.e == 0.5 { u.sqrt() } else { u.powf(self.e) };
            (self.beta * (p - 1.0)).exp()
        }
    }

    /// `ψ(x) = φ(2x/w)`, `x` in grid units.
    pub fn value(&self, x: f64) -> f64 {
        self.phi(2.0 * x / self.w as f64)
    }

    /// `ψ̂(k) = (w/2) ∫_{−1}^{1} φ(z) cos(π k w z / nf) dz` for `k = 0 … kmax`, by
    /// Gauss–Legendre quadrature with `q = 2w + 16` nodes on `[0, 1]` (the integrand is even):
    /// [`EsParams::fourier_series_range`] over the whole range.
    /// Errors: [`crate::Error::Alloc`] (the `kmax + 1` outputs).
    pub fn fourier_series(&self, nf: usize, kmax: usize) -> crate::Result<Vec<f64>> {
        let mut out = crate::error::try_zeroed_vec(kmax.saturating_add(1), "kernel Fourier series")?;
        self.fourier_series_range(nf, 0, &mut out);
        Ok(out)
    }

    /// `ψ̂(k)` (as [`EsParams::fourier_series`]) for `k = k0 … k0 + out.len() − 1` into `out`.
    /// The sums over the nodes run as [`fourier_sums`] (AVX2/FMA where the CPU has it); a
    /// range starting at a multiple of 128 gives the same values, bit for bit,
    /// as the whole series, so the series can be computed in parallel pieces.
    pub fn fourier_series_range(&self, nf: usize, k0: usize, out: &mut [f64]) {
        let q = 2 * self.w + 16;
        let (z, wz) = crate::quad::gauss_legendre(q, 0.0, 1.0);
        let f: Vec<f64> = (0..q).map(|i| self.w as f64 * wz[i] * self.phi(z[i])).collect();
        let theta: Vec<f64> = z.iter().map(|&zz| std::f64::consts::PI * self.w as f64 * zz / nf as f64).collect();
        #[cfg(target_arch = "x86_64")]
        if crate::simd::has_avx2_fma() {
            // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
            unsafe { fourier_sums_avx2(&f, &theta, k0, out) };
            return;
        }
        fourier_sums(&f, &theta, k0, out);
    }
}

/// [`fourier_sums`] recomputes its phases directly at every multiple of this `k`.
pub(crate) const FOURIER_RESTART: usize = 128;

/// [`fourier_sums`] compiled for AVX2 and FMA.
///
/// # Safety
/// The CPU must support AVX2 and FMA.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn fourier_sums_avx2(f: &[f64], theta: &[f64], k0: usize, out: &mut [f64]) {
    fourier_sums(f, theta, k0, out)
}

/// Writes `Σ_i f_i cos(θ_i k)` for `k = k0 … k0 + out.len() − 1` to `out`: the phases
/// `e^{iθ_i k}` advance by one complex multiplication per step, held as separate real and
/// imaginary arrays (the loops over the nodes vectorise), and are recomputed directly at `k0`
/// and at every multiple of [`FOURIER_RESTART`] (128) (round-off stays at machine precision).
#[inline(always)]
fn fourier_sums(f: &[f64], theta: &[f64], k0: usize, out: &mut [f64]) {
    let q = f.len();
    let (mut sr, mut si) = (vec![0.0; q], vec![0.0; q]);
    for i in 0..q {
        (si[i], sr[i]) = theta[i].sin_cos();
    }
    let (mut cr, mut ci) = (vec![0.0; q], vec![0.0; q]);
    for (j, o) in out.iter_mut().enumerate() {
        let k = k0 + j;
        if j == 0 || k.is_multiple_of(FOURIER_RESTART) {
            for i in 0..q {
                (ci[i], cr[i]) = (theta[i] * k as f64).sin_cos();
            }
        }
        // four partial sums: the loop vectorises without reassociating one sum
        let mut acc = [0.0; 4];
        let (fc, cc) = (f.chunks_exact(4), cr.chunks_exact(4));
        let (fr, crr) = (fc.remainder(), cc.remainder());
        for (a, b) in fc.zip(cc) {
            for j in 0..4 {
                acc[j] += a[j] * b[j];
            }
        }
        for (a, b) in fr.iter().zip(crr) {
            acc[0] += a * b;
        }
        *o = (acc[0] + acc[1]) + (acc[2] + acc[3]);
        for i in 0..q {
            let (a, b) = (cr[i], ci[i]);
            cr[i] = a * sr[i] - b * si[i];
            ci[i] = a * si[i] + b * sr[i];
        }
    }
}

/// Piecewise-polynomial (Horner) evaluator of the ES kernel in precision `T`.
///
/// `coeffs[m * WP + j]` is the coefficient of `s^(deg − m)` of piece `j`, where
/// `s = 2(t + w/2) − 1 ∈ [−1, 1)` and `t` is the offset of [`KernelEval::eval`]; pieces past
/// `w` (up to the padded width `WP`) are zero so the loop vectorises.
///
/// The evaluation splits piece `j` into its even and odd parts in `s`,
/// `p_j(s) = E_j(s²) + s·O_j(s²)`: two independent Horner chains of half the degree, so a
/// point's evaluation waits on half as many dependent steps (in 1D, where it is most of the
/// work per point, f32 w = 8: interpolation 4.3 → 3.9 ms for 2·10⁵ points on one AVX2 core).
/// The first 8 pieces are `E + s·O`; for `w > 8` the kernel's symmetry (piece `w − 1 − j` at
/// `s` is piece `j` at `−s`) gives the last 8 (in reverse) as `E − s·O`, so 8 lanes serve 16
/// pieces.
#[derive(Debug, Clone)]
pub struct EsHorner<T: Real> {
    w: usize,
    deg: usize,
    coeffs: Vec<T>,
    /// Even parts of pieces 0–7: row `m` holds the coefficients of `(s²)^(de − m)`.
    even: Vec<[T; HALF]>,
    /// Odd parts of pieces 0–7: row `m` holds the coefficients of `(s²)^(do − m)`
    /// in `O_j` (`do = ⌊(deg − 1)/2⌋`, `de = ⌊deg/2⌋`: the row counts give the degrees,
    /// and `de − do` is 1 for an even `deg`, 0 for an odd one).
    odd: Vec<[T; HALF]>,
    /// Largest fit error measured at plan time (absolute; φ ≤ 1).
    pub fit_error: f64,
}

/// Pieces evaluated per chain (lanes of the even and odd parts).
const HALF: usize = 8;

/// Padded width of the Horner coefficient rows.
const WP: usize = MAX_ES_WIDTH;

impl<T: Real> EsHorner<T> {
    /// Fits the polynomials for `p`, increasing the degree from `w + 1` until the maximum error
    /// on a fine sample is below `max(tol/2, 4·eps_T)` (or degree 24 is reached).
    /// The fit is memoised per (w, β, e, target) ([`crate::memo`]): plans of the same kernel
    /// and tolerance share it.
    pub fn new(p: &EsParams) -> Self {
        type Fit = (usize, std::sync::Arc<Vec<f64>>, f64);
        static FITS: Memo<(usize, u64, u64, u64), Fit> = Memo::new(256);
        let target = (p.tol * 0.5).max(4.0 * T::EPS);
        let w = p.w;
        let (deg, c, err) = FITS.get_or((w, p.beta.to_bits(), p.e.to_bits(), target.to_bits()), || {
            let mut best: Option<(usize, Vec<f64>, f64)> = None;
            for deg in (w + 1).max(4)..=24 {
                let c = fit(p, deg);
                let err = fit_error(p, deg, &c);
                let better = best.as_ref().is_none_or(|b| err < b.2);
                if better {
                    best = Some((deg, c, err));
                }
                if err <= target {
                    break;
                }
            }
            let (deg, c, err) = best.expect("at least one degree tried");
            (deg, std::sync::Arc::new(c), err)
        });
        // a_{j,p} = c[(deg − p)·WP + j]: the even part takes p = 2i, the odd part p = 2i + 1
        // (deg ≥ 4, so both parts have at least two rows)
        let part = |first: usize, d: usize| -> Vec<[T; HALF]> {
            (0..=d).map(|m| std::array::from_fn(|j| T::of(c[(deg - first - 2 * (d - m)) * WP + j]))).collect()
        };
        let (even, odd) = (part(0, deg / 2), part(1, (deg - 1) / 2));
        EsHorner { w, deg, coeffs: c.iter().map(|&v| T::of(v)).collect(), even, odd, fit_error: err }
    }

    /// Polynomial degree used.
    pub fn degree(&self) -> usize {
        self.deg
    }

    /// The Horner coefficients, `(degree + 1)` rows of 16: `coeffs()[m * 16 + j]` is the
    /// coefficient of `s^(degree − m)` of piece `j` (used by the GPU kernels, which evaluate
    /// the same polynomials).
    pub fn coeffs(&self) -> &[T] {
        &self.coeffs
    }

    /// The pieces' polynomials at the `N` offsets `t` (into `out[i]`) by the even/odd
    /// evaluation of the struct docs (`FUSED`: with `mul_add`). The `2N` Horner chains (even
    /// and odd part of every point) step in one loop: independent, the CPU overlaps them, where
    /// one chain alone waits on each step's latency.
    #[inline(always)]
    fn horner<const N: usize, const FUSED: bool>(&self, t: [T; N], out: &mut [[T; MAX_WIDTH]; N]) {
        let half = T::of(0.5 * self.w as f64);
        // plain loops, no array `map` or `from_fn` (which can stay out-of-line calls compiled
        // without the caller's target features: `mul_add` a libm call there)
        let mut s = t;
        let mut u = t;
        for i in 0..N {
            s[i] = (t[i] + half) * T::of(2.0) - T::one();
            u[i] = s[i] * s[i];
        }
        let step = |a: T, x: T, c: T| if FUSED { a.mul_add(x, c) } else { a * x + c };
        // the even part's extra leading step (even degree), then both parts together
        let lead = self.even.len() - self.odd.len();
        let mut e = [self.even[0]; N];
        if lead == 1 {
            let row = &self.even[1];
            for i in 0..N {
                for j in 0..HALF {
                    e[i][j] = step(e[i][j], u[i], row[j]);
                }
            }
        }
        let mut o = [self.odd[0]; N];
        for (re, ro) in self.even[1 + lead..].iter().zip(&self.odd[1..]) {
            for i in 0..N {
                for j in 0..HALF {
                    e[i][j] = step(e[i][j], u[i], re[j]);
                    o[i][j] = step(o[i][j], u[i], ro[j]);
                }
            }
        }
        for i in 0..N {
            let mut lo = [T::zero(); HALF];
            let mut hi = [T::zero(); HALF];
            for j in 0..HALF {
                let so = o[i][j] * s[i];
                lo[j] = e[i][j] + so;
                hi[HALF - 1 - j] = e[i][j] - so;
            }
            // pieces 0–7, then w−8 … w−1 (pieces 7 … 0 at −s); the two overlap when w < 16
            out[i][..HALF].copy_from_slice(&lo);
            if self.w > HALF {
                out[i][self.w - HALF..self.w].copy_from_slice(&hi);
            }
        }
    }
}

/// Chebyshev interpolation of each piece at `deg + 1` nodes, converted to monomials in `s`.
fn fit(p: &EsParams, deg: usize) -> Vec<f64> {
    let n = deg + 1;
    let w = p.w;
    let mut coeffs = vec![0.0; n * WP];
    // monomial coefficients of T_0..T_deg (low power first)
    let mut cheb: Vec<Vec<f64>> = vec![vec![0.0; n]; n];
    cheb[0][0] = 1.0;
    if n > 1 {
        cheb[1][1] = 1.0;
    }
    for m in 2..n {
        for i in 0..n {
            let up = if i > 0 { 2.0 * cheb[m - 1][i - 1] } else { 0.0 };
            cheb[m][i] = up - cheb[m - 2][i];
        }
    }
    let nodes: Vec<f64> = (0..n).map(|i| (std::f64::consts::PI * (i as f64 + 0.5) / n as f64).cos()).collect();
    for j in 0..w {
        let vals: Vec<f64> = nodes.iter().map(|&s| piece(p, j, s)).collect();
        // Chebyshev coefficients a_m = (2/n) Σ_i f(s_i) T_m(s_i) (a_0 halved)
        let mut mono = vec![0.0; n];
        for m in 0..n {
            let mut a = 0.0;
            for i in 0..n {
                a += vals[i] * (m as f64 * (std::f64::consts::PI * (i as f64 + 0.5) / n as f64)).cos();
            }
            a *= 2.0 / n as f64;
            if m == 0 {
                a *= 0.5;
            }
            for i in 0..n {
                mono[i] += a * cheb[m][i];
            }
        }
        for pw in 0..n {
            // row m holds power deg - m
            coeffs[(deg - pw) * WP + j] = mono[pw];
        }
    }
    coeffs
}

/// Piece `j` as a function of `s ∈ [−1, 1]`: ψ(t + j) with `t = (s + 1)/2 − w/2`.
fn piece(p: &EsParams, j: usize, s: f64) -> f64 {
    let t = 0.5 * (s + 1.0) - 0.5 * p.w as f64;
    p.value(t + j as f64)
}

fn fit_error(p: &EsParams, deg: usize, c: &[f64]) -> f64 {
    let mut err: f64 = 0.0;
    let ns = 400;
    for i in 0..=ns {
        let s = -1.0 + 2.0 * i as f64 / ns as f64;
        for j in 0..p.w {
            let mut v = 0.0;
            for m in 0..=deg {
                v = v * s + c[m * WP + j];
            }
            err = err.max((v - piece(p, j, s)).abs());
        }
    }
    err
}


impl<T: Real> KernelEval<T> for EsHorner<T> {
    #[inline(always)]
    fn width(&self) -> usize {
        self.w
    }
    #[inline(always)]
    fn eval(&self, t: T, out: &mut [T; MAX_WIDTH]) {
        self.horner::<1, false>([t], std::array::from_mut(out))
    }
    #[inline(always)]
    fn eval_fused(&self, t: T, out: &mut [T; MAX_WIDTH]) {
        self.horner::<1, true>([t], std::array::from_mut(out))
    }
    /// The points' chains interleaved, at every width (with the even and odd parts in
    /// separate loops, LLVM gave up vectorising interleaved chains for `w > 8`, whose second
    /// half of the pieces is written at a run-time offset; stepped in one loop they vectorise:
    /// 1D f64 w = 13, M = 4·10⁶, one thread: interpolation 0.176 → 0.155 s).
    #[inline(always)]
    fn eval_fused_n<const N: usize>(&self, t: [T; N], out: &mut [[T; MAX_WIDTH]; N]) {
        self.horner::<N, true>(t, out)
    }
}

// ---------------------------------------------------------------------------------------------
// Aliasing-error model and the fitted (w, σ) → β table
// ---------------------------------------------------------------------------------------------

/// Samples of ξ on `[0, 1/(2σ)]` in [`aliasing_error`] (ends included).
pub const ALIAS_XI_SAMPLES: usize = 385;
/// Samples of ξ in the shape search ([`AliasModel::best_shape`]); the error of the fitted shape
/// is then evaluated with [`ALIAS_XI_SAMPLES`]. The fitted kernels spread their error evenly
/// over ξ, so the maximum between coarse samples is up to 11 % above the coarse maximum: the
/// recorded errors use the finer sampling, which the test `alias_sum_converges` shows converged.
pub const FIT_XI_SAMPLES: usize = 97;
/// Aliases `m = −K … K` (m ≠ 0) summed in [`aliasing_error`]; the sum's truncation changes the
/// error by less than 1 % of itself (test `kernel::es::tests::alias_sum_converges`).
pub const ALIAS_TERMS: usize = 16;
/// Nodes per panel of the composite Gauss–Legendre rule of the error model.
const ALIAS_PANEL_NODES: usize = 24;
/// Smallest error the model resolves: below it, the rounding of the quadrature (sums of terms of
/// size ψ̂(0) that cancel to ψ̂(ξ+m)) dominates; tabulated errors are clamped to it.
pub const ALIAS_FLOOR: f64 = 1e-15;

/// The kernel's aliasing error at one (w, σ) as a function of the shape (β, e): the quadrature
/// of `ψ̂(η) = (w/2)∫_{−1}^{1} φ(z) cos(π η w z) dz` at every `η = ξ + m` of the model, with
/// `z = sin θ` (which removes the square-root singularity of φ at `|z| = 1`, so the integrand
/// is analytic in θ for e = ½ and nearly so for the fitted e), written as a matrix
/// `ψ̂(η_r) = Σ_i C[r][i]·e^{β(cos^{2e} θ_i − 1)}` that does not depend on the shape. Nodes:
/// composite Gauss–Legendre, [`ALIAS_PANEL_NODES`] per panel, the panel count growing with the
/// largest phase `π w (K + ½)`.
pub struct AliasModel {
    /// `ln cos θ_i` at the nodes (`cos^{2e} θ = e^{2e·ln cos θ}`).
    lcos: Vec<f64>,
    /// Rows `r = j·(2K + 1) + (m + K)` (ξ sample j, alias m), each of `lcos.len()` entries.
    c: Vec<f64>,
    nxi: usize,
    k: usize,
}

impl AliasModel {
    /// The model for width `w`, factor `sigma`, `nxi` samples of ξ and aliases `|m| ≤ k`.
    /// Cost O(nxi·k²·w) cosines.
    pub fn new(w: usize, sigma: f64, nxi: usize, k: usize) -> AliasModel {
        let amax = std::f64::consts::PI * w as f64 * (k as f64 + 0.5);
        let panels = (0.05 * amax) as usize + 2;
        let mut th = Vec::new();
        let mut wt = Vec::new();
        let h = 0.5 * std::f64::consts::PI / panels as f64;
        for p in 0..panels {
            let (t, ww) = crate::quad::gauss_legendre(ALIAS_PANEL_NODES, p as f64 * h, (p + 1) as f64 * h);
            th.extend(t);
            wt.extend(ww);
        }
        let q = th.len();
        let s: Vec<f64> = th.iter().map(|t| t.sin()).collect();
        // w·∫_0^{π/2} φ cos θ cos(π η w sin θ) dθ  (the integrand is even in z)
        let jac: Vec<f64> = th.iter().zip(&wt).map(|(t, ww)| w as f64 * ww * t.cos()).collect();
        let lcos = th.iter().map(|t| t.cos().ln()).collect();
        let nm = 2 * k + 1;
        let mut c = Vec::with_capacity(nxi * nm * q);
        for j in 0..nxi {
            let xi = if nxi > 1 { j as f64 / (nxi - 1) as f64 / (2.0 * sigma) } else { 1.0 / (2.0 * sigma) };
            for mi in 0..nm {
                let eta = xi + mi as f64 - k as f64;
                let a = std::f64::consts::PI * w as f64 * eta;
                c.extend((0..q).map(|i| jac[i] * (a * s[i]).cos()));
            }
        }
        AliasModel { lcos, c, nxi, k }
    }

    /// `max_ξ E(ξ)`, `E(ξ) = sqrt(Σ_{m≠0} ψ̂(ξ+m)²)/ψ̂(ξ)`, for the shape (`beta`, `e`).
    /// O(rows·nodes).
    pub fn error(&self, beta: f64, e: f64) -> f64 {
        let phi: Vec<f64> = self.lcos.iter().map(|&l| (beta * ((2.0 * e * l).exp() - 1.0)).exp()).collect();
        let q = phi.len();
        let nm = 2 * self.k + 1;
        let mut worst: f64 = 0.0;
        for j in 0..self.nxi {
            let mut alias = 0.0;
            let mut main = 0.0;
            for mi in 0..nm {
                let row = &self.c[(j * nm + mi) * q..(j * nm + mi + 1) * q];
                let v: f64 = row.iter().zip(&phi).map(|(a, b)| a * b).sum();
                if mi == self.k {
                    main = v;
                } else {
                    alias += v * v;
                }
            }
            worst = worst.max(alias.sqrt() / main);
        }
        worst
    }

    /// The β minimising [`AliasModel::error`] at exponent `e` and that error. The error is not
    /// unimodal in β (the maximum over ξ moves between samples), so a scan of `β/w ∈ [lo, hi]`
    /// in steps of 0.02 picks the best point and a golden-section search on `ln E` (30 steps)
    /// refines it within one step either side.
    pub fn best_beta(&self, w: usize, e: f64, lo: f64, hi: f64) -> (f64, f64) {
        let f = |b: f64| self.error(b * w as f64, e).max(1e-300).ln();
        let step = 0.02;
        let mut best = (lo, f64::INFINITY);
        let n = ((hi - lo) / step).round() as usize;
        for i in 0..=n {
            let b = lo + step * i as f64;
            let v = f(b);
            if v < best.1 {
                best = (b, v);
            }
        }
        let (bw, _) = golden_min(&f, (best.0 - step).max(lo), (best.0 + step).min(hi), 30, best);
        (bw * w as f64, self.error(bw * w as f64, e))
    }

    /// The shape (β, e) minimising [`AliasModel::error`] and that error: β for the ES kernel
    /// (e = ½) by [`AliasModel::best_beta`] over `β/w ∈ [1, 3.2]`, then a golden-section search
    /// over `e ∈ [0.45, 0.62]` (16 steps), each step with the best β within ±0.16·w of the ES
    /// one. Never worse than the ES kernel (it is kept when the search finds nothing better).
    pub fn best_shape(&self, w: usize) -> (f64, f64, f64) {
        let (b0, e0) = self.best_beta(w, 0.5, 1.0, 3.2);
        let r0 = b0 / w as f64;
        let (lo, hi) = ((r0 - 0.16).max(0.5), r0 + 0.16);
        let at = |e: f64| -> (f64, f64) { self.best_beta(w, e, lo, hi) };
        let g = |e: f64| at(e).1.max(1e-300).ln();
        let (e, v) = golden_min(&g, 0.45, 0.62, 16, (0.5, e0.max(1e-300).ln()));
        if v < e0.max(1e-300).ln() {
            let (beta, err) = at(e);
            if err < e0 {
                return (beta, e, err);
            }
        }
        (b0, 0.5, e0)
    }
}

/// Golden-section search for a minimum of `f` on `[a, b]` (`steps` steps); returns the better
/// of the bracket's midpoint and `fallback` (a point known before, with its value).
fn golden_min(f: &impl Fn(f64) -> f64, mut a: f64, mut b: f64, steps: usize, fallback: (f64, f64)) -> (f64, f64) {
    let g = 0.5 * (5f64.sqrt() - 1.0);
    let mut x1 = b - g * (b - a);
    let mut x2 = a + g * (b - a);
    let (mut f1, mut f2) = (f(x1), f(x2));
    for _ in 0..steps {
        if f1 <= f2 {
            b = x2;
            x2 = x1;
            f2 = f1;
            x1 = b - g * (b - a);
            f1 = f(x1);
        } else {
            a = x1;
            x1 = x2;
            f1 = f2;
            x2 = a + g * (b - a);
            f2 = f(x2);
        }
    }
    let mid = 0.5 * (a + b);
    let v = f(mid);
    if v <= fallback.1 {
        (mid, v)
    } else {
        fallback
    }
}

/// The RMS aliasing error of spreading/interpolation with the kernel of width `w` and shape
/// (`beta`, `e`) on a grid upsampled by `sigma`: `max_{ξ ∈ [0, 1/(2σ)]} E(ξ)` with
/// `E(ξ) = sqrt(Σ_{m≠0} ψ̂(ξ+m)²)/ψ̂(ξ)`, ξ in cycles per grid point (Barnett, Magland &
/// af Klinteberg 2019 §4; Arras, Reinecke, Westermann & Enßlin, A&A 646 (2021) A58).
/// [`ALIAS_XI_SAMPLES`] values of ξ, aliases `0 < |m| ≤` [`ALIAS_TERMS`], ψ̂ by the quadrature of
/// [`AliasModel`]. Values below [`ALIAS_FLOOR`] are rounding. Cost about 1e6 cosines (10 ms).
pub fn aliasing_error(w: usize, beta: f64, e: f64, sigma: f64) -> f64 {
    AliasModel::new(w, sigma, ALIAS_XI_SAMPLES, ALIAS_TERMS).error(beta, e)
}

/// First σ of the table [`table::ES_TABLE`].
pub const TABLE_SIGMA0: f64 = 1.20;
/// Step of σ in the table.
pub const TABLE_SIGMA_STEP: f64 = 0.05;
/// Number of σ values in the table (1.20 … 2.50).
pub const TABLE_NSIGMA: usize = 27;
/// Smallest width in the table (widths 2 … [`MAX_ES_WIDTH`]).
pub const TABLE_W0: usize = 2;

/// σ of table column `i`.
pub fn table_sigma(i: usize) -> f64 {
    TABLE_SIGMA0 + TABLE_SIGMA_STEP * i as f64
}

/// One entry `(β, e, E)` of [`table::ES_TABLE`] computed afresh for width `w` (2 … 16) and
/// factor `sigma` (a column's [`table_sigma`]): the shape (β, e) fitted by
/// [`AliasModel::best_shape`] on [`FIT_XI_SAMPLES`] values of ξ and its model error
/// [`aliasing_error`] on [`ALIAS_XI_SAMPLES`] (not yet clamped to [`ALIAS_FLOOR`], as the table
/// is). Cost: about a second of one core, more for wide kernels. The table's generator
/// (`cargo bench --bench es_table`) calls it for every entry; the unit tests recompute a sample.
pub fn fit_table_entry(w: usize, sigma: f64) -> (f64, f64, f64) {
    let (beta, e, _) = AliasModel::new(w, sigma, FIT_XI_SAMPLES, ALIAS_TERMS).best_shape(w);
    (beta, e, aliasing_error(w, beta, e, sigma))
}

/// (β, e, model error) at width `w` and σ from the table: σ is clamped to [1.20, 2.50] (for
/// σ > 2.5 the entry at 2.5 overstates the error, which only makes the choice safe), β and e
/// are interpolated linearly and ln E linearly between the two neighbouring columns.
pub fn table_lookup(w: usize, sigma: f64) -> (f64, f64, f64) {
    let w = w.clamp(TABLE_W0, MAX_ES_WIDTH);
    let row = &table::ES_TABLE[w - TABLE_W0];
    let u = ((sigma - TABLE_SIGMA0) / TABLE_SIGMA_STEP).clamp(0.0, (TABLE_NSIGMA - 1) as f64);
    let i = (u.floor() as usize).min(TABLE_NSIGMA - 2);
    let t = u - i as f64;
    let (b0, x0, e0) = row[i];
    let (b1, x1, e1) = row[i + 1];
    let beta = (1.0 - t) * b0 + t * b1;
    let e = (1.0 - t) * x0 + t * x1;
    let err = ((1.0 - t) * e0.ln() + t * e1.ln()).exp();
    (beta, e, err)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The truncation of the alias sum, the ξ sampling and the quadrature: three times as many
    /// aliases (which also means more quadrature panels) and twice as many ξ samples
    /// change the model error by less than 1 % (0.2 % and 0.3 % at w = 3, σ = 1.2, the worst
    /// case), wherever it is above the rounding floor.
    #[test]
    fn alias_sum_converges() {
        for &(w, sigma) in &[(3usize, 1.2), (7, 1.25), (12, 2.5), (16, 1.2)] {
            let (beta, x, _) = table_lookup(w, sigma);
            let e = AliasModel::new(w, sigma, ALIAS_XI_SAMPLES, ALIAS_TERMS).error(beta, x);
            let e_k = AliasModel::new(w, sigma, ALIAS_XI_SAMPLES, 3 * ALIAS_TERMS).error(beta, x);
            let e_xi = AliasModel::new(w, sigma, 2 * ALIAS_XI_SAMPLES - 1, ALIAS_TERMS).error(beta, x);
            eprintln!("w {w} σ {sigma}: E {e:.4e}, 3K {e_k:.4e}, 2x ξ {e_xi:.4e}");
            assert!(e > 1e-13 && e < 1.0, "w {w} σ {sigma}: {e}");
            assert!((e_k - e).abs() <= 1e-2 * e, "w {w} σ {sigma}: K {e} vs 3K {e_k}");
            assert!((e_xi - e).abs() <= 1e-2 * e, "w {w} σ {sigma}: ξ samples {e} vs {e_xi}");
        }
    }

    /// The model against an independent evaluation: ψ̂ by a composite midpoint rule in x (not
    /// in θ), aliases |m| ≤ 40, at the ξ where the model's maximum lies (the band edge).
    #[test]
    fn aliasing_error_matches_midpoint_sums() {
        for &(w, beta_over_w, e, sigma) in &[(4usize, 2.2, 0.5, 2.0), (6, 2.0, 0.53, 1.5), (8, 1.8, 0.5, 1.25), (10, 2.2, 0.51, 1.9)] {
            let beta = beta_over_w * w as f64;
            let p = EsParams { w, beta, e, tol: 1e-3 };
            let n = 400_000;
            let a = 0.5 * w as f64;
            let h = 2.0 * a / n as f64;
            let ft = |eta: f64| -> f64 {
                (0..n).map(|i| {
                    let x = -a + (i as f64 + 0.5) * h;
                    p.value(x) * (2.0 * std::f64::consts::PI * eta * x).cos()
                }).sum::<f64>() * h
            };
            let xi = 0.5 / sigma;
            let main = ft(xi);
            let alias: f64 = (1..=40).flat_map(|m| [ft(xi + m as f64), ft(xi - m as f64)]).map(|v| v * v).sum();
            let want = alias.sqrt() / main;
            // one ξ sample: the band edge
            let got = AliasModel::new(w, sigma, 1, 40).error(beta, e);
            eprintln!("w {w} β/w {beta_over_w} e {e} σ {sigma}: model {got:.5e} midpoint {want:.5e}");
            assert!((got - want).abs() <= 1e-2 * want, "w {w}: {got} vs {want}");
        }
    }

    /// A sample of the committed table recomputed: β and e to 1e-4 (relative) and E to 1e-3;
    /// the fitted shape is never worse than the ES kernel's best β.
    #[test]
    fn table_entries_recompute() {
        for &(w, i) in &[(2usize, 0usize), (7, 16), (13, 26)] {
            let sigma = table_sigma(i);
            let model = AliasModel::new(w, sigma, FIT_XI_SAMPLES, ALIAS_TERMS);
            let (beta, x, err) = fit_table_entry(w, sigma);
            let (tb, tx, te) = table::ES_TABLE[w - TABLE_W0][i];
            eprintln!("w {w} σ {sigma:.2}: β {beta:.5} (table {tb:.5}) e {x:.5} (table {tx:.5}) E {err:.4e} (table {te:.4e})");
            assert!((beta - tb).abs() <= 1e-4 * tb, "w {w} σ {sigma}: β {beta} vs table {tb}");
            assert!((x - tx).abs() <= 1e-4 * tx, "w {w} σ {sigma}: e {x} vs table {tx}");
            assert!((err.max(ALIAS_FLOOR) - te).abs() <= 1e-3 * te, "w {w} σ {sigma}: E {err} vs table {te}");
            assert!(model.error(beta, x) <= model.best_beta(w, 0.5, 1.0, 3.2).1, "w {w} σ {sigma}: worse than ES");
            let (lb, lx, le) = table_lookup(w, sigma);
            assert!((lb - tb).abs() <= 1e-12 * tb && (lx - tx).abs() <= 1e-12 && (le - te).abs() <= 1e-12 * te, "lookup at a column");
        }
    }

    #[test]
    fn widths_follow_tolerance() {
        assert_eq!(EsParams::for_tolerance(1e-6, 2.0).w, 7);
        assert_eq!(EsParams::for_tolerance(1e-1, 2.0).w, 2);
        // the narrowest width whose estimate meets tol; β from the table
        for dim in 1..=3 {
            for &sigma in &[1.1, 1.2, 1.25, 1.33, 1.5, 2.0, 2.37, 2.5, 3.0] {
                for &tol in &[1e-2, 1e-3, 1e-5, 1e-6, 1e-8, 1e-9, 1e-11, 1e-12] {
                    let p = EsParams::for_tolerance_dim(tol, sigma, dim);
                    let e = EsParams::error_estimate_dim(p.w, sigma, dim);
                    assert!(e <= tol || p.w == MAX_ES_WIDTH, "dim {dim} σ {sigma} tol {tol}: w {} est {e}", p.w);
                    assert!(p.w == TABLE_W0 || EsParams::error_estimate_dim(p.w - 1, sigma, dim) > tol);
                    assert_eq!((p.beta, p.e), EsParams::shape_for(p.w, sigma));
                }
            }
        }
        // the estimate falls with σ at every width (the table is monotone after interpolation)
        for w in TABLE_W0..=MAX_ES_WIDTH {
            let mut last = f64::INFINITY;
            for i in 0..=130 {
                let e = EsParams::error_estimate(w, 1.2 + 0.01 * i as f64);
                assert!(e <= last * 1.05, "w {w} σ {}: {e} after {last}", 1.2 + 0.01 * i as f64);
                last = e;
            }
        }
    }

    #[test]
    fn horner_matches_exact_kernel() {
        // widths 3, 7, 9, 10, 12, 13, 14, 16 (the symmetric evaluation from w = 9, odd and even),
        // one point at a time and two at once
        for &(tol, sigma) in &[(1e-2, 2.0), (1e-6, 2.0), (1e-8, 2.0), (1e-9, 2.0), (1e-10, 2.0), (1e-11, 2.0), (1e-12, 2.0), (1e-14, 2.0), (1e-8, 1.25)] {
            let p = EsParams::for_tolerance(tol, sigma);
            let h = EsHorner::<f64>::new(&p);
            let mut out = [0.0; MAX_WIDTH];
            let mut fused = [0.0; MAX_WIDTH];
            let mut maxerr: f64 = 0.0;
            let mut pair = [[0.0; MAX_WIDTH]; 2];
            for i in 0..997 {
                let t = -0.5 * p.w as f64 + i as f64 / 997.0;
                let t2 = -0.5 * p.w as f64 + (996 - i) as f64 / 997.0;
                h.eval(t, &mut out);
                h.eval_fused(t, &mut fused);
                h.eval_fused_n([t, t2], &mut pair);
                for j in 0..p.w {
                    for (v, t) in [(out[j], t), (fused[j], t), (pair[0][j], t), (pair[1][j], t2)] {
                        maxerr = maxerr.max((v - p.value(t + j as f64)).abs());
                    }
                }
            }
            eprintln!("tol {tol} sigma {sigma}: w {} deg {} err {maxerr:e}", p.w, h.degree());
            // the fit must not add more than half the tolerance to the kernel error
            assert!(maxerr <= (tol * 0.5).max(1e-14), "tol {tol}: err {maxerr} deg {}", h.degree());
        }
    }

    #[test]
    fn fourier_series_matches_fine_quadrature() {
        let p = EsParams::for_tolerance(1e-10, 2.0);
        let nf = 64;
        let fs = p.fourier_series(nf, 32).unwrap();
        for &k in &[0usize, 1, 7, 20, 32] {
            // composite midpoint rule with many points on the support
            let n = 200_000;
            let a = 0.5 * p.w as f64;
            let h = 2.0 * a / n as f64;
            let mut s = 0.0;
            for i in 0..n {
                let x = -a + (i as f64 + 0.5) * h;
                s += p.value(x) * (2.0 * std::f64::consts::PI * k as f64 * x / nf as f64).cos() * h;
            }
            assert!((s - fs[k]).abs() < 1e-8 * fs[0], "k={k}: {s} vs {}", fs[k]);
        }
    }
}
