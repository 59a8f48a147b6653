//! SM spreading and interpolation with wide kernels at several shared-memory limits per block
//! (16 KiB, the 48 KiB default, 100 KiB, and H100's 227 KiB opt-in), with the bins the library
//! chooses from the limit (`gpu::spread::sm_tile_bins`: shrunk to fit 48 KiB or a smaller limit;
//! where nothing fits there, the whole limit with the bins grown where the padding dominates),
//! against the CPU spreader: 3D, ES kernels of width 7 … 16, f64 (1e-12 relative
//! to the largest value) and f32 (1e-5). Where no tile fits, SM is unavailable and an explicit
//! SM request is refused (`NotSupported` naming the limit); the emulator poisons shared memory
//! and refuses launches above the limit, so a tile larger than the bins allow, or one the
//! kernels index past, shows.

use farfield::gpu::spread::{sm_tile_bins, tile_bytes_of, GpuMethod, GpuSpreadOpts, GpuSpreader};
use farfield::gpu::types::GpuReal;
use farfield::kernel::{Kernel, KernelKind};
use farfield::spread::{SpreadOpts, Spreader};
use farfield::threads::Threads;
use farfield_gpu_emu::EmuDevice;
use num_complex::Complex;
use rand::{Rng, SeedableRng};
use std::f64::consts::PI;

const KIB: usize = 1024;

fn max_rel<T: GpuReal>(a: &[Complex<T>], b: &[Complex<T>]) -> f64 {
    let scale = b.iter().map(|v| v.re.to_f64v().hypot(v.im.to_f64v())).fold(0.0, f64::max);
    let err = a.iter().zip(b).map(|(x, y)| (x.re.to_f64v() - y.re.to_f64v()).hypot(x.im.to_f64v() - y.im.to_f64v())).fold(0.0, f64::max);
    assert!(scale > 0.0);
    err / scale
}

/// Points: random over several periods, on bin edges of the chosen bins and the period
/// boundary, and a cluster in one cell (several subproblems in one bin).
fn points(nf: [usize; 3], bins: [usize; 3], m: usize, seed: u64) -> Vec<[f64; 3]> {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut p: Vec<[f64; 3]> = (0..m).map(|_| [rng.gen_range(-3.0 * PI..3.0 * PI), rng.gen_range(-PI..PI), rng.gen_range(0.0..2.0 * PI)]).collect();
    let node = |d: usize, k: f64| 2.0 * PI * k / nf[d] as f64;
    p[0] = [0.0, 0.0, 0.0];
    p[1] = [2.0 * PI - 1e-14, -1e-15, 2.0 * PI];
    p[2] = [node(0, bins[0] as f64), node(1, bins[1] as f64), node(2, bins[2] as f64)];
    p[3] = [node(0, bins[0] as f64) - 1e-13, node(1, 2.0 * bins[1] as f64) + 1e-13, node(2, bins[2] as f64) - 1e-13];
    for (i, q) in p.iter_mut().enumerate().skip(4).take(40) {
        let f = 0.4 * (i as f64 / 40.0);
        *q = [node(0, 3.0 + f), node(1, 5.0 + f), node(2, 1.0 + f)];
    }
    p
}

/// SM (bins from the limit) against the CPU spreader for one width and limit; returns the bins
/// used, or `None` when SM is unavailable (after checking that an explicit SM is refused).
fn check<T: GpuReal>(w_tol: f64, limit: usize, reltol: f64) -> Option<[usize; 3]> {
    let nf = [32usize, 34, 36];
    let ker = Kernel::for_tolerance(KernelKind::Es, w_tol, 2.0);
    let w = ker.width();
    let dev = EmuDevice { shared_bytes: limit, ..EmuDevice::default() };
    let opts = GpuSpreadOpts { method: Some(GpuMethod::Sm), block: 64, max_subprob: 16, ..Default::default() };
    let mut gs = GpuSpreader::<T, EmuDevice>::new(dev, 3, &nf, &ker, opts).unwrap();
    let want_bins = sm_tile_bins(3, w, nf, std::mem::size_of::<T>(), [16, 16, 8], limit, true);
    assert_eq!(gs.sm_bin_size().map(|b| b.0), want_bins, "w {w} limit {limit}");
    let pts = points(nf, want_bins.unwrap_or([4, 4, 4]), 120, w as u64);
    let xs: Vec<Vec<T>> = (0..3).map(|d| pts.iter().map(|p| T::of(p[d])).collect()).collect();
    let coords: [&[T]; 3] = [&xs[0], &xs[1], &xs[2]];
    let Some((bins, bytes)) = gs.sm_bin_size() else {
        match gs.setpts(coords) {
            Err(farfield::Error::NotSupported(m)) => assert!(m.contains(&limit.to_string()) && m.contains(&format!("width {w}")), "{m}"),
            other => panic!("SM without a fitting tile: {other:?}"),
        }
        eprintln!("{} w {w:>2} limit {:>3} KiB: SM unavailable", T::SUFFIX, limit / KIB);
        return None;
    };
    assert!(bytes <= limit && bytes == tile_bytes_of(3, w, bins, std::mem::size_of::<T>()));
    gs.setpts(coords).unwrap();
    assert_eq!(gs.method(), Some(GpuMethod::Sm));
    let th = Threads::new(1).unwrap();
    let mut cpu = Spreader::<T>::new(3, &nf, &ker, SpreadOpts::default()).unwrap();
    cpu.setpts(coords, &th).unwrap();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7);
    let m = pts.len();
    let n: usize = nf.iter().product();
    let c: Vec<Complex<T>> = (0..m).map(|_| Complex::new(T::of(rng.gen_range(-1.0..1.0)), T::of(rng.gen_range(-1.0..1.0)))).collect();
    let grid_in: Vec<Complex<T>> = (0..n).map(|_| Complex::new(T::of(rng.gen_range(-1.0..1.0)), T::of(rng.gen_range(-1.0..1.0)))).collect();
    let mut want = vec![Complex::new(T::zero(), T::zero()); n];
    cpu.spread(&c, &mut want, &th);
    let mut want_c = vec![Complex::new(T::zero(), T::zero()); m];
    cpu.interp(&grid_in, &mut want_c, &th);
    let mut got = vec![Complex::new(T::of(5.0), T::zero()); n];
    gs.spread(&c, &mut got).unwrap();
    let mut got_c = vec![Complex::new(T::of(5.0), T::zero()); m];
    gs.interp(&grid_in, &mut got_c).unwrap();
    let (e1, e2) = (max_rel(&got, &want), max_rel(&got_c, &want_c));
    eprintln!("{} w {w:>2} limit {:>3} KiB: bins {bins:?} tile {bytes} B: spread {e1:.1e} interp {e2:.1e}", T::SUFFIX, limit / KIB);
    assert!(e1 <= reltol && e2 <= reltol, "w {w} limit {limit}: spread {e1:e} interp {e2:e}");
    Some(bins)
}

#[test]
fn wide_kernels_sm_3d_f64_at_every_limit() {
    // (tolerance → ES width at σ = 2, kernel::es's table and 1D safety factor): 1e-6 → 7,
    // 1e-9 → 10, 1e-12 → 14, 1e-15 → 16
    let widths = [(1e-6, 7), (1e-9, 10), (1e-12, 14), (1e-15, 16)];
    for limit in [16 * KIB, 48 * KIB, 100 * KIB, 227 * KIB] {
        for (tol, w) in widths {
            assert_eq!(Kernel::for_tolerance(KernelKind::Es, tol, 2.0).width(), w);
            let got = check::<f64>(tol, limit, 1e-12);
            // the smallest f64 tile (2x2x2 bins) is (2 + 2⌈w/2⌉)³·16 B: 16 KiB fits w ≤ 8,
            // 48 KiB w ≤ 12, 100 KiB and more every width up to 16
            let fits = (2 + 2 * w.div_ceil(2)).pow(3) * 16 <= limit;
            assert_eq!(got.is_some(), fits, "w {w} limit {limit}");
        }
    }
}

#[test]
fn wide_kernels_sm_3d_f32() {
    for limit in [48 * KIB, 227 * KIB] {
        for tol in [1e-4, 1e-6] {
            assert!(check::<f32>(tol, limit, 1e-5).is_some());
        }
    }
    // f32 at the widest kernel: the library's width for f64's 1e-15 (w = 16), 48 KiB
    assert!(check::<f32>(1e-15, 48 * KIB, 2e-5).is_some());
}

#[test]
fn tiles_stay_within_48_kib_unless_none_fits_there() {
    // w = 7 (f64): 8x8x4 bins at 48 KiB and at H100's 227 KiB alike (several blocks per
    // multiprocessor); w = 14 has no 48 KiB tile, so the opt-in limit serves it, with bins grown
    // (≤ the 32x34x36 grid) where the padding dominates
    assert_eq!(check::<f64>(1e-6, 48 * KIB, 1e-12), Some([8, 8, 4]));
    assert_eq!(check::<f64>(1e-6, 227 * KIB, 1e-12), Some([8, 8, 4]));
    assert_eq!(check::<f64>(1e-12, 48 * KIB, 1e-12), None);
    let wide = check::<f64>(1e-12, 227 * KIB, 1e-12).unwrap();
    assert!(tile_bytes_of(3, 14, wide, 8) > 48 * KIB, "{wide:?}");
}
