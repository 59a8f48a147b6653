//! CPU spreading (non-uniform points → uniform grid, the type-1 direction) and interpolation
//! (grid → points, the type-2 direction, the adjoint) in 1D, 2D and 3D.
//!
//! Method (Boström's report on shared-memory parallel gridding, §4, Algorithm 5, done
//! FINUFFT-style; Barnett et al. 2019 §3.2):
//! 1. [`Spreader::setpts`] folds the points 2π-periodically into grid units, bin-sorts them
//!    ([`sort`]) and keeps the coordinates in sorted order (a copy: the caller may free its
//!    arrays), then cuts the sorted list into subproblems along the bins (compact tiles,
//!    [`Spreader::cut_subproblems`]);
//! 2. [`Spreader::spread`] spreads each subproblem, in parallel, into a private padded box
//!    without periodic wrapping, then adds the box into the global grid with periodic
//!    wrap-around. The add locks one stripe of the grid at a time (a z-plane in 3D, a row in
//!    2D, 1024 points in 1D), so there is no critical section over the whole grid;
//! 3. [`Spreader::interp`] needs no locking: each point gathers from the grid.
//!
//! Grid convention: `grid[i + nf1*(j + nf2*k)]` (x fastest), grid point `i` at `x = 2πi/nf1`.
//! Spreading computes `b_l = Σ_j c_j ψ(l − g_j)` (periodised) with `g_j = x_j·nf/(2π) mod nf`;
//! interpolation computes `c_j = Σ_l b_l ψ(l − g_j)`.
//!
//! Semantics: spreading **overwrites** the output grid (it is zeroed first, in parallel) and
//! interpolation overwrites the output values — on the CPU as on the GPU
//! ([`crate::gpu::spread`]), and as FINUFFT's `spreadinterp` and cuFINUFFT do. To accumulate
//! several spreads, spread into scratch and add.

/// Calls `$go!(w, …)` with the kernel widths that get loops specialised per width (`W` a
/// constant; any other width runs the loops with `W = 0`, the width read at run time, about
/// 2× slower in 3D): 2–16 in the library. The library's own unit-test binary, a second
/// compile of the whole crate, specialises 7 only (the f64 default; its other widths run the
/// runtime-width loops, which its tests check against direct sums): the per-width copies were
/// about 60 % of a compile (docs/design.md §7.4), and that binary competes with the library's
/// compile for the test command's two cores. The shipped loops of every width are checked
/// against the runtime-width loops in `tests/spread_baseline.rs`, which links the library as
/// built.
#[cfg(not(test))]
macro_rules! specialised_widths {
    ($go:ident) => {
        $go!(2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16)
    };
}
#[cfg(test)]
macro_rules! specialised_widths {
    ($go:ident) => {
        $go!(7)
    };
}

/// The body of a public generic `Spreader<T>` entry point that takes two slices: calls the
/// `f64` or the `f32` function of [`once`] with the spreader and the slices seen at their
/// concrete precision (the `TypeId` comparisons resolve at compile time), so the heavy body is
/// compiled once per precision, in this crate, whichever crate calls the entry point
/// (`crate::real`, "Compiled once per precision"). Any other `T`: [`other_precision`].
macro_rules! once_per_precision {
    ($s:expr, $a:expr, $b:expr, $threads:expr, $f64:path, $f32:path) => {{
        use $crate::real::{same_ref, same_slice, same_slice_mut};
        use $crate::spread::Spreader;
        if let (Some(s), Some(a), Some(b)) = (same_ref::<_, Spreader<f64>>($s), same_slice($a), same_slice_mut($b)) {
            return $f64(s, a, b, $threads);
        }
        if let (Some(s), Some(a), Some(b)) = (same_ref::<_, Spreader<f32>>($s), same_slice($a), same_slice_mut($b)) {
            return $f32(s, a, b, $threads);
        }
        Err($crate::real::other_precision::<T>())
    }};
}

mod grad;
mod in_order;
mod inner;
#[cfg(target_arch = "x86_64")]
mod inner_simd;
mod once;
pub mod sort;

use crate::error::{Error, Result};
use crate::kernel::bspline::BSplineEval;
use crate::kernel::es::EsHorner;
use crate::kernel::gaussian::Fgg;
use crate::kernel::{Kernel, KernelEval, MAX_WIDTH};
use crate::real::{other_precision, same_mut, same_slice, Real};
use crate::threads::{ConstPtr, SyncPtr, Threads};
use num_complex::Complex;
use std::sync::Mutex;

/// The kernel evaluator a spreader uses in its inner loops, built from a [`Kernel`] (private
/// to the spreader: the kernel is described by [`Kernel`] alone).
#[derive(Debug, Clone)]
pub(crate) enum KernelImpl<T: Real> {
    /// ES kernel by piecewise Horner polynomials.
    Es(EsHorner<T>),
    /// Gaussian by fast Gaussian gridding.
    Gaussian(Fgg<T>),
    /// Centred cardinal B-spline.
    BSpline(BSplineEval<T>),
}

impl<T: Real> KernelImpl<T> {
    /// Builds the evaluator of a kernel. Errors: [`Error::InvalidArg`] for a width outside
    /// `1..=MAX_WIDTH` (width 1: the order-1 B-spline, nearest-grid-point assignment; ES and
    /// Gaussian kernels are at least 2 wide by construction).
    fn new(k: &Kernel) -> Result<Self> {
        let w = k.width();
        if !(1..=MAX_WIDTH).contains(&w) {
            return Err(Error::InvalidArg(format!("kernel width {w} not in 1..={MAX_WIDTH}")));
        }
        Ok(match k {
            Kernel::Es(p) => KernelImpl::Es(EsHorner::new(p)),
            Kernel::Gaussian(p) => KernelImpl::Gaussian(Fgg::new(p)),
            Kernel::BSpline(p) => KernelImpl::BSpline(BSplineEval::new(p)),
        })
    }
}

/// Spreader tuning options.
#[derive(Debug, Clone, Copy, Default)]
pub struct SpreadOpts {
    /// Largest number of points in one subproblem (0 = automatic: 10 000).
    pub max_subprob_size: usize,
    /// The spreader only interpolates (NUFFT type 2; the CPU twin of
    /// [`crate::gpu::spread::GpuSpreadOpts::interp_only`]). In 1D the points are then kept in
    /// the caller's order, without the bin sort ([`in_order`]), and [`Spreader::try_spread`]
    /// returns [`Error::NotSupported`]; in 2D and 3D it changes nothing.
    pub interp_only: bool,
    /// In 1D, keep the points in the caller's order, without the bin sort, whenever spreading
    /// then loses no parallelism ([`in_order::private_grids`]) and, on more than one thread,
    /// the kernel is at most [`in_order::IN_ORDER_MAX_WIDTH`] wide (set by the CPU NUFFT). Complex
    /// spreading and interpolation ([`Spreader::try_spread`], [`Spreader::try_interp`]) work as
    /// before; the real and gradient paths ([`Spreader::try_spread_real`],
    /// [`Spreader::try_interp_real`], [`Spreader::interp_grad_real`]) need the sorted points
    /// and return [`Error::NotSupported`] for points kept in this order. In 2D and 3D it
    /// changes nothing.
    pub callers_order: bool,
}

/// Largest number of points a spreader takes: 2³² − 1 (indices are `u32`).
pub const MAX_POINTS: usize = u32::MAX as usize;

/// Largest box (grid cells) of a subproblem made of several bins ([`Spreader::cut_subproblems`]):
/// 2¹⁵ cells, 512 KiB of f64 complex, half the L2 of current x86 cores.
const MERGE_BOX_CELLS: usize = 1 << 15;

/// Default largest subproblem size (points).
pub const DEFAULT_MAX_SUBPROB: usize = 10_000;

/// Spreader/interpolator for one grid and one kernel. Points are set by [`Spreader::setpts`].
pub struct Spreader<T: Real> {
    dim: usize,
    nf: [usize; 3],
    w: [usize; 3],
    kernel: KernelImpl<T>,
    max_sp: usize,
    m: usize,
    /// Whether points are set (cleared when a `setpts` fails after releasing the old points).
    ready: bool,
    /// Folded grid coordinates in sorted order, per axis (empty for unused axes and when the
    /// points are held by reference).
    g: [Vec<T>; 3],
    /// The caller's coordinate arrays when the points are held by reference
    /// ([`Spreader::setpts_by_reference`]); null pointers otherwise.
    src: [ConstPtr<T>; 3],
    /// Low parts of the folded coordinates of copied 1D points, in the caller's order
    /// ([`in_order::fold_points_dd`]) or sorted ([`in_order::low_parts`], in the sort's
    /// scatter): the coordinate is `g[0][j] + glo[j]`.
    glo: Vec<f32>,
    /// Sorted position → caller's point index.
    perm: Vec<u32>,
    /// Subproblems as ranges of sorted positions.
    subprobs: Vec<(usize, usize)>,
    stripe: usize,
    locks: Vec<Mutex<()>>,
    /// [`SpreadOpts::interp_only`] of a 1D spreader: the points are always kept in the
    /// caller's order and spreading is refused.
    interp_only: bool,
    /// [`SpreadOpts::callers_order`] of a 1D spreader.
    callers_order: bool,
    /// The points of the last `setpts*` are kept in the caller's order, unsorted
    /// ([`in_order`]; 1D only, with [`SpreadOpts::interp_only`], or with
    /// [`SpreadOpts::callers_order`] when [`in_order::spreads_in_order`] says so): `perm` is
    /// empty and the subproblems are runs of consecutive points.
    in_order: bool,
    /// Per-pass times of the last bin sort.
    sort_timings: sort::SortTimings,
}

/// A zeroed grid of `len` complex values for a `dim`-dimensional spreader (the NUFFT fine
/// grid), its pages chosen by how the spreader reaches it: in 1D the points may stay in the
/// caller's order (`SpreadOpts::callers_order`, `interp_only`), each window a scattered access
/// over the whole grid, so it asks for huge pages ([`crate::fft::AlignedVec::zeroed`]); in 2D
/// and 3D the sorted subproblems touch it a cache-sized box at a time, so it takes small pages
/// ([`crate::fft::AlignedVec::zeroed_small_pages`]; docs/performance.md, "Huge pages"). The
/// values are zero, 64-byte aligned, in the caller's layout (the NUFFT's: x fastest).
/// Errors: [`Error::Alloc`] (the size overflows or the allocation fails).
pub fn zeroed_grid<T: Real>(dim: usize, len: usize, what: &str) -> Result<crate::fft::AlignedVec<Complex<T>>> {
    if dim == 1 {
        crate::fft::AlignedVec::zeroed(len, what)
    } else {
        crate::fft::AlignedVec::zeroed_small_pages(len, what)
    }
}

/// Checks grid sizes and returns `[nf1, nf2, nf3]` padded with 1.
fn grid_dims(dim: usize, nf: &[usize], w: usize) -> Result<[usize; 3]> {
    if !(1..=3).contains(&dim) || nf.len() != dim {
        return Err(Error::Dim(format!("spreader dimension {dim} with {} grid sizes", nf.len())));
    }
    let mut out = [1usize; 3];
    for d in 0..dim {
        if nf[d] < 2 * w {
            return Err(Error::Modes(format!("grid size {} along axis {d} is below twice the kernel width {w}", nf[d])));
        }
        out[d] = nf[d];
    }
    match out.iter().try_fold(1usize, |a, &b| a.checked_mul(b)) {
        Some(t) if t <= crate::error::MAX_ELEMENTS => Ok(out),
        _ => Err(Error::Modes(format!("spreading grid {:?} exceeds the limit of 2^40 points", &nf[..dim]))),
    }
}

impl<T: Real> Spreader<T> {
    /// A spreader for a `dim`-dimensional grid of sizes `nf` (x first, each ≥ 2w, at most 2⁴⁰
    /// points in all) and kernel `k` (ES, Gaussian, or a B-spline of order 2–32).
    /// Errors: [`Error::Dim`], [`Error::Modes`], [`Error::InvalidArg`] (kernel width),
    /// [`Error::Alloc`].
    pub fn new(dim: usize, nf: &[usize], k: &Kernel, opts: SpreadOpts) -> Result<Self> {
        let kernel = KernelImpl::new(k)?;
        let width = k.width();
        let nf = grid_dims(dim, nf, width)?;
        let mut w = [1usize; 3];
        for d in 0..dim {
            w[d] = width;
        }
        let stripe = match dim {
            1 => 1024,
            2 => nf[0],
            _ => nf[0] * nf[1],
        };
        let total = nf[0] * nf[1] * nf[2];
        let nlocks = total.div_ceil(stripe);
        let mut locks = crate::error::try_vec(nlocks, "spreader locks")?;
        locks.extend((0..nlocks).map(|_| Mutex::new(())));
        Ok(Spreader {
            dim,
            nf,
            w,
            kernel,
            max_sp: if opts.max_subprob_size == 0 { DEFAULT_MAX_SUBPROB } else { opts.max_subprob_size },
            m: 0,
            ready: false,
            g: [Vec::new(), Vec::new(), Vec::new()],
            src: [ConstPtr(std::ptr::null()); 3],
            glo: Vec::new(),
            perm: Vec::new(),
            subprobs: Vec::new(),
            stripe,
            locks,
            interp_only: opts.interp_only && dim == 1,
            callers_order: opts.callers_order && dim == 1,
            in_order: false,
            sort_timings: sort::SortTimings::default(),
        })
    }

    /// Number of points currently set.
    pub fn num_points(&self) -> usize {
        self.m
    }

    /// Whether points are set.
    pub fn has_points(&self) -> bool {
        self.ready
    }

    /// Grid sizes `[nf1, nf2, nf3]` (1 for unused axes).
    pub fn grid_size(&self) -> [usize; 3] {
        self.nf
    }

    /// Sets the non-uniform points: `coords[d]` holds the M coordinates of axis `d` (radians,
    /// any finite value, interpreted 2π-periodically). The folded coordinates are copied in
    /// bin-sorted order (in the caller's order for 1D spreaders with
    /// [`SpreadOpts::interp_only`] or [`SpreadOpts::callers_order`], when it applies), so the
    /// caller may free or change its arrays afterwards. 1D coordinates are kept as
    /// double-doubles in either order (exact to ~1e-16 grid points).
    ///
    /// Errors: [`Error::NonFinite`] (naming the first bad index and axis) and
    /// [`Error::NPoints`] (M ≥ 2³² or axes of different lengths) leave the previous points
    /// set; [`Error::Alloc`] leaves the spreader without points.
    pub fn setpts(&mut self, coords: [&[T]; 3], threads: &Threads) -> Result<()> {
        self.set_points_once(coords, threads, true)
    }

    /// Like [`Spreader::setpts`] but keeps only the sort permutation and reads the caller's
    /// arrays again at every spread/interp (FINUFFT's semantics; `3·8·M` fewer bytes for f64
    /// in 3D).
    ///
    /// # Safety
    /// The arrays must stay valid and unchanged until the next `setpts*` call or until the
    /// spreader is dropped.
    pub unsafe fn setpts_by_reference(&mut self, coords: [&[T]; 3], threads: &Threads) -> Result<()> {
        self.set_points_once(coords, threads, false)
    }

    /// [`Spreader::set_points`] compiled once per precision, in this crate
    /// (`crate::real`, "Compiled once per precision").
    fn set_points_once(&mut self, coords: [&[T]; 3], threads: &Threads, copy: bool) -> Result<()> {
        if let Some(s) = same_mut::<_, Spreader<f64>>(self) {
            return once::set_points_f64(s, coords.map(|c| same_slice(c).expect("T = f64")), threads, copy);
        }
        if let Some(s) = same_mut::<_, Spreader<f32>>(self) {
            return once::set_points_f32(s, coords.map(|c| same_slice(c).expect("T = f32")), threads, copy);
        }
        Err(other_precision::<T>())
    }

    /// The body of both `setpts*` (`copy`: [`Spreader::setpts`]).
    pub(crate) fn set_points(&mut self, coords: [&[T]; 3], threads: &Threads, copy: bool) -> Result<()> {
        let m = coords[0].len();
        if m > MAX_POINTS {
            return Err(Error::NPoints(format!("M = {m} points exceed the supported maximum of {MAX_POINTS} (2^32 − 1)")));
        }
        for d in 0..self.dim {
            if coords[d].len() != m {
                return Err(Error::NPoints(format!("axis {d} has {} coordinates, axis 0 has {m}", coords[d].len())));
            }
        }
        if self.interp_only || (self.callers_order && in_order::spreads_in_order::<T>(m, self.nf[0], self.w[0], threads.count())) {
            return self.set_points_in_order(coords[0], threads, copy);
        }
        let dim = self.dim;
        // pass 1 checks the points: a non-finite coordinate leaves the previous points set
        let counted = match sort::count(coords, dim, self.nf, sort::sub_cells(dim, self.w[0]), threads) {
            Ok(c) => c,
            Err(e @ Error::NonFinite(_)) => return Err(e),
            Err(e) => {
                self.release_points();
                return Err(e);
            }
        };
        // the new points are valid: release the old ones before allocating
        self.release_points();
        let sort::Sorted { perm, g, glo, bin_start, timings } = counted.sort(threads, copy)?;
        let subprobs = self.cut_subproblems(&bin_start, threads.count())?;
        self.g = g;
        self.glo = glo;
        if !copy {
            for d in 0..dim {
                self.src[d] = ConstPtr(coords[d].as_ptr());
            }
        }
        self.perm = perm;
        self.subprobs = subprobs;
        self.in_order = false;
        self.sort_timings = timings;
        self.m = m;
        self.ready = true;
        Ok(())
    }

    /// Cuts the sorted points into subproblems (ranges of sorted positions) along the bins
    /// (`bin_start`: the bins' offsets, [`sort::Sorted::bin_start`]), so that every box is a
    /// compact tile plus the kernel's halo (16³ grid points in 3D, 32² in 2D: the box stays in
    /// L2, its rows on few pages). Runs of adjacent bins along x are merged while their box
    /// stays below [`MERGE_BOX_CELLS`] and their points below the subproblem size; bins with
    /// more points are split into equal parts of at most that size. At least `threads`
    /// subproblems when there are that many points. Errors: [`Error::Alloc`].
    fn cut_subproblems(&self, bin_start: &[usize], threads: usize) -> Result<Vec<(usize, usize)>> {
        let m = *bin_start.last().unwrap_or(&0);
        let (bs, nb) = sort::bin_grid(self.dim, self.nf);
        let max_sp = self.max_sp.min(m.div_ceil(threads.max(1)).max(1));
        // cells of the box of `k` adjacent bins along x
        let box_cells = |k: usize| -> usize { (0..3).map(|d| if d < self.dim { (if d == 0 { k } else { 1 }) * bs[d] + self.w[d] - 1 } else { 1 }).product() };
        let mut subprobs = crate::error::try_vec((bin_start.len() - 1).min(m) + m.div_ceil(max_sp), "spreading subproblems")?;
        let mut b = 0;
        let nbins = bin_start.len() - 1;
        while b < nbins {
            let (a, mut e) = (bin_start[b], bin_start[b + 1]);
            let mut k = 1;
            if e - a > max_sp {
                let parts = (e - a).div_ceil(max_sp);
                for s in 0..parts {
                    subprobs.push((a + s * (e - a) / parts, a + (s + 1) * (e - a) / parts));
                }
                b += 1;
                continue;
            }
            // merge the following bins of the same x-row
            while (b + k) % nb[0] != 0 && bin_start[b + k + 1] - a <= max_sp && box_cells(k + 1) <= MERGE_BOX_CELLS {
                e = bin_start[b + k + 1];
                k += 1;
            }
            if e > a {
                subprobs.push((a, e));
            }
            b += k;
        }
        Ok(subprobs)
    }

    /// Drops the points (and their memory).
    fn release_points(&mut self) {
        self.ready = false;
        self.g = [Vec::new(), Vec::new(), Vec::new()];
        self.glo = Vec::new();
        self.perm = Vec::new();
        self.subprobs = Vec::new();
        self.src = [ConstPtr(std::ptr::null()); 3];
        self.m = 0;
    }

    /// Wall-clock seconds of the passes of the bin sort of the last successful `setpts*`.
    pub fn sort_timings(&self) -> sort::SortTimings {
        self.sort_timings
    }

    /// Folded coordinates of sorted points `a..b`, per axis, and in 1D their low parts
    /// ([`in_order::low_parts`]; `None` in 2D and 3D): borrowed from the sorted copy, or
    /// gathered from the caller's arrays (once per axis) when the points are held by reference.
    /// Errors: [`Error::Alloc`] (the gathered copy, by-reference mode only).
    #[allow(clippy::type_complexity)]
    fn local_coords(&self, a: usize, b: usize) -> Result<([std::borrow::Cow<'_, [T]>; 3], Option<std::borrow::Cow<'_, [f32]>>)> {
        use std::borrow::Cow;
        let mut out: [Cow<'_, [T]>; 3] = [Cow::Borrowed(&[][..]), Cow::Borrowed(&[][..]), Cow::Borrowed(&[][..])];
        let mut low = (self.dim == 1 && !self.glo.is_empty()).then(|| Cow::Borrowed(&self.glo[a..b]));
        for (d, o) in out.iter_mut().enumerate().take(self.dim) {
            if self.src[d].0.is_null() {
                *o = Cow::Borrowed(&self.g[d][a..b]);
            } else {
                // SAFETY: setpts_by_reference's contract keeps the M-element array alive.
                let x = unsafe { std::slice::from_raw_parts(self.src[d].0, self.m) };
                let mut v = crate::error::try_vec::<T>(b - a, "subproblem coordinates")?;
                gather(&self.perm[a..b], x, &mut v);
                if self.dim == 1 {
                    // the low parts need the gathered coordinates before the fold
                    let mut f = crate::error::try_vec::<T>(b - a, "subproblem coordinates")?;
                    f.extend(v.iter().map(|&xv| fold(xv, self.nf[0])));
                    let mut lo = crate::error::try_filled_vec::<f32>(b - a, 0.0, "subproblem coordinates")?;
                    in_order::low_parts(&v, &f, self.nf[0], &mut lo);
                    low = Some(Cow::Owned(lo));
                    v = f;
                } else {
                    v.iter_mut().for_each(|g| *g = fold(*g, self.nf[d]));
                }
                *o = Cow::Owned(v);
            }
        }
        Ok((out, low))
    }

    /// Spreads the strengths `c` (length M, caller's point order) onto `grid` (length
    /// nf1·nf2·nf3, x fastest), **overwriting** it. Panics if a subproblem's
    /// scratch cannot be allocated (see [`Spreader::try_spread`]).
    pub fn spread(&self, c: &[Complex<T>], grid: &mut [Complex<T>], threads: &Threads) {
        self.try_spread(c, grid, threads).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Spreader::spread`] with every scratch buffer (per subproblem: its strengths and its
    /// padded box, up to the grid's size; for 1D points in the caller's order, one private grid
    /// per extra thread, [`in_order`]) allocated fallibly. Errors: [`Error::Alloc`], after
    /// which `grid` holds a partial sum; [`Error::NotSupported`] for a 1D spreader made with
    /// [`SpreadOpts::interp_only`].
    pub fn try_spread(&self, c: &[Complex<T>], grid: &mut [Complex<T>], threads: &Threads) -> Result<()> {
        once_per_precision!(self, c, grid, threads, once::spread_f64, once::spread_f32)
    }

    /// [`Spreader::try_spread`]'s body (compiled once per precision through [`once`]).
    pub(crate) fn spread_impl(&self, c: &[Complex<T>], grid: &mut [Complex<T>], threads: &Threads) -> Result<()> {
        if self.interp_only {
            return Err(Error::NotSupported("spreading with a 1D spreader made for interpolation only (SpreadOpts::interp_only)".into()));
        }
        assert_eq!(c.len(), self.m);
        assert_eq!(grid.len(), self.nf.iter().product::<usize>());
        match (&self.kernel, self.in_order) {
            (KernelImpl::Es(k), false) => self.spread_with(k, c, grid, threads),
            (KernelImpl::Gaussian(k), false) => self.spread_with(k, c, grid, threads),
            (KernelImpl::BSpline(k), false) => self.spread_with(k, c, grid, threads),
            (KernelImpl::Es(k), true) => self.spread_in_order(k, c, grid, threads),
            (KernelImpl::Gaussian(k), true) => self.spread_in_order(k, c, grid, threads),
            (KernelImpl::BSpline(k), true) => self.spread_in_order(k, c, grid, threads),
        }
    }

    /// Interpolates `grid` (length nf1·nf2·nf3) at the points into `c` (length M, caller's
    /// point order), overwriting `c`. Panics if a subproblem's scratch cannot be allocated
    /// (see [`Spreader::try_interp`]).
    pub fn interp(&self, grid: &[Complex<T>], c: &mut [Complex<T>], threads: &Threads) {
        self.try_interp(grid, c, threads).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Spreader::interp`] with the scratch buffers allocated fallibly. Errors:
    /// [`Error::Alloc`], after which `c` is partly written.
    pub fn try_interp(&self, grid: &[Complex<T>], c: &mut [Complex<T>], threads: &Threads) -> Result<()> {
        once_per_precision!(self, grid, c, threads, once::interp_f64, once::interp_f32)
    }

    /// [`Spreader::try_interp`]'s body (compiled once per precision through [`once`]).
    pub(crate) fn interp_impl(&self, grid: &[Complex<T>], c: &mut [Complex<T>], threads: &Threads) -> Result<()> {
        assert_eq!(c.len(), self.m);
        assert_eq!(grid.len(), self.nf.iter().product::<usize>());
        match &self.kernel {
            KernelImpl::Es(k) => self.interp_with(k, grid, c, threads),
            KernelImpl::Gaussian(k) => self.interp_with(k, grid, c, threads),
            KernelImpl::BSpline(k) => self.interp_with(k, grid, c, threads),
        }
    }

    /// A zeroed kernel buffer for [`Self::point_kernel`], with the weight 1 at the first entry
    /// of every axis past the dimension (which `point_kernel` leaves as they are).
    fn kernel_buffer(&self) -> inner::PointKernel<T> {
        let mut ker = [[T::zero(); MAX_WIDTH]; 3];
        for kd in ker.iter_mut().skip(self.dim) {
            kd[0] = T::one();
        }
        ker
    }

    /// Kernel values and first grid index of sorted point `p` along every axis (`FMA`: with
    /// [`KernelEval::eval_fused_n`], the axes' evaluations together, inside the FMA-enabled
    /// clones only), into `ker`, a buffer from [`Self::kernel_buffer`].
    #[inline(always)]
    fn point_kernel<K: KernelEval<T>, const FMA: bool>(&self, k: &K, g: &[&[T]; 3], q: usize, ker: &mut [[T; MAX_WIDTH]; 3], i0: &mut [isize; 3]) {
        let mut t = [T::zero(); 3];
        for d in 0..3 {
            if d < self.dim {
                (i0[d], t[d]) = window(g[d][q], 0.0, T::of(0.5 * self.w[d] as f64));
            } else {
                i0[d] = 0;
            }
        }
        match (FMA, self.dim) {
            (true, 3) => k.eval_fused_n(t, ker),
            (true, 2) => k.eval_fused_n([t[0], t[1]], ker.first_chunk_mut::<2>().expect("three axes")),
            (true, _) => k.eval_fused(t[0], &mut ker[0]),
            (false, _) => {
                // a plain loop: an iterator adapter's `fold` stays out of line, compiled without
                // the calling clone's target features (docs/performance.md)
                for d in 0..self.dim {
                    k.eval(t[d], &mut ker[d]);
                }
            }
        }
    }

    fn spread_with<K: KernelEval<T>>(&self, k: &K, c: &[Complex<T>], grid: &mut [Complex<T>], threads: &Threads) -> Result<()> {
        // spreading overwrites the grid (module docs): zero it, stripe by stripe in parallel
        threads.chunks(grid, self.stripe, |_, r| r.iter_mut().for_each(|v| *v = Complex::new(T::zero(), T::zero())));
        let gp = SyncPtr(grid.as_mut_ptr());
        let failed: Mutex<Option<Error>> = Mutex::new(None);
        threads.for_each(self.subprobs.len(), |s| {
            let gp = gp;
            let (a, b) = self.subprobs[s];
            if let Err(e) = self.spread_subproblem(k, a, b, c, gp) {
                *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            }
        });
        failed.into_inner().unwrap_or_else(|p| p.into_inner()).map_or(Ok(()), Err)
    }

    /// Whether the loops over a subproblem's sorted points reach the strengths and values in
    /// the caller's order themselves (strength read in the loop, prefetched
    /// [`STRENGTH_AHEAD`] points ahead; each value's destination prefetched as its point
    /// starts) instead of in a gather before and plain stores after the loop: in 2D only
    /// (docs/performance.md: in 3D interpolation lost 10–15 % with the prefetch; 1D keeps the
    /// gather, not measured otherwise).
    fn callers_order_in_loop(&self) -> bool {
        self.dim == 2
    }

    /// Spreads sorted points `a..b` into a private box, then wrap-adds the box into the grid.
    fn spread_subproblem<K: KernelEval<T>>(&self, k: &K, a: usize, b: usize, c: &[Complex<T>], grid: SyncPtr<Complex<T>>) -> Result<()> {
        // the strengths read in the loop over points ([`Self::callers_order_in_loop`]), or
        // gathered first, the loads independent, so that their cache misses overlap instead of
        // stalling the loop one by one
        let perm = &self.perm[a..b];
        let in_loop = self.callers_order_in_loop();
        let mut gathered = Vec::new();
        if !in_loop {
            gathered = crate::error::try_vec::<Complex<T>>(b - a, "subproblem strengths")?;
            gather(perm, c, &mut gathered);
        }
        let (loc, low) = self.local_coords(a, b)?;
        let g: [&[T]; 3] = [&loc[0], &loc[1], &loc[2]];
        let (lo, bsz) = self.subproblem_box(&g);
        let paired = low.is_none() && self.paired_boxes();
        // paired: one more column, for the second box's rows shifted by one entry
        let shape = box_shape::<T>([bsz[0] + paired as usize, bsz[1], bsz[2]]);
        let (mut store, off, stride) = aligned_boxes::<T>(shape, 1 + paired as usize)?;
        let bx = &mut store[off..];
        if let Some(glo) = low {
            // 1D: the windows at the double-double coordinates, as in the caller's order
            self.spread_row_points(k, g[0], &glo, &gathered, bx, lo[0]);
            self.wrap_add(bx, lo, bsz, shape[0], grid);
            return Ok(());
        }
        let cs = if in_loop { (Some(perm), c) } else { (None, &gathered[..]) };
        let second = if paired { stride } else { 0 };
        #[cfg(target_arch = "x86_64")]
        if crate::simd::has_avx512() {
            // SAFETY: the CPU supports AVX-512F, AVX2 and FMA (checked at run time).
            unsafe { self.spread_points_avx512(k, &g, cs, lo, shape, bx, second) };
        } else if crate::simd::has_avx2_fma() {
            // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
            unsafe { self.spread_points_avx2(k, &g, cs, lo, shape, bx, second) };
        } else {
            self.spread_points_w::<K, 0, false, false>(k, &g, cs, lo, shape, bx, second);
        }
        #[cfg(not(target_arch = "x86_64"))]
        self.spread_points::<K, false, false>(k, &g, cs, lo, shape, bx, second);
        if paired {
            // the second box's entry i + 1 is the first box's entry i (its column 0 and the
            // columns past the rows stay zero)
            let n = shape[0] * shape[1] * shape[2];
            let (first, rest) = bx.split_at_mut(stride);
            for (a, b) in first[..n].iter_mut().zip(&rest[1..=n]) {
                a[0] += b[0];
                a[1] += b[1];
            }
        }
        self.wrap_add(bx, lo, bsz, shape[0], grid);
        Ok(())
    }

    /// Whether spreading uses two boxes per subproblem, the second one entry to the left of the
    /// first: a point whose rows would start at an odd entry of the first box spreads into the
    /// second, where they start at an even one, so that with 256-bit rows of f64 (two complex
    /// entries per vector) every row starts on a vector boundary and takes `w/2` vectors
    /// instead of `w/2 + 1`; the second box is added into the first before the wrap-add. Only
    /// for an even `w` in x (at an odd `w` both starts take `(w + 1)/2` vectors), f64, 2D and
    /// 3D, and where the rows are 256-bit (AVX2/FMA, and AVX-512 CPUs that split 512-bit
    /// operations, [`crate::simd::splits_512bit_ops`]). Measured in docs/performance.md.
    fn paired_boxes(&self) -> bool {
        std::any::TypeId::of::<T>() == std::any::TypeId::of::<f64>() && self.dim >= 2 && self.w[0].is_multiple_of(2) && self.w[0] <= 16 && spreads_256bit_rows()
    }

    /// Whether the AVX-512 clone of the 2D/3D interpolation loops reads 256-bit rows: where
    /// the CPU splits 512-bit operations ([`crate::simd::splits_512bit_ops`]), for f32, for
    /// f64 in 3D, and for f64 in 2D at w ≤ 4 and w = 12. In 3D a point's `w²` rows bound the
    /// loop, and 256-bit rows take fewer vector halves (f64, w = 8: 4.5 against 5.5 on
    /// average; [`spreads_256bit_rows`]). In 2D, f64, the `w` rows of a point are short chains
    /// and the 512-bit rows' fewer instructions counted more (w = 7: 256-bit rows 3–13 %
    /// slower; w = 13–16: the AVX2 clone's rows 35–75 % slower), except at the widths where
    /// the 512-bit loop kept its accumulators in stack arrays (w = 3, 4 and 12: 1.7–2 times
    /// the 256-bit rows' time). That was with the vector count read at run time; the row
    /// loops now take it as a constant (`row_kernels!` in `inner_simd`, measured on an AVX2
    /// CPU only), which should remove that cause, but the list stays until a CPU that splits
    /// 512-bit operations measures the 512-bit rows without it. Measured in docs/performance.md.
    #[cfg(target_arch = "x86_64")]
    fn interp_256bit_rows(&self) -> bool {
        let w = self.w[0];
        crate::simd::splits_512bit_ops() && (std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>() || self.dim == 3 || w <= 4 || w == 12)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn spread_points_avx2<K: KernelEval<T>>(&self, k: &K, g: &[&[T]; 3], cs: Strengths<T>, lo: [isize; 3], shape: [usize; 3], bx: &mut [[T; 2]], second: usize) {
        self.spread_points::<K, true, false>(k, g, cs, lo, shape, bx, second)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn spread_points_avx512<K: KernelEval<T>>(&self, k: &K, g: &[&[T]; 3], cs: Strengths<T>, lo: [isize; 3], shape: [usize; 3], bx: &mut [[T; 2]], second: usize) {
        // the kernel evaluation keeps this clone's 512-bit code ([`spreads_256bit_rows`])
        if spreads_256bit_rows() {
            self.spread_points::<K, true, false>(k, g, cs, lo, shape, bx, second)
        } else {
            self.spread_points::<K, true, true>(k, g, cs, lo, shape, bx, second)
        }
    }

    /// Spreads the points with folded coordinates `g` and strengths `cs` ([`Strengths`]) into
    /// the box with corner `lo` (`FMA`: fused multiply-adds and the 256-bit row loops, for the
    /// AVX2/FMA clone only; `WIDE`: the 512-bit row loops, for the AVX-512 clone only).
    /// `second`: the offset in `bx` of the second box of [`Self::paired_boxes`], or 0.
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn spread_points<K: KernelEval<T>, const FMA: bool, const WIDE: bool>(&self, k: &K, g: &[&[T]; 3], cs: Strengths<T>, lo: [isize; 3], shape: [usize; 3], bx: &mut [[T; 2]], second: usize) {
        macro_rules! go {
            ($($n:literal),*) => {
                match self.w[0] {
                    $($n => self.spread_points_w::<K, $n, FMA, WIDE>(k, g, cs, lo, shape, bx, second),)*
                    _ => self.spread_points_w::<K, 0, FMA, WIDE>(k, g, cs, lo, shape, bx, second),
                }
            };
        }
        specialised_widths!(go)
    }

    /// [`Self::spread_points`] for the width `W` (`W = 0`: any width, runtime loop).
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    fn spread_points_w<K: KernelEval<T>, const W: usize, const FMA: bool, const WIDE: bool>(&self, k: &K, g: &[&[T]; 3], cs: Strengths<T>, lo: [isize; 3], shape: [usize; 3], bx: &mut [[T; 2]], second: usize) {
        let mut ker = self.kernel_buffer();
        let mut i0 = [0isize; 3];
        let wyz = [self.w[1], self.w[2]];
        let (perm, c) = cs;
        for q in 0..g[0].len() {
            let cv = match perm {
                Some(perm) => {
                    // written out: through `prefetch_permuted` this loop measured about 4 %
                    // slower (2D w = 7, two threads, five of six pairs)
                    if let Some(&ahead) = perm.get(q + STRENGTH_AHEAD) {
                        prefetch(c.as_ptr().wrapping_add(ahead as usize));
                    }
                    c[perm[q] as usize]
                }
                None => c[q],
            };
            self.point_kernel::<K, FMA>(k, g, q, &mut ker, &mut i0);
            let l = [(i0[0] - lo[0]) as usize, (i0[1] - lo[1]) as usize, (i0[2] - lo[2]) as usize];
            if W == 0 {
                inner::spread_dyn(bx, [shape[0], shape[1]], l, wyz, &ker, cv, self.w[0]);
            } else if W.is_multiple_of(2) && second != 0 {
                // paired boxes: an odd start goes to the second box, one entry further right
                let odd = l[0] & 1;
                let (b, l) = (&mut bx[odd * second..], [l[0] + odd, l[1], l[2]]);
                if !(FMA && simd_row::<T, W, WIDE>([shape[0], shape[1]], l, wyz, &ker, RowOp::SpreadFromStart(b, cv))) {
                    inner::spread_w::<T, W, FMA>(b, [shape[0], shape[1]], l, wyz, &ker, cv);
                }
            } else if !(FMA && simd_row::<T, W, WIDE>([shape[0], shape[1]], l, wyz, &ker, RowOp::Spread(bx, cv))) {
                inner::spread_w::<T, W, FMA>(bx, [shape[0], shape[1]], l, wyz, &ker, cv);
            }
        }
    }

    /// The box of a subproblem whose points have folded coordinates `g`: its corner `lo` (grid
    /// index of the first point of the box, not wrapped) and sizes `bsz`, covering every grid
    /// point the kernels of the points touch.
    fn subproblem_box(&self, g: &[&[T]; 3]) -> ([isize; 3], [usize; 3]) {
        let w = self.w;
        let mut lo = [0isize; 3];
        let mut hi = [0isize; 3];
        for d in 0..self.dim {
            let half = T::of(0.5 * w[d] as f64);
            let (mn, mx) = g[d].iter().fold((T::infinity(), T::neg_infinity()), |(mn, mx), &v| (mn.min(v), mx.max(v)));
            lo[d] = (mn - half).ceil().to_isize().unwrap_or(0);
            hi[d] = (mx - half).ceil().to_isize().unwrap_or(0);
        }
        (lo, [(hi[0] - lo[0]) as usize + w[0], (hi[1] - lo[1]) as usize + w[1], (hi[2] - lo[2]) as usize + w[2]])
    }

    /// Visits a box with corner `lo`, sizes `bsz` and row stride `sx ≥ bsz[0]` laid over the
    /// periodic grid as runs that are contiguous in both and stay inside one grid row and one
    /// lock stripe: `f(box index, grid index, run length, stripe)`, in box order.
    #[inline(always)]
    fn for_each_run(&self, lo: [isize; 3], bsz: [usize; 3], sx: usize, mut f: impl FnMut(usize, usize, usize, usize)) {
        let nf = self.nf;
        let wrap = |v: isize, n: usize| -> usize { v.rem_euclid(n as isize) as usize };
        for kz in 0..bsz[2] {
            let gz = wrap(lo[2] + kz as isize, nf[2]);
            for jy in 0..bsz[1] {
                let gy = wrap(lo[1] + jy as isize, nf[1]);
                let rowbase = nf[0] * (gy + nf[1] * gz);
                let boxrow = sx * (jy + bsz[1] * kz);
                let mut i = 0usize;
                while i < bsz[0] {
                    let gx = wrap(lo[0] + i as isize, nf[0]);
                    let gidx = rowbase + gx;
                    let stripe = gidx / self.stripe;
                    let run = (bsz[0] - i).min(nf[0] - gx).min((stripe + 1) * self.stripe - gidx);
                    f(boxrow + i, gidx, run, stripe);
                    i += run;
                }
            }
        }
    }

    /// Adds a box with corner `lo`, sizes `bsz` and row stride `sx` into the periodic grid,
    /// locking one stripe at a time.
    fn wrap_add(&self, bx: &[[T; 2]], lo: [isize; 3], bsz: [usize; 3], sx: usize, grid: SyncPtr<Complex<T>>) {
        self.wrap_add_with(bx, lo, bsz, sx, grid, |d, s| {
            d.re += s[0];
            d.im += s[1];
        });
    }

    /// The wrap-add of boxes of any element type `S` into a grid of `D`: each x-row of the box
    /// is split into contiguous runs that stay inside one grid row and one lock stripe, and
    /// `add(grid value, box value)` is applied under that stripe's lock.
    #[inline(always)]
    pub(super) fn wrap_add_with<S, D>(&self, bx: &[S], lo: [isize; 3], bsz: [usize; 3], sx: usize, grid: SyncPtr<D>, add: impl Fn(&mut D, &S)) {
        self.for_each_run(lo, bsz, sx, |bi, gidx, run, stripe| {
            let _guard = self.locks[stripe].lock().unwrap_or_else(|e| e.into_inner());
            // SAFETY: indices gidx..gidx+run are inside the grid and inside one stripe, whose
            // lock we hold; no other thread touches them meanwhile.
            let dst = unsafe { std::slice::from_raw_parts_mut(grid.0.add(gidx), run) };
            for (d, s) in dst.iter_mut().zip(&bx[bi..bi + run]) {
                add(d, s);
            }
        });
    }

    fn interp_with<K: KernelEval<T>>(&self, k: &K, grid: &[Complex<T>], c: &mut [Complex<T>], threads: &Threads) -> Result<()> {
        if self.in_order {
            self.interp_in_order(k, grid, c, threads);
            return Ok(());
        }
        let cp = SyncPtr(c.as_mut_ptr());
        let failed: Mutex<Option<Error>> = Mutex::new(None);
        threads.for_each(self.subprobs.len(), |s| {
            let cp = cp;
            let (a, b) = self.subprobs[s];
            if let Err(e) = self.interp_subproblem(k, a, b, grid, cp) {
                *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            }
        });
        failed.into_inner().unwrap_or_else(|p| p.into_inner()).map_or(Ok(()), Err)
    }

    /// Interpolates at sorted points `a..b` (the mirror of [`Self::spread_subproblem`]): the
    /// grid values of the subproblem's box are copied out with periodic wrap-around, the points
    /// gather from that cache-resident box with the row loops of spreading, and the values are
    /// written to the caller's order.
    fn interp_subproblem<K: KernelEval<T>>(&self, k: &K, a: usize, b: usize, grid: &[Complex<T>], c: SyncPtr<Complex<T>>) -> Result<()> {
        let (loc, low) = self.local_coords(a, b)?;
        let g: [&[T]; 3] = [&loc[0], &loc[1], &loc[2]];
        let (lo, bsz) = self.subproblem_box(&g);
        let shape = box_shape::<T>(bsz);
        let (mut store, off, _) = aligned_boxes::<T>(shape, 1)?;
        let bx = &mut store[off..];
        self.for_each_run(lo, bsz, shape[0], |bi, gidx, run, _| {
            for (d, s) in bx[bi..bi + run].iter_mut().zip(&grid[gidx..gidx + run]) {
                *d = [s.re, s.im];
            }
        });
        let bx = &*bx;
        if let Some(glo) = low {
            // 1D: the windows at the double-double coordinates, as in the caller's order; perm
            // is a permutation and subproblems are disjoint, so each output index is written once
            self.interp_row_points(k, g[0], &glo, bx, lo[0], Some(&self.perm[a..b]), c);
            return Ok(());
        }
        let mut out = crate::error::try_vec::<Complex<T>>(b - a, "subproblem values")?;
        let dst = self.callers_order_in_loop().then_some((&self.perm[a..b], c.0 as *const Complex<T>));
        #[cfg(target_arch = "x86_64")]
        if crate::simd::has_avx512() {
            // SAFETY: the CPU supports AVX-512F, AVX2 and FMA (checked at run time).
            unsafe { self.interp_points_avx512(k, &g, bx, lo, shape, &mut out, dst) };
        } else if crate::simd::has_avx2_fma() {
            // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
            unsafe { self.interp_points_avx2(k, &g, bx, lo, shape, &mut out, dst) };
        } else {
            self.interp_points_w::<K, 0, false, false>(k, &g, bx, lo, shape, &mut out, dst);
        }
        #[cfg(not(target_arch = "x86_64"))]
        self.interp_points::<K, false, false>(k, &g, bx, lo, shape, &mut out, dst);
        for (q, v) in out.into_iter().enumerate() {
            // SAFETY: perm is a permutation and subproblems are disjoint, so each output
            // index is written once.
            unsafe { *c.0.add(self.perm[a + q] as usize) = v };
        }
        Ok(())
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn interp_points_avx2<K: KernelEval<T>>(&self, k: &K, g: &[&[T]; 3], bx: &[[T; 2]], lo: [isize; 3], shape: [usize; 3], out: &mut Vec<Complex<T>>, dst: Dest<T>) {
        self.interp_points::<K, true, false>(k, g, bx, lo, shape, out, dst)
    }

    #[cfg(target_arch = "x86_64")]
    // VL: 32 registers for the 256-bit rows of `interp_256bit_rows` (with 16, their
    // accumulators were spilled to the stack; docs/performance.md)
    #[target_feature(enable = "avx512f,avx512vl,avx2,fma")]
    unsafe fn interp_points_avx512<K: KernelEval<T>>(&self, k: &K, g: &[&[T]; 3], bx: &[[T; 2]], lo: [isize; 3], shape: [usize; 3], out: &mut Vec<Complex<T>>, dst: Dest<T>) {
        // the kernel evaluation keeps this clone's 512-bit code ([`Self::interp_256bit_rows`])
        if self.interp_256bit_rows() {
            self.interp_points::<K, true, false>(k, g, bx, lo, shape, out, dst)
        } else {
            self.interp_points::<K, true, true>(k, g, bx, lo, shape, out, dst)
        }
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn interp1d_avx2<K: KernelEval<T>>(&self, k: &K, g: &[T], glo: Option<&[f32]>, bx: &[[T; 2]], lo: isize, perm: Option<&[u32]>, c: SyncPtr<Complex<T>>) -> bool {
        self.interp1d::<K, false>(k, g, glo, bx, lo, perm, c)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx512f,avx2,fma")]
    unsafe fn interp1d_avx512<K: KernelEval<T>>(&self, k: &K, g: &[T], glo: Option<&[f32]>, bx: &[[T; 2]], lo: isize, perm: Option<&[u32]>, c: SyncPtr<Complex<T>>) -> bool {
        self.interp1d::<K, true>(k, g, glo, bx, lo, perm, c)
    }

    /// 1D interpolation of the box with first grid index `lo` at the points with folded
    /// coordinates `g` (plus `glo`, their low parts, in the caller's order: [`in_order`]),
    /// writing point `q`'s value to `c[perm[q]]` (to `c[q]` without `perm`) with the one-row
    /// kernels [`inner_simd::interp1d_f32`] … of the clone (512-bit for f64 up to w = 8 when
    /// `WIDE`). A kernel window that leaves the box is read with periodic wrap-around over the
    /// box's length (the whole grid in [`in_order`], where `lo` = 0). Returns false (nothing
    /// done) unless `T` is f32 or f64 and the width is 2–16.
    ///
    /// # Safety
    /// Inside an AVX2/FMA clone (AVX-512F too when `WIDE`); `c` valid for the indices of `perm`
    /// (or `0..g.len()`), written by no one else meanwhile.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn interp1d<K: KernelEval<T>, const WIDE: bool>(&self, k: &K, g: &[T], glo: Option<&[f32]>, bx: &[[T; 2]], lo: isize, perm: Option<&[u32]>, c: SyncPtr<Complex<T>>) -> bool {
        macro_rules! go {
            ($($n:literal),*) => {
                match self.w[0] {
                    $($n => self.interp1d_w::<K, $n, WIDE>(k, g, glo, bx, lo, perm, c),)*
                    _ => false,
                }
            };
        }
        specialised_widths!(go)
    }

    /// [`Self::interp1d`] for the width `W`.
    #[cfg(target_arch = "x86_64")]
    #[inline(always)]
    unsafe fn interp1d_w<K: KernelEval<T>, const W: usize, const WIDE: bool>(&self, k: &K, g: &[T], glo: Option<&[f32]>, bx: &[[T; 2]], lo: isize, perm: Option<&[u32]>, c: SyncPtr<Complex<T>>) -> bool {
        use std::any::TypeId;
        macro_rules! run {
            ($t:ty, $f:ident) => {{
                // SAFETY (of the casts): T is $t (TypeId above).
                let bx = &*(bx as *const [[T; 2]] as *const [[$t; 2]]);
                let n = bx.len() as isize;
                let mut kx = [[T::zero(); MAX_WIDTH]; 2];
                // caller's order: the windows are scattered over the grid, so their cache lines
                // are prefetched on large grids (M = 1e7, w = 13, one thread: 1.45 → 0.48 s)
                // (the box is the whole grid there: lo = 0)
                let ahead = (perm.is_none() && prefetches(bx)).then_some((bx.as_ptr(), bx.len()));
                for_each_pair(g, glo, W, ahead, |pts, both| {
                    k.eval_fused_n([pts[0].2, pts[1].2], &mut kx);
                    for (i, &(p, l0, _)) in pts.iter().enumerate().take(1 + usize::from(both)) {
                        let l0 = l0 - lo;
                        let kx = &*(&kx[i] as *const [T; MAX_WIDTH] as *const [$t; MAX_WIDTH]);
                        let out = c.0.add(perm.map_or(p, |pm| pm[p] as usize)) as *mut Complex<$t>;
                        if l0 >= 0 && l0 + W as isize <= n {
                            inner_simd::$f::<W>(bx, l0 as usize, kx, out);
                        } else {
                            // the window wraps around the periodic row (caller's order only)
                            let mut row = [[0.0 as $t; 2]; MAX_WIDTH];
                            for (i, r) in row.iter_mut().take(W).enumerate() {
                                *r = bx[(l0 + i as isize).rem_euclid(n) as usize];
                            }
                            inner_simd::$f::<W>(&row, 0, kx, out);
                        }
                    }
                });
                true
            }};
        }
        let f64 = TypeId::of::<T>() == TypeId::of::<f64>();
        let f32 = TypeId::of::<T>() == TypeId::of::<f32>();
        match (f64, f32, WIDE) {
            // from w = 9 the kernel's two stores overlap: 256-bit rows with 64-bit kernel
            // loads in the AVX-512 clone too (inner_simd: store forwarding)
            (true, _, true) if W <= 8 => run!(f64, interp1d_f64_512),
            (true, _, _) => run!(f64, interp1d_f64),
            // f32 takes 256-bit rows in the AVX-512 clone too (inner_simd: store forwarding)
            (_, true, _) => run!(f32, interp1d_f32),
            _ => false,
        }
    }

    /// Interpolates the box with corner `lo` at the points with folded coordinates `g`,
    /// appending to `out`, and prefetches each value's destination `dst` where given ([`Dest`];
    /// `FMA`, `WIDE`: as in [`Self::spread_points`]).
    #[inline(always)]
    fn interp_points<K: KernelEval<T>, const FMA: bool, const WIDE: bool>(&self, k: &K, g: &[&[T]; 3], bx: &[[T; 2]], lo: [isize; 3], shape: [usize; 3], out: &mut Vec<Complex<T>>,
                                                                     dst: Dest<T>) {
        macro_rules! go {
            ($($n:literal),*) => {
                match self.w[0] {
                    $($n => self.interp_points_w::<K, $n, FMA, WIDE>(k, g, bx, lo, shape, out, dst),)*
                    _ => self.interp_points_w::<K, 0, FMA, WIDE>(k, g, bx, lo, shape, out, dst),
                }
            };
        }
        specialised_widths!(go)
    }

    /// [`Self::interp_points`] for the width `W` (`W = 0`: any width, runtime loop).
    #[inline(always)]
    fn interp_points_w<K: KernelEval<T>, const W: usize, const FMA: bool, const WIDE: bool>(&self, k: &K, g: &[&[T]; 3], bx: &[[T; 2]], lo: [isize; 3], shape: [usize; 3],
                                                                       out: &mut Vec<Complex<T>>, dst: Dest<T>) {
        let mut ker = self.kernel_buffer();
        let mut i0 = [0isize; 3];
        let wyz = [self.w[1], self.w[2]];
        let n = g[0].len();
        for q in 0..n {
            // the value's line in the caller's order, brought in while the next points are
            // interpolated, for the stores after the loop ([`Self::callers_order_in_loop`])
            if let Some((perm, c)) = dst {
                prefetch_permuted(perm, c, q);
            }
            self.point_kernel::<K, FMA>(k, g, q, &mut ker, &mut i0);
            let l = [(i0[0] - lo[0]) as usize, (i0[1] - lo[1]) as usize, (i0[2] - lo[2]) as usize];
            out.push(if W == 0 {
                inner::interp_dyn(bx, [shape[0], shape[1]], l, wyz, &ker, self.w[0])
            } else {
                let mut v = Complex::new(T::zero(), T::zero());
                // the vector rows need the box's padding, which these boxes have
                if !(FMA && simd_row::<T, W, WIDE>([shape[0], shape[1]], l, wyz, &ker, RowOp::Interp(bx, &mut v))) {
                    v = inner::interp_w::<T, W, FMA>(bx, [shape[0], shape[1]], l, wyz, &ker);
                }
                v
            });
        }
    }
}

/// The strengths of a subproblem's points: the subproblem's `perm` and the caller's array, or
/// `None` and the strengths already gathered in sorted order
/// ([`Spreader::callers_order_in_loop`]).
type Strengths<'a, T> = (Option<&'a [u32]>, &'a [Complex<T>]);

/// Points ahead whose strength the spreading loop prefetches where it reads the strengths in
/// the caller's order itself ([`Spreader::callers_order_in_loop`]): one random access per
/// point, which a separate gather pass waited for (docs/performance.md).
const STRENGTH_AHEAD: usize = 16;

/// Where interpolated values go, for their prefetch: the subproblem's `perm` and the caller's
/// array (`None` where [`Spreader::callers_order_in_loop`] is false).
type Dest<'a, T> = Option<(&'a [u32], *const Complex<T>)>;

/// The allocated shape of a subproblem box of sizes `bsz`: the row stride rounded up to
/// whole [`BOX_ALIGN`] blocks (see [`inner_simd::BOX_ALIGN`]), and to an odd number of them
/// when the box has more than one row. A point's rows (`w` per plane, `w` planes) then fall on
/// all sets of the L1 cache: with an even stride of 2^k lines they used only 1/2^k of them (3D
/// w = 13 or 14, f64: a stride of 8 lines, rows of 4–5 lines on 32 of the 64 sets, 21 lines
/// per 12-way set), so that a point's rows evicted each other.
fn box_shape<T: Real>(bsz: [usize; 3]) -> [usize; 3] {
    let per = (BOX_ALIGN / std::mem::size_of::<[T; 2]>()).max(1);
    let blocks = bsz[0].div_ceil(per);
    let blocks = if bsz[1] * bsz[2] > 1 && blocks.is_multiple_of(2) { blocks + 1 } else { blocks };
    [blocks * per, bsz[1], bsz[2]]
}

/// `count` zeroed boxes of `shape` (each with [`BOX_PAD`] entries past it) in one vector: the
/// first at offset `off`, the others every `stride` entries after it, each
/// [`BOX_ALIGN`]-aligned. Errors: [`Error::Alloc`].
fn aligned_boxes<T: Real>(shape: [usize; 3], count: usize) -> Result<(Vec<[T; 2]>, usize, usize)> {
    let elem = std::mem::size_of::<[T; 2]>();
    let extra = BOX_ALIGN.div_ceil(elem);
    let stride = (shape[0] * shape[1] * shape[2] + BOX_PAD).next_multiple_of(extra);
    let v = crate::error::try_filled_vec::<[T; 2]>(stride * count + extra, [T::zero(); 2], "subproblem box")?;
    let mis = v.as_ptr() as usize % BOX_ALIGN;
    let off = if mis == 0 { 0 } else { (BOX_ALIGN - mis) / elem };
    Ok((v, off.min(extra), stride))
}

/// Whether the 2D/3D spreading box loops run 256-bit rows: in the AVX2/FMA clone, and in the
/// AVX-512 clone where the CPU splits 512-bit operations into two 256-bit halves (AMD Zen 4,
/// [`crate::simd::splits_512bit_ops`]: there 256-bit rows leave fewer lanes unused, while the
/// kernel evaluation keeps 512-bit code; docs/performance.md). Where the CPU runs 512-bit
/// vectors at full width, the AVX-512 clone writes 512-bit rows; `false` off x86-64.
fn spreads_256bit_rows() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        crate::simd::has_avx2_fma() && (!crate::simd::has_avx512() || crate::simd::splits_512bit_ops())
    }
    #[cfg(not(target_arch = "x86_64"))]
    false
}

/// Complex entries past the last row of every subproblem box ([`inner_simd::BOX_PAD`]: the
/// vector row loops read whole vectors).
#[cfg(target_arch = "x86_64")]
const BOX_PAD: usize = inner_simd::BOX_PAD;
#[cfg(not(target_arch = "x86_64"))]
const BOX_PAD: usize = 0;

/// Alignment (bytes) of subproblem boxes and their row strides.
#[cfg(target_arch = "x86_64")]
const BOX_ALIGN: usize = inner_simd::BOX_ALIGN;
#[cfg(not(target_arch = "x86_64"))]
const BOX_ALIGN: usize = 16;

/// One point's row operation for [`simd_row`], with its box.
enum RowOp<'a, T: Real> {
    /// Spread this strength into the box.
    Spread(&'a mut [[T; 2]], Complex<T>),
    /// Spread this strength into the box with the vectors from the row's first entry
    /// (`FROM_START` of [`inner_simd`]'s spreading loops): for the paired boxes
    /// ([`Spreader::paired_boxes`]), where the rows start on a vector boundary.
    SpreadFromStart(&'a mut [[T; 2]], Complex<T>),
    /// Interpolate the box into this value.
    Interp(&'a [[T; 2]], &'a mut Complex<T>),
}

/// Runs `op` with the vector row loops of [`inner_simd`] (512-bit when `WIDE`, else 256-bit)
/// when `T` is `f64` or `f32` and `W ≤ 16`; returns false (nothing done) otherwise. Called
/// only from the AVX2/FMA clones (`FMA = true`) and, with `WIDE`, the AVX-512 clones, where
/// the intrinsics are inlined; `bx` must have [`BOX_PAD`] entries past its last row.
#[inline(always)]
fn simd_row<T: Real, const W: usize, const WIDE: bool>(s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &inner::PointKernel<T>, op: RowOp<'_, T>) -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::any::TypeId;
        if W > 16 {
            return false;
        }
        macro_rules! run {
            ($t:ty, $spread:ident, $interp:ident) => {{
                // SAFETY: T is $t (TypeId above); the caller runs inside an AVX2/FMA clone and
                // the box has BOX_PAD entries past its rows.
                unsafe {
                    let ker = &*(ker as *const inner::PointKernel<T> as *const inner::PointKernel<$t>);
                    match op {
                        RowOp::Spread(bx, c) => {
                            let bx = &mut *(bx as *mut [[T; 2]] as *mut [[$t; 2]]);
                            inner_simd::$spread::<W, false>(bx, s, l, wyz, ker, Complex::new(c.re.to_f64v() as $t, c.im.to_f64v() as $t))
                        }
                        RowOp::SpreadFromStart(bx, c) => {
                            let bx = &mut *(bx as *mut [[T; 2]] as *mut [[$t; 2]]);
                            inner_simd::$spread::<W, true>(bx, s, l, wyz, ker, Complex::new(c.re.to_f64v() as $t, c.im.to_f64v() as $t))
                        }
                        RowOp::Interp(bx, v) => {
                            let bx = &*(bx as *const [[T; 2]] as *const [[$t; 2]]);
                            let r = inner_simd::$interp::<W>(bx, s, l, wyz, ker);
                            *v = Complex::new(T::of(r.re as f64), T::of(r.im as f64));
                        }
                    }
                }
                return true;
            }};
        }
        let f64 = TypeId::of::<T>() == TypeId::of::<f64>();
        let f32 = TypeId::of::<T>() == TypeId::of::<f32>();
        match (f64, f32, WIDE) {
            (true, _, true) => run!(f64, spread_f64_512, interp_f64_512),
            (true, _, false) => run!(f64, spread_f64, interp_f64),
            (_, true, true) => run!(f32, spread_f32_512, interp_f32_512),
            (_, true, false) => run!(f32, spread_f32, interp_f32),
            _ => {}
        }
    }
    let _ = (s, l, wyz, ker, op);
    false
}

/// Elements ahead that the gathers in the caller's point order prefetch (their accesses are
/// random over arrays of M elements: cache and TLB misses one after the other otherwise).
/// Measured at M = 1e7 on one thread: 5–10 % of spreading time at 64–128 (the scatter of
/// interpolated values, stores, gained nothing).
const PREFETCH_AHEAD: usize = 64;

/// Rows of at most this many bytes are not prefetched in the caller's order ([`prefetches`]):
/// their lines come from L2 or the near L3, whose latency the out-of-order core covers, and the
/// window arithmetic and prefetches cost more than they save. Measured on the 2-core AMD EPYC
/// (AVX2) of docs/performance.md, execute with and without prefetching: one thread, 2·10⁵
/// points, f32 with a 19 KB grid 3.5 → 1.9 ms (type 1) and 3.9 → 2.5 ms (type 2), f64 with a
/// 432 KB grid 6.9 → 4.8 and 7.0 → 5.1 ms; two threads, M = 10⁷, tol 1e-6, f64: at a 3.1 MB
/// grid 0.20–0.21 → 0.16–0.18 s, but at 9.4 MB 0.23 → 0.39–0.48 s and at 31 MB 0.31 → 0.65–0.72 s.
const PREFETCH_MIN_BYTES: usize = 1 << 22;

/// Whether the loops over points in the caller's order prefetch the windows of the row `bx`.
#[inline(always)]
fn prefetches<E>(bx: &[E]) -> bool {
    std::mem::size_of_val(bx) > PREFETCH_MIN_BYTES
}

/// Asks the CPU to bring the cache line of `p` into L1 (a hint: no fault, no effect off x86-64).
#[inline(always)]
fn prefetch<E>(p: *const E) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: prefetching never faults, whatever the address.
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p as *const i8)
    };
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// The kernel window of a 1D point at folded coordinate `g + lo` (`lo` the low part of a
/// double-double coordinate, [`in_order::fold_points_dd`]; 0 without one) for a kernel of
/// half-width `half`: its first grid index `⌈g − half⌉` and the kernel argument of that index,
/// `(⌈g − half⌉ − g) − lo` (per axis in [`Spreader::point_kernel`], with `lo` = 0).
#[inline(always)]
fn window<T: Real>(g: T, lo: f32, half: T) -> (isize, T) {
    let start = (g - half).ceil();
    (start.to_isize().unwrap_or(0), (start - g) - T::of(lo as f64))
}

/// Prefetches every cache line of the `w` entries of the periodic row `bx` from grid index
/// `⌈start⌉` on (clamped to the row): the kernel window of a point whose window starts at
/// `start = g − w/2`, for the loops over points in the caller's order ([`in_order`]).
#[inline(always)]
fn prefetch_window<E, T: Real>((base, n): (*const E, usize), start: T, w: usize) {
    let la = start.ceil().to_isize().unwrap_or(0).clamp(0, n as isize - 1) as usize;
    let first = base.wrapping_add(la) as usize;
    let last = base.wrapping_add((la + w - 1).min(n - 1)) as usize;
    for line in (first & !63..=last).step_by(64) {
        prefetch(line as *const u8);
    }
}

/// Walks the 1D points with folded coordinates `g` (low parts `glo`, [`window`]) in pairs, for
/// a kernel of width `w`: calls `f(pts, both)` with `(index, first grid index, kernel
/// argument)` of the pair's two points (`both` false for a last point alone, which `pts[1]`
/// then repeats), so that the caller evaluates their kernels together
/// ([`KernelEval::eval_fused_n`]: one point's Horner chain alone is latency-bound). With
/// `ahead` (address and length of the periodic row, for points in the caller's order on a row
/// that [`prefetches`]), the windows [`PREFETCH_AHEAD`] points ahead are prefetched.
#[inline(always)]
fn for_each_pair<T: Real, E>(g: &[T], glo: Option<&[f32]>, w: usize, ahead: Option<(*const E, usize)>, mut f: impl FnMut([(usize, isize, T); 2], bool)) {
    let half = T::of(0.5 * w as f64);
    for q in (0..g.len()).step_by(2) {
        let b = (q + 1).min(g.len() - 1);
        if let Some(row) = ahead {
            for p in [q, b] {
                if let Some(&ga) = g.get(p + PREFETCH_AHEAD) {
                    prefetch_window(row, ga - half, w);
                }
            }
        }
        // written out: `[q, b].map(…)` stayed an out-of-line call compiled without the clone's
        // target features, whose `ceil` was a call of libm's `ceilf` (1D f32: 11 % of the time)
        let (lq, lb) = match glo {
            Some(gl) => (gl[q], gl[b]),
            None => (0.0, 0.0),
        };
        let ((iq, tq), (ib, tb)) = (window(g[q], lq, half), window(g[b], lb, half));
        f([(q, iq, tq), (b, ib, tb)], b > q);
    }
}

/// Appends `src[perm[q]]` for every `q` to `out` in order, prefetching [`PREFETCH_AHEAD`]
/// elements ahead.
#[inline]
fn gather<E: Copy>(perm: &[u32], src: &[E], out: &mut Vec<E>) {
    for (q, &j) in perm.iter().enumerate() {
        prefetch_permuted(perm, src.as_ptr(), q + PREFETCH_AHEAD);
        out.push(src[j as usize]);
    }
}

/// Prefetches the entry `perm[s]` of the array at `base` (nothing when `s` is past `perm`).
#[inline(always)]
fn prefetch_permuted<E>(perm: &[u32], base: *const E, s: usize) {
    if let Some(&j) = perm.get(s) {
        prefetch(base.wrapping_add(j as usize));
    }
}

/// 2π as a double-double: `TWO_PI_HI + TWO_PI_LO` equals 2π to about 1e-32.
const TWO_PI_HI: f64 = std::f64::consts::TAU;
const TWO_PI_LO: f64 = 2.449_293_598_294_706_4e-16;

/// Largest |x| (radians) for which [`reduce_2pi`] is exact to ~1e-15 rad: 10¹⁶. Beyond it the
/// reduction (and so the transform) loses accuracy, though it stays finite.
pub const MAX_EXACT_COORD: f64 = 1e16;

/// The fraction `u ∈ [0, 1)` of the period of `x` (radians, finite): `x/(2π) mod 1`, in
/// double precision. For |x| ≤ 64 `x·(1/2π)` is accurate to ~1e-15 already; larger |x| are
/// first reduced by a two-term (Cody–Waite) 2π with fused multiply-adds,
/// `r = (x − q·C₁) − q·C₂`, `q = round(x/2π)`, which is exact to ~4e-16 rad for
/// |x| ≤ [`MAX_EXACT_COORD`] (instead of the relative error |x|·eps of `x/(2π)`, 1e-6 rad
/// at |x| = 1e10).
#[inline(always)]
pub fn reduce_2pi(x: f64) -> f64 {
    const INV: f64 = 1.0 / (2.0 * std::f64::consts::PI);
    let u = if x.abs() <= 64.0 {
        x * INV
    } else {
        let q = (x * INV).round();
        let r = (-q).mul_add(TWO_PI_HI, x);
        let r = (-q).mul_add(TWO_PI_LO, r);
        r * INV
    };
    // floor by integer conversion (|u| ≤ 2^31 here except for huge x, where `floor` is used)
    let fl = if u.abs() < 2147483648.0 {
        let t = u as i64 as f64;
        if t > u { t - 1.0 } else { t }
    } else {
        u.floor()
    };
    let f = u - fl;
    if f >= 1.0 { 0.0 } else { f }
}

/// Folds a coordinate (radians, finite) into grid units `[0, nf)`. The reduction mod 2π is
/// done in double precision ([`reduce_2pi`]) whatever `T` is; only the grid coordinate is
/// rounded to `T`.
#[inline(always)]
fn fold<T: Real>(x: T, nf: usize) -> T {
    let g = T::of(reduce_2pi(x.to_f64v()) * nf as f64);
    // rounding to T may give nf itself
    if g >= T::of(nf as f64) { T::zero() } else { g }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::KernelKind;
    use rand::{Rng, SeedableRng};

    /// Direct periodic spreading with the exact kernel formula.
    fn direct_spread(dim: usize, nf: [usize; 3], k: &Kernel, pts: &[[f64; 3]], c: &[Complex<f64>]) -> Vec<Complex<f64>> {
        let n: usize = nf.iter().product();
        let mut grid = vec![Complex::new(0.0, 0.0); n];
        for (p, &cv) in pts.iter().zip(c) {
            // the kernel's value at every grid index of every axis (nearest periodic distance),
            // then their product at every grid point: ψ(l₀ − g₀)·ψ(l₁ − g₁)·ψ(l₂ − g₂)
            let kv: Vec<Vec<f64>> = (0..dim)
                .map(|d| {
                    let g = exact_coord(p[d], nf[d]);
                    (0..nf[d]).map(|i| k.value(periodic_offset(i, g, nf[d]))).collect()
                })
                .collect();
            for l in 0..n {
                let li = [l % nf[0], (l / nf[0]) % nf[1], l / (nf[0] * nf[1])];
                let mut v = 1.0;
                for d in 0..dim {
                    v *= kv[d][li[d]];
                }
                grid[l] += cv * v;
            }
        }
        grid
    }

    fn check(dim: usize, kind: KernelKind, tol: f64, threads: usize) {
        check_kernel(dim, &Kernel::for_tolerance(kind, tol, 2.0), tol, threads);
    }

    /// Spreading with kernel `k` against the direct sum (to `tol` of the largest grid value),
    /// the by-reference mode, and interpolation as its transpose.
    fn check_kernel(dim: usize, k: &Kernel, tol: f64, threads: usize) {
        let kind = k.family().expect("an ES or Gaussian kernel");
        // at least twice the width on every axis (the spreader's minimum)
        let wide = 2 * k.width();
        let nf_all = [32usize.max(wide + 4), 30usize.max(wide + 2), 28usize.max(wide)];
        let nf: Vec<usize> = nf_all[..dim].to_vec();
        let mut nf3 = [1usize; 3];
        nf3[..dim].copy_from_slice(&nf);
        let th = Threads::new(threads).unwrap();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
        let m = 300;
        let mut pts: Vec<[f64; 3]> = (0..m)
            .map(|_| [rng.gen_range(-10.0..10.0), rng.gen_range(-3.2..3.2), rng.gen_range(0.0..6.3)])
            .collect();
        // points exactly on grid nodes and on the period boundary
        pts[0] = [0.0, 0.0, 0.0];
        pts[1] = [2.0 * std::f64::consts::PI, -std::f64::consts::PI, 2.0 * std::f64::consts::PI * 17.0 / 28.0];
        let c: Vec<Complex<f64>> = (0..m).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
        let mut sp = Spreader::<f64>::new(dim, &nf, k, SpreadOpts { max_subprob_size: 37, ..Default::default() }).unwrap();
        let xs: Vec<Vec<f64>> = (0..3).map(|d| pts.iter().map(|p| p[d]).collect()).collect();
        let coords: [&[f64]; 3] = [&xs[0], if dim > 1 { &xs[1] } else { &[] }, if dim > 2 { &xs[2] } else { &[] }];
        sp.setpts(coords, &th).unwrap();
        // the by-reference mode must give the same results
        let mut sp_ref = Spreader::<f64>::new(dim, &nf, k, SpreadOpts { max_subprob_size: 37, ..Default::default() }).unwrap();
        // SAFETY: xs outlives sp_ref and is not modified.
        unsafe { sp_ref.setpts_by_reference(coords, &th).unwrap() };
        let n: usize = nf.iter().product();
        let mut grid = vec![Complex::new(0.0, 0.0); n];
        sp.spread(&c, &mut grid, &th);
        let mut grid_ref = vec![Complex::new(0.0, 0.0); n];
        sp_ref.spread(&c, &mut grid_ref, &th);
        // the order in which subproblem boxes meet in the grid depends on scheduling, so the
        // sums may differ by round-off
        assert!(grid.iter().zip(&grid_ref).all(|(a, b)| (a - b).norm() <= 1e-14 * (1.0 + a.norm())));
        let exact = direct_spread(dim, nf3, k, &pts, &c);
        let scale = exact.iter().map(|v| v.norm()).fold(0.0, f64::max);
        let err = grid.iter().zip(&exact).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);
        assert!(err <= tol * scale, "spread dim {dim} {kind:?}: err {err} scale {scale}");
        // interpolation is the transpose: <spread c, g> = <c, interp g>
        let gr: Vec<Complex<f64>> = (0..n).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
        let mut ci = vec![Complex::new(0.0, 0.0); m];
        sp.interp(&gr, &mut ci, &th);
        let mut ci_ref = vec![Complex::new(0.0, 0.0); m];
        sp_ref.interp(&gr, &mut ci_ref, &th);
        assert_eq!(ci, ci_ref);
        let lhs: Complex<f64> = grid.iter().zip(&gr).map(|(a, b)| a * b.conj()).sum();
        let rhs: Complex<f64> = c.iter().zip(&ci).map(|(a, b)| a * b.conj()).sum();
        assert!((lhs - rhs).norm() <= 1e-12 * lhs.norm().max(1.0), "adjointness dim {dim}: {lhs} vs {rhs}");
    }

    #[test]
    fn spread_matches_direct_all_dims() {
        for dim in 1..=3 {
            check(dim, KernelKind::Es, 1e-9, 1);
            check(dim, KernelKind::Es, 1e-4, 2);
            check(dim, KernelKind::Gaussian, 1e-6, 2);
        }
    }

    /// Every ES width in 2D and 3D against the direct sum, so that each row loop is checked,
    /// among them the paired boxes of even widths ([`Spreader::paired_boxes`]) where the CPU
    /// takes them; the tolerance is the width's error estimate at σ = 2.
    #[test]
    fn spread_matches_direct_every_width() {
        for w in 2..=crate::kernel::es::MAX_ES_WIDTH {
            let tol = crate::kernel::es::EsParams::error_estimate(w, 2.0).max(1e-13);
            let k = Kernel::Es(crate::kernel::es::EsParams::with_shape(w, 2.0, tol));
            for dim in 2..=3 {
                check_kernel(dim, &k, tol, 1 + w % 2);
            }
        }
    }

    /// A 1D interpolation-only spreader keeps the caller's order: no spreading, bad points
    /// rejected with the previous points kept; the flag changes nothing in 2D.
    #[test]
    fn interp_only_1d_keeps_order_and_refuses_spreading() {
        let k = Kernel::for_tolerance(KernelKind::Es, 1e-6, 2.0);
        let th = Threads::new(2).unwrap();
        let mut sp = Spreader::<f64>::new(1, &[64], &k, SpreadOpts { interp_only: true, ..Default::default() }).unwrap();
        let x: Vec<f64> = (0..100).map(|i| 0.37 * i as f64 - 9.0).collect();
        sp.setpts([&x, &[], &[]], &th).unwrap();
        let mut grid = vec![Complex::new(0.0, 0.0); 64];
        let c = vec![Complex::new(1.0, 0.0); 100];
        assert!(matches!(sp.try_spread(&c, &mut grid, &th), Err(Error::NotSupported(_))));
        // a non-finite coordinate names its index and leaves the previous points set
        let mut bad = x.clone();
        bad[77] = f64::NAN;
        match sp.setpts([&bad, &[], &[]], &th) {
            Err(Error::NonFinite(msg)) => assert!(msg.contains("point 77"), "{msg}"),
            r => panic!("expected NonFinite, got {r:?}"),
        }
        // SAFETY: bad outlives the call, which fails before keeping it.
        assert!(matches!(unsafe { sp.setpts_by_reference([&bad[..90], &[], &[]], &th) }, Err(Error::NonFinite(_))));
        assert!(sp.has_points() && sp.num_points() == 100);
        // 2D and 3D spreaders ignore the flag: they sort and spread
        let mut s2 = Spreader::<f64>::new(2, &[32, 32], &k, SpreadOpts { interp_only: true, ..Default::default() }).unwrap();
        s2.setpts([&x, &x, &[]], &th).unwrap();
        let mut g2 = vec![Complex::new(0.0, 0.0); 32 * 32];
        s2.try_spread(&c, &mut g2, &th).unwrap();
    }

    /// The grid coordinate `x·nf/(2π)` in `[0, nf)` to ~1e-16·nf (one division in f64: enough
    /// for the small grids of these tests), the reference for points kept in the caller's order.
    pub(super) fn exact_coord(x: f64, nf: usize) -> f64 {
        (x / (2.0 * std::f64::consts::PI)).rem_euclid(1.0) * nf as f64
    }

    /// The offset `l − g` of grid index `l` from grid coordinate `g`, taken at the nearest
    /// periodic image on a grid of `nf` points (in `[−nf/2, nf/2]`).
    pub(super) fn periodic_offset(l: usize, g: f64, nf: usize) -> f64 {
        let dd = l as f64 - g;
        dd - (dd / nf as f64).round() * nf as f64
    }

    /// 1D spreading with the points in the caller's order ([`SpreadOpts::callers_order`],
    /// [`in_order`]: the output grid plus
    /// one private grid per further thread, windows wrapping at both ends, f32 and f64, widths
    /// 2–16, copied and by reference) against direct spreading with the exact kernel; and the
    /// rule: the sort is kept when the private grids would outgrow the permutation, or on more
    /// than one thread for kernels wider than [`in_order::IN_ORDER_MAX_WIDTH`].
    #[test]
    fn spread_1d_in_callers_order_matches_direct() {
        fn run<T: Real>(kind: KernelKind, tol: f64, nf: usize, m: usize, threads: usize, in_order: bool) {
            let k = Kernel::for_tolerance(kind, tol, 2.0);
            let th = Threads::new(threads).unwrap();
            let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
            let mut x: Vec<f64> = (0..m).map(|_| rng.gen_range(-10.0..10.0)).collect();
            x[0] = 0.0;
            x[1] = 2.0 * std::f64::consts::PI;
            x[2] = -std::f64::consts::PI;
            x[3] = -1e-9;
            let c: Vec<Complex<f64>> = (0..m).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
            let xt: Vec<T> = x.iter().map(|&v| T::of(v)).collect();
            let ct: Vec<Complex<T>> = c.iter().map(|v| Complex::new(T::of(v.re), T::of(v.im))).collect();
            // the points spread exactly at their exact grid coordinates: both orders keep them
            // as double-doubles (in_order::fold_points_dd, in_order::low_parts)
            let w = k.width();
            let mut exact = vec![Complex::new(0.0, 0.0); nf];
            for (&xv, &cv) in xt.iter().zip(&c) {
                let g = exact_coord(xv.to_f64v(), nf);
                // the grid indices within w/2 + 1 of g (each once: w + 4 < nf here) hold every
                // index within w/2 at the nearest periodic distance
                let lo = (g - w as f64 / 2.0).floor() as i64 - 1;
                assert!(w + 4 < nf);
                for j in lo..=lo + w as i64 + 3 {
                    let l = j.rem_euclid(nf as i64) as usize;
                    let dd = periodic_offset(l, g, nf);
                    if dd.abs() <= w as f64 / 2.0 {
                        exact[l] += cv * k.value(dd);
                    }
                }
            }
            let scale = exact.iter().map(|v| v.norm()).fold(0.0, f64::max);
            for copy in [true, false] {
                let mut sp = Spreader::<T>::new(1, &[nf], &k, SpreadOpts { callers_order: true, ..Default::default() }).unwrap();
                if copy {
                    sp.setpts([&xt, &[], &[]], &th).unwrap();
                } else {
                    // SAFETY: xt outlives sp and is not changed.
                    unsafe { sp.setpts_by_reference([&xt, &[], &[]], &th).unwrap() };
                }
                // on more than one thread, wide kernels sort (in_order::IN_ORDER_MAX_WIDTH)
                let in_order = in_order && (threads == 1 || w <= in_order::IN_ORDER_MAX_WIDTH);
                assert_eq!(sp.in_order, in_order, "nf {nf} M {m} threads {threads} w {w}");
                // spreading overwrites whatever the grid held
                let mut grid = vec![Complex::new(T::of(7.0), T::of(-3.0)); nf];
                sp.try_spread(&ct, &mut grid, &th).unwrap();
                let err = grid.iter().zip(&exact).map(|(a, b)| (Complex::new(a.re.to_f64v(), a.im.to_f64v()) - b).norm()).fold(0.0, f64::max);
                // kernel fit error, plus the rounding of T over the sums
                let bound = (tol + 1e3 * T::EPS) * scale;
                assert!(err <= bound, "{kind:?} tol {tol} w {w} nf {nf} M {m} threads {threads} copy {copy}: err {err} > {bound}");
                if in_order {
                    // the real paths need the sort
                    let mut rg = vec![T::zero(); nf];
                    assert!(matches!(sp.try_spread_real(&xt, &mut rg, &th), Err(Error::NotSupported(_))));
                    let mut rv = vec![T::zero(); m];
                    assert!(matches!(sp.try_interp_real(&rg, &mut rv, &th), Err(Error::NotSupported(_))));
                }
            }
            // without the option the points are sorted
            let mut sorted = Spreader::<T>::new(1, &[nf], &k, SpreadOpts::default()).unwrap();
            sorted.setpts([&xt, &[], &[]], &th).unwrap();
            assert!(!sorted.in_order);
        }
        for (nf, m, threads, in_order) in [(40, 300, 1, true), (64, 2000, 3, true), (64, 200, 3, false), (4000, 3000, 2, false), (4000, 70000, 2, true)] {
            for &tol in &[1e-3, 1e-6, 1e-9, 1e-14] {
                run::<f64>(KernelKind::Es, tol, nf, m, threads, in_order);
            }
            run::<f32>(KernelKind::Es, 1e-5, nf, m, threads, in_order);
            run::<f64>(KernelKind::Gaussian, 1e-9, nf, m, threads, in_order);
        }
        assert!(private_grids_rule_holds());
    }

    /// [`in_order::private_grids`]: one grid per thread while the extra ones fit in 4 bytes per
    /// point, never more than the threads, at least one.
    fn private_grids_rule_holds() -> bool {
        use in_order::private_grids;
        // f64: 16 bytes per grid point, so each extra grid needs M ≥ 4·nf
        private_grids::<f64>(8_000_000, 2_000_000, 2) == 2
            && private_grids::<f64>(7_999_999, 2_000_000, 2) == 1
            && private_grids::<f64>(10_000_000, 2_000_000, 16) == 2
            && private_grids::<f32>(10_000_000, 2_000_000, 16) == 3
            && private_grids::<f64>(0, 10, 4) == 1
            && private_grids::<f64>(100, 10, 1) == 1
    }

    /// 1D interpolation (the one-row kernels of `inner_simd` on x86-64) against a direct sum
    /// with the exact kernel, f32 and f64, all kernel kinds, widths 2–16, small subproblems
    /// and points on the period boundary, at their exact coordinates, sorted and in the
    /// caller's order ([`SpreadOpts::interp_only`]; the same bits copied or by reference, on 1
    /// or 3 threads).
    #[test]
    fn interp_1d_matches_direct() {
        fn run<T: Real>(kind: KernelKind, tol: f64, nf: usize) {
            let k = Kernel::for_tolerance(kind, tol, 2.0);
            let th = Threads::new(1).unwrap();
            let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
            let m = 500;
            let mut x: Vec<f64> = (0..m).map(|_| rng.gen_range(-10.0..10.0)).collect();
            x[0] = 0.0;
            x[1] = 2.0 * std::f64::consts::PI;
            x[2] = -std::f64::consts::PI;
            let grid: Vec<Complex<f64>> = (0..nf).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
            let xt: Vec<T> = x.iter().map(|&v| T::of(v)).collect();
            let gt: Vec<Complex<T>> = grid.iter().map(|v| Complex::new(T::of(v.re), T::of(v.im))).collect();
            let mut sp = Spreader::<T>::new(1, &[nf], &k, SpreadOpts { max_subprob_size: 41, ..Default::default() }).unwrap();
            sp.setpts([&xt, &[], &[]], &th).unwrap();
            let mut got = vec![Complex::new(T::zero(), T::zero()); m];
            sp.interp(&gt, &mut got, &th);
            // the caller's order (interp_only), copied and by reference, 1 and 3 threads: the
            // same values whatever the path (bit for bit), at the exact coordinates
            let mut in_order: Option<Vec<Complex<T>>> = None;
            for threads in [1, 3] {
                let th = Threads::new(threads).unwrap();
                for copy in [true, false] {
                    let mut io = Spreader::<T>::new(1, &[nf], &k, SpreadOpts { max_subprob_size: 41, interp_only: true, ..Default::default() }).unwrap();
                    if copy {
                        io.setpts([&xt, &[], &[]], &th).unwrap();
                    } else {
                        // SAFETY: xt outlives io and is not changed.
                        unsafe { io.setpts_by_reference([&xt, &[], &[]], &th).unwrap() };
                    }
                    let mut vals = vec![Complex::new(T::zero(), T::zero()); m];
                    io.interp(&gt, &mut vals, &th);
                    match &in_order {
                        None => in_order = Some(vals),
                        Some(first) => assert!(&vals == first, "{kind:?} tol {tol} nf {nf}: caller's order (copy {copy}, {threads} threads) differs"),
                    }
                }
            }
            let w = k.width();
            for (vals, exact) in [(&got, false), (&in_order.unwrap(), true)] {
                for (j, &xv) in xt.iter().enumerate() {
                    let g = exact_coord(xv.to_f64v(), nf);
                    let mut want = Complex::new(0.0, 0.0);
                    for l in 0..nf {
                        let dd = periodic_offset(l, g, nf);
                        if dd.abs() <= w as f64 / 2.0 {
                            want += grid[l] * k.value(dd);
                        }
                    }
                    let v = Complex::new(vals[j].re.to_f64v(), vals[j].im.to_f64v());
                    // kernel fit error and rounding of T per term, W terms of size ≤ √2
                    let bound = w as f64 * 2.0 * (tol + 16.0 * T::EPS);
                    assert!((v - want).norm() <= bound, "{kind:?} tol {tol} w {w} nf {nf} point {j} (caller's order {exact}): {v} vs {want}");
                }
            }
        }
        for &tol in &[1e-2, 1e-4, 1e-6] {
            for &nf in &[40usize, 4000] {
                run::<f32>(KernelKind::Es, tol, nf);
                run::<f64>(KernelKind::Es, tol, nf);
            }
        }
        for &tol in &[1e-9, 1e-12, 1e-14] {
            run::<f64>(KernelKind::Es, tol, 64);
        }
        run::<f32>(KernelKind::Gaussian, 1e-5, 64);
        run::<f64>(KernelKind::Gaussian, 1e-9, 64);
    }

    /// Sorted 1D points keep their coordinates as double-doubles ([`in_order::low_parts`]):
    /// on a grid of 2²¹ points, where the sort's fold into f64 is up to ~1e-9 grid points off
    /// (a kernel value ~1e-8 off), sorted spreading and interpolation (two threads whose
    /// private grids would not fit: [`in_order::spreads_in_order`]), copied and by reference,
    /// give the values of the caller's order (exact to ~1e-16 grid points) to 1e-12 of their
    /// scale (2e-10 with the sort's fold alone). Points on and next to period ends included.
    #[test]
    fn sorted_1d_keeps_double_double_coordinates() {
        use std::f64::consts::PI;
        let nf = 1usize << 21;
        let m = nf + 12_345;
        let k = Kernel::for_tolerance(KernelKind::Es, 1e-13, 2.0);
        assert!(k.width() >= 12);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(21);
        let mut x: Vec<f64> = (0..m).map(|_| rng.gen_range(-3.0 * PI..3.0 * PI)).collect();
        let ends = [0.0, -0.0, 2.0 * PI, -2.0 * PI, PI, -PI, 2.0 * PI * (1.0 - 1e-16), -1e-300, 4.0 * PI, 2.0 * PI / nf as f64];
        x[..ends.len()].copy_from_slice(&ends);
        let grid: Vec<Complex<f64>> = (0..nf).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
        let c: Vec<Complex<f64>> = (0..m).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect();
        let (one, two) = (Threads::new(1).unwrap(), Threads::new(2).unwrap());
        let rel = |a: &[Complex<f64>], b: &[Complex<f64>]| {
            let scale = a.iter().map(|v| v.norm()).fold(0.0, f64::max);
            a.iter().zip(b).map(|(u, v)| (u - v).norm()).fold(0.0, f64::max) / scale
        };
        // the caller's order on one thread
        let mut reference = Spreader::<f64>::new(1, &[nf], &k, SpreadOpts { callers_order: true, ..Default::default() }).unwrap();
        reference.setpts([&x, &[], &[]], &one).unwrap();
        assert!(reference.in_order);
        let mut want_vals = vec![Complex::new(0.0, 0.0); m];
        reference.try_interp(&grid, &mut want_vals, &one).unwrap();
        let mut want_grid = vec![Complex::new(0.0, 0.0); nf];
        reference.try_spread(&c, &mut want_grid, &one).unwrap();
        for copy in [true, false] {
            let mut sp = Spreader::<f64>::new(1, &[nf], &k, SpreadOpts { callers_order: true, ..Default::default() }).unwrap();
            if copy {
                sp.setpts([&x, &[], &[]], &two).unwrap();
            } else {
                // SAFETY: x outlives sp and is not changed.
                unsafe { sp.setpts_by_reference([&x, &[], &[]], &two).unwrap() };
            }
            assert!(!sp.in_order, "copy {copy}");
            let mut vals = vec![Complex::new(0.0, 0.0); m];
            sp.try_interp(&grid, &mut vals, &two).unwrap();
            let e = rel(&want_vals, &vals);
            assert!(e <= 1e-12, "interpolation, copy {copy}: {e:e}");
            let mut g = vec![Complex::new(0.0, 0.0); nf];
            sp.try_spread(&c, &mut g, &two).unwrap();
            let e = rel(&want_grid, &g);
            assert!(e <= 1e-12, "spreading, copy {copy}: {e:e}");
        }
    }

    #[test]
    fn parallel_sort_equals_serial_stable_sort() {
        // w ≥ 8: ordered by bin, then by sub-cell
        let k = Kernel::for_tolerance(KernelKind::Es, 1e-9, 2.0);
        let mut rng = rand_pcg::Pcg64::seed_from_u64(3);
        let m = 20_000;
        let x: Vec<Vec<f64>> = (0..3).map(|_| (0..m).map(|_| rng.gen_range(-7.0..7.0)).collect()).collect();
        for threads in [1, 2, 3] {
            let th = Threads::new(threads).unwrap();
            // 16 × 6 × 4 = 384 bins: more than sort::MAX_BUCKETS, so the two-level sort
            // has several bins per bucket
            let mut sp = Spreader::<f64>::new(3, &[256, 96, 64], &k, SpreadOpts { max_subprob_size: 0, ..Default::default() }).unwrap();
            sp.setpts([&x[0], &x[1], &x[2]], &th).unwrap();
            let sub = sort::sub_cells(3, sp.w[0]);
            assert_eq!(sub, 4, "w = {}: points ordered by sub-cell", sp.w[0]);
            let key = |i: usize| sort::reference_key(3, sp.nf, sub, std::array::from_fn(|d| fold(x[d][i], sp.nf[d])));
            let keys: Vec<u32> = (0..m).map(|i| key(i).0 as u32).collect();
            assert_eq!(sp.perm, sort::counting_sort(&keys, key(0).1).unwrap(), "threads {threads}");
            for s in 0..m {
                assert_eq!(sp.g[1][s], fold(x[1][sp.perm[s] as usize], 96));
            }
        }
    }

    /// Subproblems cover the sorted points in order, each inside one x-row of bins, at most the
    /// subproblem size (a bin with more points is split), multi-bin ones within the box
    /// budget, and at least one per thread.
    #[test]
    fn subproblems_are_compact_tiles() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(4);
        // uniform points plus a cluster of 25 000 in one bin
        let m = 60_000;
        let x: Vec<Vec<f64>> = (0..3).map(|_| (0..m).map(|i| if i % 12 < 5 { rng.gen_range(0.1..0.2) } else { rng.gen_range(-3.0..3.0) }).collect()).collect();
        for (tol, nf) in [(1e-3, [160usize, 96, 64]), (1e-12, [320, 96, 64])] {
            let k = Kernel::for_tolerance(KernelKind::Es, tol, 2.0);
            for threads in [1, 2, 3] {
                let th = Threads::new(threads).unwrap();
                let mut sp = Spreader::<f64>::new(3, &nf, &k, SpreadOpts { max_subprob_size: 0, ..Default::default() }).unwrap();
                sp.setpts([&x[0], &x[1], &x[2]], &th).unwrap();
                let (bs, _) = sort::bin_grid(3, sp.nf);
                let bin = |s: usize| -> [usize; 3] { std::array::from_fn(|d| (sp.g[d][s] / bs[d] as f64) as usize) };
                assert!(sp.subprobs.len() >= threads);
                let mut next = 0;
                let mut split = 0;
                for &(a, b) in &sp.subprobs {
                    assert!(a == next && b > a && b - a <= DEFAULT_MAX_SUBPROB, "tol {tol} threads {threads}: ({a}, {b}) after {next}");
                    next = b;
                    let (first, last) = (bin(a), bin(b - 1));
                    assert!(first[1] == last[1] && first[2] == last[2], "one x-row of bins");
                    if last[0] > first[0] {
                        let (lo, bsz) = sp.subproblem_box(&[&sp.g[0][a..b], &sp.g[1][a..b], &sp.g[2][a..b]]);
                        let _ = lo;
                        assert!(box_shape::<f64>(bsz).iter().product::<usize>() <= MERGE_BOX_CELLS + 8 * 32 * 32, "merged box");
                    }
                    split += usize::from(b - a == DEFAULT_MAX_SUBPROB || (a > 0 && bin(a - 1) == first && b - a > 1000));
                }
                assert_eq!(next, m);
                assert!(split > 0, "the cluster's bin is split");
            }
        }
    }

    #[test]
    fn rejects_nonfinite() {
        let k = Kernel::for_tolerance(KernelKind::Es, 1e-6, 2.0);
        let mut sp = Spreader::<f64>::new(2, &[32, 32], &k, SpreadOpts { max_subprob_size: 0, ..Default::default() }).unwrap();
        let th = Threads::new(1).unwrap();
        let x = [0.0, 1.0, 2.0];
        let y = [0.0, f64::NAN, 2.0];
        match sp.setpts([&x, &y, &[]], &th) {
            Err(Error::NonFinite(m)) => assert!(m.contains("point 1"), "{m}"),
            other => panic!("{other:?}"),
        }
        // a rejected setpts leaves the previous points
        let ok = [0.5, -0.5];
        sp.setpts([&ok, &ok, &[]], &th).unwrap();
        let perm = sp.perm.clone();
        assert!(matches!(sp.setpts([&x, &y, &[]], &th), Err(Error::NonFinite(_))));
        assert!(sp.has_points() && sp.num_points() == 2 && sp.perm == perm && sp.g[0].len() == 2);
    }

    #[test]
    fn spreading_overwrites_a_nonzero_grid() {
        // complex (ES, Gaussian) and real (B-spline) spreading write every grid value: a grid
        // full of garbage gives the same result as a zeroed one, which matches the direct sum
        let th = Threads::new(2).unwrap();
        let pts: Vec<[f64; 3]> = (0..40).map(|i| [0.37 * i as f64, -0.21 * i as f64 + 1.0, 0.0]).collect();
        let x: Vec<f64> = pts.iter().map(|p| p[0]).collect();
        let y: Vec<f64> = pts.iter().map(|p| p[1]).collect();
        let c: Vec<Complex<f64>> = (0..40).map(|i| Complex::new((i as f64).sin(), (i as f64).cos())).collect();
        for k in [Kernel::for_tolerance(KernelKind::Es, 1e-6, 2.0), Kernel::for_tolerance(KernelKind::Gaussian, 1e-6, 2.0)] {
            let mut sp = Spreader::<f64>::new(2, &[32, 30], &k, SpreadOpts { max_subprob_size: 7, ..Default::default() }).unwrap();
            sp.setpts([&x, &y, &[]], &th).unwrap();
            let mut grid = vec![Complex::new(1e3, -7.0); 960];
            sp.try_spread(&c, &mut grid, &th).unwrap();
            let want = direct_spread(2, [32, 30, 1], &k, &pts, &c);
            let err = grid.iter().zip(&want).map(|(a, b)| (a - b).norm()).fold(0.0, f64::max);
            let scale = want.iter().map(|v| v.norm()).fold(0.0, f64::max);
            assert!(err <= 1e-5 * scale, "{k:?}: {err:e} vs {scale:e}");
        }
        let b = Kernel::BSpline(crate::kernel::bspline::BSplineParams { order: 4 });
        let z: Vec<f64> = pts.iter().map(|p| 0.5 * p[0] - p[1]).collect();
        let mut sp = Spreader::<f64>::new(3, &[12, 10, 8], &b, SpreadOpts { max_subprob_size: 5, ..Default::default() }).unwrap();
        sp.setpts([&x, &y, &z], &th).unwrap();
        let q: Vec<f64> = c.iter().map(|v| v.re).collect();
        let mut zeroed = vec![0.0; 960];
        sp.try_spread_real(&q, &mut zeroed, &th).unwrap();
        let mut dirty = vec![-5.5; 960];
        sp.try_spread_real(&q, &mut dirty, &th).unwrap();
        // equal up to rounding: two threads add overlapping subproblems in either order
        let diff = zeroed.iter().zip(&dirty).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        let scale = zeroed.iter().map(|v| v.abs()).fold(0.0, f64::max);
        assert!(diff <= 1e-13 * scale, "garbage left in the grid: {diff:e} vs {scale:e}");
        let pts3: Vec<[f64; 3]> = (0..40).map(|i| [x[i], y[i], z[i]]).collect();
        let qc: Vec<Complex<f64>> = q.iter().map(|&v| Complex::new(v, 0.0)).collect();
        let want = direct_spread(3, [12, 10, 8], &b, &pts3, &qc);
        let err = zeroed.iter().zip(&want).map(|(a, b)| (a - b.re).abs()).fold(0.0, f64::max);
        assert!(err < 1e-12, "B-spline real spreading vs direct: {err:e}");
    }
}
