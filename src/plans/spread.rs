//! Spreading and interpolation in physical coordinates, for particle-in-cell and particle-mesh
//! codes: a box with any origin and length per axis, periodic or free per axis, and the ES,
//! Gaussian or cardinal B-spline kernel, on the CPU ([`Spreader`]) or on a CUDA device
//! ([`GpuSpreader`]). This is what the C API `farfield_spread_*` exposes.
//!
//! # Geometry
//! The grid has `n1 × n2 × n3` points (x fastest: `grid[i + n1*(j + n2*k)]`; `n2 = n3 = 1` in
//! 1D, `n3 = 1` in 2D). Along axis `d` grid point `i` sits at `lo_d + i·h_d` with spacing
//! `h_d = len_d / n_d`. A point at coordinate `x` has the grid coordinate
//! `g = (x − lo_d)/h_d`, computed in double precision whatever the plan's precision.
//! * **periodic** axis: period `len_d`; points may lie anywhere (folded into the period);
//! * **free** axis: every grid point the point's kernel touches, `i0 … i0 + w − 1` with
//!   `i0 = ⌈g − w/2⌉`, must lie in `0 … n_d − 1`; otherwise [`SpreadPlan::setpts`] fails with
//!   [`Error::InvalidArg`] naming the point, its coordinate and the axis. Pad the grid by
//!   `⌈w/2⌉` points on each side of the region the particles occupy.
//!
//! # Operations
//! With `ψ` the kernel in grid units (see [`crate::kernel`]: centred, width `w`):
//! * spreading: `grid_l = Σ_j c_j Π_d ψ(l_d − g_{j,d})` (periodised on periodic axes); the grid
//!   is **overwritten**;
//! * interpolation: `v_j = Σ_l grid_l Π_d ψ(l_d − g_{j,d})` (the adjoint), and for B-splines
//!   of order ≥ 2 the gradient `∂v_j/∂x_d = (1/h_d) ∂v_j/∂g_d` in physical units (per unit
//!   length), from the analytic spline derivative `M_n' (u) = M_{n−1}(u) − M_{n−1}(u − 1)`
//!   (Essmann et al., J. Chem. Phys. 103 (1995) 8577, eq. 4.1).
//!
//! # Kernels
//! * ES (Barnett, Magland, af Klinteberg, SIAM J. Sci. Comput. 41 (2019) C479, eq. 1.8) and the
//!   truncated Gaussian (Greengard & Lee, SIAM Rev. 46 (2004) 443): chosen for a relative
//!   tolerance with the NUFFT's rules at upsampling factor σ = 2 ([`Kernel::for_tolerance`]);
//! * cardinal B-spline of order `p = 1 … 8` (width `p`): `p = 1` is nearest grid point (NGP),
//!   `p = 2` cloud-in-cell (CIC, linear weighting), `p = 3` triangular-shaped cloud (TSC)
//!   (Hockney & Eastwood, "Computer Simulation Using Particles", 1988, §5-3). B-splines form a
//!   partition of unity, so spreading conserves the total charge exactly (to rounding), and
//!   CIC interpolates linear fields exactly.
//!
//! The spreader itself works in 2π-periodic radians: the plan maps `g` to `2π g / n_d` (after
//! folding or checking it in double precision), so the spreader's grid point `i` at `2πi/n_d`
//! is the plan's `lo_d + i·h_d`.

use crate::backend::{Backend, BackendChoice};
use crate::error::{Error, Result};
use crate::gpu::device::Device;
use crate::gpu::spread::{GpuMethod, GpuSpreadOpts, GpuSpreader};
use crate::gpu::types::GpuReal;
use crate::kernel::bspline::BSplineParams;
use crate::kernel::{Kernel, KernelKind};
use crate::spread::{SpreadOpts, Spreader, MAX_POINTS};
use crate::threads::Threads;
use num_complex::Complex;

/// Largest B-spline order the spreading plans accept.
pub const MAX_BSPLINE_ORDER: usize = 8;

/// The box and grid of a spreading plan (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpreadBox {
    /// Dimension 1, 2 or 3.
    pub dim: usize,
    /// Grid points per axis (entries past `dim` ignored).
    pub n: [usize; 3],
    /// Coordinate of grid point 0 per axis (finite).
    pub lo: [f64; 3],
    /// Box length per axis (finite, > 0): the period of a periodic axis, `n·h` for a free one.
    pub len: [f64; 3],
    /// Whether each axis is periodic.
    pub periodic: [bool; 3],
}

/// Kernel family of [`kernel_for`] (C: `FARFIELD_SPREAD_KERNEL_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpreadKernelKind {
    /// Exponential of semicircle, from a tolerance (0).
    Es,
    /// Truncated Gaussian, from a tolerance (1).
    Gaussian,
    /// Cardinal B-spline of a given order 1–8 (2).
    BSpline,
}

impl SpreadKernelKind {
    /// From the C value 0, 1, 2.
    pub fn from_code(c: i32) -> Option<Self> {
        match c {
            0 => Some(Self::Es),
            1 => Some(Self::Gaussian),
            2 => Some(Self::BSpline),
            _ => None,
        }
    }
}

/// The kernel for a family and `width_or_tol`: ES and Gaussian take a relative tolerance in
/// `(0, 1)` (values below `min_tol`, the precision's smallest, are raised to it) and choose the
/// width with the NUFFT's rules at σ = 2 (ES: `w = ⌈log10(10/ε)⌉`, 2…16; Gaussian: up to 32);
/// the B-spline takes its order `p`, an integer in `1 … 8` (width `p`).
/// Errors: [`Error::Tol`] (tolerance not in `(0, 1)` or not finite), [`Error::InvalidArg`]
/// (order not an integer in 1…8).
pub fn kernel_for(kind: SpreadKernelKind, width_or_tol: f64, min_tol: f64) -> Result<Kernel> {
    match kind {
        SpreadKernelKind::Es | SpreadKernelKind::Gaussian => {
            let tol = width_or_tol;
            if !(tol.is_finite() && tol > 0.0 && tol < 1.0) {
                return Err(Error::Tol(format!("width_or_tol = {tol:e}: the ES and Gaussian kernels take a relative tolerance in (0, 1)")));
            }
            let kk = if kind == SpreadKernelKind::Es { KernelKind::Es } else { KernelKind::Gaussian };
            let tol = tol.max(min_tol).max(Kernel::achievable_tol(kk, 2.0));
            Ok(Kernel::for_tolerance(kk, tol, 2.0))
        }
        SpreadKernelKind::BSpline => {
            let p = width_or_tol;
            if !(p.is_finite() && p.fract() == 0.0 && (1.0..=MAX_BSPLINE_ORDER as f64).contains(&p)) {
                return Err(Error::InvalidArg(format!(
                    "width_or_tol = {p}: the B-spline kernel takes its order, an integer in 1..={MAX_BSPLINE_ORDER} (2 = CIC, 3 = TSC)"
                )));
            }
            Ok(Kernel::BSpline(BSplineParams { order: p as usize }))
        }
    }
}

/// Options of a [`SpreadPlan`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SpreadPlanOpts {
    /// CPU threads (0 = all cores, 1 = the caller's thread only).
    pub nthreads: usize,
    /// `> 0`: print the plan's choices and the time of each stage to stderr.
    pub debug: i32,
    /// AUTO (the CPU, until the GPU path has been timed against it), CPU, or CUDA (device 0;
    /// [`Error::NoDevice`] without one).
    pub backend: BackendChoice,
    /// CUDA: method (`None` = the selection rule of [`crate::gpu::spread`]) and reuse hint.
    pub gpu: GpuSpreadOpts,
    /// CPU: largest number of points per subproblem (0 = default 10 000). CUDA: largest
    /// number of points per SM subproblem (0 = default 1024).
    pub max_subprob_size: usize,
}

impl Default for SpreadPlanOpts {
    fn default() -> Self {
        SpreadPlanOpts { nthreads: 0, debug: 0, backend: BackendChoice::Auto, gpu: GpuSpreadOpts::default(), max_subprob_size: 0 }
    }
}

/// A GPU spreader behind a [`SpreadPlan`], type-erased over the device.
trait GpuSpread<T: GpuReal>: Send {
    fn setpts(&mut self, coords: [&[T]; 3]) -> Result<()>;
    fn spread(&self, c: &[Complex<T>], grid: &mut [Complex<T>]) -> Result<()>;
    fn interp(&self, grid: &[Complex<T>], c: &mut [Complex<T>]) -> Result<()>;
    fn method(&self) -> Option<GpuMethod>;
    /// Device coordinates in physical units: `Ok(Some((axis, index, x)))` names the first
    /// failing coordinate (nothing changed), `Ok(None)` sets the points.
    unsafe fn setpts_device(&mut self, m: usize, x: [u64; 3], stride: usize, bx: &SpreadBox) -> Result<Option<(usize, usize, f64)>>;
    /// Device values `c` (M) onto the device `grid`, real or complex; returns when done.
    unsafe fn spread_device(&self, c: u64, grid: u64, complex: bool) -> Result<()>;
    /// The device `grid` at the points into device `c` (M), real or complex; returns when done.
    unsafe fn interp_device(&self, grid: u64, c: u64, complex: bool) -> Result<()>;
}

/// A [`GpuSpreader`] on a device that may move between threads.
struct OnDevice<T: GpuReal, D: Device>(GpuSpreader<T, D>);

// SAFETY: the CUDA device's handles (cudarc context and stream, Arc'd) are used behind the C
// plan's lock, one call at a time, and cudarc binds its context to the calling thread on every
// call (as the NUFFT's CUDA path, `gpu::nufft`); the emulator's buffers are plain host memory.
unsafe impl<T: GpuReal, D: Device> Send for OnDevice<T, D> {}

impl<T: GpuReal, D: Device> GpuSpread<T> for OnDevice<T, D> {
    fn setpts(&mut self, coords: [&[T]; 3]) -> Result<()> {
        self.0.setpts(coords)
    }
    fn spread(&self, c: &[Complex<T>], grid: &mut [Complex<T>]) -> Result<()> {
        self.0.spread(c, grid)
    }
    fn interp(&self, grid: &[Complex<T>], c: &mut [Complex<T>]) -> Result<()> {
        self.0.interp(grid, c)
    }
    fn method(&self) -> Option<GpuMethod> {
        self.0.method()
    }
    unsafe fn setpts_device(&mut self, m: usize, x: [u64; 3], stride: usize, bx: &SpreadBox) -> Result<Option<(usize, usize, f64)>> {
        let dev = self.0.device().clone();
        let n = if m == 0 { 0 } else { (m - 1) * stride + 1 };
        dev.with_foreign_axes::<T, _>(n, bx.dim, x, |c| self.0.setpts_box_dev(m, c, stride, bx.lo, bx.len, bx.periodic))
    }
    unsafe fn spread_device(&self, c: u64, grid: u64, complex: bool) -> Result<()> {
        self.on_callers_arrays(c, grid, complex, |s, cb, gb| if complex { s.spread_dev(cb, gb) } else { s.spread_real_dev(cb, gb) })
    }
    unsafe fn interp_device(&self, grid: u64, c: u64, complex: bool) -> Result<()> {
        self.on_callers_arrays(c, grid, complex, |s, cb, gb| if complex { s.interp_dev(gb, cb) } else { s.interp_real_dev(gb, cb) })
    }
}

impl<T: GpuReal, D: Device> OnDevice<T, D> {
    /// Runs `run` on the caller's device arrays `c` (M values) and `grid` (the grid's values),
    /// complex or real `T`, then waits for the device: these plans have no stream option, and
    /// the caller's library may read the result as soon as the call returns.
    ///
    /// # Safety
    /// `c` and `grid` are device addresses valid for those sizes.
    unsafe fn on_callers_arrays(&self, c: u64, grid: u64, complex: bool,
                                run: impl FnOnce(&GpuSpreader<T, D>, &mut D::Buf, &mut D::Buf) -> Result<()>) -> Result<()> {
        let (s, dev) = (&self.0, self.0.device());
        let (m, n) = (s.num_points(), s.grid_size().iter().product());
        if complex {
            dev.with_foreign_pair::<Complex<T>>(c, m, grid, n, |cb, gb| run(s, cb, gb))?;
        } else {
            dev.with_foreign_pair::<T>(c, m, grid, n, |cb, gb| run(s, cb, gb))?;
        }
        dev.synchronize()
    }
}

enum Exec<T: GpuReal> {
    Cpu { sp: Spreader<T>, threads: Threads },
    Gpu(Box<dyn GpuSpread<T>>),
}

/// A spreading/interpolation plan in physical coordinates (module docs), precision `T`
/// (`f32` or `f64`; coordinates are mapped to grid units in `f64` either way).
pub struct SpreadPlan<T: GpuReal> {
    bx: SpreadBox,
    kernel: Kernel,
    w: usize,
    debug: i32,
    exec: Exec<T>,
    m: usize,
    ready: bool,
}

fn check_box(bx: &SpreadBox, w: usize) -> Result<()> {
    if !(1..=3).contains(&bx.dim) {
        return Err(Error::Dim(format!("dim = {}; spreading plans are 1D, 2D or 3D", bx.dim)));
    }
    let ax = ["x", "y", "z"];
    for d in 0..bx.dim {
        if bx.n[d] < 2 * w.max(1) {
            return Err(Error::Modes(format!(
                "n[{d}] = {}: the {} axis needs at least 2w = {} grid points for a kernel of width {w}",
                bx.n[d], ax[d], 2 * w.max(1)
            )));
        }
        if !bx.lo[d].is_finite() {
            return Err(Error::InvalidArg(format!("box_lo[{d}] = {} is not finite", bx.lo[d])));
        }
        if !(bx.len[d].is_finite() && bx.len[d] > 0.0) {
            return Err(Error::InvalidArg(format!("box_len[{d}] = {} must be finite and > 0", bx.len[d])));
        }
    }
    Ok(())
}

/// `[nx, ny, nz]` as a slice of the used axes.
fn used(bx: &SpreadBox) -> &[usize] {
    &bx.n[..bx.dim]
}

impl<T: GpuReal> SpreadPlan<T> {
    /// A plan for the box `bx` and kernel `kernel` (from [`kernel_for`]), on the backend of
    /// `opts.backend`. Errors: [`Error::Dim`], [`Error::Modes`] (`n_d < 2w`, or the grid beyond
    /// 2⁴⁰ points on the CPU / 2³¹ on CUDA), [`Error::InvalidArg`] (box, options),
    /// [`Error::NoDevice`] (CUDA demanded, none found), [`Error::Alloc`], device errors.
    pub fn new(bx: SpreadBox, kernel: Kernel, opts: &SpreadPlanOpts) -> Result<Self> {
        check_box(&bx, kernel.width())?;
        match crate::gpu::runtime::resolve(opts.backend, "spreading plans")? {
            Backend::Cpu => {
                let threads = Threads::new(opts.nthreads)?;
                let so = SpreadOpts { max_subprob_size: opts.max_subprob_size, ..Default::default() };
                let sp = Spreader::<T>::new(bx.dim, used(&bx), &kernel, so)?;
                Ok(Self::assemble(bx, kernel, opts, Exec::Cpu { sp, threads }))
            }
            Backend::Cuda => {
                let dev = crate::gpu::cuda::CudaDevice::new(0)?;
                Self::with_device(dev, bx, kernel, opts)
            }
        }
    }

    /// A plan on the given device (CUDA, or the CUDA-on-CPU emulator in tests); `opts.backend`
    /// is ignored. Errors: as [`SpreadPlan::new`].
    pub fn with_device<D: Device + 'static>(dev: D, bx: SpreadBox, kernel: Kernel, opts: &SpreadPlanOpts) -> Result<Self> {
        check_box(&bx, kernel.width())?;
        let mut go = opts.gpu;
        if opts.max_subprob_size > 0 {
            go.max_subprob = opts.max_subprob_size;
        }
        let gs = GpuSpreader::<T, D>::new(dev, bx.dim, used(&bx), &kernel, go)?;
        Ok(Self::assemble(bx, kernel, opts, Exec::Gpu(Box::new(OnDevice(gs)))))
    }

    fn assemble(bx: SpreadBox, kernel: Kernel, opts: &SpreadPlanOpts, exec: Exec<T>) -> Self {
        let w = kernel.width();
        let p = SpreadPlan { bx, kernel, w, debug: opts.debug, exec, m: 0, ready: false };
        if p.debug > 0 {
            eprintln!("[farfield spread] {}D grid {:?}, box lo {:?} len {:?} periodic {:?}, kernel {:?} (w = {w}), backend {}",
                      bx.dim, used(&bx), &bx.lo[..bx.dim], &bx.len[..bx.dim], &bx.periodic[..bx.dim], p.kernel, p.backend_name());
        }
        p
    }

    /// The box.
    pub fn geometry(&self) -> &SpreadBox {
        &self.bx
    }

    /// Kernel width `w` in grid points (pad free axes by `⌈w/2⌉`).
    pub fn width(&self) -> usize {
        self.w
    }

    /// The kernel.
    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    /// Number of points set (0 before `setpts`).
    pub fn num_points(&self) -> usize {
        self.m
    }

    /// Grid values `n1·n2·n3`.
    pub fn grid_len(&self) -> usize {
        used(&self.bx).iter().product()
    }

    /// `"cpu"` or `"cuda"` (the backend the plan runs on).
    pub fn backend_name(&self) -> &'static str {
        match self.exec {
            Exec::Cpu { .. } => "cpu",
            Exec::Gpu(_) => "cuda",
        }
    }

    /// The GPU method of the current points (`None` on the CPU or before `setpts`).
    pub fn gpu_method(&self) -> Option<GpuMethod> {
        match &self.exec {
            Exec::Gpu(g) => g.method(),
            Exec::Cpu { .. } => None,
        }
    }

    /// Sets the M points: `coords[d]` holds the coordinates of axis `d` (physical units; axes
    /// past `dim` ignored). They are mapped to grid units in double precision, checked, and
    /// copied (bin-sorted), so the caller may reuse or free its arrays.
    ///
    /// Errors (the previous points stay set): [`Error::NPoints`] (arrays of different lengths,
    /// M ≥ 2³²), [`Error::NonFinite`] (naming the first bad point and axis), [`Error::Range`]
    /// (a finite coordinate whose `(x − box_lo)/box_len` overflows), [`Error::InvalidArg`] (a
    /// point whose kernel leaves a free axis: the message names the point index, its
    /// coordinate, the axis and the allowed range); [`Error::Alloc`] (the plan may then be left
    /// without points).
    pub fn setpts(&mut self, coords: [&[T]; 3]) -> Result<()> {
        let t0 = std::time::Instant::now();
        let bx = self.bx;
        let m = coords[0].len();
        if m > MAX_POINTS {
            return Err(Error::NPoints(format!("M = {m} points exceed the supported maximum of {MAX_POINTS} (2^32 − 1)")));
        }
        for d in 0..bx.dim {
            if coords[d].len() != m {
                return Err(Error::NPoints(format!("axis {d} has {} coordinates, axis 0 has {m}", coords[d].len())));
            }
        }
        let mut rad: [Vec<T>; 3] = [Vec::new(), Vec::new(), Vec::new()];
        for d in 0..bx.dim {
            rad[d] = crate::error::try_vec(m, "spreading coordinates in grid units")?;
            for (i, &x) in coords[d].iter().enumerate() {
                rad[d].push(T::of(std::f64::consts::TAU * self.box_fraction(d, i, x.to_f64v())?));
            }
        }
        let c: [&[T]; 3] = [&rad[0], &rad[1], &rad[2]];
        self.ready = false;
        match &mut self.exec {
            Exec::Cpu { sp, threads } => sp.setpts(c, threads)?,
            Exec::Gpu(g) => g.setpts(c)?,
        }
        self.m = m;
        self.ready = true;
        if self.debug > 0 {
            eprintln!("[farfield spread] setpts M = {m}: {:.3e} s", t0.elapsed().as_secs_f64());
        }
        Ok(())
    }

    /// [`SpreadPlan::setpts`] from **device** arrays of a CUDA plan: `x`, `y`, `z` are device
    /// addresses (memory of the plan's device) of M coordinates of `T` each (physical units;
    /// axes past `dim` ignored and may be 0). The same mapping and checks as `setpts`, bit for
    /// bit, run on the device (`ff_box_map`), then the spreader's device set-up; the host reads
    /// back three integers (the first failing index per axis), and on failure the one
    /// coordinate it names. The coordinates are copied on the device before the call returns,
    /// so the caller may free or reuse its arrays then; the rest of the set-up (bin sort,
    /// method structures) is ordered before the plan's later calls on its stream.
    ///
    /// Errors: [`Error::NPoints`] (M ≥ 2³² here, ≥ 2³⁰ on the device), [`Error::NullPointer`]
    /// (a used axis's address 0 while M > 0), [`Error::InvalidArg`] (a CPU plan:
    /// "setpts_device needs a CUDA plan"), then the errors of `setpts` for the first failing
    /// coordinate ([`Error::NonFinite`], [`Error::Range`], [`Error::InvalidArg`]) — all these
    /// keep the previous points —, then device errors, after which the plan has no points.
    ///
    /// # Safety
    /// Each used address must be a device allocation of the plan's device holding at least M
    /// values of `T`, ready (in the plan's stream order) when the call is made.
    pub unsafe fn setpts_device(&mut self, m: usize, x: u64, y: u64, z: u64) -> Result<()> {
        self.setpts_device_strided(m, [x, y, z], 1)
    }

    /// [`SpreadPlan::setpts_device`] with point `j`'s axis-`d` coordinate at device address
    /// `x[d] + j·stride·size_of::<T>()`: `stride` 1 for one array per axis, `dim` for the rows
    /// of an `(M, dim)` array (then `x[d]` is the address of column `d`'s first value).
    /// Errors: as `setpts_device`, and [`Error::InvalidArg`] for a stride outside 1 … 3.
    ///
    /// # Safety
    /// Each used address must be a device allocation of the plan's device holding at least
    /// `(M − 1)·stride + 1` values of `T`, ready (in the plan's stream order) when the call is
    /// made.
    pub unsafe fn setpts_device_strided(&mut self, m: usize, x: [u64; 3], stride: usize) -> Result<()> {
        let t0 = std::time::Instant::now();
        if m > MAX_POINTS {
            return Err(Error::NPoints(format!("M = {m} points exceed the supported maximum of {MAX_POINTS} (2^32 − 1)")));
        }
        let Exec::Gpu(g) = &mut self.exec else {
            return Err(Error::InvalidArg("setpts_device needs a CUDA plan (backend CUDA); this plan runs on the CPU: pass host arrays to setpts".into()));
        };
        let was_ready = self.ready;
        match g.setpts_device(m, x, stride, &self.bx) {
            Ok(None) => {
                self.m = m;
                self.ready = true;
                if self.debug > 0 {
                    eprintln!("[farfield spread] setpts_device M = {m}: {:.3e} s", t0.elapsed().as_secs_f64());
                }
                Ok(())
            }
            Ok(Some((d, i, v))) => Err(match self.box_fraction(d, i, v) {
                Err(e) => e,
                Ok(_) => Error::Internal(format!(
                    "the device rejected coordinate {} of point {i} = {v:e}, which the host's check accepts", ["x", "y", "z"][d])),
            }),
            Err(e) => {
                // errors before the spreader's set-up keep its points; later ones clear them
                self.ready = was_ready && g.method().is_some();
                Err(e)
            }
        }
    }

    /// The spreading and interpolation of this plan on **device** arrays of a CUDA plan:
    /// `values` (M values, setpts order) and `grid` (`n1·n2·n3`, x fastest) are device
    /// addresses of `T` (`complex = false`) or of interleaved complex `T` (`complex = true`).
    /// Spreading overwrites `grid`, interpolation `values`, exactly as the host-array calls
    /// (`spread_real`, `spread_complex`, `interp_real` without gradient, `interp_complex`)
    /// do; the call returns when the result is complete.
    ///
    /// Errors: [`Error::NoPoints`], [`Error::NullPointer`] (an address 0),
    /// [`Error::InvalidArg`] (a CPU plan; overlapping address ranges), device errors.
    ///
    /// # Safety
    /// `values` and `grid` must be device allocations of the plan's device of at least those
    /// sizes, ready in the plan's stream order.
    pub unsafe fn spread_device(&self, values: u64, grid: u64, complex: bool) -> Result<()> {
        let g = self.device_call("spread_device", values, grid, complex)?;
        self.timed("spread (device)", || g.spread_device(values, grid, complex))
    }

    /// Interpolation on device arrays; see [`SpreadPlan::spread_device`] (`grid` is read,
    /// `values` overwritten; no gradient on the device).
    ///
    /// # Safety
    /// As [`SpreadPlan::spread_device`].
    pub unsafe fn interp_device(&self, grid: u64, values: u64, complex: bool) -> Result<()> {
        let g = self.device_call("interp_device", values, grid, complex)?;
        self.timed("interp (device)", || g.interp_device(grid, values, complex))
    }

    /// The checks of the device calls: a CUDA plan with points, non-NULL and disjoint arrays.
    fn device_call(&self, what: &str, values: u64, grid: u64, complex: bool) -> Result<&dyn GpuSpread<T>> {
        let Exec::Gpu(g) = &self.exec else {
            return Err(Error::InvalidArg(format!("{what} needs a CUDA plan (backend CUDA); this plan runs on the CPU: pass host arrays")));
        };
        self.need_points()?;
        if values == 0 || grid == 0 {
            return Err(Error::NullPointer(format!("{what}: device array values or grid is NULL")));
        }
        let z = if complex { 2 } else { 1 } * std::mem::size_of::<T>();
        crate::error::check_outputs_disjoint(&[(values as usize, self.m * z, "values")], &[(grid as usize, self.grid_len() * z, "grid")])?;
        Ok(g.as_ref())
    }

    /// Coordinate `x` of point `i` on axis `d` as the fraction `u = (x − lo)/len` of the box,
    /// wrapped into [0, 1) on a periodic axis, in double precision (`ff_box_map` in
    /// `gpu/kernels/spread.cu` does the same arithmetic for device arrays). Errors (naming the
    /// point, the axis and the coordinate): [`Error::NonFinite`], [`Error::Range`] (u
    /// overflows), [`Error::InvalidArg`] (the kernel leaves a free axis).
    fn box_fraction(&self, d: usize, i: usize, x: f64) -> Result<f64> {
        let bx = &self.bx;
        let (lo, len, n) = (bx.lo[d], bx.len[d], bx.n[d] as f64);
        let half = 0.5 * self.w as f64;
        let ax = ["x", "y", "z"][d];
        if !x.is_finite() {
            return Err(Error::NonFinite(format!("coordinate {ax} of point {i} is {x}")));
        }
        let mut u = (x - lo) / len;
        if !u.is_finite() {
            return Err(Error::Range(format!(
                "coordinate {ax} of point {i} = {x:e}: (x − box_lo)/box_len overflows (box_lo = {lo:e}, box_len = {len:e})")));
        }
        if bx.periodic[d] {
            u -= u.floor();
            if u >= 1.0 {
                u = 0.0;
            }
        } else {
            let i0 = (u * n - half).ceil();
            if !(i0 >= 0.0 && i0 + self.w as f64 <= n) {
                let h = len / n;
                return Err(Error::InvalidArg(format!(
                    "point {i}: {ax} = {x} touches grid points {i0}..{} outside 0..{} of the free {ax} axis \
                     (box_lo = {lo}, h = {h}, kernel width {w}); keep {ax} in ({a}, {b}] or pad the grid by {p} points per side",
                    i0 + self.w as f64 - 1.0, bx.n[d] - 1, w = self.w,
                    a = lo + (half - 1.0) * h, b = lo + (n - half) * h, p = self.w.div_ceil(2)
                )));
            }
        }
        Ok(u)
    }

    fn need_points(&self) -> Result<()> {
        if self.ready {
            Ok(())
        } else {
            Err(Error::NoPoints("call setpts before spread/interp".into()))
        }
    }

    fn check_lens(&self, what: &str, nvals: usize, ngrid: usize) -> Result<()> {
        if nvals != self.m || ngrid != self.grid_len() {
            return Err(Error::InvalidArg(format!(
                "{what}: {nvals} values and a grid of {ngrid} for M = {} points and a grid of {}",
                self.m, self.grid_len()
            )));
        }
        Ok(())
    }

    fn timed<R>(&self, what: &str, f: impl FnOnce() -> Result<R>) -> Result<R> {
        let t0 = std::time::Instant::now();
        let r = f();
        if self.debug > 0 {
            eprintln!("[farfield spread] {what} ({}): {:.3e} s", self.backend_name(), t0.elapsed().as_secs_f64());
        }
        r
    }

    /// Spreads the real values `c` (length M, caller's point order) onto the real `grid`
    /// (length `n1·n2·n3`, x fastest), **overwriting** it (module docs).
    /// Errors: [`Error::NoPoints`], [`Error::InvalidArg`] (lengths), [`Error::Alloc`] (then
    /// `grid` holds a partial sum), device errors.
    pub fn spread_real(&self, c: &[T], grid: &mut [T]) -> Result<()> {
        self.need_points()?;
        self.check_lens("spread", c.len(), grid.len())?;
        self.timed("spread (real)", || match &self.exec {
            Exec::Cpu { sp, threads } => sp.try_spread_real(c, grid, threads),
            Exec::Gpu(g) => via_complex(c, grid, |a, b| g.spread(a, b)),
        })
    }

    /// Spreads the complex values `c` (length M) onto the complex `grid` (length `n1·n2·n3`),
    /// **overwriting** it. Errors: as [`SpreadPlan::spread_real`].
    pub fn spread_complex(&self, c: &[Complex<T>], grid: &mut [Complex<T>]) -> Result<()> {
        self.need_points()?;
        self.check_lens("spread", c.len(), grid.len())?;
        self.timed("spread (complex)", || match &self.exec {
            Exec::Cpu { sp, threads } => sp.try_spread(c, grid, threads),
            Exec::Gpu(g) => g.spread(c, grid),
        })
    }

    /// Interpolates the real `grid` (length `n1·n2·n3`) at the points into `values` (length
    /// M), overwriting it; when `grad` is given (length `M·dim`, interleaved:
    /// `grad[dim·j + d] = ∂v_j/∂x_d`), also the gradient in physical units (per unit length).
    /// Errors: [`Error::NoPoints`], [`Error::InvalidArg`] (lengths), [`Error::NotSupported`]
    /// (a gradient with a kernel other than a B-spline of order ≥ 2, or on CUDA),
    /// [`Error::Range`] (a gradient not representable in `T`, e.g. a box of length 1e-300 in
    /// f64; nothing written), [`Error::Alloc`], device errors.
    pub fn interp_real(&self, grid: &[T], values: &mut [T], grad: Option<&mut [T]>) -> Result<()> {
        self.need_points()?;
        self.check_lens("interp", values.len(), grid.len())?;
        let dim = self.bx.dim;
        if let Some(g) = &grad {
            if g.len() != self.m * dim {
                return Err(Error::InvalidArg(format!("interp: gradient array of {} for M·dim = {}", g.len(), self.m * dim)));
            }
            match &self.kernel {
                Kernel::BSpline(p) if p.order >= 2 => {}
                _ => {
                    return Err(Error::NotSupported(
                        "the interpolated gradient needs a B-spline kernel of order ≥ 2 (NGP, ES and Gaussian: pass grad = NULL)".into(),
                    ))
                }
            }
            if let Exec::Gpu(_) = self.exec {
                return Err(Error::NotSupported("the interpolated gradient is computed on the CPU backend only; use backend CPU or grad = NULL".into()));
            }
        }
        self.timed(if grad.is_some() { "interp (real, gradient)" } else { "interp (real)" }, || match &self.exec {
            Exec::Cpu { sp, threads } => match grad {
                None => sp.try_interp_real(grid, values, threads),
                Some(gr) => {
                    let mut out = crate::error::try_filled_vec(self.m, [T::zero(); 4], "interpolated values and gradients")?;
                    sp.interp_grad_real(grid, &mut out, threads)?;
                    // ∂/∂x_d = n_d ∂/∂g_d / len_d, in f64 and in that order (n_d / len_d alone
                    // overflows for tiny boxes where the gradient itself is representable),
                    // converted in the scratch array so that nothing is written on error
                    let tmax = T::max_value().to_f64v();
                    for (j, o) in out.iter_mut().enumerate() {
                        for d in 0..dim {
                            let g = o[1 + d].to_f64v() * self.bx.n[d] as f64 / self.bx.len[d];
                            if o[1 + d].is_finite() && (!g.is_finite() || g.abs() > tmax) {
                                return Err(Error::Range(format!(
                                    "interp: the gradient at point {j} along axis {d} ({g:e}) is not representable in {} (box length {:e})",
                                    std::any::type_name::<T>(), self.bx.len[d])));
                            }
                            o[1 + d] = T::of(g);
                        }
                    }
                    for (j, o) in out.iter().enumerate() {
                        values[j] = o[0];
                        gr[dim * j..dim * (j + 1)].copy_from_slice(&o[1..1 + dim]);
                    }
                    Ok(())
                }
            },
            Exec::Gpu(g) => via_complex(grid, values, |a, b| g.interp(a, b)),
        })
    }

    /// Interpolates the complex `grid` at the points into `values` (length M), overwriting it.
    /// Errors: [`Error::NoPoints`], [`Error::InvalidArg`] (lengths), [`Error::Alloc`], device
    /// errors.
    pub fn interp_complex(&self, grid: &[Complex<T>], values: &mut [Complex<T>]) -> Result<()> {
        self.need_points()?;
        self.check_lens("interp", values.len(), grid.len())?;
        self.timed("interp (complex)", || match &self.exec {
            Exec::Cpu { sp, threads } => sp.try_interp(grid, values, threads),
            Exec::Gpu(g) => g.interp(grid, values),
        })
    }
}

/// Runs the complex operation `op` on real data (the GPU spreader works on complex values):
/// `input` widened to complex with zero imaginary part (fallibly allocated copies), `out`
/// receives the real part of the complex result. Errors: [`Error::Alloc`] and those of `op`.
fn via_complex<T: GpuReal>(input: &[T], out: &mut [T],
                        op: impl FnOnce(&[Complex<T>], &mut [Complex<T>]) -> Result<()>) -> Result<()> {
    let zero = Complex::new(T::zero(), T::zero());
    let mut a = crate::error::try_vec(input.len(), "complex copy of the real input")?;
    a.extend(input.iter().map(|&v| Complex::new(v, T::zero())));
    let mut b = crate::error::try_filled_vec(out.len(), zero, "complex output")?;
    op(&a, &mut b)?;
    for (o, v) in out.iter_mut().zip(&b) {
        *o = v.re;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// The kernel's exact value `ψ(z)` (z in grid units), from the kernel's own formula.
    fn psi(k: &Kernel, z: f64) -> f64 {
        k.value(z)
    }

    /// Kernel weight of grid index `l` for a point at physical coordinate `x` along axis `d`,
    /// by a direct evaluation: grid coordinate `g = (x − lo)·n/len`, on a periodic axis reduced
    /// to `[0, n)` and periodised by summing the images `l − g + k·n`, |k| ≤ 2.
    fn weight(bx: &SpreadBox, k: &Kernel, d: usize, l: usize, x: f64) -> f64 {
        let n = bx.n[d] as f64;
        let g = (x - bx.lo[d]) / bx.len[d] * n;
        if bx.periodic[d] {
            let g = g.rem_euclid(n);
            (-2..=2).map(|im| psi(k, l as f64 - g + im as f64 * n)).sum()
        } else {
            psi(k, l as f64 - g)
        }
    }

    /// Unravels a grid index into `[i, j, k]`.
    fn idx(bx: &SpreadBox, l: usize) -> [usize; 3] {
        [l % bx.n[0], (l / bx.n[0]) % bx.n[1], l / (bx.n[0] * bx.n[1])]
    }

    /// Direct spreading `grid_l = Σ_j c_j Π_d ψ_d` with the exact kernel.
    fn direct_spread(bx: &SpreadBox, k: &Kernel, pts: &[[f64; 3]], c: &[f64]) -> Vec<f64> {
        let ng: usize = bx.n.iter().product();
        (0..ng)
            .map(|l| {
                let li = idx(bx, l);
                pts.iter().zip(c).map(|(p, &cv)| cv * (0..bx.dim).map(|d| weight(bx, k, d, li[d], p[d])).product::<f64>()).sum()
            })
            .collect()
    }

    /// Direct interpolation `v_j = Σ_l grid_l Π_d ψ_d` with the exact kernel.
    fn direct_interp(bx: &SpreadBox, k: &Kernel, p: [f64; 3], grid: &[f64]) -> f64 {
        grid.iter().enumerate().map(|(l, &gv)| {
            let li = idx(bx, l);
            gv * (0..bx.dim).map(|d| weight(bx, k, d, li[d], p[d])).product::<f64>()
        }).sum()
    }

    fn boxed(dim: usize, periodic: [bool; 3], n: [usize; 3]) -> SpreadBox {
        let mut n3 = [1usize; 3];
        n3[..dim].copy_from_slice(&n[..dim]);
        SpreadBox { dim, n: n3, lo: [-1.3, 0.7, 2.1], len: [2.5, 0.8, 3.3], periodic }
    }

    /// Random points: anywhere on periodic axes (several periods away), inside the allowed
    /// range on free axes (the kernel window within the grid).
    fn points(bx: &SpreadBox, w: usize, m: usize, seed: u64) -> Vec<[f64; 3]> {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
        (0..m)
            .map(|_| {
                let mut p = [0.0; 3];
                for d in 0..bx.dim {
                    let h = bx.len[d] / bx.n[d] as f64;
                    p[d] = if bx.periodic[d] {
                        bx.lo[d] + rng.gen_range(-2.0..3.0) * bx.len[d]
                    } else {
                        bx.lo[d] + h * rng.gen_range(0.5 * w as f64..bx.n[d] as f64 - 0.5 * w as f64 - 1e-9)
                    };
                }
                p
            })
            .collect()
    }

    fn coords_of(pts: &[[f64; 3]]) -> [Vec<f64>; 3] {
        std::array::from_fn(|d| pts.iter().map(|p| p[d]).collect())
    }

    fn max_abs(v: &[f64]) -> f64 {
        v.iter().fold(0.0, |a, b| a.max(b.abs()))
    }

    fn kernels() -> Vec<(Kernel, f64)> {
        let mut ks = vec![
            (kernel_for(SpreadKernelKind::Es, 1e-9, 1e-15).unwrap(), 1e-9),
            (kernel_for(SpreadKernelKind::Es, 1e-4, 1e-15).unwrap(), 1e-4),
            (kernel_for(SpreadKernelKind::Gaussian, 1e-8, 1e-15).unwrap(), 1e-11),
        ];
        for p in 1..=8 {
            ks.push((kernel_for(SpreadKernelKind::BSpline, p as f64, 1e-15).unwrap(), 1e-12));
        }
        ks
    }

    /// Spreading and interpolation against direct sums, every kernel, 1D/2D/3D, periodic and
    /// free axes, a box with non-zero origin and non-unit lengths; gradients (B-splines ≥ 2)
    /// against central differences of the direct interpolant.
    #[test]
    fn matches_direct_sums() {
        let mut rng = rand_pcg::Pcg64::seed_from_u64(5);
        let per_sets = [[true, true, true], [false, false, false], [true, false, true]];
        for dim in 1..=3 {
            for periodic in per_sets {
                for (k, tol) in kernels() {
                    let w = k.width();
                    let n = [2 * w + 7, 2 * w + 4, 2 * w + 3];
                    if dim == 3 && w > 8 {
                        continue; // keep the O(grid·M) direct sums small
                    }
                    let bx = boxed(dim, periodic, n);
                    let m = if dim == 3 { 12 } else { 40 };
                    let pts = points(&bx, w, m, 17 + w as u64);
                    let xs = coords_of(&pts);
                    let opts = SpreadPlanOpts { nthreads: 2, max_subprob_size: 7, ..Default::default() };
                    let mut plan = SpreadPlan::<f64>::new(bx, k.clone(), &opts).unwrap();
                    plan.setpts([&xs[0], &xs[1], &xs[2]]).unwrap();
                    let c: Vec<f64> = (0..m).map(|_| rng.gen_range(-1.0..1.0)).collect();
                    let mut grid = vec![7.0; plan.grid_len()];
                    plan.spread_real(&c, &mut grid).unwrap();
                    let want = direct_spread(&bx, &k, &pts, &c);
                    let what = format!("{dim}D periodic {:?} {k:?}", &periodic[..dim]);
                    let err = grid.iter().zip(&want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
                    assert!(err <= tol * max_abs(&want), "spread {what}: err {err:e} scale {:e}", max_abs(&want));
                    // complex spreading: real and imaginary parts spread independently
                    let cc: Vec<Complex<f64>> = c.iter().map(|&v| Complex::new(v, -0.5 * v)).collect();
                    let mut gc = vec![Complex::new(3.0, 3.0); plan.grid_len()];
                    plan.spread_complex(&cc, &mut gc).unwrap();
                    for (a, b) in gc.iter().zip(&want) {
                        assert!((a.re - b).abs() <= tol * max_abs(&want) && (a.im + 0.5 * b).abs() <= tol * max_abs(&want), "complex {what}");
                    }
                    // interpolation of a random grid
                    let gr: Vec<f64> = (0..plan.grid_len()).map(|_| rng.gen_range(-1.0..1.0)).collect();
                    let mut v = vec![9.0; m];
                    let bspline = matches!(k, Kernel::BSpline(p) if p.order >= 2);
                    let mut grad = vec![0.0; m * dim];
                    plan.interp_real(&gr, &mut v, if bspline { Some(&mut grad) } else { None }).unwrap();
                    let mut v2 = vec![0.0; m];
                    plan.interp_real(&gr, &mut v2, None).unwrap();
                    let grc: Vec<Complex<f64>> = gr.iter().map(|&g| Complex::new(g, 2.0 * g)).collect();
                    let mut vc = vec![Complex::new(0.0, 0.0); m];
                    plan.interp_complex(&grc, &mut vc).unwrap();
                    for j in 0..m {
                        let want = direct_interp(&bx, &k, pts[j], &gr);
                        assert!((v[j] - want).abs() <= tol * 4.0, "interp {what} point {j}: {} vs {want}", v[j]);
                        assert!((v2[j] - v[j]).abs() <= 1e-13 * (1.0 + v[j].abs()));
                        assert!((vc[j].re - want).abs() <= tol * 4.0 && (vc[j].im - 2.0 * want).abs() <= tol * 8.0);
                        if bspline {
                            for d in 0..dim {
                                let h = bx.len[d] / bx.n[d] as f64;
                                let del = 1e-6 * h;
                                let (mut pp, mut pm) = (pts[j], pts[j]);
                                pp[d] += del;
                                pm[d] -= del;
                                let fd = (direct_interp(&bx, &k, pp, &gr) - direct_interp(&bx, &k, pm, &gr)) / (2.0 * del);
                                // in grid units the derivative is O(1); FD rounding ~1e-10/h
                                assert!((grad[dim * j + d] - fd).abs() <= 1e-6 / h, "grad {what} point {j} axis {d}: {} vs {fd}", grad[dim * j + d]);
                            }
                        }
                    }
                }
            }
        }
    }

    /// Single precision against the double-precision direct sums (relative 1e-5).
    #[test]
    fn single_precision() {
        let bx = boxed(2, [true, false, true], [20, 18, 1]);
        for k in [kernel_for(SpreadKernelKind::Es, 1e-5, 1e-6).unwrap(), kernel_for(SpreadKernelKind::BSpline, 3.0, 1e-6).unwrap()] {
            let pts = points(&bx, k.width(), 50, 3);
            let xs = coords_of(&pts);
            let xf: [Vec<f32>; 3] = std::array::from_fn(|d| xs[d].iter().map(|&v| v as f32).collect());
            // the oracle uses the coordinates the f32 plan sees
            let pts32: Vec<[f64; 3]> = (0..pts.len()).map(|j| std::array::from_fn(|d| xf[d].get(j).map_or(0.0, |&v| v as f64))).collect();
            let mut plan = SpreadPlan::<f32>::new(bx, k.clone(), &SpreadPlanOpts::default()).unwrap();
            plan.setpts([&xf[0], &xf[1], &xf[2]]).unwrap();
            let c: Vec<f64> = (0..pts.len()).map(|j| ((j * 7) % 11) as f64 / 11.0 - 0.4).collect();
            let cf: Vec<f32> = c.iter().map(|&v| v as f32).collect();
            let mut g = vec![0f32; plan.grid_len()];
            plan.spread_real(&cf, &mut g).unwrap();
            let want = direct_spread(&bx, &k, &pts32, &c);
            let err = g.iter().zip(&want).map(|(a, b)| (*a as f64 - b).abs()).fold(0.0, f64::max);
            // ES: the kernel's own tolerance (1e-5) plus f32 rounding; B-spline: f32 rounding
            let tol = if matches!(k, Kernel::BSpline(_)) { 1e-5 } else { 1e-4 };
            assert!(err <= tol * max_abs(&want), "{k:?}: {err:e}");
        }
    }

    /// CIC/TSC (and every B-spline) conserve the total charge; B-splines of order ≥ 2 interpolate
    /// a linear field exactly, with its exact gradient, on free axes.
    #[test]
    fn bspline_conservation_and_linear_exactness() {
        for order in 1..=8usize {
            let k = kernel_for(SpreadKernelKind::BSpline, order as f64, 1e-15).unwrap();
            for periodic in [[true; 3], [false; 3]] {
                let bx = boxed(3, periodic, [2 * order + 4, 2 * order + 5, 2 * order + 6]);
                let pts = points(&bx, order, 300, order as u64);
                let xs = coords_of(&pts);
                let mut plan = SpreadPlan::<f64>::new(bx, k.clone(), &SpreadPlanOpts { nthreads: 2, ..Default::default() }).unwrap();
                plan.setpts([&xs[0], &xs[1], &xs[2]]).unwrap();
                let q: Vec<f64> = (0..300).map(|j| (j as f64 * 0.37).sin()).collect();
                let mut grid = vec![0.0; plan.grid_len()];
                plan.spread_real(&q, &mut grid).unwrap();
                let (sg, sq) = (grid.iter().sum::<f64>(), q.iter().sum::<f64>());
                assert!((sg - sq).abs() <= 1e-12 * q.iter().map(|v| v.abs()).sum::<f64>(), "order {order}: {sg} vs {sq}");
                if order >= 2 && !periodic[0] {
                    let (a, b) = ([0.3, -1.7, 2.2], 0.9);
                    let lin: Vec<f64> = (0..plan.grid_len())
                        .map(|l| {
                            let li = idx(&bx, l);
                            b + (0..3).map(|d| a[d] * (bx.lo[d] + li[d] as f64 * bx.len[d] / bx.n[d] as f64)).sum::<f64>()
                        })
                        .collect();
                    let mut v = vec![0.0; 300];
                    let mut gr = vec![0.0; 900];
                    plan.interp_real(&lin, &mut v, Some(&mut gr)).unwrap();
                    for j in 0..300 {
                        let exact = b + (0..3).map(|d| a[d] * pts[j][d]).sum::<f64>();
                        assert!((v[j] - exact).abs() <= 1e-12 * 10.0, "order {order} point {j}: {} vs {exact}", v[j]);
                        for d in 0..3 {
                            assert!((gr[3 * j + d] - a[d]).abs() <= 1e-10, "order {order} grad {d}: {}", gr[3 * j + d]);
                        }
                    }
                }
            }
        }
    }

    /// Tiny boxes: the gradient n·(∂/∂g)/len is representable although n/len is not (f64:
    /// len 1e-308, f32: len 2e-38); one that is not representable is refused with Range.
    fn tiny_box_gradient<T: GpuReal>(len: f64, slope: f64) {
        let k = kernel_for(SpreadKernelKind::BSpline, 2.0, 1e-15).unwrap();
        let bx = SpreadBox { dim: 1, n: [16, 1, 1], lo: [0.0; 3], len: [len, 1.0, 1.0], periodic: [false; 3] };
        let mut p = SpreadPlan::<T>::new(bx, k, &SpreadPlanOpts { nthreads: 1, ..Default::default() }).unwrap();
        let x: Vec<T> = [0.31, 0.5, 0.66].iter().map(|&t| T::of(t * len)).collect();
        p.setpts([&x, &[], &[]]).unwrap();
        // a linear grid: slope `slope` per grid point
        let grid: Vec<T> = (0..16).map(|l| T::of(slope * l as f64)).collect();
        let (mut v, mut g) = (vec![T::zero(); 3], vec![T::zero(); 3]);
        p.interp_real(&grid, &mut v, Some(&mut g)).unwrap();
        let want = slope * 16.0 / len;
        for gj in &g {
            assert!(gj.to_f64v().is_finite() && (gj.to_f64v() - want).abs() <= 1e-5 * want, "{} vs {want}", gj.to_f64v());
        }
        let huge: Vec<T> = (0..16).map(|l| T::of(T::max_value().to_f64v() / 32.0 * l as f64)).collect();
        let mut g2 = vec![T::of(7.0); 3];
        assert!(matches!(p.interp_real(&huge, &mut v, Some(&mut g2)), Err(Error::Range(_))));
        assert!(g2.iter().all(|&v| v == T::of(7.0)), "nothing written on error");
    }

    /// The widths the C header states for the ES kernel (`FARFIELD_SPREAD_KERNEL_ES`) and the
    /// single-precision floor it states (tolerances below 1e-7 are raised to it).
    #[test]
    fn es_widths_are_those_the_header_states() {
        for (tol, w) in [(1e-3, 4), (1e-6, 7), (1e-9, 10), (1e-11, 13)] {
            assert_eq!(kernel_for(SpreadKernelKind::Es, tol, f64::MIN_TOL).unwrap().width(), w, "tol {tol:e}");
        }
        assert!(kernel_for(SpreadKernelKind::Es, 1e-15, f64::MIN_TOL).unwrap().width() <= 16);
        use crate::real::Real;
        assert_eq!(f32::MIN_TOL, 1e-7);
        assert_eq!(kernel_for(SpreadKernelKind::Es, 1e-12, f32::MIN_TOL).unwrap(), kernel_for(SpreadKernelKind::Es, 1e-7, 1e-15).unwrap());
    }

    #[test]
    fn coordinates_whose_grid_position_overflows_are_a_range_error() {
        let k = kernel_for(SpreadKernelKind::BSpline, 2.0, 1e-15).unwrap();
        for periodic in [true, false] {
            let bx = SpreadBox { dim: 1, n: [16, 1, 1], lo: [-1e308; 3], len: [1.0, 1.0, 1.0], periodic: [periodic; 3] };
            let mut p = SpreadPlan::<f64>::new(bx, k.clone(), &SpreadPlanOpts { nthreads: 1, ..Default::default() }).unwrap();
            match p.setpts([&[1e308], &[], &[]]) {
                Err(Error::Range(m)) => assert!(m.contains("point 0") && m.contains("overflows"), "{m}"),
                r => panic!("periodic {periodic}: expected Range, got {r:?}"),
            }
        }
    }

    #[test]
    fn gradient_in_tiny_boxes() {
        tiny_box_gradient::<f64>(1e-308, 1e-300);
        tiny_box_gradient::<f32>(2e-38, 1e-30);
    }

    #[test]
    fn error_paths() {
        let k2 = kernel_for(SpreadKernelKind::BSpline, 2.0, 1e-15).unwrap();
        let o = SpreadPlanOpts::default();
        // kernel arguments
        for bad in [0.0, 9.0, 2.5, f64::NAN, -1.0] {
            assert!(matches!(kernel_for(SpreadKernelKind::BSpline, bad, 1e-15), Err(Error::InvalidArg(_))), "{bad}");
        }
        for bad in [0.0, 1.0, 2.0, f64::INFINITY, -1e-3] {
            assert!(matches!(kernel_for(SpreadKernelKind::Es, bad, 1e-15), Err(Error::Tol(_))), "{bad}");
        }
        assert_eq!(SpreadKernelKind::from_code(3), None);
        // box
        let good = boxed(2, [false, true, true], [16, 16, 1]);
        assert!(matches!(SpreadPlan::<f64>::new(SpreadBox { dim: 4, ..good }, k2.clone(), &o), Err(Error::Dim(_))));
        assert!(matches!(SpreadPlan::<f64>::new(SpreadBox { n: [3, 16, 1], ..good }, k2.clone(), &o), Err(Error::Modes(_))));
        assert!(matches!(SpreadPlan::<f64>::new(SpreadBox { len: [0.0, 1.0, 1.0], ..good }, k2.clone(), &o), Err(Error::InvalidArg(_))));
        assert!(matches!(SpreadPlan::<f64>::new(SpreadBox { lo: [f64::NAN, 0.0, 0.0], ..good }, k2.clone(), &o), Err(Error::InvalidArg(_))));
        let es = kernel_for(SpreadKernelKind::Es, 1e-6, 1e-15).unwrap();
        let mut pe = SpreadPlan::<f64>::new(good, es, &o).unwrap();
        let mut p = SpreadPlan::<f64>::new(good, k2.clone(), &o).unwrap();
        let mut v = [0.0; 3];
        let grid = vec![0.0; 256];
        assert!(matches!(p.interp_real(&grid, &mut v, None), Err(Error::NoPoints(_))));
        // a point whose CIC window leaves the free x axis [lo, lo + 15h]: the message names it
        let h = good.len[0] / 16.0;
        let x = [good.lo[0] + 3.0 * h, good.lo[0] + 14.9 * h, good.lo[0] + 15.2 * h];
        let y = [0.0, 5.0, -3.0];
        p.setpts([&x[..2], &y[..2], &[]]).unwrap();
        match p.setpts([&x, &y, &[]]) {
            Err(Error::InvalidArg(m)) => assert!(m.contains("point 2") && m.contains("free x axis") && m.contains(&format!("{}", x[2])), "{m}"),
            other => panic!("{other:?}"),
        }
        assert_eq!(p.num_points(), 2, "a failed setpts keeps the previous points");
        match p.setpts([&x[..2], &[0.0, f64::NAN], &[]]) {
            Err(Error::NonFinite(m)) => assert!(m.contains("point 1") && m.contains('y'), "{m}"),
            other => panic!("{other:?}"),
        }
        assert!(matches!(p.setpts([&x[..2], &y[..1], &[]]), Err(Error::NPoints(_))));
        // lengths, gradients
        let mut v2 = [0.0; 2];
        assert!(matches!(p.interp_real(&grid[..10], &mut v2, None), Err(Error::InvalidArg(_))));
        let mut g3 = [0.0; 3];
        assert!(matches!(p.interp_real(&grid, &mut v2, Some(&mut g3)), Err(Error::InvalidArg(_))));
        let mut g4 = [0.0; 4];
        p.interp_real(&grid, &mut v2, Some(&mut g4)).unwrap();
        pe.setpts([&[good.lo[0] + 8.0 * h], &[0.0], &[]]).unwrap();
        let (mut v1, mut g2) = ([0.0; 1], [0.0; 2]);
        assert!(matches!(pe.interp_real(&grid, &mut v1, Some(&mut g2)), Err(Error::NotSupported(_))));
        let mut p1 = SpreadPlan::<f64>::new(good, kernel_for(SpreadKernelKind::BSpline, 1.0, 1e-15).unwrap(), &o).unwrap();
        p1.setpts([&x[..2], &y[..2], &[]]).unwrap();
        assert!(matches!(p1.interp_real(&grid, &mut v2, Some(&mut g4)), Err(Error::NotSupported(_))));
        // CUDA demanded without a device
        if crate::gpu::runtime::discover().is_err() {
            let oc = SpreadPlanOpts { backend: BackendChoice::Cuda, ..o };
            assert!(matches!(SpreadPlan::<f64>::new(good, k2, &oc), Err(Error::NoDevice(_))));
        }
    }
}
