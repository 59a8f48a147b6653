//! The NUFFT plan front: makeplan → setpts → execute (any number of times) → drop.
//!
//! [`NufftPlan`] validates the arguments, resolves the backend once at makeplan and owns one
//! executor ([`NufftExec`]):
//!
//! | type | CPU | CUDA |
//! | --- | --- | --- |
//! | 1, 2 | [`crate::nufft::cpu::CpuNufft`] | [`crate::gpu::nufft::CudaNufft`] |
//! | 3 | [`crate::nufft::Type3Plan`] | [`crate::gpu::type3::CudaType3`] |
//!
//! Both backends take their parameters (σ, kernel, fine grid) from the same
//! [`crate::nufft::params::NufftParams`]. The front does the checks common to all executors
//! (point counts, array lengths, finite output) and forwards.

use crate::backend::{Backend, BackendChoice};
use crate::error::{Error, Result};
use crate::kernel::Kernel;
use crate::nufft::cpu::CpuNufft;
use crate::nufft::exec::{NufftExec, Points, Timings};
use crate::nufft::options::{NufftInfo, NufftOpts};
use crate::nufft::params::{NufftParams, Precision, MAX_GRID_ELEMENTS, MAX_POINTS};
use crate::nufft::Type3Plan;
use crate::real::{other_precision, same_type, same_value, Real};
use num_complex::Complex;

/// A NUFFT plan of type 1, 2 or 3 in precision `T` on one backend (the transforms, conventions
/// and limits: the module docs of [`crate::nufft`]). Made by [`NufftPlan::new`].
pub struct NufftPlan<T: Real> {
    ty: i32,
    dim: usize,
    ntrans: usize,
    backend: Backend,
    opts: NufftOpts,
    exec: Box<dyn NufftExec<T>>,
}

impl<T: Real> NufftPlan<T> {
    /// Makes a plan.
    ///
    /// * `ty`: 1, 2 or 3 (type 3: [`Type3Plan`] on the CPU, `CudaType3` on CUDA; its points and target frequencies
    ///   are set by [`NufftPlan::setpts_type3`]); `dim`: 1–3;
    /// * `n_modes`: at least `dim` positive mode counts, x first (not read for type 3);
    /// * `iflag`: sign of the exponent (`≥ 0` → `+i`); `ntrans ≥ 1` vectors per execute;
    /// * `tol`: requested relative l2 accuracy, finite and > 0; below what `T` can give, or
    ///   below what the widest kernel reaches at the upsampling factor σ
    ///   ([`crate::kernel::Kernel::achievable_tol`]), it is clamped and
    ///   `FARFIELD_WARN_TOL_CLAMPED` is set in [`NufftPlan::info`] (whose `tol_used` holds the
    ///   value used);
    /// * `opts.backend`: AUTO and CPU run on the CPU, CUDA on device 0.
    ///
    /// Parameters (σ, kernel, fine grid) come from [`NufftParams::new`] and are the same on
    /// every backend. Limits, checked before anything is allocated or computed: per axis a fine
    /// grid of at most [`crate::nufft::params::MAX_FINE_AXIS`] points, in all at most
    /// [`crate::nufft::params::MAX_GRID_ELEMENTS`], and N1·N2·N3 and ntrans·N1·N2·N3 at most
    /// that too ([`crate::Error::Modes`]).
    ///
    /// Errors: [`crate::Error::Type`], [`crate::Error::NotSupported`], [`crate::Error::Dim`], [`crate::Error::Modes`],
    /// [`crate::Error::Tol`], [`crate::Error::InvalidArg`] (bad option, named), [`crate::Error::NoDevice`],
    /// [`crate::Error::Alloc`] (fine grid, mode tables, spreader, or no headroom for FFTW's planner),
    /// [`crate::Error::Fft`], device errors.
    pub fn new(ty: i32, dim: usize, n_modes: &[i64], iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<Self> {
        // compiled once per precision, in this crate (crate::real, "Compiled once per precision")
        // (no generic fallback: it would compile the executors again in the calling crate)
        let once = if same_type::<T, f64>() {
            same_value(new_f64(ty, dim, n_modes, iflag, ntrans, tol, opts)).ok()
        } else if same_type::<T, f32>() {
            same_value(new_f32(ty, dim, n_modes, iflag, ntrans, tol, opts)).ok()
        } else {
            None
        };
        once.unwrap_or_else(|| Err(other_precision::<T>()))
    }

    /// [`NufftPlan::new`]'s body.
    fn new_impl(ty: i32, dim: usize, n_modes: &[i64], iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<Self> {
        // validation first (so that a bad argument is reported as such on a machine without a
        // device), then the backend, then the executor
        if ty == 3 {
            // type 3 sizes its grids from the points (at setpts); n_modes is not read. The
            // arguments are checked before the backend (as for types 1 and 2).
            crate::nufft::type3::Type3Params::new::<T>(dim, iflag, ntrans, tol, opts)?;
            let backend = crate::gpu::runtime::resolve(opts.backend, "NUFFT type 3")?;
            let exec: Box<dyn NufftExec<T>> = match backend {
                Backend::Cpu => Box::new(Type3Plan::<T>::new(dim, iflag, ntrans, tol,
                                                             &NufftOpts { backend: BackendChoice::Cpu, ..opts.clone() })?),
                Backend::Cuda => crate::gpu::type3::CudaType3::<T>::boxed(dim, iflag, ntrans, tol, opts)?,
            };
            return Ok(NufftPlan::from_exec(3, dim, ntrans, backend, opts, exec));
        }
        let prec = Precision::of::<T>();
        NufftParams::new(ty, dim, n_modes, iflag, ntrans, tol, prec, opts, Backend::Cpu)?;
        let backend = crate::gpu::runtime::resolve(opts.backend, "NUFFT plans")?;
        let params = NufftParams::new(ty, dim, n_modes, iflag, ntrans, tol, prec, opts, backend)?;
        let exec: Box<dyn NufftExec<T>> = match backend {
            Backend::Cpu => Box::new(CpuNufft::<T>::new(params, opts)?),
            Backend::Cuda => crate::gpu::nufft::CudaNufft::<T>::boxed(params, opts)?,
        };
        Ok(NufftPlan::from_exec(ty, dim, ntrans, backend, opts, exec))
    }
}


impl<T: Real> NufftPlan<T> {
    /// The front over an executor made for (`ty`, `dim`, `ntrans`, `opts`) on `backend`.
    pub fn from_exec(ty: i32, dim: usize, ntrans: usize, backend: Backend, opts: &NufftOpts, exec: Box<dyn NufftExec<T>>) -> Self {
        NufftPlan { ty, dim, ntrans, backend, opts: opts.clone(), exec }
    }

    /// Sets (or replaces) the non-uniform points: `x` (and `y` for dim ≥ 2, `z` for dim 3),
    /// each of length M, radians, any finite value (reduced mod 2π in double precision; the
    /// accuracy contract holds for |x| ≤ 1e16, see [`crate::spread::reduce_2pi`]). The
    /// coordinates are copied (type 3: use [`NufftPlan::setpts_type3`]).
    /// Errors: [`Error::NPoints`] (length mismatch, M > [`MAX_POINTS`], ntrans·M >
    /// [`MAX_GRID_ELEMENTS`]) and [`Error::NonFinite`] (first bad index) keep the previous
    /// points; [`Error::Alloc`] leaves the plan without points.
    pub fn setpts(&mut self, x: &[T], y: &[T], z: &[T]) -> Result<()> {
        self.set_points(Points { x: [x, y, z], s: [&[], &[], &[]] }, true)
    }

    /// Type 3: sets the points `x, y, z` (M each) and the target frequencies `s, t, u`
    /// (N each); axes ≥ dim are ignored. Errors as [`NufftPlan::setpts`].
    #[allow(clippy::too_many_arguments)]
    pub fn setpts_type3(&mut self, x: &[T], y: &[T], z: &[T], s: &[T], t: &[T], u: &[T]) -> Result<()> {
        self.set_points(Points { x: [x, y, z], s: [s, t, u] }, true)
    }

    /// Like [`NufftPlan::setpts`] but without copying the coordinates (FINUFFT's semantics,
    /// `opts.points_by_reference`): only the sort permutation is stored and the arrays
    /// are read again by every execute (the CUDA backend copies them to the device anyway).
    ///
    /// # Safety
    /// `x`, `y`, `z` must stay valid and unchanged until the next `setpts*` call or until the
    /// plan is dropped.
    pub unsafe fn setpts_by_reference(&mut self, x: &[T], y: &[T], z: &[T]) -> Result<()> {
        self.set_points(Points { x: [x, y, z], s: [&[], &[], &[]] }, false)
    }

    /// Sets (or replaces) the `m` non-uniform points from **device** arrays (CUDA plans of type
    /// 1 or 2; cuFINUFFT's convention): `x`, `y`, `z` are device addresses (of device 0, the
    /// plan's device) of `m` coordinates of precision `T` each, radians, any finite value; `y`
    /// is ignored below dim 2 and `z` below dim 3 (they may be 0). The coordinates are copied
    /// on the device, as [`NufftPlan::setpts`] copies host arrays, so the caller may free them
    /// after the call; folding, the finiteness check and the bin sort run on the device
    /// (no per-point or per-bin array comes back to the host, docs/design.md §5.2).
    ///
    /// Errors, checked in this order: [`Error::NPoints`] (M > [`MAX_POINTS`], ntrans·M >
    /// [`MAX_GRID_ELEMENTS`]), [`Error::NullPointer`] (a used axis is 0 while `m > 0`),
    /// [`Error::InvalidArg`] (a CPU plan: "setpts_device needs a CUDA plan"; a type-3 plan),
    /// then [`Error::NonFinite`] (naming the first bad point and its axis; the previous points
    /// are kept), device errors (the plan is left without points).
    ///
    /// # Safety
    /// Each used address must be a device allocation of the plan's device holding at least
    /// `m` values of precision `T`.
    pub unsafe fn setpts_device(&mut self, m: usize, x: u64, y: u64, z: u64) -> Result<()> {
        self.check_count(m)?;
        let ptrs = [x, y, z];
        if m > 0 {
            if let Some(d) = (0..self.dim).find(|&d| ptrs[d] == 0) {
                return Err(Error::NullPointer(format!("device coordinate array {} is NULL (M = {m}, dim = {})", ["x", "y", "z"][d], self.dim)));
            }
        }
        if self.backend != Backend::Cuda {
            return Err(Error::InvalidArg("setpts_device needs a CUDA plan (opts.backend = CUDA); this plan runs on the CPU".into()));
        }
        if self.ty == 3 {
            return Err(Error::InvalidArg("setpts_device takes the points of types 1 and 2; a type-3 plan takes setpts_type3_device (or host arrays, setpts_type3)".into()));
        }
        let mut p = [0u64; 3];
        p[..self.dim].copy_from_slice(&ptrs[..self.dim]);
        self.exec.setpts_device(m, p)
    }

    /// Type 3 on a CUDA plan: sets (or replaces) the `m` points `x, y, z` and the `n` target
    /// frequencies `s, t, u` from **device** arrays (addresses of device 0, the plan's device,
    /// of `m` and `n` values of precision `T`; any finite reals; axes ≥ dim ignored and may be
    /// 0). They are copied on the device, and the set-up runs there (extents, rescaling,
    /// pre-phase and deconvolution factors, the spreader's and the inner type 2's
    /// structures): the host reads back the extents and a few integers (docs/design.md §9.4).
    ///
    /// Errors, checked in this order: [`Error::NPoints`] (M or N above [`MAX_POINTS`],
    /// ntrans·M or ntrans·N above [`MAX_GRID_ELEMENTS`]), [`Error::NullPointer`] (a used axis
    /// is 0 while its count is > 0), [`Error::InvalidArg`] (a CPU plan; a plan of type 1 or 2:
    /// use [`NufftPlan::setpts_device`]), then as [`NufftPlan::setpts_type3`]:
    /// [`Error::NonFinite`], [`Error::Range`], [`Error::Modes`] keep the previous points,
    /// [`Error::Alloc`] and device errors leave the plan without points.
    ///
    /// # Safety
    /// Each used address must be a device allocation of the plan's device holding at least
    /// `m` (points) or `n` (frequencies) values of precision `T`.
    #[allow(clippy::too_many_arguments)]
    pub unsafe fn setpts_type3_device(&mut self, m: usize, x: u64, y: u64, z: u64, n: usize, s: u64, t: u64, u: u64) -> Result<()> {
        // M and N against the limits here and in the executor (Type3Params::check_counts)
        self.check_count(m)?;
        let (xp, sp) = ([x, y, z], [s, t, u]);
        for (len, ptrs, names) in [(m, xp, ["x", "y", "z"]), (n, sp, ["s", "t", "u"])] {
            if let Some(d) = (0..self.dim).find(|&d| len > 0 && ptrs[d] == 0) {
                return Err(Error::NullPointer(format!("device array {} is NULL ({len} values, dim = {})", names[d], self.dim)));
            }
        }
        if self.backend != Backend::Cuda {
            return Err(Error::InvalidArg("setpts_type3_device needs a CUDA plan (opts.backend = CUDA); this plan runs on the CPU".into()));
        }
        if self.ty != 3 {
            return Err(Error::InvalidArg(format!("setpts_type3_device takes the points of type 3; a type-{} plan takes setpts_device", self.ty)));
        }
        let cut = |p: [u64; 3]| -> [u64; 3] { std::array::from_fn(|d| if d < self.dim { p[d] } else { 0 }) };
        self.exec.setpts_device_type3(m, cut(xp), n, cut(sp))
    }

    fn check_count(&self, m: usize) -> Result<()> {
        if m > MAX_POINTS {
            return Err(Error::NPoints(format!("M = {m} points exceed the supported maximum of {MAX_POINTS} (2^32 − 1)")));
        }
        if m.checked_mul(self.ntrans).is_none_or(|t| t > MAX_GRID_ELEMENTS) {
            return Err(Error::NPoints(format!(
                "ntrans·M = {}·{m} exceeds the limit 2^40 = {MAX_GRID_ELEMENTS} values per execute", self.ntrans)));
        }
        Ok(())
    }

    fn set_points(&mut self, pts: Points<'_, T>, copy: bool) -> Result<()> {
        let m = pts.x[0].len();
        self.check_count(m)?;
        fn cut<U>(a: [&[U]; 3], dim: usize) -> [&[U]; 3] {
            [a[0], if dim > 1 { a[1] } else { &[] }, if dim > 2 { a[2] } else { &[] }]
        }
        let pts = Points { x: cut(pts.x, self.dim), s: cut(pts.s, self.dim) };
        if copy {
            self.exec.setpts(pts)
        } else {
            // SAFETY: forwarded from this function's callers' contract.
            unsafe { self.exec.setpts_by_reference(pts) }
        }
    }

    fn check_lengths(&self, c: usize, f: usize) -> Result<()> {
        if !self.exec.has_points() {
            return Err(Error::NoPoints("call setpts before execute".into()));
        }
        let (m, nm) = (self.exec.num_points(), self.exec.num_modes());
        if c != m * self.ntrans || f != nm * self.ntrans {
            return Err(Error::InvalidArg(format!(
                "array lengths c = {c}, f = {f} do not match ntrans·M = {}, ntrans·N = {}", m * self.ntrans, nm * self.ntrans)));
        }
        Ok(())
    }

    /// Executes the transform.
    /// * types 1 and 3: input `c` (`ntrans·M` strengths), output `f` (`ntrans·N` values);
    /// * type 2: input `f` (`ntrans·N1·N2·N3` modes), output `c`.
    ///
    /// Errors: [`Error::NoPoints`] before `setpts`, [`Error::InvalidArg`] for wrong lengths
    /// (outputs untouched), [`Error::Alloc`] (spreading scratch), device errors (CUDA: the
    /// output is untouched), [`Error::Range`] when an output value is not finite (non-finite
    /// or overflowing inputs; the output is then already overwritten).
    pub fn execute(&mut self, c: &mut [Complex<T>], f: &mut [Complex<T>]) -> Result<()> {
        self.check_lengths(c.len(), f.len())?;
        self.exec.execute(c, f)?;
        // a result that is not finite is never returned with status 0 (finite coordinates are
        // checked at setpts; huge or non-finite strengths/coefficients end up here)
        let (out, name): (&[Complex<T>], &str) = if self.ty == 2 { (&c[..], "c") } else { (&f[..], "f") };
        if let Some(i) = out.iter().position(|v| !(v.re.is_finite() && v.im.is_finite())) {
            return Err(Error::Range(format!(
                "output {name}[{i}] = ({:e}, {:e}) is not finite: the input {} holds non-finite values or values too \
                 large for {} (their sum overflows)",
                out[i].re.to_f64v(), out[i].im.to_f64v(), if self.ty == 2 { "f" } else { "c" }, T::NAME)));
        }
        Ok(())
    }

    /// Executes on device arrays (CUDA backend only; cuFINUFFT style): `c` holds
    /// `ntrans·M`, `f` `ntrans·N` complex values of precision `T`, as device addresses.
    /// Errors: [`Error::InvalidArg`] on a CPU plan, [`Error::NoPoints`], [`Error::NullPointer`].
    ///
    /// # Safety
    /// `c` and `f` must be device allocations of device 0 of at least those sizes.
    pub unsafe fn execute_device(&mut self, c: u64, f: u64) -> Result<()> {
        if self.backend != Backend::Cuda {
            return Err(Error::InvalidArg("execute_device needs a plan made with opts.backend = CUDA".into()));
        }
        if !self.exec.has_points() {
            return Err(Error::NoPoints("call setpts before execute".into()));
        }
        if c == 0 || f == 0 {
            return Err(Error::NullPointer("device array c or f is NULL".into()));
        }
        self.exec.execute_device(c, f)
    }

    /// Length of one vector of `f`: the number of modes `N1·N2·N3` (types 1, 2) or of target
    /// frequencies (type 3, 0 before `setpts`).
    pub fn num_modes(&self) -> usize {
        self.exec.num_modes()
    }
    /// Number of points set (0 before `setpts`).
    pub fn num_points(&self) -> usize {
        if self.exec.has_points() {
            self.exec.num_points()
        } else {
            0
        }
    }
    /// The options the plan was made with.
    pub fn options(&self) -> &NufftOpts {
        &self.opts
    }
    /// Dimension (1–3).
    pub fn dim(&self) -> usize {
        self.dim
    }
    /// Transform type (1, 2 or 3).
    pub fn transform_type(&self) -> i32 {
        self.ty
    }
    /// Vectors per execute.
    pub fn ntrans(&self) -> usize {
        self.ntrans
    }
    /// The backend the plan runs on.
    pub fn backend(&self) -> Backend {
        self.backend
    }
    /// What the plan chose (fine grid, kernel, σ, tolerance used, warnings, backend).
    pub fn info(&self) -> NufftInfo {
        self.exec.info()
    }
    /// The kernel used.
    pub fn kernel(&self) -> &Kernel {
        self.exec.kernel()
    }
    /// Stage timings of the last `setpts` + `execute`.
    pub fn timings(&self) -> Timings {
        self.exec.timings()
    }
}

/// [`NufftPlan::new`] for f64 and f32, non-generic and never inlined: compiled once, here.
#[inline(never)]
fn new_f64(ty: i32, dim: usize, n_modes: &[i64], iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<NufftPlan<f64>> {
    NufftPlan::<f64>::new_impl(ty, dim, n_modes, iflag, ntrans, tol, opts)
}

/// See [`new_f64`].
#[inline(never)]
fn new_f32(ty: i32, dim: usize, n_modes: &[i64], iflag: i32, ntrans: usize, tol: f64, opts: &NufftOpts) -> Result<NufftPlan<f32>> {
    NufftPlan::<f32>::new_impl(ty, dim, n_modes, iflag, ntrans, tol, opts)
}
