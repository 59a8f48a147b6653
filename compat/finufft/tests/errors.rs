//! Bad input gives FINUFFT's status codes (`finufft_errors.h` of 2.5; the values FINUFFT
//! 2.5.1 returns where it checks, this library's documented choice where it does not), in both
//! precisions; empty problems (M = 0, nk = 0, a mode count 0) succeed with zero outputs.

mod common;
use common::*;
use finufft::ier::*;
use finufft::simple::*;
use std::ptr::{null, null_mut};

fn makeplan_code<T: Prec>(ty: i32, dim: i32, n: &[i64], ntr: i32, o: &mut finufft::finufft_opts) -> i32 {
    let mut plan = 0x10 as *mut _; // not NULL: makeplan must reset it
    let ier = unsafe { T::c_makeplan(ty, dim, n.as_ptr(), 1, ntr, 1e-6, &mut plan, o) };
    if ier > 1 {
        assert!(plan.is_null(), "a failed makeplan leaves *plan = NULL");
    } else {
        unsafe { T::c_destroy(plan) };
    }
    ier
}

fn makeplan_errors<T: Prec>() {
    let d = quiet_opts::<T>();
    let n = [10i64, 10, 10];
    let code = |ty, dim, n: &[i64], ntr, f: &dyn Fn(&mut finufft::finufft_opts)| {
        let mut o = d;
        f(&mut o);
        makeplan_code::<T>(ty, dim, n, ntr, &mut o)
    };
    let none = |_: &mut finufft::finufft_opts| {};
    assert_eq!(code(1, 1, &n, 1, &none), 0);
    assert_eq!(code(0, 1, &n, 1, &none), FINUFFT_ERR_TYPE_NOTVALID);
    assert_eq!(code(4, 1, &n, 1, &none), FINUFFT_ERR_TYPE_NOTVALID);
    assert_eq!(code(1, 0, &n, 1, &none), FINUFFT_ERR_DIM_NOTVALID);
    assert_eq!(code(3, 4, &n, 1, &none), FINUFFT_ERR_DIM_NOTVALID);
    assert_eq!(code(2, 2, &n, 0, &none), FINUFFT_ERR_NTRANS_NOTVALID);
    assert_eq!(code(2, 2, &n, -3, &none), FINUFFT_ERR_NTRANS_NOTVALID);
    assert_eq!(code(1, 2, &[10, -1], 1, &none), FINUFFT_ERR_NDATA_NOTVALID);
    assert_eq!(code(1, 3, &[1 << 20, 1 << 20, 1 << 20], 1, &none), FINUFFT_ERR_MAXNALLOC);
    assert_eq!(code(1, 1, &n, 1, &|o| o.upsampfac = 1.0), FINUFFT_ERR_UPSAMPFAC_TOO_SMALL);
    assert_eq!(code(1, 1, &n, 1, &|o| o.upsampfac = 0.5), FINUFFT_ERR_UPSAMPFAC_TOO_SMALL);
    assert_eq!(code(1, 1, &n, 1, &|o| o.upsampfac = 8.0), FINUFFT_ERR_HORNER_WRONG_BETA);
    assert_eq!(code(1, 1, &n, 1, &|o| o.spread_thread = 3), FINUFFT_ERR_SPREAD_THREAD_NOTVALID);
    unsafe extern "C" fn lock(_: *mut std::ffi::c_void) {}
    assert_eq!(code(1, 1, &n, 1, &|o| o.fftw_unlock_fun = Some(lock)), FINUFFT_ERR_LOCK_FUNS_INVALID);
    assert_eq!(code(1, 1, &n, 1, &|o| { o.fftw_lock_fun = Some(lock); o.fftw_unlock_fun = Some(lock) }), 0);
    assert_eq!(code(1, 1, &[20], 1, &|o| o.spreadinterponly = 1), 0);
    assert_eq!(code(1, 1, &[4], 1, &|o| o.spreadinterponly = 1), FINUFFT_ERR_SPREAD_BOX_SMALL, "grid below twice the kernel width");
    assert_eq!(code(3, 1, &n, 1, &|o| o.spreadinterponly = 1), 0, "ignored for type 3, as FINUFFT");
    // FINUFFT 2.5.1's codes for the kernel formula: 0 and 1–9 are defined
    assert_eq!(code(1, 1, &n, 1, &|o| o.spread_kerformula = 99), FINUFFT_ERR_KERFORMULA_NOTVALID);
    assert_eq!(code(1, 1, &n, 1, &|o| { o.upsampfac = 2.0; o.spread_kerformula = -1 }), FINUFFT_ERR_KERFORMULA_NOTVALID);
    assert_eq!(code(1, 1, &n, 1, &|o| o.spread_kerformula = 8), 0);
    // the lock check comes first, then type, dim, ntrans (FINUFFT's order)
    assert_eq!(code(0, 0, &n, 0, &|o| o.fftw_lock_fun = Some(lock)), FINUFFT_ERR_LOCK_FUNS_INVALID);
    assert_eq!(code(0, 0, &n, 0, &none), FINUFFT_ERR_TYPE_NOTVALID);
    assert_eq!(code(1, 0, &n, 0, &none), FINUFFT_ERR_DIM_NOTVALID);
    // options FINUFFT accepts and this library ignores or maps
    let ignored: [&dyn Fn(&mut finufft::finufft_opts); 6] = [&|o| o.spread_kerformula = 1, &|o| o.nthreads = -1, &|o| o.fftw = -1,
                                                              &|o| o.modeord = 7, &|o| o.spread_sort = 5, &|o| o.maxbatchsize = -1];
    for f in ignored {
        assert_eq!(code(1, 2, &n, 1, f), 0);
    }
    // NULL plan pointer, NULL n_modes
    let mut o = d;
    assert_eq!(unsafe { T::c_makeplan(1, 1, n.as_ptr(), 1, 1, 1e-6, null_mut(), &mut o) }, FINUFFT_ERR_INVALID_ARGUMENT);
    let mut plan = null_mut();
    assert_eq!(unsafe { T::c_makeplan(1, 1, null(), 1, 1, 1e-6, &mut plan, &mut o) }, FINUFFT_ERR_INVALID_ARGUMENT);
}

fn plan_errors<T: Prec>() {
    let mut o = quiet_opts::<T>();
    let n = 8i64;
    let mut plan = null_mut();
    let mut x = vec![T::of(0.5); 4];
    let mut c = vec![num_complex::Complex::<T>::default(); 8];
    unsafe {
        // NULL handles
        assert_eq!(T::c_setpts(null_mut(), 4, x.as_mut_ptr(), null_mut(), null_mut(), 0, null_mut(), null_mut(), null_mut()),
                   FINUFFT_ERR_PLAN_NOTVALID);
        assert_eq!(T::c_execute(null_mut(), c.as_mut_ptr(), c.as_mut_ptr()), FINUFFT_ERR_PLAN_NOTVALID);
        assert_eq!(T::c_execute_adjoint(null_mut(), c.as_mut_ptr(), c.as_mut_ptr()), FINUFFT_ERR_PLAN_NOTVALID);
        assert_eq!(T::c_destroy(null_mut()), 1, "FINUFFT 2.5.1 returns 1 for a NULL plan");
        assert_eq!(T::c_makeplan(1, 1, &n, 1, 1, 1e-5, &mut plan, &mut o), 0);
        let mut f = vec![num_complex::Complex::<T>::default(); 8];
        assert_eq!(T::c_execute(plan, c.as_mut_ptr(), f.as_mut_ptr()), FINUFFT_ERR_INVALID_ARGUMENT, "execute before setpts");
        let nul = null_mut();
        assert_eq!(T::c_setpts(plan, -1, x.as_mut_ptr(), nul, nul, 0, nul, nul, nul), FINUFFT_ERR_NUM_NU_PTS_INVALID);
        assert_eq!(T::c_setpts(plan, 4, nul, nul, nul, 0, nul, nul, nul), FINUFFT_ERR_INVALID_ARGUMENT);
        x[2] = T::nan();
        assert_eq!(T::c_setpts(plan, 4, x.as_mut_ptr(), nul, nul, 0, nul, nul, nul), FINUFFT_ERR_INVALID_ARGUMENT);
        x[2] = T::of(1e3);
        assert_eq!(T::c_setpts(plan, 4, x.as_mut_ptr(), nul, nul, 0, nul, nul, nul), 0);
        // c (4 values) and f (8 modes) overlapping
        assert_eq!(T::c_execute(plan, c.as_mut_ptr(), c.as_mut_ptr().add(2)), FINUFFT_ERR_INVALID_ARGUMENT);
        assert_eq!(T::c_execute(plan, nul.cast(), f.as_mut_ptr()), FINUFFT_ERR_INVALID_ARGUMENT);
        assert_eq!(T::c_execute(plan, c.as_mut_ptr(), f.as_mut_ptr()), 0);
        assert_eq!(T::c_destroy(plan), 0);
        // type 3: negative nk, nk or nj beyond 2^32 − 1 (checked before any array is read)
        let mut plan = null_mut();
        assert_eq!(T::c_makeplan(3, 1, null(), 1, 1, 1e-5, &mut plan, &mut o), 0);
        assert_eq!(T::c_setpts(plan, 4, x.as_mut_ptr(), nul, nul, -2, x.as_mut_ptr(), nul, nul), FINUFFT_ERR_NUM_NU_PTS_INVALID);
        assert_eq!(T::c_setpts(plan, 4, x.as_mut_ptr(), nul, nul, 1 << 40, x.as_mut_ptr(), nul, nul), FINUFFT_ERR_NUM_NU_PTS_INVALID);
        assert_eq!(T::c_setpts(plan, 1 << 40, x.as_mut_ptr(), nul, nul, 4, x.as_mut_ptr(), nul, nul), FINUFFT_ERR_NUM_NU_PTS_INVALID);
        assert_eq!(T::c_destroy(plan), 0);
    }
}

/// Empty problems: outputs are zero (FINUFFT 2.5.1 computes these as zeros too).
fn empty_problems<T: Prec>() {
    let mut o = quiet_opts::<T>();
    let nul = null_mut();
    let z = num_complex::Complex::<T>::default();
    let seven = num_complex::Complex::new(T::of(7.0), T::of(7.0));
    unsafe {
        // M = 0, type 1: f = 0
        let mut plan = null_mut();
        let n = [5i64, 4];
        assert_eq!(T::c_makeplan(1, 2, n.as_ptr(), 1, 2, 1e-5, &mut plan, &mut o), 0);
        assert_eq!(T::c_setpts(plan, 0, nul, nul, nul, 0, nul, nul, nul), 0);
        let mut f = vec![seven; 40];
        assert_eq!(T::c_execute(plan, nul.cast(), f.as_mut_ptr()), 0);
        assert!(f.iter().all(|v| *v == z));
        assert_eq!(T::c_destroy(plan), 0);
        // a mode count 0, type 2: c = 0
        let n = [0i64, 4];
        assert_eq!(T::c_makeplan(2, 2, n.as_ptr(), 1, 1, 1e-5, &mut plan, &mut o), 0);
        let mut x = vec![T::of(0.1); 3];
        assert_eq!(T::c_setpts(plan, 3, x.as_mut_ptr(), x.as_mut_ptr(), nul, 0, nul, nul, nul), 0);
        let mut c = vec![seven; 3];
        assert_eq!(T::c_execute(plan, c.as_mut_ptr(), nul.cast()), 0);
        assert!(c.iter().all(|v| *v == z));
        assert_eq!(T::c_destroy(plan), 0);
        // type 3 with nk = 0 (f is empty) and the adjoint (c = 0)
        assert_eq!(T::c_makeplan(3, 1, null(), 1, 1, 1e-5, &mut plan, &mut o), 0);
        assert_eq!(T::c_setpts(plan, 3, x.as_mut_ptr(), nul, nul, 0, nul, nul, nul), 0);
        let mut c = vec![seven; 3];
        assert_eq!(T::c_execute(plan, c.as_mut_ptr(), nul.cast()), 0);
        assert_eq!(T::c_execute_adjoint(plan, c.as_mut_ptr(), nul.cast()), 0);
        assert!(c.iter().all(|v| *v == z));
        assert_eq!(T::c_destroy(plan), 0);
    }
}

#[test]
fn errors_f64() {
    makeplan_errors::<f64>();
    plan_errors::<f64>();
    empty_problems::<f64>();
}

#[test]
fn errors_f32() {
    makeplan_errors::<f32>();
    plan_errors::<f32>();
    empty_problems::<f32>();
}

#[test]
fn simple_interface_errors() {
    let mut x = [0.1f64; 4];
    let mut c = [C64::default(); 4];
    let mut f = [C64::default(); 8];
    let mut o = quiet_opts::<f64>();
    unsafe {
        assert_eq!(finufft1d1many(0, 4, x.as_mut_ptr(), c.as_mut_ptr(), 1, 1e-6, 8, f.as_mut_ptr(), &mut o), FINUFFT_ERR_NTRANS_NOTVALID);
        assert_eq!(finufft1d1(-1, x.as_mut_ptr(), c.as_mut_ptr(), 1, 1e-6, 8, f.as_mut_ptr(), &mut o), FINUFFT_ERR_NUM_NU_PTS_INVALID);
        assert_eq!(finufft2d2(4, x.as_mut_ptr(), x.as_mut_ptr(), c.as_mut_ptr(), 1, 1e-6, -2, 4, f.as_mut_ptr(), &mut o),
                   FINUFFT_ERR_NDATA_NOTVALID);
        assert_eq!(finufft1d3(4, x.as_mut_ptr(), c.as_mut_ptr(), 1, 1e-6, -1, x.as_mut_ptr(), f.as_mut_ptr(), &mut o),
                   FINUFFT_ERR_NUM_NU_PTS_INVALID);
        // M = 1e16 with an empty mode array: FINUFFT's 20, before anything is written
        let huge = 10_000_000_000_000_000i64;
        assert_eq!(finufft1d2(huge, x.as_mut_ptr(), c.as_mut_ptr(), 1, 1e-6, 0, f.as_mut_ptr(), &mut o), FINUFFT_ERR_NUM_NU_PTS_INVALID);
        assert_eq!(finufft1d1(huge, x.as_mut_ptr(), c.as_mut_ptr(), 1, 1e-6, 0, f.as_mut_ptr(), &mut o), FINUFFT_ERR_NUM_NU_PTS_INVALID);
        assert_eq!(finufft1d1(huge, x.as_mut_ptr(), c.as_mut_ptr(), 1, 1e-6, 8, f.as_mut_ptr(), &mut o), FINUFFT_ERR_NUM_NU_PTS_INVALID);
        let mut xf = [0.1f32; 4];
        let mut cf = [num_complex::Complex::<f32>::default(); 4];
        let mut ff = [num_complex::Complex::<f32>::default(); 8];
        o.upsampfac = 0.9;
        assert_eq!(finufftf1d2(4, xf.as_mut_ptr(), cf.as_mut_ptr(), 1, 1e-4, 8, ff.as_mut_ptr(), &mut o), FINUFFT_ERR_UPSAMPFAC_TOO_SMALL);
    }
}
