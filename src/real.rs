//! Floating-point precision abstraction: every numerical routine of the spreader and the
//! NUFFT is written once, generic over [`Real`] (`f32` or `f64`).
//!
//! # Compiled once per precision
//! Rust compiles a generic function in the crate that instantiates it, and in optimised builds
//! (where generics are not shared between crates) every crate that called
//! `Spreader::<f64>::try_spread` or `NufftPlan::<f64>::new` compiled again the whole tree
//! below it: the kernel evaluators and the row kernels of every width, in every CPU clone —
//! about five minutes of one core per test binary, compatibility crate and tool
//! (docs/design.md §7.4, "Build time"). So those public generic entry points are thin: they
//! find their precision with [`same_ref`], [`same_slice`] and the like (a `TypeId`
//! comparison, resolved at compile time) and call a non-generic, never-inlined function of
//! this crate for `f32` or `f64`, whose body and everything generic below it are compiled
//! once, here; other crates link to it.

use num_traits::{Float, FloatConst, FromPrimitive, NumAssign};
use std::fmt::{Debug, Display};
use std::any::{Any, TypeId};
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

/// Whether `A` and `B` are the same type (module docs: the precision dispatch of entry points
/// compiled once per precision).
pub fn same_type<A: 'static, B: 'static>() -> bool {
    TypeId::of::<A>() == TypeId::of::<B>()
}

/// The error of an entry point compiled once per precision called with a [`Real`] other than
/// `f32` and `f64` ([`crate::Error::NotSupported`]). Such entry points never fall back to a
/// generic body: that would compile the body again in the calling crate (module docs).
pub fn other_precision<T: Real>() -> crate::Error {
    crate::Error::NotSupported(format!("precision {}: the library is compiled for f32 and f64", T::NAME))
}

/// `a` as a `&B` when `A` and `B` are the same type, else `None` (module docs: the precision
/// dispatch of entry points compiled once per precision).
pub fn same_ref<A: 'static, B: 'static>(a: &A) -> Option<&B> {
    (a as &dyn Any).downcast_ref::<B>()
}

/// `a` as a `&mut B` when `A` and `B` are the same type, else `None`.
pub fn same_mut<A: 'static, B: 'static>(a: &mut A) -> Option<&mut B> {
    (a as &mut dyn Any).downcast_mut::<B>()
}

/// `a` as a `&[B]` when `A` and `B` are the same type, else `None`.
pub fn same_slice<A: 'static, B: 'static>(a: &[A]) -> Option<&[B]> {
    // SAFETY: A and B are the same type, so the slice is one of Bs
    same_type::<A, B>().then(|| unsafe { std::slice::from_raw_parts(a.as_ptr().cast::<B>(), a.len()) })
}

/// `a` as a `&mut [B]` when `A` and `B` are the same type, else `None`.
pub fn same_slice_mut<A: 'static, B: 'static>(a: &mut [A]) -> Option<&mut [B]> {
    // SAFETY: A and B are the same type, so the slice is one of Bs (borrowed uniquely as `a` was)
    same_type::<A, B>().then(|| unsafe { std::slice::from_raw_parts_mut(a.as_mut_ptr().cast::<B>(), a.len()) })
}

/// `a` as a `B` when `A` and `B` are the same type, else `a` back (`Err`).
pub fn same_value<A: 'static, B: 'static>(a: A) -> std::result::Result<B, A> {
    if !same_type::<A, B>() {
        return Err(a);
    }
    let b: Box<dyn Any> = Box::new(a);
    Ok(*b.downcast::<B>().expect("same TypeId"))
}

#[cfg(test)]
mod same_tests {
    use super::*;

    #[test]
    fn same_type_casts_only_between_equal_types() {
        let mut v = vec![1.5f64, 2.5];
        assert_eq!(same_slice::<f64, f64>(&v), Some(&[1.5, 2.5][..]));
        assert!(same_slice::<f64, f32>(&v).is_none());
        same_slice_mut::<f64, f64>(&mut v).unwrap()[0] = 3.0;
        assert!(same_slice_mut::<f64, u64>(&mut v).is_none());
        assert_eq!(v[0], 3.0);
        assert_eq!(same_ref::<f32, f32>(&2.0f32), Some(&2.0));
        assert!(same_ref::<f32, f64>(&2.0f32).is_none());
        assert_eq!(same_value::<String, String>("x".into()), Ok("x".to_string()));
        assert_eq!(same_value::<String, u8>("x".into()), Err("x".to_string()));
    }
}
