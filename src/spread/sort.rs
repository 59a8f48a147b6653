//! Bin sort of the non-uniform points (Boström's gridding report §4, "unfinished bin-sort";
//! FINUFFT's `bin_sort`; Barnett et al. 2019 §3.2). Points, folded into grid units
//! `g ∈ [0, nf)` per axis, are assigned to cache-sized bins (16³ grid points in 3D, 32² in 2D,
//! 256 in 1D; x fastest, bin index `(b_z·nb_y + b_y)·nb_x + b_x`), and ordered by bin and,
//! in 3D for kernels of width ≥ 8, by sub-cell of 4³ within the bin ([`sub_cells`]: the key
//! `bin·64 + sub-cell`), stably (points of one key keep their input order): the result is the permutation
//! `perm[s]` = input index of the point at sorted position `s`, the bins' offsets in sorted
//! order (from which the spreader cuts its subproblems), and optionally the folded coordinates
//! in sorted order. The bins are compact tiles, not rows: a subproblem's box is then a tile
//! plus the kernel's halo (28³ complex values at w = 13: 351 KiB, inside L2, its rows on few
//! pages), where bins of 16×4×4 cut into runs of 10 000 points gave boxes spanning whole
//! x-rows of the grid (3.7 MB at 320³, w = 13) and 1.3× slower spreading.
//!
//! The sort is a stable two-level parallel counting sort (an MSD radix sort of the bin index
//! with one wide digit per level), run by [`count`] (pass 1) and [`Counted::sort`] (passes
//! 2–4). Buckets are runs of `2^shift` consecutive bins, with `shift` the smallest that leaves
//! at most [`MAX_BUCKETS`] (256) buckets. The points are split into `nchunks` chunks of
//! consecutive input indices (4 per thread, at least 2¹⁴ points each). Costs for M points,
//! `d` axes, element size `b` (8 for f64):
//!
//! 1. **count** (parallel over chunks): folds each coordinate once (256 points at a time,
//!    vectorised: `floor` by the rounding instruction in the AVX2 clone; the exact
//!    `reduce_2pi` is only taken for blocks holding a |x| > 64 or a non-finite value), checks
//!    finiteness, computes the bin and counts the bucket in the chunk's histogram row. Reads
//!    `b·d·M` bytes, writes nothing of size M.
//! 2. **prefix** (serial, `O(nbuck·nchunks)` ≤ 256·4·threads additions, microseconds):
//!    exclusive sums over (bucket, chunk) give each chunk its first slot in each bucket.
//! 3. **scatter** (parallel over chunks): folds the coordinates again (cheaper than storing
//!    and re-reading a key per point) and writes `perm` and the folded coordinates (or, when
//!    the coordinates are not kept, the bin within the bucket as a `u32`) at the chunk's next
//!    slot of the point's bucket, through software write-combining: 256 bytes per bucket and
//!    array staged in a per-thread buffer (≤ 256 KiB, L2-resident), written out with
//!    non-temporal stores when a staged run of whole cache lines is complete (no
//!    read-for-ownership of the destination, no cache pollution; the partial lines at the ends
//!    of each chunk's range of a bucket take plain stores). Reads `b·d·M`, writes
//!    `(4 + b·d)·M` bytes. This is the first touch of the output arrays, which are allocated
//!    uninitialised (no zeroing pass): the page faults of the fresh memory are taken here, in
//!    parallel. They get no huge-page advice: written as streams and read in order, they gain
//!    nothing in TLB reach, and on a virtual machine that reports free memory to its host a
//!    fresh huge page can cost up to 512 host faults (docs/performance.md, "Huge pages"). Chunks fill
//!    each bucket in input order, so the buckets are stable.
//! 4. **local** (parallel over groups of consecutive buckets balanced by point count, one
//!    scratch per group, none per bucket): a stable counting sort by key within each bucket
//!    through the group's scratch (a bucket holds about M/256 points). Reads and writes
//!    `(4 + b·d)·M` bytes once; skipped when a bucket is a single key.
//!
//! Every pass over M is parallel; nothing is allocated per point or per bucket. The result
//! equals a serial stable counting sort by key ([`counting_sort`], the test reference) for any
//! thread count, and the kept coordinates equal [`super::fold`] bit for bit. Per-pass
//! wall-clock times are returned in [`SortTimings`] ([`super::Spreader::sort_timings`]).
//!
//! For many cores: the passes over M scale with the chunk count; what stays serial is the
//! prefix sum (`O(256·4·threads)`) and the allocation; what is shared is memory bandwidth
//! (passes 1–4 move about `(5b·d + 12)·M` bytes in all) and the kernel's page-fault handling
//! of the fresh output arrays.

use super::fold;
use crate::error::{Error, Result};
use crate::real::Real;
use crate::threads::{SyncPtr, Threads};
use std::sync::Mutex;
use std::time::Instant;

/// Largest number of buckets of the scatter pass (each a run of `2^shift` bins).
pub const MAX_BUCKETS: usize = 256;

/// Points folded at a time (per axis, on the stack).
const BLOCK: usize = 256;

/// Chunks of the parallel passes per thread (load balance when a core is busy).
const CHUNKS_PER_THREAD: usize = 4;

/// Smallest chunk of the parallel passes (points).
const MIN_CHUNK: usize = 1 << 14;

/// Bin sizes per axis for a dimension.
pub fn bin_sizes(dim: usize) -> [usize; 3] {
    match dim {
        1 => [256, 1, 1],
        2 => [32, 32, 1],
        _ => [16, 16, 16],
    }
}

/// Bin sizes and bin counts per axis for a grid of sizes `nf`.
pub fn bin_grid(dim: usize, nf: [usize; 3]) -> ([usize; 3], [usize; 3]) {
    let bs = bin_sizes(dim);
    (bs, [nf[0].div_ceil(bs[0]), nf[1].div_ceil(bs[1]), nf[2].div_ceil(bs[2])])
}

/// Wall-clock seconds of the passes of the last bin sort (see the module documentation).
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct SortTimings {
    /// Pass 1: check, fold, bin and count.
    pub count_s: f64,
    /// Exclusive prefix sums of the bucket counts.
    pub prefix_s: f64,
    /// Pass 2: allocation of the outputs and the scatter into bucket order.
    pub scatter_s: f64,
    /// Pass 3: counting sort by bin within each bucket.
    pub local_s: f64,
}

impl SortTimings {
    /// Sum of the passes (s).
    pub fn total_s(&self) -> f64 {
        self.count_s + self.prefix_s + self.scatter_s + self.local_s
    }
}

/// Sub-cells per axis of a bin for a dimension and kernel width `w`: within a bin the points
/// are ordered by sub-cell (x fastest), stably. In 3D from w = 8 a bin of 16³ is cut into 4³
/// sub-cells of 4³ grid points: the rows that consecutive points touch then overlap, and the
/// part of the subproblem's box they use (`(4 + w − 1)³` values, 35 KiB at w = 10) stays in
/// L1 while a sub-cell's points (about 32 at M ≈ 2·nf³/σ³) run, where in input order every
/// point's `w²` rows came from L2. Measured (3D, M = 1e7, 128³ modes, one thread, AVX-512):
/// interpolation −23 % at w = 8, −30 % at w = 10 (with the two accumulator banks of the row
/// loops), 0 at w = 13 (its `16³` values no longer fit L1); spreading −2 to −7 % from w = 8,
/// but +3 to +15 % at w = 5 (the same rows stored by one point and loaded by the next), hence
/// one sub-cell below w = 8. In 1D and 2D a bin's box already fits L1 (2D: `(32 + w − 1)²`
/// values, 31 KiB at w = 13): one sub-cell.
pub fn sub_cells(dim: usize, w: usize) -> usize {
    if dim == 3 && w >= 8 { 4 } else { 1 }
}

/// Bins and buckets of one grid.
#[derive(Debug, Clone, Copy)]
struct Geometry {
    nf: [usize; 3],
    nb: [usize; 3],
    inv_bs: [f64; 3],
    /// Sub-cells per bin axis ([`sub_cells`], a power of two) and their bits in a key.
    sub: usize,
    sub_bits: u32,
    /// A bucket is `2^shift` consecutive bins.
    shift: u32,
    nbuck: usize,
}

impl Geometry {
    fn new(dim: usize, nf: [usize; 3], sub: usize) -> Self {
        let (bs, nb) = bin_grid(dim, nf);
        let nbins = nb[0] * nb[1] * nb[2];
        let mut shift = 0u32;
        while (nbins - 1) >> shift >= MAX_BUCKETS {
            shift += 1;
        }
        debug_assert!(sub.is_power_of_two() && sub <= bin_sizes(dim)[0]);
        Geometry {
            nf,
            nb,
            inv_bs: [1.0 / bs[0] as f64, 1.0 / bs[1] as f64, 1.0 / bs[2] as f64],
            sub,
            sub_bits: dim as u32 * sub.trailing_zeros(),
            shift,
            nbuck: ((nbins - 1) >> shift) + 1,
        }
    }

    /// Bits of a key within its bucket: the pass-3 sort key (0: no pass 3).
    fn local_bits(&self) -> u32 {
        self.shift + self.sub_bits
    }

    /// Bin index of a point with grid coordinates `g` (each in `[0, nf)`).
    #[inline(always)]
    fn bin<T: Real, const D: usize>(&self, g: [T; 3]) -> usize {
        let mut b = 0usize;
        for d in (0..D).rev() {
            // SAFETY: g ∈ [0, nf) is finite, and nf·inv_bs < 2⁶³
            let k = unsafe { (g[d].to_f64v() * self.inv_bs[d]).to_int_unchecked::<i64>() } as usize;
            b = b * self.nb[d] + k.min(self.nb[d] - 1);
        }
        b
    }

    /// Sort key of a point with grid coordinates `g` (each in `[0, nf)`): its bin
    /// ([`Self::bin`]) then its sub-cell within the bin (x fastest), `bin·sub^D + cell`.
    /// Exact: the bin and sub-cell sizes are powers of two.
    #[inline(always)]
    fn key<T: Real, const D: usize>(&self, g: [T; 3]) -> usize {
        if self.sub_bits == 0 {
            return self.bin::<T, D>(g);
        }
        let (mut b, mut c) = (0usize, 0usize);
        let sub = self.sub as f64;
        for d in (0..D).rev() {
            let u = g[d].to_f64v() * self.inv_bs[d];
            // SAFETY: g ∈ [0, nf) is finite, and nf·inv_bs·sub < 2⁶³
            let k = (unsafe { u.to_int_unchecked::<i64>() } as usize).min(self.nb[d] - 1);
            let f = unsafe { (u * sub).to_int_unchecked::<i64>() } as usize;
            b = b * self.nb[d] + k;
            c = c * self.sub + f.saturating_sub(k * self.sub).min(self.sub - 1);
        }
        (b << self.sub_bits) | c
    }
}

/// Folds the coordinates `x` (radians) into grid units `out[..x.len()]`, bit for bit as
/// [`super::fold`]: the loop without the long reduction of `reduce_2pi` runs first
/// (vectorisable: no branch, no call); the block is redone point by point with the exact fold
/// when some |x| > 64 or is not finite. Returns the offset of the first non-finite value, if
/// any (`out` is then partly written).
#[inline(always)]
fn fold_block<T: Real, const FLOOR: bool>(x: &[T], nf: usize, out: &mut [T]) -> Option<usize> {
    const INV: f64 = 1.0 / (2.0 * std::f64::consts::PI);
    let nff = nf as f64;
    let top = T::of(nff);
    let mut ok = true;
    for (o, &v) in out.iter_mut().zip(x) {
        let xf = v.to_f64v();
        ok &= xf.abs() <= 64.0;
        // reduce_2pi for |x| ≤ 64 (|u| < 11): its floor through an integer, or the rounding
        // instruction (`FLOOR`, SSE4.1 and later); `+ 0.0` makes floor(−0.0) = +0.0 as there
        let u = xf * INV;
        let fl = if FLOOR {
            u.floor() + 0.0
        } else {
            let t = (u as i32) as f64;
            if t > u { t - 1.0 } else { t }
        };
        let f = u - fl;
        let f = if f >= 1.0 { 0.0 } else { f };
        let g = T::of(f * nff);
        *o = if g >= top { T::zero() } else { g };
    }
    if ok {
        return None;
    }
    for (j, (o, &v)) in out.iter_mut().zip(x).enumerate() {
        if !v.is_finite() {
            return Some(j);
        }
        *o = fold(v, nf);
    }
    None
}

/// Pass 1 over the points `i0..i1`: folds, checks and counts buckets into `hist`
/// (`nbuck` counters). Returns the first index with a non-finite coordinate, if any.
#[inline(always)]
fn count_body<T: Real, const D: usize, const FLOOR: bool>(geo: &Geometry, x: &[&[T]; 3], i0: usize, i1: usize, hist: &mut [u32]) -> Option<usize> {
    let mut gb = [[T::zero(); BLOCK]; 3];
    let mut a = i0;
    while a < i1 {
        let n = BLOCK.min(i1 - a);
        let mut bad = usize::MAX;
        for d in 0..D {
            if let Some(j) = fold_block::<T, FLOOR>(&x[d][a..a + n], geo.nf[d], &mut gb[d][..n]) {
                bad = bad.min(j);
            }
        }
        if bad != usize::MAX {
            return Some(a + bad);
        }
        for j in 0..n {
            hist[geo.bin::<T, D>([gb[0][j], gb[1][j], gb[2][j]]) >> geo.shift] += 1;
        }
        a += n;
    }
    None
}

/// Where pass 2 writes: `perm`, and either the folded coordinates (`g[d]`, `D` axes; in 1D
/// also their low parts, `glo`) or the bin within the bucket (`local`); the unused pointers
/// are null.
#[derive(Clone, Copy)]
struct Outputs<T> {
    perm: SyncPtr<u32>,
    g: [SyncPtr<T>; 3],
    local: SyncPtr<u32>,
    /// 1D with kept coordinates: the low parts of their double-double fold
    /// (`spread::in_order::low_parts`).
    glo: SyncPtr<f32>,
}

/// Bytes of a cache line (the unit of the streaming stores).
const LINE: usize = 64;

/// Bytes staged per bucket and output array, written out at once (consecutive lines).
const FLUSH: usize = 4 * LINE;

/// One output array of the scatter, written through per-bucket staging lines
/// (software write-combining): element `s` is staged at line position `(s − phase) mod L`
/// (`L = LINE / size_of::<E>()`, `phase` the first element on a line boundary); a staged line
/// that lies wholly inside the chunk's range of the bucket is written with non-temporal
/// stores (no read-for-ownership of the destination line, no cache pollution), the partial
/// lines at the ends of the range with plain stores.
#[derive(Clone, Copy)]
struct Stream<E> {
    dst: *mut E,
    phase: usize,
    /// `nbuck` staging lines.
    stage: *mut E,
}

impl<E: Copy> Stream<E> {
    const L: usize = FLUSH / std::mem::size_of::<E>();

    /// A stream writing `dst` (aligned to `E`), staging in `stage` (`nbuck·LINE` bytes).
    fn new(dst: *mut E, stage: *mut u8) -> Self {
        let size = std::mem::size_of::<E>();
        let mis = (dst as usize) % LINE;
        Stream { dst, phase: ((LINE - mis) % LINE) / size, stage: stage.cast() }
    }

    /// Stages `v` for slot `s` of bucket `b` whose chunk range starts at slot `init`, and
    /// writes the staged line out when `s` completes it.
    ///
    /// # Safety
    /// `b < nbuck`; `init..=s` are slots of this chunk, written in increasing order.
    #[inline(always)]
    unsafe fn put(&self, b: usize, s: usize, init: usize, v: E) {
        let k = s.wrapping_sub(self.phase) & (Self::L - 1);
        let line = self.stage.add(b * Self::L);
        *line.add(k) = v;
        if k == Self::L - 1 {
            let ls = (s + 1) as isize - Self::L as isize;
            if ls >= init as isize {
                stream_lines(self.dst.add(ls as usize).cast(), line.cast());
            } else {
                let r = (init as isize - ls) as usize;
                std::ptr::copy_nonoverlapping(line.add(r), self.dst.add(init), Self::L - r);
            }
        }
    }

    /// Writes out what is staged for bucket `b` (chunk range `init..end`).
    ///
    /// # Safety
    /// As [`Stream::put`], `end` one past the last slot put.
    #[inline(always)]
    unsafe fn finish(&self, b: usize, end: usize, init: usize) {
        let k = end.wrapping_sub(self.phase) & (Self::L - 1);
        if end == init || k == 0 {
            return;
        }
        let ls = end as isize - k as isize;
        let rs = ls.max(init as isize);
        let r = (rs - ls) as usize;
        std::ptr::copy_nonoverlapping(self.stage.add(b * Self::L + r), self.dst.add(rs as usize), k - r);
    }
}

/// Writes the [`FLUSH`] bytes at `src` to the line-aligned `dst` with non-temporal stores
/// (plain stores off x86-64).
#[inline(always)]
unsafe fn stream_lines(dst: *mut u8, src: *const u8) {
    #[cfg(target_arch = "x86_64")]
    {
        use std::arch::x86_64::{__m128i, _mm_loadu_si128, _mm_stream_si128};
        for q in 0..FLUSH / 16 {
            _mm_stream_si128(dst.add(16 * q).cast::<__m128i>(), _mm_loadu_si128(src.add(16 * q).cast::<__m128i>()));
        }
    }
    #[cfg(not(target_arch = "x86_64"))]
    std::ptr::copy_nonoverlapping(src, dst, FLUSH);
}

/// Orders the non-temporal stores of this thread before what follows (the end of the pass).
#[inline(always)]
fn store_fence() {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: SSE2 is part of x86-64.
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Staging bytes per bucket for a dimension and mode (one line per output array: the
/// permutation, then the coordinates and in 1D their low parts, or the keys).
fn stage_bytes(dim: usize, keep_coords: bool) -> usize {
    FLUSH * (1 + if keep_coords { dim + usize::from(dim == 1) } else { 1 })
}

/// Pass 2 over the points `i0..i1` (all finite): scatters into bucket order, `off[b]` being
/// the chunk's next slot in bucket `b` (advanced past the chunk's points), through the
/// staging lines `stage` (`nbuck·stage_bytes` bytes, 16-byte aligned).
///
/// # Safety
/// The slots handed out by `off` must be in bounds of the outputs and distinct across chunks;
/// `init` is a scratch of `nbuck` counters.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn scatter_body<T: Real, const D: usize, const FLOOR: bool>(geo: &Geometry, x: &[&[T]; 3], i0: usize, i1: usize, off: &mut [u32], init: &mut [u32], stage: *mut u8, out: Outputs<T>) {
    let nbuck = geo.nbuck;
    let copy = !out.g[0].0.is_null();
    let keys = !out.local.0.is_null();
    init.copy_from_slice(off);
    let sp = Stream::new(out.perm.0, stage);
    let sg: [Stream<T>; 3] = std::array::from_fn(|d| if copy && d < D { Stream::new(out.g[d].0, stage.add(nbuck * FLUSH * (1 + d))) } else { sp_null() });
    let sl = Stream::new(if keys { out.local.0 } else { std::ptr::null_mut() }, stage.add(nbuck * FLUSH));
    let lows = D == 1 && !out.glo.0.is_null();
    let slo = if lows { Stream::new(out.glo.0, stage.add(nbuck * FLUSH * 2)) } else { sp_null() };
    let mut gb = [[T::zero(); BLOCK]; 3];
    let mut lb = [0f32; BLOCK];
    let mut a = i0;
    while a < i1 {
        let n = BLOCK.min(i1 - a);
        for d in 0..D {
            let bad = fold_block::<T, FLOOR>(&x[d][a..a + n], geo.nf[d], &mut gb[d][..n]);
            debug_assert!(bad.is_none());
        }
        if lows {
            super::in_order::low_parts(&x[0][a..a + n], &gb[0][..n], geo.nf[0], &mut lb[..n]);
        }
        for j in 0..n {
            let gj = [gb[0][j], gb[1][j], gb[2][j]];
            let key = geo.key::<T, D>(gj);
            let b = key >> geo.local_bits();
            let s = *off.get_unchecked(b) as usize;
            *off.get_unchecked_mut(b) += 1;
            let s0 = *init.get_unchecked(b) as usize;
            sp.put(b, s, s0, (a + j) as u32);
            if copy {
                for d in 0..D {
                    sg[d].put(b, s, s0, gj[d]);
                }
                if lows {
                    slo.put(b, s, s0, lb[j]);
                }
            } else if keys {
                sl.put(b, s, s0, (key - (b << geo.local_bits())) as u32);
            }
        }
        a += n;
    }
    for b in 0..nbuck {
        let (s0, end) = (init[b] as usize, off[b] as usize);
        sp.finish(b, end, s0);
        if copy {
            for st in sg.iter().take(D) {
                st.finish(b, end, s0);
            }
            if lows {
                slo.finish(b, end, s0);
            }
        } else if keys {
            sl.finish(b, end, s0);
        }
    }
    store_fence();
}

/// An unused stream.
fn sp_null<E>() -> Stream<E> {
    Stream { dst: std::ptr::null_mut(), phase: 0, stage: std::ptr::null_mut() }
}

/// Runs `count_body` for the grid's dimension, with AVX2 when the CPU has it.
fn count_chunk<T: Real>(geo: &Geometry, dim: usize, x: &[&[T]; 3], i0: usize, i1: usize, hist: &mut [u32]) -> Option<usize> {
    #[inline(always)]
    fn dims<T: Real, const FLOOR: bool>(geo: &Geometry, dim: usize, x: &[&[T]; 3], i0: usize, i1: usize, hist: &mut [u32]) -> Option<usize> {
        match dim {
            1 => count_body::<T, 1, FLOOR>(geo, x, i0, i1, hist),
            2 => count_body::<T, 2, FLOOR>(geo, x, i0, i1, hist),
            _ => count_body::<T, 3, FLOOR>(geo, x, i0, i1, hist),
        }
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn avx2<T: Real>(geo: &Geometry, dim: usize, x: &[&[T]; 3], i0: usize, i1: usize, hist: &mut [u32]) -> Option<usize> {
        dims::<T, true>(geo, dim, x, i0, i1, hist)
    }
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2_fma() {
        // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
        return unsafe { avx2(geo, dim, x, i0, i1, hist) };
    }
    dims::<T, false>(geo, dim, x, i0, i1, hist)
}

/// Runs `scatter_body` for the grid's dimension, with AVX2 when the CPU has it.
///
/// # Safety
/// As [`scatter_body`].
#[allow(clippy::too_many_arguments)]
unsafe fn scatter_chunk<T: Real>(geo: &Geometry, dim: usize, x: &[&[T]; 3], i0: usize, i1: usize, off: &mut [u32], init: &mut [u32], stage: *mut u8, out: Outputs<T>) {
    #[inline(always)]
    #[allow(clippy::too_many_arguments)]
    unsafe fn dims<T: Real, const FLOOR: bool>(geo: &Geometry, dim: usize, x: &[&[T]; 3], i0: usize, i1: usize, off: &mut [u32], init: &mut [u32], stage: *mut u8, out: Outputs<T>) {
        match dim {
            1 => scatter_body::<T, 1, FLOOR>(geo, x, i0, i1, off, init, stage, out),
            2 => scatter_body::<T, 2, FLOOR>(geo, x, i0, i1, off, init, stage, out),
            _ => scatter_body::<T, 3, FLOOR>(geo, x, i0, i1, off, init, stage, out),
        }
    }
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    #[allow(clippy::too_many_arguments)]
    unsafe fn avx2<T: Real>(geo: &Geometry, dim: usize, x: &[&[T]; 3], i0: usize, i1: usize, off: &mut [u32], init: &mut [u32], stage: *mut u8, out: Outputs<T>) {
        dims::<T, true>(geo, dim, x, i0, i1, off, init, stage, out)
    }
    #[cfg(target_arch = "x86_64")]
    if crate::simd::has_avx2_fma() {
        return avx2(geo, dim, x, i0, i1, off, init, stage, out);
    }
    dims::<T, false>(geo, dim, x, i0, i1, off, init, stage, out)
}

/// Pass 3 for buckets `b0..b1`: a stable counting sort by key ([`Geometry::key`]: bin, then
/// sub-cell) within each bucket, through one scratch for the group. Errors: [`Error::Alloc`] (the scratch).
///
/// # Safety
/// The buckets' ranges of the outputs (`bucket_start[b]..bucket_start[b + 1]`) must be
/// written by pass 2 and touched by no other thread.
unsafe fn local_sort<T: Real, const D: usize>(geo: &Geometry, bucket_start: &[usize], b0: usize, b1: usize, out: Outputs<T>, bin_start: SyncPtr<usize>) -> Result<()> {
    let copy = !out.g[0].0.is_null();
    let lows = D == 1 && !out.glo.0.is_null();
    let len = (b0..b1).map(|b| bucket_start[b + 1] - bucket_start[b]).max().unwrap_or(0);
    let nloc = 1usize << geo.local_bits();
    let nbins = geo.nb[0] * geo.nb[1] * geo.nb[2];
    let mut tp = crate::error::try_filled_vec::<u32>(len, 0, "bin-sort scratch")?;
    let mut lb = crate::error::try_filled_vec::<u32>(len, 0, "bin-sort scratch")?;
    let mut tg: [Vec<T>; 3] = [Vec::new(), Vec::new(), Vec::new()];
    if copy && len > 1 {
        for t in tg.iter_mut().take(D) {
            *t = crate::error::try_filled_vec::<T>(len, T::zero(), "bin-sort scratch")?;
        }
    }
    let mut tl = if lows && len > 1 { crate::error::try_filled_vec::<f32>(len, 0.0, "bin-sort scratch")? } else { Vec::new() };
    let mut off = crate::error::try_filled_vec::<u32>(nloc + 1, 0, "bin-sort offsets")?;
    for b in b0..b1 {
        let (s0, s1) = (bucket_start[b], bucket_start[b + 1]);
        let n = s1 - s0;
        let bp = std::slice::from_raw_parts_mut(out.perm.0.add(s0), n);
        let bg: [&mut [T]; 3] = std::array::from_fn(|d| if copy && d < D { std::slice::from_raw_parts_mut(out.g[d].0.add(s0), n) } else { &mut [][..] });
        let bl: &mut [f32] = if lows { std::slice::from_raw_parts_mut(out.glo.0.add(s0), n) } else { &mut [] };
        let base = b << geo.shift;
        if copy {
            for j in 0..n {
                let gj = [bg[0][j], if D > 1 { bg[1][j] } else { T::zero() }, if D > 2 { bg[2][j] } else { T::zero() }];
                lb[j] = (geo.key::<T, D>(gj) - (base << geo.sub_bits)) as u32;
            }
        } else {
            lb[..n].copy_from_slice(std::slice::from_raw_parts(out.local.0.add(s0), n));
        }
        off.fill(0);
        for &k in &lb[..n] {
            off[k as usize + 1] += 1;
        }
        for k in 0..nloc {
            off[k + 1] += off[k];
        }
        // the bucket's bins start at s0 + off[k] (its own slots of `bin_start`)
        for k in 0..(1usize << geo.shift).min(nbins - base) {
            *bin_start.0.add(base + k) = s0 + off[k << geo.sub_bits] as usize;
        }
        if n <= 1 {
            continue;
        }
        tp[..n].copy_from_slice(bp);
        for d in 0..D {
            if copy {
                tg[d][..n].copy_from_slice(bg[d]);
            }
        }
        if lows {
            tl[..n].copy_from_slice(bl);
        }
        let [g0, g1, g2] = bg;
        for j in 0..n {
            let k = lb[j] as usize;
            let s = off[k] as usize;
            off[k] += 1;
            bp[s] = tp[j];
            if copy {
                g0[s] = tg[0][j];
                if D > 1 {
                    g1[s] = tg[1][j];
                }
                if D > 2 {
                    g2[s] = tg[2][j];
                }
                if lows {
                    bl[s] = tl[j];
                }
            }
        }
    }
    Ok(())
}

/// The points after pass 1: checked, with their per-chunk bucket counts.
pub(crate) struct Counted<'a, T: Real> {
    x: [&'a [T]; 3],
    dim: usize,
    m: usize,
    geo: Geometry,
    nchunks: usize,
    /// `hist[c·nbuck + b]`: points of chunk `c` in bucket `b`.
    hist: Vec<u32>,
    timings: SortTimings,
}

/// The sorted points.
pub(crate) struct Sorted<T> {
    /// Sorted position → input index.
    pub perm: Vec<u32>,
    /// Folded coordinates in sorted order per axis (`dim` axes; all empty when not kept).
    pub g: [Vec<T>; 3],
    /// 1D with kept coordinates: the low parts of their double-double fold in sorted order
    /// (`spread::in_order::low_parts`: the coordinate is `g[0][i] + glo[i]`); empty otherwise.
    pub glo: Vec<f32>,
    /// `bin_start[b]..bin_start[b + 1]`: the sorted positions of the points of bin `b`
    /// (`nbins + 1` entries, the last M).
    pub bin_start: Vec<usize>,
    /// Per-pass times.
    pub timings: SortTimings,
}

/// Pass 1 of the bin sort of the M points `coords[d]` (radians, `dim` axes of equal length
/// M < 2³², the others ignored) for a grid of sizes `nf` (1 for unused axes): checks that
/// every coordinate is finite and counts the points per bucket.
/// Errors: [`Error::NonFinite`] naming the first point with a non-finite coordinate and its
/// first such axis; [`Error::Alloc`] (the histograms).
pub(crate) fn count<'a, T: Real>(coords: [&'a [T]; 3], dim: usize, nf: [usize; 3], sub: usize, threads: &Threads) -> Result<Counted<'a, T>> {
    let t0 = Instant::now();
    let m = coords[0].len();
    debug_assert!(m <= u32::MAX as usize && (0..dim).all(|d| coords[d].len() == m));
    let geo = Geometry::new(dim, nf, sub);
    let nchunks = (threads.count() * CHUNKS_PER_THREAD).min(m.div_ceil(MIN_CHUNK)).max(1);
    let mut hist = crate::error::try_zeroed_vec::<u32>(nchunks * geo.nbuck, "bucket histograms")?;
    let first_bad = std::sync::atomic::AtomicUsize::new(usize::MAX);
    {
        let hp = SyncPtr(hist.as_mut_ptr());
        threads.for_each(nchunks, |c| {
            let hp = hp;
            // SAFETY: histogram row c belongs to chunk c only.
            let row = unsafe { std::slice::from_raw_parts_mut(hp.0.add(c * geo.nbuck), geo.nbuck) };
            if let Some(i) = count_chunk(&geo, dim, &coords, c * m / nchunks, (c + 1) * m / nchunks, row) {
                first_bad.fetch_min(i, std::sync::atomic::Ordering::Relaxed);
            }
        });
    }
    let bad = first_bad.into_inner();
    if bad != usize::MAX {
        let d = (0..dim).find(|&d| !coords[d][bad].is_finite()).unwrap_or(0);
        return Err(Error::NonFinite(format!("coordinate {} of point {bad} is {}", ["x", "y", "z"][d], coords[d][bad])));
    }
    let timings = SortTimings { count_s: t0.elapsed().as_secs_f64(), ..Default::default() };
    Ok(Counted { x: coords, dim, m, geo, nchunks, hist, timings })
}

impl<T: Real> Counted<'_, T> {
    /// Passes 2 and 3: the permutation and, if `keep_coords`, the folded coordinates in
    /// sorted order. Errors: [`Error::Alloc`] (nothing is returned).
    pub(crate) fn sort(mut self, threads: &Threads, keep_coords: bool) -> Result<Sorted<T>> {
        let (m, dim, geo, nchunks) = (self.m, self.dim, self.geo, self.nchunks);
        let nbuck = geo.nbuck;
        let mut tm = self.timings;
        // exclusive prefix over (bucket, chunk): each chunk's first slot per bucket
        let t0 = Instant::now();
        let mut bucket_start = crate::error::try_zeroed_vec::<usize>(nbuck + 1, "bucket offsets")?;
        let mut total = 0u32;
        for (b, start) in bucket_start.iter_mut().take(nbuck).enumerate() {
            *start = total as usize;
            for c in 0..nchunks {
                let h = &mut self.hist[c * nbuck + b];
                let cnt = *h;
                *h = total;
                total += cnt;
            }
        }
        bucket_start[nbuck] = m;
        tm.prefix_s = t0.elapsed().as_secs_f64();

        // pass 2: outputs allocated uninitialised; every slot is written once below
        let t0 = Instant::now();
        let mut perm = crate::error::try_vec::<u32>(m, "sort permutation")?;
        let mut g: [Vec<T>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        let mut local: Vec<u32> = Vec::new();
        let mut glo: Vec<f32> = Vec::new();
        if keep_coords {
            for gd in g.iter_mut().take(dim) {
                *gd = crate::error::try_vec::<T>(m, "sorted coordinates")?;
            }
            if dim == 1 {
                glo = crate::error::try_vec::<f32>(m, "sorted coordinates (low parts)")?;
            }
        } else if geo.local_bits() > 0 {
            local = crate::error::try_vec::<u32>(m, "bin-sort keys")?;
        }
        let null = SyncPtr(std::ptr::null_mut());
        let out = Outputs {
            perm: SyncPtr(perm.as_mut_ptr()),
            g: std::array::from_fn(|d| if keep_coords && d < dim { SyncPtr(g[d].as_mut_ptr()) } else { null }),
            local: SyncPtr(if keep_coords || geo.local_bits() == 0 { std::ptr::null_mut() } else { local.as_mut_ptr() }),
            glo: SyncPtr(if keep_coords && dim == 1 { glo.as_mut_ptr() } else { std::ptr::null_mut() }),
        };
        {
            // per thread: staging lines and a copy of the chunk's first slots
            let nt = threads.count();
            let sb = nbuck * stage_bytes(dim, keep_coords);
            let mut stage = crate::error::try_zeroed_vec::<u128>(nt * sb / 16, "bin-sort staging")?;
            let mut init = crate::error::try_zeroed_vec::<u32>(nt * nbuck, "bin-sort staging")?;
            let (stp, inp) = (SyncPtr(stage.as_mut_ptr().cast::<u8>()), SyncPtr(init.as_mut_ptr()));
            let hp = SyncPtr(self.hist.as_mut_ptr());
            let x = self.x;
            let parallel = threads.parallel();
            threads.for_each(nchunks, |c| {
                let (hp, stp, inp) = (hp, stp, inp);
                let t = if parallel { rayon::current_thread_index().expect("in the plan's pool").min(nt - 1) } else { 0 };
                // SAFETY: row c belongs to chunk c, the staging of thread t to the chunk it
                // runs; the exclusive prefix sums hand out every slot in 0..m exactly once
                // across chunks and buckets.
                unsafe {
                    let row = std::slice::from_raw_parts_mut(hp.0.add(c * nbuck), nbuck);
                    let ini = std::slice::from_raw_parts_mut(inp.0.add(t * nbuck), nbuck);
                    scatter_chunk(&geo, dim, &x, c * m / nchunks, (c + 1) * m / nchunks, row, ini, stp.0.add(t * sb), out);
                }
            });
        }
        // SAFETY: pass 2 wrote each of the m slots of perm, of g and glo (kept coordinates) and
        // of local (used) once.
        unsafe {
            perm.set_len(m);
            if keep_coords {
                for gd in g.iter_mut().take(dim) {
                    gd.set_len(m);
                }
                if dim == 1 {
                    glo.set_len(m);
                }
            } else if geo.local_bits() > 0 {
                local.set_len(m);
            }
        }
        drop(std::mem::take(&mut self.hist));
        tm.scatter_s = t0.elapsed().as_secs_f64();

        // pass 3: by bin within each bucket, and the bins' offsets
        let t0 = Instant::now();
        let nbins = geo.nb[0] * geo.nb[1] * geo.nb[2];
        let mut bin_start = crate::error::try_zeroed_vec::<usize>(nbins + 1, "bin offsets")?;
        bin_start[nbins] = m;
        if geo.local_bits() == 0 {
            bin_start[..nbins].copy_from_slice(&bucket_start[..nbins]);
        } else {
            let bsp = SyncPtr(bin_start.as_mut_ptr());
            let ngroups = (threads.count() * CHUNKS_PER_THREAD).min(nbuck);
            // group k: the buckets starting in [k·m/ngroups, (k+1)·m/ngroups)
            let first = |k: usize| bucket_start[..nbuck].partition_point(|&s| s < k * m / ngroups);
            let failed: Mutex<Option<Error>> = Mutex::new(None);
            let bs = &bucket_start;
            threads.for_each(ngroups, |k| {
                let bsp = bsp;
                let (b0, b1) = (first(k), if k + 1 == ngroups { nbuck } else { first(k + 1) });
                // SAFETY: the groups' bucket ranges are disjoint, and so are the buckets'
                // slot ranges and their bins' entries of bin_start.
                let r = unsafe {
                    match dim {
                        1 => local_sort::<T, 1>(&geo, bs, b0, b1, out, bsp),
                        2 => local_sort::<T, 2>(&geo, bs, b0, b1, out, bsp),
                        _ => local_sort::<T, 3>(&geo, bs, b0, b1, out, bsp),
                    }
                };
                if let Err(e) = r {
                    *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                }
            });
            if let Some(e) = failed.into_inner().unwrap_or_else(|p| p.into_inner()) {
                return Err(e);
            }
        }
        tm.local_s = t0.elapsed().as_secs_f64();
        Ok(Sorted { perm, g, glo, bin_start, timings: tm })
    }
}

/// The sort key of a point with folded coordinates `g` (test reference of
/// [`Geometry::key`], in integer arithmetic on the grid cell `⌊g⌋`), and the number of keys.
#[cfg(test)]
pub fn reference_key(dim: usize, nf: [usize; 3], sub: usize, g: [f64; 3]) -> (usize, usize) {
    let (bs, nb) = bin_grid(dim, nf);
    let (mut b, mut c) = (0usize, 0usize);
    for d in (0..dim).rev() {
        let i = g[d].floor() as usize;
        let k = (i / bs[d]).min(nb[d] - 1);
        b = b * nb[d] + k;
        c = c * sub + (i % bs[d] / (bs[d] / sub)).min(sub - 1);
    }
    let cells = sub.pow(dim as u32);
    (b * cells + c, nb[0] * nb[1] * nb[2] * cells)
}

/// Serial stable counting sort (the test reference of the parallel sort): returns the permutation `perm` (sorted position → input index) that
/// orders the points by their bin index `bins[i] < nbins`.
/// Errors: [`crate::Error::Alloc`].
#[cfg(test)]
pub fn counting_sort(bins: &[u32], nbins: usize) -> crate::Result<Vec<u32>> {
    let mut count = crate::error::try_zeroed_vec::<usize>(nbins + 1, "bin counts")?;
    for &b in bins {
        count[b as usize + 1] += 1;
    }
    for i in 0..nbins {
        count[i + 1] += count[i];
    }
    let mut perm = crate::error::try_zeroed_vec::<u32>(bins.len(), "sort permutation")?;
    for (i, &b) in bins.iter().enumerate() {
        let slot = &mut count[b as usize];
        perm[*slot] = i as u32;
        *slot += 1;
    }
    Ok(perm)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    #[test]
    fn sorted_by_bin_and_stable() {
        let nf = [64, 32, 16];
        let x: Vec<f64> = (0..500).map(|i| ((i * 37) % 640) as f64 / 10.0).collect();
        let y: Vec<f64> = (0..500).map(|i| ((i * 11) % 320) as f64 / 10.0).collect();
        let z: Vec<f64> = (0..500).map(|i| ((i * 7) % 160) as f64 / 10.0).collect();
        let (bs, nb) = bin_grid(3, nf);
        let bins: Vec<u32> = (0..500)
            .map(|i| (((z[i] / bs[2] as f64) as usize * nb[1] + (y[i] / bs[1] as f64) as usize) * nb[0] + (x[i] / bs[0] as f64) as usize) as u32)
            .collect();
        let p = counting_sort(&bins, nb[0] * nb[1] * nb[2]).unwrap();
        // 16³ bins: 4 × 2 × 1 of them on this grid
        let key = |i: usize| ((z[i] / 16.0) as usize * 2 + (y[i] / 16.0) as usize) * 4 + (x[i] / 16.0) as usize;
        let mut seen = vec![false; 500];
        for w in p.windows(2) {
            let (a, b) = (w[0] as usize, w[1] as usize);
            assert!(key(a) < key(b) || (key(a) == key(b) && a < b));
        }
        for &i in &p {
            seen[i as usize] = true;
        }
        assert!(seen.iter().all(|&s| s));
    }

    /// Coordinates exercising every path: uniform in [−π, π), blocks with |x| > 64 (the exact
    /// reduction), values on the period and bin boundaries, signed zeros, and a cluster that
    /// puts a fifth of the points into one bin.
    fn test_coords<T: Real>(m: usize, seed: u64) -> Vec<T> {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        let pi = std::f64::consts::PI;
        (0..m)
            .map(|i| {
                let v = match i % 10 {
                    _ if (3000..3300).contains(&i) => rng.gen_range(-1e6..1e6),
                    0 if i % 7 == 0 => [0.0, -0.0, pi, -pi, 2.0 * pi, -1e-300, 64.0, -64.0, 64.5, 1e12][(i / 70) % 10],
                    1 | 2 => 0.3 + rng.gen_range(0.0..1e-3),
                    3 if i % 13 == 0 => rng.gen_range(-200.0..200.0),
                    _ => rng.gen_range(-pi..pi),
                };
                T::of(v)
            })
            .collect()
    }

    /// The reference key of each point ([`reference_key`] of the exact fold
    /// [`super::super::fold`]), the number of keys and the keys per bin.
    fn reference_keys<T: Real>(x: &[Vec<T>; 3], dim: usize, nf: [usize; 3], sub: usize) -> (Vec<u32>, usize, usize) {
        let m = x[0].len();
        let key = |i: usize| reference_key(dim, nf, sub, std::array::from_fn(|d| if d < dim { fold(x[d][i], nf[d]).to_f64v() } else { 0.0 }));
        let nkeys = reference_key(dim, nf, sub, [0.0; 3]).1;
        (((0..m).map(|i| key(i).0 as u32)).collect(), nkeys, sub.pow(dim as u32))
    }

    fn check_sort<T: Real>(dim: usize, nf: [usize; 3], sub: usize, m: usize) {
        let x: [Vec<T>; 3] = std::array::from_fn(|d| if d < dim { test_coords::<T>(m, 11 + d as u64) } else { Vec::new() });
        let (keys, nkeys, cells) = reference_keys(&x, dim, nf, sub);
        let want = counting_sort(&keys, nkeys).unwrap();
        let nbins = nkeys / cells;
        let mut counts = vec![0usize; nbins];
        keys.iter().for_each(|&k| counts[k as usize / cells] += 1);
        for threads in [1, 2, 3] {
            let th = Threads::new(threads).unwrap();
            for keep in [true, false] {
                let c = count([&x[0][..], &x[1][..], &x[2][..]], dim, nf, sub, &th).unwrap();
                let sorted = c.sort(&th, keep).unwrap();
                assert!(sorted.perm == want, "{} dim {dim} nf {nf:?} sub {sub} threads {threads} keep {keep}", T::NAME);
                // bin b holds the sorted positions bin_start[b]..bin_start[b + 1]
                assert_eq!(sorted.bin_start.len(), nbins + 1);
                assert_eq!(sorted.bin_start[nbins], m);
                let mut before = 0;
                for b in 0..nbins {
                    assert_eq!(sorted.bin_start[b], before, "start of bin {b}, dim {dim} nf {nf:?} threads {threads} keep {keep}");
                    before += counts[b];
                }
                for d in 0..3 {
                    if keep && d < dim {
                        assert_eq!(sorted.g[d].len(), m);
                        for (s, &i) in sorted.perm.iter().enumerate() {
                            let f = fold(x[d][i as usize], nf[d]);
                            assert!(sorted.g[d][s].to_f64v().to_bits() == f.to_f64v().to_bits(), "axis {d} slot {s}: {:?} vs {:?}", sorted.g[d][s].to_f64v(), f.to_f64v());
                        }
                    } else {
                        assert!(sorted.g[d].is_empty());
                    }
                }
            }
        }
    }

    #[test]
    fn parallel_sort_equals_serial_stable_counting_sort() {
        // 70 001 points: five chunks of the parallel passes, a partial block at the end
        let m = 70_001;
        // many bins (several per bucket) and few (one per bucket, no local pass)
        for (dim, nf) in [(1, [1 << 20, 1, 1]), (1, [600, 1, 1]), (2, [1250, 1000, 1]), (2, [64, 48, 1]), (3, [320, 160, 96]), (3, [32, 32, 24])] {
            // in 3D with and without sub-cells (by bin, then by sub-cell within the bin)
            for sub in if dim == 3 { vec![1, 4] } else { vec![1] } {
                check_sort::<f64>(dim, nf, sub, m);
                check_sort::<f32>(dim, nf, sub, m);
            }
        }
        // nothing and one point
        for m in [0, 1, 17] {
            check_sort::<f64>(3, [160, 96, 64], 4, m);
        }
    }

    #[test]
    fn block_fold_is_the_exact_fold() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
        let mut x: Vec<f64> = (0..4096).map(|_| rng.gen_range(-64.0..64.0)).collect();
        x.extend([0.0, -0.0, 1e-300, -1e-300, -1e-17, 64.0, -64.0, std::f64::consts::PI, -std::f64::consts::PI, 2.0 * std::f64::consts::PI]);
        for nf in [2usize, 7, 1250, 1 << 21] {
            for chunk in x.chunks(BLOCK) {
                let mut a = vec![0.0; chunk.len()];
                let mut b = vec![0.0; chunk.len()];
                assert_eq!(fold_block::<f64, true>(chunk, nf, &mut a), None);
                assert_eq!(fold_block::<f64, false>(chunk, nf, &mut b), None);
                for j in 0..chunk.len() {
                    let f = fold(chunk[j], nf);
                    assert!(a[j].to_bits() == f.to_bits() && b[j].to_bits() == f.to_bits(), "x = {:e}, nf {nf}: {:e} {:e} {:e}", chunk[j], a[j], b[j], f);
                }
                let c32: Vec<f32> = chunk.iter().map(|&v| v as f32).collect();
                let mut a32 = vec![0.0f32; chunk.len()];
                assert_eq!(fold_block::<f32, true>(&c32, nf, &mut a32), None);
                for j in 0..chunk.len() {
                    assert_eq!(a32[j].to_bits(), fold(c32[j], nf).to_bits());
                }
            }
        }
        let bad = [1.0, 2.0, f64::INFINITY, f64::NAN];
        let mut o = [0.0; 4];
        assert_eq!(fold_block::<f64, true>(&bad, 100, &mut o), Some(2));
    }

    #[test]
    fn first_nonfinite_point_is_named() {
        let m = 100_000;
        let mut x: [Vec<f64>; 3] = std::array::from_fn(|d| test_coords::<f64>(m, d as u64));
        x[0][90_000] = f64::INFINITY;
        x[2][60_001] = f64::NAN;
        x[1][60_001] = f64::NEG_INFINITY;
        x[1][70_000] = f64::NAN;
        for threads in [1, 3] {
            let th = Threads::new(threads).unwrap();
            match count([&x[0][..], &x[1][..], &x[2][..]], 3, [64, 64, 64], 4, &th) {
                Err(Error::NonFinite(msg)) => assert!(msg.contains("coordinate y of point 60001"), "{msg}"),
                Err(e) => panic!("{e}"),
                Ok(_) => panic!("non-finite points accepted"),
            }
        }
    }
}
