//! ABI-stable option, info and parameter structs (docs/design.md §3, "Versioned structs").
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
//! fields this library knows are left alone when writing and ignored when reading, and
//! `default_opts` and the out-struct writers leave `struct_size = min(caller's size, this
//! library's size)`, so that a caller can see which of its fields the library knows.
//!
//! A versioned struct has no padding (every field ends where the next begins, the last one at
//! `sizeof`; `check_fields` tests it): a field appended later always grows `sizeof`, so it can
//! never fall into padding bytes of an older caller's struct that the library would then read.

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
            "{}: struct_size = {size} ends inside the field at bytes {off}..{} (not a size this or an older header \
             produces); set struct_size = sizeof(struct) (the default_opts function does)",
            S::NAME, off + len)));
    }
    Ok(())
}

/// `default_opts`: writes the defaults into the first `min(size, sizeof S)` bytes of `*p` and
/// sets `struct_size` to that count (bytes past it are left alone).
///
/// # Safety
/// `p` must be NULL or point to at least `size` writable bytes.
pub(crate) unsafe fn write_defaults<S: Versioned>(p: *mut S, size: usize) -> Result<()> {
    super::non_null(p, "opts")?;
    check_size::<S>(size)?;
    let mut d = S::defaults();
    d.set_struct_size(size.min(std::mem::size_of::<S>()));
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
/// `min(struct_size, sizeof S)` bytes of `value`, `struct_size` set to that count.
///
/// # Safety
/// `p` must be NULL or point to a struct whose first `struct_size` bytes are writable.
pub(crate) unsafe fn write_out<S: Versioned>(p: *mut S, value: &S, name: &str) -> Result<()> {
    super::non_null(p, name)?;
    let size = std::ptr::read_unaligned(p as *const usize);
    check_size::<S>(size).map_err(|e| Error::InvalidArg(format!("`{name}`: {}", e.message())))?;
    let mut v = *value;
    v.set_struct_size(size.min(std::mem::size_of::<S>()));
    copy_out(&v, p, size);
    Ok(())
}

/// Copies the first `min(size, size_of::<S>())` bytes of `v` to `p`.
unsafe fn copy_out<S: Versioned>(v: &S, p: *mut S, size: usize) {
    let n = size.min(std::mem::size_of::<S>());
    std::ptr::copy_nonoverlapping(v as *const S as *const u8, p as *mut u8, n);
}

/// Test helper: the field list covers the struct exactly: `struct_size` first, every field
/// ending where the next begins, the last one at `sizeof` (no padding anywhere).
#[cfg(test)]
pub(crate) fn check_fields<S: Versioned>() {
    let f = S::fields();
    assert_eq!(f[0], (0, std::mem::size_of::<usize>()), "{}: struct_size must come first", S::NAME);
    for w in f.windows(2) {
        assert_eq!(w[0].0 + w[0].1, w[1].0, "{}: padding or disorder before the field at byte {}", S::NAME, w[1].0);
    }
    let last = f.last().unwrap();
    assert_eq!(last.0 + last.1, std::mem::size_of::<S>(), "{}: tail padding or field list incomplete", S::NAME);
    let d = S::defaults();
    // SAFETY: reading the first field (struct_size, a usize at offset 0) of a repr(C) struct.
    let n = unsafe { std::ptr::read_unaligned(&d as *const S as *const usize) };
    assert_eq!(n, std::mem::size_of::<S>(), "{}: defaults() must set struct_size = sizeof", S::NAME);
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::{FARFIELD_ERR_INVALID_ARG, FARFIELD_ERR_NULL_POINTER};

    /// A versioned struct of this library ("version 3": `a`, `b`, `c`).
    #[repr(C)]
    #[derive(Debug, Clone, Copy, PartialEq)]
    struct V3 {
        struct_size: usize,
        a: i32,
        b: i32,
        c: f64,
    }
    versioned!(V3, "v3", [struct_size, a, b, c], V3 { struct_size: std::mem::size_of::<V3>(), a: 1, b: 2, c: 3.0 });

    /// Guard value of bytes the library must not touch.
    const G: u8 = 0xA5;

    fn bytes(n: usize) -> Vec<u8> {
        vec![G; n]
    }

    fn code(r: Result<()>) -> i32 {
        r.map(|_| 0).unwrap_or_else(|e| e.code())
    }

    #[test]
    fn fields_cover_the_struct() {
        check_fields::<V3>();
        assert_eq!(std::mem::size_of::<V3>(), 24);
    }

    #[test]
    fn write_defaults_writes_only_the_callers_bytes() {
        // an older caller with `a` and `b` only (16 bytes), guard bytes after it
        let mut buf = bytes(32);
        let p = buf.as_mut_ptr() as *mut V3;
        assert_eq!(code(unsafe { write_defaults(p, 16) }), 0);
        assert_eq!(usize::from_ne_bytes(buf[0..8].try_into().unwrap()), 16);
        assert_eq!(i32::from_ne_bytes(buf[8..12].try_into().unwrap()), 1);
        assert_eq!(i32::from_ne_bytes(buf[12..16].try_into().unwrap()), 2);
        assert!(buf[16..].iter().all(|&b| b == G), "bytes past the caller's struct written");
        // a newer caller (40 bytes): the library writes its 24 and says so in struct_size
        let mut buf = bytes(48);
        assert_eq!(code(unsafe { write_defaults(buf.as_mut_ptr() as *mut V3, 40) }), 0);
        assert_eq!(usize::from_ne_bytes(buf[0..8].try_into().unwrap()), 24);
        assert_eq!(f64::from_ne_bytes(buf[16..24].try_into().unwrap()), 3.0);
        assert!(buf[24..].iter().all(|&b| b == G));
    }

    #[test]
    fn bad_sizes_and_null_are_refused_without_writing() {
        for size in [0, 7, 9, 12 + 1, 20, 23] {
            let mut buf = bytes(32);
            let e = unsafe { write_defaults(buf.as_mut_ptr() as *mut V3, size) };
            assert_eq!(code(e.clone()), FARFIELD_ERR_INVALID_ARG, "size {size}");
            assert!(e.unwrap_err().message().contains("sizeof"), "size {size}");
            assert!(buf.iter().all(|&b| b == G), "size {size}: written on error");
        }
        assert_eq!(code(unsafe { write_defaults::<V3>(std::ptr::null_mut(), 24) }), FARFIELD_ERR_NULL_POINTER);
        assert_eq!(code(unsafe { write_out::<V3>(std::ptr::null_mut(), &V3::defaults(), "info") }), FARFIELD_ERR_NULL_POINTER);
        // sizes at field boundaries are fine
        for size in [8, 12, 16, 24, 1000] {
            assert_eq!(check_size::<V3>(size).map(|_| 0).unwrap_or(1), 0, "size {size}");
        }
    }

    #[test]
    fn read_in_takes_missing_fields_from_the_defaults() {
        assert_eq!(unsafe { read_in::<V3>(std::ptr::null()) }.unwrap(), V3::defaults());
        // older caller: struct_size 12 (only `a`), then bytes that must not be read
        let mut buf = bytes(24);
        buf[0..8].copy_from_slice(&12usize.to_ne_bytes());
        buf[8..12].copy_from_slice(&7i32.to_ne_bytes());
        let v = unsafe { read_in(buf.as_ptr() as *const V3) }.unwrap();
        assert_eq!(v, V3 { struct_size: 24, a: 7, b: 2, c: 3.0 });
        // newer caller: 40 bytes, the unknown tail is ignored
        let mut buf = bytes(40);
        buf[0..8].copy_from_slice(&40usize.to_ne_bytes());
        buf[8..24].copy_from_slice(&[0; 16]);
        let v = unsafe { read_in(buf.as_ptr() as *const V3) }.unwrap();
        assert_eq!(v, V3 { struct_size: 24, a: 0, b: 0, c: 0.0 });
        // a size cutting `c`, and 0 (struct_size never set)
        for size in [0usize, 20] {
            let mut buf = bytes(24);
            buf[0..8].copy_from_slice(&size.to_ne_bytes());
            let e = unsafe { read_in(buf.as_ptr() as *const V3) }.unwrap_err();
            assert_eq!(e.code(), FARFIELD_ERR_INVALID_ARG);
            assert!(e.message().contains("v3") && e.message().contains(&format!("struct_size = {size}")), "{}", e.message());
        }
    }

    #[test]
    fn write_out_honours_the_callers_size() {
        let value = V3 { struct_size: 24, a: 10, b: 20, c: 30.0 };
        let mut buf = bytes(32);
        buf[0..8].copy_from_slice(&12usize.to_ne_bytes());
        assert_eq!(code(unsafe { write_out(buf.as_mut_ptr() as *mut V3, &value, "info") }), 0);
        assert_eq!(usize::from_ne_bytes(buf[0..8].try_into().unwrap()), 12);
        assert_eq!(i32::from_ne_bytes(buf[8..12].try_into().unwrap()), 10);
        assert!(buf[12..].iter().all(|&b| b == G));
        let mut buf = bytes(48);
        buf[0..8].copy_from_slice(&48usize.to_ne_bytes());
        assert_eq!(code(unsafe { write_out(buf.as_mut_ptr() as *mut V3, &value, "info") }), 0);
        assert_eq!(usize::from_ne_bytes(buf[0..8].try_into().unwrap()), 24);
        assert_eq!(f64::from_ne_bytes(buf[16..24].try_into().unwrap()), 30.0);
        assert!(buf[24..].iter().all(|&b| b == G));
        let mut buf = bytes(32);
        buf[0..8].copy_from_slice(&0usize.to_ne_bytes());
        let e = unsafe { write_out(buf.as_mut_ptr() as *mut V3, &value, "info") }.unwrap_err();
        assert_eq!(e.code(), FARFIELD_ERR_INVALID_ARG);
        assert!(e.message().contains("`info`") && e.message().contains("sizeof"), "{}", e.message());
        assert!(buf[8..].iter().all(|&b| b == G));
    }
}
