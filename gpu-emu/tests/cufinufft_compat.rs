//! The cuFINUFFT drop-in (`compat/cufinufft`, lib `cufinufft`) through its exported C entry
//! points, on the CUDA-on-CPU emulator: the crate's plan maker is replaced by
//! `farfield_gpu_emu::emu_nufft_plan` (farfield's CUDA NUFFT on an `EmuDevice`), and the
//! "device arrays" are emulator buffers passed by address, as cuFINUFFT's callers pass device
//! pointers (type 3's set-up too runs on them). Types 1–3, dims 1–3, both
//! precisions, ntransf 1 and 3, modeord 0 and 1, both
//! signs, against direct sums of cuFINUFFT's documented definitions (relative l2 error ≤
//! 10·tol, each vector); the `gpu_method` mapping; bad input and its documented codes.

use cufinufft::api::*;
use cufinufft::opts::cufinufft_opts;
use cufinufft::plan::{set_plan_makers, PlanMakers};
use farfield::gpu::device::{download_vec, upload_new, Device};
use farfield::gpu::types::GpuReal;
use farfield_gpu_emu::{emu_nufft_plan, EmuBuf, EmuDevice};
use num_complex::Complex;
use rand::{Rng, SeedableRng};
use std::f64::consts::PI;
use std::ffi::c_int;

fn use_emulator() {
    set_plan_makers(Some(PlanMakers { f64: emu_nufft_plan::<f64>, f32: emu_nufft_plan::<f32> }));
}

/// One precision's exported functions.
trait Prec: GpuReal {
    const TOL: f64;
    type Plan: Copy;
    fn null() -> Self::Plan;
    unsafe fn makeplan(ty: c_int, dim: c_int, n: *const i64, iflag: c_int, ntr: c_int, eps: f64, plan: *mut Self::Plan,
                       o: *mut cufinufft_opts) -> c_int;
    #[allow(clippy::too_many_arguments)]
    unsafe fn setpts(p: Self::Plan, m: i64, x: u64, y: u64, z: u64, n: i32, s: u64, t: u64, u: u64) -> c_int;
    unsafe fn execute(p: Self::Plan, c: u64, f: u64) -> c_int;
    unsafe fn c_destroy(p: Self::Plan) -> c_int;
}

impl Prec for f64 {
    const TOL: f64 = 1e-9;
    type Plan = cufinufft_plan;
    fn null() -> cufinufft_plan {
        std::ptr::null_mut()
    }
    unsafe fn makeplan(ty: c_int, dim: c_int, n: *const i64, iflag: c_int, ntr: c_int, eps: f64, plan: *mut cufinufft_plan,
                       o: *mut cufinufft_opts) -> c_int {
        cufinufft_makeplan(ty, dim, n, iflag, ntr, eps, plan, o)
    }
    unsafe fn setpts(p: cufinufft_plan, m: i64, x: u64, y: u64, z: u64, n: i32, s: u64, t: u64, u: u64) -> c_int {
        cufinufft_setpts(p, m, x as *mut f64, y as *mut f64, z as *mut f64, n, s as *mut f64, t as *mut f64, u as *mut f64)
    }
    unsafe fn execute(p: cufinufft_plan, c: u64, f: u64) -> c_int {
        cufinufft_execute(p, c as *mut _, f as *mut _)
    }
    unsafe fn c_destroy(p: cufinufft_plan) -> c_int {
        cufinufft_destroy(p)
    }
}

impl Prec for f32 {
    const TOL: f64 = 1e-4;
    type Plan = cufinufftf_plan;
    fn null() -> cufinufftf_plan {
        std::ptr::null_mut()
    }
    unsafe fn makeplan(ty: c_int, dim: c_int, n: *const i64, iflag: c_int, ntr: c_int, eps: f64, plan: *mut cufinufftf_plan,
                       o: *mut cufinufft_opts) -> c_int {
        cufinufftf_makeplan(ty, dim, n, iflag, ntr, eps as f32, plan, o)
    }
    unsafe fn setpts(p: cufinufftf_plan, m: i64, x: u64, y: u64, z: u64, n: i32, s: u64, t: u64, u: u64) -> c_int {
        cufinufftf_setpts(p, m, x as *mut f32, y as *mut f32, z as *mut f32, n, s as *mut f32, t as *mut f32, u as *mut f32)
    }
    unsafe fn execute(p: cufinufftf_plan, c: u64, f: u64) -> c_int {
        cufinufftf_execute(p, c as *mut _, f as *mut _)
    }
    unsafe fn c_destroy(p: cufinufftf_plan) -> c_int {
        cufinufftf_destroy(p)
    }
}

fn default_opts() -> cufinufft_opts {
    let mut o = std::mem::MaybeUninit::<cufinufft_opts>::uninit();
    unsafe {
        cufinufft_default_opts(o.as_mut_ptr());
        o.assume_init()
    }
}

/// The mode index `k` of position `i` on an axis of `n` modes (cuFINUFFT's definitions).
fn mode(i: usize, n: usize, modeord: i32) -> f64 {
    let (i, n) = (i as i64, n as i64);
    (if modeord == 1 { if i < (n + 1) / 2 { i } else { i - n } } else { i - n / 2 }) as f64
}

fn rel_l2(a: &[Complex<f64>], b: &[Complex<f64>]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y).norm_sqr()).sum();
    let den: f64 = b.iter().map(|y| y.norm_sqr()).sum();
    (num / den).sqrt()
}

const MODES: [[usize; 3]; 3] = [[16, 1, 1], [8, 7, 1], [6, 5, 4]];

/// One plan through makeplan → setpts → execute (twice: the plan is reusable) → destroy.
fn check<T: Prec>(ty: i32, dim: usize, ntr: usize, modeord: i32, iflag: i32, gpu_method: i32) {
    use_emulator();
    let mut rng = rand_pcg::Pcg64::seed_from_u64((ty * 100 + modeord * 10) as u64 + dim as u64 + ntr as u64 * 1000);
    let m = 40;
    let n = MODES[dim - 1];
    let nk = if ty == 3 { 30 } else { n[0] * n[1] * n[2] };
    let xr = if ty == 3 { 2.0 } else { 3.0 * PI };
    let x: Vec<Vec<T>> = (0..dim).map(|_| (0..m).map(|_| T::of(rng.gen_range(-xr..xr))).collect()).collect();
    // type 3's target frequencies
    let sf: Vec<Vec<T>> = (0..dim).map(|_| (0..nk).map(|_| T::of(rng.gen_range(-9.0..11.0))).collect()).collect();
    let dev = EmuDevice::default();
    let xb: Vec<EmuBuf> = x.iter().map(|v| upload_new(&dev, v).unwrap()).collect();
    let sb: Vec<EmuBuf> = if ty == 3 { sf.iter().map(|v| upload_new(&dev, v).unwrap()).collect() } else { vec![] };
    let addr = |d: usize| xb.get(d).map_or(0, |b| dev.addr(b));
    let saddr = |d: usize| sb.get(d).map_or(0, |b| dev.addr(b));
    let mut o = default_opts();
    o.modeord = modeord;
    o.gpu_method = gpu_method;
    let nm: Vec<i64> = n.iter().map(|&v| v as i64).collect();
    let what = format!("{} type {ty} dim {dim} ntransf {ntr} modeord {modeord} iflag {iflag} gpu_method {gpu_method}", T::NAME);
    let mut plan = T::null();
    let (nin, nout) = if ty != 2 { (m, nk) } else { (nk, m) };
    let inp: Vec<Complex<T>> = (0..ntr * nin).map(|_| Complex::new(T::of(rng.gen_range(-1.0..1.0)), T::of(rng.gen_range(-1.0..1.0)))).collect();
    let inb = upload_new(&dev, &inp).unwrap();
    let outb = upload_new(&dev, &vec![Complex::new(T::of(7.0), T::of(7.0)); ntr * nout]).unwrap();
    let (c, f) = if ty != 2 { (dev.addr(&inb), dev.addr(&outb)) } else { (dev.addr(&outb), dev.addr(&inb)) };
    unsafe {
        assert_eq!(T::makeplan(ty, dim as i32, nm.as_ptr(), iflag, ntr as i32, T::TOL, &mut plan, &mut o), 0, "{what}");
        assert_eq!(T::setpts(plan, m as i64, addr(0), addr(1), addr(2), nk as i32, saddr(0), saddr(1), saddr(2)), 0, "{what}");
        drop(xb); // setpts copied the coordinates
        drop(sb);
        for _ in 0..2 {
            assert_eq!(T::execute(plan, c, f), 0, "{what}");
        }
        assert_eq!(T::c_destroy(plan), 0);
    }
    let out: Vec<Complex<T>> = download_vec(&dev, &outb, ntr * nout).unwrap();
    let back: Vec<Complex<T>> = download_vec(&dev, &inb, ntr * nin).unwrap();
    assert_eq!(back, inp, "{what}: the input is not modified");
    let sg = if iflag >= 0 { 1.0 } else { -1.0 };
    let cf = |v: &Complex<T>| Complex::new(v.re.to_f64v(), v.im.to_f64v());
    let ks: Vec<[f64; 3]> = if ty == 3 {
        (0..nk).map(|k| [0, 1, 2].map(|d| sf.get(d).map_or(0.0, |v| v[k].to_f64v()))).collect()
    } else {
        (0..nk)
            .map(|i| [mode(i % n[0], n[0], modeord), mode(i / n[0] % n[1], n[1], modeord), mode(i / (n[0] * n[1]), n[2], modeord)])
            .collect()
    };
    let phase = |j: usize, k: &[f64; 3]| (0..dim).map(|d| k[d] * x[d][j].to_f64v()).sum::<f64>();
    for t in 0..ntr {
        let input: Vec<Complex<f64>> = inp[t * nin..(t + 1) * nin].iter().map(cf).collect();
        let want: Vec<Complex<f64>> = if ty != 2 {
            ks.iter().map(|k| (0..m).map(|j| input[j] * Complex::from_polar(1.0, sg * phase(j, k))).sum()).collect()
        } else {
            (0..m).map(|j| ks.iter().zip(&input).map(|(k, v)| v * Complex::from_polar(1.0, sg * phase(j, k))).sum()).collect()
        };
        let got: Vec<Complex<f64>> = out[t * nout..(t + 1) * nout].iter().map(cf).collect();
        let err = rel_l2(&got, &want);
        assert!(err <= 10.0 * T::TOL, "{what} vector {t}: rel l2 error {err:e} > 10·tol");
    }
}

#[test]
fn types_1_and_2_against_direct_sums_f64() {
    for dim in 1..=3 {
        for ty in [1, 2] {
            check::<f64>(ty, dim, 1, 0, 1, 0);
            check::<f64>(ty, dim, 3, 1, -1, 0);
        }
    }
}

#[test]
fn types_1_and_2_against_direct_sums_f32() {
    for dim in 1..=3 {
        for ty in [1, 2] {
            check::<f32>(ty, dim, 3, 0, -1, 0);
            check::<f32>(ty, dim, 1, 1, 1, 0);
        }
    }
}

#[test]
fn type_3_against_direct_sums() {
    for dim in 1..=3 {
        check::<f64>(3, dim, 1, 0, 1, 0);
        check::<f32>(3, dim, 2, 0, -1, 0);
    }
    check::<f64>(3, 2, 3, 0, -1, 0);
}

#[test]
fn every_gpu_method_maps_and_computes() {
    // 1 with gpu_sort = 1 (default): GM-sort; 2: SM; 3 (output driven): automatic
    for gm in [1, 2, 3] {
        check::<f64>(1, 2, 2, 0, 1, gm);
        check::<f64>(2, 3, 1, 1, 1, gm);
    }
    // gpu_sort = 0 with method 1: GM
    let mut o = default_opts();
    o.gpu_method = 1;
    o.gpu_sort = 0;
    assert_eq!(cufinufft::opts::to_nufft_opts(&o).gpu_method, Some(farfield::nufft::options::GpuMethod::Gm));
}

#[test]
fn bad_input_gives_the_documented_codes() {
    use_emulator();
    let dev = EmuDevice::default();
    let nm = [8i64, 6, 1];
    let mut plan = <f64 as Prec>::null();
    let mut o = default_opts();
    unsafe {
        // makeplan
        assert_eq!(cufinufft_makeplan(1, 4, nm.as_ptr(), 1, 1, 1e-6, &mut plan, &mut o), 12);
        assert!(plan.is_null());
        assert_eq!(cufinufft_makeplan(4, 2, nm.as_ptr(), 1, 1, 1e-6, &mut plan, &mut o), 10);
        assert_eq!(cufinufft_makeplan(1, 2, [8i64, 0, 1].as_ptr(), 1, 1, 1e-6, &mut plan, &mut o), 14);
        assert_eq!(cufinufft_makeplan(1, 2, [8i64, -3, 1].as_ptr(), 1, 1, 1e-6, &mut plan, &mut o), 14);
        assert_eq!(cufinufft_makeplan(1, 1, [1i64 << 31, 1, 1].as_ptr(), 1, 1, 1e-6, &mut plan, &mut o), 14);
        assert_eq!(cufinufft_makeplan(1, 2, std::ptr::null(), 1, 1, 1e-6, &mut plan, &mut o), 21);
        assert_eq!(cufinufft_makeplan(1, 2, nm.as_ptr(), 1, 0, 1e-6, &mut plan, &mut o), 9);
        assert_eq!(cufinufft_makeplan(1, 2, nm.as_ptr(), 1, 1, 1e-6, std::ptr::null_mut(), &mut o), 21);
        for (set, code) in [(&(|o: &mut cufinufft_opts| o.upsampfac = 0.5) as &dyn Fn(&mut cufinufft_opts), 8),
                            (&|o: &mut cufinufft_opts| { o.gpu_kerevalmeth = 0; o.upsampfac = 0.5 }, 7),
                            (&|o: &mut cufinufft_opts| o.upsampfac = 1.5, 8),
                            (&|o: &mut cufinufft_opts| { o.gpu_kerevalmeth = 0; o.upsampfac = 9.0 }, 8),
                            (&|o: &mut cufinufft_opts| o.gpu_method = 7, 19),
                            (&|o: &mut cufinufft_opts| o.gpu_spreadinterponly = 1, 21),
                            (&|o: &mut cufinufft_opts| o.gpu_device_id = 2, 15)] {
            let mut b = default_opts();
            set(&mut b);
            assert_eq!(cufinufft_makeplan(1, 2, nm.as_ptr(), 1, 1, 1e-6, &mut plan, &mut b), code);
            assert!(plan.is_null());
        }
        // a tolerance below double precision: raised and planned; 0 for types 1 and 2, warning 1
        // for type 3 (cuFINUFFT 2.5.1's codes)
        assert_eq!(cufinufft_makeplan(2, 2, nm.as_ptr(), 1, 1, 1e-20, &mut plan, std::ptr::null_mut()), 0);
        assert!(!plan.is_null());
        assert_eq!(cufinufft_destroy(plan), 0);
        assert_eq!(cufinufft_makeplan(3, 2, nm.as_ptr(), 1, 1, 1e-20, &mut plan, std::ptr::null_mut()), 1);
        assert!(!plan.is_null());
        assert_eq!(cufinufft_destroy(plan), 0);
        // σ other than 1.25 and 2 with gpu_kerevalmeth = 0 is honoured
        let mut k0 = default_opts();
        k0.gpu_kerevalmeth = 0;
        k0.upsampfac = 1.5;
        assert_eq!(cufinufft_makeplan(1, 2, nm.as_ptr(), 1, 1, 1e-6, &mut plan, &mut k0), 0);
        assert_eq!(cufinufft_destroy(plan), 0);
        // NULL opts = defaults
        assert_eq!(cufinufft_makeplan(1, 2, nm.as_ptr(), 1, 1, 1e-6, &mut plan, std::ptr::null_mut()), 0);
        // execute before setpts
        let cb = dev.alloc(16 * 100).unwrap();
        let fb = dev.alloc(16 * 48).unwrap();
        assert_eq!(cufinufft_execute(plan, dev.addr(&cb) as *mut _, dev.addr(&fb) as *mut _), 21);
        // setpts: negative M, M beyond 2^31 − 1, NULL coordinates, non-finite coordinates
        let n = std::ptr::null_mut();
        let xb = upload_new(&dev, &vec![0.5f64; 100]).unwrap();
        let xa = dev.addr(&xb) as *mut f64;
        assert_eq!(cufinufft_setpts(plan, -1, xa, xa, n, 0, n, n, n), 20);
        assert_eq!(cufinufft_setpts(plan, 1 << 31, xa, xa, n, 0, n, n, n), 14);
        assert_eq!(cufinufft_setpts(plan, 100, xa, n, n, 0, n, n, n), 21);
        let mut bad = vec![0.5f64; 100];
        bad[17] = f64::NAN;
        let badb = upload_new(&dev, &bad).unwrap();
        assert_eq!(cufinufft_setpts(plan, 100, xa, dev.addr(&badb) as *mut f64, n, 0, n, n, n), 21);
        assert_eq!(cufinufft_setpts(plan, 100, xa, xa, n, 0, n, n, n), 0);
        // execute: NULL arrays, the same array twice
        assert_eq!(cufinufft_execute(plan, n as *mut _, dev.addr(&fb) as *mut _), 21);
        assert_eq!(cufinufft_execute(plan, dev.addr(&cb) as *mut _, dev.addr(&cb) as *mut _), 21);
        assert_eq!(cufinufft_execute(plan, dev.addr(&cb) as *mut _, dev.addr(&fb) as *mut _), 0);
        assert_eq!(cufinufft_destroy(plan), 0);
        // type 3: n_modes is not read; N < 0; a NULL frequency array
        assert_eq!(cufinufft_makeplan(3, 2, std::ptr::null(), 1, 1, 1e-6, &mut plan, &mut o), 0);
        assert_eq!(cufinufft_setpts(plan, 100, xa, xa, n, -1, xa, xa, n), 20);
        assert_eq!(cufinufft_setpts(plan, 100, xa, xa, n, 10, xa, n, n), 21);
        assert_eq!(cufinufft_execute(plan, dev.addr(&cb) as *mut _, dev.addr(&fb) as *mut _), 21, "execute before setpts");
        assert_eq!(cufinufft_setpts(plan, 100, xa, xa, n, 10, xa, xa, n), 0);
        assert_eq!(cufinufft_destroy(plan), 0);
        // NULL plans
        assert_eq!(cufinufft_setpts(std::ptr::null_mut(), 100, xa, xa, n, 0, n, n, n), 16);
        assert_eq!(cufinufft_execute(std::ptr::null_mut(), n as *mut _, n as *mut _), 16);
        assert_eq!(cufinufft_destroy(std::ptr::null_mut()), 16);
        assert_eq!(cufinufftf_destroy(std::ptr::null_mut()), 16);
        // single precision: a tolerance below what f32 reaches is raised, type 1 returns 0 (as
        // cuFINUFFT 2.5.1; its Python package raises on any non-zero code)
        let mut pf = <f32 as Prec>::null();
        assert_eq!(cufinufftf_makeplan(1, 1, nm.as_ptr(), 1, 1, 1e-9, &mut pf, std::ptr::null_mut()), 0);
        assert_eq!(cufinufftf_destroy(pf), 0);
    }
}
