//! Where the generic numerical code is compiled: the entry points of the spreader and of the
//! NUFFT plan, instantiated for `f32` and `f64` in this crate.
//!
//! Rust compiles a generic function in the crate that instantiates it, and in optimised builds
//! (opt-level 2 and 3, where generics are not shared between crates) every crate that calls
//! `Spreader::<f64>::try_spread` or `NufftPlan::<f64>::new` compiled again the whole tree
//! below it: the kernel evaluators and the row kernels of every width, in every CPU clone.
//! Each test binary, the compatibility crates and the tool paid about five minutes of one core
//! for it (docs/design.md §7.4, "Build time").
//!
//! So the public generic methods are thin: [`crate::spread::Spreader::try_spread`],
//! [`crate::spread::Spreader::try_interp`], the `setpts*` of [`crate::spread::Spreader`] and
//! [`crate::nufft::NufftPlan::new`] call a method of [`Instances`], a supertrait of
//! [`crate::real::Real`] implemented here for `f32` and `f64` by non-generic functions that
//! are never inlined across crates. Their bodies, and everything generic below them, are
//! compiled once, in this crate; other crates link to them. Everything else the NUFFT plan
//! does afterwards goes through its executor, a trait object made inside
//! [`crate::nufft::NufftPlan::new`], so it is compiled here too.

use crate::error::Result;
use crate::nufft::{NufftOpts, NufftPlan};
use crate::real::Real;
use crate::spread::Spreader;
use crate::threads::Threads;
use num_complex::Complex;

/// The precision-specific entry points of the generic numerical code (module docs); a
/// supertrait of [`Real`], implemented for `f32` and `f64` only. Callers use the public
/// methods that forward to it, never these functions directly.
pub trait Instances: Sized {
    /// [`Spreader::setpts`] and [`Spreader::setpts_by_reference`] (`copy` = false).
    #[doc(hidden)]
    fn spreader_set_points(s: &mut Spreader<Self>, coords: [&[Self]; 3], threads: &Threads, copy: bool) -> Result<()>
    where
        Self: Real;
    /// [`Spreader::try_spread`].
    #[doc(hidden)]
    fn spreader_spread(s: &Spreader<Self>, c: &[Complex<Self>], grid: &mut [Complex<Self>], threads: &Threads) -> Result<()>
    where
        Self: Real;
    /// [`Spreader::try_interp`].
    #[doc(hidden)]
    fn spreader_interp(s: &Spreader<Self>, grid: &[Complex<Self>], c: &mut [Complex<Self>], threads: &Threads) -> Result<()>
    where
        Self: Real;
    /// [`NufftPlan::new`].
    #[doc(hidden)]
    #[allow(clippy::too_many_arguments)]
    fn nufft_plan(ty: i32, dim: usize, n_modes: &[i64], iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<NufftPlan<Self>>
    where
        Self: Real;
}

macro_rules! instances {
    ($t:ty) => {
        impl Instances for $t {
            #[inline(never)]
            fn spreader_set_points(s: &mut Spreader<$t>, coords: [&[$t]; 3], threads: &Threads, copy: bool) -> Result<()> {
                s.set_points(coords, threads, copy)
            }
            #[inline(never)]
            fn spreader_spread(s: &Spreader<$t>, c: &[Complex<$t>], grid: &mut [Complex<$t>], threads: &Threads) -> Result<()> {
                s.spread_impl(c, grid, threads)
            }
            #[inline(never)]
            fn spreader_interp(s: &Spreader<$t>, grid: &[Complex<$t>], c: &mut [Complex<$t>], threads: &Threads) -> Result<()> {
                s.interp_impl(grid, c, threads)
            }
            #[inline(never)]
            fn nufft_plan(ty: i32, dim: usize, n_modes: &[i64], iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<NufftPlan<$t>> {
                NufftPlan::<$t>::new_impl(ty, dim, n_modes, iflag, ntrans, tol, opts)
            }
        }
    };
}
instances!(f32);
instances!(f64);
