//! GPU NUFFT of types 1 and 2: spreading/interpolation by [`GpuSpreader`], the FFT on the
//! device ([`FftDevice`]: cuFFT, or FFTW on the emulator), and the deconvolution on the device
//! (`kernels/nufft.cu`), written once against the device traits so that the whole host path —
//! buffers, launches, FFT, deconvolution — runs in CI on the CUDA-on-CPU emulator.
//!
//! Parameters (kernel, upsampling factor, fine grid, deconvolution factors) come from the
//! shared parameter layer [`NufftParams`], as for the CPU plan, so both backends compute the
//! same approximation; a GPU plan allocates on the host only the small mode tables it uploads.
//! Conventions as [`crate::nufft`]: type 1 `f_k = Σ_j c_j e^{± i k·x_j}`, type 2
//! `c_j = Σ_k f_k e^{± i k·x_j}`, modes x fastest in CMCL or FFT order (`modeord`), points as
//! separate coordinate arrays in radians; spreading overwrites the fine grid.
//!
//! `ntrans > 1`: the vectors run one after the other, and a failure midway leaves no partial
//! output — host arrays are written (one download) only after every vector succeeded; device
//! arrays receive the results by one device-to-device copy from plan scratch at the end.

use super::device::{upload_new, Arg, FftDevice};
use super::spread::{GpuMethod, GpuSpreadOpts, GpuSpreader};
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
    fine: D::Buf,
    inv: D::Buf,
    fw: std::sync::Mutex<D::Buf>,
    fft: D::FftPlan,
    block: u32,
}

impl<T: Real, D: FftDevice> GpuNufft<T, D> {
    /// Makes a plan for `params` (from [`NufftParams::new`]; type 1 or 2) on `dev` with the GPU
    /// spreading options `sopts` (method, reuse hint). Host memory: the mode tables
    /// (`(4 + sizeof T)·ΣN_d` bytes) and the kernel table, uploaded and dropped.
    /// Errors: [`Error::Type`] (type 3), [`Error::Alloc`], device errors.
    pub fn new(dev: D, params: NufftParams, sopts: GpuSpreadOpts) -> Result<Self> {
        if !(params.ty == 1 || params.ty == 2) {
            return Err(Error::Type(format!("GPU NUFFT of type {} (this plan does types 1 and 2)", params.ty)));
        }
        let dim = params.dim;
        let spreader = GpuSpreader::<T, D>::new(dev.clone(), dim, &params.nf[..dim], &params.kernel, sopts)?;
        // mode bookkeeping as crate::nufft::deconv::ModeMap, concatenated over the axes
        let factors = params.deconv_factors()?;
        let total_n: usize = params.n.iter().sum();
        let mut fine: Vec<i32> = crate::error::try_vec(total_n, "GPU NUFFT mode table")?;
        let mut inv: Vec<T> = crate::error::try_vec(total_n, "GPU NUFFT deconvolution table")?;
        for d in 0..3 {
            for i in 0..params.n[d] {
                fine.push(if d < dim { params.fine_index(d, i) as i32 } else { 0 });
                inv.push(T::of(factors[d][i]));
            }
        }
        drop(factors);
        let fine_b = upload_new(&dev, &fine)?;
        let inv_b = upload_new(&dev, &inv)?;
        drop((fine, inv));
        let fw = dev.alloc(params.fine_total() * 2 * std::mem::size_of::<T>())?;
        let fft = dev.fft_plan(&params.nf[..dim], T::NAME == "f64")?;
        let info = NufftInfo::from_params(&params, 1);
        Ok(GpuNufft { dev, params, info, spreader, fine: fine_b, inv: inv_b, fw: std::sync::Mutex::new(fw), fft, block: sopts.block })
    }

    /// Sets the points (copied to the device; `y`, `z` ignored below dim 2, 3).
    pub fn setpts(&mut self, x: &[T], y: &[T], z: &[T]) -> Result<()> {
        self.spreader.setpts([x, y, z])
    }

    /// What the plan chose (fine grid, kernel, σ; `backend` = CUDA).
    pub fn info(&self) -> NufftInfo {
        self.info
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

    /// One transform with device buffers (cuFINUFFT style): type 1 reads `c` (M interleaved
    /// complex values) and writes `f` (Π N); type 2 reads `f` and writes `c`. The output is
    /// written only by the last launch.
    pub fn execute_dev(&self, c: &mut D::Buf, f: &mut D::Buf) -> Result<()> {
        if self.params.ty == 1 {
            self.one(c, f)
        } else {
            self.one(f, c)
        }
    }

    /// One vector: `input` → `output` (type 1: c → f, type 2: f → c).
    fn one(&self, input: &D::Buf, output: &mut D::Buf) -> Result<()> {
        let dev = &self.dev;
        let mut fw = self.fw.lock().unwrap_or_else(|e| e.into_inner());
        let (n, nf) = (self.params.n, self.params.nf);
        let name = |t: i32| format!("ff_deconv_t{t}_{}", T::NAME);
        let grid = u32::try_from(self.num_modes().div_ceil(self.block as usize)).map_err(|_| Error::NotSupported("too many modes for one launch".into()))?;
        let geo = [n[0] as i32, n[1] as i32, n[2] as i32, nf[0] as i32, nf[1] as i32];
        if self.params.ty == 1 {
            self.spreader.spread_dev(input, &mut fw)?;
            dev.fft_exec(&self.fft, &mut fw, self.params.sign)?;
            dev.launch(&name(1), grid, self.block, 0, &[
                Arg::I32(geo[0]), Arg::I32(geo[1]), Arg::I32(geo[2]), Arg::I32(geo[3]), Arg::I32(geo[4]),
                Arg::Buf(&self.fine), Arg::Buf(&self.inv), Arg::Buf(&fw), Arg::Buf(output),
            ])
        } else {
            dev.zero(&mut fw)?;
            dev.launch(&name(2), grid, self.block, 0, &[
                Arg::I32(geo[0]), Arg::I32(geo[1]), Arg::I32(geo[2]), Arg::I32(geo[3]), Arg::I32(geo[4]),
                Arg::Buf(&self.fine), Arg::Buf(&self.inv), Arg::Buf(input), Arg::Buf(&mut *fw),
            ])?;
            dev.fft_exec(&self.fft, &mut fw, self.params.sign)?;
            self.spreader.interp_dev(&fw, output)
        }
    }

    /// All `ntrans` vectors, device to device: `input` holds `ntrans` stacked input vectors,
    /// `output` receives the `ntrans` outputs. With `direct` the outputs are computed in place
    /// (for buffers the plan owns); otherwise into scratch, copied to `output` in one
    /// device-to-device copy after the last vector succeeded, so that a failure leaves `output`
    /// untouched (for `ntrans = 1` the single writing launch is the last step anyway).
    fn run_all(&self, input: &D::Buf, output: &mut D::Buf, direct: bool) -> Result<()> {
        let nt = self.params.ntrans;
        let (ib, ob) = self.vec_bytes();
        if nt == 1 {
            return self.one(input, output);
        }
        let mut vin = self.dev.alloc(ib.max(1))?;
        let mut vout = self.dev.alloc(ob.max(1))?;
        let mut scratch = if direct { None } else { Some(self.dev.alloc((nt * ob).max(1))?) };
        for t in 0..nt {
            if ib > 0 {
                self.dev.copy(&mut vin, 0, input, t * ib, ib)?;
            }
            self.one(&vin, &mut vout)?;
            if ob > 0 {
                let dst = scratch.as_mut().unwrap_or(&mut *output);
                self.dev.copy(dst, t * ob, &vout, 0, ob)?;
            }
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
    /// type 2 `f` → `c`. The output is written (one download) only after every vector
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

/// The CUDA executor behind the NUFFT plan front (`opts.backend = CUDA`): a
/// [`GpuNufft`] on device 0.
pub struct CudaNufft<T: Real> {
    plan: GpuNufft<T, super::cuda::CudaDevice>,
}

// SAFETY: the plan's device handles (cudarc context/stream, Arc'd) are used behind the NUFFT
// plan's own lock (`&mut self` / the C API's mutex); cudarc's CudaContext binds itself to the
// calling thread on every call.
unsafe impl<T: Real> Send for CudaNufft<T> {}

impl<T: Real> CudaNufft<T> {
    /// Opens device 0 and builds the plan for `params` with the GPU options of `opts`
    /// (`gpu_method`, `gpu_spread_reuse_hint`). Errors: [`Error::NoDevice`], those of
    /// [`GpuNufft::new`].
    pub fn new(params: NufftParams, opts: &NufftOpts) -> Result<Self> {
        let dev = super::cuda::CudaDevice::for_nufft(opts)?;
        let plan = GpuNufft::new(dev, params, GpuSpreadOpts::from_nufft_opts(opts))?;
        if opts.debug > 0 {
            eprintln!("[farfield nufft{} cuda] {}", if T::NAME == "f32" { "f" } else { "" }, plan.params.describe(1));
        }
        Ok(CudaNufft { plan })
    }

    /// [`CudaNufft::new`] as a boxed executor.
    pub fn boxed(params: NufftParams, opts: &NufftOpts) -> Result<Box<dyn NufftExec<T>>> {
        Ok(Box::new(Self::new(params, opts)?))
    }
}

impl<T: Real> NufftExec<T> for CudaNufft<T> {
    fn setpts(&mut self, pts: Points<'_, T>) -> Result<()> {
        self.plan.setpts(pts.x[0], pts.x[1], pts.x[2])
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
        plan.dev.with_foreign_pair::<T>(c, nt * plan.num_points(), f, nt * plan.num_modes(), |cs, fs| plan.execute_dev_all(cs, fs))
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

