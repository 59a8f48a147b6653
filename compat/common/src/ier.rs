//! FINUFFT 2.5's status codes (`ier`, the values of its published `finufft_errors.h`, which
//! cuFINUFFT 2.5 shares), the mapping of farfield's [`farfield::Error`] onto them, and the
//! panic boundary of every exported function — used by both drop-ins (`libfinufft.so`,
//! `libcufinufft.so`).
//!
//! `ier = 0` is success, `1` ([`FINUFFT_WARN_EPS_TOO_SMALL`]) a warning — the transform is
//! still planned and computed, at the smallest tolerance reachable —, anything else an error
//! (the outputs are then not written, except where [`ier_of`] says so).

use farfield::Error;
use std::ffi::c_int;
use std::panic::{catch_unwind, AssertUnwindSafe};

/// Warning: the requested tolerance is below what the precision (or the kernel at the
/// requested `upsampfac`) reaches; it was raised and the transform computed anyway.
pub const FINUFFT_WARN_EPS_TOO_SMALL: c_int = 1;
/// A fine grid (or mode array) larger than the library's limits (FINUFFT: `MAX_NF`).
pub const FINUFFT_ERR_MAXNALLOC: c_int = 2;
/// Grid too small for the kernel width (`spreadinterponly` plans, whose grid is the modes).
pub const FINUFFT_ERR_SPREAD_BOX_SMALL: c_int = 3;
/// Deprecated in FINUFFT (points out of range); never returned.
pub const FINUFFT_ERR_SPREAD_PTS_OUT_RANGE: c_int = 4;
/// Spreader allocation failure (FINUFFT: unused); never returned.
pub const FINUFFT_ERR_SPREAD_ALLOC: c_int = 5;
/// Illegal spreading direction; never returned (no spread-only interface here).
pub const FINUFFT_ERR_SPREAD_DIR: c_int = 6;
/// `opts.upsampfac` is not 0 (automatic) and not > 1.
pub const FINUFFT_ERR_UPSAMPFAC_TOO_SMALL: c_int = 7;
/// `opts.upsampfac` is a value the kernels have no rule for (here: above 4, or NaN).
pub const FINUFFT_ERR_HORNER_WRONG_BETA: c_int = 8;
/// `ntrans < 1`.
pub const FINUFFT_ERR_NTRANS_NOTVALID: c_int = 9;
/// `type` is not 1, 2 or 3.
pub const FINUFFT_ERR_TYPE_NOTVALID: c_int = 10;
/// A memory allocation failed.
pub const FINUFFT_ERR_ALLOC: c_int = 11;
/// `dim` is not 1, 2 or 3.
pub const FINUFFT_ERR_DIM_NOTVALID: c_int = 12;
/// `opts.spread_thread` is not 0, 1 or 2.
pub const FINUFFT_ERR_SPREAD_THREAD_NOTVALID: c_int = 13;
/// A mode count is negative.
pub const FINUFFT_ERR_NDATA_NOTVALID: c_int = 14;
/// A CUDA failure (cuFINUFFT only): no CUDA driver or device, or a device error.
pub const FINUFFT_ERR_CUDA_FAILURE: c_int = 15;
/// The plan handle is NULL (FINUFFT: an uninitialised plan).
pub const FINUFFT_ERR_PLAN_NOTVALID: c_int = 16;
/// Spreading method invalid (cuFINUFFT only: `opts.gpu_method` not 0–3).
pub const FINUFFT_ERR_METHOD_NOTVALID: c_int = 17;
/// Bin size invalid (cuFINUFFT only; never returned: bin sizes are ignored).
pub const FINUFFT_ERR_BINSIZE_NOTVALID: c_int = 18;
/// Not enough shared memory (cuFINUFFT only; never returned here).
pub const FINUFFT_ERR_INSUFFICIENT_SHMEM: c_int = 19;
/// `nj` (M) or `nk` negative, or above the library's limits.
pub const FINUFFT_ERR_NUM_NU_PTS_INVALID: c_int = 20;
/// Any other invalid input (NULL arrays, non-finite coordinates, overlapping input and output,
/// execute before setpts).
pub const FINUFFT_ERR_INVALID_ARGUMENT: c_int = 21;
/// Exactly one of `opts.fftw_lock_fun` / `opts.fftw_unlock_fun` is set.
pub const FINUFFT_ERR_LOCK_FUNS_INVALID: c_int = 22;
/// `nthreads` invalid (never returned: every value is accepted, see the crate docs).
pub const FINUFFT_ERR_NTHREADS_NOTVALID: c_int = 23;
/// `opts.spread_kerformula` invalid (FINUFFT 2.5 defines 0 and 1–9).
pub const FINUFFT_ERR_KERFORMULA_NOTVALID: c_int = 24;
/// An unexpected internal failure (a caught panic).
pub const FINUFFT_ERR_UNKNOWN_EXCEPTION: c_int = 25;

/// A failed call: the FINUFFT status and a message (printed to stderr with `opts.showwarn`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Failure {
    /// FINUFFT status code (≥ 2).
    pub ier: c_int,
    /// What was wrong.
    pub message: String,
}

impl Failure {
    /// A failure with status `ier` and message `msg`.
    pub fn new(ier: c_int, msg: impl Into<String>) -> Failure {
        Failure { ier, message: msg.into() }
    }
}

impl From<Error> for Failure {
    fn from(e: Error) -> Failure {
        Failure::new(ier_of(&e), e.message())
    }
}

/// The FINUFFT status of a farfield error:
///
/// | farfield | FINUFFT |
/// |---|---|
/// | `Dim` | 12 `DIM_NOTVALID` |
/// | `Type` | 10 `TYPE_NOTVALID` |
/// | `Modes` (too many modes, fine grid too large) | 2 `MAXNALLOC` |
/// | `NPoints` (M or N beyond the limits) | 20 `NUM_NU_PTS_INVALID` |
/// | `Alloc`, `Fft` (FFTW could not plan) | 11 `ALLOC` |
/// | `NoDevice` | 15 `CUDA_FAILURE` (the cuFINUFFT drop-in; FINUFFT's plans run on the CPU) |
/// | `Internal` | 25 `UNKNOWN_EXCEPTION` |
/// | `NullPointer`, `InvalidArg`, `NotSupported`, `Tol`, `NonFinite`, `NoPoints`, `Range` | 21 `INVALID_ARGUMENT` |
///
/// `Range` comes from an execute whose output is not finite (non-finite or overflowing
/// strengths): the output is then already written, as FINUFFT would have written it.
pub fn ier_of(e: &Error) -> c_int {
    match e {
        Error::Dim(_) => FINUFFT_ERR_DIM_NOTVALID,
        Error::Type(_) => FINUFFT_ERR_TYPE_NOTVALID,
        Error::Modes(_) => FINUFFT_ERR_MAXNALLOC,
        Error::NPoints(_) => FINUFFT_ERR_NUM_NU_PTS_INVALID,
        Error::Alloc(_) | Error::Fft(_) => FINUFFT_ERR_ALLOC,
        Error::NoDevice(_) => FINUFFT_ERR_CUDA_FAILURE,
        Error::Internal(_) => FINUFFT_ERR_UNKNOWN_EXCEPTION,
        Error::NullPointer(_)
        | Error::InvalidArg(_)
        | Error::NotSupported(_)
        | Error::Tol(_)
        | Error::NonFinite(_)
        | Error::NoPoints(_)
        | Error::Range(_) => FINUFFT_ERR_INVALID_ARGUMENT,
    }
}

/// Runs `f` behind the panic boundary: `Ok(ier)` gives `ier` (0 or a warning), a
/// [`Failure`] its `ier` (its message printed to stderr when `show` is true, as FINUFFT
/// prints its errors), a panic [`FINUFFT_ERR_UNKNOWN_EXCEPTION`]. `what` names the function
/// in the message.
pub fn guard<F: FnOnce() -> Result<c_int, Failure>>(what: &str, show: bool, f: F) -> c_int {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(ier)) => ier,
        Ok(Err(e)) => {
            if show {
                eprintln!("[{what}] error {}: {}", e.ier, e.message);
            }
            e.ier
        }
        Err(_) => {
            if show {
                eprintln!("[{what}] internal error (caught panic)");
            }
            FINUFFT_ERR_UNKNOWN_EXCEPTION
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn farfield_errors_map_to_finufft_codes() {
        assert_eq!(ier_of(&Error::Dim(String::new())), 12);
        assert_eq!(ier_of(&Error::Type(String::new())), 10);
        assert_eq!(ier_of(&Error::Modes(String::new())), 2);
        assert_eq!(ier_of(&Error::NPoints(String::new())), 20);
        assert_eq!(ier_of(&Error::Alloc(String::new())), 11);
        assert_eq!(ier_of(&Error::NonFinite(String::new())), 21);
        assert_eq!(Failure::from(Error::Internal("x".into())), Failure::new(25, "x"));
    }

    #[test]
    fn guard_passes_warnings_and_catches_panics() {
        assert_eq!(guard("t", false, || Ok(1)), 1);
        assert_eq!(guard("t", false, || Err(Failure::new(9, "ntrans"))), 9);
        assert_eq!(guard("t", false, || panic!("boom")), FINUFFT_ERR_UNKNOWN_EXCEPTION);
    }
}
