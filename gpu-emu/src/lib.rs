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
    /// The queue of the deferred handle that allocated it ([`EmuDevice::defer_forks`]): as a
    /// CUDA free is ordered on the allocating stream, dropping the buffer runs that queue first.
    queue: Option<std::sync::Weak<Queue>>,
}

// SAFETY: EmuBuf owns its allocation; it is only Send (not Sync): a launch reads and writes it
// on the thread that holds the buffer's owner (launches run synchronously on the launching
// thread), or through &mut.
unsafe impl Send for EmuBuf {}

impl EmuBuf {
    fn layout(bytes: usize) -> std::alloc::Layout {
        std::alloc::Layout::from_size_align(bytes.max(16), 16).expect("layout")
    }
}

impl Drop for EmuBuf {
    fn drop(&mut self) {
        if let Some(q) = self.queue.as_ref().and_then(std::sync::Weak::upgrade) {
            // a failed kernel has nowhere to report from here; the free still happens after it
            let _ = flush(&q);
        }
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
    /// Cross-stream ordering check for tests: a handle made by [`Device::fork`] from this one
    /// does not run its launches, uploads, copies and memsets at once but queues them, and runs
    /// its queue only when it must — a download from it (the host waits for its stream), a
    /// [`Device::wait`] on one of its marks, an FFT on it. That is the latest schedule CUDA
    /// allows a second stream, so host code that reads the forked stream's results on the
    /// first stream without waiting for it sees them missing.
    pub defer_forks: bool,
    /// The queue of a forked handle in the `defer_forks` mode (`None`: work runs at once).
    #[doc(hidden)]
    pub queue: Option<std::sync::Arc<Queue>>,
}

impl Default for EmuDevice {
    fn default() -> Self {
        EmuDevice { shared_bytes: 48 * 1024, fail_after_launches: None, stream: 0, max_alloc_bytes: None, defer_forks: false, queue: None }
    }
}

/// The work queue of a deferred forked handle.
#[doc(hidden)]
pub type Queue = std::sync::Mutex<Vec<Deferred>>;

/// Work queued on a deferred forked handle ([`EmuDevice::defer_forks`]).
#[doc(hidden)]
pub enum Deferred {
    Launch { name: String, grid: u32, block: u32, smem: u32, slots: Vec<Slot> },
    Upload { dst: *mut u8, data: Vec<u8> },
    Copy { dst: *mut u8, src: *const u8, bytes: usize },
    Zero { dst: *mut u8, bytes: usize },
}

// SAFETY: the pointers are emulator allocations (host memory), used by one thread at a time
// under the queue's mutex, as `EmuBuf` is `Send`.
unsafe impl Send for Deferred {}

impl std::fmt::Debug for Deferred {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Deferred::Launch { name, .. } => write!(f, "launch {name}"),
            Deferred::Upload { data, .. } => write!(f, "upload of {} bytes", data.len()),
            Deferred::Copy { bytes, .. } => write!(f, "copy of {bytes} bytes"),
            Deferred::Zero { bytes, .. } => write!(f, "memset of {bytes} bytes"),
        }
    }
}

/// Runs the queued work of a deferred handle in order.
fn flush(queue: &Queue) -> Result<()> {
    let work = std::mem::take(&mut *queue.lock().unwrap_or_else(|e| e.into_inner()));
    for w in work {
        match w {
            Deferred::Launch { name, grid, block, smem, mut slots } => {
                let mut ptrs = slot_ptrs(&mut slots);
                // SAFETY: as in `EmuDevice::launch`, which queued it; the host code keeps the
                // buffers alive until it has waited for this stream.
                unsafe { launch_raw(&name, [grid, 1, 1], [block, 1, 1], smem, &mut ptrs)? }
            }
            // SAFETY (the three below): bounds checked when queued; live buffers as above.
            Deferred::Upload { dst, data } => unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), dst, data.len()) },
            Deferred::Copy { dst, src, bytes } => unsafe { std::ptr::copy(src, dst, bytes) },
            Deferred::Zero { dst, bytes } => unsafe { std::ptr::write_bytes(dst, 0, bytes) },
        }
    }
    Ok(())
}

impl EmuDevice {
    /// Queues `w` when this is a deferred handle (then `true`), else leaves it to the caller.
    fn defer(&self, w: impl FnOnce() -> Deferred) -> bool {
        match &self.queue {
            Some(q) => {
                q.lock().unwrap_or_else(|e| e.into_inner()).push(w());
                true
            }
            None => false,
        }
    }

    /// Runs this handle's queued work (nothing unless it is a deferred handle).
    fn sync(&self) -> Result<()> {
        self.queue.as_deref().map_or(Ok(()), flush)
    }

    /// The default device on stream tag `stream` (see [`EmuDevice::stream`]).
    pub fn on_stream(stream: u64) -> EmuDevice {
        EmuDevice { stream, ..EmuDevice::default() }
    }
}

/// A stream position of the emulator: the host clock (launches are synchronous) and, on a
/// deferred forked handle, its queue, which a [`Device::wait`] on the mark runs.
#[derive(Clone)]
pub struct EmuMark {
    t: std::time::Instant,
    queue: Option<std::sync::Arc<Queue>>,
}


/// One logged launch: kernel name, threads per block, dynamic shared memory (bytes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchShape {
    /// Kernel entry point.
    pub name: String,
    /// Threads per block.
    pub block: u32,
    /// Dynamic shared memory per block (bytes).
    pub smem: u32,
}

type LaunchLog = std::sync::Mutex<std::collections::HashMap<u64, Vec<LaunchShape>>>;

/// Launches per stream tag, in launch order (process-wide).
fn launch_log() -> &'static LaunchLog {
    static L: std::sync::OnceLock<LaunchLog> = std::sync::OnceLock::new();
    L.get_or_init(|| std::sync::Mutex::new(std::collections::HashMap::new()))
}

/// The launches so far on stream tag `stream` (name, block, dynamic shared memory), in launch
/// order. Tag 0, the default stream most tests use, is not logged (always empty).
pub fn stream_launch_shapes(stream: u64) -> Vec<LaunchShape> {
    launch_log().lock().unwrap_or_else(|e| e.into_inner()).get(&stream).cloned().unwrap_or_default()
}

/// The kernels launched so far on stream tag `stream`, in launch order ([`stream_launch_shapes`]
/// without the shapes).
pub fn stream_launches(stream: u64) -> Vec<String> {
    stream_launch_shapes(stream).into_iter().map(|l| l.name).collect()
}

/// Storage of one by-value kernel argument.
#[doc(hidden)]
pub enum Slot {
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
        Ok(EmuBuf { ptr, bytes, queue: self.queue.as_ref().map(std::sync::Arc::downgrade) })
    }

    fn len(&self, buf: &EmuBuf) -> usize {
        buf.bytes
    }

    fn upload(&self, dst: &mut EmuBuf, src: &[u8]) -> Result<()> {
        if src.len() > dst.bytes {
            return Err(Error::InvalidArg(format!("upload of {} bytes into a buffer of {}", src.len(), dst.bytes)));
        }
        if self.defer(|| Deferred::Upload { dst: dst.ptr, data: src.to_vec() }) {
            return Ok(());
        }
        // SAFETY: bounds checked; distinct allocations.
        unsafe { std::ptr::copy_nonoverlapping(src.as_ptr(), dst.ptr, src.len()) };
        Ok(())
    }

    fn download(&self, src: &EmuBuf, offset: usize, dst: &mut [u8]) -> Result<()> {
        if offset + dst.len() > src.bytes {
            return Err(Error::InvalidArg(format!("download of {} bytes at {offset} from a buffer of {}", dst.len(), src.bytes)));
        }
        self.sync()?;
        // SAFETY: bounds checked.
        unsafe { std::ptr::copy_nonoverlapping(src.ptr.add(offset), dst.as_mut_ptr(), dst.len()) };
        Ok(())
    }

    fn copy(&self, dst: &mut EmuBuf, dst_off: usize, src: &EmuBuf, src_off: usize, bytes: usize) -> Result<()> {
        if dst_off + bytes > dst.bytes || src_off + bytes > src.bytes {
            return Err(Error::InvalidArg(format!("device copy of {bytes} bytes from {src_off} (of {}) to {dst_off} (of {})", src.bytes, dst.bytes)));
        }
        // SAFETY: bounds checked (the pointers stay inside their allocations).
        let (d, sp) = unsafe { (dst.ptr.add(dst_off), src.ptr.add(src_off) as *const u8) };
        if self.defer(|| Deferred::Copy { dst: d, src: sp, bytes }) {
            return Ok(());
        }
        // SAFETY: bounds checked; `copy` allows overlap (same buffer).
        unsafe { std::ptr::copy(sp, d, bytes) };
        Ok(())
    }

    fn zero(&self, buf: &mut EmuBuf) -> Result<()> {
        if self.defer(|| Deferred::Zero { dst: buf.ptr, bytes: buf.bytes }) {
            return Ok(());
        }
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
            launch_log().lock().unwrap_or_else(|e| e.into_inner()).entry(self.stream).or_default()
                .push(LaunchShape { name: name.to_string(), block, smem });
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
        if let Some(q) = &self.queue {
            if !has_kernel(name) {
                return Err(Error::Internal(format!("emulator: no kernel named {name}")));
            }
            q.lock().unwrap_or_else(|e| e.into_inner()).push(Deferred::Launch { name: name.to_string(), grid, block, smem, slots });
            return Ok(());
        }
        let mut ptrs = slot_ptrs(&mut slots);
        // SAFETY: the host code passes the kernels' parameter lists (checked by the tests that
        // compare every kernel's output with the CPU); buffers outlive the launch.
        unsafe { launch_raw(name, [grid, 1, 1], [block, 1, 1], smem, &mut ptrs) }
    }

    fn max_shared_bytes(&self) -> usize {
        self.shared_bytes
    }

    type Mark = EmuMark;

    fn mark(&self) -> Result<EmuMark> {
        Ok(EmuMark { t: std::time::Instant::now(), queue: self.queue.clone() })
    }

    fn seconds(&self, start: &EmuMark, end: &EmuMark) -> Result<f64> {
        Ok(end.t.duration_since(start.t).as_secs_f64())
    }

    /// A clone: emulated launches and copies complete before they return, so a second
    /// stream has nothing to overlap and its order is the order of issue — except with
    /// [`EmuDevice::defer_forks`], where the clone gets a queue of its own.
    fn fork(&self) -> Result<EmuDevice> {
        let queue = self.defer_forks.then(|| std::sync::Arc::new(Queue::default()));
        Ok(EmuDevice { queue, defer_forks: false, ..self.clone() })
    }

    /// Runs the queue of the deferred handle that recorded `mark` (all of it: at least the
    /// work before the mark, which is what a wait guarantees); nothing otherwise.
    fn wait(&self, mark: &EmuMark) -> Result<()> {
        mark.queue.as_deref().map_or(Ok(()), flush)
    }

    fn synchronize(&self) -> Result<()> {
        self.sync()
    }

    /// The memory of an [`EmuBuf`] at `ptr` (its [`Device::addr`]), viewed without taking
    /// ownership: the emulator's counterpart of CUDA's view of a caller's device pointer.
    unsafe fn with_foreign<R>(&self, ptr: u64, bytes: usize, f: impl FnOnce(&mut EmuBuf) -> R) -> R {
        let mut b = std::mem::ManuallyDrop::new(EmuBuf { ptr: ptr as *mut u8, bytes, queue: None });
        f(&mut b)
    }
}

/// The kernel parameter pointers into `slots` (CUDA's `void**` argument list).
fn slot_ptrs(slots: &mut [Slot]) -> Vec<*mut c_void> {
    slots
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
        .collect()
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
        self.sync()?;
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
                                         opts: &farfield::nufft::NufftOpts) -> Result<farfield::NufftPlan<T>> {
    use farfield::gpu::nufft::{GpuNufft, GpuNufftExec};
    use farfield::gpu::type3::{GpuType3, GpuType3Exec};
    use farfield::nufft::{Backend, NufftParams, Precision};
use farfield::NufftPlan;
    let sopts = farfield::gpu::spread::GpuSpreadOpts { block: 64, ..farfield::gpu::spread::GpuSpreadOpts::from_nufft_opts(opts) };
    if ty == 3 {
        let plan = GpuType3::new(EmuDevice::default(), dim, iflag, ntrans, tol, opts, sopts)?;
        return Ok(NufftPlan::from_exec(3, dim, ntrans, Backend::Cuda, opts, Box::new(GpuType3Exec::from_plan(plan))));
    }
    let params = NufftParams::new(ty, dim, n_modes, iflag, ntrans, tol, Precision::of::<T>(), opts, Backend::Cuda)?;
    let plan = GpuNufft::new(EmuDevice::default(), params, sopts)?;
    Ok(NufftPlan::from_exec(ty, dim, ntrans, Backend::Cuda, opts, Box::new(GpuNufftExec::from_plan(plan))))
}
