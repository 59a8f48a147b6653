//! FINUFFT's guru interface, exported with FINUFFT's names: `finufft_default_opts`,
//! `finufft_makeplan`, `finufft_setpts`, `finufft_execute`, `finufft_execute_adjoint`,
//! `finufft_destroy` (double precision) and the `finufftf_*` twins (single precision: `float`
//! coordinates and tolerance, `float complex` data). Semantics: [`crate::plan::CompatPlan`];
//! status codes: [`crate::ier`]. Every function runs behind a panic boundary
//! ([`crate::ier::guard`]) and checks its pointers before use.

use crate::ier::*;
use crate::opts::{self, finufft_opts};
use crate::plan::CompatPlan;
use farfield::Real;
use num_complex::Complex;
use std::ffi::c_int;
use std::sync::Mutex;

/// The object behind a plan handle (opaque to C: `struct finufft_plan_s`).
pub struct PlanBox<T: Real> {
    inner: Mutex<CompatPlan<T>>,
    showwarn: bool,
}

/// Double-precision plan handle (`finufft_plan`).
#[allow(non_camel_case_types)]
pub type finufft_plan = *mut PlanBox<f64>;
/// Single-precision plan handle (`finufftf_plan`).
#[allow(non_camel_case_types)]
pub type finufftf_plan = *mut PlanBox<f32>;

/// Shared body of both default_opts (FINUFFT returns nothing; NULL is ignored).
unsafe fn default_opts(o: *mut finufft_opts) {
    if !o.is_null() {
        *o = opts::default_opts();
    }
}

/// Shared body of both makeplans: `*plan` is set to NULL first and to the plan on success
/// (status 0 or 1).
unsafe fn makeplan<T: Real>(ty: c_int, dim: c_int, n_modes: *const i64, iflag: c_int, ntrans: c_int, eps: f64,
                            plan: *mut *mut PlanBox<T>, o: *const finufft_opts) -> c_int {
    let o = opts::read(o);
    guard("makeplan", o.showwarn != 0, || {
        if plan.is_null() {
            return Err(Failure::new(FINUFFT_ERR_INVALID_ARGUMENT, "the plan pointer is NULL"));
        }
        *plan = std::ptr::null_mut();
        let (p, ier) = CompatPlan::<T>::new(ty, dim, n_modes, iflag, ntrans, eps, &o)?;
        *plan = Box::into_raw(Box::new(PlanBox { inner: Mutex::new(p), showwarn: o.showwarn != 0 }));
        Ok(ier)
    })
}

/// Runs `f` on the plan behind a handle ([`FINUFFT_ERR_PLAN_NOTVALID`] for NULL).
unsafe fn with_plan<T: Real>(plan: *mut PlanBox<T>, what: &str,
                             f: impl FnOnce(&mut CompatPlan<T>) -> Result<c_int, Failure>) -> c_int {
    if plan.is_null() {
        return guard(what, true, || Err(Failure::new(FINUFFT_ERR_PLAN_NOTVALID, "the plan is NULL")));
    }
    let b = &*plan;
    guard(what, b.showwarn, || f(&mut b.inner.lock().unwrap_or_else(|e| e.into_inner())))
}

/// Shared body of both destroys: 0, or 1 for a NULL plan (FINUFFT 2.5's value).
unsafe fn destroy<T: Real>(plan: *mut PlanBox<T>) -> c_int {
    if plan.is_null() {
        return 1;
    }
    guard("destroy", false, || {
        drop(Box::from_raw(plan));
        Ok(0)
    })
}

macro_rules! guru_api {
    ($t:ty, $plan:ty, $default_opts:ident, $makeplan:ident, $setpts:ident, $execute:ident, $execute_adjoint:ident,
     $destroy:ident) => {
        /// Writes FINUFFT 2.5's default options into `*o` (NULL: nothing).
        ///
        /// # Safety
        /// `o` must be NULL or point to a writable `finufft_opts`.
        #[no_mangle]
        pub unsafe extern "C" fn $default_opts(o: *mut finufft_opts) {
            default_opts(o)
        }

        /// Makes a plan: `type` 1–3, `dim` 1–3, `n_modes` (dim counts N1, N2, N3, x first; not
        /// read for type 3), `iflag` (sign +i if ≥ 0), `ntrans` ≥ 1 vectors per execute, `eps`
        /// relative l2 tolerance, `*plan` the new handle, `opts` NULL for defaults. Returns 0,
        /// 1 (tolerance raised, plan made) or an error code (`*plan` = NULL).
        ///
        /// # Safety
        /// `n_modes` must point to `dim` values (types 1, 2); `plan` to a writable handle.
        #[no_mangle]
        pub unsafe extern "C" fn $makeplan(ty: c_int, dim: c_int, n_modes: *const i64, iflag: c_int, ntrans: c_int, eps: $t,
                                           plan: *mut $plan, o: *mut finufft_opts) -> c_int {
            makeplan::<$t>(ty, dim, n_modes, iflag, ntrans, eps as f64, plan, o)
        }

        /// Sets the `nj` points `x, y, z` (radians, any finite value; 2π-periodic for types 1,
        /// 2) and, for type 3, the `nk` frequencies `s, t, u`; arrays of unused axes may be
        /// NULL. The arrays must stay valid and unchanged until the last execute (FINUFFT's
        /// contract). Returns 0, 1 (type 3: tolerance raised) or an error code.
        ///
        /// # Safety
        /// Used arrays must hold `nj` (`nk`) values.
        #[no_mangle]
        pub unsafe extern "C" fn $setpts(plan: $plan, nj: i64, x: *mut $t, y: *mut $t, z: *mut $t, nk: i64, s: *mut $t,
                                         t: *mut $t, u: *mut $t) -> c_int {
            with_plan(plan, "setpts", |p| p.setpts(nj, x, y, z, nk, s, t, u))
        }

        /// Executes: types 1 and 3 read `c` (ntrans·nj strengths) and write `f` (ntrans·N
        /// modes, x fastest, or ntrans·nk values); type 2 reads `f` and writes `c`.
        ///
        /// # Safety
        /// `c`, `f` must hold the sizes above and not overlap.
        #[no_mangle]
        pub unsafe extern "C" fn $execute(plan: $plan, c: *mut Complex<$t>, f: *mut Complex<$t>) -> c_int {
            with_plan(plan, "execute", |p| p.execute(c, f, false))
        }

        /// Applies the adjoint of the planned transform: types 1 and 3 read `f` and write `c`,
        /// type 2 reads `c` and writes `f` (the adjoint of type 1 is type 2 with the opposite
        /// sign, and so on).
        ///
        /// # Safety
        /// As the execute function.
        #[no_mangle]
        pub unsafe extern "C" fn $execute_adjoint(plan: $plan, c: *mut Complex<$t>, f: *mut Complex<$t>) -> c_int {
            with_plan(plan, "execute_adjoint", |p| p.execute(c, f, true))
        }

        /// Frees a plan: 0, or 1 when `plan` is NULL (as FINUFFT 2.5).
        ///
        /// # Safety
        /// `plan` must be NULL or a live handle, not used afterwards.
        #[no_mangle]
        pub unsafe extern "C" fn $destroy(plan: $plan) -> c_int {
            destroy(plan)
        }
    };
}

guru_api!(f64, finufft_plan, finufft_default_opts, finufft_makeplan, finufft_setpts, finufft_execute,
          finufft_execute_adjoint, finufft_destroy);
guru_api!(f32, finufftf_plan, finufftf_default_opts, finufftf_makeplan, finufftf_setpts, finufftf_execute,
          finufftf_execute_adjoint, finufftf_destroy);
