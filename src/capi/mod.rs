//! The C ABI: every `extern "C"` function of the library, one file per module. Nothing
//! numerical lives here: functions convert arguments, validate them, catch panics and map
//! errors to status codes (DESIGN.md §3).
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
