//! The executor of the C API's CUDA Ewald plans (`farfield::gpu::ewald::GpuEwaldExec`) on the
//! emulated kernels: host-array and device-array evaluation of the whole sum against the CPU
//! plan (`CpuEwald::execute_with`) on the same parameters — SPME and spectral Ewald, a
//! triclinic cell, a net charge, exclusions, f64 grids to rounding (1e-12 in energy and virial,
//! 1e-11 relative RMS in φ and E) and f32 grids (1e-5) — and the contract the C API relies on:
//! the CPU's status for every bad input (n > n_max, non-finite, exclusions ≥ n, coincident
//! charges), outputs untouched on failure (host and device), only the requested outputs
//! written, n = 0, set_box and set_exclusions; excluded and scaled pairs with every `terms`
//! setting (all, k-space only, real space only), and coincident charges in a scaled pair.

use farfield::ewald::{CpuEwald, Method};
use farfield::gpu::device::{download_vec, upload_new, Device};
use farfield::gpu::ewald::GpuEwaldExec;
use farfield::gpu::spread::GpuSpreadOpts;
use farfield::Error;
use farfield_gpu_emu::EmuDevice;

use crate::ewald_common;
use ewald_common::{opts, rel_rms, TRICLINIC};

const N: usize = 40;
const PAIRS: [[i64; 2]; 3] = [[0, 1], [5, 2], [7, 30]];

/// `n` random charges around the cell with net charge 1.5; charge 1 bonded to charge 0.
fn system(n: usize, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let (mut xyz, q) = ewald_common::system(n, &TRICLINIC, 1.5, seed);
    for d in 0..3 {
        xyz[3 + d] = xyz[d] + 0.1 * (d as f64 + 1.0);
    }
    (xyz, q)
}

/// The CPU plan with the exclusions `PAIRS`.
fn cpu_plan(method: Method) -> CpuEwald {
    let mut p = CpuEwald::new(method, &TRICLINIC, N, 1e-6, &opts(method)).unwrap();
    p.set_exclusions(&PAIRS).unwrap();
    p
}

struct Out {
    phi: Vec<f64>,
    field: Vec<f64>,
    energy: f64,
    virial: [f64; 9],
}

fn cpu(method: Method, xyz: &[f64], q: &[f64]) -> Out {
    let mut p = cpu_plan(method);
    let (mut phi, mut field) = (vec![0.0; q.len()], vec![0.0; 3 * q.len()]);
    let r = p.execute_with(xyz, q, Some(&mut phi), Some(&mut field), true, true).unwrap();
    Out { phi, field, energy: r.energy, virial: r.virial }
}

fn exec(method: Method, mixed: bool) -> GpuEwaldExec<EmuDevice> {
    let mut g = GpuEwaldExec::new(EmuDevice::default(), method, &TRICLINIC, N, 1e-6, &opts(method), GpuSpreadOpts::default(), mixed).unwrap();
    g.set_exclusions(&PAIRS, None).unwrap();
    g
}

fn compare(what: &str, g: &Out, c: &Out, tol_e: f64, tol_f: f64) {
    let e = (g.energy - c.energy).abs() / c.energy.abs();
    let wn: f64 = c.virial.iter().map(|v| v * v).sum::<f64>().sqrt();
    let w = g.virial.iter().zip(&c.virial).map(|(a, b)| (a - b) * (a - b)).sum::<f64>().sqrt() / wn;
    let (p, f) = (rel_rms(&g.phi, &c.phi), rel_rms(&g.field, &c.field));
    eprintln!("{what}: energy {e:.1e} virial {w:.1e} phi {p:.1e} field {f:.1e}");
    assert!(e <= tol_e && w <= tol_e && p <= tol_f && f <= tol_f, "{what}: energy {e:e} virial {w:e} phi {p:e} field {f:e}");
}

fn host(g: &mut GpuEwaldExec<EmuDevice>, xyz: &[f64], q: &[f64]) -> Result<Out, Error> {
    let (mut phi, mut field) = (vec![0.0; q.len()], vec![0.0; 3 * q.len()]);
    let r = g.execute_host(xyz, q, Some(&mut phi), Some(&mut field), true, true)?;
    Ok(Out { phi, field, energy: r.energy, virial: r.virial })
}

fn device(g: &mut GpuEwaldExec<EmuDevice>, xyz: &[f64], q: &[f64]) -> Result<Out, Error> {
    let dev = g.device().clone();
    let n = q.len();
    let (xb, qb) = (upload_new(&dev, xyz).unwrap(), upload_new(&dev, q).unwrap());
    let (mut pb, mut fb) = (dev.alloc(8 * n).unwrap(), dev.alloc(24 * n).unwrap());
    let r = g.execute_dev(n, &xb, &qb, Some(&mut pb), Some(&mut fb), true, true)?;
    Ok(Out { phi: download_vec(&dev, &pb, n).unwrap(), field: download_vec(&dev, &fb, 3 * n).unwrap(), energy: r.energy, virial: r.virial })
}

#[test]
fn host_and_device_arrays_equal_the_cpu_plan() {
    let (xyz, q) = system(N, 3);
    for method in [Method::Spme, Method::Spectral] {
        let c = cpu(method, &xyz, &q);
        for mixed in [false, true] {
            let tol = if mixed { (1e-5, 1e-5) } else { (1e-12, 1e-11) };
            let mut g = exec(method, mixed);
            let cp = cpu_plan(method);
            assert_eq!((g.params().xi, g.params().rc, g.params().grid), (cp.params().xi, cp.params().rc, cp.params().grid));
            assert_eq!((g.mixed(), g.method(), g.n_max()), (mixed, method, N));
            compare(&format!("{method:?} mixed {mixed} host"), &host(&mut g, &xyz, &q).unwrap(), &c, tol.0, tol.1);
            compare(&format!("{method:?} mixed {mixed} device"), &device(&mut g, &xyz, &q).unwrap(), &c, tol.0, tol.1);
        }
    }
}

#[test]
fn the_cpu_checks_and_outputs_untouched_on_error() {
    let (xyz, q) = system(N, 5);
    let method = Method::Spme;
    let mut g = exec(method, false);
    let mut cp = cpu_plan(method);
    // the same status as the CPU plan, with host and device arrays, nothing written
    let mut coincident = xyz.clone();
    for d in 0..3 {
        coincident[3 * 9 + d] = coincident[3 * 4 + d] + TRICLINIC[3 + d];
    }
    let (mut nan_x, mut nan_q) = (xyz.clone(), q.clone());
    nan_x[3 * 17 + 1] = f64::NAN;
    nan_q[23] = f64::INFINITY;
    let cases: [(&str, &[f64], &[f64], &str); 4] = [
        ("coincident", &coincident, &q, "charges 4 and 9 coincide"),
        ("non-finite position", &nan_x, &q, "charge 17"),
        ("non-finite charge", &xyz, &nan_q, "q[23]"),
        ("exclusion index ≥ n", &xyz[..3 * 20], &q[..20], "exclusion pair"),
    ];
    for (what, x, c, text) in cases {
        let n = c.len();
        let cpu_err = cp.execute_with(x, c, None, None, true, false).unwrap_err();
        let (mut phi, mut field) = (vec![7.0; n], vec![7.0; 3 * n]);
        let e = g.execute_host(x, c, Some(&mut phi), Some(&mut field), true, true).unwrap_err();
        assert_eq!(e.code(), cpu_err.code(), "{what}: {e:?} vs {cpu_err:?}");
        assert!(e.message().contains(text), "{what}: {}", e.message());
        assert!(phi.iter().chain(&field).all(|&v| v == 7.0), "{what}: host outputs written");
        let dev = g.device().clone();
        let (xb, qb) = (upload_new(&dev, x).unwrap(), upload_new(&dev, c).unwrap());
        let (mut pb, mut fb) = (upload_new(&dev, &phi).unwrap(), upload_new(&dev, &field).unwrap());
        let e = g.execute_dev(n, &xb, &qb, Some(&mut pb), Some(&mut fb), true, true).unwrap_err();
        assert_eq!(e.code(), cpu_err.code(), "{what} (device): {e:?}");
        let after: Vec<f64> = download_vec::<_, f64>(&dev, &pb, n).unwrap().into_iter().chain(download_vec::<_, f64>(&dev, &fb, 3 * n).unwrap()).collect();
        assert!(after.iter().all(|&v| v == 7.0), "{what}: device outputs written");
    }
    assert!(matches!(g.execute_host(&xyz, &[0.0; N + 1], None, None, true, false), Err(Error::NPoints(_))));
    // still usable; only what is asked for is computed and written
    let c = cpu(method, &xyz, &q);
    let mut phi = vec![7.0; N];
    let r = g.execute_host(&xyz, &q, Some(&mut phi), None, false, false).unwrap();
    assert_eq!((r.energy, r.virial), (0.0, [0.0; 9]));
    assert!(rel_rms(&phi, &c.phi) < 1e-11);
    let r = g.execute_host(&xyz, &q, None, None, true, false).unwrap();
    assert!((r.energy - c.energy).abs() < 1e-12 * c.energy.abs());
    // n = 0: the exclusions refer to charges ≥ 0, as on the CPU; without them, energy 0
    let cpu0 = cp.execute_with(&[], &[], None, None, true, true).unwrap_err();
    let e = g.execute_host(&[], &[], None, None, true, true).unwrap_err();
    assert_eq!(e.code(), cpu0.code());
    g.set_exclusions(&[], None).unwrap();
    let r = g.execute_host(&[], &[], Some(&mut []), Some(&mut []), true, true).unwrap();
    assert_eq!((r.energy, r.virial), (0.0, [0.0; 9]));
    let dev = g.device().clone();
    let e0 = dev.alloc(8).unwrap();
    assert_eq!(g.execute_dev(0, &e0, &e0, None, None, true, false).unwrap().energy, 0.0);
}

#[test]
fn set_box_and_exclusions_follow_the_cpu_plan() {
    let (xyz, q) = system(N, 9);
    let method = Method::Spectral;
    let (mut g, mut cp) = (exec(method, false), cpu_plan(method));
    let b2 = [3.1, 0.0, 0.0, 0.7, 2.9, 0.0, -0.4, 0.5, 3.3];
    g.set_box(&b2).unwrap();
    cp.set_box(&b2).unwrap();
    g.set_exclusions(&[[3, 4]], None).unwrap();
    cp.set_exclusions(&[[4, 3]]).unwrap();
    assert_eq!((g.params().xi, g.params().rc, g.params().grid), (cp.params().xi, cp.params().rc, cp.params().grid));
    let (mut phi, mut field) = (vec![0.0; N], vec![0.0; 3 * N]);
    let r = cp.execute_with(&xyz, &q, Some(&mut phi), Some(&mut field), true, true).unwrap();
    compare("spectral after set_box", &host(&mut g, &xyz, &q).unwrap(), &Out { phi, field, energy: r.energy, virial: r.virial }, 1e-12, 1e-11);
    // a bad list keeps the old one
    assert!(matches!(g.set_exclusions(&[[0, N as i64]], None), Err(Error::InvalidArg(_))));
    assert!((host(&mut g, &xyz, &q).unwrap().energy - r.energy).abs() < 1e-12 * r.energy.abs());
}

/// Excluded (scale 0) and scaled pairs: AMBER's and OPLS's 1-4 scales, a scale-1 pair (no
/// exclusion), a negative scale, pairs near and beyond `r_c`.
const SCALED: [[i64; 2]; 7] = [[0, 1], [5, 2], [7, 30], [9, 10], [11, 3], [4, 20], [12, 13]];
const SCALES: [f64; 7] = [0.0, 0.5, 1.0 / 1.2, 1.0, 0.0, -0.25, 0.5];

#[test]
fn terms_and_scaled_pairs_follow_the_cpu_plan() {
    use farfield::ewald::{EwaldOpts, Terms};
    let (xyz, q) = system(N, 13);
    for method in [Method::Spme, Method::Spectral] {
        for terms in [Terms::All, Terms::KSpace, Terms::Real] {
            let o = EwaldOpts { terms, ..opts(method) };
            let mut cp = CpuEwald::new(method, &TRICLINIC, N, 1e-6, &o).unwrap();
            cp.set_exclusions_scaled(&SCALED, &SCALES).unwrap();
            let (mut phi, mut field) = (vec![0.0; N], vec![0.0; 3 * N]);
            let r = cp.execute_with(&xyz, &q, Some(&mut phi), Some(&mut field), true, true).unwrap();
            let c = Out { phi, field, energy: r.energy, virial: r.virial };
            for mixed in [false, true] {
                let tol = if mixed { (1e-5, 1e-5) } else { (1e-12, 1e-11) };
                let mut g = GpuEwaldExec::new(EmuDevice::default(), method, &TRICLINIC, N, 1e-6, &o, GpuSpreadOpts::default(), mixed).unwrap();
                g.set_exclusions(&SCALED, Some(&SCALES)).unwrap();
                let what = format!("{method:?} {terms:?} terms, scaled pairs, mixed {mixed}");
                compare(&format!("{what}, host"), &host(&mut g, &xyz, &q).unwrap(), &c, tol.0, tol.1);
                compare(&format!("{what}, device"), &device(&mut g, &xyz, &q).unwrap(), &c, tol.0, tol.1);
            }
        }
    }
    // the CPU's checks of the list: two scales for one pair, a non-finite scale; the plan
    // keeps its list
    let mut g = exec(Method::Spme, false);
    let before = host(&mut g, &xyz, &q).unwrap();
    let e = g.set_exclusions(&[[0, 1], [1, 0]], Some(&[0.0, 0.5])).unwrap_err();
    assert!(matches!(e, Error::InvalidArg(_)) && e.message().contains("two scales"), "{e:?}");
    assert!(matches!(g.set_exclusions(&[[0, 1]], Some(&[f64::NAN])), Err(Error::NonFinite(_))));
    compare("after refused lists", &host(&mut g, &xyz, &q).unwrap(), &before, 1e-12, 1e-12);
    // coincident charges: allowed for a fully excluded pair, refused for a scaled one (its
    // remaining interaction is infinite), as on the CPU
    let mut coincident = xyz.clone();
    for d in 0..3 {
        coincident[3 * 10 + d] = coincident[3 * 9 + d] + TRICLINIC[6 + d];
    }
    for (scale, ok) in [(0.0, true), (0.5, false)] {
        let mut cp = CpuEwald::new(Method::Spme, &TRICLINIC, N, 1e-6, &opts(Method::Spme)).unwrap();
        cp.set_exclusions_scaled(&[[9, 10]], &[scale]).unwrap();
        let mut g = exec(Method::Spme, false);
        g.set_exclusions(&[[10, 9]], Some(&[scale])).unwrap();
        let (mut phi, mut field) = (vec![0.0; N], vec![0.0; 3 * N]);
        let r = cp.execute_with(&coincident, &q, Some(&mut phi), Some(&mut field), true, true);
        let gr = host(&mut g, &coincident, &q);
        assert_eq!(r.is_ok(), ok, "scale {scale}: CPU {r:?}");
        match (r, gr) {
            (Ok(r), Ok(gr)) => compare("coincident excluded pair", &gr, &Out { phi, field, energy: r.energy, virial: r.virial }, 1e-12, 1e-11),
            (Err(e), Err(ge)) => {
                assert_eq!(ge.code(), e.code(), "scale {scale}: {ge:?} vs {e:?}");
                assert!(ge.message().contains("charges 9 and 10 coincide"), "{}", ge.message());
            }
            (r, gr) => panic!("scale {scale}: CPU {r:?}, device {:?}", gr.map(|o| o.energy)),
        }
    }
}

/// The real-space pass runs on a second stream of the plan's device; with the emulator's
/// deferred forks (`EmuDevice::defer_forks`: that stream's work runs only when the host waits
/// for it or another stream waits on one of its marks, the latest schedule CUDA allows) the
/// results equal the synchronous emulator's to rounding — host and device arrays, SPME with f64
/// grids and spectral Ewald with f32 grids — so the plan orders that stream back into its own before
/// anything reads the real-space results.
#[test]
fn real_space_stream_is_waited_for() {
    let (xyz, q) = system(N, 11);
    for (method, mixed) in [(Method::Spme, false), (Method::Spectral, true)] {
        {
            let make = |dev: EmuDevice| {
                let mut g = GpuEwaldExec::new(dev, method, &TRICLINIC, N, 1e-6, &opts(method), GpuSpreadOpts::default(), mixed).unwrap();
                g.set_exclusions(&PAIRS, None).unwrap();
                g
            };
            let mut sync = make(EmuDevice::default());
            let mut deferred = make(EmuDevice { defer_forks: true, ..EmuDevice::default() });
            for arrays in ["host", "device"] {
                let run = |g: &mut GpuEwaldExec<EmuDevice>| if arrays == "host" { host(g, &xyz, &q) } else { device(g, &xyz, &q) }.unwrap();
                let (a, b) = (run(&mut sync), run(&mut deferred));
                // equal to the rounding of the atomic sums (their order is not fixed); a
                // real-space part missing or read early differs at O(1)
                let tol = if mixed { 1e-6 } else { 1e-12 };
                compare(&format!("{method:?} mixed {mixed} {arrays} arrays, deferred vs synchronous"), &b, &a, tol, tol);
            }
        }
    }
}

/// `opts.debug > 0` (the per-stage host times and per-phase device times printed by
/// `execute_host`) changes no result: SPME, f64 and f32 grids, equal bit for bit with it off.
#[test]
fn debug_timings_change_no_result() {
    let (xyz, q) = system(N, 17);
    for mixed in [false, true] {
        let mut outs = Vec::new();
        for debug in [0, 1] {
            let o = farfield::ewald::EwaldOpts { debug, ..opts(Method::Spme) };
            let mut g = GpuEwaldExec::new(EmuDevice::default(), Method::Spme, &TRICLINIC, N, 1e-6, &o, GpuSpreadOpts::default(), mixed)
                .unwrap();
            g.set_exclusions(&PAIRS, None).unwrap();
            let (mut phi, mut field) = (vec![0.0; N], vec![0.0; 3 * N]);
            let r = g.execute_host(&xyz, &q, Some(&mut phi), Some(&mut field), true, true).unwrap();
            outs.push((phi, field, r.energy, r.virial));
        }
        assert!(outs[0] == outs[1], "mixed {mixed}: debug output changed the result");
    }
}
