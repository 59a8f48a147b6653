//! The plan behind a `cufinufft_plan` / `cufinufftf_plan` handle: cuFINUFFT's semantics
//! (makeplan → setpts with device arrays → execute on device arrays → destroy) on farfield's
//! CUDA [`NufftPlan`] (`setpts_device`, `execute_device`).
//!
//! * Types 1 and 2 map one to one onto a farfield CUDA plan of the same type, sign, modes,
//!   `ntransf` and tolerance, whose points are set from the device arrays
//!   ([`NufftPlan::setpts_device`]: copied, folded and sorted on the device).
//! * Type 3 maps onto farfield's CUDA type 3, whose points and frequencies are set from the
//!   device arrays ([`NufftPlan::setpts_type3_device`]: copied, and the set-up run on the
//!   device; the host reads back their extents); execute runs on the device arrays as for
//!   types 1 and 2.
//! * Tolerance: a tolerance below what the precision reaches (≤ 0 and NaN included) is raised
//!   to that limit (so is one farfield's kernel cannot reach at the requested `upsampfac`).
//!   makeplan then returns what cuFINUFFT 2.5.1 returns (observed on an H100): 0 for types 1
//!   and 2 (its makeplan overwrites the spreader's warning with later steps' status) and
//!   [`FINUFFT_WARN_EPS_TOO_SMALL`] (1) for type 3. The Python `cufinufft` package raises on
//!   any non-zero code, so a 1 for types 1 and 2 would break callers that work with cuFINUFFT.
//! * Device errors (a failing launch, copy or cuFFT call) → [`FINUFFT_ERR_CUDA_FAILURE`]; no
//!   driver or device → [`FINUFFT_ERR_CUDA_FAILURE`] at makeplan.
//!
//! How the farfield plan is made is a function pointer per precision ([`PlanMakers`]): by
//! default [`NufftPlan::new`] on the CUDA backend; the tests put plans on the CUDA-on-CPU
//! emulator there (`gpu-emu/tests/cufinufft_compat.rs`), so that these entry points run
//! without a GPU.

use crate::ier::*;
use crate::opts::{self, cufinufft_opts};
use farfield::nufft::options::FARFIELD_WARN_TOL_CLAMPED;
use farfield::nufft::NufftOpts;
use farfield::NufftPlan;
use farfield::{Error, Real};
use std::ffi::c_int;
use std::sync::RwLock;

/// Makes the farfield plan of a cuFINUFFT plan: (type, dim, modes, iflag, ntransf, tol,
/// options with backend CUDA), as [`NufftPlan::new`].
pub type MakeFn<T> = fn(i32, usize, &[i64], i32, usize, f64, &NufftOpts) -> farfield::Result<NufftPlan<T>>;

/// The plan makers of both precisions.
#[derive(Clone, Copy)]
pub struct PlanMakers {
    /// Double precision (`cufinufft_makeplan`).
    pub f64: MakeFn<f64>,
    /// Single precision (`cufinufftf_makeplan`).
    pub f32: MakeFn<f32>,
}

fn makers() -> Option<PlanMakers> {
    *MAKERS.read().unwrap_or_else(|e| e.into_inner())
}

static MAKERS: RwLock<Option<PlanMakers>> = RwLock::new(None);

/// Replaces how plans are made (`None`: [`NufftPlan::new`], the CUDA device). For tests: the
/// emulator's plans, whose "device addresses" are host addresses of emulator buffers. Affects
/// every later makeplan of the process.
#[doc(hidden)]
pub fn set_plan_makers(m: Option<PlanMakers>) {
    *MAKERS.write().unwrap_or_else(|e| e.into_inner()) = m;
}

/// The precisions of the interface (`f64`: `cufinufft_*`, `f32`: `cufinufftf_*`).
pub trait CuReal: Real {
    /// This precision's maker in `m`.
    fn maker(m: &PlanMakers) -> MakeFn<Self>;
}
impl CuReal for f64 {
    fn maker(m: &PlanMakers) -> MakeFn<f64> {
        m.f64
    }
}
impl CuReal for f32 {
    fn maker(m: &PlanMakers) -> MakeFn<f32> {
        m.f32
    }
}

/// The cuFINUFFT status of a farfield error on a CUDA plan: device failures (`Internal`: a
/// driver, NVRTC or launch error; `Fft`: cuFFT) and `NoDevice` → [`FINUFFT_ERR_CUDA_FAILURE`],
/// the rest as [`ier_of`].
pub fn failure(e: Error) -> Failure {
    let ier = match e {
        Error::Internal(_) | Error::Fft(_) | Error::NoDevice(_) => FINUFFT_ERR_CUDA_FAILURE,
        ref other => ier_of(other),
    };
    Failure::new(ier, e.message())
}

/// A cuFINUFFT plan of precision `T` (see the module docs).
pub struct CuPlan<T: Real> {
    ty: i32,
    inner: NufftPlan<T>,
}

/// The cuFINUFFT tolerance → the one farfield is given, and whether that is a clamp.
fn clamp_tol<T: Real>(eps: f64) -> (f64, bool) {
    if eps >= T::MIN_TOL {
        (eps.min(1.0), false)
    } else {
        (T::MIN_TOL, true)
    }
}

impl<T: CuReal> CuPlan<T> {
    /// `cufinufft_makeplan`: validates (dim, type, modes, ntransf, options) and plans on the
    /// device. Returns the plan and 0, or [`FINUFFT_WARN_EPS_TOO_SMALL`] for a type-3 plan
    /// whose tolerance was raised (module docs).
    ///
    /// # Safety
    /// `n_modes` must be NULL or point to 3 values (cuFINUFFT reads the first `dim`).
    pub unsafe fn new(ty: c_int, dim: c_int, n_modes: *const i64, iflag: c_int, ntransf: c_int, eps: f64,
                      o: &cufinufft_opts) -> Result<(Self, c_int), Failure> {
        if !(1..=3).contains(&dim) {
            return Err(Failure::new(FINUFFT_ERR_DIM_NOTVALID, format!("dim = {dim} is not 1, 2 or 3")));
        }
        if !(1..=3).contains(&ty) {
            return Err(Failure::new(FINUFFT_ERR_TYPE_NOTVALID, format!("type = {ty} is not 1, 2 or 3")));
        }
        let dim = dim as usize;
        let mut modes = [1i64; 3];
        if ty != 3 {
            if n_modes.is_null() {
                return Err(Failure::new(FINUFFT_ERR_INVALID_ARGUMENT, "n_modes is NULL"));
            }
            modes[..dim].copy_from_slice(std::slice::from_raw_parts(n_modes, dim));
            if let Some(d) = modes[..dim].iter().position(|&v| v <= 0 || v > i32::MAX as i64) {
                return Err(Failure::new(FINUFFT_ERR_NDATA_NOTVALID,
                                        format!("n_modes[{d}] = {} is not in 1 … 2^31 − 1", modes[d])));
            }
        }
        if ntransf < 1 {
            return Err(Failure::new(FINUFFT_ERR_NTRANS_NOTVALID, format!("ntransf = {ntransf} must be at least 1")));
        }
        opts::validate(o)?;
        let (tol, clamped) = clamp_tol::<T>(eps);
        let nopts = opts::to_nufft_opts(o);
        let make = makers().map_or(NufftPlan::<T>::new as MakeFn<T>, |m| T::maker(&m));
        let inner = make(ty, dim, &modes[..dim], iflag, ntransf as usize, tol, &nopts).map_err(failure)?;
        let far_clamped = inner.info().warnings & FARFIELD_WARN_TOL_CLAMPED != 0;
        let ier = if ty == 3 && (clamped || far_clamped) { FINUFFT_WARN_EPS_TOO_SMALL } else { 0 };
        Ok((CuPlan { ty, inner }, ier))
    }

    /// `cufinufft_setpts`: `m` points from the device arrays `x`, `y`, `z` (axes ≥ dim
    /// ignored) and, for type 3, `n` target frequencies from `s`, `t`, `u` (not read for types
    /// 1, 2), copied on the device (see the module docs). M < 0 or (type 3) N < 0 → [`FINUFFT_ERR_NUM_NU_PTS_INVALID`],
    /// M > 2³¹ − 1 → [`FINUFFT_ERR_NDATA_NOTVALID`] (cuFINUFFT's limit), a NULL array of a
    /// used axis → [`FINUFFT_ERR_INVALID_ARGUMENT`].
    ///
    /// # Safety
    /// Each used address must be a device allocation holding `m` (`s`, `t`, `u`: `n`) values of
    /// precision `T`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn setpts(&mut self, m: i64, x: u64, y: u64, z: u64, n: i64, s: u64, t: u64, u: u64) -> Result<c_int, Failure> {
        if m < 0 {
            return Err(Failure::new(FINUFFT_ERR_NUM_NU_PTS_INVALID, format!("M = {m} is negative")));
        }
        if m > i32::MAX as i64 {
            return Err(Failure::new(FINUFFT_ERR_NDATA_NOTVALID, format!("M = {m} exceeds cuFINUFFT's limit 2^31 − 1")));
        }
        if self.ty != 3 {
            self.inner.setpts_device(m as usize, x, y, z).map_err(failure)?;
            return Ok(0);
        }
        if n < 0 {
            return Err(Failure::new(FINUFFT_ERR_NUM_NU_PTS_INVALID, format!("N = {n} (type-3 frequencies) is negative")));
        }
        if n > i32::MAX as i64 {
            return Err(Failure::new(FINUFFT_ERR_NDATA_NOTVALID, format!("N = {n} exceeds cuFINUFFT's limit 2^31 − 1")));
        }
        self.inner.setpts_type3_device(m as usize, x, y, z, n as usize, s, t, u).map_err(failure)?;
        Ok(0)
    }

    /// `cufinufft_execute`: type 1 reads `c` (`ntransf·M` values) and writes `fk`
    /// (`ntransf·N1·N2·N3`); type 2 reads `fk` and writes `c`. Both are device arrays; the work
    /// is queued on the plan's stream (the caller synchronises, as with cuFINUFFT).
    ///
    /// # Safety
    /// `c` and `fk` must be device allocations of those sizes.
    pub unsafe fn execute(&mut self, c: u64, fk: u64) -> Result<c_int, Failure> {
        if c != 0 && c == fk {
            return Err(Failure::new(FINUFFT_ERR_INVALID_ARGUMENT, "c and fk are the same array"));
        }
        self.inner.execute_device(c, fk).map_err(failure)?;
        Ok(0)
    }

    /// The transform type.
    pub fn transform_type(&self) -> i32 {
        self.ty
    }

    /// The farfield plan.
    pub fn farfield_plan(&self) -> &NufftPlan<T> {
        &self.inner
    }
}
