//! The FMM plan front: the CPU FMM ([`CpuFmm`]) or the CUDA FMM ([`GpuFmm`], every stage on
//! the device, docs/design.md §5), chosen once at makeplan from `opts.backend`.

use crate::backend::{Backend, BackendChoice};
use crate::error::{Error, Result};
use crate::fmm::{periodic, Boundary, CpuFmm, FmmOpts, FmmStats, TreeKind};
use crate::gpu::cuda::CudaDevice;
use crate::gpu::device::Device;
use crate::gpu::fmm::{plan::GpuRun, GpuFmm};
use crate::pairs::{check_exclusions, Exclusions};
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
    /// Excluded and scaled pairs of a CPU plan (a CUDA plan keeps them on the device).
    excl: Exclusions,
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
                let mut g = GpuFmm::new(dev, cpu.boundary(), cpu.order(), opts.depth)?;
                g.set_host_threads(opts.nthreads)?;
                Some(g)
            }
        };
        Ok(FmmPlan { cpu, gpu, gpu_stats: None, excl: Exclusions::default() })
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

    /// Sets the excluded and scaled pairs (replacing earlier ones): pair `k` = `pairs[k]`
    /// (0-based particle indices of the next executes, unordered; each below 2³² − 1 here and
    /// below `n` at execute) interacts as `scales[k] q_i q_j / r` instead of `q_i q_j / r`
    /// (`scales = None`: 0, the pair excluded), the nearest image under periodic boundaries;
    /// the plan subtracts `(1 − s)` of each pair's interaction from the potentials, fields and
    /// energy after the FMM sum (`crate::fmm`'s module `exclusions`; the same on the CPU and
    /// the device). The list semantics are the Ewald plans' ([`crate::ewald::CpuEwald::set_exclusions_scaled`]):
    /// a pair listed several times with the same scale counts once, scale-1 pairs are dropped,
    /// an empty list clears. Coincident particles are refused at execute whatever the list
    /// says. Errors: [`Error::InvalidArg`] (a negative or too large index, a pair `(i, i)`, a
    /// pair with two scales, a `scales` array of another length: named), [`Error::NonFinite`]
    /// (a scale), [`Error::Alloc`], device errors; on error the earlier list is kept.
    pub fn set_exclusions(&mut self, pairs: &[[i64; 2]], scales: Option<&[f64]>) -> Result<()> {
        match &mut self.gpu {
            Some(g) => g.set_exclusions(pairs, scales),
            None => {
                self.excl = Exclusions::new(pairs, scales, u32::MAX as usize)?;
                Ok(())
            }
        }
    }

    /// Number of distinct excluded and scaled pairs.
    pub fn n_exclusions(&self) -> usize {
        self.gpu.as_ref().map_or(self.excl.len(), |g| g.n_exclusions())
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
    /// Excluded and scaled pairs ([`Self::set_exclusions`]) are corrected for.
    ///
    /// Errors: [`Error::InvalidArg`] (slice lengths; an excluded pair with an index ≥ n),
    /// [`Error::NonFinite`] (a coordinate or charge NaN/Inf; the message names the index),
    /// [`Error::NPoints`] (more than 2³² − 1 particles), [`Error::Alloc`], device errors.
    pub fn execute(&mut self, xyz: &[f64], q: &[f64], mut phi: Option<&mut [f64]>, mut field: Option<&mut [f64]>) -> Result<f64> {
        let t = Instant::now();
        let Some(g) = &self.gpu else {
            check_exclusions(&self.excl.keys, q.len())?;
            let u = self.cpu.execute(xyz, q, phi.as_deref_mut(), field.as_deref_mut())?;
            if self.excl.is_empty() {
                return Ok(u);
            }
            return Ok(u + crate::fmm::exclusions::correct(&self.excl, self.cpu.boundary(), xyz, q, phi, field));
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
        self.gpu_stats = Some(FmmStats { depth: Some(run.depth), nleaves: run.nleaves, npoints: n, times: run.times, gpu_m2l_counts: c, gpu_tree_steps: run.tree_steps, ..base });
        if self.cpu.debug() > 0 {
            let tm = run.times;
            eprintln!(
                "farfield fmm (cuda): n = {n}, p = {}, D = {}, leaves = {}; device times [s]: tree {:.5} lists {:.5} p2m+m2m {:.5} m2l {:.5} l2l {:.5} l2p {:.5} p2p {:.5} post {:.5} total {:.5}; host {:.5}; tree steps [s]: {}",
                self.order(), run.depth, run.nleaves, tm.tree, tm.lists, tm.p2m, tm.m2l, tm.l2l, tm.l2p, tm.p2p, tm.post, tm.total,
                t.elapsed().as_secs_f64(),
                crate::fmm::GPU_TREE_STEPS.iter().zip(run.tree_steps).map(|(k, v)| format!("{k} {v:.5}")).collect::<Vec<_>>().join(", ")
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

    /// `n` particles in the unit cube (charges in [−1, 1), neutral), particle `3k + 1` bonded
    /// to `3k` (0.1 apart) and `3k + 2` at 0.25 from it; the pairs (3k, 3k+1) excluded,
    /// (3k, 3k+2) scaled by 0.5, (3k+1, 3k+2) by 1/1.2, and a pair across the periodic faces.
    fn bonded(n: usize) -> (Vec<f64>, Vec<f64>, Vec<[i64; 2]>, Vec<f64>) {
        use rand::{Rng, SeedableRng};
        let mut r = rand_pcg::Pcg64::seed_from_u64(5);
        let mut xyz: Vec<f64> = (0..3 * n).map(|_| r.gen_range(0.05..0.7)).collect();
        let mut q: Vec<f64> = (0..n).map(|_| r.gen_range(-1.0..1.0)).collect();
        let m = q.iter().sum::<f64>() / n as f64;
        q.iter_mut().for_each(|v| *v -= m);
        let (mut pairs, mut scales) = (Vec::new(), Vec::new());
        for k in 0..n / 3 - 1 {
            for a in 0..3 {
                xyz[3 * (3 * k + 1) + a] = xyz[9 * k + a] + if a == k % 3 { 0.1 } else { 0.0 };
                xyz[3 * (3 * k + 2) + a] = xyz[9 * k + a] + if a == (k + 1) % 3 { 0.25 } else { 0.0 };
            }
            let i = 3 * k as i64;
            pairs.extend([[i, i + 1], [i + 2, i], [i + 1, i + 2]]);
            scales.extend([0.0, 0.5, 1.0 / 1.2]);
        }
        // the last two particles at opposite faces: 0.04 apart through the periodic boundary
        let (a, b) = (n - 2, n - 1);
        xyz[3 * a..3 * a + 3].copy_from_slice(&[0.02, 0.5, 0.9]);
        xyz[3 * b..3 * b + 3].copy_from_slice(&[0.98, 0.5, 0.9]);
        pairs.push([a as i64, b as i64]);
        scales.push(0.0);
        (xyz, q, pairs, scales)
    }

    /// Excluded and scaled pairs on the CPU: open boundaries against direct sums in which each
    /// listed pair enters with its scale; periodic boundaries against the plan without the list
    /// minus each pair's nearest-image `(1 − s) q q / r`, computed here; the index check at
    /// execute and the list's own checks (the earlier list kept).
    #[test]
    fn exclusions_and_scaled_pairs() {
        let n = 90;
        let (xyz, q, pairs, scales) = bonded(n);
        let scale_of = |i: usize, j: usize| {
            pairs.iter().zip(&scales).find(|(p, _)| (p[0] as usize, p[1] as usize) == (i, j) || (p[0] as usize, p[1] as usize) == (j, i)).map_or(1.0, |(_, &s)| s)
        };
        // open: direct sums with the scales
        let (mut phi0, mut e0) = (vec![0.0; n], vec![0.0; 3 * n]);
        for i in 0..n {
            for j in (0..n).filter(|&j| j != i) {
                let d: [f64; 3] = std::array::from_fn(|a| xyz[3 * i + a] - xyz[3 * j + a]);
                let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                let s = scale_of(i, j);
                phi0[i] += s * q[j] / r;
                for a in 0..3 {
                    e0[3 * i + a] += s * q[j] * d[a] / (r * r * r);
                }
            }
        }
        let u0 = 0.5 * q.iter().zip(&phi0).map(|(a, b)| a * b).sum::<f64>();
        let mut p = FmmPlan::new(Boundary::Open, 1e-10, &FmmOpts::default()).unwrap();
        p.set_exclusions(&pairs, Some(&scales)).unwrap();
        assert_eq!(p.n_exclusions(), pairs.len());
        let (mut phi, mut e) = (vec![0.0; n], vec![0.0; 3 * n]);
        let u = p.execute(&xyz, &q, Some(&mut phi), Some(&mut e)).unwrap();
        let rel = |a: &[f64], b: &[f64]| {
            (a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>() / b.iter().map(|y| y * y).sum::<f64>()).sqrt()
        };
        assert!(rel(&phi, &phi0) < 1e-9 && rel(&e, &e0) < 1e-9 && ((u - u0) / u0).abs() < 1e-9, "{} {} {u} {u0}", rel(&phi, &phi0), rel(&e, &e0));
        // the energy alone (no outputs) carries the same correction
        assert!((p.execute(&xyz, &q, None, None).unwrap() - u).abs() <= 1e-12 * u.abs());
        // periodic: the sum without the list, then each pair's nearest image removed here
        let per = Boundary::Periodic { side: 1.0 };
        let mut all = FmmPlan::new(per, 1e-10, &FmmOpts::default()).unwrap();
        let (mut phi1, mut e1) = (vec![0.0; n], vec![0.0; 3 * n]);
        let mut u1 = all.execute(&xyz, &q, Some(&mut phi1), Some(&mut e1)).unwrap();
        for (pr, &s) in pairs.iter().zip(&scales) {
            let (i, j) = (pr[0] as usize, pr[1] as usize);
            let d: [f64; 3] = std::array::from_fn(|a| {
                let v = xyz[3 * i + a] - xyz[3 * j + a];
                v - v.round()
            });
            let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            let w = 1.0 - s;
            phi1[i] -= w * q[j] / r;
            phi1[j] -= w * q[i] / r;
            for a in 0..3 {
                e1[3 * i + a] -= w * q[j] * d[a] / (r * r * r);
                e1[3 * j + a] += w * q[i] * d[a] / (r * r * r);
            }
            u1 -= w * q[i] * q[j] / r;
        }
        let mut p = FmmPlan::new(per, 1e-10, &FmmOpts::default()).unwrap();
        // unordered, repeated pairs count once
        let mut twice = pairs.clone();
        twice.extend(pairs.iter().map(|p| [p[1], p[0]]));
        let mut sc2 = scales.clone();
        sc2.extend(&scales);
        p.set_exclusions(&twice, Some(&sc2)).unwrap();
        assert_eq!(p.n_exclusions(), pairs.len());
        let u = p.execute(&xyz, &q, Some(&mut phi), Some(&mut e)).unwrap();
        assert!(rel(&phi, &phi1) < 1e-13 && rel(&e, &e1) < 1e-13 && ((u - u1) / u1).abs() < 1e-13, "{} {} {u} {u1}", rel(&phi, &phi1), rel(&e, &e1));
        // an index ≥ n at execute; the list's own checks keep the earlier list
        assert!(matches!(p.execute(&xyz[..3 * (n - 1)], &q[..n - 1], None, None), Err(Error::InvalidArg(m)) if m.contains("exclusion pair")));
        assert!(matches!(p.set_exclusions(&[[0, 1], [1, 0]], Some(&[0.0, 0.5])), Err(Error::InvalidArg(m)) if m.contains("two scales")));
        assert!(matches!(p.set_exclusions(&[[2, 2]], None), Err(Error::InvalidArg(_))));
        assert!(matches!(p.set_exclusions(&[[0, 1]], Some(&[f64::NAN])), Err(Error::NonFinite(_))));
        assert_eq!(p.n_exclusions(), pairs.len());
        p.set_exclusions(&[], None).unwrap();
        let (u2, u3) = (p.execute(&xyz, &q, None, None).unwrap(), all.execute(&xyz, &q, None, None).unwrap());
        assert!((u2 - u3).abs() <= 1e-14 * u3.abs(), "cleared list: {u2} vs {u3}");
    }
}
