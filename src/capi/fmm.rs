//! Fast multipole method C API (`farfield_fmm_*`): potentials, fields and energy of point
//! charges with the Coulomb kernel `1/r`, open or periodic (cubic or rectangular) boundaries; see
//! [`crate::fmm`] for the method and the accuracy.
//!
//! Lifecycle: `farfield_fmm_default_opts(&o, sizeof o)` → `farfield_fmm_makeplan(boundary, box, tol,
//! &plan, &o)` → `farfield_fmm_execute(plan, n, xyz, q, phi, field, &energy)` any number of
//! times (any particles, any `n`) → `farfield_fmm_get_params(plan, &params)` →
//! `farfield_fmm_destroy(plan)`.
//!
//! Conventions: positions interleaved `xyz[3*i + d]` (N×3, as MD codes store them), charges
//! `q[i]`, field interleaved `field[3*i + d]`, all `double`, in the caller's order and units:
//! `φ_i = Σ_{j≠i} q_j/r_ij`, `E_i = −∇φ(x_i)`, `U = ½ Σ q_i φ_i` — no Coulomb constant inside
//! (multiply by 138.935458 for GROMACS units, by `1/(4πε₀)` for SI, …).
//!
//! Periodic boundaries: cubic box `[0, L)³` or rectangular box `[0, a) × [0, b) × [0, c)` whose
//! sides are integer multiples of a common length (see `farfield_fmm_makeplan`), particles
//! outside are folded in (not an error);
//! the sum runs over all images in the Ewald convention with tin-foil (conducting) boundary,
//! a net charge being neutralised by a uniform background (classic Ewald summation without
//! the `k = 0` term); see [`crate::fmm::periodic`].
//!
//! Thread safety: different plans may be used concurrently; concurrent calls on one plan are
//! serialised by its lock. The plan keeps work arrays between calls (reused when `n` does not
//! grow).

use super::abi::{self, versioned};
use super::{check_outputs_disjoint, destroy_boxed, guard, lock, non_null, pair_args, plan_handle, region, slice_in, slice_out};
use crate::error::{Error, Result};
use crate::backend::{BackendChoice, GpuStream};
use crate::fmm::{params, Boundary, FmmOpts, TreeKind};
use crate::plans::FmmPlan;
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

/// Open (free-space) boundaries: value of `boundary` in `farfield_fmm_makeplan`.
pub const FARFIELD_FMM_OPEN: c_int = 0;
/// Periodic boundaries (cubic or rectangular box): value of `boundary` in
/// `farfield_fmm_makeplan`.
pub const FARFIELD_FMM_PERIODIC: c_int = 1;
/// Largest expansion order (`opts.order`); tolerances needing more are clamped to it.
pub const FARFIELD_FMM_MAX_ORDER: c_int = 40;
/// Largest tree depth (`opts.depth`).
pub const FARFIELD_FMM_MAX_DEPTH: c_int = 20;
/// `opts.backend`: the best available (the CPU until the CUDA FMM has been timed on hardware).
pub const FARFIELD_FMM_BACKEND_AUTO: c_int = 0;
/// `opts.backend`: CPU.
pub const FARFIELD_FMM_BACKEND_CPU: c_int = 1;
/// `opts.backend`: CUDA device 0 (no device → `FARFIELD_ERR_NO_DEVICE` from makeplan).
pub const FARFIELD_FMM_BACKEND_CUDA: c_int = 2;

/// Options of an FMM plan (versioned: `struct_size` first, fields only ever appended, so a
/// program built against this header keeps working with later libraries of the same major
/// version). Fill with `farfield_fmm_default_opts(&o, sizeof o)` and then change fields.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(non_camel_case_types)]
pub struct farfield_fmm_opts {
    /// Size of the struct as the caller compiled it (`sizeof(farfield_fmm_opts)`), set by
    /// `farfield_fmm_default_opts`; the library reads only this many bytes.
    pub struct_size: usize,
    /// Threads: 0 = all cores (default), 1 = the caller's thread only (no pool); ≥ 0.
    pub nthreads: i32,
    /// `> 0`: print the parameters and stage timings of every execute to stderr (default 0).
    pub debug: i32,
    /// Expansion order `p`: 0 = chosen from `tol` (default), else 1..=40.
    pub order: i32,
    /// Tree depth `D`: −1 or 0 = chosen from the particles at every execute (default −1;
    /// a single leaf, i.e. the direct sum, is chosen automatically for small `n`; see
    /// `max_leaf` for the adaptive tree), else 1..=20 (the uniform tree, leaves of side
    /// `L/2^D`).
    pub depth: i32,
    /// `FARFIELD_FMM_BACKEND_AUTO` (default), `_CPU` or `_CUDA`.
    pub backend: i32,
    /// The octree (open boundaries, CPU): 0 = chosen at every execute by the cost model, the
    /// adaptive tree where it pays (clustered particles), else the uniform one (default; a
    /// `depth ≥ 1` means the uniform tree); −1 = the uniform tree; `≥ 1` = the adaptive tree
    /// with at most `max_leaf` particles per leaf (with `depth ≥ 1`, periodic boundaries or
    /// the CUDA backend → `FARFIELD_ERR_INVALID_ARG` / `_NOT_SUPPORTED`). In the 1.2.0
    /// header this field was `reserved` and had to be 0, which is still the default.
    pub max_leaf: i32,
    /// CUDA backend only: the caller's CUDA stream (`cudaStream_t` / `CUstream`), or NULL
    /// (default) for the default stream of device 0's context. Every kernel launch and copy
    /// of the plan runs on it; `farfield_fmm_execute` and `farfield_fmm_execute_device` wait
    /// for it before they return (the result checks need the values). The stream must belong
    /// to device 0's primary context (the CUDA runtime's) and stay valid until the plan is
    /// destroyed; the library never destroys it. A non-NULL stream for a plan on the CPU
    /// (`backend` AUTO or CPU) → `FARFIELD_ERR_INVALID_ARG` naming `opts.gpu_stream`.
    /// Appended in 1.2.0: a caller built against an older header (a 32-byte struct) gets NULL.
    pub gpu_stream: *mut c_void,
}

/// Parameters of a plan and statistics of its last execute (`farfield_fmm_get_params`;
/// versioned: the caller sets `struct_size = sizeof(farfield_fmm_params)` first).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(non_camel_case_types)]
pub struct farfield_fmm_params {
    /// Size of the struct as the caller compiled it, set by the caller before
    /// `farfield_fmm_get_params`; on return, the number of bytes the library wrote.
    pub struct_size: usize,
    /// Expansion order `p`.
    pub order: i32,
    /// Depth `D` of the last execute (−1 before the first one).
    pub depth: i32,
    /// Number of (occupied) leaves of the last execute.
    pub nleaves: i64,
    /// Number of particles of the last execute.
    pub npoints: i64,
    /// Seconds spent in the last execute: input checks, sorting and tree.
    pub t_tree: f64,
    /// … interaction lists.
    pub t_lists: f64,
    /// … P2M.
    pub t_p2m: f64,
    /// … M2M.
    pub t_m2m: f64,
    /// … M2L (with the periodic lattice operator).
    pub t_m2l: f64,
    /// … L2L.
    pub t_l2l: f64,
    /// … L2P.
    pub t_l2p: f64,
    /// … P2P.
    pub t_p2p: f64,
    /// … periodic corrections, energy, reordering.
    pub t_post: f64,
    /// … in total.
    pub t_total: f64,
    /// 1 if `tol` asked for an order above the maximum (40), which was used instead (the
    /// tolerance may then not be reached; printed with `opts.debug > 0`), else 0.
    pub tol_clamped: i32,
    /// Threads used.
    pub nthreads: i32,
}

/// Opaque FMM plan (C: `farfield_fmm_plan`, a pointer to this). Concurrent calls on one plan
/// are serialised by its lock.
#[allow(non_camel_case_types)]
pub struct farfield_fmm_plan_s {
    inner: Mutex<FmmPlan>,
}
plan_handle!(farfield_fmm_plan_s, FmmPlan);

/// Handle to an FMM plan (`NULL` when none).
#[allow(non_camel_case_types)]
pub type farfield_fmm_plan = *mut farfield_fmm_plan_s;

fn default_opts() -> farfield_fmm_opts {
    farfield_fmm_opts {
        struct_size: std::mem::size_of::<farfield_fmm_opts>(),
        nthreads: 0,
        debug: 0,
        order: 0,
        depth: -1,
        backend: FARFIELD_FMM_BACKEND_AUTO,
        max_leaf: 0,
        gpu_stream: std::ptr::null_mut(),
    }
}

versioned!(farfield_fmm_opts, "farfield_fmm_opts", [struct_size, nthreads, debug, order, depth, backend, max_leaf, gpu_stream],
           default_opts());
versioned!(farfield_fmm_params, "farfield_fmm_params",
           [struct_size, order, depth, nleaves, npoints, t_tree, t_lists, t_p2m, t_m2m, t_m2l, t_l2l, t_l2p, t_p2p, t_post,
            t_total, tol_clamped, nthreads],
           farfield_fmm_params::default());

impl Default for farfield_fmm_params {
    /// All zero (depth −1), with `struct_size = sizeof` (ready for `farfield_fmm_get_params`).
    fn default() -> Self {
        farfield_fmm_params {
            struct_size: std::mem::size_of::<farfield_fmm_params>(),
            order: 0,
            depth: -1,
            nleaves: 0,
            npoints: 0,
            t_tree: 0.0,
            t_lists: 0.0,
            t_p2m: 0.0,
            t_m2m: 0.0,
            t_m2l: 0.0,
            t_l2l: 0.0,
            t_l2p: 0.0,
            t_p2p: 0.0,
            t_post: 0.0,
            t_total: 0.0,
            tol_clamped: 0,
            nthreads: 0,
        }
    }
}

/// Writes the default options (nthreads 0, debug 0, order 0, depth −1, backend AUTO) into the
/// first `struct_size` bytes of `*opts` and sets `opts->struct_size`; call it as
/// `farfield_fmm_default_opts(&o, sizeof o)`. Returns 0, or `FARFIELD_ERR_NULL_POINTER` if
/// `opts` is NULL, `FARFIELD_ERR_INVALID_ARG` (`struct_size` smaller than the `struct_size`
/// field or ending inside a field; nothing written).
///
/// # Safety
/// `opts` must be NULL or point to `struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn farfield_fmm_default_opts(opts: *mut farfield_fmm_opts, struct_size: usize) -> c_int {
    guard(|| abi::write_defaults(opts, struct_size))
}

fn convert_opts(o: &farfield_fmm_opts) -> Result<FmmOpts> {
    if o.nthreads < 0 {
        return Err(Error::InvalidArg(format!("opts.nthreads = {}; must be ≥ 0", o.nthreads)));
    }
    if o.order < 0 || o.order as usize > params::MAX_ORDER {
        return Err(Error::InvalidArg(format!("opts.order = {}; must be 0 (auto) or 1..={}", o.order, params::MAX_ORDER)));
    }
    let depth = match o.depth {
        -1 | 0 => None,
        d if d >= 1 && d as usize <= params::MAX_DEPTH => Some(d as usize),
        d => return Err(Error::InvalidArg(format!("opts.depth = {d}; must be −1 or 0 (auto) or 1..={}", params::MAX_DEPTH))),
    };
    // (the FMM's codes are aliases of the shared FARFIELD_BACKEND_* values)
    let backend = BackendChoice::from_c(o.backend)?;
    let tree = match o.max_leaf {
        0 => TreeKind::Auto,
        -1 => TreeKind::Uniform,
        s if s >= 1 => TreeKind::Adaptive { max_leaf: s as usize },
        s => return Err(Error::InvalidArg(format!("opts.max_leaf = {s}; must be 0 (auto), −1 (uniform tree) or ≥ 1 (adaptive tree)"))),
    };
    // SAFETY: the C caller's promise on `gpu_stream` (documented on the field): a stream of
    // device 0's primary context that outlives the plan; a CPU plan refuses it.
    let gpu_stream = unsafe { GpuStream::from_raw(o.gpu_stream as u64) };
    Ok(FmmOpts { nthreads: o.nthreads as usize, debug: o.debug, order: o.order as usize, depth, tree, backend, gpu_stream })
}

/// The periodic boundary of a box given as `box[9]` (row `i` = lattice vector `i`): a cubic
/// box (equal diagonal entries and zero off-diagonal ones, to a relative 1e-12: exactly the
/// boxes accepted before rectangular ones were, with the same side `box[0]`) is
/// [`Boundary::Periodic`]; another diagonal box is [`Boundary::PeriodicBox`] (whose side rule
/// [`FmmPlan::new`] checks). Errors: [`Error::InvalidArg`] (an entry not finite, a diagonal
/// entry not positive), [`Error::NotSupported`] (off-diagonal entries: a triclinic box).
fn periodic_boundary(b: &[f64]) -> Result<Boundary> {
    let l = cubic_side(b).or_else(|e| match e {
        Error::NotSupported(_) => Ok(-1.0),
        e => Err(e),
    })?;
    if l > 0.0 {
        return Ok(Boundary::Periodic { side: l });
    }
    let eps = 1e-12 * b[0].max(b[4]).max(b[8]);
    if [1, 2, 3, 5, 6, 7].iter().all(|&i| b[i].abs() <= eps) {
        return Ok(Boundary::PeriodicBox { sides: [b[0], b[4], b[8]] });
    }
    Err(Error::NotSupported(format!(
        "box = [{:e}, {:e}, {:e}; {:e}, {:e}, {:e}; {:e}, {:e}, {:e}]: triclinic boxes (non-zero off-diagonal entries) are not supported; the periodic FMM takes cubic and rectangular (diagonal) boxes",
        b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8]
    )))
}

/// The side of a cubic box given as `box[9]` (row `i` = lattice vector `i`); a non-cubic box
/// is an [`Error::NotSupported`] (see [`periodic_boundary`]).
fn cubic_side(b: &[f64]) -> Result<f64> {
    if let Some(i) = b.iter().position(|v| !v.is_finite()) {
        return Err(Error::InvalidArg(format!("box[{i}] = {:e} is not finite", b[i])));
    }
    let l = b[0];
    if !(l > 0.0) || !(b[4] > 0.0) || !(b[8] > 0.0) {
        return Err(Error::InvalidArg(format!("box diagonal ({:e}, {:e}, {:e}) must be positive", b[0], b[4], b[8])));
    }
    let eps = 1e-12 * l;
    let cubic = (b[4] - l).abs() <= eps && (b[8] - l).abs() <= eps && [1, 2, 3, 5, 6, 7].iter().all(|&i| b[i].abs() <= eps);
    if !cubic {
        return Err(Error::NotSupported(format!(
            "box = [{:e}, {:e}, {:e}; {:e}, {:e}, {:e}; {:e}, {:e}, {:e}]: only cubic boxes (a diagonal with equal entries) are supported so far",
            b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8]
        )));
    }
    Ok(l)
}

/// The particle count of an execute: `FARFIELD_ERR_NPOINTS` when negative or above 2³² − 1.
fn checked_n(n: i64) -> Result<usize> {
    if n < 0 {
        return Err(Error::NPoints(format!("n = {n} is negative")));
    }
    if n as u64 > u32::MAX as u64 {
        return Err(Error::NPoints(format!("n = {n} exceeds the FMM's limit of 2^32 − 1 particles")));
    }
    Ok(n as usize)
}

/// Makes an FMM plan for the Coulomb kernel `1/r` — no `1/(4πε₀)` or `1/(4π)` factor: a
/// charge `q` at distance `r` contributes `q/r` to a potential, as in the Ewald functions
/// (`farfield_poisson_*` uses `1/(4πr)` instead); units and array layouts at
/// `farfield_fmm_execute`.
///
/// * `boundary`: `FARFIELD_FMM_OPEN` (then `box` is ignored and may be NULL) or
///   `FARFIELD_FMM_PERIODIC` (then `box` is required).
/// * `box`: 9 doubles, row `i` = lattice vector `i` (`box[3*i + d]`): a cubic box (a diagonal
///   with equal positive entries; cell `[0, L)³`) or a rectangular one (a diagonal `a, b, c`;
///   cell `[0, a) × [0, b) × [0, c)`) whose sides are integer multiples `n₀, n₁, n₂` of one
///   common length `s` (to a relative 1e-12; the box used is `n_d s` with `s = a/n₀`), with
///   every `n_d ≤ 4` and `n₀n₁n₂ ≤ 16` (e.g. 2:1:1, 1:2:3, 3:2:2), CPU backend only.
///   Off-diagonal entries (triclinic boxes) are not supported. Side range (every side `L`):
///   `2.2250738585072014e-308 ≤ L ≤ 1.7976931348623157e308` (the
///   normal doubles; a subnormal side → `FARFIELD_ERR_RANGE`). The method works in units of
///   `L` (the results are scale-covariant: `φ ∝ 1/L`, `E ∝ 1/L²`, `U ∝ 1/L`); at sides where
///   an output is not representable (fields overflow below `L ≈ 1e-154`, potentials below
///   ≈ 1e-307; or everything underflows at very large `L`) `farfield_fmm_execute` returns
///   `FARFIELD_ERR_RANGE`.
/// * `tol`: requested relative accuracy of the potentials and fields (relative l2 norm over
///   the particles), `0 < tol < 1`; it sets the expansion order unless `opts.order` does.
///   Orders above `FARFIELD_FMM_MAX_ORDER` (40) are clamped (tol below ≈ 5e-12; flagged in
///   `farfield_fmm_params.tol_clamped`), so tighter tolerances may not be reached. The order
///   rule is calibrated on particles spread through the tree boxes; crystal lattices (ions on
///   box corners, the worst position for the expansions) are served by choosing the tree's
///   origin (periodic) or root cube (open) off the lattice sites at every execute; periodic
///   lattices are tested at tol 1e-3 … 1e-12, open ones at 1e-3 … 1e-9 with the automatic
///   depth (a forced depth with about one ion per leaf can miss the field tolerance there).
/// * `plan`: receives the plan; `*plan` is set to NULL first and stays NULL on failure.
/// * `opts`: options, or NULL for the defaults; `opts->struct_size` bytes are read (0 or a
///   size ending inside a field → `FARFIELD_ERR_INVALID_ARG`).
///
/// Limits: `opts.order` ≤ 40, `opts.depth` ≤ 20, `opts.nthreads` ≤ `FARFIELD_MAX_THREADS`.
///
/// Returns 0 or: `FARFIELD_ERR_NULL_POINTER` (`plan` NULL, or `box` NULL with periodic
/// boundaries), `FARFIELD_ERR_TOL` (`tol` not in (0, 1)), `FARFIELD_ERR_INVALID_ARG` (unknown
/// boundary, a box entry not finite or a non-positive diagonal, rectangular sides that are not
/// integer multiples of a common length as above, a bad option),
/// `FARFIELD_ERR_RANGE` (a subnormal box side),
/// `FARFIELD_ERR_NOT_SUPPORTED` (a triclinic box; a rectangular box with `backend = CUDA`),
/// `FARFIELD_ERR_NO_DEVICE` (`backend = CUDA`
/// without a usable CUDA device or driver; the message says what was looked for),
/// `FARFIELD_ERR_ALLOC` (device memory for the operator tables).
///
/// # Safety
/// `box` must be NULL or point to 9 readable doubles; `plan` to a writable handle; `opts` NULL
/// or valid.
#[no_mangle]
pub unsafe extern "C" fn farfield_fmm_makeplan(
    boundary: c_int,
    r#box: *const f64,
    tol: f64,
    plan: *mut farfield_fmm_plan,
    opts: *const farfield_fmm_opts,
) -> c_int {
    guard(|| {
        non_null(plan, "plan")?;
        plan.write(std::ptr::null_mut());
        let fo = convert_opts(&abi::read_in(opts)?)?;
        let b = match boundary {
            FARFIELD_FMM_OPEN => Boundary::Open,
            FARFIELD_FMM_PERIODIC => periodic_boundary(slice_in(r#box, 9, "box")?)?,
            b => {
                return Err(Error::InvalidArg(format!(
                    "boundary = {b}; must be FARFIELD_FMM_OPEN (0) or FARFIELD_FMM_PERIODIC (1)"
                )))
            }
        };
        let p = FmmPlan::new(b, tol, &fo)?;
        plan.write(Box::into_raw(Box::new(farfield_fmm_plan_s { inner: Mutex::new(p) })));
        Ok(())
    })
}

/// Computes, for `n` charges `q` at `xyz`, the potentials `phi[i]`, the fields
/// `field[3*i + d]` (`E = −∇φ`) and the energy `*energy = ½ Σ q_i φ_i`; each output may be
/// NULL (not computed/written, except that the potentials are always computed internally).
///
/// Kernel and units: the bare Coulomb kernel `1/r`, no `1/(4πε₀)` (nor `1/(4π)`) inside:
/// `phi[i] = Σ_{j≠i} q_j / r_ij`, `field[3*i + d] = Σ_{j≠i} q_j (x_i − x_j)_d / r_ij³`,
/// `*energy = ½ Σ_i q_i phi[i]`. With charges in a unit Q and lengths in a unit L, `phi` is in
/// Q/L, `field` in Q/L² and `energy` in Q²/L (charge²/length); multiply by your Coulomb
/// constant (138.935458 kJ mol⁻¹ nm e⁻² for e and nm, `1/(4πε₀)` in SI). The Ewald functions
/// use the same kernel and units; `farfield_poisson_execute` solves `∇²φ = −ρ` with the Green's
/// function `1/(4πr)`, i.e. its potential of a point charge `q` is `q/(4πr)`. Periodic plans
/// sum over all images: Ewald summation with tin-foil (conducting) boundary, a net charge
/// neutralised by a uniform background.
///
/// Array layouts (all `double`, in the caller's particle order): `xyz[3*i + d]` interleaved
/// (`n × 3`, row `i` = particle `i`, `d` = 0, 1, 2 for x, y, z — the layout of MD codes),
/// `q[i]`, `phi[i]`, and the field interleaved the same way, `field[3*i + d]` (not
/// component-major like `farfield_poisson_execute`'s `efield[idx + npts·d]`).
///
/// * `n = 0` is a valid no-op (`*energy = 0`; the arrays may be NULL); at most `2³² − 1`
///   particles. Memory: about `64 + 24 (with field)` bytes per particle of work arrays kept
///   in the plan, plus the tree, lists and expansions (≈ `16 (p+1)(p+2)` bytes per occupied
///   box); all reserved fallibly. Cost `O(n)` for particles spread through the volume.
/// * Periodic plans fold particles outside the box (`[0, L)³`, or `[0, a) × [0, b) × [0, c)`)
///   into it: any finite coordinate is accepted; the accuracy contract holds for coordinates
///   within a few box sides `L` of the box (far outside, folding loses `|x|/L` ulps of the
///   position).
/// * Open plans: the particles' extent (largest coordinate spread) must lie between the
///   smallest normal double and ≈ 1.8e308 (else `FARFIELD_ERR_RANGE`); the method works in
///   units of it, so the results are scale-covariant as for periodic plans.
/// * Coincident particles: two distinct particles at the same position (after folding into
///   the box, for periodic plans: `x` and `x + L` coincide) have an infinite interaction:
///   `FARFIELD_ERR_INVALID_ARG`, the message naming both indices (the first such pair). The
///   check costs `O(n log n)` at worst, also when all particles coincide. Distinct particles
///   closer than `L·2⁻²⁰` share a leaf of the deepest tree: many of them cost `O(m²)`.
/// * A result that is not representable (an overflow to Inf/NaN, or every potential or field
///   underflowing, because of the scale of the box, the coordinates or the charges) →
///   `FARFIELD_ERR_RANGE`; nothing is written.
///
/// Outputs are written only on success. Returns 0 or: `FARFIELD_ERR_NULL_POINTER` (`plan`,
/// or `xyz`/`q` NULL with `n > 0`), `FARFIELD_ERR_NPOINTS` (`n < 0` or `n ≥ 2³²`),
/// `FARFIELD_ERR_NONFINITE` (a coordinate or charge NaN/Inf; the message names the first
/// index), `FARFIELD_ERR_INVALID_ARG` (coincident particles, see above; an output overlapping
/// an input or another output, both named: no in-place execute; an excluded pair of
/// `farfield_fmm_set_exclusions*` with an index ≥ `n`),
/// `FARFIELD_ERR_RANGE` (see above), `FARFIELD_ERR_ALLOC` (the work arrays, tree, lists or
/// expansions for `n` particles cannot be allocated; the message gives the byte count).
///
/// # Safety
/// `plan` from `farfield_fmm_makeplan`; `xyz` with `3n`, `q` with `n`, `phi` with `n`, `field`
/// with `3n` valid doubles (or NULL where allowed).
#[no_mangle]
pub unsafe extern "C" fn farfield_fmm_execute(
    plan: farfield_fmm_plan,
    n: i64,
    xyz: *const f64,
    q: *const f64,
    phi: *mut f64,
    field: *mut f64,
    energy: *mut f64,
) -> c_int {
    guard(|| {
        let mut p = lock(plan)?;
        let n = checked_n(n)?;
        if n == 0 {
            p.execute(&[], &[], None, None)?;
            if !energy.is_null() {
                energy.write(0.0);
            }
            return Ok(());
        }
        non_null(xyz, "xyz")?;
        non_null(q, "q")?;
        // work arrays first, so that a too large n fails before the arrays are touched
        p.reserve(n, !field.is_null())?;
        check_outputs_disjoint(
            &[region(xyz, 3 * n, "xyz"), region(q, n, "q")],
            &[region(phi, n, "phi"), region(field, 3 * n, "field"), region(energy, 1, "energy")],
        )?;
        let xyz = slice_in(xyz, 3 * n, "xyz")?;
        let q = slice_in(q, n, "q")?;
        let phi = if phi.is_null() { None } else { Some(slice_out(phi, n, "phi")?) };
        let field = if field.is_null() { None } else { Some(slice_out(field, 3 * n, "field")?) };
        let u = p.execute(xyz, q, phi, field)?;
        if !energy.is_null() {
            energy.write(u);
        }
        Ok(())
    })
}

/// Sets the excluded and scaled pairs of an FMM plan (replacing earlier ones), as MD codes
/// need for bonded pairs: pair `k` = (`pairs[2k]`, `pairs[2k+1]`), 0-based indices of the
/// particles of the next executes, interacts as `scales[k] q_i q_j / r` instead of
/// `q_i q_j / r` (`r` the nearest-image distance under periodic boundaries); scale 0 excludes
/// the pair (`farfield_fmm_set_exclusions`: every pair). After the FMM sum the plan subtracts
/// `(1 − s)` of each pair's interaction from the potentials, fields and energy, on the CPU
/// or, for a CUDA plan, on the device. The list semantics are those of
/// `farfield_ewald_set_exclusions_scaled`: unordered pairs, a pair listed several times with
/// the same scale counts once, scale-1 pairs dropped, `npairs = 0` clears (the arrays may then
/// be NULL); copied. Coincident particles stay an error at execute even when excluded (the FMM's
/// near field has no `r → 0` limit). An index ≥ the `n` of an execute makes that execute
/// `FARFIELD_ERR_INVALID_ARG`.
///
/// Returns 0 or `FARFIELD_ERR_NULL_POINTER` (`plan`; `pairs` or `scales` NULL with `npairs` >
/// 0), `FARFIELD_ERR_INVALID_ARG` (`npairs` < 0, an index negative or above 2³² − 2, a pair (i, i), a pair with two different scales: named in the
/// message), `FARFIELD_ERR_NONFINITE` (a scale NaN/Inf), `FARFIELD_ERR_RANGE` (`npairs` above
/// `FARFIELD_EWALD_MAX_EXCLUSIONS`), `FARFIELD_ERR_ALLOC`, `FARFIELD_ERR_INTERNAL` (a device
/// error); on error the earlier list is kept.
///
/// # Safety
/// `plan` from `farfield_fmm_makeplan`; `pairs` valid for `2·npairs` reads, `scales` NULL or
/// valid for `npairs`.
#[no_mangle]
pub unsafe extern "C" fn farfield_fmm_set_exclusions_scaled(plan: farfield_fmm_plan, npairs: i64, pairs: *const i64, scales: *const f64) -> c_int {
    guard(|| {
        let mut p = lock(plan)?;
        let (v, sc) = pair_args(npairs, pairs, Some(scales))?;
        p.set_exclusions(v, sc)
    })
}

/// `farfield_fmm_set_exclusions_scaled` with every scale 0: the pairs are excluded.
///
/// # Safety
/// As `farfield_fmm_set_exclusions_scaled`.
#[no_mangle]
pub unsafe extern "C" fn farfield_fmm_set_exclusions(plan: farfield_fmm_plan, npairs: i64, pairs: *const i64) -> c_int {
    guard(|| {
        let mut p = lock(plan)?;
        let (v, _) = pair_args(npairs, pairs, None)?;
        p.set_exclusions(v, None)
    })
}

/// Like `farfield_fmm_execute` with **device** arrays, for GPU MD codes: `xyz` (`3n` doubles,
/// interleaved), `q` (`n`), `phi` (`n`) and `field` (`3n`, interleaved) are device pointers
/// (CUDA memory of device 0's primary context, the CUDA runtime's), `phi` and `field` may be
/// NULL (not wanted); `energy` is a **host** pointer (or NULL). The plan must have been made
/// with `opts.backend = FARFIELD_FMM_BACKEND_CUDA`. The work is issued on the plan's stream
/// (`opts.gpu_stream` or the default stream); the inputs must be ready in that stream's order
/// when the call is made, and the call returns after the work is done (the result checks of
/// `farfield_fmm_execute` need the values). Outputs are written only on success; they must
/// not overlap the inputs or each other. Same kernel (`1/r`, no `1/(4πε₀)` factor), units
/// (potential charge/length, field charge/length², energy charge²/length), interleaved
/// layouts (`xyz[3*i + d]`, `field[3*i + d]`), limits and checks as `farfield_fmm_execute`
/// (the checks run on the device).
///
/// Returns 0 or: `FARFIELD_ERR_NULL_POINTER` (`plan`, or `xyz`/`q` NULL with `n > 0`),
/// `FARFIELD_ERR_INVALID_ARG` (a CPU plan; coincident particles), `FARFIELD_ERR_NPOINTS`,
/// `FARFIELD_ERR_NONFINITE`, `FARFIELD_ERR_RANGE`, `FARFIELD_ERR_ALLOC` (device memory),
/// `FARFIELD_ERR_INTERNAL` (a device error).
///
/// # Safety
/// `plan` from `farfield_fmm_makeplan`; each non-NULL array a device allocation of the stated
/// size; `energy` NULL or a writable host double.
#[no_mangle]
pub unsafe extern "C" fn farfield_fmm_execute_device(
    plan: farfield_fmm_plan,
    n: i64,
    xyz: *const f64,
    q: *const f64,
    phi: *mut f64,
    field: *mut f64,
    energy: *mut f64,
) -> c_int {
    guard(|| {
        let mut p = lock(plan)?;
        let n = checked_n(n)?;
        check_outputs_disjoint(&[region(xyz, 3 * n, "xyz"), region(q, n, "q")], &[region(phi, n, "phi"), region(field, 3 * n, "field")])?;
        let u = p.execute_device(n, xyz as u64, q as u64, phi as u64, field as u64)?;
        if !energy.is_null() {
            energy.write(u);
        }
        Ok(())
    })
}

/// Writes the plan's parameters and the statistics of its last execute into `*params`, whose
/// `struct_size` the caller sets to `sizeof(farfield_fmm_params)` first: only that many bytes
/// are written, and `params->struct_size` is left at the number of bytes written. Returns 0 or
/// `FARFIELD_ERR_NULL_POINTER`, `FARFIELD_ERR_INVALID_ARG` (`struct_size` 0 or ending inside a
/// field; nothing written).
///
/// # Safety
/// `plan` from `farfield_fmm_makeplan`; `params` NULL or `params->struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn farfield_fmm_get_params(plan: farfield_fmm_plan, params: *mut farfield_fmm_params) -> c_int {
    guard(|| {
        let s = lock(plan)?.stats();
        non_null(params, "params")?;
        let t = s.times;
        let v = farfield_fmm_params {
            struct_size: std::mem::size_of::<farfield_fmm_params>(),
            order: s.order as i32,
            depth: s.depth.map(|d| d as i32).unwrap_or(-1),
            tol_clamped: s.tol_clamped as i32,
            nthreads: s.nthreads as i32,
            nleaves: s.nleaves as i64,
            npoints: s.npoints as i64,
            t_tree: t.tree,
            t_lists: t.lists,
            t_p2m: t.p2m,
            t_m2m: t.m2m,
            t_m2l: t.m2l,
            t_l2l: t.l2l,
            t_l2p: t.l2p,
            t_p2p: t.p2p,
            t_post: t.post,
            t_total: t.total,
        };
        abi::write_out(params, &v, "params")
    })
}

/// Destroys a plan and frees its memory. NULL is fine (returns 0).
///
/// # Safety
/// `plan` must be NULL or a live plan from `farfield_fmm_makeplan`, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn farfield_fmm_destroy(plan: farfield_fmm_plan) -> c_int {
    destroy_boxed(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::*;
    use std::ptr::{null, null_mut};

    use crate::capi::last_error_message as last_msg;

    fn make(boundary: c_int, b: Option<&[f64; 9]>, tol: f64, o: *const farfield_fmm_opts) -> (c_int, farfield_fmm_plan) {
        let mut p: farfield_fmm_plan = 0x1 as farfield_fmm_plan; // must be reset to NULL
        let s = unsafe { farfield_fmm_makeplan(boundary, b.map(|b| b.as_ptr()).unwrap_or(null()), tol, &mut p, o) };
        (s, p)
    }

    fn cube(l: f64) -> [f64; 9] {
        [l, 0.0, 0.0, 0.0, l, 0.0, 0.0, 0.0, l]
    }

    #[test]
    fn constants_match_the_implementation() {
        assert_eq!(FARFIELD_FMM_MAX_ORDER as usize, params::MAX_ORDER);
        assert_eq!(FARFIELD_FMM_MAX_DEPTH as usize, params::MAX_DEPTH);
    }

    #[test]
    fn opts_layout_and_defaults() {
        abi::check_fields::<farfield_fmm_opts>();
        abi::check_fields::<farfield_fmm_params>();
        assert_eq!(std::mem::size_of::<farfield_fmm_opts>(), 40);
        assert_eq!(std::mem::offset_of!(farfield_fmm_opts, gpu_stream), 32);
        assert_eq!(std::mem::offset_of!(farfield_fmm_opts, nthreads), 8);
        assert_eq!(std::mem::offset_of!(farfield_fmm_opts, depth), 20);
        assert_eq!(std::mem::offset_of!(farfield_fmm_opts, backend), 24);
        assert_eq!(std::mem::size_of::<farfield_fmm_params>(), 120);
        assert_eq!(std::mem::offset_of!(farfield_fmm_params, order), 8);
        assert_eq!(std::mem::offset_of!(farfield_fmm_params, nleaves), 16);
        assert_eq!(std::mem::offset_of!(farfield_fmm_params, t_tree), 32);
        assert_eq!(std::mem::offset_of!(farfield_fmm_params, t_total), 104);
        assert_eq!(std::mem::offset_of!(farfield_fmm_params, tol_clamped), 112);
        assert_eq!(std::mem::offset_of!(farfield_fmm_params, nthreads), 116);
        let sz = std::mem::size_of::<farfield_fmm_opts>();
        let mut o = farfield_fmm_opts { struct_size: 9, nthreads: 9, debug: 9, order: 9, depth: 9, backend: 9, max_leaf: 9, gpu_stream: 9 as *mut c_void };
        assert_eq!(unsafe { farfield_fmm_default_opts(&mut o, sz) }, 0);
        assert_eq!(o, farfield_fmm_opts { struct_size: 40, nthreads: 0, debug: 0, order: 0, depth: -1, backend: 0, max_leaf: 0, gpu_stream: null_mut() });
        assert_eq!(unsafe { farfield_fmm_default_opts(null_mut(), sz) }, FARFIELD_ERR_NULL_POINTER);
        assert_eq!(unsafe { farfield_fmm_default_opts(&mut o, 4) }, FARFIELD_ERR_INVALID_ARG);
        assert_eq!(unsafe { farfield_fmm_default_opts(&mut o, 26) }, FARFIELD_ERR_INVALID_ARG);
        // an older caller without `backend` and `max_leaf` (24 bytes): their defaults are used
        let mut old = farfield_fmm_opts { backend: 77, max_leaf: -77, ..o };
        assert_eq!(unsafe { farfield_fmm_default_opts(&mut old, 24) }, 0);
        assert_eq!((old.struct_size, old.backend, old.max_leaf), (24, 77, -77));
        let (s, p) = make(FARFIELD_FMM_OPEN, None, 1e-6, &old);
        assert_eq!(s, 0, "{}", last_msg());
        let mut prm = farfield_fmm_params { struct_size: 16, nleaves: -3, ..Default::default() };
        unsafe {
            assert_eq!(farfield_fmm_get_params(p, &mut prm), 0);
            assert_eq!((prm.struct_size, prm.nleaves), (16, -3));
            assert!(prm.order > 0);
            prm.struct_size = 14;
            assert_eq!(farfield_fmm_get_params(p, &mut prm), FARFIELD_ERR_INVALID_ARG);
            farfield_fmm_destroy(p);
        }
        old.struct_size = 32;
        assert_eq!(make(FARFIELD_FMM_OPEN, None, 1e-6, &old).0, FARFIELD_ERR_INVALID_ARG);
        old.backend = 0;
        assert_eq!(make(FARFIELD_FMM_OPEN, None, 1e-6, &old).0, FARFIELD_ERR_INVALID_ARG);
        assert!(last_msg().contains("opts.max_leaf"), "{}", last_msg());
        // max_leaf ≥ 1: the adaptive tree (open boundaries only); −1: the uniform tree
        old.max_leaf = 8;
        let (s, p) = make(FARFIELD_FMM_OPEN, None, 1e-6, &old);
        assert_eq!(s, 0, "{}", last_msg());
        unsafe { farfield_fmm_destroy(p) };
        let cube = [1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0];
        assert_eq!(make(FARFIELD_FMM_PERIODIC, Some(&cube), 1e-6, &old).0, FARFIELD_ERR_INVALID_ARG);
        old.depth = 3;
        assert_eq!(make(FARFIELD_FMM_OPEN, None, 1e-6, &old).0, FARFIELD_ERR_INVALID_ARG);
        old.max_leaf = -1;
        let (s, p) = make(FARFIELD_FMM_OPEN, None, 1e-6, &old);
        assert_eq!(s, 0, "{}", last_msg());
        unsafe { farfield_fmm_destroy(p) };
    }

    #[test]
    fn makeplan_errors() {
        unsafe {
            assert_eq!(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, null(), 1e-6, null_mut(), null()), FARFIELD_ERR_NULL_POINTER);
        }
        for tol in [0.0, 1.0, -1e-3, 2.0, f64::NAN, f64::INFINITY] {
            let (s, p) = make(FARFIELD_FMM_OPEN, None, tol, null());
            assert_eq!((s, p), (FARFIELD_ERR_TOL, null_mut()), "tol {tol}");
        }
        assert_eq!(make(7, None, 1e-6, null()).0, FARFIELD_ERR_INVALID_ARG);
        assert!(last_msg().contains("boundary"));
        // periodic: box required, finite, positive, cubic or rectangular with integer ratios
        assert_eq!(make(FARFIELD_FMM_PERIODIC, None, 1e-6, null()).0, FARFIELD_ERR_NULL_POINTER);
        assert!(last_msg().contains("box"));
        let mut b = cube(2.0);
        b[4] = f64::NAN;
        assert_eq!(make(FARFIELD_FMM_PERIODIC, Some(&b), 1e-6, null()).0, FARFIELD_ERR_INVALID_ARG);
        assert!(last_msg().contains("box[4]"));
        assert_eq!(make(FARFIELD_FMM_PERIODIC, Some(&cube(-1.0)), 1e-6, null()).0, FARFIELD_ERR_INVALID_ARG);
        assert_eq!(make(FARFIELD_FMM_PERIODIC, Some(&cube(0.0)), 1e-6, null()).0, FARFIELD_ERR_INVALID_ARG);
        let mut b = cube(2.0);
        b[8] = 2.0 * 2f64.sqrt();
        assert_eq!(make(FARFIELD_FMM_PERIODIC, Some(&b), 1e-6, null()).0, FARFIELD_ERR_INVALID_ARG);
        assert!(last_msg().contains("integer multiples"), "{}", last_msg());
        let mut b = cube(2.0);
        b[8] = 3.0; // 2:2:3, rectangular
        let (s, p) = make(FARFIELD_FMM_PERIODIC, Some(&b), 1e-6, null());
        assert_eq!(s, 0);
        unsafe { farfield_fmm_destroy(p) };
        let mut o = default_opts();
        o.backend = FARFIELD_FMM_BACKEND_CUDA;
        assert!([FARFIELD_ERR_NOT_SUPPORTED, FARFIELD_ERR_NO_DEVICE].contains(&make(FARFIELD_FMM_PERIODIC, Some(&b), 1e-6, &o).0));
        let mut b = cube(2.0);
        b[1] = 0.5;
        let (s, p) = make(FARFIELD_FMM_PERIODIC, Some(&b), 1e-6, null());
        assert_eq!((s, p), (FARFIELD_ERR_NOT_SUPPORTED, null_mut()));
        assert!(last_msg().contains("triclinic"));
        // options
        let mut o = default_opts();
        o.backend = FARFIELD_FMM_BACKEND_CUDA;
        if crate::gpu::runtime::discover().as_ref().map_or(true, |d| d.is_empty()) {
            assert_eq!(make(FARFIELD_FMM_OPEN, None, 1e-6, &o).0, FARFIELD_ERR_NO_DEVICE);
            assert!(last_msg().contains("FMM"), "{}", last_msg());
        }
        // a stream with a CPU plan
        let mut o = default_opts();
        o.gpu_stream = 0x1000 as *mut c_void;
        assert_eq!(make(FARFIELD_FMM_OPEN, None, 1e-6, &o).0, FARFIELD_ERR_INVALID_ARG);
        assert!(last_msg().contains("gpu_stream"), "{}", last_msg());
        for (field, bad) in [("nthreads", -1), ("order", -1), ("order", 41), ("depth", -2), ("depth", 21), ("backend", 3)] {
            let mut o = default_opts();
            match field {
                "nthreads" => o.nthreads = bad,
                "order" => o.order = bad,
                "depth" => o.depth = bad,
                _ => o.backend = bad,
            }
            let (s, p) = make(FARFIELD_FMM_OPEN, None, 1e-6, &o);
            assert_eq!((s, p), (FARFIELD_ERR_INVALID_ARG, null_mut()), "{field} = {bad}");
            assert!(last_msg().contains(field));
        }
        // valid: open with a NULL box, periodic cubic, CPU backend, explicit order/depth
        let mut o = default_opts();
        o.backend = FARFIELD_FMM_BACKEND_CPU;
        o.order = 5;
        o.depth = 2;
        let (s, p) = make(FARFIELD_FMM_OPEN, None, 1e-3, &o);
        assert_eq!(s, 0);
        unsafe { farfield_fmm_destroy(p) };
        let (s, p) = make(FARFIELD_FMM_PERIODIC, Some(&cube(3.0)), 1e-3, null());
        assert_eq!(s, 0);
        assert!(!p.is_null());
        unsafe {
            assert_eq!(farfield_fmm_destroy(p), 0);
            assert_eq!(farfield_fmm_destroy(null_mut()), 0);
        }
    }

    fn system(n: usize) -> (Vec<f64>, Vec<f64>) {
        let xyz: Vec<f64> = (0..3 * n).map(|i| (i as f64 * 0.618_033_988_7).fract() * 2.0 - 0.5).collect();
        let q: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 } * (1.0 + (i % 5) as f64 * 0.1)).collect();
        (xyz, q)
    }

    #[test]
    fn execute_roundtrip_and_errors() {
        let mut o = default_opts();
        o.nthreads = 1;
        let (s, p) = make(FARFIELD_FMM_OPEN, None, 1e-6, &o);
        assert_eq!(s, 0);
        let n = 300;
        let (mut xyz, mut q) = system(n);
        let (mut phi, mut f, mut u) = (vec![0.0; n], vec![0.0; 3 * n], 7.0);
        unsafe {
            let ni = n as i64;
            assert_eq!(farfield_fmm_execute(null_mut(), ni, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), null_mut(), null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_fmm_execute(p, -1, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), null_mut(), null_mut()), FARFIELD_ERR_NPOINTS);
            assert_eq!(farfield_fmm_execute(p, 1 << 33, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), null_mut(), null_mut()), FARFIELD_ERR_NPOINTS);
            assert_eq!(farfield_fmm_execute(p, ni, null(), q.as_ptr(), phi.as_mut_ptr(), null_mut(), null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert!(last_msg().contains("xyz"));
            assert_eq!(farfield_fmm_execute(p, ni, xyz.as_ptr(), null(), phi.as_mut_ptr(), null_mut(), null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert!(last_msg().contains("`q`"));
            // n = 0: valid no-op, NULL arrays allowed, energy 0
            assert_eq!(farfield_fmm_execute(p, 0, null(), null(), null_mut(), null_mut(), &mut u), 0);
            assert_eq!(u, 0.0);
            // all outputs
            assert_eq!(farfield_fmm_execute(p, ni, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), f.as_mut_ptr(), &mut u), 0);
        }
        // same as the Rust plan and close to the direct sum
        let mut rp = FmmPlan::new(Boundary::Open, 1e-6, &convert_opts(&o).unwrap()).unwrap();
        let (mut phi2, mut f2) = (vec![0.0; n], vec![0.0; 3 * n]);
        let u2 = rp.execute(&xyz, &q, Some(&mut phi2), Some(&mut f2)).unwrap();
        assert_eq!((&phi, &f, u), (&phi2, &f2, u2));
        let mut ud = 0.0;
        for i in 0..n {
            for j in 0..i {
                let d: f64 = (0..3).map(|k| (xyz[3 * i + k] - xyz[3 * j + k]).powi(2)).sum();
                ud += q[i] * q[j] / d.sqrt();
            }
        }
        assert!((u - ud).abs() < 1e-10 * ud.abs(), "{u} vs {ud}");
        // only the energy; only the field
        let mut u3 = 0.0;
        let mut f3 = vec![0.0; 3 * n];
        unsafe {
            assert_eq!(farfield_fmm_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), null_mut(), null_mut(), &mut u3), 0);
            assert_eq!(farfield_fmm_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), null_mut(), f3.as_mut_ptr(), null_mut()), 0);
        }
        assert_eq!((u3, &f3), (u, &f));
        // non-finite inputs: error naming the index, outputs untouched, plan still usable
        let before = (phi.clone(), f.clone(), u);
        xyz[3 * 17 + 1] = f64::NAN;
        unsafe {
            assert_eq!(farfield_fmm_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), f.as_mut_ptr(), &mut u), FARFIELD_ERR_NONFINITE);
        }
        assert!(last_msg().contains("xyz[52]") && last_msg().contains("particle 17"), "{}", last_msg());
        xyz[3 * 17 + 1] = 0.25;
        q[123] = f64::INFINITY;
        unsafe {
            assert_eq!(farfield_fmm_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), f.as_mut_ptr(), &mut u), FARFIELD_ERR_NONFINITE);
        }
        assert!(last_msg().contains("q[123]"));
        q[123] = 1.0;
        // outputs overlapping an input or each other: refused, naming both, nothing written
        let xyz_before = xyz.clone();
        unsafe {
            let x = xyz.as_mut_ptr();
            assert_eq!(farfield_fmm_execute(p, n as i64, x, q.as_ptr(), x.add(3), null_mut(), null_mut()), FARFIELD_ERR_INVALID_ARG);
            assert!(last_msg().contains("`xyz`") && last_msg().contains("`phi`"), "{}", last_msg());
            assert_eq!(farfield_fmm_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), f.as_mut_ptr(), f.as_mut_ptr().add(7)), FARFIELD_ERR_INVALID_ARG);
            assert!(last_msg().contains("`field`") && last_msg().contains("`energy`"), "{}", last_msg());
        }
        assert_eq!(xyz, xyz_before);
        assert_eq!((phi.clone(), f.clone(), u), before);
        q[123] = 1.0;
        unsafe {
            assert_eq!(farfield_fmm_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), null_mut(), null_mut()), 0);
        }
        // get_params
        let mut prm = farfield_fmm_params::default();
        unsafe {
            assert_eq!(farfield_fmm_get_params(null_mut(), &mut prm), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_fmm_get_params(p, null_mut()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_fmm_get_params(p, &mut prm), 0);
        }
        assert_eq!(prm.order as usize, crate::fmm::params::order_for_tol(1e-6));
        assert_eq!((prm.npoints, prm.tol_clamped, prm.nthreads), (n as i64, 0, 1));
        assert!(prm.depth >= 0 && prm.nleaves >= 1 && prm.t_total > 0.0);
        unsafe { farfield_fmm_destroy(p) };
        // depth before the first execute is −1
        let (_, p) = make(FARFIELD_FMM_OPEN, None, 1e-3, null());
        unsafe {
            assert_eq!(farfield_fmm_get_params(p, &mut prm), 0);
            farfield_fmm_destroy(p);
        }
        assert_eq!(prm.depth, -1);
        // a tolerance beyond the maximal order is clamped and flagged
        let (s, p) = make(FARFIELD_FMM_OPEN, None, 1e-15, null());
        assert_eq!(s, 0);
        unsafe {
            assert_eq!(farfield_fmm_get_params(p, &mut prm), 0);
            farfield_fmm_destroy(p);
        }
        assert_eq!((prm.order, prm.tol_clamped), (40, 1));
    }

    #[test]
    fn execute_alloc_failure() {
        // the work arrays for n = 2^32 − 1 particles (≈ 300 GB) cannot be reserved: the call
        // fails with FARFIELD_ERR_ALLOC before the (small) arrays are read
        let (s, p) = make(FARFIELD_FMM_OPEN, None, 1e-3, null());
        assert_eq!(s, 0);
        let xyz = [0.0; 3];
        let q = [1.0];
        let mut phi = [5.0];
        let n = u32::MAX as i64;
        unsafe {
            assert_eq!(farfield_fmm_execute(p, n, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), null_mut(), null_mut()), FARFIELD_ERR_ALLOC);
        }
        assert!(last_msg().contains("allocate"));
        assert_eq!(phi[0], 5.0);
        // still usable
        let mut u = 1.0;
        unsafe {
            assert_eq!(farfield_fmm_execute(p, 1, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), null_mut(), &mut u), 0);
            farfield_fmm_destroy(p);
        }
        assert_eq!((phi[0], u), (0.0, 0.0));
    }

    #[test]
    fn periodic_folds_particles_outside_the_box() {
        let l = 2.0;
        let (s, p) = make(FARFIELD_FMM_PERIODIC, Some(&cube(l)), 1e-8, null());
        assert_eq!(s, 0);
        let n = 64;
        let (xyz, mut q) = system(n);
        let qm = q.iter().sum::<f64>() / n as f64;
        q.iter_mut().for_each(|v| *v -= qm); // neutral
        let inside: Vec<f64> = xyz.iter().map(|&x| x.rem_euclid(l)).collect();
        let shifted: Vec<f64> = xyz.iter().enumerate().map(|(i, &x)| x.rem_euclid(l) + l * ((i % 7) as f64 - 3.0)).collect();
        let mut out = Vec::new();
        for x in [&inside, &shifted] {
            let (mut phi, mut f, mut u) = (vec![0.0; n], vec![0.0; 3 * n], 0.0);
            unsafe {
                assert_eq!(farfield_fmm_execute(p, n as i64, x.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), f.as_mut_ptr(), &mut u), 0);
            }
            out.push((phi, f, u));
        }
        unsafe { farfield_fmm_destroy(p) };
        let (a, b) = (&out[0], &out[1]);
        for i in 0..n {
            assert!((a.0[i] - b.0[i]).abs() < 1e-10 * (1.0 + a.0[i].abs()));
        }
        assert!((a.2 - b.2).abs() < 1e-10 * a.2.abs());
    }

    /// A rectangular (diagonal, 1:2:1) box through the C API gives the Rust API's
    /// `Boundary::PeriodicBox` results bit for bit; a near-cubic box (within 1e-12) is still the
    /// cubic box of side `box[0]`, as before rectangular boxes were accepted.
    #[test]
    fn rectangular_box_matches_the_rust_api() {
        let (xyz, mut q) = system(200);
        let n = q.len();
        let qm = q.iter().sum::<f64>() / n as f64;
        q.iter_mut().for_each(|v| *v -= qm);
        let mut o = default_opts();
        o.nthreads = 1;
        let ro = FmmOpts { nthreads: 1, ..Default::default() };
        for (b, want) in [
            ([1.5, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 1.5], Boundary::PeriodicBox { sides: [1.5, 3.0, 1.5] }),
            ([1.5, 0.0, 0.0, 0.0, 1.5 * (1.0 + 1e-13), 0.0, 0.0, 0.0, 1.5], Boundary::Periodic { side: 1.5 }),
        ] {
            let (s, p) = make(FARFIELD_FMM_PERIODIC, Some(&b), 1e-6, &o);
            assert_eq!(s, 0, "{}", last_msg());
            let (mut phi, mut f, mut u) = (vec![0.0; n], vec![0.0; 3 * n], 0.0);
            unsafe {
                assert_eq!(farfield_fmm_execute(p, n as i64, xyz.as_ptr(), q.as_ptr(), phi.as_mut_ptr(), f.as_mut_ptr(), &mut u), 0);
                farfield_fmm_destroy(p);
            }
            let mut rp = FmmPlan::new(want, 1e-6, &ro).unwrap();
            let (mut phi2, mut f2) = (vec![0.0; n], vec![0.0; 3 * n]);
            let u2 = rp.execute(&xyz, &q, Some(&mut phi2), Some(&mut f2)).unwrap();
            assert_eq!((phi, f, u), (phi2, f2, u2), "{want:?}");
        }
    }
}
