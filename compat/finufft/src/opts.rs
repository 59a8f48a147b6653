//! `finufft_opts`: FINUFFT 2.5's options struct, byte for byte (96 bytes on LP64; the field
//! order, types and defaults of its published `finufft_opts.h` and `finufft_default_opts`),
//! and its translation into farfield's [`NufftOpts`].
//!
//! What each field does here (honoured, validated only, or ignored) is the table in the crate
//! docs ([`crate`]).

use crate::ier::*;
use farfield::nufft::{BackendChoice, ModeOrder, NufftOpts};
use std::ffi::{c_int, c_void};

/// FINUFFT's FFTW lock callback type (`void (*)(void *)`).
pub type LockFn = Option<unsafe extern "C" fn(*mut c_void)>;

/// The options struct of FINUFFT 2.5 (`finufft_opts`, used by both precisions). Fill it with
/// `finufft_default_opts(&opts)`, change fields, pass it to `finufft_makeplan` or a simple
/// interface (NULL = defaults). Layout: ten `int`s, a `double` at offset 40, five `int`s,
/// padding, three pointers at 72, 80, 88; size 96.
#[repr(C)]
#[derive(Debug, Clone, Copy)]
#[allow(non_camel_case_types)]
pub struct finufft_opts {
    /// Mode order (types 1, 2): 1 = FFT order (`0 … N/2−1, −N/2 … −1`); any other value =
    /// CMCL (`−N/2 … (N−1)/2`, default 0), as FINUFFT compares with 1.
    pub modeord: c_int,
    /// 1 = spread or interpolate only (types 1, 2; [`crate::gridding`]); ignored for type 3
    /// (as FINUFFT). Default 0.
    pub spreadinterponly: c_int,
    /// > 0: farfield prints its plan parameters and stage timings to stderr. Default 0.
    pub debug: c_int,
    /// Ignored (farfield's spreader has no separate debug output). Default 0.
    pub spread_debug: c_int,
    /// ≠ 0: warnings and errors are printed to stderr (FINUFFT's messages). Default 1.
    pub showwarn: c_int,
    /// Threads: ≤ 0 = `OMP_NUM_THREADS` when set to a positive count, else all cores
    /// (default 0, as FINUFFT's OpenMP build); otherwise that many (at most 1024).
    pub nthreads: c_int,
    /// FFTW planner flags: `FFTW_ESTIMATE` (64, default), `FFTW_MEASURE` (0), `FFTW_PATIENT`
    /// (32), `FFTW_EXHAUSTIVE` (8), optionally | `FFTW_DESTROY_INPUT` (1); other values fall
    /// back to `FFTW_ESTIMATE`.
    pub fftw: c_int,
    /// Ignored: farfield chooses whether to bin-sort the points itself (always in 2D and 3D;
    /// in 1D see the crate docs' option table). Default 2.
    pub spread_sort: c_int,
    /// Ignored: farfield evaluates its kernel by its own piecewise polynomials. Default 1.
    pub spread_kerevalmeth: c_int,
    /// Ignored. Default 1.
    pub spread_kerpad: c_int,
    /// Upsampling factor σ: 0 = automatic (default), any value in (1, 4] used as given;
    /// otherwise ≤ 1 → [`FINUFFT_ERR_UPSAMPFAC_TOO_SMALL`], > 4 or NaN →
    /// [`FINUFFT_ERR_HORNER_WRONG_BETA`].
    pub upsampfac: f64,
    /// Validated (0, 1 or 2, else [`FINUFFT_ERR_SPREAD_THREAD_NOTVALID`]), then ignored:
    /// farfield parallelises a batch its own way. Default 0.
    pub spread_thread: c_int,
    /// Ignored (farfield's CPU executor chooses its batching). Default 0.
    pub maxbatchsize: c_int,
    /// Ignored (farfield spreads without atomics). Default −1.
    pub spread_nthr_atomic: c_int,
    /// > 0: largest number of points in one spreading subproblem; ≤ 0 = automatic (default 0).
    pub spread_max_sp_size: c_int,
    /// Kernel formula: validated as FINUFFT does (0 = default or 1–9, else
    /// [`FINUFFT_ERR_KERFORMULA_NOTVALID`]), then ignored: farfield's kernel is always the
    /// exponential of semicircle. Default 0.
    pub spread_kerformula: c_int,
    /// FFTW planner lock: must be set together with `fftw_unlock_fun` or not at all (else
    /// [`FINUFFT_ERR_LOCK_FUNS_INVALID`]); never called — farfield serialises its own FFTW
    /// planning behind a process-wide lock. Default NULL.
    pub fftw_lock_fun: LockFn,
    /// See `fftw_lock_fun`. Default NULL.
    pub fftw_unlock_fun: LockFn,
    /// Argument of the lock callbacks (unused). Default NULL.
    pub fftw_lock_data: *mut c_void,
}

/// FINUFFT 2.5's defaults (the values its `finufft_default_opts` writes).
pub fn default_opts() -> finufft_opts {
    finufft_opts {
        modeord: 0,
        spreadinterponly: 0,
        debug: 0,
        spread_debug: 0,
        showwarn: 1,
        nthreads: 0,
        fftw: 64,
        spread_sort: 2,
        spread_kerevalmeth: 1,
        spread_kerpad: 1,
        upsampfac: 0.0,
        spread_thread: 0,
        maxbatchsize: 0,
        spread_nthr_atomic: -1,
        spread_max_sp_size: 0,
        spread_kerformula: 0,
        fftw_lock_fun: None,
        fftw_unlock_fun: None,
        fftw_lock_data: std::ptr::null_mut(),
    }
}

/// Reads the caller's options (NULL = defaults).
///
/// # Safety
/// `o` must be NULL or point to a `finufft_opts`.
pub unsafe fn read(o: *const finufft_opts) -> finufft_opts {
    if o.is_null() {
        default_opts()
    } else {
        *o
    }
}

/// Largest kernel formula FINUFFT 2.5 defines (`spread_kerformula`: 0 = its default, 1–9).
const MAX_KERFORMULA: c_int = 9;

/// Checks the options FINUFFT validates, in FINUFFT's order where it matters (locks, then
/// `spread_thread`, then `upsampfac`, then `spread_kerformula`). Errors:
/// [`FINUFFT_ERR_LOCK_FUNS_INVALID`], [`FINUFFT_ERR_SPREAD_THREAD_NOTVALID`],
/// [`FINUFFT_ERR_UPSAMPFAC_TOO_SMALL`], [`FINUFFT_ERR_HORNER_WRONG_BETA`],
/// [`FINUFFT_ERR_KERFORMULA_NOTVALID`].
pub fn validate(o: &finufft_opts) -> Result<(), Failure> {
    if o.fftw_lock_fun.is_some() != o.fftw_unlock_fun.is_some() {
        return Err(Failure::new(FINUFFT_ERR_LOCK_FUNS_INVALID, "fftw_lock_fun and fftw_unlock_fun must both be NULL or both be set"));
    }
    if !(0..=2).contains(&o.spread_thread) {
        return Err(Failure::new(FINUFFT_ERR_SPREAD_THREAD_NOTVALID, format!("opts.spread_thread = {} is not 0, 1 or 2", o.spread_thread)));
    }
    let u = o.upsampfac;
    if u != 0.0 && u <= 1.0 {
        return Err(Failure::new(FINUFFT_ERR_UPSAMPFAC_TOO_SMALL, format!("opts.upsampfac = {u} is not > 1.0 (or 0 for automatic)")));
    }
    if u.is_nan() || u > 4.0 {
        return Err(Failure::new(FINUFFT_ERR_HORNER_WRONG_BETA,
                                format!("opts.upsampfac = {u}: farfield's kernels cover upsampling factors in (1, 4] (or 0 for automatic)")));
    }
    if !(0..=MAX_KERFORMULA).contains(&o.spread_kerformula) {
        return Err(Failure::new(FINUFFT_ERR_KERFORMULA_NOTVALID,
                                format!("opts.spread_kerformula = {} is not 0 (default) or a formula 1–{MAX_KERFORMULA}", o.spread_kerformula)));
    }
    Ok(())
}

/// The thread count of `opts.nthreads` (farfield's convention: 0 = all cores): a positive
/// value as given (at most [`farfield::threads::MAX_THREADS`]); ≤ 0 the leading count of
/// `omp_threads` (the value of `OMP_NUM_THREADS`, e.g. `"4"` or `"4,2"`) when it is a positive
/// integer, as FINUFFT's OpenMP build does, else 0.
pub fn thread_count(nthreads: c_int, omp_threads: Option<&str>) -> usize {
    let max = farfield::threads::MAX_THREADS;
    if nthreads > 0 {
        return (nthreads as usize).min(max);
    }
    let omp = omp_threads.and_then(|v| v.split(',').next()).and_then(|v| v.trim().parse::<usize>().ok());
    omp.filter(|&n| n > 0).map_or(0, |n| n.min(max))
}

/// The farfield options of a plan with these FINUFFT options (call [`validate`] first): the
/// CPU backend, the exponential-of-semicircle kernel, the coordinates copied at setpts.
pub fn to_nufft_opts(o: &finufft_opts) -> NufftOpts {
    let fftw = o.fftw as u32;
    NufftOpts {
        modeord: if o.modeord == 1 { ModeOrder::Fft } else { ModeOrder::Cmcl },
        debug: o.debug.max(0) as u32,
        nthreads: thread_count(o.nthreads, std::env::var("OMP_NUM_THREADS").ok().as_deref()),
        upsampfac: if o.upsampfac == 0.0 { None } else { Some(o.upsampfac) },
        fftw: if o.fftw >= 0 && fftw & !farfield::nufft::FFTW_FLAGS_ACCEPTED == 0 { fftw } else { farfield::fft::FFTW_ESTIMATE },
        spread_max_subprob_size: o.spread_max_sp_size.max(0) as usize,
        backend: BackendChoice::Cpu,
        ..NufftOpts::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layout_is_finufft_2_5() {
        assert_eq!(size_of::<finufft_opts>(), 96);
        let offs = [
            offset_of!(finufft_opts, modeord),
            offset_of!(finufft_opts, spreadinterponly),
            offset_of!(finufft_opts, debug),
            offset_of!(finufft_opts, spread_debug),
            offset_of!(finufft_opts, showwarn),
            offset_of!(finufft_opts, nthreads),
            offset_of!(finufft_opts, fftw),
            offset_of!(finufft_opts, spread_sort),
            offset_of!(finufft_opts, spread_kerevalmeth),
            offset_of!(finufft_opts, spread_kerpad),
            offset_of!(finufft_opts, upsampfac),
            offset_of!(finufft_opts, spread_thread),
            offset_of!(finufft_opts, maxbatchsize),
            offset_of!(finufft_opts, spread_nthr_atomic),
            offset_of!(finufft_opts, spread_max_sp_size),
            offset_of!(finufft_opts, spread_kerformula),
            offset_of!(finufft_opts, fftw_lock_fun),
            offset_of!(finufft_opts, fftw_unlock_fun),
            offset_of!(finufft_opts, fftw_lock_data),
        ];
        assert_eq!(offs, [0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 52, 56, 60, 64, 72, 80, 88]);
    }

    #[test]
    fn validation_codes() {
        let d = default_opts();
        assert!(validate(&d).is_ok());
        let with = |f: &dyn Fn(&mut finufft_opts)| {
            let mut o = d;
            f(&mut o);
            validate(&o).map_err(|e| e.ier)
        };
        unsafe extern "C" fn lock(_: *mut c_void) {}
        assert_eq!(with(&|o| o.fftw_lock_fun = Some(lock)), Err(22));
        assert_eq!(with(&|o| { o.fftw_lock_fun = Some(lock); o.fftw_unlock_fun = Some(lock) }), Ok(()));
        assert_eq!(with(&|o| o.spread_thread = 3), Err(13));
        assert_eq!(with(&|o| o.upsampfac = 1.0), Err(7));
        assert_eq!(with(&|o| o.upsampfac = -2.0), Err(7));
        assert_eq!(with(&|o| o.upsampfac = 5.0), Err(8));
        assert_eq!(with(&|o| o.upsampfac = f64::NAN), Err(8));
        assert_eq!(with(&|o| o.upsampfac = 1.25), Ok(()));
        assert_eq!(with(&|o| o.spreadinterponly = 1), Ok(()));
        assert_eq!(with(&|o| o.spread_kerformula = 99), Err(24));
        assert_eq!(with(&|o| o.spread_kerformula = -1), Err(24));
        assert_eq!(with(&|o| o.spread_kerformula = 9), Ok(()));
    }

    #[test]
    fn threads_follow_omp_num_threads() {
        assert_eq!(thread_count(3, Some("7")), 3);
        assert_eq!(thread_count(0, Some("7")), 7);
        assert_eq!(thread_count(-2, Some(" 4,2")), 4);
        assert_eq!(thread_count(0, None), 0);
        assert_eq!(thread_count(0, Some("zero")), 0);
        assert_eq!(thread_count(0, Some("0")), 0);
        assert_eq!(thread_count(100_000, None), farfield::threads::MAX_THREADS);
    }

    #[test]
    fn translation() {
        let mut o = default_opts();
        let n = to_nufft_opts(&o);
        assert_eq!((n.modeord, n.nthreads, n.upsampfac, n.backend), (ModeOrder::Cmcl, 0, None, BackendChoice::Cpu));
        o.modeord = 1;
        o.nthreads = 3;
        o.upsampfac = 1.25;
        o.fftw = 12345;
        o.spread_max_sp_size = 500;
        let n = to_nufft_opts(&o);
        assert_eq!((n.modeord, n.nthreads, n.upsampfac, n.fftw, n.spread_max_subprob_size),
                   (ModeOrder::Fft, 3, Some(1.25), farfield::fft::FFTW_ESTIMATE, 500));
        o.modeord = 2; // FINUFFT: only 1 selects FFT order
        o.nthreads = 100_000;
        o.fftw = 0; // FFTW_MEASURE
        let n = to_nufft_opts(&o);
        assert_eq!((n.modeord, n.nthreads, n.fftw), (ModeOrder::Cmcl, 1024, 0));
    }
}
