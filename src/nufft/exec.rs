//! The executor interface behind the public [`super::NufftPlan`] front: one implementation per
//! backend and transform family — the CPU plan of types 1 and 2 ([`super::cpu::CpuNufft`]),
//! the CUDA plan (`CudaNufft` in the gpu module), and type 3 on the CPU
//! ([`super::type3::Type3Plan`]) and on CUDA (`CudaType3` in the gpu module) — chosen once at makeplan
//! (`crate::plans::NufftPlan::new`). The front checks what is common (point counts, array lengths, finite
//! output) and forwards; an executor does the transform, `ntrans` vectors at a time.

use super::options::NufftInfo;
use crate::error::Result;
use crate::kernel::Kernel;
use crate::real::Real;
use num_complex::Complex;

/// Wall-clock seconds of the stages of the last `setpts`/`execute` (summed over `ntrans`).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Timings {
    /// Folding, bin sort and coordinate copy in `setpts`.
    pub setpts_s: f64,
    /// Spreading (type 1) or interpolation (type 2).
    pub spread_s: f64,
    /// FFTs.
    pub fft_s: f64,
    /// Deconvolution (mode copy and scaling, including zeroing the fine grid).
    pub deconv_s: f64,
}

/// The point arrays of one `setpts`: the non-uniform points `x` (axes ≥ dim empty) and, for
/// type 3 only, the target frequencies `s` (`N` per axis; empty for types 1 and 2). Radians
/// (points) and any real values (type-3 frequencies); each axis of equal length.
#[derive(Debug, Clone, Copy)]
pub struct Points<'a, T> {
    /// Point coordinates `[x, y, z]`, M each (axes ≥ dim empty).
    pub x: [&'a [T]; 3],
    /// Type 3 target frequencies `[s, t, u]`, N each (empty otherwise).
    pub s: [&'a [T]; 3],
}

/// One executor of a NUFFT plan: precision `T`, the transform and backend fixed at construction.
///
/// Array conventions (checked by the front before any call): `execute` gets `c` of length
/// `ntrans·num_points()` and `f` of length `ntrans·num_modes()`, stacked per vector. Type 1 and
/// type 3 read `c` and overwrite `f`; type 2 reads `f` and overwrites `c`. On an error the
/// output is either untouched or (documented per executor) fully overwritten — never half
/// written by some of the `ntrans` vectors (host arrays on CUDA: written only after every
/// vector succeeded).
pub trait NufftExec<T: Real>: Send {
    /// Sets (replaces) the points, copying what the executor needs.
    /// Errors: [`crate::Error::NPoints`], [`crate::Error::NonFinite`], [`crate::Error::Alloc`],
    /// device errors.
    fn setpts(&mut self, pts: Points<'_, T>) -> Result<()>;

    /// As [`NufftExec::setpts`], keeping references to the caller's arrays where the executor
    /// can (the default copies, which satisfies the contract too).
    ///
    /// # Safety
    /// The arrays must stay valid and unchanged until the next `setpts*` or until drop.
    unsafe fn setpts_by_reference(&mut self, pts: Points<'_, T>) -> Result<()> {
        self.setpts(pts)
    }

    /// Sets (replaces) the `m` points from **device** arrays (CUDA types 1 and 2 only;
    /// cuFINUFFT's convention): `x[d]` is the device address of axis `d`'s `m` coordinates of
    /// precision `T` (axes ≥ dim ignored). The coordinates are copied on the device (the
    /// caller may free its arrays afterwards); folding, the finiteness check and the bin sort
    /// run on the device. The default refuses with [`crate::Error::InvalidArg`] ("setpts_device
    /// needs a CUDA plan").
    /// Errors: [`crate::Error::InvalidArg`], [`crate::Error::NullPointer`] (a used axis NULL
    /// while `m > 0`), [`crate::Error::NonFinite`], device errors.
    ///
    /// # Safety
    /// Each used `x[d]` must be a device allocation of the executor's device (context) holding
    /// at least `m` values of precision `T`.
    unsafe fn setpts_device(&mut self, m: usize, x: [u64; 3]) -> Result<()> {
        let _ = (m, x);
        Err(crate::Error::InvalidArg("setpts_device needs a CUDA plan (opts.backend = CUDA) of type 1 or 2".into()))
    }

    /// Sets (replaces) the `m` points and `n` target frequencies of a type-3 plan from
    /// **device** arrays (CUDA only): `x[d]` and `s[d]` are the device addresses of axis `d`'s
    /// `m` coordinates and `n` frequencies of precision `T` (axes ≥ dim ignored). They are copied
    /// on the device and the whole set-up runs there: the host reads back the extents. The
    /// default refuses with [`crate::Error::InvalidArg`] ("needs a CUDA plan").
    /// Errors: [`crate::Error::NPoints`], [`crate::Error::NullPointer`] (a used axis NULL while
    /// its count is > 0), [`crate::Error::NonFinite`], [`crate::Error::Range`],
    /// [`crate::Error::Modes`], device errors.
    ///
    /// # Safety
    /// Each used `x[d]` (`s[d]`) must be a device allocation of the executor's device holding
    /// at least `m` (`n`) values of precision `T`.
    unsafe fn setpts_device_type3(&mut self, m: usize, x: [u64; 3], n: usize, s: [u64; 3]) -> Result<()> {
        let _ = (m, x, n, s);
        Err(crate::Error::InvalidArg("setpts_device of a type-3 plan needs a CUDA plan (opts.backend = CUDA)".into()))
    }

    /// Whether points are set.
    fn has_points(&self) -> bool;

    /// Number of points M (0 before `setpts`).
    fn num_points(&self) -> usize;

    /// Length of one vector of `f`: the number of modes `N1·N2·N3` (types 1 and 2) or of target
    /// frequencies (type 3).
    fn num_modes(&self) -> usize;

    /// All `ntrans` transforms on host arrays (lengths as in the trait docs).
    fn execute(&mut self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()>;

    /// All `ntrans` transforms on device arrays (CUDA only; the default refuses with
    /// [`crate::Error::InvalidArg`]).
    ///
    /// # Safety
    /// `c` and `f` must be device allocations of the executor's device holding
    /// `ntrans·M` and `ntrans·num_modes()` complex values of precision `T`.
    unsafe fn execute_device(&mut self, c: u64, f: u64) -> Result<()> {
        let _ = (c, f);
        Err(crate::Error::InvalidArg("execute_device needs a plan made with opts.backend = CUDA".into()))
    }

    /// What the plan chose.
    fn info(&self) -> NufftInfo;

    /// The spreading kernel.
    fn kernel(&self) -> &Kernel;

    /// Stage timings of the last `setpts` + `execute`.
    fn timings(&self) -> Timings {
        Timings::default()
    }
}
