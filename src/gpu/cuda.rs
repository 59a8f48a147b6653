//! The CUDA implementation of [`Device`] through cudarc (docs/design.md §5.1).
//!
//! **One device registry per process.** Everything that does not depend on a plan is made once
//! per device and process and shared by every plan: the device's primary context (retained once
//! and kept for the life of the process, so it is never torn down and re-created between
//! plans), the embedded kernels compiled by NVRTC straight to CUBIN for the device's `sm_XX`
//! and loaded as modules once (no PTX JIT by the driver at plan creation), one
//! [`CudaFunction`] per kernel name, the device limits ([`DeviceLimits`], queried once) and a
//! pool of cuFFT plans keyed by shape and precision. A [`CudaDevice`] is that shared state plus
//! a stream: cloning it is cheap, and after the first plan [`CudaDevice::new`] is a map lookup
//! (microseconds). NVRTC's output (PTX and CUBIN) is cached per (source, architecture) for the
//! process and on disk ([`super::cubin_cache`]), so only the first process on a machine compiles;
//! `farfield gpu check` uses the PTX path of the same compilation.
//!
//! **Streams.** A device handle runs every launch, copy, memset and cuFFT execution on one
//! stream: the context's default (legacy NULL) stream unless a caller's stream is given
//! ([`CudaDevice::with_stream`], C: `opts.gpu_stream`), which is borrowed (never destroyed).
//! Host downloads synchronise that stream before returning; nothing else synchronises.
//!
//! **Shared memory.** [`Device::max_shared_bytes`] reports the opt-in limit per block
//! (`CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN`: 227 KiB on H100, 163 KiB on
//! A100); a launch with more dynamic shared memory than the 48 KiB default first raises the
//! function's `CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES` (once per function and size).
//!
//! This path cannot be exercised on machines without a GPU; everything it launches is the same
//! host code ([`super::spread`]) that the emulator runs in CI, and the kernels are compiled for
//! sm_80/sm_90 (PTX assembled by ptxas, and CUBIN) by `farfield gpu check`. Opening a device
//! never panics: it goes through [`super::runtime::discover`] first and runs cudarc under
//! `catch_unwind`.

use super::device::{Arg, Device, FftDevice};
use super::types::{FfGeom, FfKernel};
use crate::error::{Error, Result};
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig, PushKernelArg};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

// SAFETY: #[repr(C)] plain old data with the layouts of the CUDA structs (tested in types.rs).
unsafe impl DeviceRepr for FfGeom {}
// SAFETY: as above; `tab` is a device address.
unsafe impl DeviceRepr for FfKernel {}

/// Dynamic shared memory a kernel may use without opting in (bytes; every CUDA device).
pub const DEFAULT_SHARED_BYTES: usize = 48 * 1024;

/// What NVRTC made of one kernel source for one architecture.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The PTX (for `farfield gpu check`, and loaded when no CUBIN is available).
    pub ptx: String,
    /// The CUBIN for the architecture (`nvrtcGetCUBIN`); what a device loads, without driver JIT.
    pub cubin: Option<Vec<u8>>,
    /// Wall time of the compilation (or of reading it from the disk cache).
    pub time: Duration,
    /// Whether it came from the disk cache ([`super::cubin_cache`]) rather than NVRTC.
    pub from_disk: bool,
}

type CompileCache = Mutex<HashMap<(String, String), Arc<Compiled>>>;

/// NVRTC output per (source name, architecture), compiled once per process.
fn compile_cache() -> &'static CompileCache {
    static C: OnceLock<CompileCache> = OnceLock::new();
    C.get_or_init(|| Mutex::new(HashMap::new()))
}

/// The embedded sources ([`super::KERNEL_SOURCES`]) compiled for `arch` (`sm_XX`): PTX and
/// CUBIN of each, as [`compiled_module`] makes them.
/// Errors: [`Error::NoDevice`] (NVRTC not loadable), [`Error::Internal`] (NVRTC failed).
pub fn compiled_for(arch: &str) -> Result<Vec<(String, Arc<Compiled>)>> {
    super::KERNEL_SOURCES.iter().map(|&(name, src)| Ok((name.to_string(), compiled_module(name, src, arch)?))).collect()
}

/// Module `name` of source `src` compiled for `arch` (`sm_XX`): PTX and CUBIN, read from the
/// disk cache ([`super::cubin_cache`]) or compiled on first use (and stored there), and kept for
/// the process under (`name`, `arch`) (the lock is held while compiling, so concurrent first
/// uses compile once). Used for the library's sources and the width-specialised modules
/// ([`super::WidthModule`]).
/// Errors: [`Error::NoDevice`] (NVRTC not loadable), [`Error::Internal`] (NVRTC failed).
pub fn compiled_module(name: &str, src: &str, arch: &str) -> Result<Arc<Compiled>> {
    super::check::load_nvrtc().map_err(Error::NoDevice)?;
    let mut cache = compile_cache().lock().unwrap_or_else(|e| e.into_inner());
    let key = (name.to_string(), arch.to_string());
    if let Some(c) = cache.get(&key) {
        return Ok(c.clone());
    }
    let t = Instant::now();
    let disk = super::cubin_cache::dir().zip(super::check::nvrtc_version());
    let entry = disk.as_ref().map(|(dir, ver)| (dir, super::cubin_cache::key(name, src, arch, ver)));
    let stored = entry.as_ref().and_then(|(dir, k)| super::cubin_cache::load(dir, k));
    let from_disk = stored.is_some();
    let (ptx, cubin) = match stored {
        Some(v) => v,
        None => {
            let (ptx, cubin) =
                super::check::compile_full(name, src, arch).map_err(|e| Error::Internal(format!("NVRTC failed on {name} for {arch}: {e}")))?;
            if let Some((dir, k)) = &entry {
                super::cubin_cache::store(dir, k, &ptx, cubin.as_deref());
            }
            (ptx, cubin)
        }
    };
    let c = Arc::new(Compiled { ptx, cubin, time: t.elapsed(), from_disk });
    cache.insert(key, c.clone());
    Ok(c)
}

/// PTX of the embedded sources for `arch` (from [`compiled_for`]'s cache).
pub fn ptx_for(arch: &str) -> Result<Vec<(String, String)>> {
    Ok(compiled_for(arch)?.into_iter().map(|(n, c)| (n, c.ptx.clone())).collect())
}

fn drv<E: std::fmt::Debug>(what: &str) -> impl FnOnce(E) -> Error + '_ {
    move |e| Error::Internal(format!("CUDA {what}: {e:?}"))
}

/// Limits of a device, queried once when the registry opens it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DeviceLimits {
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Shared memory per block without opt-in (bytes; 48 KiB).
    pub shared_per_block: usize,
    /// Shared memory per block with opt-in (bytes; 227 KiB on H100, 163 KiB on A100, 99 KiB on
    /// sm_86/sm_89); the limit [`Device::max_shared_bytes`] reports.
    pub shared_per_block_optin: usize,
    /// Shared memory per multiprocessor (bytes).
    pub shared_per_sm: usize,
    /// Number of multiprocessors.
    pub sm_count: usize,
}

/// How long opening a device took (the first use in the process; later uses find it in the
/// registry).
#[derive(Debug, Clone, Copy, Default)]
pub struct OpenTimes {
    /// NVRTC compilation of every source (reading from the disk cache when `compile_from_disk`;
    /// about 0 when the process had compiled them already).
    pub compile: Duration,
    /// Whether every source came from the disk cache ([`super::cubin_cache`]).
    pub compile_from_disk: bool,
    /// Retaining the primary context.
    pub context: Duration,
    /// Loading the modules (CUBIN, or PTX with driver JIT when `from_cubin` is false).
    pub module_load: Duration,
    /// Whether the modules were loaded from CUBIN.
    pub from_cubin: bool,
}

/// A cached kernel: the function handle and the dynamic shared memory limit set on it (0 =
/// the default, [`DEFAULT_SHARED_BYTES`]).
struct Func {
    f: CudaFunction,
    smem_set: u32,
}

/// Key of the cuFFT plan pool: the arguments of [`FftDevice::fft_plan`] (grid sizes x first,
/// precision, batch count).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
struct FftKey {
    dims: Vec<usize>,
    double: bool,
    batch: usize,
}

/// Idle cuFFT handles of one device (with their work-area bytes).
#[derive(Default)]
struct FftPool {
    idle: HashMap<FftKey, Vec<(cudarc::cufft::sys::cufftHandle, usize)>>,
    idle_bytes: usize,
}

/// Idle cuFFT plans kept per key.
const FFT_POOL_PER_KEY: usize = 4;
/// Work-area bytes the idle cuFFT plans of one device may hold in all (larger plans are
/// destroyed when their NUFFT plan is).
const FFT_POOL_MAX_BYTES: usize = 1 << 30;

/// The per-device state shared by every plan of the process (see the module docs).
struct DeviceState {
    ordinal: usize,
    ctx: Arc<CudaContext>,
    name: String,
    /// The loaded modules, one per source of [`super::KERNEL_SOURCES`].
    modules: Vec<Arc<CudaModule>>,
    /// Kernel name → module index, from the compiled PTX's entry list.
    entries: HashMap<String, usize>,
    /// Architecture the modules are compiled for (`sm_XX`).
    arch: String,
    /// The width-specialised modules loaded so far ([`super::WidthModule`], by name).
    width_modules: Mutex<HashMap<String, Arc<CudaModule>>>,
    funcs: Mutex<HashMap<String, Func>>,
    limits: DeviceLimits,
    open: OpenTimes,
    fft_pool: Mutex<FftPool>,
}

impl DeviceState {
    /// The function `name`, with its dynamic shared memory limit raised to `smem` when that is
    /// above the default (once per function and size).
    fn function(&self, name: &str, smem: u32) -> Result<CudaFunction> {
        let mut funcs = self.funcs.lock().unwrap_or_else(|e| e.into_inner());
        if !funcs.contains_key(name) {
            let f = match super::WidthModule::of_kernel(name) {
                Some(wm) => self.width_module(&wm)?.load_function(name).ok(),
                None => {
                    let candidates: Vec<&Arc<CudaModule>> = match self.entries.get(name) {
                        Some(&i) => vec![&self.modules[i]],
                        None => self.modules.iter().collect(),
                    };
                    candidates.into_iter().find_map(|m| m.load_function(name).ok())
                }
            }
            .ok_or_else(|| Error::Internal(format!("CUDA kernel {name} not found in the loaded modules")))?;
            funcs.insert(name.to_string(), Func { f, smem_set: 0 });
        }
        let k = funcs.get_mut(name).expect("inserted above");
        if smem as usize > self.limits.shared_per_block && smem > k.smem_set {
            if smem as usize > self.limits.shared_per_block_optin {
                return Err(Error::InvalidArg(format!(
                    "{name}: {smem} bytes of dynamic shared memory exceed the device's opt-in limit of {} bytes",
                    self.limits.shared_per_block_optin)));
            }
            self.ctx.bind_to_thread().map_err(drv("bind context"))?;
            k.f.set_attribute(CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, smem as i32)
                .map_err(|e| Error::Internal(format!("CUDA {name}: setting the dynamic shared memory limit to {smem} bytes: {e:?}")))?;
            k.smem_set = smem;
        }
        Ok(k.f.clone())
    }

    /// The width-specialised module `wm`, compiled ([`compiled_module`]) and loaded on first use.
    /// Errors: [`Error::NoDevice`], [`Error::Internal`] (NVRTC or the module load failed).
    fn width_module(&self, wm: &super::WidthModule) -> Result<Arc<CudaModule>> {
        let name = wm.name();
        let mut loaded = self.width_modules.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(m) = loaded.get(&name) {
            return Ok(m.clone());
        }
        let c = compiled_module(&name, &wm.source(), &self.arch)?;
        let m = self.ctx.load_module(module_image(&c)).map_err(|e| Error::Internal(format!("CUDA module load of {name} for {}: {e:?}", self.arch)))?;
        loaded.insert(name, m.clone());
        Ok(m)
    }
}

/// What the driver loads for a compiled module: the CUBIN, or the PTX (JIT) when there is none.
fn module_image(c: &Compiled) -> cudarc::nvrtc::Ptx {
    match &c.cubin {
        Some(b) => cudarc::nvrtc::Ptx::from_binary(b.clone()),
        None => cudarc::nvrtc::Ptx::from_src(c.ptx.clone()),
    }
}

type Registry = Mutex<HashMap<usize, Arc<DeviceState>>>;

/// The process-wide device registry: one [`DeviceState`] per ordinal, made on first use and
/// kept for the life of the process.
fn registry() -> &'static Registry {
    static R: OnceLock<Registry> = OnceLock::new();
    R.get_or_init(|| Mutex::new(HashMap::new()))
}

/// Opens device `info.ordinal`: compile (cached), retain the primary context, query the
/// limits, load the modules (CUBIN, PTX as a fallback).
fn open_state(info: &super::runtime::DeviceInfo) -> Result<Arc<DeviceState>> {
    let ordinal = info.ordinal;
    let arch = format!("sm_{}{}", info.compute_capability.0, info.compute_capability.1);
    let t = Instant::now();
    let compiled = compiled_for(&arch)?;
    let compile = t.elapsed();
    let compile_from_disk = compiled.iter().all(|(_, c)| c.from_disk);
    let r = std::panic::catch_unwind(|| -> Result<Arc<DeviceState>> {
        let t = Instant::now();
        let ctx = CudaContext::new(ordinal).map_err(drv("context"))?;
        // every buffer of a plan is used on that plan's one stream and plans share no buffers,
        // so cudarc's cross-stream events (two per allocation) are not needed
        // SAFETY: see above; nothing in this crate uses one buffer on two streams.
        unsafe { ctx.disable_event_tracking() };
        let context = t.elapsed();
        let attr = |a: CUdevice_attribute| ctx.attribute(a).map(|v| v.max(0) as usize).map_err(drv("device attribute"));
        let shared_per_block = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK)?;
        let optin = attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)?;
        let limits = DeviceLimits {
            compute_capability: info.compute_capability,
            shared_per_block,
            shared_per_block_optin: optin.max(shared_per_block),
            shared_per_sm: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_MULTIPROCESSOR)?,
            sm_count: attr(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
        };
        let t = Instant::now();
        let mut modules = Vec::new();
        let mut entries = HashMap::new();
        let mut from_cubin = true;
        for (i, (name, c)) in compiled.iter().enumerate() {
            from_cubin &= c.cubin.is_some();
            modules.push(ctx.load_module(module_image(c)).map_err(|e| Error::Internal(format!("CUDA module load of {name} for {arch}: {e:?}")))?);
            for e in super::check::entries(&c.ptx) {
                entries.insert(e, i);
            }
        }
        let open = OpenTimes { compile, compile_from_disk, context, module_load: t.elapsed(), from_cubin };
        Ok(Arc::new(DeviceState {
            ordinal,
            ctx,
            name: format!("{} ({arch})", info.name),
            modules,
            entries,
            arch: arch.clone(),
            width_modules: Mutex::new(HashMap::new()),
            funcs: Mutex::new(HashMap::new()),
            limits,
            open,
            fft_pool: Mutex::new(FftPool::default()),
        }))
    });
    r.unwrap_or_else(|_| Err(Error::NoDevice("the CUDA driver bindings panicked while opening the device".into())))
}

/// The registry's state for device `ordinal` (opened on first use) and whether this call
/// opened it. Errors: [`Error::NoDevice`], [`Error::Internal`].
fn device_state(ordinal: usize) -> Result<(Arc<DeviceState>, bool)> {
    let devs = super::runtime::discover().as_ref().map_err(|why| Error::NoDevice(why.clone()))?;
    let info = devs.iter().find(|d| d.ordinal == ordinal).ok_or_else(|| Error::NoDevice(format!("no CUDA device {ordinal} ({} found)", devs.len())))?;
    let mut reg = registry().lock().unwrap_or_else(|e| e.into_inner());
    if let Some(s) = reg.get(&ordinal) {
        return Ok((s.clone(), false));
    }
    let s = open_state(info)?;
    reg.insert(ordinal, s.clone());
    Ok((s, true))
}

/// A CUDA device handle: the registry's shared per-device state (context, modules, functions,
/// limits, cuFFT pool) and one stream. Clones share both.
#[derive(Clone)]
pub struct CudaDevice {
    st: Arc<DeviceState>,
    stream: Arc<CudaStream>,
    borrowed: bool,
    debug: u32,
}

impl CudaDevice {
    /// Device `ordinal` on the context's default stream: from the process's device registry,
    /// opened there on first use (NVRTC compilation to CUBIN, primary context, module load).
    /// Errors: [`Error::NoDevice`] (no driver, no such device, no NVRTC), [`Error::Internal`].
    pub fn new(ordinal: usize) -> Result<CudaDevice> {
        // SAFETY: stream 0 is the context's default stream.
        unsafe { Self::with_stream(ordinal, 0, 0) }
    }

    /// Device `ordinal` running its work on the caller's CUDA stream `stream` (a `CUstream` /
    /// `cudaStream_t` address; 0 = the context's default stream), borrowed: it is never
    /// destroyed here. `debug > 0` prints how long opening the device took (or that the
    /// registry had it) and, later, each cuFFT plan's creation, to stderr.
    /// Errors: as [`CudaDevice::new`].
    ///
    /// # Safety
    /// A non-zero `stream` must be a valid stream of device `ordinal`'s primary context (the
    /// context of the CUDA runtime API, which CuPy, PyTorch and cuFINUFFT use), and must stay
    /// valid as long as this handle or any clone of it (a plan, its buffers) lives.
    pub unsafe fn with_stream(ordinal: usize, stream: u64, debug: u32) -> Result<CudaDevice> {
        let t = Instant::now();
        let (st, opened) = device_state(ordinal)?;
        let lookup = t.elapsed();
        let s = if stream == 0 {
            st.ctx.default_stream()
        } else {
            st.ctx.wrap_borrowed_stream(stream as cudarc::driver::sys::CUstream)
        };
        if debug > 0 {
            let o = st.open;
            let l = st.limits;
            if opened {
                eprintln!(
                    "[farfield cuda] device {ordinal} {} opened in {:.1} ms: NVRTC {:.1} ms{}, context {:.1} ms, module load {:.1} ms ({}); \
                     shared memory per block {} B ({} B opt-in), {} SMs",
                    st.name, ms(lookup), ms(o.compile), if o.compile_from_disk { " (disk cache)" } else { "" }, ms(o.context), ms(o.module_load),
                    if o.from_cubin { "CUBIN" } else { "PTX, driver JIT" }, l.shared_per_block, l.shared_per_block_optin, l.sm_count);
            } else {
                eprintln!("[farfield cuda] device {ordinal} {} from the registry in {:.3} ms", st.name, ms(lookup));
            }
            eprintln!("[farfield cuda] stream: {}", if stream == 0 { "the context's default stream".to_string() } else { format!("the caller's {stream:#x}") });
        }
        Ok(CudaDevice { st, stream: s, borrowed: stream != 0, debug })
    }

    /// The device for a NUFFT plan with options `opts`: device 0 on `opts.gpu_stream` (the
    /// default stream when `None`), printing the opening stages when `opts.debug > 0`.
    /// Errors: as [`CudaDevice::new`].
    pub fn for_nufft(opts: &crate::nufft::NufftOpts) -> Result<CudaDevice> {
        let s = opts.gpu_stream.map_or(0, |s| s.as_raw());
        // SAFETY: a GpuStream is made by the unsafe `GpuStream::from_raw`, whose caller
        // promises a valid stream of device 0's primary context that outlives the plan.
        unsafe { Self::with_stream(0, s, opts.debug) }
    }

    /// Device 0 for a plan of kind `what` (e.g. "FMM plans", named in the error) made with
    /// backend CUDA, on the caller's `stream` (the default stream when `None`), printing the
    /// opening stages when `debug > 0`. Errors: [`Error::NoDevice`] (naming `what` and what was
    /// looked for), those of [`CudaDevice::new`].
    pub fn for_plan(what: &str, stream: Option<crate::backend::GpuStream>, debug: u32) -> Result<CudaDevice> {
        super::runtime::resolve(crate::backend::BackendChoice::Cuda, what)?;
        // SAFETY: a GpuStream is made by the unsafe `GpuStream::from_raw`, whose caller
        // promises a valid stream of device 0's primary context that outlives the plan.
        unsafe { Self::with_stream(0, stream.map_or(0, |s| s.as_raw()), debug) }
    }

    /// The device's limits (queried once per process).
    pub fn limits(&self) -> DeviceLimits {
        self.st.limits
    }

    /// The stages of opening the device (the first use in the process).
    pub fn open_times(&self) -> OpenTimes {
        self.st.open
    }

    /// The device ordinal.
    pub fn ordinal(&self) -> usize {
        self.st.ordinal
    }

    /// The stream this handle runs on (a `CUstream` address; 0 = the default stream) and
    /// whether it is the caller's.
    pub fn stream(&self) -> (u64, bool) {
        (self.stream.cu_stream() as u64, self.borrowed)
    }

    /// Waits for the stream.
    pub fn synchronize(&self) -> Result<()> {
        self.stream.synchronize().map_err(drv("synchronize"))
    }

    /// The context (the device's primary context, shared by every handle of the device).
    pub fn context(&self) -> &Arc<CudaContext> {
        &self.st.ctx
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

enum Slot {
    Ptr(u64),
    I32(i32),
    U32(u32),
    U64(u64),
    F64(f64),
    Geom(FfGeom),
    Kernel(FfKernel),
}

impl Device for CudaDevice {
    type Buf = CudaSlice<u8>;

    fn name(&self) -> String {
        self.st.name.clone()
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
        let f = self.st.function(name, smem)?;
        let slots: Vec<Slot> = args
            .iter()
            .map(|a| match a {
                Arg::Buf(b) => Slot::Ptr(self.addr(b)),
                Arg::Null => Slot::Ptr(0),
                Arg::I32(v) => Slot::I32(*v),
                Arg::U32(v) => Slot::U32(*v),
                Arg::U64(v) => Slot::U64(*v),
                Arg::F64(v) => Slot::F64(*v),
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
                Slot::U64(v) => b.arg(v),
                Slot::F64(v) => b.arg(v),
                Slot::Geom(g) => b.arg(g),
                Slot::Kernel(k) => b.arg(k),
            };
        }
        let cfg = LaunchConfig { grid_dim: (grid, 1, 1), block_dim: (block, 1, 1), shared_mem_bytes: smem };
        // SAFETY: the argument lists are those of the kernels (the same host code runs against
        // the emulator in CI, where every kernel's output is compared with the CPU).
        unsafe { b.launch(cfg) }.map(|_| ()).map_err(drv(name))
    }

    /// The opt-in limit ([`DeviceLimits::shared_per_block_optin`]); launches above 48 KiB
    /// raise the function's limit first.
    fn max_shared_bytes(&self) -> usize {
        self.st.limits.shared_per_block_optin
    }

    type Mark = cudarc::driver::CudaEvent;

    fn mark(&self) -> Result<cudarc::driver::CudaEvent> {
        self.stream.record_event(Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT)).map_err(drv("event record"))
    }

    fn seconds(&self, start: &cudarc::driver::CudaEvent, end: &cudarc::driver::CudaEvent) -> Result<f64> {
        Ok(start.elapsed_ms(end).map_err(drv("event elapsed"))? as f64 * 1e-3)
    }

    fn fork(&self) -> Result<CudaDevice> {
        let stream = self.st.ctx.new_stream().map_err(drv("stream create"))?;
        Ok(CudaDevice { st: self.st.clone(), stream, borrowed: false, debug: self.debug })
    }

    fn wait(&self, mark: &cudarc::driver::CudaEvent) -> Result<()> {
        self.stream.wait(mark).map_err(drv("stream wait"))
    }

    fn synchronize(&self) -> Result<()> {
        CudaDevice::synchronize(self)
    }

    unsafe fn with_foreign<R>(&self, ptr: u64, bytes: usize, f: impl FnOnce(&mut CudaSlice<u8>) -> R) -> R {
        let mut s = self.stream.upgrade_device_ptr::<u8>(ptr, bytes);
        let r = f(&mut s);
        let _ = s.leak();
        r
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compiled_kernels_are_stored_in_the_disk_cache() {
        let dir = std::env::temp_dir().join(format!("farfield-cuda-cache-{}", std::process::id()));
        std::env::set_var("FARFIELD_CUDA_CACHE", &dir);
        let r = compiled_for("sm_80");
        std::env::remove_var("FARFIELD_CUDA_CACHE");
        if super::super::check::load_nvrtc().is_err() {
            assert!(matches!(r, Err(Error::NoDevice(_))), "{r:?}");
            return;
        }
        let ver = super::super::check::nvrtc_version().expect("NVRTC loaded");
        for (name, c) in r.unwrap() {
            let src = super::super::KERNEL_SOURCES.iter().find(|(n, _)| *n == name).unwrap().1;
            let (ptx, cubin) = super::super::cubin_cache::load(&dir, &super::super::cubin_cache::key(&name, src, "sm_80", &ver))
                .unwrap_or_else(|| panic!("{name}: not in the disk cache"));
            assert_eq!((&ptx, &cubin), (&c.ptx, &c.cubin), "{name}");
        }
        let _ = std::fs::remove_dir_all(&dir);
    }

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

    #[test]
    fn the_registry_shares_one_state_per_device() {
        // with a device: a second handle is the registry's, on the same context and modules,
        // and opens in far less than the first did; without one both fail alike
        let (Ok(a), Ok(b)) = (CudaDevice::new(0), CudaDevice::new(0)) else { return };
        assert!(Arc::ptr_eq(&a.st, &b.st));
        assert_eq!(a.stream(), (0, false));
        assert!(a.limits().shared_per_block_optin >= a.limits().shared_per_block);
        assert_eq!(a.max_shared_bytes(), a.limits().shared_per_block_optin);
        let t = Instant::now();
        let _c = CudaDevice::new(0).unwrap();
        assert!(t.elapsed() < Duration::from_millis(5), "registry lookup took {:?}", t.elapsed());
    }
}

/// A cuFFT plan, taken from its device's pool (or created) and given back to it on drop.
pub struct CufftPlan {
    handle: cudarc::cufft::sys::cufftHandle,
    double: bool,
    key: FftKey,
    work: usize,
    st: Arc<DeviceState>,
    /// Complex values the plan transforms (batch · Π dims).
    values: usize,
}

impl Drop for CufftPlan {
    fn drop(&mut self) {
        let mut pool = self.st.fft_pool.lock().unwrap_or_else(|e| e.into_inner());
        let keep = pool.idle.get(&self.key).map_or(0, |v| v.len()) < FFT_POOL_PER_KEY
            && pool.idle_bytes + self.work <= FFT_POOL_MAX_BYTES;
        if keep {
            pool.idle_bytes += self.work;
            pool.idle.entry(self.key.clone()).or_default().push((self.handle, self.work));
        } else {
            drop(pool);
            let _ = self.st.ctx.bind_to_thread();
            // SAFETY: handle created by cufftPlanMany, not in the pool, not destroyed before.
            unsafe { cudarc::cufft::sys::cufftDestroy(self.handle) };
        }
    }
}

impl CudaDevice {
    /// An idle pooled cuFFT handle for `key` (with its work-area bytes), if any.
    fn fft_from_pool(&self, key: &FftKey) -> Option<(cudarc::cufft::sys::cufftHandle, usize)> {
        let mut pool = self.st.fft_pool.lock().unwrap_or_else(|e| e.into_inner());
        let h = pool.idle.get_mut(key)?.pop()?;
        pool.idle_bytes -= h.1;
        Some(h)
    }

    /// Wraps a cuFFT handle for `key` (from the pool, or made by `create`) as a plan that goes
    /// back to the pool on drop; prints the stage when `debug > 0`.
    fn pooled_fft_plan(&self, key: FftKey, create: impl FnOnce() -> Result<cudarc::cufft::sys::cufftHandle>) -> Result<CufftPlan> {
        let t = Instant::now();
        let (handle, work, reused) = match self.fft_from_pool(&key) {
            Some((h, w)) => (h, w, true),
            None => {
                self.st.ctx.bind_to_thread().map_err(drv("bind context"))?;
                let h = create()?;
                let mut work = 0usize;
                // SAFETY: a valid handle; work receives the size of its work area.
                unsafe { cudarc::cufft::sys::cufftGetSize(h, &mut work) };
                (h, work, false)
            }
        };
        if self.debug > 0 {
            eprintln!("[farfield cuda] cuFFT plan {:?} {}: {} in {:.3} ms (work area {} B)", key.dims,
                      if key.double { "Z2Z" } else { "C2C" }, if reused { "reused from the device's pool" } else { "created" },
                      ms(t.elapsed()), work);
        }
        let values = key.dims.iter().product::<usize>() * key.batch;
        Ok(CufftPlan { handle, double: key.double, key, work, st: self.st.clone(), values })
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
        self.pooled_fft_plan(FftKey { dims: dims.to_vec(), double, batch: batch.max(1) }, || {
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
            Ok(handle)
        })
    }

    fn fft_exec(&self, plan: &CufftPlan, data: &mut CudaSlice<u8>, sign: i32) -> Result<()> {
        use cudarc::cufft::sys;
        let bytes = plan.values * if plan.double { 16 } else { 8 };
        if data.len() < bytes {
            return Err(Error::InvalidArg(format!("cuFFT of {} values on a buffer of {} bytes", plan.values, data.len())));
        }
        let p = self.addr(data);
        // cuFFT runs in the calling thread's current context: make it this device's
        self.st.ctx.bind_to_thread().map_err(drv("bind context"))?;
        // a pooled handle may last have run on another plan's stream
        // SAFETY: the stream belongs to this device's context.
        let r = unsafe { sys::cufftSetStream(plan.handle, self.stream.cu_stream() as sys::cudaStream_t) };
        if r != sys::cufftResult::CUFFT_SUCCESS {
            return Err(Error::Fft(format!("cufftSetStream: {r:?}")));
        }
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
