//! Free-space Poisson C API (`farfield_poisson_*`): solves `∇²φ = −ρ` on a uniform 2D/3D grid
//! with free-space boundary conditions (see [`crate::poisson`] for the methods and accuracy).
//!
//! Lifecycle: `farfield_poisson_default_opts(&o, sizeof o)` → `farfield_poisson_makeplan(method, dim, n,
//! h, &plan, &o)` → `farfield_poisson_execute(plan, rho, phi, efield, energy)` any number of
//! times → `farfield_poisson_destroy(plan)`.
//!
//! Grid convention: values at the **nodes** `origin + (i h_x, j h_y, k h_z)`, `0 ≤ i < n_x` …,
//! stored **x fastest**, `rho[i + n_x (j + n_y k)]`, `double`. The caller's origin does not
//! matter. Units are the caller's (`φ` in units of `ρ·length²`; multiply by `1/ε₀` or a
//! Coulomb constant as needed).
//!
//! Limits (every method): `n_d ≥ 1`, `2n_d ≤ 2³¹ − 1`, doubled grid `Π 2n_d ≤ 2⁴⁰`; spacings
//! finite and `> 0` at any magnitude (subnormal included) with `h_max/h_min ≤ 1e150`. Vico
//! methods: `1 < vico_factor ≤ 4` and the precomputation grid `Π P_d ≤ 512 · Π 2n_d` (flat or
//! anisotropic grids need `P_d ≈ 1.5 n_d + L/h_d`, see `farfield_poisson_estimate`). The
//! solve runs in scaled units (a power of two near the spacings' geometric mean) and rescales
//! exactly, so results are right at any scale where they are representable; an output that
//! would overflow, or underflow below `2.2e-308` while not zero, is `FARFIELD_ERR_RANGE`.

use super::abi::{self, versioned};
use super::{check_outputs_disjoint, destroy_boxed, guard, lock, non_null, plan_handle, region, slice_in, slice_out};
use crate::error::{Error, Result};
use crate::fft::FFTW_ESTIMATE;
use crate::poisson::{Method, PoissonOpts, PoissonPlan};
use std::ffi::c_int;
use std::sync::Mutex;

/// Hockney–Eastwood method (second order; doubled grid). Value of `method` in
/// `farfield_poisson_makeplan`.
pub const FARFIELD_POISSON_HOCKNEY: c_int = 0;
/// Vico–Greengard method, kernel precomputed on the grid `P_d = max(4n_d, ≈1.5 n_d + L/h_d)`
/// (spectral accuracy for smooth sources; planning needs `8·Π P_d + 16·(P_x/2+1)·Π_{d>0} P_d`
/// bytes temporarily, `≈ 16·Π 4n_d` only for near-cubic cells and boxes: use
/// `farfield_poisson_estimate`).
pub const FARFIELD_POISSON_VICO: c_int = 1;
/// Vico–Greengard method, kernel precomputed by a DCT-I on `P_d/2 + 1` points per axis
/// (`2n_d + 1` for near-cubic grids; same result as `FARFIELD_POISSON_VICO` to rounding,
/// temporary memory `8·Π (P_d/2+1)` bytes).
pub const FARFIELD_POISSON_VICO_DCT: c_int = 2;

/// Options of a Poisson plan (versioned: `struct_size` first, fields only ever appended, so a
/// program built against this header keeps working with later libraries of the same major
/// version). Fill with `farfield_poisson_default_opts(&o, sizeof o)` and then change fields.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(non_camel_case_types)]
pub struct farfield_poisson_opts {
    /// Size of the struct as the caller compiled it (`sizeof(farfield_poisson_opts)`), set by
    /// `farfield_poisson_default_opts`; the library reads only this many bytes.
    pub struct_size: usize,
    /// Threads for FFTW and the pointwise loops: 0 = all cores (default), 1 = the caller's
    /// thread only (no thread pool is created); must be in `[0, 1024]` (`FARFIELD_MAX_THREADS`).
    pub nthreads: i32,
    /// `> 0`: print plan sizes and timings to stderr (default 0).
    pub debug: i32,
    /// FFTW planner flags for the execute transforms (default `FFTW_ESTIMATE` = 64, as
    /// FINUFFT's `opts.fftw`; `FFTW_MEASURE` = 0); must be ≥ 0.
    pub fftw: i32,
    /// Non-zero (default 1): `execute` rejects NaN/Inf in `rho` with `FARFIELD_ERR_NONFINITE`.
    pub check_input: i32,
    /// Vico truncation radius factor: `L = vico_factor · √(Σ (n_d h_d)²)`, in `(1, 4]`
    /// (default 1.1; outside → `FARFIELD_ERR_INVALID_ARG`). Ignored by Hockney–Eastwood.
    pub vico_factor: f64,
}

/// Opaque Poisson plan (C: `farfield_poisson_plan`, a pointer to this). Concurrent `execute`
/// calls on one plan are serialised by its lock.
#[allow(non_camel_case_types)]
pub struct farfield_poisson_plan_s {
    inner: Mutex<Solver>,
}
plan_handle!(farfield_poisson_plan_s, Solver);

/// The solver behind a C plan: single-process, or distributed over MPI.
pub(crate) enum Solver {
    Serial(PoissonPlan),
    #[cfg(feature = "mpi")]
    Dist(crate::poisson::dist::DistPoissonPlan),
}

impl Solver {
    /// Values of ρ and φ held by this process.
    fn local_npts(&self) -> usize {
        match self {
            Solver::Serial(p) => p.npts(),
            #[cfg(feature = "mpi")]
            Solver::Dist(p) => p.local_npts(),
        }
    }
    fn dim(&self) -> usize {
        match self {
            Solver::Serial(p) => p.dim(),
            #[cfg(feature = "mpi")]
            Solver::Dist(p) => p.dim(),
        }
    }
    /// `(start, count)` planes of the slowest axis held by this process.
    fn local_slab(&self) -> (usize, usize) {
        match self {
            Solver::Serial(p) => (0, p.n()[p.dim() - 1]),
            #[cfg(feature = "mpi")]
            Solver::Dist(p) => p.local_slab(),
        }
    }
    /// A distributed plan makes every rank return an error when one rank's arguments failed
    /// (one collective, called by every rank); a serial plan passes `r` on.
    fn agree<T>(&self, r: Result<T>) -> Result<T> {
        match self {
            Solver::Serial(_) => r,
            #[cfg(feature = "mpi")]
            Solver::Dist(p) => p.agree(r),
        }
    }
    fn execute_into(&mut self, rho: &[f64], phi: &mut [f64], e: Option<&mut [f64]>, u: Option<&mut f64>) -> Result<()> {
        match self {
            Solver::Serial(p) => p.execute_into(rho, phi, e, u),
            #[cfg(feature = "mpi")]
            Solver::Dist(p) => p.execute_into(rho, phi, e, u),
        }
    }
}

/// Handle to a Poisson plan (`NULL` when none).
#[allow(non_camel_case_types)]
pub type farfield_poisson_plan = *mut farfield_poisson_plan_s;

fn default_opts() -> farfield_poisson_opts {
    farfield_poisson_opts {
        struct_size: std::mem::size_of::<farfield_poisson_opts>(),
        nthreads: 0,
        debug: 0,
        fftw: FFTW_ESTIMATE as i32,
        check_input: 1,
        vico_factor: 1.1,
    }
}

versioned!(farfield_poisson_opts, "farfield_poisson_opts", [struct_size, nthreads, debug, fftw, check_input, vico_factor],
           default_opts());

/// Writes the default options (nthreads 0, debug 0, fftw `FFTW_ESTIMATE`, check_input 1,
/// vico_factor 1.1) into the first `struct_size` bytes of `*opts` and sets
/// `opts->struct_size`; call it as `farfield_poisson_default_opts(&o, sizeof o)`.
///
/// Returns 0, or `FARFIELD_ERR_NULL_POINTER` if `opts` is NULL, `FARFIELD_ERR_INVALID_ARG`
/// (`struct_size` smaller than the `struct_size` field or ending inside a field; nothing
/// written).
///
/// # Safety
/// `opts` must be NULL or point to `struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn farfield_poisson_default_opts(opts: *mut farfield_poisson_opts, struct_size: usize) -> c_int {
    guard(|| abi::write_defaults(opts, struct_size))
}

fn convert_opts(o: &farfield_poisson_opts) -> Result<PoissonOpts> {
    if o.nthreads < 0 {
        return Err(Error::InvalidArg(format!("opts.nthreads = {}; must be ≥ 0", o.nthreads)));
    }
    if o.fftw < 0 {
        return Err(Error::InvalidArg(format!("opts.fftw = {}; must be ≥ 0 (FFTW planner flags)", o.fftw)));
    }
    Ok(PoissonOpts {
        nthreads: o.nthreads as usize,
        fftw_flags: o.fftw as u32,
        vico_factor: o.vico_factor,
        check_input: o.check_input != 0,
        debug: o.debug,
    })
}

/// Checks and converts the makeplan arguments (shared with `farfield_poisson_estimate`).
unsafe fn plan_args<'a>(
    method: c_int,
    dim: c_int,
    n: *const i64,
    h: *const f64,
    opts: *const farfield_poisson_opts,
) -> Result<(Method, Vec<usize>, &'a [f64], PoissonOpts)> {
    let method = match method {
        FARFIELD_POISSON_HOCKNEY => Method::Hockney,
        FARFIELD_POISSON_VICO => Method::Vico,
        FARFIELD_POISSON_VICO_DCT => Method::VicoDct,
        m => {
            return Err(Error::InvalidArg(format!(
                "method = {m}; must be FARFIELD_POISSON_HOCKNEY (0), FARFIELD_POISSON_VICO (1) or FARFIELD_POISSON_VICO_DCT (2)"
            )))
        }
    };
    if dim != 2 && dim != 3 {
        return Err(Error::Dim(format!("dim = {dim}; the Poisson solvers support 2 or 3")));
    }
    let dim = dim as usize;
    let n = slice_in(n, dim, "n")?;
    let h = slice_in(h, dim, "h")?;
    let nu = n
        .iter()
        .enumerate()
        .map(|(d, &v)| {
            if v <= 0 {
                Err(Error::Modes(format!("n[{d}] = {v}; every grid size must be ≥ 1")))
            } else {
                usize::try_from(v).map_err(|_| Error::Range(format!("n[{d}] = {v} exceeds the address space")))
            }
        })
        .collect::<Result<Vec<usize>>>()?;
    Ok((method, nu, h, convert_opts(&abi::read_in(opts)?)?))
}

/// Makes a free-space Poisson plan for grids of `n[0] × n[1] (× n[2])` nodes with spacings
/// `h[0], h[1] (, h[2])`. The plan solves `∇²φ = −ρ` with free-space boundary conditions,
/// `φ = G ∗ ρ` with the Green's function `G(x) = 1/(4π|x|)` in 3D and `−ln|x|/(2π)` in 2D
/// (so a point charge `q` has `φ = q/(4πr)`, not the `q/r` of the Ewald and FMM functions);
/// grid layout, units and outputs at `farfield_poisson_execute`.
///
/// * `method`: `FARFIELD_POISSON_HOCKNEY`, `FARFIELD_POISSON_VICO` or `FARFIELD_POISSON_VICO_DCT`.
/// * `dim`: 2 or 3; only the first `dim` entries of `n` and `h` are read.
/// * `n`: nodes per axis, each ≥ 1 and ≤ 1073741823 (`2n_d` fits FFTW's `int`), with
///   `Π 2n_d ≤ 2⁴⁰` (any sizes, not only powers of two).
/// * `h`: spacing per axis, finite and > 0, any magnitude (subnormal included), with
///   `h_max/h_min ≤ 1e150` (the caller's length unit).
/// * `plan`: receives the plan; `*plan` is set to NULL first and stays NULL on failure.
/// * `opts`: options, or NULL for the defaults (Vico: `1 < vico_factor ≤ 4`); `opts->struct_size`
///   bytes are read (0 or a size ending inside a field → `FARFIELD_ERR_INVALID_ARG`).
///
/// Vico methods: the kernel precomputation grid `P_d = max(4n_d, ≈1.5 n_d + L/h_d)` (with
/// `L = vico_factor·√(Σ(n_d h_d)²)`) must satisfy `Π P_d ≤ 512 · Π 2n_d`; very flat or
/// anisotropic grids (e.g. `h_y/h_x = 1e-5`) exceed it → `FARFIELD_ERR_RANGE` (use
/// Hockney–Eastwood there). Memory: `farfield_poisson_estimate`. Every limit is checked before
/// anything is allocated; planning time is `O(M log M)` in the grids above.
///
/// Returns 0 or: `FARFIELD_ERR_NULL_POINTER` (`plan`, `n` or `h` NULL), `FARFIELD_ERR_INVALID_ARG`
/// (unknown method, a spacing ≤ 0 or not finite, `vico_factor` outside `(1, 4]`, bad option),
/// `FARFIELD_ERR_DIM` (dim not 2 or 3), `FARFIELD_ERR_MODES` (a size ≤ 0), `FARFIELD_ERR_RANGE`
/// (a size, the doubled grid, the anisotropy or the Vico precomputation grid beyond the limits
/// above; the message states the value and the limit), `FARFIELD_ERR_ALLOC` (a grid, or 32 MiB
/// of headroom probed before each FFTW planner call, cannot be allocated; the message gives
/// the bytes), `FARFIELD_ERR_FFT`.
///
/// # Safety
/// `n` and `h` must point to `dim` readable values; `plan` to a writable handle; `opts` NULL
/// or valid.
#[no_mangle]
pub unsafe extern "C" fn farfield_poisson_makeplan(
    method: c_int,
    dim: c_int,
    n: *const i64,
    h: *const f64,
    plan: *mut farfield_poisson_plan,
    opts: *const farfield_poisson_opts,
) -> c_int {
    guard(|| {
        non_null(plan, "plan")?;
        plan.write(std::ptr::null_mut());
        let (method, nu, h, o) = plan_args(method, dim, n, h, opts)?;
        let p = PoissonPlan::new(method, &nu, h, &o)?;
        plan.write(Box::into_raw(Box::new(farfield_poisson_plan_s { inner: Mutex::new(Solver::Serial(p)) })));
        Ok(())
    })
}

/// Makes a **distributed** free-space Poisson plan over the MPI communicator `comm` (the
/// Fortran handle `MPI_Fint`: C callers pass `MPI_Comm_c2f(comm)`, Fortran callers their
/// `integer` communicator, `comm%MPI_VAL` with `mpi_f08`). Collective: every rank calls it with
/// the same `method`, `dim`, `n`, `h` and options, as `farfield_poisson_makeplan` takes them;
/// the plan then solves the same problem with the grid split over the ranks.
///
/// Data distribution: slabs of whole planes of the slowest axis (z in 3D, y in 2D), as
/// FFTW-MPI's `fftw_mpi_local_size_many` splits the grid (blocks of `⌈n_z/K⌉` planes; the
/// last ranks may hold fewer or none). `farfield_poisson_local_slab` gives this rank's
/// `(start, count)`; `farfield_poisson_execute` (collective) then takes this rank's
/// `count·n_x·n_y` values of ρ (the plane `start` first, x fastest), returns its slab of φ and
/// of `E` (component-major over the slab: `efield[idx + n_local·d]`, `n_local = count·n_x·n_y`),
/// and the total energy on every rank. The doubled grid, the kernel and its precomputation are
/// distributed too: each rank holds about `1/K` of the single-process memory. Results equal the
/// single-process plan's to rounding. `farfield_poisson_destroy` is collective as well.
///
/// Returns 0 or the statuses of `farfield_poisson_makeplan` (on every rank alike when any rank
/// fails), and: `FARFIELD_ERR_NOT_SUPPORTED` (the library was built without MPI — cargo
/// feature `mpi` — or MPI is not initialised or already finalised),
/// `FARFIELD_ERR_INVALID_ARG` (`comm` names no communicator or is `MPI_COMM_NULL`; or the
/// ranks passed different arguments, reported on every rank), `FARFIELD_ERR_INTERNAL` (an
/// MPI call failed, with MPI's message).
///
/// # Safety
/// As `farfield_poisson_makeplan`. MPI must be initialised; all ranks of `comm` must call.
#[no_mangle]
pub unsafe extern "C" fn farfield_poisson_makeplan_mpi(
    comm: c_int,
    method: c_int,
    dim: c_int,
    n: *const i64,
    h: *const f64,
    plan: *mut farfield_poisson_plan,
    opts: *const farfield_poisson_opts,
) -> c_int {
    guard(|| {
        non_null(plan, "plan")?;
        plan.write(std::ptr::null_mut());
        #[cfg(feature = "mpi")]
        {
            let comm = crate::mpi::Comm::from_fint(comm)?;
            // every rank learns whether any rank's arguments failed (one collective)
            let (method, nu, h, o) = comm.agree(plan_args(method, dim, n, h, opts))?;
            let p = crate::poisson::dist::DistPoissonPlan::new(comm, method, &nu, h, &o)?;
            plan.write(Box::into_raw(Box::new(farfield_poisson_plan_s { inner: Mutex::new(Solver::Dist(p)) })));
            Ok(())
        }
        #[cfg(not(feature = "mpi"))]
        {
            let _ = (comm, method, dim, n, h, opts);
            Err(Error::NotSupported(
                "this farfield was built without MPI (build it with the cargo feature `mpi`)".into(),
            ))
        }
    })
}

/// The part of the grid this process holds: `start` and `count` planes of the slowest axis
/// (z in 3D, y in 2D); ρ, φ and each field component hold `count·Π_{d<dim−1} n_d` values on
/// this process. For a single-process plan `(0, n_z)` (2D: `(0, n_y)`). Each output may be
/// NULL.
///
/// Returns 0 or `FARFIELD_ERR_NULL_POINTER` (`plan` NULL).
///
/// # Safety
/// `plan` from a makeplan; outputs NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn farfield_poisson_local_slab(plan: farfield_poisson_plan, start: *mut i64, count: *mut i64) -> c_int {
    guard(|| {
        let p = lock(plan)?;
        let (s, c) = p.local_slab();
        if !start.is_null() {
            start.write(s as i64);
        }
        if !count.is_null() {
            count.write(c as i64);
        }
        Ok(())
    })
}

/// Memory a plan for these arguments would use, without allocating anything: derived from
/// the same grids `farfield_poisson_makeplan` builds, and failing with the same status where
/// makeplan fails on a limit (same arguments and rules as makeplan).
///
/// Outputs (each may be NULL; written only on success):
/// * `precompute`: 3 values, the Vico precomputation FFT grid `P_d` per axis (1 for an unused
///   axis; zeros for Hockney–Eastwood). `FARFIELD_POISSON_VICO_DCT` uses `P_d/2 + 1` points.
/// * `plan_bytes`: bytes the plan holds (`8·Π 2n_d + 24·(n_x+1)·Π_{d>0} 2n_d`).
/// * `field_bytes`: bytes added on the first execute with `efield` (`16·(n_x+1)·Π_{d>0} 2n_d
///   + 8·dim·Π n_d`).
/// * `peak_bytes`: peak during makeplan, `plan_bytes` plus the precomputation grids (Vico:
///   `8·Π P_d + 16·(P_x/2+1)·Π_{d>0} P_d`; Vico-DCT: `8·Π (P_d/2+1)`), not counting FFTW's
///   small tables or the transient 32 MiB headroom probe.
///
/// Returns 0 or the makeplan statuses except `FARFIELD_ERR_ALLOC` and `FARFIELD_ERR_FFT`.
///
/// # Safety
/// `n` and `h` must point to `dim` readable values; `opts` NULL or valid; each output NULL or
/// writable (`precompute`: 3 values).
#[no_mangle]
pub unsafe extern "C" fn farfield_poisson_estimate(
    method: c_int,
    dim: c_int,
    n: *const i64,
    h: *const f64,
    opts: *const farfield_poisson_opts,
    precompute: *mut i64,
    plan_bytes: *mut i64,
    field_bytes: *mut i64,
    peak_bytes: *mut i64,
) -> c_int {
    guard(|| {
        let (method, nu, h, o) = plan_args(method, dim, n, h, opts)?;
        let e = PoissonPlan::estimate(method, &nu, h, &o)?;
        // all sizes are ≤ 2^40 points · 512 · 24 bytes < 2^63
        if !precompute.is_null() {
            for d in 0..3 {
                precompute.add(d).write(e.precompute[d] as i64);
            }
        }
        for (p, v) in [(plan_bytes, e.plan_bytes), (field_bytes, e.field_bytes), (peak_bytes, e.peak_bytes)] {
            if !p.is_null() {
                p.write(v as i64);
            }
        }
        Ok(())
    })
}

/// Solves `∇²φ = −ρ` for one right-hand side with a plan (any number of times), with
/// free-space boundary conditions: `φ = G ∗ ρ`, `G(x) = 1/(4π|x|)` in 3D, `−ln|x|/(2π)` in 2D.
/// Note the `4π`: a point charge `q` gives `φ = q/(4πr)`, whereas the Ewald and FMM functions
/// use the kernel `1/r` (`q/r`); for potentials in their convention pass `4π·ρ` (or multiply
/// `phi`, `efield` by `4π` and `energy` by `(4π)²`). Units are the caller's: `φ` is in units of
/// `ρ·length²` (`ρ` per unit volume in 3D, per unit area in 2D); for SI potentials pass
/// `ρ/ε₀`.
///
/// Grid layout: node `(i, j, k)`, at `origin + (i·h_x, j·h_y, k·h_z)`, is element
/// `idx = i + n_x·(j + n_y·k)` (2D: `i + n_x·j`), x fastest — C `a[k][j][i]`, Fortran
/// `a(nx, ny, nz)`; the origin does not enter.
///
/// * `rho`: source at the nodes, `npts = Π n_d` values, `rho[idx]`.
/// * `phi`: output potential, `npts` values, `phi[idx]`.
/// * `efield`: NULL, or output `E = −∇φ` with `dim·npts` values, **component-major**:
///   `efield[idx + npts·d]` is component `d` (0 = x, 1 = y, 2 = z) at node `idx` (Fortran
///   `e(nx, ny, nz, 3)`) — not interleaved like the FMM's and Ewald's `field[3*i + d]`.
///   Spectral differentiation on the doubled grid.
/// * `energy`: NULL, or output `U = ½ Σ ρ_idx φ_idx · Π h_d` (≈ ½∫ρφ), in units of
///   `ρ²·length^(dim+2)`.
///
/// Scale: any finite `rho` and spacings work when the requested outputs are representable (the
/// solve is normalised and rescaled exactly by powers of two). Each requested output (`phi`,
/// `efield`, `energy`) whose largest magnitude would overflow, or underflow below `2.2e-308`
/// while not zero, gives `FARFIELD_ERR_RANGE` (pass `energy = NULL` when only φ is needed:
/// `U ∝ ρ²h^{dim+2}` leaves double range first). No output is ever NaN/Inf with status 0.
///
/// Outputs are written only on success. Returns 0 or: `FARFIELD_ERR_NULL_POINTER` (`plan`,
/// `rho` or `phi` NULL), `FARFIELD_ERR_NONFINITE` (with `opts.check_input`: a NaN/Inf in
/// `rho`, the message names the first index), `FARFIELD_ERR_RANGE` (an output out of double
/// range as above, or not finite because `rho` holds NaN/Inf with `check_input` off),
/// `FARFIELD_ERR_ALLOC` (on the first execute with `efield`: the field buffers,
/// `16·(n_x+1)·Π_{d>0} 2n_d + 8·dim·Π n_d` bytes; on any execute: the 32 MiB FFTW headroom
/// probe), `FARFIELD_ERR_INVALID_ARG` (an output overlapping `rho` or another output, both
/// named: no in-place solve). The plan stays usable after any error.
///
/// # Safety
/// `plan` from `farfield_poisson_makeplan`; arrays of the sizes above.
#[no_mangle]
pub unsafe extern "C" fn farfield_poisson_execute(
    plan: farfield_poisson_plan,
    rho: *const f64,
    phi: *mut f64,
    efield: *mut f64,
    energy: *mut f64,
) -> c_int {
    guard(|| {
        let mut p = lock(plan)?;
        let npts = p.local_npts();
        let dim = p.dim();
        let args = (|| {
            check_outputs_disjoint(
                &[region(rho, npts, "rho")],
                &[region(phi, npts, "phi"), region(efield, dim * npts, "efield"), region(energy, 1, "energy")],
            )?;
            let rho = slice_in(rho, npts, "rho")?;
            non_null(phi, "phi")?;
            let phi = slice_out(phi, npts, "phi")?;
            let e = if efield.is_null() { None } else { Some(slice_out(efield, dim * npts, "efield")?) };
            Ok((rho, phi, e))
        })();
        let (rho, phi, e) = p.agree(args)?;
        let mut u = 0.0;
        p.execute_into(rho, phi, e, if energy.is_null() { None } else { Some(&mut u) })?;
        if !energy.is_null() {
            energy.write(u);
        }
        Ok(())
    })
}

/// Destroys a plan and frees its memory. NULL is fine (returns 0).
///
/// # Safety
/// `plan` must be NULL or a live plan from `farfield_poisson_makeplan`, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn farfield_poisson_destroy(plan: farfield_poisson_plan) -> c_int {
    destroy_boxed(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::*;
    use std::ptr::{null, null_mut};

    fn make(method: c_int, dim: c_int, n: [i64; 3], h: [f64; 3], o: *const farfield_poisson_opts) -> (c_int, farfield_poisson_plan) {
        let mut p: farfield_poisson_plan = 0x1 as farfield_poisson_plan; // must be reset to NULL
        let s = unsafe { farfield_poisson_makeplan(method, dim, n.as_ptr(), h.as_ptr(), &mut p, o) };
        (s, p)
    }

    #[test]
    fn opts_layout_and_defaults() {
        abi::check_fields::<farfield_poisson_opts>();
        assert_eq!(std::mem::size_of::<farfield_poisson_opts>(), 32);
        assert_eq!(std::mem::offset_of!(farfield_poisson_opts, nthreads), 8);
        assert_eq!(std::mem::offset_of!(farfield_poisson_opts, vico_factor), 24);
        let sz = std::mem::size_of::<farfield_poisson_opts>();
        let mut o = farfield_poisson_opts { struct_size: 9, nthreads: 9, debug: 9, fftw: 9, check_input: 9, vico_factor: 9.0 };
        assert_eq!(unsafe { farfield_poisson_default_opts(&mut o, sz) }, 0);
        assert_eq!(o, farfield_poisson_opts { struct_size: 32, nthreads: 0, debug: 0, fftw: 64, check_input: 1, vico_factor: 1.1 });
        assert_eq!(unsafe { farfield_poisson_default_opts(null_mut(), sz) }, FARFIELD_ERR_NULL_POINTER);
        assert_eq!(unsafe { farfield_poisson_default_opts(&mut o, 0) }, FARFIELD_ERR_INVALID_ARG);
        assert_eq!(unsafe { farfield_poisson_default_opts(&mut o, 28) }, FARFIELD_ERR_INVALID_ARG);
        // an older caller without vico_factor: makeplan uses the default 1.1 for it
        let mut old = farfield_poisson_opts { vico_factor: 9.0, ..o };
        assert_eq!(unsafe { farfield_poisson_default_opts(&mut old, 24) }, 0);
        assert_eq!((old.struct_size, old.vico_factor), (24, 9.0));
        let (s, p) = make(FARFIELD_POISSON_VICO, 2, [8, 8, 1], [0.1; 3], &old);
        assert_eq!(s, 0);
        unsafe { farfield_poisson_destroy(p) };
    }

    #[test]
    fn local_slab_and_mpi_entry() {
        let (s, p) = make(FARFIELD_POISSON_HOCKNEY, 3, [4, 5, 6], [0.1; 3], null());
        assert_eq!(s, 0);
        let (mut start, mut count) = (-1i64, -1i64);
        assert_eq!(unsafe { farfield_poisson_local_slab(p, &mut start, &mut count) }, 0);
        assert_eq!((start, count), (0, 6));
        assert_eq!(unsafe { farfield_poisson_local_slab(null_mut(), &mut start, null_mut()) }, FARFIELD_ERR_NULL_POINTER);
        unsafe { farfield_poisson_destroy(p) };
        let n = [4i64, 4, 4];
        let mut q: farfield_poisson_plan = 0x1 as farfield_poisson_plan;
        let st = unsafe { farfield_poisson_makeplan_mpi(0, FARFIELD_POISSON_HOCKNEY, 3, n.as_ptr(), [0.1; 3].as_ptr(), &mut q, null()) };
        // without the feature: not supported; with it (and MPI not initialised here): the same
        assert_eq!((st, q), (FARFIELD_ERR_NOT_SUPPORTED, null_mut()));
    }

    #[test]
    fn makeplan_errors() {
        let h = [0.1; 3];
        let (s, p) = make(FARFIELD_POISSON_HOCKNEY, 3, [4, 0, 4], h, null());
        assert_eq!((s, p), (FARFIELD_ERR_MODES, null_mut()));
        assert_eq!(make(FARFIELD_POISSON_VICO, 3, [4, -2, 4], h, null()).0, FARFIELD_ERR_MODES);
        assert_eq!(make(FARFIELD_POISSON_VICO_DCT, 3, [4, 4, 4], [0.1, 0.0, 0.1], null()).0, FARFIELD_ERR_INVALID_ARG);
        assert_eq!(make(FARFIELD_POISSON_HOCKNEY, 3, [4, 4, 4], [0.1, -1.0, 0.1], null()).0, FARFIELD_ERR_INVALID_ARG);
        let (s, p) = make(FARFIELD_POISSON_HOCKNEY, 2, [4, 4, 0], [f64::NAN, 0.1, 0.1], null());
        assert_eq!((s, p), (FARFIELD_ERR_INVALID_ARG, null_mut()));
        let msg = unsafe { std::ffi::CStr::from_ptr(crate::capi::farfield_last_error_message()) };
        assert!(msg.to_str().unwrap().contains("h[0]"));
        assert_eq!(make(7, 3, [4; 3], h, null()).0, FARFIELD_ERR_INVALID_ARG);
        assert_eq!(make(FARFIELD_POISSON_HOCKNEY, 1, [4; 3], h, null()).0, FARFIELD_ERR_DIM);
        assert_eq!(make(FARFIELD_POISSON_HOCKNEY, 3, [1 << 20; 3], h, null()).0, FARFIELD_ERR_RANGE);
        let mut o = default_opts();
        o.nthreads = -1;
        assert_eq!(make(FARFIELD_POISSON_HOCKNEY, 3, [4; 3], h, &o).0, FARFIELD_ERR_INVALID_ARG);
        let n = [4i64; 3];
        unsafe {
            assert_eq!(farfield_poisson_makeplan(0, 3, n.as_ptr(), h.as_ptr(), null_mut(), null()), FARFIELD_ERR_NULL_POINTER);
            let mut p = null_mut();
            assert_eq!(farfield_poisson_makeplan(0, 3, null(), h.as_ptr(), &mut p, null()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_poisson_makeplan(0, 3, n.as_ptr(), null(), &mut p, null()), FARFIELD_ERR_NULL_POINTER);
            assert!(p.is_null());
            assert_eq!(farfield_poisson_destroy(null_mut()), 0);
        }
    }

    #[test]
    fn estimate_matches_plan_and_limits() {
        let (n, h) = ([64i64, 64, 2], [1.0f64; 3]);
        let (mut pc, mut pb, mut fb, mut kb) = ([0i64; 3], 0i64, 0i64, 0i64);
        let s = unsafe {
            farfield_poisson_estimate(FARFIELD_POISSON_VICO, 3, n.as_ptr(), h.as_ptr(), null(), pc.as_mut_ptr(), &mut pb, &mut fb, &mut kb)
        };
        assert_eq!(s, 0);
        let o = PoissonOpts { nthreads: 1, ..Default::default() };
        let plan = PoissonPlan::new(Method::Vico, &[64, 64, 2], &h, &o).unwrap();
        let m = plan.memory();
        assert_eq!(pc, m.precompute.map(|v| v as i64));
        assert_eq!((pb, fb, kb), (m.plan_bytes as i64, m.field_bytes as i64, m.peak_bytes as i64));
        assert!(kb > 10 * 16 * 256 * 256 * 8, "{kb}"); // the old "16·Π 4n_d" was 13× low
        // NULL outputs are fine; limits give the makeplan status
        let s = unsafe { farfield_poisson_estimate(FARFIELD_POISSON_HOCKNEY, 3, n.as_ptr(), h.as_ptr(), null(), null_mut(), null_mut(), null_mut(), null_mut()) };
        assert_eq!(s, 0);
        let hy = [1.0, 1e-5, 1.0];
        let n32 = [32i64; 3];
        let s = unsafe { farfield_poisson_estimate(FARFIELD_POISSON_VICO, 3, n32.as_ptr(), hy.as_ptr(), null(), null_mut(), &mut pb, null_mut(), null_mut()) };
        assert_eq!(s, FARFIELD_ERR_RANGE);
        assert_eq!(make(FARFIELD_POISSON_VICO, 3, [32; 3], hy, null()).0, FARFIELD_ERR_RANGE);
        let mut o = default_opts();
        o.vico_factor = 1e15;
        assert_eq!(make(FARFIELD_POISSON_VICO, 3, [8; 3], [1.0; 3], &o).0, FARFIELD_ERR_INVALID_ARG);
        let s = unsafe { farfield_poisson_estimate(FARFIELD_POISSON_VICO, 3, n.as_ptr(), h.as_ptr(), &o, null_mut(), null_mut(), null_mut(), null_mut()) };
        assert_eq!(s, FARFIELD_ERR_INVALID_ARG);
    }

    #[test]
    fn execute_roundtrip_and_errors() {
        let mut o = default_opts();
        o.nthreads = 1;
        let n = [6i64, 5, 4];
        let (s, p) = make(FARFIELD_POISSON_VICO_DCT, 3, [6, 5, 4], [0.2, 0.25, 0.3], &o);
        assert_eq!(s, 0);
        assert!(!p.is_null());
        let npts = (n[0] * n[1] * n[2]) as usize;
        let mut rho: Vec<f64> = (0..npts).map(|i| (i as f64 * 0.3).sin()).collect();
        let mut phi = vec![0.0; npts];
        let mut e = vec![0.0; 3 * npts];
        let mut u = 0.0;
        unsafe {
            assert_eq!(farfield_poisson_execute(null_mut(), rho.as_ptr(), phi.as_mut_ptr(), null_mut(), null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_poisson_execute(p, null(), phi.as_mut_ptr(), null_mut(), null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_poisson_execute(p, rho.as_ptr(), null_mut(), null_mut(), null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_poisson_execute(p, rho.as_ptr(), phi.as_mut_ptr(), e.as_mut_ptr(), &mut u), 0);
        }
        // same as the Rust plan
        let mut rp = PoissonPlan::new(Method::VicoDct, &[6, 5, 4], &[0.2, 0.25, 0.3], &convert_opts(&o).unwrap()).unwrap();
        let mut phi2 = vec![0.0; npts];
        let mut e2 = vec![0.0; 3 * npts];
        let u2 = rp.execute(&rho, &mut phi2, Some(&mut e2)).unwrap();
        assert_eq!((phi.clone(), e.clone(), u), (phi2, e2, u2));
        // NaN with check_input on: error naming the index, outputs untouched, plan still usable
        rho[17] = f64::NAN;
        let before = (phi.clone(), e.clone(), u);
        unsafe {
            let s = farfield_poisson_execute(p, rho.as_ptr(), phi.as_mut_ptr(), e.as_mut_ptr(), &mut u);
            assert_eq!(s, FARFIELD_ERR_NONFINITE);
            let msg = std::ffi::CStr::from_ptr(crate::capi::farfield_last_error_message());
            assert!(msg.to_str().unwrap().contains("rho[17]"));
        }
        assert_eq!((phi.clone(), e.clone(), u), before);
        rho[17] = 0.0;
        // in-place (phi = rho), phi inside efield, energy inside phi: refused, nothing written
        let snapshot = rho.clone();
        unsafe {
            let r = rho.as_mut_ptr();
            assert_eq!(farfield_poisson_execute(p, r, r, null_mut(), null_mut()), FARFIELD_ERR_INVALID_ARG);
            assert!(crate::capi::last_error_message().contains("`rho`"));
            assert_eq!(farfield_poisson_execute(p, rho.as_ptr(), e.as_mut_ptr().add(5), e.as_mut_ptr(), null_mut()), FARFIELD_ERR_INVALID_ARG);
            assert!(crate::capi::last_error_message().contains("`efield`"));
            assert_eq!(farfield_poisson_execute(p, rho.as_ptr(), phi.as_mut_ptr(), null_mut(), phi.as_mut_ptr().add(3)), FARFIELD_ERR_INVALID_ARG);
        }
        assert_eq!(rho, snapshot);
        assert_eq!((phi.clone(), e.clone(), u), before);
        unsafe {
            assert_eq!(farfield_poisson_execute(p, rho.as_ptr(), phi.as_mut_ptr(), null_mut(), null_mut()), 0);
            assert_eq!(farfield_poisson_destroy(p), 0);
        }
        // 2D plan through the C API
        let (s, p) = make(FARFIELD_POISSON_HOCKNEY, 2, [5, 7, -1], [0.1, 0.2, f64::NAN], null());
        assert_eq!(s, 0);
        let rho = vec![1.0; 35];
        let mut phi = vec![0.0; 35];
        let mut e = vec![0.0; 70];
        unsafe {
            assert_eq!(farfield_poisson_execute(p, rho.as_ptr(), phi.as_mut_ptr(), e.as_mut_ptr(), null_mut()), 0);
            farfield_poisson_destroy(p);
        }
        assert!(phi.iter().all(|v| v.is_finite()) && e.iter().all(|v| v.is_finite()));
    }
}
