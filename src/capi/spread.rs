//! Spreading/interpolation C API for particle-in-cell and particle-mesh codes:
//! `farfield_spread_*` (double) and `farfield_spreadf_*` (single precision) — default_opts,
//! makeplan, setpts, spread, spread_complex, interp, interp_complex, their `_device` forms on
//! CUDA device arrays, get_width, destroy. The
//! numerics are [`crate::plans::SpreadPlan`]; this file converts and validates.
//!
//! Geometry: a grid of `n[0] × n[1] × n[2]` points (x fastest, `grid[i + n0*(j + n1*k)]`;
//! entries past `dim` ignored), grid point `i` of axis `d` at `box_lo[d] + i·h_d` with
//! `h_d = box_len[d] / n[d]`. A periodic axis has period `box_len[d]` and takes points
//! anywhere; on a free axis every grid point a point's kernel touches must lie in
//! `0 … n[d] − 1` (pad the grid by `⌈w/2⌉` points per side; `farfield_spread_get_width`).
//! Spreading **overwrites** the grid; interpolation overwrites the values.
//! Thread safety: different plans may be used concurrently; calls on one plan are serialised
//! by a lock inside the plan.

use super::abi::{read_in, versioned, write_defaults};
use super::{destroy_boxed, guard, lock, non_null, plan_handle, slice_in, slice_out};
use crate::error::{Error, Result};
use crate::gpu::spread::GpuSpreadOpts;
use crate::gpu::types::GpuReal;
use crate::backend::BackendChoice;
use crate::plans::spread::{kernel_for, SpreadBox, SpreadKernelKind, SpreadPlan, SpreadPlanOpts};
use num_complex::{Complex, Complex32, Complex64};
use std::ffi::c_int;
use std::sync::Mutex;

/// Kernel `FARFIELD_SPREAD_KERNEL_ES`: exponential of semicircle; `width_or_tol` is the
/// relative tolerance in (0, 1) (width and β from the NUFFT's table at σ = 2: w = 4, 7, 10, 13
/// at tol 1e-3, 1e-6, 1e-9, 1e-11, at most 16; `farfield_spread_get_width` reports it).
pub const FARFIELD_SPREAD_KERNEL_ES: c_int = 0;
/// Kernel `FARFIELD_SPREAD_KERNEL_GAUSSIAN`: truncated Gaussian; `width_or_tol` is the
/// relative tolerance in (0, 1) (the NUFFT's Gaussian parameters at σ = 2).
pub const FARFIELD_SPREAD_KERNEL_GAUSSIAN: c_int = 1;
/// Kernel `FARFIELD_SPREAD_KERNEL_BSPLINE`: cardinal B-spline; `width_or_tol` is its order
/// 1…8 (= width): 1 nearest grid point (NGP), 2 cloud-in-cell (CIC), 3 triangular-shaped
/// cloud (TSC).
pub const FARFIELD_SPREAD_KERNEL_BSPLINE: c_int = 2;

/// Options of a spreading plan (versioned: `struct_size` first; fill with
/// `farfield_spread_default_opts(&opts, sizeof opts)`, then change fields).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(non_camel_case_types)]
pub struct farfield_spread_opts {
    /// Size of the struct as the caller compiled it (`sizeof(farfield_spread_opts)`), set by
    /// `farfield_spread_default_opts`; the library reads only that many bytes.
    pub struct_size: usize,
    /// CPU threads: 0 = all cores (default), 1 = the caller's thread only (no pool is
    /// created); at most 1024 (`FARFIELD_MAX_THREADS`).
    pub nthreads: i32,
    /// `> 0`: print the plan's choices and per-stage timings to stderr (default 0).
    pub debug: i32,
    /// `FARFIELD_BACKEND_AUTO` (0, default: the CPU until the CUDA path has been timed against
    /// it), `FARFIELD_BACKEND_CPU` (1) or `FARFIELD_BACKEND_CUDA` (2: device 0;
    /// `FARFIELD_ERR_NO_DEVICE` without one).
    pub backend: i32,
    /// CUDA only: `FARFIELD_GPU_METHOD_AUTO` (0, default) or `_GM`, `_GM_SORT`, `_SM`, `_CSR`,
    /// `_GROUP` (1–5).
    pub gpu_method: i32,
    /// CUDA only: spreads/interpolations the caller expects per `setpts` (0 = unknown, the
    /// default); ≥ 20 lets the automatic method choose the mesh methods (CSR, GROUP). Must be
    /// ≥ 0.
    pub gpu_reuse_hint: i32,
    /// CPU: largest number of points per subproblem (default 0 = 10 000); CUDA: largest
    /// number of points per SM subproblem (0 = 1024). Must be ≥ 0.
    pub max_subprob_size: i32,
}

fn default_opts() -> farfield_spread_opts {
    farfield_spread_opts {
        struct_size: std::mem::size_of::<farfield_spread_opts>(),
        nthreads: 0,
        debug: 0,
        backend: 0,
        gpu_method: 0,
        gpu_reuse_hint: 0,
        max_subprob_size: 0,
    }
}

versioned!(farfield_spread_opts, "farfield_spread_opts",
           [struct_size, nthreads, debug, backend, gpu_method, gpu_reuse_hint, max_subprob_size], default_opts());

fn convert_opts(o: &farfield_spread_opts) -> Result<SpreadPlanOpts> {
    if !(0..=crate::capi::FARFIELD_MAX_THREADS).contains(&o.nthreads) {
        return Err(Error::InvalidArg(format!("opts.nthreads = {}; must be in [0, {}]", o.nthreads, crate::capi::FARFIELD_MAX_THREADS)));
    }
    if o.max_subprob_size < 0 {
        return Err(Error::InvalidArg(format!("opts.max_subprob_size = {}; must be ≥ 0", o.max_subprob_size)));
    }
    if o.gpu_reuse_hint < 0 {
        return Err(Error::InvalidArg(format!("opts.gpu_reuse_hint = {}; must be ≥ 0", o.gpu_reuse_hint)));
    }
    let method = super::gpu_method_of(o.gpu_method)?;
    Ok(SpreadPlanOpts {
        nthreads: o.nthreads as usize,
        debug: o.debug,
        backend: BackendChoice::from_c(o.backend)?,
        gpu: GpuSpreadOpts { method, reuse_hint: o.gpu_reuse_hint as usize, ..GpuSpreadOpts::default() },
        max_subprob_size: o.max_subprob_size as usize,
    })
}

/// Opaque double-precision spreading plan (C: `struct farfield_spread_plan_s`).
#[allow(non_camel_case_types)]
pub struct farfield_spread_plan_s {
    inner: Mutex<SpreadPlan<f64>>,
}
/// Opaque single-precision spreading plan (C: `struct farfield_spreadf_plan_s`).
#[allow(non_camel_case_types)]
pub struct farfield_spreadf_plan_s {
    inner: Mutex<SpreadPlan<f32>>,
}
/// Handle of a double-precision spreading plan (`NULL` when none).
#[allow(non_camel_case_types)]
pub type farfield_spread_plan = *mut farfield_spread_plan_s;
/// Handle of a single-precision spreading plan (`NULL` when none).
#[allow(non_camel_case_types)]
pub type farfield_spreadf_plan = *mut farfield_spreadf_plan_s;

/// Shared body of both makeplans.
unsafe fn makeplan<T: GpuReal>(dim: c_int, n: *const i64, box_lo: *const f64, box_len: *const f64, periodic: *const c_int,
                               kernel: c_int, width_or_tol: f64, opts: *const farfield_spread_opts) -> Result<SpreadPlan<T>> {
    if !(1..=3).contains(&dim) {
        return Err(Error::Dim(format!("dim = {dim} is not 1, 2 or 3")));
    }
    let dim = dim as usize;
    let n = slice_in(n, dim, "n")?;
    let lo = slice_in(box_lo, dim, "box_lo")?;
    let len = slice_in(box_len, dim, "box_len")?;
    let per = slice_in(periodic, dim, "periodic")?;
    let mut bx = SpreadBox { dim, n: [1; 3], lo: [0.0; 3], len: [1.0; 3], periodic: [true; 3] };
    for d in 0..dim {
        if n[d] < 1 {
            return Err(Error::Modes(format!("n[{d}] = {}; grid sizes must be ≥ 1", n[d])));
        }
        bx.n[d] = usize::try_from(n[d]).map_err(|_| Error::Modes(format!("n[{d}] = {} exceeds the address space", n[d])))?;
        bx.lo[d] = lo[d];
        bx.len[d] = len[d];
        bx.periodic[d] = match per[d] {
            0 => false,
            1 => true,
            v => return Err(Error::InvalidArg(format!("periodic[{d}] = {v}; must be 0 (free) or 1 (periodic)"))),
        };
    }
    let kind = SpreadKernelKind::from_code(kernel).ok_or_else(|| {
        Error::InvalidArg(format!("kernel = {kernel}; must be FARFIELD_SPREAD_KERNEL_ES (0), _GAUSSIAN (1) or _BSPLINE (2)"))
    })?;
    let k = kernel_for(kind, width_or_tol, T::MIN_TOL)?;
    let o = convert_opts(&read_in(opts)?)?;
    SpreadPlan::<T>::new(bx, k, &o)
}

plan_handle!(farfield_spread_plan_s, SpreadPlan<f64>);
plan_handle!(farfield_spreadf_plan_s, SpreadPlan<f32>);

/// Rejects an output slice that overlaps another array (names from `what`, "a and b").
fn disjoint<A, B>(a: &[A], b: &[B], what: &str) -> Result<()> {
    let (an, bn) = what.split_once(" and ").unwrap_or((what, what));
    super::check_disjoint(a.as_ptr(), a.len(), an, b.as_ptr(), b.len(), bn)
}

/// The point count M of a setpts: `FARFIELD_ERR_NPOINTS` when negative or beyond the limit.
fn point_count(m: i64) -> Result<usize> {
    if m < 0 {
        return Err(Error::NPoints(format!("M = {m} is negative")));
    }
    if m as u64 > crate::spread::MAX_POINTS as u64 {
        return Err(Error::NPoints(format!("M = {m} points exceed the supported maximum of {} (2^32 − 1)", crate::spread::MAX_POINTS)));
    }
    Ok(m as usize)
}

unsafe fn setpts<T: GpuReal>(p: &mut SpreadPlan<T>, m: i64, x: *const T, y: *const T, z: *const T) -> Result<()> {
    let m = point_count(m)?;
    let dim = p.geometry().dim;
    let xs = slice_in(x, m, "x")?;
    let ys = if dim >= 2 { slice_in(y, m, "y")? } else { &[] };
    let zs = if dim >= 3 { slice_in(z, m, "z")? } else { &[] };
    p.setpts([xs, ys, zs])
}

unsafe fn spread<T: GpuReal>(p: &SpreadPlan<T>, values: *const T, grid: *mut T) -> Result<()> {
    let c = slice_in(values, p.num_points(), "values")?;
    let g = slice_out(grid, p.grid_len(), "grid")?;
    disjoint(c, g, "values and grid")?;
    p.spread_real(c, g)
}

unsafe fn spread_complex<T: GpuReal>(p: &SpreadPlan<T>, values: *const Complex<T>, grid: *mut Complex<T>) -> Result<()> {
    let c = slice_in(values, p.num_points(), "values")?;
    let g = slice_out(grid, p.grid_len(), "grid")?;
    disjoint(c, g, "values and grid")?;
    p.spread_complex(c, g)
}

unsafe fn interp<T: GpuReal>(p: &SpreadPlan<T>, grid: *const T, values: *mut T, grad: *mut T) -> Result<()> {
    let m = p.num_points();
    let g = slice_in(grid, p.grid_len(), "grid")?;
    let v = slice_out(values, m, "values")?;
    disjoint(g, v, "grid and values")?;
    let gr = if grad.is_null() {
        None
    } else {
        let gr = slice_out(grad, m * p.geometry().dim, "grad")?;
        disjoint(g, gr, "grid and grad")?;
        disjoint(v, gr, "values and grad")?;
        Some(gr)
    };
    p.interp_real(g, v, gr)
}

unsafe fn interp_complex<T: GpuReal>(p: &SpreadPlan<T>, grid: *const Complex<T>, values: *mut Complex<T>) -> Result<()> {
    let g = slice_in(grid, p.grid_len(), "grid")?;
    let v = slice_out(values, p.num_points(), "values")?;
    disjoint(g, v, "grid and values")?;
    p.interp_complex(g, v)
}

unsafe fn setpts_device<T: GpuReal>(p: &mut SpreadPlan<T>, m: i64, x: *const T, y: *const T, z: *const T) -> Result<()> {
    p.setpts_device(point_count(m)?, x as u64, y as u64, z as u64)
}

/// Writes the default spreading options into the first `struct_size` bytes of `*opts` and
/// sets `opts->struct_size = struct_size` (pass `sizeof *opts`): nthreads 0, debug 0, backend
/// AUTO (the CPU), gpu_method AUTO, max_subprob_size 0 (default), gpu_reuse_hint 0.
/// Returns 0, `FARFIELD_ERR_NULL_POINTER` (`opts` NULL) or `FARFIELD_ERR_INVALID_ARG`
/// (`struct_size` smaller than the `struct_size` field or ending inside a field).
///
/// # Safety
/// `opts` must be NULL or point to `struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_default_opts(opts: *mut farfield_spread_opts, struct_size: usize) -> c_int {
    guard(|| write_defaults(opts, struct_size))
}

/// Makes a double-precision spreading/interpolation plan.
///
/// * `dim`: 1, 2 or 3; only the first `dim` entries of `n`, `box_lo`, `box_len`, `periodic`
///   are read.
/// * `n`: grid points per axis, each ≥ 2w (w = kernel width) and Π n ≤ 2⁴⁰ (CPU) or < 2³¹
///   (CUDA) → `FARFIELD_ERR_MODES` otherwise.
/// * `box_lo`: coordinate of grid point 0 per axis (finite); `box_len`: box length per axis
///   (finite, > 0); grid spacing `h = box_len / n`, grid point `i` at `box_lo + i·h`.
/// * `periodic`: 1 = periodic with period `box_len` (points anywhere), 0 = free (every grid
///   point a point's kernel touches must be in `0 … n − 1`: pad by `⌈w/2⌉` points per side).
/// * `kernel`, `width_or_tol`: `FARFIELD_SPREAD_KERNEL_ES` or `_GAUSSIAN` with a relative
///   tolerance in (0, 1) (raised to 1e-15, or 1e-7 in single precision, if smaller; σ = 2
///   parameter rules of the NUFFT), or `FARFIELD_SPREAD_KERNEL_BSPLINE` with the order 1…8.
/// * `plan`: receives the handle (set to NULL first, NULL on failure); `opts`: NULL for the
///   defaults, or a struct filled by `farfield_spread_default_opts` (versioned by its size).
///
/// Returns 0 or `FARFIELD_ERR_{NULL_POINTER, DIM, MODES, TOL, INVALID_ARG (box, periodic flag,
/// kernel code, B-spline order, option), NO_DEVICE (backend CUDA without a device), ALLOC}`.
///
/// # Safety
/// `n`, `box_lo`, `box_len`, `periodic` must point to `dim` readable values; `plan` to a
/// writable handle; `opts` NULL or valid for its `struct_size`.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_makeplan(dim: c_int, n: *const i64, box_lo: *const f64, box_len: *const f64,
                                                  periodic: *const c_int, kernel: c_int, width_or_tol: f64,
                                                  plan: *mut farfield_spread_plan, opts: *const farfield_spread_opts) -> c_int {
    guard(|| {
        non_null(plan, "plan")?;
        plan.write(std::ptr::null_mut());
        let p = makeplan::<f64>(dim, n, box_lo, box_len, periodic, kernel, width_or_tol, opts)?;
        plan.write(Box::into_raw(Box::new(farfield_spread_plan_s { inner: Mutex::new(p) })));
        Ok(())
    })
}

/// Sets the `M ≥ 0` points: `x` (and `y` for dim ≥ 2, `z` for dim 3; unused arrays may be
/// NULL), each of length M, in the box's units. Coordinates are mapped to grid units in
/// double precision and copied (bin-sorted): the caller may reuse or free its arrays.
///
/// Returns 0 or `FARFIELD_ERR_{NULL_POINTER, NPOINTS (M < 0 or ≥ 2³²), NONFINITE (the message
/// names the point and axis), RANGE (a finite coordinate whose `(x − box_lo)/box_len`
/// overflows), INVALID_ARG (a point whose kernel leaves a free axis: the message names the
/// point index, its coordinate, the axis and the allowed range), ALLOC}`; after any error but
/// ALLOC the previous points remain set.
///
/// # Safety
/// `plan` from `farfield_spread_makeplan`; the used coordinate arrays hold M values.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_setpts(plan: farfield_spread_plan, m: i64, x: *const f64, y: *const f64, z: *const f64) -> c_int {
    guard(|| setpts(&mut *lock(plan)?, m, x, y, z))
}

/// Spreads M real `values` (one per point, in setpts order) onto the real `grid`
/// (`n0·n1·n2` values, x fastest: grid point `(l0, l1, l2)`, at `box_lo + l·h`, is
/// `grid[l0 + n0·(l1 + n1·l2)]`), **overwriting** it:
/// `grid_l = Σ_j values_j Π_d ψ(l_d − g_{j,d})` (periodised on periodic axes).
/// Returns 0 or `FARFIELD_ERR_{NULL_POINTER, NO_POINTS, INVALID_ARG (overlapping arrays),
/// ALLOC}`.
///
/// # Safety
/// `values` holds M values, `grid` `n0·n1·n2` writable values.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_spread(plan: farfield_spread_plan, values: *const f64, grid: *mut f64) -> c_int {
    guard(|| spread(&*lock(plan)?, values, grid))
}

/// Like `farfield_spread_spread` for complex values and a complex grid.
///
/// # Safety
/// `values` holds M complex values, `grid` `n0·n1·n2` writable complex values.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_spread_complex(plan: farfield_spread_plan, values: *const Complex64, grid: *mut Complex64) -> c_int {
    guard(|| spread_complex(&*lock(plan)?, values, grid))
}

/// Interpolates the real `grid` (`n0·n1·n2` values, x fastest: `grid[l0 + n0·(l1 + n1·l2)]`,
/// as `farfield_spread_spread` writes it) at the points into `values`
/// (M values, setpts order), overwriting them: `values_j = Σ_l grid_l Π_d ψ(l_d − g_{j,d})`.
/// `grad`: NULL, or `M·dim` values receiving the gradient of the interpolant in physical
/// units (per unit length), interleaved `grad[dim·j + d] = ∂values_j/∂x_d`; available for
/// B-spline kernels of order ≥ 2 on the CPU (otherwise `FARFIELD_ERR_NOT_SUPPORTED`).
/// Returns 0 or `FARFIELD_ERR_{NULL_POINTER, NO_POINTS, NOT_SUPPORTED, INVALID_ARG
/// (overlapping arrays), RANGE (a gradient not representable in the plan's precision, e.g. in
/// a box of length 1e-308; nothing written), ALLOC}`.
///
/// # Safety
/// `grid` holds `n0·n1·n2` values, `values` M writable values, `grad` NULL or `M·dim`.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_interp(plan: farfield_spread_plan, grid: *const f64, values: *mut f64, grad: *mut f64) -> c_int {
    guard(|| interp(&*lock(plan)?, grid, values, grad))
}

/// Like `farfield_spread_interp` for a complex grid and complex values (no gradient).
///
/// # Safety
/// `grid` holds `n0·n1·n2` complex values, `values` M writable complex values.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_interp_complex(plan: farfield_spread_plan, grid: *const Complex64, values: *mut Complex64) -> c_int {
    guard(|| interp_complex(&*lock(plan)?, grid, values))
}

/// `farfield_spread_setpts` from **device** arrays of a plan made with `opts.backend =
/// FARFIELD_BACKEND_CUDA`: `x` (and `y`, `z` for dim ≥ 2, 3; unused ones may be NULL) point to
/// M doubles each in memory of device 0, the plan's device, in the box's units. The same
/// mapping and checks as `farfield_spread_setpts` (the same grid coordinates bit for bit) run
/// on the device, then the spreading method's set-up; the host reads back three integers, and
/// on failure the one coordinate they name. The coordinates are copied on the device before the
/// call returns, so the caller may free or reuse its arrays then; they must be ready when the
/// call is made (the plan works on the default stream, and its later calls are ordered after
/// the rest of the set-up).
///
/// Returns 0 or `FARFIELD_ERR_NULL_POINTER` (`plan`, or a used axis NULL with M > 0),
/// `FARFIELD_ERR_NPOINTS` (M < 0, or ≥ 2³⁰ on the device), `FARFIELD_ERR_INVALID_ARG` (a plan
/// on the CPU backend: "setpts_device needs a CUDA plan"; a point whose kernel leaves a free
/// axis, as `farfield_spread_setpts` names it), `FARFIELD_ERR_NONFINITE`, `FARFIELD_ERR_RANGE`
/// (as `farfield_spread_setpts`), `FARFIELD_ERR_ALLOC` or `FARFIELD_ERR_INTERNAL` (device
/// errors). After the errors before ALLOC the previous points remain set; after ALLOC or
/// INTERNAL the plan has no points.
///
/// # Safety
/// `plan` from makeplan; each used pointer a device allocation of the plan's device holding
/// M doubles.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_setpts_device(plan: farfield_spread_plan, m: i64, x: *const f64, y: *const f64, z: *const f64) -> c_int {
    guard(|| setpts_device(&mut *lock(plan)?, m, x, y, z))
}

/// Like `farfield_spread_spread` with `values` (M doubles) and `grid` (`n0·n1·n2` doubles)
/// in memory of the plan's CUDA device: overwrites `grid`, with the results of the host-array
/// call; returns when they are complete (default stream). Returns 0 or
/// `FARFIELD_ERR_{NULL_POINTER, NO_POINTS, INVALID_ARG (a CPU plan: "spread_device needs a
/// CUDA plan"; overlapping arrays), ALLOC, INTERNAL}`.
///
/// # Safety
/// `values` and `grid` device allocations of the plan's device of those sizes.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_spread_device(plan: farfield_spread_plan, values: *const f64, grid: *mut f64) -> c_int {
    guard(|| lock(plan)?.spread_device(values as u64, grid as u64, false))
}

/// `farfield_spread_spread_device` for complex values and a complex grid.
///
/// # Safety
/// As `farfield_spread_spread_device`, with complex values.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_spread_complex_device(plan: farfield_spread_plan, values: *const Complex64, grid: *mut Complex64) -> c_int {
    guard(|| lock(plan)?.spread_device(values as u64, grid as u64, true))
}

/// Like `farfield_spread_interp` without gradient, with `grid` (`n0·n1·n2` doubles) and
/// `values` (M doubles) in memory of the plan's CUDA device: overwrites `values`; returns when
/// they are complete (default stream). Returns as `farfield_spread_spread_device`.
///
/// # Safety
/// `grid` and `values` device allocations of the plan's device of those sizes.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_interp_device(plan: farfield_spread_plan, grid: *const f64, values: *mut f64) -> c_int {
    guard(|| lock(plan)?.interp_device(grid as u64, values as u64, false))
}

/// `farfield_spread_interp_device` for a complex grid and complex values.
///
/// # Safety
/// As `farfield_spread_interp_device`, with complex values.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_interp_complex_device(plan: farfield_spread_plan, grid: *const Complex64, values: *mut Complex64) -> c_int {
    guard(|| lock(plan)?.interp_device(grid as u64, values as u64, true))
}

/// Writes the kernel width `w` (grid points per axis a point touches) into `*width`.
/// Returns 0 or `FARFIELD_ERR_NULL_POINTER`.
///
/// # Safety
/// `plan` from makeplan; `width` writable.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_get_width(plan: farfield_spread_plan, width: *mut c_int) -> c_int {
    guard(|| {
        let w = lock(plan)?.width();
        non_null(width, "width")?;
        width.write(w as c_int);
        Ok(())
    })
}

/// Destroys a double-precision spreading plan (NULL is fine). Returns 0.
///
/// # Safety
/// `plan` NULL or from makeplan, not used afterwards.
#[no_mangle]
pub unsafe extern "C" fn farfield_spread_destroy(plan: farfield_spread_plan) -> c_int {
    destroy_boxed(plan)
}

/// Single-precision `farfield_spread_default_opts` (the same struct).
///
/// # Safety
/// As `farfield_spread_default_opts`.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_default_opts(opts: *mut farfield_spread_opts, struct_size: usize) -> c_int {
    guard(|| write_defaults(opts, struct_size))
}

/// Single-precision `farfield_spread_makeplan` (box in double precision; the tolerance is
/// raised to 1e-6 if smaller).
///
/// # Safety
/// As `farfield_spread_makeplan`.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_makeplan(dim: c_int, n: *const i64, box_lo: *const f64, box_len: *const f64,
                                                   periodic: *const c_int, kernel: c_int, width_or_tol: f64,
                                                   plan: *mut farfield_spreadf_plan, opts: *const farfield_spread_opts) -> c_int {
    guard(|| {
        non_null(plan, "plan")?;
        plan.write(std::ptr::null_mut());
        let p = makeplan::<f32>(dim, n, box_lo, box_len, periodic, kernel, width_or_tol, opts)?;
        plan.write(Box::into_raw(Box::new(farfield_spreadf_plan_s { inner: Mutex::new(p) })));
        Ok(())
    })
}

/// Single-precision `farfield_spread_setpts` (coordinates `float`, mapped to grid units in
/// double precision).
///
/// # Safety
/// As `farfield_spread_setpts`.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_setpts(plan: farfield_spreadf_plan, m: i64, x: *const f32, y: *const f32, z: *const f32) -> c_int {
    guard(|| setpts(&mut *lock(plan)?, m, x, y, z))
}

/// Single-precision `farfield_spread_spread`.
///
/// # Safety
/// As `farfield_spread_spread`.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_spread(plan: farfield_spreadf_plan, values: *const f32, grid: *mut f32) -> c_int {
    guard(|| spread(&*lock(plan)?, values, grid))
}

/// Single-precision `farfield_spread_spread_complex`.
///
/// # Safety
/// As `farfield_spread_spread_complex`.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_spread_complex(plan: farfield_spreadf_plan, values: *const Complex32, grid: *mut Complex32) -> c_int {
    guard(|| spread_complex(&*lock(plan)?, values, grid))
}

/// Single-precision `farfield_spread_interp`.
///
/// # Safety
/// As `farfield_spread_interp`.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_interp(plan: farfield_spreadf_plan, grid: *const f32, values: *mut f32, grad: *mut f32) -> c_int {
    guard(|| interp(&*lock(plan)?, grid, values, grad))
}

/// Single-precision `farfield_spread_interp_complex`.
///
/// # Safety
/// As `farfield_spread_interp_complex`.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_interp_complex(plan: farfield_spreadf_plan, grid: *const Complex32, values: *mut Complex32) -> c_int {
    guard(|| interp_complex(&*lock(plan)?, grid, values))
}

/// Single-precision `farfield_spread_setpts_device` (M floats per used axis).
///
/// # Safety
/// As `farfield_spread_setpts_device`, with floats.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_setpts_device(plan: farfield_spreadf_plan, m: i64, x: *const f32, y: *const f32, z: *const f32) -> c_int {
    guard(|| setpts_device(&mut *lock(plan)?, m, x, y, z))
}

/// Single-precision `farfield_spread_spread_device`.
///
/// # Safety
/// As `farfield_spread_spread_device`, with floats.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_spread_device(plan: farfield_spreadf_plan, values: *const f32, grid: *mut f32) -> c_int {
    guard(|| lock(plan)?.spread_device(values as u64, grid as u64, false))
}

/// Single-precision `farfield_spread_spread_complex_device`.
///
/// # Safety
/// As `farfield_spread_spread_complex_device`, with floats.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_spread_complex_device(plan: farfield_spreadf_plan, values: *const Complex32, grid: *mut Complex32) -> c_int {
    guard(|| lock(plan)?.spread_device(values as u64, grid as u64, true))
}

/// Single-precision `farfield_spread_interp_device`.
///
/// # Safety
/// As `farfield_spread_interp_device`, with floats.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_interp_device(plan: farfield_spreadf_plan, grid: *const f32, values: *mut f32) -> c_int {
    guard(|| lock(plan)?.interp_device(grid as u64, values as u64, false))
}

/// Single-precision `farfield_spread_interp_complex_device`.
///
/// # Safety
/// As `farfield_spread_interp_complex_device`, with floats.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_interp_complex_device(plan: farfield_spreadf_plan, grid: *const Complex32, values: *mut Complex32) -> c_int {
    guard(|| lock(plan)?.interp_device(grid as u64, values as u64, true))
}

/// Single-precision `farfield_spread_get_width`.
///
/// # Safety
/// As `farfield_spread_get_width`.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_get_width(plan: farfield_spreadf_plan, width: *mut c_int) -> c_int {
    guard(|| {
        let w = lock(plan)?.width();
        non_null(width, "width")?;
        width.write(w as c_int);
        Ok(())
    })
}

/// Destroys a single-precision spreading plan (NULL is fine). Returns 0.
///
/// # Safety
/// As `farfield_spread_destroy`.
#[no_mangle]
pub unsafe extern "C" fn farfield_spreadf_destroy(plan: farfield_spreadf_plan) -> c_int {
    destroy_boxed(plan)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn opts_layout_and_versioning() {
        super::super::abi::check_fields::<farfield_spread_opts>();
        // no padding (docs/design.md §3.2): 8 + 6·4 bytes
        assert_eq!(std::mem::size_of::<farfield_spread_opts>(), 32);
        assert_eq!(std::mem::offset_of!(farfield_spread_opts, max_subprob_size), 28);
        // an older, smaller caller struct: only its bytes are written
        let mut buf = [0x77u8; 48];
        let old = std::mem::offset_of!(farfield_spread_opts, gpu_reuse_hint);
        assert_eq!(unsafe { farfield_spread_default_opts(buf.as_mut_ptr() as *mut farfield_spread_opts, old) }, 0);
        assert!(buf[old..].iter().all(|&b| b == 0x77));
        assert_eq!(usize::from_ne_bytes(buf[..8].try_into().unwrap()), old);
        assert_eq!(unsafe { farfield_spread_default_opts(buf.as_mut_ptr() as *mut farfield_spread_opts, 18) }, crate::error::FARFIELD_ERR_INVALID_ARG);
    }

    #[test]
    fn c_api_round_trip_and_errors() {
        let (n, lo, len, per) = ([8i64, 8, 1], [0.5f64, -1.0, 0.0], [2.0f64, 4.0, 1.0], [1i32, 0, 1]);
        let mut p: farfield_spread_plan = std::ptr::null_mut();
        unsafe {
            assert_eq!(farfield_spread_makeplan(2, n.as_ptr(), lo.as_ptr(), len.as_ptr(), per.as_ptr(), FARFIELD_SPREAD_KERNEL_BSPLINE, 2.0, &mut p, std::ptr::null()), 0);
            let (x, y) = ([0.7f64, 3.1], [-0.2f64, 1.9]);
            assert_eq!(farfield_spread_setpts(p, 2, x.as_ptr(), y.as_ptr(), std::ptr::null()), 0);
            let q = [1.0f64, -0.5];
            let mut g = [0.0f64; 64];
            assert_eq!(farfield_spread_spread(p, q.as_ptr(), g.as_mut_ptr()), 0);
            assert!((g.iter().sum::<f64>() - 0.5).abs() < 1e-14);
            // y = 3.9 puts the CIC window on grid point 8 of the free y axis
            let y2 = [-0.2f64, 3.9];
            assert_eq!(farfield_spread_setpts(p, 2, x.as_ptr(), y2.as_ptr(), std::ptr::null()), crate::error::FARFIELD_ERR_INVALID_ARG);
            let msg = super::super::last_error_message();
            assert!(msg.contains("point 1") && msg.contains("free y axis") && msg.contains("3.9"), "{msg}");
            assert_eq!(farfield_spread_spread(p, q.as_ptr(), std::ptr::null_mut()), crate::error::FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_spread_spread(std::ptr::null_mut(), q.as_ptr(), g.as_mut_ptr()), crate::error::FARFIELD_ERR_NULL_POINTER);
            // values and grid overlapping
            assert_eq!(farfield_spread_spread(p, g.as_ptr(), g.as_mut_ptr().add(1)), crate::error::FARFIELD_ERR_INVALID_ARG);
            assert_eq!(farfield_spread_destroy(p), 0);
        }
    }
}
