//! GPU NUFFT of types 1 and 2: spreading/interpolation by [`GpuSpreader`], the FFT on the
//! device ([`FftDevice`]: cuFFT, or FFTW on the emulator), and the deconvolution on the device
//! (`kernels/nufft.cu`), written once against the device traits so that the whole host path —
//! buffers, launches, FFT, deconvolution — runs in CI on the CUDA-on-CPU emulator.
//!
//! Parameters (kernel, upsampling factor, fine grid) are exactly those of the CPU plan
//! [`NufftPlan`] for the same arguments (taken from a CPU plan made at construction), so both
//! backends compute the same approximation. Conventions as [`crate::nufft`]: type 1
//! `f_k = Σ_j c_j e^{± i k·x_j}`, type 2 `c_j = Σ_k f_k e^{± i k·x_j}`, modes x fastest in CMCL or
//! FFT order (`modeord`), points as separate coordinate arrays in radians.

use super::device::{upload_new, Arg, FftDevice};
use super::spread::{GpuKernelSpec, GpuMethod, GpuSpreadOpts, GpuSpreader};
use super::types::GpuReal;
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::nufft::deconv::mode_of;
use crate::nufft::{NufftInfo, NufftOpts, NufftPlan};
use num_complex::Complex;

/// A GPU NUFFT plan (one transform per execute) on device `D`, precision `T`.
pub struct GpuNufft<T: GpuReal, D: FftDevice> {
    dev: D,
    ty: i32,
    n: [usize; 3],
    nf: [usize; 3],
    sign: i32,
    info: NufftInfo,
    kernel: Kernel,
    spreader: GpuSpreader<T, D>,
    fine: D::Buf,
    inv: D::Buf,
    fw: std::sync::Mutex<D::Buf>,
    fft: D::FftPlan,
    block: u32,
}

impl<T: GpuReal, D: FftDevice> GpuNufft<T, D> {
    /// Makes a plan with the arguments of [`NufftPlan::new`] (`ntrans` = 1; `opts.backend` is
    /// ignored: this is the GPU path) and the GPU spreading options `sopts` (method, reuse hint).
    /// Errors: those of [`NufftPlan::new`] and of the device.
    pub fn new(dev: D, ty: i32, dim: usize, n_modes: &[i64], iflag: i32, tol: f64, opts: &NufftOpts, sopts: GpuSpreadOpts) -> Result<Self> {
        // the CPU plan chooses (and validates) kernel, σ and fine grid; it is dropped at once
        let cpu_opts = NufftOpts { backend: crate::nufft::options::FARFIELD_BACKEND_CPU, nthreads: 1, ..*opts };
        let (info, kernel) = {
            let p = NufftPlan::<T>::new(ty, dim, n_modes, iflag, 1, tol, &cpu_opts)?;
            (p.info(), p.kernel().clone())
        };
        let mut n = [1usize; 3];
        let mut nf = [1usize; 3];
        for d in 0..dim {
            n[d] = n_modes[d] as usize;
            nf[d] = info.nf[d] as usize;
        }
        let spreader = GpuSpreader::<T, D>::new(dev.clone(), dim, &nf[..dim], &GpuKernelSpec::Kernel(kernel.clone()), sopts)?;
        // mode bookkeeping as crate::nufft::deconv::ModeMap
        let mut fine: Vec<i32> = Vec::new();
        let mut inv: Vec<T> = Vec::new();
        for d in 0..3 {
            let phihat = if d < dim { kernel.fourier_series(nf[d], n[d] / 2) } else { vec![1.0] };
            for i in 0..n[d] {
                let k = mode_of(i, n[d], opts.modeord);
                fine.push(k.rem_euclid(nf[d] as i64) as i32);
                inv.push(T::of(1.0 / phihat[k.unsigned_abs() as usize]));
            }
        }
        let total: usize = nf.iter().product();
        let fine_b = upload_new(&dev, &fine)?;
        let inv_b = upload_new(&dev, &inv)?;
        let fw = dev.alloc(total * 2 * std::mem::size_of::<T>())?;
        let fft = dev.fft_plan(&nf[..dim], T::SUFFIX == "f64")?;
        let block = sopts.block;
        let sign = if iflag >= 0 { 1 } else { -1 };
        let info = NufftInfo { backend: crate::nufft::options::FARFIELD_BACKEND_CUDA, nthreads: 1, ..info };
        Ok(GpuNufft { dev, ty, n, nf, sign, info, kernel, spreader, fine: fine_b, inv: inv_b, fw: std::sync::Mutex::new(fw), fft, block })
    }

    /// Sets the points (copied to the device; `y`, `z` ignored below dim 2, 3).
    pub fn setpts(&mut self, x: &[T], y: &[T], z: &[T]) -> Result<()> {
        self.spreader.setpts([x, y, z])
    }

    /// What the plan chose (fine grid, kernel, σ; `backend` = CUDA).
    pub fn info(&self) -> NufftInfo {
        self.info
    }

    /// The kernel used.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// The spreading method used for the current points.
    pub fn method(&self) -> Option<GpuMethod> {
        self.spreader.method()
    }

    /// Number of modes `N1·N2·N3`.
    pub fn num_modes(&self) -> usize {
        self.n.iter().product()
    }

    /// Executes with device buffers (cuFINUFFT style): type 1 reads `c` (M interleaved complex
    /// values) and writes `f` (Π N); type 2 reads `f` and writes `c`.
    pub fn execute_dev(&self, c: &mut D::Buf, f: &mut D::Buf) -> Result<()> {
        let dev = &self.dev;
        let mut fw = self.fw.lock().unwrap_or_else(|e| e.into_inner());
        let nm = self.num_modes();
        let name = |t: i32| format!("ff_deconv_t{t}_{}", T::SUFFIX);
        let grid = u32::try_from(nm.div_ceil(self.block as usize)).map_err(|_| Error::NotSupported("too many modes for one launch".into()))?;
        let geo = [self.n[0] as i32, self.n[1] as i32, self.n[2] as i32, self.nf[0] as i32, self.nf[1] as i32];
        if self.ty == 1 {
            self.spreader.spread_dev(c, &mut fw)?;
            dev.fft_exec(&self.fft, &mut fw, self.sign)?;
            dev.launch(&name(1), grid, self.block, 0, &[
                Arg::I32(geo[0]), Arg::I32(geo[1]), Arg::I32(geo[2]), Arg::I32(geo[3]), Arg::I32(geo[4]),
                Arg::Buf(&self.fine), Arg::Buf(&self.inv), Arg::Buf(&fw), Arg::Buf(f),
            ])
        } else {
            dev.zero(&mut fw)?;
            dev.launch(&name(2), grid, self.block, 0, &[
                Arg::I32(geo[0]), Arg::I32(geo[1]), Arg::I32(geo[2]), Arg::I32(geo[3]), Arg::I32(geo[4]),
                Arg::Buf(&self.fine), Arg::Buf(&self.inv), Arg::Buf(f), Arg::Buf(&fw),
            ])?;
            dev.fft_exec(&self.fft, &mut fw, self.sign)?;
            self.spreader.interp_dev(&fw, c)
        }
    }

    /// Executes with host arrays: type 1 `c` (M) → `f` (Π N); type 2 `f` → `c`.
    pub fn execute(&self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        if self.spreader.method().is_none() {
            return Err(Error::NoPoints("call setpts before execute".into()));
        }
        if f.len() != self.num_modes() || c.len() != self.spreader.num_points() {
            return Err(Error::InvalidArg(format!(
                "array lengths c = {}, f = {} do not match M = {}, N = {}",
                c.len(), f.len(), self.spreader.num_points(), self.num_modes()
            )));
        }
        let dev = &self.dev;
        let bytes = |n: usize| (n * 2 * std::mem::size_of::<T>()).max(1);
        let mut cb = dev.alloc(bytes(c.len()))?;
        let mut fb = dev.alloc(bytes(f.len()))?;
        if self.ty == 1 {
            if !c.is_empty() {
                dev.upload(&mut cb, super::types::as_bytes(c))?;
            }
            self.execute_dev(&mut cb, &mut fb)?;
            dev.download(&fb, 0, super::types::as_bytes_mut(f))
        } else {
            dev.upload(&mut fb, super::types::as_bytes(f))?;
            self.execute_dev(&mut cb, &mut fb)?;
            if !c.is_empty() {
                dev.download(&cb, 0, super::types::as_bytes_mut(c))?;
            }
            Ok(())
        }
    }
}

/// A GPU NUFFT behind [`NufftPlan`] (`opts.backend = CUDA`), type-erased over the precision.
pub(crate) trait GpuExec<T>: Send {
    /// Sets the points.
    fn setpts(&mut self, x: &[T], y: &[T], z: &[T]) -> Result<()>;
    /// One transform (host arrays).
    fn execute(&self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()>;
    /// Number of points set.
    fn num_points(&self) -> usize;
    /// One transform on caller-owned device arrays (addresses; `c`: M, `f`: Π N complex values).
    ///
    /// # Safety
    /// The addresses must be device allocations of the plan's device of the stated sizes.
    unsafe fn execute_device(&self, c: u64, f: u64) -> Result<()>;
}

struct CudaExec<U: GpuReal> {
    plan: GpuNufft<U, super::cuda::CudaDevice>,
}

// SAFETY: the plan's device handles (cudarc context/stream, Arc'd) are used behind the NUFFT
// plan's own lock; cudarc's CudaContext binds itself to the calling thread on every call.
unsafe impl<U: GpuReal> Send for CudaExec<U> {}

fn same<T: 'static, U: 'static>() -> bool {
    std::any::TypeId::of::<T>() == std::any::TypeId::of::<U>()
}

impl<T: crate::real::Real, U: GpuReal> GpuExec<T> for CudaExec<U> {
    fn setpts(&mut self, x: &[T], y: &[T], z: &[T]) -> Result<()> {
        assert!(same::<T, U>());
        // SAFETY: T and U are the same type (checked).
        let cast = |v: &[T]| unsafe { std::slice::from_raw_parts(v.as_ptr() as *const U, v.len()) };
        self.plan.setpts(cast(x), cast(y), cast(z))
    }
    fn execute(&self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        assert!(same::<T, U>());
        // SAFETY: as above.
        let cast = |v: &mut [Complex<T>]| unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut Complex<U>, v.len()) };
        self.plan.execute(cast(c), cast(f))
    }
    fn num_points(&self) -> usize {
        self.plan.spreader.num_points()
    }
    unsafe fn execute_device(&self, c: u64, f: u64) -> Result<()> {
        if self.plan.spreader.method().is_none() {
            return Err(Error::NoPoints("call setpts before execute".into()));
        }
        if c == 0 || f == 0 {
            return Err(Error::NullPointer("device array c or f is NULL".into()));
        }
        let z = 2 * std::mem::size_of::<U>();
        let (cb, fb) = ((self.plan.spreader.num_points() * z).max(1), self.plan.num_modes() * z);
        let dev = &self.plan.dev;
        dev.with_foreign(c, cb, |cs| dev.with_foreign(f, fb, |fs| self.plan.execute_dev(cs, fs)))
    }
}

/// Makes the CUDA NUFFT for a CPU plan's arguments on device 0 (f32 or f64).
pub(crate) fn cuda_exec<T: crate::real::Real>(ty: i32, dim: usize, n_modes: &[i64], iflag: i32, tol: f64, opts: &NufftOpts) -> Result<Box<dyn GpuExec<T>>> {
    let dev = super::cuda::CudaDevice::new(0)?;
    let sopts = GpuSpreadOpts::from_nufft_opts(opts);
    if same::<T, f64>() {
        let plan = GpuNufft::<f64, _>::new(dev, ty, dim, n_modes, iflag, tol, opts, sopts)?;
        Ok(Box::new(CudaExec { plan }))
    } else if same::<T, f32>() {
        let plan = GpuNufft::<f32, _>::new(dev, ty, dim, n_modes, iflag, tol, opts, sopts)?;
        Ok(Box::new(CudaExec { plan }))
    } else {
        Err(Error::NotSupported(format!("CUDA NUFFT in precision {}", T::NAME)))
    }
}
