//! The FMM plan front: the CPU FMM ([`CpuFmm`]) or the CUDA FMM ([`GpuFmm`], every stage on
//! the device, docs/design.md §5), chosen once at makeplan from `opts.backend`.

use crate::backend::{Backend, BackendChoice};
use crate::error::{Error, Result};
use crate::fmm::{periodic, Boundary, CpuFmm, FmmOpts, FmmStats, TreeKind};
use crate::gpu::cuda::CudaDevice;
use crate::gpu::device::Device;
use crate::gpu::fmm::{plan::GpuRun, GpuFmm};
use std::time::Instant;

/// An FMM plan for the Coulomb kernel `1/r` (the method, its accuracy and its units: the
/// module docs of [`crate::fmm`]); `execute` may be called any number of times with any
/// particles.
pub struct FmmPlan {
    cpu: CpuFmm,
    /// The GPU plan of a CUDA-backend plan (then every execute runs there).
    gpu: Option<GpuFmm<CudaDevice>>,
    /// Statistics of the last GPU execute (CPU plans report the CPU plan's).
    gpu_stats: Option<FmmStats>,
}

impl FmmPlan {
    /// Makes a plan on the backend of `opts.backend` (AUTO = the CPU until the CUDA FMM has
    /// been timed on hardware). Errors: [`Error::Tol`] (tol not in (0, 1)),
    /// [`Error::InvalidArg`] (box side not finite and positive, a rectangular box without a
    /// common cube side ([`Boundary::PeriodicBox`]), order or depth too large, a stream with
    /// a CPU plan), [`Error::NotSupported`] (with the CUDA backend: a rectangular periodic box,
    /// the adaptive tree), [`Error::NoDevice`] (CUDA without a device), device errors.
    pub fn new(boundary: Boundary, tol: f64, opts: &FmmOpts) -> Result<Self> {
        let cpu = CpuFmm::new(boundary, tol, opts)?;
        let cuda = opts.backend == BackendChoice::Cuda;
        if !cuda && opts.gpu_stream.is_some() {
            return Err(Error::InvalidArg(
                "opts.gpu_stream is set but the plan runs on the CPU (backend AUTO or CPU): a stream needs backend CUDA".into(),
            ));
        }
        if cuda {
            if let Boundary::PeriodicBox { sides } = boundary.normalized() {
                if periodic::cube_cells(sides).is_some() {
                    return Err(Error::NotSupported("rectangular periodic boxes (Boundary::PeriodicBox) run on the CPU only; use backend CPU or AUTO".into()));
                }
            }
            if let TreeKind::Adaptive { .. } = opts.tree {
                return Err(Error::NotSupported("the adaptive tree (max_leaf) runs on the CPU only; use backend CPU or AUTO".into()));
            }
        }
        let gpu = match crate::gpu::runtime::resolve(opts.backend, "FMM plans")? {
            Backend::Cpu => None,
            Backend::Cuda => {
                let dev = CudaDevice::for_plan("FMM plans", opts.gpu_stream, opts.debug.max(0) as u32)?;
                Some(GpuFmm::new(dev, cpu.boundary(), cpu.order(), opts.depth)?)
            }
        };
        Ok(FmmPlan { cpu, gpu, gpu_stats: None })
    }

    /// Expansion order.
    pub fn order(&self) -> usize {
        self.cpu.order()
    }

    /// The requested tolerance.
    pub fn tol(&self) -> f64 {
        self.cpu.tol()
    }

    /// Boundary conditions (a [`Boundary::PeriodicBox`] with equal sides is reported as the
    /// [`Boundary::Periodic`] it is, see [`Boundary::normalized`]).
    pub fn boundary(&self) -> Boundary {
        self.cpu.boundary()
    }

    /// Parameters and statistics of the last execute.
    pub fn stats(&self) -> FmmStats {
        self.gpu_stats.unwrap_or_else(|| self.cpu.stats())
    }

    /// Reserves the plan's work arrays for `n` particles (with the field buffers if `field`);
    /// [`Self::execute`] does this itself, before reading its inputs. A CUDA plan allocates on
    /// the device per execute. Errors: [`Error::NPoints`], [`Error::Alloc`].
    pub fn reserve(&mut self, n: usize, field: bool) -> Result<()> {
        if self.gpu.is_some() {
            return crate::fmm::check_count(n);
        }
        self.cpu.reserve(n, field)
    }

    /// The GPU plan of a CUDA-backend plan (to choose its M2L kernel), `None` on the CPU.
    pub fn gpu(&mut self) -> Option<&mut GpuFmm<CudaDevice>> {
        self.gpu.as_mut()
    }

    /// Computes potentials (`phi`, length `n`), fields (`field`, length `3n`, interleaved) and
    /// returns the energy `½ Σ q_i φ_i`, for `n = q.len()` particles at `xyz` (length `3n`), on
    /// the plan's backend. `n = 0` is a valid no-op (energy 0). Outputs are written only on
    /// success.
    ///
    /// Errors: [`Error::InvalidArg`] (slice lengths), [`Error::NonFinite`] (a coordinate or
    /// charge NaN/Inf; the message names the index), [`Error::NPoints`] (more than 2³² − 1
    /// particles), [`Error::Alloc`], device errors.
    pub fn execute(&mut self, xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>) -> Result<f64> {
        let t = Instant::now();
        let Some(g) = &self.gpu else {
            return self.cpu.execute(xyz, q, phi, field);
        };
        let run = g.execute(xyz, q, phi, field)?;
        self.record_gpu_run(q.len(), &run, t);
        Ok(run.energy)
    }

    /// [`Self::execute`] with **device** arrays of a CUDA-backend plan: `n` particles, `xyz`
    /// (f64[3n] interleaved), `q` (f64[n]) and the outputs `phi` (f64[n]) and `field`
    /// (f64[3n] interleaved, `−∇φ`) as device addresses of device 0's primary context, 0 for
    /// an output not wanted. The work runs on the plan's stream; the call returns when it is
    /// done (the result checks need the values), with the energy. Outputs are written only on
    /// success.
    ///
    /// Errors: [`Error::InvalidArg`] (a CPU plan), [`Error::NullPointer`] (`xyz` or `q` is 0
    /// with `n > 0`), [`Error::NPoints`], and those of [`Self::execute`].
    ///
    /// # Safety
    /// Each non-zero address must be a device allocation of device 0 holding the stated
    /// number of doubles, the outputs not overlapping the inputs or each other.
    pub unsafe fn execute_device(&mut self, n: usize, xyz: u64, q: u64, phi: u64, field: u64) -> Result<f64> {
        let Some(g) = &self.gpu else {
            return Err(Error::InvalidArg("execute_device needs a plan with backend CUDA; this plan runs on the CPU".into()));
        };
        crate::fmm::check_count(n)?;
        if n > 0 && (xyz == 0 || q == 0) {
            return Err(Error::NullPointer(format!("{} is NULL with n = {n}", if xyz == 0 { "xyz" } else { "q" })));
        }
        let t = Instant::now();
        let run = if n == 0 {
            Ok(GpuRun::default())
        } else {
            let dev = g.device();
            dev.with_foreign(xyz, 24 * n, |x| {
                dev.with_foreign(q, 8 * n, |c| {
                    dev.with_foreign_opt(phi, 8 * n, |ph| dev.with_foreign_opt(field, 24 * n, |fd| g.execute_dev(x, c, n, ph, fd)))
                })
            })
        }?;
        self.record_gpu_run(n, &run, t);
        Ok(run.energy)
    }

    /// Statistics and the debug line of a GPU execute.
    fn record_gpu_run(&mut self, n: usize, run: &GpuRun, t: Instant) {
        let c = run.m2l_counts.map(|c| [c.operator_loads, c.complex_mults]);
        let base = self.cpu.stats();
        self.gpu_stats = Some(FmmStats { depth: Some(run.depth), nleaves: run.nleaves, npoints: n, times: run.times, gpu_m2l_counts: c, ..base });
        if self.cpu.debug() > 0 {
            let tm = run.times;
            eprintln!(
                "farfield fmm (cuda): n = {n}, p = {}, D = {}, leaves = {}; device times [s]: tree {:.5} lists {:.5} p2m+m2m {:.5} m2l {:.5} l2l {:.5} l2p {:.5} p2p {:.5} post {:.5} total {:.5}; host {:.5}",
                self.order(), run.depth, run.nleaves, tm.tree, tm.lists, tm.p2m, tm.m2l, tm.l2l, tm.l2p, tm.p2p, tm.post, tm.total,
                t.elapsed().as_secs_f64()
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_checks_of_the_front() {
        let cuda = FmmOpts { backend: BackendChoice::Cuda, ..Default::default() };
        let rect = Boundary::PeriodicBox { sides: [2.0, 1.0, 1.0] };
        assert!(matches!(FmmPlan::new(rect, 1e-6, &cuda), Err(Error::NotSupported(_))));
        let adaptive = FmmOpts { tree: TreeKind::Adaptive { max_leaf: 0 }, ..cuda };
        assert!(matches!(FmmPlan::new(Boundary::Open, 1e-6, &adaptive), Err(Error::NotSupported(_))));
        // SAFETY: the stream is never used: the plan is refused before any device work
        let stream = unsafe { crate::backend::GpuStream::from_raw(0x10) };
        let cpu_with_stream = FmmOpts { gpu_stream: stream, ..Default::default() };
        assert!(matches!(FmmPlan::new(Boundary::Open, 1e-6, &cpu_with_stream), Err(Error::InvalidArg(m)) if m.contains("gpu_stream")));
        // the CPU front equals the CPU plan
        let xyz = [0.1, 0.2, 0.3, 0.7, 0.4, 0.9, 0.5, 0.5, 0.1];
        let q = [1.0, -0.5, 0.25];
        let e1 = FmmPlan::new(Boundary::Open, 1e-6, &FmmOpts::default()).unwrap().execute(&xyz, &q, None, None).unwrap();
        let e2 = CpuFmm::new(Boundary::Open, 1e-6, &FmmOpts::default()).unwrap().execute(&xyz, &q, None, None).unwrap();
        assert_eq!(e1, e2);
    }
}
