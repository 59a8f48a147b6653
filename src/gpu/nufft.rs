//! GPU NUFFT of types 1 and 2: spreading/interpolation by [`GpuSpreader`], the FFT on the
//! device ([`FftDevice`]: cuFFT, or FFTW on the emulator), and the deconvolution on the device
//! (`kernels/nufft.cu`), written once against the device traits so that the whole host path —
//! buffers, launches, FFT, deconvolution — runs in CI on the CUDA-on-CPU emulator.
//!
//! Parameters (kernel, upsampling factor, fine grid, deconvolution factors) come from the
//! shared parameter layer [`NufftParams`], as for the CPU plan, so both backends compute the
//! same approximation; a GPU plan allocates on the host only the small deconvolution table it
//! uploads (half of each axis: the kernel maps a mode to its factor and fine-grid index).
//! Conventions as [`crate::nufft`]: type 1 `f_k = Σ_j c_j e^{± i k·x_j}`, type 2
//! `c_j = Σ_k f_k e^{± i k·x_j}`, modes x fastest in CMCL or FFT order (`modeord`), points as
//! separate coordinate arrays in radians; spreading overwrites the fine grid. Types 1 and 2
//! choose the spreading/interpolation method by the same rule ([`crate::gpu::spread`]).
//!
//! Points: [`GpuNufft::setpts`] (host arrays, uploaded once) or [`GpuNufft::setpts_dev`]
//! (device arrays, cuFINUFFT style); both fold, check and sort on the device
//! ([`GpuSpreader::setpts_dev`]).
//!
//! `ntrans > 1` runs in batches of `B` vectors (cuFINUFFT's `gpu_maxbatchsize`;
//! [`batch_size`]: [`GpuSpreadOpts::max_batch`], or automatically `min(ntrans, 8)` bounded so
//! that the batch's fine grids take at most [`crate::gpu::spread::BATCH_SCRATCH_BYTES`]), the
//! `ntrans` vectors cut into `⌈ntrans/B⌉` chunks of equal size (the last one possibly one
//! smaller). Per chunk each stage is one launch for all its vectors: batched spreading or
//! interpolation, one batched cuFFT plan (`cufftPlanMany` with the chunk's batch), batched
//! deconvolution. Device memory: `B` fine grids (`B·Π nf·2·sizeof(T)` bytes) allocated at
//! plan creation.
//!
//! All or nothing: a failure midway leaves no partial output — host arrays are written (one
//! download) only after every chunk succeeded; device arrays receive the results directly
//! when a single launch writes the whole output (one chunk, and not GROUP interpolation, which
//! zeroes before it accumulates), otherwise by one device-to-device copy from scratch at the
//! end.

use super::device::{upload_new, Arg, FftDevice};
use super::phases::Phases;
use super::spread::{batch_size, GpuMethod, GpuSpreadOpts, GpuSpreader};
use super::types::as_bytes_mut;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::nufft::exec::{NufftExec, Points, Timings};
use crate::nufft::options::{NufftInfo, NufftOpts};
use crate::nufft::params::NufftParams;
use crate::real::Real;
use num_complex::Complex;

/// A GPU NUFFT plan (types 1 and 2, `params.ntrans` vectors per execute) on device `D`,
/// precision `T`.
pub struct GpuNufft<T: Real, D: FftDevice> {
    dev: D,
    params: NufftParams,
    info: NufftInfo,
    spreader: GpuSpreader<T, D>,
    /// `1/ψ̂(k)` for `k = 0 … N_d/2` of each axis in turn (`[1]` on unused axes), precision `T`.
    inv: D::Buf,
    /// The fine grids of one batch (`batch` grids).
    fw: std::sync::Mutex<D::Buf>,
    /// The FFT of `batch` grids, and of the last chunk's grids when it holds fewer.
    fft: D::FftPlan,
    fft_last: Option<(usize, D::FftPlan)>,
    batch: usize,
    block: u32,
    stages: PlanStages,
    /// Print per-phase device timings of each chunk of an execute ([`Phases`]).
    phase_timing: bool,
}

/// Host wall time (seconds) of the stages of [`GpuNufft::new`], for `opts.debug` prints.
#[derive(Debug, Clone, Copy, Default)]
pub struct PlanStages {
    /// The spreader's set-up ([`GpuSpreader::new`]: kernel table, tile sizes).
    pub spreader: f64,
    /// The deconvolution table: the kernel's Fourier series and its inverses.
    pub series: f64,
    /// The table's upload.
    pub upload: f64,
    /// The batch's fine-grid buffers.
    pub buffers: f64,
    /// The FFT plans (cuFFT plan creation, or plans from the device's pool).
    pub fft: f64,
}

impl<T: Real, D: FftDevice> GpuNufft<T, D> {
    /// Makes a plan for `params` (from [`NufftParams::new`]; type 1 or 2) on `dev` with the GPU
    /// spreading options `sopts` (method, reuse hint, batch bound). Host memory: the
    /// deconvolution table (`sizeof T·Σ(N_d/2 + 1)` bytes) and the kernel table, uploaded and
    /// dropped. Device memory: the batch's fine grids (module docs).
    /// Errors: [`Error::Type`] (type 3), [`Error::Alloc`], device errors.
    pub fn new(dev: D, params: NufftParams, sopts: GpuSpreadOpts) -> Result<Self> {
        if !(params.ty == 1 || params.ty == 2) {
            return Err(Error::Type(format!("GPU NUFFT of type {} (this plan does types 1 and 2)", params.ty)));
        }
        let dim = params.dim;
        let mut clock = std::time::Instant::now();
        let mut lap = || std::mem::replace(&mut clock, std::time::Instant::now()).elapsed().as_secs_f64();
        let spreader = GpuSpreader::<T, D>::new(dev.clone(), dim, &params.nf[..dim], &params.kernel, sopts)?;
        let t_spreader = lap();
        // the deconvolution factors 1/ψ̂(k), k = 0 … N_d/2, per axis (NufftParams::inverse_series),
        // concatenated over the axes; the deconvolution kernel maps each mode to its |k| and
        // fine-grid index itself (kernels/nufft.cu), so no per-mode table is built or uploaded.
        // The kernel's Fourier series on all host cores when an axis has several pieces of it
        // (1D plans of 10⁶ modes spent 20–40 ms here on one core on an H200's host).
        let long = params.n[..dim].iter().any(|&n| n / 2 > 2 * crate::kernel::FOURIER_CHUNK);
        let series = params.inverse_series(&crate::threads::Threads::new(if long { 0 } else { 1 })?)?;
        let mut inv: Vec<T> = crate::error::try_vec(series.iter().map(Vec::len).sum(), "GPU NUFFT deconvolution table")?;
        inv.extend(series.iter().flatten().map(|&v| T::of(v)));
        drop(series);
        let t_series = lap();
        let inv_b = upload_new(&dev, &inv)?;
        drop(inv);
        let t_upload = lap();
        let grid_bytes = params.fine_total() * 2 * std::mem::size_of::<T>();
        let nt = params.ntrans;
        let nchunks = nt.div_ceil(batch_size(nt, grid_bytes, sopts.max_batch));
        let batch = nt.div_ceil(nchunks);
        let last = nt - (nchunks - 1) * batch;
        let fw_bytes = grid_bytes.checked_mul(batch).ok_or_else(|| Error::Alloc(format!("{batch} fine grids of {grid_bytes} bytes")))?;
        let fw = dev.alloc(fw_bytes)?;
        let t_buffers = lap();
        let double = T::NAME == "f64";
        let fft = dev.fft_plan(&params.nf[..dim], double, batch)?;
        let fft_last = if last != batch { Some((last, dev.fft_plan(&params.nf[..dim], double, last)?)) } else { None };
        let stages = PlanStages { spreader: t_spreader, series: t_series, upload: t_upload, buffers: t_buffers, fft: lap() };
        let info = NufftInfo::from_params(&params, 1);
        Ok(GpuNufft { dev, params, info, spreader, inv: inv_b, fw: std::sync::Mutex::new(fw), fft, fft_last, batch,
                      block: sopts.block, stages, phase_timing: false })
    }

    /// With `on`, every chunk of an execute prints its device time per phase to stderr (type 1:
    /// spread, fft, deconv; type 2: deconv, fft, interp), `[farfield nufft cuda] execute
    /// vectors a..b (ms): …` (`nufftf` in single precision), waiting for the device after each
    /// chunk; set by the CUDA plan when `opts.debug > 0`. Off (default): no events, no waits.
    pub fn set_phase_timing(&mut self, on: bool) {
        self.phase_timing = on;
    }

    /// The name of the plan in its `opts.debug` lines: `nufft cuda`, `nufftf cuda` in `f32`.
    fn debug_tag() -> &'static str {
        if T::NAME == "f32" {
            "nufftf cuda"
        } else {
            "nufft cuda"
        }
    }

    /// Sets the points from host arrays (uploaded once; `y`, `z` ignored below dim 2, 3).
    /// Errors: those of [`GpuSpreader::setpts`].
    pub fn setpts(&mut self, x: &[T], y: &[T], z: &[T]) -> Result<()> {
        self.spreader.setpts([x, y, z])
    }

    /// Sets the `m` points from device buffers of this device (`coords[d]`: `m` coordinates
    /// of precision `T`, radians; axes ≥ dim ignored). Copied on the device; see
    /// [`GpuSpreader::setpts_dev`] (errors there).
    pub fn setpts_dev(&mut self, m: usize, coords: [Option<&D::Buf>; 3]) -> Result<()> {
        self.spreader.setpts_dev(m, coords)
    }

    /// What the plan chose (fine grid, kernel, σ; `backend` = CUDA).
    pub fn info(&self) -> NufftInfo {
        self.info
    }

    /// How long the stages of the plan's creation took on the host.
    pub fn plan_stages(&self) -> PlanStages {
        self.stages
    }

    /// The parameters the plan was made from.
    pub fn params(&self) -> &NufftParams {
        &self.params
    }

    /// The kernel used.
    pub fn kernel(&self) -> &Kernel {
        &self.params.kernel
    }

    /// The spreading method used for the current points.
    pub fn method(&self) -> Option<GpuMethod> {
        self.spreader.method()
    }

    /// Vectors per batch `B` (module docs).
    pub fn batch(&self) -> usize {
        self.batch
    }

    /// Number of modes `N1·N2·N3`.
    pub fn num_modes(&self) -> usize {
        self.params.num_modes()
    }

    /// Number of points set (0 before `setpts`).
    pub fn num_points(&self) -> usize {
        self.spreader.num_points()
    }

    /// Bytes of one vector of (input, output): type 1 (M, N), type 2 (N, M) complex values.
    fn vec_bytes(&self) -> (usize, usize) {
        let z = 2 * std::mem::size_of::<T>();
        let (cm, fm) = (self.num_points() * z, self.num_modes() * z);
        if self.params.ty == 1 {
            (cm, fm)
        } else {
            (fm, cm)
        }
    }

    /// One transform with device buffers (cuFINUFFT style), the first vector only: type 1
    /// reads `c` (M interleaved complex values) and writes `f` (Π N); type 2 reads `f` and
    /// writes `c`. The output is written only by the last launch (unless the method is GROUP
    /// with type 2, which zeroes it first).
    pub fn execute_dev(&self, c: &mut D::Buf, f: &mut D::Buf) -> Result<()> {
        if self.params.ty == 1 {
            self.chunk(c, f, 0, 1)
        } else {
            self.chunk(f, c, 0, 1)
        }
    }

    /// One batch on buffers local to the batch (type 3's inner type 2): `nv` stacked input
    /// vectors of `input` → `nv` stacked output vectors of `output` (`nv` = [`GpuNufft::batch`],
    /// or the size of the last chunk of `ntrans`). Errors: [`Error::Internal`] for another `nv`,
    /// device errors.
    pub fn execute_dev_batch(&self, input: &D::Buf, output: &mut D::Buf, nv: usize) -> Result<()> {
        self.chunk(input, output, 0, nv)
    }

    /// Vectors `v0 … v0 + nv − 1` (`nv ≤ batch`): `input` → `output`, both holding stacked
    /// vectors (type 1: c → f, type 2: f → c); the fine grids of the batch in between.
    fn chunk(&self, input: &D::Buf, output: &mut D::Buf, v0: usize, nv: usize) -> Result<()> {
        let dev = &self.dev;
        let mut fw = self.fw.lock().unwrap_or_else(|e| e.into_inner());
        let (n, nf) = (self.params.n, self.params.nf);
        let name = |t: i32| format!("ff_deconv_t{t}_{}", T::NAME);
        let grid = u32::try_from(self.num_modes().div_ceil(self.block as usize)).map_err(|_| Error::NotSupported("too many modes for one launch".into()))?;
        let fft = match &self.fft_last {
            _ if nv == self.batch => &self.fft,
            Some((k, p)) if *k == nv => p,
            _ => return Err(Error::Internal(format!("no FFT plan for a chunk of {nv} vectors (batch {})", self.batch))),
        };
        let geo = [Arg::I32(n[0] as i32), Arg::I32(n[1] as i32), Arg::I32(n[2] as i32), Arg::I32(nf[0] as i32), Arg::I32(nf[1] as i32),
                   Arg::I32(nf[2] as i32), Arg::I32(nv as i32), Arg::I32(v0 as i32),
                   Arg::I32((self.params.modeord == crate::nufft::options::ModeOrder::Fft) as i32)];
        let mut ph = Phases::start(dev, self.phase_timing, Self::debug_tag())?;
        if self.params.ty == 1 {
            self.spreader.spread_dev_batch(input, v0, nv, &mut fw)?;
            ph.end("spread")?;
            dev.fft_exec(fft, &mut fw, self.params.sign)?;
            ph.end("fft")?;
            let mut args: Vec<Arg<'_, D::Buf>> = geo.into_iter().collect();
            args.extend([Arg::Buf(&self.inv), Arg::Buf(&fw), Arg::Buf(output)]);
            dev.launch(&name(1), grid, self.block, 0, &args)?;
            ph.end("deconv")?;
        } else {
            dev.zero(&mut fw)?;
            {
                let mut args: Vec<Arg<'_, D::Buf>> = geo.into_iter().collect();
                args.extend([Arg::Buf(&self.inv), Arg::Buf(input), Arg::Buf(&*fw)]);
                dev.launch(&name(2), grid, self.block, 0, &args)?;
            }
            ph.end("deconv")?;
            dev.fft_exec(fft, &mut fw, self.params.sign)?;
            ph.end("fft")?;
            self.spreader.interp_dev_batch(&fw, output, v0, nv)?;
            ph.end("interp")?;
        }
        ph.report(&format!("execute vectors {v0}..{} (ms)", v0 + nv))
    }

    /// All `ntrans` vectors, device to device, in chunks of at most `batch`: `input` holds
    /// `ntrans` stacked input vectors, `output` receives the `ntrans` outputs. With `direct`
    /// (buffers the plan owns), or when one launch writes the whole output, the chunks write
    /// into `output`; otherwise into scratch, copied to `output` in one device-to-device copy
    /// after the last chunk succeeded, so that a failure leaves `output` untouched.
    fn run_all(&self, input: &D::Buf, output: &mut D::Buf, direct: bool) -> Result<()> {
        let nt = self.params.ntrans;
        let (_, ob) = self.vec_bytes();
        let nchunks = nt.div_ceil(self.batch);
        let one_writer = nchunks == 1 && !(self.params.ty == 2 && self.method() == Some(GpuMethod::Group));
        let mut scratch = if direct || one_writer { None } else { Some(self.dev.alloc((nt * ob).max(1))?) };
        for k in 0..nchunks {
            let v0 = k * self.batch;
            let nv = self.batch.min(nt - v0);
            let dst = scratch.as_mut().unwrap_or(&mut *output);
            self.chunk(input, dst, v0, nv)?;
        }
        if let Some(s) = scratch {
            if nt * ob > 0 {
                self.dev.copy(output, 0, &s, 0, nt * ob)?;
            }
        }
        Ok(())
    }

    /// All `ntrans` transforms on device buffers holding `ntrans` stacked vectors (type 1:
    /// `c` → `f`, type 2: `f` → `c`); on an error the output buffer is untouched.
    /// Errors: [`Error::NoPoints`], [`Error::InvalidArg`] (buffer sizes), device errors.
    pub fn execute_dev_all(&self, c: &mut D::Buf, f: &mut D::Buf) -> Result<()> {
        if self.spreader.method().is_none() {
            return Err(Error::NoPoints("call setpts before execute".into()));
        }
        let z = 2 * std::mem::size_of::<T>();
        let nt = self.params.ntrans;
        let (cb, fb) = (nt * self.num_points() * z, nt * self.num_modes() * z);
        if self.dev.len(c) < cb || self.dev.len(f) < fb {
            return Err(Error::InvalidArg(format!("device buffers of {} and {} bytes for c and f, need {cb} and {fb}",
                                                 self.dev.len(c), self.dev.len(f))));
        }
        if self.params.ty == 1 {
            self.run_all(c, f, false)
        } else {
            self.run_all(f, c, false)
        }
    }

    /// All `ntrans` transforms with host arrays: type 1 `c` (ntrans·M) → `f` (ntrans·Π N);
    /// type 2 `f` → `c`. The output is written (one download) only after every chunk
    /// succeeded: on an error it is untouched.
    /// Errors: [`Error::NoPoints`], [`Error::InvalidArg`] (lengths), device errors.
    pub fn execute(&self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        if self.spreader.method().is_none() {
            return Err(Error::NoPoints("call setpts before execute".into()));
        }
        let nt = self.params.ntrans;
        if f.len() != nt * self.num_modes() || c.len() != nt * self.num_points() {
            return Err(Error::InvalidArg(format!(
                "array lengths c = {}, f = {} do not match ntrans·M = {}, ntrans·N = {}",
                c.len(), f.len(), nt * self.num_points(), nt * self.num_modes()
            )));
        }
        let (input, output): (&[Complex<T>], &mut [Complex<T>]) = if self.params.ty == 1 { (c, f) } else { (f, c) };
        let ib = upload_new(&self.dev, input)?;
        let mut ob = self.dev.alloc(std::mem::size_of_val(output).max(1))?;
        self.run_all(&ib, &mut ob, true)?;
        if !output.is_empty() {
            self.dev.download(&ob, 0, as_bytes_mut(output))?;
        }
        Ok(())
    }
}

/// The executor behind the NUFFT plan front for backend CUDA: a [`GpuNufft`] behind the
/// [`NufftExec`] interface, on any device — [`CudaNufft`] (the CUDA device) and the
/// emulator's plans (the `farfield-gpu-emu` test crate), whose `setpts_device` /
/// `execute_device` take addresses of buffers of that device
/// ([`super::device::Device::with_foreign`]).
pub struct GpuNufftExec<T: Real, D: FftDevice> {
    plan: GpuNufft<T, D>,
}

/// The CUDA executor behind the NUFFT plan front (`opts.backend = CUDA`): a
/// [`GpuNufft`] on device 0.
pub type CudaNufft<T> = GpuNufftExec<T, super::cuda::CudaDevice>;

// SAFETY: the plan's device handles (CUDA: cudarc context/stream, Arc'd) are used behind the
// NUFFT plan's own lock (`&mut self` / the C API's mutex); cudarc's CudaContext binds itself to
// the calling thread on every call; the emulator's buffers are plain host memory.
unsafe impl<T: Real, D: FftDevice> Send for GpuNufftExec<T, D> {}

impl<T: Real, D: FftDevice> GpuNufftExec<T, D> {
    /// The executor of `plan`.
    pub fn from_plan(plan: GpuNufft<T, D>) -> Self {
        GpuNufftExec { plan }
    }
}

impl<T: Real> CudaNufft<T> {
    /// Opens device 0 and builds the plan for `params` with the GPU options of `opts`
    /// (`gpu_method`, `gpu_spread_reuse_hint`). Errors: [`Error::NoDevice`], those of
    /// [`GpuNufft::new`].
    pub fn new(params: NufftParams, opts: &NufftOpts) -> Result<Self> {
        let t = std::time::Instant::now();
        let dev = super::cuda::CudaDevice::for_nufft(opts)?;
        let open = t.elapsed().as_secs_f64();
        let mut plan = GpuNufft::new(dev, params, GpuSpreadOpts::from_nufft_opts(opts))?;
        plan.set_phase_timing(opts.debug > 0);
        if opts.debug > 0 {
            let (tag, s) = (GpuNufft::<T, super::cuda::CudaDevice>::debug_tag(), plan.plan_stages());
            eprintln!("[farfield {tag}] {}", plan.params.describe(1));
            eprintln!("[farfield {tag}] plan stages (host ms): device {:.3}, spreader {:.3}, deconvolution table {:.3}, upload {:.3}, \
                       buffers {:.3}, FFT plans {:.3}", 1e3 * open, 1e3 * s.spreader, 1e3 * s.series, 1e3 * s.upload, 1e3 * s.buffers, 1e3 * s.fft);
        }
        Ok(GpuNufftExec { plan })
    }

    /// [`CudaNufft::new`] as a boxed executor.
    pub fn boxed(params: NufftParams, opts: &NufftOpts) -> Result<Box<dyn NufftExec<T>>> {
        Ok(Box::new(Self::new(params, opts)?))
    }
}

impl<T: Real, D: FftDevice> NufftExec<T> for GpuNufftExec<T, D> {
    fn setpts(&mut self, pts: Points<'_, T>) -> Result<()> {
        self.plan.setpts(pts.x[0], pts.x[1], pts.x[2])
    }
    unsafe fn setpts_device(&mut self, m: usize, x: [u64; 3]) -> Result<()> {
        let plan = &mut self.plan;
        let dev = plan.dev.clone();
        dev.with_foreign_axes::<T, _>(m, plan.params.dim, x, |c| plan.setpts_dev(m, c))
    }
    fn has_points(&self) -> bool {
        self.plan.method().is_some()
    }
    fn num_points(&self) -> usize {
        self.plan.num_points()
    }
    fn num_modes(&self) -> usize {
        self.plan.num_modes()
    }
    fn execute(&mut self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        self.plan.execute(c, f)
    }
    unsafe fn execute_device(&mut self, c: u64, f: u64) -> Result<()> {
        let plan = &self.plan;
        let nt = plan.params.ntrans;
        plan.dev.with_foreign_pair::<Complex<T>>(c, nt * plan.num_points(), f, nt * plan.num_modes(), |cs, fs| plan.execute_dev_all(cs, fs))
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

