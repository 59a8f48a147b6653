//! The plan behind a `finufft_plan` / `finufftf_plan` handle: FINUFFT's guru semantics
//! (makeplan → setpts → execute / execute_adjoint → destroy) on farfield's [`NufftPlan`].
//!
//! * Types 1 and 2 map one to one onto a farfield plan of the same type, sign, modes, `ntrans`
//!   and tolerance; type 3's target frequencies `s, t, u` come with the points at setpts.
//! * FINUFFT accepts empty problems (`M = 0`, `nk = 0`, a mode count 0): the outputs are then
//!   zeros (or nothing), without a farfield plan.
//! * `execute_adjoint` applies the adjoint (types 1 ↔ 2 with the opposite sign; type 3 with
//!   points and frequencies swapped and the opposite sign) through a second farfield plan made
//!   at its first use and given the points again after each setpts. It reads the caller's
//!   coordinate arrays then, so — as FINUFFT requires for every execute — they must stay valid
//!   and unchanged from setpts until the last execute.
//! * Tolerance: FINUFFT raises a tolerance below what the precision reaches (≤ 0 and NaN
//!   included) to that limit and returns [`FINUFFT_WARN_EPS_TOO_SMALL`]; so does this plan,
//!   from makeplan, or from setpts when type 3 (or the choice for many points) clamps there.
//! * `opts.spreadinterponly = 1` with types 1 and 2: spreading or interpolation only, on the
//!   grid of the given mode counts ([`Gridding`]); type 3 ignores it, as FINUFFT does.
//! * Point counts: `nj` and `nk` are checked against farfield's limit (2³² − 1) before any
//!   array is read or written ([`FINUFFT_ERR_NUM_NU_PTS_INVALID`]).

use crate::gridding::Gridding;
use crate::ier::*;
use crate::opts::{self, finufft_opts};
use farfield::nufft::options::FARFIELD_WARN_TOL_CLAMPED;
use farfield::nufft::params::MAX_POINTS;
use farfield::nufft::NufftOpts;
use farfield::NufftPlan;
use farfield::Real;
use num_complex::Complex;
use std::ffi::c_int;

/// The caller's arrays given at setpts (FINUFFT keeps them by reference too).
#[derive(Clone, Copy)]
struct Pts<T> {
    /// Number of points M.
    m: usize,
    /// Number of type-3 target frequencies (0 for types 1, 2).
    nk: usize,
    /// Point coordinates x, y, z (NULL for unused axes).
    x: [*const T; 3],
    /// Type-3 frequencies s, t, u (NULL for unused axes and types 1, 2).
    s: [*const T; 3],
}

/// A FINUFFT plan of precision `T` (see the module docs).
pub struct CompatPlan<T: Real> {
    ty: i32,
    dim: usize,
    /// Mode counts (types 1, 2; 1 for unused axes).
    modes: [i64; 3],
    iflag: i32,
    ntrans: usize,
    /// The tolerance handed to farfield (after FINUFFT's clamp of tiny values).
    tol: f64,
    opts: NufftOpts,
    /// Print warnings and errors to stderr (`opts.showwarn`).
    pub showwarn: bool,
    /// None for types 1/2 with a mode count 0, and for spread/interpolate-only plans.
    inner: Option<NufftPlan<T>>,
    /// `opts.spreadinterponly` with type 1 or 2 (and no mode count 0).
    gridding: Option<Gridding<T>>,
    /// The adjoint's plan, made at the first `execute_adjoint`.
    adjoint: Option<NufftPlan<T>>,
    /// The adjoint plan has the current points.
    adjoint_has_pts: bool,
    pts: Option<Pts<T>>,
    /// A tolerance warning was returned already.
    warned: bool,
}

/// Number of modes N1·N2·N3 (types 1, 2).
fn total(modes: &[i64; 3]) -> usize {
    modes.iter().map(|&n| n as usize).product()
}

/// `n` values at `p` (an empty slice for `n = 0`); `name` for the NULL error.
///
/// # Safety
/// `p` must point to `n` values when `n > 0`.
unsafe fn slice<'a, T>(p: *const T, n: usize, name: &str) -> Result<&'a [T], Failure> {
    if n == 0 {
        return Ok(&[]);
    }
    if p.is_null() {
        return Err(Failure::new(FINUFFT_ERR_INVALID_ARGUMENT, format!("array `{name}` is NULL (length {n})")));
    }
    Ok(std::slice::from_raw_parts(p, n))
}

/// The FINUFFT tolerance → the one farfield is given, and whether that is a clamp.
fn clamp_tol<T: Real>(eps: f64) -> (f64, bool) {
    if eps >= T::MIN_TOL {
        (eps.min(1.0), false)
    } else {
        (T::MIN_TOL, true)
    }
}

impl<T: Real> CompatPlan<T> {
    /// `finufft_makeplan`: validates in FINUFFT's order (lock callbacks, type, dim, ntrans,
    /// spread_thread, upsampfac, modes) and plans. Returns the plan and 0 or
    /// [`FINUFFT_WARN_EPS_TOO_SMALL`].
    ///
    /// # Safety
    /// `n_modes` must be NULL or point to `dim` values (read for types 1, 2 only).
    pub unsafe fn new(ty: c_int, dim: c_int, n_modes: *const i64, iflag: c_int, ntrans: c_int, eps: f64,
                      o: &finufft_opts) -> Result<(Self, c_int), Failure> {
        if o.fftw_lock_fun.is_some() != o.fftw_unlock_fun.is_some() {
            opts::validate(o)?;
        }
        if !(1..=3).contains(&ty) {
            return Err(Failure::new(FINUFFT_ERR_TYPE_NOTVALID, format!("type = {ty} is not 1, 2 or 3")));
        }
        if !(1..=3).contains(&dim) {
            return Err(Failure::new(FINUFFT_ERR_DIM_NOTVALID, format!("dim = {dim} is not 1, 2 or 3")));
        }
        if ntrans < 1 {
            return Err(Failure::new(FINUFFT_ERR_NTRANS_NOTVALID, format!("ntrans = {ntrans} must be at least 1")));
        }
        opts::validate(o)?;
        let dim = dim as usize;
        let mut modes = [1i64; 3];
        if ty != 3 {
            let n = slice(n_modes, dim, "n_modes")?;
            if let Some(d) = n.iter().position(|&v| v < 0) {
                return Err(Failure::new(FINUFFT_ERR_NDATA_NOTVALID, format!("n_modes[{d}] = {} is negative", n[d])));
            }
            modes[..dim].copy_from_slice(n);
        }
        let (tol, clamped) = clamp_tol::<T>(eps);
        let nopts = opts::to_nufft_opts(o);
        let gridding_only = o.spreadinterponly != 0 && ty != 3;
        let (inner, gridding) = if ty != 3 && total(&modes) == 0 {
            (None, None)
        } else if gridding_only {
            (None, Some(Gridding::new(dim, &modes, tol, &nopts)?))
        } else {
            (Some(NufftPlan::<T>::new(ty, dim, &modes[..dim], iflag, ntrans as usize, tol, &nopts)?), None)
        };
        let gridding_clamped = gridding.as_ref().is_some_and(|g| g.clamped);
        let mut p = CompatPlan { ty, dim, modes, iflag, ntrans: ntrans as usize, tol, opts: nopts, showwarn: o.showwarn != 0,
                                 inner, gridding, adjoint: None, adjoint_has_pts: false, pts: None, warned: false };
        let ier = p.warning(clamped || gridding_clamped, eps);
        Ok((p, ier))
    }

    /// [`FINUFFT_WARN_EPS_TOO_SMALL`] (printed with showwarn) the first time the tolerance was
    /// clamped, by FINUFFT's rule or by farfield's plan; 0 otherwise.
    fn warning(&mut self, clamped: bool, eps: f64) -> c_int {
        let info = self.inner.as_ref().map(|p| p.info());
        let farfield_clamped = info.is_some_and(|i| i.warnings & FARFIELD_WARN_TOL_CLAMPED != 0);
        if self.warned || !(clamped || farfield_clamped) {
            return 0;
        }
        self.warned = true;
        if self.showwarn {
            let used = info.map(|i| i.tol_used).or(self.gridding.as_ref().map(|g| g.tol_used)).map_or(self.tol, |u| u.max(self.tol));
            eprintln!("finufft (farfield) warning: tol = {eps:e} is below what {} reaches here; using {used:e}", T::NAME);
        }
        FINUFFT_WARN_EPS_TOO_SMALL
    }

    /// Transform type (1, 2, 3).
    pub fn transform_type(&self) -> i32 {
        self.ty
    }

    /// `finufft_setpts`: `m` points `x, y, z` (and for type 3 `nk` frequencies `s, t, u`);
    /// arrays of unused axes are not read (may be NULL). Errors, checked before any array is
    /// read: [`FINUFFT_ERR_NUM_NU_PTS_INVALID`] (negative, or above [`MAX_POINTS`]); then
    /// [`FINUFFT_ERR_INVALID_ARGUMENT`] (a needed array NULL, a coordinate not finite).
    /// Returns 0 or the tolerance warning.
    ///
    /// # Safety
    /// Used arrays must hold `m` (`nk`) values and stay valid until the last execute.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn setpts(&mut self, m: i64, x: *const T, y: *const T, z: *const T, nk: i64, s: *const T, t: *const T,
                         u: *const T) -> Result<c_int, Failure> {
        let nk = if self.ty == 3 { nk } else { 0 };
        for (name, v) in [("nj", m), ("nk", nk)] {
            if v < 0 || v as u64 > MAX_POINTS as u64 {
                return Err(Failure::new(FINUFFT_ERR_NUM_NU_PTS_INVALID,
                                        format!("{name} = {v} is {} (at most {MAX_POINTS} points)", if v < 0 { "negative" } else { "too large" })));
            }
        }
        let (m, nk) = (m as usize, nk as usize);
        let d = self.dim;
        let used = |a: [*const T; 3]| [a[0], if d > 1 { a[1] } else { std::ptr::null() }, if d > 2 { a[2] } else { std::ptr::null() }];
        let pts = Pts { m, nk, x: used([x, y, z]), s: if self.ty == 3 { used([s, t, u]) } else { [std::ptr::null(); 3] } };
        let xs = [slice(pts.x[0], m, "x")?, slice(pts.x[1], if d > 1 { m } else { 0 }, "y")?, slice(pts.x[2], if d > 2 { m } else { 0 }, "z")?];
        let ss = [slice(pts.s[0], nk, "s")?, slice(pts.s[1], if d > 1 { nk } else { 0 }, "t")?, slice(pts.s[2], if d > 2 { nk } else { 0 }, "u")?];
        if let (false, Some(g)) = (self.is_empty(&pts), self.gridding.as_mut()) {
            g.setpts(xs)?;
        } else if !self.is_empty(&pts) {
            let p = self.inner.as_mut().expect("a plan with modes has a farfield plan");
            if self.ty == 3 {
                p.setpts_type3(xs[0], xs[1], xs[2], ss[0], ss[1], ss[2])?;
            } else {
                p.setpts(xs[0], xs[1], xs[2])?;
            }
        }
        self.pts = Some(pts);
        self.adjoint_has_pts = false;
        Ok(self.warning(false, self.tol))
    }

    /// True when the transform is empty (no points, no frequencies or no modes): the output is
    /// all zeros.
    fn is_empty(&self, p: &Pts<T>) -> bool {
        p.m == 0 || (self.ty == 3 && p.nk == 0) || (self.inner.is_none() && self.gridding.is_none())
    }

    /// `finufft_execute` (`adjoint = false`) and `finufft_execute_adjoint` (`true`).
    /// Forward: types 1, 3 read `c` (ntrans·M) and write `f` (ntrans·N, or ntrans·nk); type 2
    /// reads `f` and writes `c`. The adjoint goes the other way. Errors:
    /// [`FINUFFT_ERR_INVALID_ARGUMENT`] (no setpts yet, NULL or overlapping arrays, non-finite
    /// output), farfield's errors mapped by [`ier_of`].
    ///
    /// # Safety
    /// `c` and `f` must hold ntrans·M and ntrans·N (type 3: ntrans·nk) values.
    pub unsafe fn execute(&mut self, c: *mut Complex<T>, f: *mut Complex<T>, adjoint: bool) -> Result<c_int, Failure> {
        let Some(pts) = self.pts else {
            return Err(Failure::new(FINUFFT_ERR_INVALID_ARGUMENT, "execute called before setpts"));
        };
        let nc = self.ntrans * pts.m;
        let nf = self.ntrans * if self.ty == 3 { pts.nk } else { total(&self.modes) };
        check_disjoint(c, nc, f, nf)?;
        let cs = slice_mut(c, nc, "c")?;
        let fs = slice_mut(f, nf, "f")?;
        // which array is written: forward type 2 and adjoint types 1, 3 write c
        let writes_c = (self.ty == 2) != adjoint;
        if self.is_empty(&pts) {
            let out = if writes_c { cs } else { fs };
            out.iter_mut().for_each(|v| *v = Complex::new(T::zero(), T::zero()));
            return Ok(0);
        }
        if let Some(g) = &self.gridding {
            g.execute(cs, fs, !writes_c)?;
            return Ok(0);
        }
        if !adjoint {
            self.inner.as_mut().expect("non-empty").execute(cs, fs)?;
            return Ok(0);
        }
        self.prepare_adjoint(&pts)?;
        let a = self.adjoint.as_mut().expect("made above");
        if self.ty == 3 {
            // the adjoint type 3 has the frequencies as its points: strengths f, output c
            a.execute(fs, cs)?;
        } else {
            a.execute(cs, fs)?;
        }
        Ok(0)
    }

    /// Makes the adjoint's farfield plan (once) and gives it the current points (after each
    /// setpts).
    unsafe fn prepare_adjoint(&mut self, pts: &Pts<T>) -> Result<(), Failure> {
        let sign = if self.iflag >= 0 { -1 } else { 1 };
        if self.adjoint.is_none() {
            let ty = [0, 2, 1, 3][self.ty as usize];
            self.adjoint = Some(NufftPlan::<T>::new(ty, self.dim, &self.modes[..self.dim], sign, self.ntrans, self.tol, &self.opts)?);
            self.adjoint_has_pts = false;
        }
        if !self.adjoint_has_pts {
            let d = self.dim;
            let axes = |a: [*const T; 3], n: usize| -> Result<[&[T]; 3], Failure> {
                Ok([slice(a[0], n, "x")?, slice(a[1], if d > 1 { n } else { 0 }, "y")?, slice(a[2], if d > 2 { n } else { 0 }, "z")?])
            };
            let a = self.adjoint.as_mut().expect("made above");
            let x = axes(pts.x, pts.m)?;
            if self.ty == 3 {
                let s = axes(pts.s, pts.nk)?;
                a.setpts_type3(s[0], s[1], s[2], x[0], x[1], x[2])?;
            } else {
                a.setpts(x[0], x[1], x[2])?;
            }
            self.adjoint_has_pts = true;
        }
        Ok(())
    }
}

/// Mutable slice of `n` values at `p` (empty for `n = 0`); NULL with `n > 0` is an error.
///
/// # Safety
/// `p` must point to `n` writable values when `n > 0`, not aliased by another slice.
unsafe fn slice_mut<'a, T>(p: *mut T, n: usize, name: &str) -> Result<&'a mut [T], Failure> {
    slice(p as *const T, n, name)?;
    Ok(if n == 0 { &mut [] } else { std::slice::from_raw_parts_mut(p, n) })
}

/// `c` (`nc` values) and `f` (`nf` values) must not overlap (one is read while the other is
/// written): [`FINUFFT_ERR_INVALID_ARGUMENT`] otherwise.
fn check_disjoint<E>(c: *const E, nc: usize, f: *const E, nf: usize) -> Result<(), Failure> {
    let sz = std::mem::size_of::<E>();
    let (a0, a1) = (c as usize, c as usize + nc * sz);
    let (b0, b1) = (f as usize, f as usize + nf * sz);
    if nc > 0 && nf > 0 && a0 < b1 && b0 < a1 {
        return Err(Failure::new(FINUFFT_ERR_INVALID_ARGUMENT, "arrays c and f overlap (in-place transforms are not supported)"));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tolerance_clamp_follows_finufft() {
        assert_eq!(clamp_tol::<f64>(1e-6), (1e-6, false));
        assert_eq!(clamp_tol::<f64>(0.0), (1e-15, true));
        assert_eq!(clamp_tol::<f64>(-1.0), (1e-15, true));
        assert_eq!(clamp_tol::<f64>(f64::NAN), (1e-15, true));
        assert_eq!(clamp_tol::<f32>(1e-9), (1e-7, true));
        assert_eq!(clamp_tol::<f64>(10.0), (1.0, false));
    }

    #[test]
    fn overlap_check() {
        let v = [0u64; 8];
        let p = v.as_ptr();
        assert!(check_disjoint(p, 4, unsafe { p.add(4) }, 4).is_ok());
        assert_eq!(check_disjoint(p, 5, unsafe { p.add(4) }, 4).unwrap_err().ier, 21);
        assert!(check_disjoint(p, 0, p, 4).is_ok());
    }
}
