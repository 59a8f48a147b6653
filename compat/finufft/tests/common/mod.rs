//! Test helpers: the exported C functions of one precision behind a trait, a small random
//! generator, and the oracles — direct sums written from FINUFFT's documented definitions
//! (independent of farfield's code).
#![allow(dead_code)]

use finufft::guru::PlanBox;
use finufft::opts::finufft_opts;
use num_complex::Complex;
use std::ffi::c_int;

pub type C64 = Complex<f64>;

/// One precision's exported guru functions and conversions.
pub trait Prec: farfield::Real {
    /// The tolerance the tests request.
    const TOL: f64;
    unsafe fn c_default_opts(o: *mut finufft_opts);
    unsafe fn c_makeplan(ty: c_int, dim: c_int, n: *const i64, iflag: c_int, ntr: c_int, eps: f64, plan: *mut *mut PlanBox<Self>,
                       o: *mut finufft_opts) -> c_int;
    #[allow(clippy::too_many_arguments)]
    unsafe fn c_setpts(p: *mut PlanBox<Self>, m: i64, x: *mut Self, y: *mut Self, z: *mut Self, nk: i64, s: *mut Self, t: *mut Self,
                     u: *mut Self) -> c_int;
    unsafe fn c_execute(p: *mut PlanBox<Self>, c: *mut Complex<Self>, f: *mut Complex<Self>) -> c_int;
    unsafe fn c_execute_adjoint(p: *mut PlanBox<Self>, c: *mut Complex<Self>, f: *mut Complex<Self>) -> c_int;
    unsafe fn c_destroy(p: *mut PlanBox<Self>) -> c_int;
}

impl Prec for f64 {
    const TOL: f64 = 1e-9;
    unsafe fn c_default_opts(o: *mut finufft_opts) {
        finufft::guru::finufft_default_opts(o)
    }
    unsafe fn c_makeplan(ty: c_int, dim: c_int, n: *const i64, iflag: c_int, ntr: c_int, eps: f64, plan: *mut *mut PlanBox<f64>,
                       o: *mut finufft_opts) -> c_int {
        finufft::guru::finufft_makeplan(ty, dim, n, iflag, ntr, eps, plan, o)
    }
    unsafe fn c_setpts(p: *mut PlanBox<f64>, m: i64, x: *mut f64, y: *mut f64, z: *mut f64, nk: i64, s: *mut f64, t: *mut f64,
                     u: *mut f64) -> c_int {
        finufft::guru::finufft_setpts(p, m, x, y, z, nk, s, t, u)
    }
    unsafe fn c_execute(p: *mut PlanBox<f64>, c: *mut C64, f: *mut C64) -> c_int {
        finufft::guru::finufft_execute(p, c, f)
    }
    unsafe fn c_execute_adjoint(p: *mut PlanBox<f64>, c: *mut C64, f: *mut C64) -> c_int {
        finufft::guru::finufft_execute_adjoint(p, c, f)
    }
    unsafe fn c_destroy(p: *mut PlanBox<f64>) -> c_int {
        finufft::guru::finufft_destroy(p)
    }
}

impl Prec for f32 {
    // type 3 in 3D reaches |s·x| ≈ 450 rad, where single precision loses ~1e-5 in the phases
    const TOL: f64 = 1e-4;
    unsafe fn c_default_opts(o: *mut finufft_opts) {
        finufft::guru::finufftf_default_opts(o)
    }
    unsafe fn c_makeplan(ty: c_int, dim: c_int, n: *const i64, iflag: c_int, ntr: c_int, eps: f64, plan: *mut *mut PlanBox<f32>,
                       o: *mut finufft_opts) -> c_int {
        finufft::guru::finufftf_makeplan(ty, dim, n, iflag, ntr, eps as f32, plan, o)
    }
    unsafe fn c_setpts(p: *mut PlanBox<f32>, m: i64, x: *mut f32, y: *mut f32, z: *mut f32, nk: i64, s: *mut f32, t: *mut f32,
                     u: *mut f32) -> c_int {
        finufft::guru::finufftf_setpts(p, m, x, y, z, nk, s, t, u)
    }
    unsafe fn c_execute(p: *mut PlanBox<f32>, c: *mut Complex<f32>, f: *mut Complex<f32>) -> c_int {
        finufft::guru::finufftf_execute(p, c, f)
    }
    unsafe fn c_execute_adjoint(p: *mut PlanBox<f32>, c: *mut Complex<f32>, f: *mut Complex<f32>) -> c_int {
        finufft::guru::finufftf_execute_adjoint(p, c, f)
    }
    unsafe fn c_destroy(p: *mut PlanBox<f32>) -> c_int {
        finufft::guru::finufftf_destroy(p)
    }
}

/// Default options with warnings and errors silenced (the tests check the codes).
pub fn quiet_opts<T: Prec>() -> finufft_opts {
    let mut o = std::mem::MaybeUninit::<finufft_opts>::uninit();
    unsafe {
        T::c_default_opts(o.as_mut_ptr());
        let mut o = o.assume_init();
        o.showwarn = 0;
        o
    }
}

/// A small deterministic generator (64-bit LCG, top 53 bits).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407))
    }
    /// Uniform in [a, b).
    pub fn uniform(&mut self, a: f64, b: f64) -> f64 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        a + (b - a) * ((self.0 >> 11) as f64 / (1u64 << 53) as f64)
    }
    pub fn vec<T: Prec>(&mut self, n: usize, a: f64, b: f64) -> Vec<T> {
        (0..n).map(|_| T::of(self.uniform(a, b))).collect()
    }
    pub fn cvec<T: Prec>(&mut self, n: usize) -> Vec<Complex<T>> {
        (0..n).map(|_| Complex::new(T::of(self.uniform(-1.0, 1.0)), T::of(self.uniform(-1.0, 1.0)))).collect()
    }
}

/// The integer frequency of index `i` on an axis of `n` modes (FINUFFT's docs: modeord 0 =
/// `−⌊n/2⌋ … ⌈n/2⌉−1`; modeord 1 = `0 … ⌈n/2⌉−1, −⌊n/2⌋ … −1`).
pub fn freq(i: usize, n: usize, modeord: i32) -> f64 {
    if modeord == 1 {
        if i < n - n / 2 { i as f64 } else { i as f64 - n as f64 }
    } else {
        i as f64 - (n / 2) as f64
    }
}

/// All mode wavevectors of an `n[0]×n[1]×n[2]` array, x fastest.
pub fn wavevectors(n: [usize; 3], modeord: i32) -> Vec<[f64; 3]> {
    let mut k = Vec::with_capacity(n[0] * n[1] * n[2]);
    for i3 in 0..n[2] {
        for i2 in 0..n[1] {
            for i1 in 0..n[0] {
                k.push([freq(i1, n[0], modeord), freq(i2, n[1], modeord), freq(i3, n[2], modeord)]);
            }
        }
    }
    k
}

fn to64<T: Prec>(v: &[T]) -> Vec<f64> {
    v.iter().map(|x| x.to_f64v()).collect()
}

/// Point coordinates as f64 triples (axes ≥ dim are 0).
pub fn points<T: Prec>(x: &[&[T]; 3], m: usize) -> Vec<[f64; 3]> {
    let ax: Vec<Vec<f64>> = x.iter().map(|a| if a.is_empty() { vec![0.0; m] } else { to64(a) }).collect();
    (0..m).map(|j| [ax[0][j], ax[1][j], ax[2][j]]).collect()
}

/// `out_k = Σ_j in_j e^{i·sign·(a_k · b_j)}` in f64 (the one direct sum of every type).
pub fn direct<T: Prec>(a: &[[f64; 3]], b: &[[f64; 3]], inp: &[Complex<T>], sign: f64) -> Vec<C64> {
    a.iter()
        .map(|ak| {
            b.iter().zip(inp).fold(C64::new(0.0, 0.0), |acc, (bj, c)| {
                let ph = sign * (ak[0] * bj[0] + ak[1] * bj[1] + ak[2] * bj[2]);
                acc + C64::new(c.re.to_f64v(), c.im.to_f64v()) * C64::from_polar(1.0, ph)
            })
        })
        .collect()
}

/// Relative l2 error of `got` against `want`.
pub fn rel_l2<T: Prec>(got: &[Complex<T>], want: &[C64]) -> f64 {
    assert_eq!(got.len(), want.len());
    let (mut e, mut n) = (0.0, 0.0);
    for (g, w) in got.iter().zip(want) {
        e += (C64::new(g.re.to_f64v(), g.im.to_f64v()) - w).norm_sqr();
        n += w.norm_sqr();
    }
    (e / n).sqrt()
}

/// The sign of `iflag`: +1 for iflag ≥ 0.
pub fn sign(iflag: i32) -> f64 {
    if iflag >= 0 { 1.0 } else { -1.0 }
}
