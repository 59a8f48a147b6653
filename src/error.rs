//! The library's error model: one [`Error`] enum whose variants map one-to-one onto the
//! stable C status codes (`FARFIELD_ERR_*`, all ≥ 100 so they are never mistaken for a
//! FINUFFT `ier`), each carrying a human-readable detail message (which argument, which
//! point index, which limit). See docs/design.md §3.1.

use std::fmt;

/// Status code of success.
pub const FARFIELD_OK: i32 = 0;
/// An internal error (a caught panic or a broken invariant); please report it.
pub const FARFIELD_ERR_INTERNAL: i32 = 100;
/// A required pointer argument was NULL.
pub const FARFIELD_ERR_NULL_POINTER: i32 = 101;
/// An argument is outside its valid range (the message names it).
pub const FARFIELD_ERR_INVALID_ARG: i32 = 102;
/// The dimension is not 1, 2 or 3.
pub const FARFIELD_ERR_DIM: i32 = 103;
/// The transform type is not one of the supported types.
pub const FARFIELD_ERR_TYPE: i32 = 104;
/// The request is valid but not supported yet (e.g. NUFFT type 3).
pub const FARFIELD_ERR_NOT_SUPPORTED: i32 = 105;
/// Number of modes (or grid size) ≤ 0, or its product overflows.
pub const FARFIELD_ERR_MODES: i32 = 106;
/// Tolerance ≤ 0, ≥ 1 where that is meaningless, or not finite.
pub const FARFIELD_ERR_TOL: i32 = 107;
/// Number of points negative (or larger than the plan allows).
pub const FARFIELD_ERR_NPOINTS: i32 = 108;
/// A coordinate or value is NaN or infinite (the message names the first bad index).
pub const FARFIELD_ERR_NONFINITE: i32 = 109;
/// Memory for a user-sized buffer could not be reserved.
pub const FARFIELD_ERR_ALLOC: i32 = 110;
/// `execute` was called before `setpts`.
pub const FARFIELD_ERR_NO_POINTS: i32 = 111;
/// A CUDA device was demanded but none (or no driver) was found.
pub const FARFIELD_ERR_NO_DEVICE: i32 = 112;
/// FFTW could not create a plan.
pub const FARFIELD_ERR_FFT: i32 = 113;
/// An input's size or scale is outside the range the method serves (the message states the
/// limit and the value), or a result would not be representable in floating point (overflow or
/// underflow at this scale): no output is written.
pub const FARFIELD_ERR_RANGE: i32 = 114;

/// Every failure the library reports. The variant decides the C status code
/// ([`Error::code`]); the string is the detail returned by `farfield_last_error_message()`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Error {
    /// See [`FARFIELD_ERR_INTERNAL`].
    Internal(String),
    /// See [`FARFIELD_ERR_NULL_POINTER`].
    NullPointer(String),
    /// See [`FARFIELD_ERR_INVALID_ARG`].
    InvalidArg(String),
    /// See [`FARFIELD_ERR_DIM`].
    Dim(String),
    /// See [`FARFIELD_ERR_TYPE`].
    Type(String),
    /// See [`FARFIELD_ERR_NOT_SUPPORTED`].
    NotSupported(String),
    /// See [`FARFIELD_ERR_MODES`].
    Modes(String),
    /// See [`FARFIELD_ERR_TOL`].
    Tol(String),
    /// See [`FARFIELD_ERR_NPOINTS`].
    NPoints(String),
    /// See [`FARFIELD_ERR_NONFINITE`].
    NonFinite(String),
    /// See [`FARFIELD_ERR_ALLOC`].
    Alloc(String),
    /// See [`FARFIELD_ERR_NO_POINTS`].
    NoPoints(String),
    /// See [`FARFIELD_ERR_NO_DEVICE`].
    NoDevice(String),
    /// See [`FARFIELD_ERR_FFT`].
    Fft(String),
    /// See [`FARFIELD_ERR_RANGE`].
    Range(String),
}

/// Result alias used throughout the crate.
pub type Result<T> = std::result::Result<T, Error>;

impl Error {
    /// The stable C status code of this error (a `FARFIELD_ERR_*` constant).
    pub fn code(&self) -> i32 {
        match self {
            Error::Internal(_) => FARFIELD_ERR_INTERNAL,
            Error::NullPointer(_) => FARFIELD_ERR_NULL_POINTER,
            Error::InvalidArg(_) => FARFIELD_ERR_INVALID_ARG,
            Error::Dim(_) => FARFIELD_ERR_DIM,
            Error::Type(_) => FARFIELD_ERR_TYPE,
            Error::NotSupported(_) => FARFIELD_ERR_NOT_SUPPORTED,
            Error::Modes(_) => FARFIELD_ERR_MODES,
            Error::Tol(_) => FARFIELD_ERR_TOL,
            Error::NPoints(_) => FARFIELD_ERR_NPOINTS,
            Error::NonFinite(_) => FARFIELD_ERR_NONFINITE,
            Error::Alloc(_) => FARFIELD_ERR_ALLOC,
            Error::NoPoints(_) => FARFIELD_ERR_NO_POINTS,
            Error::NoDevice(_) => FARFIELD_ERR_NO_DEVICE,
            Error::Fft(_) => FARFIELD_ERR_FFT,
            Error::Range(_) => FARFIELD_ERR_RANGE,
        }
    }

    /// The detail message.
    pub fn message(&self) -> &str {
        match self {
            Error::Internal(s)
            | Error::NullPointer(s)
            | Error::InvalidArg(s)
            | Error::Dim(s)
            | Error::Type(s)
            | Error::NotSupported(s)
            | Error::Modes(s)
            | Error::Tol(s)
            | Error::NPoints(s)
            | Error::NonFinite(s)
            | Error::Alloc(s)
            | Error::NoPoints(s)
            | Error::NoDevice(s)
            | Error::Fft(s)
            | Error::Range(s) => s,
        }
    }
}

/// Static description of a status code (what `farfield_status_string` returns).
pub fn status_string(code: i32) -> &'static str {
    match code {
        FARFIELD_OK => "success",
        FARFIELD_ERR_INTERNAL => "internal error (a bug: please report it with the message)",
        FARFIELD_ERR_NULL_POINTER => "a required pointer argument is NULL",
        FARFIELD_ERR_INVALID_ARG => "an argument is outside its valid range",
        FARFIELD_ERR_DIM => "dimension must be 1, 2 or 3",
        FARFIELD_ERR_TYPE => "unknown transform type",
        FARFIELD_ERR_NOT_SUPPORTED => "valid request that is not supported yet",
        FARFIELD_ERR_MODES => "number of modes/grid points must be positive and its product must fit in memory indices",
        FARFIELD_ERR_TOL => "tolerance must be finite and positive",
        FARFIELD_ERR_NPOINTS => "invalid number of points",
        FARFIELD_ERR_NONFINITE => "a coordinate or value is NaN or infinite",
        FARFIELD_ERR_ALLOC => "memory could not be allocated",
        FARFIELD_ERR_NO_POINTS => "execute called before setpts",
        FARFIELD_ERR_NO_DEVICE => "no CUDA device or driver found",
        FARFIELD_ERR_FFT => "FFTW could not create a plan",
        FARFIELD_ERR_RANGE => "an input's size or scale is outside the supported range, or the result would overflow",
        _ => "unknown status code",
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", status_string(self.code()), self.message())
    }
}

impl std::error::Error for Error {}

/// Largest number of elements of any single user-sized buffer (grid, mode list, point array):
/// 2⁴⁰. Sizes derived from user input are compared with this (or a tighter, documented limit)
/// before any loop or allocation depends on them, so no request can make a call run
/// unboundedly long; the allocation itself still goes through `try_reserve`.
pub const MAX_ELEMENTS: usize = 1 << 40;

/// Asks the kernel for transparent huge pages on the whole 2 MiB pages inside `bytes` bytes
/// from `ptr` (an allocation not yet touched, of at least 4 MiB): 512× fewer page faults and
/// TLB misses for arrays written or read in scattered order. Linux only; advisory (failure or
/// an unsupported system is ignored). Public for callers that allocate the arrays they pass
/// in (the `farfield` tool's benchmarks back theirs as NumPy does by default).
pub fn advise_huge_pages(ptr: *mut u8, bytes: usize) {
    #[cfg(target_os = "linux")]
    {
        const HUGE: usize = 2 << 20;
        if bytes < 2 * HUGE {
            return;
        }
        let a = ptr as usize;
        let start = a.next_multiple_of(HUGE);
        let end = (a + bytes) / HUGE * HUGE;
        if end > start {
            // SAFETY: the range lies inside the caller's allocation; MADV_HUGEPAGE changes no
            // contents.
            unsafe { libc::madvise(start as *mut libc::c_void, end - start, libc::MADV_HUGEPAGE) };
        }
    }
    #[cfg(not(target_os = "linux"))]
    let _ = (ptr, bytes);
}

/// Reserves an empty vector with capacity for `n` elements, mapping allocation failure (or a
/// byte size that overflows) to [`Error::Alloc`] with the byte count in the message.
pub fn try_vec<T>(n: usize, what: &str) -> Result<Vec<T>> {
    let mut v: Vec<T> = Vec::new();
    v.try_reserve_exact(n).map_err(|_| alloc_error::<T>(n, what))?;
    Ok(v)
}

/// A vector of `n` copies of `value`, reserved fallibly (see [`try_vec`]).
pub fn try_filled_vec<T: Clone>(n: usize, value: T, what: &str) -> Result<Vec<T>> {
    let mut v = try_vec(n, what)?;
    v.resize(n, value);
    Ok(v)
}

/// Grows `v` by `additional` elements' capacity fallibly (see [`try_vec`]).
pub fn try_grow<T>(v: &mut Vec<T>, additional: usize, what: &str) -> Result<()> {
    v.try_reserve(additional).map_err(|_| alloc_error::<T>(v.len().saturating_add(additional), what))
}

/// `v.resize(n, value)` with the growth reserved fallibly (see [`try_grow`]).
pub fn try_resize<T: Clone>(v: &mut Vec<T>, n: usize, value: T, what: &str) -> Result<()> {
    if n > v.len() {
        try_grow(v, n - v.len(), what)?;
    }
    v.resize(n, value);
    Ok(())
}

/// The [`Error::Alloc`] for `n` elements of `T`.
pub fn alloc_error<T>(n: usize, what: &str) -> Error {
    let size = std::mem::size_of::<T>();
    match n.checked_mul(size) {
        Some(b) => Error::Alloc(format!("could not allocate {what}: {b} bytes ({n} elements of {size} bytes)")),
        None => Error::Alloc(format!("could not allocate {what}: {n} elements of {size} bytes overflow the address space")),
    }
}

/// Checks that every value of a result is finite; a result that is not is never returned
/// with status 0 (→ [`Error::Range`], naming `what`, the first bad index and the likely cause).
pub fn ensure_finite(values: &[f64], what: &str) -> Result<()> {
    match values.iter().position(|v| !v.is_finite()) {
        None => Ok(()),
        Some(i) => Err(Error::Range(format!(
            "{what}[{i}] = {:e} is not finite: the inputs' scale makes the result overflow or underflow in double precision",
            values[i]
        ))),
    }
}

/// Reserves a zero-initialised vector of `n` elements, mapping allocation failure (or a
/// byte size that overflows) to [`Error::Alloc`] instead of aborting the process.
pub fn try_zeroed_vec<T: Clone + Default>(n: usize, what: &str) -> Result<Vec<T>> {
    try_filled_vec(n, T::default(), what)
}

/// The memory of one array argument, for the overlap checks: `(address, bytes, name)`.
pub type Region<'a> = (usize, usize, &'a str);

/// Refuses overlapping memory where a call would otherwise read an input after writing an
/// output in the same bytes, or write two outputs into the same bytes (and where Rust would
/// hold a shared and a mutable slice of the same memory): every output must be disjoint from
/// every input and every other output (`FARFIELD_ERR_INVALID_ARG` naming both and the byte
/// ranges). Inputs may overlap each other. Empty regions never overlap. Only the addresses are
/// compared; nothing is dereferenced.
pub fn check_outputs_disjoint(inputs: &[Region], outputs: &[Region]) -> Result<()> {
    for (k, &(b0, lb, bn)) in outputs.iter().enumerate() {
        for &(a0, la, an) in inputs.iter().chain(&outputs[k + 1..]) {
            if la == 0 || lb == 0 {
                continue;
            }
            let (a1, b1) = (a0.saturating_add(la), b0.saturating_add(lb));
            if a0 < b1 && b0 < a1 {
                return Err(Error::InvalidArg(format!(
                    "`{an}` (bytes {a0:#x}..{a1:#x}) and `{bn}` (bytes {b0:#x}..{b1:#x}) overlap; \
                     they must be separate arrays (in-place operation is not supported)"
                )));
            }
        }
    }
    Ok(())
}

