//! CUDA fast multipole method (seed paper: Kohnke, Kutzner, Grubmüller et al., "A CUDA fast
//! multipole method with highly efficient M2L far field evaluation", Int. J. HPC Appl. 35, 97
//! (2021)): every stage of [`crate::fmm`] on the device, over the [`Device`] trait, so that
//! the whole pipeline also runs on the CUDA-on-CPU emulator (docs/design.md §5.3).
//!
//! The GPU port keeps the CPU FMM's conventions so that both give the same answer for the
//! same order `p` and depth `D`: the tree in units of the root cube (bounding cube or periodic
//! box, chosen by the same rules), particles sorted by their 60-bit Morton keys (stable, ties
//! by the caller's index), occupied boxes per level in Morton order, expansions in box units
//! stored box-major (`level[b·2nc + idx(l,m)]` real part, `+ nc` imaginary part, `nc =
//! (p+1)(p+2)/2`, see [`crate::fmm::harmonics`]), and the distance-dependent M2L orders of
//! [`crate::fmm::params::m2l_order`].
//!
//! * [`tree`]: the tree on the device (`kernels/fmm_tree.cu`): finiteness check, bounding
//!   cube, Morton keys, a stable LSD radix sort, leaves, levels, parents and children;
//! * [`ops`]: P2M, M2M, L2L, L2P (with the field), P2P over the 27 neighbour leaves, the
//!   periodic background term and the scatter back to the caller's order and units
//!   (`kernels/fmm_ops.cu`);
//! * [`m2l`]: M2L with presorted interaction lists and the operator symmetries of the seed
//!   paper (§3.3.3–3.3.5), a plain reference kernel, and the periodic lattice operator
//!   (`kernels/fmm_m2l.cu`);
//! * [`plan`]: [`GpuFmm`], the stages in order on one stream, with stage times from stream
//!   marks; [`crate::plans::FmmPlan`] runs it for `backend = Cuda`.

pub mod m2l;
pub mod ops;
pub mod plan;
pub mod tree;

pub use plan::{GpuFmm, GpuRun};

use super::device::{upload_new, Device};
use crate::error::Result;
use crate::fmm::tree::Tree;

/// The occupied boxes of one level on the device.
pub struct DeviceLevel<D: Device> {
    /// Number of occupied boxes.
    pub len: usize,
    /// `u64[len]`: Morton keys, increasing.
    pub keys: D::Buf,
    /// `u32[len]`: parent of every box (index in the level above); a 1-element dummy at
    /// level 0.
    pub parent: D::Buf,
    /// `u32[len + 1]`: `child_start[b]..child_start[b+1]` are `b`'s children in the level
    /// below; a 1-element dummy at the leaf level.
    pub child_start: D::Buf,
}

/// Particles sorted into a uniform octree, on the device ([`Tree`]'s fields on the device).
/// Coordinates are in units of the root cube (`[0, 1)³`).
pub struct DeviceTree<D: Device> {
    /// Number of particles `n ≥ 1`.
    pub n: usize,
    /// Depth `D` (leaves at level `D`).
    pub depth: usize,
    /// Periodic boundaries (the root cube is the periodic box).
    pub periodic: bool,
    /// Lower corner of the root cube in the caller's units.
    pub lo: [f64; 3],
    /// Side of the root cube in the caller's units.
    pub side: f64,
    /// `f64[n]` sorted x coordinates in units of the root cube (folded into `[0, 1)` when
    /// periodic).
    pub x: D::Buf,
    /// `f64[n]` sorted y.
    pub y: D::Buf,
    /// `f64[n]` sorted z.
    pub z: D::Buf,
    /// `f64[n]` sorted charges.
    pub q: D::Buf,
    /// `u32[n]`: caller's index of sorted particle `i`.
    pub perm: D::Buf,
    /// `u32[nleaves + 1]`: leaf `b`'s particles are `leaf_start[b]..leaf_start[b+1]`.
    pub leaf_start: D::Buf,
    /// Levels `0..=D`.
    pub levels: Vec<DeviceLevel<D>>,
}

impl<D: Device> DeviceTree<D> {
    /// Number of leaves (occupied boxes at level `D`).
    pub fn nleaves(&self) -> usize {
        self.levels[self.depth].len
    }

    /// Uploads a CPU tree in units of the root cube (`tree.size = 1`, as
    /// [`crate::fmm::StageDump::tree`]) whose root cube in the caller's units is `(lo, side)`.
    /// For the stage-by-stage tests: the GPU stages then run on exactly the CPU's tree.
    /// Error: [`crate::Error::Alloc`] (device memory).
    pub fn upload(dev: &D, tree: &Tree, lo: [f64; 3], side: f64) -> Result<Self> {
        let depth = tree.depth;
        let levels = tree
            .levels
            .iter()
            .enumerate()
            .map(|(l, lev)| {
                let parent = if l == 0 { upload_new(dev, &[0u32])? } else { upload_new(dev, &lev.parent)? };
                let child_start = if l == depth { upload_new(dev, &[0u32])? } else { upload_new(dev, &lev.child_start)? };
                Ok(DeviceLevel { len: lev.len(), keys: upload_new(dev, &lev.keys)?, parent, child_start })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(DeviceTree {
            n: tree.q.len(),
            depth,
            periodic: tree.periodic,
            lo,
            side,
            x: upload_new(dev, &tree.x)?,
            y: upload_new(dev, &tree.y)?,
            z: upload_new(dev, &tree.z)?,
            q: upload_new(dev, &tree.q)?,
            perm: upload_new(dev, &tree.perm)?,
            leaf_start: upload_new(dev, &tree.leaf_start)?,
            levels,
        })
    }
}

/// Expansions (multipoles or locals) of the far levels on the device: `levels[l]` is
/// `f64[len_l · 2·nc]` box-major (layout of the module documentation) for `top ≤ l ≤ D`,
/// `None` above `top`.
pub struct Expansions<D: Device> {
    /// Order `p`.
    pub p: usize,
    /// First level that carries expansions (2 open, 1 periodic).
    pub top: usize,
    /// Per level `0..=D`.
    pub levels: Vec<Option<D::Buf>>,
}

impl<D: Device> Expansions<D> {
    /// Zeroed expansions of order `p` for the levels `top..=D` of `tree`. Error:
    /// [`crate::Error::Alloc`].
    pub fn zeroed(dev: &D, tree: &DeviceTree<D>, p: usize, top: usize) -> Result<Self> {
        let nc2 = 2 * crate::fmm::harmonics::ncoef(p);
        let levels = (0..=tree.depth)
            .map(|l| if l >= top { dev.alloc(tree.levels[l].len * nc2 * 8).map(Some) } else { Ok(None) })
            .collect::<Result<_>>()?;
        Ok(Expansions { p, top, levels })
    }
}

/// Potentials and fields of the sorted particles on the device, in units of the root cube
/// (accumulated by L2P and P2P, zero at the start): `f64[n]` each.
pub struct SortedOut<D: Device> {
    /// Potentials.
    pub phi: D::Buf,
    /// `[E_x, E_y, E_z]`, when the field is requested.
    pub field: Option<[D::Buf; 3]>,
}

impl<D: Device> SortedOut<D> {
    /// Zeroed outputs for `n` particles. Error: [`crate::Error::Alloc`].
    pub fn zeroed(dev: &D, n: usize, field: bool) -> Result<Self> {
        let b = || dev.alloc(n.max(1) * 8);
        Ok(SortedOut { phi: b()?, field: if field { Some([b()?, b()?, b()?]) } else { None } })
    }
}
