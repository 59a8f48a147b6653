//! The 36 simple interfaces `finufft[f]{1,2,3}d{1,2,3}[many]` against direct sums (relative l2
//! error ≤ 10·tol), with NULL options (FINUFFT's defaults) and with options.

mod common;
use common::*;
use finufft::simple::*;
use num_complex::Complex;
use std::f64::consts::PI;
use std::ptr::null_mut;

/// Runs the six functions of one dimension and precision: `$d` the dimension, then the
/// one-vector and many functions of types 1, 2, 3.
macro_rules! simple_dim {
    ($t:ty, $d:tt, $f1:ident, $f1m:ident, $f2:ident, $f2m:ident, $f3:ident, $f3m:ident) => {{
        type T = $t;
        let dim: usize = $d;
        let mut rng = Rng::new(dim as u64 + 17);
        let (m, nk, ntr) = (90usize, 30usize, 2usize);
        let n: [usize; 3] = [[20, 1, 1], [10, 8, 1], [6, 5, 7]][dim - 1];
        let nt = n[0] * n[1] * n[2];
        let mut x: Vec<Vec<T>> = (0..3).map(|_| rng.vec::<T>(m, -PI, PI)).collect();
        let mut s: Vec<Vec<T>> = (0..3).map(|_| rng.vec::<T>(nk, -12.0, 12.0)).collect();
        let xs = points::<T>(&[&x[0], if dim > 1 { &x[1] } else { &[] }, if dim > 2 { &x[2] } else { &[] }], m);
        let ss = points::<T>(&[&s[0], if dim > 1 { &s[1] } else { &[] }, if dim > 2 { &s[2] } else { &[] }], nk);
        let ks = wavevectors(n, 0);
        let mut o = quiet_opts::<T>();
        let tol = <T as Prec>::TOL as T;
        let (xp, yp, zp) = (x[0].as_mut_ptr(), x[1].as_mut_ptr(), x[2].as_mut_ptr());
        let (sp, tp, up) = (s[0].as_mut_ptr(), s[1].as_mut_ptr(), s[2].as_mut_ptr());
        let ok = |got: &[Complex<T>], want: &[C64], what: &str| {
            let e = rel_l2(got, want);
            assert!(e <= 10.0 * <T as Prec>::TOL, "{} {}d {what}: rel l2 error {e:e}", stringify!($t), dim);
        };
        for (ntr, opts) in [(1usize, null_mut()), (ntr, &mut o as *mut _)] {
            // type 1 (iflag +1)
            let mut c = rng.cvec::<T>(ntr * m);
            let mut f = vec![Complex::<T>::default(); ntr * nt];
            let ier = unsafe { simple_dim!(@call1 $d, ntr, $f1, $f1m, m, (xp, yp, zp), c.as_mut_ptr(), 1, tol, n, f.as_mut_ptr(), opts) };
            assert_eq!(ier, 0);
            for t in 0..ntr {
                ok(&f[t * nt..(t + 1) * nt], &direct(&ks, &xs, &c[t * m..(t + 1) * m], 1.0), "type 1");
            }
            // type 2 (iflag −1)
            let mut f = rng.cvec::<T>(ntr * nt);
            let mut c = vec![Complex::<T>::default(); ntr * m];
            let ier = unsafe { simple_dim!(@call1 $d, ntr, $f2, $f2m, m, (xp, yp, zp), c.as_mut_ptr(), -1, tol, n, f.as_mut_ptr(), opts) };
            assert_eq!(ier, 0);
            for t in 0..ntr {
                ok(&c[t * m..(t + 1) * m], &direct(&xs, &ks, &f[t * nt..(t + 1) * nt], -1.0), "type 2");
            }
            // type 3 (iflag +1)
            let mut c = rng.cvec::<T>(ntr * m);
            let mut f = vec![Complex::<T>::default(); ntr * nk];
            let ier = unsafe { simple_dim!(@call3 $d, ntr, $f3, $f3m, m, (xp, yp, zp), c.as_mut_ptr(), 1, tol, nk, (sp, tp, up), f.as_mut_ptr(), opts) };
            assert_eq!(ier, 0);
            for t in 0..ntr {
                ok(&f[t * nk..(t + 1) * nk], &direct(&ss, &xs, &c[t * m..(t + 1) * m], 1.0), "type 3");
            }
        }
    }};
    (@call1 1, $ntr:expr, $f:ident, $fm:ident, $m:expr, ($x:expr, $y:expr, $z:expr), $c:expr, $i:expr, $tol:expr, $n:expr, $fk:expr, $o:expr) => {
        if $ntr == 1 { $f($m as i64, $x, $c, $i, $tol, $n[0] as i64, $fk, $o) } else { $fm($ntr as i32, $m as i64, $x, $c, $i, $tol, $n[0] as i64, $fk, $o) }
    };
    (@call1 2, $ntr:expr, $f:ident, $fm:ident, $m:expr, ($x:expr, $y:expr, $z:expr), $c:expr, $i:expr, $tol:expr, $n:expr, $fk:expr, $o:expr) => {
        if $ntr == 1 { $f($m as i64, $x, $y, $c, $i, $tol, $n[0] as i64, $n[1] as i64, $fk, $o) }
        else { $fm($ntr as i32, $m as i64, $x, $y, $c, $i, $tol, $n[0] as i64, $n[1] as i64, $fk, $o) }
    };
    (@call1 3, $ntr:expr, $f:ident, $fm:ident, $m:expr, ($x:expr, $y:expr, $z:expr), $c:expr, $i:expr, $tol:expr, $n:expr, $fk:expr, $o:expr) => {
        if $ntr == 1 { $f($m as i64, $x, $y, $z, $c, $i, $tol, $n[0] as i64, $n[1] as i64, $n[2] as i64, $fk, $o) }
        else { $fm($ntr as i32, $m as i64, $x, $y, $z, $c, $i, $tol, $n[0] as i64, $n[1] as i64, $n[2] as i64, $fk, $o) }
    };
    (@call3 1, $ntr:expr, $f:ident, $fm:ident, $m:expr, ($x:expr, $y:expr, $z:expr), $c:expr, $i:expr, $tol:expr, $nk:expr, ($s:expr, $t:expr, $u:expr), $fk:expr, $o:expr) => {
        if $ntr == 1 { $f($m as i64, $x, $c, $i, $tol, $nk as i64, $s, $fk, $o) } else { $fm($ntr as i32, $m as i64, $x, $c, $i, $tol, $nk as i64, $s, $fk, $o) }
    };
    (@call3 2, $ntr:expr, $f:ident, $fm:ident, $m:expr, ($x:expr, $y:expr, $z:expr), $c:expr, $i:expr, $tol:expr, $nk:expr, ($s:expr, $t:expr, $u:expr), $fk:expr, $o:expr) => {
        if $ntr == 1 { $f($m as i64, $x, $y, $c, $i, $tol, $nk as i64, $s, $t, $fk, $o) }
        else { $fm($ntr as i32, $m as i64, $x, $y, $c, $i, $tol, $nk as i64, $s, $t, $fk, $o) }
    };
    (@call3 3, $ntr:expr, $f:ident, $fm:ident, $m:expr, ($x:expr, $y:expr, $z:expr), $c:expr, $i:expr, $tol:expr, $nk:expr, ($s:expr, $t:expr, $u:expr), $fk:expr, $o:expr) => {
        if $ntr == 1 { $f($m as i64, $x, $y, $z, $c, $i, $tol, $nk as i64, $s, $t, $u, $fk, $o) }
        else { $fm($ntr as i32, $m as i64, $x, $y, $z, $c, $i, $tol, $nk as i64, $s, $t, $u, $fk, $o) }
    };
}

#[test]
#[allow(unused_variables)] // the pointers of unused axes in 1D and 2D
fn simple_f64() {
    simple_dim!(f64, 1, finufft1d1, finufft1d1many, finufft1d2, finufft1d2many, finufft1d3, finufft1d3many);
    simple_dim!(f64, 2, finufft2d1, finufft2d1many, finufft2d2, finufft2d2many, finufft2d3, finufft2d3many);
    simple_dim!(f64, 3, finufft3d1, finufft3d1many, finufft3d2, finufft3d2many, finufft3d3, finufft3d3many);
}

#[test]
#[allow(unused_variables)]
fn simple_f32() {
    simple_dim!(f32, 1, finufftf1d1, finufftf1d1many, finufftf1d2, finufftf1d2many, finufftf1d3, finufftf1d3many);
    simple_dim!(f32, 2, finufftf2d1, finufftf2d1many, finufftf2d2, finufftf2d2many, finufftf2d3, finufftf2d3many);
    simple_dim!(f32, 3, finufftf3d1, finufftf3d1many, finufftf3d2, finufftf3d2many, finufftf3d3, finufftf3d3many);
}

/// A tolerance below the precision's reach: status 1 (FINUFFT_WARN_EPS_TOO_SMALL) and a result
/// at the smallest tolerance reachable.
#[test]
fn tiny_tolerance_warns_and_computes() {
    let mut rng = Rng::new(3);
    let (m, n) = (50usize, 16usize);
    let mut x = rng.vec::<f64>(m, -PI, PI);
    let mut c = rng.cvec::<f64>(m);
    let mut f = vec![C64::default(); n];
    let mut o = quiet_opts::<f64>();
    for tol in [1e-20, 0.0, -1.0] {
        let ier = unsafe { finufft1d1(m as i64, x.as_mut_ptr(), c.as_mut_ptr(), 1, tol, n as i64, f.as_mut_ptr(), &mut o) };
        assert_eq!(ier, 1, "tol {tol}");
        let want = direct(&wavevectors([n, 1, 1], 0), &points::<f64>(&[&x, &[], &[]], m), &c, 1.0);
        assert!(rel_l2(&f, &want) < 1e-12);
    }
    let mut xf = rng.vec::<f32>(m, -PI, PI);
    let mut cf = rng.cvec::<f32>(m);
    let mut ff = vec![Complex::<f32>::default(); n];
    let ier = unsafe { finufftf1d1(m as i64, xf.as_mut_ptr(), cf.as_mut_ptr(), 1, 1e-10, n as i64, ff.as_mut_ptr(), &mut o) };
    assert_eq!(ier, 1);
    // a tolerance the kernel cannot reach at upsampfac 1.25 in double precision
    o.upsampfac = 1.25;
    let ier = unsafe { finufft1d1(m as i64, x.as_mut_ptr(), c.as_mut_ptr(), 1, 1e-15, n as i64, f.as_mut_ptr(), &mut o) };
    assert_eq!(ier, 1);
    o.upsampfac = 0.0;
    let ier = unsafe { finufft1d1(m as i64, x.as_mut_ptr(), c.as_mut_ptr(), 1, 1e-6, n as i64, f.as_mut_ptr(), &mut o) };
    assert_eq!(ier, 0);
}
