//! The Ewald plan front: the CPU plan ([`CpuEwald`]: spectral Ewald, SPME, the classic Ewald
//! sum), the CUDA plan ([`GpuEwaldExec`]: spectral Ewald and SPME on one device stream,
//! docs/design.md §5.7–5.8) chosen once at makeplan from `opts.backend`, or the distributed
//! SPME over MPI ([`crate::ewald::dist::DistEwaldPlan`], feature `mpi`, made by that type and
//! wrapped here with `From`).

use crate::backend::{Backend, BackendChoice};
use crate::error::{Error, Result};
use crate::ewald::{CpuEwald, EwaldOpts, EwaldParams, EwaldResult, Method};
use crate::gpu::cuda::CudaDevice;
use crate::gpu::ewald::GpuEwaldExec;
use crate::gpu::spread::GpuSpreadOpts;

/// What a plan runs on.
enum Exec {
    Cpu(CpuEwald),
    Cuda(GpuEwaldExec<CudaDevice>),
    #[cfg(feature = "mpi")]
    Dist(crate::ewald::dist::DistEwaldPlan),
}

/// An Ewald plan for point charges in a periodic cell (methods, conventions, units and the
/// error model: the module docs of [`crate::ewald`]); `execute_with` may be called any number
/// of times.
pub struct EwaldPlan {
    exec: Exec,
}

impl EwaldPlan {
    /// Makes a plan on the backend of `opts.backend` for `method`, the cell `cell` (rows a, b,
    /// c; lower-triangular), at most `n_max` charges per execute and the relative RMS force
    /// tolerance `tol`. The parameters are those of the CPU plan on either backend.
    ///
    /// Errors: those of [`CpuEwald::new`]; [`Error::InvalidArg`] (a GPU option —
    /// `gpu_mixed`, `gpu_method`, `gpu_stream` — set on a plan that runs on the CPU);
    /// [`Error::NotSupported`] (the direct sum with backend CUDA); [`Error::NoDevice`];
    /// device errors. The arguments are checked before the device is looked for.
    pub fn new(method: Method, cell: &[f64; 9], n_max: usize, tol: f64, opts: &EwaldOpts) -> Result<Self> {
        if opts.backend == BackendChoice::Cuda {
            // the arguments first (their own status on a machine without a device), then the
            // method, then the device
            crate::ewald::setup(method, cell, n_max, tol, opts)?;
            if method == Method::Direct {
                return Err(Error::NotSupported(
                    "method = FARFIELD_EWALD_DIRECT has no CUDA path; use SPME or spectral Ewald, or backend CPU".into(),
                ));
            }
        } else {
            no_gpu_options(opts)?;
        }
        let exec = match crate::gpu::runtime::resolve(opts.backend, "Ewald plans")? {
            Backend::Cpu => Exec::Cpu(CpuEwald::new(method, cell, n_max, tol, opts)?),
            Backend::Cuda => {
                let dev = CudaDevice::for_plan("Ewald plans", opts.gpu_stream, opts.debug.max(0) as u32)?;
                let sopts = GpuSpreadOpts { method: opts.gpu_method, ..GpuSpreadOpts::default() };
                Exec::Cuda(GpuEwaldExec::new(dev, method, cell, n_max, tol, opts, sopts, opts.gpu_mixed)?)
            }
        };
        Ok(EwaldPlan { exec })
    }

    /// Checks the options of a distributed plan (made by `DistEwaldPlan::new`, then wrapped
    /// with `From`), before its first collective: [`Error::NotSupported`] for backend CUDA,
    /// [`Error::InvalidArg`] for a GPU option set.
    pub fn check_distributed_opts(opts: &EwaldOpts) -> Result<()> {
        if opts.backend == BackendChoice::Cuda {
            return Err(Error::NotSupported("distributed Ewald plans run on the CPU (opts.backend CUDA is not supported)".into()));
        }
        no_gpu_options(opts)
    }

    /// Parameters in use and the timings of the last execute.
    pub fn params(&self) -> &EwaldParams {
        match &self.exec {
            Exec::Cpu(p) => p.params(),
            Exec::Cuda(g) => g.params(),
            #[cfg(feature = "mpi")]
            Exec::Dist(d) => d.params(),
        }
    }

    /// The method.
    pub fn method(&self) -> Method {
        match &self.exec {
            Exec::Cpu(p) => p.method(),
            Exec::Cuda(g) => g.method(),
            #[cfg(feature = "mpi")]
            Exec::Dist(d) => d.method(),
        }
    }

    /// Largest number of charges per execute (this rank's, for a distributed plan).
    pub fn n_max(&self) -> usize {
        match &self.exec {
            Exec::Cpu(p) => p.n_max(),
            Exec::Cuda(g) => g.n_max(),
            #[cfg(feature = "mpi")]
            Exec::Dist(d) => d.n_max(),
        }
    }

    /// Changes the cell (errors and the kept parameters: [`CpuEwald::set_box`]).
    pub fn set_box(&mut self, cell: &[f64; 9]) -> Result<()> {
        match &mut self.exec {
            Exec::Cpu(p) => p.set_box(cell),
            Exec::Cuda(g) => g.set_box(cell),
            #[cfg(feature = "mpi")]
            Exec::Dist(d) => d.set_box(cell),
        }
    }

    /// Sets the excluded pairs, each with its scale when `scales` is given (contracts:
    /// [`CpuEwald::set_exclusions`] and [`CpuEwald::set_exclusions_scaled`]; a distributed
    /// plan takes pairs of global ids, collectively).
    pub fn set_exclusions(&mut self, pairs: &[[i64; 2]], scales: Option<&[f64]>) -> Result<()> {
        match (&mut self.exec, scales) {
            (Exec::Cpu(p), None) => p.set_exclusions(pairs),
            (Exec::Cpu(p), Some(s)) => p.set_exclusions_scaled(pairs, s),
            (Exec::Cuda(g), s) => g.set_exclusions(pairs, s),
            #[cfg(feature = "mpi")]
            (Exec::Dist(d), None) => d.set_exclusions(pairs),
            #[cfg(feature = "mpi")]
            (Exec::Dist(d), Some(s)) => d.set_exclusions_scaled(pairs, s),
        }
    }

    /// Potentials, fields, and (when asked) the energy and virial of the charges `q` at `xyz`
    /// (host arrays; contract: [`CpuEwald::execute_with`]), on the plan's backend.
    pub fn execute_with(&mut self, xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>, energy: bool, virial: bool)
                        -> Result<EwaldResult> {
        match &mut self.exec {
            Exec::Cpu(p) => p.execute_with(xyz, q, phi, field, energy, virial),
            Exec::Cuda(g) => g.execute_host(xyz, q, phi, field, energy, virial),
            #[cfg(feature = "mpi")]
            Exec::Dist(d) => d.execute_with(xyz, q, phi, field, energy, virial),
        }
    }

    /// [`Self::execute_with`] on a distributed plan with the global id of each of this rank's
    /// charges (contract: `DistEwaldPlan::execute_ids`). Error: [`Error::InvalidArg`] on a
    /// single-process plan.
    #[allow(clippy::too_many_arguments)]
    pub fn execute_ids(&mut self, ids: &[i64], xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>, energy: bool,
                       virial: bool) -> Result<EwaldResult> {
        match &mut self.exec {
            #[cfg(feature = "mpi")]
            Exec::Dist(d) => d.execute_ids(Some(ids), xyz, q, phi, field, energy, virial),
            _ => {
                let _ = (ids, xyz, q, phi, field, energy, virial);
                Err(Error::InvalidArg(
                    "farfield_ewald_execute_ids needs a distributed plan (farfield_ewald_makeplan_mpi); a single-process plan \
                     indexes its charges by their position: use farfield_ewald_execute"
                        .into(),
                ))
            }
        }
    }

    /// On a distributed plan, makes a local failure `r` (of the caller's argument checks) a
    /// failure on every rank, so that no rank waits in the plan's collectives; other plans:
    /// `r` as it is.
    pub fn agree<T>(&self, r: Result<T>) -> Result<T> {
        match &self.exec {
            #[cfg(feature = "mpi")]
            Exec::Dist(d) => d.agree(r),
            _ => r,
        }
    }

    /// The CUDA plan of a CUDA-backend plan (device arrays: `GpuEwaldExec::execute_device`),
    /// `None` otherwise.
    pub fn cuda(&mut self) -> Option<&mut GpuEwaldExec<CudaDevice>> {
        match &mut self.exec {
            Exec::Cuda(g) => Some(g),
            _ => None,
        }
    }

    /// Whether the plan runs on the CPU (single process).
    pub fn is_cpu(&self) -> bool {
        matches!(self.exec, Exec::Cpu(_))
    }
}

/// A plan on the CPU takes no GPU option: [`Error::InvalidArg`] naming the first one set.
fn no_gpu_options(opts: &EwaldOpts) -> Result<()> {
    for (name, set) in [("gpu_stream", opts.gpu_stream.is_some()), ("gpu_precision", opts.gpu_mixed), ("gpu_method", opts.gpu_method.is_some())] {
        if set {
            return Err(Error::InvalidArg(format!("opts.{name} is set but the plan runs on the CPU (backend AUTO or CPU): it needs backend CUDA")));
        }
    }
    Ok(())
}

#[cfg(feature = "mpi")]
impl From<crate::ewald::dist::DistEwaldPlan> for EwaldPlan {
    fn from(p: crate::ewald::dist::DistEwaldPlan) -> Self {
        EwaldPlan { exec: Exec::Dist(p) }
    }
}
