//! Floating-point precision abstraction: every numerical routine of the spreader and the
//! NUFFT is written once, generic over [`Real`] (`f32` or `f64`).

use num_traits::{Float, FloatConst, FromPrimitive, NumAssign};
use std::fmt::{Debug, Display};
use std::iter::Sum;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};

/// A real floating-point type the library computes in: `f32` or `f64`.
///
/// Besides the arithmetic of [`num_traits::Float`] it carries the FFTW entry points of its
/// precision (see [`crate::fft`]) and a lock-free atomic add used by the parallel spreader's
/// wrap-add of subproblem boxes into the shared grid.
pub trait Real:
    Float
    + FloatConst
    + FromPrimitive
    + NumAssign
    + Sum
    + Default
    + Debug
    + Display
    + Send
    + Sync
    + 'static
    + crate::fft::FftwPrecision
    + crate::instances::Instances
{
    /// Short name used in messages (`"f32"` or `"f64"`).
    const NAME: &'static str;
    /// Machine epsilon as an `f64`.
    const EPS: f64;
    /// Smallest relative tolerance the NUFFT honours in this precision; smaller requests are
    /// clamped to it and a warning is recorded on the plan (docs/design.md §3.1, §6).
    const MIN_TOL: f64;
    /// Conversion from `f64` (rounding to nearest for `f32`).
    fn of(x: f64) -> Self;
    /// Conversion to `f64` (exact).
    fn to_f64v(self) -> f64;
    /// Atomically performs `*p += v`.
    ///
    /// # Safety
    /// `p` must be valid for reads and writes and suitably aligned, and every concurrent
    /// access to `*p` must go through this function.
    unsafe fn atomic_add(p: *mut Self, v: Self);
}

impl Real for f64 {
    const NAME: &'static str = "f64";
    const EPS: f64 = f64::EPSILON;
    const MIN_TOL: f64 = 1e-15;
    #[inline(always)]
    fn of(x: f64) -> Self {
        x
    }
    #[inline(always)]
    fn to_f64v(self) -> f64 {
        self
    }
    #[inline(always)]
    unsafe fn atomic_add(p: *mut Self, v: Self) {
        // SAFETY: caller guarantees validity; AtomicU64 has the same layout as f64 and
        // f64 grid buffers are 8-byte aligned.
        let a = AtomicU64::from_ptr(p as *mut u64);
        let mut cur = a.load(Ordering::Relaxed);
        loop {
            let new = (f64::from_bits(cur) + v).to_bits();
            match a.compare_exchange_weak(cur, new, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => break,
                Err(x) => cur = x,
            }
        }
    }
}

impl Real for f32 {
    const NAME: &'static str = "f32";
    const EPS: f64 = f32::EPSILON as f64;
    const MIN_TOL: f64 = 1e-7;
    #[inline(always)]
    fn of(x: f64) -> Self {
        x as f32
    }
    #[inline(always)]
    fn to_f64v(self) -> f64 {
        self as f64
    }
    #[inline(always)]
    unsafe fn atomic_add(p: *mut Self, v: Self) {
        // SAFETY: as for f64, with AtomicU32 / 4-byte alignment.
        let a = AtomicU32::from_ptr(p as *mut u32);
        let mut cur = a.load(Ordering::Relaxed);
        loop {
            let new = (f32::from_bits(cur) + v).to_bits();
            match a.compare_exchange_weak(cur, new, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => break,
                Err(x) => cur = x,
            }
        }
    }
}
