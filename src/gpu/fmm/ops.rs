//! The FMM operators other than M2L on the device (`kernels/fmm_ops.cu`): P2M, M2M, L2L, L2P
//! (with the field), the P2P lists and P2P, and stage 6 (periodic background correction,
//! range checks, energy, scatter to the caller's order and units).
//!
//! Conventions are those of the CPU FMM ([`crate::fmm::harmonics`]): expansions of order `p` in
//! box units, `nc = (p+1)(p+2)/2` complex coefficients (`m ≥ 0`) per box, box-major blocks of
//! `2·nc` doubles (real parts, then imaginary parts) in Morton order per level; coordinates in
//! units of the root cube (`[0, 1)³`, box of key `k` at level `L` centred at
//! `(decode(k) + ½)·2^−L`). Every function adds to or overwrites device buffers only; the
//! results agree with the CPU stages ([`crate::fmm::CpuFmm::stage_dump`]) to rounding.
//!
//! Operators (seed paper: Kohnke et al., Int. J. HPC Appl. 35, 97 (2021), §2 eqs. 7–16):
//! * P2M `ω̃_lm = Σ_i q_i O_lm((s_i − c)/h)`: one block per leaf, one thread per coefficient,
//!   the leaf's particles staged through shared memory, `O_lm` by the column recurrence of
//!   [`crate::fmm::harmonics`] (the same arithmetic as the CPU);
//! * M2M `ω̃^P_lm = Σ_children Σ_jk 2^−j ω̃^C_jk O_{l−j,m−k}(d_o)` (seed paper eq. 14) and L2L
//!   `μ̃^C_jk = 2^−(j+1) Σ_lm μ̃^P_lm O_{l−j,m−k}(d_o)`: the direct O(p⁴) translations (the CPU
//!   uses rotations, O(p³); both are exact to rounding) through the regular harmonics of the 8
//!   fixed child offsets `d_o = (c_child − c_parent)/h_parent ∈ {±¼}³` ([`OpTables`]); one block
//!   per parent (M2M) or child (L2L) box, one thread per coefficient;
//! * L2P: `φ = (1/h) Σ μ̃_lm O_lm(u)` and `E = −(1/h²) Σ g^a_lm O_lm(u)` with the derived
//!   expansions of order `p − 1` of [`crate::fmm::l2p`]; one block per leaf, one thread per
//!   particle;
//! * P2P over the 27 neighbour leaves (periodic images by a shift of the target), the
//!   particle itself skipped (`1/r` replaced by 0 at `r = 0`), as [`crate::fmm::p2p`]; one
//!   block per target leaf, the sources of all its ranges staged through shared memory in tiles
//!   sized from [`Device::max_shared_bytes`].

use super::{DeviceTree, Expansions, SortedOut};
use crate::error::{Error, Result};
use crate::fmm::harmonics::{idx, ncoef, RegTables};
use crate::gpu::device::{download_vec, upload_new, Arg, Device};
use crate::gpu::pairs::DevicePairs;

/// Block size of the reduction kernels (`FF_OPS_RED` in `kernels/fmm_ops.cu`).
const RED: u32 = 256;
/// Largest grid of the grid-stride reduction kernels (so the partials fit one final block).
const RED_GRID: usize = 1024;
/// Threads per block of L2P and P2P (targets per pass).
const PART_BLOCK: u32 = 64;
/// Largest P2P source tile (sources staged in shared memory at once).
const P2P_TILE: usize = 256;

/// Per-order tables on the device: the regular harmonics of the 8 child offsets (M2M and
/// L2L) and the recurrence coefficients of the regular harmonics (P2M and L2P).
pub struct OpTables<D: Device> {
    /// Order `p`.
    pub p: usize,
    /// `f64[8 · 2nc]`: block `o` (octant `o = ox + 2oy + 4oz` of the child in its parent) holds
    /// `O_lm(d_o)`, `d_o = ((ox − ½)/2, (oy − ½)/2, (oz − ½)/2)` (the child centre relative to
    /// the parent's, in parent box units), layout of [`crate::fmm::harmonics`].
    shift: D::Buf,
    /// `f64[nc]`: `(2l−1)/((l+m)(l−m))` at `idx(l,m)` (for `l ≥ m + 2`, else 0).
    ta: D::Buf,
    /// `f64[nc]`: `1/((l+m)(l−m))` at `idx(l,m)` (for `l ≥ m + 2`, else 0).
    tb: D::Buf,
}

impl<D: Device> OpTables<D> {
    /// Tables for order `p` (`p ≤` [`crate::fmm::params::MAX_ORDER`]-sized orders: `nc ≤
    /// 1024`, one thread per coefficient). Errors: [`Error::InvalidArg`] (`nc > 1024`),
    /// [`Error::Alloc`].
    pub fn new(dev: &D, p: usize) -> Result<Self> {
        let nc = ncoef(p);
        if nc > 1024 {
            return Err(Error::InvalidArg(format!("FMM order {p} has {nc} coefficients; the GPU operators take at most 1024 (p ≤ 43)")));
        }
        let reg = RegTables::new(p);
        let mut shift = vec![0.0; 16 * nc];
        for o in 0..8 {
            let d = [0.5 * ((o & 1) as f64 - 0.5), 0.5 * (((o >> 1) & 1) as f64 - 0.5), 0.5 * (((o >> 2) & 1) as f64 - 0.5)];
            reg.regular(d, &mut shift[o * 2 * nc..(o + 1) * 2 * nc]);
        }
        let (mut ta, mut tb) = (vec![0.0; nc], vec![0.0; nc]);
        for m in 0..=p {
            for l in m + 2..=p {
                let d = ((l + m) * (l - m)) as f64;
                ta[idx(l, m)] = (2 * l - 1) as f64 / d;
                tb[idx(l, m)] = 1.0 / d;
            }
        }
        Ok(OpTables { p, shift: upload_new(dev, &shift)?, ta: upload_new(dev, &ta)?, tb: upload_new(dev, &tb)? })
    }
}

/// A grid size as `u32` (≤ 2³¹ − 1 blocks). Error: [`Error::InvalidArg`].
fn grid(blocks: usize, what: &str) -> Result<u32> {
    if blocks > i32::MAX as usize {
        return Err(Error::InvalidArg(format!("{what}: {blocks} blocks exceed the CUDA grid limit 2^31 − 1")));
    }
    Ok(blocks as u32)
}

/// Threads per block for one thread per coefficient: `nc` rounded up to a warp.
fn coef_block(nc: usize) -> u32 {
    (nc.div_ceil(32) * 32) as u32
}

/// Shared memory of one expansion block (M2M, L2L stage at least one). Error:
/// [`Error::InvalidArg`] when the device has less.
fn shift_smem<D: Device>(dev: &D, nc: usize) -> Result<usize> {
    let b = 2 * nc * 8;
    if b > dev.max_shared_bytes() {
        return Err(Error::InvalidArg(format!("an FMM expansion of {b} bytes exceeds the device's {} bytes of shared memory per block", dev.max_shared_bytes())));
    }
    Ok(b)
}

fn check_order<D: Device>(t: &OpTables<D>, p: usize) -> Result<()> {
    if t.p != p {
        return Err(Error::InvalidArg(format!("FMM tables of order {} used with expansions of order {p}", t.p)));
    }
    Ok(())
}

fn level_buf<'a, D: Device>(e: &'a Expansions<D>, l: usize) -> Result<&'a D::Buf> {
    e.levels.get(l).and_then(|b| b.as_ref()).ok_or_else(|| Error::InvalidArg(format!("FMM expansions have no level {l}")))
}

/// P2M at the leaves and M2M up to `top` (2 open, 1 periodic; `1 ≤ top ≤ tree.depth`): the
/// multipoles `ω̃` of the levels `top..=D` (box units, layout of the module documentation).
/// Errors: [`Error::InvalidArg`] (`top` out of range), [`Error::Alloc`] (device memory),
/// launch errors of the device.
pub fn upward<D: Device>(dev: &D, t: &OpTables<D>, tree: &DeviceTree<D>, top: usize) -> Result<Expansions<D>> {
    let depth = tree.depth;
    if top == 0 || top > depth {
        return Err(Error::InvalidArg(format!("FMM upward pass from level {top} on a tree of depth {depth} (needs 1 ≤ top ≤ depth)")));
    }
    let p = t.p;
    let nc = ncoef(p);
    let mp = Expansions::zeroed(dev, tree, p, top)?;
    // P2M: one block per leaf; the block stages as many particles as it has threads (32 bytes
    // of shared memory each)
    let nb = coef_block(nc).clamp(32, 256).min((dev.max_shared_bytes() / 32 / 32 * 32).max(32) as u32);
    dev.launch(
        "ff_fmm_p2m",
        grid(tree.nleaves(), "FMM P2M")?,
        nb,
        4 * 8 * nb,
        &[
            Arg::I32(p as i32),
            Arg::I32(depth as i32),
            Arg::Buf(&tree.levels[depth].keys),
            Arg::Buf(&tree.leaf_start),
            Arg::Buf(&tree.x),
            Arg::Buf(&tree.y),
            Arg::Buf(&tree.z),
            Arg::Buf(&tree.q),
            Arg::Buf(&t.ta),
            Arg::Buf(&t.tb),
            Arg::Buf(level_buf(&mp, depth)?),
        ],
    )?;
    // M2M: one block per parent; as many children staged at once as shared memory holds
    let blk = shift_smem(dev, nc)?;
    let cg = (dev.max_shared_bytes() / blk).clamp(1, 8);
    for l in (top..depth).rev() {
        dev.launch(
            "ff_fmm_m2m",
            grid(tree.levels[l].len, "FMM M2M")?,
            coef_block(nc),
            (cg * blk) as u32,
            &[
                Arg::I32(p as i32),
                Arg::I32(cg as i32),
                Arg::Buf(&tree.levels[l].child_start),
                Arg::Buf(&tree.levels[l + 1].keys),
                Arg::Buf(&t.shift),
                Arg::Buf(level_buf(&mp, l + 1)?),
                Arg::Buf(level_buf(&mp, l)?),
            ],
        )?;
    }
    Ok(mp)
}

/// L2L from `loc.top` down to the leaves, in place: level `l + 1` gains the translation of
/// level `l`'s locals, for `l = top … D−1` (afterwards `loc.levels[D]` holds the leaf locals,
/// [`crate::fmm::StageDump::leaf_locals`]). Errors: [`Error::InvalidArg`] (tables of another
/// order, missing levels), launch errors.
pub fn downward<D: Device>(dev: &D, t: &OpTables<D>, tree: &DeviceTree<D>, loc: &mut Expansions<D>) -> Result<()> {
    check_order(t, loc.p)?;
    let nc = ncoef(t.p);
    shift_smem(dev, nc)?;
    for l in loc.top..tree.depth {
        dev.launch(
            "ff_fmm_l2l",
            grid(tree.levels[l + 1].len, "FMM L2L")?,
            coef_block(nc),
            (2 * nc * 8) as u32,
            &[
                Arg::I32(t.p as i32),
                Arg::Buf(&tree.levels[l + 1].parent),
                Arg::Buf(&tree.levels[l + 1].keys),
                Arg::Buf(&t.shift),
                Arg::Buf(level_buf(loc, l)?),
                Arg::Buf(level_buf(loc, l + 1)?),
            ],
        )?;
    }
    Ok(())
}

/// L2P: the potential `φ_i += (1/h) Σ μ̃_lm O_lm(u_i)` and, if `out.field` is `Some`, the field
/// `E_i −= ∇φ` (derived expansions of order `p − 1`, [`crate::fmm::l2p`]) of the leaf locals
/// `loc.levels[D]` at the sorted particles, added to `out` (units of the root cube). The
/// evaluation coefficients (`8·nc` doubles per leaf) sit in shared memory when they fit
/// ([`Device::max_shared_bytes`]), else in a device scratch buffer. Errors:
/// [`Error::InvalidArg`], [`Error::Alloc`], launch errors.
pub fn l2p<D: Device>(dev: &D, t: &OpTables<D>, tree: &DeviceTree<D>, loc: &Expansions<D>, out: &mut SortedOut<D>) -> Result<()> {
    check_order(t, loc.p)?;
    let (p, depth, nl) = (t.p, tree.depth, tree.nleaves());
    let co_bytes = 8 * ncoef(p) * 8;
    let in_shared = co_bytes <= dev.max_shared_bytes();
    let scratch = if in_shared { None } else { Some(dev.alloc(nl * co_bytes)?) };
    let field = out.field.as_ref();
    let fa = |k: usize| field.map_or(Arg::Null, |f| Arg::Buf(&f[k]));
    dev.launch(
        "ff_fmm_l2p",
        grid(nl, "FMM L2P")?,
        PART_BLOCK,
        if in_shared { co_bytes as u32 } else { 0 },
        &[
            Arg::I32(p as i32),
            Arg::I32(depth as i32),
            Arg::Buf(&tree.levels[depth].keys),
            Arg::Buf(&tree.leaf_start),
            Arg::Buf(&tree.x),
            Arg::Buf(&tree.y),
            Arg::Buf(&tree.z),
            Arg::Buf(&t.ta),
            Arg::Buf(&t.tb),
            Arg::Buf(level_buf(loc, depth)?),
            scratch.as_ref().map_or(Arg::Null, Arg::Buf),
            Arg::Buf(&out.phi),
            fa(0),
            fa(1),
            fa(2),
        ],
    )
}

/// The P2P source ranges of every leaf: for leaf `b` and slot `s = (dx+1) + 3(dy+1) +
/// 9(dz+1)` (the CPU's order, [`crate::fmm::lists::p2p_lists`]) the sorted particles of the
/// occupied leaf at offset `(dx, dy, dz)` (empty where none) and its periodic image.
pub struct P2pLists<D: Device> {
    /// Number of leaves.
    pub nleaves: usize,
    /// `u32[27·nleaves][2]`: `(start, end)` of every slot.
    pub ranges: D::Buf,
    /// `i32[27·nleaves]`: image code `(ix+1) + 3(iy+1) + 9(iz+1)`; the sources are shifted by
    /// `(ix, iy, iz)` root cubes (always 13, no shift, for open boundaries).
    pub img: D::Buf,
}

/// Builds the [`P2pLists`] on the device: one thread per (leaf, slot) decodes the leaf key,
/// wraps the neighbour periodically (or drops it outside the root cube) and finds it by binary
/// search in the leaf keys. Errors: [`Error::Alloc`], launch errors.
pub fn p2p_lists<D: Device>(dev: &D, tree: &DeviceTree<D>) -> Result<P2pLists<D>> {
    let nl = tree.nleaves();
    let ranges = dev.alloc(27 * nl * 8)?;
    let img = dev.alloc(27 * nl * 4)?;
    dev.launch(
        "ff_fmm_p2p_lists",
        grid((27 * nl).div_ceil(256), "FMM P2P lists")?,
        256,
        0,
        &[
            Arg::I32(nl as i32),
            Arg::I32(tree.depth as i32),
            Arg::I32(tree.periodic as i32),
            Arg::Buf(&tree.levels[tree.depth].keys),
            Arg::Buf(&tree.leaf_start),
            Arg::Buf(&ranges),
            Arg::Buf(&img),
        ],
    )?;
    Ok(P2pLists { nleaves: nl, ranges, img })
}

/// P2P: `φ_i += Σ_j q_j/r_ij` and, if `out.field` is `Some`, `E_i += Σ_j q_j (x_i − x_j)/r_ij³`
/// over the 27 source ranges of `i`'s leaf (periodic images shifted; the particle itself and
/// coincident particles contribute nothing, as [`crate::fmm::p2p`]), added to `out`. One
/// block per target leaf; the sources staged through shared memory in tiles of up to 256
/// (fewer when [`Device::max_shared_bytes`] is small). Errors: [`Error::InvalidArg`] (lists of
/// another tree), launch errors.
pub fn p2p<D: Device>(dev: &D, tree: &DeviceTree<D>, lists: &P2pLists<D>, out: &mut SortedOut<D>) -> Result<()> {
    let nl = tree.nleaves();
    if lists.nleaves != nl {
        return Err(Error::InvalidArg(format!("P2P lists of {} leaves used on a tree of {nl}", lists.nleaves)));
    }
    const FIXED: usize = 352;
    let tile = (dev.max_shared_bytes().saturating_sub(FIXED) / 36).min(P2P_TILE);
    if tile == 0 {
        return Err(Error::InvalidArg(format!("the device's {} bytes of shared memory cannot hold one P2P source", dev.max_shared_bytes())));
    }
    let field = out.field.as_ref();
    let fa = |k: usize| field.map_or(Arg::Null, |f| Arg::Buf(&f[k]));
    dev.launch(
        "ff_fmm_p2p",
        grid(nl, "FMM P2P")?,
        PART_BLOCK,
        (36 * tile + FIXED) as u32,
        &[
            Arg::I32(tile as i32),
            Arg::Buf(&tree.leaf_start),
            Arg::Buf(&lists.ranges),
            Arg::Buf(&lists.img),
            Arg::Buf(&tree.x),
            Arg::Buf(&tree.y),
            Arg::Buf(&tree.z),
            Arg::Buf(&tree.q),
            Arg::Buf(&out.phi),
            fa(0),
            fa(1),
            fa(2),
        ],
    )
}

/// Partials buffer and grid of a grid-stride reduction over `n` items.
fn red_grid(n: usize) -> usize {
    n.div_ceil(RED as usize).clamp(1, RED_GRID)
}

/// Final reduction of `nparts` partials of `nvals` interleaved values on the device (`op` 0 =
/// sum, 1 = NaN-propagating maximum), downloaded.
fn reduce_final<D: Device>(dev: &D, part: &D::Buf, nparts: usize, nvals: usize, op: i32) -> Result<Vec<f64>> {
    let out = dev.alloc(nvals * 8)?;
    dev.launch("ff_fmm_fin_reduce", 1, RED, 0, &[Arg::I32(nparts as i32), Arg::I32(nvals as i32), Arg::I32(op), Arg::Buf(part), Arg::Buf(&out)])?;
    download_vec(dev, &out, nvals)
}

/// `(max |a|, first index whose value divided `nscale` times by `size` is not finite)` of a
/// sorted output `a[n]`, by device reductions (NaN propagates into the maximum).
fn range_stats<D: Device>(dev: &D, a: &D::Buf, n: usize, size: f64, nscale: i32) -> Result<(f64, Option<usize>)> {
    let g = red_grid(n);
    let part = dev.alloc(g * 8)?;
    let bad = upload_new(dev, &[u32::MAX])?;
    dev.launch("ff_fmm_fin_range", g as u32, RED, 0, &[Arg::I32(n as i32), Arg::Buf(a), Arg::F64(size), Arg::I32(nscale), Arg::Buf(&part), Arg::Buf(&bad)])?;
    let mx = reduce_final(dev, &part, g, 1, 1)?[0];
    let b = download_vec::<_, u32>(dev, &bad, 1)?[0];
    Ok((mx, (b != u32::MAX).then_some(b as usize)))
}

/// Stage 6 on the device, as `CpuFmm::finish` and `to_caller_units` in `src/fmm/stages.rs`:
///
/// 1. periodic trees: the background correction of [`crate::fmm::periodic::background_correction`]
///    (`Q, D', S'` by device reductions; `V = 1` in root-cube units) added to `out`;
///    then the corrections of the excluded and scaled pairs `pairs` (`crate::fmm`'s module
///    `exclusions`; nearest image in the periodic root cube), each sorted particle from its
///    own row (`ff_fmm_rank`, `ff_fmm_excl`; no atomics);
/// 2. range checks before anything is written: `max |φ|`, `max |E|` by device reductions; an
///    output whose largest magnitude underflows below the smallest normal double when scaled
///    (`φ/s`, `E/s²`, `s = tree.side`), or any scaled value that is not finite (first index in
///    sorted order), or a non-finite energy, is [`Error::Range`] with the CPU's message;
/// 3. the energy `½ Σ q_i φ_i` (caller's units, device reduction) is returned;
/// 4. scatter by `perm` to the caller's order and units: `phi` `f64[n]`
///    (`phi[perm[i]] = φ_i/s`) and `field` `f64[3n]` interleaved (`field[3 perm[i] + d] =
///    E_{d,i}/s²`); `None` = not requested (`field` needs `out.field`).
///
/// `out` is left in root-cube units (with the periodic correction added). Errors:
/// [`Error::Range`], [`Error::InvalidArg`] (buffer sizes, `field` without `out.field`, `n ≥
/// 2³¹`), [`Error::Alloc`], launch errors.
pub fn finish<D: Device>(dev: &D, tree: &DeviceTree<D>, out: &mut SortedOut<D>, pairs: &DevicePairs<D>, phi: Option<&mut D::Buf>,
                         field: Option<&mut D::Buf>) -> Result<f64> {
    let n = tree.n;
    let size = tree.side;
    if n > i32::MAX as usize {
        return Err(Error::InvalidArg(format!("{n} particles: the GPU FMM takes fewer than 2^31")));
    }
    if let Some(b) = &phi {
        if dev.len(b) < 8 * n {
            return Err(Error::InvalidArg(format!("phi holds {} bytes; {n} potentials need {}", dev.len(b), 8 * n)));
        }
    }
    if let Some(b) = &field {
        if out.field.is_none() {
            return Err(Error::InvalidArg("the field is requested but was not computed (SortedOut without field)".into()));
        }
        if dev.len(b) < 24 * n {
            return Err(Error::InvalidArg(format!("field holds {} bytes; {n} fields need {}", dev.len(b), 24 * n)));
        }
    }
    let nl = tree.nleaves();
    let sf = out.field.as_ref();
    let fa = |k: usize| sf.map_or(Arg::Null, |f| Arg::Buf(&f[k]));
    // 1. periodic background correction (root-cube units: V = 1)
    if tree.periodic {
        let g = red_grid(n);
        let part = dev.alloc(5 * g * 8)?;
        let keys = &tree.levels[tree.depth].keys;
        let common = || [Arg::I32(n as i32), Arg::I32(nl as i32), Arg::I32(tree.depth as i32), Arg::Buf(keys), Arg::Buf(&tree.leaf_start), Arg::Buf(&tree.x), Arg::Buf(&tree.y), Arg::Buf(&tree.z)];
        let mut args = Vec::from(common());
        args.extend([Arg::Buf(&tree.q), Arg::Buf(&part)]);
        dev.launch("ff_fmm_bg_partial", g as u32, RED, 0, &args)?;
        let tot = dev.alloc(5 * 8)?;
        dev.launch("ff_fmm_fin_reduce", 1, RED, 0, &[Arg::I32(g as i32), Arg::I32(5), Arg::I32(0), Arg::Buf(&part), Arg::Buf(&tot)])?;
        let f = 2.0 * std::f64::consts::PI / 3.0;
        let mut args = Vec::from(common());
        args.extend([Arg::Buf(&tot), Arg::F64(f), Arg::Buf(&out.phi), fa(0), fa(1), fa(2)]);
        dev.launch("ff_fmm_bg_apply", g as u32, RED, 0, &args)?;
    }
    // 1b. excluded and scaled pairs (crate::fmm's module exclusions), root-cube units: each
    // sorted particle from its own row (the partners' sorted slots from the inverse permutation)
    if !pairs.is_empty() {
        let rank = dev.alloc(4 * n)?;
        let g = grid(n.div_ceil(RED as usize), "FMM exclusions")?;
        dev.launch("ff_fmm_rank", g, RED, 0, &[Arg::I32(n as i32), Arg::Buf(&tree.perm), Arg::Buf(&rank)])?;
        let [xa0, xa1, xa2, xa3] = pairs.args();
        dev.launch("ff_fmm_excl", g, RED, 0, &[
            Arg::I32(n as i32), Arg::Buf(&tree.perm), Arg::Buf(&rank), Arg::Buf(&tree.x), Arg::Buf(&tree.y), Arg::Buf(&tree.z),
            Arg::Buf(&tree.q), Arg::I32(tree.periodic as i32), xa0, xa1, xa2, xa3, Arg::Buf(&out.phi), fa(0), fa(1), fa(2),
        ])?;
    }
    // 2. range checks (the CPU's order: underflow of φ, of E; then finiteness of φ, Ex, Ey, Ez)
    let (mp, bad_phi) = range_stats(dev, &out.phi, n, size, 1)?;
    let mut fstats = Vec::new();
    if let Some(f) = &out.field {
        for b in f {
            fstats.push(range_stats(dev, b, n, size, 2)?);
        }
    }
    let mf = fstats.iter().map(|s| s.0).fold(0.0, f64::max);
    crate::fmm::check_underflow(mp, mf, size)?;
    let range_err = |what: &str, i: usize, v: f64| {
        Error::Range(format!(
            "{what}[{i}] = {v:e} is not finite: the inputs' scale makes the result overflow or underflow in double precision (box side {size:e}: potentials scale like 1/side, fields like 1/side²; or charges too large)"
        ))
    };
    let value_at = |b: &D::Buf, i: usize| -> Result<f64> {
        let mut v = [0u8; 8];
        dev.download(b, 8 * i, &mut v)?;
        Ok(f64::from_ne_bytes(v))
    };
    if let Some(i) = bad_phi {
        return Err(range_err("the potential (sorted order)", i, value_at(&out.phi, i)? / size));
    }
    if let Some(f) = &out.field {
        let names = ["the field x component (sorted order)", "the field y component (sorted order)", "the field z component (sorted order)"];
        for ((b, s), what) in f.iter().zip(&fstats).zip(names) {
            if let Some(i) = s.1 {
                return Err(range_err(what, i, value_at(b, i)? / size / size));
            }
        }
    }
    // 3. energy
    let g = red_grid(n);
    let part = dev.alloc(g * 8)?;
    dev.launch("ff_fmm_fin_energy", g as u32, RED, 0, &[Arg::I32(n as i32), Arg::Buf(&tree.q), Arg::Buf(&out.phi), Arg::F64(size), Arg::Buf(&part)])?;
    let energy = 0.5 * reduce_final(dev, &part, g, 1, 0)?[0];
    if !energy.is_finite() {
        return Err(range_err("the energy", 0, energy));
    }
    // 4. scatter
    if phi.is_some() || field.is_some() {
        let want_field = field.is_some();
        let fa = |k: usize| if want_field { fa(k) } else { Arg::Null };
        dev.launch(
            "ff_fmm_fin_scatter",
            grid(n.div_ceil(RED as usize), "FMM scatter")?,
            RED,
            0,
            &[
                Arg::I32(n as i32),
                Arg::Buf(&tree.perm),
                Arg::F64(size),
                Arg::Buf(&out.phi),
                fa(0),
                fa(1),
                fa(2),
                phi.as_deref().map_or(Arg::Null, Arg::Buf),
                field.as_deref().map_or(Arg::Null, Arg::Buf),
            ],
        )?;
    }
    Ok(energy)
}
