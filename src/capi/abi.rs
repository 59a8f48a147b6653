//! ABI-stable option, info and parameter structs (docs/design.md §3, "Versioned structs").
#![allow(dead_code)] // users arrive with the versioned structs (issue 11)
//!
//! Every `#[repr(C)]` struct that crosses the C boundary by pointer begins with
//! `size_t struct_size`: the size of the struct **as the caller compiled it**. The library
//! reads and writes only the first `struct_size` bytes, so a binary built against an older
//! header (with fewer, trailing fields) keeps working with a newer library of the same soname:
//! * `farfield_<m>_default_opts(opts, sizeof *opts)` writes the defaults into the caller's
//!   bytes and records the size in `opts->struct_size`;
//! * `makeplan(…, opts)` reads `opts->struct_size` first and then only that many bytes;
//!   fields the caller's struct does not have take their defaults;
//! * out-structs (`get_info`, `get_params`): the caller sets `struct_size = sizeof` before the
//!   call; the library writes only that many bytes.
//!
//! A size must cover at least the `struct_size` field and must not end inside a field
//! (`FARFIELD_ERR_INVALID_ARG`, naming the struct and the size). A size larger than this
//! library's struct (a newer header against an older library) is accepted: the bytes past the
//! fields this library knows are left alone when writing and ignored when reading.

use crate::error::{Error, Result};

/// A C struct whose first field is `struct_size: usize` (`size_t`).
///
/// # Safety
/// Implementors must be `#[repr(C)]` plain old data (every bit pattern of the bytes the library
/// copies is a valid value) with `struct_size: usize` at offset 0, and [`Versioned::fields`]
/// must list every field as `(offset, size)`.
pub(crate) unsafe trait Versioned: Copy {
    /// The C name of the struct, for messages.
    const NAME: &'static str;
    /// `(offset, size)` of every field, in declaration order.
    fn fields() -> Vec<(usize, usize)>;
    /// The defaults (with `struct_size` = the library's `size_of::<Self>()`).
    fn defaults() -> Self;
    /// Sets the `struct_size` field.
    fn set_struct_size(&mut self, n: usize);
}

/// Implements [`Versioned`] for a `#[repr(C)]` struct from its field list (the first must be
/// `struct_size`) and a defaults expression.
macro_rules! versioned {
    ($t:ty, $name:literal, [$($f:ident),+ $(,)?], $defaults:expr) => {
        // SAFETY: the struct is #[repr(C)] plain old data with struct_size first (checked by
        // the test of each user), and the field list is complete (checked by `check_fields`).
        unsafe impl $crate::capi::abi::Versioned for $t {
            const NAME: &'static str = $name;
            fn fields() -> Vec<(usize, usize)> {
                let d: $t = $defaults;
                vec![$((std::mem::offset_of!($t, $f), std::mem::size_of_val(&d.$f))),+]
            }
            fn defaults() -> Self {
                $defaults
            }
            fn set_struct_size(&mut self, n: usize) {
                self.struct_size = n;
            }
        }
    };
}
pub(crate) use versioned;

/// Checks a caller's struct size: at least the `struct_size` field, not ending inside a field.
pub(crate) fn check_size<S: Versioned>(size: usize) -> Result<()> {
    let min = std::mem::size_of::<usize>();
    if size < min {
        return Err(Error::InvalidArg(format!(
            "{}: struct_size = {size} is smaller than the struct_size field itself ({min} bytes); \
             call the default_opts function with sizeof(struct) or set struct_size = sizeof(struct)",
            S::NAME)));
    }
    if let Some(&(off, len)) = S::fields().iter().find(|&&(off, len)| off < size && size < off + len) {
        return Err(Error::InvalidArg(format!(
            "{}: struct_size = {size} ends inside the field at bytes {off}..{} (not a size this or an older header produces)",
            S::NAME, off + len)));
    }
    Ok(())
}

/// `default_opts`: writes the defaults into the first `size` bytes of `*p` and sets
/// `struct_size = size`.
///
/// # Safety
/// `p` must be NULL or point to at least `size` writable bytes.
pub(crate) unsafe fn write_defaults<S: Versioned>(p: *mut S, size: usize) -> Result<()> {
    super::non_null(p, "opts")?;
    check_size::<S>(size)?;
    let mut d = S::defaults();
    d.set_struct_size(size);
    copy_out(&d, p, size);
    Ok(())
}

/// Reads a caller's struct: NULL → the defaults; otherwise `struct_size` first, then that many
/// bytes over the defaults.
///
/// # Safety
/// `p` must be NULL or point to a struct whose first `struct_size` bytes are readable.
pub(crate) unsafe fn read_in<S: Versioned>(p: *const S) -> Result<S> {
    let mut d = S::defaults();
    if p.is_null() {
        return Ok(d);
    }
    let size = std::ptr::read_unaligned(p as *const usize);
    check_size::<S>(size)?;
    let n = size.min(std::mem::size_of::<S>());
    std::ptr::copy_nonoverlapping(p as *const u8, &mut d as *mut S as *mut u8, n);
    d.set_struct_size(std::mem::size_of::<S>());
    Ok(d)
}

/// Writes an out-struct (`get_info`): reads the caller's `struct_size` from `*p` and writes
/// that many bytes of `value` (keeping the caller's `struct_size`).
///
/// # Safety
/// `p` must be NULL or point to a struct whose first `struct_size` bytes are writable.
pub(crate) unsafe fn write_out<S: Versioned>(p: *mut S, value: &S, name: &str) -> Result<()> {
    super::non_null(p, name)?;
    let size = std::ptr::read_unaligned(p as *const usize);
    check_size::<S>(size)?;
    let mut v = *value;
    v.set_struct_size(size);
    copy_out(&v, p, size);
    Ok(())
}

/// Copies the first `min(size, size_of::<S>())` bytes of `v` to `p`.
unsafe fn copy_out<S: Versioned>(v: &S, p: *mut S, size: usize) {
    let n = size.min(std::mem::size_of::<S>());
    std::ptr::copy_nonoverlapping(v as *const S as *const u8, p as *mut u8, n);
}

/// Test helper: the field list covers the struct (no gaps but padding, `struct_size` first).
#[cfg(test)]
pub(crate) fn check_fields<S: Versioned>() {
    let f = S::fields();
    assert_eq!(f[0], (0, std::mem::size_of::<usize>()), "{}: struct_size must come first", S::NAME);
    for w in f.windows(2) {
        assert!(w[0].0 + w[0].1 <= w[1].0, "{}: fields out of order", S::NAME);
    }
    let last = f.last().unwrap();
    assert!(last.0 + last.1 <= std::mem::size_of::<S>());
    assert!(std::mem::size_of::<S>() - (last.0 + last.1) < 8, "{}: field list incomplete", S::NAME);
}
