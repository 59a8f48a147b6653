//! `farfield bench nufft --type 3`: one timed type-3 case, `f_k = Σ_j c_j e^{± i s_k·x_j}`.
//!
//! Points uniform random in `[−π, π)^d` (half-width X = π per axis), target frequencies
//! uniform random in `[−N/2, N/2)^d` with `N` from `--modes` (so X·S = πN/2 per axis, the
//! space-bandwidth of a type 1 with N modes), `--targets` of them (default M); strengths
//! uniform in the complex square `[−1, 1]²`; fixed seed (PCG64), generated in f64 and rounded
//! to the benchmark precision. Timed: makeplan, setpts, execute, and the plan's stages
//! (pre-phase, spread, inner type 2 with its own interp/FFT/deconvolve split, deconvolution).
//!
//! Accuracy: relative l2 error over `--check` random targets, each summed directly over all M
//! points in f64 from the inputs the NUFFT saw (rayon, all cores, not timed); written
//! independently of the library.

use crate::bench::{parse_count, parse_modes, NufftBenchArgs};
use crate::direct::{sincos, SINCOS_FAST_MAX};
use crate::json;
use crate::npy;
use crate::mem::try_vec;
use crate::CliResult;
use farfield::nufft::{NufftOpts, Type3Plan};
use farfield::Real;
use num_complex::{Complex, Complex64};
use rand::{Rng, SeedableRng};
use rayon::prelude::*;
use serde_json::json;
use std::f64::consts::PI;
use std::time::Instant;

/// `Σ_j c_j e^{i·sign·s_k·x_j}` for each checked target `k`, in f64.
fn direct3<T: Real>(dim: usize, x: &[Vec<T>; 3], s: &[Vec<T>; 3], c: &[Complex<T>], sign: f64, which: &[usize]) -> Vec<Complex64> {
    which
        .par_iter()
        .map(|&k| {
            let sk: Vec<f64> = (0..dim).map(|d| s[d][k].to_f64v()).collect();
            let mut acc = Complex64::new(0.0, 0.0);
            for j in 0..c.len() {
                let ph: f64 = sign * (0..dim).map(|d| sk[d] * x[d][j].to_f64v()).sum::<f64>();
                let (sn, cs) = if ph.abs() <= SINCOS_FAST_MAX { sincos(ph) } else { ph.sin_cos() };
                acc += Complex64::new(c[j].re.to_f64v(), c[j].im.to_f64v()) * Complex64::new(cs, sn);
            }
            acc
        })
        .collect()
}

/// Runs `farfield bench nufft --type 3` (arguments validated by the caller).
pub fn run(a: &NufftBenchArgs, opts: NufftOpts, iflag: i32) -> CliResult<()> {
    let dim = a.dim as usize;
    let nv = parse_modes(&a.modes, dim)?;
    let m = parse_count(&a.points).map_err(|e| format!("--points: {e}"))?;
    let nt = match &a.targets {
        Some(t) => parse_count(t).map_err(|e| format!("--targets: {e}"))?,
        None => m,
    };
    if a.prec == crate::bench::PrecArg::F32 {
        run_typed::<f32>(a, dim, &nv, m, nt, opts, iflag)
    } else {
        run_typed::<f64>(a, dim, &nv, m, nt, opts, iflag)
    }
}

fn run_typed<T: Real + npyz::Serialize + npyz::AutoSerialize>(a: &NufftBenchArgs, dim: usize, nv: &[usize], m: usize,
                                                               nt: usize, opts: NufftOpts, iflag: i32) -> CliResult<()>
where
    Complex<T>: npyz::Serialize + npyz::AutoSerialize,
{
    let e = |e: farfield::Error| format!("NUFFT type 3: {e}");
    let t0 = Instant::now();
    let mut plan = Type3Plan::<T>::new(dim, iflag, 1, a.tol, &opts).map_err(e)?;
    let plan_s = t0.elapsed().as_secs_f64();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(a.seed);
    let mut x: [Vec<T>; 3] = Default::default();
    let mut s: [Vec<T>; 3] = Default::default();
    for d in 0..dim {
        x[d] = try_vec(m, "benchmark points", || T::of(rng.gen_range(-PI..PI)))?;
    }
    for d in 0..dim {
        let h = 0.5 * nv[d] as f64;
        s[d] = try_vec(nt, "benchmark frequencies", || T::of(rng.gen_range(-h..h)))?;
    }
    let c = try_vec(m, "benchmark strengths", || Complex::new(T::of(rng.gen_range(-1.0..1.0)), T::of(rng.gen_range(-1.0..1.0))))?;
    let mut f = try_vec(nt, "benchmark output", || Complex::new(T::zero(), T::zero()))?;
    let t0 = Instant::now();
    plan.setpts(&x[0], &x[1], &x[2], &s[0], &s[1], &s[2]).map_err(e)?;
    let setpts_s = t0.elapsed().as_secs_f64();
    let t0 = Instant::now();
    plan.execute(&c, &mut f).map_err(e)?;
    let exec_s = t0.elapsed().as_secs_f64();
    let st = plan.timings();
    let inner = plan.inner_timings().unwrap_or_default();
    let info = plan.info();
    let iinfo = plan.inner_info().unwrap_or_default();

    let tcheck = Instant::now();
    let which = if a.check == 0 { Vec::new() } else { crate::bench::sample_indices(nt, a.check, a.seed) };
    let exact = direct3(dim, &x, &s, &c, if iflag >= 0 { 1.0 } else { -1.0 }, &which);
    let rel_error = (!which.is_empty()).then(|| {
        let num: f64 = which.iter().zip(&exact).map(|(&k, ex)| (Complex64::new(f[k].re.to_f64v(), f[k].im.to_f64v()) - ex).norm_sqr()).sum();
        let den: f64 = exact.iter().map(|v| v.norm_sqr()).sum();
        (num / den).sqrt()
    });
    let check_s = tcheck.elapsed().as_secs_f64();
    if let Some(dir) = &a.save {
        // x.npy … z.npy, s.npy … u.npy, input.npy (c), output.npy (f), check_idx.npy, check_exact.npy
        std::fs::create_dir_all(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
        for d in 0..dim {
            npy::write_array(&dir.join(format!("{}.npy", ["x", "y", "z"][d])), &[m as u64], &x[d])?;
            npy::write_array(&dir.join(format!("{}.npy", ["s", "t", "u"][d])), &[nt as u64], &s[d])?;
        }
        npy::write_array(&dir.join("input.npy"), &[m as u64], &c)?;
        npy::write_array(&dir.join("output.npy"), &[nt as u64], &f)?;
        let idx: Vec<u64> = which.iter().map(|&i| i as u64).collect();
        npy::write_array(&dir.join("check_idx.npy"), &[idx.len() as u64], &idx)?;
        npy::write_array(&dir.join("check_exact.npy"), &[exact.len() as u64], &exact)?;
    }

    let join = |v: &[i64]| v[..dim].iter().map(|v| v.to_string()).collect::<Vec<_>>().join("x");
    let total_s = plan_s + setpts_s + exec_s;
    println!("farfield bench nufft: type 3 dim {dim} M {m} N {nt} frequencies in [-{}, {}) tol {:e} {} iflag {iflag:+} threads {}",
             nv[0] / 2, nv[0] / 2, a.tol, T::NAME, info.nthreads);
    println!("plan:    w {} sigma {} fine grid {} (inner type 2: w {} sigma {} grid {}; tol used {:e}{})",
             info.kernel_width, info.upsampfac, join(&info.nf.map(|v| v as i64)), iinfo.kernel_width, iinfo.upsampfac, join(&iinfo.nf.map(|v| v as i64)),
             info.tol_used, if info.warnings != 0 { ", clamped" } else { "" });
    println!("time:    makeplan {plan_s:.4} s, setpts {setpts_s:.4} s, execute {exec_s:.4} s, total {total_s:.4} s");
    println!("stages:  pre-phase {:.4} s, spread {:.4} s, inner type 2 {:.4} s (interp {:.4} s, fft {:.4} s, deconvolve {:.4} s), \
              deconvolve+phase {:.4} s", st.prephase_s, st.spread_s, st.inner_s, inner.spread_s, inner.fft_s, inner.deconv_s,
             st.deconv_s);
    println!("rate:    {:.3e} (points+targets)/s (execute)", (m + nt) as f64 / exec_s);
    match rel_error {
        Some(err) => println!("error:   rel l2 {err:.3e} over {} random targets ({:.1}x tol; direct sums {check_s:.2} s)",
                              which.len(), err / a.tol),
        None => println!("error:   not checked"),
    }
    if a.json {
        json::emit(&json!({
            "type": 3, "dim": dim, "modes": nv, "points": m, "targets": nt, "tol": a.tol, "prec": T::NAME,
            "iflag": iflag, "threads": info.nthreads, "upsampfac": info.upsampfac, "kernel_width": info.kernel_width,
            "nf": &info.nf[..dim], "inner_nf": &iinfo.nf[..dim], "tol_used": info.tol_used,
            "plan_s": plan_s, "setpts_s": setpts_s, "exec_s": exec_s, "total_s": total_s,
            "prephase_s": st.prephase_s, "spread_s": st.spread_s, "inner_s": st.inner_s,
            "inner_interp_s": inner.spread_s, "inner_fft_s": inner.fft_s, "inner_deconv_s": inner.deconv_s,
            "deconv_s": st.deconv_s, "rel_error": rel_error, "checked": which.len(), "check_s": check_s,
        }));
    }
    Ok(())
}
