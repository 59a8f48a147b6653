//! M2L on the device (`kernels/fmm_m2l.cu`), after the seed paper's presorted list-based
//! approach with symmetric operators (Kohnke et al., Int. J. HPC Appl. 35, 97 (2021),
//! §3.3.3–3.3.5, eqs. 22–31, Listing 8, Figs. 9–13), as the direct O(p⁴) form of
//! [`crate::fmm::m2l::m2l_tensor`]:
//! `μ_jk += (−1)^j Σ_{l≤pe} Σ_{|m|≤l} ω_lm conj(T_{l+j,m+k})`, `j ≤ pe`, with `T = M(v)` the
//! irregular harmonics (order `2p`) of the offset `v = c_t − c_s` in box units and
//! `pe = m2l_order(p, |v|²)` ([`crate::fmm::params::m2l_order`]): the same distance-dependent
//! truncation as the CPU, so both agree to rounding.
//!
//! * [`M2lTables`]: the operators on the device — `M(v)` for the 316 offsets `v ∈ [−3,3]³`
//!   with `max|v_i| ≥ 2` (plain method), the 56 reference operators `M(a)`, `a ≥ 0`
//!   (symmetric method), their orders `pe`, and (periodic) the 27 level-1 lattice tensors of
//!   [`crate::fmm::periodic::level1_lattice_tensors`];
//! * [`M2lLists`] ([`m2l_lists`]): the interaction lists, built on the device from the tree
//!   (each target's sources found through its parent's 27 neighbours and their children, as
//!   [`crate::fmm::lists::m2l_tiles`]; periodic: wrapped images, the offset stays geometric),
//!   targets presorted per level by octant group `G_s` (paper Fig. 9) and each target's
//!   sources grouped into the symmetry classes `T_α1 … T_α4` (1, 2, 4, 8 reflections of one
//!   reference offset; 7 + 21 + 21 + 7 classes per octant group, eqs. 27–28);
//! * [`m2l`]: the periodic lattice operator at level 1 (first, as the CPU), then M2L of the
//!   levels `top..=D`, by [`M2lMethod::Plain`] (the default) or [`M2lMethod::Symmetric`];
//! * [`m2l_counts`]: what the symmetry saves (paper Fig. 18 bottom).
//!
//! # Symmetry
//! The reflections `σ = (s_x, s_y, s_z)` of an offset change `M_LM` only by signs
//! (`z → −z`: `(−1)^{L+M}` from `P_L^M(−x) = (−1)^{L+M} P_L^M(x)`, eq. 24; `y → −y`: complex
//! conjugate; `x → −x`: `(−1)^M` and conjugate): `Re M_LM(σa) = s·Re M_LM(a)`,
//! `Im M_LM(σa) = s·e·Im M_LM(a)` with `s = (−1)^{s_x M + s_z(L+M)}`, `e = (−1)^{s_x+s_y}`
//! ([`reflect_operator`]; the paper's two-bit sign bitset per element, eqs. 30–31, is
//! `(s, s·e)`). The symmetric kernel is *target-oriented*: one block per target box
//! accumulates its classes (no atomics, deterministic); per class the reference operator is
//! read from global memory once (into shared memory) and applied to all β sources of the class
//! at once, the reflection signs applied to the sources' side, so each operator element costs
//! one complex multiplication (4 real products, the paper's `ac, bd, ad, bc` of eq. 29) per
//! class instead of β (derivation in the kernel source).
//!
//! # Device work layout
//! One block per target box (rows of the presorted order; launches of at most 2³⁰ blocks),
//! threads over the target coefficients `(j, k)`, the operator streamed through shared memory
//! in chunks of whole degrees (so any `p ≤ 40` runs within 48 KiB), the target's local
//! expansion accumulated in shared memory and added to the level's locals once. The source
//! multipoles are read through the read-only cache (all threads of a block read the same
//! element at the same time: one broadcast per warp). Everything runs on the device handle's
//! stream. Several streams (the paper's Listing 8 spreads the 8 × 4 launches of a level over
//! 32 streams) would be added by giving each octant group's rows (`M2lLevelLists::group_start`)
//! its own device handle on its own stream (`Device` handles carry their stream) with an event
//! per level, since the rows of different groups write disjoint target boxes.

use super::{DeviceTree, Expansions};
use crate::error::{Error, Result};
use crate::fmm::harmonics::{idx, irregular, ncoef};
use crate::fmm::params::m2l_order;
use crate::gpu::device::{download_vec, upload_new, Arg, Device};

/// Number of M2L offsets `v ∈ [−3,3]³` with `max|v_i| ≥ 2`.
pub const NOPS: usize = 316;
/// Number of reference offsets `a ∈ [0,3]³` with `max a_i ≥ 2`.
pub const NREFS: usize = 56;
/// Threads of the list-building kernels (one block).
const LIST_BLOCK: u32 = 256;
/// Most blocks per launch of the M2L kernels.
const MAX_GRID: usize = 1 << 30;

/// The M2L kernel to use. The plain kernel is the default: on an H200 it ran the M2L pass in
/// 321 ms against the symmetric kernel's 422 ms (10⁶ uniform charges, p = 16, D = 5), 866 ms
/// against 1200 ms (Plummer, D = 8) and the whole periodic JAC DHFR execute in 25.4 ms against
/// 26.9 ms (`benches/results/gpu/2026-12-04-nvidia-h200-spread-ewald-fmm/`), although the
/// symmetric one loads 3.4 times fewer operators: its per-class shared-memory staging costs
/// more than the loads it saves, so far.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum M2lMethod {
    /// One operator load per (target, source) pair (the default).
    #[default]
    Plain,
    /// One reference operator load per symmetry class, applied to the class's 1–8 pairs with
    /// sign flips (Kohnke et al. 2021, §3.3.5).
    Symmetric,
}

/// The 316 offsets in operator order (increasing `(v_x+3) + 7(v_y+3) + 49(v_z+3)`).
pub fn offsets() -> Vec<[i32; 3]> {
    (0..343)
        .map(|d| [d % 7 - 3, (d / 7) % 7 - 3, d / 49 - 3])
        .filter(|v: &[i32; 3]| v.iter().any(|c| c.abs() >= 2))
        .collect()
}

/// The 56 reference offsets `a ≥ 0` in class order: by the number of components in `{1, 2}`
/// (the class has `2^that` reflections in every octant group: `T_α1` 7, `T_α2` 21, `T_α3` 21,
/// `T_α4` 7 references), then by `a_x + 4a_y + 16a_z`.
pub fn reference_offsets() -> Vec<[i32; 3]> {
    let mut r: Vec<[i32; 3]> = (0..64).map(|d| [d % 4, (d / 4) % 4, d / 16]).filter(|a: &[i32; 3]| a.iter().any(|&c| c >= 2)).collect();
    r.sort_by_key(|a| (a.iter().filter(|&&c| c == 1 || c == 2).count(), a[0] + 4 * a[1] + 16 * a[2]));
    r
}

/// Number of reflections in the class of reference `a`.
pub fn class_size(a: [i32; 3]) -> usize {
    1 << a.iter().filter(|&&c| c == 1 || c == 2).count()
}

/// `M(σa)` from `M(a)` (blocks of order `lmax`): the reflection `bits = s_x | s_y<<1 | s_z<<2`
/// (bit set: that component negated) flips the real part by `s = (−1)^{s_x M + s_z(L+M)}` and
/// the imaginary part by `s·(−1)^{s_x+s_y}` (module docs).
pub fn reflect_operator(lmax: usize, t: &[f64], bits: u32) -> Vec<f64> {
    let nt = ncoef(lmax);
    let (sx, sy, sz) = ((bits & 1) as usize, ((bits >> 1) & 1) as usize, ((bits >> 2) & 1) as usize);
    let mut out = t[..2 * nt].to_vec();
    for l in 0..=lmax {
        for m in 0..=l {
            let s = if (sx * m + sz * (l + m)) % 2 == 1 { -1.0 } else { 1.0 };
            let e = if (sx + sy) % 2 == 1 { -1.0 } else { 1.0 };
            out[idx(l, m)] *= s;
            out[nt + idx(l, m)] *= s * e;
        }
    }
    out
}

/// The M2L operators of order `p` on the device (all in box units, blocks of `2·ncoef(2p)`
/// doubles: real parts, then imaginary parts).
pub struct M2lTables<D: Device> {
    /// Order `p` (1 ≤ p ≤ 40).
    pub p: usize,
    /// Whether the level-1 lattice tensors are present.
    pub periodic: bool,
    /// `f64[316 · 2nt]`: `M(v)` for the offsets of [`offsets`].
    pub ops: D::Buf,
    /// `u32[316]`: `pe = m2l_order(p, |v|²)` per operator.
    pub op_pe: D::Buf,
    /// `f64[56 · 2nt]`: `M(a)` for the references of [`reference_offsets`].
    pub ref_ops: D::Buf,
    /// `u32[56]`: their orders.
    pub ref_pe: D::Buf,
    /// `f64[27 · 2nt]`: the level-1 lattice tensors by `level1_index` (periodic only).
    pub lattice: Option<D::Buf>,
    /// `u32[27]`, all `p` (periodic only).
    pub lattice_pe: Option<D::Buf>,
    /// Host copy of `op_pe`.
    pub op_pe_host: Vec<u32>,
    /// Host copy of `ref_pe`.
    pub ref_pe_host: Vec<u32>,
}

impl<D: Device> M2lTables<D> {
    /// Computes and uploads the operators of order `p` (and the lattice tensors when
    /// `periodic`). Errors: [`Error::InvalidArg`] for `p` outside `1..=40`,
    /// [`Error::Alloc`] (device memory).
    pub fn new(dev: &D, p: usize, periodic: bool) -> Result<Self> {
        if p == 0 || p > crate::fmm::params::MAX_ORDER {
            return Err(Error::InvalidArg(format!("M2L tables: order p = {p}; expected 1..=40")));
        }
        let nt2 = 2 * ncoef(2 * p);
        let build = |vs: &[[i32; 3]]| -> Result<(Vec<f64>, Vec<u32>)> {
            let mut ops = crate::error::try_zeroed_vec::<f64>(vs.len() * nt2, "the M2L operators")?;
            let mut pe = Vec::with_capacity(vs.len());
            for (o, v) in vs.iter().enumerate() {
                irregular(2 * p, [v[0] as f64, v[1] as f64, v[2] as f64], &mut ops[o * nt2..(o + 1) * nt2]);
                pe.push(m2l_order(p, (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) as usize) as u32);
            }
            Ok((ops, pe))
        };
        let (ops, op_pe_host) = build(&offsets())?;
        let (refs, ref_pe_host) = build(&reference_offsets())?;
        let (lattice, lattice_pe) = if periodic {
            let lat = crate::fmm::lattice_tensors(p);
            let flat: Vec<f64> = lat.iter().flat_map(|t| t.iter().copied()).collect();
            (Some(upload_new(dev, &flat)?), Some(upload_new(dev, &[p as u32; 27])?))
        } else {
            (None, None)
        };
        Ok(M2lTables {
            p,
            periodic,
            ops: upload_new(dev, &ops)?,
            op_pe: upload_new(dev, &op_pe_host)?,
            ref_ops: upload_new(dev, &refs)?,
            ref_pe: upload_new(dev, &ref_pe_host)?,
            lattice,
            lattice_pe,
            op_pe_host,
            ref_pe_host,
        })
    }
}

/// The interaction lists of one level on the device, rows = target boxes presorted by octant
/// group (then box index).
pub struct M2lLevelLists<D: Device> {
    /// Level.
    pub level: usize,
    /// Number of rows (= occupied boxes of the level).
    pub rows: usize,
    /// `u32[rows]`: target box (index in the level) of each row.
    pub targets: D::Buf,
    /// Rows `group_start[s]..group_start[s+1]` are the boxes of octant group `G_s`
    /// (`key & 7 = s`).
    pub group_start: [u32; 9],
    /// Number of (target, source) pairs.
    pub npairs: usize,
    /// `u32[rows + 1]`: row `r`'s pairs (plain) and members (symmetric) are
    /// `pair_start[r]..pair_start[r+1]`.
    pub pair_start: D::Buf,
    /// `u32[npairs]`: source box of each pair (plain order).
    pub pair_src: D::Buf,
    /// `u32[npairs]`: operator index (into [`offsets`]) of each pair.
    pub pair_op: D::Buf,
    /// Number of nonempty symmetry classes.
    pub nclasses: usize,
    /// `u32[rows + 1]`: row `r`'s classes are `class_start[r]..class_start[r+1]`.
    pub class_start: D::Buf,
    /// `u32[2·nclasses]`: `[first member, ref | β << 8]` per class (`ref` into
    /// [`reference_offsets`], β members), in the order `T_α1 … T_α4`.
    pub class_info: D::Buf,
    /// `u32[npairs]`: source box of each member (class order).
    pub mem_src: D::Buf,
    /// `u32[npairs]`: reflection bits `s_x | s_y<<1 | s_z<<2` of each member (`v = σ(ref)`).
    pub mem_bits: D::Buf,
    /// Pairs per operator (316 counts).
    pub pairs_per_op: Vec<u32>,
    /// Classes per reference operator (56 counts).
    pub classes_per_ref: Vec<u32>,
}

/// The lattice operator's list (level 1, periodic): every pair of level-1 boxes.
pub struct LatticeList<D: Device> {
    /// Number of level-1 boxes `n ≤ 8` (rows).
    pub rows: usize,
    /// `u32[n]`: rows are the boxes in order.
    pub targets: D::Buf,
    /// `u32[n + 1]`: `n·r`.
    pub pair_start: D::Buf,
    /// `u32[n²]`: source boxes.
    pub pair_src: D::Buf,
    /// `u32[n²]`: `level1_index(c_t − c_s)`.
    pub pair_op: D::Buf,
}

/// The M2L interaction lists of a tree (levels `top..=D`) built on the device.
pub struct M2lLists<D: Device> {
    /// First level with expansions (2 open, 1 periodic).
    pub top: usize,
    /// Depth `D`.
    pub depth: usize,
    /// Periodic tree.
    pub periodic: bool,
    /// Per level `0..=D` (`None` above `top`).
    pub levels: Vec<Option<M2lLevelLists<D>>>,
    /// The lattice operator's pairs (periodic trees of depth ≥ 1).
    pub lattice: Option<LatticeList<D>>,
}

fn u32_buf<D: Device>(dev: &D, n: usize) -> Result<D::Buf> {
    dev.alloc(n.max(1) * 4)
}

fn read_u32<D: Device>(dev: &D, buf: &D::Buf, at: usize) -> Result<u32> {
    let mut b = [0u8; 4];
    dev.download(buf, at * 4, &mut b)?;
    Ok(u32::from_ne_bytes(b))
}

/// Builds the M2L lists of levels `top..=D` of `tree` on the device (and, periodic, the
/// lattice operator's pairs at level 1): rows presorted by octant group, per row the plain
/// pairs and the symmetry classes; only the list sizes, the octant group offsets and the
/// per-operator counts come back to the host. `top ≥ 1`. Errors: [`Error::InvalidArg`]
/// (`top = 0`), [`Error::Alloc`], device errors.
pub fn m2l_lists<D: Device>(dev: &D, tree: &DeviceTree<D>, top: usize) -> Result<M2lLists<D>> {
    if top == 0 {
        return Err(Error::InvalidArg("M2L lists: top must be ≥ 1 (level 0 has no well-separated boxes)".into()));
    }
    let ops = offsets();
    let mut dir_to_op = vec![-1i32; 343];
    for (o, v) in ops.iter().enumerate() {
        dir_to_op[((v[0] + 3) + 7 * (v[1] + 3) + 49 * (v[2] + 3)) as usize] = o as i32;
    }
    let refs: Vec<i32> = reference_offsets().iter().flat_map(|a| a.iter().copied()).collect();
    let dir_to_op = upload_new(dev, &dir_to_op)?;
    let refs = upload_new(dev, &refs)?;
    let mut levels = Vec::with_capacity(tree.depth + 1);
    for l in 0..=tree.depth {
        if l < top {
            levels.push(None);
            continue;
        }
        let lev = &tree.levels[l];
        let plev = &tree.levels[l - 1];
        let n = lev.len;
        let targets = u32_buf(dev, n)?;
        let gs = u32_buf(dev, 9)?;
        dev.launch("ff_fmm_m2l_group", 1, LIST_BLOCK, 0, &[Arg::I32(n as i32), Arg::Buf(&lev.keys), Arg::Buf(&targets), Arg::Buf(&gs)])?;
        let gsv: Vec<u32> = download_vec(dev, &gs, 9)?;
        let group_start: [u32; 9] = gsv.try_into().map_err(|_| Error::Internal("M2L lists: octant groups".into()))?;
        let ps = u32_buf(dev, n + 1)?;
        let cs = u32_buf(dev, n + 1)?;
        let mut hist = u32_buf(dev, NOPS + NREFS)?;
        let grid = n.div_ceil(128) as u32;
        let rows_args = |mode: i32, ps: &D::Buf, cs: &D::Buf, pair: [&D::Buf; 5], hist: &D::Buf| -> Result<()> {
            dev.launch(
                "ff_fmm_m2l_rows",
                grid,
                128,
                0,
                &[
                    Arg::I32(mode),
                    Arg::I32(n as i32),
                    Arg::I32(l as i32),
                    Arg::I32(tree.periodic as i32),
                    Arg::Buf(&lev.keys),
                    Arg::Buf(&lev.parent),
                    Arg::Buf(&plev.keys),
                    Arg::I32(plev.len as i32),
                    Arg::Buf(&plev.child_start),
                    Arg::Buf(&targets),
                    Arg::Buf(&refs),
                    Arg::Buf(&dir_to_op),
                    Arg::Buf(ps),
                    Arg::Buf(cs),
                    Arg::Buf(pair[0]),
                    Arg::Buf(pair[1]),
                    Arg::Buf(pair[2]),
                    Arg::Buf(pair[3]),
                    Arg::Buf(pair[4]),
                    Arg::Buf(hist),
                ],
            )
        };
        let dummy = u32_buf(dev, 1)?;
        rows_args(0, &ps, &cs, [&dummy; 5], &hist)?;
        // the counts (ps[n] = cs[n] = 0) scanned in place become the row starts, [n] the totals
        super::tree::scan(dev, &ps, n as u64 + 1)?;
        super::tree::scan(dev, &cs, n as u64 + 1)?;
        let (pair_start, class_start) = (ps, cs);
        let npairs = read_u32(dev, &pair_start, n)? as usize;
        let nclasses = read_u32(dev, &class_start, n)? as usize;
        let pair_src = u32_buf(dev, npairs)?;
        let pair_op = u32_buf(dev, npairs)?;
        let class_info = u32_buf(dev, 2 * nclasses)?;
        let mem_src = u32_buf(dev, npairs)?;
        let mem_bits = u32_buf(dev, npairs)?;
        dev.zero(&mut hist)?;
        rows_args(1, &pair_start, &class_start, [&pair_src, &pair_op, &class_info, &mem_src, &mem_bits], &hist)?;
        let h: Vec<u32> = download_vec(dev, &hist, NOPS + NREFS)?;
        levels.push(Some(M2lLevelLists {
            level: l,
            rows: n,
            targets,
            group_start,
            npairs,
            pair_start,
            pair_src,
            pair_op,
            nclasses,
            class_start,
            class_info,
            mem_src,
            mem_bits,
            pairs_per_op: h[..NOPS].to_vec(),
            classes_per_ref: h[NOPS..].to_vec(),
        }));
    }
    let lattice = if tree.periodic && tree.depth >= 1 {
        let n = tree.levels[1].len;
        let (targets, pair_start, pair_src, pair_op) = (u32_buf(dev, n)?, u32_buf(dev, n + 1)?, u32_buf(dev, n * n)?, u32_buf(dev, n * n)?);
        dev.launch(
            "ff_fmm_m2l_lattice_rows",
            1,
            32,
            0,
            &[Arg::I32(n as i32), Arg::Buf(&tree.levels[1].keys), Arg::Buf(&targets), Arg::Buf(&pair_start), Arg::Buf(&pair_src), Arg::Buf(&pair_op)],
        )?;
        Some(LatticeList { rows: n, targets, pair_start, pair_src, pair_op })
    } else {
        None
    };
    Ok(M2lLists { top, depth: tree.depth, periodic: tree.periodic, levels, lattice })
}

impl<D: Device> M2lLevelLists<D> {
    /// The plain pairs as `(target box, source box, offset v)` triples, row order (for tests).
    /// Errors: device errors.
    pub fn triples(&self, dev: &D) -> Result<Vec<(u32, u32, [i32; 3])>> {
        let ops = offsets();
        let targets: Vec<u32> = download_vec(dev, &self.targets, self.rows)?;
        let start: Vec<u32> = download_vec(dev, &self.pair_start, self.rows + 1)?;
        let src: Vec<u32> = download_vec(dev, &self.pair_src, self.npairs)?;
        let op: Vec<u32> = download_vec(dev, &self.pair_op, self.npairs)?;
        let mut out = Vec::with_capacity(self.npairs);
        for r in 0..self.rows {
            for q in start[r] as usize..start[r + 1] as usize {
                out.push((targets[r], src[q], ops[op[q] as usize]));
            }
        }
        Ok(out)
    }

    /// The symmetric lists as `(target box, source box, offset v, class size β)`, row order,
    /// with `v = σ(ref)` reconstructed from the member's reflection bits (for tests).
    /// Errors: device errors.
    #[allow(clippy::type_complexity)]
    pub fn class_triples(&self, dev: &D) -> Result<Vec<(u32, u32, [i32; 3], usize)>> {
        let refs = reference_offsets();
        let targets: Vec<u32> = download_vec(dev, &self.targets, self.rows)?;
        let start: Vec<u32> = download_vec(dev, &self.class_start, self.rows + 1)?;
        let info: Vec<u32> = download_vec(dev, &self.class_info, 2 * self.nclasses)?;
        let src: Vec<u32> = download_vec(dev, &self.mem_src, self.npairs)?;
        let bits: Vec<u32> = download_vec(dev, &self.mem_bits, self.npairs)?;
        let mut out = Vec::with_capacity(self.npairs);
        for r in 0..self.rows {
            for c in start[r] as usize..start[r + 1] as usize {
                let (first, a, beta) = (info[2 * c] as usize, refs[(info[2 * c + 1] & 255) as usize], (info[2 * c + 1] >> 8) as usize);
                for q in first..first + beta {
                    let b = bits[q];
                    let v = [0, 1, 2].map(|k| if (b >> k) & 1 == 1 { -a[k] } else { a[k] });
                    out.push((targets[r], src[q], v, class_size(a)));
                }
            }
        }
        Ok(out)
    }
}

/// Block size and shared-memory chunk (complex operator values) of the M2L kernels for order
/// `p` on `dev`: threads = the target coefficients rounded up to a warp, at most 128; the
/// chunk holds the whole operator when it fits in `min(max_shared_bytes, 48 KiB)` next to
/// the accumulator, else as many whole degrees as fit. Error: [`Error::InvalidArg`] when not
/// even one degree fits.
fn launch_shape<D: Device>(dev: &D, p: usize) -> Result<(u32, usize, usize)> {
    let nc = ncoef(p);
    let block = (nc.div_ceil(32) * 32).min(128) as u32;
    let budget = dev.max_shared_bytes().min(48 * 1024);
    let acc = 2 * nc * 8;
    let cap = (budget.saturating_sub(acc) / 16).min(ncoef(2 * p));
    if cap < 2 * p + 1 {
        return Err(Error::InvalidArg(format!("M2L at order {p} needs {} bytes of shared memory; the device has {budget}", acc + 16 * (2 * p + 1))));
    }
    Ok((block, cap, acc + 16 * cap))
}

fn level_buf<D: Device>(e: &Expansions<D>, l: usize) -> Result<&D::Buf> {
    e.levels.get(l).and_then(|b| b.as_ref()).ok_or_else(|| Error::InvalidArg(format!("M2L: no expansions at level {l}")))
}

/// Blocks below which an M2L launch splits each row's pairs (classes) over several blocks:
/// about 16 per multiprocessor of an H100/H200 (132 multiprocessors). A level with fewer
/// rows (every level of a small system: JAC DHFR's 64 and 512 boxes, the periodic lattice's 8)
/// would otherwise leave most multiprocessors idle or run them at a few warps each.
pub const M2L_MIN_BLOCKS: usize = 2048;
/// Pairs (classes) a split part keeps on average at least.
const M2L_MIN_ITEMS: usize = 2;

/// Parts per row of a launch over `rows` rows holding `items` pairs or classes in all, for at
/// least `min_blocks` blocks: `⌈min_blocks / rows⌉`, at most `items / (rows · M2L_MIN_ITEMS)`,
/// at least 1 (no split for `rows ≥ min_blocks`).
pub fn m2l_split(rows: usize, items: usize, min_blocks: usize) -> usize {
    if rows == 0 || rows >= min_blocks {
        return 1;
    }
    min_blocks.div_ceil(rows).min(items / (rows * M2L_MIN_ITEMS)).max(1)
}

/// One launch series of a plain or symmetric kernel over `rows` rows holding `items` pairs or
/// classes, each row split into [`m2l_split`] parts whose partial sums `ff_fmm_m2l_reduce`
/// adds into `loc` in a fixed order. Error: [`Error::Alloc`] (the partial sums), launch errors.
#[allow(clippy::too_many_arguments)]
fn launch_rows<D: Device>(dev: &D, name: &str, p: usize, rows: usize, items: usize, min_blocks: usize, list: &[&D::Buf], ops: &D::Buf,
                          pe: &D::Buf, mp: &D::Buf, loc: &D::Buf) -> Result<()> {
    let (block, cap, smem) = launch_shape(dev, p)?;
    let nt = ncoef(2 * p);
    let nc2 = 2 * ncoef(p);
    let split = m2l_split(rows, items, min_blocks);
    let part = if split > 1 { Some(dev.alloc(split * rows * nc2 * 8)?) } else { None };
    // unsplit launches do not use the argument: `loc` stands in
    let part_buf = part.as_ref().unwrap_or(loc);
    let mut row0 = 0;
    while row0 < rows {
        let g = (rows - row0).min(MAX_GRID / split);
        let mut args = vec![Arg::I32(p as i32), Arg::I32(nt as i32), Arg::I32(cap as i32), Arg::I32(row0 as i32), Arg::I32(split as i32),
                            Arg::I32(rows as i32), Arg::Buf(part_buf)];
        args.extend(list.iter().map(|b| Arg::Buf(*b)));
        args.extend([Arg::Buf(ops), Arg::Buf(pe), Arg::Buf(mp), Arg::Buf(loc)]);
        dev.launch(name, (g * split) as u32, block, smem as u32, &args)?;
        row0 += g;
    }
    if let Some(part) = &part {
        let threads = rows * nc2;
        dev.launch("ff_fmm_m2l_reduce", threads.div_ceil(128) as u32, 128, 0,
                   &[Arg::I32(nc2 as i32), Arg::I32(rows as i32), Arg::I32(split as i32), Arg::Buf(list[0]), Arg::Buf(part), Arg::Buf(loc)])?;
    }
    Ok(())
}

/// M2L of levels `top..=D` (periodic: the lattice operator between the level-1 boxes first,
/// full order `p`, as the CPU): returns the local expansions (layout of [`Expansions`], same
/// `top` as `mp`, box units) before L2L — the CPU's `StageDump::locals`. Errors:
/// [`Error::InvalidArg`] (orders, tops or boundaries of the arguments disagree),
/// [`Error::Alloc`], device errors.
pub fn m2l<D: Device>(dev: &D, t: &M2lTables<D>, lists: &M2lLists<D>, tree: &DeviceTree<D>, mp: &Expansions<D>, method: M2lMethod) -> Result<Expansions<D>> {
    m2l_with(dev, t, lists, tree, mp, method, M2L_MIN_BLOCKS)
}

/// [`m2l`] splitting the rows of launches with fewer than `min_blocks` rows ([`m2l_split`];
/// 0: no row is split). The sums differ from the unsplit ones by rounding only.
pub fn m2l_with<D: Device>(dev: &D, t: &M2lTables<D>, lists: &M2lLists<D>, tree: &DeviceTree<D>, mp: &Expansions<D>, method: M2lMethod,
                           min_blocks: usize) -> Result<Expansions<D>> {
    if mp.p != t.p || mp.top != lists.top || lists.depth != tree.depth || lists.periodic != tree.periodic {
        return Err(Error::InvalidArg(format!(
            "M2L: tables of order {} / multipoles of order {} from level {} / lists from level {} (depth {}, periodic {}) / tree of depth {} (periodic {})",
            t.p, mp.p, mp.top, lists.top, lists.depth, lists.periodic, tree.depth, tree.periodic
        )));
    }
    let p = t.p;
    let loc = Expansions::zeroed(dev, tree, p, mp.top)?;
    if let Some(lat) = &lists.lattice {
        let (Some(ops), Some(pe)) = (&t.lattice, &t.lattice_pe) else {
            return Err(Error::InvalidArg("M2L: a periodic tree needs tables made with periodic = true".into()));
        };
        let (src, dst) = (level_buf(mp, 1)?, level_buf(&loc, 1)?);
        launch_rows(dev, "ff_fmm_m2l_plain", p, lat.rows, lat.rows * lat.rows, min_blocks, &[&lat.targets, &lat.pair_start, &lat.pair_src, &lat.pair_op], ops, pe,
                    src, dst)?;
    }
    for ll in lists.levels.iter().flatten() {
        if ll.rows == 0 || ll.npairs == 0 {
            continue;
        }
        let (src, dst) = (level_buf(mp, ll.level)?, level_buf(&loc, ll.level)?);
        match method {
            M2lMethod::Plain => launch_rows(dev, "ff_fmm_m2l_plain", p, ll.rows, ll.npairs, min_blocks, &[&ll.targets, &ll.pair_start, &ll.pair_src, &ll.pair_op],
                                            &t.ops, &t.op_pe, src, dst)?,
            M2lMethod::Symmetric => launch_rows(dev, "ff_fmm_m2l_sym", p, ll.rows, ll.nclasses, min_blocks,
                                                &[&ll.targets, &ll.class_start, &ll.class_info, &ll.mem_src, &ll.mem_bits], &t.ref_ops, &t.ref_pe, src, dst)?,
        }
    }
    Ok(loc)
}

/// Operator traffic and arithmetic of one M2L pass (the lattice operator not included).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct M2lCounts {
    /// Complex operator coefficients read from global memory: `ncoef(2pe)` per operator load
    /// (one per pair for [`M2lMethod::Plain`], one per class for [`M2lMethod::Symmetric`]).
    pub operator_loads: u64,
    /// Complex multiplications of operator and source coefficients: `ncoef(pe)·(pe+1)²` per
    /// pair (plain) or per class (symmetric: 4 real products per element shared by the class's
    /// β pairs, the sign flips being additions).
    pub complex_mults: u64,
}

/// What one M2L pass over `lists` costs with `method` (counted on the host from the
/// per-operator list counts and the orders `pe` of `t`; paper Fig. 18 bottom). For a full
/// level the symmetric method saves about `189/56 ≈ 3.4×` of both.
pub fn m2l_counts<D: Device>(lists: &M2lLists<D>, t: &M2lTables<D>, method: M2lMethod) -> M2lCounts {
    let cost = |count: u32, pe: u32| -> (u64, u64) {
        let pe = pe as usize;
        (count as u64 * ncoef(2 * pe) as u64, count as u64 * (ncoef(pe) * (pe + 1) * (pe + 1)) as u64)
    };
    let mut c = M2lCounts::default();
    for ll in lists.levels.iter().flatten() {
        let (counts, pes) = match method {
            M2lMethod::Plain => (&ll.pairs_per_op, &t.op_pe_host),
            M2lMethod::Symmetric => (&ll.classes_per_ref, &t.ref_pe_host),
        };
        for (&n, &pe) in counts.iter().zip(pes) {
            let (a, b) = cost(n, pe);
            c.operator_loads += a;
            c.complex_mults += b;
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_split_only_below_the_block_target() {
        assert_eq!(m2l_split(32768, 32768 * 189, M2L_MIN_BLOCKS), 1);
        assert_eq!(m2l_split(2048, 2048 * 189, M2L_MIN_BLOCKS), 1);
        assert_eq!(m2l_split(512, 512 * 189, M2L_MIN_BLOCKS), 4);
        assert_eq!(m2l_split(64, 64 * 189, M2L_MIN_BLOCKS), 32);
        // at least M2L_MIN_ITEMS per part on average: 8 rows of 8 lattice pairs
        assert_eq!(m2l_split(8, 64, M2L_MIN_BLOCKS), 4);
        assert_eq!(m2l_split(3, 2, M2L_MIN_BLOCKS), 1);
        assert_eq!(m2l_split(0, 0, M2L_MIN_BLOCKS), 1);
        assert_eq!(m2l_split(64, 64 * 189, 0), 1);
    }

    #[test]
    fn reflections_of_the_reference_operators_give_every_offset() {
        let lmax = 12;
        let nt = ncoef(lmax);
        let refs = reference_offsets();
        assert_eq!(refs.len(), NREFS);
        assert_eq!(offsets().len(), NOPS);
        let sizes: Vec<usize> = refs.iter().map(|&a| class_size(a)).collect();
        assert_eq!([1, 2, 4, 8].map(|s| sizes.iter().filter(|&&x| x == s).count()), [7, 21, 21, 7]);
        assert!(sizes.windows(2).all(|w| w[0] <= w[1]), "classes in the order T_α1..T_α4");
        let mut seen = 0;
        for a in &refs {
            let mut ta = vec![0.0; 2 * nt];
            irregular(lmax, [a[0] as f64, a[1] as f64, a[2] as f64], &mut ta);
            for bits in 0..8u32 {
                if (0..3).any(|k| (bits >> k) & 1 == 1 && a[k] == 0) {
                    continue;
                }
                let v = [0, 1, 2].map(|k| if (bits >> k) & 1 == 1 { -a[k] } else { a[k] });
                let mut tv = vec![0.0; 2 * nt];
                irregular(lmax, [v[0] as f64, v[1] as f64, v[2] as f64], &mut tv);
                let got = reflect_operator(lmax, &ta, bits);
                let scale = tv.iter().fold(0.0f64, |m, x| m.max(x.abs()));
                for i in 0..2 * nt {
                    assert!((got[i] - tv[i]).abs() <= 1e-15 * scale.max(tv[i].abs() * 1e3), "v = {v:?}, i = {i}: {} vs {}", got[i], tv[i]);
                }
                seen += 1;
            }
        }
        // every offset with max|v_i| ≥ 2 in [−3,3]³ arises exactly once
        assert_eq!(seen, NOPS);
    }

    #[test]
    fn classes_of_every_octant_group_cover_its_189_offsets() {
        for oct in 0..8 {
            let o = [(oct & 1) as i32, ((oct >> 1) & 1) as i32, ((oct >> 2) & 1) as i32];
            let mut n = [0usize; 4];
            let mut total = 0;
            for a in reference_offsets() {
                let members = (0..8u32)
                    .filter(|&bits| (0..3).all(|k| !((bits >> k) & 1 == 1 && a[k] == 0)))
                    .map(|bits| [0, 1, 2].map(|k| if (bits >> k) & 1 == 1 { -a[k] } else { a[k] }))
                    .filter(|v| (0..3).all(|k| v[k] >= o[k] - 3 && v[k] <= o[k] + 2))
                    .count();
                assert_eq!(members, class_size(a), "octant {oct}, reference {a:?}");
                n[members.trailing_zeros() as usize] += 1;
                total += members;
            }
            assert_eq!(n, [7, 21, 21, 7]);
            assert_eq!(total, 189);
            let mut cpu = crate::fmm::lists::m2l_offsets(oct);
            cpu.sort();
            assert_eq!(cpu.len(), 189);
        }
    }
}
