//! FINUFFT's simple interfaces: `finufft{1,2,3}d{1,2,3}` and `finufft{1,2,3}d{1,2,3}many`
//! (and the `finufftf…` single-precision twins), each one makeplan → setpts → execute →
//! destroy of [`crate::plan::CompatPlan`]. Argument order as FINUFFT's: `[ntr,] nj, x[, y[,
//! z]], c, iflag, eps, ms[, mt[, mu]], fk, opts` for types 1 and 2, `[ntr,] nj, x[, y[, z]], c,
//! iflag, eps, nk, s[, t[, u]], f, opts` for type 3. Returns 0, 1 (tolerance raised; the result
//! is computed) or an error code ([`crate::ier`]).

use crate::ier::*;
use crate::opts::{self, finufft_opts};
use crate::plan::CompatPlan;
use farfield::Real;
use num_complex::Complex;
use std::ffi::c_int;

/// The one body of every simple interface. Types 1, 2: `n` = mode counts (`nk` unused);
/// type 3: `nk` frequencies `s`.
///
/// # Safety
/// The arrays must hold the sizes FINUFFT documents for the call.
#[allow(clippy::too_many_arguments)]
unsafe fn run<T: Real>(ty: c_int, dim: c_int, ntr: c_int, nj: i64, x: [*mut T; 3], c: *mut Complex<T>, iflag: c_int, eps: f64,
                       n: [i64; 3], nk: i64, s: [*mut T; 3], f: *mut Complex<T>, o: *mut finufft_opts) -> c_int {
    let o = opts::read(o);
    guard("finufft simple interface", o.showwarn != 0, || {
        let (mut p, w1) = CompatPlan::<T>::new(ty, dim, n.as_ptr(), iflag, ntr, eps, &o)?;
        let w2 = p.setpts(nj, x[0], x[1], x[2], nk, s[0], s[1], s[2])?;
        p.execute(c, f, false)?;
        Ok(w1.max(w2))
    })
}

macro_rules! simple_api {
    ($t:ty, $f1:ident, $f1m:ident, $f2:ident, $f2m:ident, $f3:ident, $f3m:ident, dim = 1) => {
        simple_api!(@t12 $t, $f1, $f1m, 1, 1, (xj), (ms));
        simple_api!(@t12 $t, $f2, $f2m, 2, 1, (xj), (ms));
        simple_api!(@t3 $t, $f3, $f3m, 1, (xj), (s));
    };
    ($t:ty, $f1:ident, $f1m:ident, $f2:ident, $f2m:ident, $f3:ident, $f3m:ident, dim = 2) => {
        simple_api!(@t12 $t, $f1, $f1m, 1, 2, (xj, yj), (ms, mt));
        simple_api!(@t12 $t, $f2, $f2m, 2, 2, (xj, yj), (ms, mt));
        simple_api!(@t3 $t, $f3, $f3m, 2, (xj, yj), (s, t));
    };
    ($t:ty, $f1:ident, $f1m:ident, $f2:ident, $f2m:ident, $f3:ident, $f3m:ident, dim = 3) => {
        simple_api!(@t12 $t, $f1, $f1m, 1, 3, (xj, yj, zj), (ms, mt, mu));
        simple_api!(@t12 $t, $f2, $f2m, 2, 3, (xj, yj, zj), (ms, mt, mu));
        simple_api!(@t3 $t, $f3, $f3m, 3, (xj, yj, zj), (s, t, u));
    };
    (@t12 $t:ty, $f:ident, $fm:ident, $ty:expr, $dim:expr, ($($x:ident),+), ($($n:ident),+)) => {
        /// FINUFFT simple interface, one vector (see the module docs): type 1 reads `cj`
        /// (nj strengths) and writes `fk` (modes, x fastest); type 2 reads `fk`, writes `cj`.
        ///
        /// # Safety
        /// The arrays must hold nj values (coordinates, `cj`) and N1·N2·N3 modes (`fk`).
        #[no_mangle]
        pub unsafe extern "C" fn $f(nj: i64, $($x: *mut $t,)+ cj: *mut Complex<$t>, iflag: c_int, eps: $t, $($n: i64,)+
                                    fk: *mut Complex<$t>, opts: *mut finufft_opts) -> c_int {
            $fm(1, nj, $($x,)+ cj, iflag, eps, $($n,)+ fk, opts)
        }

        /// As the one-vector function, for `ntr` vectors stacked (`cj[t·nj + j]`, `fk[t·N + k]`).
        ///
        /// # Safety
        /// The arrays must hold ntr·nj strengths and ntr·N modes.
        #[no_mangle]
        pub unsafe extern "C" fn $fm(ntr: c_int, nj: i64, $($x: *mut $t,)+ cj: *mut Complex<$t>, iflag: c_int, eps: $t,
                                     $($n: i64,)+ fk: *mut Complex<$t>, opts: *mut finufft_opts) -> c_int {
            let xs = [$($x,)+];
            let ns = [$($n,)+];
            let mut x = [std::ptr::null_mut(); 3];
            let mut n = [1i64; 3];
            x[..$dim].copy_from_slice(&xs);
            n[..$dim].copy_from_slice(&ns);
            run::<$t>($ty, $dim, ntr, nj, x, cj, iflag, eps as f64, n, 0, [std::ptr::null_mut(); 3], fk, opts)
        }
    };
    (@t3 $t:ty, $f:ident, $fm:ident, $dim:expr, ($($x:ident),+), ($($s:ident),+)) => {
        /// FINUFFT simple interface, type 3, one vector: reads `cj` (nj strengths at the points)
        /// and writes `fk` (nk values at the frequencies).
        ///
        /// # Safety
        /// The arrays must hold nj (points, `cj`) and nk (frequencies, `fk`) values.
        #[no_mangle]
        pub unsafe extern "C" fn $f(nj: i64, $($x: *mut $t,)+ cj: *mut Complex<$t>, iflag: c_int, eps: $t, nk: i64,
                                    $($s: *mut $t,)+ fk: *mut Complex<$t>, opts: *mut finufft_opts) -> c_int {
            $fm(1, nj, $($x,)+ cj, iflag, eps, nk, $($s,)+ fk, opts)
        }

        /// Type 3 for `ntr` stacked vectors (`cj[t·nj + j]`, `fk[t·nk + k]`).
        ///
        /// # Safety
        /// The arrays must hold ntr·nj strengths and ntr·nk outputs.
        #[no_mangle]
        pub unsafe extern "C" fn $fm(ntr: c_int, nj: i64, $($x: *mut $t,)+ cj: *mut Complex<$t>, iflag: c_int, eps: $t,
                                     nk: i64, $($s: *mut $t,)+ fk: *mut Complex<$t>, opts: *mut finufft_opts) -> c_int {
            let xs = [$($x,)+];
            let ss = [$($s,)+];
            let mut x = [std::ptr::null_mut(); 3];
            let mut s = [std::ptr::null_mut(); 3];
            x[..$dim].copy_from_slice(&xs);
            s[..$dim].copy_from_slice(&ss);
            run::<$t>(3, $dim, ntr, nj, x, cj, iflag, eps as f64, [1; 3], nk, s, fk, opts)
        }
    };
}

simple_api!(f64, finufft1d1, finufft1d1many, finufft1d2, finufft1d2many, finufft1d3, finufft1d3many, dim = 1);
simple_api!(f64, finufft2d1, finufft2d1many, finufft2d2, finufft2d2many, finufft2d3, finufft2d3many, dim = 2);
simple_api!(f64, finufft3d1, finufft3d1many, finufft3d2, finufft3d2many, finufft3d3, finufft3d3many, dim = 3);
simple_api!(f32, finufftf1d1, finufftf1d1many, finufftf1d2, finufftf1d2many, finufftf1d3, finufftf1d3many, dim = 1);
simple_api!(f32, finufftf2d1, finufftf2d1many, finufftf2d2, finufftf2d2many, finufftf2d3, finufftf2d3many, dim = 2);
simple_api!(f32, finufftf3d1, finufftf3d1many, finufftf3d2, finufftf3d2many, finufftf3d3, finufftf3d3many, dim = 3);
