//! Particle sets, direct sums and a one-call FMM run for the FMM benches. The sets are those
//! of the FMM's unit tests (same generators and seeds, so the tables compare with theirs).

use farfield::fmm::{Boundary, CpuFmm, FmmOpts, FmmStats};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// The random generator of the sets, seeded.
pub fn rng(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

/// `n` points uniform in the unit cube (interleaved `xyz`), charges uniform in `[−½, ½)`.
pub fn uniform(r: &mut Pcg64, n: usize) -> (Vec<f64>, Vec<f64>) {
    let xyz: Vec<f64> = (0..3 * n).map(|_| r.gen::<f64>()).collect();
    let q: Vec<f64> = (0..n).map(|_| r.gen::<f64>() - 0.5).collect();
    (xyz, q)
}

/// Plummer sphere (scale 1), radii capped at 20, charges of random sign and magnitude in
/// `[0, 1)`: a strongly clustered set.
pub fn plummer(r: &mut Pcg64, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut xyz = Vec::with_capacity(3 * n);
    while xyz.len() < 3 * n {
        let rad = 1.0 / (r.gen::<f64>().powf(-2.0 / 3.0) - 1.0).sqrt();
        if rad >= 20.0 {
            continue;
        }
        let ct: f64 = 2.0 * r.gen::<f64>() - 1.0;
        let ph: f64 = 2.0 * std::f64::consts::PI * r.gen::<f64>();
        let st = (1.0 - ct * ct).sqrt();
        xyz.extend_from_slice(&[rad * st * ph.cos(), rad * st * ph.sin(), rad * ct]);
    }
    let q: Vec<f64> = (0..n).map(|_| if r.gen::<bool>() { 1.0 } else { -1.0 } * r.gen::<f64>()).collect();
    (xyz, q)
}

/// `n` points uniform in the cube of half-side `a` about `c`, as separate coordinate arrays
/// `[x, y, z]`, and charges uniform in `[−½, ½)`.
pub fn cluster(r: &mut Pcg64, n: usize, c: [f64; 3], a: f64) -> ([Vec<f64>; 3], Vec<f64>) {
    let mut x: [Vec<f64>; 3] = Default::default();
    let mut q = Vec::with_capacity(n);
    for _ in 0..n {
        for d in 0..3 {
            x[d].push(c[d] + a * (2.0 * r.gen::<f64>() - 1.0));
        }
        q.push(r.gen::<f64>() - 0.5);
    }
    (x, q)
}

/// Direct sums at the particles `idx` only: `(φ [idx.len()], E [3·idx.len()])` with
/// `φ_i = Σ_{j≠i} q_j/r_ij` and `E_i = Σ_{j≠i} q_j (x_i − x_j)/r_ij³` (open boundaries).
pub fn direct_at(xyz: &[f64], q: &[f64], idx: &[usize]) -> (Vec<f64>, Vec<f64>) {
    let mut phi = vec![0.0; idx.len()];
    let mut field = vec![0.0; 3 * idx.len()];
    for (o, &i) in idx.iter().enumerate() {
        for j in (0..q.len()).filter(|&j| j != i) {
            let d = [xyz[3 * i] - xyz[3 * j], xyz[3 * i + 1] - xyz[3 * j + 1], xyz[3 * i + 2] - xyz[3 * j + 2]];
            let inv = 1.0 / (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
            phi[o] += q[j] * inv;
            for a in 0..3 {
                field[3 * o + a] += q[j] * d[a] * inv * inv * inv;
            }
        }
    }
    (phi, field)
}

/// `count` particles evenly spread through `0..n` (the targets of the direct sums).
pub fn targets(n: usize, count: usize) -> Vec<usize> {
    let count = count.min(n);
    (0..count).map(|k| k * (n / count)).collect()
}

/// `v` at the particles `idx` (`comps` values per particle).
pub fn pick(v: &[f64], idx: &[usize], comps: usize) -> Vec<f64> {
    idx.iter().flat_map(|&i| v[comps * i..comps * (i + 1)].iter().copied()).collect()
}

/// One execute of a CPU FMM plan: `(φ, E, U, stats)`. Panics on a library error.
pub fn run(boundary: Boundary, xyz: &[f64], q: &[f64], tol: f64, opts: &FmmOpts) -> (Vec<f64>, Vec<f64>, f64, FmmStats) {
    let n = q.len();
    let mut plan = CpuFmm::new(boundary, tol, opts).expect("FMM plan");
    let mut phi = vec![0.0; n];
    let mut field = vec![0.0; 3 * n];
    let u = plan.execute(xyz, q, Some(&mut phi), Some(&mut field)).expect("FMM execute");
    (phi, field, u, plan.stats())
}
