//! The small device trait the GPU host code is written against (docs/design.md §5.2): buffers,
//! copies, launches. Two implementations: CUDA through cudarc ([`super::cuda`]) and the
//! CUDA-on-CPU emulator (the `farfield-gpu-emu` test crate), so the whole host path —
//! allocation, uploads, launch configurations, downloads — runs in CI without a GPU.

use super::types::{FfGeom, FfKernel};
use crate::error::Result;

/// One kernel argument.
pub enum Arg<'a, B> {
    /// A device buffer (its device address).
    Buf(&'a B),
    /// A null device pointer.
    Null,
    /// `int`.
    I32(i32),
    /// `unsigned`.
    U32(u32),
    /// `unsigned long long` (also a raw device address).
    U64(u64),
    /// `double`.
    F64(f64),
    /// `FfGeom` by value.
    Geom(FfGeom),
    /// `FfKernel` by value.
    Kernel(FfKernel),
}

/// A device that runs the kernels of `kernels/*.cu`. A device handle issues all its work
/// (launches, copies, memsets) on one stream, in order (CUDA: the default stream or a caller's,
/// docs/design.md §5.1); `download` to host memory waits for that stream.
pub trait Device: Clone {
    /// An owned device allocation (freed on drop).
    type Buf;
    /// Human-readable device name.
    fn name(&self) -> String;
    /// Allocates `bytes` bytes, zero-initialised.
    fn alloc(&self, bytes: usize) -> Result<Self::Buf>;
    /// Size of a buffer in bytes.
    fn len(&self, buf: &Self::Buf) -> usize;
    /// Copies `src` into the start of `dst`.
    fn upload(&self, dst: &mut Self::Buf, src: &[u8]) -> Result<()>;
    /// Copies `dst.len()` bytes of `src`, starting at byte `offset`, into `dst`.
    fn download(&self, src: &Self::Buf, offset: usize, dst: &mut [u8]) -> Result<()>;
    /// Copies `bytes` bytes from `src` at byte `src_off` to `dst` at byte `dst_off`, on the
    /// device (in stream order). Errors: [`crate::Error::InvalidArg`] out of bounds.
    fn copy(&self, dst: &mut Self::Buf, dst_off: usize, src: &Self::Buf, src_off: usize, bytes: usize) -> Result<()>;
    /// Sets every byte of `buf` to zero.
    fn zero(&self, buf: &mut Self::Buf) -> Result<()>;
    /// Device address of a buffer (for pointers inside by-value structs).
    fn addr(&self, buf: &Self::Buf) -> u64;
    /// Launches kernel `name` on a 1-D grid of `grid` blocks of `block` threads with `smem`
    /// bytes of dynamic shared memory.
    fn launch(&self, name: &str, grid: u32, block: u32, smem: u32, args: &[Arg<'_, Self::Buf>]) -> Result<()>;
    /// Dynamic shared memory one block may use (bytes): on CUDA the opt-in limit per block
    /// (227 KiB on H100, 163 KiB on A100; `launch` opts a kernel in when it asks for more than
    /// the 48 KiB default), on the emulator its settable `shared_bytes`. The SM tiles are
    /// sized from it (`super::spread::sm_bins`).
    fn max_shared_bytes(&self) -> usize;
    /// A point in the stream's order, for timing stages (CUDA: an event recorded on the
    /// stream; emulator: the host clock, launches being synchronous there).
    type Mark;
    /// Records a mark after the work issued so far.
    fn mark(&self) -> Result<Self::Mark>;
    /// Seconds of device work between two marks (waits for `end`).
    fn seconds(&self, start: &Self::Mark, end: &Self::Mark) -> Result<f64>;
    /// A handle on a second stream of the same device and context, for independent work
    /// that may run concurrently with this handle's (CUDA: a new non-blocking stream, so it
    /// is not serialised with the legacy default stream either; the emulator: a clone, its
    /// work running synchronously in issue order). Buffers of either handle are valid on
    /// both; the two streams are ordered only by [`Device::wait`].
    fn fork(&self) -> Result<Self>;
    /// Makes this handle's stream wait, on the device and without blocking the host, until
    /// the work issued before `mark` (recorded by [`Device::mark`] on any handle of this
    /// device) has completed (CUDA: `cuStreamWaitEvent`; the emulator: nothing to wait for).
    fn wait(&self, mark: &Self::Mark) -> Result<()>;
    /// Blocks the host until the work issued so far on this handle's stream has completed
    /// (CUDA: `cuStreamSynchronize`; the emulator: runs a deferred handle's queued work).
    fn synchronize(&self) -> Result<()>;

    /// Runs `f` on a caller-owned device allocation of `bytes` bytes at address `ptr`, viewed
    /// as a buffer of this device (not freed afterwards): how device pointers of a foreign
    /// caller (cuFINUFFT style) reach the host code. CUDA: a slice on this handle's stream;
    /// the emulator: the host memory of an emulator buffer at that address.
    ///
    /// # Safety
    /// `ptr` must be a device allocation of at least `bytes` bytes in this device's context
    /// (emulator: memory valid for reads and writes of `bytes` bytes), for the duration of `f`.
    unsafe fn with_foreign<R>(&self, ptr: u64, bytes: usize, f: impl FnOnce(&mut Self::Buf) -> R) -> R;

    /// [`Device::with_foreign`] for an optional array: `f(None)` when `ptr` is 0.
    ///
    /// # Safety
    /// As [`Device::with_foreign`] for a non-zero `ptr`.
    unsafe fn with_foreign_opt<R>(&self, ptr: u64, bytes: usize, f: impl FnOnce(Option<&mut Self::Buf>) -> R) -> R {
        if ptr == 0 {
            f(None)
        } else {
            self.with_foreign(ptr, bytes, |b| f(Some(b)))
        }
    }

    /// Runs `run` on the caller-owned device coordinate arrays of the first `dim` axes, `n`
    /// values of `T` each, as buffers of this device (`None` for the other axes, and for all
    /// when `n` is 0): the setpts on device pointers of the NUFFT and spreading plans.
    /// Errors: [`crate::Error::NullPointer`] (a used axis's address 0 while `n > 0`), and
    /// those of `run`.
    ///
    /// # Safety
    /// As [`Device::with_foreign`], for each used axis.
    unsafe fn with_foreign_axes<T, R>(&self, n: usize, dim: usize, x: [u64; 3],
                                      run: impl FnOnce([Option<&Self::Buf>; 3]) -> Result<R>) -> Result<R> {
        if n == 0 {
            return run([None, None, None]);
        }
        if x.iter().take(dim).any(|&p| p == 0) {
            return Err(crate::Error::NullPointer("a device coordinate array of a used axis is NULL".into()));
        }
        let bytes = n * std::mem::size_of::<T>();
        let ax = |d: usize, f: &mut dyn FnMut(Option<&Self::Buf>) -> Result<R>| -> Result<R> {
            if d < dim {
                self.with_foreign(x[d], bytes, |b| f(Some(&*b)))
            } else {
                f(None)
            }
        };
        let mut run = Some(run);
        ax(0, &mut |a| ax(1, &mut |b| ax(2, &mut |c| (run.take().expect("called once"))([a, b, c]))))
    }

    /// Runs `run` on two caller-owned device arrays of values of type `V` — `c` with `nc` and
    /// `f` with `nf` values — seen as buffers of this device (the execute on device pointers of
    /// the NUFFT executors, cuFINUFFT style, and the spreading plans' device calls).
    /// Errors: [`crate::Error::NullPointer`] when either address is 0, and those of `run`.
    ///
    /// # Safety
    /// As [`Device::with_foreign`], for both arrays.
    unsafe fn with_foreign_pair<V>(&self, c: u64, nc: usize, f: u64, nf: usize,
                                   run: impl FnOnce(&mut Self::Buf, &mut Self::Buf) -> Result<()>) -> Result<()> {
        if c == 0 || f == 0 {
            return Err(crate::Error::NullPointer("device array c or f is NULL".into()));
        }
        let z = std::mem::size_of::<V>();
        self.with_foreign(c, (nc * z).max(1), |cs| self.with_foreign(f, (nf * z).max(1), |fs| run(cs, fs)))
    }
}

/// Allocates a buffer holding a copy of `v`.
pub fn upload_new<D: Device, T: Copy>(dev: &D, v: &[T]) -> Result<D::Buf> {
    let mut b = dev.alloc(std::mem::size_of_val(v).max(1))?;
    if !v.is_empty() {
        dev.upload(&mut b, super::types::as_bytes(v))?;
    }
    Ok(b)
}

/// Downloads `n` values of type `T` from the start of `buf`.
pub fn download_vec<D: Device, T: Copy + Default>(dev: &D, buf: &D::Buf, n: usize) -> Result<Vec<T>> {
    let mut v = crate::error::try_zeroed_vec::<T>(n, "device download")?;
    if n > 0 {
        dev.download(buf, 0, super::types::as_bytes_mut(&mut v))?;
    }
    Ok(v)
}

/// A device with in-place complex FFTs (cuFFT on CUDA; FFTW standing in on the emulator).
pub trait FftDevice: Device {
    /// A plan for one grid shape, batch and precision.
    type FftPlan;
    /// Plans `batch ≥ 1` in-place c2c transforms of a grid of sizes `dims` (x first, x
    /// fastest) stored one after the other (distance `Π dims` complex values; cuFFT's
    /// `cufftPlanMany` with that batch), in double (`double = true`) or single precision.
    fn fft_plan(&self, dims: &[usize], double: bool, batch: usize) -> Result<Self::FftPlan>;
    /// Executes it on `data` (interleaved complex, at least `batch·Π dims` values; each of the
    /// `batch` grids transformed), unnormalised:
    /// `data_k ← Σ_j data_j e^{sign·2πi j·k/n}` with `sign = +1` or `−1`.
    fn fft_exec(&self, plan: &Self::FftPlan, data: &mut Self::Buf, sign: i32) -> Result<()>;
}
