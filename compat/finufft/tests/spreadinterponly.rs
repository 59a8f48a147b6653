//! `opts.spreadinterponly = 1` (types 1 and 2): spreading and interpolation only, checked
//! against direct sums over the grid written from FINUFFT 2.5's definition — grid point `i` of
//! an axis of `N` at `x = −π + 2πi/N`, a point's grid coordinate `(x/2π + ½ mod 1)·N`, the
//! kernel periodic on the grid — with the kernel's exact values (`Kernel::value`, not the
//! spreader's piecewise polynomials), to a tenth of the tolerance.

mod common;
use common::*;
use farfield::kernel::Kernel;
use farfield::nufft::params::{choose_kernel, Precision};
use farfield::nufft::NufftOpts;
use num_complex::Complex;
use std::ptr::null_mut;

/// The kernel the plan uses: FINUFFT's σ (2 when automatic) and the tolerance, as documented.
fn kernel_of<T: Prec>(dim: usize, n: [usize; 3], tol: f64, sigma: f64) -> Kernel {
    let o = NufftOpts { upsampfac: Some(sigma), ..Default::default() };
    choose_kernel(tol, Precision::of::<T>(), dim, n, &o, None).1
}

/// `Π_d ψ(i_d − g_d)` with the periodic distance on each axis of the grid.
fn weight(k: &Kernel, dim: usize, n: [usize; 3], idx: [usize; 3], x: [f64; 3]) -> f64 {
    (0..dim)
        .map(|d| {
            let nd = n[d] as f64;
            let g = (x[d] / (2.0 * std::f64::consts::PI) + 0.5).rem_euclid(1.0) * nd;
            let mut dist = idx[d] as f64 - g;
            dist -= (dist / nd).round() * nd;
            k.value(dist)
        })
        .product()
}

fn check<T: Prec>(dim: usize, n: [usize; 3], sigma_opt: f64, ntr: usize) {
    let (m, tol) = (60usize, 1e-5);
    let mut rng = Rng::new(7 + dim as u64);
    let mut xs: Vec<Vec<T>> = (0..3).map(|d| if d < dim { rng.vec::<T>(m, -4.0, 4.0) } else { Vec::new() }).collect();
    let pts = points::<T>(&[&xs[0], &xs[1], &xs[2]], m);
    let total: usize = n.iter().product();
    let k = kernel_of::<T>(dim, n, tol, if sigma_opt == 0.0 { 2.0 } else { sigma_opt });
    let mut o = quiet_opts::<T>();
    o.spreadinterponly = 1;
    o.upsampfac = sigma_opt;
    let nm: Vec<i64> = n[..dim].iter().map(|&v| v as i64).collect();
    let ptr = |v: &mut Vec<T>| if v.is_empty() { null_mut() } else { v.as_mut_ptr() };
    // the spreader evaluates the kernel by piecewise polynomials accurate well below tol (5e-8
    // relative here in f64); a wrong grid position or wrap would be an O(1) error
    let bound = tol / 10.0;
    unsafe {
        let mut plan = null_mut();
        assert_eq!(T::c_makeplan(1, dim as i32, nm.as_ptr(), 1, ntr as i32, tol, &mut plan, &mut o), 0);
        let (px, py, pz) = (ptr(&mut xs[0]), ptr(&mut xs[1]), ptr(&mut xs[2]));
        assert_eq!(T::c_setpts(plan, m as i64, px, py, pz, 0, null_mut(), null_mut(), null_mut()), 0);
        // type 1: spreading onto the grid of the mode counts
        let mut c = rng.cvec::<T>(m * ntr);
        let mut f = vec![Complex::<T>::default(); total * ntr];
        assert_eq!(T::c_execute(plan, c.as_mut_ptr(), f.as_mut_ptr()), 0);
        let grid: Vec<[usize; 3]> = (0..total).map(|i| [i % n[0], (i / n[0]) % n[1], i / (n[0] * n[1])]).collect();
        for t in 0..ntr {
            let want: Vec<C64> = grid.iter().map(|&idx| {
                (0..m).map(|j| C64::new(c[t * m + j].re.to_f64v(), c[t * m + j].im.to_f64v()) * weight(&k, dim, n, idx, pts[j])).sum()
            }).collect();
            let e = rel_l2(&f[t * total..(t + 1) * total], &want);
            assert!(e < bound, "dim {dim} {} type 1 vector {t}: error {e:e}", T::NAME);
        }
        // its adjoint: interpolation of a grid at the points
        let mut g = rng.cvec::<T>(total * ntr);
        let mut out = vec![Complex::<T>::default(); m * ntr];
        assert_eq!(T::c_execute_adjoint(plan, out.as_mut_ptr(), g.as_mut_ptr()), 0);
        let interp = |g: &[Complex<T>], t: usize| -> Vec<C64> {
            (0..m).map(|j| grid.iter().enumerate().map(|(i, &idx)| {
                C64::new(g[t * total + i].re.to_f64v(), g[t * total + i].im.to_f64v()) * weight(&k, dim, n, idx, pts[j])
            }).sum()).collect()
        };
        for t in 0..ntr {
            let e = rel_l2(&out[t * m..(t + 1) * m], &interp(&g, t));
            assert!(e < bound, "dim {dim} {} adjoint vector {t}: error {e:e}", T::NAME);
        }
        assert_eq!(T::c_destroy(plan), 0);
        // type 2 with the same options interpolates the same way
        assert_eq!(T::c_makeplan(2, dim as i32, nm.as_ptr(), -1, ntr as i32, tol, &mut plan, &mut o), 0);
        assert_eq!(T::c_setpts(plan, m as i64, px, py, pz, 0, null_mut(), null_mut(), null_mut()), 0);
        let mut out2 = vec![Complex::<T>::default(); m * ntr];
        assert_eq!(T::c_execute(plan, out2.as_mut_ptr(), g.as_mut_ptr()), 0);
        assert_eq!(out, out2);
        assert_eq!(T::c_destroy(plan), 0);
    }
}

#[test]
fn spreading_and_interpolation_only() {
    check::<f64>(1, [33, 1, 1], 0.0, 2);
    check::<f64>(2, [24, 22, 1], 1.25, 1);
    check::<f64>(3, [18, 16, 20], 2.0, 1);
    check::<f32>(1, [40, 1, 1], 2.0, 1);
    check::<f32>(2, [20, 24, 1], 0.0, 2);
    check::<f32>(3, [18, 17, 16], 1.5, 1);
}
