//! Kernel values of a batch of points: the kernel-dependent half of the spreading and
//! interpolation loops.
//!
//! The row loops ([`super::inner`], [`super::inner_simd`]) are compiled once per width (a
//! const generic), precision and CPU clone; they read a point's kernel values, not the kernel.
//! Evaluating the kernel (ES, Gaussian or B-spline, [`KernelEval`]) for a batch of points
//! first, then running the rows of the batch in a function that does not know the kernel,
//! compiles those loops once instead of once per kernel (docs/design.md §7.4: the per-width
//! loops were the largest part of the crate's compile). A batch is small enough to stay in
//! the L1 cache next to the box it is spread into.

use super::{for_each_pair, inner::PointKernel};
use crate::kernel::{KernelEval, MAX_WIDTH};
use crate::real::Real;

/// Points of a 2D/3D batch: 16 points' kernel values take 6 KiB in f64.
pub(super) const BATCH: usize = 16;

/// Points of a 1D batch (even: the kernel is evaluated for pairs of points,
/// [`for_each_pair`]); 32 points' kernel values take 4 KiB in f64.
pub(super) const ROW_BATCH: usize = 32;

/// Kernel values and windows of up to [`BATCH`] consecutive points (2D/3D).
pub(super) struct Batch<T> {
    /// Point `j`'s kernel values along each axis; axes past the dimension hold the weight 1
    /// at their first entry.
    pub ker: [PointKernel<T>; BATCH],
    /// Point `j`'s first grid index along each axis (0 past the dimension).
    pub i0: [[isize; 3]; BATCH],
    /// Points held.
    pub len: usize,
}

impl<T: Real> Batch<T> {
    /// An empty batch whose every point starts from `ker` (the spreader's kernel buffer).
    pub fn new(ker: PointKernel<T>) -> Self {
        Batch { ker: [ker; BATCH], i0: [[0; 3]; BATCH], len: 0 }
    }
}

/// Kernel values and windows of up to [`ROW_BATCH`] consecutive 1D points.
pub(super) struct RowBatch<T> {
    /// Point `j`'s kernel values.
    pub ker: [[T; MAX_WIDTH]; ROW_BATCH],
    /// Point `j`'s first grid index.
    pub l0: [isize; ROW_BATCH],
    /// Points held.
    pub len: usize,
}

impl<T: Real> RowBatch<T> {
    pub fn new() -> Self {
        RowBatch { ker: [[T::zero(); MAX_WIDTH]; ROW_BATCH], l0: [0; ROW_BATCH], len: 0 }
    }

    /// Fills the batch with the 1D points `a..` (at most [`ROW_BATCH`]) of the folded
    /// coordinates `g` (low parts `glo`) for a kernel of width `w`, evaluated two points at a
    /// time ([`KernelEval::eval_fused_n`] when `FUSED`, in the FMA clones; else one by one).
    /// `ahead`: the periodic row whose windows [`for_each_pair`] prefetches, if any.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    pub fn fill<K: KernelEval<T>, E, const FUSED: bool>(&mut self, k: &K, g: &[T], glo: Option<&[f32]>, w: usize, ahead: Option<(*const E, usize)>, a: usize) {
        let e = (a + ROW_BATCH).min(g.len());
        self.len = e - a;
        for_each_pair(g, glo, w, ahead, a..e, |[(qa, la, ta), (_, lb, tb)], both| {
            let j = qa - a;
            // j + 1 < ROW_BATCH: pairs start at even offsets of an even-sized batch
            let pair: &mut [[T; MAX_WIDTH]; 2] = (&mut self.ker[j..j + 2]).try_into().expect("a pair inside the batch");
            if FUSED {
                k.eval_fused_n([ta, tb], pair);
            } else {
                k.eval(ta, &mut pair[0]);
                k.eval(tb, &mut pair[1]);
            }
            self.l0[j] = la;
            if both {
                self.l0[j + 1] = lb;
            }
        });
    }
}
