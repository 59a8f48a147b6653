//! Tests of the periodic FMM in rectangular boxes ([`Boundary::PeriodicBox`]): the cube
//! decomposition rule, the cubic special case bit for bit, agreement with the repository's
//! Ewald module on random neutral systems at every tolerance, a supercell against the cubic
//! box it tiles, and the NaCl Madelung constant in a 2×1×1 supercell.

use super::*;
use crate::ewald::{EwaldOpts, CpuEwald, Method};
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

/// Relative l2 error of `a` against `b`.
fn rel_l2(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den).sqrt()
}

fn run(boundary: Boundary, xyz: &[f64], q: &[f64], tol: f64, opts: &FmmOpts) -> (Vec<f64>, Vec<f64>, f64, FmmStats) {
    let n = q.len();
    let mut plan = CpuFmm::new(boundary, tol, opts).unwrap();
    let (mut phi, mut field) = (vec![0.0; n], vec![0.0; 3 * n]);
    let u = plan.execute(xyz, q, Some(&mut phi), Some(&mut field)).unwrap();
    (phi, field, u, plan.stats())
}

/// The Ewald module's potentials, fields and energy in the box `sides`, at `tol`.
fn ewald(method: Method, sides: [f64; 3], xyz: &[f64], q: &[f64], tol: f64) -> (Vec<f64>, Vec<f64>, f64) {
    let n = q.len();
    let cell = [sides[0], 0.0, 0.0, 0.0, sides[1], 0.0, 0.0, 0.0, sides[2]];
    let mut ew = CpuEwald::new(method, &cell, n, tol, &EwaldOpts::default()).unwrap();
    let (mut pe, mut fe) = (vec![0.0; n], vec![0.0; 3 * n]);
    let ue = ew.execute(xyz, q, Some(&mut pe), Some(&mut fe), false).unwrap().energy;
    (pe, fe, ue)
}

#[test]
fn cube_cells_rule() {
    let c = |s: [f64; 3]| periodic::cube_cells(s).map(|(s, n)| (s, n));
    assert_eq!(c([2.0, 1.0, 1.0]), Some((1.0, [2, 1, 1])));
    assert_eq!(c([0.7, 1.4, 2.1]).map(|x| x.1), Some([1, 2, 3]));
    assert_eq!(c([3.0, 2.0, 2.0]).map(|x| x.1), Some([3, 2, 2]));
    assert_eq!(c([1.0, 1.5, 1.0]).map(|x| x.1), Some([2, 3, 2]));
    assert_eq!(c([5.0, 5.0, 5.0]), Some((5.0, [1, 1, 1])));
    assert_eq!(c([1.0, 1.0 + 1e-13, 1.0]).map(|x| x.1), Some([1, 1, 1]));
    for bad in [[1.0, 2f64.sqrt(), 1.0], [1.0, 5.0, 1.0], [4.0, 4.0, 3.0], [3.0, 3.0, 2.0], [1.0, 1.0 + 1e-9, 1.0]] {
        assert_eq!(c(bad), None, "{bad:?}");
        match CpuFmm::new(Boundary::PeriodicBox { sides: bad }, 1e-6, &FmmOpts::default()) {
            Err(Error::InvalidArg(m)) => assert!(m.contains("integer multiples"), "{m}"),
            other => panic!("{bad:?}: {:?}", other.err()),
        }
    }
    assert_eq!(periodic::root_level([1, 1, 1]), 0);
    assert_eq!(periodic::root_level([2, 1, 1]), 1);
    assert_eq!(periodic::root_level([1, 3, 2]), 2);
    assert_eq!(periodic::root_level([4, 1, 1]), 2);
    // non-positive or non-finite sides, a too deep tree (the CUDA backend: crate::plans::fmm)
    for bad in [[1.0, 0.0, 1.0], [1.0, f64::NAN, 2.0], [-2.0, 1.0, 1.0]] {
        assert!(matches!(CpuFmm::new(Boundary::PeriodicBox { sides: bad }, 1e-6, &FmmOpts::default()), Err(Error::InvalidArg(_))), "{bad:?}");
    }
    let deep = FmmOpts { depth: Some(params::MAX_DEPTH), ..Default::default() };
    assert!(matches!(CpuFmm::new(Boundary::PeriodicBox { sides: [2.0, 1.0, 1.0] }, 1e-6, &deep), Err(Error::InvalidArg(_))));
    assert!(CpuFmm::new(Boundary::PeriodicBox { sides: [1.0, 1.0, 1.0] }, 1e-6, &deep).is_ok());
}

/// A `PeriodicBox` with equal sides is the cubic `Periodic` plan, bit for bit.
#[test]
fn equal_sides_are_the_cubic_box_bit_for_bit() {
    let mut r = Pcg64::seed_from_u64(80);
    let n = 700;
    let xyz: Vec<f64> = (0..3 * n).map(|_| 1.3 * r.gen::<f64>()).collect();
    let q: Vec<f64> = (0..n).map(|_| r.gen::<f64>() - 0.5).collect();
    for (tol, depth) in [(1e-6, None), (1e-3, Some(2))] {
        let o = FmmOpts { depth, ..Default::default() };
        let a = run(Boundary::Periodic { side: 1.3 }, &xyz, &q, tol, &o);
        let b = run(Boundary::PeriodicBox { sides: [1.3; 3] }, &xyz, &q, tol, &o);
        assert_eq!((a.0, a.1, a.2), (b.0, b.1, b.2));
        assert_eq!(a.3.depth, b.3.depth);
    }
    assert_eq!(Boundary::PeriodicBox { sides: [1.3; 3] }.normalized(), Boundary::Periodic { side: 1.3 });
    assert_eq!(Boundary::PeriodicBox { sides: [1.3, 1.3 * (1.0 + 1e-13), 1.3] }.normalized(), Boundary::Periodic { side: 1.3 });
    assert_eq!(Boundary::PeriodicBox { sides: [2.6, 1.3, 1.3] }.normalized(), Boundary::PeriodicBox { sides: [2.6, 1.3, 1.3] });
}

/// Random neutral systems in rectangular boxes (2:1:1, 1:2:3, 1:1:4, 3:2:2; some particles
/// outside the box) against the Ewald module (spectral Ewald at 1e-13), at tol 1e-3, 1e-6,
/// 1e-9: the relative l2 errors of the potentials and fields and the energy error are below
/// the tolerance.
#[test]
fn rectangular_against_ewald_module() {
    let mut r = Pcg64::seed_from_u64(81);
    for (sides, n) in [([2.0, 1.0, 1.0], 2000usize), ([0.9, 1.8, 2.7], 2500), ([1.0, 1.0, 4.0], 2000), ([2.4, 1.6, 1.6], 2500)] {
        let xyz: Vec<f64> = (0..3 * n).map(|i| sides[i % 3] * (1.1 * r.gen::<f64>() - 0.05)).collect();
        let mut q: Vec<f64> = (0..n).map(|_| r.gen::<f64>() - 0.5).collect();
        let m = q.iter().sum::<f64>() / n as f64;
        q.iter_mut().for_each(|v| *v -= m);
        let (pe, fe, ue) = ewald(Method::Spectral, sides, &xyz, &q, 1e-13);
        let uabs = 0.5 * q.iter().zip(&pe).map(|(a, b)| (a * b).abs()).sum::<f64>();
        for tol in [1e-3, 1e-6, 1e-9] {
            let t = std::time::Instant::now();
            CpuFmm::new(Boundary::PeriodicBox { sides }, tol, &FmmOpts::default()).unwrap();
            eprintln!("rect {sides:?} tol {tol:e}: plan (lattice tensors) {:.2} s", t.elapsed().as_secs_f64());
            let (phi, field, u, st) = run(Boundary::PeriodicBox { sides }, &xyz, &q, tol, &FmmOpts::default());
            let (ep, ef, eu) = (rel_l2(&phi, &pe), rel_l2(&field, &fe), (u - ue).abs() / uabs);
            eprintln!("rect {sides:?} n = {n} tol {tol:e}: p = {} D = {:?}: phi {ep:.2e} field {ef:.2e} energy {eu:.2e}", st.order, st.depth);
            assert!(ep <= tol && ef <= tol && eu <= tol, "{sides:?} tol {tol:e}: phi {ep:e} field {ef:e} energy {eu:e}");
        }
    }
}

/// A charged system (neutralising background) and fixed depths, against the Ewald module.
#[test]
fn rectangular_charged_and_fixed_depths() {
    let mut r = Pcg64::seed_from_u64(82);
    let sides = [1.0, 2.0, 1.0];
    let n = 1500;
    let xyz: Vec<f64> = (0..3 * n).map(|i| sides[i % 3] * r.gen::<f64>()).collect();
    let q: Vec<f64> = (0..n).map(|_| r.gen::<f64>() - 0.3).collect();
    let (pe, fe, ue) = ewald(Method::Spectral, sides, &xyz, &q, 1e-13);
    let uabs = 0.5 * q.iter().zip(&pe).map(|(a, b)| (a * b).abs()).sum::<f64>();
    for (tol, depth) in [(1e-4, Some(1)), (1e-6, Some(2)), (1e-8, Some(3)), (1e-9, None)] {
        let (phi, field, u, st) = run(Boundary::PeriodicBox { sides }, &xyz, &q, tol, &FmmOpts { depth, ..Default::default() });
        let (ep, ef, eu) = (rel_l2(&phi, &pe), rel_l2(&field, &fe), (u - ue).abs() / uabs);
        eprintln!("rect charged D {:?}: tol {tol:e} p = {}: phi {ep:.2e} field {ef:.2e} energy {eu:.2e}", st.depth, st.order);
        assert!(ep <= tol && ef <= tol && eu <= tol, "tol {tol:e} D {depth:?}: phi {ep:e} field {ef:e} energy {eu:e}");
        if let Some(d) = depth {
            assert_eq!(st.depth, Some(d));
        }
    }
}

/// A 2×1×1 box and the 2×2×2 cube it tiles (the particles copied to the other three
/// cells) describe the same infinite system: same potentials and fields.
#[test]
fn supercell_matches_the_cube_it_tiles() {
    let mut r = Pcg64::seed_from_u64(83);
    let n = 400;
    let xyz: Vec<f64> = (0..3 * n).map(|i| if i % 3 == 0 { 2.0 } else { 1.0 } * r.gen::<f64>()).collect();
    let mut q: Vec<f64> = (0..n).map(|_| r.gen::<f64>() - 0.5).collect();
    let m = q.iter().sum::<f64>() / n as f64;
    q.iter_mut().for_each(|v| *v -= m);
    let (mut xyz4, mut q4) = (Vec::new(), Vec::new());
    for (dy, dz) in [(0.0, 0.0), (1.0, 0.0), (0.0, 1.0), (1.0, 1.0)] {
        for i in 0..n {
            xyz4.extend([xyz[3 * i], xyz[3 * i + 1] + dy, xyz[3 * i + 2] + dz]);
            q4.push(q[i]);
        }
    }
    let tol = 1e-9;
    let (pc, fc, _, _) = run(Boundary::Periodic { side: 2.0 }, &xyz4, &q4, tol, &FmmOpts::default());
    let (phi, field, _, _) = run(Boundary::PeriodicBox { sides: [2.0, 1.0, 1.0] }, &xyz, &q, tol, &FmmOpts::default());
    let (ep, ef) = (rel_l2(&phi, &pc[..n]), rel_l2(&field, &fc[..3 * n]));
    eprintln!("2x1x1 vs tiled 2x2x2 cube: phi {ep:.2e} field {ef:.2e}");
    assert!(ep <= 2.0 * tol && ef <= 2.0 * tol, "phi {ep:e} field {ef:e}");
}

/// The NaCl Madelung constant from the conventional 8-ion cell (side 1) repeated twice along x
/// (a 2×1×1 box of 16 ions), ions on the lattice sites and shifted: energy `−N M/(2 r0)` and
/// every potential `−q_i M/r0` (`r0 = ½`) to 1e-9 relative, the field zero by symmetry.
#[test]
fn nacl_madelung_in_a_2x1x1_supercell() {
    let exact = 1.747_564_594_633_182;
    let na = [[0.0, 0.0, 0.0], [0.0, 0.5, 0.5], [0.5, 0.0, 0.5], [0.5, 0.5, 0.0]];
    let cl = [[0.5, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 0.5], [0.5, 0.5, 0.5]];
    for shift in [[0.0; 3], [0.25; 3], [0.3, 0.17, 0.71]] {
        let (mut xyz, mut q) = (Vec::new(), Vec::new());
        for cx in 0..2 {
            for (set, c) in [(na, 1.0), (cl, -1.0)] {
                for p in set {
                    xyz.extend([p[0] + cx as f64 + shift[0], p[1] + shift[1], p[2] + shift[2]]);
                    q.push(c);
                }
            }
        }
        let n = q.len();
        for (tol, depth) in [(1e-9, None), (1e-9, Some(2)), (1e-12, None)] {
            let (phi, field, u, st) = run(Boundary::PeriodicBox { sides: [2.0, 1.0, 1.0] }, &xyz, &q, tol, &FmmOpts { depth, ..Default::default() });
            // U = −(N/2)·M·q²/r0 = −N·M with r0 = ½
            let m = -u / n as f64;
            let em = (m - exact).abs() / exact;
            let ep = (0..n).map(|i| (-q[i] * phi[i] * 0.5 - exact).abs()).fold(0.0, f64::max) / exact;
            let ef = field.iter().fold(0.0f64, |a, v| a.max(v.abs())) / 4.0; // relative to q/r0²
            eprintln!("NaCl 2x1x1 shift {shift:?} tol {tol:e}: p = {} D = {:?}: M = {m:.15} (error {em:.2e}), worst ion {ep:.2e}, field {ef:.2e}", st.order, st.depth);
            assert!(em <= tol && ep <= tol && ef <= tol, "shift {shift:?} tol {tol:e}: M {em:e} ions {ep:e} field {ef:e}");
        }
    }
}

/// Particles just below the upper faces of a box whose side `n_d s` rounds up (`fl(3s)/(4s) >
/// 3/4`; the tree lowers such a period by an ulp so that no key can fall beyond the box): finite
/// results, equal to those of the same particles folded by the caller.
#[test]
fn particles_on_the_upper_faces_fold_into_the_box() {
    // fl(3s)/(4s) > 3/4 for this s: the period 3s rounds up
    let s: f64 = 0.701_546_366_168_601_9;
    assert!(3.0 * s / (4.0 * s) > 0.75);
    let sides = [s, 3.0 * s, 3.0 * s];
    let mut xyz = Vec::new();
    let mut q = Vec::new();
    for i in 0..40 {
        let t = i as f64 / 40.0;
        xyz.extend([0.5 * s, sides[1].next_down(), t * sides[2]]);
        xyz.extend([0.25 * s, t * sides[1], sides[2].next_down()]);
        q.extend([1.0, -1.0]);
    }
    let (phi, field, u, _) = run(Boundary::PeriodicBox { sides }, &xyz, &q, 1e-6, &FmmOpts::default());
    assert!(u.is_finite() && phi.iter().chain(&field).all(|v| v.is_finite()));
    let folded: Vec<f64> = xyz.iter().enumerate().map(|(i, &x)| if x >= sides[i % 3] { 0.0 } else { x }).collect();
    let (phi2, _, _, _) = run(Boundary::PeriodicBox { sides }, &folded, &q, 1e-6, &FmmOpts::default());
    assert!(rel_l2(&phi, &phi2) < 1e-6, "{}", rel_l2(&phi, &phi2));
}
