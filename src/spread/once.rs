//! The spreader's entry points for `f32` and `f64`, non-generic and never inlined, so that
//! their bodies are compiled once, in this crate, and other crates link to them
//! (`crate::real`, "Compiled once per precision"). [`super::Spreader`]'s public generic methods
//! call them.

use super::Spreader;
use crate::error::Result;
use crate::threads::Threads;
use num_complex::Complex;

macro_rules! once {
    ($t:ty, $set:ident, $spread:ident, $interp:ident, $spread_real:ident, $interp_real:ident, $interp_grad_real:ident) => {
        #[inline(never)]
        pub(super) fn $set(s: &mut Spreader<$t>, coords: [&[$t]; 3], threads: &Threads, copy: bool) -> Result<()> {
            s.set_points(coords, threads, copy)
        }
        #[inline(never)]
        pub(super) fn $spread(s: &Spreader<$t>, c: &[Complex<$t>], grid: &mut [Complex<$t>], threads: &Threads) -> Result<()> {
            s.spread_impl(c, grid, threads)
        }
        #[inline(never)]
        pub(super) fn $interp(s: &Spreader<$t>, grid: &[Complex<$t>], c: &mut [Complex<$t>], threads: &Threads) -> Result<()> {
            s.interp_impl(grid, c, threads)
        }
        #[inline(never)]
        pub(super) fn $spread_real(s: &Spreader<$t>, c: &[$t], grid: &mut [$t], threads: &Threads) -> Result<()> {
            s.spread_real_impl(c, grid, threads)
        }
        #[inline(never)]
        pub(super) fn $interp_real(s: &Spreader<$t>, grid: &[$t], out: &mut [$t], threads: &Threads) -> Result<()> {
            s.interp_real_impl(grid, out, threads)
        }
        #[inline(never)]
        pub(super) fn $interp_grad_real(s: &Spreader<$t>, grid: &[$t], out: &mut [[$t; 4]], threads: &Threads) -> Result<()> {
            s.interp_grad_real_impl(grid, out, threads)
        }
    };
}
once!(f64, set_points_f64, spread_f64, interp_f64, spread_real_f64, interp_real_f64, interp_grad_real_f64);
once!(f32, set_points_f32, spread_f32, interp_f32, spread_real_f32, interp_real_f32, interp_grad_real_f32);
