//! The guru interface (makeplan, setpts, execute, execute_adjoint, destroy) in both
//! precisions, types 1–3, dimensions 1–3, ntrans 1 and 3, modeord 0 and 1, both signs, against
//! direct sums of FINUFFT's documented definitions: relative l2 error ≤ 10·tol.

mod common;
use common::*;
use num_complex::Complex;
use std::f64::consts::PI;

const MODES: [[usize; 3]; 3] = [[24, 1, 1], [12, 9, 1], [8, 7, 6]];

/// One plan: execute and execute_adjoint against the direct sums, vector by vector.
fn check<T: Prec>(ty: i32, dim: usize, ntr: usize, modeord: i32, iflag: i32, upsampfac: f64) {
    let mut rng = Rng::new((ty as u64) * 100 + dim as u64 * 10 + ntr as u64 + modeord as u64 * 1000);
    let m = 150;
    let n = MODES[dim - 1];
    let (xr, nk) = if ty == 3 { (4.0, 40) } else { (3.0 * PI, n[0] * n[1] * n[2]) };
    let mut x: Vec<Vec<T>> = (0..3).map(|d| if d < dim { rng.vec::<T>(m, -xr, xr + 1.0) } else { vec![] }).collect();
    let mut s: Vec<Vec<T>> = (0..3).map(|d| if d < dim && ty == 3 { rng.vec::<T>(nk, -30.0, 25.0) } else { vec![] }).collect();
    let mut o = quiet_opts::<T>();
    o.modeord = modeord;
    o.upsampfac = upsampfac;
    o.nthreads = 1 + (ntr as i32 % 2);
    let nm: Vec<i64> = n[..dim].iter().map(|&v| v as i64).collect();
    let mut plan = std::ptr::null_mut();
    let what = format!("{} type {ty} dim {dim} ntrans {ntr} modeord {modeord} iflag {iflag} upsampfac {upsampfac}", T::NAME);
    unsafe {
        assert_eq!(T::c_makeplan(ty, dim as i32, nm.as_ptr(), iflag, ntr as i32, T::TOL, &mut plan, &mut o), 0, "{what}");
        let p = |v: &mut Vec<T>| if v.is_empty() { std::ptr::null_mut() } else { v.as_mut_ptr() };
        let (x0, x1, x2) = (p(&mut x[0]), p(&mut x[1]), p(&mut x[2]));
        let (s0, s1, s2) = (p(&mut s[0]), p(&mut s[1]), p(&mut s[2]));
        assert_eq!(T::c_setpts(plan, m as i64, x0, x1, x2, nk as i64, s0, s1, s2), 0, "{what}");
    }
    let xs = points::<T>(&[&x[0], &x[1], &x[2]], m);
    let ks: Vec<[f64; 3]> = if ty == 3 { points::<T>(&[&s[0], &s[1], &s[2]], nk) } else { wavevectors(n, modeord) };
    let sg = sign(iflag);
    // forward: types 1, 3 map c (M) → f (nk); type 2 maps f → c
    let (nin, nout) = if ty == 2 { (nk, m) } else { (m, nk) };
    for adjoint in [false, true] {
        let (nin, nout) = if adjoint { (nout, nin) } else { (nin, nout) };
        let inp = rng.cvec::<T>(ntr * nin);
        let mut out = vec![Complex::new(T::of(7.0), T::of(7.0)); ntr * nout];
        let mut inbuf = inp.clone();
        // c is the M-side array, f the nk-side one
        let writes_c = (ty == 2) != adjoint;
        let (c, f) = if writes_c { (out.as_mut_ptr(), inbuf.as_mut_ptr()) } else { (inbuf.as_mut_ptr(), out.as_mut_ptr()) };
        let ier = unsafe { if adjoint { T::c_execute_adjoint(plan, c, f) } else { T::c_execute(plan, c, f) } };
        assert_eq!(ier, 0, "{what} adjoint {adjoint}");
        assert_eq!(inbuf, inp, "{what}: the input is not modified");
        for t in 0..ntr {
            let input = &inp[t * nin..(t + 1) * nin];
            let want = match (writes_c, adjoint) {
                (false, false) => direct(&ks, &xs, input, sg),  // types 1, 3
                (true, false) => direct(&xs, &ks, input, sg),   // type 2
                (true, true) => direct(&xs, &ks, input, -sg),   // adjoint of types 1, 3
                (false, true) => direct(&ks, &xs, input, -sg),  // adjoint of type 2
            };
            let err = rel_l2(&out[t * nout..(t + 1) * nout], &want);
            assert!(err <= 10.0 * T::TOL, "{what} adjoint {adjoint} vector {t}: rel l2 error {err:e} > 10·tol");
        }
    }
    unsafe { assert_eq!(T::c_destroy(plan), 0) };
}

fn all<T: Prec>() {
    for dim in 1..=3 {
        for ty in 1..=3 {
            check::<T>(ty, dim, 1, 0, 1, 0.0);
            check::<T>(ty, dim, 3, 1, -1, 0.0);
        }
    }
}

#[test]
fn guru_f64_all_types_and_dims() {
    all::<f64>();
}

#[test]
fn guru_f32_all_types_and_dims() {
    all::<f32>();
}

#[test]
fn upsampfac_values_are_honoured() {
    for u in [1.25, 2.0, 1.6] {
        check::<f64>(1, 2, 1, 0, 1, u);
        check::<f64>(2, 3, 1, 1, -1, u);
        check::<f32>(1, 1, 2, 0, 1, u);
        check::<f64>(3, 2, 1, 0, 1, u);
    }
}

/// FINUFFT's contract: the points may be replaced by a second setpts on the same plan, and
/// the adjoint follows them.
#[test]
fn setpts_twice_and_adjoint_follow_new_points() {
    let mut rng = Rng::new(5);
    let (m, n) = (60usize, 16i64);
    let mut o = quiet_opts::<f64>();
    let mut plan = std::ptr::null_mut();
    unsafe {
        assert_eq!(f64::c_makeplan(1, 1, &n, 1, 1, 1e-10, &mut plan, &mut o), 0);
        for round in 0..2 {
            let mut x = rng.vec::<f64>(m, -PI, PI);
            assert_eq!(f64::c_setpts(plan, m as i64, x.as_mut_ptr(), std::ptr::null_mut(), std::ptr::null_mut(), 0,
                                   std::ptr::null_mut(), std::ptr::null_mut(), std::ptr::null_mut()), 0);
            let mut f = rng.cvec::<f64>(n as usize);
            let mut c = vec![C64::new(0.0, 0.0); m];
            assert_eq!(f64::c_execute_adjoint(plan, c.as_mut_ptr(), f.as_mut_ptr()), 0);
            let xs = points::<f64>(&[&x, &[], &[]], m);
            let want = direct(&xs, &wavevectors([n as usize, 1, 1], 0), &f, -1.0);
            assert!(rel_l2(&c, &want) < 1e-9, "round {round}");
        }
        assert_eq!(f64::c_destroy(plan), 0);
    }
}
