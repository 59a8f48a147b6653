//! The C ABI: every `extern "C"` function of the library, one file per module. Nothing
//! numerical lives here: functions convert arguments, validate them, catch panics and map
//! errors to status codes (docs/design.md §3).
//!
//! Rules every exported function follows:
//! 1. the body runs inside [`guard`], which catches panics (→ `FARFIELD_ERR_INTERNAL`) and
//!    records the error detail for [`farfield_last_error_message`];
//! 2. pointers are checked for NULL and sizes for range before use;
//! 3. outputs are written only on success; a failed call leaves a plan usable.

pub(crate) mod abi;
pub mod ewald;
pub mod fmm;
pub mod nufft;
pub mod poisson;
pub mod spread;
pub mod status;

pub use status::*;

use crate::error::{Error, Result};
// the overlap check lives with the errors so that the plans below this layer share it
pub(crate) use crate::error::{check_outputs_disjoint, Region};
use std::cell::RefCell;
use std::ffi::{c_char, c_int, CString};
use std::panic::{catch_unwind, AssertUnwindSafe};

thread_local! {
    static LAST_ERROR: RefCell<CString> = RefCell::new(CString::default());
}

/// Records `msg` as this thread's last error detail.
pub(crate) fn set_last_error(msg: &str) {
    let c = CString::new(msg.replace('\0', " ")).unwrap_or_default();
    LAST_ERROR.with(|e| *e.borrow_mut() = c);
}

/// Pointer to this thread's last error detail (valid until the next failing call on this thread).
pub(crate) fn last_error_ptr() -> *const c_char {
    LAST_ERROR.with(|e| e.borrow().as_ptr())
}

/// Runs `f`, converting its result to a status code: 0 on success, the error's code
/// otherwise (with the message recorded), `FARFIELD_ERR_INTERNAL` if it panicked.
pub(crate) fn guard<F: FnOnce() -> Result<()>>(f: F) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(())) => 0,
        Ok(Err(e)) => {
            set_last_error(e.message());
            e.code()
        }
        Err(p) => {
            let what = p
                .downcast_ref::<&str>()
                .map(|s| s.to_string())
                .or_else(|| p.downcast_ref::<String>().cloned())
                .unwrap_or_else(|| "unknown panic".into());
            let e = Error::Internal(format!("internal panic: {what}"));
            set_last_error(e.message());
            e.code()
        }
    }
}

/// The one handle idiom of the C API: every opaque plan struct (`farfield_*_plan_s`) holds its
/// Rust plan in a `Mutex` field `inner` (calls on one plan from several threads take turns),
/// is made by makeplan with `Box::into_raw` and freed by [`destroy_boxed`]; [`lock`] reaches
/// the plan.
pub(crate) trait PlanHandle {
    /// The Rust plan behind the handle.
    type Plan;
    /// Its mutex.
    fn cell(&self) -> &std::sync::Mutex<Self::Plan>;
}

/// Declares the opaque C struct `$handle` as a [`PlanHandle`] of `$plan`.
macro_rules! plan_handle {
    ($handle:ty, $plan:ty) => {
        impl $crate::capi::PlanHandle for $handle {
            type Plan = $plan;
            fn cell(&self) -> &std::sync::Mutex<$plan> {
                &self.inner
            }
        }
    };
}
pub(crate) use plan_handle;

/// Locks the plan behind a C handle. A lock poisoned by a panic in an earlier call (caught by
/// [`guard`] and reported then) is taken over: the plan stays usable, as a failed call leaves
/// it (rule 3). Error: [`Error::NullPointer`] ("argument `plan` is NULL").
///
/// # Safety
/// `plan` must be NULL or a live handle from makeplan, not destroyed meanwhile.
pub(crate) unsafe fn lock<'a, H: PlanHandle + 'a>(plan: *const H) -> Result<std::sync::MutexGuard<'a, H::Plan>> {
    non_null(plan, "plan")?;
    Ok((*plan).cell().lock().unwrap_or_else(|e| e.into_inner()))
}

/// Frees a plan made by `Box::into_raw` (the body of every `farfield_*_destroy`); NULL is fine.
///
/// # Safety
/// `plan` must be NULL or a live pointer from `Box::into_raw`, not used afterwards.
pub(crate) unsafe fn destroy_boxed<P>(plan: *mut P) -> c_int {
    guard(|| {
        if !plan.is_null() {
            drop(Box::from_raw(plan));
        }
        Ok(())
    })
}

/// This thread's last error detail as a `String` (for the C API's unit tests).
#[cfg(test)]
pub(crate) fn last_error_message() -> String {
    // SAFETY: the pointer is this thread's NUL-terminated message.
    unsafe { std::ffi::CStr::from_ptr(last_error_ptr()) }.to_string_lossy().into_owned()
}

/// `opts.gpu_method` (the `FARFIELD_GPU_METHOD_*` values of the spreading, NUFFT and Ewald
/// options) → the spreading method: 0 (AUTO) = `None`, 1–5 = GM, GM-sort, SM, CSR, GROUP.
/// Error: [`Error::InvalidArg`] naming `opts.gpu_method`.
pub(crate) fn gpu_method_of(v: i32) -> Result<Option<crate::gpu::spread::GpuMethod>> {
    match v {
        0 => Ok(None),
        m => crate::gpu::spread::GpuMethod::from_code(m)
            .map(Some)
            .ok_or_else(|| Error::InvalidArg(format!("opts.gpu_method = {m}; must be 0 (AUTO) or 1–5 (GM, GM_SORT, SM, CSR, GROUP)"))),
    }
}

/// Checks a pointer argument for NULL, naming it in the error.
pub(crate) fn non_null<P>(p: *const P, name: &str) -> Result<()> {
    if p.is_null() {
        Err(Error::NullPointer(format!("argument `{name}` is NULL")))
    } else {
        Ok(())
    }
}

/// Builds a slice from a C pointer and length after the NULL check (`n = 0` allows NULL).
///
/// # Safety
/// `p` must point to `n` valid elements when non-NULL.
pub(crate) unsafe fn slice_in<'a, E>(p: *const E, n: usize, name: &str) -> Result<&'a [E]> {
    if n == 0 {
        return Ok(&[]);
    }
    non_null(p, name)?;
    Ok(std::slice::from_raw_parts(p, n))
}

/// The arguments of the `set_exclusions` calls (Ewald and FMM): `npairs` pairs of 0-based
/// indices at `pairs` (`2·npairs` values) and, for the scaled call, `npairs` scales.
/// Errors: [`Error::InvalidArg`] (`npairs` < 0), [`Error::Range`] (`npairs` above 2⁴⁰,
/// `FARFIELD_EWALD_MAX_EXCLUSIONS`), [`Error::NullPointer`] (an array NULL with `npairs` > 0).
///
/// # Safety
/// `pairs` valid for `2·npairs` reads, `scales` (when given) for `npairs`.
pub(crate) unsafe fn pair_args<'a>(npairs: i64, pairs: *const i64, scales: Option<*const f64>) -> Result<(&'a [[i64; 2]], Option<&'a [f64]>)> {
    if npairs < 0 {
        return Err(Error::InvalidArg(format!("npairs = {npairs} is negative")));
    }
    if npairs > ewald::FARFIELD_EWALD_MAX_EXCLUSIONS {
        return Err(Error::Range(format!("npairs = {npairs} exceeds the limit of 2^40 exclusion pairs")));
    }
    let np = npairs as usize;
    let s = slice_in(pairs, 2 * np, "pairs")?;
    // SAFETY: [i64; 2] has the layout and alignment of two consecutive i64; 2·np elements.
    let v: &[[i64; 2]] = if np == 0 { &[] } else { std::slice::from_raw_parts(s.as_ptr() as *const [i64; 2], np) };
    let sc = match scales {
        Some(p) => Some(slice_in(p, np, "scales")?),
        None => None,
    };
    Ok((v, sc))
}

/// Mutable variant of [`slice_in`].
///
/// # Safety
/// `p` must point to `n` valid, writable elements when non-NULL, not aliased elsewhere.
pub(crate) unsafe fn slice_out<'a, E>(p: *mut E, n: usize, name: &str) -> Result<&'a mut [E]> {
    if n == 0 {
        return Ok(&mut []);
    }
    non_null(p, name)?;
    Ok(std::slice::from_raw_parts_mut(p, n))
}

/// The region of `n` elements of `E` at `p` (empty for NULL).
pub(crate) fn region<E>(p: *const E, n: usize, name: &str) -> Region<'_> {
    let bytes = if p.is_null() { 0 } else { n.saturating_mul(std::mem::size_of::<E>()) };
    (p as usize, bytes, name)
}

/// Two arrays that must not overlap (one read or written while the other is written): `a` of
/// `na` and `b` of `nb` elements ([`check_outputs_disjoint`] with one input and one output).
pub(crate) fn check_disjoint<E, F>(a: *const E, na: usize, an: &str, b: *const F, nb: usize, bn: &str) -> Result<()> {
    check_outputs_disjoint(&[region(a, na, an)], &[region(b, nb, bn)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_disjoint_detects_any_overlap() {
        let v = [0u64; 16];
        let p = v.as_ptr();
        let ok = |a: *const u64, na, b: *const u64, nb| check_disjoint(a, na, "c", b, nb, "f").is_ok();
        unsafe {
            assert!(!ok(p, 4, p, 4)); // same array
            assert!(!ok(p, 4, p.add(3), 4)); // last element of a = first of b
            assert!(!ok(p.add(3), 4, p, 4));
            assert!(!ok(p, 16, p.add(5), 1)); // b inside a
            assert!(ok(p, 4, p.add(4), 4)); // adjacent
            assert!(ok(p.add(4), 4, p, 4));
            assert!(ok(p, 0, p, 4)); // empty
            assert!(ok(std::ptr::null(), 4, p, 4));
        }
        let e = check_disjoint(p, 2, "c", p, 2, "f").unwrap_err();
        assert_eq!(e.code(), crate::error::FARFIELD_ERR_INVALID_ARG);
        assert!(e.message().contains("`c`") && e.message().contains("`f`"), "{}", e.message());
        // outputs against inputs and against each other; inputs may overlap
        let r = |off: usize, n: usize, name| region(unsafe { p.add(off) }, n, name);
        assert!(check_outputs_disjoint(&[r(0, 4, "xyz"), r(2, 4, "q")], &[r(8, 4, "phi"), r(12, 4, "field")]).is_ok());
        let e = check_outputs_disjoint(&[r(0, 4, "xyz")], &[r(8, 4, "phi"), r(11, 4, "field")]).unwrap_err();
        assert!(e.message().contains("`phi`") && e.message().contains("`field`"), "{}", e.message());
        let e = check_outputs_disjoint(&[r(0, 4, "xyz"), r(6, 4, "q")], &[r(9, 1, "energy")]).unwrap_err();
        assert!(e.message().contains("`q`") && e.message().contains("`energy`"), "{}", e.message());
    }
}
