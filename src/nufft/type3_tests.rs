//! NUFFT type 3 against an independent direct sum `f_k = Σ_j c_j e^{± i s_k·x_j}` (the
//! acceptance contract: relative l2 error ≤ 10·tol), including large space-bandwidth
//! products, off-centre points and frequencies, both precisions, ntrans, and the error paths.

use super::type3::{Extent, KernelFt, Type3Grid, Type3Plan};
use super::NufftOpts;
use crate::error::Error;
use crate::kernel::{Kernel, KernelKind};
use crate::real::Real;
use num_complex::Complex;
use rand::{Rng, SeedableRng};

/// One random problem: per axis points in `cx ± xh`, frequencies in `cs ± sh`.
struct Prob {
    dim: usize,
    m: usize,
    n: usize,
    xh: [f64; 3],
    cx: [f64; 3],
    sh: [f64; 3],
    cs: [f64; 3],
}

fn uniform(n: usize, c: f64, h: f64, seed: u64) -> Vec<f64> {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    (0..n).map(|_| c + h * rng.gen_range(-1.0..1.0)).collect()
}

fn rand_c(n: usize, seed: u64) -> Vec<Complex<f64>> {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    (0..n).map(|_| Complex::new(rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0))).collect()
}

/// `a + b` as an unevaluated double-double (Knuth's two-sum).
fn two_sum(a: f64, b: f64) -> (f64, f64) {
    let s = a + b;
    let bb = s - a;
    (s, (a - (s - bb)) + (b - bb))
}

/// The direct sum, with each phase `Σ_d s_d x_d` formed exactly as a double-double (products
/// by fused multiply-add, sums by two-sum), so the oracle's own rounding stays at ~1e-16
/// absolute even when the phases are ~1e7 rad.
fn direct3(dim: usize, x: &[Vec<f64>; 3], s: &[Vec<f64>; 3], c: &[Complex<f64>], iflag: i32) -> Vec<Complex<f64>> {
    let sign = if iflag >= 0 { 1.0 } else { -1.0 };
    let m = c.len();
    (0..s[0].len())
        .map(|k| {
            let mut acc = Complex::new(0.0, 0.0);
            for j in 0..m {
                let (mut hi, mut lo) = (0.0, 0.0);
                for d in 0..dim {
                    let p = s[d][k] * x[d][j];
                    let e = s[d][k].mul_add(x[d][j], -p);
                    let (h2, l2) = two_sum(hi, p);
                    hi = h2;
                    lo += l2 + e;
                }
                let ph = Complex::from_polar(1.0, sign * hi) * Complex::from_polar(1.0, sign * lo);
                acc += c[j] * ph;
            }
            acc
        })
        .collect()
}

fn rel_l2(a: &[Complex<f64>], b: &[Complex<f64>]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    let den: f64 = b.iter().map(|y| y.norm_sqr()).sum();
    (num / den).sqrt()
}

fn to_t<T: Real>(v: &[f64]) -> Vec<T> {
    v.iter().map(|&a| T::of(a)).collect()
}

/// Runs the plan in precision `T` and returns (relative l2 error, X·S summed over axes).
fn run<T: Real>(p: &Prob, tol: f64, iflag: i32, opts: &NufftOpts) -> (f64, f64) {
    let (e, xs, _) = run_info::<T>(p, tol, iflag, opts);
    (e, xs)
}

/// [`run`] with the plan's info after setpts.
fn run_info<T: Real>(p: &Prob, tol: f64, iflag: i32, opts: &NufftOpts) -> (f64, f64, super::NufftInfo) {
    let mut xt: [Vec<T>; 3] = Default::default();
    let mut st: [Vec<T>; 3] = Default::default();
    // the oracle takes the coordinates as the plan sees them (rounded to T)
    let mut x: [Vec<f64>; 3] = Default::default();
    let mut s: [Vec<f64>; 3] = Default::default();
    for d in 0..p.dim {
        xt[d] = to_t(&uniform(p.m, p.cx[d], p.xh[d], 100 + d as u64));
        st[d] = to_t(&uniform(p.n, p.cs[d], p.sh[d], 200 + d as u64));
        x[d] = xt[d].iter().map(|v| v.to_f64v()).collect();
        s[d] = st[d].iter().map(|v| v.to_f64v()).collect();
    }
    let c = rand_c(p.m, 7);
    let ct: Vec<Complex<T>> = c.iter().map(|z| Complex::new(T::of(z.re), T::of(z.im))).collect();
    let cw: Vec<Complex<f64>> = ct.iter().map(|z| Complex::new(z.re.to_f64v(), z.im.to_f64v())).collect();
    let mut plan = Type3Plan::<T>::new(p.dim, iflag, 1, tol, opts).unwrap();
    plan.setpts(&xt[0], &xt[1], &xt[2], &st[0], &st[1], &st[2]).unwrap();
    let mut f = vec![Complex::new(T::zero(), T::zero()); p.n];
    plan.execute(&ct, &mut f).unwrap();
    let fw: Vec<Complex<f64>> = f.iter().map(|z| Complex::new(z.re.to_f64v(), z.im.to_f64v())).collect();
    let xs: f64 = (0..p.dim).map(|d| p.xh[d] * p.sh[d]).sum();
    (rel_l2(&fw, &direct3(p.dim, &x, &s, &cw, iflag)), xs, plan.info())
}

/// The tolerance sweep of type 3 (as `tests::tolerance_sweep_types_1_and_2`): 1D–3D, σ
/// automatic, 1.25, 1.5 and 2, tolerances 1e-2 … 1e-7, single and double precision; the
/// error is at most 10·tol_used, and tol_used exceeds tol only with the warning.
#[test]
fn tolerance_sweep_type_3() {
    let probs = [prob(1, 400, 400, 3.0, 0.5, 60.0, 5.0), prob(2, 300, 300, 3.0, 0.5, 12.0, 2.0), prob(3, 300, 300, 3.0, 0.5, 6.0, 1.0)];
    let mut bad = Vec::new();
    let mut worst = 0.0f64;
    for p in &probs {
        for sigma in [None, Some(1.25), Some(1.5), Some(2.0)] {
            let opts = NufftOpts { upsampfac: sigma, nthreads: 1, ..Default::default() };
            for tol in super::tests::sweep_tols() {
                for single in [true, false] {
                    let (e, _, info) = if single { run_info::<f32>(p, tol, 1, &opts) } else { run_info::<f64>(p, tol, 1, &opts) };
                    worst = worst.max(e / info.tol_used);
                    let what = format!("{} dim {} type 3 σ {sigma:?}", if single { "f32" } else { "f64" }, p.dim);
                    bad.extend(super::tests::sweep_violation(&what, tol, e, &info));
                }
            }
        }
    }
    eprintln!("type 3 sweep: worst error / tol_used {worst:.2}");
    assert!(bad.is_empty(), "{} violations:\n{}", bad.len(), bad.join("\n"));
}

/// The conditioning floor of the problem itself: coordinates carry a relative rounding error
/// `eps` of their precision, which moves each phase `s·x` by up to `eps·(|s|·|x|)`; no
/// algorithm that rounds the rescaled coordinates (the fine grid coordinate `x'/h` is of size
/// `σXS/π`) does better than a small multiple of `eps·Σ_d X_d S_d`.
fn floor(eps: f64, xs: f64) -> f64 {
    eps * xs
}

fn prob(dim: usize, m: usize, n: usize, xh: f64, cx: f64, sh: f64, cs: f64) -> Prob {
    Prob { dim, m, n, xh: [xh; 3], cx: [cx, -0.7 * cx, 0.3 * cx], sh: [sh; 3], cs: [cs, 0.5 * cs, -cs] }
}

#[test]
fn kernel_ft_matches_the_fourier_series_and_a_fine_quadrature() {
    for &(tol, sigma) in &[(1e-3, 2.0), (1e-9, 2.0), (1e-14, 2.0), (1e-6, 1.25)] {
        let k = Kernel::for_tolerance(KernelKind::Es, tol, sigma);
        let ft = KernelFt::new(&k);
        let nf = 100;
        let fs = k.fourier_series(nf, 50);
        for kk in 0..=50 {
            let om = 2.0 * std::f64::consts::PI * kk as f64 / nf as f64;
            assert!((ft.eval(om) - fs[kk]).abs() <= 1e-13 * fs[0], "tol {tol}: k {kk}: {} vs {}", ft.eval(om), fs[kk]);
        }
        // non-integer frequencies against a composite midpoint rule on the support
        let w = k.width() as f64;
        for &om in &[0.0, 0.123, 0.777, 1.3, std::f64::consts::PI / sigma] {
            let nq = 200_000;
            let hq = w / nq as f64;
            let mid: f64 = (0..nq).map(|i| {
                let t = -0.5 * w + (i as f64 + 0.5) * hq;
                k.value(t) * (om * t).cos() * hq
            }).sum();
            // the deconvolution factor must be far more accurate than tol
            let diff = (ft.eval(om) - mid).abs() / fs[0];
            eprintln!("ψ̂ tol {tol:e} σ {sigma} ω {om}: relative difference {diff:.1e}");
            assert!(diff <= 1e-2 * tol + 1e-12, "tol {tol:e} ω {om}: {} vs {mid}", ft.eval(om));
        }
    }
}

/// The band interpolant of `KernelFt::for_band` (Chebyshev in ω² of ln ψ̂) against the
/// quadrature it replaces, at 2001 frequencies across the band and its margin (not its nodes),
/// to 1e-14 relative plus the quadrature's rounding; and against an independent, finer rule
/// (Gauss–Legendre with 4w + 64 nodes, compensated sum) to max(1e-2·tol, 1e-11), the accuracy
/// of the quadrature itself. Every ES kernel of the σ table's range gets an interpolant; outside the
/// band the quadrature is used.
#[test]
fn kernel_ft_band_interpolant_matches_the_quadrature() {
    let pi = std::f64::consts::PI;
    let mut cases = Vec::new();
    for &sigma in &[1.25, 1.5, 2.0, 2.5] {
        for &tol in &[1e-2, 1e-4, 1e-6, 1e-9, 1e-12, 1e-14] {
            cases.push((KernelKind::Es, tol, sigma, true));
        }
    }
    // explicit σ outside the table, and the truncated Gaussian: the interpolant where it passes
    // its check, the quadrature otherwise; either way the same values
    for &(tol, sigma) in &[(1e-9, 1.1), (1e-14, 1.15), (1e-6, 4.0)] {
        cases.push((KernelKind::Es, tol, sigma, false));
    }
    for &tol in &[1e-3, 1e-9, 1e-14] {
        cases.push((KernelKind::Gaussian, tol, 2.0, false));
    }
    for (kind, tol, sigma, must_fit) in cases {
        let k = Kernel::for_tolerance(kind, tol, sigma);
        let ft = KernelFt::for_band(&k, pi / sigma);
        assert!(!must_fit || ft.has_band(), "{kind:?} tol {tol:e} σ {sigma}: no interpolant");
        let w = k.width();
        let (t, wq) = crate::quad::gauss_legendre(4 * w + 64, 0.0, 0.5 * w as f64);
        let a: Vec<f64> = t.iter().zip(&wq).map(|(&ti, &wi)| 2.0 * wi * k.value(ti)).collect();
        let abs_sum: f64 = a.iter().map(|v| v.abs()).sum();
        let (mut worst_q, mut worst_fine) = (0.0f64, 0.0f64);
        for i in 0..=2000 {
            let om = 1.0101 * (pi / sigma) * i as f64 / 2000.0;
            let (mut s, mut comp) = (0.0, 0.0);
            for (&ti, &ai) in t.iter().zip(&a) {
                let (hi, lo) = two_sum(s, ai * (om * ti).cos());
                s = hi;
                comp += lo;
            }
            let fine = s + comp;
            let (v, q) = (ft.eval(om), ft.eval_quadrature(om));
            let floor = 16.0 * f64::EPSILON * abs_sum;
            assert!((v - q).abs() <= 1e-14 * q.abs() + floor, "{kind:?} tol {tol:e} σ {sigma} ω {om}: {v} vs quadrature {q}");
            // the rule with 2w + 16 nodes is itself that close to the finer one (for w ≤ 3 only
            // about 1e-7: the kernel's edge value e^{−β} is not small there)
            assert!((v - fine).abs() <= (1e-2 * tol).max(1e-11) * fine.abs() + floor,
                    "{kind:?} tol {tol:e} σ {sigma} ω {om}: {v} vs fine rule {fine}");
            worst_q = worst_q.max((v - q).abs() / q.abs());
            worst_fine = worst_fine.max((v - fine).abs() / fine.abs());
        }
        eprintln!("ψ̂ {kind:?} tol {tol:e} σ {sigma} w {w}: band interpolant {}, relative difference to the quadrature \
                   {worst_q:.1e}, to the finer rule {worst_fine:.1e}", ft.has_band());
        // outside the band: the quadrature itself
        for &om in &[1.02 * pi / sigma, 2.0 * pi - pi / sigma, 7.5] {
            assert_eq!(ft.eval(om), ft.eval_quadrature(om));
        }
    }
}

#[test]
fn extent_and_grid_follow_finufft_rules() {
    let e = Extent::of(&[1.0f64, 3.0, 2.0]);
    assert_eq!(e, Extent { centre: 2.0, half: 1.0 });
    // nearly centred: the centre is dropped and the half-width grown
    let e = Extent::of(&[-1.0f64, 1.1]);
    assert!(e.centre == 0.0 && (e.half - 1.1).abs() < 1e-15, "{e:?}");
    assert_eq!(Extent::of::<f64>(&[]), Extent { centre: 0.0, half: 0.0 });
    assert_eq!(Extent::of(&[-1.7e308f64, 1.7e308]), Extent { centre: 0.0, half: 1.7e308 });
    let g = Type3Grid::new(0, 100.0, 50.0, 2.0, 7, 1 << 30).unwrap();
    assert!(g.nf as f64 >= 4.0 * 5000.0 / std::f64::consts::PI + 8.0 && g.nf.is_multiple_of(2));
    // the rescaled points stay w/2 + 1/2 grid points inside ±nf/2
    assert!(100.0 / g.gamma / g.h + 3.5 <= g.nf as f64 / 2.0 + 1e-9);
    // X = S = 0: both replaced by 1
    let g0 = Type3Grid::new(0, 0.0, 0.0, 2.0, 7, 1 << 30).unwrap();
    assert!(g0.nf >= 14 && g0.gamma > 0.0);
    assert!(matches!(Type3Grid::new(1, 1e10, 1e10, 2.0, 7, 1 << 30), Err(Error::Modes(m)) if m.contains("axis 1")));
    assert!(matches!(Type3Grid::new(2, 1e300, 1e10, 2.0, 7, 1 << 30), Err(Error::Range(m)) if m.contains("axis 2")));
}

/// The accuracy table: relative l2 error against the direct sum, f64, tol 1e-2 … 1e-12,
/// space-bandwidth products X·S from 30 to 1e6 (1D), with points and frequencies off centre.
#[test]
fn accuracy_f64_1d_large_space_bandwidth() {
    let opts = NufftOpts { nthreads: 2, ..Default::default() };
    let probs = [
        prob(1, 300, 300, 3.0, 0.0, 10.0, 0.0),
        prob(1, 300, 300, 30.0, 50.0, 100.0, -40.0),
        prob(1, 200, 200, 1000.0, 2500.0, 1000.0, 300.0),
    ];
    for p in &probs {
        for &tol in &[1e-2, 1e-4, 1e-6, 1e-9, 1e-12] {
            for iflag in [1, -1] {
                let (err, xs) = run::<f64>(p, tol, iflag, &opts);
                let bound = 10.0 * tol.max(floor(f64::EPSILON, xs));
                eprintln!("type3 1D f64 XS {xs:e} C {} D {} tol {tol:e} iflag {iflag:+}: err {err:.2e} (bound {bound:.1e})",
                          p.cx[0], p.cs[0]);
                assert!(err <= bound, "XS {xs:e} tol {tol:e}: err {err:e} > {bound:e}");
            }
        }
    }
}

#[test]
fn accuracy_f64_2d_3d() {
    let opts = NufftOpts { nthreads: 2, ..Default::default() };
    let probs = [prob(2, 250, 250, 10.0, 4.0, 30.0, 20.0), prob(3, 200, 200, 3.0, 1.0, 8.0, -5.0),
                 prob(2, 200, 200, 30.0, -1000.0, 30.0, 0.0)];
    for p in &probs {
        for &tol in &[1e-2, 1e-5, 1e-8, 1e-12] {
            let (err, xs) = run::<f64>(p, tol, 1, &opts);
            let bound = 10.0 * tol.max(floor(f64::EPSILON, xs));
            eprintln!("type3 {}D f64 XS {xs:e} tol {tol:e}: err {err:.2e} (bound {bound:.1e})", p.dim);
            assert!(err <= bound, "{}D XS {xs:e} tol {tol:e}: err {err:e} > {bound:e}", p.dim);
        }
    }
}

#[test]
fn accuracy_f32() {
    let opts = NufftOpts { nthreads: 2, ..Default::default() };
    for p in [prob(1, 300, 300, 3.0, 2.0, 10.0, -20.0), prob(2, 200, 200, 3.0, 0.0, 8.0, 3.0),
              prob(3, 150, 150, 2.0, 1.0, 5.0, 2.0)] {
        for &tol in &[1e-2, 1e-3, 1e-4, 1e-5] {
            let (err, xs) = run::<f32>(&p, tol, -1, &opts);
            let bound = 10.0 * tol.max(floor(f32::EPSILON as f64, xs));
            eprintln!("type3 {}D f32 XS {xs:e} tol {tol:e}: err {err:.2e} (bound {bound:.1e})", p.dim);
            assert!(err <= bound, "{}D f32 XS {xs:e} tol {tol:e}: err {err:e} > {bound:e}", p.dim);
        }
    }
}

#[test]
fn gaussian_kernel_and_other_sigma() {
    use crate::kernel::KernelKind::{Es, Gaussian};
    for (kernel, upsampfac, tol) in [(Gaussian, None, 1e-6), (Gaussian, None, 1e-10), (Es, Some(1.5), 1e-8), (Es, Some(1.25), 1e-5)] {
        let opts = NufftOpts { nthreads: 1, kernel, upsampfac, ..Default::default() };
        let (err, xs) = run::<f64>(&prob(2, 200, 200, 20.0, 3.0, 20.0, 7.0), tol, 1, &opts);
        eprintln!("type3 kernel {kernel:?} σ {upsampfac:?} tol {tol:e} XS {xs:e}: err {err:.2e}");
        assert!(err <= 10.0 * tol, "kernel {kernel:?} σ {upsampfac:?} tol {tol:e}: err {err:e}");
    }
}

#[test]
fn ntrans_and_reuse() {
    let (m, n, nt) = (120, 90, 3);
    let x = [uniform(m, 1.0, 5.0, 1), uniform(m, 0.0, 2.0, 2), vec![]];
    let s = [uniform(n, -3.0, 9.0, 3), uniform(n, 0.5, 4.0, 4), vec![]];
    let c = rand_c(m * nt, 9);
    let mut plan = Type3Plan::<f64>::new(2, 1, nt, 1e-10, &NufftOpts::default()).unwrap();
    plan.setpts(&x[0], &x[1], &[], &s[0], &s[1], &[]).unwrap();
    let mut f = vec![Complex::new(0.0, 0.0); n * nt];
    plan.execute(&c, &mut f).unwrap();
    for t in 0..nt {
        let ex = direct3(2, &x, &s, &c[t * m..(t + 1) * m], 1);
        let err = rel_l2(&f[t * n..(t + 1) * n], &ex);
        assert!(err < 1e-9, "transform {t}: {err:e}");
    }
    // new points on the same plan (different extents → different grid)
    let x2 = [uniform(m, -40.0, 1.0, 5), uniform(m, 0.0, 0.1, 6), vec![]];
    plan.setpts(&x2[0], &x2[1], &[], &s[0], &s[1], &[]).unwrap();
    plan.execute(&c, &mut f).unwrap();
    let ex = direct3(2, &x2, &s, &c[..m], 1);
    assert!(rel_l2(&f[..n], &ex) < 1e-9);
    let info = plan.info();
    assert!(info.nf[0] >= 2 * info.kernel_width && info.nf[2] == 1);
}

#[test]
fn degenerate_extents_and_empty_sets() {
    let opts = NufftOpts { nthreads: 1, ..Default::default() };
    let mut plan = Type3Plan::<f64>::new(1, 1, 1, 1e-9, &opts).unwrap();
    // all points equal (X = 0), all frequencies equal (S = 0), and both
    for (xv, sv) in [(vec![2.5; 5], vec![-1.0, 3.0, 7.0]), (vec![-1.0, 0.5, 4.0], vec![1e3; 2]), (vec![1.5; 3], vec![-2.0; 2])] {
        let c = rand_c(xv.len(), 3);
        plan.setpts(&xv, &[], &[], &sv, &[], &[]).unwrap();
        let mut f = vec![Complex::new(0.0, 0.0); sv.len()];
        plan.execute(&c, &mut f).unwrap();
        let ex = direct3(1, &[xv.clone(), vec![], vec![]], &[sv.clone(), vec![], vec![]], &c, 1);
        assert!(rel_l2(&f, &ex) < 1e-8, "{xv:?} {sv:?}: {:e}", rel_l2(&f, &ex));
    }
    // M = 0: f = 0; N = 0: nothing to write
    plan.setpts(&[], &[], &[], &[1.0, 2.0], &[], &[]).unwrap();
    let mut f = vec![Complex::new(1.0, 1.0); 2];
    plan.execute(&[], &mut f).unwrap();
    assert!(f.iter().all(|z| z.norm() == 0.0));
    plan.setpts(&[1.0, 2.0], &[], &[], &[], &[], &[]).unwrap();
    plan.execute(&[Complex::new(1.0, 0.0); 2], &mut []).unwrap();
}

#[test]
fn errors_are_named_and_keep_the_plan_usable() {
    let opts = NufftOpts { nthreads: 1, ..Default::default() };
    assert!(matches!(Type3Plan::<f64>::new(4, 1, 1, 1e-6, &opts), Err(Error::Dim(_))));
    assert!(matches!(Type3Plan::<f64>::new(1, 1, 0, 1e-6, &opts), Err(Error::InvalidArg(_))));
    assert!(matches!(Type3Plan::<f64>::new(1, 1, 1, f64::NAN, &opts), Err(Error::Tol(_))));
    assert!(matches!(Type3Plan::<f64>::new(1, 1, 1, 1e-6, &NufftOpts { upsampfac: Some(9.0), ..opts.clone() }), Err(Error::InvalidArg(m)) if m.contains("opts.upsampfac")));
    let mut plan = Type3Plan::<f64>::new(2, -1, 1, 1e-6, &opts).unwrap();
    let mut f = vec![Complex::new(0.0, 0.0); 2];
    let c = vec![Complex::new(1.0, 0.0); 3];
    assert!(matches!(plan.execute(&c, &mut f), Err(Error::NoPoints(_))));
    let (x, y) = ([0.1, 0.2, 0.3], [1.0, 2.0, 3.0]);
    let (s, t) = ([5.0, -5.0], [1.0, 0.0]);
    plan.setpts(&x, &y, &[], &s, &t, &[]).unwrap();
    let good = {
        plan.execute(&c, &mut f).unwrap();
        f.clone()
    };
    let e = plan.setpts(&x, &[1.0, f64::NAN, 3.0], &[], &s, &t, &[]).unwrap_err();
    assert!(matches!(&e, Error::NonFinite(m) if m.contains("y[1]") && m.contains("point 1")), "{e:?}");
    let e = plan.setpts(&x, &y, &[], &s, &[0.0, f64::INFINITY], &[]).unwrap_err();
    assert!(matches!(&e, Error::NonFinite(m) if m.contains("t[1]") && m.contains("frequency 1")), "{e:?}");
    assert!(matches!(plan.setpts(&x, &y[..2], &[], &s, &t, &[]), Err(Error::NPoints(_))));
    assert!(matches!(plan.setpts(&x, &y, &[], &s, &t[..1], &[]), Err(Error::NPoints(_))));
    let e = plan.setpts(&x, &y, &[], &[1e12, -1e12], &t, &[]).unwrap_err();
    assert!(matches!(&e, Error::Modes(m) if m.contains("space-bandwidth")), "{e:?}");
    let e = plan.setpts(&[-1.7e308, 0.0, 1.7e308], &y, &[], &s, &t, &[]).unwrap_err();
    assert!(matches!(&e, Error::Range(_)), "{e:?}");
    // the previous points are kept after every one of these
    plan.execute(&c, &mut f).unwrap();
    assert_eq!(f, good);
    assert!(matches!(plan.execute(&c[..2], &mut f), Err(Error::InvalidArg(_))));
    let bad = vec![Complex::new(f64::NAN, 0.0); 3];
    assert!(matches!(plan.execute(&bad, &mut f), Err(Error::Range(m)) if m.contains("f[")));
}

/// The backend of a type-3 plan is decided by `crate::plans::NufftPlan::new`: CUDA goes to the GPU type 3
/// (NO_DEVICE on a machine without one, after the arguments are checked), never to a refusal;
/// the CPU executor itself refuses CUDA options.
#[test]
fn type3_backend_is_chosen_by_dispatch() {
    use super::options::BackendChoice;
    use crate::plans::NufftPlan;
    let cuda = NufftOpts { backend: BackendChoice::Cuda, nthreads: 1, ..Default::default() };
    assert!(matches!(Type3Plan::<f64>::new(1, 1, 1, 1e-6, &cuda), Err(Error::NotSupported(_))));
    assert!(matches!(NufftPlan::<f64>::new(3, 4, &[], 1, 1, 1e-6, &cuda), Err(Error::Dim(_))));
    match NufftPlan::<f64>::new(3, 2, &[], 1, 1, 1e-6, &cuda) {
        Err(Error::NoDevice(_)) => {}
        Ok(p) => assert_eq!(p.info().backend, super::Backend::Cuda),
        Err(e) => panic!("type 3 with CUDA: {e:?}"),
    }
    let cpu = NufftPlan::<f64>::new(3, 2, &[], 1, 1, 1e-6, &NufftOpts { nthreads: 1, ..Default::default() }).unwrap();
    assert_eq!(cpu.info().backend, super::Backend::Cpu);
}
