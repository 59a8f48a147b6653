//! Distributed free-space Poisson over MPI (cargo feature `mpi`): the three methods of
//! [`super`] with every grid split in slabs along the slowest axis (z in 3D, y in 2D), no rank
//! holding a whole grid (Mayani et al. 2025 §3 distribute the same steps over IPPL's layouts;
//! here the transforms are FFTW-MPI's, [`crate::mpi::fft`]).
//!
//! # Data layout
//! The caller's grid (`n = [n_x, n_y(, n_z)]`, x fastest) is split in slabs of whole
//! z-planes (y-rows in 2D) as FFTW-MPI's `fftw_mpi_local_size_many` splits the physical grid
//! (blocks of `⌈n_s/K⌉` planes, the last ranks possibly holding fewer or none):
//! [`DistPoissonPlan::local_slab`] gives this rank's `(start, count)`. Each rank passes its
//! slab of ρ (`count · Π_{d<s} n_d` values, x fastest, the plane `start` first) and receives
//! its slab of φ and of `E` (component-major over the slab: `e[idx + n_local·d]`).
//!
//! # Steps (per execute)
//! 1. The slabs of ρ go to the ranks holding those planes of the doubled grid `2n` (one
//!    `MPI_Alltoallv` of whole planes; the doubled grid is FFTW-MPI's own slab decomposition
//!    of `2n_s` planes, so the zero padding costs no communication).
//! 2. r2c of the doubled grid with transposed output, multiplication by the kernel's spectrum
//!    (held in the same transposed layout), spectral derivative per field component, c2r with
//!    transposed input (FFTW-MPI's two all-to-all transposes per transform).
//! 3. The physical planes go back to their owners (one `MPI_Alltoallv` per output).
//! 4. Energy, largest |φ| and |E| are reduced over the communicator (`MPI_Allreduce`), so
//!    every rank makes the same scaling and overflow decisions as the single-process plan.
//!
//! # Kernel precomputation
//! Hockney: every rank evaluates the mirrored Green's function on its own doubled slab.
//! Vico: the `P`-point precomputation grid is a distributed c2r of FFTW-MPI; Vico-DCT a
//! distributed DCT-I on `P/2 + 1` points per axis. Each rank then receives only the planes of
//! the kernel table `K(o·h)`, `o_s ≤ n_s`, that its doubled slab mirrors to (one
//! `MPI_Alltoallv`). Results equal the single-process plan's to rounding (≤ 1e-12 relative,
//! tested under `mpirun -np 1…4`).
//!
//! # Failures
//! Every local step that can fail (argument checks, buffers, the Vico precomputation's
//! buffers and plans) ends in [`Comm::agree`] before the next collective: a failure on one
//! rank is the same status on every rank, and no rank is left waiting in a collective. The
//! hidden test hook [`crate::mpi::inject_failure`] fails `poisson.makeplan`,
//! `poisson.kernel_table` or `poisson.execute` on one rank (`tests/mpi_poisson.rs`).
//!
//! # Memory per rank
//! `≈ 1/K` of the single-process figure: the doubled real grid `16·A`, its spectrum `16·A`,
//! the kernel spectrum `8·A` (`A` = FFTW-MPI's `alloc_local` complex elements, `≈ Π 2n_d/(2K)`
//! plus FFTW's block rounding and row padding) and one physical slab (the outputs before
//! scaling; the plane exchanges use the spectrum buffers as scratch); the Vico
//! precomputation grid is distributed the same way ([`DistPoissonPlan::memory`]).
//!
//! # Scaling
//! Slabs limit the useful rank count to `2n_s` (FFT) and `n_s` (the caller's slabs); ranks past
//! that hold empty slabs and still join every collective. Per execute each rank sends
//! `O(Π 2n_d / K)` values in the two FFT transposes (each an all-to-all of `K²` messages) plus
//! its physical slab twice; at 1,000 ranks the all-to-all message count and the slab limit stop
//! scaling first — a pencil decomposition (e.g. 2D process grids as in P3DFFT/heFFTe) would
//! lift the rank limit to `2n_s · 2n_y`.

use super::field::freq_no_nyquist;
use super::{hockney, Geom, Method, PoissonOpts, Setup, FFTW_HEADROOM_BYTES};
use crate::error::{try_zeroed_vec, Error, Result};
use crate::fft::AlignedVec;
use crate::mpi::fft::{as_real, c2r_once, dct1_once, local_slab, R2cPair, Slab};
use crate::mpi::{Comm, Op};
use crate::scale::{check_scaled, max_abs, pow2};
use crate::threads::Threads;
use num_complex::Complex64;
use std::f64::consts::PI;

/// Memory of one rank of a distributed plan (bytes, as allocated).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DistMemory {
    /// Held after planning: doubled real slab, its spectrum, the kernel spectrum and one
    /// physical slab.
    pub plan_bytes: usize,
    /// Further bytes once a field has been requested (a second spectrum and the field slab).
    pub field_bytes: usize,
    /// Transient during planning: this rank's part of the Vico precomputation grid and of the
    /// kernel table planes it receives (0 for Hockney).
    pub precompute_bytes: usize,
}

/// A distributed free-space Poisson plan (see the module documentation). Collective: every
/// rank of the communicator makes, executes and drops it in the same order.
pub struct DistPoissonPlan {
    method: Method,
    geom: Geom,
    opts: PoissonOpts,
    comm: Comm,
    exec: Threads,
    scale_exp: i32,
    fft: R2cPair,
    /// Physical slab of every rank.
    phys: Vec<Slab>,
    /// Doubled real slab of every rank.
    dbl: Vec<Slab>,
    green_hat: AlignedVec<f64>,
    work_r: AlignedVec<f64>,
    work_c: AlignedVec<Complex64>,
    work_f: Option<AlignedVec<Complex64>>,
    /// φ' on this rank's physical slab (unscaled), then the field components.
    phys_scratch: Vec<f64>,
    field_scratch: Option<Vec<f64>>,
    mem: DistMemory,
}

impl std::fmt::Debug for DistPoissonPlan {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistPoissonPlan")
            .field("method", &self.method)
            .field("geom", &self.geom)
            .field("rank", &self.comm.rank())
            .field("size", &self.comm.size())
            .field("slab", &self.phys[self.comm.rank()])
            .finish_non_exhaustive()
    }
}

/// Row-major sizes of the used axes of `v` (slowest first).
fn row_major(dim: usize, v: [usize; 3]) -> Vec<usize> {
    v[..dim].iter().rev().copied().collect()
}

/// Planes `a ∩ b` as a range (empty when disjoint).
fn overlap(a: std::ops::Range<usize>, b: std::ops::Range<usize>) -> std::ops::Range<usize> {
    let s = a.start.max(b.start);
    s..a.end.min(b.end).max(s)
}

/// Encodes the plan arguments for the collective consistency check.
fn signature(method: Method, n: &[usize], h: &[f64], opts: &PoissonOpts) -> Vec<u64> {
    let mut v = vec![method as u64, n.len() as u64, h.len() as u64, opts.vico_factor.to_bits(), opts.fftw_flags as u64];
    for d in 0..3 {
        v.push(n.get(d).map_or(0, |&x| x as u64));
        v.push(h.get(d).map_or(0, |x| x.to_bits()));
    }
    v
}

impl DistPoissonPlan {
    /// Makes a distributed plan on `comm` (every rank passes the same arguments) for the grid
    /// `n` with spacings `h` (as [`super::PoissonPlan::new`]); `opts.nthreads` threads per rank.
    ///
    /// Errors: those of [`super::PoissonPlan::new`], on every rank alike; [`Error::InvalidArg`]
    /// on every rank when the ranks passed different methods, sizes, spacings or options
    /// (a collective check) or when another rank failed to allocate; [`Error::Internal`] (MPI).
    pub fn new(comm: Comm, method: Method, n: &[usize], h: &[f64], opts: &PoissonOpts) -> Result<DistPoissonPlan> {
        comm.check_same(&signature(method, n, h, opts), "the Poisson plan arguments (method, sizes, spacings, options)")?;
        let setup = Setup::new(method, n, h, opts)?;
        let exec = comm.agree(Threads::new(opts.nthreads))?;
        let nthreads = exec.count();
        let Setup { geom, scale_exp, l, precompute } = setup;
        let dim = geom.dim;
        let rm2 = row_major(dim, geom.n2);
        let (real_slab, _, alloc) = R2cPair::sizes(&rm2, &comm)?;
        let (phys_slab, _) = local_slab(&row_major(dim, geom.n), &comm)?;
        let gather = |s: Slab| -> Result<Vec<Slab>> {
            let v = comm.allgather_i64(&[s.start as i64, s.n as i64])?;
            Ok(v.chunks(2).map(|c| Slab { start: c[0] as usize, n: c[1] as usize }).collect())
        };
        let dbl = gather(real_slab)?;
        let phys = gather(phys_slab)?;
        let plane = plane_len(&geom);
        let bufs = (|| -> Result<_> {
            crate::mpi::fail_point("poisson.makeplan")?;
            crate::fft::fftw_headroom(FFTW_HEADROOM_BYTES, "the distributed Poisson plan")?;
            let work_r = AlignedVec::<f64>::zeroed(2 * alloc, "distributed Poisson doubled slab")?;
            let work_c = AlignedVec::<Complex64>::zeroed(alloc, "distributed Poisson spectrum slab")?;
            let green_hat = AlignedVec::<f64>::zeroed(alloc, "distributed Poisson kernel spectrum")?;
            let phys_scratch = try_zeroed_vec(phys_slab.n * plane, "distributed Poisson potential slab")?;
            Ok((work_r, work_c, green_hat, phys_scratch))
        })();
        let (mut work_r, mut work_c, mut green_hat, phys_scratch) = comm.agree(bufs)?;
        let fft = comm.agree(R2cPair::new(&rm2, &comm, opts.fftw_flags, nthreads, &mut work_r, &mut work_c))?;

        // Kernel on this rank's doubled slab, mirrored.
        let mut precompute_bytes = 0;
        match method {
            Method::Hockney => fill_slab(&geom, &exec, &mut work_r, real_slab, hockney::kernel(&geom)),
            Method::Vico | Method::VicoDct => {
                let (table, bytes) = comm.agree(kernel_table(&geom, &comm, method, l, precompute, nthreads, &dbl))?;
                precompute_bytes = bytes;
                fill_slab(&geom, &exec, &mut work_r, real_slab, |o| table.get(o));
            }
        }
        fft.r2c(&mut work_r, &mut work_c);
        let m2: f64 = geom.dims2().iter().map(|&v| v as f64).product();
        let scale = geom.cell_volume() / m2;
        for (g, c) in green_hat.iter_mut().zip(work_c.iter()) {
            *g = c.re * scale;
        }
        if dim == 2 && fft.spectrum.start == 0 && fft.spectrum.n > 0 {
            // the zero mode is this rank's first element (see PoissonPlan::new for the constant)
            let ln_lambda = geom.ln_unit + if method == Method::Hockney { 0.0 } else { l.ln() };
            green_hat[0] -= ln_lambda / (2.0 * PI) * geom.cell_volume();
        }
        let bad = green_hat.iter().position(|v| !v.is_finite());
        comm.agree(match bad {
            Some(i) => Err(Error::Internal(format!("Poisson kernel spectrum [{i}] = {:e} is not finite", green_hat[i]))),
            None => Ok(()),
        })?;
        let mem = DistMemory {
            plan_bytes: 8 * work_r.len() + 16 * work_c.len() + 8 * green_hat.len() + 8 * phys_scratch.len(),
            field_bytes: 16 * alloc + 8 * dim * phys_slab.n * plane,
            precompute_bytes,
        };
        if opts.debug > 0 {
            eprintln!(
                "farfield poisson (rank {} of {}): {method:?} dim {dim} n {:?} slab {:?} doubled slab {:?} alloc {alloc}; \
                 memory: plan {} B, field +{} B, precompute {} B",
                comm.rank(), comm.size(), &geom.n[..dim], phys_slab, real_slab, mem.plan_bytes, mem.field_bytes,
                mem.precompute_bytes
            );
        }
        Ok(DistPoissonPlan {
            method, geom, opts: opts.clone(), comm, exec, scale_exp, fft, phys, dbl, green_hat, work_r, work_c,
            work_f: None, phys_scratch, field_scratch: None, mem,
        })
    }

    /// This rank's slab of the caller's grid: `(start, count)` planes of the slowest axis (z in
    /// 3D, y in 2D); ρ and φ hold `count · Π_{d<dim−1} n_d` values ([`DistPoissonPlan::local_npts`]).
    pub fn local_slab(&self) -> (usize, usize) {
        let s = self.phys[self.comm.rank()];
        (s.start, s.n)
    }
    /// Number of grid values on this rank (length of its ρ and φ; the field has `dim` times as
    /// many).
    pub fn local_npts(&self) -> usize {
        self.phys[self.comm.rank()].n * plane_len(&self.geom)
    }
    /// The method of this plan.
    pub fn method(&self) -> Method {
        self.method
    }
    /// Dimension (2 or 3).
    pub fn dim(&self) -> usize {
        self.geom.dim
    }
    /// Global grid sizes `[n_x, n_y, n_z]`.
    pub fn n(&self) -> [usize; 3] {
        self.geom.n
    }
    /// This rank and the number of ranks.
    pub fn rank_size(&self) -> (usize, usize) {
        (self.comm.rank(), self.comm.size())
    }
    /// Memory of this rank (see [`DistMemory`]).
    pub fn memory(&self) -> DistMemory {
        self.mem
    }
    /// Every rank returns an error when any rank's `r` is one (one collective, which every
    /// rank must call; the failing ranks get their own error, the others
    /// [`Error::InvalidArg`] naming the first failing rank).
    pub fn agree<T>(&self, r: Result<T>) -> Result<T> {
        self.comm.agree(r)
    }
    /// The plan's options.
    pub fn opts(&self) -> &PoissonOpts {
        &self.opts
    }

    /// Solves for one right-hand side on this rank's slab (collective; see
    /// [`super::PoissonPlan::execute_into`] for units and the field): `rho` and `phi` hold
    /// [`DistPoissonPlan::local_npts`] values, `efield` `dim` times as many (component-major
    /// over the slab). The energy, when requested, is the total over all ranks (the same value
    /// on every rank).
    ///
    /// Errors: [`Error::InvalidArg`] (a buffer length, on the rank that passed it; the other
    /// ranks get [`Error::InvalidArg`] naming that rank), [`Error::NonFinite`] (ρ, when
    /// `check_input`), [`Error::Range`] (an output not representable), [`Error::Alloc`],
    /// [`Error::Internal`] (MPI). On error no output is written.
    pub fn execute_into(&mut self, rho: &[f64], phi: &mut [f64], efield: Option<&mut [f64]>,
                        energy: Option<&mut f64>) -> Result<()> {
        let g = self.geom.clone();
        let me = self.comm.rank();
        let my_phys = self.phys[me];
        let my_dbl = self.dbl[me];
        let plane = plane_len(&g);
        let npl = my_phys.n * plane;
        let want_field = efield.is_some();
        let local = (|| -> Result<()> {
            crate::mpi::fail_point("poisson.execute")?;
            if rho.len() != npl || phi.len() != npl {
                return Err(Error::InvalidArg(format!(
                    "rho has {} and phi {} values; this rank's slab (planes {}..{}) has {npl}",
                    rho.len(), phi.len(), my_phys.start, my_phys.start + my_phys.n
                )));
            }
            if let Some(e) = &efield {
                if e.len() != g.dim * npl {
                    return Err(Error::InvalidArg(format!("efield has {} values, expected dim·local_npts = {}", e.len(), g.dim * npl)));
                }
            }
            if self.opts.check_input {
                if let Some(i) = rho.iter().position(|v| !v.is_finite()) {
                    let gi = i + my_phys.start * plane;
                    let (x, y, z) = (gi % g.n[0], (gi / g.n[0]) % g.n[1], gi / (g.n[0] * g.n[1]));
                    return Err(Error::NonFinite(format!("rho[{i}] (global node {gi}: i={x}, j={y}, k={z}) = {}", rho[i])));
                }
            }
            if want_field && self.work_f.is_none() {
                self.work_f = Some(AlignedVec::zeroed(self.work_c.len(), "distributed Poisson field spectrum")?);
            }
            if want_field && self.field_scratch.is_none() {
                self.field_scratch = Some(try_zeroed_vec(g.dim * npl, "distributed Poisson field slab")?);
            }
            crate::fft::fftw_headroom(FFTW_HEADROOM_BYTES, "the distributed Poisson transforms")
        })();
        self.comm.agree(local)?;

        // ρ̃ = ρ·2^{-j} with the global max|ρ̃| in [1, 2).
        let mut rmax = [rho.iter().fold(0f64, |a, &v| a.max(v.abs()))];
        self.comm.allreduce_f64(&mut rmax, Op::Max)?;
        let j = if rmax[0] > 0.0 && rmax[0].is_finite() { libm::ilogb(rmax[0]) } else { 0 };

        // 1. physical slabs → doubled slabs
        let ns = g.n[g.dim - 1];
        let k = self.comm.size();
        let (mut sc, mut sd, mut rc, mut rd) = (vec![0; k], vec![0; k], vec![0; k], vec![0; k]);
        for r in 0..k {
            let o = overlap(my_phys.range(), self.dbl[r].range());
            sc[r] = o.len();
            sd[r] = if o.is_empty() { 0 } else { o.start - my_phys.start };
            let o = overlap(self.phys[r].range(), my_dbl.range());
            rc[r] = o.len();
            rd[r] = if o.is_empty() { 0 } else { o.start - my_dbl.start };
        }
        // the spectrum buffer is free until the r2c: it receives the physical planes (it holds
        // at least the doubled slab's 2·alloc doubles, more than the planes it can receive)
        self.comm.alltoallv_planes(plane, rho, &sc, &sd, as_real(&mut self.work_c), &rc, &rd)?;
        let (xr, wr) = (as_real(&mut self.work_c), &mut self.work_r);
        unpack(&g, &self.exec, xr, wr, my_dbl, ns, j);

        // 2. convolution
        self.fft.r2c(&mut self.work_r, &mut self.work_c);
        self.exec.chunks2(&mut self.work_c, 4096, &self.green_hat, 4096, |_, c, gh| {
            for (ci, gi) in c.iter_mut().zip(gh) {
                *ci *= *gi;
            }
        });
        // 3. back to the physical slabs (the send/receive pattern of step 1, reversed)
        let e_phi = 2 * self.scale_exp + j;
        let e_field = self.scale_exp + j;
        let mut maxes = [0f64; 2];
        if want_field {
            let wf = self.work_f.as_mut().expect("allocated above");
            let fs = self.field_scratch.as_mut().expect("allocated above");
            for d in 0..g.dim {
                derivative(&g, &self.exec, self.fft.spectrum, &self.work_c, wf, d);
                self.fft.c2r(wf, &mut self.work_r);
                // the c2r consumed wf: it carries the packed planes
                let xr = as_real(wf);
                pack(&g, &self.exec, &self.work_r, xr, my_dbl, ns);
                let part = &mut fs[d * npl..(d + 1) * npl];
                self.comm.alltoallv_planes(plane, xr, &rc, &rd, part, &sc, &sd)?;
                maxes[1] = max_abs(maxes[1], part);
            }
        }
        self.fft.c2r(&mut self.work_c, &mut self.work_r);
        let xr = as_real(&mut self.work_c);
        pack(&g, &self.exec, &self.work_r, xr, my_dbl, ns);
        self.comm.alltoallv_planes(plane, xr, &rc, &rd, &mut self.phys_scratch, &sc, &sd)?;
        maxes[0] = max_abs(0.0, &self.phys_scratch);

        // 4. global maxima and energy
        self.comm.allreduce_f64(&mut maxes, Op::Max)?;
        check_scaled("phi", maxes[0], e_phi)?;
        if want_field {
            check_scaled("efield", maxes[1], e_field)?;
        }
        let u = if energy.is_some() {
            let mut s = [0.5 * g.cell_volume() * rho.iter().zip(self.phys_scratch.iter()).map(|(&r, &p)| pow2(r, -j) * p).sum::<f64>()];
            self.comm.allreduce_f64(&mut s, Op::Sum)?;
            let ex = (g.dim as i32 + 2) * self.scale_exp + 2 * j;
            check_scaled("energy", s[0].abs(), ex)?;
            Some(libm::scalbn(s[0], ex))
        } else {
            None
        };
        for (d, &v) in phi.iter_mut().zip(self.phys_scratch.iter()) {
            *d = pow2(v, e_phi);
        }
        if let Some(e) = efield {
            let fs = self.field_scratch.as_ref().expect("allocated above");
            for (o, &v) in e.iter_mut().zip(fs.iter()) {
                *o = pow2(v, e_field);
            }
        }
        if let (Some(dst), Some(u)) = (energy, u) {
            *dst = u;
        }
        Ok(())
    }
}

/// Values per plane of the caller's grid: `n_x·n_y` in 3D, `n_x` in 2D.
fn plane_len(g: &Geom) -> usize {
    g.n[..g.dim - 1].iter().product()
}

/// Rows per plane of the doubled grid (`2n_y` in 3D, 1 in 2D) and the padded row length
/// `2(n_x + 1)` of FFTW's in-place r2c layout (`2n_x` values and two of padding).
fn dbl_rows(g: &Geom) -> (usize, usize) {
    (if g.dim == 3 { g.n2[1] } else { 1 }, g.n2[0] + 2)
}

/// Global axis coordinates of row `r` of local doubled plane `p` (slab from `start`).
fn row_coords(g: &Geom, start: usize, p: usize, r: usize) -> (usize, usize) {
    if g.dim == 3 {
        (r, start + p)
    } else {
        (start + p, 0)
    }
}

/// Writes the even kernel `f(|offset|)` on this rank's doubled slab (padding zero).
fn fill_slab<F>(g: &Geom, exec: &Threads, buf: &mut [f64], slab: Slab, f: F)
where
    F: Fn([usize; 3]) -> f64 + Sync + Send,
{
    let (rows, px) = dbl_rows(g);
    let [n2x, n2y, n2z] = g.n2;
    let used = slab.n * rows * px;
    exec.chunks(&mut buf[..used], px, |row, r| {
        let (y, z) = row_coords(g, slab.start, row / rows, row % rows);
        let o = [0, y.min(n2y - y), z.min(n2z - z)];
        for (i, v) in r[..n2x].iter_mut().enumerate() {
            *v = f([i.min(n2x - i), o[1], o[2]]);
        }
        r[n2x..].fill(0.0);
    });
}

/// Zero-pads the received physical planes (`xbuf`, packed, scaled by `2^{-j}` here) onto this
/// rank's doubled slab.
fn unpack(g: &Geom, exec: &Threads, xbuf: &[f64], buf: &mut [f64], slab: Slab, ns: usize, j: i32) {
    let (rows, px) = dbl_rows(g);
    let (nx, prow) = (g.n[0], if g.dim == 3 { g.n[1] } else { 1 });
    let used = slab.n * rows * px;
    exec.chunks(&mut buf[..used], px, |row, r| {
        let (p, y) = (row / rows, row % rows);
        if slab.start + p < ns && y < prow {
            let s = nx * (y + prow * p);
            for (d, &v) in r[..nx].iter_mut().zip(&xbuf[s..s + nx]) {
                *d = pow2(v, -j);
            }
            r[nx..].fill(0.0);
        } else {
            r.fill(0.0);
        }
    });
}

/// Packs the physical part of this rank's doubled slab (planes `< ns`) into `xbuf`.
fn pack(g: &Geom, exec: &Threads, buf: &[f64], xbuf: &mut [f64], slab: Slab, ns: usize) {
    let (rows, px) = dbl_rows(g);
    let (nx, prow) = (g.n[0], if g.dim == 3 { g.n[1] } else { 1 });
    let np = slab.n.min(ns.saturating_sub(slab.start));
    exec.chunks(&mut xbuf[..np * prow * nx], nx, |row, r| {
        let (p, y) = (row / prow, row % prow);
        let s = px * (y + rows * p);
        r.copy_from_slice(&buf[s..s + nx]);
    });
}

/// `dst = −i k_d · src` on this rank's transposed half spectrum (see [`R2cPair`]): 3D
/// `[y_local][z][x_half]`, 2D `[x_half_local][y]`.
fn derivative(g: &Geom, exec: &Threads, spec: Slab, src: &[Complex64], dst: &mut [Complex64], d: usize) {
    let [n2x, n2y, n2z] = g.n2;
    let hx = n2x / 2 + 1;
    let dk = 2.0 * PI / (g.n2[d] as f64 * g.h[d]);
    let (inner, rows_per_slab) = if g.dim == 3 { (hx, n2z) } else { (n2y, 1) };
    let used = spec.n * rows_per_slab * inner;
    exec.chunks2(&mut dst[..used], inner, &src[..used], inner, |row, out, inp| {
        let (p, z) = (spec.start + row / rows_per_slab, row % rows_per_slab);
        // frequency of every element of the row, or one for the whole row
        let per_elem = (g.dim == 3 && d == 0) || (g.dim == 2 && d == 1);
        let row_k = match (g.dim, d) {
            (3, 1) => freq_no_nyquist(p, n2y),
            (3, _) => freq_no_nyquist(z, n2z),
            _ => freq_no_nyquist(p, n2x),
        };
        for (i, (o, s)) in out.iter_mut().zip(inp).enumerate() {
            let kk = dk * if per_elem { freq_no_nyquist(i, if g.dim == 3 { n2x } else { n2y }) } else { row_k };
            *o = Complex64::new(s.im * kk, -s.re * kk);
        }
    });
}

/// The Vico kernel table planes this rank's doubled slab needs.
struct SlabTable {
    /// Position of table plane `o_s` in `data` (`usize::MAX`: not held).
    pos: Vec<usize>,
    data: Vec<f64>,
    /// Values per table plane: `(n_x+1)(n_y+1)` in 3D, `n_x+1` in 2D.
    plane: usize,
    nx1: usize,
    scale: f64,
    dim: usize,
}

impl SlabTable {
    fn get(&self, o: [usize; 3]) -> f64 {
        let (os, oy) = if self.dim == 3 { (o[2], o[1]) } else { (o[1], 0) };
        self.data[self.pos[os] * self.plane + o[0] + self.nx1 * oy] * self.scale
    }
}

/// Table planes `o_s` (offsets along the slab axis) that the doubled slab `s` mirrors to.
fn needed(s: Slab, n2s: usize) -> Vec<usize> {
    let mut v: Vec<usize> = s.range().map(|k| k.min(n2s - k)).collect();
    v.sort_unstable();
    v.dedup();
    v
}

/// Computes the Vico kernel `K(o·h)` distributed (FFTW-MPI c2r of `Ĝ_L` on the `P` grid, or
/// DCT-I on `P/2+1` points) and gathers on each rank the planes its doubled slab needs.
/// Returns the table and the bytes this rank allocated for it.
#[allow(clippy::too_many_arguments)]
fn kernel_table(g: &Geom, comm: &Comm, method: Method, l: f64, p: [usize; 3], nthreads: usize, dbl: &[Slab])
                -> Result<(SlabTable, usize)> {
    let dim = g.dim;
    let dk = [0, 1, 2].map(|d| 2.0 * PI / (p[d] as f64 * g.h[d]));
    let hat = |k2: f64| super::green::vico_hat_log(dim, l, 0.0, k2.sqrt());
    // The source grid: (slab, row length, rows per plane, values), rows of x.
    let (src_slab, rowlen, rows, src, mut bytes) = if method == Method::Vico {
        let hx = p[0] / 2 + 1;
        let mut cd = row_major(dim, p);
        *cd.last_mut().expect("dim ≥ 2") = hx;
        let (slab, alloc) = local_slab(&cd, comm)?;
        // agreed: the c2r below is collective
        let (mut spec, mut real) = comm.agree((|| {
            crate::mpi::fail_point("poisson.kernel_table")?;
            Ok((AlignedVec::<Complex64>::zeroed(alloc, "distributed Vico precomputation spectrum")?,
                AlignedVec::<f64>::zeroed(2 * alloc, "distributed Vico precomputation grid")?))
        })())?;
        let rows = if dim == 3 { p[1] } else { 1 };
        for (row, r) in spec[..slab.n * rows * hx].chunks_mut(hx).enumerate() {
            let (pl, y) = (slab.start + row / rows, row % rows);
            let (ky, kz) = if dim == 3 {
                (dk[1] * super::vico::signed(y, p[1]), dk[2] * super::vico::signed(pl, p[2]))
            } else {
                (dk[1] * super::vico::signed(pl, p[1]), 0.0)
            };
            for (i, v) in r.iter_mut().enumerate() {
                let kx = dk[0] * i as f64;
                *v = Complex64::new(hat(kx * kx + ky * ky + kz * kz), 0.0);
            }
        }
        let bytes = 16 * spec.len() + 8 * real.len();
        c2r_once(&row_major(dim, p), comm, nthreads, &mut spec, &mut real)?;
        drop(spec);
        (slab, 2 * hx, rows, real, bytes)
    } else {
        let m = [0, 1, 2].map(|d| if d < dim { p[d] / 2 + 1 } else { 1 });
        let (slab, alloc) = local_slab(&row_major(dim, m), comm)?;
        // agreed: the DCT below is collective
        let mut buf = comm.agree(crate::mpi::fail_point("poisson.kernel_table")
            .and_then(|_| AlignedVec::<f64>::zeroed(alloc, "distributed Vico DCT grid")))?;
        let rows = if dim == 3 { m[1] } else { 1 };
        for (row, r) in buf[..slab.n * rows * m[0]].chunks_mut(m[0]).enumerate() {
            let (pl, y) = (slab.start + row / rows, row % rows);
            let (ky, kz) = if dim == 3 { (dk[1] * y as f64, dk[2] * pl as f64) } else { (dk[1] * pl as f64, 0.0) };
            for (i, v) in r.iter_mut().enumerate() {
                let kx = dk[0] * i as f64;
                *v = hat(kx * kx + ky * ky + kz * kz);
            }
        }
        let bytes = 8 * buf.len();
        dct1_once(&row_major(dim, m), comm, nthreads, &mut buf)?;
        (slab, m[0], rows, buf, bytes)
    };
    // Every rank's source slab, and the exchange of the needed planes.
    let v = comm.allgather_i64(&[src_slab.start as i64, src_slab.n as i64])?;
    let owners: Vec<Slab> = v.chunks(2).map(|c| Slab { start: c[0] as usize, n: c[1] as usize }).collect();
    let (nx1, ny1) = (g.n[0] + 1, if dim == 3 { g.n[1] + 1 } else { 1 });
    let plane = nx1 * ny1;
    let n2s = g.n2[dim - 1];
    let me = comm.rank();
    let k = comm.size();
    let mut send = Vec::new();
    let (mut sc, mut sd) = (vec![0; k], vec![0; k]);
    for (r, s) in dbl.iter().enumerate() {
        sd[r] = send.len() / plane.max(1);
        for o in needed(*s, n2s).into_iter().filter(|o| src_slab.range().contains(o)) {
            let base = rowlen * rows * (o - src_slab.start);
            for y in 0..ny1 {
                send.extend_from_slice(&src[base + rowlen * y..base + rowlen * y + nx1]);
            }
            sc[r] += 1;
        }
    }
    let mine = needed(dbl[me], n2s);
    let (mut rc, mut rd) = (vec![0; k], vec![0; k]);
    let mut at = 0;
    for (r, s) in owners.iter().enumerate() {
        rd[r] = at;
        rc[r] = mine.iter().filter(|o| s.range().contains(o)).count();
        at += rc[r];
    }
    let mut data = comm.agree(try_zeroed_vec(mine.len() * plane, "distributed Vico kernel table"))?;
    comm.alltoallv_planes(plane, &send, &sc, &sd, &mut data, &rc, &rd)?;
    bytes += 8 * (send.len() + data.len());
    let mut pos = vec![usize::MAX; g.n[dim - 1] + 1];
    for (i, &o) in mine.iter().enumerate() {
        pos[o] = i;
    }
    let vol: f64 = (0..dim).map(|d| p[d] as f64 * g.h[d]).product();
    Ok((SlabTable { pos, data, plane, nx1, scale: 1.0 / vol, dim }, bytes))
}
