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

use super::{SpreadOpts, Spreader, MAX_POINTS};
use crate::error::{Error, Result};
use crate::gpu::device::Device;
use crate::gpu::runtime::{resolve_backend, Backend};
use crate::gpu::spread::{GpuKernelSpec, GpuMethod, GpuSpreadOpts, GpuSpreader};
use crate::gpu::types::GpuReal;
use crate::kernel::bspline::BSplineParams;
use crate::kernel::{Kernel, KernelKind};
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
pub fn kernel_for(kind: SpreadKernelKind, width_or_tol: f64, min_tol: f64) -> Result<GpuKernelSpec> {
    match kind {
        SpreadKernelKind::Es | SpreadKernelKind::Gaussian => {
            let tol = width_or_tol;
            if !(tol.is_finite() && tol > 0.0 && tol < 1.0) {
                return Err(Error::Tol(format!("width_or_tol = {tol:e}: the ES and Gaussian kernels take a relative tolerance in (0, 1)")));
            }
            let kk = if kind == SpreadKernelKind::Es { KernelKind::Es } else { KernelKind::Gaussian };
            let tol = tol.max(min_tol).max(Kernel::achievable_tol(kk, 2.0));
            Ok(GpuKernelSpec::Kernel(Kernel::for_tolerance(kk, tol, 2.0)))
        }
        SpreadKernelKind::BSpline => {
            let p = width_or_tol;
            if !(p.is_finite() && p.fract() == 0.0 && (1.0..=MAX_BSPLINE_ORDER as f64).contains(&p)) {
                return Err(Error::InvalidArg(format!(
                    "width_or_tol = {p}: the B-spline kernel takes its order, an integer in 1..={MAX_BSPLINE_ORDER} (2 = CIC, 3 = TSC)"
                )));
            }
            Ok(GpuKernelSpec::BSpline(BSplineParams { order: p as usize }))
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
    /// `FARFIELD_BACKEND_AUTO` (0: the CPU, until the GPU path has been timed against it),
    /// `_CPU` (1) or `_CUDA` (2: device 0; [`Error::NoDevice`] without one).
    pub backend: i32,
    /// CUDA: method (`None` = the selection rule of [`crate::gpu::spread`]) and reuse hint.
    pub gpu: GpuSpreadOpts,
    /// CPU: largest number of points per subproblem (0 = default 10 000). CUDA: largest
    /// number of points per SM subproblem (0 = default 1024).
    pub max_subprob_size: usize,
}

impl Default for SpreadPlanOpts {
    fn default() -> Self {
        SpreadPlanOpts { nthreads: 0, debug: 0, backend: 0, gpu: GpuSpreadOpts::default(), max_subprob_size: 0 }
    }
}

/// A GPU spreader behind a [`SpreadPlan`], type-erased over the device.
trait GpuSpread<T: GpuReal>: Send {
    fn setpts(&mut self, coords: [&[T]; 3]) -> Result<()>;
    fn spread(&self, c: &[Complex<T>], grid: &mut [Complex<T>]) -> Result<()>;
    fn interp(&self, grid: &[Complex<T>], c: &mut [Complex<T>]) -> Result<()>;
    fn method(&self) -> Option<GpuMethod>;
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
}

enum Exec<T: GpuReal> {
    Cpu { sp: Spreader<T>, threads: Threads },
    Gpu(Box<dyn GpuSpread<T>>),
}

/// A spreading/interpolation plan in physical coordinates (module docs), precision `T`
/// (`f32` or `f64`; coordinates are mapped to grid units in `f64` either way).
pub struct SpreadPlan<T: GpuReal> {
    bx: SpreadBox,
    kernel: GpuKernelSpec,
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
    pub fn new(bx: SpreadBox, kernel: GpuKernelSpec, opts: &SpreadPlanOpts) -> Result<Self> {
        check_box(&bx, kernel.width())?;
        match resolve_backend(opts.backend, "spreading plans", opts.backend == crate::nufft::options::FARFIELD_BACKEND_CUDA)? {
            Backend::Cpu => {
                let threads = Threads::new(opts.nthreads)?;
                let so = SpreadOpts { max_subprob_size: opts.max_subprob_size };
                let sp = match &kernel {
                    GpuKernelSpec::Kernel(k) => Spreader::<T>::new(bx.dim, used(&bx), k, so)?,
                    GpuKernelSpec::BSpline(p) => Spreader::<T>::new_bspline(bx.dim, used(&bx), p, so)?,
                };
                Ok(Self::assemble(bx, kernel, opts, Exec::Cpu { sp, threads }))
            }
            Backend::Cuda(ordinal) => {
                let dev = crate::gpu::cuda::CudaDevice::new(ordinal)?;
                Self::with_device(dev, bx, kernel, opts)
            }
        }
    }

    /// A plan on the given device (CUDA, or the CUDA-on-CPU emulator in tests); `opts.backend`
    /// is ignored. Errors: as [`SpreadPlan::new`].
    pub fn with_device<D: Device + 'static>(dev: D, bx: SpreadBox, kernel: GpuKernelSpec, opts: &SpreadPlanOpts) -> Result<Self> {
        check_box(&bx, kernel.width())?;
        let mut go = opts.gpu;
        if opts.max_subprob_size > 0 {
            go.max_subprob = opts.max_subprob_size;
        }
        let gs = GpuSpreader::<T, D>::new(dev, bx.dim, used(&bx), &kernel, go)?;
        Ok(Self::assemble(bx, kernel, opts, Exec::Gpu(Box::new(OnDevice(gs)))))
    }

    fn assemble(bx: SpreadBox, kernel: GpuKernelSpec, opts: &SpreadPlanOpts, exec: Exec<T>) -> Self {
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
    pub fn kernel(&self) -> &GpuKernelSpec {
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
    /// M ≥ 2³²), [`Error::NonFinite`] (naming the first bad point and axis),
    /// [`Error::InvalidArg`] (a point whose kernel leaves a free axis: the message names the
    /// point index, its coordinate, the axis and the allowed range); [`Error::Alloc`] (the
    /// plan may then be left without points).
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
            let (lo, len, n) = (bx.lo[d], bx.len[d], bx.n[d] as f64);
            let half = 0.5 * self.w as f64;
            for (i, &x) in coords[d].iter().enumerate() {
                let x = x.to_f64v();
                if !x.is_finite() {
                    return Err(Error::NonFinite(format!("coordinate {} of point {i} is {x}", ["x", "y", "z"][d])));
                }
                let mut u = (x - lo) / len;
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
                             (box_lo = {lo}, h = {h}, kernel width {w}); keep {ax} in [{a}, {b}] or pad the grid by {p} points per side",
                            i0 + self.w as f64 - 1.0, bx.n[d] - 1,
                            ax = ["x", "y", "z"][d], w = self.w,
                            a = lo + (half - 1.0) * h, b = lo + (n - half) * h, p = self.w.div_ceil(2)
                        )));
                    }
                }
                rad[d].push(T::of(std::f64::consts::TAU * u));
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
            Exec::Cpu { sp, threads } => {
                grid.fill(T::zero());
                sp.try_spread_real(c, grid, threads)
            }
            Exec::Gpu(g) => {
                let mut cc = crate::error::try_vec(c.len(), "complex copy of the values")?;
                cc.extend(c.iter().map(|&v| Complex::new(v, T::zero())));
                let mut gc = crate::error::try_filled_vec(grid.len(), Complex::new(T::zero(), T::zero()), "complex grid")?;
                g.spread(&cc, &mut gc)?;
                for (o, v) in grid.iter_mut().zip(&gc) {
                    *o = v.re;
                }
                Ok(())
            }
        })
    }

    /// Spreads the complex values `c` (length M) onto the complex `grid` (length `n1·n2·n3`),
    /// **overwriting** it. Errors: as [`SpreadPlan::spread_real`].
    pub fn spread_complex(&self, c: &[Complex<T>], grid: &mut [Complex<T>]) -> Result<()> {
        self.need_points()?;
        self.check_lens("spread", c.len(), grid.len())?;
        self.timed("spread (complex)", || match &self.exec {
            Exec::Cpu { sp, threads } => {
                grid.fill(Complex::new(T::zero(), T::zero()));
                sp.try_spread(c, grid, threads)
            }
            Exec::Gpu(g) => g.spread(c, grid),
        })
    }

    /// Interpolates the real `grid` (length `n1·n2·n3`) at the points into `values` (length
    /// M), overwriting it; when `grad` is given (length `M·dim`, interleaved:
    /// `grad[dim·j + d] = ∂v_j/∂x_d`), also the gradient in physical units (per unit length).
    /// Errors: [`Error::NoPoints`], [`Error::InvalidArg`] (lengths), [`Error::NotSupported`]
    /// (a gradient with a kernel other than a B-spline of order ≥ 2, or on CUDA),
    /// [`Error::Alloc`], device errors.
    pub fn interp_real(&self, grid: &[T], values: &mut [T], grad: Option<&mut [T]>) -> Result<()> {
        self.need_points()?;
        self.check_lens("interp", values.len(), grid.len())?;
        let dim = self.bx.dim;
        if let Some(g) = &grad {
            if g.len() != self.m * dim {
                return Err(Error::InvalidArg(format!("interp: gradient array of {} for M·dim = {}", g.len(), self.m * dim)));
            }
            match &self.kernel {
                GpuKernelSpec::BSpline(p) if p.order >= 2 => {}
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
                    // ∂/∂x_d = (n_d / len_d) ∂/∂g_d
                    let scale: [T; 3] = std::array::from_fn(|d| T::of(self.bx.n[d] as f64 / self.bx.len[d]));
                    for (j, o) in out.iter().enumerate() {
                        values[j] = o[0];
                        for d in 0..dim {
                            gr[dim * j + d] = o[1 + d] * scale[d];
                        }
                    }
                    Ok(())
                }
            },
            Exec::Gpu(g) => {
                let mut gc = crate::error::try_vec(grid.len(), "complex copy of the grid")?;
                gc.extend(grid.iter().map(|&v| Complex::new(v, T::zero())));
                let mut vc = crate::error::try_filled_vec(values.len(), Complex::new(T::zero(), T::zero()), "complex values")?;
                g.interp(&gc, &mut vc)?;
                for (o, v) in values.iter_mut().zip(&vc) {
                    *o = v.re;
                }
                Ok(())
            }
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
