//! The executor behind the C API's CUDA Ewald plans (`farfield_ewald_*` with
//! `opts.backend = FARFIELD_BACKEND_CUDA`): a [`GpuEwaldPlan`] of either grid precision
//! (`f64`, or `f32` for mixed precision) with device buffers of its own, so that
//!
//! * host arrays can be evaluated ([`GpuEwaldExec::execute_host`]: the positions and charges
//!   are uploaded into buffers kept for `n_max` charges, the results downloaded), with the
//!   contract of [`crate::ewald::CpuEwald::execute_with`];
//! * device arrays can be evaluated ([`GpuEwaldExec::execute_dev`], and on CUDA
//!   [`GpuEwaldExec::execute_device`] for raw device pointers of a foreign caller).
//!
//! Either way the plan writes into its own result buffers first; only after every check has
//! passed (input checks on the device, exclusions, coincident charges, the range of the
//! requested results) are they copied to the caller, so a failed call leaves the caller's
//! outputs untouched (docs/design.md §3.1). Written against [`FftDevice`], so the emulator
//! tests run the same code as CUDA.
//!
//! Range checks: the device computes in the caller's units (no power-of-two rescaling, unlike
//! the CPU plan), so a requested result that is not finite, or whose largest magnitude lies
//! below the smallest normal double, is [`Error::Range`] with the CPU plan's message. Host
//! executes check every requested output; device executes check the energy and the virial
//! (host values) but do not scan the device arrays (that would cost a device reduction and a
//! synchronisation per array and call).

use super::GpuEwaldPlan;
use crate::error::{try_zeroed_vec, Error, Result};
use crate::ewald::{EwaldOpts, EwaldParams, EwaldResult, Method};
use crate::gpu::device::{Device, FftDevice};
use crate::gpu::phases::HostPhases;
use crate::gpu::spread::GpuSpreadOpts;
use crate::gpu::types::{as_bytes, as_bytes_mut};
use crate::scale::{check_scaled, max_abs};

/// The calls of [`GpuEwaldPlan`] that do not depend on the grid precision (object safe, so one
/// executor holds either precision).
trait AnyPrecision<D: FftDevice> {
    fn method(&self) -> Method;
    fn n_max(&self) -> usize;
    fn params(&self) -> &EwaldParams;
    fn set_box(&mut self, cell: &[f64; 9]) -> Result<()>;
    fn set_exclusions(&mut self, pairs: &[[i64; 2]], scales: Option<&[f64]>) -> Result<()>;
    fn execute(&mut self, n: usize, xyz: &D::Buf, q: &D::Buf, phi: Option<&mut D::Buf>, field: Option<&mut D::Buf>, virial: bool)
               -> Result<EwaldResult>;
}

impl<T: crate::gpu::types::GpuReal, D: FftDevice> AnyPrecision<D> for GpuEwaldPlan<T, D> {
    fn method(&self) -> Method {
        GpuEwaldPlan::method(self)
    }
    fn n_max(&self) -> usize {
        GpuEwaldPlan::n_max(self)
    }
    fn params(&self) -> &EwaldParams {
        GpuEwaldPlan::params(self)
    }
    fn set_box(&mut self, cell: &[f64; 9]) -> Result<()> {
        GpuEwaldPlan::set_box(self, cell)
    }
    fn set_exclusions(&mut self, pairs: &[[i64; 2]], scales: Option<&[f64]>) -> Result<()> {
        GpuEwaldPlan::set_exclusions(self, pairs, scales)
    }
    fn execute(&mut self, n: usize, xyz: &D::Buf, q: &D::Buf, phi: Option<&mut D::Buf>, field: Option<&mut D::Buf>, virial: bool)
               -> Result<EwaldResult> {
        GpuEwaldPlan::execute(self, n, xyz, q, phi, field, virial)
    }
}

/// Device buffers for `n_max` charges, allocated on first use.
struct Bufs<B> {
    /// Positions and charges of host executes (`f64[3 n_max]`, `f64[n_max]`).
    xyz: Option<B>,
    q: Option<B>,
    /// Results before they are handed out (`f64[n_max]`, `f64[3 n_max]`).
    phi: Option<B>,
    field: Option<B>,
}

/// A device Ewald plan with its own input and result buffers (module docs).
pub struct GpuEwaldExec<D: FftDevice> {
    dev: D,
    plan: Box<dyn AnyPrecision<D>>,
    mixed: bool,
    bufs: Bufs<D::Buf>,
    /// `opts.debug > 0`: [`GpuEwaldExec::execute_host`] prints the host time of its stages.
    debug: bool,
}

/// `slot`, allocated with `bytes` bytes when empty.
fn ensure<'a, D: FftDevice>(dev: &D, slot: &'a mut Option<D::Buf>, bytes: usize) -> Result<&'a mut D::Buf> {
    if slot.is_none() {
        *slot = Some(dev.alloc(bytes)?);
    }
    Ok(slot.as_mut().expect("allocated above"))
}

/// [`Error::Range`] (the CPU plan's message) when the values `v` of a requested result are not
/// finite or all underflow below the smallest normal double.
fn check_range(v: &[f64], what: &str) -> Result<()> {
    check_scaled(what, max_abs(0.0, v), 0)
}

impl<D: FftDevice + 'static> GpuEwaldExec<D> {
    /// A plan on `dev` ([`GpuEwaldPlan::new`] with the same arguments), grids and FFT in `f32`
    /// when `mixed` (mixed precision: `f32` real-space pair functions, `f64` interpolation
    /// sums, outputs and reductions), else
    /// in `f64`. No buffer beyond the plan's is allocated here. Errors: those of
    /// [`GpuEwaldPlan::new`] ([`Error::NotSupported`] for [`Method::Direct`], device
    /// allocation → [`Error::Alloc`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new(dev: D, method: Method, cell: &[f64; 9], n_max: usize, tol: f64, opts: &EwaldOpts, sopts: GpuSpreadOpts, mixed: bool)
               -> Result<Self> {
        let plan: Box<dyn AnyPrecision<D>> = if mixed {
            Box::new(GpuEwaldPlan::<f32, D>::new(dev.clone(), method, cell, n_max, tol, opts, sopts)?)
        } else {
            Box::new(GpuEwaldPlan::<f64, D>::new(dev.clone(), method, cell, n_max, tol, opts, sopts)?)
        };
        Ok(GpuEwaldExec { dev, plan, mixed, bufs: Bufs { xyz: None, q: None, phi: None, field: None }, debug: opts.debug > 0 })
    }

    /// The device.
    pub fn device(&self) -> &D {
        &self.dev
    }

    /// The method.
    pub fn method(&self) -> Method {
        self.plan.method()
    }

    /// Largest number of charges per call.
    pub fn n_max(&self) -> usize {
        self.plan.n_max()
    }

    /// Whether the grids are `f32` (mixed precision).
    pub fn mixed(&self) -> bool {
        self.mixed
    }

    /// Parameters in use (those of the CPU plan for the same arguments; `real_s` and
    /// `kspace_s`: [`GpuEwaldPlan::params`]).
    pub fn params(&self) -> &EwaldParams {
        self.plan.params()
    }

    /// [`GpuEwaldPlan::set_box`].
    pub fn set_box(&mut self, cell: &[f64; 9]) -> Result<()> {
        self.plan.set_box(cell)
    }

    /// [`GpuEwaldPlan::set_exclusions`].
    pub fn set_exclusions(&mut self, pairs: &[[i64; 2]], scales: Option<&[f64]>) -> Result<()> {
        self.plan.set_exclusions(pairs, scales)
    }

    /// Evaluates `n = q.len()` charges from host arrays, with the contract of
    /// [`crate::ewald::CpuEwald::execute_with`]: `xyz` (3n, interleaved), `q` (n); `phi` (n)
    /// and `field` (3n, interleaved) written when given, the energy reported when `energy`
    /// (else 0), the virial when `virial` (else zeros); outputs are written only on success.
    /// Positions and charges are uploaded into buffers of the plan (allocated for `n_max`
    /// charges on the first call), the results downloaded; every transfer is on the device's
    /// stream, and the call returns after it has synchronised that stream. With `opts.debug > 0`
    /// the call also synchronises after the upload and prints the host time of its stages
    /// (`[farfield ewald gpu] host arrays (host ms): upload … evaluate … download … copy out …`).
    ///
    /// Errors: [`Error::NPoints`] (`n > n_max`), [`Error::InvalidArg`] (lengths, an exclusion
    /// index ≥ n, coincident charges that are not excluded, naming both),
    /// [`Error::NonFinite`] (naming the first bad position, else charge), [`Error::Range`] (a
    /// position whose fractional coordinates are not representable; a requested result that is
    /// not finite or underflows), [`Error::Alloc`] (device or host memory), device errors.
    pub fn execute_host(&mut self, xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>, energy: bool, virial: bool)
                        -> Result<EwaldResult> {
        let n = q.len();
        self.check_n(n)?;
        if xyz.len() != 3 * n {
            return Err(Error::InvalidArg(format!("xyz has {} values for {n} charges (need 3n)", xyz.len())));
        }
        if phi.as_ref().is_some_and(|p| p.len() != n) || field.as_ref().is_some_and(|f| f.len() != 3 * n) {
            return Err(Error::InvalidArg(format!("phi (n) or field (3n) has the wrong length for n = {n} charges")));
        }
        let n_max = self.n_max();
        let mut stages = HostPhases::start(self.debug, "ewald gpu");
        let dev = &self.dev;
        let xb = ensure(dev, &mut self.bufs.xyz, 24 * n_max)?;
        dev.upload(xb, as_bytes(xyz))?;
        let qb = ensure(dev, &mut self.bufs.q, 8 * n_max)?;
        dev.upload(qb, as_bytes(q))?;
        if self.debug {
            dev.synchronize()?;
        }
        stages.end("upload");
        let (xb, qb) = (self.bufs.xyz.take().expect("allocated above"), self.bufs.q.take().expect("allocated above"));
        let r = self.evaluate(n, &xb, &qb, phi.is_some(), field.is_some(), energy, virial);
        (self.bufs.xyz, self.bufs.q) = (Some(xb), Some(qb));
        let r = r?;
        stages.end("evaluate");
        let phi_h = match (&phi, &self.bufs.phi) {
            (Some(_), Some(b)) => Some(self.download_checked(b, n, "phi")?),
            _ => None,
        };
        let field_h = match (&field, &self.bufs.field) {
            (Some(_), Some(b)) => Some(self.download_checked(b, 3 * n, "field")?),
            _ => None,
        };
        stages.end("download");
        if let (Some(p), Some(v)) = (phi, phi_h) {
            p.copy_from_slice(&v);
        }
        if let (Some(f), Some(v)) = (field, field_h) {
            f.copy_from_slice(&v);
        }
        stages.end("copy out");
        stages.report("host arrays (host ms)");
        Ok(r)
    }

    /// Evaluates `n ≤ n_max` charges from device buffers of this device: `xyz` (`f64[3n]`,
    /// interleaved), `q` (`f64[n]`); `phi` (`f64[n]`) and `field` (`f64[3n]`) receive the
    /// results when given (copied from the plan's result buffers on the device, in stream
    /// order, after every check has passed); energy and virial as
    /// [`GpuEwaldExec::execute_host`]. The call synchronises the device's stream while it
    /// reads back the input checks and the energy and virial reductions; the last kernel (the
    /// self and background terms of `phi`) and the copies into `phi` and `field` are only
    /// queued: they complete in stream order after the call returns.
    ///
    /// Errors: as [`GpuEwaldExec::execute_host`], with [`Error::InvalidArg`] also for a buffer
    /// shorter than `n` values; only the energy and the virial are range-checked (module docs).
    #[allow(clippy::too_many_arguments)]
    pub fn execute_dev(&mut self, n: usize, xyz: &D::Buf, q: &D::Buf, phi: Option<&mut D::Buf>, field: Option<&mut D::Buf>, energy: bool,
                       virial: bool) -> Result<EwaldResult> {
        self.check_n(n)?;
        for (b, per, what) in [(Some(&*xyz), 3, "xyz"), (Some(&*q), 1, "q"), (phi.as_deref(), 1, "phi"), (field.as_deref(), 3, "field")] {
            if let Some(b) = b {
                if self.dev.len(b) < 8 * per * n {
                    return Err(Error::InvalidArg(format!("{what}: a device buffer of {} bytes holds fewer than {} values", self.dev.len(b), per * n)));
                }
            }
        }
        let r = self.evaluate(n, xyz, q, phi.is_some(), field.is_some(), energy, virial)?;
        for (out, res, per) in [(phi, &self.bufs.phi, 1), (field, &self.bufs.field, 3)] {
            if let (Some(o), Some(b)) = (out, res) {
                if n > 0 {
                    self.dev.copy(o, 0, b, 0, 8 * per * n)?;
                }
            }
        }
        Ok(r)
    }

    fn check_n(&self, n: usize) -> Result<()> {
        if n > self.n_max() {
            return Err(Error::NPoints(format!("n = {n} exceeds the plan's n_max = {}", self.n_max())));
        }
        Ok(())
    }

    /// Runs the plan into the result buffers (allocated for `n_max` charges when first
    /// wanted) and checks the requested energy and virial.
    #[allow(clippy::too_many_arguments)]
    fn evaluate(&mut self, n: usize, xyz: &D::Buf, q: &D::Buf, want_phi: bool, want_field: bool, energy: bool, virial: bool)
                -> Result<EwaldResult> {
        let n_max = self.n_max();
        let dev = &self.dev;
        let phi = if want_phi { Some(ensure(dev, &mut self.bufs.phi, 8 * n_max)?) } else { None };
        let field = if want_field { Some(ensure(dev, &mut self.bufs.field, 24 * n_max)?) } else { None };
        let mut r = self.plan.execute(n, xyz, q, phi, field, virial)?;
        if energy {
            check_range(&[r.energy], "energy")?;
        } else {
            r.energy = 0.0;
        }
        if virial {
            check_range(&r.virial, "virial")?;
        }
        Ok(r)
    }

    /// The first `len` values of a result buffer on the host, range-checked.
    fn download_checked(&self, b: &D::Buf, len: usize, what: &str) -> Result<Vec<f64>> {
        let mut v = try_zeroed_vec::<f64>(len, what)?;
        if len > 0 {
            self.dev.download(b, 0, as_bytes_mut(&mut v))?;
        }
        check_range(&v, what)?;
        Ok(v)
    }
}

impl GpuEwaldExec<crate::gpu::cuda::CudaDevice> {
    /// [`GpuEwaldExec::execute_dev`] with raw device pointers of a caller (CUDA memory of
    /// device 0's primary context): `xyz` (`3n` doubles), `q` (`n`), `phi` (`n`) and `field`
    /// (`3n`), 0 for an output not wanted; they are viewed as buffers of the plan's device for
    /// the call (never freed). Same stream semantics as [`GpuEwaldExec::execute_dev`].
    /// Errors: [`Error::NullPointer`] (`xyz` or `q` is 0 with `n > 0`), those of
    /// [`GpuEwaldExec::execute_dev`].
    ///
    /// # Safety
    /// Each non-zero address must be a device allocation of device 0 holding the stated
    /// number of doubles; the outputs must not overlap the inputs or each other.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn execute_device(&mut self, n: usize, xyz: u64, q: u64, phi: u64, field: u64, energy: bool, virial: bool)
                                 -> Result<EwaldResult> {
        if n > 0 && (xyz == 0 || q == 0) {
            return Err(Error::NullPointer(format!("device array {} is NULL with n = {n}", if xyz == 0 { "xyz" } else { "q" })));
        }
        self.check_n(n)?;
        let dev = self.dev.clone();
        if n == 0 {
            // nothing is read or written: a buffer of the plan's device stands for every array
            let e = dev.alloc(8)?;
            return self.execute_dev(0, &e, &e, None, None, energy, virial);
        }
        dev.with_foreign(xyz, 24 * n, |x| {
            dev.with_foreign(q, 8 * n, |c| {
                dev.with_foreign_opt(phi, 8 * n, |ph| dev.with_foreign_opt(field, 24 * n, |fd| self.execute_dev(n, x, c, ph, fd, energy, virial)))
            })
        })
    }
}
