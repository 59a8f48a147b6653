//! Status codes, error messages and version (C: `farfield_status_string`,
//! `farfield_last_error_message`, `farfield_version`, `FARFIELD_*` constants).

use std::ffi::{c_char, c_int};

#[cfg(test)]
use crate::error::FARFIELD_ERR_ALLOC;

/// Major version (semantic versioning; the shared library's soname carries it).
pub const FARFIELD_VERSION_MAJOR: c_int = 1;
/// Minor version.
pub const FARFIELD_VERSION_MINOR: c_int = 2;
/// Patch version.
pub const FARFIELD_VERSION_PATCH: c_int = 0;

/// Largest `opts.nthreads` any plan accepts; larger values return `FARFIELD_ERR_INVALID_ARG`.
/// (0 = all cores, capped at this value.) A pool the operating system refuses to start returns
/// `FARFIELD_ERR_ALLOC`.
pub const FARFIELD_MAX_THREADS: c_int = 1024;

/// Static, NUL-terminated description of a status code (never NULL; "unknown status code"
/// for values that are not `FARFIELD_*` codes).
#[no_mangle]
pub extern "C" fn farfield_status_string(status: c_int) -> *const c_char {
    // NUL-terminated copies of crate::error::status_string, made once.
    static TABLE: std::sync::OnceLock<Vec<(i32, std::ffi::CString)>> = std::sync::OnceLock::new();
    let table = TABLE.get_or_init(|| {
        (0..200)
            .map(|c| (c, crate::error::status_string(c)))
            .filter(|(_, s)| *s != crate::error::status_string(-1))
            .map(|(c, s)| (c, std::ffi::CString::new(s).expect("no NUL in status strings")))
            .collect()
    });
    table
        .iter()
        .find(|(c, _)| *c == status)
        .map(|(_, s)| s.as_ptr())
        .unwrap_or(b"unknown status code\0".as_ptr() as *const c_char)
}

/// Detail of the last failure on the calling thread (which argument, which point index, which
/// limit); an empty string if no call has failed on this thread. The pointer stays valid until
/// the next failing farfield call on the same thread.
#[no_mangle]
pub extern "C" fn farfield_last_error_message() -> *const c_char {
    super::last_error_ptr()
}

/// Library version string `"MAJOR.MINOR.PATCH"` (static).
#[no_mangle]
pub extern "C" fn farfield_version() -> *const c_char {
    concat!(env!("CARGO_PKG_VERSION"), "\0").as_ptr() as *const c_char
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::ffi::CStr;

    #[test]
    fn version_matches_constants() {
        let v = unsafe { CStr::from_ptr(farfield_version()) }.to_str().unwrap();
        assert_eq!(v, format!("{FARFIELD_VERSION_MAJOR}.{FARFIELD_VERSION_MINOR}.{FARFIELD_VERSION_PATCH}"));
    }

    #[test]
    fn max_threads_matches_the_pool_limit() {
        assert_eq!(FARFIELD_MAX_THREADS as usize, crate::threads::MAX_THREADS);
    }

    #[test]
    fn status_strings() {
        let s = unsafe { CStr::from_ptr(farfield_status_string(FARFIELD_ERR_ALLOC)) }.to_str().unwrap();
        assert!(s.contains("memory"));
        let s = unsafe { CStr::from_ptr(farfield_status_string(-5)) }.to_str().unwrap();
        assert_eq!(s, "unknown status code");
    }
}
