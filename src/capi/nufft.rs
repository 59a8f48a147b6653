//! C API of the NUFFT (FINUFFT's guru interface shape): `farfield_nufft_*` (double) and
//! `farfield_nufftf_*` (single precision) — default_opts, makeplan, setpts, execute,
//! get_info, destroy.
//!
//! Memory layout: modes `f[k1 + N1*(k2 + N2*k3)]` (x fastest; CMCL order by default), strengths
//! `c[j]`, stacked per transform (`c[t*M + j]`, `f[t*N1*N2*N3 + …]`). Coordinates in radians,
//! any finite value, reduced mod 2π in double precision at `setpts` (accuracy contract for
//! |x| ≤ 1e16, see `farfield_nufft_setpts`); `setpts` copies them, so the caller may reuse or
//! free its arrays.
//!
//! Limits (checked before anything is allocated, so every call's cost is bounded by the
//! problem size): fine grid ≤ 2³¹ − 1 points per axis (FFTW's int) and ≤ 2⁴⁰ points in all,
//! N1·N2·N3 ≤ 2⁴⁰ and ntrans·N1·N2·N3 ≤ 2⁴⁰ (`FARFIELD_ERR_MODES`), M ≤ 2³² − 1 and
//! ntrans·M ≤ 2⁴⁰ (`FARFIELD_ERR_NPOINTS`); memory beyond what the system gives →
//! `FARFIELD_ERR_ALLOC` (never an abort).
//! Thread safety: different plans may be used concurrently; concurrent calls on one plan are
//! serialised by a lock inside the plan.

use super::{destroy_boxed, guard, non_null, slice_in, slice_out};
use crate::error::{Error, Result};
use crate::nufft::{NufftInfo, NufftOpts, NufftPlan, Type3Plan};
use crate::real::Real;
use num_complex::{Complex, Complex32, Complex64};
use std::ffi::c_int;
use std::sync::Mutex;

/// The plan behind a NUFFT handle: type 1 or 2 ([`NufftPlan`]) or type 3 ([`Type3Plan`]).
enum AnyPlan<T: Real> {
    Uniform(NufftPlan<T>),
    Type3(Type3Plan<T>),
}

impl<T: Real> AnyPlan<T> {
    fn info(&self) -> NufftInfo {
        match self {
            AnyPlan::Uniform(p) => p.info(),
            AnyPlan::Type3(p) => p.info(),
        }
    }
}

/// Opaque double-precision NUFFT plan (C: `struct farfield_nufft_plan_s`).
#[allow(non_camel_case_types)]
pub struct farfield_nufft_plan_s {
    inner: Mutex<AnyPlan<f64>>,
}
/// Opaque single-precision NUFFT plan (C: `struct farfield_nufftf_plan_s`).
#[allow(non_camel_case_types)]
pub struct farfield_nufftf_plan_s {
    inner: Mutex<AnyPlan<f32>>,
}
/// Handle of a double-precision NUFFT plan.
#[allow(non_camel_case_types)]
pub type farfield_nufft_plan = *mut farfield_nufft_plan_s;
/// Handle of a single-precision NUFFT plan.
#[allow(non_camel_case_types)]
pub type farfield_nufftf_plan = *mut farfield_nufftf_plan_s;

/// Shared body of both makeplans.
unsafe fn makeplan<T: Real>(ty: c_int, dim: c_int, n_modes: *const i64, iflag: c_int, ntrans: c_int, tol: f64,
                            opts: *const NufftOpts) -> Result<AnyPlan<T>> {
    if ty == 3 {
        // type 3 has no modes: n_modes is not read (it may be NULL)
        if ntrans < 1 {
            return Err(Error::InvalidArg(format!("ntrans = {ntrans} must be at least 1")));
        }
        let o = if opts.is_null() { NufftOpts::default() } else { *opts };
        let dim = usize::try_from(dim).map_err(|_| Error::Dim(format!("dim = {dim} is not 1, 2 or 3")))?;
        return Ok(AnyPlan::Type3(Type3Plan::<T>::new(dim, iflag, ntrans as usize, tol, &o)?));
    }
    non_null(n_modes, "n_modes")?;
    if !(1..=3).contains(&dim) {
        // checked here too so that n_modes is never read past a valid dim
        return Err(Error::Dim(format!("dim = {dim} is not 1, 2 or 3")));
    }
    if ntrans < 1 {
        return Err(Error::InvalidArg(format!("ntrans = {ntrans} must be at least 1")));
    }
    let n = std::slice::from_raw_parts(n_modes, dim as usize);
    let o = if opts.is_null() { NufftOpts::default() } else { *opts };
    Ok(AnyPlan::Uniform(NufftPlan::<T>::new(ty, dim as usize, n, iflag, ntrans as usize, tol, &o)?))
}

/// Checks a point or target count from C (`M`, `N`) against the limits before any slice of
/// that many elements is formed.
fn count(v: i64, name: &str, ntrans: usize) -> Result<usize> {
    let max = crate::nufft::plan::MAX_POINTS;
    if v < 0 {
        return Err(Error::NPoints(format!("{name} = {v} is negative")));
    }
    if v as u64 > max as u64 {
        return Err(Error::NPoints(format!("{name} = {v} exceeds the supported maximum of {max} (2^32 − 1)")));
    }
    let v = v as usize;
    if v.checked_mul(ntrans).map_or(true, |t| t > crate::nufft::plan::MAX_GRID_ELEMENTS) {
        return Err(Error::NPoints(format!("ntrans·{name} = {ntrans}·{v} exceeds the limit 2^40 values per execute")));
    }
    Ok(v)
}

/// Shared body of both setpts (`n, s, t, u` are read for type 3 only).
#[allow(clippy::too_many_arguments)]
unsafe fn setpts<T: Real>(plan: &Mutex<AnyPlan<T>>, m: i64, x: *const T, y: *const T, z: *const T, n: i64,
                          s: *const T, t: *const T, u: *const T) -> Result<()> {
    let mut guard = plan.lock().unwrap_or_else(|e| e.into_inner());
    let p = match &mut *guard {
        AnyPlan::Uniform(p) => p,
        AnyPlan::Type3(p) => {
            let (nt, dim) = (p.ntrans(), p.dim());
            let m = count(m, "M", nt)?;
            let n = count(n, "N", nt)?;
            let xs = slice_in(x, m, "x")?;
            let ys = if dim >= 2 { slice_in(y, m, "y")? } else { &[] };
            let zs = if dim >= 3 { slice_in(z, m, "z")? } else { &[] };
            let ss = slice_in(s, n, "s")?;
            let ts = if dim >= 2 { slice_in(t, n, "t")? } else { &[] };
            let us = if dim >= 3 { slice_in(u, n, "u")? } else { &[] };
            return p.setpts(xs, ys, zs, ss, ts, us);
        }
    };
    let m = count(m, "M", p.ntrans())?;
    let dim = p.dim();
    let xs = slice_in(x, m, "x")?;
    let ys = if dim >= 2 { slice_in(y, m, "y")? } else { &[] };
    let zs = if dim >= 3 { slice_in(z, m, "z")? } else { &[] };
    if p.options().points_by_reference != 0 {
        // SAFETY: with points_by_reference the caller keeps the arrays valid and unchanged
        // until the next setpts or destroy (documented on the option and on setpts).
        p.setpts_by_reference(xs, ys, zs)
    } else {
        p.setpts(xs, ys, zs)
    }
}

/// Shared body of both executes.
unsafe fn execute<T: Real>(plan: &Mutex<AnyPlan<T>>, c: *mut Complex<T>, f: *mut Complex<T>) -> Result<()> {
    let mut guard = plan.lock().unwrap_or_else(|e| e.into_inner());
    let p = match &mut *guard {
        AnyPlan::Uniform(p) => p,
        AnyPlan::Type3(p) => {
            let nt = p.ntrans();
            let cs = slice_in(c, nt * p.num_points(), "c")?;
            let fs = slice_out(f, nt * p.num_targets(), "f")?;
            return p.execute(cs, fs);
        }
    };
    let nt = p.ntrans();
    let cs = slice_out(c, nt * p.num_points(), "c")?;
    let fs = slice_out(f, nt * p.num_modes(), "f")?;
    p.execute(cs, fs)
}

/// Shared body of both execute_device.
unsafe fn execute_device<T: Real>(plan: &Mutex<AnyPlan<T>>, c: u64, f: u64) -> Result<()> {
    match &mut *plan.lock().unwrap_or_else(|e| e.into_inner()) {
        AnyPlan::Uniform(p) => p.execute_device(c, f),
        AnyPlan::Type3(_) => Err(Error::InvalidArg("execute_device: type 3 plans run on the CPU (use execute)".into())),
    }
}

fn plan_ref<'a, P>(plan: *mut P, name: &str) -> Result<&'a P> {
    non_null(plan, name)?;
    // SAFETY: non-NULL handles come from makeplan and stay valid until destroy.
    Ok(unsafe { &*plan })
}

/// Writes the default options (ES kernel, automatic σ, all cores, CMCL mode order,
/// FFTW_ESTIMATE) into `*opts`. NULL is ignored.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_default_opts(opts: *mut NufftOpts) {
    if !opts.is_null() {
        *opts = NufftOpts::default();
    }
}

/// Makes a double-precision NUFFT plan.
///
/// * `type`: 1 (non-uniform → modes), 2 (modes → non-uniform) or 3 (non-uniform points →
///   non-uniform frequencies, `f_k = Σ_j c_j e^{± i s_k·x_j}`; Barnett–Magland–af Klinteberg
///   2019 §3: the fine grid is sized from the points and frequencies at setpts).
/// * `dim`: 1, 2 or 3; `n_modes`: `dim` positive mode counts (N1, N2, N3); not read for type
///   3 (may be NULL).
/// * `iflag`: sign of the exponent, `+i` if ≥ 0; `ntrans ≥ 1`: vectors per execute.
/// * `tol`: relative l2 accuracy, finite and > 0. It is clamped, with
///   `FARFIELD_WARN_TOL_CLAMPED` set and the value used in `tol_used` of
///   `farfield_nufft_get_info` (and in the `opts.debug` print), when it is below 1e-15 or below
///   what the widest kernel reaches at the upsampling factor σ: for the ES kernel
///   `exp(−16π√(1 − 1/σ))` (1.7e-5 at σ = 1.05, 1.7e-10 at 1.25, 2.5e-13 at 1.5, 1e-15 at
///   2), for the Gaussian `exp(−16π(1 − 1/(2σ − 1)))` (1e-2 at 1.05, 5e-8 at 1.25, 1.2e-11 at
///   1.5, 2.8e-15 at 2). The measured error stays within 10·`tol_used`.
/// * `plan`: receives the handle (set to NULL first); `opts`: NULL for defaults; every field is
///   validated (`FARFIELD_ERR_INVALID_ARG` naming it: `opts.fftw` must combine only 64, 0, 32,
///   8 and 1; `opts.points_by_reference` must be 0 or 1; `opts.upsampfac` 0 or in (1, 4]).
///
/// Limits: the fine grid `nf_d` = next 2,3,5-smooth even size ≥ max(⌈σN_d⌉, 2w) must be at most
/// 2³¹ − 1 per axis (so N_d ≲ 1.07e9 at σ = 2) and 2⁴⁰ points in all; N1·N2·N3 and
/// ntrans·N1·N2·N3 at most 2⁴⁰ (`FARFIELD_ERR_MODES`, the message gives the size and the
/// limit); checked before anything is allocated, in O(log² N) time. Memory: the fine grid,
/// 16·Πnf_d bytes, is allocated here, and as much again must be free for FFTW's planner (a
/// probe allocation; FFTW aborts when its own allocation fails) → `FARFIELD_ERR_ALLOC` with the
/// byte count otherwise.
///
/// Returns 0 or `FARFIELD_ERR_{NULL_POINTER, TYPE, NOT_SUPPORTED, DIM, MODES, TOL, INVALID_ARG,
/// ALLOC, FFT, NO_DEVICE}`. Method: Barnett–Magland–af Klinteberg 2019, §2.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_makeplan(r#type: c_int, dim: c_int, n_modes: *const i64, iflag: c_int,
                                                 ntrans: c_int, tol: f64, plan: *mut farfield_nufft_plan,
                                                 opts: *const NufftOpts) -> c_int {
    guard(|| {
        non_null(plan, "plan")?;
        *plan = std::ptr::null_mut();
        let p = makeplan::<f64>(r#type, dim, n_modes, iflag, ntrans, tol, opts)?;
        *plan = Box::into_raw(Box::new(farfield_nufft_plan_s { inner: Mutex::new(p) }));
        Ok(())
    })
}

/// Sets the `M ≥ 0` non-uniform points of a double-precision plan: `x` (and `y` for dim ≥ 2,
/// `z` for dim 3), each of length M, in radians (any finite value; 2π-periodic). Unused
/// coordinate arrays may be NULL. Types 1 and 2 ignore `N, s, t, u` (pass 0/NULL). The
/// coordinates are copied, unless the plan was made with `opts.points_by_reference = 1`: then
/// the arrays must stay valid and unchanged until the next setpts or destroy.
///
/// Type 3: `x, y, z` are M points and `s, t, u` (each of length `N ≥ 0`) the target
/// frequencies, any finite reals (not periodic); both are copied (rescaled) whatever
/// `points_by_reference` says. Per axis the half-widths X of the points and S of the
/// frequencies set the fine grid, about `2σXS/π + w + 1` points per axis (σ = 2 unless
/// `opts.upsampfac` says otherwise), allocated here together with the inner type 2's grid (σ
/// times larger per axis); a grid beyond 2³¹ − 1 per axis (after the inner upsampling) or 2⁴⁰
/// in all → `FARFIELD_ERR_MODES`, an `X·S` that overflows → `FARFIELD_ERR_RANGE`. Accuracy:
/// relative l2 error ≈ tol, floored by the conditioning of the sums themselves, ≈
/// `eps·Σ_d X_d S_d` (eps = 1.1e-16, 6e-8 in single precision). N has the limits of M.
///
/// Limits: M ≤ 2³² − 1 = 4294967295 and ntrans·M ≤ 2⁴⁰ (`FARFIELD_ERR_NPOINTS`). Coordinates:
/// any finite value is accepted; each is reduced mod 2π in double precision (exact to ~4e-16
/// rad for |x| ≤ 1e16, beyond that the accuracy degrades), so the accuracy contract (relative
/// l2 error ≈ tol against the exact sums at the given coordinate values) holds for
/// |x| ≤ 1e16. A coordinate that is itself a rounded value carries its own phase error: a
/// relative rounding error eps (1.1e-16) of x moves `k·x` by up to `(N/2)·|x|·eps`, so the
/// result is within tol of the sums at the *intended* coordinates only while
/// `|x| ≲ tol/(N·eps)` (e.g. |x| ≤ 1e3 for N = 1e3 at tol 1e-10).
///
/// Returns 0 or `FARFIELD_ERR_{NULL_POINTER, NPOINTS, NONFINITE, ALLOC}` (type 3 also `MODES`,
/// `RANGE`, `FFT`); after NULL_POINTER, NPOINTS, NONFINITE, MODES or RANGE the previous points
/// remain set, after ALLOC or FFT the plan has no points.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_setpts(plan: farfield_nufft_plan, m: i64, x: *const f64, y: *const f64,
                                               z: *const f64, n: i64, s: *const f64, t: *const f64,
                                               u: *const f64) -> c_int {
    guard(|| setpts(&plan_ref(plan, "plan")?.inner, m, x, y, z, n, s, t, u))
}

/// Executes a double-precision plan. Type 1: reads `c` (`ntrans·M`), writes `f`
/// (`ntrans·N1·N2·N3`); type 2: reads `f`, writes `c`; type 3: reads `c` (`ntrans·M`), writes
/// `f` (`ntrans·N`, the N frequencies of setpts). Sizes are those of makeplan and setpts
/// (limits there). Memory: per spreading subproblem (at most `opts.spread_max_subprob_size`
/// points, default 10 000) a private box up to the fine grid's size; failure →
/// `FARFIELD_ERR_ALLOC` (the output is then partly written). The output is checked: a value
/// that is not finite (NaN/Inf in the input, or inputs so large that the sums overflow) gives
/// `FARFIELD_ERR_RANGE` naming the first such output index, never status 0. Returns 0 or
/// `FARFIELD_ERR_{NULL_POINTER, NO_POINTS, ALLOC, RANGE}`.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_execute(plan: farfield_nufft_plan, c: *mut Complex64, f: *mut Complex64) -> c_int {
    guard(|| execute(&plan_ref(plan, "plan")?.inner, c, f))
}

/// Like `farfield_nufft_execute` but `c` and `f` are **device** pointers (CUDA memory of
/// device 0, as cuFINUFFT takes them) of the same sizes; the plan must have been made with
/// `opts.backend = FARFIELD_BACKEND_CUDA`. Returns 0 or `FARFIELD_ERR_{NULL_POINTER,
/// INVALID_ARG (a CPU or type 3 plan), NO_POINTS}`.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_execute_device(plan: farfield_nufft_plan, c: *mut Complex64, f: *mut Complex64) -> c_int {
    guard(|| execute_device(&plan_ref(plan, "plan")?.inner, c as u64, f as u64))
}

/// Writes what the plan chose (fine grid, kernel width and parameter, σ, tolerance used,
/// warnings) into `*info` (type 3: `nf` is the fine grid of the last setpts, zeros before).
/// `tol_used` is the tolerance the kernel was chosen for: the requested
/// one, or the clamp (1e-15, 1e-7 in single precision, or what the widest kernel reaches at
/// σ, see makeplan) with `FARFIELD_WARN_TOL_CLAMPED` set in `warnings`. Returns 0 or
/// `FARFIELD_ERR_NULL_POINTER`.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_get_info(plan: farfield_nufft_plan, info: *mut NufftInfo) -> c_int {
    guard(|| {
        non_null(info, "info")?;
        *info = plan_ref(plan, "plan")?.inner.lock().unwrap_or_else(|e| e.into_inner()).info();
        Ok(())
    })
}

/// Destroys a double-precision plan and frees its memory. NULL is fine. Returns 0.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_destroy(plan: farfield_nufft_plan) -> c_int {
    destroy_boxed(plan)
}

/// Single-precision [`farfield_nufft_makeplan`] (tolerances below 1e-7, or below what the
/// kernel reaches at σ, are clamped with a warning). Same options struct, same limits
/// (memory: 8·Πnf_d bytes for the fine grid, and as much headroom for FFTW).
#[no_mangle]
pub unsafe extern "C" fn farfield_nufftf_makeplan(r#type: c_int, dim: c_int, n_modes: *const i64, iflag: c_int,
                                                  ntrans: c_int, tol: f32, plan: *mut farfield_nufftf_plan,
                                                  opts: *const NufftOpts) -> c_int {
    guard(|| {
        non_null(plan, "plan")?;
        *plan = std::ptr::null_mut();
        let p = makeplan::<f32>(r#type, dim, n_modes, iflag, ntrans, tol as f64, opts)?;
        *plan = Box::into_raw(Box::new(farfield_nufftf_plan_s { inner: Mutex::new(p) }));
        Ok(())
    })
}

/// Single-precision [`farfield_nufft_setpts`]. Same limits; the reduction mod 2π is done in
/// double precision on the exact (widened) float coordinates, and only the resulting grid
/// coordinate is rounded to single precision, so large |x| cost no more accuracy than in
/// double precision beyond the float representation of x itself (relative 6e-8: the result is
/// within tol of the sums at intended coordinates while `|x| ≲ tol/(N·6e-8)`).
#[no_mangle]
pub unsafe extern "C" fn farfield_nufftf_setpts(plan: farfield_nufftf_plan, m: i64, x: *const f32, y: *const f32,
                                                z: *const f32, n: i64, s: *const f32, t: *const f32,
                                                u: *const f32) -> c_int {
    guard(|| setpts(&plan_ref(plan, "plan")?.inner, m, x, y, z, n, s, t, u))
}

/// Single-precision [`farfield_nufft_execute`] (same memory rule and errors).
#[no_mangle]
pub unsafe extern "C" fn farfield_nufftf_execute(plan: farfield_nufftf_plan, c: *mut Complex32, f: *mut Complex32) -> c_int {
    guard(|| execute(&plan_ref(plan, "plan")?.inner, c, f))
}

/// Single-precision [`farfield_nufft_execute_device`].
#[no_mangle]
pub unsafe extern "C" fn farfield_nufftf_execute_device(plan: farfield_nufftf_plan, c: *mut Complex32, f: *mut Complex32) -> c_int {
    guard(|| execute_device(&plan_ref(plan, "plan")?.inner, c as u64, f as u64))
}

/// Single-precision [`farfield_nufft_get_info`].
#[no_mangle]
pub unsafe extern "C" fn farfield_nufftf_get_info(plan: farfield_nufftf_plan, info: *mut NufftInfo) -> c_int {
    guard(|| {
        non_null(info, "info")?;
        *info = plan_ref(plan, "plan")?.inner.lock().unwrap_or_else(|e| e.into_inner()).info();
        Ok(())
    })
}

/// Single-precision [`farfield_nufft_destroy`].
#[no_mangle]
pub unsafe extern "C" fn farfield_nufftf_destroy(plan: farfield_nufftf_plan) -> c_int {
    destroy_boxed(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::*;

    #[test]
    fn c_api_roundtrip_and_errors() {
        unsafe {
            let mut plan: farfield_nufft_plan = std::ptr::null_mut();
            let n = [8i64, 6];
            assert_eq!(farfield_nufft_makeplan(2, 2, n.as_ptr(), 1, 1, 1e-9, &mut plan, std::ptr::null()), 0);
            let x = [0.1, -2.0, 3.0];
            let y = [1.0, 0.5, -0.3];
            assert_eq!(farfield_nufft_setpts(plan, 3, x.as_ptr(), y.as_ptr(), std::ptr::null(), 0,
                                             std::ptr::null(), std::ptr::null(), std::ptr::null()), 0);
            let mut f = vec![Complex64::new(0.0, 0.0); 48];
            f[4 + 8 * 3] = Complex64::new(1.0, 0.0); // mode (0, 0)
            f[5 + 8 * 3] = Complex64::new(0.0, 1.0); // mode (1, 0)
            let mut c = vec![Complex64::new(0.0, 0.0); 3];
            assert_eq!(farfield_nufft_execute(plan, c.as_mut_ptr(), f.as_mut_ptr()), 0);
            for j in 0..3 {
                let ex = Complex64::new(1.0, 0.0) + Complex64::new(0.0, 1.0) * Complex64::from_polar(1.0, x[j]);
                assert!((c[j] - ex).norm() < 1e-8);
            }
            let xn = [0.1, f64::INFINITY, 3.0];
            assert_eq!(farfield_nufft_setpts(plan, 3, xn.as_ptr(), y.as_ptr(), std::ptr::null(), 0,
                                             std::ptr::null(), std::ptr::null(), std::ptr::null()), FARFIELD_ERR_NONFINITE);
            let msg = std::ffi::CStr::from_ptr(super::super::last_error_ptr()).to_str().unwrap();
            assert!(msg.contains("point 1"), "{msg}");
            assert_eq!(farfield_nufft_setpts(plan, -1, x.as_ptr(), y.as_ptr(), std::ptr::null(), 0,
                                             std::ptr::null(), std::ptr::null(), std::ptr::null()), FARFIELD_ERR_NPOINTS);
            assert_eq!(farfield_nufft_setpts(plan, 3, x.as_ptr(), std::ptr::null(), std::ptr::null(), 0,
                                             std::ptr::null(), std::ptr::null(), std::ptr::null()), FARFIELD_ERR_NULL_POINTER);
            // plan still usable after failures, old points kept
            assert_eq!(farfield_nufft_execute(plan, c.as_mut_ptr(), f.as_mut_ptr()), 0);
            assert_eq!(farfield_nufft_execute(std::ptr::null_mut(), c.as_mut_ptr(), f.as_mut_ptr()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_nufft_destroy(plan), 0);
            assert_eq!(farfield_nufft_destroy(std::ptr::null_mut()), 0);
            let mut p2: farfield_nufft_plan = std::ptr::null_mut();
            assert_eq!(farfield_nufft_makeplan(1, 0, n.as_ptr(), 1, 1, 1e-6, &mut p2, std::ptr::null()), FARFIELD_ERR_DIM);
            assert!(p2.is_null());
            assert_eq!(farfield_nufft_makeplan(1, 2, std::ptr::null(), 1, 1, 1e-6, &mut p2, std::ptr::null()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_nufft_makeplan(1, 2, n.as_ptr(), 1, 1, 1e-6, std::ptr::null_mut(), std::ptr::null()), FARFIELD_ERR_NULL_POINTER);
        }
    }

    #[test]
    fn c_api_type3() {
        unsafe {
            let mut plan: farfield_nufft_plan = std::ptr::null_mut();
            assert_eq!(farfield_nufft_makeplan(3, 1, std::ptr::null(), -1, 1, 1e-10, &mut plan, std::ptr::null()), 0);
            let x = [0.5, -3.0, 12.0];
            let s = [-7.25, 0.0, 30.5, 2.0];
            let c = [Complex64::new(1.0, 0.5), Complex64::new(-0.25, 2.0), Complex64::new(0.0, -1.0)];
            let nul = std::ptr::null();
            assert_eq!(farfield_nufft_setpts(plan, 3, x.as_ptr(), nul, nul, 4, s.as_ptr(), nul, nul), 0);
            let mut cc = c;
            let mut f = vec![Complex64::new(0.0, 0.0); 4];
            assert_eq!(farfield_nufft_execute(plan, cc.as_mut_ptr(), f.as_mut_ptr()), 0);
            for k in 0..4 {
                let ex: Complex64 = (0..3).map(|j| c[j] * Complex64::from_polar(1.0, -s[k] * x[j])).sum();
                assert!((f[k] - ex).norm() < 1e-8, "{k}: {} vs {ex}", f[k]);
            }
            assert_eq!(farfield_nufft_setpts(plan, 3, x.as_ptr(), nul, nul, 4, nul, nul, nul), FARFIELD_ERR_NULL_POINTER);
            assert!(super::super::last_error_message().contains("`s`"));
            assert_eq!(farfield_nufft_setpts(plan, 3, x.as_ptr(), nul, nul, -1, s.as_ptr(), nul, nul), FARFIELD_ERR_NPOINTS);
            let sn = [1.0, f64::NAN, 0.0, 0.0];
            assert_eq!(farfield_nufft_setpts(plan, 3, x.as_ptr(), nul, nul, 4, sn.as_ptr(), nul, nul), FARFIELD_ERR_NONFINITE);
            assert!(super::super::last_error_message().contains("s[1]"), "{}", super::super::last_error_message());
            let mut info = NufftInfo::default();
            assert_eq!(farfield_nufft_get_info(plan, &mut info), 0);
            assert!(info.nf[0] >= 2 * info.kernel_width as i64 && info.nf[1] == 1);
            assert_eq!(farfield_nufft_execute_device(plan, cc.as_mut_ptr(), f.as_mut_ptr()), FARFIELD_ERR_INVALID_ARG);
            assert_eq!(farfield_nufft_destroy(plan), 0);
            let mut pf: farfield_nufftf_plan = std::ptr::null_mut();
            assert_eq!(farfield_nufftf_makeplan(3, 4, std::ptr::null(), 1, 1, 1e-5, &mut pf, std::ptr::null()), FARFIELD_ERR_DIM);
            assert_eq!(farfield_nufftf_makeplan(3, 2, std::ptr::null(), 1, 0, 1e-5, &mut pf, std::ptr::null()), FARFIELD_ERR_INVALID_ARG);
            assert!(pf.is_null());
        }
    }
}
