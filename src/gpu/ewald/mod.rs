//! Periodic electrostatics on the device: smooth particle-mesh Ewald (Essmann et al.,
//! J. Chem. Phys. 103 (1995) 8577) and spectral Ewald (Lindbo & Tornberg, J. Comput. Phys. 230
//! (2011) 8744) with the GPU particle-mesh spreading methods of [`crate::gpu::spread`] (Guo et
//! al., Procedia Comput. Sci. 51 (2015) 120), written against
//! the [`FftDevice`] trait so that the whole path runs on the CUDA-on-CPU emulator in CI.
//!
//! * [`kspace`]: the k-space part ([`GpuKspace`]);
//! * [`real_space`]: the real-space pass by device cell lists ([`real_space::GpuRealSpace`]);
//! * [`GpuEwaldPlan`]: the plan a caller uses — parameters from the CPU rule
//!   (`crate::ewald::setup`, the same `ξ`, `r_c`, grid, order/support and `τ` as
//!   [`crate::ewald::CpuEwald`] for the same cell, `n_max`, tolerance and options), the k-space
//!   part, the real-space part (on a second stream of the device, [`Device::fork`](crate::gpu::device::Device::fork), so that
//!   it overlaps the k-space part; the plan's stream waits for it before a call returns), and
//!   the self and background terms;
//! * [`exec`]: [`GpuEwaldExec`], a plan of either grid precision with its own input and result
//!   buffers — host-array and device-array evaluation with the CPU plan's checks and
//!   outputs-only-on-success; the executor of the C API's CUDA plans (`farfield_ewald_*` with
//!   `opts.backend = FARFIELD_BACKEND_CUDA`).
//!
//! What is computed, units and conventions: as [`crate::ewald`] (potentials `φ_i = ∂U/∂q_i`,
//! fields `E = −∇φ`, energy `U = ½ Σ q_i φ_i`, virial `W = −∂U/∂ε`, tin-foil boundary
//! conditions, the neutralising background for a net charge; no Coulomb constant). Positions
//! `xyz[3i + d]`, charges, potentials and fields `field[3i + d]` are `f64` device buffers.

pub mod exec;
pub mod kspace;
pub mod real_space;
pub use exec::GpuEwaldExec;
pub use kspace::{GpuKspace, KspaceResult};

use crate::error::{Error, Result};
use crate::ewald::params::Chosen;
use crate::ewald::{erfc_accuracy, new_box, setup, EwaldOpts, EwaldParams, EwaldParts, EwaldResult, Exclusions, Method, NewBox, PeriodicBox, Setup};
use crate::gpu::device::{Arg, FftDevice};
use crate::gpu::spread::GpuSpreadOpts;
use crate::gpu::types::GpuReal;
use kspace::{ew_blocks, EW_BLOCK, SUM_Q};
use real_space::GpuRealSpace;

/// An Ewald plan on device `D` (module docs), grids and FFT in precision `T` (`f64`; `f32` for
/// mixed precision, with `f64` interpolation sums, potentials, fields and reductions, and the
/// real-space pair functions in `f32` as [`GpuRealSpace::set_mixed`] describes).
pub struct GpuEwaldPlan<T: GpuReal, D: FftDevice> {
    dev: D,
    method: Method,
    n_max: usize,
    opts: EwaldOpts,
    sopts: GpuSpreadOpts,
    /// The internal length unit of the CPU rule (`2^scale_e`), kept for [`Self::set_box`].
    scale_e: i32,
    chosen: Chosen,
    params: EwaldParams,
    user_box: PeriodicBox,
    kspace: GpuKspace<T, D>,
    real: GpuRealSpace<D>,
}

impl<T: GpuReal, D: FftDevice> GpuEwaldPlan<T, D> {
    /// Makes a plan for up to `n_max` charges in the cell `cell` (`cell[3i + j]` = component
    /// `j` of lattice vector `i`, lower-triangular) with relative RMS force accuracy `tol`,
    /// the parameters chosen by the CPU rule ([`crate::ewald::CpuEwald::new`]: overrides in
    /// `opts.overrides`; `opts.nthreads` and `opts.fftw_flags` do not apply) and the spreader
    /// options `sopts` ([`GpuKspace::new`]). Errors: those of
    /// [`crate::ewald::CpuEwald::new`], [`Error::NotSupported`] for [`Method::Direct`], and
    /// those of [`GpuKspace::new`] (device allocation → [`Error::Alloc`]).
    pub fn new(dev: D, method: Method, cell: &[f64; 9], n_max: usize, tol: f64, opts: &EwaldOpts, sopts: GpuSpreadOpts) -> Result<Self> {
        if method == Method::Direct {
            return Err(Error::NotSupported("the direct Ewald sum has no device path (use SPME or spectral Ewald)".into()));
        }
        let Setup { user_box, scale_e, chosen, params, .. } = setup(method, cell, n_max, tol, opts)?;
        let (kspace, real) = Self::parts(&dev, method, cell, &params, n_max, sopts, opts.debug > 0)?;
        if opts.debug > 0 {
            eprintln!(
                "[farfield ewald gpu] {method:?} on {}: n_max {n_max} xi {:e} rc {:e} grid {:?} order {} tau {:.4} spreading {:?}",
                dev.name(), params.xi, params.rc, params.grid, params.order, params.tau, sopts.method
            );
        }
        Ok(GpuEwaldPlan { dev, method, n_max, opts: *opts, sopts, scale_e, chosen, params, user_box, kspace, real })
    }

    /// The k-space and real-space parts for the parameters `params` (by [`Self::new`] and a
    /// re-planning [`Self::set_box`]), printing per-phase timings when `debug`.
    fn parts(
        dev: &D, method: Method, cell: &[f64; 9], params: &EwaldParams, n_max: usize, sopts: GpuSpreadOpts, debug: bool,
    ) -> Result<(GpuKspace<T, D>, GpuRealSpace<D>)> {
        let mut kspace = GpuKspace::new(dev.clone(), method, cell, params, n_max, sopts)?;
        let mut real = GpuRealSpace::new(dev.fork()?, params.xi, params.rc, erfc_accuracy(params.tol_used), false)?;
        kspace.set_debug(debug);
        real.set_debug(debug);
        real.set_mixed(crate::nufft::params::Precision::of::<T>() == crate::nufft::params::Precision::F32);
        Ok((kspace, real))
    }

    /// The method.
    pub fn method(&self) -> Method {
        self.method
    }

    /// Largest number of charges per call.
    pub fn n_max(&self) -> usize {
        self.n_max
    }

    /// The cell (as the caller gave it).
    pub fn cell(&self) -> &PeriodicBox {
        &self.user_box
    }

    /// Parameters in use (the same as the CPU plan's for the same arguments); `kspace_s` and
    /// `real_s` are wall-clock seconds of the last evaluation: the two parts overlap on the
    /// device, so `kspace_s` runs from the start until the k-space sums are back and `real_s`
    /// is the further time until the real-space totals are back and its results are added.
    pub fn params(&self) -> &EwaldParams {
        &self.params
    }

    /// The k-space part.
    pub fn kspace(&self) -> &GpuKspace<T, D> {
        &self.kspace
    }

    /// Sets the excluded and scaled pairs (replacing earlier ones), with the CPU plan's
    /// semantics ([`crate::ewald::CpuEwald::set_exclusions`] for `scales = None`,
    /// [`crate::ewald::CpuEwald::set_exclusions_scaled`] otherwise: indices in
    /// `0 … n_max − 1`, unordered, duplicates once, `(1 − s)` of each pair's `1/r` removed, in
    /// the shares the plan's terms select, [`EwaldParts::exclusion_shares`]). Errors:
    /// [`Error::InvalidArg`], [`Error::NonFinite`], [`Error::Alloc`] as on the CPU, and device
    /// errors. On error the plan keeps its old list.
    pub fn set_exclusions(&mut self, pairs: &[[i64; 2]], scales: Option<&[f64]>) -> Result<()> {
        // the CPU plan's checks against n_max (the device pass checks against n at execute)
        self.real.set_exclusion_list(Exclusions::new(pairs, scales, self.n_max)?)
    }

    /// Changes the cell by the CPU rule ([`crate::ewald::CpuEwald::set_box`]): the parameters
    /// are kept while the estimated error stays within 1.5× the target (only the influence
    /// function is recomputed), else new ones are chosen and the k-space part is rebuilt.
    /// Errors as [`crate::ewald::CpuEwald::set_box`] and [`GpuKspace::new`]; on error the plan
    /// is unchanged.
    pub fn set_box(&mut self, cell: &[f64; 9]) -> Result<()> {
        match new_box(self.method, cell, self.n_max, &self.opts, self.scale_e, &self.chosen, &self.params)? {
            NewBox::Keep { user_box, eta, .. } => {
                self.kspace.set_box(cell)?;
                self.params.eta = eta;
                self.user_box = user_box;
            }
            NewBox::Replan(Setup { user_box, scale_e, chosen, params, .. }) => {
                let (kspace, mut real) =
                    Self::parts(&self.dev, self.method, cell, &params, self.n_max, self.sopts, self.opts.debug > 0)?;
                real.take_exclusions(&mut self.real);
                self.kspace = kspace;
                self.real = real;
                self.scale_e = scale_e;
                self.chosen = chosen;
                self.params = params;
                self.user_box = user_box;
            }
        }
        Ok(())
    }

    /// Evaluates all parts: potentials (`phi`, n f64), fields (`field`, 3n f64), energy and (if
    /// `virial`) the virial for `n ≤ n_max` charges at `xyz` (3n f64) with charges `q` (n f64),
    /// all device buffers of this device; `phi` and `field` are overwritten. Same as
    /// [`Self::execute_parts`] with every part.
    pub fn execute(
        &mut self, n: usize, xyz: &D::Buf, q: &D::Buf, phi: Option<&mut D::Buf>, field: Option<&mut D::Buf>, virial: bool,
    ) -> Result<EwaldResult> {
        self.execute_parts(n, xyz, q, phi, field, virial, EwaldParts::of(self.opts.terms))
    }

    /// Evaluates the chosen parts of the sum ([`EwaldParts`]; a diagnostic hook, as
    /// [`crate::ewald::CpuEwald::set_parts`] on the CPU): the k-space part writes `phi` and
    /// `field` (zeros when it is not chosen), the real-space part adds to them, the self and
    /// background terms add `−2ξ/√π q_i − πQ/(Vξ²)` to `phi` (on the device, the net charge `Q`
    /// read there). The energy is `U_k + U_real − ξ/√π Σq² − πQ²/(2Vξ²)` for the chosen parts,
    /// the virial `W_k + W_real − πQ²/(2Vξ²) δ`. Errors: those of [`GpuKspace::execute`] and
    /// [`GpuRealSpace::compute`] (e.g. coincident charges that are not excluded:
    /// [`Error::InvalidArg`]; `phi` and `field` may then hold the k-space part only).
    #[allow(clippy::too_many_arguments)]
    pub fn execute_parts(
        &mut self, n: usize, xyz: &D::Buf, q: &D::Buf, mut phi: Option<&mut D::Buf>, mut field: Option<&mut D::Buf>, virial: bool,
        parts: EwaldParts,
    ) -> Result<EwaldResult> {
        // The real-space pass runs on a stream of its own (`self.real`'s handle, forked from
        // the plan's), concurrently with the k-space part: it starts after the work issued
        // before this call (the inputs), its kernels are issued first (the k-space part
        // reads an input check back before it issues its own), and only its last kernel,
        // which adds into `phi` and `field`, waits for the k-space part's writes; the plan's
        // stream then waits for it, so the caller sees one stream in order.
        let t0 = std::time::Instant::now();
        let pending = if self.real.runs_for(parts) {
            self.real.device().wait(&self.dev.mark()?)?;
            Some(self.real.launch(&self.user_box, n, xyz, q, phi.as_deref(), field.as_deref(), virial, parts))
        } else {
            None
        };
        // the k-space part always runs: it also reduces Σq and Σq² for the self and
        // background terms; without it the outputs are zeroed
        let k = self.kspace.execute(n, xyz, q, phi.as_deref_mut(), field.as_deref_mut(), virial).and_then(|k| {
            if !parts.kspace {
                if let Some(p) = phi.as_deref_mut() {
                    self.dev.zero(p)?;
                }
                if let Some(f) = field.as_deref_mut() {
                    self.dev.zero(f)?;
                }
            }
            Ok(k)
        });
        self.params.kspace_s = t0.elapsed().as_secs_f64();
        self.params.real_s = 0.0;
        // a k-space error comes first (the CPU plan's order); the real-space pass is still
        // waited for, its results discarded, so that no kernel reads the inputs after return
        let real = pending.map(|p| {
            let t0 = std::time::Instant::now();
            let r = p.and_then(|p| {
                self.real.device().wait(&self.dev.mark()?)?;
                let (ph, fd) = if k.is_ok() { (phi.as_deref_mut(), field.as_deref_mut()) } else { (None, None) };
                self.real.complete(p, &self.user_box, xyz, q, ph, fd)
            });
            // the plan's stream waits for every kernel issued on the real-space stream, also
            // after an error
            let joined = self.real.device().mark().and_then(|m| self.dev.wait(&m));
            self.params.real_s = t0.elapsed().as_secs_f64();
            joined.map(|()| r)
        });
        let real = real.transpose()?;
        let k = k?;
        let (mut u, mut w) = if parts.kspace { (k.energy, k.virial) } else { (0.0, [0.0; 9]) };
        if let Some(r) = real {
            let (u_r, w_r) = r?;
            u += u_r;
            for (a, b) in w.iter_mut().zip(w_r) {
                *a += b;
            }
        }
        if parts.self_bg {
            let xi = self.params.xi;
            let pi = std::f64::consts::PI;
            let c_self = 2.0 * xi / pi.sqrt();
            let bg = -pi / (self.user_box.volume * xi * xi);
            let u_bg = 0.5 * bg * k.q_sum * k.q_sum;
            u += -0.5 * c_self * k.q2_sum + u_bg;
            if virial {
                for d in 0..3 {
                    w[4 * d] += u_bg;
                }
            }
            if let Some(p) = phi.as_deref_mut() {
                self.dev.launch("ff_ewald_self_bg", ew_blocks(n), EW_BLOCK, 0, &[
                    Arg::I32(n as i32), Arg::Buf(q), Arg::F64(c_self), Arg::F64(bg), Arg::Buf(self.kspace.sums()), Arg::I32(SUM_Q),
                    Arg::Buf(&*p),
                ])?;
            }
        }
        Ok(EwaldResult { energy: u, virial: w })
    }
}
