//! The GPU Ewald real-space pass on a CUDA device, when one is present (skipped otherwise):
//! a water-like system of the size of JAC DHFR (7853 three-site molecules, 23 559 charges in a
//! 6.2 nm cube, intramolecular pairs excluded, r_c = 0.9 nm, ξ r_c = 3.12 as at tol 1e-5,
//! erfc fit to 1e-7) against the CPU real-space pass, and the time per call (device arrays,
//! median of 20 after a warm-up) for each number of threads per atom. The emulator tests
//! (`gpu-emu/tests/ewald_real.rs`) check the same code on small systems in CI.

use farfield::ewald::{real_space_only, PeriodicBox};
use farfield::gpu::cuda::CudaDevice;
use farfield::gpu::device::{download_vec, upload_new, Device};
use farfield::gpu::ewald::real_space::GpuRealSpace;
use rand::{Rng, SeedableRng};
use std::time::Instant;

fn unit(rng: &mut impl Rng) -> [f64; 3] {
    loop {
        let v = [rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0), rng.gen_range(-1.0..1.0)];
        let n2: f64 = v.iter().map(|x| x * x).sum();
        if n2 > 1e-4 && n2 <= 1.0 {
            let n = n2.sqrt();
            return v.map(|x| x / n);
        }
    }
}

#[test]
fn water_box_on_the_device() {
    if !matches!(farfield::gpu::runtime::discover(), Ok(d) if !d.is_empty()) {
        eprintln!("gpu_ewald_real: no CUDA device, skipped");
        return;
    }
    let dev = CudaDevice::new(0).expect("CUDA device 0");
    let (nmol, l, rc) = (7853usize, 6.2, 0.9);
    let xi = 3.12 / rc;
    let bx = PeriodicBox::orthorhombic([l, l, l]).unwrap();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(15);
    let (doh, th) = (0.09572, 104.52f64.to_radians());
    let mut xyz = Vec::with_capacity(9 * nmol);
    let mut q = Vec::with_capacity(3 * nmol);
    let mut excl = Vec::with_capacity(3 * nmol);
    for m in 0..nmol {
        let c = [rng.gen_range(0.0..l), rng.gen_range(0.0..l), rng.gen_range(0.0..l)];
        let u = unit(&mut rng);
        let w = unit(&mut rng);
        let dot: f64 = (0..3).map(|d| u[d] * w[d]).sum();
        let mut v = [w[0] - dot * u[0], w[1] - dot * u[1], w[2] - dot * u[2]];
        let nv = v.iter().map(|x| x * x).sum::<f64>().sqrt();
        v = v.map(|x| x / nv);
        xyz.extend_from_slice(&c);
        for d in 0..3 {
            xyz.push(c[d] + doh * u[d]);
        }
        for d in 0..3 {
            xyz.push(c[d] + doh * (th.cos() * u[d] + th.sin() * v[d]));
        }
        q.extend_from_slice(&[-0.834, 0.417, 0.417]);
        let o = 3 * m as i64;
        excl.extend_from_slice(&[[o, o + 1], [o, o + 2], [o + 1, o + 2]]);
    }
    let n = q.len();
    let acc = 1e-7;
    let t = Instant::now();
    let (cphi, cfield, ce, cw) = real_space_only(&bx, &xyz, &q, xi, rc, acc, false, &excl, true, true).unwrap();
    let cpu_s = t.elapsed().as_secs_f64();
    let xb = upload_new(&dev, &xyz).unwrap();
    let qb = upload_new(&dev, &q).unwrap();
    let mut pb = dev.alloc(8 * n).unwrap();
    let mut fb = dev.alloc(24 * n).unwrap();
    let mut rs = GpuRealSpace::new(dev.clone(), xi, rc, acc, false).unwrap();
    rs.set_exclusions(&excl, None).unwrap();
    println!("{}: {n} charges, r_c {rc} nm, xi {xi:.4}/nm; CPU real space (1 thread) {:.1} ms", dev.name(), 1e3 * cpu_s);
    for kpa in [None, Some(1), Some(2), Some(4), Some(8), Some(16)] {
        rs.set_threads_per_atom(kpa).unwrap();
        dev.zero(&mut pb).unwrap();
        dev.zero(&mut fb).unwrap();
        let (e, w) = rs.compute(&bx, n, &xb, &qb, Some(&mut pb), Some(&mut fb), true).unwrap();
        let phi: Vec<f64> = download_vec(&dev, &pb, n).unwrap();
        let field: Vec<f64> = download_vec(&dev, &fb, 3 * n).unwrap();
        let rms = |a: &[f64], b: &[f64]| {
            (a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum::<f64>() / b.iter().map(|y| y * y).sum::<f64>()).sqrt()
        };
        let (ep, ef, eu) = (rms(&phi, &cphi), rms(&field, &cfield), (e - ce).abs() / ce.abs());
        let wmax = cw.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let ew = w.iter().zip(&cw).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max) / wmax;
        let mut ts = Vec::new();
        for _ in 0..21 {
            let t = Instant::now();
            rs.compute(&bx, n, &xb, &qb, Some(&mut pb), Some(&mut fb), true).unwrap();
            ts.push(t.elapsed().as_secs_f64());
        }
        ts.remove(0);
        ts.sort_by(f64::total_cmp);
        println!(
            "threads per atom {kpa:?}: {:.3} ms per call (median of 20, min {:.3}); vs CPU: energy {eu:.1e}, phi {ep:.1e}, field {ef:.1e}, virial {ew:.1e}",
            1e3 * ts[10],
            1e3 * ts[0]
        );
        assert!(eu <= 1e-12 && ep <= 1e-11 && ef <= 1e-11 && ew <= 1e-11);
    }
}
