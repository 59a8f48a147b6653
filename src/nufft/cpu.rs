//! The CPU executor of NUFFT types 1 and 2: spreading/interpolation ([`crate::spread`]) on the
//! fine grid, FFTW ([`crate::fft`]) and the deconvolution ([`super::deconv`]), built from the
//! backend-independent [`NufftParams`].

use super::deconv::ModeMap;
use super::exec::{NufftExec, Points, Timings};
use super::options::{NufftInfo, NufftOpts};
use super::params::NufftParams;
use crate::error::Result;
use super::fine_fft::FineFft;
use crate::fft::{AlignedVec, Sign};
use crate::kernel::Kernel;
use crate::real::Real;
use crate::spread::{SpreadOpts, Spreader};
use crate::threads::Threads;
use num_complex::Complex;
use std::time::Instant;

/// Smallest M for which `setpts` re-chooses σ and the kernel for the actual M
/// ([`NufftParams::with_points`]): 2²⁰. Below it the makeplan choice (made for M = number of
/// modes) is kept — the transform is cheap either way — and the CPU plan computes the same
/// approximation as the CUDA plan, which does not re-choose yet.
pub const RECHOOSE_MIN_POINTS: usize = 1 << 20;

/// A CPU NUFFT of type 1 or 2 (all `ntrans` vectors per execute, one after the other).
pub struct CpuNufft<T: Real> {
    params: NufftParams,
    opts: NufftOpts,
    info: NufftInfo,
    grid: FineGrid<T>,
    threads: Threads,
    timings: Timings,
}

/// The parts of a CPU plan that follow σ and the kernel: rebuilt when [`NufftParams::with_points`]
/// re-chooses them at `setpts`. The mode map (the deconvolution factors, whose Fourier series
/// of the kernel costs O(w·N) per axis: 20–40 ms of one core at N = 10⁶ in 1D) is built by the
/// first `setpts` for the choice that runs, and so are the FFTW plans when σ is automatic
/// (FFTW's planning, its twiddle tables, is serial: about 20 ms at 2·10⁶ points in 1D), so
/// each is made once even when `setpts` re-chooses, and both run beside the parallel bin sort.
struct FineGrid<T: Real> {
    modes: Option<ModeMap<T>>,
    spreader: Spreader<T>,
    fw: AlignedVec<Complex<T>>,
    fft: Option<FineFft<T>>,
}

impl<T: Real> FineGrid<T> {
    /// The fine grid (16·Πnf bytes in f64, allocated first so that a request beyond the memory
    /// fails before any work; calloc'd, so its pages are touched only by the first execute),
    /// the spreader (`opts.spread_max_subprob_size`; in 1D the points stay in the caller's
    /// order where that costs no parallelism, `SpreadOpts::callers_order`) and, if `plan_fft`, the FFTW plans
    /// (`opts.fftw`) of `params` (else only FFTW's headroom is checked); the mode map comes
    /// with the points.
    fn new(params: &NufftParams, opts: &NufftOpts, threads: &Threads, plan_fft: bool) -> Result<Self> {
        let (dim, nf) = (params.dim, params.nf);
        let mut fw = crate::spread::zeroed_grid::<T>(dim, params.fine_total(), "NUFFT fine grid")?;
        let spreader = Spreader::new(dim, &nf[..dim], &params.kernel, SpreadOpts { max_subprob_size: opts.spread_max_subprob_size, interp_only: params.ty == 2, callers_order: true })?;
        let fft = if plan_fft {
            Some(Self::plan_fft(params, opts, threads, &mut fw)?)
        } else {
            crate::fft::fftw_headroom(std::mem::size_of_val::<[Complex<T>]>(&fw), "NUFFT fine-grid FFT")?;
            None
        };
        Ok(FineGrid { modes: None, spreader, fw, fft })
    }

    /// The FFTW plans of `params` on the fine grid `fw`.
    fn plan_fft(params: &NufftParams, opts: &NufftOpts, threads: &Threads, fw: &mut AlignedVec<Complex<T>>) -> Result<FineFft<T>> {
        let sign = if params.sign > 0 { Sign::from_iflag(1) } else { Sign::from_iflag(-1) };
        FineFft::new(params.ty, params.dim, params.n, params.nf, sign, fw, opts.fftw, threads.count())
    }
}

impl<T: Real> CpuNufft<T> {
    /// Builds the CPU plan for `params` (from [`NufftParams::new`], chosen without knowing M):
    /// the thread pool (`opts.nthreads`) and the [`FineGrid`] parts (the FFTW plans only when σ
    /// is given: with σ automatic `setpts` may re-choose it, and makes them).
    /// Errors: [`crate::Error::Alloc`] (fine grid, mode tables, spreader, or no headroom for
    /// FFTW's planner), [`crate::Error::Fft`], [`crate::Error::InvalidArg`] (threads).
    pub fn new(params: NufftParams, opts: &NufftOpts) -> Result<Self> {
        opts.check_cpu()?;
        let threads = Threads::new(opts.nthreads)?;
        let grid = FineGrid::new(&params, opts, &threads, opts.upsampfac.is_some())?;
        let info = NufftInfo::from_params(&params, threads.count());
        if opts.debug > 0 {
            eprintln!("[farfield nufft{}] {}", if T::NAME == "f32" { "f" } else { "" }, params.describe(threads.count()));
        }
        Ok(CpuNufft { params, opts: opts.clone(), info, grid, threads, timings: Timings::default() })
    }

    /// Sets the points; when σ is automatic, M ≥ [`RECHOOSE_MIN_POINTS`] and the cost model
    /// chooses differently for this M ([`NufftParams::with_points`]), a new fine grid, spreader, mode map and FFT plans are
    /// built and replace the old ones once the points are set on them (on any error the plan
    /// is left as it was, with its previous points).
    fn set_points(&mut self, pts: Points<'_, T>, copy: bool) -> Result<()> {
        let t0 = Instant::now();
        let dim = self.params.dim;
        let coords: [&[T]; 3] = [pts.x[0], if dim > 1 { pts.x[1] } else { &[] }, if dim > 2 { pts.x[2] } else { &[] }];
        let params = if coords[0].len() >= RECHOOSE_MIN_POINTS { self.params.with_points(coords[0].len(), &self.opts)? } else { self.params.clone() };
        let mut fresh = if params != self.params { Some(FineGrid::new(&params, &self.opts, &self.threads, false)?) } else { None };
        let t_grid = t0.elapsed().as_secs_f64();
        let (opts, threads) = (&self.opts, &self.threads);
        let FineGrid { modes, spreader, fw, fft } = fresh.as_mut().unwrap_or(&mut self.grid);
        let (need_fft, need_modes) = (fft.is_none(), modes.is_none());
        let mut prepare = || -> Result<(Option<FineFft<T>>, Option<ModeMap<T>>)> {
            let f = if need_fft { Some(FineGrid::plan_fft(&params, opts, threads, fw)?) } else { None };
            let m = if need_modes { Some(ModeMap::new(&params, threads)?) } else { None };
            Ok((f, m))
        };
        let mut sort = || {
            if copy {
                spreader.setpts(coords, threads)
            } else {
                // SAFETY: forwarded from this function's callers' contract.
                unsafe { spreader.setpts_by_reference(coords, threads) }
            }
        };
        // the FFTW plans (serial) and the mode map beside the bin sort, unless FFTW measures
        // (its timings would include the sort's load)
        let (made, sorted) = if opts.fftw & crate::fft::FFTW_ESTIMATE != 0 { threads.join(prepare, sort) } else { (prepare(), sort()) };
        sorted?;
        let (f, m) = made?;
        if f.is_some() {
            *fft = f;
        }
        if m.is_some() {
            *modes = m;
        }
        if let Some(g) = fresh {
            self.grid = g;
            self.info = NufftInfo::from_params(&params, self.threads.count());
            self.params = params;
            if self.opts.debug > 0 {
                eprintln!("[farfield nufft] re-chosen for M = {}: {}", coords[0].len(), self.params.describe(self.threads.count()));
            }
        }
        self.timings = Timings { setpts_s: t0.elapsed().as_secs_f64(), ..Default::default() };
        if self.opts.debug > 0 {
            let st = self.grid.spreader.sort_timings();
            eprintln!("[farfield nufft] setpts M = {}: {:.3} s (new grid {:.3} s; beside FFTW planning and the mode map, sort: count {:.3}, \
                       prefix {:.4}, scatter {:.3}, local {:.3} s)",
                      coords[0].len(), self.timings.setpts_s, t_grid, st.count_s, st.prefix_s, st.scatter_s, st.local_s);
        }
        Ok(())
    }
}

impl<T: Real> NufftExec<T> for CpuNufft<T> {
    fn setpts(&mut self, pts: Points<'_, T>) -> Result<()> {
        self.set_points(pts, true)
    }

    unsafe fn setpts_by_reference(&mut self, pts: Points<'_, T>) -> Result<()> {
        self.set_points(pts, false)
    }

    fn has_points(&self) -> bool {
        self.grid.spreader.has_points() && self.grid.fft.is_some() && self.grid.modes.is_some()
    }

    fn num_points(&self) -> usize {
        self.grid.spreader.num_points()
    }

    fn num_modes(&self) -> usize {
        self.params.num_modes()
    }

    /// Type 1 overwrites `f`, type 2 overwrites `c`, one vector after the other; an
    /// [`crate::Error::Alloc`] of the spreading scratch can stop it after some vectors.
    fn execute(&mut self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        let m = self.grid.spreader.num_points();
        let nm = self.params.num_modes();
        let (Some(modes), Some(fft)) = (self.grid.modes.as_ref(), self.grid.fft.as_ref()) else {
            return Err(crate::Error::InvalidArg("execute before setpts".into()));
        };
        let mut tm = Timings { setpts_s: self.timings.setpts_s, ..Default::default() };
        for t in 0..self.params.ntrans {
            let ct = &mut c[t * m..(t + 1) * m];
            let ft = &mut f[t * nm..(t + 1) * nm];
            if self.params.ty == 1 {
                // spreading overwrites the fine grid: no zeroing needed
                let t1 = Instant::now();
                self.grid.spreader.try_spread(ct, &mut self.grid.fw, &self.threads)?;
                let t2 = Instant::now();
                fft.execute(&mut self.grid.fw);
                let t3 = Instant::now();
                modes.fine_to_modes(&self.grid.fw, ft, &self.threads);
                tm.deconv_s += t3.elapsed().as_secs_f64();
                tm.spread_s += (t2 - t1).as_secs_f64();
                tm.fft_s += (t3 - t2).as_secs_f64();
            } else {
                let t0 = Instant::now();
                // zero the fine grid in parallel (about a megabyte per task), then place the modes
                let nf = self.params.nf;
                let stripe = (1 << 16).max(nf[0] * if self.params.dim == 3 { nf[1] } else { 1 });
                self.threads.chunks(&mut self.grid.fw, stripe, |_, r| r.fill(Complex::new(T::zero(), T::zero())));
                modes.modes_to_fine(ft, &mut self.grid.fw, &self.threads);
                let t1 = Instant::now();
                fft.execute(&mut self.grid.fw);
                let t2 = Instant::now();
                self.grid.spreader.try_interp(&self.grid.fw, ct, &self.threads)?;
                tm.deconv_s += (t1 - t0).as_secs_f64();
                tm.fft_s += (t2 - t1).as_secs_f64();
                tm.spread_s += t2.elapsed().as_secs_f64();
            }
        }
        self.timings = tm;
        if self.opts.debug > 0 {
            eprintln!("[farfield nufft] execute: {} {:.3} s, fft {:.3} s, deconvolve {:.3} s",
                      if self.params.ty == 1 { "spread" } else { "interp" }, tm.spread_s, tm.fft_s, tm.deconv_s);
        }
        Ok(())
    }

    fn info(&self) -> NufftInfo {
        self.info
    }

    fn kernel(&self) -> &Kernel {
        &self.params.kernel
    }

    fn timings(&self) -> Timings {
        self.timings
    }
}
