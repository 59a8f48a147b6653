//! The GPU FMM plan: the stages of [`crate::fmm::CpuFmm::execute`] on one device stream, in
//! the CPU's order (docs/design.md §5.6):
//!
//! 1. [`tree::build`]: input checks, root cube, depth, sorted particles, levels;
//! 2. interaction lists ([`ops::p2p_lists`], [`m2l::m2l_lists`]);
//! 3. upward pass ([`ops::upward`]: P2M, M2M), M2L with the lattice operator
//!    ([`m2l::m2l`]), downward pass ([`ops::downward`]: L2L), [`ops::l2p`];
//! 4. [`ops::p2p`];
//! 5. [`ops::finish`]: periodic background term, the caller's units (checked before anything
//!    is written) and order, the energy.
//!
//! Stage times come from marks in the stream ([`Device::mark`]: CUDA events), read once at
//! the end, so the stages are not serialised with the host.

use super::m2l::{self, M2lCounts, M2lMethod, M2lTables};
use super::ops::{self, OpTables};
use super::{tree, SortedOut};
use crate::error::{Error, Result};
use crate::fmm::{Boundary, StageTimes};
use crate::gpu::device::{download_vec, upload_new, Device};
use crate::gpu::pairs::DevicePairs;
use crate::pairs::{check_exclusions, Exclusions};
use crate::threads::Threads;

/// What one GPU execute did.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct GpuRun {
    /// Energy `½ Σ q_i φ_i` in the caller's units.
    pub energy: f64,
    /// Depth `D` of the tree.
    pub depth: usize,
    /// Occupied leaves.
    pub nleaves: usize,
    /// Stage times (seconds of device work between the stage marks; `lists` covers both
    /// interaction lists, `post` the finish stage, `total` the whole execute).
    pub times: StageTimes,
    /// What the M2L pass costs with the plain and with the symmetric kernel (operator
    /// coefficients loaded, complex multiplications; the seed paper's Fig. 18), from the lists
    /// of this execute; zero without a far field.
    pub m2l_counts: [M2lCounts; 2],
    /// The tree stage split into the steps [`crate::fmm::GPU_TREE_STEPS`] (seconds between
    /// stream marks; they add up to `times.tree`).
    pub tree_steps: [f64; crate::fmm::GPU_TREE_STEPS.len()],
}

/// A GPU FMM plan of order `p` on one device handle (its stream): boundary, the per-order
/// operator tables on the device; `execute*` may be called any number of times with any
/// particles.
pub struct GpuFmm<D: Device> {
    dev: D,
    boundary: Boundary,
    p: usize,
    depth: Option<usize>,
    method: M2lMethod,
    ops: OpTables<D>,
    m2l: M2lTables<D>,
    /// Excluded and scaled pairs (`crate::fmm`'s module `exclusions`), CSR on the device.
    pairs: DevicePairs<D>,
    /// Host threads of the tree's root-cube choice ([`Self::set_host_threads`]).
    threads: Threads,
}

impl<D: Device> GpuFmm<D> {
    /// Uploads the operator tables of order `p` (`1 ≤ p ≤ 40`) for `boundary` (periodic: the
    /// level-1 lattice tensors too). `depth`: the tree depth, or `None` for the CPU's cost
    /// model at every execute. Errors: [`Error::InvalidArg`] (order, depth, periodic side),
    /// [`Error::Range`] (a subnormal side), [`Error::Alloc`] (device memory).
    pub fn new(dev: D, boundary: Boundary, p: usize, depth: Option<usize>) -> Result<Self> {
        if p == 0 || p > crate::fmm::params::MAX_ORDER {
            return Err(Error::InvalidArg(format!("order p = {p}; must be 1..={}", crate::fmm::params::MAX_ORDER)));
        }
        let boundary = boundary.normalized();
        crate::fmm::check_boundary(boundary)?;
        if let Boundary::PeriodicBox { .. } = boundary {
            return Err(Error::NotSupported("rectangular periodic boxes (Boundary::PeriodicBox) run on the CPU only".into()));
        }
        crate::fmm::check_depth(depth)?;
        let periodic = matches!(boundary, Boundary::Periodic { .. });
        let ops = OpTables::new(&dev, p)?;
        let m2l = M2lTables::new(&dev, p, periodic)?;
        let pairs = DevicePairs::new(&dev)?;
        Ok(GpuFmm { dev, boundary, p, depth, method: M2lMethod::default(), ops, m2l, pairs, threads: Threads::new(1)? })
    }

    /// The device handle.
    pub fn device(&self) -> &D {
        &self.dev
    }

    /// Expansion order `p`.
    pub fn order(&self) -> usize {
        self.p
    }

    /// Chooses the M2L kernel (default [`M2lMethod::Plain`], the faster on hardware so far).
    pub fn set_m2l_method(&mut self, method: M2lMethod) {
        self.method = method;
    }

    /// Sets the host threads (`0` = all cores; default 1) on which each execute chooses the
    /// tree's root cube from the downloaded sample (`crate::fmm::tree::open_cube_strided`,
    /// `periodic_origin_strided`: up to 99 measures over ≤ 4096 particles, a few ms on one
    /// core). Errors: those of [`Threads::new`].
    pub fn set_host_threads(&mut self, nthreads: usize) -> Result<()> {
        self.threads = Threads::new(nthreads)?;
        Ok(())
    }

    /// The M2L kernel in use.
    pub fn m2l_method(&self) -> M2lMethod {
        self.method
    }

    /// Replaces the excluded and scaled pairs, as [`crate::plans::FmmPlan::set_exclusions`]
    /// (indices checked here against `0 … 2³² − 2`, against `n` at execute): their corrections
    /// are applied on the device before the range checks and the energy. Errors:
    /// [`Error::InvalidArg`], [`Error::NonFinite`] (the list's checks), [`Error::Alloc`] and
    /// device errors; on error the earlier list is kept.
    pub fn set_exclusions(&mut self, pairs: &[[i64; 2]], scales: Option<&[f64]>) -> Result<()> {
        self.pairs.set(&self.dev, Exclusions::new(pairs, scales, u32::MAX as usize)?)
    }

    /// Number of distinct excluded and scaled pairs.
    pub fn n_exclusions(&self) -> usize {
        self.pairs.host.len()
    }

    /// Computes, for `n` particles given on the device (`xyz` f64[3n] interleaved, `q` f64[n],
    /// caller's order and units), the potentials into `phi` (f64[n]) and the field `−∇φ` into
    /// `field` (f64[3n] interleaved), caller's order, each when given; returns the energy and
    /// the stage times. Outputs are written only on success. `n = 0`: nothing to do.
    ///
    /// Errors: those of [`crate::fmm::CpuFmm::execute`] ([`Error::NonFinite`],
    /// [`Error::InvalidArg`] for coincident particles, [`Error::Range`], [`Error::NPoints`]),
    /// [`Error::Alloc`] for device memory, device errors.
    pub fn execute_dev(&self, xyz: &D::Buf, q: &D::Buf, n: usize, phi: Option<&mut D::Buf>, field: Option<&mut D::Buf>) -> Result<GpuRun> {
        check_exclusions(&self.pairs.host.keys, n)?;
        if n == 0 {
            return Ok(GpuRun::default());
        }
        let dev = &self.dev;
        let want_field = field.is_some();
        let m0 = dev.mark()?;
        let mut tree_marks = Vec::with_capacity(crate::fmm::GPU_TREE_STEPS.len());
        let tree = tree::build(dev, &self.threads, xyz, q, n, self.boundary, self.p, self.depth, &mut tree_marks)?;
        let m_tree = dev.mark()?;
        let top = if tree.periodic { 1 } else { 2 };
        let far = tree.depth >= top;
        let p2p_lists = ops::p2p_lists(dev, &tree)?;
        let m2l_lists = if far { Some(m2l::m2l_lists(dev, &tree, top)?) } else { None };
        let m_lists = dev.mark()?;
        let m2l_counts = m2l_lists
            .as_ref()
            .map_or([M2lCounts::default(); 2], |l| [m2l::m2l_counts(l, &self.m2l, M2lMethod::Plain), m2l::m2l_counts(l, &self.m2l, M2lMethod::Symmetric)]);
        let mut out = SortedOut::zeroed(dev, n, want_field)?;
        let mut marks = Vec::with_capacity(5);
        if let Some(lists) = &m2l_lists {
            let mp = ops::upward(dev, &self.ops, &tree, top)?;
            marks.push(dev.mark()?);
            let mut loc = m2l::m2l(dev, &self.m2l, lists, &tree, &mp, self.method)?;
            drop(mp);
            marks.push(dev.mark()?);
            ops::downward(dev, &self.ops, &tree, &mut loc)?;
            marks.push(dev.mark()?);
            ops::l2p(dev, &self.ops, &tree, &loc, &mut out)?;
            marks.push(dev.mark()?);
        }
        ops::p2p(dev, &tree, &p2p_lists, &mut out)?;
        let m_p2p = dev.mark()?;
        let energy = ops::finish(dev, &tree, &mut out, &self.pairs, phi, field)?;
        let m_end = dev.mark()?;
        let s = |a: &D::Mark, b: &D::Mark| dev.seconds(a, b);
        let mut times = StageTimes { tree: s(&m0, &m_tree)?, lists: s(&m_tree, &m_lists)?, ..Default::default() };
        let last_far = if let [up, m2l, l2l, l2p] = &marks[..] {
            // P2M and M2M run as one upward pass: its time is reported under p2m
            times.p2m = s(&m_lists, up)?;
            times.m2l = s(up, m2l)?;
            times.l2l = s(m2l, l2l)?;
            times.l2p = s(l2l, l2p)?;
            l2p
        } else {
            &m_lists
        };
        times.p2p = s(last_far, &m_p2p)?;
        times.post = s(&m_p2p, &m_end)?;
        times.total = s(&m0, &m_end)?;
        let mut tree_steps = [0.0; crate::fmm::GPU_TREE_STEPS.len()];
        let mut prev = &m0;
        for (t, m) in tree_steps.iter_mut().zip(&tree_marks) {
            *t = s(prev, m)?;
            prev = m;
        }
        Ok(GpuRun { energy, depth: tree.depth, nleaves: tree.nleaves(), times, m2l_counts, tree_steps })
    }

    /// [`Self::execute_dev`] for host arrays (`xyz` of `3n`, `q` of `n = q.len()`, `phi` of `n`,
    /// `field` of `3n`): uploads, runs, downloads; the outputs are written only on success.
    /// Errors: [`Error::InvalidArg`] (lengths), those of [`Self::execute_dev`].
    pub fn execute(&self, xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>) -> Result<GpuRun> {
        let n = q.len();
        if xyz.len() != 3 * n {
            return Err(Error::InvalidArg(format!("xyz has {} values; expected 3n = {}", xyz.len(), 3 * n)));
        }
        if phi.as_ref().is_some_and(|v| v.len() != n) || field.as_ref().is_some_and(|v| v.len() != 3 * n) {
            return Err(Error::InvalidArg(format!("phi must have n = {n} values and field 3n = {}", 3 * n)));
        }
        if n == 0 {
            return Ok(GpuRun::default());
        }
        let dev = &self.dev;
        let (x, c) = (upload_new(dev, xyz)?, upload_new(dev, q)?);
        // only the requested outputs go to the device and back
        let mut phi_d = if phi.is_some() { Some(dev.alloc(8 * n)?) } else { None };
        let mut field_d = if field.is_some() { Some(dev.alloc(24 * n)?) } else { None };
        let run = self.execute_dev(&x, &c, n, phi_d.as_mut(), field_d.as_mut())?;
        let down = |b: &Option<D::Buf>, len: usize| b.as_ref().map(|b| download_vec::<D, f64>(dev, b, len)).transpose();
        let (ph, fd) = (down(&phi_d, n)?, down(&field_d, 3 * n)?);
        if let (Some(o), Some(v)) = (phi, ph) {
            o.copy_from_slice(&v);
        }
        if let (Some(o), Some(v)) = (field, fd) {
            o.copy_from_slice(&v);
        }
        Ok(run)
    }
}
