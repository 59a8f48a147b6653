//! The CUDA implementation of [`Device`] through cudarc: one context per device handle, one
//! stream, the embedded kernels compiled by NVRTC for the device's compute capability (PTX
//! cached per process and architecture; modules and functions per handle), RAII buffers.
//!
//! This path cannot be exercised on machines without a GPU; everything it launches is the same
//! host code ([`super::spread`]) that the emulator runs in CI, and the kernels are compiled for
//! sm_80/sm_90 by `farfield gpu check`. [`CudaDevice::new`] never panics: it goes through
//! [`super::runtime::discover`] first and runs cudarc under `catch_unwind`.

use super::device::{Arg, Device, FftDevice};
use super::types::{FfGeom, FfKernel};
use crate::error::{Error, Result};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

// SAFETY: #[repr(C)] plain old data with the layouts of the CUDA structs (tested in types.rs).
unsafe impl DeviceRepr for FfGeom {}
// SAFETY: as above; `tab` is a device address.
unsafe impl DeviceRepr for FfKernel {}

/// PTX per (source, architecture), compiled once per process.
fn ptx_cache() -> &'static Mutex<HashMap<(String, String), String>> {
    static C: OnceLock<Mutex<HashMap<(String, String), String>>> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

/// PTX of the embedded sources for `arch` (cached per process).
pub fn ptx_for(arch: &str) -> Result<Vec<(String, String)>> {
    super::check::load_nvrtc().map_err(Error::NoDevice)?;
    let mut out = Vec::new();
    for (name, src) in super::KERNEL_SOURCES {
        let key = (name.to_string(), arch.to_string());
        let cached = ptx_cache().lock().unwrap_or_else(|e| e.into_inner()).get(&key).cloned();
        let ptx = match cached {
            Some(p) => p,
            None => {
                let p = super::check::compile(name, src, arch).map_err(|e| Error::Internal(format!("NVRTC failed on {name} for {arch}: {e}")))?;
                ptx_cache().lock().unwrap_or_else(|e| e.into_inner()).insert(key, p.clone());
                p
            }
        };
        out.push((name.to_string(), ptx));
    }
    Ok(out)
}

fn drv<E: std::fmt::Debug>(what: &str) -> impl FnOnce(E) -> Error + '_ {
    move |e| Error::Internal(format!("CUDA {what}: {e:?}"))
}

/// A CUDA device handle (context, stream, loaded kernels). Clones share them.
#[derive(Clone)]
pub struct CudaDevice {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    modules: Arc<Vec<Arc<CudaModule>>>,
    funcs: Arc<Mutex<HashMap<String, CudaFunction>>>,
    name: String,
}

impl CudaDevice {
    /// Opens device `ordinal` and loads the kernels compiled for its compute capability.
    /// Errors: [`Error::NoDevice`] (no driver, no such device, no NVRTC), [`Error::Internal`].
    pub fn new(ordinal: usize) -> Result<CudaDevice> {
        let devs = super::runtime::discover().as_ref().map_err(|why| Error::NoDevice(why.clone()))?;
        let info = devs.iter().find(|d| d.ordinal == ordinal).ok_or_else(|| Error::NoDevice(format!("no CUDA device {ordinal} ({} found)", devs.len())))?;
        let arch = format!("sm_{}{}", info.compute_capability.0, info.compute_capability.1);
        let ptx = ptx_for(&arch)?;
        let r = std::panic::catch_unwind(|| -> Result<CudaDevice> {
            let ctx = CudaContext::new(ordinal).map_err(drv("context"))?;
            let stream = ctx.default_stream();
            let mut modules = Vec::new();
            for (_, p) in ptx {
                modules.push(ctx.load_module(cudarc::nvrtc::Ptx::from_src(p)).map_err(drv("module load"))?);
            }
            Ok(CudaDevice { ctx, stream, modules: Arc::new(modules), funcs: Arc::new(Mutex::new(HashMap::new())), name: format!("{} ({arch})", info.name) })
        });
        r.unwrap_or_else(|_| Err(Error::NoDevice("the CUDA driver bindings panicked while opening the device".into())))
    }

    fn function(&self, name: &str) -> Result<CudaFunction> {
        let mut f = self.funcs.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(k) = f.get(name) {
            return Ok(k.clone());
        }
        for m in self.modules.iter() {
            if let Ok(k) = m.load_function(name) {
                f.insert(name.to_string(), k.clone());
                return Ok(k);
            }
        }
        Err(Error::Internal(format!("CUDA kernel {name} not found in the loaded modules")))
    }

    /// Waits for the stream.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(drv("synchronize"))
    }

    /// The context.
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.ctx
    }

    /// Runs `f` on a caller-owned device allocation of `bytes` bytes at address `ptr`, viewed
    /// as a buffer of this device (not freed afterwards).
    ///
    /// # Safety
    /// `ptr` must be a device allocation of at least `bytes` bytes in this device's context.
    pub unsafe fn with_foreign<R>(&self, ptr: u64, bytes: usize, f: impl FnOnce(&mut CudaSlice<u8>) -> R) -> R {
        let mut s = self.stream.upgrade_device_ptr::<u8>(ptr, bytes);
        let r = f(&mut s);
        let _ = s.leak();
        r
    }

    /// Runs `run` on two caller-owned device arrays of complex values of precision `T` — `c`
    /// with `nc` and `f` with `nf` values — seen as buffers of this device (the execute on
    /// device pointers of the CUDA NUFFT executors, cuFINUFFT style).
    /// Errors: [`crate::Error::NullPointer`] when either address is 0, and those of `run`.
    ///
    /// # Safety
    /// As [`CudaDevice::with_foreign`], for both arrays.
    pub unsafe fn with_foreign_pair<T>(&self, c: u64, nc: usize, f: u64, nf: usize,
                                       run: impl FnOnce(&mut CudaSlice<u8>, &mut CudaSlice<u8>) -> crate::Result<()>)
                                       -> crate::Result<()> {
        if c == 0 || f == 0 {
            return Err(crate::Error::NullPointer("device array c or f is NULL".into()));
        }
        let z = 2 * std::mem::size_of::<T>();
        self.with_foreign(c, (nc * z).max(1), |cs| self.with_foreign(f, (nf * z).max(1), |fs| run(cs, fs)))
    }
}

enum Slot {
    Ptr(u64),
    I32(i32),
    U32(u32),
    Geom(FfGeom),
    Kernel(FfKernel),
}

impl Device for CudaDevice {
    type Buf = CudaSlice<u8>;

    fn name(&self) -> String {
        self.name.clone()
    }

    fn alloc(&self, bytes: usize) -> Result<CudaSlice<u8>> {
        self.stream.alloc_zeros::<u8>(bytes.max(1)).map_err(|e| Error::Alloc(format!("{bytes} bytes of device memory: {e:?}")))
    }

    fn len(&self, buf: &CudaSlice<u8>) -> usize {
        buf.len()
    }

    fn upload(&self, dst: &mut CudaSlice<u8>, src: &[u8]) -> Result<()> {
        if src.len() > dst.len() {
            return Err(Error::InvalidArg(format!("upload of {} bytes into a buffer of {}", src.len(), dst.len())));
        }
        let mut view = dst.slice_mut(0..src.len());
        self.stream.memcpy_htod(src, &mut view).map_err(drv("upload"))
    }

    fn download(&self, src: &CudaSlice<u8>, offset: usize, dst: &mut [u8]) -> Result<()> {
        if offset + dst.len() > src.len() {
            return Err(Error::InvalidArg(format!("download of {} bytes at {offset} from a buffer of {}", dst.len(), src.len())));
        }
        let view = src.slice(offset..offset + dst.len());
        self.stream.memcpy_dtoh(&view, dst).map_err(drv("download"))?;
        self.synchronize()
    }

    fn copy(&self, dst: &mut CudaSlice<u8>, dst_off: usize, src: &CudaSlice<u8>, src_off: usize, bytes: usize) -> Result<()> {
        if dst_off + bytes > dst.len() || src_off + bytes > src.len() {
            return Err(Error::InvalidArg(format!(
                "device copy of {bytes} bytes from {src_off} (of {}) to {dst_off} (of {})", src.len(), dst.len())));
        }
        let from = src.slice(src_off..src_off + bytes);
        let mut to = dst.slice_mut(dst_off..dst_off + bytes);
        self.stream.memcpy_dtod(&from, &mut to).map_err(drv("device copy"))
    }

    fn zero(&self, buf: &mut CudaSlice<u8>) -> Result<()> {
        self.stream.memset_zeros(buf).map_err(drv("memset"))
    }

    fn addr(&self, buf: &CudaSlice<u8>) -> u64 {
        let (p, _sync) = buf.device_ptr(&self.stream);
        p
    }

    fn launch(&self, name: &str, grid: u32, block: u32, smem: u32, args: &[Arg<'_, CudaSlice<u8>>]) -> Result<()> {
        let f = self.function(name)?;
        let slots: Vec<Slot> = args
            .iter()
            .map(|a| match a {
                Arg::Buf(b) => Slot::Ptr(self.addr(b)),
                Arg::Null => Slot::Ptr(0),
                Arg::I32(v) => Slot::I32(*v),
                Arg::U32(v) => Slot::U32(*v),
                Arg::Geom(g) => Slot::Geom(*g),
                Arg::Kernel(k) => Slot::Kernel(*k),
            })
            .collect();
        let mut b = self.stream.launch_builder(&f);
        for s in &slots {
            match s {
                Slot::Ptr(p) => b.arg(p),
                Slot::I32(v) => b.arg(v),
                Slot::U32(v) => b.arg(v),
                Slot::Geom(g) => b.arg(g),
                Slot::Kernel(k) => b.arg(k),
            };
        }
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: smem };
        // SAFETY: the argument lists are those of the kernels (the same host code runs against
        // the emulator in CI, where every kernel's output is compared with the CPU).
        unsafe { b.launch(cfg) }.map(|_| ()).map_err(drv(name))
    }

    fn max_shared_bytes(&self) -> usize {
        48 * 1024
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opening_a_device_never_panics() {
        match (super::super::runtime::discover(), CudaDevice::new(0)) {
            (Err(why), Err(Error::NoDevice(m))) => assert_eq!(&m, why),
            (Err(_), Err(e)) => panic!("expected NoDevice, got {e:?}"),
            (Err(_), Ok(_)) => panic!("a device opened although discovery found none"),
            // with a GPU (and NVRTC) the device opens; without NVRTC it reports NoDevice
            (Ok(_), r) => assert!(r.is_ok() || matches!(r, Err(Error::NoDevice(_)))),
        }
        assert!(matches!(CudaDevice::new(9999), Err(Error::NoDevice(_))));
    }
}

/// A cuFFT plan (destroyed on drop).
pub struct CufftPlan {
    handle: cudarc::cufft::sys::cufftHandle,
    double: bool,
    /// Complex values the plan transforms (batch · Π dims).
    values: usize,
}

impl Drop for CufftPlan {
    fn drop(&mut self) {
        // SAFETY: handle created by cufftPlanMany and not destroyed before.
        unsafe { cudarc::cufft::sys::cufftDestroy(self.handle) };
    }
}

impl FftDevice for CudaDevice {
    type FftPlan = CufftPlan;

    fn fft_plan(&self, dims: &[usize], double: bool, batch: usize) -> Result<CufftPlan> {
        use cudarc::cufft::sys;
        if !super::runtime::cufft_present() {
            return Err(Error::NoDevice("cuFFT not found (looked for libcufft.so.11 on the loader path)".into()));
        }
        let dist: usize = dims.iter().product();
        let (Ok(dist_i), Ok(batch_i)) = (i32::try_from(dist), i32::try_from(batch.max(1))) else {
            return Err(Error::Fft(format!("cuFFT plan of {batch} grids {dims:?}: sizes beyond 2^31 − 1")));
        };
        // cuFFT is row-major: slowest axis first
        let mut n: Vec<i32> = dims.iter().rev().map(|&d| d as i32).collect();
        let mut handle: sys::cufftHandle = 0;
        let ty = if double { sys::cufftType::CUFFT_Z2Z } else { sys::cufftType::CUFFT_C2C };
        // SAFETY: valid pointers; null embeds mean contiguous data (the strides are then
        // ignored and the distance between grids is `dist`).
        let r = unsafe {
            sys::cufftPlanMany(&mut handle, n.len() as i32, n.as_mut_ptr(), std::ptr::null_mut(), 1, dist_i, std::ptr::null_mut(), 1,
                               dist_i, ty, batch_i)
        };
        if r != sys::cufftResult::CUFFT_SUCCESS {
            return Err(Error::Fft(format!("cufftPlanMany({dims:?}, batch {batch}): {r:?}")));
        }
        let plan = CufftPlan { handle, double, values: dist * batch.max(1) };
        // SAFETY: the stream belongs to this device's context.
        let r = unsafe { sys::cufftSetStream(handle, self.stream.cu_stream() as sys::cudaStream_t) };
        if r != sys::cufftResult::CUFFT_SUCCESS {
            return Err(Error::Fft(format!("cufftSetStream: {r:?}")));
        }
        Ok(plan)
    }

    fn fft_exec(&self, plan: &CufftPlan, data: &mut CudaSlice<u8>, sign: i32) -> Result<()> {
        use cudarc::cufft::sys;
        let bytes = plan.values * if plan.double { 16 } else { 8 };
        if data.len() < bytes {
            return Err(Error::InvalidArg(format!("cuFFT of {} values on a buffer of {} bytes", plan.values, data.len())));
        }
        let p = self.addr(data);
        // CUFFT_INVERSE = +1 (e^{+i}), CUFFT_FORWARD = −1
        let dir = if sign >= 0 { 1 } else { -1 };
        // SAFETY: p is a device buffer of the planned size (the plan's grid, interleaved complex).
        let r = unsafe {
            if plan.double {
                sys::cufftExecZ2Z(plan.handle, p as *mut sys::cufftDoubleComplex, p as *mut sys::cufftDoubleComplex, dir)
            } else {
                sys::cufftExecC2C(plan.handle, p as *mut sys::cufftComplex, p as *mut sys::cufftComplex, dir)
            }
        };
        if r != sys::cufftResult::CUFFT_SUCCESS {
            return Err(Error::Fft(format!("cufftExec: {r:?}")));
        }
        Ok(())
    }
}
