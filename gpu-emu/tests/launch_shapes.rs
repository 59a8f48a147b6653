//! The launch shapes of the library's default CUDA plans, recorded on the emulator, against
//! the committed manifest `src/gpu/launch_shapes.tsv` that `farfield gpu check --resources`
//! turns into the occupancy table (docs/gpu_occupancy.md).
//!
//! For each architecture's opt-in shared memory per block (sm_80: 163 KiB, sm_90: 227 KiB) the
//! host code is run on an [`EmuDevice`] reporting that limit: the NUFFT types 1 and 2 in 1D–3D
//! (f32 at tol 1e-5, f64 at 1e-6, default options, 3D with 32³ modes), the spreader with every
//! method in 2D (256²) and 3D (64³), f32 and f64, at kernel width 7 and, for the shared-memory
//! tiles of SM, also 4, 10 and 13 (the largest shared memory of the default plans), a spreading
//! plan on device arrays (its box mapping and real↔complex kernels), the
//! Ewald executor (SPME and spectral Ewald, f64 and mixed, with and without the virial) and the FMM (open at p = 6 and 16,
//! periodic at p = 10). Every launch is logged with its block and dynamic shared memory; the
//! manifest keeps, per architecture and kernel, the largest dynamic shared memory seen, the
//! block of that launch and the case that made it.
//!
//! A change of launch shapes fails this test with the new manifest printed; rewrite the file
//! with `FARFIELD_BLESS=1 cargo test -p farfield-gpu-emu --release --test emu launch_shapes`.

use farfield::ewald::{EwaldOpts, Method, Overrides};
use farfield::fmm::Boundary;
use farfield::gpu::ewald::GpuEwaldExec;
use farfield::gpu::fmm::m2l::M2lMethod;
use farfield::gpu::fmm::GpuFmm;
use farfield::gpu::nufft::GpuNufft;
use farfield::gpu::spread::{GpuMethod, GpuSpreadOpts, GpuSpreader};
use farfield::gpu::types::GpuReal;
use farfield::kernel::{es::EsParams, Kernel};
use farfield::nufft::{Backend, NufftOpts, NufftParams, Precision};
use farfield_gpu_emu::{stream_launch_shapes, EmuDevice};
use num_complex::Complex;
use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;

const KIB: usize = 1024;
/// (architecture, opt-in dynamic shared memory per block, stream tag of its log).
const ARCHS: [(&str, usize, u64); 2] = [("sm_80", 163 * KIB, 0x5a80), ("sm_90", 227 * KIB, 0x5a90)];
const MANIFEST: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../src/gpu/launch_shapes.tsv");

fn coords<T: GpuReal>(m: usize, seed: u64) -> Vec<Vec<T>> {
    let mut r = rand_pcg::Pcg64::seed_from_u64(seed);
    (0..3).map(|_| (0..m).map(|_| T::of(r.gen_range(-3.1..3.1))).collect()).collect()
}

fn values<T: GpuReal>(n: usize) -> Vec<Complex<T>> {
    (0..n).map(|i| Complex::new(T::of((i % 7) as f64 - 3.0), T::of((i % 5) as f64 - 2.0))).collect()
}

fn nufft<T: GpuReal>(dev: &EmuDevice, ty: i32, dim: usize, tol: f64) {
    let n: &[i64] = match dim {
        1 => &[1000],
        2 => &[64, 64],
        _ => &[32, 32, 32],
    };
    let params = NufftParams::new(ty, dim, n, 1, 1, tol, Precision::of::<T>(), &NufftOpts::default(), Backend::Cuda).unwrap();
    let mut g = GpuNufft::<T, EmuDevice>::new(dev.clone(), params, GpuSpreadOpts::default()).unwrap();
    let m = 400;
    let x = coords::<T>(m, dim as u64);
    g.setpts(&x[0], if dim > 1 { &x[1] } else { &[] }, if dim > 2 { &x[2] } else { &[] }).unwrap();
    let modes: usize = n.iter().map(|&v| v as usize).product();
    let (mut c, mut f) = (values::<T>(m), values::<T>(modes));
    g.execute(&mut c, &mut f).unwrap();
}

fn spreader<T: GpuReal>(dev: &EmuDevice, dim: usize, w: usize, method: GpuMethod) {
    let nf: &[usize] = if dim == 2 { &[256, 256] } else { &[64, 64, 64] };
    let k = Kernel::Es(EsParams { w, beta: 2.3 * w as f64, e: 0.5, tol: 1e-6 });
    let mut s = GpuSpreader::<T, EmuDevice>::new(dev.clone(), dim, nf, &k, GpuSpreadOpts { method: Some(method), ..GpuSpreadOpts::default() }).unwrap();
    let m = 300;
    let x = coords::<T>(m, 10 + w as u64);
    s.setpts([&x[0], &x[1], if dim > 2 { &x[2] } else { &[] }]).unwrap();
    let mut grid = values::<T>(nf.iter().product());
    let mut c = values::<T>(m);
    s.spread(&c, &mut grid).unwrap();
    s.interp(&grid, &mut c).unwrap();
}

/// A spreading plan (physical box) on device arrays: the box mapping and the real↔complex
/// conversions around the spreader's kernels.
fn spread_plan_device<T: GpuReal>(dev: &EmuDevice) {
    use farfield::gpu::device::{upload_new, Device};
    use farfield::plans::spread::{SpreadBox, SpreadPlan, SpreadPlanOpts};
    let k = Kernel::Es(EsParams { w: 7, beta: 2.3 * 7.0, e: 0.5, tol: 1e-6 });
    let bx = SpreadBox { dim: 2, n: [256, 256, 1], lo: [0.0; 3], len: [1.0; 3], periodic: [true; 3] };
    let mut p = SpreadPlan::<T>::with_device(dev.clone(), bx, k, &SpreadPlanOpts::default()).unwrap();
    let m = 300;
    let x = coords::<T>(m, 3);
    let (bx0, bx1) = (upload_new(dev, &x[0]).unwrap(), upload_new(dev, &x[1]).unwrap());
    let c = upload_new(dev, &vec![T::one(); m]).unwrap();
    let g = dev.alloc(256 * 256 * std::mem::size_of::<T>()).unwrap();
    unsafe {
        p.setpts_device(m, dev.addr(&bx0), dev.addr(&bx1), 0).unwrap();
        p.spread_device(dev.addr(&c), dev.addr(&g), false).unwrap();
        p.interp_device(dev.addr(&g), dev.addr(&c), false).unwrap();
    }
}

fn ewald(dev: &EmuDevice, method: Method, mixed: bool) {
    let cell = [3.0, 0.0, 0.0, 0.0, 3.2, 0.0, 0.0, 0.0, 3.4];
    let order = if method == Method::Spme { 6 } else { 8 };
    let opts = EwaldOpts { nthreads: 1, overrides: Overrides { grid: [16, 18, 20], order, ..Overrides::default() }, ..EwaldOpts::default() };
    let n = 60;
    let mut g = GpuEwaldExec::new(dev.clone(), method, &cell, n, 1e-6, &opts, GpuSpreadOpts::default(), mixed).unwrap();
    let mut r = rand_pcg::Pcg64::seed_from_u64(5);
    let xyz: Vec<f64> = (0..3 * n).map(|i| r.gen_range(0.0..cell[4 * (i % 3)])).collect();
    let q: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
    let (mut phi, mut field) = (vec![0.0; n], vec![0.0; 3 * n]);
    g.execute_host(&xyz, &q, Some(&mut phi), Some(&mut field), true, true).unwrap();
    g.execute_host(&xyz, &q, Some(&mut phi), Some(&mut field), true, false).unwrap();
}

fn fmm(dev: &EmuDevice, boundary: Boundary, p: usize, m2l: M2lMethod) {
    let mut g = GpuFmm::new(dev.clone(), boundary, p, Some(2)).unwrap();
    g.set_m2l_method(m2l);
    let n = 300;
    let mut r = rand_pcg::Pcg64::seed_from_u64(p as u64);
    let xyz: Vec<f64> = (0..3 * n).map(|_| r.gen_range(0.0..1.0)).collect();
    let q: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
    let (mut phi, mut field) = (vec![0.0; n], vec![0.0; 3 * n]);
    g.execute(&xyz, &q, Some(&mut phi), Some(&mut field)).unwrap();
}

/// Runs `f` on a device of `arch`'s limit and folds its launches into `shapes`: per kernel the
/// launch of the largest dynamic shared memory (first seen on ties), labelled `case`.
fn record(shapes: &mut BTreeMap<(String, String), (u32, u32, String)>, arch: (&str, usize, u64), case: &str, f: impl FnOnce(&EmuDevice)) {
    let dev = EmuDevice { shared_bytes: arch.1, stream: arch.2, ..EmuDevice::default() };
    let before = stream_launch_shapes(arch.2).len();
    f(&dev);
    for l in stream_launch_shapes(arch.2).into_iter().skip(before) {
        let e = shapes.entry((arch.0.to_string(), l.name)).or_insert((l.block, l.smem, case.to_string()));
        if l.smem > e.1 {
            *e = (l.block, l.smem, case.to_string());
        }
    }
}

fn manifest() -> String {
    let mut shapes = BTreeMap::new();
    for arch in ARCHS {
        for dim in 1..=3 {
            for ty in [1, 2] {
                record(&mut shapes, arch, &format!("nufft {dim}D type {ty} f32 tol 1e-5"), |d| nufft::<f32>(d, ty, dim, 1e-5));
                record(&mut shapes, arch, &format!("nufft {dim}D type {ty} f64 tol 1e-6"), |d| nufft::<f64>(d, ty, dim, 1e-6));
            }
        }
        for method in [GpuMethod::Gm, GpuMethod::GmSort, GpuMethod::Sm, GpuMethod::Csr, GpuMethod::Group] {
            for dim in [2, 3] {
                // only the SM tiles depend on the width
                let widths: &[usize] = if method == GpuMethod::Sm { &[4, 7, 10, 13] } else { &[7] };
                for &w in widths {
                    record(&mut shapes, arch, &format!("spread {} {dim}D w {w} f32", method.name()), |d| spreader::<f32>(d, dim, w, method));
                    record(&mut shapes, arch, &format!("spread {} {dim}D w {w} f64", method.name()), |d| spreader::<f64>(d, dim, w, method));
                }
            }
        }
        record(&mut shapes, arch, "spread plan device arrays 2D f32", spread_plan_device::<f32>);
        record(&mut shapes, arch, "spread plan device arrays 2D f64", spread_plan_device::<f64>);
        for (method, name) in [(Method::Spme, "spme"), (Method::Spectral, "spectral")] {
            record(&mut shapes, arch, &format!("ewald {name} f64"), |d| ewald(d, method, false));
            record(&mut shapes, arch, &format!("ewald {name} mixed"), |d| ewald(d, method, true));
        }
        record(&mut shapes, arch, "fmm open p 6", |d| fmm(d, Boundary::Open, 6, M2lMethod::default()));
        record(&mut shapes, arch, "fmm open p 16", |d| fmm(d, Boundary::Open, 16, M2lMethod::default()));
        record(&mut shapes, arch, "fmm periodic p 10", |d| fmm(d, Boundary::Periodic { side: 1.0 }, 10, M2lMethod::default()));
        // the symmetric M2L kernel, the other choice of the plan
        record(&mut shapes, arch, "fmm open p 16 symmetric M2L", |d| fmm(d, Boundary::Open, 16, M2lMethod::Symmetric));
    }
    let mut out = String::from("# arch\tkernel\tblock\tdynamic_smem_bytes\tcase (gpu-emu/tests/launch_shapes.rs writes this file)\n");
    for ((arch, name), (block, smem, case)) in shapes {
        out += &format!("{arch}\t{name}\t{block}\t{smem}\t{case}\n");
    }
    out
}

#[test]
fn default_plans_launch_the_committed_shapes() {
    let got = manifest();
    if std::env::var_os("FARFIELD_BLESS").is_some() {
        std::fs::write(MANIFEST, &got).unwrap();
        return;
    }
    let want = std::fs::read_to_string(MANIFEST).unwrap_or_default();
    assert!(got == want, "the default plans' launch shapes changed; the new manifest (FARFIELD_BLESS=1 writes it to src/gpu/launch_shapes.tsv):\n{got}");
    // the library's parser (farfield gpu check --resources) reads what this test writes
    let parsed = farfield::gpu::occupancy::parse_launch_shapes(&got).unwrap();
    assert!(parsed.len() > 50, "{} launch shapes", parsed.len());
}
