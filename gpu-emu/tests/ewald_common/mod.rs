//! Helpers shared by the emulator's Ewald tests (`ewald_kspace.rs`, `ewald_exec.rs`): cells,
//! random systems, the small grids the emulator runs quickly, relative RMS differences.
#![allow(dead_code)]

use farfield::ewald::{EwaldOpts, Method, Overrides};
use rand::{Rng, SeedableRng};

pub const ORTHO: [f64; 9] = [3.1, 0.0, 0.0, 0.0, 2.7, 0.0, 0.0, 0.0, 3.4];
pub const TRICLINIC: [f64; 9] = [3.0, 0.0, 0.0, 0.8, 2.8, 0.0, -0.5, 0.6, 3.2];

/// `‖a − b‖ / ‖b‖`.
pub fn rel_rms(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    assert!(den > 0.0);
    (num / den).sqrt()
}

/// A random system of `n` charges, positions spread over three cells around the origin cell;
/// `net` = 0 for a neutral system, else the net charge.
pub fn system(n: usize, cell: &[f64; 9], net: f64, seed: u64) -> (Vec<f64>, Vec<f64>) {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut xyz = vec![0.0; 3 * n];
    for i in 0..n {
        let s: [f64; 3] = [0, 1, 2].map(|_| rng.gen_range(-1.0..2.0));
        for a in 0..3 {
            xyz[3 * i + a] = (0..3).map(|d| s[d] * cell[3 * d + a]).sum();
        }
    }
    let mut q: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let mean = q.iter().sum::<f64>() / n as f64;
    for v in q.iter_mut() {
        *v += net / n as f64 - mean;
    }
    (xyz, q)
}

/// Small grids and windows for the emulator.
pub fn opts(method: Method) -> EwaldOpts {
    let order = if method == Method::Spme { 6 } else { 8 };
    EwaldOpts { nthreads: 1, overrides: Overrides { grid: [16, 18, 20], order, ..Overrides::default() }, ..EwaldOpts::default() }
}
