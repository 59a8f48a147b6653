//! Periodic electrostatics C API (`farfield_ewald_*`): spectral Ewald, smooth particle-mesh
//! Ewald and the classic Ewald sum for point charges in orthorhombic or triclinic cells (see
//! [`crate::ewald`] for the methods, the error model and the conventions).
//!
//! Lifecycle: `farfield_ewald_default_opts(&o, sizeof o)` → `farfield_ewald_makeplan(method, box, n_max,
//! tol, &plan, &o)` → optionally `farfield_ewald_set_exclusions(plan, npairs, pairs)` →
//! `farfield_ewald_execute(plan, n, xyz, q, phi, field, &energy, virial)` any number of times
//! (`farfield_ewald_set_box(plan, box)` between calls for a changing cell; on a CUDA plan also
//! `farfield_ewald_execute_device` with device arrays) → `farfield_ewald_destroy(plan)`. A
//! distributed plan (`farfield_ewald_makeplan_mpi`, collective calls) with exclusions takes
//! pairs of global ids and `farfield_ewald_execute_ids(plan, n, ids, xyz, q, …)`.
//!
//! Conventions: `box[3*i + j]` = component `j` of lattice vector `i` (rows a, b, c;
//! lower-triangular, as GROMACS/LAMMPS/OpenMM store them: `box[1] = box[2] = box[5] = 0`);
//! positions interleaved `xyz[3*i + d]`, any values (wrapped internally); charges `q[i]`;
//! outputs in the caller's units without a Coulomb constant: `phi[i] = ∂U/∂q_i`,
//! `field[3*i + d]` = `E_d` (force `q_i E_i`), `U = ½ Σ q_i φ_i`, and the virial
//! `virial[3*a + b] = W_ab = −∂U/∂ε_ab` (= Σ_pairs r_ij ⊗ F_ij for pair terms; `tr W = U`).
//! A net charge gets the uniform neutralising background (`U_bg = −π Q²/(2 V ξ²)`).
//! Thread safety: different plans may be used concurrently; calls on one plan are serialised
//! by a lock inside the plan.
//!
//! Backends (`opts.backend`, docs/design.md §5.4): the CPU (`FARFIELD_BACKEND_AUTO`, the
//! default, and `FARFIELD_BACKEND_CPU`), or CUDA device 0 (`FARFIELD_BACKEND_CUDA`: SPME and
//! spectral Ewald; `crate::gpu::ewald`, docs/design.md §5.7–5.8). A CUDA plan takes its
//! parameters from the same rule as a CPU plan (the same `ξ`, `r_c`, grid and order/support
//! for the same cell, `n_max`, `tol` and overrides, reported by `farfield_ewald_get_params`),
//! keeps its grids, FFT plans and buffers on the device, and runs every launch and copy on
//! one stream (`opts.gpu_stream`, or the default stream). Grids and FFT are in double
//! precision, or with `opts.gpu_precision = FARFIELD_EWALD_GPU_MIXED` in single precision
//! with double-precision interpolation sums, potentials, fields, energy and virial. It
//! accepts host arrays (`farfield_ewald_execute`, the same checks and status codes as the
//! CPU) and device arrays (`farfield_ewald_execute_device`). Unlike the CPU plan it computes
//! in the caller's units (no power-of-two rescaling): cells and charges of ordinary
//! magnitude are assumed, and a requested result that is not finite or underflows is
//! `FARFIELD_ERR_RANGE`.
//!
//! Limits (each checked before anything is allocated or looped over):
//! * scale: any cell scale whose results are representable in double precision (the plan
//!   works in scaled units internally; tested from 1e-150 to 1e150); a requested result that
//!   would overflow, or whose largest value would underflow below 2.2e-308, is
//!   `FARFIELD_ERR_RANGE`; the cell's smallest height must be at least 2^-20 of its largest
//!   entry (`FARFIELD_ERR_RANGE`);
//! * grids (spectral Ewald, SPME): at most 65536 per axis and 2^33 points; the direct sum: at
//!   most 2^26 wave vectors and |m_d| ≤ 2^20 (`FARFIELD_ERR_RANGE`, with the size needed);
//! * `n_max` ≤ 2^32 − 2; `tol` below 1e-12 (spectral Ewald, SPME) or 1e-14 (direct) is raised
//!   to that with `FARFIELD_WARN_TOL_CLAMPED` from `farfield_ewald_get_warnings`;
//! * coincident charges: two distinct charges closer than 2^-40 (≈ 9.1e-13) of the largest
//!   cell length have an infinite interaction energy: `farfield_ewald_execute` fails with
//!   `FARFIELD_ERR_INVALID_ARG` naming both, unless the pair is excluded (then its whole
//!   interaction is removed, the k-space part by its r → 0 limit 2ξ/√π q_i q_j); the check is
//!   part of the real-space pass and stops at the first such pair (O(n) even when all coincide);
//! * exclusions: unordered pairs, duplicates removed, at most 2^40 pairs.

use super::abi::{self, versioned};
use super::{check_outputs_disjoint, destroy_boxed, gpu_method_of, guard, lock, non_null, pair_args, plan_handle, region, slice_in, slice_out};
use crate::error::{Error, Result};
use crate::ewald::params::MAX_GRID_AXIS;
use crate::backend::{BackendChoice, GpuStream};
use crate::ewald::{EwaldOpts, EwaldResult, Method, Overrides, Terms};
use crate::fft::FFTW_ESTIMATE;
use crate::nufft::options::FARFIELD_BACKEND_AUTO;
use crate::plans::EwaldPlan;
use std::ffi::{c_int, c_void};
use std::sync::{Mutex, MutexGuard};

/// Spectral Ewald (Lindbo–Tornberg, Gaussian windows, ik-differentiation). `method` value.
pub const FARFIELD_EWALD_SPECTRAL: c_int = 0;
/// Smooth particle-mesh Ewald (Essmann et al., B-splines, analytic forces). `method` value.
pub const FARFIELD_EWALD_SPME: c_int = 1;
/// Classic Ewald sum with an explicit k-space sum, `O(N^{3/2})` (reference). `method` value.
/// CPU only (with `opts.backend = FARFIELD_BACKEND_CUDA`: `FARFIELD_ERR_NOT_SUPPORTED`).
pub const FARFIELD_EWALD_DIRECT: c_int = 2;
/// `opts.gpu_precision` (CUDA plans): grids and FFT in double precision (default).
pub const FARFIELD_EWALD_GPU_DOUBLE: i32 = 0;
/// `opts.gpu_precision` (CUDA plans): mixed precision — grids and FFT in single precision,
/// interpolation sums, potentials, fields, energy and virial accumulated in double precision.
/// The k-space part then carries single-precision rounding (tested: its potentials and fields
/// within 1e-5 relative RMS of the double-precision ones), so it suits tolerances down to
/// about 1e-5.
pub const FARFIELD_EWALD_GPU_MIXED: i32 = 1;

/// Options of an Ewald plan (versioned: `struct_size` first, fields only ever appended, so a
/// program built against an older header keeps working). Fill with
/// `farfield_ewald_default_opts(&o, sizeof o)` and then change fields. Every override left at 0
/// is chosen automatically from `tol`.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(non_camel_case_types)]
pub struct farfield_ewald_opts {
    /// Size of the struct as the caller compiled it (`sizeof(farfield_ewald_opts)`), set by
    /// `farfield_ewald_default_opts`; the library reads only this many bytes.
    pub struct_size: usize,
    /// Threads: 0 = all cores (default), 1 = the caller's thread only (no pool); ≥ 0.
    pub nthreads: i32,
    /// `> 0`: print the chosen parameters and per-call timings to stderr (default 0); on a CUDA
    /// plan the device time of each phase, and for host arrays the host time of the upload,
    /// evaluation, download and copy-out (the call then also waits for the upload).
    pub debug: i32,
    /// FFTW planner flags (default `FFTW_ESTIMATE` = 64; `FFTW_MEASURE` = 0); ≥ 0.
    pub fftw: i32,
    /// Spectral Ewald support `P` (even, 4 … 32) or SPME B-spline order (2 … 16); 0 = automatic.
    pub order_or_support: i32,
    /// Ewald splitting parameter `ξ` (1/length); 0 = automatic.
    pub xi: f64,
    /// Real-space cutoff (≤ half the smallest box height); 0 = automatic.
    pub rc: f64,
    /// Grid size per axis (even, ≥ 2·order, ≤ 65536, product ≤ 2^33; all three or none);
    /// 0 = automatic. For the direct sum: wave vectors per axis `2 m_max + 1`.
    pub grid: [i64; 3],
    /// Compute backend: `FARFIELD_BACKEND_AUTO` (0, default: the CPU for now),
    /// `FARFIELD_BACKEND_CPU` (1) or `FARFIELD_BACKEND_CUDA` (2: device 0, SPME and spectral
    /// Ewald; no usable device or driver → `FARFIELD_ERR_NO_DEVICE` from makeplan, the message
    /// saying what was looked for). `nthreads` and `fftw` do not apply to a CUDA plan. Other
    /// values → `FARFIELD_ERR_INVALID_ARG`. Appended after 1.2.0, as are the fields below: a
    /// caller built against an older header (a 64-byte struct) gets the CPU.
    pub backend: i32,
    /// CUDA backend only: `FARFIELD_EWALD_GPU_DOUBLE` (0, default: double-precision grids and
    /// FFT) or `FARFIELD_EWALD_GPU_MIXED` (1: single-precision grids, FFT and real-space pair
    /// functions, double-precision positions, distances and accumulation of potentials,
    /// fields, energy and virial across device threads). Other values, or a non-zero
    /// value with a CPU plan → `FARFIELD_ERR_INVALID_ARG`.
    pub gpu_precision: i32,
    /// CUDA backend only: the spreading method of the k-space part, the values of
    /// `farfield_nufft_opts.gpu_method`: `FARFIELD_GPU_METHOD_AUTO` (0, default: GM for plans
    /// of fewer than 2^17 charges, else the selection rule), `_GM` (1) … `_GROUP` (5). Other
    /// values, or a non-zero value with a CPU plan → `FARFIELD_ERR_INVALID_ARG`.
    pub gpu_method: i32,
    /// The terms the plan evaluates: `FARFIELD_EWALD_TERMS_ALL` (0, default: everything),
    /// `FARFIELD_EWALD_TERMS_KSPACE` (1: for MD codes that sum the real-space term in their own
    /// pair loop — the k-space sum, the self term, the background of a net charge and the
    /// k-space share `−(1 − s) erf(ξr)/r` of each excluded or scaled pair; give the code's
    /// cutoff as `rc` so that `ξ` and the grid are chosen for it, or give `xi`) or
    /// `FARFIELD_EWALD_TERMS_REAL` (2: the real-space pair sum `erfc(ξr)/r` within `rc`,
    /// excluded pairs dropped and scaled pairs scaled; no FFT). KSPACE + REAL = ALL for the
    /// same `xi`, `rc` and grid, on the CPU and CUDA backends alike. Other values →
    /// `FARFIELD_ERR_INVALID_ARG`.
    pub terms: i32,
    /// CUDA backend only: the caller's CUDA stream (`cudaStream_t` / `CUstream`), or NULL
    /// (default) for the default stream of device 0's context. Every kernel launch, copy and
    /// cuFFT execution of the plan runs on it (what each execute waits for: see
    /// `farfield_ewald_execute` and `farfield_ewald_execute_device`). The stream must belong to
    /// device 0's primary context (the CUDA runtime's) and stay valid until the plan is
    /// destroyed (its device memory is freed in stream order on it); the library never
    /// destroys it. A non-NULL stream for a CPU plan → `FARFIELD_ERR_INVALID_ARG` naming
    /// `opts.gpu_stream`.
    pub gpu_stream: *mut c_void,
}

/// Parameters of a plan and timings of its last execute (`farfield_ewald_get_params`;
/// versioned: the caller sets `struct_size = sizeof(farfield_ewald_params)` first).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(non_camel_case_types)]
pub struct farfield_ewald_params {
    /// Size of the struct as the caller compiled it, set by the caller before
    /// `farfield_ewald_get_params`; on return, the number of bytes the library wrote.
    pub struct_size: usize,
    /// Splitting parameter `ξ`.
    pub xi: f64,
    /// Real-space cutoff.
    pub rc: f64,
    /// Grid per axis (direct sum: `2 m_max + 1`).
    pub grid: [i64; 3],
    /// Support `P` (spectral) or B-spline order (SPME); 0 for the direct sum.
    pub order_or_support: i32,
    /// The plan's method (`FARFIELD_EWALD_*`).
    pub method: i32,
    /// Spectral Ewald Gaussian shape `η = 8 ξ² h² τ` (largest over the axes); else 0.
    pub eta: f64,
    /// Direct-sum k-space cutoff; else 0.
    pub kc: f64,
    /// Estimated relative RMS force error (the library's error model, calibrated on molecular systems).
    pub est_rel_err: f64,
    /// Seconds in the real-space part during the last execute.
    pub real_s: f64,
    /// Seconds in the k-space part during the last execute.
    pub kspace_s: f64,
}

/// Warning bit of `farfield_ewald_get_warnings`: the caller's overrides (`opts.order_or_support`,
/// `opts.grid`, `opts.xi`, `opts.rc`) keep the estimated error `est_rel_err` above `tol_used`.
pub const FARFIELD_EWALD_WARN_TOL_NOT_MET: i32 = 2;

/// Largest `npairs` of `farfield_ewald_set_exclusions`: 2^40.
pub const FARFIELD_EWALD_MAX_EXCLUSIONS: i64 = 1_099_511_627_776;
/// `opts.terms`: every term (default).
pub const FARFIELD_EWALD_TERMS_ALL: i32 = 0;
/// `opts.terms`: the k-space, self and background terms and the k-space share of the exclusion
/// corrections (an MD code sums the real-space term itself).
pub const FARFIELD_EWALD_TERMS_KSPACE: i32 = 1;
/// `opts.terms`: the real-space pair sum and the real-space share of the exclusion corrections.
pub const FARFIELD_EWALD_TERMS_REAL: i32 = 2;

/// Opaque Ewald plan (C: `farfield_ewald_plan`, a pointer to this).
#[allow(non_camel_case_types)]
pub struct farfield_ewald_plan_s {
    inner: Mutex<EwaldPlan>,
}
plan_handle!(farfield_ewald_plan_s, EwaldPlan);

/// Handle to an Ewald plan (`NULL` when none).
#[allow(non_camel_case_types)]
pub type farfield_ewald_plan = *mut farfield_ewald_plan_s;

fn default_opts() -> farfield_ewald_opts {
    farfield_ewald_opts {
        struct_size: std::mem::size_of::<farfield_ewald_opts>(),
        nthreads: 0,
        debug: 0,
        fftw: FFTW_ESTIMATE as i32,
        order_or_support: 0,
        xi: 0.0,
        rc: 0.0,
        grid: [0; 3],
        backend: FARFIELD_BACKEND_AUTO,
        gpu_precision: FARFIELD_EWALD_GPU_DOUBLE,
        gpu_method: 0,
        terms: FARFIELD_EWALD_TERMS_ALL,
        gpu_stream: std::ptr::null_mut(),
    }
}

versioned!(farfield_ewald_opts, "farfield_ewald_opts",
           [struct_size, nthreads, debug, fftw, order_or_support, xi, rc, grid, backend, gpu_precision, gpu_method, terms, gpu_stream],
           default_opts());
versioned!(farfield_ewald_params, "farfield_ewald_params",
           [struct_size, xi, rc, grid, order_or_support, method, eta, kc, est_rel_err, real_s, kspace_s],
           farfield_ewald_params::default());

impl Default for farfield_ewald_params {
    /// All zero, with `struct_size = sizeof` (ready for `farfield_ewald_get_params`).
    fn default() -> Self {
        farfield_ewald_params {
            struct_size: std::mem::size_of::<farfield_ewald_params>(),
            xi: 0.0,
            rc: 0.0,
            grid: [0; 3],
            order_or_support: 0,
            method: 0,
            eta: 0.0,
            kc: 0.0,
            est_rel_err: 0.0,
            real_s: 0.0,
            kspace_s: 0.0,
        }
    }
}

/// Writes the default options (all cores, no debug output, `FFTW_ESTIMATE`, every parameter
/// automatic, backend AUTO, double-precision grids, automatic spreading method, no stream) into
/// the first `struct_size` bytes of `*opts` and sets `opts->struct_size`; call it as
/// `farfield_ewald_default_opts(&o, sizeof o)`.
///
/// Returns 0, or `FARFIELD_ERR_NULL_POINTER` if `opts` is NULL, `FARFIELD_ERR_INVALID_ARG`
/// (`struct_size` smaller than the `struct_size` field or ending inside a field; nothing
/// written).
///
/// # Safety
/// `opts` must be NULL or point to `struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn farfield_ewald_default_opts(opts: *mut farfield_ewald_opts, struct_size: usize) -> c_int {
    guard(|| abi::write_defaults(opts, struct_size))
}

/// The C options → the plan options. Errors: [`Error::InvalidArg`] naming the field
/// ([`Error::Range`] for a grid above the limit).
fn convert_opts(o: &farfield_ewald_opts) -> Result<EwaldOpts> {
    let backend = BackendChoice::from_c(o.backend)?;
    let gpu_mixed = match o.gpu_precision {
        FARFIELD_EWALD_GPU_DOUBLE => false,
        FARFIELD_EWALD_GPU_MIXED => true,
        v => {
            return Err(Error::InvalidArg(format!(
                "opts.gpu_precision = {v}; must be 0 (FARFIELD_EWALD_GPU_DOUBLE) or 1 (FARFIELD_EWALD_GPU_MIXED)"
            )))
        }
    };
    let gpu_method = gpu_method_of(o.gpu_method)?;
    // SAFETY: the C caller's promise on `gpu_stream` (documented on the field): a stream of
    // device 0's primary context that outlives the plan; a CPU plan refuses it.
    let gpu_stream = unsafe { GpuStream::from_raw(o.gpu_stream as u64) };
    Ok(EwaldOpts { backend, gpu_mixed, gpu_method, gpu_stream, ..convert_cpu_opts(o)? })
}

fn convert_cpu_opts(o: &farfield_ewald_opts) -> Result<EwaldOpts> {
    if o.nthreads < 0 {
        return Err(Error::InvalidArg(format!("opts.nthreads = {}; must be ≥ 0", o.nthreads)));
    }
    if o.fftw < 0 {
        return Err(Error::InvalidArg(format!("opts.fftw = {}; must be ≥ 0 (FFTW planner flags)", o.fftw)));
    }
    if o.order_or_support < 0 {
        return Err(Error::InvalidArg(format!("opts.order_or_support = {}; must be ≥ 0", o.order_or_support)));
    }
    if !(o.xi >= 0.0 && o.xi.is_finite()) {
        return Err(Error::InvalidArg(format!("opts.xi = {:e}; must be finite and ≥ 0 (0 = automatic)", o.xi)));
    }
    if !(o.rc >= 0.0 && o.rc.is_finite()) {
        return Err(Error::InvalidArg(format!("opts.rc = {:e}; must be finite and ≥ 0 (0 = automatic)", o.rc)));
    }
    let mut grid = [0usize; 3];
    for d in 0..3 {
        if o.grid[d] < 0 {
            return Err(Error::InvalidArg(format!("opts.grid[{d}] = {}; must be ≥ 0", o.grid[d])));
        }
        if o.grid[d] > MAX_GRID_AXIS as i64 {
            return Err(Error::Range(format!("opts.grid[{d}] = {}; the limit is {MAX_GRID_AXIS} per axis", o.grid[d])));
        }
        grid[d] = o.grid[d] as usize;
    }
    Ok(EwaldOpts {
        nthreads: o.nthreads as usize,
        debug: o.debug,
        overrides: Overrides { xi: o.xi, rc: o.rc, grid, order: o.order_or_support as usize },
        fftw_flags: o.fftw as u32,
        terms: match o.terms {
            FARFIELD_EWALD_TERMS_ALL => Terms::All,
            FARFIELD_EWALD_TERMS_KSPACE => Terms::KSpace,
            FARFIELD_EWALD_TERMS_REAL => Terms::Real,
            t => {
                return Err(Error::InvalidArg(format!(
                    "opts.terms = {t}; must be 0 (FARFIELD_EWALD_TERMS_ALL), 1 (_KSPACE) or 2 (_REAL)"
                )))
            }
        },
        ..EwaldOpts::default()
    })
}

/// The locked plan of an execute and its number of charges: `FARFIELD_ERR_NULL_POINTER` for a
/// NULL plan, `FARFIELD_ERR_NPOINTS` when `n` is negative or above `n_max`.
///
/// # Safety
/// `plan` NULL or a live handle from makeplan.
unsafe fn lock_for_execute<'a>(plan: farfield_ewald_plan, n: i64) -> Result<(MutexGuard<'a, EwaldPlan>, usize)> {
    let p = lock(plan)?;
    let n = check_n(&p, n)?;
    Ok((p, n))
}

/// `n` as a count: `FARFIELD_ERR_NPOINTS` when it is negative or above the plan's `n_max`.
fn check_n(p: &EwaldPlan, n: i64) -> Result<usize> {
    if n < 0 {
        return Err(Error::NPoints(format!("n = {n} is negative")));
    }
    if n as u64 > p.n_max() as u64 {
        return Err(Error::NPoints(format!("n = {n} exceeds the plan's n_max = {}", p.n_max())));
    }
    Ok(n as usize)
}

/// Writes the requested energy and virial of `r` (host pointers, NULL = not wanted).
///
/// # Safety
/// `energy` NULL or one writable double, `virial` NULL or nine.
unsafe fn write_energy_virial(r: &EwaldResult, energy: *mut f64, virial: *mut f64) {
    if !energy.is_null() {
        energy.write(r.energy);
    }
    if !virial.is_null() {
        std::ptr::copy_nonoverlapping(r.virial.as_ptr(), virial, 9);
    }
}

/// Reads the nine box numbers.
///
/// # Safety
/// `b` NULL or valid for 9 reads.
unsafe fn read_box(b: *const f64) -> Result<[f64; 9]> {
    let s = slice_in(b, 9, "box")?;
    let mut a = [0.0; 9];
    a.copy_from_slice(s);
    Ok(a)
}

/// The checked arguments of a makeplan: method, cell, `n_max`, options and the CUDA options
/// (`None` for the CPU).
///
/// # Safety
/// As `farfield_ewald_makeplan`.
unsafe fn plan_args(method: c_int, b: *const f64, n_max: i64, opts: *const farfield_ewald_opts)
                    -> Result<(Method, [f64; 9], usize, EwaldOpts)> {
    let m = match method {
        FARFIELD_EWALD_SPECTRAL => Method::Spectral,
        FARFIELD_EWALD_SPME => Method::Spme,
        FARFIELD_EWALD_DIRECT => Method::Direct,
        m => {
            return Err(Error::InvalidArg(format!(
                "method = {m}; must be FARFIELD_EWALD_SPECTRAL (0), FARFIELD_EWALD_SPME (1) or FARFIELD_EWALD_DIRECT (2)"
            )))
        }
    };
    let b = read_box(b)?;
    if n_max < 1 || n_max >= u32::MAX as i64 {
        return Err(Error::NPoints(format!("n_max = {n_max}; must be in 1 … 2^32 − 2")));
    }
    let eo = convert_opts(&abi::read_in(opts)?)?;
    Ok((m, b, n_max as usize, eo))
}

/// Makes an Ewald plan.
///
/// * `method`: `FARFIELD_EWALD_SPECTRAL`, `FARFIELD_EWALD_SPME` or `FARFIELD_EWALD_DIRECT`.
/// * `box`: the nine numbers of the cell (rows a, b, c; lower-triangular, positive diagonal).
///   Any scale (the plan works in scaled units); the smallest height must be at least 2^-20 of
///   the largest entry.
/// * `n_max`: largest number of charges per execute (1 … 2^32 − 2); the accuracy target
///   assumes about this many charges.
/// * `tol`: requested relative RMS force accuracy, `0 < tol < 1`: the RMS force error over the
///   RMS Coulomb force of all pairs (no exclusions; a force field's own Coulomb forces, 1-2 and
///   1-3 pairs excluded, are 10–15× smaller), calibrated on condensed molecular systems (their
///   measured errors land within [tol/3, tol]; random charges about 0.5–1.1 tol; ionic crystals near their symmetric sites, whose forces nearly cancel, can
///   exceed tol relative to those small forces). Below what the method reaches in double
///   precision (1e-12 spectral Ewald and SPME, 1e-14 direct) it is raised to that
///   and `FARFIELD_WARN_TOL_CLAMPED` is reported by `farfield_ewald_get_warnings` (with `tol_used`).
/// * `plan`: receives the plan; `*plan` is set to NULL first and stays NULL on failure.
/// * `opts`: options, or NULL for the defaults; `opts.xi` and `opts.rc` in the box's units;
///   `opts->struct_size` bytes are read (0 or a size ending inside a field →
///   `FARFIELD_ERR_INVALID_ARG`).
///
/// The cost is bounded by the problem size (a fixed number of candidate parameter sets).
///
/// Returns 0 or: `FARFIELD_ERR_NULL_POINTER` (`plan` or `box` NULL), `FARFIELD_ERR_INVALID_ARG`
/// (unknown method, box not lower-triangular / non-positive volume / not finite, cutoff above
/// half the smallest box height, bad override), `FARFIELD_ERR_TOL` (`tol` not in (0, 1)),
/// `FARFIELD_ERR_NPOINTS` (`n_max` outside 1 … 2^32 − 2), `FARFIELD_ERR_RANGE` (a cell flatter
/// than 2^-20; a grid above 65536 per axis or 2^33 points, or more than 2^26 direct-sum wave
/// vectors, needed for `tol` or given in `opts.grid`; an `opts.xi`/`opts.rc` not representable
/// at the box's scale; the message states the size and the limit), `FARFIELD_ERR_ALLOC` (with
/// the byte count), `FARFIELD_ERR_FFT`.
///
/// # Safety
/// `box` must point to 9 readable doubles; `plan` to a writable handle; `opts` NULL or valid.
#[no_mangle]
pub unsafe extern "C" fn farfield_ewald_makeplan(
    method: c_int,
    r#box: *const f64,
    n_max: i64,
    tol: f64,
    plan: *mut farfield_ewald_plan,
    opts: *const farfield_ewald_opts,
) -> c_int {
    guard(|| {
        non_null(plan, "plan")?;
        plan.write(std::ptr::null_mut());
        let (m, b, n_max, eo) = plan_args(method, r#box, n_max, opts)?;
        let p = EwaldPlan::new(m, &b, n_max, tol, &eo)?;
        plan.write(Box::into_raw(Box::new(farfield_ewald_plan_s { inner: Mutex::new(p) })));
        Ok(())
    })
}

/// Makes a **distributed** SPME plan over the MPI communicator `comm` (the Fortran handle
/// `MPI_Fint`: C callers pass `MPI_Comm_c2f(comm)`, Fortran callers their `integer`
/// communicator, `comm%MPI_VAL` with `mpi_f08`). Collective: every rank calls it with the same
/// `method` (`FARFIELD_EWALD_SPME`), `box`, `tol` and options; `n_max` is this rank's largest
/// number of charges per execute, and the parameters are chosen for the sum of `n_max` over
/// the ranks (give `opts.xi`, `opts.rc`, `opts.grid` and `opts.order_or_support` to fix them).
///
/// `farfield_ewald_execute` (collective) then takes the charges this rank owns — any subset of
/// the system, anywhere in the cell, possibly none: the domain decomposition is the caller's —
/// and returns their `φ` and `E` in the caller's order, and the energy and virial of the whole
/// system on every rank. The library routes each charge to the rank holding its slab of the
/// mesh (FFTW-MPI's slabs of z-planes), exchanges the ghosts within `r_c` of each slab itself
/// (the caller passes no ghosts), spreads onto the slab plus halo planes, runs the FFT over
/// MPI and sends the results back. Results equal the single-process plan's to rounding; each
/// rank holds about `1/K` of the mesh plus its halo planes. `opts.terms` KSPACE and REAL work as
/// for `farfield_ewald_makeplan`. Exclusions and scaled pairs (`farfield_ewald_set_exclusions`,
/// `_scaled`, collective) are pairs of **global ids** (0-based, below the sum of `n_max` over
/// the ranks; each rank passes any part of the list, the union counts), and the charges then
/// come with their ids: `farfield_ewald_execute_ids`. `farfield_ewald_set_box` and
/// `farfield_ewald_destroy` are collective as well. Spectral Ewald and the classic sum have no
/// distributed form (`FARFIELD_ERR_NOT_SUPPORTED`).
///
/// Returns 0 or the statuses of `farfield_ewald_makeplan` (on every rank alike when any rank
/// fails), and: `FARFIELD_ERR_NOT_SUPPORTED` (the library was built without MPI — cargo
/// feature `mpi` —, MPI is not initialised or already finalised, a method other than SPME, or
/// `opts.backend = FARFIELD_BACKEND_CUDA`), `FARFIELD_ERR_INVALID_ARG` (`comm` names no
/// communicator or is `MPI_COMM_NULL`; the ranks passed different cells, tolerances or
/// options, reported on every rank), `FARFIELD_ERR_INTERNAL` (an MPI call failed, with MPI's
/// message).
///
/// # Safety
/// As `farfield_ewald_makeplan`. MPI must be initialised; all ranks of `comm` must call.
#[no_mangle]
pub unsafe extern "C" fn farfield_ewald_makeplan_mpi(
    comm: c_int,
    method: c_int,
    r#box: *const f64,
    n_max: i64,
    tol: f64,
    plan: *mut farfield_ewald_plan,
    opts: *const farfield_ewald_opts,
) -> c_int {
    guard(|| {
        non_null(plan, "plan")?;
        plan.write(std::ptr::null_mut());
        #[cfg(feature = "mpi")]
        {
            let comm = crate::mpi::Comm::from_fint(comm)?;
            let args = plan_args(method, r#box, n_max, opts).and_then(|a| EwaldPlan::check_distributed_opts(&a.3).map(|()| a));
            // every rank learns whether any rank's arguments failed (one collective)
            let (m, b, n_max, eo) = comm.agree(args)?;
            let p = crate::ewald::dist::DistEwaldPlan::new(comm, m, &b, n_max, tol, &eo)?;
            plan.write(Box::into_raw(Box::new(farfield_ewald_plan_s { inner: Mutex::new(EwaldPlan::from(p)) })));
            Ok(())
        }
        #[cfg(not(feature = "mpi"))]
        {
            let _ = (comm, method, r#box, n_max, tol, opts);
            Err(Error::NotSupported("this farfield was built without MPI (build it with the cargo feature `mpi`)".into()))
        }
    })
}

/// Changes the cell of a plan (e.g. every step of a constant-pressure run). Keeps the
/// parameters while the estimated error stays within 1.5× the target, otherwise chooses new
/// ones (re-planning the grid); a fixed `opts.rc` above half the new smallest height is an
/// error. The same limits as `farfield_ewald_makeplan` apply to the new cell (any scale; the
/// plan re-plans when the cell's size changes by more than a factor 2^8). On error the plan is
/// unchanged.
///
/// Returns 0 or `FARFIELD_ERR_NULL_POINTER`, `FARFIELD_ERR_INVALID_ARG`, `FARFIELD_ERR_RANGE`
/// (as for `farfield_ewald_makeplan`), `FARFIELD_ERR_ALLOC`, `FARFIELD_ERR_FFT`.
///
/// # Safety
/// `plan` from `farfield_ewald_makeplan`; `box` valid for 9 reads.
#[no_mangle]
pub unsafe extern "C" fn farfield_ewald_set_box(plan: farfield_ewald_plan, r#box: *const f64) -> c_int {
    guard(|| {
        let mut p = lock(plan)?;
        let b = p.agree(read_box(r#box))?;
        p.set_box(&b)
    })
}

/// Sets the excluded pairs (replacing earlier ones): `pairs[2k], pairs[2k+1]` for
/// `k < npairs`, 0-based indices below `n_max`. Their full `1/r` interaction (nearest image) is
/// removed from potentials, fields, energy and virial, as MD codes need for bonded pairs.
/// Pairs are unordered and deduplicated: `(i, j)` and `(j, i)` are the same pair, and a pair
/// listed several times is excluded once. An excluded pair may coincide (its k-space part is
/// then removed by the r → 0 limit `2ξ/√π q_i q_j`). `npairs = 0` clears the list (`pairs` may
/// then be NULL). The list is copied (sorted, 8 bytes per distinct pair). With
/// `opts.terms = FARFIELD_EWALD_TERMS_KSPACE` only the k-space share `erf(ξr)/r` of each pair
/// is removed (the caller's pair loop leaves out the pair's `erfc(ξr)/r`); with `_REAL` only
/// the real-space share.
///
/// Returns 0 or `FARFIELD_ERR_NULL_POINTER`, `FARFIELD_ERR_INVALID_ARG` (`npairs` < 0, an
/// index out of range or a pair (i, i), named in the message with the index),
/// `FARFIELD_ERR_RANGE` (`npairs` above `FARFIELD_EWALD_MAX_EXCLUSIONS` = 2^40),
/// `FARFIELD_ERR_ALLOC` (with the byte count). On error the earlier list is kept. CUDA plans
/// apply the same corrections on the device.
///
/// On a distributed plan (`farfield_ewald_makeplan_mpi`) the call is collective, the indices
/// are global ids below the sum of `n_max` over the ranks (see `farfield_ewald_execute_ids`),
/// each rank passes any part of the list (possibly none: `npairs = 0`; the list is the union
/// over the ranks), and the pairs are stored distributed (about `20·npairs/K` bytes per rank);
/// every status is returned on every rank alike.
///
/// # Safety
/// `plan` from `farfield_ewald_makeplan`; `pairs` valid for `2·npairs` reads.
#[no_mangle]
pub unsafe extern "C" fn farfield_ewald_set_exclusions(plan: farfield_ewald_plan, npairs: i64, pairs: *const i64) -> c_int {
    guard(|| set_pairs(plan, npairs, pairs, None))
}

/// Sets the excluded and scaled pairs (replacing earlier ones, those of
/// `farfield_ewald_set_exclusions` included): pair `k` = (`pairs[2k]`, `pairs[2k+1]`)
/// interacts as `scales[k] q_i q_j / r` (nearest image) instead of `q_i q_j / r`, as force
/// fields scale 1-4 pairs (AMBER `1/1.2`, OPLS and GROMOS `0.5`); `0` excludes the pair (as
/// `farfield_ewald_set_exclusions`), `1` leaves it unchanged (dropped from the list); any
/// finite value. Pairs are unordered; a pair listed several times with the same scale counts
/// once. Only fully excluded pairs (scale 0) may coincide. With `opts.terms =
/// FARFIELD_EWALD_TERMS_KSPACE` only the k-space share `(1 − s) erf(ξr)/r` of each correction
/// is applied (the caller's pair loop scales the pair's `erfc(ξr)/r` by `s`); with `_REAL`
/// only the real-space share. `npairs = 0` clears the list (`pairs` and `scales` may then be
/// NULL). Copied: 16 bytes per distinct pair.
///
/// Returns 0 or `FARFIELD_ERR_NULL_POINTER`, `FARFIELD_ERR_INVALID_ARG` (`npairs` < 0, an
/// index out of range, a pair (i, i), a pair listed with two different scales: named in the
/// message), `FARFIELD_ERR_NONFINITE` (a scale NaN/Inf, named), `FARFIELD_ERR_RANGE` (`npairs`
/// above `FARFIELD_EWALD_MAX_EXCLUSIONS`), `FARFIELD_ERR_ALLOC`. On error the earlier list is
/// kept. CUDA plans apply the same corrections on the device. Distributed plans: as
/// `farfield_ewald_set_exclusions` (a pair given on two ranks with two different scales is
/// `FARFIELD_ERR_INVALID_ARG` on every rank).
///
/// # Safety
/// `plan` from `farfield_ewald_makeplan`; `pairs` valid for `2·npairs` reads, `scales` for
/// `npairs`.
#[no_mangle]
pub unsafe extern "C" fn farfield_ewald_set_exclusions_scaled(
    plan: farfield_ewald_plan, npairs: i64, pairs: *const i64, scales: *const f64,
) -> c_int {
    guard(|| set_pairs(plan, npairs, pairs, Some(scales)))
}

/// The checks and the work of both `set_exclusions` calls (`scales`: `None` for the unscaled
/// one).
///
/// # Safety
/// As `farfield_ewald_set_exclusions_scaled`.
unsafe fn set_pairs(plan: farfield_ewald_plan, npairs: i64, pairs: *const i64, scales: Option<*const f64>) -> Result<()> {
    let mut p = lock(plan)?;
    // a distributed plan: one rank's bad argument fails the call on every rank
    let (v, sc) = p.agree(pair_args(npairs, pairs, scales))?;
    p.set_exclusions(v, sc)
}

/// Evaluates the electrostatics of `n` charges (the terms of `opts.terms`: all by default).
///
/// * `xyz`: `3n` positions, `xyz[3*i + d]` (row-major `n × 3`); `q`: `n` charges (both may be
///   NULL when `n = 0`).
/// * `phi`: NULL, or `n` potentials `φ_i = ∂U/∂q_i` (all images, self term, background).
/// * `field`: NULL, or `3n` values `E = −∇φ`, `field[3*i + d]`; force `F_i = q_i E_i`.
/// * `energy`: NULL, or `U = ½ Σ q_i φ_i`.
/// * `virial`: NULL, or 9 values `W[3a + b] = −∂U/∂ε_ab` (symmetric; costs a little extra).
///
/// Units: the caller's, with the kernel `1/r` and no Coulomb constant: `φ` in charge/length,
/// `E` in charge/length², `U` and `W` in charge²/length. Multiply by the code's constant
/// (1/(4πε₀); LAMMPS `force->qqrd2e`, GROMACS 138.935458 kJ mol⁻¹ nm e⁻²). (The Poisson
/// solvers use the kernel `1/(4πr)` instead, `−∇²φ = ρ`.)
///
/// Positions may lie anywhere (they are wrapped into the cell; far outside it they lose
/// accuracy like any wrapped coordinate: about `|s| · 1e-16` cell lengths for a fractional
/// coordinate `s`). Two distinct charges closer than 2^-40 of the largest cell length
/// (coincident) must be an excluded pair. Each requested output is checked: a result that is
/// not representable at this cell and charge scale is an error, never returned with status 0.
///
/// Outputs are written only on success. Returns 0 or: `FARFIELD_ERR_NULL_POINTER`,
/// `FARFIELD_ERR_NPOINTS` (`n` < 0 or `n > n_max`), `FARFIELD_ERR_NONFINITE` (a position or
/// charge NaN/Inf; the message names the first index), `FARFIELD_ERR_INVALID_ARG` (an
/// exclusion index ≥ n; two coincident charges that are not an excluded pair, both named; a
/// distributed plan with exclusions, which needs `farfield_ewald_execute_ids`),
/// `FARFIELD_ERR_RANGE` (a requested output overflows, or its largest value underflows below
/// the smallest normal double, at this scale; a position whose fractional coordinate is not
/// representable), `FARFIELD_ERR_ALLOC` (with the byte count; on a CUDA plan also device
/// memory), `FARFIELD_ERR_INTERNAL` (a device error, CUDA plans).
///
/// CUDA plans (`opts.backend = FARFIELD_BACKEND_CUDA`) take the same host arrays and give the
/// same status codes: the positions and charges are copied into device buffers of the plan
/// (`32·n_max` bytes, allocated by the first call), the results copied back, all on the
/// plan's stream (`opts.gpu_stream` or the default stream), which the call synchronises
/// before it returns. Their `farfield_ewald_params.real_s` and `kspace_s` are the wall-clock
/// seconds of the two device parts of the last execute (each ends by reading its sums back).
///
/// # Safety
/// `plan` from `farfield_ewald_makeplan`; arrays of the sizes above.
#[no_mangle]
pub unsafe extern "C" fn farfield_ewald_execute(
    plan: farfield_ewald_plan,
    n: i64,
    xyz: *const f64,
    q: *const f64,
    phi: *mut f64,
    field: *mut f64,
    energy: *mut f64,
    virial: *mut f64,
) -> c_int {
    guard(|| execute_c(plan, n, None, xyz, q, phi, field, energy, virial))
}

/// The body of `farfield_ewald_execute` (`ids` = `None`) and `farfield_ewald_execute_ids`
/// (`Some`): the checks (agreed on every rank of a distributed plan), the execute, the energy
/// and virial written.
///
/// # Safety
/// As those functions.
#[allow(clippy::too_many_arguments)]
unsafe fn execute_c(plan: farfield_ewald_plan, n: i64, ids: Option<*const i64>, xyz: *const f64, q: *const f64, phi: *mut f64,
                    field: *mut f64, energy: *mut f64, virial: *mut f64) -> Result<()> {
    let mut p = lock(plan)?;
    let args = (|| {
        let n = check_n(&p, n)?;
        let mut inputs = vec![region(xyz, 3 * n, "xyz"), region(q, n, "q")];
        if let Some(ids) = ids {
            inputs.insert(0, region(ids, n, "ids"));
        }
        check_outputs_disjoint(
            &inputs,
            &[region(phi, n, "phi"), region(field, 3 * n, "field"), region(energy, 1, "energy"), region(virial, 9, "virial")],
        )?;
        let ids = ids.map(|ids| slice_in(ids, n, "ids")).transpose()?;
        let xyz = slice_in(xyz, 3 * n, "xyz")?;
        let q = slice_in(q, n, "q")?;
        let phi = if phi.is_null() { None } else { Some(slice_out(phi, n, "phi")?) };
        let field = if field.is_null() { None } else { Some(slice_out(field, 3 * n, "field")?) };
        Ok((ids, xyz, q, phi, field))
    })();
    let (ids, xyz, q, phi, field) = p.agree(args)?;
    let (e, v) = (!energy.is_null(), !virial.is_null());
    let r = match ids {
        None => p.execute_with(xyz, q, phi, field, e, v)?,
        Some(ids) => p.execute_ids(ids, xyz, q, phi, field, e, v)?,
    };
    write_energy_virial(&r, energy, virial);
    Ok(())
}

/// `farfield_ewald_execute` on a **distributed** plan (`farfield_ewald_makeplan_mpi`) with the
/// global id of each of this rank's charges, as a plan with exclusions needs them. Collective.
///
/// * `ids`: `n` values (`int64_t`), `ids[i]` the global id of charge `i` of this rank: the
///   0-based index of the charge in the whole system (an MD code's global atom tag minus 1),
///   in `0 … n_total − 1` with `n_total` the sum of `n_max` over the ranks; unique over all
///   ranks, and kept by a charge that moves to another rank between calls. The pairs of
///   `farfield_ewald_set_exclusions` and `_scaled` on a distributed plan are pairs of such
///   ids. May be NULL when `n = 0`.
/// * `xyz`, `q`, `phi`, `field`, `energy`, `virial`: as `farfield_ewald_execute` (this rank's
///   `n` charges, `xyz[3*i + d]`; results for them in the same order; the energy and virial of
///   the whole system on every rank).
///
/// Each excluded or scaled pair is corrected once, by the rank whose block of ids holds the
/// pair's lower id (ids are split in `K` equal blocks), with its partner fetched from the
/// rank of the partner's id; the corrections (and `opts.terms`: KSPACE applies the k-space
/// share, REAL the real-space share) are those of the single-process plan, and the results
/// equal its results to rounding.
///
/// A plan without exclusions may take ids or not (`farfield_ewald_execute`); they are then
/// only range-checked. A plan with exclusions needs them: `farfield_ewald_execute` on it is
/// `FARFIELD_ERR_INVALID_ARG` (on every rank).
///
/// Returns 0 or, on every rank alike (the same status on every rank; the message of a rank
/// that did not fail itself names the failing rank and repeats its message): the statuses of
/// `farfield_ewald_execute`; `FARFIELD_ERR_NULL_POINTER` (`ids` NULL with `n > 0`);
/// `FARFIELD_ERR_INVALID_ARG` (an id outside `0 … n_total − 1`; an id given to two charges; a
/// pair naming an id that no rank passed; coincident charges that are not a fully excluded
/// pair, named by their ids; a single-process plan, also every plan of a library built
/// without MPI: "needs a distributed plan").
///
/// New in 1.3 (an addition: binaries built against an older header keep calling
/// `farfield_ewald_execute`, which is unchanged).
///
/// # Safety
/// `plan` from `farfield_ewald_makeplan_mpi`; `ids` valid for `n` reads; other arrays as
/// `farfield_ewald_execute`.
#[no_mangle]
pub unsafe extern "C" fn farfield_ewald_execute_ids(
    plan: farfield_ewald_plan,
    n: i64,
    ids: *const i64,
    xyz: *const f64,
    q: *const f64,
    phi: *mut f64,
    field: *mut f64,
    energy: *mut f64,
    virial: *mut f64,
) -> c_int {
    guard(|| execute_c(plan, n, Some(ids), xyz, q, phi, field, energy, virial))
}

/// Like `farfield_ewald_execute` with **device** arrays, for GPU MD codes. The plan must have
/// been made with `opts.backend = FARFIELD_BACKEND_CUDA`.
///
/// * `xyz` (`3n` doubles, `xyz[3*i + d]`), `q` (`n`), `phi` (`n`) and `field` (`3n`,
///   `field[3*i + d]`): device pointers (CUDA memory of device 0's primary context, the CUDA
///   runtime's); `phi` and `field` may be NULL (not wanted); `xyz` and `q` may be NULL when
///   `n = 0`. Same conventions, units and meaning as `farfield_ewald_execute`.
/// * `energy` (one double) and `virial` (nine, `W[3a + b]`): **host** pointers, or NULL.
///
/// Streams: the work is issued on the plan's stream (`opts.gpu_stream`, or the default
/// stream); `xyz` and `q` must be ready in that stream's order when the call is made. The call
/// synchronises that stream while it runs (it reads back the input checks, the real-space
/// status and the energy and virial reductions), so work queued on the stream before the call
/// is complete when it returns. The last steps — the self and background terms added to the
/// potentials and the copies of the potentials and fields from the plan's result buffers into
/// `phi` and `field` — are queued on the stream after the last synchronisation and are **not**
/// waited for: on return `phi` and `field` are complete in stream order (work the caller
/// queues on the same stream sees them), while the host or another stream must synchronise
/// with the plan's stream before reading them. `energy` and `virial` are final on return.
///
/// Outputs are written only on success: the plan computes into its own device buffers
/// (`32·n_max` bytes, allocated by the first call that wants them) and copies into `phi` and
/// `field` only after every check has passed; `phi` and `field` must not overlap the inputs or
/// each other (compared by address). Checks as `farfield_ewald_execute` (non-finite input,
/// exclusions, coincident charges, positions too far outside the cell: found on the device),
/// except that `phi` and `field` are not scanned for overflow (that would take a device
/// reduction per array and call): the energy and the virial are, and a non-finite potential
/// makes the energy non-finite unless its charge is 0.
///
/// Returns 0 or: `FARFIELD_ERR_NULL_POINTER` (`plan`; `xyz` or `q` NULL with `n > 0`),
/// `FARFIELD_ERR_NPOINTS` (`n` < 0 or `n > n_max`), `FARFIELD_ERR_INVALID_ARG` (a CPU plan:
/// "execute_device needs a CUDA plan"; overlapping arrays; an exclusion index ≥ n; coincident
/// charges that are not an excluded pair, both named), `FARFIELD_ERR_NONFINITE` (the first bad
/// position or charge, named), `FARFIELD_ERR_RANGE` (a position whose fractional coordinates
/// are not representable; an energy or virial that is not finite or underflows),
/// `FARFIELD_ERR_ALLOC` (device memory), `FARFIELD_ERR_INTERNAL` (a device error). These are
/// checked in this order up to the backend; the device checks follow.
///
/// # Safety
/// `plan` from `farfield_ewald_makeplan`; each non-NULL array a device allocation of device 0
/// of the stated size; `energy` NULL or a writable host double, `virial` NULL or nine.
#[no_mangle]
pub unsafe extern "C" fn farfield_ewald_execute_device(
    plan: farfield_ewald_plan,
    n: i64,
    xyz: *const f64,
    q: *const f64,
    phi: *mut f64,
    field: *mut f64,
    energy: *mut f64,
    virial: *mut f64,
) -> c_int {
    guard(|| {
        let (mut p, n) = lock_for_execute(plan, n)?;
        if n > 0 {
            non_null(xyz, "xyz")?;
            non_null(q, "q")?;
        }
        // device arrays among themselves, host outputs among themselves
        check_outputs_disjoint(&[region(xyz, 3 * n, "xyz"), region(q, n, "q")], &[region(phi, n, "phi"), region(field, 3 * n, "field")])?;
        check_outputs_disjoint(&[], &[region(energy, 1, "energy"), region(virial, 9, "virial")])?;
        let Some(g) = p.cuda() else {
            return Err(Error::InvalidArg(
                "execute_device needs a CUDA plan (opts.backend = FARFIELD_BACKEND_CUDA); this plan runs on the CPU".into(),
            ));
        };
        let r = g.execute_device(n, xyz as u64, q as u64, phi as u64, field as u64, !energy.is_null(), !virial.is_null())?;
        write_energy_virial(&r, energy, virial);
        Ok(())
    })
}

/// Writes the plan's parameters (in the box's units) and the timings of its last execute into
/// `*out` (the tolerance in use and the warnings: `farfield_ewald_get_warnings`). The caller
/// sets `out->struct_size = sizeof(farfield_ewald_params)` first; only that many bytes are
/// written, and `out->struct_size` is left at the number of bytes written.
///
/// Returns 0 or `FARFIELD_ERR_NULL_POINTER`, `FARFIELD_ERR_INVALID_ARG` (`out->struct_size` 0
/// or ending inside a field; nothing written).
///
/// # Safety
/// `plan` from `farfield_ewald_makeplan`; `out` NULL or `out->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn farfield_ewald_get_params(plan: farfield_ewald_plan, out: *mut farfield_ewald_params) -> c_int {
    guard(|| {
        let p = lock(plan)?;
        non_null(out, "out")?;
        let e = p.params();
        let v = farfield_ewald_params {
            struct_size: std::mem::size_of::<farfield_ewald_params>(),
            xi: e.xi,
            rc: e.rc,
            grid: e.grid.map(|g| g as i64),
            order_or_support: e.order as i32,
            method: match p.method() {
                Method::Spectral => FARFIELD_EWALD_SPECTRAL,
                Method::Spme => FARFIELD_EWALD_SPME,
                Method::Direct => FARFIELD_EWALD_DIRECT,
            },
            eta: e.eta,
            kc: e.kc,
            est_rel_err: e.est_rel_err,
            real_s: e.real_s,
            kspace_s: e.kspace_s,
        };
        abi::write_out(out, &v, "out")
    })
}

/// Writes the tolerance a plan works to and its warnings: `*tol_used` is the request, raised
/// to the method's limit (1e-12 for spectral Ewald and SPME, 1e-14 for the classic sum) when
/// below it; `*warnings` is a bit set of `FARFIELD_WARN_TOL_CLAMPED` (the tolerance was raised
/// to `tol_used`) and `FARFIELD_EWALD_WARN_TOL_NOT_MET` (the overrides in `opts` keep the
/// estimated error `est_rel_err` of `farfield_ewald_get_params` above `tol_used`). Either
/// pointer may be NULL.
///
/// Returns 0 or `FARFIELD_ERR_NULL_POINTER` (`plan`).
///
/// # Safety
/// `plan` from `farfield_ewald_makeplan`; `tol_used` and `warnings` NULL or writable.
#[no_mangle]
pub unsafe extern "C" fn farfield_ewald_get_warnings(plan: farfield_ewald_plan, tol_used: *mut f64, warnings: *mut c_int) -> c_int {
    guard(|| {
        let p = lock(plan)?;
        let e = p.params();
        if !tol_used.is_null() {
            tol_used.write(e.tol_used);
        }
        if !warnings.is_null() {
            warnings.write(e.warnings);
        }
        Ok(())
    })
}

/// Destroys a plan and frees its memory. NULL is fine (returns 0).
///
/// # Safety
/// `plan` must be NULL or a live plan from `farfield_ewald_makeplan`, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn farfield_ewald_destroy(plan: farfield_ewald_plan) -> c_int {
    destroy_boxed(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::*;
    use crate::ewald::CpuEwald;
    use crate::nufft::options::{FARFIELD_BACKEND_CPU, FARFIELD_BACKEND_CUDA};
    use std::ptr::{null, null_mut};

    use crate::capi::last_error_message as msg;

    const CUBE: [f64; 9] = [2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0];

    fn make(method: c_int, b: &[f64; 9], n_max: i64, tol: f64, o: *const farfield_ewald_opts) -> (c_int, farfield_ewald_plan) {
        let mut p: farfield_ewald_plan = 0x1 as farfield_ewald_plan; // must be reset to NULL
        let s = unsafe { farfield_ewald_makeplan(method, b.as_ptr(), n_max, tol, &mut p, o) };
        (s, p)
    }

    #[test]
    fn execute_ids_needs_a_distributed_plan() {
        let (s, p) = make(FARFIELD_EWALD_SPME, &CUBE, 4, 1e-5, null());
        assert_eq!(s, 0, "{}", msg());
        let xyz = [0.1, 0.2, 0.3, 1.1, 1.2, 1.3, 0.5, 1.5, 0.7, 1.9, 0.1, 1.0];
        let q = [1.0, -1.0, 0.5, -0.5];
        let ids = [0i64, 1, 2, 3];
        let mut phi = [7.0; 4];
        // SAFETY: arrays of the stated sizes; p from makeplan.
        unsafe {
            let st = farfield_ewald_execute_ids(p, 4, ids.as_ptr(), xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), null_mut(), null_mut(),
                                                null_mut());
            assert_eq!(st, FARFIELD_ERR_INVALID_ARG);
            assert!(msg().contains("needs a distributed plan"), "{}", msg());
            assert_eq!(phi, [7.0; 4], "nothing written");
            let st = farfield_ewald_execute_ids(p, 4, null(), xyz.as_ptr(), q.as_ptr(), null_mut(), null_mut(), null_mut(), null_mut());
            assert_eq!(st, FARFIELD_ERR_NULL_POINTER, "NULL ids with n > 0");
            let st = farfield_ewald_execute_ids(null_mut(), 0, null(), null(), null(), null_mut(), null_mut(), null_mut(), null_mut());
            assert_eq!(st, FARFIELD_ERR_NULL_POINTER, "NULL plan");
            // ids overlapping an output
            let mut buf = [0.0f64; 4];
            let st = farfield_ewald_execute_ids(p, 4, buf.as_ptr() as *const i64, xyz.as_ptr(), q.as_ptr(), buf.as_mut_ptr(), null_mut(),
                                                null_mut(), null_mut());
            assert_eq!(st, FARFIELD_ERR_INVALID_ARG, "ids overlapping phi");
            assert_eq!(farfield_ewald_destroy(p), 0);
        }
    }

    #[test]
    fn opts_layout_and_defaults() {
        assert_eq!(FARFIELD_EWALD_WARN_TOL_NOT_MET, crate::ewald::WARN_TOL_NOT_MET);
        abi::check_fields::<farfield_ewald_opts>();
        abi::check_fields::<farfield_ewald_params>();
        assert_eq!(std::mem::size_of::<farfield_ewald_opts>(), 88);
        assert_eq!(std::mem::offset_of!(farfield_ewald_opts, nthreads), 8);
        assert_eq!(std::mem::offset_of!(farfield_ewald_opts, xi), 24);
        assert_eq!(std::mem::offset_of!(farfield_ewald_opts, grid), 40);
        assert_eq!(std::mem::offset_of!(farfield_ewald_opts, backend), 64);
        assert_eq!(std::mem::offset_of!(farfield_ewald_opts, gpu_precision), 68);
        assert_eq!(std::mem::offset_of!(farfield_ewald_opts, gpu_method), 72);
        assert_eq!(std::mem::offset_of!(farfield_ewald_opts, terms), 76);
        assert_eq!(std::mem::offset_of!(farfield_ewald_opts, gpu_stream), 80);
        assert_eq!(std::mem::size_of::<farfield_ewald_params>(), 96);
        assert_eq!(std::mem::offset_of!(farfield_ewald_params, xi), 8);
        assert_eq!(std::mem::offset_of!(farfield_ewald_params, eta), 56);
        assert_eq!(std::mem::offset_of!(farfield_ewald_params, kspace_s), 88);
        let sz = std::mem::size_of::<farfield_ewald_opts>();
        let mut o = farfield_ewald_opts {
            struct_size: 9, nthreads: 9, debug: 9, fftw: 9, order_or_support: 9, xi: 9.0, rc: 9.0, grid: [9; 3], backend: 9,
            gpu_precision: 9, gpu_method: 9, terms: 9, gpu_stream: 9 as *mut c_void,
        };
        assert_eq!(unsafe { farfield_ewald_default_opts(&mut o, sz) }, 0);
        assert_eq!(o, default_opts());
        assert_eq!((o.fftw, o.struct_size, o.backend, o.gpu_precision, o.gpu_method, o.terms), (64, 88, 0, 0, 0, 0));
        assert!(o.gpu_stream.is_null());
        assert_eq!(unsafe { farfield_ewald_default_opts(null_mut(), sz) }, FARFIELD_ERR_NULL_POINTER);
        assert_eq!(unsafe { farfield_ewald_default_opts(&mut o, 0) }, FARFIELD_ERR_INVALID_ARG);
        assert_eq!(unsafe { farfield_ewald_default_opts(&mut o, 44) }, FARFIELD_ERR_INVALID_ARG);
        // an older caller without `grid`: makeplan takes the automatic grid, not the bytes after
        let mut old = farfield_ewald_opts { grid: [-5; 3], ..o };
        assert_eq!(unsafe { farfield_ewald_default_opts(&mut old, 40) }, 0);
        assert_eq!((old.struct_size, old.grid), (40, [-5; 3]));
        let (s, p) = make(FARFIELD_EWALD_SPME, &CUBE, 10, 1e-4, &old);
        assert_eq!(s, 0, "{}", msg());
        old.struct_size = 64;
        assert_eq!(make(FARFIELD_EWALD_SPME, &CUBE, 10, 1e-4, &old).0, FARFIELD_ERR_INVALID_ARG);
        // a 1.2.0 caller (64 bytes): whatever follows its struct (here: CUDA, mixed, GROUP, a
        // bad terms and a stream, each refused if it were read) is never read
        let v120 = farfield_ewald_opts {
            struct_size: 64, grid: [0; 3], backend: 2, gpu_precision: 1, gpu_method: 5, terms: 7, gpu_stream: 0x40 as *mut c_void, ..o
        };
        let (s2, p2) = make(FARFIELD_EWALD_SPME, &CUBE, 10, 1e-4, &v120);
        assert_eq!(s2, 0, "{}", msg());
        assert!(unsafe { &*p2 }.inner.lock().unwrap().is_cpu());
        unsafe { farfield_ewald_destroy(p2) };
        // sizes ending inside the new fields
        for sz in [66, 70, 84] {
            assert_eq!(unsafe { farfield_ewald_default_opts(&mut o, sz) }, FARFIELD_ERR_INVALID_ARG, "{sz}");
        }
        for sz in [68, 72, 76, 80] {
            let mut part = default_opts();
            assert_eq!(unsafe { farfield_ewald_default_opts(&mut part, sz) }, 0, "{sz}");
            assert_eq!(make(FARFIELD_EWALD_SPME, &CUBE, 10, 1e-4, &part).0, 0, "{sz}: {}", msg());
        }
        // get_params into an older, smaller struct (up to `method`) leaves the rest alone
        let mut prm = farfield_ewald_params { struct_size: 56, eta: -7.0, ..Default::default() };
        unsafe {
            assert_eq!(farfield_ewald_get_params(p, &mut prm), 0);
            assert_eq!((prm.struct_size, prm.method, prm.eta), (56, FARFIELD_EWALD_SPME, -7.0));
            assert!(prm.xi > 0.0);
            prm.struct_size = 0;
            assert_eq!(farfield_ewald_get_params(p, &mut prm), FARFIELD_ERR_INVALID_ARG);
            assert!(msg().contains("sizeof"), "{}", msg());
            farfield_ewald_destroy(p);
        }
    }

    #[test]
    fn makeplan_errors() {
        let mut o = default_opts();
        o.nthreads = 1;
        assert_eq!(make(7, &CUBE, 10, 1e-5, &o), (FARFIELD_ERR_INVALID_ARG, null_mut()));
        assert!(msg().contains("method"));
        // tol outside (0, 1)
        for tol in [0.0, -1e-3, 1.0, 2.0, f64::NAN] {
            assert_eq!(make(FARFIELD_EWALD_SPME, &CUBE, 10, tol, &o), (FARFIELD_ERR_TOL, null_mut()));
        }
        // n_max
        assert_eq!(make(FARFIELD_EWALD_SPME, &CUBE, 0, 1e-5, &o).0, FARFIELD_ERR_NPOINTS);
        assert_eq!(make(FARFIELD_EWALD_SPME, &CUBE, -5, 1e-5, &o).0, FARFIELD_ERR_NPOINTS);
        // not lower-triangular, non-positive volume, non-finite
        let mut b = CUBE;
        b[1] = 0.3;
        assert_eq!(make(FARFIELD_EWALD_SPME, &b, 10, 1e-5, &o).0, FARFIELD_ERR_INVALID_ARG);
        assert!(msg().contains("lower-triangular"), "{}", msg());
        let mut b = CUBE;
        b[4] = -2.0;
        assert_eq!(make(FARFIELD_EWALD_SPECTRAL, &b, 10, 1e-5, &o).0, FARFIELD_ERR_INVALID_ARG);
        let mut b = CUBE;
        b[8] = 0.0;
        assert_eq!(make(FARFIELD_EWALD_DIRECT, &b, 10, 1e-5, &o).0, FARFIELD_ERR_INVALID_ARG);
        let mut b = CUBE;
        b[6] = f64::INFINITY;
        assert_eq!(make(FARFIELD_EWALD_SPME, &b, 10, 1e-5, &o).0, FARFIELD_ERR_INVALID_ARG);
        // cutoff above half the smallest height (1.0 here)
        let mut oc = o;
        oc.rc = 1.2;
        assert_eq!(make(FARFIELD_EWALD_SPME, &CUBE, 10, 1e-5, &oc).0, FARFIELD_ERR_INVALID_ARG);
        assert!(msg().contains("half the smallest"), "{}", msg());
        // bad overrides
        let mut ob = o;
        ob.nthreads = -1;
        assert_eq!(make(FARFIELD_EWALD_SPME, &CUBE, 10, 1e-5, &ob).0, FARFIELD_ERR_INVALID_ARG);
        let mut ob = o;
        ob.order_or_support = 7;
        assert_eq!(make(FARFIELD_EWALD_SPECTRAL, &CUBE, 10, 1e-5, &ob).0, FARFIELD_ERR_INVALID_ARG);
        let mut ob = o;
        ob.grid = [16, 0, 16];
        assert_eq!(make(FARFIELD_EWALD_SPME, &CUBE, 10, 1e-5, &ob).0, FARFIELD_ERR_INVALID_ARG);
        let mut ob = o;
        ob.xi = f64::NAN;
        assert_eq!(make(FARFIELD_EWALD_SPME, &CUBE, 10, 1e-5, &ob).0, FARFIELD_ERR_INVALID_ARG);
        // NULL arguments
        unsafe {
            assert_eq!(farfield_ewald_makeplan(1, CUBE.as_ptr(), 10, 1e-5, null_mut(), &o), FARFIELD_ERR_NULL_POINTER);
            let mut p = 0x1 as farfield_ewald_plan;
            assert_eq!(farfield_ewald_makeplan(1, null(), 10, 1e-5, &mut p, &o), FARFIELD_ERR_NULL_POINTER);
            assert!(p.is_null());
            assert_eq!(farfield_ewald_destroy(null_mut()), 0);
        }
    }

    #[test]
    fn execute_roundtrip_and_errors() {
        let mut o = default_opts();
        o.nthreads = 1;
        let n = 40usize;
        let (s, p) = make(FARFIELD_EWALD_SPME, &CUBE, n as i64, 1e-6, &o);
        assert_eq!(s, 0);
        let xyz: Vec<f64> = (0..3 * n).map(|i| ((i * 7919) % 1000) as f64 * 0.002 - 0.3).collect();
        let mut q: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 0.5 } else { -0.5 }).collect();
        let mut phi = vec![0.0; n];
        let mut f = vec![0.0; 3 * n];
        let mut u = 0.0;
        let mut w = [0.0; 9];
        unsafe {
            assert_eq!(farfield_ewald_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), f.as_mut_ptr(), &mut u, w.as_mut_ptr()), 0);
        }
        // same as the Rust plan
        let mut rp = CpuEwald::new(Method::Spme, &CUBE, n, 1e-6, &convert_opts(&o).unwrap()).unwrap();
        let mut phi2 = vec![0.0; n];
        let mut f2 = vec![0.0; 3 * n];
        let r = rp.execute(&xyz, &q, Some(&mut phi2), Some(&mut f2), true).unwrap();
        assert_eq!((phi.clone(), f.clone(), u, w), (phi2, f2, r.energy, r.virial));
        let before = (phi.clone(), f.clone(), u, w);
        unsafe {
            // NULL plan / arrays
            assert_eq!(farfield_ewald_execute(null_mut(), n as i64, xyz.as_ptr(), q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_ewald_execute(p, n as i64, null(), q.as_ptr(), phi.as_mut_ptr(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_ewald_execute(p, n as i64, xyz.as_ptr(), null(), phi.as_mut_ptr(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_NULL_POINTER);
            // n > n_max, n < 0
            assert_eq!(farfield_ewald_execute(p, n as i64 + 1, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_NPOINTS);
            assert_eq!(farfield_ewald_execute(p, -1, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_NPOINTS);
            // non-finite position and charge, named by index
            let mut bad = xyz.clone();
            bad[3 * 17 + 1] = f64::NAN;
            assert_eq!(farfield_ewald_execute(p, n as i64, bad.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), f.as_mut_ptr(), &mut u, w.as_mut_ptr()), FARFIELD_ERR_NONFINITE);
            assert!(msg().contains("charge 17"), "{}", msg());
            q[23] = f64::INFINITY;
            assert_eq!(farfield_ewald_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), f.as_mut_ptr(), &mut u, w.as_mut_ptr()), FARFIELD_ERR_NONFINITE);
            assert!(msg().contains("q[23]"), "{}", msg());
            q[23] = -0.5;
            // outputs overlapping an input or each other: refused, naming both
            let mut xyz2 = xyz.clone();
            let x2 = xyz2.as_mut_ptr();
            assert_eq!(farfield_ewald_execute(p, n as i64, x2, q.as_ptr(), null_mut(), x2, null_mut(), null_mut()), FARFIELD_ERR_INVALID_ARG);
            assert!(msg().contains("`xyz`") && msg().contains("`field`"), "{}", msg());
            assert_eq!(xyz2, xyz);
            assert_eq!(farfield_ewald_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), f.as_mut_ptr(), f.as_mut_ptr(), &mut u, null_mut()), FARFIELD_ERR_INVALID_ARG);
            assert!(msg().contains("`phi`") && msg().contains("`field`"), "{}", msg());
            assert_eq!(farfield_ewald_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), null_mut(), phi.as_mut_ptr().add(2), null_mut()), FARFIELD_ERR_INVALID_ARG);
        }
        // failed calls leave the outputs untouched
        assert_eq!((phi.clone(), f.clone(), u, w), before);
        unsafe {
            // exclusions
            let pairs = [0i64, 1, 2, 3];
            assert_eq!(farfield_ewald_set_exclusions(p, 2, pairs.as_ptr()), 0);
            assert_eq!(farfield_ewald_set_exclusions(p, -1, pairs.as_ptr()), FARFIELD_ERR_INVALID_ARG);
            assert_eq!(farfield_ewald_set_exclusions(p, 2, null()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_ewald_set_exclusions(null_mut(), 2, pairs.as_ptr()), FARFIELD_ERR_NULL_POINTER);
            let badp = [0i64, 40];
            assert_eq!(farfield_ewald_set_exclusions(p, 1, badp.as_ptr()), FARFIELD_ERR_INVALID_ARG);
            assert!(msg().contains("exclusion pair 0"), "{}", msg());
            let selfp = [5i64, 5];
            assert_eq!(farfield_ewald_set_exclusions(p, 1, selfp.as_ptr()), FARFIELD_ERR_INVALID_ARG);
            // still the valid list: an execute with fewer charges than an excluded index fails
            assert_eq!(farfield_ewald_execute(p, 3, xyz.as_ptr(), q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_INVALID_ARG);
            assert_eq!(farfield_ewald_set_exclusions(p, 0, null()), 0);
            // n = 0 with NULL arrays: zero energy
            assert_eq!(farfield_ewald_execute(p, 0, null(), null(), null_mut(), null_mut(), &mut u, null_mut()), 0);
            assert_eq!(u, 0.0);
            // set_box: bad boxes and a cutoff that no longer fits
            let mut b = CUBE;
            b[2] = 1.0;
            assert_eq!(farfield_ewald_set_box(p, b.as_ptr()), FARFIELD_ERR_INVALID_ARG);
            assert_eq!(farfield_ewald_set_box(p, null()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_ewald_set_box(null_mut(), CUBE.as_ptr()), FARFIELD_ERR_NULL_POINTER);
            let b2 = [2.2, 0.0, 0.0, 0.3, 2.1, 0.0, -0.2, 0.4, 1.9];
            assert_eq!(farfield_ewald_set_box(p, b2.as_ptr()), 0);
            assert_eq!(farfield_ewald_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), null_mut(), f.as_mut_ptr(), &mut u, null_mut()), 0);
            let mut prm = farfield_ewald_params::default();
            assert_eq!(farfield_ewald_get_params(p, &mut prm), 0);
            assert_eq!(prm.method, FARFIELD_EWALD_SPME);
            assert!(prm.xi > 0.0 && prm.rc > 0.0 && prm.grid[0] > 0 && prm.order_or_support >= 2);
            assert!(prm.real_s > 0.0 || prm.kspace_s > 0.0);
            assert_eq!(farfield_ewald_get_params(p, null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_ewald_get_params(null_mut(), &mut prm), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_ewald_destroy(p), 0);
        }
        // a plan with a fixed cutoff: set_box to a box too small for it fails, plan unchanged
        let mut oc = o;
        oc.rc = 0.9;
        let (s, p) = make(FARFIELD_EWALD_SPECTRAL, &CUBE, n as i64, 1e-4, &oc);
        assert_eq!(s, 0);
        unsafe {
            let small = [1.5, 0.0, 0.0, 0.0, 1.5, 0.0, 0.0, 0.0, 1.5];
            assert_eq!(farfield_ewald_set_box(p, small.as_ptr()), FARFIELD_ERR_INVALID_ARG);
            assert!(msg().contains("half the smallest"), "{}", msg());
            assert_eq!(farfield_ewald_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()), 0);
            assert_eq!(farfield_ewald_destroy(p), 0);
        }
    }

    #[test]
    fn direct_method_through_c() {
        // CsCl: Madelung constant through the C API
        let b = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        let (s, p) = make(FARFIELD_EWALD_DIRECT, &b, 2, 1e-10, null());
        assert_eq!(s, 0);
        let xyz = [0.0, 0.0, 0.0, 0.5, 0.5, 0.5];
        let q = [1.0, -1.0];
        let mut u = 0.0;
        unsafe {
            assert_eq!(farfield_ewald_execute(p, 2, xyz.as_ptr(), q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()), 0);
            farfield_ewald_destroy(p);
        }
        let m = -u * 3f64.sqrt() / 2.0;
        assert!((m - 1.762674773070).abs() < 1e-9, "{m}");
    }

    fn cube_of(l: f64) -> [f64; 9] {
        [l, 0.0, 0.0, 0.0, l, 0.0, 0.0, 0.0, l]
    }

    /// NaCl conventional cell scaled to side `l` (8 ions).
    fn nacl(l: f64) -> (Vec<f64>, Vec<f64>) {
        let fcc = [[0.0, 0.0, 0.0], [0.5, 0.5, 0.0], [0.5, 0.0, 0.5], [0.0, 0.5, 0.5]];
        let mut xyz = Vec::new();
        let mut q = Vec::new();
        for (sh, c) in [([0.0, 0.0, 0.0], 1.0), ([0.5, 0.0, 0.0], -1.0)] {
            for f in fcc {
                for d in 0..3 {
                    xyz.push(l * (f[d] + sh[d]) + 0.1 * l);
                }
                q.push(c);
            }
        }
        (xyz, q)
    }

    fn energy_of(method: c_int, b: &[f64; 9], xyz: &[f64], q: &[f64], tol: f64) -> (c_int, f64) {
        let mut o = default_opts();
        o.nthreads = 1;
        let (s, p) = make(method, b, q.len() as i64, tol, &o);
        if s != 0 {
            return (s, f64::NAN);
        }
        let mut u = f64::NAN;
        let r = unsafe { farfield_ewald_execute(p, q.len() as i64, xyz.as_ptr(), q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()) };
        unsafe { farfield_ewald_destroy(p) };
        (r, u)
    }

    #[test]
    fn every_box_scale_with_representable_results_works() {
        // NaCl: U·L = −(8 · 1.747565) / 2 ... compare against scale 1 at each method's tol
        for method in [FARFIELD_EWALD_SPECTRAL, FARFIELD_EWALD_SPME, FARFIELD_EWALD_DIRECT] {
            let tol = 1e-8;
            let (xyz, q) = nacl(1.0);
            let (s, u1) = energy_of(method, &cube_of(1.0), &xyz, &q, tol);
            assert_eq!(s, 0, "{}", msg());
            for l in [1e-150, 1e-19, 3e-19, 1e20, 1e150, 1e300] {
                let (xyz, q) = nacl(l);
                let (s, u) = energy_of(method, &cube_of(l), &xyz, &q, tol);
                assert_eq!(s, 0, "method {method} L {l:e}: {}", msg());
                assert!((u * l - u1).abs() <= tol * u1.abs(), "method {method} L {l:e}: U·L = {} vs {}", u * l, u1);
            }
        }
    }

    #[test]
    fn unrepresentable_results_are_range_errors() {
        let mut o = default_opts();
        o.nthreads = 1;
        let (mut xyz, q) = nacl(1e-160);
        xyz[0] += 5e-162; // off the lattice: non-zero fields
        let (s, p) = make(FARFIELD_EWALD_DIRECT, &cube_of(1e-160), 8, 1e-6, &o);
        assert_eq!(s, 0, "{}", msg());
        let mut f = vec![7.0; 24];
        let mut u = 7.0;
        unsafe {
            // the energy (≈ 1e160) is fine, the field (≈ 1e320) overflows
            assert_eq!(farfield_ewald_execute(p, 8, xyz.as_ptr(), q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()), 0);
            assert!(u.is_finite() && u < 0.0);
            let mut u2 = 7.0;
            assert_eq!(farfield_ewald_execute(p, 8, xyz.as_ptr(), q.as_ptr(), null_mut(), f.as_mut_ptr(), &mut u2, null_mut()), FARFIELD_ERR_RANGE);
            assert!(msg().contains("field"), "{}", msg());
            assert_eq!((f[0], u2), (7.0, 7.0));
            farfield_ewald_destroy(p);
        }
        // the field underflows at L = 1e200 (E ≈ 1e-400)
        let (xyz, q) = nacl(1e200);
        let (s, p) = make(FARFIELD_EWALD_SPME, &cube_of(1e200), 8, 1e-6, &o);
        assert_eq!(s, 0, "{}", msg());
        unsafe {
            let mut xyz2 = xyz.clone();
            xyz2[0] += 1e199; // non-zero fields
            assert_eq!(farfield_ewald_execute(p, 8, xyz2.as_ptr(), q.as_ptr(), null_mut(), f.as_mut_ptr(), &mut u, null_mut()), FARFIELD_ERR_RANGE);
            assert!(msg().contains("underflow"), "{}", msg());
            assert_eq!(farfield_ewald_execute(p, 8, xyz2.as_ptr(), q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()), 0);
            farfield_ewald_destroy(p);
        }
    }

    fn warnings_of(p: farfield_ewald_plan) -> (f64, i32) {
        let (mut t, mut w) = (0.0, -1);
        assert_eq!(unsafe { farfield_ewald_get_warnings(p, &mut t, &mut w) }, 0);
        assert_eq!(unsafe { farfield_ewald_get_warnings(p, std::ptr::null_mut(), std::ptr::null_mut()) }, 0);
        (t, w)
    }

    #[test]
    fn former_hangs_return_promptly() {
        let t = std::time::Instant::now();
        let b10 = cube_of(10.0);
        let mut o = default_opts();
        o.nthreads = 1;
        // tolerances far below what double precision gives: clamped, with a warning
        for tol in [5e-324, 1e-310, 1e-20] {
            for m in [FARFIELD_EWALD_SPECTRAL, FARFIELD_EWALD_SPME] {
                let (s, p) = make(m, &b10, 100, tol, &o);
                assert_eq!(s, 0, "{}", msg());
                let mut prm = farfield_ewald_params::default();
                unsafe { farfield_ewald_get_params(p, &mut prm) };
                let (tol_used, warnings) = warnings_of(p);
                assert_eq!(warnings, crate::nufft::options::FARFIELD_WARN_TOL_CLAMPED);
                assert_eq!(tol_used, 1e-12);
                assert!(prm.grid.iter().all(|&g| g <= 256), "{prm:?}");
                assert!(prm.est_rel_err <= 1.01e-12, "{prm:?}");
                unsafe { farfield_ewald_destroy(p) };
            }
        }
        // an override that keeps the error above tol: a warning, not silence
        let mut ow = o;
        ow.order_or_support = 4;
        let (s, p) = make(FARFIELD_EWALD_SPECTRAL, &b10, 100, 1e-10, &ow);
        assert_eq!(s, 0);
        let mut prm = farfield_ewald_params::default();
        unsafe { farfield_ewald_get_params(p, &mut prm) };
        assert_eq!(warnings_of(p).1, FARFIELD_EWALD_WARN_TOL_NOT_MET, "{prm:?}");
        assert!(prm.est_rel_err > 1e-10);
        unsafe { farfield_ewald_destroy(p) };
        let mut ox = o;
        ox.xi = 1e300;
        assert_eq!(make(FARFIELD_EWALD_SPME, &b10, 100, 1e-6, &ox).0, FARFIELD_ERR_RANGE);
        assert!(msg().contains("limit"), "{}", msg());
        let mut orc = o;
        orc.rc = 1e-300;
        for m in [FARFIELD_EWALD_SPECTRAL, FARFIELD_EWALD_SPME, FARFIELD_EWALD_DIRECT] {
            assert_eq!(make(m, &b10, 100, 1e-6, &orc).0, FARFIELD_ERR_RANGE, "{}", msg());
            assert_eq!(make(m, &b10, 100, 1e-6, &ox).0, FARFIELD_ERR_RANGE, "{}", msg());
            let mut b = b10;
            b[8] = 5e-324;
            assert_eq!(make(m, &b, 100, 1e-6, &o).0, FARFIELD_ERR_RANGE, "{}", msg());
            b[8] = 1e-300;
            assert_eq!(make(m, &b, 100, 1e-6, &o).0, FARFIELD_ERR_RANGE, "{}", msg());
            assert!(!msg().contains("000000000"), "{}", msg());
        }
        // tiny boxes are fine now (scaled units)
        assert_eq!(make(FARFIELD_EWALD_SPECTRAL, &cube_of(1e-100), 100, 1e-6, &o).0, 0, "{}", msg());
        assert_eq!(make(FARFIELD_EWALD_DIRECT, &cube_of(1e-120), 100, 1e-6, &o).0, 0, "{}", msg());
        // skewed box: bounded enumeration (either a plan or a range error, promptly)
        let sk = [1.0, 0.0, 0.0, 1000.0, 10.0, 0.0, 0.0, 0.0, 10.0];
        let (s, p) = make(FARFIELD_EWALD_DIRECT, &sk, 100, 1e-6, &o);
        assert!(s == 0 || s == FARFIELD_ERR_RANGE, "{s} {}", msg());
        unsafe { farfield_ewald_destroy(p) };
        let sk = [10.0, 0.0, 0.0, 1000.0, 10.0, 0.0, 0.0, 0.0, 10.0];
        let (s, p) = make(FARFIELD_EWALD_DIRECT, &sk, 100, 1e-6, &o);
        assert!(s == 0 || s == FARFIELD_ERR_RANGE, "{s} {}", msg());
        unsafe { farfield_ewald_destroy(p) };
        // the direct sum in a flat box: too many wave vectors → range error, not 12.9 GB
        let flat = [10.0, 0.0, 0.0, 0.0, 10.0, 0.0, 0.0, 0.0, 1e-6];
        assert_eq!(make(FARFIELD_EWALD_DIRECT, &flat, 100, 1e-6, &o).0, FARFIELD_ERR_RANGE);
        // oversized grid override
        let mut og = o;
        og.grid = [1 << 17, 16, 16];
        assert_eq!(make(FARFIELD_EWALD_SPME, &b10, 100, 1e-6, &og).0, FARFIELD_ERR_RANGE);
        og.grid = [1 << 16, 1 << 16, 1 << 16];
        assert_eq!(make(FARFIELD_EWALD_SPME, &b10, 100, 1e-6, &og).0, FARFIELD_ERR_RANGE);
        assert!(t.elapsed().as_secs_f64() < 20.0, "{:?}", t.elapsed());
    }

    #[test]
    fn huge_direct_box_is_right_or_range() {
        // DIRECT with a 1e120 box: NaCl energy·L right (or a range error), never non-finite with 0
        let (xyz, q) = nacl(1e120);
        let (s, u) = energy_of(FARFIELD_EWALD_DIRECT, &cube_of(1e120), &xyz, &q, 1e-8);
        assert_eq!(s, 0, "{}", msg());
        let (xyz1, q1) = nacl(1.0);
        let (_, u1) = energy_of(FARFIELD_EWALD_DIRECT, &cube_of(1.0), &xyz1, &q1, 1e-8);
        assert!((u * 1e120 - u1).abs() <= 1e-8 * u1.abs());
    }

    #[test]
    fn exclusions_are_unordered_and_deduplicated() {
        let mut o = default_opts();
        o.nthreads = 1;
        let (mut xyz, q) = nacl(2.0);
        // move charge 0 off the lattice so that its nearest images are unique
        xyz[0] += 0.05;
        xyz[1] += 0.03;
        xyz[2] -= 0.02;
        let run = |pairs: &[i64]| -> (c_int, f64) {
            let (s, p) = make(FARFIELD_EWALD_DIRECT, &cube_of(2.0), 8, 1e-10, &o);
            assert_eq!(s, 0);
            let mut u = f64::NAN;
            unsafe {
                let r = farfield_ewald_set_exclusions(p, (pairs.len() / 2) as i64, pairs.as_ptr());
                if r != 0 {
                    farfield_ewald_destroy(p);
                    return (r, u);
                }
                assert_eq!(farfield_ewald_execute(p, 8, xyz.as_ptr(), q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()), 0);
                farfield_ewald_destroy(p);
            }
            (0, u)
        };
        let (_, u0) = run(&[]);
        let (_, u1) = run(&[0, 4]);
        let (_, u2) = run(&[0, 4, 4, 0, 0, 4]);
        assert_eq!(u1, u2);
        // the pair (0, 4) is 0.2·... apart: the change is q0 q4 / r (nearest image)
        let r = ((xyz[12] - xyz[0]).powi(2) + (xyz[13] - xyz[1]).powi(2) + (xyz[14] - xyz[2]).powi(2)).sqrt();
        assert!((u0 - u1 - q[0] * q[4] / r).abs() < 1e-9, "{u0} {u1} {r}");
        assert_eq!(run(&[0, 4, 3, 3]).0, FARFIELD_ERR_INVALID_ARG);
        assert!(msg().contains("pair 1") && msg().contains("charge 3 with itself"), "{}", msg());
        // INT64_MAX pairs: a range error before anything is read or allocated
        let (s, p) = make(FARFIELD_EWALD_DIRECT, &cube_of(2.0), 8, 1e-10, &o);
        assert_eq!(s, 0);
        unsafe {
            let pr = [0i64, 1];
            assert_eq!(farfield_ewald_set_exclusions(p, i64::MAX, pr.as_ptr()), FARFIELD_ERR_RANGE);
            farfield_ewald_destroy(p);
        }
    }

    #[test]
    fn coincident_charges() {
        let mut o = default_opts();
        o.nthreads = 2;
        for m in [FARFIELD_EWALD_SPECTRAL, FARFIELD_EWALD_SPME, FARFIELD_EWALD_DIRECT] {
            let (mut xyz, q) = nacl(2.0);
            // charge 5 on top of charge 2 (via a periodic image)
            for d in 0..3 {
                xyz[15 + d] = xyz[6 + d] + if d == 1 { 2.0 } else { 0.0 };
            }
            let (s, p) = make(m, &cube_of(2.0), 8, 1e-8, &o);
            assert_eq!(s, 0);
            let mut u = 0.0;
            unsafe {
                assert_eq!(farfield_ewald_execute(p, 8, xyz.as_ptr(), q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_INVALID_ARG);
                assert!(msg().contains("charges 2 and 5 coincide"), "{}", msg());
                // excluded: fine, and equal to the system without both charges' mutual term
                let pr = [5i64, 2];
                assert_eq!(farfield_ewald_set_exclusions(p, 1, pr.as_ptr()), 0);
                let mut ua = 0.0;
                assert_eq!(farfield_ewald_execute(p, 8, xyz.as_ptr(), q.as_ptr(), null_mut(), null_mut(), &mut ua, null_mut()), 0, "{}", msg());
                // reference: the same pair 1e-3 apart, excluded
                let mut xb = xyz.clone();
                xb[15] += 1e-3;
                let mut ub = 0.0;
                assert_eq!(farfield_ewald_execute(p, 8, xb.as_ptr(), q.as_ptr(), null_mut(), null_mut(), &mut ub, null_mut()), 0);
                assert!((ua - ub).abs() < 1e-2 * ua.abs(), "{ua} {ub}");
                farfield_ewald_destroy(p);
            }
        }
        // all coincident, many charges: prompt
        let n = 200_000usize;
        let (s, p) = make(FARFIELD_EWALD_SPME, &cube_of(2.0), n as i64, 1e-5, &o);
        assert_eq!(s, 0);
        let xyz = vec![0.3; 3 * n];
        let q: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
        let t = std::time::Instant::now();
        let mut u = 0.0;
        unsafe {
            assert_eq!(farfield_ewald_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_INVALID_ARG);
            farfield_ewald_destroy(p);
        }
        assert!(t.elapsed().as_secs_f64() < 2.0, "{:?}", t.elapsed());
    }

    fn no_device() -> bool {
        crate::gpu::runtime::discover().as_ref().map_or(true, |d| d.is_empty())
    }

    #[test]
    fn gpu_options_are_validated() {
        let o = farfield_ewald_opts { nthreads: 1, ..default_opts() };
        let cuda = farfield_ewald_opts { backend: FARFIELD_BACKEND_CUDA, ..o };
        // every bad value, named
        let fake = 0x5000 as *mut c_void;
        let cases: [(&str, farfield_ewald_opts); 9] = [
            ("opts.backend", farfield_ewald_opts { backend: 3, ..o }),
            ("opts.backend", farfield_ewald_opts { backend: -1, ..o }),
            ("opts.gpu_precision", farfield_ewald_opts { gpu_precision: 2, ..cuda }),
            ("opts.gpu_precision", farfield_ewald_opts { gpu_precision: -1, ..cuda }),
            ("opts.gpu_method", farfield_ewald_opts { gpu_method: 6, ..cuda }),
            ("opts.gpu_method", farfield_ewald_opts { gpu_method: -1, ..cuda }),
            ("opts.terms", farfield_ewald_opts { terms: 3, ..cuda }),
            ("opts.terms", farfield_ewald_opts { terms: -1, ..o }),
            ("opts.gpu_stream", farfield_ewald_opts { gpu_stream: fake, ..o }),
        ];
        for (name, bad) in cases {
            assert_eq!(make(FARFIELD_EWALD_SPME, &CUBE, 10, 1e-5, &bad), (FARFIELD_ERR_INVALID_ARG, null_mut()), "{name}");
            assert!(msg().contains(name), "{name}: {}", msg());
        }
        // GPU-only options on a CPU plan (AUTO or CPU): refused, naming the field
        for backend in [FARFIELD_BACKEND_AUTO, FARFIELD_BACKEND_CPU] {
            for (name, bad) in [
                ("opts.gpu_stream", farfield_ewald_opts { backend, gpu_stream: fake, ..o }),
                ("opts.gpu_precision", farfield_ewald_opts { backend, gpu_precision: FARFIELD_EWALD_GPU_MIXED, ..o }),
                ("opts.gpu_method", farfield_ewald_opts { backend, gpu_method: 1, ..o }),
            ] {
                assert_eq!(make(FARFIELD_EWALD_SPECTRAL, &CUBE, 10, 1e-5, &bad).0, FARFIELD_ERR_INVALID_ARG, "{name}");
                assert!(msg().contains(name) && msg().contains("CPU"), "{}", msg());
            }
        }
        // the Rust options carry the CUDA choices
        let c = farfield_ewald_opts { gpu_precision: FARFIELD_EWALD_GPU_MIXED, gpu_method: 3, gpu_stream: fake, ..cuda };
        let co = convert_opts(&c).unwrap();
        assert_eq!(co.backend, BackendChoice::Cuda);
        assert!(co.gpu_mixed);
        assert_eq!(co.gpu_method, Some(crate::backend::GpuMethod::Sm));
        assert_eq!(co.gpu_stream.map(|s| s.as_raw()), Some(0x5000));
        assert_eq!(convert_opts(&o).unwrap().backend, BackendChoice::Auto);
        // the CPU options are checked on a CUDA plan too (before the device is looked for)
        assert_eq!(make(FARFIELD_EWALD_SPME, &CUBE, 10, 1e-5, &farfield_ewald_opts { xi: f64::NAN, ..cuda }).0, FARFIELD_ERR_INVALID_ARG);
        assert_eq!(make(FARFIELD_EWALD_SPME, &CUBE, 10, 2.0, &cuda).0, FARFIELD_ERR_TOL);
        assert_eq!(make(FARFIELD_EWALD_SPME, &CUBE, 0, 1e-5, &cuda).0, FARFIELD_ERR_NPOINTS);
        let mut flat = CUBE;
        flat[8] = 1e-300;
        assert_eq!(make(FARFIELD_EWALD_SPME, &flat, 10, 1e-5, &cuda).0, FARFIELD_ERR_RANGE);
        // the direct sum has no CUDA path, with or without a device
        assert_eq!(make(FARFIELD_EWALD_DIRECT, &CUBE, 10, 1e-5, &cuda), (FARFIELD_ERR_NOT_SUPPORTED, null_mut()));
        assert!(msg().contains("DIRECT"), "{}", msg());
        // without a device: NO_DEVICE naming what was looked for (the mixed one too)
        if no_device() {
            for m in [FARFIELD_EWALD_SPME, FARFIELD_EWALD_SPECTRAL] {
                for prec in [FARFIELD_EWALD_GPU_DOUBLE, FARFIELD_EWALD_GPU_MIXED] {
                    let c = farfield_ewald_opts { gpu_precision: prec, ..cuda };
                    assert_eq!(make(m, &CUBE, 10, 1e-5, &c), (FARFIELD_ERR_NO_DEVICE, null_mut()));
                    assert!(msg().contains("Ewald") && msg().contains("CUDA"), "{}", msg());
                }
            }
        }
    }

    #[test]
    fn execute_device_needs_a_cuda_plan() {
        let o = farfield_ewald_opts { nthreads: 1, ..default_opts() };
        let (s, p) = make(FARFIELD_EWALD_SPME, &CUBE, 8, 1e-5, &o);
        assert_eq!(s, 0);
        let (xyz, q) = nacl(2.0);
        let (mut phi, mut f, mut u, mut w) = ([7.0; 8], [7.0; 24], 7.0, [7.0; 9]);
        unsafe {
            let x = xyz.as_ptr();
            let run = |n: i64, x: *const f64, q: *const f64, phi: *mut f64, f: *mut f64, u: *mut f64, w: *mut f64| {
                farfield_ewald_execute_device(p, n, x, q, phi, f, u, w)
            };
            // checked before the backend: NULL plan, n, NULL inputs, overlaps
            assert_eq!(farfield_ewald_execute_device(null_mut(), 8, x, q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(run(-1, x, q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_NPOINTS);
            assert_eq!(run(9, x, q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_NPOINTS);
            assert_eq!(run(8, null(), q.as_ptr(), null_mut(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert!(msg().contains("xyz"), "{}", msg());
            assert_eq!(run(8, x, null(), null_mut(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(run(8, x, q.as_ptr(), phi.as_mut_ptr(), phi.as_mut_ptr(), &mut u, null_mut()), FARFIELD_ERR_INVALID_ARG);
            assert!(msg().contains("`phi`") && msg().contains("`field`"), "{}", msg());
            assert_eq!(run(8, x, q.as_ptr(), null_mut(), null_mut(), w.as_mut_ptr().add(3), w.as_mut_ptr()), FARFIELD_ERR_INVALID_ARG);
            assert!(msg().contains("`energy`") && msg().contains("`virial`"), "{}", msg());
            // a CPU plan: refused with the message, nothing read or written
            assert_eq!(run(8, x, q.as_ptr(), phi.as_mut_ptr(), f.as_mut_ptr(), &mut u, w.as_mut_ptr()), FARFIELD_ERR_INVALID_ARG);
            assert!(msg().contains("execute_device needs a CUDA plan"), "{}", msg());
            assert_eq!(run(0, null(), null(), null_mut(), null_mut(), &mut u, null_mut()), FARFIELD_ERR_INVALID_ARG);
            assert_eq!((phi[0], f[0], u, w[0]), (7.0, 7.0, 7.0, 7.0));
            // the plan still works
            assert_eq!(farfield_ewald_execute(p, 8, x, q.as_ptr(), phi.as_mut_ptr(), null_mut(), &mut u, null_mut()), 0);
            assert!(u < 0.0);
            farfield_ewald_destroy(p);
        }
    }
}
