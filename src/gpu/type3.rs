//! GPU NUFFT type 3 (`f_k = Σ_j c_j e^{± i s_k·x_j}`, non-uniform points to non-uniform
//! frequencies), through the same spreading kernels and the GPU type 2: the algorithm of
//! [`crate::nufft::type3`] (Barnett, Magland, af Klinteberg, SIAM J. Sci. Comput. 41 (2019)
//! C479, §3; docs/design.md §9.4) with its host-side set-up shared, not copied —
//! [`Type3Params`] (σ, tolerance, kernel, ψ̂) and [`Type3Geometry`] (extents, fine grids,
//! rescaled points and frequencies, pre-phase and deconvolution factors) — so that the CPU
//! and GPU executors compute the same approximation.
//!
//! On the device: pre-phase `c'_j = c_j e^{± i D·x_j}` (`ff_cmul`, skipped when `D = 0`), spread
//! `c'` at the rescaled points onto the fine grid ([`GpuSpreader`], which overwrites it), the
//! inner type 2 ([`GpuNufft`], FFT-ordered modes, the rescaled frequencies as its points),
//! deconvolution and post-phase (`ff_cmul`). Layout as on the CPU: `c[t*M + j]`,
//! `f[t*N + k]`. `ntrans > 1` runs in the inner type 2's batches of `B` vectors
//! (docs/design.md §5.2): each stage is one launch (or one batched FFT) per batch. The outputs
//! are collected in scratch on the device and written to the caller (one download, or one
//! device copy) only after every batch succeeded, so a failure leaves the output untouched.
//!
//! Device memory: `B` fine grids (`2·sizeof(T)·Π nf_d` bytes each) and the inner type 2's
//! `B` grids (`σ^d` times as many), the spreader's point structures, `2·sizeof(T)·(M + N)`
//! bytes of factors, and per execute the inputs and outputs of all `ntrans` vectors.

use super::device::{upload_new, Arg, FftDevice};
use super::nufft::GpuNufft;
use super::spread::{GpuMethod, GpuSpreadOpts, GpuSpreader};
use super::types::as_bytes_mut;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::nufft::exec::{NufftExec, Points as ExecPoints, Timings};
use crate::nufft::options::{NufftInfo, NufftOpts};
use crate::nufft::params::Backend;
use crate::nufft::type3::{Type3Geometry, Type3Grid, Type3Params};
use crate::real::Real;
use crate::threads::Threads;
use num_complex::Complex;

/// What `setpts` builds on the device.
struct Points<T: Real, D: FftDevice> {
    geo: Type3Geometry,
    spreader: GpuSpreader<T, D>,
    inner: GpuNufft<T, D>,
    /// `e^{± i D·x_j}` (M values; `None` when `D = 0` on every axis).
    prephase: Option<D::Buf>,
    /// `e^{± i (s_k − D)·C} / Π_d ψ̂(s'_{dk})` (N values).
    deconv: D::Buf,
    /// The fine grids of one batch (`inner.batch()` grids of Π nf complex values).
    fine: std::sync::Mutex<D::Buf>,
    /// Tolerance used and warnings for these points (`Type3Params::accuracy_at`).
    accuracy: (f64, i32),
}

/// A type-3 NUFFT plan on device `D` in precision `T` (see the module docs).
pub struct GpuType3<T: Real, D: FftDevice> {
    dev: D,
    params: Type3Params,
    sopts: GpuSpreadOpts,
    threads: Threads,
    pts: Option<Points<T, D>>,
}

impl<T: Real, D: FftDevice> GpuType3<T, D> {
    /// Makes a plan: arguments as [`crate::nufft::Type3Plan::new`] (validated and chosen by
    /// [`Type3Params::new`]; `opts.backend` is not read), GPU spreading options `sopts` for
    /// both the type-3 spreading and the inner type 2. The grids are sized at `setpts`.
    /// Errors: [`Error::Dim`], [`Error::InvalidArg`], [`Error::Tol`].
    pub fn new(dev: D, dim: usize, iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts, sopts: GpuSpreadOpts) -> Result<Self> {
        let params = Type3Params::new::<T>(dim, iflag, ntrans, tol, opts)?;
        let threads = Threads::new(opts.nthreads)?;
        Ok(GpuType3 { dev, params, sopts, threads, pts: None })
    }

    /// Sets (replaces) the `M` points `xs` and the `N` target frequencies `ss` (axes ≥ dim
    /// ignored), any finite reals. Computes the geometry on the host ([`Type3Params::geometry`]),
    /// builds the spreader on the fine grid with the rescaled points, the inner GPU type 2 with
    /// the rescaled frequencies, and uploads the phase and deconvolution factors.
    /// Errors: those of [`Type3Params::geometry`] (the previous points kept), then
    /// [`Error::Alloc`], [`Error::Modes`] (a fine grid of 2³¹ or more points, the GPU limit),
    /// [`Error::NotSupported`] (M or N ≥ 2³¹), device errors (the plan left without points).
    pub fn setpts(&mut self, xs: [&[T]; 3], ss: [&[T]; 3]) -> Result<()> {
        let p = &self.params;
        let dim = p.dim;
        let geo = p.geometry(xs, ss, &self.threads)?;
        self.pts = None;
        for (v, what) in [(geo.m, "points M"), (geo.n, "target frequencies N")] {
            if v > i32::MAX as usize {
                return Err(Error::NotSupported(format!("GPU NUFFT type 3 with {v} {what} (at most 2^31 − 1)")));
            }
        }
        let nf = geo.nf();
        let mut spreader = GpuSpreader::<T, D>::new(self.dev.clone(), dim, &nf[..dim], &p.kernel, self.sopts)?;
        {
            let xr = geo.rescaled_points(xs)?;
            spreader.setpts([&xr[0], &xr[1], &xr[2]])?;
        }
        let (inner_params, _) = p.inner_params::<T>(&geo, Backend::Cuda)?;
        let accuracy = p.accuracy_at::<T>(&geo, &inner_params);
        // the inner type 2 batches the ntrans vectors as a GPU type 2 would (its batch B and
        // chunks are the type-3 plan's); only its per-batch buffers are used
        let inner_params = crate::nufft::params::NufftParams { ntrans: p.ntrans, ..inner_params };
        let mut inner = GpuNufft::<T, D>::new(self.dev.clone(), inner_params, self.sopts)?;
        {
            let sr = geo.rescaled_freqs(ss)?;
            inner.setpts(&sr[0], &sr[1], &sr[2])?;
        }
        let prephase = geo.prephase(xs, &self.threads)?;
        let prephase = if prephase.is_empty() { None } else { Some(upload_new(&self.dev, &prephase)?) };
        let deconv = upload_new(&self.dev, &geo.deconv(ss, &p.kft, &self.threads)?)?;
        let fine_bytes = (geo.total() * 2 * std::mem::size_of::<T>()).checked_mul(inner.batch())
            .ok_or_else(|| Error::Alloc(format!("{} type-3 fine grids", inner.batch())))?;
        let fine = self.dev.alloc(fine_bytes)?;
        if p.opts.debug > 0 {
            eprintln!("[farfield nufft{} type 3 gpu] setpts {}, inner type 2 nf {:?}",
                      if T::NAME == "f32" { "f" } else { "" }, geo.describe(), &inner.info().nf[..dim]);
        }
        self.pts = Some(Points { geo, spreader, inner, prephase, deconv, fine: std::sync::Mutex::new(fine), accuracy });
        Ok(())
    }

    /// `a[v·n + i] ← a[v·n + i]·b[i]` for `i < n` and `v < nvec` on the device.
    fn cmul(&self, n: usize, nvec: usize, b: &D::Buf, a: &mut D::Buf) -> Result<()> {
        if n == 0 || nvec == 0 {
            return Ok(());
        }
        let block = self.sopts.block;
        let grid = u32::try_from(n.div_ceil(block as usize)).map_err(|_| Error::NotSupported("too many values for one launch".into()))?;
        self.dev.launch(&format!("ff_cmul_{}", T::NAME), grid, block, 0, &[Arg::I32(n as i32), Arg::I32(nvec as i32), Arg::Buf(b), Arg::Buf(a)])
    }

    /// All `ntrans` vectors, device to device, in the inner type 2's batches of `B` vectors:
    /// the pre-phase on a copy of all of `c` (`ntrans·M` complex values), then per batch one
    /// batched spreading onto `B` fine grids, the batched inner type 2 and the batched
    /// deconvolution/post-phase; the results go to scratch and reach `f` (`ntrans·N`) by one
    /// device copy after the last batch succeeded.
    fn run_all(&self, c: &D::Buf, f: &mut D::Buf) -> Result<()> {
        let p = self.points()?;
        let dev = &self.dev;
        let (m, n, nt, bsz) = (p.geo.m, p.geo.n, self.params.ntrans, p.inner.batch());
        let z = 2 * std::mem::size_of::<T>();
        let (cb, fb) = (m * z, n * z);
        let mut cv = dev.alloc((nt * cb).max(1))?;
        if nt * cb > 0 {
            dev.copy(&mut cv, 0, c, 0, nt * cb)?;
        }
        if let Some(ph) = &p.prephase {
            self.cmul(m, nt, ph, &mut cv)?;
        }
        let mut gv = dev.alloc((bsz * fb).max(1))?;
        let mut out = dev.alloc((nt * fb).max(1))?;
        let mut fine = p.fine.lock().unwrap_or_else(|e| e.into_inner());
        for v0 in (0..nt).step_by(bsz) {
            let nv = bsz.min(nt - v0);
            p.spreader.spread_dev_batch(&cv, v0, nv, &mut fine)?;
            if n > 0 {
                p.inner.execute_dev_batch(&fine, &mut gv, nv)?;
                self.cmul(n, nv, &p.deconv, &mut gv)?;
                dev.copy(&mut out, v0 * fb, &gv, 0, nv * fb)?;
            }
        }
        if nt * fb > 0 {
            dev.copy(f, 0, &out, 0, nt * fb)?;
        }
        Ok(())
    }

    fn points(&self) -> Result<&Points<T, D>> {
        self.pts.as_ref().ok_or_else(|| Error::NoPoints("call setpts before execute".into()))
    }

    /// All `ntrans` transforms on device buffers: reads `c` (`ntrans·M` interleaved complex
    /// values), writes `f` (`ntrans·N`); on an error `f` is untouched.
    /// Errors: [`Error::NoPoints`], [`Error::InvalidArg`] (buffer sizes), device errors.
    pub fn execute_dev_all(&self, c: &D::Buf, f: &mut D::Buf) -> Result<()> {
        let p = self.points()?;
        let z = 2 * std::mem::size_of::<T>();
        let nt = self.params.ntrans;
        let (cb, fb) = (nt * p.geo.m * z, nt * p.geo.n * z);
        if self.dev.len(c) < cb || self.dev.len(f) < fb {
            return Err(Error::InvalidArg(format!("device buffers of {} and {} bytes for c and f, need {cb} and {fb}",
                                                 self.dev.len(c), self.dev.len(f))));
        }
        self.run_all(c, f)
    }

    /// All `ntrans` transforms with host arrays: reads `c` (`ntrans·M`, `c[t*M + j]`), writes
    /// `f[t*N + k] = Σ_j c[t*M + j] e^{± i s_k·x_j}` (`ntrans·N`) with one download after
    /// every vector succeeded: on an error `f` is untouched.
    /// Errors: [`Error::NoPoints`], [`Error::InvalidArg`] (lengths), device errors.
    pub fn execute(&self, c: &[Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        let p = self.points()?;
        let nt = self.params.ntrans;
        if c.len() != nt * p.geo.m || f.len() != nt * p.geo.n {
            return Err(Error::InvalidArg(format!(
                "array lengths c = {}, f = {} do not match ntrans·M = {}, ntrans·N = {}",
                c.len(), f.len(), nt * p.geo.m, nt * p.geo.n)));
        }
        let cb = upload_new(&self.dev, c)?;
        let mut fb = self.dev.alloc(std::mem::size_of_val(f).max(1))?;
        self.run_all(&cb, &mut fb)?;
        if !f.is_empty() {
            self.dev.download(&fb, 0, as_bytes_mut(f))?;
        }
        Ok(())
    }

    /// What the plan chose: the type-3 fine grid `nf` (zeros before `setpts`), kernel, σ,
    /// tolerance used, warnings; `backend` = CUDA.
    pub fn info(&self) -> NufftInfo {
        let p = &self.params;
        let nf = self.pts.as_ref().map_or([0; 3], |pt| pt.geo.nf());
        let (tol_used, warnings) = self.pts.as_ref().map_or((p.tol_used, p.warnings), |pt| pt.accuracy);
        NufftInfo {
            nf,
            kernel_width: p.kernel.width(),
            nthreads: self.threads.count(),
            upsampfac: p.sigma,
            kernel_param: p.kernel.shape_param(),
            tol_used,
            warnings,
            backend: Backend::Cuda,
        }
    }

    /// The fine grid of each axis (`None` before `setpts`).
    pub fn grids(&self) -> Option<[Type3Grid; 3]> {
        self.pts.as_ref().map(|p| p.geo.grids)
    }

    /// What the inner type 2 chose (`None` before `setpts`).
    pub fn inner_info(&self) -> Option<NufftInfo> {
        self.pts.as_ref().map(|p| p.inner.info())
    }

    /// The spreading methods of the current points: (type-3 spreading, inner interpolation).
    pub fn methods(&self) -> Option<(Option<GpuMethod>, Option<GpuMethod>)> {
        self.pts.as_ref().map(|p| (p.spreader.method(), p.inner.method()))
    }

    /// Number of points M (0 before `setpts`).
    pub fn num_points(&self) -> usize {
        self.pts.as_ref().map_or(0, |p| p.geo.m)
    }

    /// Number of target frequencies N (0 before `setpts`).
    pub fn num_targets(&self) -> usize {
        self.pts.as_ref().map_or(0, |p| p.geo.n)
    }

    /// The spreading kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.params.kernel
    }
}

/// The executor of type 3 behind the NUFFT plan front for backend CUDA: a [`GpuType3`]
/// behind the [`NufftExec`] interface, on any device — [`CudaType3`] (the CUDA device) and the
/// emulator's plans (the `farfield-gpu-emu` test crate); host-array `setpts`, `execute_device`
/// on addresses of buffers of that device ([`super::device::Device::with_foreign`]).
pub struct GpuType3Exec<T: Real, D: FftDevice> {
    plan: GpuType3<T, D>,
}

/// The CUDA executor of type 3 behind the NUFFT plan front (`opts.backend = CUDA`): a
/// [`GpuType3`] on device 0.
pub type CudaType3<T> = GpuType3Exec<T, super::cuda::CudaDevice>;

// SAFETY: as for `GpuNufftExec`: the device handles are used behind the NUFFT plan's own lock
// (`&mut self` / the C API's mutex); cudarc's context binds itself to the calling thread; the
// emulator's buffers are plain host memory.
unsafe impl<T: Real, D: FftDevice> Send for GpuType3Exec<T, D> {}

impl<T: Real, D: FftDevice> GpuType3Exec<T, D> {
    /// The executor of `plan`.
    pub fn from_plan(plan: GpuType3<T, D>) -> Self {
        GpuType3Exec { plan }
    }
}

impl<T: Real> CudaType3<T> {
    /// Opens device 0 and makes the plan (arguments as [`GpuType3::new`], GPU options from
    /// `opts`). Errors: [`Error::NoDevice`], those of [`GpuType3::new`].
    pub fn new(dim: usize, iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<Self> {
        let dev = super::cuda::CudaDevice::for_nufft(opts)?;
        let plan = GpuType3::new(dev, dim, iflag, ntrans, tol, opts, GpuSpreadOpts::from_nufft_opts(opts))?;
        Ok(GpuType3Exec { plan })
    }

    /// [`CudaType3::new`] as a boxed executor.
    pub fn boxed(dim: usize, iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<Box<dyn NufftExec<T>>> {
        Ok(Box::new(Self::new(dim, iflag, ntrans, tol, opts)?))
    }
}

impl<T: Real, D: FftDevice> NufftExec<T> for GpuType3Exec<T, D> {
    fn setpts(&mut self, pts: ExecPoints<'_, T>) -> Result<()> {
        self.plan.setpts(pts.x, pts.s)
    }
    fn has_points(&self) -> bool {
        self.plan.pts.is_some()
    }
    fn num_points(&self) -> usize {
        self.plan.num_points()
    }
    fn num_modes(&self) -> usize {
        self.plan.num_targets()
    }
    fn execute(&mut self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        self.plan.execute(c, f)
    }
    unsafe fn execute_device(&mut self, c: u64, f: u64) -> Result<()> {
        let plan = &self.plan;
        let nt = plan.params.ntrans;
        plan.dev.with_foreign_pair::<T>(c, nt * plan.num_points(), f, nt * plan.num_targets(), |cs, fs| plan.execute_dev_all(cs, fs))
    }
    fn info(&self) -> NufftInfo {
        self.plan.info()
    }
    fn kernel(&self) -> &Kernel {
        self.plan.kernel()
    }
    fn timings(&self) -> Timings {
        Timings::default()
    }
}
