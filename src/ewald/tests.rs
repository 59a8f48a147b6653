//! Tests of the Ewald module: Madelung constants, random systems against the classic Ewald
//! sum, gradients, virial, background term, exclusions, set_box, and a real water box.

use super::*;
use super::testdata::load_system;
use rand::{Rng, SeedableRng};

pub(super) fn opts(nthreads: usize) -> EwaldOpts {
    EwaldOpts { nthreads, ..EwaldOpts::default() }
}

pub(super) fn cube(l: f64) -> [f64; 9] {
    [l, 0.0, 0.0, 0.0, l, 0.0, 0.0, 0.0, l]
}

pub(super) fn run(plan: &mut CpuEwald, xyz: &[f64], q: &[f64], virial: bool) -> (Vec<f64>, Vec<f64>, EwaldResult) {
    let n = q.len();
    let mut phi = vec![0.0; n];
    let mut f = vec![0.0; 3 * n];
    let r = plan.execute(xyz, q, Some(&mut phi), Some(&mut f), virial).unwrap();
    (phi, f, r)
}

/// Builds a crystal: `basis` fractional positions with charges, in cell `cell`.
fn crystal(cell: &[f64; 9], basis: &[([f64; 3], f64)]) -> (Vec<f64>, Vec<f64>) {
    let bx = PeriodicBox::new(cell).unwrap();
    let mut xyz = Vec::new();
    let mut q = Vec::new();
    for (s, c) in basis {
        xyz.extend_from_slice(&bx.cart(*s));
        q.push(*c);
    }
    (xyz, q)
}

fn fcc() -> [[f64; 3]; 4] {
    [[0.0, 0.0, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5], [0.5, 0.5, 0.0]]
}

/// (name, cell, xyz, q, nearest-neighbour distance, number of ion pairs, Madelung constant)
fn madelung_cases() -> Vec<(&'static str, [f64; 9], Vec<f64>, Vec<f64>, f64, f64, f64)> {
    let mut cases = Vec::new();
    // NaCl, conventional cubic cell (a = 1): 4 Na + 4 Cl
    let mut b = Vec::new();
    for s in fcc() {
        b.push((s, 1.0));
        b.push(([s[0] + 0.5, s[1], s[2]], -1.0));
    }
    let (x, q) = crystal(&cube(1.0), &b);
    cases.push(("NaCl", cube(1.0), x, q, 0.5, 4.0, 1.747564594633));
    // CsCl (simple cubic, a = 1)
    let (x, q) = crystal(&cube(1.0), &[([0.0; 3], 1.0), ([0.5; 3], -1.0)]);
    cases.push(("CsCl", cube(1.0), x, q, 3f64.sqrt() / 2.0, 1.0, 1.762674773070));
    // zincblende, conventional cubic cell
    let mut b = Vec::new();
    for s in fcc() {
        b.push((s, 1.0));
        b.push(([s[0] + 0.25, s[1] + 0.25, s[2] + 0.25], -1.0));
    }
    let (x, q) = crystal(&cube(1.0), &b);
    cases.push(("zincblende", cube(1.0), x, q, 3f64.sqrt() / 4.0, 4.0, 1.638055053388));
    // NaCl in its primitive rhombohedral cell (a = 1: vectors of length 1/√2 at 60°), lower-triangular
    let l = 1.0 / 2f64.sqrt();
    let cell = [l, 0.0, 0.0, 0.5 * l, 0.5 * 3f64.sqrt() * l, 0.0, 0.5 * l, l / (2.0 * 3f64.sqrt()), l * (2.0f64 / 3.0).sqrt()];
    let (x, q) = crystal(&cell, &[([0.0; 3], 1.0), ([0.5; 3], -1.0)]);
    cases.push(("NaCl primitive", cell, x, q, 0.5, 1.0, 1.747564594633));
    cases
}

#[test]
fn madelung_constants() {
    for (name, cell, xyz, q, r0, npairs, m) in madelung_cases() {
        for method in [Method::Spectral, Method::Spme, Method::Direct] {
            let mut plan = CpuEwald::new(method, &cell, q.len(), 1e-10, &opts(2)).unwrap();
            let (phi, f, r) = run(&mut plan, &xyz, &q, true);
            let mc = -r.energy * r0 / npairs;
            let err = (mc - m).abs() / m;
            eprintln!("{name:15} {method:?}: M = {mc:.13} rel err {err:.2e} params {:?}", plan.params());
            assert!(err <= 1e-9, "{name} {method:?}: M = {mc} vs {m}");
            // every ion sits at a symmetric site: no field; φ_i = ∓M/r0
            let fmax = f.iter().fold(0.0f64, |a, v| a.max(v.abs()));
            assert!(fmax < 1e-7, "{name} {method:?}: field {fmax}");
            for (p, qi) in phi.iter().zip(&q) {
                assert!((p * r0 + qi * m).abs() < 1e-8, "{name} {method:?}: phi {p}");
            }
            // tr W = U for the Coulomb energy
            let tr = r.virial[0] + r.virial[4] + r.virial[8];
            assert!((tr - r.energy).abs() < 1e-8 * r.energy.abs(), "{name} {method:?}: tr W {tr} U {}", r.energy);
        }
    }
}

/// `n` random positions in the cell with a minimum separation of `0.3 ℓ` (mean spacing ℓ) and
/// random charges with zero sum (plus `net` spread evenly).
pub(super) fn random_system(cell: &[f64; 9], n: usize, seed: u64, net: f64) -> (Vec<f64>, Vec<f64>) {
    let bx = PeriodicBox::new(cell).unwrap();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let dmin = 0.3 * (bx.volume / n as f64).cbrt();
    let mut s: Vec<[f64; 3]> = Vec::new();
    while s.len() < n {
        let c = [rng.gen::<f64>(), rng.gen::<f64>(), rng.gen::<f64>()];
        let ok = s.iter().all(|o| {
            let mut d = [0.0; 3];
            for k in 0..3 {
                let v = c[k] - o[k];
                d[k] = v - v.round();
            }
            let r = bx.cart(d);
            r[0] * r[0] + r[1] * r[1] + r[2] * r[2] > dmin * dmin
        });
        if ok {
            s.push(c);
        }
    }
    let mut xyz = Vec::new();
    for c in &s {
        // unwrap some positions by lattice vectors: the solver must wrap them
        let shift = [rng.gen_range(-2..=2) as f64, rng.gen_range(-1..=1) as f64, 0.0];
        xyz.extend_from_slice(&bx.cart([c[0] + shift[0], c[1] + shift[1], c[2] + shift[2]]));
    }
    let mut q: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    let mean = q.iter().sum::<f64>() / n as f64;
    for v in q.iter_mut() {
        *v += net / n as f64 - mean;
    }
    (xyz, q)
}

pub(super) fn rel_rms(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den).sqrt()
}

pub(super) fn forces(f: &[f64], q: &[f64]) -> Vec<f64> {
    f.iter().enumerate().map(|(k, e)| e * q[k / 3]).collect()
}

pub(super) fn triclinic() -> [f64; 9] {
    [3.1, 0.0, 0.0, 0.9, 2.9, 0.0, -0.7, 1.1, 3.3]
}

#[test]
fn random_systems_against_direct_sum() {
    let n = 1000;
    for (cname, cell) in [("cubic", cube(3.0)), ("triclinic", triclinic())] {
        let (xyz, q) = random_system(&cell, n, 5, 0.0);
        let mut dp = CpuEwald::new(Method::Direct, &cell, n, 1e-11, &opts(2)).unwrap();
        let (phi0, f0, r0) = run(&mut dp, &xyz, &q, true);
        let fr0 = forces(&f0, &q);
        for tol in [1e-3, 1e-5, 1e-7] {
            for method in [Method::Spectral, Method::Spme] {
                let mut p = CpuEwald::new(method, &cell, n, tol, &opts(2)).unwrap();
                let (phi, f, r) = run(&mut p, &xyz, &q, true);
                let ef = rel_rms(&forces(&f, &q), &fr0);
                let ep = rel_rms(&phi, &phi0);
                let eu = (r.energy - r0.energy).abs() / r0.energy.abs();
                let ev = rel_rms(&r.virial, &r0.virial);
                eprintln!(
                    "{cname} {method:?} tol {tol:e}: force {ef:.2e} phi {ep:.2e} energy {eu:.2e} virial {ev:.2e} \
                     (est {:.2e}) xi {:.3} rc {:.3} grid {:?} P {} real {:.1} ms k {:.1} ms",
                    p.params().est_rel_err, p.params().xi, p.params().rc, p.params().grid, p.params().order,
                    1e3 * p.params().real_s, 1e3 * p.params().kspace_s
                );
                // the contract (params module docs): forces within [tol/3, tol] for random
                // charges too; the energy's relative error is of the order of tol, up to 4 tol
                // on random charges (documented on `crate::ewald`)
                assert!(ef <= tol && ef >= tol / 3.0, "{cname} {method:?} tol {tol}: force error {ef}");
                assert!(ev <= 8.0 * tol, "{cname} {method:?} tol {tol}: virial error {ev}");
                assert!(eu <= 4.0 * tol, "{cname} {method:?} tol {tol}: energy error {eu}");
                // Newton's third law up to the accuracy
                let fr = forces(&f, &q);
                let rms = (fr.iter().map(|v| v * v).sum::<f64>() / n as f64).sqrt();
                for d in 0..3 {
                    let s: f64 = (0..n).map(|i| fr[3 * i + d]).sum();
                    assert!(s.abs() <= 10.0 * tol * rms * (n as f64).sqrt(), "{cname} {method:?}: ΣF_{d} = {s}");
                }
            }
        }
    }
}

/// Energy of a configuration with a fixed plan (no outputs but the energy).
fn energy(plan: &mut CpuEwald, xyz: &[f64], q: &[f64]) -> f64 {
    plan.execute(xyz, q, None, None, false).unwrap().energy
}

#[test]
fn forces_are_minus_energy_gradient() {
    let n = 60;
    let cell = triclinic();
    let (xyz, q) = random_system(&cell, n, 9, 0.0);
    for method in [Method::Spectral, Method::Spme, Method::Direct] {
        let mut p = CpuEwald::new(method, &cell, n, 1e-9, &opts(1)).unwrap();
        let (_, f, _) = run(&mut p, &xyz, &q, false);
        let fr = forces(&f, &q);
        let fscale = (fr.iter().map(|v| v * v).sum::<f64>() / n as f64).sqrt();
        let h = 1e-5;
        for &k in &[0usize, 7, 31, 100, 179] {
            let mut xp = xyz.clone();
            xp[k] += h;
            let up = energy(&mut p, &xp, &q);
            xp[k] -= 2.0 * h;
            let um = energy(&mut p, &xp, &q);
            let fd = -(up - um) / (2.0 * h);
            // SPME forces are the exact gradient of its energy; the others agree to the accuracy
            let tolr = if method == Method::Spme { 1e-6 } else { 1e-6 } * fscale;
            assert!((fd - fr[k]).abs() < tolr, "{method:?} coordinate {k}: FD {fd} vs F {}", fr[k]);
        }
    }
}

#[test]
fn virial_is_strain_derivative() {
    let n = 80;
    let cell = triclinic();
    let (xyz, q) = random_system(&cell, n, 13, 0.0);
    for method in [Method::Spectral, Method::Spme, Method::Direct] {
        let mut p = CpuEwald::new(method, &cell, n, 1e-9, &opts(2)).unwrap();
        let (_, _, r) = run(&mut p, &xyz, &q, true);
        let h = 1e-6;
        // strains that keep the cell lower-triangular: ε_αβ with α ≤ β (x' = x + ε_αβ r_β)
        for (a, b) in [(0usize, 0usize), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)] {
            let strained = |e: f64| -> ([f64; 9], Vec<f64>) {
                let mut c = cell;
                for v in 0..3 {
                    c[3 * v + a] += e * cell[3 * v + b];
                }
                let mut x = xyz.clone();
                for i in 0..n {
                    x[3 * i + a] += e * xyz[3 * i + b];
                }
                (c, x)
            };
            let (cp, xp) = strained(h);
            let (cm, xm) = strained(-h);
            p.set_box(&cp).unwrap();
            let up = energy(&mut p, &xp, &q);
            p.set_box(&cm).unwrap();
            let um = energy(&mut p, &xm, &q);
            p.set_box(&cell).unwrap();
            let fd = -(up - um) / (2.0 * h);
            let w = r.virial[3 * a + b];
            assert!((fd - w).abs() < 1e-6 * r.energy.abs(), "{method:?} W_{a}{b}: FD {fd} vs {w}");
        }
        let tr = r.virial[0] + r.virial[4] + r.virial[8];
        assert!((tr - r.energy).abs() < 1e-7 * r.energy.abs(), "{method:?}: tr W {tr} vs U {}", r.energy);
    }
}

#[test]
fn nonneutral_background_term() {
    let n = 200;
    let cell = cube(2.5);
    let (xyz, q) = random_system(&cell, n, 21, 3.0);
    let qt: f64 = q.iter().sum();
    assert!((qt - 3.0).abs() < 1e-12);
    // the total energy with the background term does not depend on ξ
    let mut energies = Vec::new();
    for xi in [4.0, 5.0, 6.0] {
        let o = EwaldOpts { overrides: Overrides { xi, ..Overrides::default() }, ..opts(2) };
        let mut p = CpuEwald::new(Method::Direct, &cell, n, 1e-11, &o).unwrap();
        energies.push(run(&mut p, &xyz, &q, true).2);
    }
    for e in &energies[1..] {
        assert!((e.energy - energies[0].energy).abs() < 1e-9 * energies[0].energy.abs(), "{energies:?}");
        let tr = e.virial[0] + e.virial[4] + e.virial[8];
        assert!((tr - e.energy).abs() < 1e-8 * e.energy.abs(), "tr W {tr} U {}", e.energy);
    }
    for method in [Method::Spectral, Method::Spme] {
        let mut p = CpuEwald::new(method, &cell, n, 1e-8, &opts(2)).unwrap();
        let r = run(&mut p, &xyz, &q, false).2;
        assert!((r.energy - energies[0].energy).abs() < 1e-8 * energies[0].energy.abs(), "{method:?}");
    }
    // one charge alone in the box: U = −M_sc q²/(2L)·… the Wigner/Madelung constant of the
    // simple cubic lattice with background, ξ_sc = −2.837297479480620 (U = ξ_sc q²/(2L))
    let mut p = CpuEwald::new(Method::Spme, &cube(1.0), 1, 1e-10, &opts(1)).unwrap();
    let r = p.execute(&[0.3, 0.1, 0.7], &[1.0], None, None, false).unwrap();
    assert!((r.energy - 0.5 * -2.837297479480620).abs() < 1e-8, "{}", r.energy);
}

/// Changes the interaction of each pair `pairs[k]` (nearest image, searched over ±2 cells)
/// from `q_i q_j / r` to `scales[k] q_i q_j / r` in reference results `phi`, `f` (fields),
/// `u`, `w` (virial): the reference of the exclusion tests, by the plain pair formula.
#[allow(clippy::too_many_arguments)]
pub(super) fn scale_pairs(
    bx: &PeriodicBox, xyz: &[f64], q: &[f64], pairs: &[[i64; 2]], scales: &[f64], phi: &mut [f64], f: &mut [f64],
    u: &mut f64, w: &mut [f64; 9],
) {
    for (p, &s) in pairs.iter().zip(scales) {
        let c = 1.0 - s;
        let (i, j) = (p[0] as usize, p[1] as usize);
        let si = bx.frac([xyz[3 * i], xyz[3 * i + 1], xyz[3 * i + 2]]);
        let sj = bx.frac([xyz[3 * j], xyz[3 * j + 1], xyz[3 * j + 2]]);
        let ds: Vec<f64> = (0..3).map(|d| (si[d] - sj[d]) - (si[d] - sj[d]).round()).collect();
        let mut best = [0.0; 3];
        let mut r2b = f64::INFINITY;
        for a in -2..=2 {
            for b in -2..=2 {
                for cc in -2..=2 {
                    let d = bx.cart([ds[0] + a as f64, ds[1] + b as f64, ds[2] + cc as f64]);
                    let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                    if r2 < r2b {
                        r2b = r2;
                        best = d;
                    }
                }
            }
        }
        let r = r2b.sqrt();
        phi[i] -= c * q[j] / r;
        phi[j] -= c * q[i] / r;
        *u -= c * q[i] * q[j] / r;
        for d in 0..3 {
            f[3 * i + d] -= c * q[j] * best[d] / (r * r2b);
            f[3 * j + d] += c * q[i] * best[d] / (r * r2b);
        }
        for a in 0..3 {
            for b in 0..3 {
                w[3 * a + b] -= c * q[i] * q[j] * best[a] * best[b] / (r * r2b);
            }
        }
    }
}

#[test]
fn exclusions_remove_nearest_image_pairs() {
    let n = 150;
    let cell = triclinic();
    let (xyz, q) = random_system(&cell, n, 17, 0.0);
    let bx = PeriodicBox::new(&cell).unwrap();
    // pairs: some close neighbours (bonded-like) and some far apart
    let pairs: Vec<[i64; 2]> = vec![[0, 1], [2, 50], [7, 3], [10, 149], [99, 98], [60, 61]];
    let mut dp = CpuEwald::new(Method::Direct, &cell, n, 1e-11, &opts(2)).unwrap();
    let (phi0, f0, r0) = run(&mut dp, &xyz, &q, true);
    // reference: subtract q_i q_j/r for the nearest image
    let (mut phi_ref, mut f_ref, mut u_ref, mut w_ref) = (phi0, f0, r0.energy, r0.virial);
    scale_pairs(&bx, &xyz, &q, &pairs, &[0.0; 6], &mut phi_ref, &mut f_ref, &mut u_ref, &mut w_ref);
    for method in [Method::Direct, Method::Spectral, Method::Spme] {
        let tol = if method == Method::Direct { 1e-11 } else { 1e-8 };
        let mut p = CpuEwald::new(method, &cell, n, tol, &opts(2)).unwrap();
        p.set_exclusions(&pairs).unwrap();
        let (phi, f, r) = run(&mut p, &xyz, &q, true);
        let lim = if method == Method::Direct { 1e-9 } else { 1e-6 };
        assert!(rel_rms(&phi, &phi_ref) < lim, "{method:?} phi {}", rel_rms(&phi, &phi_ref));
        assert!(rel_rms(&f, &f_ref) < lim, "{method:?} field {}", rel_rms(&f, &f_ref));
        assert!((r.energy - u_ref).abs() < lim * u_ref.abs(), "{method:?} U {} vs {u_ref}", r.energy);
        assert!(rel_rms(&r.virial, &w_ref) < lim, "{method:?} virial");
    }
    let mut p = CpuEwald::new(Method::Spme, &cell, n, 1e-5, &opts(1)).unwrap();
    assert!(matches!(p.set_exclusions(&[[0, 0]]), Err(Error::InvalidArg(_))));
    assert!(matches!(p.set_exclusions(&[[0, n as i64]]), Err(Error::InvalidArg(_))));
    p.set_exclusions(&[[0, 120]]).unwrap();
    assert!(matches!(p.execute(&xyz[..300], &q[..100], None, None, false), Err(Error::InvalidArg(_))));
}

#[test]
fn set_box_keeps_or_replans() {
    let n = 300;
    let (xyz, q) = random_system(&cube(3.0), n, 3, 0.0);
    let mut p = CpuEwald::new(Method::Spme, &cube(3.0), n, 1e-5, &opts(2)).unwrap();
    let g0 = p.params().grid;
    p.set_box(&cube(3.01)).unwrap();
    assert_eq!(p.params().grid, g0);
    let before = p.params().clone();
    p.set_box(&cube(4.5)).unwrap();
    // re-chosen for the larger cell (here a longer cutoff), within the accuracy target
    assert!(p.params().rc != before.rc || p.params().grid != before.grid, "{:?}", p.params());
    assert!(p.params().est_rel_err <= 1e-5, "{:?}", p.params());
    // results after set_box equal a fresh plan with the same parameters
    let o = EwaldOpts {
        overrides: Overrides { xi: p.params().xi, rc: p.params().rc, grid: p.params().grid, order: p.params().order },
        ..opts(2)
    };
    let mut fresh = CpuEwald::new(Method::Spme, &cube(4.5), n, 1e-5, &o).unwrap();
    let xyz2: Vec<f64> = xyz.iter().map(|v| v * 1.5).collect();
    let a = run(&mut p, &xyz2, &q, true);
    let b = run(&mut fresh, &xyz2, &q, true);
    assert!((a.2.energy - b.2.energy).abs() < 1e-12 * b.2.energy.abs());
    // a cutoff that no longer fits is an error, and the plan stays usable
    let o = EwaldOpts { overrides: Overrides { rc: 1.4, ..Overrides::default() }, ..opts(1) };
    let mut p = CpuEwald::new(Method::Spme, &cube(3.0), n, 1e-5, &o).unwrap();
    assert!(matches!(p.set_box(&cube(2.0)), Err(Error::InvalidArg(_))));
    assert_eq!(p.cell().volume, 27.0);
}

#[test]
fn thread_counts_agree() {
    let n = 500;
    let cell = triclinic();
    let (xyz, q) = random_system(&cell, n, 29, 0.0);
    for method in [Method::Spectral, Method::Spme] {
        let mut p1 = CpuEwald::new(method, &cell, n, 1e-6, &opts(1)).unwrap();
        let mut p3 = CpuEwald::new(method, &cell, n, 1e-6, &opts(3)).unwrap();
        let a = run(&mut p1, &xyz, &q, true);
        let b = run(&mut p3, &xyz, &q, true);
        assert!(rel_rms(&a.1, &b.1) < 1e-12);
        assert!((a.2.energy - b.2.energy).abs() < 1e-12 * a.2.energy.abs());
    }
}

#[test]
fn water_box() {
    let (xyz, q, cell) = load_system("water_tip3p_900").expect("data/water_tip3p_900 (docs/design.md §11.1)");
    let n = q.len();
    assert_eq!(xyz.len(), 3 * n);
    let mut dp = CpuEwald::new(Method::Direct, &cell, n, 1e-10, &opts(2)).unwrap();
    let (_, f0, r0) = run(&mut dp, &xyz, &q, false);
    let fr0 = forces(&f0, &q);
    for tol in [1e-4, 1e-6] {
        for method in [Method::Spectral, Method::Spme] {
            let mut p = CpuEwald::new(method, &cell, n, tol, &opts(2)).unwrap();
            let (_, f, r) = run(&mut p, &xyz, &q, false);
            let ef = rel_rms(&forces(&f, &q), &fr0);
            let eu = (r.energy - r0.energy).abs() / r0.energy.abs();
            eprintln!("water {method:?} tol {tol:e}: force {ef:.2e} energy {eu:.2e} params {:?}", p.params());
            // calibrated on the data folder's systems: force error within [tol/3, tol]
            assert!(ef <= tol && ef >= tol / 3.0 && eu <= tol, "water {method:?} tol {tol}: force {ef} energy {eu}");
        }
    }
}

/// The tolerance floors of `params::min_tol` are reached: at the floor, force and energy errors
/// against the direct sum at its own floor stay below it (random system, cubic and triclinic).
#[test]
fn tolerance_floor_is_reached() {
    let n = 300;
    for (cname, cell) in [("cubic", cube(2.0)), ("triclinic", triclinic())] {
        let (xyz, q) = random_system(&cell, n, 11, 0.0);
        let mut dp = CpuEwald::new(Method::Direct, &cell, n, 1e-20, &opts(2)).unwrap();
        assert_eq!(dp.params().warnings, WARN_TOL_CLAMPED);
        let (_, f0, r0) = run(&mut dp, &xyz, &q, false);
        let fr0 = forces(&f0, &q);
        for method in [Method::Spectral, Method::Spme] {
            let mut p = CpuEwald::new(method, &cell, n, 1e-30, &opts(2)).unwrap();
            let tol = p.params().tol_used;
            assert_eq!(tol, params::min_tol(method));
            let (_, f, r) = run(&mut p, &xyz, &q, false);
            let ef = rel_rms(&forces(&f, &q), &fr0);
            let eu = (r.energy - r0.energy).abs() / r0.energy.abs();
            eprintln!("{cname} {method:?} at the floor {tol:e}: force {ef:.2e} energy {eu:.2e} params {:?}", p.params());
            assert!(ef <= tol && eu <= tol, "{cname} {method:?}: force {ef:e} energy {eu:e}");
        }
    }
}

/// Scale covariance: a random triclinic system scaled by s gives φ/s, E/s², U/s, W/s.
#[test]
fn results_are_scale_covariant() {
    let n = 200;
    let cell = triclinic();
    let (xyz, q) = random_system(&cell, n, 3, 0.5);
    for method in [Method::Spectral, Method::Spme, Method::Direct] {
        let tol = 1e-9;
        let mut p = CpuEwald::new(method, &cell, n, tol, &opts(1)).unwrap();
        let (phi1, f1, r1) = run(&mut p, &xyz, &q, true);
        for s in [1e-140, 3.7e-20, 2.5e18, 1e140] {
            let cs = cell.map(|v| v * s);
            let xs: Vec<f64> = xyz.iter().map(|v| v * s).collect();
            let mut p = CpuEwald::new(method, &cs, n, tol, &opts(1)).unwrap();
            assert!((p.params().xi * s / (params_xi(&cell, method, n, tol)) - 1.0).abs() < 1e-9);
            let (phi, f, r) = run(&mut p, &xs, &q, true);
            let phis: Vec<f64> = phi.iter().map(|v| v * s).collect();
            let fs: Vec<f64> = f.iter().map(|v| v * s * s).collect();
            assert!(rel_rms(&phis, &phi1) < tol, "{method:?} s {s:e}");
            assert!(rel_rms(&fs, &f1) < tol, "{method:?} s {s:e}");
            assert!((r.energy * s - r1.energy).abs() < tol * r1.energy.abs(), "{method:?} s {s:e}");
            let ws: Vec<f64> = r.virial.iter().map(|v| v * s).collect();
            assert!(rel_rms(&ws, &r1.virial) < tol, "{method:?} s {s:e}");
        }
    }
}

fn params_xi(cell: &[f64; 9], method: Method, n: usize, tol: f64) -> f64 {
    CpuEwald::new(method, cell, n, tol, &opts(1)).unwrap().params().xi
}

/// A cell that changes scale by more than 2⁸ re-plans in the new unit and stays right.
#[test]
fn set_box_across_scales() {
    let n = 100;
    let cell = cube(2.0);
    let (xyz, q) = random_system(&cell, n, 9, 0.0);
    let mut p = CpuEwald::new(Method::Spme, &cell, n, 1e-8, &opts(1)).unwrap();
    let (_, _, r1) = run(&mut p, &xyz, &q, false);
    let s = 1e-30;
    p.set_box(&cell.map(|v| v * s)).unwrap();
    let xs: Vec<f64> = xyz.iter().map(|v| v * s).collect();
    let (_, _, r) = run(&mut p, &xs, &q, false);
    assert!((r.energy * s - r1.energy).abs() < 1e-8 * r1.energy.abs());
    assert!((p.params().rc / s / params_rc(&cell, n) - 1.0).abs() < 0.5);
}

fn params_rc(cell: &[f64; 9], n: usize) -> f64 {
    CpuEwald::new(Method::Spme, cell, n, 1e-8, &opts(1)).unwrap().params().rc
}
