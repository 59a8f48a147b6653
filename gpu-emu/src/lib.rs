//! Test-only CUDA-on-CPU emulator (docs/design.md §5.3).
//!
//! `cpp/cuda_emu.h` gives CUDA's built-ins a CPU meaning; `cpp/emu.cpp` is the launcher and
//! includes the library's `src/gpu/kernels/*.cu` **unchanged**, plus the harness self-test
//! kernels (`cpp/selftest.cu`). [`EmuDevice`] implements [`farfield::gpu::device::Device`], so
//! the library's GPU host code (buffers, launches, bin sort, mesh structures) runs against the
//! emulated kernels in `cargo test`.

use farfield::gpu::device::{Arg, Device};
use farfield::gpu::types::{FfGeom, FfKernel};
use farfield::{Error, Result};
use num_complex::Complex;
use std::ffi::{c_char, c_int, c_uint, c_void, CString};

extern "C" {
    fn ff_emu_launch(name: *const c_char, grid: *const c_uint, block: *const c_uint, smem: c_uint, args: *mut *mut c_void) -> c_int;
    fn ff_emu_set_stagger(on: c_int);
    fn ff_emu_has_kernel(name: *const c_char) -> c_int;
    fn ff_emu_kernel_count() -> c_int;
}

/// Delays a pseudo-random subset of threads at the start of every block (race detection).
pub fn set_stagger(on: bool) {
    // SAFETY: plain setter.
    unsafe { ff_emu_set_stagger(on as c_int) }
}

/// Whether the emulator has a kernel of this name.
pub fn has_kernel(name: &str) -> bool {
    let c = CString::new(name).expect("no NUL");
    // SAFETY: valid C string.
    unsafe { ff_emu_has_kernel(c.as_ptr()) != 0 }
}

/// Number of kernels compiled into the emulator (library kernels plus self-test kernels).
pub fn kernel_count() -> usize {
    // SAFETY: plain getter.
    unsafe { ff_emu_kernel_count() as usize }
}

/// Launches a kernel on a 3-D grid with raw argument pointers (cuLaunchKernel style).
///
/// # Safety
/// `args` must point at values of exactly the kernel's parameter types, and every pointer
/// argument must be valid for the kernel's accesses.
pub unsafe fn launch_raw(name: &str, grid: [u32; 3], block: [u32; 3], smem: u32, args: &mut [*mut c_void]) -> Result<()> {
    let c = CString::new(name).map_err(|_| Error::InvalidArg("kernel name with NUL".into()))?;
    match ff_emu_launch(c.as_ptr(), grid.as_ptr(), block.as_ptr(), smem, args.as_mut_ptr()) {
        0 => Ok(()),
        1 => Err(Error::Internal(format!("emulator: no kernel named {name}"))),
        r => Err(Error::InvalidArg(format!("emulator: bad launch configuration for {name} (code {r}): grid {grid:?} block {block:?}"))),
    }
}

/// A host allocation standing in for device memory (16-byte aligned).
pub struct EmuBuf {
    ptr: *mut u8,
    bytes: usize,
}

// SAFETY: EmuBuf owns its allocation; access is serialised by the launcher or by &mut.
unsafe impl Send for EmuBuf {}

impl EmuBuf {
    fn layout(bytes: usize) -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(bytes.max(16), 16).expect("layout")
    }
}

impl Drop for EmuBuf {
    fn drop(&mut self) {
        // SAFETY: allocated in EmuDevice::alloc with this layout.
        unsafe { std::alloc::dealloc(self.ptr, Self::layout(self.bytes)) }
    }
}

/// The emulated device (kernels run on the CPU, one block at a time).
#[derive(Debug, Clone)]
pub struct EmuDevice {
    /// Dynamic shared memory per block reported to the host code (default 48 KiB, the CUDA
    /// default without opt-in).
    pub shared_bytes: usize,
    /// Fault injection for tests: when set, the launch that finds the counter at 0 fails with
    /// [`Error::Internal`] (and every later one), as a device error midway would; each launch
    /// decrements it. Shared by the clones of the device.
    pub fail_after_launches: Option<std::sync::Arc<std::sync::atomic::AtomicUsize>>,
    /// The stream this device handle stands for (0 = the default stream), as a CUDA device
    /// handle made on a caller's stream: every launch on a non-zero tag is recorded in the
    /// process-wide launch log ([`stream_launches`]), so tests can check that a plan issues all
    /// its work on the stream of the device it was built on.
    pub stream: u64,
    /// Fault injection for tests: allocations of more bytes than this fail with
    /// [`Error::Alloc`], as `cuMemAlloc` does when the device is full.
    pub max_alloc_bytes: Option<usize>,
}

impl Default for EmuDevice {
    fn default() -> Self {
        EmuDevice { shared_bytes: 48 * 1024, fail_after_launches: None, stream: 0, max_alloc_bytes: None }
    }
}

impl EmuDevice {
    /// The default device on stream tag `stream` (see [`EmuDevice::stream`]).
    pub fn on_stream(stream: u64) -> EmuDevice {
        EmuDevice { stream, ..EmuDevice::default() }
    }
}

type LaunchLog = std::sync::Mutex<std::collections::HashMap<u64, Vec<String>>>;

/// Kernel names launched per stream tag, in launch order (process-wide).
fn launch_log() -> &'static LaunchLog {
    static L: std::sync::OnceLock<LaunchLog> = std::sync::OnceLock::new();
    L.get_or_init(|| std::sync::Mutex::new(std::collections::HashMap::new()))
}

/// The kernels launched so far on stream tag `stream`, in launch order. Tag 0, the default
/// stream every other test uses, is not logged (always empty).
pub fn stream_launches(stream: u64) -> Vec<String> {
    launch_log().lock().unwrap_or_else(|e| e.into_inner()).get(&stream).cloned().unwrap_or_default()
}

/// Storage of one by-value kernel argument.
enum Slot {
    Ptr(*mut c_void),
    I32(i32),
    U32(u32),
    U64(u64),
    F64(f64),
    Geom(FfGeom),
    Kernel(FfKernel),
}

impl Device for EmuDevice {
    type Buf = EmuBuf;

    fn name(&self) -> String {
        "CUDA-on-CPU emulator".into()
    }

    fn alloc(&self, bytes: usize) -> Result<EmuBuf> {
        if self.max_alloc_bytes.is_some_and(|m| bytes > m) {
            return Err(Error::Alloc(format!("emulated device buffer of {bytes} bytes (injected limit)")));
        }
        // SAFETY: non-zero size layout.
        let ptr = unsafe { std::alloc::alloc_zeroed(EmuBuf::layout(bytes)) };
        if ptr.is_null() {
            return Err(Error::Alloc(format!("emulated device buffer of {bytes} bytes")));
        }
        Ok(EmuBuf { ptr, bytes })
    }

    fn len(&self, buf: &EmuBuf) -> usize {
        buf.bytes
    }

    fn upload(&self, dst: &mut EmuBuf, src: &[u8]) -> Result<()> {
        if src.len() > dst.bytes {
            return Err(Error::InvalidArg(format!("upload of {} bytes into a buffer of {}", src.len(), dst.bytes)));
        }
        // SAFETY: bounds checked; distinct allocations.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.ptr, src.len()) };
        Ok(())
    }

    fn download(&self, src: &EmuBuf, offset: usize, dst: &mut [u8]) -> Result<()> {
        if offset + dst.len() > src.bytes {
            return Err(Error::InvalidArg(format!("download of {} bytes at {offset} from a buffer of {}", dst.len(), src.bytes)));
        }
        // SAFETY: bounds checked.
        unsafe { std::ptr::copy_nonoverlapping(src.ptr.add(offset), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    fn copy(&self, dst: &mut EmuBuf, dst_off: usize, src: &EmuBuf, src_off: usize, bytes: usize) -> Result<()> {
        if dst_off + bytes > dst.bytes || src_off + bytes > src.bytes {
            return Err(Error::InvalidArg(format!("device copy of {bytes} bytes from {src_off} (of {}) to {dst_off} (of {})", src.bytes, dst.bytes)));
        }
        // SAFETY: bounds checked; `copy` allows overlap (same buffer).
        unsafe { std::ptr::copy(src.ptr.add(src_off), dst.ptr.add(dst_off), bytes) };
        Ok(())
    }

    fn zero(&self, buf: &mut EmuBuf) -> Result<()> {
        // SAFETY: the allocation has buf.bytes bytes.
        unsafe { std::ptr::write_bytes(buf.ptr, 0, buf.bytes) };
        Ok(())
    }

    fn addr(&self, buf: &EmuBuf) -> u64 {
        buf.ptr as u64
    }

    fn launch(&self, name: &str, grid: u32, block: u32, smem: u32, args: &[Arg<'_, EmuBuf>]) -> Result<()> {
        if let Some(n) = &self.fail_after_launches {
            use std::sync::atomic::Ordering;
            if n.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| v.checked_sub(1)).is_err() {
                return Err(Error::Internal(format!("{name}: injected device failure")));
            }
        }
        if smem as usize > self.shared_bytes {
            return Err(Error::InvalidArg(format!("{name}: {smem} bytes of shared memory exceed {}", self.shared_bytes)));
        }
        if self.stream != 0 {
            launch_log().lock().unwrap_or_else(|e| e.into_inner()).entry(self.stream).or_default().push(name.to_string());
        }
        let mut slots: Vec<Slot> = args
            .iter()
            .map(|a| match a {
                Arg::Buf(b) => Slot::Ptr(b.ptr as *mut c_void),
                Arg::Null => Slot::Ptr(std::ptr::null_mut()),
                Arg::I32(v) => Slot::I32(*v),
                Arg::U32(v) => Slot::U32(*v),
                Arg::U64(v) => Slot::U64(*v),
                Arg::F64(v) => Slot::F64(*v),
                Arg::Geom(g) => Slot::Geom(*g),
                Arg::Kernel(k) => Slot::Kernel(*k),
            })
            .collect();
        let mut ptrs: Vec<*mut c_void> = slots
            .iter_mut()
            .map(|s| match s {
                Slot::Ptr(p) => p as *mut *mut c_void as *mut c_void,
                Slot::I32(v) => v as *mut i32 as *mut c_void,
                Slot::U32(v) => v as *mut u32 as *mut c_void,
                Slot::U64(v) => v as *mut u64 as *mut c_void,
                Slot::F64(v) => v as *mut f64 as *mut c_void,
                Slot::Geom(g) => g as *mut FfGeom as *mut c_void,
                Slot::Kernel(k) => k as *mut FfKernel as *mut c_void,
            })
            .collect();
        // SAFETY: the host code passes the kernels' parameter lists (checked by the tests that
        // compare every kernel's output with the CPU); buffers outlive the launch.
        unsafe { launch_raw(name, [grid, 1, 1], [block, 1, 1], smem, &mut ptrs) }
    }

    fn max_shared_bytes(&self) -> usize {
        self.shared_bytes
    }

    type Mark = std::time::Instant;

    fn mark(&self) -> Result<std::time::Instant> {
        Ok(std::time::Instant::now())
    }

    fn seconds(&self, start: &std::time::Instant, end: &std::time::Instant) -> Result<f64> {
        Ok(end.duration_since(*start).as_secs_f64())
    }

    /// A clone: emulated launches and copies complete before they return, so a second
    /// stream has nothing to overlap and its order is the order of issue.
    fn fork(&self) -> Result<EmuDevice> {
        Ok(self.clone())
    }

    fn wait(&self, _mark: &std::time::Instant) -> Result<()> {
        Ok(())
    }

    /// The memory of an [`EmuBuf`] at `ptr` (its [`Device::addr`]), viewed without taking
    /// ownership: the emulator's counterpart of CUDA's view of a caller's device pointer.
    unsafe fn with_foreign<R>(&self, ptr: u64, bytes: usize, f: impl FnOnce(&mut EmuBuf) -> R) -> R {
        let mut b = std::mem::ManuallyDrop::new(EmuBuf { ptr: ptr as *mut u8, bytes });
        f(&mut b)
    }
}

/// FFT plan of the emulated device: the grid shape and batch (FFTW runs on the host buffer,
/// standing in for cuFFT).
pub struct EmuFftPlan {
    dims: Vec<usize>,
    double: bool,
    batch: usize,
}

/// `batch` in-place transforms of the grids `dims` stored one after the other in `buf`, by one
/// FFTW plan of `howmany = batch` (as cuFFT's batched plan).
fn fftw_inplace<T: farfield::Real>(dims: &[usize], batch: usize, buf: &mut EmuBuf, sign: i32) -> Result<()> {
    use farfield::fft::{AlignedVec, FftPlan, Sign};
    let len: usize = dims.iter().product::<usize>() * batch;
    let bytes = len * std::mem::size_of::<Complex<T>>();
    if bytes > buf.bytes {
        return Err(Error::InvalidArg(format!("FFT of {len} points on a buffer of {} bytes", buf.bytes)));
    }
    let mut a = AlignedVec::<Complex<T>>::zeroed(len, "emulated cuFFT buffer")?;
    // SAFETY: both regions hold `bytes` bytes; Complex<T> is plain old data.
    unsafe { std::ptr::copy_nonoverlapping(buf.ptr, a.as_mut_ptr() as *mut u8, bytes) };
    let plan = FftPlan::<T>::c2c_inplace(dims, batch, Sign::from_iflag(sign), &mut a, 64, 1)?;
    // FFTW_ESTIMATE (64) does not touch the buffer while planning
    plan.execute_c2c(&mut a);
    // SAFETY: as above.
    unsafe { std::ptr::copy_nonoverlapping(a.as_ptr() as *const u8, buf.ptr, bytes) };
    Ok(())
}

impl farfield::gpu::device::FftDevice for EmuDevice {
    type FftPlan = EmuFftPlan;

    fn fft_plan(&self, dims: &[usize], double: bool, batch: usize) -> Result<EmuFftPlan> {
        Ok(EmuFftPlan { dims: dims.to_vec(), double, batch: batch.max(1) })
    }

    fn fft_exec(&self, plan: &EmuFftPlan, data: &mut EmuBuf, sign: i32) -> Result<()> {
        if plan.double {
            fftw_inplace::<f64>(&plan.dims, plan.batch, data, sign)
        } else {
            fftw_inplace::<f32>(&plan.dims, plan.batch, data, sign)
        }
    }
}

// ---------------------------------------------------------------------------------------------
// The NUFFT plan front on the emulator, with "device addresses" (`setpts_device`,
// `execute_device`): what `NufftPlan::new` gives with backend CUDA, built on an `EmuDevice`,
// with the library's own executors (`GpuNufftExec`, `GpuType3Exec`; the addresses are viewed
// through `Device::with_foreign`). Used by tests of code that takes device pointers (the
// cuFINUFFT drop-in, compat/cufinufft).

/// `NufftPlan::new` with backend CUDA on an emulated device (same arguments, validation and
/// parameters; the GPU options of `opts` as `CudaNufft` and `CudaType3` read them).
pub fn emu_nufft_plan<T: farfield::Real>(ty: i32, dim: usize, n_modes: &[i64], iflag: i32, ntrans: usize, tol: f64,
                                         opts: &farfield::nufft::NufftOpts) -> Result<farfield::nufft::NufftPlan<T>> {
    use farfield::gpu::nufft::{GpuNufft, GpuNufftExec};
    use farfield::gpu::type3::{GpuType3, GpuType3Exec};
    use farfield::nufft::{Backend, NufftParams, NufftPlan, Precision};
    let sopts = farfield::gpu::spread::GpuSpreadOpts { block: 64, ..farfield::gpu::spread::GpuSpreadOpts::from_nufft_opts(opts) };
    if ty == 3 {
        let plan = GpuType3::new(EmuDevice::default(), dim, iflag, ntrans, tol, opts, sopts)?;
        return Ok(NufftPlan::from_exec(3, dim, ntrans, Backend::Cuda, opts, Box::new(GpuType3Exec::from_plan(plan))));
    }
    let params = NufftParams::new(ty, dim, n_modes, iflag, ntrans, tol, Precision::of::<T>(), opts, Backend::Cuda)?;
    let plan = GpuNufft::new(EmuDevice::default(), params, sopts)?;
    Ok(NufftPlan::from_exec(ty, dim, ntrans, Backend::Cuda, opts, Box::new(GpuNufftExec::from_plan(plan))))
}

/// A device → host copy from an emulator buffer's address (the emulator's `cuMemcpyDtoH`).
///
/// # Safety
/// `src` must be valid for reads of `dst.len()` bytes.
pub unsafe fn emu_download(_opts: &farfield::nufft::NufftOpts, src: u64, dst: &mut [u8]) -> Result<()> {
    std::ptr::copy_nonoverlapping(src as *const u8, dst.as_mut_ptr(), dst.len());
    Ok(())
}
