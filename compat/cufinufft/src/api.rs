//! cuFINUFFT 2.5's C interface, exported with its names: `cufinufft_default_opts`,
//! `cufinufft_makeplan`, `cufinufft_setpts`, `cufinufft_execute`, `cufinufft_destroy` (double
//! precision) and the `cufinufftf_*` twins (single precision: `float` device arrays and
//! tolerance). Semantics: [`crate::plan::CuPlan`]; status codes: [`crate::ier`]. Every function
//! runs behind a panic boundary ([`crate::ier::guard`]); a failing call prints farfield's
//! message to stderr only when the plan was made with `opts.debug > 0`.

use crate::ier::*;
use crate::opts::{self, cufinufft_opts};
use crate::plan::{CuPlan, CuReal};
use num_complex::Complex;
use std::ffi::c_int;
use std::sync::Mutex;

/// The object behind a plan handle (opaque to C: `struct cufinufft_plan_s`).
pub struct PlanBox<T: CuReal> {
    inner: Mutex<CuPlan<T>>,
    debug: bool,
}

/// Double-precision plan handle (`cufinufft_plan`).
#[allow(non_camel_case_types)]
pub type cufinufft_plan = *mut PlanBox<f64>;
/// Single-precision plan handle (`cufinufftf_plan`).
#[allow(non_camel_case_types)]
pub type cufinufftf_plan = *mut PlanBox<f32>;

/// Shared body of both makeplans: `*plan` is set to NULL first and to the plan on success
/// (status 0 or 1).
unsafe fn makeplan<T: CuReal>(ty: c_int, dim: c_int, n_modes: *const i64, iflag: c_int, ntransf: c_int, eps: f64,
                              plan: *mut *mut PlanBox<T>, o: *const cufinufft_opts) -> c_int {
    let o = opts::read(o);
    guard("cufinufft_makeplan", o.debug > 0, || {
        if plan.is_null() {
            return Err(Failure::new(FINUFFT_ERR_INVALID_ARGUMENT, "the plan pointer is NULL"));
        }
        *plan = std::ptr::null_mut();
        let (p, ier) = CuPlan::<T>::new(ty, dim, n_modes, iflag, ntransf, eps, &o)?;
        *plan = Box::into_raw(Box::new(PlanBox { inner: Mutex::new(p), debug: o.debug > 0 }));
        Ok(ier)
    })
}

/// Runs `f` on the plan behind a handle ([`FINUFFT_ERR_PLAN_NOTVALID`] for NULL).
unsafe fn with_plan<T: CuReal>(plan: *mut PlanBox<T>, what: &str,
                               f: impl FnOnce(&mut CuPlan<T>) -> Result<c_int, Failure>) -> c_int {
    if plan.is_null() {
        return guard(what, false, || Err(Failure::new(FINUFFT_ERR_PLAN_NOTVALID, "the plan is NULL")));
    }
    let b = &*plan;
    guard(what, b.debug, || f(&mut b.inner.lock().unwrap_or_else(|e| e.into_inner())))
}

/// Shared body of both destroys: 0, or [`FINUFFT_ERR_PLAN_NOTVALID`] for a NULL plan
/// (cuFINUFFT 2.5's value).
unsafe fn destroy<T: CuReal>(plan: *mut PlanBox<T>) -> c_int {
    if plan.is_null() {
        return FINUFFT_ERR_PLAN_NOTVALID;
    }
    guard("cufinufft_destroy", false, || {
        drop(Box::from_raw(plan));
        Ok(0)
    })
}

/// Writes cuFINUFFT 2.5's default options into `*opts` (NULL: nothing).
///
/// # Safety
/// `opts` must be NULL or point to a writable `cufinufft_opts`.
#[no_mangle]
pub unsafe extern "C" fn cufinufft_default_opts(opts: *mut cufinufft_opts) {
    if !opts.is_null() {
        *opts = opts::default_opts();
    }
}

macro_rules! cu_api {
    ($t:ty, $plan:ty, $makeplan:ident, $setpts:ident, $execute:ident, $destroy:ident) => {
        /// Makes a plan of type 1, 2 or 3 in dimension `dim` with the mode counts
        /// `n_modes[0..dim]` (types 1, 2), sign `iflag` (≥ 0 → +i), `ntransf`
        /// vectors per execute and tolerance `eps`, on CUDA device 0. `opts` NULL = defaults.
        /// Returns 0 (also for a tolerance raised to what the precision reaches, types 1 and 2,
        /// as cuFINUFFT 2.5.1), [`FINUFFT_WARN_EPS_TOO_SMALL`] (type 3 with a raised
        /// tolerance; planned anyway) or an error code
        /// (`*plan` is then NULL); no CUDA device → [`FINUFFT_ERR_CUDA_FAILURE`].
        ///
        /// # Safety
        /// `n_modes` must point to 3 values (at least `dim`), `plan` to a writable handle,
        /// `opts` be NULL or valid.
        #[no_mangle]
        pub unsafe extern "C" fn $makeplan(ty: c_int, dim: c_int, n_modes: *const i64, iflag: c_int, ntransf: c_int,
                                           eps: $t, plan: *mut $plan, opts: *mut cufinufft_opts) -> c_int {
            makeplan::<$t>(ty, dim, n_modes, iflag, ntransf, eps as f64, plan, opts)
        }

        /// Sets the `m` non-uniform points from the **device** arrays `x` (and `y` for dim ≥ 2,
        /// `z` for dim 3), radians; they are copied on the device. Type 3: also the `n` target
        /// frequencies `s` (and `t`, `u`), device arrays too (not read for types 1, 2).
        ///
        /// # Safety
        /// `plan` must be NULL or a live plan; each used array a device allocation of `m` (`n`)
        /// values.
        #[no_mangle]
        pub unsafe extern "C" fn $setpts(plan: $plan, m: i64, x: *mut $t, y: *mut $t, z: *mut $t, n: c_int,
                                         s: *mut $t, t: *mut $t, u: *mut $t) -> c_int {
            with_plan(plan, "cufinufft_setpts", |p| {
                p.setpts(m, x as u64, y as u64, z as u64, n as i64, s as u64, t as u64, u as u64)
            })
        }

        /// Executes on **device** arrays: type 1 reads `c` (`ntransf·M` complex values) and
        /// writes `fk` (`ntransf·N1·N2·N3`), type 2 reads `fk` and writes `c`. The work is
        /// queued on the plan's stream (`opts.gpu_stream`).
        ///
        /// # Safety
        /// `plan` must be NULL or a live plan; `c` and `fk` device allocations of those sizes.
        #[no_mangle]
        pub unsafe extern "C" fn $execute(plan: $plan, c: *mut Complex<$t>, fk: *mut Complex<$t>) -> c_int {
            with_plan(plan, "cufinufft_execute", |p| p.execute(c as u64, fk as u64))
        }

        /// Destroys a plan: 0, or [`FINUFFT_ERR_PLAN_NOTVALID`] for NULL.
        ///
        /// # Safety
        /// `plan` must be NULL or a live plan, not used afterwards.
        #[no_mangle]
        pub unsafe extern "C" fn $destroy(plan: $plan) -> c_int {
            destroy(plan)
        }
    };
}

cu_api!(f64, cufinufft_plan, cufinufft_makeplan, cufinufft_setpts, cufinufft_execute, cufinufft_destroy);
cu_api!(f32, cufinufftf_plan, cufinufftf_makeplan, cufinufftf_setpts, cufinufftf_execute, cufinufftf_destroy);
