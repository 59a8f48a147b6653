//! Distributed smooth particle-mesh Ewald over MPI (cargo feature `mpi`): the SPME of
//! [`super`] (Essmann et al., J. Chem. Phys. 103 (1995) 8577) with the mesh split in slabs of
//! z-planes and the particles handed to the ranks that hold their planes, so that no rank holds
//! the whole mesh or all particles.
//!
//! # What the caller passes
//! Each rank passes the charges it owns, anywhere in the cell (the domain decomposition is the
//! caller's, as in GROMACS and LAMMPS: random assignment, all on one rank or a rank with none
//! are all fine), and receives `φ` and `E` for exactly those charges, in its own order; energy
//! and virial are the totals over the communicator, on every rank. Every rank passes the same
//! cell, tolerance and options (checked collectively at planning). The real-space neighbours
//! across ranks (ghosts) are the library's business: the caller passes no ghosts.
//!
//! With exclusions or scaled pairs the caller also passes each charge's **global id**
//! ([`DistEwaldPlan::execute_ids`]): its 0-based index in the whole system, in
//! `0 … n_total − 1` (`n_total` = Σ `n_max` over the ranks), unique over the ranks and kept
//! when the charge moves to another rank (an MD code's global atom tag). The pairs are pairs
//! of ids ([`DistEwaldPlan::set_exclusions`], given once, not per step; see "Exclusions and
//! scaled pairs").
//!
//! # Steps (per execute)
//! 1. **Routing.** Each charge goes to its *home* rank, the rank whose slab of the mesh holds
//!    the plane `⌊K_3 s_3⌋` of its wrapped fractional coordinate `s_3` (one `MPI_Alltoallv`
//!    of 4 doubles per charge). The slabs are FFTW-MPI's real-space slabs of the `K_3` planes
//!    (`fftw_mpi_local_size_many_transposed`); a rank with no planes is home to no charge.
//! 2. **Ghosts.** Each home rank sends every charge within `r_c` of another rank's slab (in
//!    the periodic z-direction: fractional distance `< r_c / h_3`, `h_3` the cell's height
//!    along z) to that rank, once (one `MPI_Alltoallv`). A rank then holds every charge with an
//!    image within `r_c` of its own charges, each once, so the cell-list pair sum
//!    ([`super::real_space`]) over its own charges and ghosts gives exactly the single-process
//!    real-space `φ` and `E` of its own charges. The pair virial counts each pair between an
//!    own charge and a ghost on both ranks, so each rank takes `W_AA + ½W_AG` (`A` own, `G`
//!    ghosts): the pair kernel weighs the virial of a pair by its virial charges (0 for a
//!    ghost, [`super::pair_kernel`]), and pairs of two cells holding ghosts only are not
//!    visited.
//! 3. **Spreading.** Each rank spreads its home charges with the B-splines of order `n` onto
//!    its slab extended by `n + 1` planes below and one above (the B-spline stencil of a charge
//!    in plane `p` reaches planes `p − n … p`), then each extended plane is added into the
//!    rank that owns it (one `MPI_Alltoallv` of whole planes; the halo planes wrap around
//!    periodically).
//! 4. **Convolution.** FFTW-MPI r2c with transposed output, multiplication by Essmann's
//!    influence function (held in the same transposed layout; the k-space virial summed over
//!    the local modes), c2r with transposed input.
//! 5. **Interpolation.** The extended slab is filled back from the owners (the reverse
//!    exchange of step 3), and `φ^F` and its gradient are interpolated at the home charges.
//! 6. **Exclusion corrections** (with exclusions; between steps 1 and 2): see "Exclusions and
//!    scaled pairs".
//! 7. **Reduction and return.** Energy and virial are summed over the communicator
//!    (`MPI_Allreduce`, with the total charge and the largest |q| reduced before); `φ` and `E`
//!    of each charge go back to the rank that passed it (the reverse of step 1).
//!
//! Results equal the single-process plan's to rounding (≤ 1e-12 relative, tested under
//! `mpirun -np 1…4` on JAC DHFR and a water box with several assignments of the charges, and
//! with exclusions and scaled pairs for every `terms` setting).
//!
//! # Exclusions and scaled pairs
//! The corrections are the single-process plan's ([`crate::pairs`]: `−(1 − s) q_i q_j /
//! r` of the nearest image, split into its real-space `erfc` and k-space `erf` shares as
//! `opts.terms` selects), computed by the same code ([`RealSpace::exclusions`]) once per pair.
//! * **Storage: distributed by id.** The ids are split in `K` blocks of `⌈n_total/K⌉`; rank
//!   `r` keeps the pairs whose lower id lies in its block (sorted keys `lo << 32 | hi` and the
//!   scales, 16 bytes per pair, plus 4 bytes per pair for its partner's place) and the fixed
//!   list of partner ids it fetches from other blocks each execute. `set_exclusions` takes any
//!   part of the list on each rank (the union counts: all on one rank, the same list on every
//!   rank, or each rank the pairs of its molecules) and routes each pair to its block (one
//!   `MPI_Alltoallv`), then the partner requests (one more). The block of an id does not change
//!   when its charge moves, so the list is given once, not per step.
//! * **Why not replicated.** At 10⁷ atoms a solvated biomolecular system has 1–5 × 10⁷ pairs
//!   (water 1 per atom; proteins ≈ 5.5: bonds, angles and 1-4 dihedrals). Replicated, that is
//!   16 bytes × 1–5 × 10⁷ = 0.16–0.8 GB on **every** rank (more with an index from a charge to
//!   its pairs), which does not shrink with `K` — while the mesh of such a system does (≈ 464³
//!   points at 1 Å spacing for 10⁸ Å³: 2 GB of grid, spectrum and influence function in all,
//!   2–20 MB per rank on the 100–1,000 ranks such a system runs on): replicated pairs would
//!   outweigh a rank's mesh 8–400 times, 10–50 GB per 64-rank node. Distributed, a rank holds
//!   `20 bytes × pairs / K` (2–10 MB at 100 ranks, 0.2–1 MB at 1,000) plus, per execute,
//!   4 bytes per id of its block.
//! * **Per execute** (a few `MPI_Alltoallv` of records of 4–5 doubles): each home charge goes
//!   to the rank of its id's block (`id, s, q`); that rank checks the ids (each given once,
//!   every id of its pairs present), sends each fetched partner (`s, q` and its home rank) to
//!   the rank that asked for it — the **ghost** of the pair's partner —, computes the
//!   corrections of its pairs (the pair's first charge is the one with the lower id), returns
//!   the partners' shares to their blocks and every charge's corrections to its home rank.
//!   Each pair's virial counts once, on the rank that computed it. MD codes number atoms by
//!   molecule, so nearly every pair lies within one block and the partner traffic is small.
//! * **Coincident pairs.** The real-space pass on a home rank names charges by global id in
//!   its coincidence check; the rank of a fully excluded pair that nearly coincides (within
//!   twice the coincidence distance) tells both charges' home ranks, which let it through
//!   (pairs of two ghosts are left to their home ranks).
//!
//! # Failures
//! Every local step that can fail (argument checks, allocations, the real-space pass, the
//! spreading, the results' range) ends in [`Comm::agree`] before the next collective, so a
//! failure on one rank is the same status on every rank (the others' messages name the rank
//! and repeat its message) and no rank is left waiting in a collective. A hidden test hook
//! ([`crate::mpi::inject_failure`], Rust only) makes the named step fail on one rank:
//! `ewald.makeplan`, `ewald.set_exclusions`, `ewald.execute`, `ewald.execute.route`,
//! `ewald.exchange` (every exchange buffer), `ewald.execute.exclusions`,
//! `ewald.execute.real`, `ewald.execute.mesh` (`tests/mpi_ewald.rs`).
//!
//! # Memory per rank
//! The slab of the mesh and its spectrum (FFTW-MPI's `alloc_local`, `≈ 1/K` of the grid), the
//! influence function on the local part of the spectrum, and the extended slab (`n` planes
//! plus `order + 2` halo planes), which shares the spectrum's buffer (it is dead from the fold
//! into the slab until the c2r, exactly while the spectrum is alive), so it adds only the halo
//! planes by which it outgrows that buffer; while the halo planes are exchanged, two buffers
//! of the halo planes owned by other ranks; the home charges and ghosts with their cell
//! lists. [`DistEwaldPlan::mesh_bytes`] reports the mesh part.
//!
//! # Limits and scaling
//! Slabs limit the useful rank count to `K_3` (ranks past that hold no planes and no charges,
//! and still join every collective). Per execute a rank sends its charges twice (routing,
//! return), its ghosts once (`≈ 2 r_c/h_3` of the charges of a slab, so at most
//! `K ≈ h_3 / (2 r_c)` ranks before the ghosts outnumber the home charges), its halo planes
//! twice and its slab in FFTW-MPI's two transposes. At 1,000 ranks the slab limit (a typical
//! `K_3` is 64–256) stops scaling first, then the all-to-all message count; a pencil
//! decomposition of the mesh (2D process grid) with a 3D domain decomposition of the charges
//! would lift both. Not implemented: distributed spectral Ewald (Gaussian windows) and the
//! distributed direct (classic Ewald) sum — planning either fails with
//! [`Error::NotSupported`] on every rank; use SPME, or the single-process plan.

use super::box_::{wrap01, PeriodicBox};
use crate::pairs::Exclusions;
use super::influence::{add_virial, mode_of, spme_corr, theta_at};
use super::real_space::{RealSpace, COINC_REL};
use super::{erfc_accuracy, new_box, setup, to_caller_units, virial_tensor, EwaldOpts, EwaldParams, EwaldParts, EwaldResult, Method,
            NewBox, Setup};
use crate::error::{try_filled_vec, try_resize, try_vec, try_zeroed_vec, Error, Result};
use crate::fft::AlignedVec;
use crate::kernel::bspline::BSplineParams;
use crate::mpi::fft::{as_real, R2cPair, Slab};
use crate::mpi::{Comm, Op};
use crate::scale::{exponent_of, pow2};
use crate::spread::{SpreadOpts, Spreader};
use crate::threads::Threads;
use num_complex::Complex64;
use std::time::Instant;

/// Doubles per routed charge (`s_1, s_2, s_3, q`) and per returned result (`φ, E_x, E_y, E_z`).
const REC: usize = 4;

/// The slabs of the `k3` mesh planes over the ranks: every rank's slab and the owner of each
/// plane.
struct Decomp {
    k3: usize,
    slabs: Vec<Slab>,
    owner: Vec<u32>,
}

impl Decomp {
    /// FFTW-MPI's real-space slabs of the grid `nf` (x fastest). Collective.
    fn new(comm: &Comm, nf: [usize; 3]) -> Result<Decomp> {
        let (mine, _, _) = R2cPair::sizes(&[nf[2], nf[1], nf[0]], comm)?;
        let all = comm.allgather_i64(&[mine.start as i64, mine.n as i64])?;
        let slabs: Vec<Slab> = all.chunks_exact(2).map(|v| Slab { start: v[0] as usize, n: v[1] as usize }).collect();
        let mut owner = vec![u32::MAX; nf[2]];
        for (r, s) in slabs.iter().enumerate() {
            for p in s.range() {
                owner[p] = r as u32;
            }
        }
        if owner.contains(&u32::MAX) {
            return Err(Error::Internal("FFTW-MPI's slabs do not cover the mesh".into()));
        }
        Ok(Decomp { k3: nf[2], slabs, owner })
    }

    /// Home rank of a charge at wrapped fractional z-coordinate `s3`.
    fn home(&self, s3: f64) -> usize {
        self.owner[((s3 * self.k3 as f64) as usize).min(self.k3 - 1)] as usize
    }

    /// Calls `f(r)` once for every rank `r ≠ me` whose slab holds a plane within the
    /// fractional z-distance `delta` (periodic) of `s3` (a superset of the ranks whose slab
    /// lies within `delta`: whole planes are tested). `seen` (one entry per rank) must differ
    /// from `stamp` on entry; it is set to `stamp` for the ranks visited.
    fn near(&self, s3: f64, delta: f64, me: usize, seen: &mut [usize], stamp: usize, mut f: impl FnMut(usize)) {
        let k = self.k3 as i64;
        let lo = ((s3 - delta) * self.k3 as f64).floor() as i64;
        let hi = ((s3 + delta) * self.k3 as f64).floor() as i64;
        let end = lo + (hi - lo + 1).min(k);
        let mut p = lo;
        while p < end {
            let r = self.owner[p.rem_euclid(k) as usize] as usize;
            if r != me && seen[r] != stamp {
                seen[r] = stamp;
                f(r);
            }
            // on to the end of r's slab (a rank's planes are one contiguous run)
            let s = self.slabs[r];
            p += (s.start + s.n) as i64 - p.rem_euclid(k);
        }
    }
}

/// Prefix sums of counts (displacements).
fn displs(counts: &[usize]) -> Vec<usize> {
    let mut d = Vec::with_capacity(counts.len());
    let mut a = 0;
    for &c in counts {
        d.push(a);
        a += c;
    }
    d
}

/// Sends records of `w` doubles, grouped by destination (`counts[r]` to rank `r`, in rank
/// order), and returns the received records (grouped by source, in rank order) with their
/// counts. Collective.
fn exchange(comm: &Comm, w: usize, send: &[f64], counts: &[usize]) -> Result<(Vec<f64>, Vec<usize>)> {
    let rc = comm.alltoall_u64(&counts.iter().map(|&c| c as u64).collect::<Vec<_>>())?;
    let rc: Vec<usize> = rc.into_iter().map(|c| c as usize).collect();
    let total: usize = rc.iter().sum();
    // agreed: a rank that cannot allocate must not leave the others in the Alltoallv
    let recv = crate::mpi::fail_point("ewald.exchange").and_then(|_| try_zeroed_vec::<f64>(total * w, "distributed Ewald exchange buffer"));
    let mut recv = comm.agree(recv)?;
    comm.alltoallv_planes(w, send, counts, &displs(counts), &mut recv, &rc, &displs(&rc))?;
    Ok((recv, rc))
}

/// The distributed SPME mesh of one rank: its slab, the extended slab it spreads on and the
/// exchanges of the halo planes between them.
///
/// The extended slab lives in the spectrum buffer (sized for both): it is dead from the fold
/// into the slab until the c2r has consumed the spectrum, which is exactly when the spectrum
/// is alive. Extended planes that this rank owns are added into (and filled back from) its
/// slab directly; only the halo planes owned by other ranks are exchanged.
struct Mesh {
    nf: [usize; 3],
    order: usize,
    xi: f64,
    fft: R2cPair,
    /// Real slab (FFTW-MPI layout, rows padded to `2(K_1/2 + 1)`).
    real: AlignedVec<f64>,
    /// Transposed local spectrum `[y_local][K_3][K_1/2 + 1]`; between the c2r and the next
    /// r2c, the extended slab (`kext` planes of `K_1·K_2` doubles, x fastest).
    spec: AlignedVec<Complex64>,
    theta: Vec<f64>,
    /// First extended plane is `slab.start − halo_lo(order)`.
    kext: usize,
    spreader: Option<Spreader<f64>>,
    /// (extended plane, local slab plane) of the extended planes this rank owns.
    own_planes: Vec<(usize, usize)>,
    /// Extended planes owned by other ranks in send order (grouped by owner), counts per owner.
    send_planes: Vec<usize>,
    send_counts: Vec<usize>,
    /// Local slab plane of each received halo plane (grouped by source), counts per source.
    recv_planes: Vec<usize>,
    recv_counts: Vec<usize>,
    xs: [Vec<f64>; 3],
    out: Vec<[f64; 4]>,
}

/// Halo planes below a slab for B-splines of order `n` (stencil `p − n … p`, one plane of
/// margin for rounding).
fn halo_lo(order: usize) -> usize {
    order + 1
}

/// Extended planes of a slab of `n` planes (0 for an empty slab).
fn ext_len(n: usize, order: usize) -> usize {
    if n == 0 {
        0
    } else {
        (n + halo_lo(order) + 1).max(2 * order)
    }
}

/// Global plane of extended plane `j` of the slab `s`.
fn ext_plane(s: Slab, j: usize, order: usize, k3: usize) -> usize {
    (s.start as i64 - halo_lo(order) as i64 + j as i64).rem_euclid(k3 as i64) as usize
}

impl Mesh {
    /// Plans the mesh `nf` with B-splines of order `order` for the splitting `xi`. Collective.
    fn new(comm: &Comm, dec: &Decomp, bx: &PeriodicBox, xi: f64, nf: [usize; 3], order: usize, fftw: u32, nthreads: usize)
           -> Result<Mesh> {
        let dims = [nf[2], nf[1], nf[0]];
        let (rs, _, alloc) = R2cPair::sizes(&dims, comm)?;
        let plane = nf[0] * nf[1];
        let kext = ext_len(rs.n, order);
        let local = comm.agree((|| {
            crate::mpi::fail_point("ewald.makeplan")?;
            let real = AlignedVec::<f64>::zeroed(2 * alloc, "distributed SPME real slab")?;
            let spec = AlignedVec::<Complex64>::zeroed(alloc.max((plane * kext).div_ceil(2)), "distributed SPME spectrum")?;
            let spreader = if kext > 0 {
                Some(Spreader::<f64>::new_bspline(3, &[nf[0], nf[1], kext], &BSplineParams { order }, SpreadOpts::default())?)
            } else {
                None
            };
            Ok((real, spec, spreader))
        })())?;
        let (mut real, mut spec, spreader) = local;
        let fft = comm.agree(R2cPair::new(&dims, comm, fftw, nthreads, &mut real, &mut spec))?;
        // plane lists (fixed by the decomposition)
        let (k, me) = (comm.size(), comm.rank());
        let mut own_planes = Vec::new();
        let mut send_planes = Vec::new();
        let mut send_counts = vec![0usize; k];
        for r in 0..k {
            for j in 0..kext {
                let g = ext_plane(rs, j, order, nf[2]);
                if dec.owner[g] as usize == r {
                    if r == me {
                        own_planes.push((j, g - rs.start));
                    } else {
                        send_planes.push(j);
                        send_counts[r] += 1;
                    }
                }
            }
        }
        let mut recv_planes = Vec::new();
        let mut recv_counts = vec![0usize; k];
        for (s, &sl) in dec.slabs.iter().enumerate() {
            if s == me {
                continue;
            }
            for j in 0..ext_len(sl.n, order) {
                let g = ext_plane(sl, j, order, nf[2]);
                if dec.owner[g] as usize == me {
                    recv_planes.push(g - rs.start);
                    recv_counts[s] += 1;
                }
            }
        }
        let mut m = Mesh {
            nf,
            order,
            xi,
            fft,
            real,
            spec,
            theta: Vec::new(),
            kext,
            spreader,
            own_planes,
            send_planes,
            send_counts,
            recv_planes,
            recv_counts,
            xs: [Vec::new(), Vec::new(), Vec::new()],
            out: Vec::new(),
        };
        let r = m.set_box(bx);
        comm.agree(r)?;
        Ok(m)
    }

    /// The influence function on the local transposed spectrum for the cell `bx`.
    fn set_box(&mut self, bx: &PeriodicBox) -> Result<()> {
        let nf = self.nf;
        let nx = nf[0] / 2 + 1;
        let sp = self.fft.spectrum;
        let corr = spme_corr(nf, self.order);
        let mut th = try_zeroed_vec::<f64>(sp.n * nf[2] * nx, "distributed SPME influence function")?;
        for yl in 0..sp.n {
            for z in 0..nf[2] {
                for x in 0..nx {
                    th[(yl * nf[2] + z) * nx + x] = theta_at(bx, self.xi, nf, &corr, [x, sp.start + yl, z]);
                }
            }
        }
        self.theta = th;
        Ok(())
    }

    /// Bytes held by the mesh of this rank (the halo exchanges add buffers of the halo planes
    /// only while they run).
    fn bytes(&self) -> usize {
        8 * (self.real.len() + self.theta.len()) + 16 * self.spec.len()
    }

    /// k-space potentials (`phi`, overwritten) and fields (`field`, overwritten) of the home
    /// charges at wrapped fractional coordinates `s` with (scaled) charges `q`; returns the
    /// local part of the k-space virial (zeros unless `virial`). Collective.
    #[allow(clippy::too_many_arguments)]
    fn compute(&mut self, comm: &Comm, slab: Slab, bx: &PeriodicBox, s: &[[f64; 3]], q: &[f64], threads: &Threads,
               phi: &mut [f64], field: Option<&mut [f64]>, virial: bool) -> Result<[f64; 6]> {
        let n = s.len();
        let nf = self.nf;
        let plane = nf[0] * nf[1];
        let row = 2 * (nf[0] / 2 + 1);
        let slab_row = |p: usize, y: usize| (p * nf[1] + y) * row..(p * nf[1] + y) * row + nf[0];
        let ne = plane * self.kext;
        // 1. spread onto the extended slab (local), pack the halo planes of other ranks
        let local = (|| -> Result<Vec<f64>> {
            crate::mpi::fail_point("ewald.execute.mesh")?;
            let ext = &mut as_real(&mut self.spec)[..ne];
            if let Some(sp) = &mut self.spreader {
                if n > 0 {
                    let tp = 2.0 * std::f64::consts::PI;
                    let shift = 0.5 * self.order as f64;
                    let zlo = slab.start as f64 - halo_lo(self.order) as f64;
                    for d in 0..3 {
                        self.xs[d].clear();
                        crate::error::try_grow(&mut self.xs[d], n, "SPME point coordinates")?;
                    }
                    for v in s {
                        self.xs[0].push(tp * (v[0] - shift / nf[0] as f64));
                        self.xs[1].push(tp * (v[1] - shift / nf[1] as f64));
                        self.xs[2].push(tp * (v[2] * nf[2] as f64 - shift - zlo) / self.kext as f64);
                    }
                    sp.setpts([&self.xs[0], &self.xs[1], &self.xs[2]], threads)?;
                    // spreading overwrites the grid: no zeroing needed
                    sp.try_spread_real(q, ext, threads)?;
                } else {
                    ext.fill(0.0);
                }
            }
            let mut send = try_zeroed_vec::<f64>(self.send_planes.len() * plane, "distributed SPME halo buffer")?;
            for (k, &j) in self.send_planes.iter().enumerate() {
                send[k * plane..(k + 1) * plane].copy_from_slice(&ext[j * plane..(j + 1) * plane]);
            }
            Ok(send)
        })();
        let send = comm.agree(local)?;
        // 2. fold: own extended planes directly, the halo planes of other ranks exchanged
        let nr: usize = self.recv_counts.iter().sum();
        let mut recv = comm.agree(try_zeroed_vec::<f64>(nr * plane, "distributed SPME halo buffer"))?;
        comm.alltoallv_planes(plane, &send, &self.send_counts, &displs(&self.send_counts), &mut recv, &self.recv_counts,
                              &displs(&self.recv_counts))?;
        drop(send);
        self.real.fill(0.0);
        {
            let ext = &as_real(&mut self.spec)[..ne];
            let own = self.own_planes.iter().map(|&(j, p)| (&ext[j * plane..(j + 1) * plane], p));
            let halo = self.recv_planes.iter().enumerate().map(|(k, &p)| (&recv[k * plane..(k + 1) * plane], p));
            for (src, p) in own.chain(halo) {
                for y in 0..nf[1] {
                    let dst = &mut self.real[slab_row(p, y)];
                    for (d, v) in dst.iter_mut().zip(&src[y * nf[0]..(y + 1) * nf[0]]) {
                        *d += v;
                    }
                }
            }
        }
        // 3. convolution (the r2c overwrites the extended slab: dead until step 4)
        self.fft.r2c(&mut self.real, &mut self.spec);
        let nx = nf[0] / 2 + 1;
        let sp = self.fft.spectrum;
        let mut vir = [0.0f64; 6];
        for yl in 0..sp.n {
            for z in 0..nf[2] {
                for x in 0..nx {
                    let l = (yl * nf[2] + z) * nx + x;
                    let th = self.theta[l];
                    let b = self.spec[l];
                    if virial && th != 0.0 {
                        // entries 0 < x < K/2 also stand for their conjugate partners
                        let w = if x == 0 { 1.0 } else { 2.0 };
                        let m = [mode_of(x, nf[0]).unwrap_or(0), mode_of(sp.start + yl, nf[1]).unwrap_or(0), mode_of(z, nf[2]).unwrap_or(0)];
                        add_virial(bx, self.xi, m, 0.5 * w * th * b.norm_sqr(), &mut vir);
                    }
                    self.spec[l] = b * th;
                }
            }
        }
        self.fft.c2r(&mut self.spec, &mut self.real);
        // 4. the extended slab back: own planes from the slab, halo planes from their owners
        for (k, &p) in self.recv_planes.iter().enumerate() {
            for y in 0..nf[1] {
                recv[k * plane + y * nf[0]..k * plane + (y + 1) * nf[0]].copy_from_slice(&self.real[slab_row(p, y)]);
            }
        }
        let mut back = comm.agree(try_zeroed_vec::<f64>(self.send_planes.len() * plane, "distributed SPME halo buffer"))?;
        comm.alltoallv_planes(plane, &recv, &self.recv_counts, &displs(&self.recv_counts), &mut back, &self.send_counts,
                              &displs(&self.send_counts))?;
        drop(recv);
        let ext = &mut as_real(&mut self.spec)[..ne];
        for &(j, p) in &self.own_planes {
            for y in 0..nf[1] {
                ext[j * plane + y * nf[0]..j * plane + (y + 1) * nf[0]].copy_from_slice(&self.real[slab_row(p, y)]);
            }
        }
        for (k, &j) in self.send_planes.iter().enumerate() {
            ext[j * plane..(j + 1) * plane].copy_from_slice(&back[k * plane..(k + 1) * plane]);
        }
        drop(back);
        // 5. interpolation (local; agreed, as the caller's next step is collective)
        let local = (|| -> Result<()> {
            if n == 0 {
                return Ok(());
            }
            let Some(spr) = &self.spreader else {
                return Err(Error::Internal("home charges on a rank without mesh planes".into()));
            };
            try_resize(&mut self.out, n, [0.0; 4], "SPME interpolation output")?;
            spr.interp_grad_real(ext, &mut self.out, threads)?;
            // E_α = −Σ_d ∂φ/∂u_d · K_d a*_dα
            let g: [[f64; 3]; 3] = [0, 1, 2].map(|d| [0, 1, 2].map(|a| nf[d] as f64 * bx.recip[d][a]));
            for (p, o) in phi.iter_mut().zip(&self.out[..n]) {
                *p = o[0];
            }
            if let Some(fl) = field {
                for (f, o) in fl.chunks_exact_mut(3).zip(&self.out[..n]) {
                    for a in 0..3 {
                        f[a] = -(o[1] * g[0][a] + o[2] * g[1][a] + o[3] * g[2][a]);
                    }
                }
            }
            Ok(())
        })();
        comm.agree(local)?;
        Ok(vir)
    }
}

/// Doubles per record of the exclusion stage: a charge at its id's rank (`id, s_1, s_2, s_3, q`)
/// and a partner (`s_1, s_2, s_3, q, home rank`).
const XREC: usize = 5;

/// The rank that holds the pairs whose first (lower) global id is `g`: ids are split in
/// blocks of `bs` over the ranks (module docs, "Exclusions and scaled pairs").
#[inline]
fn id_rank(g: usize, bs: usize) -> usize {
    g / bs
}

/// This rank's part of the excluded and scaled pairs of a distributed plan (module docs,
/// "Exclusions and scaled pairs"): the pairs whose lower global id lies in this rank's block
/// of ids, and the fixed pattern by which their partners are fetched.
struct DistExcl {
    /// Ids per block (`⌈n_total / K⌉`, at least 1).
    bs: usize,
    /// This rank's block of ids: `b0 … b0 + blen − 1`.
    b0: usize,
    blen: usize,
    /// The pairs (global keys `lo << 32 | hi`, sorted) and their scales.
    ex: Exclusions,
    /// Per pair: its partner `hi` as `hi − b0` when in this block, else `blen + k` for the
    /// `k`-th entry of the partners fetched from other ranks (`need` order).
    partner: Vec<u32>,
    /// Ids of this block that other ranks fetch each execute, grouped by the fetching rank
    /// (rank order), and their counts per rank.
    serve: Vec<u32>,
    serve_counts: Vec<usize>,
    /// Partners fetched from each rank (their counts; grouped by rank in rank order).
    need_counts: Vec<usize>,
}

/// What the exclusion stage gives a home rank: the corrections of its home charges (`φ`, and
/// `E` when wanted), its share of their virial, and the coincident fully excluded pairs that
/// involve its home charges (global keys: the coincidence check of its real-space pass lets
/// them through).
struct ExclOut {
    phi: Vec<f64>,
    field: Vec<f64>,
    vir: [f64; 6],
    allowed: Exclusions,
}

impl DistExcl {
    /// Distributes the pairs each rank passed (the union over the ranks is the list) to the
    /// ranks holding their lower ids and plans the partner exchange. Collective; errors on
    /// every rank alike.
    fn new(comm: &Comm, n_total: usize, pairs: &[[i64; 2]], scales: Option<&[f64]>) -> Result<Option<DistExcl>> {
        let (k, me) = (comm.size(), comm.rank());
        let bs = n_total.div_ceil(k).max(1);
        let b0 = (me * bs).min(n_total);
        let blen = (n_total - b0).min(bs);
        // 1. this rank's pairs checked, deduplicated and grouped by the rank of their first id
        let local = (|| -> Result<(Vec<f64>, Vec<usize>)> {
            crate::mpi::fail_point("ewald.set_exclusions")?;
            // scale-1 pairs travel too: the owner's duplicate check must see them (a pair given
            // with scale 1 on one rank and another scale on another rank), and drops them
            let ex = Exclusions::checked(pairs, scales, n_total, true)?;
            let mut counts = vec![0usize; k];
            for &key in &ex.keys {
                counts[id_rank((key >> 32) as usize, bs)] += 1;
            }
            let mut at = displs(&counts);
            let mut send = try_zeroed_vec::<f64>(3 * ex.len(), "exclusion routing buffer")?;
            for (m, &key) in ex.keys.iter().enumerate() {
                let r = id_rank((key >> 32) as usize, bs);
                let slot = at[r];
                at[r] += 1;
                // ids below 2^32 are exact in a double
                send[3 * slot..3 * slot + 3].copy_from_slice(&[(key >> 32) as f64, (key & 0xffff_ffff) as f64, ex.scale_of(m)]);
            }
            Ok((send, counts))
        })();
        let (send, counts) = comm.agree(local)?;
        let (recv, _) = exchange(comm, 3, &send, &counts)?;
        drop(send);
        // 2. the pairs of this block, checked across the ranks (a pair given twice with two
        //    scales), and the partners to fetch
        /// The pairs of this block, each pair's partner index, the partners to fetch
        /// (`rank << 32 | id`, sorted) and their counts per rank.
        type Block = (Exclusions, Vec<u32>, Vec<u64>, Vec<usize>);
        let local = (|| -> Result<Block> {
            let np = recv.len() / 3;
            let mut pr = try_vec::<[i64; 2]>(np, "exclusion pairs")?;
            let mut sc = try_vec::<f64>(np, "exclusion scales")?;
            for c in recv.chunks_exact(3) {
                pr.push([c[0] as i64, c[1] as i64]);
                sc.push(c[2]);
            }
            let ex = Exclusions::new(&pr, Some(&sc), n_total)?;
            drop((pr, sc));
            let mut need = try_vec::<u64>(ex.len(), "exclusion partner list")?;
            for &key in &ex.keys {
                let hi = (key & 0xffff_ffff) as usize;
                if !(b0..b0 + blen).contains(&hi) {
                    need.push(((id_rank(hi, bs) as u64) << 32) | hi as u64);
                }
            }
            need.sort_unstable();
            need.dedup();
            let mut partner = try_vec::<u32>(ex.len(), "exclusion partner index")?;
            for &key in &ex.keys {
                let hi = (key & 0xffff_ffff) as usize;
                partner.push(if (b0..b0 + blen).contains(&hi) {
                    (hi - b0) as u32
                } else {
                    let t = need.binary_search(&(((id_rank(hi, bs) as u64) << 32) | hi as u64)).map_err(|_| {
                        Error::Internal("exclusion partner missing from its own list".into())
                    })?;
                    (blen + t) as u32
                });
            }
            if blen + need.len() >= u32::MAX as usize {
                return Err(Error::Range(format!("{} exclusion partners on one rank exceed 2^32 − 1", need.len())));
            }
            let mut need_counts = vec![0usize; k];
            for &v in &need {
                need_counts[(v >> 32) as usize] += 1;
            }
            Ok((ex, partner, need, need_counts))
        })();
        let (ex, partner, need, need_counts) = comm.agree(local)?;
        let ids: Vec<f64> = need.iter().map(|&v| (v & 0xffff_ffff) as f64).collect();
        drop(need);
        let (served, serve_counts) = exchange(comm, 1, &ids, &need_counts)?;
        let serve: Vec<u32> = served.iter().map(|&v| v as u32).collect();
        let mut total = [ex.len() as u64];
        comm.allreduce_u64(&mut total, Op::Sum)?;
        if total[0] == 0 {
            return Ok(None);
        }
        Ok(Some(DistExcl { bs, b0, blen, ex, partner, serve, serve_counts, need_counts }))
    }

    /// The exclusion corrections of the home charges `s` (wrapped fractional), `q` (scaled),
    /// global ids `gid`: each pair is computed once, on the rank of its first id, by
    /// [`RealSpace::exclusions`] (the single-process code) with its partner fetched from the
    /// rank of the partner's id; the partner's share goes back there, and each charge's
    /// corrections to its home rank. `shares`: (real-space, k-space) shares. Collective.
    #[allow(clippy::too_many_arguments)]
    fn apply(&self, comm: &Comm, bx: &PeriodicBox, real: &RealSpace, s: &[[f64; 3]], q: &[f64], gid: &[u32], shares: (bool, bool),
             want_field: bool) -> Result<ExclOut> {
        let k = comm.size();
        let na = s.len();
        let (b0, blen) = (self.b0, self.blen);
        // a. the home charges to the ranks of their ids
        let local = (|| -> Result<(Vec<f64>, Vec<usize>, Vec<usize>)> {
            crate::mpi::fail_point("ewald.execute.exclusions")?;
            let mut counts = vec![0usize; k];
            for &g in gid {
                counts[id_rank(g as usize, self.bs)] += 1;
            }
            let mut at = displs(&counts);
            let mut perm = try_zeroed_vec::<usize>(na, "exclusion routing order")?;
            let mut send = try_zeroed_vec::<f64>(XREC * na, "exclusion routing buffer")?;
            for i in 0..na {
                let r = id_rank(gid[i] as usize, self.bs);
                let slot = at[r];
                at[r] += 1;
                perm[slot] = i;
                send[XREC * slot..XREC * (slot + 1)].copy_from_slice(&[gid[i] as f64, s[i][0], s[i][1], s[i][2], q[i]]);
            }
            Ok((send, counts, perm))
        })();
        let (send, counts, perm) = comm.agree(local)?;
        let (arr, src_counts) = exchange(comm, XREC, &send, &counts)?;
        drop(send);
        let nb = arr.len() / XREC;
        // b. the record of each id of this block (unique, and present for every pair), and the
        //    partners other ranks fetch
        let local = (|| -> Result<(Vec<u32>, Vec<u32>, Vec<f64>)> {
            let mut src = try_vec::<u32>(nb, "exclusion record sources")?;
            for (r, &c) in src_counts.iter().enumerate() {
                src.extend(std::iter::repeat_n(r as u32, c));
            }
            let mut slot = try_filled_vec(blen, u32::MAX, "exclusion id table")?;
            for t in 0..nb {
                let g = arr[XREC * t] as usize;
                let l = g.wrapping_sub(b0);
                if l >= blen {
                    return Err(Error::Internal(format!("global id {g} routed to the wrong rank")));
                }
                if slot[l] != u32::MAX {
                    return Err(Error::InvalidArg(format!(
                        "global id {g} is given to two charges in this call (ids must be unique over all ranks)"
                    )));
                }
                slot[l] = t as u32;
            }
            let missing = |g: usize| {
                Error::InvalidArg(format!(
                    "an exclusion pair names global id {g}, but no rank passed a charge with that id in this call"
                ))
            };
            for (m, &key) in self.ex.keys.iter().enumerate() {
                let lo = (key >> 32) as usize;
                if slot[lo - b0] == u32::MAX {
                    return Err(missing(lo));
                }
                let p = self.partner[m] as usize;
                if p < blen && slot[p] == u32::MAX {
                    return Err(missing(b0 + p));
                }
            }
            let mut out = try_zeroed_vec::<f64>(XREC * self.serve.len(), "exclusion partner buffer")?;
            for (u, &g) in self.serve.iter().enumerate() {
                let t = slot[g as usize - b0];
                if t == u32::MAX {
                    return Err(missing(g as usize));
                }
                let t = t as usize;
                let r = &arr[XREC * t..XREC * (t + 1)];
                out[XREC * u..XREC * (u + 1)].copy_from_slice(&[r[1], r[2], r[3], r[4], src[t] as f64]);
            }
            Ok((src, slot, out))
        })();
        let (src, slot, out) = comm.agree(local)?;
        let (partners, _) = exchange(comm, XREC, &out, &self.serve_counts)?;
        drop(out);
        let np = partners.len() / XREC;
        // c. the corrections of every pair of this block: the single-process code on a table
        //    of this block's charges and the fetched partners
        let lmax = bx.lengths.iter().cloned().fold(0.0, f64::max);
        let r2_near = 4.0 * (COINC_REL * lmax) * (COINC_REL * lmax);
        let local = (|| -> Result<_> {
            let nt = nb + np;
            let mut st = try_vec::<[f64; 3]>(nt, "exclusion positions")?;
            let mut qt = try_vec::<f64>(nt, "exclusion charges")?;
            for r in arr.chunks_exact(XREC) {
                st.push([r[1], r[2], r[3]]);
                qt.push(r[4]);
            }
            for r in partners.chunks_exact(XREC) {
                st.push([r[0], r[1], r[2]]);
                qt.push(r[3]);
            }
            let mut keys = try_vec::<u64>(self.ex.len(), "exclusion table keys")?;
            for (m, &key) in self.ex.keys.iter().enumerate() {
                let i = slot[(key >> 32) as usize - b0] as u64;
                let p = self.partner[m] as usize;
                let j = if p < blen { slot[p] as u64 } else { (nb + p - blen) as u64 };
                keys.push((i << 32) | j);
            }
            let mut scale = try_vec::<f64>(self.ex.scale.len(), "exclusion table scales")?;
            scale.extend_from_slice(&self.ex.scale);
            let tab = Exclusions { keys, scale };
            let mut pt = try_zeroed_vec::<f64>(nt, "exclusion potentials")?;
            let mut ft = try_zeroed_vec::<f64>(if want_field { 3 * nt } else { 0 }, "exclusion fields")?;
            let mut vir = [0.0f64; 6];
            real.exclusions(bx, &st, &qt, &tab, shares, &mut pt, want_field.then_some(&mut ft[..]), Some(&mut vir));
            // coincident fully excluded pairs, to the home ranks of both charges
            let home_of = |t: usize| if t < nb { src[t] as usize } else { partners[XREC * (t - nb) + 4] as usize };
            let mut cdest: Vec<(usize, u64)> = Vec::new();
            for (m, &key) in tab.keys.iter().enumerate() {
                if tab.scale_of(m) != 0.0 {
                    continue;
                }
                let (i, j) = ((key >> 32) as usize, (key & 0xffff_ffff) as usize);
                let mut ds = [0.0; 3];
                for d in 0..3 {
                    let v = st[i][d] - st[j][d];
                    ds[d] = v - v.round();
                }
                let c = bx.cart(ds);
                if c[0] * c[0] + c[1] * c[1] + c[2] * c[2] <= r2_near {
                    let gk = self.ex.keys[m];
                    let (hi_, hj) = (home_of(i), home_of(j));
                    cdest.push((hi_, gk));
                    if hj != hi_ {
                        cdest.push((hj, gk));
                    }
                }
            }
            cdest.sort_unstable();
            let mut ccounts = vec![0usize; k];
            let mut csend = Vec::with_capacity(2 * cdest.len());
            for &(r, gk) in &cdest {
                ccounts[r] += 1;
                csend.extend_from_slice(&[(gk >> 32) as f64, (gk & 0xffff_ffff) as f64]);
            }
            // the partners' shares, back to the ranks of their ids (need order)
            let mut back = try_zeroed_vec::<f64>(4 * np, "exclusion partner results")?;
            for u in 0..np {
                back[4 * u] = pt[nb + u];
                if want_field {
                    back[4 * u + 1..4 * u + 4].copy_from_slice(&ft[3 * (nb + u)..3 * (nb + u) + 3]);
                }
            }
            Ok((pt, ft, vir, csend, ccounts, back))
        })();
        let (mut pt, mut ft, vir, csend, ccounts, back) = comm.agree(local)?;
        drop(partners);
        let (pback, _) = exchange(comm, 4, &back, &self.need_counts)?;
        drop(back);
        for (u, &g) in self.serve.iter().enumerate() {
            let t = slot[g as usize - b0] as usize;
            pt[t] += pback[4 * u];
            if want_field {
                for d in 0..3 {
                    ft[3 * t + d] += pback[4 * u + 1 + d];
                }
            }
        }
        drop(pback);
        // d. each charge's corrections back to its home rank (the reverse of a)
        let res = (|| -> Result<Vec<f64>> {
            let mut res = try_zeroed_vec::<f64>(4 * nb, "exclusion results")?;
            for t in 0..nb {
                res[4 * t] = pt[t];
                if want_field {
                    res[4 * t + 1..4 * t + 4].copy_from_slice(&ft[3 * t..3 * t + 3]);
                }
            }
            Ok(res)
        })();
        let res = comm.agree(res)?;
        drop((pt, ft, arr));
        let (hres, _) = exchange(comm, 4, &res, &src_counts)?;
        drop(res);
        let (cr, _) = exchange(comm, 2, &csend, &ccounts)?;
        let mut phi = vec![0.0f64; na];
        let mut field = vec![0.0f64; if want_field { 3 * na } else { 0 }];
        for (slot_h, &i) in perm.iter().enumerate() {
            phi[i] = hres[4 * slot_h];
            if want_field {
                field[3 * i..3 * i + 3].copy_from_slice(&hres[4 * slot_h + 1..4 * slot_h + 4]);
            }
        }
        let mut akeys: Vec<u64> = cr.chunks_exact(2).map(|c| ((c[0] as u64) << 32) | c[1] as u64).collect();
        akeys.sort_unstable();
        akeys.dedup();
        Ok(ExclOut { phi, field, vir, allowed: Exclusions { keys: akeys, scale: Vec::new() } })
    }
}

/// The values every rank must pass alike (as bits), for the collective check.
fn signature(method: Method, cell: &[f64; 9], tol: f64, opts: &EwaldOpts) -> Vec<u64> {
    let o = &opts.overrides;
    let mut v = vec![method as u64, tol.to_bits(), o.xi.to_bits(), o.rc.to_bits(), o.order as u64, opts.terms as u64,
                     opts.fftw_flags as u64];
    v.extend(o.grid.iter().map(|&g| g as u64));
    v.extend(cell.iter().map(|c| c.to_bits()));
    v
}

/// A distributed SPME plan (see the module documentation). Collective: every rank of the
/// communicator makes, executes, changes the cell of and drops it in the same order.
pub struct DistEwaldPlan {
    comm: Comm,
    n_max: usize,
    /// The charge count the parameters are chosen for (`n_max` summed over the ranks).
    n_total: usize,
    opts: EwaldOpts,
    parts: EwaldParts,
    setup: Setup,
    threads: Threads,
    dec: Decomp,
    real: RealSpace,
    mesh: Option<Mesh>,
    no_excl: Exclusions,
    /// This rank's part of the excluded and scaled pairs (`None`: no rank has any).
    excl: Option<DistExcl>,
}

impl DistEwaldPlan {
    /// Makes a distributed plan for up to `n_max` charges **on this rank** per execute (the
    /// parameters are chosen for the sum of `n_max` over the ranks) in the cell `cell` with
    /// relative RMS force accuracy `tol`, as [`super::CpuEwald::new`]; `opts.nthreads` threads
    /// per rank. Only [`Method::Spme`]. Collective.
    ///
    /// Errors, on every rank: those of [`super::CpuEwald::new`]; [`Error::NotSupported`]
    /// (another method); [`Error::InvalidArg`] (the ranks passed different cells, tolerances,
    /// methods or options); [`Error::Internal`] (MPI).
    pub fn new(comm: Comm, method: Method, cell: &[f64; 9], n_max: usize, tol: f64, opts: &EwaldOpts) -> Result<DistEwaldPlan> {
        comm.check_same(&signature(method, cell, tol, opts), "the Ewald method, cell, tolerance and options")?;
        let local = if method != Method::Spme {
            Err(Error::NotSupported(format!("the distributed Ewald plan implements SPME only, not {method:?}")))
        } else if n_max == 0 || n_max >= u32::MAX as usize {
            Err(Error::NPoints(format!("n_max = {n_max}; must be in 1 … 2^32 − 2")))
        } else {
            Ok(())
        };
        comm.agree(local)?;
        let mut tot = [n_max as u64];
        comm.allreduce_u64(&mut tot, Op::Sum)?;
        let n_total = (tot[0] as usize).min(u32::MAX as usize - 1);
        let st = comm.agree(setup(method, cell, n_total, tol, opts))?;
        let threads = comm.agree(Threads::new(opts.nthreads))?;
        let dec = Decomp::new(&comm, st.chosen.grid)?;
        let parts = EwaldParts::of(opts.terms);
        let mesh = if parts.kspace {
            let c = &st.chosen;
            Some(Mesh::new(&comm, &dec, &st.bx, c.xi, c.grid, c.order, opts.fftw_flags, threads.count())?)
        } else {
            None
        };
        let real = RealSpace::new(st.chosen.xi, st.chosen.rc, erfc_accuracy(st.tol_used), false);
        if opts.debug > 0 && comm.rank() == 0 {
            eprintln!("[farfield ewald mpi] {} ranks, n_total {n_total}: {:?}", comm.size(), st.params);
        }
        Ok(DistEwaldPlan { comm, n_max, n_total, opts: *opts, parts, setup: st, threads, dec, real, mesh,
                           no_excl: Exclusions::default(), excl: None })
    }

    /// Largest number of charges per execute on this rank.
    pub fn n_max(&self) -> usize {
        self.n_max
    }

    /// The method ([`Method::Spme`]).
    pub fn method(&self) -> Method {
        Method::Spme
    }

    /// Parameters in use and this rank's timings of the last execute.
    pub fn params(&self) -> &EwaldParams {
        &self.setup.params
    }

    /// This rank and the number of ranks.
    pub fn rank_size(&self) -> (usize, usize) {
        (self.comm.rank(), self.comm.size())
    }

    /// This rank's slab of mesh planes `(first, count)` along z.
    pub fn local_slab(&self) -> (usize, usize) {
        let s = self.dec.slabs[self.comm.rank()];
        (s.start, s.n)
    }

    /// Bytes of mesh held by this rank (slab, spectrum, influence function, extended slab).
    pub fn mesh_bytes(&self) -> usize {
        self.mesh.as_ref().map_or(0, Mesh::bytes)
    }

    /// Collective error agreement on this plan's communicator (see [`Comm::agree`]).
    pub fn agree<T>(&self, r: Result<T>) -> Result<T> {
        self.comm.agree(r)
    }

    /// Changes the cell, as [`super::CpuEwald::set_box`] (the same rule for keeping or
    /// re-choosing the parameters, taken alike on every rank). Collective; errors on every rank
    /// (also [`Error::InvalidArg`] when the ranks pass different cells); on error the plan is
    /// unchanged.
    pub fn set_box(&mut self, cell: &[f64; 9]) -> Result<()> {
        self.comm.check_same(&cell.map(f64::to_bits), "the cells")?;
        let st = &self.setup;
        let nb = self.comm.agree(new_box(Method::Spme, cell, self.n_total, &self.opts,
                                         st.scale_e, &st.chosen, &st.params))?;
        match nb {
            NewBox::Keep { bx, user_box, eta } => {
                if let Some(m) = &mut self.mesh {
                    let r = m.set_box(&bx);
                    self.comm.agree(r)?;
                }
                self.setup.params.eta = eta;
                self.setup.bx = bx;
                self.setup.user_box = user_box;
            }
            NewBox::Replan(st) => {
                let dec = Decomp::new(&self.comm, st.chosen.grid)?;
                let mesh = if self.parts.kspace {
                    let c = &st.chosen;
                    Some(Mesh::new(&self.comm, &dec, &st.bx, c.xi, c.grid, c.order, self.opts.fftw_flags, self.threads.count())?)
                } else {
                    None
                };
                self.real = RealSpace::new(st.chosen.xi, st.chosen.rc, erfc_accuracy(st.tol_used), false);
                self.dec = dec;
                self.mesh = mesh;
                self.setup = st;
            }
        }
        Ok(())
    }
}

/// This rank's charges after validation: wrapped fractional positions, scaled charges and
/// global ids (empty unless given).
struct Local {
    s: Vec<[f64; 3]>,
    q: Vec<f64>,
    ids: Vec<u32>,
}

impl DistEwaldPlan {
    /// Sets the excluded pairs (replacing earlier ones) as [`super::CpuEwald::set_exclusions`],
    /// by the **global ids** of the charges (0 … `n_total − 1`, `n_total` the sum of `n_max`
    /// over the ranks), which [`DistEwaldPlan::execute_ids`] then takes with the charges.
    /// Collective. Each rank passes any part of the list: the list is the union over the ranks
    /// (a pair given on several ranks, or several times, counts once), so the whole list on
    /// one rank, the same list on every rank, or each rank the pairs of its own molecules are
    /// all fine. The pairs are kept distributed, each on the rank of its lower id (module docs,
    /// "Exclusions and scaled pairs"). Errors, on every rank alike: [`Error::InvalidArg`] (an
    /// id outside `0 … n_total − 1`, a pair `(i, i)`, each naming the pair), [`Error::Alloc`],
    /// [`Error::Internal`] (MPI). On error the earlier list is kept.
    pub fn set_exclusions(&mut self, pairs: &[[i64; 2]]) -> Result<()> {
        self.set_pairs(pairs, None)
    }

    /// Sets the excluded and scaled pairs (replacing earlier ones) as
    /// [`super::CpuEwald::set_exclusions_scaled`], by global ids, distributed as
    /// [`DistEwaldPlan::set_exclusions`]. Collective. A pair given on several ranks must be
    /// given with the same scale (two different scales, both other than 1, are an error on
    /// every rank). Errors, on every rank alike: those of [`DistEwaldPlan::set_exclusions`];
    /// [`Error::InvalidArg`] (`scales` of another length than `pairs`, a pair with two
    /// different scales), [`Error::NonFinite`] (a scale, naming it). On error the earlier list
    /// is kept.
    pub fn set_exclusions_scaled(&mut self, pairs: &[[i64; 2]], scales: &[f64]) -> Result<()> {
        self.set_pairs(pairs, Some(scales))
    }

    fn set_pairs(&mut self, pairs: &[[i64; 2]], scales: Option<&[f64]>) -> Result<()> {
        self.excl = DistExcl::new(&self.comm, self.n_total, pairs, scales)?;
        Ok(())
    }

    /// Number of distinct excluded and scaled pairs over all ranks. Collective.
    pub fn n_exclusions(&self) -> Result<usize> {
        let mut n = [self.excl.as_ref().map_or(0, |e| e.ex.len() as u64)];
        self.comm.allreduce_u64(&mut n, Op::Sum)?;
        Ok(n[0] as usize)
    }

    /// The number of global ids (`n_total`: the sum of `n_max` over the ranks, at most
    /// 2³² − 2): ids run over `0 … n_total − 1`.
    pub fn n_ids(&self) -> usize {
        self.n_total
    }

    /// Checks this rank's arguments and wraps its charges (internal length unit; charges
    /// divided by `2^eq`). Errors as [`super::CpuEwald::execute_with`] (local).
    fn prepare(&self, ids: Option<&[i64]>, xyz: &[f64], q: &[f64], phi: Option<usize>, field: Option<usize>) -> Result<Local> {
        crate::mpi::fail_point("ewald.execute")?;
        let n = q.len();
        if n > self.n_max {
            return Err(Error::NPoints(format!("n = {n} exceeds the plan's n_max = {}", self.n_max)));
        }
        if xyz.len() != 3 * n {
            return Err(Error::InvalidArg(format!("xyz has {} values for {n} charges (need 3n)", xyz.len())));
        }
        if phi.is_some_and(|l| l != n) {
            return Err(Error::InvalidArg(format!("phi has {} entries for {n} charges", phi.unwrap_or(0))));
        }
        if field.is_some_and(|l| l != 3 * n) {
            return Err(Error::InvalidArg(format!("field has {} entries for {n} charges (need 3n)", field.unwrap_or(0))));
        }
        if let Some(i) = xyz.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite(format!("xyz[{i}] (coordinate {} of charge {}) is {}", ["x", "y", "z"][i % 3], i / 3, xyz[i])));
        }
        if let Some(i) = q.iter().position(|v| !v.is_finite()) {
            return Err(Error::NonFinite(format!("q[{i}] is {}", q[i])));
        }
        let mut gid = Vec::new();
        match ids {
            Some(ids) => {
                if ids.len() != n {
                    return Err(Error::InvalidArg(format!("ids has {} entries for {n} charges", ids.len())));
                }
                if let Some(i) = ids.iter().position(|&g| g < 0 || g as u64 >= self.n_total as u64) {
                    return Err(Error::InvalidArg(format!(
                        "ids[{i}] = {} is outside 0 … n_total − 1 = {} (n_total: the sum of n_max over the ranks)",
                        ids[i],
                        self.n_total - 1
                    )));
                }
                if self.excl.is_some() {
                    gid = try_vec(n, "global ids")?;
                    gid.extend(ids.iter().map(|&g| g as u32));
                }
            }
            None if self.excl.is_some() => {
                return Err(Error::InvalidArg(
                    "this distributed plan has exclusions: pass the global id of each charge (execute_ids; C: farfield_ewald_execute_ids)"
                        .into(),
                ))
            }
            None => {}
        }
        let e = self.setup.scale_e;
        let bx = &self.setup.bx;
        let mut s = Vec::new();
        try_resize(&mut s, n, [0.0; 3], "fractional positions")?;
        for i in 0..n {
            let f = bx.frac([pow2(xyz[3 * i], -e), pow2(xyz[3 * i + 1], -e), pow2(xyz[3 * i + 2], -e)]);
            s[i] = [wrap01(f[0]), wrap01(f[1]), wrap01(f[2])];
            if !s[i].iter().all(|v| v.is_finite()) {
                return Err(Error::Range(format!(
                    "charge {i} at ({:e}, {:e}, {:e}) is too far outside the cell for its fractional coordinates to be represented",
                    xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]
                )));
            }
        }
        let mut qv = try_vec(n, "charges")?;
        qv.extend_from_slice(q);
        Ok(Local { s, q: qv, ids: gid })
    }

    /// Evaluates, for this rank's `n = q.len()` charges at `xyz` (length `3n`), the requested
    /// results as [`super::CpuEwald::execute_with`]: potentials (`phi`, length `n`), fields
    /// (`field`, length `3n`), and the energy and virial of **all** ranks' charges (the same
    /// on every rank). Collective: every rank calls it, with its own charges (possibly none).
    /// A plan with exclusions needs the charges' global ids: [`DistEwaldPlan::execute_ids`].
    /// Outputs are written only on success. Errors, on every rank alike (the same status; on
    /// the ranks other than the failing one the message names that rank and repeats its
    /// message): those of [`super::CpuEwald::execute_with`] on any rank (a coincident pair
    /// is named by the indices of the home rank's charges and ghosts, or by global ids when
    /// the plan has exclusions), [`Error::InvalidArg`] (exclusions set and no ids),
    /// [`Error::Internal`] (MPI).
    pub fn execute_with(&mut self, xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>, energy: bool,
                        virial: bool) -> Result<EwaldResult> {
        self.execute_ids(None, xyz, q, phi, field, energy, virial)
    }

    /// [`DistEwaldPlan::execute_with`] with the **global id** of each charge: `ids[i]` (length
    /// `n`, in `0 … n_total − 1`, see [`DistEwaldPlan::n_ids`]) names charge `i` of this rank
    /// in the pairs of [`DistEwaldPlan::set_exclusions`]. Every charge of the system has one
    /// id, unique over all ranks; a charge keeps its id when it moves to another rank between
    /// calls (the ids are the MD code's global atom tags, 0-based). `None`: no ids (a plan
    /// without exclusions ignores them; with exclusions they are required). Collective.
    ///
    /// Errors, on every rank alike: those of [`DistEwaldPlan::execute_with`], and
    /// [`Error::InvalidArg`] (`ids` of another length than `q`, an id out of range; with
    /// exclusions: an id given to two charges, a pair naming an id that no rank passed).
    #[allow(clippy::too_many_arguments)]
    pub fn execute_ids(&mut self, ids: Option<&[i64]>, xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>,
                       energy: bool, virial: bool) -> Result<EwaldResult> {
        let comm = &self.comm;
        let prep = self.prepare(ids, xyz, q, phi.as_ref().map(|p| p.len()), field.as_ref().map(|f| f.len()));
        let mut loc = comm.agree(prep)?;
        let want_field = field.is_some();
        let with_ids = self.excl.is_some();
        let n = q.len();
        // the charge unit and the total charge, as the single-process plan takes them
        let mut qmax = [q.iter().fold(0.0f64, |a, v| a.max(v.abs()))];
        comm.allreduce_f64(&mut qmax, Op::Max)?;
        let eq = exponent_of(qmax[0]);
        for v in loc.q.iter_mut() {
            *v = pow2(*v, -eq);
        }
        let mut qtot = [loc.q.iter().sum::<f64>()];
        comm.allreduce_f64(&mut qtot, Op::Sum)?;
        let k = comm.size();
        let me = comm.rank();
        let bx = self.setup.bx.clone();
        // records: s_1, s_2, s_3, q (and the global id with exclusions)
        let w = if with_ids { REC + 1 } else { REC };
        // 1. routing to the home ranks
        let dec = &self.dec;
        let mut counts = vec![0usize; k];
        let homes: Vec<usize> = loc.s.iter().map(|s| dec.home(s[2])).collect();
        for &h in &homes {
            counts[h] += 1;
        }
        let mut at = displs(&counts);
        let mut perm = vec![0usize; n];
        let mut send = comm.agree(crate::mpi::fail_point("ewald.execute.route").and_then(|_| try_zeroed_vec::<f64>(w * n, "distributed Ewald routing buffer")))?;
        for i in 0..n {
            let slot = at[homes[i]];
            at[homes[i]] += 1;
            perm[slot] = i;
            let s = loc.s[i];
            send[w * slot..w * slot + REC].copy_from_slice(&[s[0], s[1], s[2], loc.q[i]]);
            if with_ids {
                send[w * slot + REC] = loc.ids[i] as f64;
            }
        }
        drop(loc);
        let (home, from) = exchange(comm, w, &send, &counts)?;
        drop(send);
        let na = home.len() / w;
        let mut s: Vec<[f64; 3]> = home.chunks_exact(w).map(|r| [r[0], r[1], r[2]]).collect();
        let mut qa: Vec<f64> = home.chunks_exact(w).map(|r| r[3]).collect();
        let mut gid: Vec<u32> = if with_ids { home.chunks_exact(w).map(|r| r[REC] as u32).collect() } else { Vec::new() };
        drop(home);
        let t0 = Instant::now();
        // exclusions and scaled pairs: each pair on the rank of its first id (module docs)
        let lmax = bx.lengths.iter().cloned().fold(0.0, f64::max);
        self.real.consts.r2_coinc = (COINC_REL * lmax) * (COINC_REL * lmax);
        let xo = match &self.excl {
            Some(x) => Some(x.apply(comm, &bx, &self.real, &s, &qa, &gid, self.parts.exclusion_shares(), want_field)?),
            None => None,
        };
        // 2. ghosts and the real-space sum
        let mut phi_a = vec![0.0f64; na];
        let mut f_a = vec![0.0f64; if want_field { 3 * na } else { 0 }];
        let mut vir = [0.0f64; 6];
        if self.parts.real {
            let delta = self.setup.chosen.rc / bx.heights[2] * (1.0 + 1e-9);
            let mut gcounts = vec![0usize; k];
            let mut gdest: Vec<Vec<u32>> = vec![Vec::new(); k];
            let mut seen = vec![usize::MAX; k];
            for (i, si) in s.iter().enumerate() {
                dec.near(si[2], delta, me, &mut seen, i, |r| {
                    gcounts[r] += 1;
                    gdest[r].push(i as u32);
                });
            }
            let mut gsend = Vec::with_capacity(w * gcounts.iter().sum::<usize>());
            for list in &gdest {
                for &i in list {
                    let i = i as usize;
                    gsend.extend_from_slice(&[s[i][0], s[i][1], s[i][2], qa[i]]);
                    if with_ids {
                        gsend.push(gid[i] as f64);
                    }
                }
            }
            drop(gdest);
            let (ghosts, _) = exchange(comm, w, &gsend, &gcounts)?;
            drop(gsend);
            let ng = ghosts.len() / w;
            s.extend(ghosts.chunks_exact(w).map(|r| [r[0], r[1], r[2]]));
            qa.extend(ghosts.chunks_exact(w).map(|r| r[3]));
            if with_ids {
                gid.extend(ghosts.chunks_exact(w).map(|r| r[REC] as u32));
            }
            let r: Vec<[f64; 3]> = s.iter().map(|&v| bx.cart(v)).collect();
            let real = &mut self.real;
            let th = &self.threads;
            // the coincidence check lets through the coincident fully excluded pairs (by
            // global id) that the exclusion stage found among this rank's home charges
            let allowed = xo.as_ref().map_or(&self.no_excl, |x| &x.allowed);
            real.global_ids = std::mem::take(&mut gid);
            let local = (|| -> Result<[f64; 6]> {
                crate::mpi::fail_point("ewald.execute.real")?;
                let mut p = vec![0.0f64; na + ng];
                let mut f = vec![0.0f64; if want_field { 3 * (na + ng) } else { 0 }];
                // the ghosts from na on: W_AA + ½W_AG (module docs)
                let v = real.compute(&bx, &s, &r, &qa, na, th, &mut p, if want_field { Some(&mut f[..]) } else { None }, virial,
                                     allowed)?;
                phi_a.copy_from_slice(&p[..na]);
                if want_field {
                    f_a.copy_from_slice(&f[..3 * na]);
                }
                Ok(v)
            })();
            real.global_ids = Vec::new();
            vir = comm.agree(local)?;
            s.truncate(na);
            qa.truncate(na);
        }
        let t1 = Instant::now();
        // 3–5. k-space
        if let (true, Some(mesh)) = (self.parts.kspace, &mut self.mesh) {
            let mut pk = vec![0.0f64; na];
            let mut fk = vec![0.0f64; if want_field { 3 * na } else { 0 }];
            let slab = dec.slabs[me];
            // (errors agreed inside, the interpolation's too)
            let vk = mesh.compute(comm, slab, &bx, &s, &qa, &self.threads, &mut pk, if want_field { Some(&mut fk[..]) } else { None },
                                  virial)?;
            for (a, b) in vir.iter_mut().zip(&vk) {
                *a += b;
            }
            for (a, b) in phi_a.iter_mut().zip(&pk) {
                *a += b;
            }
            for (a, b) in f_a.iter_mut().zip(&fk) {
                *a += b;
            }
        }
        if let Some(x) = xo {
            for (a, b) in vir.iter_mut().zip(&x.vir) {
                *a += b;
            }
            for (a, b) in phi_a.iter_mut().zip(&x.phi) {
                *a += b;
            }
            for (a, b) in f_a.iter_mut().zip(&x.field) {
                *a += b;
            }
        }
        let t2 = Instant::now();
        self.setup.params.real_s = (t1 - t0).as_secs_f64();
        self.setup.params.kspace_s = (t2 - t1).as_secs_f64();
        // self and background terms
        let xi = self.setup.chosen.xi;
        let sb = if self.parts.self_bg { 1.0 } else { 0.0 };
        let c_self = sb * 2.0 * xi / std::f64::consts::PI.sqrt();
        let phi_bg = -sb * std::f64::consts::PI * qtot[0] / (bx.volume * xi * xi);
        let u_bg = 0.5 * qtot[0] * phi_bg;
        let mut red = [0.0f64; 7];
        for i in 0..na {
            phi_a[i] += -c_self * qa[i] + phi_bg;
            red[0] += qa[i] * phi_a[i];
        }
        red[1..].copy_from_slice(&vir);
        comm.allreduce_f64(&mut red, Op::Sum)?;
        let mut u = [0.5 * red[0]];
        let mut w9 = if virial { virial_tensor(&std::array::from_fn(|c| red[1 + c]), u_bg) } else { [0.0; 9] };
        // 6. results back to the ranks that passed the charges
        let mut res = comm.agree(try_zeroed_vec::<f64>(REC * na, "distributed Ewald result buffer"))?;
        for i in 0..na {
            res[REC * i] = phi_a[i];
            if want_field {
                res[REC * i + 1..REC * i + 4].copy_from_slice(&f_a[3 * i..3 * i + 3]);
            }
        }
        drop((phi_a, f_a, s, qa));
        let (back, _) = exchange(comm, REC, &res, &from)?;
        drop(res);
        // back to the caller's units, checked on every rank before anything is written
        let e = self.setup.scale_e;
        let local = (|| -> Result<(Vec<f64>, Vec<f64>)> {
            let mut p = vec![0.0f64; n];
            let mut f = vec![0.0f64; if want_field { 3 * n } else { 0 }];
            for slot in 0..n {
                let i = perm[slot];
                let r = &back[REC * slot..REC * slot + REC];
                p[i] = r[0];
                if want_field {
                    f[3 * i..3 * i + 3].copy_from_slice(&r[1..4]);
                }
            }
            to_caller_units(e, eq, phi.is_some().then_some(&mut p[..]), want_field.then_some(&mut f[..]),
                            energy.then_some(&mut u[0]), virial.then_some(&mut w9))?;
            if !energy {
                u[0] = 0.0;
            }
            Ok((p, f))
        })();
        let (p, f) = comm.agree(local)?;
        if let Some(out) = phi {
            out.copy_from_slice(&p);
        }
        if let Some(out) = field {
            out.copy_from_slice(&f);
        }
        if self.opts.debug > 0 {
            eprintln!(
                "[farfield ewald mpi] rank {me}: {n} charges, {na} at home: real {:.3} ms, k-space {:.3} ms, U = {:.10e}",
                1e3 * self.setup.params.real_s,
                1e3 * self.setup.params.kspace_s,
                u[0]
            );
        }
        Ok(EwaldResult { energy: u[0], virial: w9 })
    }

    /// [`DistEwaldPlan::execute_with`] with the energy requested.
    pub fn execute(&mut self, xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>, virial: bool)
                   -> Result<EwaldResult> {
        self.execute_with(xyz, q, phi, field, true, virial)
    }
}
