//! Free-space Poisson C API (`farfield_poisson_*`): solves `∇²φ = −ρ` on a uniform 2D/3D grid
//! with free-space boundary conditions (see [`crate::poisson`] for the methods and accuracy).
//!
//! Lifecycle: `farfield_poisson_default_opts(&o)` → `farfield_poisson_makeplan(method, dim, n,
//! h, &plan, &o)` → `farfield_poisson_execute(plan, rho, phi, efield, energy)` any number of
//! times → `farfield_poisson_destroy(plan)`.
//!
//! Grid convention: values at the **nodes** `origin + (i h_x, j h_y, k h_z)`, `0 ≤ i < n_x` …,
//! stored **x fastest**, `rho[i + n_x (j + n_y k)]`, `double`. The caller's origin does not
//! matter. Units are the caller's (`φ` in units of `ρ·length²`; multiply by `1/ε₀` or a
//! Coulomb constant as needed).

use super::{destroy_boxed, guard, non_null, slice_in, slice_out};
use crate::error::{Error, Result};
use crate::fft::FFTW_ESTIMATE;
use crate::poisson::{Method, PoissonOpts, PoissonPlan};
use std::ffi::c_int;
use std::sync::Mutex;

/// Hockney–Eastwood method (second order; doubled grid). Value of `method` in
/// `farfield_poisson_makeplan`.
pub const FARFIELD_POISSON_HOCKNEY: c_int = 0;
/// Vico–Greengard method, kernel precomputed on the `4n` grid (spectral accuracy for smooth
/// sources; planning needs `≈ 16·Π 4n_d` bytes temporarily).
pub const FARFIELD_POISSON_VICO: c_int = 1;
/// Vico–Greengard method, kernel precomputed by a DCT-I on `2n + 1` points per axis (same
/// result as `FARFIELD_POISSON_VICO` to rounding, memory like Hockney–Eastwood).
pub const FARFIELD_POISSON_VICO_DCT: c_int = 2;

/// Options of a Poisson plan (plain old data; fields are only ever appended). Fill with
/// `farfield_poisson_default_opts` and then change fields.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(non_camel_case_types)]
pub struct farfield_poisson_opts {
    /// Threads for FFTW and the pointwise loops: 0 = all cores (default), 1 = the caller's
    /// thread only (no thread pool is created); must be ≥ 0.
    pub nthreads: i32,
    /// `> 0`: print plan sizes and timings to stderr (default 0).
    pub debug: i32,
    /// FFTW planner flags for the execute transforms (default `FFTW_ESTIMATE` = 64, as
    /// FINUFFT's `opts.fftw`; `FFTW_MEASURE` = 0); must be ≥ 0.
    pub fftw: i32,
    /// Non-zero (default 1): `execute` rejects NaN/Inf in `rho` with `FARFIELD_ERR_NONFINITE`.
    pub check_input: i32,
    /// Vico truncation radius factor: `L = vico_factor · √(Σ (n_d h_d)²)`, finite and > 1
    /// (default 1.1). Ignored by Hockney–Eastwood.
    pub vico_factor: f64,
}

/// Opaque Poisson plan (C: `farfield_poisson_plan`, a pointer to this). Concurrent `execute`
/// calls on one plan are serialised by its lock.
#[allow(non_camel_case_types)]
pub struct farfield_poisson_plan_s {
    inner: Mutex<PoissonPlan>,
}

/// Handle to a Poisson plan (`NULL` when none).
#[allow(non_camel_case_types)]
pub type farfield_poisson_plan = *mut farfield_poisson_plan_s;

fn default_opts() -> farfield_poisson_opts {
    farfield_poisson_opts { nthreads: 0, debug: 0, fftw: FFTW_ESTIMATE as i32, check_input: 1, vico_factor: 1.1 }
}

/// Writes the default options into `*opts` (nthreads 0, debug 0, fftw `FFTW_ESTIMATE`,
/// check_input 1, vico_factor 1.1).
///
/// Returns 0, or `FARFIELD_ERR_NULL_POINTER` if `opts` is NULL.
///
/// # Safety
/// `opts` must be NULL or point to writable memory for one `farfield_poisson_opts`.
#[no_mangle]
pub unsafe extern "C" fn farfield_poisson_default_opts(opts: *mut farfield_poisson_opts) -> c_int {
    guard(|| {
        non_null(opts, "opts")?;
        opts.write(default_opts());
        Ok(())
    })
}

fn convert_opts(o: &farfield_poisson_opts) -> Result<PoissonOpts> {
    if o.nthreads < 0 {
        return Err(Error::InvalidArg(format!("opts.nthreads = {}; must be ≥ 0", o.nthreads)));
    }
    if o.fftw < 0 {
        return Err(Error::InvalidArg(format!("opts.fftw = {}; must be ≥ 0 (FFTW planner flags)", o.fftw)));
    }
    Ok(PoissonOpts {
        nthreads: o.nthreads as usize,
        fftw_flags: o.fftw as u32,
        vico_factor: o.vico_factor,
        check_input: o.check_input != 0,
        debug: o.debug,
    })
}

/// Makes a free-space Poisson plan for grids of `n[0] × n[1] (× n[2])` nodes with spacings
/// `h[0], h[1] (, h[2])`.
///
/// * `method`: `FARFIELD_POISSON_HOCKNEY`, `FARFIELD_POISSON_VICO` or `FARFIELD_POISSON_VICO_DCT`.
/// * `dim`: 2 or 3; only the first `dim` entries of `n` and `h` are read.
/// * `n`: nodes per axis, each ≥ 1 (any size, not only powers of two).
/// * `h`: spacing per axis, finite and > 0 (the caller's length unit).
/// * `plan`: receives the plan; `*plan` is set to NULL first and stays NULL on failure.
/// * `opts`: options, or NULL for the defaults.
///
/// Returns 0 or: `FARFIELD_ERR_NULL_POINTER` (`plan`, `n` or `h` NULL), `FARFIELD_ERR_INVALID_ARG`
/// (unknown method, a spacing ≤ 0 or not finite, bad option), `FARFIELD_ERR_DIM` (dim not 2
/// or 3), `FARFIELD_ERR_MODES` (a size ≤ 0 or the grid too large), `FARFIELD_ERR_ALLOC` (the
/// doubled or precomputation grid cannot be allocated), `FARFIELD_ERR_FFT`.
///
/// # Safety
/// `n` and `h` must point to `dim` readable values; `plan` to a writable handle; `opts` NULL
/// or valid.
#[no_mangle]
pub unsafe extern "C" fn farfield_poisson_makeplan(
    method: c_int,
    dim: c_int,
    n: *const i64,
    h: *const f64,
    plan: *mut farfield_poisson_plan,
    opts: *const farfield_poisson_opts,
) -> c_int {
    guard(|| {
        non_null(plan, "plan")?;
        plan.write(std::ptr::null_mut());
        let method = match method {
            FARFIELD_POISSON_HOCKNEY => Method::Hockney,
            FARFIELD_POISSON_VICO => Method::Vico,
            FARFIELD_POISSON_VICO_DCT => Method::VicoDct,
            m => {
                return Err(Error::InvalidArg(format!(
                    "method = {m}; must be FARFIELD_POISSON_HOCKNEY (0), FARFIELD_POISSON_VICO (1) or FARFIELD_POISSON_VICO_DCT (2)"
                )))
            }
        };
        if dim != 2 && dim != 3 {
            return Err(Error::Dim(format!("dim = {dim}; the Poisson solvers support 2 or 3")));
        }
        let dim = dim as usize;
        let n = slice_in(n, dim, "n")?;
        let h = slice_in(h, dim, "h")?;
        let nu = n
            .iter()
            .enumerate()
            .map(|(d, &v)| {
                if v <= 0 {
                    Err(Error::Modes(format!("n[{d}] = {v}; every grid size must be ≥ 1")))
                } else {
                    usize::try_from(v).map_err(|_| Error::Modes(format!("n[{d}] = {v} exceeds the address space")))
                }
            })
            .collect::<Result<Vec<usize>>>()?;
        let o = if opts.is_null() { default_opts() } else { *opts };
        let p = PoissonPlan::new(method, &nu, h, &convert_opts(&o)?)?;
        plan.write(Box::into_raw(Box::new(farfield_poisson_plan_s { inner: Mutex::new(p) })));
        Ok(())
    })
}

/// Solves `∇²φ = −ρ` for one right-hand side with a plan (any number of times).
///
/// * `rho`: source at the nodes, `npts = Π n_d` values, x fastest.
/// * `phi`: output potential, `npts` values, same layout.
/// * `efield`: NULL, or output `E = −∇φ` with `dim·npts` values, **component-major**:
///   `efield[idx + npts·d]` is component `d` (0 = x, 1 = y, 2 = z) at node `idx` (Fortran
///   `e(nx, ny, nz, 3)`). Spectral differentiation on the doubled grid.
/// * `energy`: NULL, or output `U = ½ Σ ρ_i φ_i · Π h_d` (≈ ½∫ρφ).
///
/// Outputs are written only on success. Returns 0 or: `FARFIELD_ERR_NULL_POINTER` (`plan`,
/// `rho` or `phi` NULL), `FARFIELD_ERR_NONFINITE` (with `opts.check_input`: a NaN/Inf in
/// `rho`, the message names the first index), `FARFIELD_ERR_ALLOC` (field buffer on first use).
///
/// # Safety
/// `plan` from `farfield_poisson_makeplan`; arrays of the sizes above; `phi`/`efield` must
/// not overlap `rho`.
#[no_mangle]
pub unsafe extern "C" fn farfield_poisson_execute(
    plan: farfield_poisson_plan,
    rho: *const f64,
    phi: *mut f64,
    efield: *mut f64,
    energy: *mut f64,
) -> c_int {
    guard(|| {
        non_null(plan, "plan")?;
        let mut p = (*plan).inner.lock().unwrap_or_else(|e| e.into_inner());
        let npts = p.npts();
        let rho = slice_in(rho, npts, "rho")?;
        non_null(phi, "phi")?;
        let phi = slice_out(phi, npts, "phi")?;
        let e = if efield.is_null() { None } else { Some(slice_out(efield, p.dim() * npts, "efield")?) };
        let u = p.execute(rho, phi, e)?;
        if !energy.is_null() {
            energy.write(u);
        }
        Ok(())
    })
}

/// Destroys a plan and frees its memory. NULL is fine (returns 0).
///
/// # Safety
/// `plan` must be NULL or a live plan from `farfield_poisson_makeplan`, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn farfield_poisson_destroy(plan: farfield_poisson_plan) -> c_int {
    destroy_boxed(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::*;
    use std::ptr::{null, null_mut};

    fn make(method: c_int, dim: c_int, n: [i64; 3], h: [f64; 3], o: *const farfield_poisson_opts) -> (c_int, farfield_poisson_plan) {
        let mut p: farfield_poisson_plan = 0x1 as farfield_poisson_plan; // must be reset to NULL
        let s = unsafe { farfield_poisson_makeplan(method, dim, n.as_ptr(), h.as_ptr(), &mut p, o) };
        (s, p)
    }

    #[test]
    fn opts_layout_and_defaults() {
        assert_eq!(std::mem::size_of::<farfield_poisson_opts>(), 24);
        assert_eq!(std::mem::offset_of!(farfield_poisson_opts, vico_factor), 16);
        let mut o = farfield_poisson_opts { nthreads: 9, debug: 9, fftw: 9, check_input: 9, vico_factor: 9.0 };
        assert_eq!(unsafe { farfield_poisson_default_opts(&mut o) }, 0);
        assert_eq!(o, farfield_poisson_opts { nthreads: 0, debug: 0, fftw: 64, check_input: 1, vico_factor: 1.1 });
        assert_eq!(unsafe { farfield_poisson_default_opts(null_mut()) }, FARFIELD_ERR_NULL_POINTER);
    }

    #[test]
    fn makeplan_errors() {
        let h = [0.1; 3];
        let (s, p) = make(FARFIELD_POISSON_HOCKNEY, 3, [4, 0, 4], h, null());
        assert_eq!((s, p), (FARFIELD_ERR_MODES, null_mut()));
        assert_eq!(make(FARFIELD_POISSON_VICO, 3, [4, -2, 4], h, null()).0, FARFIELD_ERR_MODES);
        assert_eq!(make(FARFIELD_POISSON_VICO_DCT, 3, [4, 4, 4], [0.1, 0.0, 0.1], null()).0, FARFIELD_ERR_INVALID_ARG);
        assert_eq!(make(FARFIELD_POISSON_HOCKNEY, 3, [4, 4, 4], [0.1, -1.0, 0.1], null()).0, FARFIELD_ERR_INVALID_ARG);
        let (s, p) = make(FARFIELD_POISSON_HOCKNEY, 2, [4, 4, 0], [f64::NAN, 0.1, 0.1], null());
        assert_eq!((s, p), (FARFIELD_ERR_INVALID_ARG, null_mut()));
        let msg = unsafe { std::ffi::CStr::from_ptr(crate::capi::farfield_last_error_message()) };
        assert!(msg.to_str().unwrap().contains("h[0]"));
        assert_eq!(make(7, 3, [4; 3], h, null()).0, FARFIELD_ERR_INVALID_ARG);
        assert_eq!(make(FARFIELD_POISSON_HOCKNEY, 1, [4; 3], h, null()).0, FARFIELD_ERR_DIM);
        assert_eq!(make(FARFIELD_POISSON_HOCKNEY, 3, [1 << 20; 3], h, null()).0, FARFIELD_ERR_RANGE);
        let mut o = default_opts();
        o.nthreads = -1;
        assert_eq!(make(FARFIELD_POISSON_HOCKNEY, 3, [4; 3], h, &o).0, FARFIELD_ERR_INVALID_ARG);
        let n = [4i64; 3];
        unsafe {
            assert_eq!(farfield_poisson_makeplan(0, 3, n.as_ptr(), h.as_ptr(), null_mut(), null()), FARFIELD_ERR_NULL_POINTER);
            let mut p = null_mut();
            assert_eq!(farfield_poisson_makeplan(0, 3, null(), h.as_ptr(), &mut p, null()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_poisson_makeplan(0, 3, n.as_ptr(), null(), &mut p, null()), FARFIELD_ERR_NULL_POINTER);
            assert!(p.is_null());
            assert_eq!(farfield_poisson_destroy(null_mut()), 0);
        }
    }

    #[test]
    fn execute_roundtrip_and_errors() {
        let mut o = default_opts();
        o.nthreads = 1;
        let n = [6i64, 5, 4];
        let (s, p) = make(FARFIELD_POISSON_VICO_DCT, 3, [6, 5, 4], [0.2, 0.25, 0.3], &o);
        assert_eq!(s, 0);
        assert!(!p.is_null());
        let npts = (n[0] * n[1] * n[2]) as usize;
        let mut rho: Vec<f64> = (0..npts).map(|i| (i as f64 * 0.3).sin()).collect();
        let mut phi = vec![0.0; npts];
        let mut e = vec![0.0; 3 * npts];
        let mut u = 0.0;
        unsafe {
            assert_eq!(farfield_poisson_execute(null_mut(), rho.as_ptr(), phi.as_mut_ptr(), null_mut(), null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_poisson_execute(p, null(), phi.as_mut_ptr(), null_mut(), null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_poisson_execute(p, rho.as_ptr(), null_mut(), null_mut(), null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_poisson_execute(p, rho.as_ptr(), phi.as_mut_ptr(), e.as_mut_ptr(), &mut u), 0);
        }
        // same as the Rust plan
        let mut rp = PoissonPlan::new(Method::VicoDct, &[6, 5, 4], &[0.2, 0.25, 0.3], &convert_opts(&o).unwrap()).unwrap();
        let mut phi2 = vec![0.0; npts];
        let mut e2 = vec![0.0; 3 * npts];
        let u2 = rp.execute(&rho, &mut phi2, Some(&mut e2)).unwrap();
        assert_eq!((phi.clone(), e.clone(), u), (phi2, e2, u2));
        // NaN with check_input on: error naming the index, outputs untouched, plan still usable
        rho[17] = f64::NAN;
        let before = (phi.clone(), e.clone(), u);
        unsafe {
            let s = farfield_poisson_execute(p, rho.as_ptr(), phi.as_mut_ptr(), e.as_mut_ptr(), &mut u);
            assert_eq!(s, FARFIELD_ERR_NONFINITE);
            let msg = std::ffi::CStr::from_ptr(crate::capi::farfield_last_error_message());
            assert!(msg.to_str().unwrap().contains("rho[17]"));
        }
        assert_eq!((phi.clone(), e.clone(), u), before);
        rho[17] = 0.0;
        unsafe {
            assert_eq!(farfield_poisson_execute(p, rho.as_ptr(), phi.as_mut_ptr(), null_mut(), null_mut()), 0);
            assert_eq!(farfield_poisson_destroy(p), 0);
        }
        // 2D plan through the C API
        let (s, p) = make(FARFIELD_POISSON_HOCKNEY, 2, [5, 7, -1], [0.1, 0.2, f64::NAN], null());
        assert_eq!(s, 0);
        let rho = vec![1.0; 35];
        let mut phi = vec![0.0; 35];
        let mut e = vec![0.0; 70];
        unsafe {
            assert_eq!(farfield_poisson_execute(p, rho.as_ptr(), phi.as_mut_ptr(), e.as_mut_ptr(), null_mut()), 0);
            farfield_poisson_destroy(p);
        }
        assert!(phi.iter().all(|v| v.is_finite()) && e.iter().all(|v| v.is_finite()));
    }
}
