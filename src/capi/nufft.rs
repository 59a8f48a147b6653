//! C API of the NUFFT (FINUFFT's guru interface shape): `farfield_nufft_*` (double) and
//! `farfield_nufftf_*` (single precision) — default_opts, makeplan, setpts, execute,
//! get_info, destroy.
//!
//! Memory layout: modes `f[k1 + N1*(k2 + N2*k3)]` (x fastest; CMCL order by default), strengths
//! `c[j]`, stacked per transform (`c[t*M + j]`, `f[t*N1*N2*N3 + …]`). Coordinates in radians,
//! any finite value, reduced mod 2π in double precision at `setpts` (accuracy contract for
//! |x| ≤ 1e16, see `farfield_nufft_setpts`); `setpts` copies them, so the caller may reuse or
//! free its arrays.
//!
//! Limits (checked before anything is allocated, so every call's cost is bounded by the
//! problem size): fine grid ≤ 2³¹ − 1 points per axis (FFTW's int) and ≤ 2⁴⁰ points in all,
//! N1·N2·N3 ≤ 2⁴⁰ and ntrans·N1·N2·N3 ≤ 2⁴⁰ (`FARFIELD_ERR_MODES`), M ≤ 2³² − 1 and
//! ntrans·M ≤ 2⁴⁰ (`FARFIELD_ERR_NPOINTS`); memory beyond what the system gives →
//! `FARFIELD_ERR_ALLOC` (never an abort).
//! Thread safety: different plans may be used concurrently; concurrent calls on one plan are
//! serialised by a lock inside the plan.

use super::abi::{self, versioned};
use super::{check_disjoint, destroy_boxed, guard, lock, non_null, plan_handle, slice_in, slice_out};
use crate::error::{Error, Result};
use crate::nufft::options::*;
use crate::nufft::{Backend, GpuStream, NufftInfo, NufftOpts};
use crate::plans::NufftPlan;
use crate::real::Real;
use num_complex::{Complex, Complex32, Complex64};
use std::ffi::{c_int, c_void};
use std::sync::Mutex;

/// Opaque double-precision NUFFT plan (C: `struct farfield_nufft_plan_s`).
#[allow(non_camel_case_types)]
pub struct farfield_nufft_plan_s {
    inner: Mutex<NufftPlan<f64>>,
}
/// Opaque single-precision NUFFT plan (C: `struct farfield_nufftf_plan_s`).
#[allow(non_camel_case_types)]
pub struct farfield_nufftf_plan_s {
    inner: Mutex<NufftPlan<f32>>,
}
plan_handle!(farfield_nufft_plan_s, NufftPlan<f64>);
plan_handle!(farfield_nufftf_plan_s, NufftPlan<f32>);
/// Handle of a double-precision NUFFT plan.
#[allow(non_camel_case_types)]
pub type farfield_nufft_plan = *mut farfield_nufft_plan_s;
/// Handle of a single-precision NUFFT plan.
#[allow(non_camel_case_types)]
pub type farfield_nufftf_plan = *mut farfield_nufftf_plan_s;

/// Options of a NUFFT plan (versioned: `struct_size` first, fields only ever appended, so a
/// program built against this header keeps working with later libraries of the same major
/// version). Fill with `farfield_nufft_default_opts(&opts, sizeof opts)`, change fields, pass
/// to makeplan (both precisions). Every value is validated at makeplan
/// (`FARFIELD_ERR_INVALID_ARG` naming the field).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(non_camel_case_types)]
pub struct farfield_nufft_opts {
    /// Size of the struct as the caller compiled it (`sizeof(farfield_nufft_opts)`), set by
    /// `farfield_nufft_default_opts`; the library reads only this many bytes (fields past it
    /// take their defaults).
    pub struct_size: usize,
    /// Mode ordering: 0 = CMCL (`k = −N/2 … (N−1)/2`, default), 1 = FFT order
    /// (`k = 0 … ⌈N/2⌉−1, −⌊N/2⌋ … −1`).
    pub modeord: i32,
    /// 0 = silent (default); 1 = print parameters and timings to stderr (on a CUDA plan also
    /// the device time of each execute's phases, waiting for the device after each batch).
    pub debug: i32,
    /// Threads for spreading and FFTW: 0 = all cores (default), 1 = caller's thread only.
    pub nthreads: i32,
    /// Spreading kernel: `FARFIELD_KERNEL_ES` (0, exponential of semicircle, default) or
    /// `FARFIELD_KERNEL_GAUSSIAN` (1, fast Gaussian gridding).
    pub kernel: i32,
    /// Upsampling factor σ: 0 = automatic (ES kernel: σ in [1.2, 2.5] and the width w chosen
    /// together by the library's model of spreading and FFT time over its tabulated ES
    /// kernels, for the number of modes at makeplan and again, on the CPU, for the number of points M at each
    /// setpts with M ≥ 2^20, where the plan's fine grid may change — `get_info` after setpts reports the final choice;
    /// always 2.0 for the Gaussian kernel), or any value in (1, 4], used as given. When the
    /// widest kernel cannot reach tol at σ, the tolerance is clamped to what it reaches,
    /// reported as `tol_used` with `FARFIELD_WARN_TOL_CLAMPED` by `get_info`. Other values →
    /// `FARFIELD_ERR_INVALID_ARG`.
    pub upsampfac: f64,
    /// FFTW planner flags (as FINUFFT's `opts.fftw`): 64 = `FFTW_ESTIMATE` (default),
    /// 0 = `FFTW_MEASURE`, 32 = `FFTW_PATIENT`, 8 = `FFTW_EXHAUSTIVE`, each optionally OR-ed with
    /// 1 = `FFTW_DESTROY_INPUT`; any other value (negative, other bits) →
    /// `FARFIELD_ERR_INVALID_ARG` naming `opts.fftw`.
    pub fftw: i32,
    /// Largest number of points in one spreading subproblem: 0 = automatic (10 000).
    pub spread_max_subprob_size: i32,
    /// Compute backend: `FARFIELD_BACKEND_AUTO` (0, default; the CPU for now),
    /// `FARFIELD_BACKEND_CPU` (1), `FARFIELD_BACKEND_CUDA` (2: device 0; returns
    /// `FARFIELD_ERR_NO_DEVICE`, with what was looked for in the message, when no CUDA
    /// driver/device is found).
    pub backend: i32,
    /// 0 (default): `setpts` copies the coordinates (in bin-sorted order), so the caller may
    /// free or change its arrays afterwards. 1: `setpts` keeps only the sort permutation and a
    /// reference to the caller's arrays, which must then stay valid and unchanged until the next
    /// `setpts` or `destroy` (FINUFFT's semantics; saves 8·dim bytes per point in double
    /// precision). Other values → `FARFIELD_ERR_INVALID_ARG`.
    pub points_by_reference: i32,
    /// CUDA backend only: the spreading/interpolation method, `FARFIELD_GPU_METHOD_AUTO` (0,
    /// default: chosen at `setpts` from ASM = M·w^d/N_fine and `gpu_spread_reuse_hint`, see
    /// the README's selection rule), `_GM` (1, atomics), `_GM_SORT` (2), `_SM` (3,
    /// shared-memory subproblems), `_CSR` (4, single-mesh sparse matrix), `_GROUP` (5, group
    /// mesh). Ignored on the CPU.
    pub gpu_method: i32,
    /// CUDA backend only: how many executes the caller expects per `setpts` (0 = unknown,
    /// treated as 1); from 20 on, the mesh-based methods (built once in `setpts`) are
    /// preferred. Ignored on the CPU.
    pub gpu_spread_reuse_hint: i32,
    /// CUDA backend only: the caller's CUDA stream (`cudaStream_t` / `CUstream`), or NULL
    /// (default) for the default stream of device 0's context (cuFINUFFT's default). With a
    /// stream, every kernel launch, copy and cuFFT execution of the plan (setpts, execute)
    /// runs on it: `farfield_nufft_execute` (host arrays) synchronises the stream before it
    /// returns; `farfield_nufft_execute_device` does not — its results are ready in stream
    /// order, and the caller orders its own work on the stream (cuFINUFFT's semantics). The
    /// stream must belong to device 0's primary context (the CUDA runtime's, which CuPy,
    /// PyTorch and cuFINUFFT use) and stay valid until the plan is destroyed (the plan frees
    /// its device memory in stream order on it); the library never destroys it. A non-NULL
    /// stream for a plan that runs on the CPU (`backend` AUTO or CPU) →
    /// `FARFIELD_ERR_INVALID_ARG` naming `opts.gpu_stream`. Appended after 1.0.0: a caller
    /// built against the 1.0.0 header (a 56-byte struct) gets NULL.
    pub gpu_stream: *mut c_void,
}

/// What a plan chose (versioned: the caller sets `struct_size = sizeof(farfield_nufft_info)`
/// before `farfield_nufft_get_info`, which writes only that many bytes).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
#[allow(non_camel_case_types)]
pub struct farfield_nufft_info {
    /// Size of the struct as the caller compiled it, set by the caller before get_info; on
    /// return, the number of bytes the library wrote (less when the caller's struct is newer).
    pub struct_size: usize,
    /// Fine (upsampled) grid sizes, x first; 1 for unused axes.
    pub nf: [i64; 3],
    /// Kernel width w in grid points.
    pub kernel_width: i32,
    /// Threads used.
    pub nthreads: i32,
    /// Upsampling factor σ used.
    pub upsampfac: f64,
    /// Kernel shape parameter: β for ES, τ (grid units²) for the Gaussian.
    pub kernel_param: f64,
    /// Tolerance used after clamping (the requested one unless `FARFIELD_WARN_TOL_CLAMPED`).
    pub tol_used: f64,
    /// Bit set of `FARFIELD_WARN_*`.
    pub warnings: i32,
    /// Backend used (`FARFIELD_BACKEND_CPU` or `FARFIELD_BACKEND_CUDA`).
    pub backend: i32,
}

/// The defaults of `farfield_nufft_opts` (ES kernel, automatic σ, all cores, CMCL mode order,
/// `FFTW_ESTIMATE`, AUTO backend, coordinates copied).
fn default_opts() -> farfield_nufft_opts {
    farfield_nufft_opts {
        struct_size: std::mem::size_of::<farfield_nufft_opts>(),
        modeord: 0,
        debug: 0,
        nthreads: 0,
        kernel: FARFIELD_KERNEL_ES,
        upsampfac: 0.0,
        fftw: crate::fft::FFTW_ESTIMATE as i32,
        spread_max_subprob_size: 0,
        backend: FARFIELD_BACKEND_AUTO,
        points_by_reference: 0,
        gpu_method: FARFIELD_GPU_METHOD_AUTO,
        gpu_spread_reuse_hint: 0,
        gpu_stream: std::ptr::null_mut(),
    }
}

versioned!(farfield_nufft_opts, "farfield_nufft_opts",
           [struct_size, modeord, debug, nthreads, kernel, upsampfac, fftw, spread_max_subprob_size, backend,
            points_by_reference, gpu_method, gpu_spread_reuse_hint, gpu_stream],
           default_opts());

fn empty_info() -> farfield_nufft_info {
    farfield_nufft_info { struct_size: std::mem::size_of::<farfield_nufft_info>(), nf: [0; 3], kernel_width: 0, nthreads: 0,
                          upsampfac: 0.0, kernel_param: 0.0, tol_used: 0.0, warnings: 0, backend: 0 }
}

versioned!(farfield_nufft_info, "farfield_nufft_info",
           [struct_size, nf, kernel_width, nthreads, upsampfac, kernel_param, tol_used, warnings, backend],
           empty_info());

/// The C options → the typed Rust NUFFT options. Errors: [`Error::InvalidArg`] naming the
/// first invalid field (`opts.<field>`); value ranges that depend on the plan (σ against the
/// tolerance, FFTW flag bits) are checked by the NUFFT parameter layer.
fn convert_opts(o: &farfield_nufft_opts) -> Result<NufftOpts> {
    let bad = |name: &str, v: String, want: &str| Err(Error::InvalidArg(format!("opts.{name} = {v} is not {want}")));
    let modeord = match o.modeord {
        0 => ModeOrder::Cmcl,
        1 => ModeOrder::Fft,
        v => return bad("modeord", v.to_string(), "0 or 1"),
    };
    let kernel = match o.kernel {
        FARFIELD_KERNEL_ES => crate::kernel::KernelKind::Es,
        FARFIELD_KERNEL_GAUSSIAN => crate::kernel::KernelKind::Gaussian,
        v => return bad("kernel", v.to_string(), "0 (ES) or 1 (Gaussian)"),
    };
    let backend = BackendChoice::from_c(o.backend)?;
    let gpu_method = super::gpu_method_of(o.gpu_method)?;
    let nonneg = |name: &str, v: i32| if v < 0 { Err(Error::InvalidArg(format!("opts.{name} = {v} is negative"))) } else { Ok(v as usize) };
    if o.fftw < 0 {
        return Err(Error::InvalidArg(format!(
            "opts.fftw = {} is not a combination of FFTW_ESTIMATE (64), FFTW_MEASURE (0), FFTW_PATIENT (32), \
             FFTW_EXHAUSTIVE (8) and FFTW_DESTROY_INPUT (1)", o.fftw)));
    }
    let points_by_reference = match o.points_by_reference {
        0 => false,
        1 => true,
        v => return bad("points_by_reference", v.to_string(), "0 (copy) or 1 (by reference)"),
    };
    if !(o.upsampfac == 0.0 || (o.upsampfac > 1.0 && o.upsampfac <= 4.0)) {
        return bad("upsampfac", format!("{:e}", o.upsampfac), "0 (auto) or in (1, 4]");
    }
    Ok(NufftOpts {
        modeord,
        debug: o.debug.max(0) as u32,
        nthreads: nonneg("nthreads", o.nthreads)?,
        kernel,
        upsampfac: if o.upsampfac == 0.0 { None } else { Some(o.upsampfac) },
        fftw: o.fftw as u32,
        spread_max_subprob_size: nonneg("spread_max_subprob_size", o.spread_max_subprob_size)?,
        backend,
        points_by_reference,
        gpu_method,
        gpu_spread_reuse_hint: nonneg("gpu_spread_reuse_hint", o.gpu_spread_reuse_hint)?,
        // SAFETY: the C caller's promise on `gpu_stream` (documented on the field): a stream of
        // device 0's primary context that outlives the plan. Checked against the backend when
        // the plan is made (a CPU plan refuses it).
        gpu_stream: unsafe { GpuStream::from_raw(o.gpu_stream as u64) },
    })
}

/// The Rust plan information → the C struct (`struct_size` = this library's size; `write_out`
/// cuts it to the caller's).
fn info_to_c(i: &NufftInfo) -> farfield_nufft_info {
    farfield_nufft_info {
        struct_size: std::mem::size_of::<farfield_nufft_info>(),
        nf: [i.nf[0] as i64, i.nf[1] as i64, i.nf[2] as i64],
        kernel_width: i.kernel_width as i32,
        nthreads: i.nthreads as i32,
        upsampfac: i.upsampfac,
        kernel_param: i.kernel_param,
        tol_used: i.tol_used,
        warnings: i.warnings,
        backend: match i.backend {
            Backend::Cpu => FARFIELD_BACKEND_CPU,
            Backend::Cuda => FARFIELD_BACKEND_CUDA,
        },
    }
}

/// Shared body of both makeplans.
unsafe fn makeplan<T: Real>(ty: c_int, dim: c_int, n_modes: *const i64, iflag: c_int, ntrans: c_int, tol: f64,
                            opts: *const farfield_nufft_opts) -> Result<NufftPlan<T>> {
    if !(1..=3).contains(&dim) {
        // checked here too so that n_modes is never read past a valid dim
        return Err(Error::Dim(format!("dim = {dim} is not 1, 2 or 3")));
    }
    if ntrans < 1 {
        return Err(Error::InvalidArg(format!("ntrans = {ntrans} must be at least 1")));
    }
    // type 3 has no modes: n_modes is not read (it may be NULL)
    let n: &[i64] = if ty == 3 {
        &[]
    } else {
        non_null(n_modes, "n_modes")?;
        std::slice::from_raw_parts(n_modes, dim as usize)
    };
    let o = convert_opts(&abi::read_in(opts)?)?;
    NufftPlan::<T>::new(ty, dim as usize, n, iflag, ntrans as usize, tol, &o)
}

/// Checks a point or target count from C (`M`, `N`) against the limits before any slice of
/// that many elements is formed.
fn count(v: i64, name: &str, ntrans: usize) -> Result<usize> {
    let max = crate::nufft::params::MAX_POINTS;
    if v < 0 {
        return Err(Error::NPoints(format!("{name} = {v} is negative")));
    }
    if v as u64 > max as u64 {
        return Err(Error::NPoints(format!("{name} = {v} exceeds the supported maximum of {max} (2^32 − 1)")));
    }
    let v = v as usize;
    if v.checked_mul(ntrans).is_none_or(|t| t > crate::nufft::params::MAX_GRID_ELEMENTS) {
        return Err(Error::NPoints(format!("ntrans·{name} = {ntrans}·{v} exceeds the limit 2^40 values per execute")));
    }
    Ok(v)
}

/// Shared body of both setpts (`n, s, t, u` are read for type 3 only).
#[allow(clippy::too_many_arguments)]
unsafe fn setpts<T: Real>(p: &mut NufftPlan<T>, m: i64, x: *const T, y: *const T, z: *const T, n: i64,
                          s: *const T, t: *const T, u: *const T) -> Result<()> {
    let (nt, dim) = (p.ntrans(), p.dim());
    let m = count(m, "M", nt)?;
    let xs = slice_in(x, m, "x")?;
    let ys = if dim >= 2 { slice_in(y, m, "y")? } else { &[] };
    let zs = if dim >= 3 { slice_in(z, m, "z")? } else { &[] };
    if p.transform_type() == 3 {
        let n = count(n, "N", nt)?;
        let ss = slice_in(s, n, "s")?;
        let ts = if dim >= 2 { slice_in(t, n, "t")? } else { &[] };
        let us = if dim >= 3 { slice_in(u, n, "u")? } else { &[] };
        return p.setpts_type3(xs, ys, zs, ss, ts, us);
    }
    if p.options().points_by_reference {
        // SAFETY: with points_by_reference the caller keeps the arrays valid and unchanged
        // until the next setpts or destroy (documented on the option and on setpts).
        p.setpts_by_reference(xs, ys, zs)
    } else {
        p.setpts(xs, ys, zs)
    }
}

/// Shared body of both device setpts: the count first, then the plan's checks (NULL used
/// axes, backend, type) and the device path.
///
/// # Safety
/// Used axes must be device pointers of `m` values (see `farfield_nufft_setpts_device`).
unsafe fn setpts_device<T: Real>(p: &mut NufftPlan<T>, m: i64, x: *const T, y: *const T, z: *const T) -> Result<()> {
    let m = count(m, "M", p.ntrans())?;
    p.setpts_device(m, x as u64, y as u64, z as u64)
}

/// Shared body of both type-3 device setpts: the counts first, then the plan's checks and the
/// device path.
///
/// # Safety
/// As `farfield_nufft_setpts_type3_device`.
#[allow(clippy::too_many_arguments)]
unsafe fn setpts_type3_device<T: Real>(p: &mut NufftPlan<T>, m: i64, x: *const T, y: *const T, z: *const T, n: i64, s: *const T,
                                       t: *const T, u: *const T) -> Result<()> {
    let (m, n) = (count(m, "M", p.ntrans())?, count(n, "N", p.ntrans())?);
    p.setpts_type3_device(m, x as u64, y as u64, z as u64, n, s as u64, t as u64, u as u64)
}

/// Shared body of both executes.
unsafe fn execute<T: Real>(p: &mut NufftPlan<T>, c: *mut Complex<T>, f: *mut Complex<T>) -> Result<()> {
    let nt = p.ntrans();
    let (nc, nf) = (nt * p.num_points(), nt * p.num_modes());
    check_disjoint(c, nc, "c", f, nf, "f")?;
    let cs = slice_out(c, nc, "c")?;
    let fs = slice_out(f, nf, "f")?;
    p.execute(cs, fs)
}

/// Shared body of both device executes: the address ranges of `c` and `f` (device pointers)
/// must not overlap either.
///
/// # Safety
/// `c` and `f` must be device pointers of the plan's sizes (see `farfield_nufft_execute_device`).
unsafe fn execute_device<T: Real>(p: &mut NufftPlan<T>, c: *mut Complex<T>, f: *mut Complex<T>) -> Result<()> {
    let nt = p.ntrans();
    check_disjoint(c, nt * p.num_points(), "c", f, nt * p.num_modes(), "f")?;
    p.execute_device(c as u64, f as u64)
}

/// Shared body of both get_info.
unsafe fn get_info<T: Real>(p: &NufftPlan<T>, info: *mut farfield_nufft_info) -> Result<()> {
    non_null(info, "info")?;
    let i = info_to_c(&p.info());
    abi::write_out(info, &i, "info")
}

/// Writes the default options (ES kernel, automatic σ, all cores, CMCL mode order,
/// FFTW_ESTIMATE, AUTO backend) into the first `struct_size` bytes of `*opts` and sets
/// `opts->struct_size` (for both precisions). Call it as
/// `farfield_nufft_default_opts(&opts, sizeof opts)`: a program compiled against an older,
/// smaller `farfield_nufft_opts` gets only its own bytes written; a newer, larger one gets
/// this library's fields and `struct_size` = this library's size (its later fields are left
/// alone and ignored by makeplan).
///
/// Returns 0 or `FARFIELD_ERR_NULL_POINTER` (`opts`), `FARFIELD_ERR_INVALID_ARG`
/// (`struct_size` smaller than the `struct_size` field or ending inside a field; nothing is
/// written).
///
/// # Safety
/// `opts` must be NULL or point to `struct_size` writable bytes.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_default_opts(opts: *mut farfield_nufft_opts, struct_size: usize) -> c_int {
    guard(|| abi::write_defaults(opts, struct_size))
}

/// Makes a double-precision NUFFT plan.
///
/// * `type`: 1 (non-uniform → modes), 2 (modes → non-uniform) or 3 (non-uniform points →
///   non-uniform frequencies, `f_k = Σ_j c_j e^{± i s_k·x_j}`; Barnett–Magland–af Klinteberg
///   2019 §3: the fine grid is sized from the points and frequencies at setpts). Every type
///   runs on the CPU and on CUDA (`opts.backend`).
/// * `dim`: 1, 2 or 3; `n_modes`: `dim` positive mode counts (N1, N2, N3); not read for type
///   3 (may be NULL).
/// * `iflag`: sign of the exponent, `+i` if ≥ 0; `ntrans ≥ 1`: vectors per execute.
/// * `tol`: relative l2 accuracy, finite and > 0. It is clamped, with
///   `FARFIELD_WARN_TOL_CLAMPED` set and the value used in `tol_used` of
///   `farfield_nufft_get_info` (and in the `opts.debug` print), when it is below 1e-15 or below
///   what the widest kernel reaches at the upsampling factor σ: for the ES kernel
///   `exp(−16π√(1 − 1/σ))` (1.7e-5 at σ = 1.05, 1.7e-10 at 1.25, 2.5e-13 at 1.5, 1e-15 at
///   2), for the Gaussian `exp(−16π(1 − 1/(2σ − 1)))` (1e-2 at 1.05, 5e-8 at 1.25, 1.2e-11 at
///   1.5, 2.8e-15 at 2); or below the predicted error of every ES kernel for these modes in the
///   plan's precision (the kernel's estimate plus the rounding floor, about 1.7e-6 for 32³
///   modes in single precision): then the cheapest kernel whose prediction is within 1.25× of
///   the least is used, and `tol_used` is its prediction. The measured error stays within
///   10·`tol_used`.
/// * `plan`: receives the handle (set to NULL first); `opts`: NULL for defaults, or options from
///   `farfield_nufft_default_opts`: `opts->struct_size` bytes are read (a size of 0 or one
///   ending inside a field → `FARFIELD_ERR_INVALID_ARG`, set it to `sizeof`); every field is
///   validated (`FARFIELD_ERR_INVALID_ARG` naming it: `opts.fftw` must combine only 64, 0, 32,
///   8 and 1; `opts.points_by_reference` must be 0 or 1; `opts.upsampfac` 0 or in (1, 4]).
///
/// Limits: the fine grid `nf_d` = next 2,3,5-smooth even size ≥ max(⌈σN_d⌉, 2w) must be at most
/// 2³¹ − 1 per axis (so N_d ≲ 1.07e9 at σ = 2) and 2⁴⁰ points in all; N1·N2·N3 and
/// ntrans·N1·N2·N3 at most 2⁴⁰ (`FARFIELD_ERR_MODES`, the message gives the size and the
/// limit); checked before anything is allocated, in O(log² N) time. Memory: the fine grid,
/// 16·Πnf_d bytes, is allocated here, and as much again must be free for FFTW's planner (a
/// probe allocation; FFTW aborts when its own allocation fails) → `FARFIELD_ERR_ALLOC` with the
/// byte count otherwise.
///
/// Returns 0 or `FARFIELD_ERR_{NULL_POINTER, TYPE, NOT_SUPPORTED, DIM, MODES, TOL, INVALID_ARG,
/// ALLOC, FFT, NO_DEVICE}`. Method: Barnett–Magland–af Klinteberg 2019, §2.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_makeplan(r#type: c_int, dim: c_int, n_modes: *const i64, iflag: c_int,
                                                 ntrans: c_int, tol: f64, plan: *mut farfield_nufft_plan,
                                                 opts: *const farfield_nufft_opts) -> c_int {
    guard(|| {
        non_null(plan, "plan")?;
        *plan = std::ptr::null_mut();
        let p = makeplan::<f64>(r#type, dim, n_modes, iflag, ntrans, tol, opts)?;
        *plan = Box::into_raw(Box::new(farfield_nufft_plan_s { inner: Mutex::new(p) }));
        Ok(())
    })
}

/// Sets the `M ≥ 0` non-uniform points of a double-precision plan: `x` (and `y` for dim ≥ 2,
/// `z` for dim 3), each of length M, in radians (any finite value; 2π-periodic). Unused
/// coordinate arrays may be NULL. Types 1 and 2 ignore `N, s, t, u` (pass 0/NULL). The
/// coordinates are copied, unless the plan was made with `opts.points_by_reference = 1`: then
/// the arrays must stay valid and unchanged until the next setpts or destroy.
///
/// Type 3: `x, y, z` are M points and `s, t, u` (each of length `N ≥ 0`) the target
/// frequencies, any finite reals (not periodic); both are copied (rescaled) whatever
/// `points_by_reference` says. Per axis the half-widths X of the points and S of the
/// frequencies set the fine grid, about `2σXS/π + w + 1` points per axis (σ = 2 unless
/// `opts.upsampfac` says otherwise), allocated here together with the inner type 2's grid (σ
/// times larger per axis); a grid beyond 2³¹ − 1 per axis (after the inner upsampling) or 2⁴⁰
/// in all → `FARFIELD_ERR_MODES`, an `X·S` that overflows → `FARFIELD_ERR_RANGE`. Accuracy:
/// relative l2 error ≈ tol, floored by the conditioning of the sums themselves, ≈
/// `eps·Σ_d X_d S_d` (eps = 1.1e-16, 6e-8 in single precision). N has the limits of M.
///
/// Limits: M ≤ 2³² − 1 = 4294967295 and ntrans·M ≤ 2⁴⁰ (`FARFIELD_ERR_NPOINTS`). Coordinates:
/// any finite value is accepted; each is reduced mod 2π in double precision (exact to ~4e-16
/// rad for |x| ≤ 1e16, beyond that the accuracy degrades), so the accuracy contract (relative
/// l2 error ≈ tol against the exact sums at the given coordinate values) holds for
/// |x| ≤ 1e16. A coordinate that is itself a rounded value carries its own phase error: a
/// relative rounding error eps (1.1e-16) of x moves `k·x` by up to `(N/2)·|x|·eps`, so the
/// result is within tol of the sums at the *intended* coordinates only while
/// `|x| ≲ tol/(N·eps)` (e.g. |x| ≤ 1e3 for N = 1e3 at tol 1e-10).
///
/// Returns 0 or `FARFIELD_ERR_{NULL_POINTER, NPOINTS, NONFINITE, ALLOC}` (type 3 also `MODES`,
/// `RANGE`, `FFT`); after NULL_POINTER, NPOINTS, NONFINITE, MODES or RANGE the previous points
/// remain set, after ALLOC or FFT the plan has no points.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_setpts(plan: farfield_nufft_plan, m: i64, x: *const f64, y: *const f64,
                                               z: *const f64, n: i64, s: *const f64, t: *const f64,
                                               u: *const f64) -> c_int {
    guard(|| setpts(&mut *lock(plan)?, m, x, y, z, n, s, t, u))
}

/// Sets the `M ≥ 0` non-uniform points of a double-precision CUDA plan of type 1 or 2 from
/// **device** arrays (cuFINUFFT's convention): `x` (and `y` for dim ≥ 2, `z` for dim 3) are
/// CUDA device pointers (memory of device 0, the plan's device) to `M` coordinates each, in
/// radians (any finite value; 2π-periodic, reduced mod 2π in double precision as in
/// `farfield_nufft_setpts`). Unused axes are ignored and may be NULL; used axes must not be
/// NULL when `M > 0`. The coordinates are copied on the device (whatever
/// `opts.points_by_reference` says), so the caller may free or reuse its arrays after the
/// call. Everything runs on the device: folding, the finiteness check, the bin sort and the
/// spreading method's structures; the host reads back a few integers (the first non-finite
/// index per axis, and for the SM method the number of subproblems), never a per-point or
/// per-bin array. The call returns after that work is done.
///
/// Limits as `farfield_nufft_setpts`: M ≤ 2³² − 1 and ntrans·M ≤ 2⁴⁰
/// (`FARFIELD_ERR_NPOINTS`); the CUDA plan itself handles M < 2³⁰.
///
/// Returns 0 or `FARFIELD_ERR_NULL_POINTER` (`plan`, or a used axis NULL with M > 0),
/// `FARFIELD_ERR_NPOINTS` (M negative or beyond the limits), `FARFIELD_ERR_INVALID_ARG` (a
/// plan made for the CPU backend: "setpts_device needs a CUDA plan"; a type-3 plan, which
/// takes `farfield_nufft_setpts_type3_device`), `FARFIELD_ERR_NONFINITE` (naming the
/// first non-finite point and its axis), `FARFIELD_ERR_ALLOC` or `FARFIELD_ERR_INTERNAL`
/// (device errors). These are checked in this order; after NULL_POINTER, NPOINTS,
/// INVALID_ARG or NONFINITE the previous points remain set, after ALLOC or INTERNAL the plan
/// has no points.
///
/// # Safety
/// `plan` must be NULL or a live plan; each used axis pointer must be a device allocation of
/// the plan's device holding at least `M` doubles.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_setpts_device(plan: farfield_nufft_plan, m: i64, x: *const f64, y: *const f64,
                                                      z: *const f64) -> c_int {
    guard(|| setpts_device(&mut *lock(plan)?, m, x, y, z))
}

/// Sets the `M ≥ 0` points `x, y, z` and the `N ≥ 0` target frequencies `s, t, u` of a
/// double-precision CUDA plan of type 3 from **device** arrays (memory of device 0, the plan's
/// device): any finite reals, as `farfield_nufft_setpts` takes them for type 3 (same fine
/// grids, limits and accuracy). Unused axes are ignored and may be NULL; used axes must not be
/// NULL when their count is > 0. Both sets are copied on the device, so the caller may free or
/// reuse its arrays after the call, and the set-up runs there: the finiteness check and the
/// extents of each axis, the rescaling, the phase and deconvolution factors, and the
/// spreader's and the inner type 2's structures; the host reads back the extents (three
/// integers per axis) and a few more integers, never a per-point array. The call returns
/// after that work is done.
///
/// Returns 0 or `FARFIELD_ERR_NULL_POINTER` (`plan`, or a used axis NULL with its count > 0),
/// `FARFIELD_ERR_NPOINTS` (M or N negative or beyond the limits of `farfield_nufft_setpts`),
/// `FARFIELD_ERR_INVALID_ARG` (a plan made for the CPU backend; a plan of type 1 or 2, which
/// takes `farfield_nufft_setpts_device`), `FARFIELD_ERR_NONFINITE` (naming the first
/// non-finite value, its array and axis: points before frequencies), `FARFIELD_ERR_RANGE`,
/// `FARFIELD_ERR_MODES` (as `farfield_nufft_setpts`), `FARFIELD_ERR_NOT_SUPPORTED` (M or N ≥
/// 2³¹ on the device), `FARFIELD_ERR_ALLOC` or `FARFIELD_ERR_INTERNAL` (device errors). After
/// NULL_POINTER, NPOINTS, INVALID_ARG, NONFINITE, RANGE or MODES the previous points remain
/// set; after the others the plan has no points.
///
/// # Safety
/// `plan` must be NULL or a live plan; each used axis pointer must be a device allocation of
/// the plan's device holding at least `M` (`x, y, z`) or `N` (`s, t, u`) doubles.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn farfield_nufft_setpts_type3_device(plan: farfield_nufft_plan, m: i64, x: *const f64, y: *const f64,
                                                            z: *const f64, n: i64, s: *const f64, t: *const f64,
                                                            u: *const f64) -> c_int {
    guard(|| setpts_type3_device(&mut *lock(plan)?, m, x, y, z, n, s, t, u))
}

/// Executes a double-precision plan. Type 1: reads `c` (`ntrans·M`), writes `f`
/// (`ntrans·N1·N2·N3`); type 2: reads `f`, writes `c`; type 3: reads `c` (`ntrans·M`), writes
/// `f` (`ntrans·N`, the N frequencies of setpts). Layouts: strengths `c[t·M + j]` for
/// transform `t` and point `j` (setpts order); modes `f[t·N1·N2·N3 + k1 + N1·(k2 + N2·k3)]`,
/// x fastest (C `f[t][k3][k2][k1]`, Fortran `f(N1, N2, N3, ntrans)`), each index in CMCL
/// order (array index 0 ↔ mode `−⌊N/2⌋`) or FFT order (index 0 ↔ mode 0), per
/// `opts.modeord`; type 3: `f[t·N + k]`. Sizes are those of makeplan and setpts
/// (limits there). Memory: per spreading subproblem (at most `opts.spread_max_subprob_size`
/// points, default 10 000) a private box up to the fine grid's size; failure →
/// `FARFIELD_ERR_ALLOC` (the output is then partly written). The output is checked: a value
/// that is not finite (NaN/Inf in the input, or inputs so large that the sums overflow) gives
/// `FARFIELD_ERR_RANGE` naming the first such output index, never status 0. `c` and `f` must
/// be separate arrays: overlapping address ranges (`c` of `ntrans·M`, `f` of
/// `ntrans·N1·N2·N3` complex values) → `FARFIELD_ERR_INVALID_ARG` naming both, nothing
/// written. On the CUDA backend the host arrays are copied in and out on the plan's stream
/// (`opts.gpu_stream` or the default stream), which is synchronised before the call returns.
/// Returns 0 or `FARFIELD_ERR_{NULL_POINTER, NO_POINTS, ALLOC, RANGE, INVALID_ARG}`.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_execute(plan: farfield_nufft_plan, c: *mut Complex64, f: *mut Complex64) -> c_int {
    guard(|| execute(&mut *lock(plan)?, c, f))
}

/// Like `farfield_nufft_execute` but `c` and `f` are **device** pointers (CUDA memory of
/// device 0, as cuFINUFFT takes them) of the same sizes; the plan must have been made with
/// `opts.backend = FARFIELD_BACKEND_CUDA`; their address ranges must not overlap.
/// Streams (cuFINUFFT's semantics): the work is issued on the plan's stream (`opts.gpu_stream`,
/// or the default stream) and this call does **not** wait for it: on return the output is
/// complete in stream order, so work the caller queues on the same stream sees it, while the
/// host or other streams must synchronise with that stream first. The input must be ready in
/// that stream's order when the call is made. Returns 0 or `FARFIELD_ERR_{NULL_POINTER,
/// INVALID_ARG (a CPU plan, or c and f overlapping), NO_POINTS}`.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_execute_device(plan: farfield_nufft_plan, c: *mut Complex64, f: *mut Complex64) -> c_int {
    guard(|| execute_device(&mut *lock(plan)?, c, f))
}

/// Writes what the plan chose (fine grid, kernel width and parameter, σ, tolerance used,
/// warnings) into `*info`, whose `struct_size` the caller sets to `sizeof(farfield_nufft_info)`
/// first: only that many bytes are written, and `info->struct_size` is left at the number of
/// bytes written (this library's size when the caller's struct is larger). `tol_used` is the tolerance the kernel was chosen for: the requested
/// one, or the clamp (1e-15, 1e-7 in single precision, or what the widest kernel reaches at
/// σ, see makeplan) with `FARFIELD_WARN_TOL_CLAMPED` set in `warnings`. Returns 0 or
/// `FARFIELD_ERR_NULL_POINTER`, `FARFIELD_ERR_INVALID_ARG` (`info->struct_size` 0 or ending
/// inside a field; set it to `sizeof(farfield_nufft_info)`; nothing written).
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_get_info(plan: farfield_nufft_plan, info: *mut farfield_nufft_info) -> c_int {
    guard(|| get_info(&*lock(plan)?, info))
}

/// Destroys a double-precision plan and frees its memory. NULL is fine. Returns 0.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufft_destroy(plan: farfield_nufft_plan) -> c_int {
    destroy_boxed(plan)
}

/// Single-precision `farfield_nufft_makeplan` (tolerances below 1e-7, or below what the
/// kernel reaches at σ, are clamped with a warning). Same options struct, same limits
/// (memory: 8·Πnf_d bytes for the fine grid, and as much headroom for FFTW).
#[no_mangle]
pub unsafe extern "C" fn farfield_nufftf_makeplan(r#type: c_int, dim: c_int, n_modes: *const i64, iflag: c_int,
                                                  ntrans: c_int, tol: f32, plan: *mut farfield_nufftf_plan,
                                                  opts: *const farfield_nufft_opts) -> c_int {
    guard(|| {
        non_null(plan, "plan")?;
        *plan = std::ptr::null_mut();
        let p = makeplan::<f32>(r#type, dim, n_modes, iflag, ntrans, tol as f64, opts)?;
        *plan = Box::into_raw(Box::new(farfield_nufftf_plan_s { inner: Mutex::new(p) }));
        Ok(())
    })
}

/// Single-precision `farfield_nufft_setpts`. Same limits; the reduction mod 2π is done in
/// double precision on the exact (widened) float coordinates, and only the resulting grid
/// coordinate is rounded to single precision, so large |x| cost no more accuracy than in
/// double precision beyond the float representation of x itself (relative 6e-8: the result is
/// within tol of the sums at intended coordinates while `|x| ≲ tol/(N·6e-8)`).
#[no_mangle]
pub unsafe extern "C" fn farfield_nufftf_setpts(plan: farfield_nufftf_plan, m: i64, x: *const f32, y: *const f32,
                                                z: *const f32, n: i64, s: *const f32, t: *const f32,
                                                u: *const f32) -> c_int {
    guard(|| setpts(&mut *lock(plan)?, m, x, y, z, n, s, t, u))
}

/// Single-precision `farfield_nufft_execute` (same memory rule and errors).
#[no_mangle]
pub unsafe extern "C" fn farfield_nufftf_execute(plan: farfield_nufftf_plan, c: *mut Complex32, f: *mut Complex32) -> c_int {
    guard(|| execute(&mut *lock(plan)?, c, f))
}

/// Single-precision `farfield_nufft_setpts_device` (device arrays of floats).
///
/// # Safety
/// As `farfield_nufft_setpts_device`, with `M` floats per used axis.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufftf_setpts_device(plan: farfield_nufftf_plan, m: i64, x: *const f32, y: *const f32,
                                                       z: *const f32) -> c_int {
    guard(|| setpts_device(&mut *lock(plan)?, m, x, y, z))
}

/// Single-precision `farfield_nufft_setpts_type3_device` (device arrays of floats).
///
/// # Safety
/// As `farfield_nufft_setpts_type3_device`, with `M` and `N` floats per used axis.
#[no_mangle]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn farfield_nufftf_setpts_type3_device(plan: farfield_nufftf_plan, m: i64, x: *const f32, y: *const f32,
                                                             z: *const f32, n: i64, s: *const f32, t: *const f32,
                                                             u: *const f32) -> c_int {
    guard(|| setpts_type3_device(&mut *lock(plan)?, m, x, y, z, n, s, t, u))
}

/// Single-precision `farfield_nufft_execute_device`.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufftf_execute_device(plan: farfield_nufftf_plan, c: *mut Complex32, f: *mut Complex32) -> c_int {
    guard(|| execute_device(&mut *lock(plan)?, c, f))
}

/// Single-precision `farfield_nufft_get_info`.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufftf_get_info(plan: farfield_nufftf_plan, info: *mut farfield_nufft_info) -> c_int {
    guard(|| get_info(&*lock(plan)?, info))
}

/// Single-precision `farfield_nufft_destroy`.
#[no_mangle]
pub unsafe extern "C" fn farfield_nufftf_destroy(plan: farfield_nufftf_plan) -> c_int {
    destroy_boxed(plan)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::*;

    #[test]
    fn c_api_roundtrip_and_errors() {
        unsafe {
            let mut plan: farfield_nufft_plan = std::ptr::null_mut();
            let n = [8i64, 6];
            assert_eq!(farfield_nufft_makeplan(2, 2, n.as_ptr(), 1, 1, 1e-9, &mut plan, std::ptr::null()), 0);
            let x = [0.1, -2.0, 3.0];
            let y = [1.0, 0.5, -0.3];
            assert_eq!(farfield_nufft_setpts(plan, 3, x.as_ptr(), y.as_ptr(), std::ptr::null(), 0,
                                             std::ptr::null(), std::ptr::null(), std::ptr::null()), 0);
            let mut f = vec![Complex64::new(0.0, 0.0); 48];
            f[4 + 8 * 3] = Complex64::new(1.0, 0.0); // mode (0, 0)
            f[5 + 8 * 3] = Complex64::new(0.0, 1.0); // mode (1, 0)
            let mut c = vec![Complex64::new(0.0, 0.0); 3];
            assert_eq!(farfield_nufft_execute(plan, c.as_mut_ptr(), f.as_mut_ptr()), 0);
            for j in 0..3 {
                let ex = Complex64::new(1.0, 0.0) + Complex64::new(0.0, 1.0) * Complex64::from_polar(1.0, x[j]);
                assert!((c[j] - ex).norm() < 1e-8);
            }
            let xn = [0.1, f64::INFINITY, 3.0];
            assert_eq!(farfield_nufft_setpts(plan, 3, xn.as_ptr(), y.as_ptr(), std::ptr::null(), 0,
                                             std::ptr::null(), std::ptr::null(), std::ptr::null()), FARFIELD_ERR_NONFINITE);
            let msg = std::ffi::CStr::from_ptr(super::super::last_error_ptr()).to_str().unwrap();
            assert!(msg.contains("point 1"), "{msg}");
            assert_eq!(farfield_nufft_setpts(plan, -1, x.as_ptr(), y.as_ptr(), std::ptr::null(), 0,
                                             std::ptr::null(), std::ptr::null(), std::ptr::null()), FARFIELD_ERR_NPOINTS);
            assert_eq!(farfield_nufft_setpts(plan, 3, x.as_ptr(), std::ptr::null(), std::ptr::null(), 0,
                                             std::ptr::null(), std::ptr::null(), std::ptr::null()), FARFIELD_ERR_NULL_POINTER);
            // plan still usable after failures, old points kept
            assert_eq!(farfield_nufft_execute(plan, c.as_mut_ptr(), f.as_mut_ptr()), 0);
            assert_eq!(farfield_nufft_execute(std::ptr::null_mut(), c.as_mut_ptr(), f.as_mut_ptr()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_nufft_destroy(plan), 0);
            assert_eq!(farfield_nufft_destroy(std::ptr::null_mut()), 0);
            let mut p2: farfield_nufft_plan = std::ptr::null_mut();
            assert_eq!(farfield_nufft_makeplan(1, 0, n.as_ptr(), 1, 1, 1e-6, &mut p2, std::ptr::null()), FARFIELD_ERR_DIM);
            assert!(p2.is_null());
            assert_eq!(farfield_nufft_makeplan(1, 2, std::ptr::null(), 1, 1, 1e-6, &mut p2, std::ptr::null()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_nufft_makeplan(1, 2, n.as_ptr(), 1, 1, 1e-6, std::ptr::null_mut(), std::ptr::null()), FARFIELD_ERR_NULL_POINTER);
        }
    }

    #[test]
    fn versioned_layout_and_default_opts() {
        super::abi::check_fields::<farfield_nufft_opts>();
        super::abi::check_fields::<farfield_nufft_info>();
        assert_eq!(std::mem::size_of::<farfield_nufft_opts>(), 64);
        assert_eq!(std::mem::offset_of!(farfield_nufft_opts, modeord), 8);
        assert_eq!(std::mem::offset_of!(farfield_nufft_opts, upsampfac), 24);
        assert_eq!(std::mem::offset_of!(farfield_nufft_opts, gpu_spread_reuse_hint), 52);
        assert_eq!(std::mem::offset_of!(farfield_nufft_opts, gpu_stream), 56);
        assert_eq!(std::mem::size_of::<*mut c_void>(), 8);
        assert_eq!(std::mem::size_of::<farfield_nufft_info>(), 72);
        assert_eq!(std::mem::offset_of!(farfield_nufft_info, nf), 8);
        assert_eq!(std::mem::offset_of!(farfield_nufft_info, tol_used), 56);
        assert_eq!(std::mem::offset_of!(farfield_nufft_info, backend), 68);
        // the C defaults are the Rust defaults
        assert_eq!(convert_opts(&default_opts()).unwrap(), NufftOpts::default());
        let mut o = farfield_nufft_opts { struct_size: 1, modeord: 9, upsampfac: 9.0, ..default_opts() };
        unsafe {
            assert_eq!(farfield_nufft_default_opts(&mut o, 64), 0);
            assert_eq!(o, default_opts());
            assert!(o.gpu_stream.is_null());
            assert_eq!(farfield_nufft_default_opts(std::ptr::null_mut(), 64), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_nufft_default_opts(&mut o, 0), FARFIELD_ERR_INVALID_ARG);
            assert!(super::super::last_error_message().contains("sizeof"));
            assert_eq!(farfield_nufft_default_opts(&mut o, 28), FARFIELD_ERR_INVALID_ARG);
            // a size ending inside the stream pointer
            assert_eq!(farfield_nufft_default_opts(&mut o, 60), FARFIELD_ERR_INVALID_ARG);
            // the 1.0.0 size (without gpu_stream) is a valid older struct
            let mut old = farfield_nufft_opts { gpu_stream: 0x1234 as *mut c_void, ..default_opts() };
            assert_eq!(farfield_nufft_default_opts(&mut old, 56), 0);
            assert_eq!((old.struct_size, old.gpu_stream as usize), (56, 0x1234));
        }
    }

    #[test]
    fn older_smaller_structs() {
        unsafe {
            // an "older" caller: opts up to `fftw` (36 bytes), garbage after it that must not
            // be read (points_by_reference = 7 would be refused by makeplan)
            let mut o = farfield_nufft_opts { points_by_reference: 7, backend: 99, ..default_opts() };
            assert_eq!(farfield_nufft_default_opts(&mut o, 36), 0);
            assert_eq!((o.struct_size, o.points_by_reference, o.backend), (36, 7, 99));
            o.fftw = 0; // FFTW_MEASURE, inside the old struct: used
            o.nthreads = 1;
            let n = [12i64];
            let mut plan: farfield_nufft_plan = std::ptr::null_mut();
            assert_eq!(farfield_nufft_makeplan(1, 1, n.as_ptr(), 1, 1, 1e-6, &mut plan, &o), 0,
                       "{}", super::super::last_error_message());
            assert_eq!((*plan).inner.lock().unwrap().options(), &NufftOpts { fftw: 0, nthreads: 1, ..NufftOpts::default() });
            // info into an older struct without `warnings` and `backend` (64 bytes)
            let mut info = farfield_nufft_info { struct_size: 64, warnings: -5, backend: -5, ..empty_info() };
            assert_eq!(farfield_nufft_get_info(plan, &mut info), 0);
            assert_eq!((info.struct_size, info.warnings, info.backend), (64, -5, -5));
            assert!(info.nf[0] >= 12 && info.kernel_width >= 2 && info.tol_used == 1e-6);
            // a newer, larger caller: only this library's bytes, struct_size says how many
            let mut big = [0xA5u8; 100];
            big[..8].copy_from_slice(&100usize.to_ne_bytes());
            assert_eq!(farfield_nufft_get_info(plan, big.as_mut_ptr() as *mut farfield_nufft_info), 0);
            assert_eq!(usize::from_ne_bytes(big[..8].try_into().unwrap()), 72);
            assert!(big[72..].iter().all(|&b| b == 0xA5));
            // struct_size not set / cutting a field
            for size in [0usize, 60] {
                info.struct_size = size;
                assert_eq!(farfield_nufft_get_info(plan, &mut info), FARFIELD_ERR_INVALID_ARG);
                assert!(super::super::last_error_message().contains("struct_size"));
            }
            o.struct_size = 30;
            let mut p2: farfield_nufft_plan = std::ptr::null_mut();
            assert_eq!(farfield_nufft_makeplan(1, 1, n.as_ptr(), 1, 1, 1e-6, &mut p2, &o), FARFIELD_ERR_INVALID_ARG);
            assert!(p2.is_null());
            // the full size reads backend = 99 and points_by_reference = 7: refused, naming one
            o.struct_size = 56;
            assert_eq!(farfield_nufft_makeplan(1, 1, n.as_ptr(), 1, 1, 1e-6, &mut p2, &o), FARFIELD_ERR_INVALID_ARG);
            let msg = super::super::last_error_message();
            assert!(msg.contains("opts.backend") || msg.contains("opts.points_by_reference"), "{msg}");
            farfield_nufft_destroy(plan);
        }
    }

    #[test]
    fn a_gpu_stream_needs_the_cuda_backend() {
        unsafe {
            let n = [12i64, 8];
            let fake = 0x5000 as *mut c_void; // never used: the CPU plans refuse it first
            for backend in [FARFIELD_BACKEND_AUTO, FARFIELD_BACKEND_CPU] {
                for ty in [1, 3] {
                    let o = farfield_nufft_opts { backend, gpu_stream: fake, nthreads: 1, ..default_opts() };
                    let mut plan: farfield_nufft_plan = std::ptr::null_mut();
                    assert_eq!(farfield_nufft_makeplan(ty, 2, n.as_ptr(), 1, 1, 1e-6, &mut plan, &o), FARFIELD_ERR_INVALID_ARG);
                    assert!(plan.is_null());
                    let msg = super::super::last_error_message();
                    assert!(msg.contains("opts.gpu_stream") && msg.contains("CPU"), "{msg}");
                    let mut pf: farfield_nufftf_plan = std::ptr::null_mut();
                    assert_eq!(farfield_nufftf_makeplan(ty, 2, n.as_ptr(), 1, 1, 1e-4, &mut pf, &o), FARFIELD_ERR_INVALID_ARG);
                }
            }
            // the Rust options carry the stream; NULL is none
            let o = farfield_nufft_opts { backend: FARFIELD_BACKEND_CUDA, gpu_stream: fake, ..default_opts() };
            assert_eq!(convert_opts(&o).unwrap().gpu_stream.map(|s| s.as_raw()), Some(0x5000));
            assert_eq!(convert_opts(&default_opts()).unwrap().gpu_stream, None);
            // an older caller (56 bytes) with garbage where gpu_stream would be: never read
            let mut old = farfield_nufft_opts { gpu_stream: fake, nthreads: 1, ..default_opts() };
            old.struct_size = 56;
            let mut plan: farfield_nufft_plan = std::ptr::null_mut();
            assert_eq!(farfield_nufft_makeplan(1, 2, n.as_ptr(), 1, 1, 1e-6, &mut plan, &old), 0,
                       "{}", super::super::last_error_message());
            assert_eq!((*plan).inner.lock().unwrap().options().gpu_stream, None);
            farfield_nufft_destroy(plan);
        }
    }

    #[test]
    fn c_and_f_overlapping_are_refused() {
        unsafe {
            let n = [8i64];
            let mut plan: farfield_nufftf_plan = std::ptr::null_mut();
            assert_eq!(farfield_nufftf_makeplan(1, 1, n.as_ptr(), 1, 2, 1e-4, &mut plan, std::ptr::null()), 0);
            let x = [0.1f32, 1.0, -2.0];
            assert_eq!(farfield_nufftf_setpts(plan, 3, x.as_ptr(), std::ptr::null(), std::ptr::null(), 0,
                                              std::ptr::null(), std::ptr::null(), std::ptr::null()), 0);
            // ntrans = 2: c has 6 values, f has 16
            let mut buf = vec![Complex32::new(1.0, 0.0); 40];
            let b = buf.as_mut_ptr();
            for (off_c, off_f) in [(0usize, 0usize), (0, 5), (10, 0), (20, 25)] {
                assert_eq!(farfield_nufftf_execute(plan, b.add(off_c), b.add(off_f)), FARFIELD_ERR_INVALID_ARG, "{off_c} {off_f}");
                let m = super::super::last_error_message();
                assert!(m.contains("`c`") && m.contains("`f`"), "{m}");
            }
            assert!(buf.iter().all(|v| *v == Complex32::new(1.0, 0.0)), "written on error");
            // adjacent ranges are fine
            assert_eq!(farfield_nufftf_execute(plan, b, b.add(6)), 0);
            assert_eq!(farfield_nufftf_execute(plan, b.add(16), b), 0);
            // the device execute checks the ranges before anything else
            assert_eq!(farfield_nufftf_execute_device(plan, b, b.add(2)), FARFIELD_ERR_INVALID_ARG);
            farfield_nufftf_destroy(plan);
        }
    }

    #[test]
    fn setpts_device_error_paths() {
        unsafe {
            let n = [8i64, 6];
            let mut plan: farfield_nufft_plan = std::ptr::null_mut();
            assert_eq!(farfield_nufft_makeplan(2, 2, n.as_ptr(), 1, 1, 1e-6, &mut plan, std::ptr::null()), 0);
            let x = [0.1f64, 1.0, -2.0];
            let p = x.as_ptr();
            let null = std::ptr::null::<f64>();
            // NULL plan, M out of range, a NULL used axis: before the backend is looked at
            assert_eq!(farfield_nufft_setpts_device(std::ptr::null_mut(), 3, p, p, null), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_nufft_setpts_device(plan, -1, p, p, null), FARFIELD_ERR_NPOINTS);
            assert_eq!(farfield_nufft_setpts_device(plan, 1i64 << 33, p, p, null), FARFIELD_ERR_NPOINTS);
            assert_eq!(farfield_nufft_setpts_device(plan, 3, p, null, null), FARFIELD_ERR_NULL_POINTER);
            let m = super::super::last_error_message();
            assert!(m.contains("y") && m.contains("NULL"), "{m}");
            // a CPU plan: never reads the pointers
            assert_eq!(farfield_nufft_setpts_device(plan, 3, p, p, null), FARFIELD_ERR_INVALID_ARG);
            let m = super::super::last_error_message();
            assert!(m.contains("setpts_device needs a CUDA plan"), "{m}");
            assert_eq!(farfield_nufft_destroy(plan), 0);
            // single precision, a type-3 CPU plan: also refused as INVALID_ARG
            let mut pf: farfield_nufftf_plan = std::ptr::null_mut();
            assert_eq!(farfield_nufftf_makeplan(3, 1, std::ptr::null(), 1, 1, 1e-4, &mut pf, std::ptr::null()), 0);
            let xf = [0.5f32];
            assert_eq!(farfield_nufftf_setpts_device(pf, 1, xf.as_ptr(), std::ptr::null(), std::ptr::null()), FARFIELD_ERR_INVALID_ARG);
            assert_eq!(farfield_nufftf_setpts_device(pf, 1, std::ptr::null(), std::ptr::null(), std::ptr::null()), FARFIELD_ERR_NULL_POINTER);
            assert_eq!(farfield_nufftf_destroy(pf), 0);
        }
    }
}
