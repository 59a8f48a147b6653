//! Backend dispatch: the one module that knows every executor of a plan front and builds the
//! one chosen, so that `nufft` never imports `gpu::nufft` and `gpu` never imports
//! `nufft::NufftPlan` (both depend on the shared parameter layer [`crate::nufft::params`]
//! only).
//!
//! NUFFT: (type 1 or 2, [`Backend::Cpu`]) → [`CpuNufft`]; (type 1 or 2, [`Backend::Cuda`]) →
//! [`crate::gpu::nufft::CudaNufft`]; (type 3, [`Backend::Cpu`]) → [`Type3Plan`]; (type 3,
//! [`Backend::Cuda`]) → [`crate::gpu::type3::CudaType3`]. The backend is resolved once from `opts.backend`
//! ([`Backend::resolve`]: AUTO → CPU, CUDA without a device → [`crate::Error::NoDevice`]).

use crate::error::Result;
use crate::nufft::cpu::CpuNufft;
use crate::nufft::exec::NufftExec;
use crate::nufft::params::{Backend, NufftParams, Precision};
use crate::nufft::options::BackendChoice;
use crate::nufft::{NufftOpts, NufftPlan, Type3Plan};
use crate::real::Real;

impl<T: Real> NufftPlan<T> {
    /// Makes a plan.
    ///
    /// * `ty`: 1, 2 or 3 (type 3: [`Type3Plan`] on the CPU, `CudaType3` on CUDA; its points and target frequencies
    ///   are set by [`NufftPlan::setpts_type3`]); `dim`: 1–3;
    /// * `n_modes`: at least `dim` positive mode counts, x first (not read for type 3);
    /// * `iflag`: sign of the exponent (`≥ 0` → `+i`); `ntrans ≥ 1` vectors per execute;
    /// * `tol`: requested relative l2 accuracy, finite and > 0; below what `T` can give, or
    ///   below what the widest kernel reaches at the upsampling factor σ
    ///   ([`crate::kernel::Kernel::achievable_tol`]), it is clamped and
    ///   `FARFIELD_WARN_TOL_CLAMPED` is set in [`NufftPlan::info`] (whose `tol_used` holds the
    ///   value used);
    /// * `opts.backend`: AUTO and CPU run on the CPU, CUDA on device 0.
    ///
    /// Parameters (σ, kernel, fine grid) come from [`NufftParams::new`] and are the same on
    /// every backend. Limits, checked before anything is allocated or computed: per axis a fine
    /// grid of at most [`crate::nufft::params::MAX_FINE_AXIS`] points, in all at most
    /// [`crate::nufft::params::MAX_GRID_ELEMENTS`], and N1·N2·N3 and ntrans·N1·N2·N3 at most
    /// that too ([`crate::Error::Modes`]).
    ///
    /// Errors: [`crate::Error::Type`], [`crate::Error::NotSupported`], [`crate::Error::Dim`], [`crate::Error::Modes`],
    /// [`crate::Error::Tol`], [`crate::Error::InvalidArg`] (bad option, named), [`crate::Error::NoDevice`],
    /// [`crate::Error::Alloc`] (fine grid, mode tables, spreader, or no headroom for FFTW's planner),
    /// [`crate::Error::Fft`], device errors.
    pub fn new(ty: i32, dim: usize, n_modes: &[i64], iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<Self> {
        T::nufft_plan(ty, dim, n_modes, iflag, ntrans, tol, opts)
    }

    /// [`NufftPlan::new`]'s body, compiled in this crate for f32 and f64 ([`crate::instances`]).
    pub(crate) fn new_impl(ty: i32, dim: usize, n_modes: &[i64], iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<Self> {
        // validation first (so that a bad argument is reported as such on a machine without a
        // device), then the backend, then the executor
        if ty == 3 {
            // type 3 sizes its grids from the points (at setpts); n_modes is not read. The
            // arguments are checked before the backend (as for types 1 and 2).
            crate::nufft::type3::Type3Params::new::<T>(dim, iflag, ntrans, tol, opts)?;
            let backend = Backend::resolve(opts.backend, "NUFFT type 3")?;
            let exec: Box<dyn NufftExec<T>> = match backend {
                Backend::Cpu => Box::new(Type3Plan::<T>::new(dim, iflag, ntrans, tol,
                                                             &NufftOpts { backend: BackendChoice::Cpu, ..opts.clone() })?),
                Backend::Cuda => crate::gpu::type3::CudaType3::<T>::boxed(dim, iflag, ntrans, tol, opts)?,
            };
            return Ok(NufftPlan::from_exec(3, dim, ntrans, backend, opts, exec));
        }
        let prec = Precision::of::<T>();
        NufftParams::new(ty, dim, n_modes, iflag, ntrans, tol, prec, opts, Backend::Cpu)?;
        let backend = Backend::resolve(opts.backend, "NUFFT plans")?;
        let params = NufftParams::new(ty, dim, n_modes, iflag, ntrans, tol, prec, opts, backend)?;
        let exec: Box<dyn NufftExec<T>> = match backend {
            Backend::Cpu => Box::new(CpuNufft::<T>::new(params, opts)?),
            Backend::Cuda => crate::gpu::nufft::CudaNufft::<T>::boxed(params, opts)?,
        };
        Ok(NufftPlan::from_exec(ty, dim, ntrans, backend, opts, exec))
    }
}


#[cfg(test)]
mod tests {
    /// Non-comment lines of the `.rs` files under `src/<dir>`.
    fn code_lines(dir: &str) -> Vec<(String, String)> {
        let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
        let mut out = Vec::new();
        let mut stack = vec![root];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.extension().is_some_and(|x| x == "rs") {
                    let text = std::fs::read_to_string(&p).unwrap();
                    for l in text.lines().filter(|l| !l.trim_start().starts_with("//")) {
                        out.push((p.display().to_string(), l.to_string()));
                    }
                }
            }
        }
        out
    }

    #[test]
    fn no_plan_import_cycle_between_nufft_and_gpu() {
        // nufft never reaches the GPU plan; gpu never reaches the NUFFT plan front (both use
        // nufft::params): the choice of backend is made here only
        for (file, line) in code_lines("nufft") {
            assert!(!line.contains("gpu::nufft"), "{file}: {line}");
        }
        for (file, line) in code_lines("gpu") {
            assert!(!line.contains("NufftPlan") && !line.contains("nufft::plan"), "{file}: {line}");
        }
    }
}
