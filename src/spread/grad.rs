//! Real-valued spreading and gradient interpolation, and B-spline spreaders (for smooth
//! particle-mesh Ewald, Essmann et al. 1995 eq. 4.9):
//! * [`Spreader::spread_real`]: real strengths onto a **real** grid, overwriting it (half the arithmetic and
//!   memory of spreading them as complex numbers), same subproblem/box/wrap-add scheme as
//!   [`Spreader::spread`];
//! * [`Spreader::interp_grad_real`]: for each point, the value of the interpolant of a real
//!   grid (1D, 2D or 3D) and its derivatives with respect to the point's grid coordinates, in
//!   one pass (B-spline spreaders);
//! * [`Spreader::try_interp_real`]: the value only, any kernel, any dimension.
//!
//! Kept apart from the spreader's core loops (`mod.rs`, `inner.rs`): it only reads the sorted
//! points and subproblems that [`Spreader::setpts`] made.

use super::{once, KernelImpl, SpreadOpts, Spreader};
use crate::error::{Error, Result};
use crate::kernel::bspline::BSplineParams;
use crate::kernel::{Kernel, KernelEval, MAX_WIDTH};
use crate::real::Real;
use crate::threads::{SyncPtr, Threads};

#[cfg(target_arch = "x86_64")]
#[path = "grad_avx2.rs"]
mod avx2;

/// `a·b + c`, fused when `F`. The generic loops use `F = false`: LLVM vectorises the separate
/// multiply and add but not `mul_add` there; the `f64` AVX2 loops below use intrinsics.
#[inline(always)]
fn fma<T: Real, const F: bool>(a: T, b: T, c: T) -> T {
    if F {
        a.mul_add(b, c)
    } else {
        a * b + c
    }
}

impl<T: Real> Spreader<T> {
    /// [`Error::NotSupported`] for points kept in the caller's order ([`SpreadOpts::interp_only`],
    /// [`SpreadOpts::callers_order`]): the real paths (`what`) work on the bin-sorted points.
    fn needs_sorted(&self, what: &str) -> Result<()> {
        if self.in_order {
            return Err(Error::NotSupported(format!("{what} on 1D points kept in the caller's order (SpreadOpts::interp_only or callers_order)")));
        }
        Ok(())
    }

    /// A spreader whose kernel is the centred cardinal B-spline of order `p.order`
    /// (`1 ≤ order ≤ 32`, width = order; order 1 is nearest-grid-point assignment; see
    /// [`crate::kernel::bspline`]).
    /// A thin wrapper of [`Spreader::new`] with [`Kernel::BSpline`].
    /// Errors: [`Error::InvalidArg`] (order), and those of [`Spreader::new`].
    pub fn new_bspline(dim: usize, nf: &[usize], p: &BSplineParams, opts: SpreadOpts) -> Result<Self> {
        Self::new(dim, nf, &Kernel::BSpline(*p), opts)
    }

    /// Spreads the real strengths `c` (length M, caller's point order) onto the real `grid`
    /// (length nf1·nf2·nf3, x fastest), **overwriting** it. Needs points set by
    /// `setpts` (sorted copy), not `setpts_by_reference`. Panics if a subproblem's box cannot
    /// be allocated (see [`Spreader::try_spread_real`]).
    pub fn spread_real(&self, c: &[T], grid: &mut [T], threads: &Threads) {
        self.try_spread_real(c, grid, threads).unwrap_or_else(|e| panic!("{e}"))
    }

    /// [`Spreader::spread_real`] with the per-subproblem strengths and box (up to the grid's
    /// size) allocated fallibly. Errors: [`Error::Alloc`], after which `grid` holds a partial
    /// sum; [`Error::NotSupported`] for 1D points kept in the caller's order
    /// ([`SpreadOpts::callers_order`]).
    pub fn try_spread_real(&self, c: &[T], grid: &mut [T], threads: &Threads) -> Result<()> {
        once_per_precision!(self, c, grid, threads, once::spread_real_f64, once::spread_real_f32)
    }

    /// [`Spreader::try_spread_real`]'s body (compiled once per precision through [`once`]).
    pub(super) fn spread_real_impl(&self, c: &[T], grid: &mut [T], threads: &Threads) -> Result<()> {
        self.needs_sorted("spread_real")?;
        assert_eq!(c.len(), self.m);
        assert_eq!(grid.len(), self.nf.iter().product::<usize>());
        assert!(self.g[0].len() == self.m, "spread_real needs points set by setpts (sorted copy)");
        #[cfg(target_arch = "x86_64")]
        if crate::simd::has_avx2_fma() && self.w[0] <= 16 {
            if let Some(s64) = (self as &dyn std::any::Any).downcast_ref::<Spreader<f64>>() {
                if let KernelImpl::BSpline(k64) = &s64.kernel {
                    // SAFETY: T is f64 (the downcast succeeded): same layout.
                    let c64 = unsafe { std::slice::from_raw_parts(c.as_ptr() as *const f64, c.len()) };
                    let g64 = unsafe { std::slice::from_raw_parts_mut(grid.as_mut_ptr() as *mut f64, grid.len()) };
                    return s64.spread_real_boxes(c64, g64, threads, |a, cs, lo, bsz, bx| {
                        // SAFETY: the CPU has AVX2 and FMA (checked above).
                        unsafe { s64.spread_real_points_f64_avx2(k64, a, cs, lo, bsz, bx) }
                    });
                }
            }
        }
        match &self.kernel {
            KernelImpl::Es(k) => self.spread_real_with(k, c, grid, threads),
            KernelImpl::Gaussian(k) => self.spread_real_with(k, c, grid, threads),
            KernelImpl::BSpline(k) => self.spread_real_with(k, c, grid, threads),
        }
    }

    fn spread_real_with<K: KernelEval<T>>(&self, k: &K, c: &[T], grid: &mut [T], threads: &Threads) -> Result<()> {
        self.spread_real_boxes(c, grid, threads, |a, cs, lo, bsz, bx| {
            #[cfg(target_arch = "x86_64")]
            if crate::simd::has_avx2_fma() {
                // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
                unsafe { self.spread_real_points_avx2(k, a, cs, lo, bsz, bx) };
                return;
            }
            #[cfg(target_arch = "x86_64")]
            self.spread_real_points_w::<K, 0, false>(k, a, cs, lo, bsz, bx);
            #[cfg(not(target_arch = "x86_64"))]
            self.spread_real_points::<K, false>(k, a, cs, lo, bsz, bx);
        })
    }

    /// The subproblem scheme of real spreading: per subproblem, gather the strengths, spread
    /// them with `points(a, strengths, corner, box sizes, box)` into a private box (4 spare
    /// entries at its end), wrap-add the box into the grid.
    fn spread_real_boxes<F>(&self, c: &[T], grid: &mut [T], threads: &Threads, points: F) -> Result<()>
    where
        F: Fn(usize, &[T], [isize; 3], [usize; 3], &mut [T]) + Sync + Send,
    {
        // spreading overwrites the grid (module docs of `spread`): zero it first
        threads.chunks(grid, self.stripe, |_, r| r.iter_mut().for_each(|v| *v = T::zero()));
        let gp = SyncPtr(grid.as_mut_ptr());
        let failed: std::sync::Mutex<Option<Error>> = std::sync::Mutex::new(None);
        threads.for_each(self.subprobs.len(), |s| {
            let gp = gp;
            let (a, b) = self.subprobs[s];
            let fail = |e: Error| *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
            let mut cs = match crate::error::try_vec::<T>(b - a, "subproblem strengths") {
                Ok(v) => v,
                Err(e) => return fail(e),
            };
            cs.extend(self.perm[a..b].iter().map(|&j| c[j as usize]));
            let w = self.w;
            let mut lo = [0isize; 3];
            let mut hi = [0isize; 3];
            for d in 0..self.dim {
                let half = T::of(0.5 * w[d] as f64);
                let (mn, mx) = self.g[d][a..b].iter().fold((T::infinity(), T::neg_infinity()), |(mn, mx), &v| (mn.min(v), mx.max(v)));
                lo[d] = (mn - half).ceil().to_isize().unwrap_or(0);
                hi[d] = (mx - half).ceil().to_isize().unwrap_or(0);
            }
            let bsz = [(hi[0] - lo[0]) as usize + w[0], (hi[1] - lo[1]) as usize + w[1], (hi[2] - lo[2]) as usize + w[2]];
            let mut bx = match crate::error::try_filled_vec(bsz[0] * bsz[1] * bsz[2] + 4, T::zero(), "subproblem box") {
                Ok(v) => v,
                Err(e) => return fail(e),
            };
            points(a, &cs, lo, bsz, &mut bx);
            self.wrap_add_real(&bx, lo, bsz, gp);
        });
        failed.into_inner().unwrap_or_else(|p| p.into_inner()).map_or(Ok(()), Err)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn spread_real_points_avx2<K: KernelEval<T>>(&self, k: &K, a: usize, cs: &[T], lo: [isize; 3], bsz: [usize; 3], bx: &mut [T]) {
        self.spread_real_points::<K, false>(k, a, cs, lo, bsz, bx)
    }

    #[inline(always)]
    fn spread_real_points<K: KernelEval<T>, const F: bool>(&self, k: &K, a: usize, cs: &[T], lo: [isize; 3], bsz: [usize; 3], bx: &mut [T]) {
        macro_rules! go {
            ($($n:literal),*) => {
                match self.w[0] {
                    $($n => self.spread_real_points_w::<K, $n, F>(k, a, cs, lo, bsz, bx),)*
                    _ => self.spread_real_points_w::<K, 0, F>(k, a, cs, lo, bsz, bx),
                }
            };
        }
        specialised_widths!(go)
    }

    /// Real spreading of sorted points `a..a+cs.len()` into a box, width `W` (0: any). Rows are
    /// updated over `⌈W/4⌉·4` entries with zero weights past `W` (the box has room for that), so
    /// the row update is whole SIMD vectors.
    #[inline(always)]
    fn spread_real_points_w<K: KernelEval<T>, const W: usize, const F: bool>(&self, k: &K, a: usize, cs: &[T], lo: [isize; 3], bsz: [usize; 3], bx: &mut [T]) {
        let w = if W == 0 { self.w[0] } else { W };
        let wp = w.div_ceil(4) * 4;
        let mut ker = self.kernel_buffer();
        let mut i0 = [0isize; 3];
        let g: [&[T]; 3] = [&self.g[0], &self.g[1], &self.g[2]];
        for (q, &cv) in cs.iter().enumerate() {
            self.point_kernel::<K, false>(k, &g, a + q, &mut ker, &mut i0);
            let l = [(i0[0] - lo[0]) as usize, (i0[1] - lo[1]) as usize, (i0[2] - lo[2]) as usize];
            let mut kc = [T::zero(); MAX_WIDTH];
            for i in 0..w {
                kc[i] = ker[0][i] * cv;
            }
            for kz in 0..self.w[2] {
                let vz = ker[2][kz];
                for jy in 0..self.w[1] {
                    let v = vz * ker[1][jy];
                    let base = l[0] + bsz[0] * (l[1] + jy + bsz[1] * (l[2] + kz));
                    let row = &mut bx[base..base + wp];
                    for i in 0..wp {
                        row[i] = fma::<T, F>(kc[i], v, row[i]);
                    }
                }
            }
        }
    }

    /// Adds a real box with corner `lo` into the periodic grid (the complex wrap-add's
    /// striped locking, [`Spreader::wrap_add_with`]).
    fn wrap_add_real(&self, bx: &[T], lo: [isize; 3], bsz: [usize; 3], grid: SyncPtr<T>) {
        self.wrap_add_with(bx, lo, bsz, bsz[0], grid, |d, s| *d += *s);
    }

    /// Interpolates the real grid `grid` (length nf1·nf2·nf3, x fastest; 1D, 2D or 3D) and its
    /// gradient at the points: `out[j] = [v, ∂v/∂g_0, ∂v/∂g_1, ∂v/∂g_2]` (caller's point order;
    /// zero for the axes past the dimension), where `v(g) = Σ_l grid_l ψ(l − g)` and `g` is the
    /// point's grid coordinate (grid units; for the coordinate `x` in radians,
    /// `∂/∂x = nf/(2π) ∂/∂g`). Overwrites `out`. Needs points set by `setpts` (sorted copy).
    /// Errors: [`Error::NotSupported`] unless the kernel is a B-spline of order ≥ 2 (order 1,
    /// nearest grid point, is piecewise constant), or for 1D points kept in the caller's order
    /// ([`SpreadOpts::callers_order`]); [`Error::Alloc`] (per-subproblem scratch).
    pub fn interp_grad_real(&self, grid: &[T], out: &mut [[T; 4]], threads: &Threads) -> Result<()> {
        once_per_precision!(self, grid, out, threads, once::interp_grad_real_f64, once::interp_grad_real_f32)
    }

    /// [`Spreader::interp_grad_real`]'s body (compiled once per precision through [`once`]).
    pub(super) fn interp_grad_real_impl(&self, grid: &[T], out: &mut [[T; 4]], threads: &Threads) -> Result<()> {
        let KernelImpl::BSpline(k) = &self.kernel else {
            return Err(Error::NotSupported("gradient interpolation needs a B-spline spreader".into()));
        };
        if self.w[0] < 2 {
            return Err(Error::NotSupported("gradient interpolation needs a B-spline of order ≥ 2 (order 1 is piecewise constant)".into()));
        }
        self.needs_sorted("interp_grad_real")?;
        assert_eq!(out.len(), self.m);
        assert_eq!(grid.len(), self.nf.iter().product::<usize>());
        assert!(self.g[0].len() == self.m, "interp_grad_real needs points set by setpts (sorted copy)");
        #[cfg(target_arch = "x86_64")]
        if crate::simd::has_avx2_fma() && self.w[0] <= 16 && self.dim == 3 {
            if let Some(s64) = (self as &dyn std::any::Any).downcast_ref::<Spreader<f64>>() {
                if let KernelImpl::BSpline(k64) = &s64.kernel {
                    // SAFETY: T is f64 (the downcast succeeded): same layouts.
                    let g64 = unsafe { std::slice::from_raw_parts(grid.as_ptr() as *const f64, grid.len()) };
                    let o64 = unsafe { std::slice::from_raw_parts_mut(out.as_mut_ptr() as *mut [f64; 4], out.len()) };
                    s64.interp_grad_f64_avx2(k64, g64, o64, threads);
                    return Ok(());
                }
            }
        }
        let op = SyncPtr(out.as_mut_ptr());
        self.real_interp::<true, _, _>(&|t: T, v: &mut [T; MAX_WIDTH], dv: &mut [T; MAX_WIDTH]| k.eval_with_deriv(t, v, dv), grid, threads, |j, v| {
            let op = op;
            // SAFETY: j < M (a caller index) and each index is written once.
            unsafe { *op.0.add(j) = v };
        })
    }

    /// Interpolates the real grid `grid` (length nf1·nf2·nf3, x fastest) at the points into
    /// `out` (length M, caller's point order), overwriting it: `out[j] = Σ_l grid_l ψ(l − g_j)`.
    /// Any kernel and dimension; needs points set by `setpts` (sorted copy).
    /// Errors: [`Error::Alloc`] (per-subproblem scratch), after which `out` is partly written;
    /// [`Error::NotSupported`] for 1D points kept in the caller's order
    /// ([`SpreadOpts::callers_order`]).
    pub fn try_interp_real(&self, grid: &[T], out: &mut [T], threads: &Threads) -> Result<()> {
        once_per_precision!(self, grid, out, threads, once::interp_real_f64, once::interp_real_f32)
    }

    /// [`Spreader::try_interp_real`]'s body (compiled once per precision through [`once`]).
    pub(super) fn interp_real_impl(&self, grid: &[T], out: &mut [T], threads: &Threads) -> Result<()> {
        self.needs_sorted("interp_real")?;
        assert_eq!(out.len(), self.m);
        assert_eq!(grid.len(), self.nf.iter().product::<usize>());
        assert!(self.g[0].len() == self.m, "try_interp_real needs points set by setpts (sorted copy)");
        let op = SyncPtr(out.as_mut_ptr());
        let put = |j: usize, v: [T; 4]| {
            let op = op;
            // SAFETY: j < M (a caller index) and each index is written once.
            unsafe { *op.0.add(j) = v[0] };
        };
        match &self.kernel {
            KernelImpl::Es(k) => self.real_interp::<false, _, _>(&|t: T, v: &mut [T; MAX_WIDTH], _: &mut [T; MAX_WIDTH]| k.eval(t, v), grid, threads, put),
            KernelImpl::Gaussian(k) => self.real_interp::<false, _, _>(&|t: T, v: &mut [T; MAX_WIDTH], _: &mut [T; MAX_WIDTH]| k.eval(t, v), grid, threads, put),
            KernelImpl::BSpline(k) => self.real_interp::<false, _, _>(&|t: T, v: &mut [T; MAX_WIDTH], _: &mut [T; MAX_WIDTH]| k.eval(t, v), grid, threads, put),
        }
    }

    /// The subproblem loop of real interpolation: per subproblem, [`Self::real_points`] into a
    /// local buffer, then `put(caller index, [v, ∂_0 v, ∂_1 v, ∂_2 v])` (derivatives only when
    /// `GRAD`; `eval(t, values, derivatives)` evaluates the kernel as [`KernelEval::eval`]).
    fn real_interp<const GRAD: bool, E, P>(&self, eval: &E, grid: &[T], threads: &Threads, put: P) -> Result<()>
    where
        E: Fn(T, &mut [T; MAX_WIDTH], &mut [T; MAX_WIDTH]) + Sync,
        P: Fn(usize, [T; 4]) + Sync,
    {
        let failed: std::sync::Mutex<Option<Error>> = std::sync::Mutex::new(None);
        threads.for_each(self.subprobs.len(), |s| {
            let (a, b) = self.subprobs[s];
            let mut loc = match crate::error::try_filled_vec(b - a, [T::zero(); 4], "subproblem interpolation values") {
                Ok(v) => v,
                Err(e) => {
                    *failed.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                    return;
                }
            };
            #[cfg(target_arch = "x86_64")]
            let done = if crate::simd::has_avx2_fma() {
                // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
                unsafe { self.real_points_avx2::<GRAD, E>(eval, a, grid, &mut loc) };
                true
            } else {
                false
            };
            #[cfg(not(target_arch = "x86_64"))]
            let done = false;
            if !done {
                #[cfg(target_arch = "x86_64")]
                self.real_points_w::<GRAD, E, 0, false>(eval, a, grid, &mut loc);
                #[cfg(not(target_arch = "x86_64"))]
                self.real_points::<GRAD, E, false>(eval, a, grid, &mut loc);
            }
            for (q, v) in loc.into_iter().enumerate() {
                put(self.perm[a + q] as usize, v);
            }
        });
        failed.into_inner().unwrap_or_else(|p| p.into_inner()).map_or(Ok(()), Err)
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn real_points_avx2<const GRAD: bool, E: Fn(T, &mut [T; MAX_WIDTH], &mut [T; MAX_WIDTH])>(&self, eval: &E, a: usize, grid: &[T], out: &mut [[T; 4]]) {
        self.real_points::<GRAD, E, false>(eval, a, grid, out)
    }

    #[inline(always)]
    fn real_points<const GRAD: bool, E: Fn(T, &mut [T; MAX_WIDTH], &mut [T; MAX_WIDTH]), const F: bool>(&self, eval: &E, a: usize, grid: &[T], out: &mut [[T; 4]]) {
        macro_rules! go {
            ($($n:literal),*) => {
                match self.w[0] {
                    $($n => self.real_points_w::<GRAD, E, $n, F>(eval, a, grid, out),)*
                    _ => self.real_points_w::<GRAD, E, 0, F>(eval, a, grid, out),
                }
            };
        }
        specialised_widths!(go)
    }

    /// [`Self::real_points`] for the width `W` (`W = 0`: any width): value (and, when `GRAD`,
    /// the derivatives in grid units) of the interpolant at sorted points `a..a+out.len()`, in
    /// 1D, 2D or 3D (unused axes have width 1 and weight 1).
    #[inline(always)]
    fn real_points_w<const GRAD: bool, E: Fn(T, &mut [T; MAX_WIDTH], &mut [T; MAX_WIDTH]), const W: usize, const F: bool>(&self, eval: &E, a: usize, grid: &[T], out: &mut [[T; 4]]) {
        let w = if W == 0 { self.w[0] } else { W };
        let (wy, wz) = (self.w[1], self.w[2]);
        // x rows are processed over wp = ⌈w/4⌉·4 entries with zero weights past w
        let wp = w.div_ceil(4) * 4;
        let nf = self.nf;
        let half = T::of(0.5 * w as f64);
        let mut v = [[T::zero(); MAX_WIDTH]; 3];
        let mut dv = [[T::zero(); MAX_WIDTH]; 3];
        let mut scratch = [T::zero(); MAX_WIDTH];
        for d in self.dim..3 {
            v[d][0] = T::one();
        }
        for (q, o) in out.iter_mut().enumerate() {
            let p = a + q;
            let mut i0 = [0isize; 3];
            for d in 0..self.dim {
                let gv = self.g[d][p];
                let start = (gv - half).ceil();
                i0[d] = start.to_isize().unwrap_or(0);
                eval(start - gv, &mut v[d], &mut dv[d]);
            }
            for i in w..wp {
                v[0][i] = T::zero();
                dv[0][i] = T::zero();
            }
            let contiguous = i0[0] >= 0 && i0[0] as usize + wp <= nf[0];
            // wrapped row indices (a point's window starts within one period of the grid)
            let wrap = |v: isize, n: usize| -> usize {
                if v < 0 {
                    (v + n as isize) as usize
                } else if v as usize >= n {
                    v as usize - n
                } else {
                    v as usize
                }
            };
            let mut gyi = [0usize; MAX_WIDTH];
            let mut gzi = [0usize; MAX_WIDTH];
            for t in 0..wy {
                gyi[t] = wrap(i0[1] + t as isize, nf[1]);
            }
            for t in 0..wz {
                gzi[t] = wrap(i0[2] + t as isize, nf[2]);
            }
            // row accumulators: Σ_{j,k} row·(vy vz), row·(dvy vz), row·(vy dvz)
            let mut av = [T::zero(); MAX_WIDTH];
            let mut ay = [T::zero(); MAX_WIDTH];
            let mut az = [T::zero(); MAX_WIDTH];
            for kz in 0..wz {
                let (vz, dvz) = (v[2][kz], dv[2][kz]);
                let zbase = nf[1] * gzi[kz];
                for jy in 0..wy {
                    let base = nf[0] * (gyi[jy] + zbase);
                    let row: &[T] = if contiguous {
                        let s = base + i0[0] as usize;
                        &grid[s..s + wp]
                    } else {
                        for (dx, sv) in scratch[..w].iter_mut().enumerate() {
                            *sv = grid[base + wrap(i0[0] + dx as isize, nf[0])];
                        }
                        &scratch[..wp]
                    };
                    let wv = v[1][jy] * vz;
                    for i in 0..wp {
                        av[i] = fma::<T, F>(row[i], wv, av[i]);
                    }
                    if GRAD {
                        let wy = dv[1][jy] * vz;
                        let wz = v[1][jy] * dvz;
                        for i in 0..wp {
                            ay[i] = fma::<T, F>(row[i], wy, ay[i]);
                            az[i] = fma::<T, F>(row[i], wz, az[i]);
                        }
                    }
                }
            }
            let (mut val, mut gx, mut gy, mut gz) = (T::zero(), T::zero(), T::zero(), T::zero());
            for i in 0..wp {
                val = fma::<T, F>(av[i], v[0][i], val);
            }
            if GRAD {
                for i in 0..wp {
                    gx = fma::<T, F>(av[i], dv[0][i], gx);
                    gy = fma::<T, F>(ay[i], v[0][i], gy);
                    gz = fma::<T, F>(az[i], v[0][i], gz);
                }
            }
            // ∂/∂g ψ(l − g) = −ψ'(l − g)
            *o = [val, -gx, -gy, -gz];
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{exact_coord, periodic_offset};
    use super::*;
    use num_complex::Complex;
    use rand::{Rng, SeedableRng};

    #[test]
    fn bspline_spread_and_gradient() {
        let nf = [16usize, 18, 20];
        let th = Threads::new(2).unwrap();
        let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
        let m = 200;
        let tp = 2.0 * std::f64::consts::PI;
        let x: Vec<Vec<f64>> = (0..3).map(|_| (0..m).map(|_| rng.gen_range(-7.0..7.0)).collect()).collect();
        for order in [3usize, 4, 5, 6, 8, 10, 12] {
            // orders above 8: two 512-bit row vectors; the grid must hold twice the width
            let nf = if order > 8 { [24usize, 26, 28] } else { nf };
            let p = BSplineParams { order };
            let mut sp = Spreader::<f64>::new_bspline(3, &nf, &p, SpreadOpts { max_subprob_size: 31, ..Default::default() }).unwrap();
            sp.setpts([&x[0], &x[1], &x[2]], &th).unwrap();
            // spreading a unit strength gives weights summing to one (partition of unity)
            let c: Vec<Complex<f64>> = (0..m).map(|_| Complex::new(rng.gen_range(-1.0..1.0), 0.0)).collect();
            let n: usize = nf.iter().product();
            let mut grid = vec![Complex::new(0.0, 0.0); n];
            sp.spread(&c, &mut grid, &th);
            let cre: Vec<f64> = c.iter().map(|v| v.re).collect();
            let mut rg = vec![0.0; n];
            sp.spread_real(&cre, &mut rg, &th);
            for l in 0..n {
                assert!((rg[l] - grid[l].re).abs() < 1e-14, "{l}");
            }
            let tot: f64 = grid.iter().map(|v| v.re).sum();
            let ctot: f64 = c.iter().map(|v| v.re).sum();
            assert!((tot - ctot).abs() < 1e-12);
            // direct check of one point's weights
            let g0: [f64; 3] = [0, 1, 2].map(|d| exact_coord(x[d][0], nf[d]));
            let direct = |l: [usize; 3]| -> f64 { (0..3).map(|d| p.value(periodic_offset(l[d], g0[d], nf[d]))).product() };
            // gradient interpolation of a smooth real grid vs finite differences of the value
            let gr: Vec<f64> = (0..n)
                .map(|l| {
                    let (i, j, k) = (l % nf[0], (l / nf[0]) % nf[1], l / (nf[0] * nf[1]));
                    (tp * i as f64 / nf[0] as f64).sin() + (tp * 2.0 * j as f64 / nf[1] as f64).cos() * (tp * k as f64 / nf[2] as f64).sin()
                })
                .collect();
            let mut out = vec![[0.0; 4]; m];
            sp.interp_grad_real(&gr, &mut out, &th).unwrap();
            let grc: Vec<Complex<f64>> = gr.iter().map(|&v| Complex::new(v, 0.0)).collect();
            let mut vals = vec![Complex::new(0.0, 0.0); m];
            sp.interp(&grc, &mut vals, &th);
            let mut val0 = 0.0;
            for l in 0..n {
                val0 += gr[l] * direct([l % nf[0], (l / nf[0]) % nf[1], l / (nf[0] * nf[1])]);
            }
            assert!((val0 - out[0][0]).abs() < 1e-12);
            for j in 0..m {
                assert!((vals[j].re - out[j][0]).abs() < 1e-12);
            }
            // finite differences in each grid coordinate
            let h = 1e-5;
            for d in 0..3 {
                let mut xp = x.clone();
                let mut xm = x.clone();
                for j in 0..m {
                    xp[d][j] += h * tp / nf[d] as f64;
                    xm[d][j] -= h * tp / nf[d] as f64;
                }
                let mut sp2 = Spreader::<f64>::new_bspline(3, &nf, &p, SpreadOpts::default()).unwrap();
                let mut vp = vec![Complex::new(0.0, 0.0); m];
                let mut vm = vec![Complex::new(0.0, 0.0); m];
                sp2.setpts([&xp[0], &xp[1], &xp[2]], &th).unwrap();
                sp2.interp(&grc, &mut vp, &th);
                sp2.setpts([&xm[0], &xm[1], &xm[2]], &th).unwrap();
                sp2.interp(&grc, &mut vm, &th);
                for j in 0..m {
                    let fd = (vp[j].re - vm[j].re) / (2.0 * h);
                    let tolr = if order >= 4 { 1e-6 } else { 1e-3 };
                    assert!((fd - out[j][1 + d]).abs() < tolr, "order {order} d {d} j {j}: {fd} vs {}", out[j][1 + d]);
                }
            }
        }
    }
}
