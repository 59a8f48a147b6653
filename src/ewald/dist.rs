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
//! 6. **Reduction and return.** Energy and virial are summed over the communicator
//!    (`MPI_Allreduce`, with the total charge and the largest |q| reduced before); `φ` and `E`
//!    of each charge go back to the rank that passed it (the reverse of step 1).
//!
//! Results equal the single-process plan's to rounding (≤ 1e-12 relative, tested under
//! `mpirun -np 1…4` on JAC DHFR and a water box with several assignments of the charges).
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
//! would lift both. Not supported here: exclusions and scaled pairs (MD codes that distribute
//! use `Terms::KSpace` and correct their own excluded pairs in the pair loop, or give the
//! single-process plan the pairs), spectral Ewald and the direct sum (planning fails with
//! [`Error::NotSupported`]).

use super::box_::{wrap01, PeriodicBox};
use super::exclusions::Exclusions;
use super::influence::{add_virial, mode_of, spme_corr, theta_at};
use super::real_space::RealSpace;
use super::{erfc_accuracy, new_box, setup, to_caller_units, virial_tensor, EwaldOpts, EwaldParams, EwaldParts, EwaldResult, Method,
            NewBox, Setup};
use crate::error::{try_resize, try_zeroed_vec, Error, Result};
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
    let mut recv = try_zeroed_vec::<f64>(total * w, "distributed Ewald exchange buffer")?;
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
        let fft = R2cPair::new(&dims, comm, fftw, nthreads, &mut real, &mut spec)?;
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
        // 5. interpolation (local)
        if n == 0 {
            return Ok(vir);
        }
        let Some(spr) = &self.spreader else {
            return Err(Error::Internal("home charges on a rank without mesh planes".into()));
        };
        try_resize(&mut self.out, n, [0.0; 4], "SPME interpolation output")?;
        spr.interp_grad_real(ext, &mut self.out, threads)?;
        // E_α = −Σ_d ∂φ/∂u_d · K_d a*_dα
        let g: [[f64; 3]; 3] = [0, 1, 2].map(|d| [0, 1, 2].map(|a| nf[d] as f64 * bx.recip[d][a]));
        for i in 0..n {
            phi[i] = self.out[i][0];
        }
        if let Some(fl) = field {
            for i in 0..n {
                let o = self.out[i];
                for a in 0..3 {
                    fl[3 * i + a] = -(o[1] * g[0][a] + o[2] * g[1][a] + o[3] * g[2][a]);
                }
            }
        }
        Ok(vir)
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
}

impl DistEwaldPlan {
    /// Makes a distributed plan for up to `n_max` charges **on this rank** per execute (the
    /// parameters are chosen for the sum of `n_max` over the ranks) in the cell `cell` with
    /// relative RMS force accuracy `tol`, as [`super::EwaldPlan::new`]; `opts.nthreads` threads
    /// per rank. Only [`Method::Spme`]. Collective.
    ///
    /// Errors, on every rank: those of [`super::EwaldPlan::new`]; [`Error::NotSupported`]
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
        Ok(DistEwaldPlan { comm, n_max, n_total, opts: *opts, parts, setup: st, threads, dec, real, mesh, no_excl: Exclusions::default() })
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

    /// Changes the cell, as [`super::EwaldPlan::set_box`] (the same rule for keeping or
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

/// This rank's charges after validation: wrapped fractional positions and scaled charges.
struct Local {
    s: Vec<[f64; 3]>,
    q: Vec<f64>,
}

impl DistEwaldPlan {
    /// Checks this rank's arguments and wraps its charges (internal length unit; charges
    /// divided by `2^eq`). Errors as [`super::EwaldPlan::execute_with`] (local).
    fn prepare(&self, xyz: &[f64], q: &[f64], phi: Option<usize>, field: Option<usize>) -> Result<Local> {
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
        Ok(Local { s, q: q.to_vec() })
    }

    /// Evaluates, for this rank's `n = q.len()` charges at `xyz` (length `3n`), the requested
    /// results as [`super::EwaldPlan::execute_with`]: potentials (`phi`, length `n`), fields
    /// (`field`, length `3n`), and the energy and virial of **all** ranks' charges (the same
    /// on every rank). Collective: every rank calls it, with its own charges (possibly none).
    /// Outputs are written only on success. Errors, on every rank: those of
    /// [`super::EwaldPlan::execute_with`] on any rank (the failing rank's own error there, on
    /// the others [`Error::InvalidArg`] naming that rank; a coincident pair is named by the
    /// indices of the home rank's charges and ghosts), [`Error::Internal`] (MPI).
    pub fn execute_with(&mut self, xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>, energy: bool,
                        virial: bool) -> Result<EwaldResult> {
        let comm = &self.comm;
        let prep = self.prepare(xyz, q, phi.as_ref().map(|p| p.len()), field.as_ref().map(|f| f.len()));
        let mut loc = comm.agree(prep)?;
        let want_field = field.is_some();
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
        // 1. routing to the home ranks
        let dec = &self.dec;
        let mut counts = vec![0usize; k];
        let homes: Vec<usize> = loc.s.iter().map(|s| dec.home(s[2])).collect();
        for &h in &homes {
            counts[h] += 1;
        }
        let mut at = displs(&counts);
        let mut perm = vec![0usize; n];
        let mut send = comm.agree(try_zeroed_vec::<f64>(REC * n, "distributed Ewald routing buffer"))?;
        for i in 0..n {
            let slot = at[homes[i]];
            at[homes[i]] += 1;
            perm[slot] = i;
            let s = loc.s[i];
            send[REC * slot..REC * slot + REC].copy_from_slice(&[s[0], s[1], s[2], loc.q[i]]);
        }
        drop(loc);
        let (home, from) = exchange(comm, REC, &send, &counts)?;
        drop(send);
        let na = home.len() / REC;
        let mut s: Vec<[f64; 3]> = home.chunks_exact(REC).map(|r| [r[0], r[1], r[2]]).collect();
        let mut qa: Vec<f64> = home.chunks_exact(REC).map(|r| r[3]).collect();
        drop(home);
        let t0 = Instant::now();
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
            let mut gsend = Vec::with_capacity(REC * gcounts.iter().sum::<usize>());
            for list in &gdest {
                for &i in list {
                    let i = i as usize;
                    gsend.extend_from_slice(&[s[i][0], s[i][1], s[i][2], qa[i]]);
                }
            }
            drop(gdest);
            let (ghosts, _) = exchange(comm, REC, &gsend, &gcounts)?;
            drop(gsend);
            let ng = ghosts.len() / REC;
            s.extend(ghosts.chunks_exact(REC).map(|r| [r[0], r[1], r[2]]));
            qa.extend(ghosts.chunks_exact(REC).map(|r| r[3]));
            let r: Vec<[f64; 3]> = s.iter().map(|&v| bx.cart(v)).collect();
            let real = &mut self.real;
            let th = &self.threads;
            let no_excl = &self.no_excl;
            let local = (|| -> Result<[f64; 6]> {
                let mut p = vec![0.0f64; na + ng];
                let mut f = vec![0.0f64; if want_field { 3 * (na + ng) } else { 0 }];
                // the ghosts from na on: W_AA + ½W_AG (module docs)
                let v = real.compute(&bx, &s, &r, &qa, na, th, &mut p, if want_field { Some(&mut f[..]) } else { None }, virial,
                                     no_excl)?;
                phi_a.copy_from_slice(&p[..na]);
                if want_field {
                    f_a.copy_from_slice(&f[..3 * na]);
                }
                Ok(v)
            })();
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
            let vk = mesh.compute(comm, slab, &bx, &s, &qa, &self.threads, &mut pk, if want_field { Some(&mut fk[..]) } else { None },
                                  virial)?;
            for c in 0..6 {
                vir[c] += vk[c];
            }
            for (a, b) in phi_a.iter_mut().zip(&pk) {
                *a += b;
            }
            for (a, b) in f_a.iter_mut().zip(&fk) {
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
        let mut w = if virial { virial_tensor(&std::array::from_fn(|c| red[1 + c]), u_bg) } else { [0.0; 9] };
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
                            energy.then_some(&mut u[0]), virial.then_some(&mut w))?;
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
        Ok(EwaldResult { energy: u[0], virial: w })
    }

    /// [`DistEwaldPlan::execute_with`] with the energy requested.
    pub fn execute(&mut self, xyz: &[f64], q: &[f64], phi: Option<&mut [f64]>, field: Option<&mut [f64]>, virial: bool)
                   -> Result<EwaldResult> {
        self.execute_with(xyz, q, phi, field, true, virial)
    }
}
