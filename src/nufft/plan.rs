//! The NUFFT plan: makeplan → setpts → execute (any number of times) → drop.

use super::deconv::ModeMap;
use super::options::{NufftInfo, NufftOpts, FARFIELD_BACKEND_CPU, FARFIELD_WARN_TOL_CLAMPED};
use crate::error::{Error, Result};
use crate::fft::{next_smooth_even, AlignedVec, FftPlan, Sign, FFTW_DESTROY_INPUT, FFTW_ESTIMATE, FFTW_PATIENT};
use crate::kernel::{Kernel, KernelKind};
use crate::real::Real;
use crate::spread::{SpreadOpts, Spreader};
use crate::threads::Threads;
use num_complex::Complex;
use std::time::Instant;

/// Wall-clock seconds of the stages of the last `setpts`/`execute` (summed over `ntrans`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timings {
    /// Folding, bin sort and coordinate copy in `setpts`.
    pub setpts_s: f64,
    /// Spreading (type 1) or interpolation (type 2).
    pub spread_s: f64,
    /// FFTs.
    pub fft_s: f64,
    /// Deconvolution (mode copy and scaling, including zeroing the fine grid).
    pub deconv_s: f64,
}

/// A NUFFT plan of type 1 or 2 in precision `T` (see the module docs of [`crate::nufft`]).
pub struct NufftPlan<T: Real> {
    ty: i32,
    dim: usize,
    ntrans: usize,
    opts: NufftOpts,
    kernel: Kernel,
    info: NufftInfo,
    modes: ModeMap<T>,
    spreader: Spreader<T>,
    fw: AlignedVec<Complex<T>>,
    fft: FftPlan<T>,
    threads: Threads,
    timings: Timings,
    /// The CUDA path (`opts.backend = CUDA` with a device), and whether its points are set.
    gpu: Option<(Box<dyn crate::gpu::nufft::GpuExec<T>>, bool)>,
}

/// FFTW planner flags accepted in `opts.fftw`: FFTW_ESTIMATE (64), FFTW_MEASURE (0),
/// FFTW_PATIENT (32), FFTW_EXHAUSTIVE (8), and FFTW_DESTROY_INPUT (1).
pub const FFTW_FLAGS_ACCEPTED: u32 = FFTW_ESTIMATE | FFTW_PATIENT | 8 | FFTW_DESTROY_INPUT;

/// Largest fine (upsampled) grid size along one axis: FFTW's `int` range, 2³¹ − 1. With
/// σ = 2 an axis therefore holds at most about 1.07·10⁹ modes (1.7·10⁹ at σ = 1.25).
pub const MAX_FINE_AXIS: usize = i32::MAX as usize;

/// Largest fine grid (points, all axes together), largest number of modes `N1·N2·N3` and
/// largest `ntrans·N1·N2·N3`: [`crate::error::MAX_ELEMENTS`] (2⁴⁰). Checked in makeplan before
/// anything is allocated or computed, so that makeplan's cost is bounded by the problem size.
pub const MAX_GRID_ELEMENTS: usize = crate::error::MAX_ELEMENTS;

/// Largest number of non-uniform points M: 2³² − 1 (point indices are stored as `u32`).
pub const MAX_POINTS: usize = u32::MAX as usize;

/// Checks and converts the mode counts; returns `[N1, N2, N3]` (1 for unused axes).
fn check_modes(dim: usize, n_modes: &[i64], ntrans: usize) -> Result<[usize; 3]> {
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
    if total.checked_mul(ntrans).map_or(true, |t| t > MAX_GRID_ELEMENTS) {
        return Err(Error::Modes(format!(
            "ntrans·N = {ntrans}·{total} exceeds the limit 2^40 = {MAX_GRID_ELEMENTS} values per execute")));
    }
    Ok(n)
}

/// The fine grid sizes for modes `n`, factor `sigma` and kernel width `w`: per axis the
/// smallest even 2,3,5-smooth size ≥ max(⌈σN⌉, 2w); each at most [`MAX_FINE_AXIS`], the
/// product at most [`MAX_GRID_ELEMENTS`] ([`Error::Modes`] naming the axis, the size and the
/// limit). O(log² N) per axis.
pub fn fine_grid(dim: usize, n: [usize; 3], sigma: f64, w: usize) -> Result<[usize; 3]> {
    let mut nf = [1usize; 3];
    for d in 0..dim {
        let want = (sigma * n[d] as f64).ceil().max((2 * w) as f64);
        let size = if want <= MAX_FINE_AXIS as f64 { next_smooth_even(want as usize) } else { usize::MAX };
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

/// Automatic upsampling factor for types 1 and 2: σ = 2 (narrower kernel, faster spreading)
/// unless the modes are many, where σ = 1.25 makes the FFT and the fine grid (and with it the
/// plan's memory, `16·σ^d·N` bytes in f64) 1.6^d times smaller at a kernel one to three points
/// wider. In 3D the switch is at N ≥ 2·10⁶ modes (128³: a 256³ grid of 268 MB at σ = 2 against
/// 160³ = 66 MB; measured at M = 10⁷, tol 10⁻⁶: +10 % CPU time, −220 MB peak RSS). Tolerances
/// below 10⁻⁹ and the Gaussian kernel always use σ = 2.
fn auto_upsampfac(tol: f64, dim: usize, n: [usize; 3], kernel: KernelKind) -> f64 {
    if kernel == KernelKind::Gaussian || tol < 1e-9 {
        return 2.0;
    }
    let total = n[0] * n[1] * n[2];
    let large = match dim {
        1 => total > 10_000_000,
        2 => total > 300_000,
        _ => total >= 2_000_000,
    };
    if large {
        1.25
    } else {
        2.0
    }
}

impl<T: Real> NufftPlan<T> {
    /// Makes a plan.
    ///
    /// * `ty`: 1 or 2 (3 → [`Error::NotSupported`]: type 3 is [`super::Type3Plan`]); `dim`: 1–3;
    /// * `n_modes`: at least `dim` positive mode counts, x first;
    /// * `iflag`: sign of the exponent (`≥ 0` → `+i`); `ntrans ≥ 1` vectors per execute;
    /// * `tol`: requested relative l2 accuracy, finite and > 0; below what `T` can give, or
    ///   below what the widest kernel reaches at the upsampling factor σ
    ///   ([`Kernel::achievable_tol`]), it is clamped and [`FARFIELD_WARN_TOL_CLAMPED`] is set
    ///   in [`NufftPlan::info`] (whose `tol_used` holds the value used).
    ///
    /// Limits, checked before anything is allocated or computed: per axis a fine grid of at
    /// most [`MAX_FINE_AXIS`] points, in all at most [`MAX_GRID_ELEMENTS`], and N1·N2·N3 and
    /// ntrans·N1·N2·N3 at most [`MAX_GRID_ELEMENTS`] ([`Error::Modes`]).
    ///
    /// Errors: [`Error::Type`], [`Error::NotSupported`], [`Error::Dim`], [`Error::Modes`],
    /// [`Error::Tol`], [`Error::InvalidArg`] (bad option, named), [`Error::Alloc`] (fine grid,
    /// mode tables, spreader, or no headroom for FFTW's planner), [`Error::Fft`].
    pub fn new(ty: i32, dim: usize, n_modes: &[i64], iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<Self> {
        match ty {
            1 | 2 => {}
            3 => return Err(Error::NotSupported("NufftPlan holds types 1 and 2: type 3 is planned with nufft::Type3Plan".into())),
            _ => return Err(Error::Type(format!("type {ty} is not 1 or 2"))),
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
        let kind = opts.check()?;
        // CUDA without a device is NO_DEVICE; AUTO stays on the CPU until the CUDA NUFFT has
        // been validated on hardware (it is tested on the CUDA-on-CPU emulator only)
        let backend = crate::gpu::runtime::resolve_backend(opts.backend, "NUFFT plans", opts.backend == super::options::FARFIELD_BACKEND_CUDA)?;
        let mut warnings = 0;
        let mut tol_used = tol;
        if tol < T::MIN_TOL {
            tol_used = T::MIN_TOL;
            warnings |= FARFIELD_WARN_TOL_CLAMPED;
        }
        let sigma = if opts.upsampfac == 0.0 { auto_upsampfac(tol_used, dim, n, kind) } else { opts.upsampfac };
        // below σ = 2 the widest kernel may not reach tol: clamp to what it reaches
        let reachable = Kernel::achievable_tol(kind, sigma);
        if tol_used < reachable {
            tol_used = reachable;
            warnings |= FARFIELD_WARN_TOL_CLAMPED;
        }
        let kernel = Kernel::for_tolerance(kind, tol_used, sigma);
        let w = kernel.width();
        // every size is bounded before anything O(N) is allocated or computed
        let nf = fine_grid(dim, n, sigma, w)?;
        let total = nf[0] * nf[1] * nf[2];
        let threads = Threads::new(opts.nthreads as usize)?;
        // the largest buffer first, so that a request beyond the memory fails before any work
        let mut fw = AlignedVec::<Complex<T>>::zeroed(total, "NUFFT fine grid")?;
        let spreader = Spreader::new(dim, &nf[..dim], &kernel,
            SpreadOpts { max_subprob_size: opts.spread_max_subprob_size as usize })?;
        let mut phihat: [Vec<f64>; 3] = [vec![1.0], vec![1.0], vec![1.0]];
        for d in 0..dim {
            phihat[d] = kernel.try_fourier_series(nf[d], n[d] / 2)?;
        }
        let modes = ModeMap::new(n, nf, &phihat, opts.modeord)?;
        drop(phihat);
        let fft = FftPlan::c2c_inplace(&nf[..dim], 1, Sign::from_iflag(iflag), &mut fw, opts.fftw as u32, threads.count())?;
        let info = NufftInfo {
            nf: [nf[0] as i64, nf[1] as i64, nf[2] as i64],
            kernel_width: w as i32,
            nthreads: threads.count() as i32,
            upsampfac: sigma,
            kernel_param: match &kernel {
                Kernel::Es(p) => p.beta,
                Kernel::Gaussian(p) => p.tau,
            },
            tol_used,
            warnings,
            backend: FARFIELD_BACKEND_CPU,
        };
        let mut info = info;
        let gpu = match backend {
            crate::gpu::runtime::Backend::Cpu => None,
            crate::gpu::runtime::Backend::Cuda(_) => {
                let cpu_opts = NufftOpts { backend: FARFIELD_BACKEND_CPU, ..*opts };
                info.backend = super::options::FARFIELD_BACKEND_CUDA;
                Some((crate::gpu::nufft::cuda_exec::<T>(ty, dim, n_modes, iflag, tol_used, &cpu_opts)?, false))
            }
        };
        if opts.debug > 0 {
            let clamp = if warnings & FARFIELD_WARN_TOL_CLAMPED == 0 {
                String::new()
            } else {
                format!(" [warning: tol {tol:e} clamped to {tol_used:e}, the smallest error reachable in {} at upsampfac {sigma:e} \
                          with the widest {kind:?} kernel ({reachable:e})]", T::NAME)
            };
            eprintln!("[farfield nufft{}] type {ty} dim {dim} modes {:?} ntrans {ntrans} tol {tol:e} (used {tol_used:e}) \
                       sigma {sigma:e} kernel {kind:?} w {w} nf {:?} threads {}{clamp}",
                      if T::NAME == "f32" { "f" } else { "" }, &n[..dim], &nf[..dim], threads.count());
        }
        Ok(NufftPlan { ty, dim, ntrans, opts: *opts, kernel, info, modes, spreader, fw, fft, threads,
                       timings: Timings::default(), gpu })
    }

    /// Sets (or replaces) the non-uniform points: `x` (and `y` for dim ≥ 2, `z` for dim 3),
    /// each of length M, radians, any finite value (reduced mod 2π in double precision; the
    /// accuracy contract holds for |x| ≤ 1e16, see [`crate::spread::reduce_2pi`]). The
    /// coordinates are copied.
    /// Errors: [`Error::NPoints`] (length mismatch, M > [`MAX_POINTS`], ntrans·M >
    /// [`MAX_GRID_ELEMENTS`]) and [`Error::NonFinite`] (first bad index) keep the previous
    /// points; [`Error::Alloc`] leaves the plan without points.
    pub fn setpts(&mut self, x: &[T], y: &[T], z: &[T]) -> Result<()> {
        self.set_points(x, y, z, true)
    }

    /// Like [`NufftPlan::setpts`] but without copying the coordinates (FINUFFT's semantics,
    /// `opts.points_by_reference = 1` in C): only the sort permutation is stored and the arrays
    /// are read again by every execute.
    ///
    /// # Safety
    /// `x`, `y`, `z` must stay valid and unchanged until the next `setpts*` call or until the
    /// plan is dropped.
    pub unsafe fn setpts_by_reference(&mut self, x: &[T], y: &[T], z: &[T]) -> Result<()> {
        self.set_points(x, y, z, false)
    }

    fn set_points(&mut self, x: &[T], y: &[T], z: &[T], copy: bool) -> Result<()> {
        let t0 = Instant::now();
        let m = x.len();
        if m > MAX_POINTS {
            return Err(Error::NPoints(format!("M = {m} points exceed the supported maximum of {MAX_POINTS} (2^32 − 1)")));
        }
        if m.checked_mul(self.ntrans).map_or(true, |t| t > MAX_GRID_ELEMENTS) {
            return Err(Error::NPoints(format!(
                "ntrans·M = {}·{m} exceeds the limit 2^40 = {MAX_GRID_ELEMENTS} values per execute", self.ntrans)));
        }
        let coords: [&[T]; 3] = [x, if self.dim > 1 { y } else { &[] }, if self.dim > 2 { z } else { &[] }];
        if let Some((g, ready)) = &mut self.gpu {
            // the GPU path copies the points to the device in either mode
            *ready = false;
            g.setpts(coords[0], coords[1], coords[2])?;
            *ready = true;
            self.timings = Timings { setpts_s: t0.elapsed().as_secs_f64(), ..Default::default() };
            return Ok(());
        }
        if copy {
            self.spreader.setpts(coords, &self.threads)?;
        } else {
            // SAFETY: forwarded from this function's callers' contract.
            unsafe { self.spreader.setpts_by_reference(coords, &self.threads)? };
        }
        self.timings = Timings { setpts_s: t0.elapsed().as_secs_f64(), ..Default::default() };
        if self.opts.debug > 0 {
            eprintln!("[farfield nufft] setpts M = {}: {:.3} s", x.len(), self.timings.setpts_s);
        }
        Ok(())
    }

    /// Executes the transform.
    /// * type 1: input `c` (`ntrans·M` strengths), output `f` (`ntrans·N1·N2·N3` modes);
    /// * type 2: input `f`, output `c`.
    ///
    /// Errors: [`Error::NoPoints`] before `setpts`, [`Error::InvalidArg`] for wrong lengths,
    /// [`Error::Alloc`] (spreading scratch), [`Error::Range`] when an output value is not
    /// finite (non-finite or overflowing inputs; the output is then already overwritten).
    pub fn execute(&mut self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        if let Some((g, ready)) = &self.gpu {
            if !*ready {
                return Err(Error::NoPoints("call setpts before execute".into()));
            }
            let (m, nm) = (g.num_points(), self.modes.n.iter().product::<usize>());
            if c.len() != m * self.ntrans || f.len() != nm * self.ntrans {
                return Err(Error::InvalidArg(format!(
                    "array lengths c = {}, f = {} do not match ntrans·M = {}, ntrans·N = {}",
                    c.len(), f.len(), m * self.ntrans, nm * self.ntrans)));
            }
            for t in 0..self.ntrans {
                g.execute(&mut c[t * m..(t + 1) * m], &mut f[t * nm..(t + 1) * nm])?;
            }
            return Ok(());
        }
        if !self.spreader.has_points() {
            return Err(Error::NoPoints("call setpts before execute".into()));
        }
        let m = self.spreader.num_points();
        let nm = self.num_modes();
        if c.len() != m * self.ntrans || f.len() != nm * self.ntrans {
            return Err(Error::InvalidArg(format!(
                "array lengths c = {}, f = {} do not match ntrans·M = {}, ntrans·N = {}",
                c.len(), f.len(), m * self.ntrans, nm * self.ntrans)));
        }
        let setpts_s = self.timings.setpts_s;
        let mut tm = Timings { setpts_s, ..Default::default() };
        for t in 0..self.ntrans {
            let ct = &mut c[t * m..(t + 1) * m];
            let ft = &mut f[t * nm..(t + 1) * nm];
            let t0 = Instant::now();
            self.fw.zero();
            if self.ty == 1 {
                let t1 = Instant::now();
                self.spreader.try_spread(ct, &mut self.fw, &self.threads)?;
                let t2 = Instant::now();
                self.fft.execute_c2c(&mut self.fw);
                let t3 = Instant::now();
                self.modes.fine_to_modes(&self.fw, ft, &self.threads);
                tm.deconv_s += (t1 - t0).as_secs_f64() + t3.elapsed().as_secs_f64();
                tm.spread_s += (t2 - t1).as_secs_f64();
                tm.fft_s += (t3 - t2).as_secs_f64();
            } else {
                self.modes.modes_to_fine(ft, &mut self.fw, &self.threads);
                let t1 = Instant::now();
                self.fft.execute_c2c(&mut self.fw);
                let t2 = Instant::now();
                self.spreader.try_interp(&self.fw, ct, &self.threads)?;
                tm.deconv_s += (t1 - t0).as_secs_f64();
                tm.fft_s += (t2 - t1).as_secs_f64();
                tm.spread_s += t2.elapsed().as_secs_f64();
            }
        }
        self.timings = tm;
        if self.opts.debug > 0 {
            eprintln!("[farfield nufft] execute: {} {:.3} s, fft {:.3} s, deconvolve {:.3} s",
                      if self.ty == 1 { "spread" } else { "interp" }, tm.spread_s, tm.fft_s, tm.deconv_s);
        }
        // a result that is not finite is never returned with status 0 (finite coordinates are
        // checked at setpts; huge or non-finite strengths/coefficients end up here)
        let (out, name): (&[Complex<T>], &str) = if self.ty == 1 { (&f[..], "f") } else { (&c[..], "c") };
        if let Some(i) = out.iter().position(|v| !(v.re.is_finite() && v.im.is_finite())) {
            return Err(Error::Range(format!(
                "output {name}[{i}] = ({:e}, {:e}) is not finite: the input {} holds non-finite values or values too \
                 large for {} (their sum overflows)",
                out[i].re.to_f64v(), out[i].im.to_f64v(), if self.ty == 1 { "c" } else { "f" }, T::NAME)));
        }
        Ok(())
    }

    /// Executes on device arrays (CUDA backend only; cuFINUFFT style): `c` holds
    /// `ntrans·M`, `f` `ntrans·N1·N2·N3` complex values of precision `T`, as device addresses.
    /// Errors: [`Error::InvalidArg`] on a CPU plan, [`Error::NoPoints`], [`Error::NullPointer`].
    ///
    /// # Safety
    /// `c` and `f` must be device allocations of device 0 of at least those sizes.
    pub unsafe fn execute_device(&mut self, c: u64, f: u64) -> Result<()> {
        let Some((g, ready)) = &self.gpu else {
            return Err(Error::InvalidArg("execute_device needs a plan made with opts.backend = CUDA".into()));
        };
        if !*ready {
            return Err(Error::NoPoints("call setpts before execute".into()));
        }
        let z = 2 * std::mem::size_of::<T>() as u64;
        let (m, nm) = (g.num_points() as u64, self.modes.n.iter().product::<usize>() as u64);
        for t in 0..self.ntrans as u64 {
            g.execute_device(c + t * m * z, f + t * nm * z)?;
        }
        Ok(())
    }

    /// Total number of modes `N1·N2·N3`.
    pub fn num_modes(&self) -> usize {
        self.modes.n.iter().product()
    }
    /// Number of points set (0 before `setpts`).
    pub fn num_points(&self) -> usize {
        if let Some((g, ready)) = &self.gpu {
            return if *ready { g.num_points() } else { 0 };
        }
        self.spreader.num_points()
    }
    /// The options the plan was made with.
    pub fn options(&self) -> &NufftOpts {
        &self.opts
    }
    /// Dimension (1–3).
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Transform type (1 or 2).
    pub fn transform_type(&self) -> i32 {
        self.ty
    }
    /// Vectors per execute.
    pub fn ntrans(&self) -> usize {
        self.ntrans
    }
    /// What the plan chose (fine grid, kernel, σ, tolerance used, warnings).
    pub fn info(&self) -> NufftInfo {
        self.info
    }
    /// The kernel used.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }
    /// Stage timings of the last `setpts` + `execute`.
    pub fn timings(&self) -> Timings {
        self.timings
    }
}
