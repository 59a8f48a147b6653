//! B-spline spreaders and gradient interpolation (for smooth particle-mesh Ewald forces,
//! Essmann et al. 1995 eq. 4.9): for each point, the value of the interpolant of a **real**
//! 3D grid and its derivatives with respect to the point's grid coordinates, in one pass.
//!
//! Kept apart from the spreader's core loops (`mod.rs`, `inner.rs`): it only reads the sorted
//! points and subproblems that [`Spreader::setpts`] made.

use super::{simd, KernelImpl, SpreadOpts, Spreader};
use crate::error::{Error, Result};
use crate::kernel::bspline::{BSplineEval, BSplineParams};
use crate::kernel::gaussian::GaussParams;
use crate::kernel::{Kernel, MAX_WIDTH};
use crate::real::Real;
use crate::threads::{SyncPtr, Threads};

impl<T: Real> Spreader<T> {
    /// A spreader whose kernel is the centred cardinal B-spline of order `p.order`
    /// (`2 ≤ order ≤ 32`, width = order; see [`crate::kernel::bspline`]).
    /// Errors: [`Error::InvalidArg`] (order), and those of [`Spreader::new`].
    pub fn new_bspline(dim: usize, nf: &[usize], p: &BSplineParams, opts: SpreadOpts) -> Result<Self> {
        if p.order < 2 || p.order > MAX_WIDTH {
            return Err(Error::InvalidArg(format!("B-spline order {} not in 2..={MAX_WIDTH}", p.order)));
        }
        // `Spreader::new` uses its kernel argument for the width and the evaluator only:
        // build it with a kernel of the same width, then put the B-spline evaluator in.
        let mut s = Self::new(dim, nf, &Kernel::Gaussian(GaussParams { w: p.order, tau: 1.0 }), opts)?;
        s.kernel = KernelImpl::BSpline(BSplineEval::new(p));
        Ok(s)
    }

    /// Interpolates the real 3D grid `grid` (length nf1·nf2·nf3, x fastest) and its gradient at
    /// the points: `out[j] = [v, ∂v/∂g_0, ∂v/∂g_1, ∂v/∂g_2]` (caller's point order), where
    /// `v(g) = Σ_l grid_l ψ(l − g)` and `g` is the point's grid coordinate (grid units; for the
    /// coordinate `x` in radians, `∂/∂x = nf/(2π) ∂/∂g`). Overwrites `out`.
    /// Errors: [`Error::NotSupported`] unless the spreader is 3D with a B-spline kernel.
    pub fn interp_grad_real(&self, grid: &[T], out: &mut [[T; 4]], threads: &Threads) -> Result<()> {
        let KernelImpl::BSpline(k) = &self.kernel else {
            return Err(Error::NotSupported("gradient interpolation needs a B-spline spreader".into()));
        };
        if self.dim != 3 {
            return Err(Error::NotSupported("gradient interpolation is implemented in 3D only".into()));
        }
        assert_eq!(out.len(), self.m);
        assert_eq!(grid.len(), self.nf.iter().product::<usize>());
        let op = SyncPtr(out.as_mut_ptr());
        threads.for_each(self.subprobs.len(), |s| {
            let (a, b) = self.subprobs[s];
            let mut loc = vec![[T::zero(); 4]; b - a];
            #[cfg(target_arch = "x86_64")]
            let done = if simd::has_avx2_fma() {
                // SAFETY: the CPU supports AVX2 and FMA (checked at run time).
                unsafe { self.grad_points_avx2(k, a, grid, &mut loc) };
                true
            } else {
                false
            };
            #[cfg(not(target_arch = "x86_64"))]
            let done = false;
            if !done {
                self.grad_points(k, a, grid, &mut loc);
            }
            let op = op;
            for (q, v) in loc.into_iter().enumerate() {
                // SAFETY: perm is a permutation and subproblems are disjoint: each index once.
                unsafe { *op.0.add(self.perm[a + q] as usize) = v };
            }
        });
        Ok(())
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn grad_points_avx2(&self, k: &BSplineEval<T>, a: usize, grid: &[T], out: &mut [[T; 4]]) {
        self.grad_points(k, a, grid, out)
    }

    #[inline(always)]
    fn grad_points(&self, k: &BSplineEval<T>, a: usize, grid: &[T], out: &mut [[T; 4]]) {
        macro_rules! go {
            ($($n:literal),*) => {
                match self.w[0] {
                    $($n => self.grad_points_w::<$n>(k, a, grid, out),)*
                    _ => self.grad_points_w::<0>(k, a, grid, out),
                }
            };
        }
        go!(2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12)
    }

    /// [`Self::grad_points`] for the width `W` (`W = 0`: any width).
    #[inline(always)]
    fn grad_points_w<const W: usize>(&self, k: &BSplineEval<T>, a: usize, grid: &[T], out: &mut [[T; 4]]) {
        let w = if W == 0 { self.w[0] } else { W };
        let nf = self.nf;
        let half = T::of(0.5 * w as f64);
        let mut v = [[T::zero(); MAX_WIDTH]; 3];
        let mut dv = [[T::zero(); MAX_WIDTH]; 3];
        let mut scratch = [T::zero(); MAX_WIDTH];
        for (q, o) in out.iter_mut().enumerate() {
            let p = a + q;
            let mut i0 = [0isize; 3];
            for d in 0..3 {
                let gv = self.g[d][p];
                let start = (gv - half).ceil();
                i0[d] = start.to_isize().unwrap_or(0);
                k.eval_with_deriv(start - gv, &mut v[d], &mut dv[d]);
            }
            let contiguous = i0[0] >= 0 && i0[0] as usize + w <= nf[0];
            // row accumulators: Σ_{j,k} row·(vy vz), row·(dvy vz), row·(vy dvz)
            let mut av = [T::zero(); MAX_WIDTH];
            let mut ay = [T::zero(); MAX_WIDTH];
            let mut az = [T::zero(); MAX_WIDTH];
            for kz in 0..w {
                let gz = (i0[2] + kz as isize).rem_euclid(nf[2] as isize) as usize;
                let (vz, dvz) = (v[2][kz], dv[2][kz]);
                for jy in 0..w {
                    let gy = (i0[1] + jy as isize).rem_euclid(nf[1] as isize) as usize;
                    let base = nf[0] * (gy + nf[1] * gz);
                    let row: &[T] = if contiguous {
                        let s = base + i0[0] as usize;
                        &grid[s..s + w]
                    } else {
                        for (dx, sv) in scratch[..w].iter_mut().enumerate() {
                            *sv = grid[base + (i0[0] + dx as isize).rem_euclid(nf[0] as isize) as usize];
                        }
                        &scratch[..w]
                    };
                    let wv = v[1][jy] * vz;
                    let wy = dv[1][jy] * vz;
                    let wz = v[1][jy] * dvz;
                    for i in 0..w {
                        av[i] += row[i] * wv;
                        ay[i] += row[i] * wy;
                        az[i] += row[i] * wz;
                    }
                }
            }
            let (mut val, mut gx, mut gy, mut gz) = (T::zero(), T::zero(), T::zero(), T::zero());
            for i in 0..w {
                val += av[i] * v[0][i];
                gx += av[i] * dv[0][i];
                gy += ay[i] * v[0][i];
                gz += az[i] * v[0][i];
            }
            // ∂/∂g ψ(l − g) = −ψ'(l − g)
            *o = [val, -gx, -gy, -gz];
        }
    }
}

#[cfg(test)]
mod tests {
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
        for order in [3usize, 4, 5, 6, 8] {
            let p = BSplineParams { order };
            let mut sp = Spreader::<f64>::new_bspline(3, &nf, &p, SpreadOpts { max_subprob_size: 31 }).unwrap();
            sp.setpts([&x[0], &x[1], &x[2]], &th).unwrap();
            // spreading a unit strength gives weights summing to one (partition of unity)
            let c: Vec<Complex<f64>> = (0..m).map(|_| Complex::new(rng.gen_range(-1.0..1.0), 0.0)).collect();
            let n: usize = nf.iter().product();
            let mut grid = vec![Complex::new(0.0, 0.0); n];
            sp.spread(&c, &mut grid, &th);
            let tot: f64 = grid.iter().map(|v| v.re).sum();
            let ctot: f64 = c.iter().map(|v| v.re).sum();
            assert!((tot - ctot).abs() < 1e-12);
            // direct check of one point's weights
            let g0: [f64; 3] = [0, 1, 2].map(|d| (x[d][0] / tp).rem_euclid(1.0) * nf[d] as f64);
            let direct = |l: [usize; 3]| -> f64 {
                (0..3)
                    .map(|d| {
                        let mut dd = l[d] as f64 - g0[d];
                        dd -= (dd / nf[d] as f64).round() * nf[d] as f64;
                        p.value(dd)
                    })
                    .product()
            };
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
                let mut sp2 = Spreader::<f64>::new_bspline(3, &nf, &p, SpreadOpts { max_subprob_size: 0 }).unwrap();
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
