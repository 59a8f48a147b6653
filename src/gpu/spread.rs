//! GPU spreading and interpolation: the host side (buffers, launch configurations, the device
//! bin sort, the mesh-based structures) of the kernels in `kernels/spread.cu`, written once
//! against [`Device`] so that it runs on CUDA and on the CPU emulator alike.
//!
//! Methods ([`GpuMethod`]; all have spreading and interpolation):
//! * **GM** — one thread per point, `atomicAdd` into the global grid (the particle-based method
//!   of Guo, Liu, Xu, Du & Chow, Procedia Comput. Sci. 51 (2015) 120, §2);
//! * **GM-sort** — GM with the points visited in bin-sorted order after a device bin sort
//!   (count with atomics, exclusive scan, permute), for memory locality;
//! * **SM** — cuFINUFFT's subproblem method: the sorted points of a bin, in chunks of at most
//!   `max_subprob` points, are spread by one block into a shared-memory tile (the bin padded by
//!   ⌈w/2⌉), which is then added to the grid; interpolation loads the tile and gathers from it.
//!   Tiles are kept within [`SM_TILE_BYTES`] (48 KiB, so that several blocks share a
//!   multiprocessor), the bins shrunk to fit; only where no tile fits there does SM use the
//!   device's whole shared memory (the opt-in limit on CUDA): [`sm_tile_bins`];
//! * **CSR** — Guo et al.'s "single mesh": a sparse matrix with one row per grid point built in
//!   `setpts` (count entries per row, exclusive scan, fill, rows sorted by entry so the sums are
//!   deterministic) and applied with compute units of `cu` ∈ {1, 2, 4, 8, 16} threads per row and
//!   warp-shuffle reductions; `cu` = the power of two ≥ ASM, at most 16 (Guo et al.'s heuristic,
//!   ASM = M·w^d / Π nf the average entries per row). Interpolation uses the point-major weights
//!   (one compute unit per point);
//! * **GROUP** — Guo et al.'s "group mesh" (gsize 64): rows grouped by 64 consecutive grid points,
//!   one block per group accumulating its entries in shared memory; interpolation loads the
//!   group's 64 grid values into shared memory and adds to the points atomically.
//!
//! Selection rule ([`select_method`]; every method can also be chosen explicitly): with a
//! reuse hint (the number of spreads/interpolations the caller announces for one point
//! configuration) of at least 20, Guo et al. found the mesh-based structures amortised: GROUP
//! when rows are dense (ASM ≥ 8: coalesced build and shared-memory accumulation), else CSR.
//! Otherwise a particle method: SM when its tile fits in [`SM_TILE_BYTES`] and is reused
//! enough — at most [`SM_MAX_TILE_PER_POINT`] padded-tile values per point of its bin
//! ([`sm_tile_per_point`]) — and the points are dense (ASM ≥ 1), for spreading and
//! interpolation alike; GM-sort for more than 1024 points, GM for fewer. Measured on an H200
//! (`docs/gpu-methods.md`, from the GPU kit's results), 3D NUFFT of 10⁷ points, 192³ fine
//! grid, w = 9, f64 (30 tile values per point): type 1 took 116 ms with 48 KiB tiles, 307 ms
//! with tiles grown to the opt-in limit (one block per multiprocessor) and 150 ms with
//! GM-sort; type 2 took 15 ms with SM and 37 ms with GM-sort. At w = 11 (2×2×2-point bins,
//! 385 values per point) SM took 1033 ms for type 1 and 164 ms for type 2, GM-sort 267 ms and
//! 66 ms; the spreading of a 3D type 3 with 10⁶ points on a 270³ grid (236 per point) took
//! 46 ms on SM and 21 ms on GM-sort.
//!
//! Points: [`GpuSpreader::setpts`] (host arrays, uploaded once) and
//! [`GpuSpreader::setpts_dev`] (device arrays) take the same device path: one kernel folds the
//! coordinates into grid units and records the first non-finite index per axis
//! (`atomicMin`), then the bin sort and the method's structures are built on the device (scans
//! included); the host reads back only the three first-bad indices and, for SM, the number of
//! subproblems.
//!
//! Batches: [`GpuSpreader::spread_dev_batch`] and [`GpuSpreader::interp_dev_batch`] handle
//! several stacked vectors in one launch per stage (GM/GM-sort evaluate a point's kernel once
//! for all of them; SM and GROUP launch one block per subproblem or group and vector; CSR
//! loops over the vectors in each thread).
//!
//! Conventions as [`crate::spread`]: grid `grid[i + nf1*(j + nf2*k)]`, coordinates in radians
//! interpreted 2π-periodically; spreading **overwrites** the grid and interpolation the values,
//! as on the CPU ([`crate::spread`]) and in cuFINUFFT.

use super::device::{download_vec, upload_new, Arg, Device};
use super::types::{ff_kernel, FfGeom, FfKernel, GpuReal};
use crate::error::{Error, Result};
use crate::kernel::{Kernel, MAX_WIDTH};
use num_complex::Complex;
use std::marker::PhantomData;

pub use crate::backend::GpuMethod;

/// Options of a [`GpuSpreader`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct GpuSpreadOpts {
    /// Method; `None` = chosen at `setpts` by [`select_method`].
    pub method: Option<GpuMethod>,
    /// Number of spreads/interpolations the caller expects per point configuration (0 = unknown,
    /// treated as 1).
    pub reuse_hint: usize,
    /// Threads per block of the point and entry kernels (a multiple of 32, ≤ 1024).
    pub block: u32,
    /// Largest number of points of one SM subproblem.
    pub max_subprob: usize,
    /// Bin sizes (x, y, z); `None` = 1024 (1D), 32×32 (2D), 16×16×8 (3D). For SM they are
    /// shrunk until the tile fits ([`sm_tile_bins`]).
    pub bin_size: Option<[usize; 3]>,
    /// CSR compute-unit size for spreading (1, 2, 4, 8 or 16); `None` = from ASM.
    pub cu: Option<u32>,
    /// NUFFT (`GpuNufft`): the most vectors of one batch (cuFINUFFT's `gpu_maxbatchsize`);
    /// 0 = automatic: `min(ntrans, 8)`, lowered so that the batch's fine grids stay within
    /// [`BATCH_SCRATCH_BYTES`] (at least 1). Not used by the spreader itself.
    pub max_batch: usize,
}

/// The memory bound of the automatic NUFFT batch size ([`GpuSpreadOpts::max_batch`] = 0): the
/// fine grids of one batch (`B·Π nf·2·sizeof(T)` bytes) stay within 1 GiB, or one grid when a
/// single grid is larger.
pub const BATCH_SCRATCH_BYTES: usize = 1 << 30;

/// The batch size of a NUFFT with `ntrans` vectors whose fine grid takes `grid_bytes` bytes:
/// `max_batch` when set (capped by `ntrans`), else `min(ntrans, 8, BATCH_SCRATCH_BYTES /
/// grid_bytes)`, at least 1.
pub fn batch_size(ntrans: usize, grid_bytes: usize, max_batch: usize) -> usize {
    let b = if max_batch > 0 { max_batch } else { 8.min(BATCH_SCRATCH_BYTES / grid_bytes.max(1)) };
    b.min(ntrans).max(1)
}

impl GpuSpreadOpts {
    /// The defaults with the method and reuse hint of a NUFFT plan's options
    /// (`opts.gpu_method`, `opts.gpu_spread_reuse_hint`).
    pub fn from_nufft_opts(opts: &crate::nufft::NufftOpts) -> Self {
        GpuSpreadOpts { method: opts.gpu_method, reuse_hint: opts.gpu_spread_reuse_hint, ..Self::default() }
    }
}

impl Default for GpuSpreadOpts {
    fn default() -> Self {
        GpuSpreadOpts { method: None, reuse_hint: 0, block: 128, max_subprob: 1024, bin_size: None, cu: None, max_batch: 0 }
    }
}

/// Average spreading contributions per grid point, `ASM = M·w^dim / Π nf` (Guo et al. 2015, §3.2).
pub fn asm(dim: usize, nf: [usize; 3], w: usize, m: usize) -> f64 {
    let rows: usize = nf.iter().product();
    m as f64 * (w as f64).powi(dim as i32) / rows as f64
}

/// Guo et al.'s compute-unit size (Procedia Comput. Sci. 51 (2015) 120, §3.2): the power of two
/// ≥ ASM, between 1 and 16.
pub fn cu_for_asm(asm: f64) -> u32 {
    let mut cu = 1u32;
    while (cu as f64) < asm && cu < 16 {
        cu *= 2;
    }
    cu
}

/// The selection rule of the module docs (`sm_ok`: an SM tile fits in [`SM_TILE_BYTES`] with
/// at most [`SM_MAX_TILE_PER_POINT`] values per point; `mesh_fits`: the sparse matrix has
/// fewer than 2³² − 1 entries).
pub fn select_method(asm: f64, m: usize, reuse_hint: usize, sm_ok: bool, mesh_fits: bool) -> GpuMethod {
    if reuse_hint >= 20 && mesh_fits {
        if asm >= 8.0 {
            GpuMethod::Group
        } else {
            GpuMethod::Csr
        }
    } else if sm_ok && asm >= 1.0 {
        GpuMethod::Sm
    } else if m > 1024 {
        GpuMethod::GmSort
    } else {
        GpuMethod::Gm
    }
}

const SCAN_BLOCK: u32 = 256;

fn nblocks(n: usize, block: u32) -> Result<u32> {
    let b = n.div_ceil(block as usize).max(1);
    u32::try_from(b).map_err(|_| Error::NotSupported(format!("{n} threads exceed one launch")))
}

/// Blocks of a batched launch with `per` blocks per vector (SM subproblems, GROUP groups).
fn batch_blocks(per: usize, nvec: usize) -> Result<u32> {
    per.checked_mul(nvec)
        .and_then(|b| u32::try_from(b.max(1)).ok())
        .ok_or_else(|| Error::NotSupported(format!("{per} blocks for each of {nvec} vectors exceed one launch")))
}

/// Device buffers of a bin sort (GM-sort, SM): sorted position → point index, and per bin
/// its first sorted position and its point count.
struct Sorted<B> {
    idx: B,
    binstart: B,
    count: B,
}

/// SM subproblems: for each, its bin and its offset within the bin; `n` of them.
struct Subprobs<B> {
    bin: B,
    off: B,
    n: u32,
}

/// A sparse mesh (CSR or GROUP): point-major weights and grid indices, row pointers and
/// entry columns.
struct Mesh<B> {
    pt_w: B,
    pt_g: B,
    ptr: B,
    col: B,
}

/// What a method needs beyond the folded coordinates: each variant holds exactly its buffers,
/// so a method can never run without them.
enum MethodData<B> {
    /// GM: nothing.
    Gm,
    /// GM-sort: the bin sort on the default bins.
    GmSort(Sorted<B>),
    /// SM: the bin sort on the SM bins `geo` and the subproblems (`None` without points).
    Sm { geo: FfGeom, sorted: Sorted<B>, sub: Option<Subprobs<B>> },
    /// CSR single mesh.
    Csr(Mesh<B>),
    /// Group mesh.
    Group(Mesh<B>),
}

impl<B> MethodData<B> {
    fn method(&self) -> GpuMethod {
        match self {
            MethodData::Gm => GpuMethod::Gm,
            MethodData::GmSort(_) => GpuMethod::GmSort,
            MethodData::Sm { .. } => GpuMethod::Sm,
            MethodData::Csr(_) => GpuMethod::Csr,
            MethodData::Group(_) => GpuMethod::Group,
        }
    }
}

/// Device buffers of one point configuration.
struct Points<B> {
    m: usize,
    /// Folded grid coordinates per axis (a 1-byte placeholder for axes ≥ dim).
    g: Vec<B>,
    data: MethodData<B>,
    /// CSR compute-unit sizes (spreading, interpolation).
    cu: u32,
    cu_interp: u32,
}

/// GPU spreader/interpolator for one grid and one kernel on device `D`, precision `T`.
pub struct GpuSpreader<T: GpuReal, D: Device> {
    dev: D,
    dim: usize,
    nf: [usize; 3],
    w: usize,
    geo: FfGeom,
    sm_geo: Option<FfGeom>,
    ker: FfKernel,
    _ktab: D::Buf,
    opts: GpuSpreadOpts,
    pts: Option<Points<D::Buf>>,
    _t: PhantomData<T>,
}

fn default_bins(dim: usize) -> [usize; 3] {
    match dim {
        1 => [1024, 1, 1],
        2 => [32, 32, 1],
        _ => [16, 16, 8],
    }
}

fn geom(dim: usize, nf: [usize; 3], bs: [usize; 3]) -> FfGeom {
    let mut g = FfGeom { dim: dim as i32, nf: [1; 3], bs: [1; 3], nb: [1; 3] };
    for d in 0..3 {
        g.nf[d] = nf[d] as i32;
        if d < dim {
            g.bs[d] = bs[d].max(1) as i32;
            g.nb[d] = nf[d].div_ceil(bs[d].max(1)) as i32;
        }
    }
    g
}

/// Bytes of an SM tile for bins `bs`.
fn tile_bytes<T>(dim: usize, w: usize, bs: [usize; 3]) -> usize {
    tile_bytes_of(dim, w, bs, std::mem::size_of::<T>())
}

/// Bytes of an SM tile for bins `bs`: `Π_d (bs_d + 2⌈w/2⌉)` complex values of `real_bytes`-byte
/// reals.
pub fn tile_bytes_of(dim: usize, w: usize, bs: [usize; 3], real_bytes: usize) -> usize {
    let pad = w.div_ceil(2);
    (0..dim).map(|d| bs[d] + 2 * pad).product::<usize>() * 2 * real_bytes
}

/// Padded-to-bin volume ratio above which [`sm_bins`] grows the default bins.
pub const SM_GROW_RATIO: f64 = 2.0;

/// Shared memory of an SM tile: 48 KiB, the limit per block without opting in, which leaves
/// room for four blocks per multiprocessor on sm_80 and sm_90 devices. Measured on an H200
/// (`docs/gpu-methods.md`): 3D NUFFT type 1, 10⁷ points, 192³ fine grid, w = 9, f64 took
/// 116 ms with 4×4×4-point bins in 43 KiB tiles, 167 ms with 8×8×8 in 91 KiB (two blocks per
/// multiprocessor) and 307 ms with 16×16×8 in 190 KiB (one).
pub const SM_TILE_BYTES: usize = 48 * 1024;

/// The most padded-tile values per point of a bin ([`sm_tile_per_point`]) for which the
/// selection rule takes SM. Measured on an H200 (`docs/gpu-methods.md`): at 30 (3D f64, w = 9,
/// 1.4 points per grid point) SM was the fastest method for types 1 and 2; at 236 (type 3's
/// spreading, 0.05 points per grid point) and 385 (w = 11, 2×2×2-point bins) GM-sort was 2.2
/// to 3.9 times faster.
pub const SM_MAX_TILE_PER_POINT: f64 = 64.0;

/// Values of the padded SM tile for bins `bs` per point of the bin, with `m` points spread
/// uniformly over the grid of sizes `nf`: the tile's padding ([`sm_padding`]) over the points
/// per grid point `m / Π nf`; infinite without points.
pub fn sm_tile_per_point(dim: usize, w: usize, bs: [usize; 3], nf: [usize; 3], m: usize) -> f64 {
    let density = m as f64 / nf.iter().product::<usize>() as f64;
    if density > 0.0 {
        sm_padding(dim, w, bs) / density
    } else {
        f64::INFINITY
    }
}

/// Grid points of the padded tile per grid point of the bin `bs`, for a kernel of width `w`.
pub fn sm_padding(dim: usize, w: usize, bs: [usize; 3]) -> f64 {
    let pad = w.div_ceil(2);
    (0..dim).map(|d| (bs[d] + 2 * pad) as f64 / bs[d] as f64).product()
}

/// The SM bins of a spreader (what [`GpuSpreader::new`] takes): `bins` shrunk to fit a tile of
/// [`SM_TILE_BYTES`] (or `limit`, the device's [`Device::max_shared_bytes`], when smaller);
/// where no tile fits there, [`sm_bins`] within `limit`, grown when `default_bins` (the caller
/// chose none). `None` when no tile fits in `limit` (SM unavailable).
pub fn sm_tile_bins(dim: usize, w: usize, nf: [usize; 3], real_bytes: usize, bins: [usize; 3], limit: usize, default_bins: bool) -> Option<[usize; 3]> {
    sm_bins(dim, w, nf, real_bytes, bins, SM_TILE_BYTES.min(limit), false)
        .or_else(|| sm_bins(dim, w, nf, real_bytes, bins, limit, default_bins))
}

/// The SM bin sizes for a kernel of width `w` on a `dim`-dimensional grid of sizes `nf`, complex
/// values of `real_bytes`-byte reals and `limit` bytes of shared memory per block (the device's
/// [`Device::max_shared_bytes`]: the opt-in limit on CUDA), starting from `bins`; `None` when no
/// tile fits (SM unavailable). Tile = bin + ⌈w/2⌉ on each side, per axis.
///
/// 1. **Shrink** (always): while the tile exceeds `limit`, halve the largest bin side (the
///    last such axis), as long as it is above 2.
/// 2. **Grow** (only with `grow`, i.e. for the default bins, not for bins the caller chose):
///    while the padding dominates — the tile holds more than [`SM_GROW_RATIO`] times the bin's
///    grid points, as for wide kernels in 2D and 3D — double the smallest bin side (the first
///    such axis) whose doubled bin still fits in `limit` and in the grid (`≤ nf_d`), trying
///    the others in order of size when it does not. Larger bins mean fewer tile loads and
///    stores per point; with the opt-in limits (227 KiB on H100, 163 KiB on A100) this also
///    serves every width 2…16 in 3D, which 48 KiB cannot in double precision above w = 12.
pub fn sm_bins(dim: usize, w: usize, nf: [usize; 3], real_bytes: usize, bins: [usize; 3], limit: usize, grow: bool) -> Option<[usize; 3]> {
    let fits = |b: [usize; 3]| tile_bytes_of(dim, w, b, real_bytes) <= limit;
    let mut sb = bins;
    while !fits(sb) {
        let (d, &b) = sb.iter().enumerate().take(dim).max_by_key(|(_, &b)| b).expect("dim >= 1");
        if b <= 2 {
            return None;
        }
        sb[d] = b / 2;
    }
    if grow {
        'grow: while sm_padding(dim, w, sb) > SM_GROW_RATIO {
            let mut axes: Vec<usize> = (0..dim).collect();
            axes.sort_by_key(|&d| (sb[d], d));
            for d in axes {
                let mut t = sb;
                t[d] = (2 * sb[d]).min(nf[d]);
                if t[d] > sb[d] && fits(t) {
                    sb = t;
                    continue 'grow;
                }
            }
            break;
        }
    }
    Some(sb)
}

impl<T: GpuReal, D: Device> GpuSpreader<T, D> {
    /// A spreader for a `dim`-dimensional grid of sizes `nf` (each ≥ 2w, product < 2³¹).
    /// Errors: [`Error::Dim`], [`Error::Modes`], [`Error::InvalidArg`] (options), device errors.
    pub fn new(dev: D, dim: usize, nf: &[usize], kernel: &Kernel, opts: GpuSpreadOpts) -> Result<Self> {
        if !(1..=3).contains(&dim) || nf.len() != dim {
            return Err(Error::Dim(format!("GPU spreader dimension {dim} with {} grid sizes", nf.len())));
        }
        let w = kernel.width();
        if !(1..=MAX_WIDTH).contains(&w) {
            return Err(Error::InvalidArg(format!("kernel width {w} not in 1..={MAX_WIDTH}")));
        }
        let mut nf3 = [1usize; 3];
        for d in 0..dim {
            if nf[d] < 2 * w {
                return Err(Error::Modes(format!("grid size {} along axis {d} is below twice the kernel width {w}", nf[d])));
            }
            nf3[d] = nf[d];
        }
        let total = nf3.iter().try_fold(1usize, |a, &b| a.checked_mul(b));
        if total.is_none_or(|t| t > i32::MAX as usize) {
            return Err(Error::Modes(format!("GPU grid {nf3:?} has 2^31 or more points")));
        }
        if opts.block == 0 || !opts.block.is_multiple_of(32) || opts.block > 1024 {
            return Err(Error::InvalidArg(format!("block size {} is not a multiple of 32 in 32..=1024", opts.block)));
        }
        if opts.max_subprob == 0 {
            return Err(Error::InvalidArg("max_subprob must be positive".into()));
        }
        if let Some(cu) = opts.cu {
            if !matches!(cu, 1 | 2 | 4 | 8 | 16) {
                return Err(Error::InvalidArg(format!("compute unit size {cu} is not 1, 2, 4, 8 or 16")));
            }
        }
        let bins = opts.bin_size.unwrap_or_else(|| default_bins(dim));
        if bins.iter().take(dim).any(|&b| b == 0) {
            return Err(Error::InvalidArg("bin sizes must be positive".into()));
        }
        let geo = geom(dim, nf3, bins);
        let sm_geo = sm_tile_bins(dim, w, nf3, std::mem::size_of::<T>(), bins, dev.max_shared_bytes(), opts.bin_size.is_none())
            .map(|sb| geom(dim, nf3, sb));
        let (ker, tab) = ff_kernel::<T>(kernel);
        let ktab = upload_new(&dev, &tab)?;
        let ker = FfKernel { tab: dev.addr(&ktab), ..ker };
        Ok(GpuSpreader { dev, dim, nf: nf3, w, geo, sm_geo, ker, _ktab: ktab, opts, pts: None, _t: PhantomData })
    }

    /// The device the spreader runs on.
    pub fn device(&self) -> &D {
        &self.dev
    }

    /// The method of the current points (`None` before `setpts`).
    pub fn method(&self) -> Option<GpuMethod> {
        self.pts.as_ref().map(|p| p.data.method())
    }

    /// The CSR compute-unit sizes (spread, interp) of the current points.
    pub fn compute_units(&self) -> Option<(u32, u32)> {
        self.pts.as_ref().map(|p| (p.cu, p.cu_interp))
    }

    /// The current points' folded grid coordinates, one device buffer of M values of precision
    /// `T` per used axis (`g ∈ [0, nf_d)`, the caller's point order), for kernels that gather
    /// with their own weights (the SPME gradient interpolation of [`super::ewald`]); `None`
    /// before `setpts`.
    pub(crate) fn folded_coords(&self) -> Option<&[D::Buf]> {
        self.pts.as_ref().map(|p| &p.g[..])
    }

    /// Number of points set (0 before `setpts`).
    pub fn num_points(&self) -> usize {
        self.pts.as_ref().map_or(0, |p| p.m)
    }

    /// Grid sizes `[nf1, nf2, nf3]`.
    pub fn grid_size(&self) -> [usize; 3] {
        self.nf
    }

    /// Whether the SM tile fits in the device's shared memory.
    pub fn sm_available(&self) -> bool {
        self.sm_geo.is_some()
    }

    /// The SM bin sizes (x, y, z; 1 on unused axes) and tile bytes, when SM is available.
    pub fn sm_bin_size(&self) -> Option<([usize; 3], usize)> {
        self.sm_geo.map(|g| {
            let bs = [g.bs[0] as usize, g.bs[1] as usize, g.bs[2] as usize];
            (bs, tile_bytes::<T>(self.dim, self.w, bs))
        })
    }

    /// The entry point of the GM or SM kernel or the point weights `base` (`gm_spread`,
    /// `sm_interp`, `pt_weights`, …) for this plan: the width-specialised one when the width
    /// has one ([`super::SPECIALISED_WIDTHS`]), else the one that reads the width at run time.
    fn point_kernel(&self, base: &str) -> String {
        match super::WidthModule::new(T::NAME, self.dim, self.w) {
            Some(m) => m.kernel(base),
            None => self.sfx(base, true),
        }
    }

    fn sfx(&self, base: &str, with_dim: bool) -> String {
        if with_dim {
            format!("ff_{base}_{}d_{}", self.dim, T::SUFFIX)
        } else {
            format!("ff_{base}_{}", T::SUFFIX)
        }
    }

    /// Exclusive scan of `n` u32 values of `buf` in place.
    fn scan(&self, buf: &D::Buf, n: usize) -> Result<()> {
        self.scan_into(buf, buf, n)
    }

    /// Exclusive scan of the first `n` u32 values of `src` into `dst` (may be the same buffer).
    fn scan_into(&self, src: &D::Buf, dst: &D::Buf, n: usize) -> Result<()> {
        let dev = &self.dev;
        let nb = nblocks(n, SCAN_BLOCK)?;
        let sums = dev.alloc(nb as usize * 4)?;
        dev.launch("ff_scan_local", nb, SCAN_BLOCK, 0, &[Arg::Buf(src), Arg::Buf(dst), Arg::I32(n as i32), Arg::Buf(&sums)])?;
        dev.launch("ff_scan_single", 1, SCAN_BLOCK, 0, &[Arg::Buf(&sums), Arg::I32(nb as i32)])?;
        dev.launch("ff_scan_add", nb, SCAN_BLOCK, 0, &[Arg::Buf(dst), Arg::I32(n as i32), Arg::Buf(&sums)])
    }

    fn read_u32(&self, buf: &D::Buf, i: usize) -> Result<u32> {
        let mut b = [0u8; 4];
        self.dev.download(buf, 4 * i, &mut b)?;
        Ok(u32::from_ne_bytes(b))
    }

    /// Sets the points from host arrays: `coords[d]` holds the M coordinates of axis `d`
    /// (radians, finite; axes ≥ dim ignored). Uploads them once and continues as
    /// [`GpuSpreader::setpts_dev`] (folding, the finiteness check and the method's structures
    /// on the device). Errors: [`Error::NPoints`] (M ≥ 2³⁰, unequal lengths) and those of
    /// [`GpuSpreader::setpts_dev`].
    pub fn setpts(&mut self, coords: [&[T]; 3]) -> Result<()> {
        let m = coords[0].len();
        self.check_count(m)?;
        for d in 0..self.dim {
            if coords[d].len() != m {
                return Err(Error::NPoints(format!("axis {d} has {} coordinates, axis 0 has {m}", coords[d].len())));
            }
        }
        let mut raw = Vec::with_capacity(self.dim);
        for c in coords.iter().take(self.dim) {
            raw.push(upload_new(&self.dev, c)?);
        }
        let r: [Option<&D::Buf>; 3] = [raw.first(), raw.get(1), raw.get(2)];
        self.setpts_dev(m, r)
    }

    /// Sets the points from device buffers: `coords[d]` holds the M coordinates of axis `d`
    /// in precision `T` (radians; axes ≥ dim ignored and may be `None`). Everything runs on
    /// the device: folding into grid units (new buffers: the caller's arrays are copied, not
    /// kept), the finiteness check (a kernel records the first non-finite index of each axis
    /// by `atomicMin`), the bin sort (count with atomics, exclusive scan on the device,
    /// permute) and the method's structures (SM subproblems, CSR/GROUP meshes). No per-point or
    /// per-bin array comes back to the host; the host reads back three integers (the first
    /// non-finite index per axis, and on failure the offending coordinate) and, for SM, one
    /// more (the number of subproblems, which sizes their buffers).
    ///
    /// Errors: [`Error::NPoints`] (M ≥ 2³⁰), [`Error::InvalidArg`] (a used axis missing while
    /// M > 0, or shorter than M values), [`Error::NonFinite`] (naming the first such point of the lowest
    /// axis, as the host check did) — these keep the previous points —, then
    /// [`Error::NotSupported`] (an explicit SM whose tile does not fit, a mesh method with 2³²
    /// − 1 or more entries) and device errors, which leave the spreader without points.
    pub fn setpts_dev(&mut self, m: usize, coords: [Option<&D::Buf>; 3]) -> Result<()> {
        self.check_count(m)?;
        let raw = self.coordinate_buffers(m, &coords)?;
        let method = self.choose_method(m)?;
        let g = self.fold_and_check(&raw, m)?;
        self.pts = None;
        let data = match method {
            GpuMethod::Gm => MethodData::Gm,
            GpuMethod::GmSort => MethodData::GmSort(self.bin_sort(self.geo, &g, m)?),
            GpuMethod::Sm => {
                let Some(geo) = self.sm_geo else {
                    return Err(Error::NotSupported(format!(
                        "SM spreading: a tile for kernel width {} in {}D does not fit in {} bytes of shared memory",
                        self.w, self.dim, self.dev.max_shared_bytes())));
                };
                let sorted = self.bin_sort(geo, &g, m)?;
                let sub = if m > 0 { Some(self.subproblems(geo, &sorted)?) } else { None };
                MethodData::Sm { geo, sorted, sub }
            }
            GpuMethod::Csr => MethodData::Csr(self.build_mesh(&g, m, 0)?),
            GpuMethod::Group => MethodData::Group(self.build_mesh(&g, m, 6)?),
        };
        let asm = asm(self.dim, self.nf, self.w, m);
        let cu = self.opts.cu.unwrap_or_else(|| cu_for_asm(asm));
        let cu_interp = cu_for_asm(self.w.pow(self.dim as u32) as f64);
        self.pts = Some(Points { m, g, data, cu, cu_interp });
        Ok(())
    }

    /// Sets the points from device coordinates in physical units: `raw[d]` holds the M
    /// coordinates of axis `d` in precision `T`, point j's at element `j·stride` (axes ≥ dim
    /// ignored, may be `None`), in the
    /// box with lower corner `lo` and edge lengths `len` (grid `nf`, periodic axes per
    /// `periodic`), as a spreading plan's setpts maps them on the host: one kernel writes the
    /// radians 2π·(x − lo)/len (wrapped on periodic axes) into new buffers and records, per
    /// axis, the first index whose coordinate is not finite, overflows, or puts the kernel
    /// outside a free axis (`ff_box_map`, the host's arithmetic bit for bit); then as
    /// [`GpuSpreader::setpts_dev`] on those buffers.
    ///
    /// Returns `Ok(None)` with the points set, or `Ok(Some((d, i, x)))`, the first failing
    /// coordinate (lowest axis, then lowest index) with the previous points kept, for the
    /// caller to name the failure. Errors: as [`GpuSpreader::setpts_dev`].
    pub fn setpts_box_dev(&mut self, m: usize, raw: [Option<&D::Buf>; 3], stride: usize, lo: [f64; 3], len: [f64; 3],
                          periodic: [bool; 3]) -> Result<Option<(usize, usize, f64)>> {
        self.check_count(m)?;
        let (dim, tb, block) = (self.dim, std::mem::size_of::<T>(), self.opts.block);
        if !(1..=3).contains(&stride) {
            return Err(Error::InvalidArg(format!("coordinate stride {stride}: must be 1, 2 or 3")));
        }
        let mut rad = Vec::with_capacity(dim);
        if m > 0 {
            let inp = self.coordinate_buffers((m - 1) * stride + 1, &raw)?;
            for _ in 0..dim {
                rad.push(self.dev.alloc(m * tb)?);
            }
            let nf = self.nf.map(|n| n as f64);
            let bx: Vec<f64> = lo.iter().chain(&len).chain(&nf).copied().collect();
            let bx = upload_new(&self.dev, &bx)?;
            let bad = upload_new(&self.dev, &[m as i32; 3])?;
            let mask = (0..dim).filter(|&d| periodic[d]).fold(0, |a, d| a | (1 << d));
            let r = |d: usize| if d < dim { Arg::Buf(inp[d]) } else { Arg::Null };
            self.dev.launch(&format!("ff_box_map_{}", T::SUFFIX), nblocks(m, block)?, block, 0, &[
                r(0), r(1), r(2), Arg::I32(stride as i32), self.axis(0, &rad), self.axis(1, &rad), self.axis(2, &rad), Arg::Buf(&bx),
                Arg::I32(dim as i32), Arg::I32(mask), Arg::I32(self.w as i32), Arg::I32(m as i32), Arg::Buf(&bad),
            ])?;
            let first = download_vec::<D, i32>(&self.dev, &bad, 3)?;
            if let Some(d) = (0..dim).find(|&d| (first[d] as usize) < m) {
                let i = first[d] as usize;
                let mut v = [T::default()];
                self.dev.download(inp[d], i * stride * tb, super::types::as_bytes_mut(&mut v))?;
                return Ok(Some((d, i, v[0].to_f64v())));
            }
        }
        self.setpts_dev(m, [rad.first(), rad.get(1), rad.get(2)])?;
        Ok(None)
    }

    /// The coordinate buffers of the used axes, each holding at least M values of `T`.
    /// Errors: [`Error::InvalidArg`] (a used axis missing while M > 0, or too short).
    fn coordinate_buffers<'b>(&self, m: usize, coords: &[Option<&'b D::Buf>; 3]) -> Result<Vec<&'b D::Buf>> {
        let tb = std::mem::size_of::<T>();
        let mut raw = Vec::with_capacity(self.dim);
        for (d, c) in coords.iter().take(self.dim).enumerate() {
            match c {
                Some(b) if self.dev.len(b) >= m * tb => raw.push(*b),
                Some(b) => return Err(Error::InvalidArg(format!(
                    "axis {d}: a device buffer of {} bytes holds fewer than the {m} coordinates of {tb} bytes needed", self.dev.len(b)))),
                None if m == 0 => {}
                None => return Err(Error::InvalidArg(format!("axis {d} of a {}D spreader has no coordinate buffer", self.dim))),
            }
        }
        Ok(raw)
    }

    /// M within the GPU limit.
    fn check_count(&self, m: usize) -> Result<()> {
        if m > i32::MAX as usize / 2 {
            return Err(Error::NPoints(format!("{m} points exceed the GPU limit 2^30")));
        }
        Ok(())
    }

    /// The method (explicit, or by [`select_method`]); a mesh method needs fewer than
    /// 2³² − 1 entries.
    fn choose_method(&self, m: usize) -> Result<GpuMethod> {
        let nent = m * self.w.pow(self.dim as u32);
        let mesh_fits = nent < u32::MAX as usize;
        let method = match self.opts.method {
            Some(mt) => mt,
            None => {
                let sm_ok = self
                    .sm_bin_size()
                    .is_some_and(|(bs, bytes)| bytes <= SM_TILE_BYTES && sm_tile_per_point(self.dim, self.w, bs, self.nf, m) <= SM_MAX_TILE_PER_POINT);
                select_method(asm(self.dim, self.nf, self.w, m), m, self.opts.reuse_hint, sm_ok, mesh_fits)
            }
        };
        if matches!(method, GpuMethod::Csr | GpuMethod::Group) && !mesh_fits {
            return Err(Error::NotSupported(format!("{nent} sparse-matrix entries exceed 2^32 - 1")));
        }
        Ok(method)
    }

    /// Folds the device coordinates `raw` (one buffer per used axis) into new buffers of grid
    /// units and checks them in the same kernel: `bad[d]` (uploaded as M) becomes the first
    /// index whose axis-`d` coordinate is not finite. Reads back `bad` (three integers) and,
    /// on failure, the offending value.
    fn fold_and_check(&self, raw: &[&D::Buf], m: usize) -> Result<Vec<D::Buf>> {
        let (dev, dim, block) = (&self.dev, self.dim, self.opts.block);
        let mut g = Vec::with_capacity(3);
        for d in 0..3 {
            g.push(dev.alloc(if d < dim { (m * std::mem::size_of::<T>()).max(1) } else { 1 })?);
        }
        if m == 0 {
            return Ok(g);
        }
        let bad = upload_new(dev, &[m as i32; 3])?;
        let r = |d: usize| if d < dim { Arg::Buf(raw[d]) } else { Arg::Null };
        dev.launch(&self.sfx("fold", false), nblocks(m, block)?, block, 0, &[
            Arg::Geom(self.geo), r(0), r(1), r(2),
            self.axis(0, &g), self.axis(1, &g), self.axis(2, &g),
            Arg::I32(m as i32), Arg::Buf(&bad),
        ])?;
        let first = download_vec::<D, i32>(dev, &bad, 3)?;
        if let Some(d) = (0..dim).find(|&d| (first[d] as usize) < m) {
            let i = first[d] as usize;
            let mut v = [T::default()];
            dev.download(raw[d], i * std::mem::size_of::<T>(), super::types::as_bytes_mut(&mut v))?;
            return Err(Error::NonFinite(format!("coordinate {} of point {i} is {}", ["x", "y", "z"][d], v[0])));
        }
        Ok(g)
    }

    /// The buffer of axis `d` as a kernel argument (NULL for axes ≥ dim).
    fn axis<'a>(&self, d: usize, v: &'a [D::Buf]) -> Arg<'a, D::Buf> {
        if d < self.dim {
            Arg::Buf(&v[d])
        } else {
            Arg::Null
        }
    }

    /// GM-sort, SM: device bin sort of the folded points `g` on the bins of `geo` (count with
    /// atomics, exclusive scan of the counts on the device into `binstart`, permute). Nothing
    /// comes back to the host.
    fn bin_sort(&self, geo: FfGeom, g: &[D::Buf], m: usize) -> Result<Sorted<D::Buf>> {
        let (dev, block) = (&self.dev, self.opts.block);
        let nbins = (geo.nb[0] * geo.nb[1] * geo.nb[2]) as usize;
        let bin = dev.alloc((4 * m).max(1))?;
        let rank = dev.alloc((4 * m).max(1))?;
        // nbins + 1 counts, the last one staying 0, so that the scan's last entry is M
        let count = dev.alloc(4 * (nbins + 1))?;
        let binstart = dev.alloc(4 * (nbins + 1))?;
        let idx = dev.alloc((4 * m).max(1))?;
        if m > 0 {
            dev.launch(&self.sfx("bin_count", false), nblocks(m, block)?, block, 0, &[
                Arg::Geom(geo), self.axis(0, g), self.axis(1, g), self.axis(2, g),
                Arg::I32(m as i32), Arg::Buf(&bin), Arg::Buf(&rank), Arg::Buf(&count),
            ])?;
            self.scan_into(&count, &binstart, nbins + 1)?;
            dev.launch("ff_bin_permute", nblocks(m, block)?, block, 0, &[
                Arg::Buf(&bin), Arg::Buf(&rank), Arg::Buf(&binstart), Arg::I32(m as i32), Arg::Buf(&idx),
            ])?;
        }
        Ok(Sorted { idx, binstart, count })
    }

    /// SM: the subproblems — each bin's sorted points in chunks of at most `max_subprob`:
    /// counts per bin and their scan on the device; the host reads back one integer, the
    /// number of subproblems, to size the subproblem arrays.
    fn subproblems(&self, geo: FfGeom, sorted: &Sorted<D::Buf>) -> Result<Subprobs<D::Buf>> {
        let (dev, block) = (&self.dev, self.opts.block);
        let nbins = (geo.nb[0] * geo.nb[1] * geo.nb[2]) as usize;
        let nsub = dev.alloc(4 * (nbins + 1))?;
        let maxsub = self.opts.max_subprob.min(i32::MAX as usize) as i32;
        dev.launch("ff_subprob_count", nblocks(nbins, block)?, block, 0, &[
            Arg::Buf(&sorted.count), Arg::I32(nbins as i32), Arg::I32(maxsub), Arg::Buf(&nsub),
        ])?;
        let substart = dev.alloc(4 * (nbins + 1))?;
        self.scan_into(&nsub, &substart, nbins + 1)?;
        let n = self.read_u32(&substart, nbins)?;
        let bin = dev.alloc((4 * n as usize).max(1))?;
        let off = dev.alloc((4 * n as usize).max(1))?;
        dev.launch("ff_subprob_map", nblocks(nbins, block)?, block, 0, &[
            Arg::Buf(&nsub), Arg::Buf(&substart), Arg::I32(nbins as i32), Arg::I32(maxsub), Arg::Buf(&bin), Arg::Buf(&off),
        ])?;
        Ok(Subprobs { bin, off, n })
    }

    /// CSR, GROUP: point-major weights, then rows of single grid points
    /// (`shift = 0`, CSR; rows sorted by entry so the sums are deterministic) or of 64 grid
    /// points (`shift = 6`, GROUP): count per row, exclusive scan, fill.
    fn build_mesh(&self, g: &[D::Buf], m: usize, shift: i32) -> Result<Mesh<D::Buf>> {
        let (dev, block) = (&self.dev, self.opts.block);
        let nent = m * self.w.pow(self.dim as u32);
        let nrows: usize = self.nf.iter().product();
        let pt_w = dev.alloc((nent * std::mem::size_of::<T>()).max(1))?;
        let pt_g = dev.alloc((nent * 4).max(1))?;
        let nr = if shift == 0 { nrows } else { nrows.div_ceil(1 << shift) };
        let ptr = dev.alloc(4 * (nr + 1))?;
        let col = dev.alloc((4 * nent).max(1))?;
        if m > 0 {
            dev.launch(&self.point_kernel("pt_weights"), nblocks(m, block)?, block, 0, &[
                Arg::Geom(self.geo), Arg::Kernel(self.ker), self.axis(0, g), self.axis(1, g), self.axis(2, g),
                Arg::I32(m as i32), Arg::Buf(&pt_w), Arg::Buf(&pt_g),
            ])?;
            // count per row (ptr has nr + 1 zeroed entries; the last stays 0), scan, fill
            dev.launch("ff_entry_count", nblocks(nent, block)?, block, 0, &[
                Arg::Buf(&pt_g), Arg::U32(nent as u32), Arg::I32(shift), Arg::Buf(&ptr),
            ])?;
            self.scan(&ptr, nr + 1)?;
            let cursor = dev.alloc(4 * nr)?;
            dev.launch("ff_entry_fill", nblocks(nent, block)?, block, 0, &[
                Arg::Buf(&pt_g), Arg::U32(nent as u32), Arg::I32(shift), Arg::Buf(&ptr), Arg::Buf(&cursor), Arg::Buf(&col),
            ])?;
            if shift == 0 {
                dev.launch("ff_rows_sort", nblocks(nr, block)?, block, 0, &[Arg::Buf(&ptr), Arg::I32(nr as i32), Arg::Buf(&col)])?;
            }
        }
        Ok(Mesh { pt_w, pt_g, ptr, col })
    }

    fn points(&self) -> Result<&Points<D::Buf>> {
        self.pts.as_ref().ok_or_else(|| Error::NoPoints("GPU spread/interp called before setpts".into()))
    }

    /// Spreads device strengths `c` (M interleaved complex values, caller's point order) onto
    /// the device grid (Π nf interleaved complex values), **overwriting** it.
    pub fn spread_dev(&self, c: &D::Buf, grid: &mut D::Buf) -> Result<()> {
        self.spread_dev_batch(c, 0, 1, grid)
    }

    /// Batched spreading: vectors `v0 … v0 + nvec − 1` of `c` (stacked, `c[v*M + j]`
    /// interleaved complex) onto the first `nvec` grids of `grid` (stacked, Π nf values each),
    /// **overwriting** them. GM and GM-sort evaluate each point's kernel once for all vectors.
    /// Errors: [`Error::NoPoints`], [`Error::InvalidArg`] (buffers too small), device errors.
    pub fn spread_dev_batch(&self, c: &D::Buf, v0: usize, nvec: usize, grid: &mut D::Buf) -> Result<()> {
        let pts = self.points()?;
        self.check_batch(pts.m, c, v0, nvec, grid)?;
        if nvec == 0 {
            return Ok(());
        }
        let dev = &self.dev;
        let (m, block, dim) = (pts.m, self.opts.block, self.dim);
        let nrows: usize = self.nf.iter().product();
        let g = &pts.g;
        let wd = self.w.pow(dim as u32) as i32;
        let (nv, v0i, mi) = (Arg::I32(nvec as i32), Arg::I32(v0 as i32), Arg::I32(m as i32));
        match &pts.data {
            MethodData::Gm | MethodData::GmSort(_) => {
                dev.zero(grid)?;
                if m == 0 {
                    return Ok(());
                }
                let order = match &pts.data {
                    MethodData::GmSort(s) => Arg::Buf(&s.idx),
                    _ => Arg::Null,
                };
                dev.launch(&self.point_kernel("gm_spread"), nblocks(m, block)?, block, 0, &[
                    Arg::Geom(self.geo), Arg::Kernel(self.ker), self.axis(0, g), self.axis(1, g), self.axis(2, g), order,
                    mi, nv, v0i, Arg::Buf(c), Arg::Buf(grid),
                ])
            }
            MethodData::Sm { geo, sorted, sub } => {
                dev.zero(grid)?;
                let Some(sub) = sub else { return Ok(()) };
                let smem = tile_bytes::<T>(dim, self.w, [geo.bs[0] as usize, geo.bs[1] as usize, geo.bs[2] as usize]) as u32;
                dev.launch(&self.point_kernel("sm_spread"), batch_blocks(sub.n as usize, nvec)?, block, smem, &[
                    Arg::Geom(*geo), Arg::Kernel(self.ker), self.axis(0, g), self.axis(1, g), self.axis(2, g),
                    Arg::Buf(&sorted.idx), Arg::Buf(&sorted.binstart), Arg::Buf(&sorted.count), Arg::Buf(&sub.bin), Arg::Buf(&sub.off),
                    Arg::I32(self.opts.max_subprob.min(i32::MAX as usize) as i32), Arg::I32(sub.n as i32), mi, v0i,
                    Arg::Buf(c), Arg::Buf(grid),
                ])
            }
            MethodData::Csr(mesh) => {
                let cu = pts.cu;
                dev.launch(&self.sfx("csr_spread", false), nblocks(nrows * cu as usize, block)?, block, 0, &[
                    Arg::Buf(&mesh.ptr), Arg::Buf(&mesh.col), Arg::Buf(&mesh.pt_w),
                    Arg::I32(wd), Arg::I32(nrows as i32), Arg::I32(cu as i32), mi, nv, v0i, Arg::Buf(c), Arg::Buf(grid),
                ])
            }
            MethodData::Group(mesh) => {
                let ngroups = nrows.div_ceil(64);
                dev.launch(&self.sfx("group_spread", false), batch_blocks(ngroups, nvec)?, block, 0, &[
                    Arg::Buf(&mesh.ptr), Arg::Buf(&mesh.col), Arg::Buf(&mesh.pt_w), Arg::Buf(&mesh.pt_g),
                    Arg::I32(wd), Arg::I32(nrows as i32), mi, v0i, Arg::Buf(c), Arg::Buf(grid),
                ])
            }
        }
    }

    /// Interpolates the device grid at the points into device `c` (M interleaved complex
    /// values, caller's point order), overwriting `c`.
    pub fn interp_dev(&self, grid: &D::Buf, c: &mut D::Buf) -> Result<()> {
        self.interp_dev_batch(grid, c, 0, 1)
    }

    /// Batched interpolation: the first `nvec` grids of `grid` (stacked, Π nf values each) at
    /// the points into vectors `v0 … v0 + nvec − 1` of `c` (stacked, `c[v*M + j]`),
    /// overwriting those vectors only. GM and GM-sort evaluate each point's kernel once for
    /// all vectors. Errors as [`GpuSpreader::spread_dev_batch`].
    pub fn interp_dev_batch(&self, grid: &D::Buf, c: &mut D::Buf, v0: usize, nvec: usize) -> Result<()> {
        let pts = self.points()?;
        self.check_batch(pts.m, c, v0, nvec, grid)?;
        let dev = &self.dev;
        let (m, block, dim) = (pts.m, self.opts.block, self.dim);
        let nrows: usize = self.nf.iter().product();
        if m == 0 || nvec == 0 {
            return Ok(());
        }
        let g = &pts.g;
        let wd = self.w.pow(dim as u32) as i32;
        let (nv, v0i, mi) = (Arg::I32(nvec as i32), Arg::I32(v0 as i32), Arg::I32(m as i32));
        match &pts.data {
            MethodData::Gm | MethodData::GmSort(_) => {
                let order = match &pts.data {
                    MethodData::GmSort(s) => Arg::Buf(&s.idx),
                    _ => Arg::Null,
                };
                dev.launch(&self.point_kernel("gm_interp"), nblocks(m, block)?, block, 0, &[
                    Arg::Geom(self.geo), Arg::Kernel(self.ker), self.axis(0, g), self.axis(1, g), self.axis(2, g), order,
                    mi, nv, v0i, Arg::Buf(grid), Arg::Buf(c),
                ])
            }
            MethodData::Sm { geo, sorted, sub } => {
                let Some(sub) = sub else { return Ok(()) };
                let smem = tile_bytes::<T>(dim, self.w, [geo.bs[0] as usize, geo.bs[1] as usize, geo.bs[2] as usize]) as u32;
                dev.launch(&self.point_kernel("sm_interp"), batch_blocks(sub.n as usize, nvec)?, block, smem, &[
                    Arg::Geom(*geo), Arg::Kernel(self.ker), self.axis(0, g), self.axis(1, g), self.axis(2, g),
                    Arg::Buf(&sorted.idx), Arg::Buf(&sorted.binstart), Arg::Buf(&sorted.count), Arg::Buf(&sub.bin), Arg::Buf(&sub.off),
                    Arg::I32(self.opts.max_subprob.min(i32::MAX as usize) as i32), Arg::I32(sub.n as i32), mi, v0i,
                    Arg::Buf(grid), Arg::Buf(c),
                ])
            }
            MethodData::Csr(mesh) => {
                let cu = pts.cu_interp;
                dev.launch(&self.sfx("csr_interp", false), nblocks(m * cu as usize, block)?, block, 0, &[
                    Arg::Buf(&mesh.pt_w), Arg::Buf(&mesh.pt_g), Arg::I32(wd), mi, Arg::I32(cu as i32), Arg::I32(nrows as i32),
                    nv, v0i, Arg::Buf(grid), Arg::Buf(c),
                ])
            }
            MethodData::Group(mesh) => {
                // the group kernel accumulates: zero the chunk's vectors of c first
                let nz = m.checked_mul(nvec).filter(|&t| t <= u32::MAX as usize).ok_or_else(|| Error::NotSupported("too many values for one launch".into()))?;
                dev.launch(&format!("ff_zero_vecs_{}", T::SUFFIX), nblocks(nz, block)?, block, 0, &[
                    Arg::I32(m as i32), Arg::I32(nvec as i32), Arg::I32(v0 as i32), Arg::Buf(c),
                ])?;
                let ngroups = nrows.div_ceil(64);
                dev.launch(&self.sfx("group_interp", false), batch_blocks(ngroups, nvec)?, block, 0, &[
                    Arg::Buf(&mesh.ptr), Arg::Buf(&mesh.col), Arg::Buf(&mesh.pt_w), Arg::Buf(&mesh.pt_g),
                    Arg::I32(wd), Arg::I32(nrows as i32), mi, v0i, Arg::Buf(grid), Arg::Buf(c),
                ])
            }
        }
    }

    /// [`GpuSpreader::spread_dev`] for real device values `c` (M) and a real device `grid`
    /// (Π nf values), overwriting it: the values widened to complex (imaginary part 0), spread,
    /// and the real part kept, as the host arrays of a spreading plan are.
    pub fn spread_real_dev(&self, c: &D::Buf, grid: &mut D::Buf) -> Result<()> {
        let m = self.points()?.m;
        let nrows: usize = self.nf.iter().product();
        self.check_real(c, m, grid, nrows)?;
        let cz = self.real_to_complex(c, m)?;
        let mut gz = self.dev.alloc(nrows * 2 * std::mem::size_of::<T>())?;
        self.spread_dev(&cz, &mut gz)?;
        self.complex_real(&gz, nrows, grid)
    }

    /// [`GpuSpreader::interp_dev`] for a real device `grid` (Π nf values) and real device
    /// values `c` (M), overwriting them (complex kernels, real part kept).
    pub fn interp_real_dev(&self, grid: &D::Buf, c: &mut D::Buf) -> Result<()> {
        let m = self.points()?.m;
        let nrows: usize = self.nf.iter().product();
        self.check_real(c, m, grid, nrows)?;
        let gz = self.real_to_complex(grid, nrows)?;
        let mut cz = self.dev.alloc((m * 2 * std::mem::size_of::<T>()).max(1))?;
        self.interp_dev(&gz, &mut cz)?;
        self.complex_real(&cz, m, c)
    }

    fn check_real(&self, c: &D::Buf, m: usize, grid: &D::Buf, nrows: usize) -> Result<()> {
        let tb = std::mem::size_of::<T>();
        if self.dev.len(c) < m * tb || self.dev.len(grid) < nrows * tb {
            return Err(Error::InvalidArg(format!(
                "real spread/interp: buffers of {} and {} bytes for the values and the grid, need {} and {}",
                self.dev.len(c), self.dev.len(grid), m * tb, nrows * tb)));
        }
        Ok(())
    }

    /// A new buffer of the `n` real values of `re` as complex values.
    fn real_to_complex(&self, re: &D::Buf, n: usize) -> Result<D::Buf> {
        let z = self.dev.alloc((n * 2 * std::mem::size_of::<T>()).max(1))?;
        if n > 0 {
            let block = self.opts.block;
            self.dev.launch(&format!("ff_real_to_complex_{}", T::SUFFIX), nblocks(n, block)?, block, 0, &[
                Arg::I32(n as i32), Arg::Buf(re), Arg::Buf(&z),
            ])?;
        }
        Ok(z)
    }

    /// The real parts of the `n` complex values of `z` into `re`.
    fn complex_real(&self, z: &D::Buf, n: usize, re: &mut D::Buf) -> Result<()> {
        if n == 0 {
            return Ok(());
        }
        let block = self.opts.block;
        self.dev.launch(&format!("ff_complex_real_{}", T::SUFFIX), nblocks(n, block)?, block, 0, &[
            Arg::I32(n as i32), Arg::Buf(z), Arg::Buf(re),
        ])
    }

    /// Checks the buffers of a batched call: `c` holds vectors up to `v0 + nvec` of M values,
    /// `grid` at least `nvec` grids; indices fit the kernels' `int` arguments.
    fn check_batch(&self, m: usize, c: &D::Buf, v0: usize, nvec: usize, grid: &D::Buf) -> Result<()> {
        let z = 2 * std::mem::size_of::<T>();
        let nrows: usize = self.nf.iter().product();
        let (need_c, need_g) = ((v0 + nvec) * m * z, nvec * nrows * z);
        if v0 + nvec > i32::MAX as usize {
            return Err(Error::InvalidArg(format!("vector range {v0} + {nvec} exceeds 2^31 − 1")));
        }
        if self.dev.len(c) < need_c || self.dev.len(grid) < need_g {
            return Err(Error::InvalidArg(format!(
                "batched spread/interp of vectors {v0}..{}: buffers of {} and {} bytes for the values and the grids, need {need_c} and {need_g}",
                v0 + nvec, self.dev.len(c), self.dev.len(grid))));
        }
        Ok(())
    }

    /// Host-memory spreading: `grid = spread(c)` (overwrites; lengths M and Π nf).
    pub fn spread(&self, c: &[Complex<T>], grid: &mut [Complex<T>]) -> Result<()> {
        let pts = self.points()?;
        if c.len() != pts.m || grid.len() != self.nf.iter().product::<usize>() {
            return Err(Error::InvalidArg(format!("spread: {} strengths for {} points, grid of {} for {}", c.len(), pts.m, grid.len(), self.nf.iter().product::<usize>())));
        }
        let cb = upload_new(&self.dev, c)?;
        let mut gb = self.dev.alloc(std::mem::size_of_val(grid))?;
        self.spread_dev(&cb, &mut gb)?;
        self.dev.download(&gb, 0, super::types::as_bytes_mut(grid))
    }

    /// Host-memory interpolation: `c = interp(grid)` (overwrites).
    pub fn interp(&self, grid: &[Complex<T>], c: &mut [Complex<T>]) -> Result<()> {
        let pts = self.points()?;
        if c.len() != pts.m || grid.len() != self.nf.iter().product::<usize>() {
            return Err(Error::InvalidArg(format!("interp: {} outputs for {} points, grid of {} for {}", c.len(), pts.m, grid.len(), self.nf.iter().product::<usize>())));
        }
        let gb = upload_new(&self.dev, grid)?;
        let mut cb = self.dev.alloc(std::mem::size_of_val(c).max(1))?;
        self.interp_dev(&gb, &mut cb)?;
        if !c.is_empty() {
            self.dev.download(&cb, 0, super::types::as_bytes_mut(c))?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compute_unit_heuristic() {
        assert_eq!(cu_for_asm(0.2), 1);
        assert_eq!(cu_for_asm(1.0), 1);
        assert_eq!(cu_for_asm(1.5), 2);
        assert_eq!(cu_for_asm(7.9), 8);
        assert_eq!(cu_for_asm(16.0), 16);
        assert_eq!(cu_for_asm(300.0), 16);
    }

    #[test]
    fn options_from_the_nufft_opts() {
        use crate::nufft::options::*;
        let o = NufftOpts { gpu_method: Some(GpuMethod::Csr), gpu_spread_reuse_hint: 50, ..NufftOpts::default() };
        let s = GpuSpreadOpts::from_nufft_opts(&o);
        assert_eq!((s.method, s.reuse_hint), (Some(GpuMethod::Csr), 50));
        assert_eq!(GpuSpreadOpts::from_nufft_opts(&NufftOpts::default()), GpuSpreadOpts::default());
    }

    #[test]
    fn selection_rule() {
        assert_eq!(select_method(30.0, 1_000_000, 100, true, true), GpuMethod::Group);
        assert_eq!(select_method(2.0, 1_000_000, 100, true, true), GpuMethod::Csr);
        assert_eq!(select_method(0.5, 1_000_000, 1, true, true), GpuMethod::GmSort);
        assert_eq!(select_method(2.0, 1_000_000, 1, false, true), GpuMethod::GmSort);
        assert_eq!(select_method(2.0, 100, 1, false, true), GpuMethod::Gm);
        // SM where its 48 KiB tile is reused enough (sm_ok) and points are dense
        assert_eq!(select_method(2.0, 1_000_000, 100, true, false), GpuMethod::Sm);
        assert_eq!(select_method(2.0, 1_000_000, 1, true, true), GpuMethod::Sm);
        assert_eq!(select_method(50.0, 1000, 1, false, true), GpuMethod::Gm);
        assert!((asm(3, [64, 64, 64], 6, 1000) - 1000.0 * 216.0 / 262144.0).abs() < 1e-12);
    }

    #[test]
    fn sm_bins_for_every_width_dim_precision_and_limit() {
        const KIB: usize = 1024;
        let big = [1 << 16; 3];
        for limit in [48 * KIB, 163 * KIB, 227 * KIB] {
            for dim in 1..=3 {
                for rb in [4usize, 8] {
                    for w in 2..=16 {
                        let got = sm_bins(dim, w, big, rb, default_bins(dim), limit, true);
                        let shrunk = sm_bins(dim, w, big, rb, default_bins(dim), limit, false);
                        // at 48 KiB only double precision in 3D above w = 12 has no tile; the
                        // opt-in limits of A100 and H100 serve every width
                        let want_none = limit == 48 * KIB && dim == 3 && rb == 8 && w >= 13;
                        assert_eq!(got.is_none(), want_none, "limit {limit} dim {dim} f{} w {w}: {got:?}", 8 * rb);
                        assert_eq!(shrunk.is_none(), want_none);
                        let (Some(b), Some(sh)) = (got, shrunk) else { continue };
                        let bytes = tile_bytes_of(dim, w, b, rb);
                        assert!(bytes <= limit, "tile of {bytes} B over {limit}");
                        assert!((0..dim).all(|d| b[d] >= 2 && b[d] >= sh[d]), "{b:?} vs shrunk {sh:?}");
                        assert!((dim..3).all(|d| b[d] == default_bins(dim)[d]));
                        // growth stops only where the padding no longer dominates or no
                        // doubled side fits
                        let ratio = sm_padding(dim, w, b);
                        let can_grow = (0..dim).any(|d| {
                            let mut t = b;
                            t[d] *= 2;
                            tile_bytes_of(dim, w, t, rb) <= limit
                        });
                        assert!(ratio <= SM_GROW_RATIO || !can_grow, "dim {dim} w {w} {b:?}: ratio {ratio}");
                        if dim == 3 && rb == 8 && (w == 7 || w == 13 || w == 16) {
                            eprintln!("limit {:>3} KiB f64 3D w {w:>2}: bins {:?} tile {} B, padded/bin {ratio:.1}", limit / KIB, &b[..3], bytes);
                        }
                    }
                }
            }
        }
        // the caller's bins are only shrunk; bins never exceed a small grid
        assert_eq!(sm_bins(3, 4, big, 8, [4, 4, 4], 227 * KIB, false), Some([4, 4, 4]));
        let small = sm_bins(3, 4, [20, 20, 12], 8, default_bins(3), 227 * KIB, true).unwrap();
        assert!(small[0] <= 20 && small[1] <= 20 && small[2] <= 12, "{small:?}");
        // the H100 opt-in limit grows f64 3D w = 7 from 16x16x8 to 16x16x16 (24^3 complex = 216 KiB)
        assert_eq!(sm_bins(3, 7, big, 8, default_bins(3), 227 * KIB, true), Some([16, 16, 16]));
        assert_eq!(sm_bins(3, 7, big, 8, default_bins(3), 227 * KIB, false), Some([16, 16, 8]));
        // 48 KiB: today's shrinking (8x8x4 for w = 7), nothing to grow into
        assert_eq!(sm_bins(3, 7, big, 8, default_bins(3), 48 * KIB, true), Some([8, 8, 4]));
        // the spreader's tiles: 48 KiB whatever the device offers, the opt-in limit (grown)
        // only where no tile fits in 48 KiB, a smaller device limit respected
        let tile = |w: usize, rb: usize, limit: usize| sm_tile_bins(3, w, big, rb, default_bins(3), limit, true);
        assert_eq!(tile(7, 8, 227 * KIB), Some([8, 8, 4]));
        assert_eq!(sm_padding(3, 7, [8, 8, 4]), 12.0);
        assert_eq!(tile(9, 8, 227 * KIB), Some([4, 4, 4]));
        assert_eq!(tile(11, 8, 227 * KIB), Some([2, 2, 2]));
        // the measured cases of docs/gpu-methods.md: SM at 30 values per point, GM-sort at 236, 385
        let per_point = |w: usize, bs: [usize; 3], n: usize, m: usize| sm_tile_per_point(3, w, bs, [n; 3], m);
        assert!((per_point(9, [4, 4, 4], 192, 10_000_000) - 30.3).abs() < 0.1);
        assert!((per_point(8, [8, 8, 4], 270, 1_000_000) - 236.2).abs() < 0.1);
        assert!((per_point(11, [2, 2, 2], 224, 10_000_000) - 385.5).abs() < 0.1);
        assert!(per_point(9, [4, 4, 4], 192, 10_000_000) <= SM_MAX_TILE_PER_POINT);
        assert!(per_point(8, [8, 8, 4], 270, 1_000_000) > SM_MAX_TILE_PER_POINT);
        assert_eq!(per_point(7, [8, 8, 4], 64, 0), f64::INFINITY);
        assert!(tile(13, 8, 48 * KIB).is_none());
        assert_eq!(tile(13, 8, 227 * KIB), sm_bins(3, 13, big, 8, default_bins(3), 227 * KIB, true));
        assert_eq!(tile(7, 8, 16 * KIB), sm_bins(3, 7, big, 8, default_bins(3), 16 * KIB, false));
        assert_eq!(sm_tile_bins(3, 7, big, 8, [4, 4, 4], 227 * KIB, false), Some([4, 4, 4]));
    }

    #[test]
    fn batch_size_rule() {
        // automatic: min(ntrans, 8), lowered by the 1 GiB bound, at least 1
        assert_eq!(batch_size(3, 1 << 20, 0), 3);
        assert_eq!(batch_size(100, 1 << 20, 0), 8);
        assert_eq!(batch_size(100, 300 << 20, 0), 3);
        assert_eq!(batch_size(100, 2 << 30, 0), 1);
        // explicit: capped by ntrans
        assert_eq!(batch_size(5, 1 << 20, 2), 2);
        assert_eq!(batch_size(5, 2 << 30, 16), 5);
        assert_eq!(batch_size(1, 1 << 20, 0), 1);
    }

    #[test]
    fn sm_tiles_shrink_to_fit() {
        // f64 3D w = 7: pad 4, 16x16x8 bins give 24*24*16*16 bytes > 48 KiB; 8x8x8 gives 16^3*16 = 64 KiB;
        // 8x8x4 gives 16*16*12*16 = 49152 bytes, which fits
        assert!(tile_bytes::<f64>(3, 7, [8, 8, 4]) <= 49152);
        assert!(tile_bytes::<f64>(3, 7, [8, 8, 8]) > 49152);
    }
}
