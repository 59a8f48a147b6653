//! The octree on the device (`kernels/fmm_tree.cu`): exactly the tree of the CPU FMM
//! ([`crate::fmm::tree`], built by `CpuFmm::build_tree`) for the same particles, order and
//! depth option — bitwise equal arrays, the same root cube and depth, the same errors — built
//! with every `O(n)` step on the device.
//!
//! Steps (those of the CPU, docs/design.md §5.2 for the device conventions):
//! 1. finiteness (first non-finite index of `xyz`, then of `q`, by `atomicMin`) and the
//!    per-axis bounds in one reduction; the root cube: the bounding cube
//!    ([`crate::fmm::tree::cube_from_bounds`]) or the periodic box;
//! 2. Morton keys at [`KEY_DEPTH`] bits per axis from the unit coordinates
//!    ([`crate::fmm::tree::unit_coord`] with the same IEEE operations), and a stable LSD radix
//!    sort of the 60-bit keys carrying the permutation (8-bit digits: per-tile digit
//!    histograms, an exclusive scan, a stable scatter; digits whose bits are equal in all keys,
//!    found by one OR/AND reduction, are skipped). The order is the unique stable order of the
//!    keys, the CPU's;
//! 3. coincident particles: only particles in runs of equal keys are downloaded (equal keys
//!    are rare) and examined on the host by the CPU's logic
//!    ([`crate::fmm::tree::coincident_in_runs`]);
//! 4. the depth: the option, or the cost model ([`crate::fmm::params::choose_depth_from`]) on
//!    the occupancy statistics (occupied boxes and `Σ n_b²` per level) reduced on the device;
//! 5. the root cube's adjustment ([`crate::fmm::tree::periodic_origin_strided`],
//!    [`crate::fmm::tree::open_cube_strided`]) on the downloaded strided sample of ≤ 4096
//!    particles; if it moved, keys and sort again;
//! 6. leaves, levels, parents and children by compaction (flags, prefix scan, fill), and the
//!    sorted particles in unit coordinates.
//!
//! The host downloads only `O(depth)` numbers, the sample, the level sizes and the few
//! particles in runs of equal keys.

use super::DeviceLevel;
use super::DeviceTree;
use crate::error::{Error, Result};
use crate::fmm::params::{choose_depth_from, depth_stats_max};
use crate::fmm::tree::{coincident_in_runs, cube_from_bounds, open_cube_strided, origin_sample, periodic_origin_strided, KEY_DEPTH};
use crate::fmm::Boundary;
use crate::gpu::device::{download_vec, upload_new, Arg, Device};
use crate::gpu::types::from_ord;
use crate::threads::Threads;

/// Threads per block of the grid-stride kernels.
const BLOCK: u32 = 64;
/// Elements per thread (at least) of the grid-stride kernels.
const PER_THREAD: u64 = 16;
/// Largest grid of the grid-stride kernels.
const MAX_GRID: u64 = 65535;
/// Values per tile of the prefix scan (`FF_FMMT_SCAN_T · FF_FMMT_SCAN_I`).
const SCAN_TILE: u64 = 64 * 32;
/// Threads per block of the scan kernels.
const SCAN_T: u32 = 64;
/// Arrays up to this length are scanned by one block (`ff_fmmt_scan_single`).
const SCAN_SINGLE_MAX: u64 = 8 * SCAN_TILE;
/// Threads per block of the radix sort (`FF_FMMT_RS_T`).
const RS_T: u32 = 64;
/// Elements per radix sort tile (`FF_FMMT_RS_T · FF_FMMT_RS_I`).
const RS_TILE: u64 = 64 * 64;
/// Bits per radix digit (`FF_FMMT_RS_R = 2^RS_BITS`).
const RS_BITS: u32 = 8;

/// Blocks of [`BLOCK`] threads for a grid-stride loop over `n` elements: at least
/// [`PER_THREAD`] elements per thread (fewer, fuller threads: one atomic per thread in the
/// reductions), at most [`MAX_GRID`] blocks.
fn grid(n: u64) -> u32 {
    n.div_ceil(BLOCK as u64 * PER_THREAD).clamp(1, MAX_GRID) as u32
}

fn download_one<D: Device, T: Copy + Default>(dev: &D, buf: &D::Buf, index: usize) -> Result<T> {
    let mut v = [T::default()];
    dev.download(buf, index * std::mem::size_of::<T>(), crate::gpu::types::as_bytes_mut(&mut v))?;
    Ok(v[0])
}

/// Exclusive prefix sum of the `n` `u32` values at the start of `buf`, in place. Error:
/// [`Error::Alloc`].
pub(crate) fn scan<D: Device>(dev: &D, buf: &D::Buf, n: u64) -> Result<()> {
    if n <= SCAN_SINGLE_MAX {
        return dev.launch("ff_fmmt_scan_single", 1, SCAN_T, 0, &[Arg::Buf(buf), Arg::U64(n)]);
    }
    let nt = n.div_ceil(SCAN_TILE);
    let sums = dev.alloc(nt as usize * 4)?;
    dev.launch("ff_fmmt_scan_local", nt as u32, SCAN_T, 0, &[Arg::Buf(buf), Arg::U64(n), Arg::Buf(&sums)])?;
    scan(dev, &sums, nt)?;
    dev.launch("ff_fmmt_scan_add", nt as u32, SCAN_T, 0, &[Arg::Buf(buf), Arg::U64(n), Arg::Buf(&sums)])
}

/// Keys and permutation of `n` particles with their second buffers for the radix sort.
struct Keys<D: Device> {
    n: u64,
    /// `u64[n]` keys (sorted after [`Keys::sort`]).
    keys: D::Buf,
    /// `u32[n]` caller's index of each key.
    perm: D::Buf,
    k2: D::Buf,
    p2: D::Buf,
}

impl<D: Device> Keys<D> {
    fn new(dev: &D, n: u64) -> Result<Self> {
        let n8 = n as usize * 8;
        let n4 = n as usize * 4;
        Ok(Keys { n, keys: dev.alloc(n8)?, perm: dev.alloc(n4)?, k2: dev.alloc(n8)?, p2: dev.alloc(n4)? })
    }

    /// Keys at [`KEY_DEPTH`] of the particles `xyz` in the root cube `(lo, size)` (folded when
    /// periodic), identity permutation.
    fn compute(&mut self, dev: &D, xyz: &D::Buf, lo: [f64; 3], size: f64, periodic: bool) -> Result<()> {
        let args = [
            Arg::Buf(xyz),
            Arg::U64(self.n),
            Arg::F64(lo[0]),
            Arg::F64(lo[1]),
            Arg::F64(lo[2]),
            Arg::F64(size),
            Arg::I32(periodic as i32),
            Arg::Buf(&self.keys),
            Arg::Buf(&self.perm),
        ];
        dev.launch("ff_fmmt_keys", grid(self.n), BLOCK, 0, &args)
    }

    /// Stable sort of the keys carrying the permutation. Error: [`Error::Alloc`].
    fn sort(&mut self, dev: &D) -> Result<()> {
        radix_sort(dev, &mut self.keys, &mut self.perm, &mut self.k2, &mut self.p2, self.n)
    }
}

/// Stable LSD radix sort of the `n` keys `keys` (`u64`) carrying `perm` (`u32`) on the device,
/// 8-bit digits, skipping digits that are equal in all keys (one launch for `n ≤ 4096`,
/// else per pass a digit count per tile, a scan and a stable scatter); `k2`, `p2` are buffers of the same
/// sizes. The sorted arrays end in `keys`, `perm` (buffers are swapped). Public for the
/// emulator tests of its stability. Error: [`Error::Alloc`].
pub fn radix_sort<D: Device>(dev: &D, keys: &mut D::Buf, perm: &mut D::Buf, k2: &mut D::Buf, p2: &mut D::Buf, n: u64) -> Result<()> {
    if n < 2 {
        return Ok(());
    }
    if n <= RS_TILE {
        // one block sorts it all
        let np = dev.alloc(4)?;
        dev.launch("ff_fmmt_rs_tile", 1, RS_T, 0, &[Arg::Buf(keys), Arg::Buf(perm), Arg::Buf(k2), Arg::Buf(p2), Arg::U64(n), Arg::Buf(&np)])?;
        let passes: u32 = download_one(dev, &np, 0)?;
        if passes % 2 == 1 {
            std::mem::swap(keys, k2);
            std::mem::swap(perm, p2);
        }
        return Ok(());
    }
    let orand = upload_new(dev, &[0u64, u64::MAX])?;
    dev.launch("ff_fmmt_key_orand", grid(n), BLOCK, 0, &[Arg::Buf(keys), Arg::U64(n), Arg::Buf(&orand)])?;
    let oa: Vec<u64> = download_vec(dev, &orand, 2)?;
    let varying = oa[0] ^ oa[1];
    let ntiles = n.div_ceil(RS_TILE);
    let ncnt = ntiles * (1 << RS_BITS);
    let cnt = dev.alloc((ncnt as usize + 1) * 4)?;
    let mask = (1u64 << RS_BITS) - 1;
    let mut shift = 0;
    while shift < 64 {
        if (varying >> shift) & mask != 0 {
            let (nt, sh) = (ntiles as u32, shift as i32);
            dev.launch("ff_fmmt_rs_count", nt, RS_T, 0, &[Arg::Buf(keys), Arg::U64(n), Arg::I32(sh), Arg::U32(nt), Arg::Buf(&cnt)])?;
            scan(dev, &cnt, ncnt)?;
            let args = [Arg::Buf(keys), Arg::Buf(perm), Arg::U64(n), Arg::I32(sh), Arg::U32(nt), Arg::Buf(&cnt), Arg::Buf(k2), Arg::Buf(p2)];
            dev.launch("ff_fmmt_rs_scatter", nt, RS_T, 0, &args)?;
            std::mem::swap(keys, k2);
            std::mem::swap(perm, p2);
        }
        shift += RS_BITS;
    }
    Ok(())
}

/// Number of occupied boxes and `Σ_b n_b²` at the levels `0..=dmax` of the sorted keys
/// (as [`crate::fmm::tree::occupancy`]). Error: [`Error::Alloc`].
fn occupancy<D: Device>(dev: &D, keys: &D::Buf, n: u64, dmax: usize) -> Result<(Vec<usize>, Vec<f64>)> {
    let chunk = n.div_ceil(32768).max(256);
    let nchunks = n.div_ceil(chunk);
    let nl = dmax as u64 + 1;
    let part = dev.alloc((nchunks * nl * 4) as usize * 8)?;
    let out = dev.alloc(2 * nl as usize * 8)?;
    dev.launch("ff_fmmt_occ_chunks", grid(nchunks), BLOCK, 0, &[Arg::Buf(keys), Arg::U64(n), Arg::U64(chunk), Arg::I32(dmax as i32), Arg::Buf(&part)])?;
    dev.launch("ff_fmmt_occ_combine", 1, 32, 0, &[Arg::Buf(&part), Arg::U64(nchunks), Arg::I32(dmax as i32), Arg::Buf(&out)])?;
    let v: Vec<u64> = download_vec(dev, &out, 2 * nl as usize)?;
    Ok((v[..nl as usize].iter().map(|&c| c as usize).collect(), v[nl as usize..].iter().map(|&s| s as f64).collect()))
}

/// The smallest pair (caller's indices) of coincident particles, from the particles in runs of
/// equal sorted keys, downloaded. Error: [`Error::Alloc`].
fn coincident<D: Device>(dev: &D, k: &Keys<D>, xyz: &D::Buf, lo: [f64; 3], size: f64, periodic: bool) -> Result<Option<(usize, usize)>> {
    let n = k.n;
    let flag = dev.alloc((n as usize + 1) * 4)?;
    dev.launch("ff_fmmt_run_flags", grid(n + 1), BLOCK, 0, &[Arg::Buf(&k.keys), Arg::U64(n), Arg::Buf(&flag)])?;
    scan(dev, &flag, n + 1)?;
    let m: u32 = download_one(dev, &flag, n as usize)?;
    if m == 0 {
        return Ok(None);
    }
    let m = m as usize;
    let (ok, op, ox) = (dev.alloc(m * 8)?, dev.alloc(m * 4)?, dev.alloc(m * 24)?);
    let args = [Arg::Buf(&k.keys), Arg::Buf(&k.perm), Arg::Buf(xyz), Arg::U64(n), Arg::Buf(&flag), Arg::Buf(&ok), Arg::Buf(&op), Arg::Buf(&ox)];
    dev.launch("ff_fmmt_run_gather", grid(n), BLOCK, 0, &args)?;
    let keys: Vec<u64> = download_vec(dev, &ok, m)?;
    let perm: Vec<u32> = download_vec(dev, &op, m)?;
    let c: Vec<f64> = download_vec(dev, &ox, 3 * m)?;
    coincident_in_runs(&keys, &perm, |i| [c[3 * i], c[3 * i + 1], c[3 * i + 2]], lo, size, periodic)
}

/// Builds the tree of `n ≥ 1` particles given on the device: `xyz` `f64[3n]` interleaved
/// (`xyz[3i + d]`, caller's order and units), `q` `f64[n]`, for boundary conditions `boundary`,
/// expansion order `p` (it enters the root-cube rules) and the depth option `depth` (`None`:
/// the cost model; periodic trees have at least depth 1). The result is exactly the CPU's
/// `CpuFmm::build_tree` tree (docs: module documentation) in units of the root cube
/// `(lo, side)`. The caller's buffers are only read; the root cube's choice on the sample runs
/// on the host's `threads`. A stream mark is pushed to `marks` after each of the steps
/// [`crate::fmm::GPU_TREE_STEPS`] that completes (all of them on success).
///
/// Errors, as the CPU's: [`Error::InvalidArg`] (`n = 0`, buffers shorter than `3n`/`n` values,
/// depth above [`crate::fmm::params::MAX_DEPTH`], periodic side not finite and positive, two particles coincide:
/// "particles i and j coincide …", caller's indices, smaller first), [`Error::NonFinite`]
/// (the first non-finite value: over `xyz` first, then `q`; the message names the index as
/// the CPU's check), [`Error::Range`] (the extent of the particles overflows, or a subnormal
/// periodic side), [`Error::NPoints`] (`n > 2³² − 1`), [`Error::Alloc`] (device memory).
#[allow(clippy::too_many_arguments)]
pub fn build<D: Device>(dev: &D, threads: &Threads, xyz: &D::Buf, q: &D::Buf, n: usize, boundary: Boundary, p: usize, depth: Option<usize>,
                        marks: &mut Vec<D::Mark>) -> Result<DeviceTree<D>> {
    if n == 0 {
        return Err(Error::InvalidArg("the GPU FMM tree needs at least one particle".into()));
    }
    crate::fmm::check_count(n)?;
    if dev.len(xyz) < 24 * n || dev.len(q) < 8 * n {
        return Err(Error::InvalidArg(format!(
            "device buffers of {} and {} bytes hold fewer than 3n and n doubles (n = {n})",
            dev.len(xyz),
            dev.len(q)
        )));
    }
    crate::fmm::check_depth(depth)?;
    crate::fmm::check_boundary(boundary)?;
    let nu = n as u64;

    // 1. finiteness and bounds
    let chk = upload_new(dev, &[u64::MAX, u64::MAX, u64::MAX, u64::MAX, u64::MAX, 0, 0, 0])?;
    dev.launch("ff_fmmt_check_bounds", grid(nu), BLOCK, 0, &[Arg::Buf(xyz), Arg::Buf(q), Arg::U64(nu), Arg::Buf(&chk)])?;
    let c: Vec<u64> = download_vec(dev, &chk, 8)?;
    if c[0] != u64::MAX {
        let i = c[0] as usize;
        let v: f64 = download_one(dev, xyz, i)?;
        return Err(Error::NonFinite(format!("xyz[{i}] (particle {}, coordinate {}) = {v:e}", i / 3, i % 3)));
    }
    if c[1] != u64::MAX {
        let i = c[1] as usize;
        let v: f64 = download_one(dev, q, i)?;
        return Err(Error::NonFinite(format!("q[{i}] = {v:e}")));
    }
    marks.push(dev.mark()?);
    let mn: [f64; 3] = std::array::from_fn(|d| from_ord(c[2 + d]));
    let mx: [f64; 3] = std::array::from_fn(|d| from_ord(c[5 + d]));
    let periodic = matches!(boundary, Boundary::Periodic { .. });
    let (mut lo, mut size) = match boundary {
        Boundary::Open => cube_from_bounds(mn, mx)?,
        Boundary::Periodic { side } => ([0.0; 3], side),
        Boundary::PeriodicBox { .. } => return Err(Error::NotSupported("rectangular periodic boxes run on the CPU only".into())),
    };

    // 2. keys and sort
    let mut k = Keys::new(dev, nu)?;
    k.compute(dev, xyz, lo, size, periodic)?;
    k.sort(dev)?;
    marks.push(dev.mark()?);

    // 3. coincident particles (at the plain root cube, as the CPU)
    if let Some((i, j)) = coincident(dev, &k, xyz, lo, size, periodic)? {
        let mut c = [0.0f64; 3];
        dev.download(xyz, 24 * i, crate::gpu::types::as_bytes_mut(&mut c))?;
        return Err(crate::fmm::coincident_error(i, j, c, periodic));
    }
    marks.push(dev.mark()?);

    // 4. depth
    let m2l_top = if periodic { 1 } else { 2 };
    let depth = match depth {
        Some(d) => d,
        None if n <= 1 => 0,
        None => {
            let (nocc, s2) = occupancy(dev, &k.keys, nu, depth_stats_max(n))?;
            choose_depth_from(n, &nocc, &s2, p, m2l_top)
        }
    }
    .max(if periodic { 1 } else { 0 });
    marks.push(dev.mark()?);

    // 5. root cube adjustment on the sample
    let (s, stride) = origin_sample(n);
    let adjust = if periodic { depth > 0 } else { depth >= 2 };
    if adjust {
        let sb = dev.alloc(s * 24)?;
        dev.launch("ff_fmmt_sample", grid(s as u64), BLOCK, 0, &[Arg::Buf(xyz), Arg::U64(stride as u64), Arg::U64(s as u64), Arg::Buf(&sb)])?;
        let sample: Vec<f64> = download_vec(dev, &sb, 3 * s)?;
        let (o, sz) = if periodic {
            (periodic_origin_strided(threads, &sample, s, 1, size, depth, p), size)
        } else {
            open_cube_strided(threads, &sample, s, 1, mn, mx, lo, size, depth, p)
        };
        if o != lo || sz != size {
            (lo, size) = (o, sz);
            k.compute(dev, xyz, lo, size, periodic)?;
            k.sort(dev)?;
        }
    }

    marks.push(dev.mark()?);

    // 6. leaves, levels, particles
    let tree = build_levels(dev, k, xyz, q, lo, size, periodic, depth)?;
    marks.push(dev.mark()?);
    Ok(tree)
}

/// Step 6 of [`build`]: leaves and levels from the sorted keys, sorted particles in unit
/// coordinates. Error: [`Error::Alloc`].
#[allow(clippy::too_many_arguments)]
fn build_levels<D: Device>(dev: &D, k: Keys<D>, xyz: &D::Buf, q: &D::Buf, lo: [f64; 3], size: f64, periodic: bool, depth: usize) -> Result<DeviceTree<D>> {
    let n = k.n;
    let shift = (3 * (KEY_DEPTH - depth)) as i32;
    let flag = dev.alloc((n as usize + 1) * 4)?;
    dev.launch("ff_fmmt_leaf_flags", grid(n + 1), BLOCK, 0, &[Arg::Buf(&k.keys), Arg::U64(n), Arg::I32(shift), Arg::Buf(&flag)])?;
    scan(dev, &flag, n + 1)?;
    let nleaves: u32 = download_one(dev, &flag, n as usize)?;
    let nleaves = nleaves as u64;
    let leaf_keys = dev.alloc(nleaves as usize * 8)?;
    let leaf_start = dev.alloc((nleaves as usize + 1) * 4)?;
    let args = [Arg::Buf(&k.keys), Arg::U64(n), Arg::I32(shift), Arg::Buf(&flag), Arg::Buf(&leaf_keys), Arg::Buf(&leaf_start)];
    dev.launch("ff_fmmt_leaf_fill", grid(n + 1), BLOCK, 0, &args)?;
    drop(flag);

    // levels bottom-up: (len, keys, parent, child_start), parent/child_start filled later
    // built leaf level first, reversed at the end
    let mut levels: Vec<DeviceLevel<D>> = Vec::with_capacity(depth + 1);
    let (mut ckeys, mut nc) = (leaf_keys, nleaves);
    let mut child_start_below: Option<D::Buf> = None;
    for _ in 0..depth {
        let flag = dev.alloc((nc as usize + 1) * 4)?;
        dev.launch("ff_fmmt_level_flags", grid(nc + 1), BLOCK, 0, &[Arg::Buf(&ckeys), Arg::U64(nc), Arg::Buf(&flag)])?;
        scan(dev, &flag, nc + 1)?;
        let np: u32 = download_one(dev, &flag, nc as usize)?;
        let np = np as u64;
        let pkeys = dev.alloc(np as usize * 8)?;
        let child_start = dev.alloc((np as usize + 1) * 4)?;
        let parent = dev.alloc(nc as usize * 4)?;
        let args = [Arg::Buf(&ckeys), Arg::U64(nc), Arg::Buf(&flag), Arg::Buf(&pkeys), Arg::Buf(&child_start), Arg::Buf(&parent)];
        dev.launch("ff_fmmt_level_fill", grid(nc + 1), BLOCK, 0, &args)?;
        let cs = match child_start_below.take() {
            Some(b) => b,
            None => upload_new(dev, &[0u32])?, // the leaf level's dummy
        };
        levels.push(DeviceLevel { len: nc as usize, keys: ckeys, parent, child_start: cs });
        child_start_below = Some(child_start);
        (ckeys, nc) = (pkeys, np);
    }
    let cs = match child_start_below.take() {
        Some(b) => b,
        None => upload_new(dev, &[0u32])?,
    };
    levels.push(DeviceLevel { len: nc as usize, keys: ckeys, parent: upload_new(dev, &[0u32])?, child_start: cs });
    levels.reverse();

    let (x, y, z, qs) = (dev.alloc(n as usize * 8)?, dev.alloc(n as usize * 8)?, dev.alloc(n as usize * 8)?, dev.alloc(n as usize * 8)?);
    let args = [
        Arg::Buf(xyz),
        Arg::Buf(q),
        Arg::Buf(&k.perm),
        Arg::U64(n),
        Arg::F64(lo[0]),
        Arg::F64(lo[1]),
        Arg::F64(lo[2]),
        Arg::F64(size),
        Arg::I32(periodic as i32),
        Arg::Buf(&x),
        Arg::Buf(&y),
        Arg::Buf(&z),
        Arg::Buf(&qs),
    ];
    dev.launch("ff_fmmt_particles", grid(n), BLOCK, 0, &args)?;
    let Keys { perm, .. } = k;
    Ok(DeviceTree { n: n as usize, depth, periodic, lo, side: size, x, y, z, q: qs, perm, leaf_start, levels })
}

#[cfg(test)]
mod tests {
    use crate::gpu::types::from_ord;

    /// The kernels' order-preserving map (`ff_fmmt_ord`), written out on the host.
    fn ord(v: f64) -> u64 {
        let b = v.to_bits();
        if b >> 63 != 0 {
            !b
        } else {
            b | 1 << 63
        }
    }

    #[test]
    fn ord_is_monotonic_and_inverted() {
        let v = [f64::NEG_INFINITY, -1e300, -2.5, -f64::MIN_POSITIVE, -5e-324, -0.0, 0.0, 5e-324, 1.0, 3e10, f64::MAX, f64::INFINITY];
        for w in v.windows(2) {
            assert!(ord(w[0]) < ord(w[1]), "{} {}", w[0], w[1]);
        }
        for &x in &v {
            assert_eq!(from_ord(ord(x)).to_bits(), x.to_bits());
        }
    }
}
