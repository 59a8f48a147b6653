//! Tests of the terms an MD code asks for: scaled pairs, the k-space-only and real-space-only
//! plans, each against the classic Ewald sum split the same way (module docs, "Terms").

use super::tests::{forces, opts, random_system, rel_rms, run, scale_pairs, triclinic};
use super::*;

/// Bonded-like and distant pairs with force-field scales (AMBER 1/1.2, OPLS 0.5, excluded 0,
/// and 1 = unchanged), one pair listed twice.
fn scaled_pairs() -> (Vec<[i64; 2]>, Vec<f64>) {
    let pairs = vec![[0, 1], [2, 50], [7, 3], [10, 149], [99, 98], [60, 61], [5, 6], [1, 0], [40, 41]];
    let scales = vec![0.0, 0.5, 1.0 / 1.2, 0.0, 0.5, 1.0, 0.25, 0.0, 1.0 / 1.2];
    (pairs, scales)
}

/// Checks results against a reference within the documented contract of `tol` for random
/// charges: forces ≤ tol, energy ≤ 4 tol, virial ≤ 8 tol (relative).
#[allow(clippy::too_many_arguments)]
fn within_contract(what: &str, tol: f64, q: &[f64], f: &[f64], u: f64, w: &[f64; 9], f_ref: &[f64], u_ref: f64, w_ref: &[f64; 9]) {
    let ef = rel_rms(&forces(f, q), &forces(f_ref, q));
    let eu = (u - u_ref).abs() / u_ref.abs();
    let ew = rel_rms(w, w_ref);
    eprintln!("{what}: force {ef:.2e} energy {eu:.2e} virial {ew:.2e} (tol {tol:e})");
    assert!(ef <= tol, "{what}: force error {ef:e} > tol {tol:e}");
    assert!(eu <= 4.0 * tol, "{what}: energy error {eu:e} > 4 tol");
    assert!(ew <= 8.0 * tol, "{what}: virial error {ew:e} > 8 tol");
}

#[test]
fn scaled_pairs_against_the_classic_sum() {
    let n = 150;
    let cell = triclinic();
    let bx = PeriodicBox::new(&cell).unwrap();
    let (xyz, q) = random_system(&cell, n, 23, 0.5);
    let (pairs, scales) = scaled_pairs();
    let mut dp = CpuEwald::new(Method::Direct, &cell, n, 1e-12, &opts(2)).unwrap();
    let (mut phi_ref, mut f_ref, r0) = run(&mut dp, &xyz, &q, true);
    let (mut u_ref, mut w_ref) = (r0.energy, r0.virial);
    // the pair listed twice is changed once
    scale_pairs(&bx, &xyz, &q, &pairs[..7], &scales[..7], &mut phi_ref, &mut f_ref, &mut u_ref, &mut w_ref);
    scale_pairs(&bx, &xyz, &q, &pairs[8..], &scales[8..], &mut phi_ref, &mut f_ref, &mut u_ref, &mut w_ref);
    // the classic sum with the reference's parameters: the pair corrections alone, to rounding
    dp.set_exclusions_scaled(&pairs, &scales).unwrap();
    assert_eq!(dp.n_exclusions(), 7, "(0, 1) listed twice, (60, 61) with scale 1 dropped");
    let (phi, f, r) = run(&mut dp, &xyz, &q, true);
    for (what, e) in [
        ("phi", rel_rms(&phi, &phi_ref)),
        ("field", rel_rms(&f, &f_ref)),
        ("energy", (r.energy - u_ref).abs() / u_ref.abs()),
        ("virial", rel_rms(&r.virial, &w_ref)),
    ] {
        assert!(e < 1e-12, "direct sum, scaled pairs: {what} {e:e}");
    }
    for method in [Method::Spectral, Method::Spme] {
        for tol in [1e-4, 1e-6] {
            let mut p = CpuEwald::new(method, &cell, n, tol, &opts(2)).unwrap();
            p.set_exclusions_scaled(&pairs, &scales).unwrap();
            let (phi, f, r) = run(&mut p, &xyz, &q, true);
            within_contract(&format!("{method:?} scaled pairs, tol {tol:e}"), tol, &q, &f, r.energy, &r.virial, &f_ref, u_ref, &w_ref);
            assert!(rel_rms(&phi, &phi_ref) <= 4.0 * tol, "{method:?} phi {:e}", rel_rms(&phi, &phi_ref));
        }
        // all scales 0 is set_exclusions
        let mut a = CpuEwald::new(method, &cell, n, 1e-6, &opts(1)).unwrap();
        let mut b = CpuEwald::new(method, &cell, n, 1e-6, &opts(1)).unwrap();
        a.set_exclusions_scaled(&pairs, &vec![0.0; pairs.len()]).unwrap();
        b.set_exclusions(&pairs).unwrap();
        assert_eq!(run(&mut a, &xyz, &q, true), run(&mut b, &xyz, &q, true));
    }
    // bad lists are refused and the earlier one kept
    let mut p = CpuEwald::new(Method::Spme, &cell, n, 1e-5, &opts(1)).unwrap();
    p.set_exclusions_scaled(&pairs, &scales).unwrap();
    assert!(matches!(p.set_exclusions_scaled(&[[0, 1], [1, 0]], &[0.5, 0.0]), Err(Error::InvalidArg(_))));
    assert!(matches!(p.set_exclusions_scaled(&[[0, 1]], &[f64::INFINITY]), Err(Error::NonFinite(_))));
    assert!(matches!(p.set_exclusions_scaled(&[[0, 1]], &[]), Err(Error::InvalidArg(_))));
    assert!(matches!(p.set_exclusions_scaled(&[[0, n as i64]], &[0.5]), Err(Error::InvalidArg(_))));
    assert_eq!(p.n_exclusions(), 7);
}

#[test]
fn scaled_coincident_pairs_are_refused() {
    let cell = triclinic();
    let xyz = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 1.5, 1.0, 1.0];
    let q = [1.0, -1.0, 0.5];
    let mut p = CpuEwald::new(Method::Spme, &cell, 3, 1e-5, &opts(1)).unwrap();
    p.set_exclusions_scaled(&[[0, 1]], &[0.5]).unwrap();
    match p.execute(&xyz, &q, None, None, false) {
        Err(Error::InvalidArg(m)) => assert!(m.contains("charges 0 and 1 coincide"), "{m}"),
        other => panic!("{other:?}"),
    }
    p.set_exclusions_scaled(&[[0, 1]], &[0.0]).unwrap();
    assert!(p.execute(&xyz, &q, None, None, false).is_ok());
}

/// The overrides that pin a plan's parameters to those of `p`.
fn pinned(p: &CpuEwald) -> Overrides {
    let c = p.params();
    Overrides { xi: c.xi, rc: c.rc, grid: c.grid, order: c.order }
}

#[test]
fn kspace_and_real_terms_add_up_to_the_whole_sum() {
    let n = 150;
    let cell = triclinic();
    let (xyz, q) = random_system(&cell, n, 31, -0.75);
    let (pairs, scales) = scaled_pairs();
    for method in [Method::Spectral, Method::Spme, Method::Direct] {
        let auto = CpuEwald::new(method, &cell, n, 1e-6, &opts(2)).unwrap();
        let ov = pinned(&auto);
        let plan = |terms| {
            let mut p = CpuEwald::new(method, &cell, n, 1e-6, &EwaldOpts { overrides: ov, terms, ..opts(2) }).unwrap();
            p.set_exclusions_scaled(&pairs, &scales).unwrap();
            assert_eq!(p.terms(), terms);
            p
        };
        let (mut all, mut ks, mut re) = (plan(Terms::All), plan(Terms::KSpace), plan(Terms::Real));
        assert_eq!(ks.params().xi, all.params().xi);
        assert_eq!(re.params().grid, all.params().grid);
        let (phi, f, r) = run(&mut all, &xyz, &q, true);
        let (phi_k, f_k, r_k) = run(&mut ks, &xyz, &q, true);
        let (phi_r, f_r, r_r) = run(&mut re, &xyz, &q, true);
        let sum = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x + y).collect::<Vec<f64>>();
        let w_sum: Vec<f64> = (0..9).map(|k| r_k.virial[k] + r_r.virial[k]).collect();
        let lim = 1e-12;
        assert!(rel_rms(&sum(&phi_k, &phi_r), &phi) < lim, "{method:?} phi {:e}", rel_rms(&sum(&phi_k, &phi_r), &phi));
        assert!(rel_rms(&sum(&f_k, &f_r), &f) < lim, "{method:?} field {:e}", rel_rms(&sum(&f_k, &f_r), &f));
        assert!(((r_k.energy + r_r.energy) - r.energy).abs() < lim * r.energy.abs(), "{method:?} energy");
        assert!(rel_rms(&w_sum, &r.virial) < lim, "{method:?} virial");
        // neither part is negligible, so the test would see a term in the wrong plan
        for part in [&f_k, &f_r] {
            assert!(rel_rms(part, &f) > 1e-2, "{method:?}");
        }
    }
}

/// `Σ w_ij erfc(ξr)/r` over the minimum-image pairs closer than `rc` in the orthorhombic cell
/// `l`, as an MD code's pair loop sums it: `w = 1`, or the pair's scale (0 when excluded).
/// Returns potentials, fields, energy and virial.
#[allow(clippy::type_complexity)]
fn callers_real_space(
    l: [f64; 3], xyz: &[f64], q: &[f64], xi: f64, rc: f64, pairs: &[[i64; 2]], scales: &[f64],
) -> (Vec<f64>, Vec<f64>, f64, [f64; 9]) {
    let n = q.len();
    let c2 = 2.0 * xi / std::f64::consts::PI.sqrt();
    let (mut phi, mut f, mut u, mut w) = (vec![0.0; n], vec![0.0; 3 * n], 0.0, [0.0; 9]);
    for i in 0..n {
        for j in i + 1..n {
            let k = pairs.iter().position(|p| (p[0] as usize, p[1] as usize) == (i, j) || (p[0] as usize, p[1] as usize) == (j, i));
            let wij = k.map_or(1.0, |k| scales[k]);
            let mut d = [0.0; 3];
            for a in 0..3 {
                let v = xyz[3 * i + a] - xyz[3 * j + a];
                d[a] = v - l[a] * (v / l[a]).round();
            }
            let r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
            if r2 >= rc * rc {
                continue;
            }
            let r = r2.sqrt();
            let v = wij * libm::erfc(xi * r) / r;
            let fs = (v + wij * c2 * (-xi * xi * r2).exp()) / r2;
            phi[i] += q[j] * v;
            phi[j] += q[i] * v;
            u += q[i] * q[j] * v;
            for a in 0..3 {
                f[3 * i + a] += q[j] * fs * d[a];
                f[3 * j + a] -= q[i] * fs * d[a];
                for b in 0..3 {
                    w[3 * a + b] += q[i] * q[j] * fs * d[a] * d[b];
                }
            }
        }
    }
    (phi, f, u, w)
}

#[test]
fn kspace_terms_with_the_callers_cutoff_against_the_classic_sum() {
    let n = 400;
    let l = [3.0, 3.2, 3.4];
    let cell = [l[0], 0.0, 0.0, 0.0, l[1], 0.0, 0.0, 0.0, l[2]];
    let bx = PeriodicBox::new(&cell).unwrap();
    let (xyz, q) = random_system(&cell, n, 41, 0.0);
    let (pairs, scales) = scaled_pairs();
    // reference: the classic Ewald sum with every pair, then the scaled pairs by 1/r
    let mut dp = CpuEwald::new(Method::Direct, &cell, n, 1e-12, &opts(2)).unwrap();
    let (_, mut f_ref, r0) = run(&mut dp, &xyz, &q, true);
    let (mut u_ref, mut w_ref) = (r0.energy, r0.virial);
    let mut phi_dummy = vec![0.0; n];
    scale_pairs(&bx, &xyz, &q, &pairs[..7], &scales[..7], &mut phi_dummy, &mut f_ref, &mut u_ref, &mut w_ref);
    scale_pairs(&bx, &xyz, &q, &pairs[8..], &scales[8..], &mut phi_dummy, &mut f_ref, &mut u_ref, &mut w_ref);
    let rc = 1.1; // the MD code's cutoff
    for method in [Method::Spme, Method::Spectral] {
        for tol in [1e-4, 1e-6] {
            let o = EwaldOpts { overrides: Overrides { rc, ..Overrides::default() }, terms: Terms::KSpace, ..opts(2) };
            let mut p = CpuEwald::new(method, &cell, n, tol, &o).unwrap();
            assert_eq!(p.params().rc, rc);
            p.set_exclusions_scaled(&pairs, &scales).unwrap();
            let (_, f_k, r_k) = run(&mut p, &xyz, &q, true);
            let (_, f_r, u_r, w_r) = callers_real_space(l, &xyz, &q, p.params().xi, rc, &pairs, &scales);
            let f: Vec<f64> = f_k.iter().zip(&f_r).map(|(a, b)| a + b).collect();
            let w: [f64; 9] = std::array::from_fn(|k| r_k.virial[k] + w_r[k]);
            within_contract(&format!("{method:?} k-space only, tol {tol:e}"), tol, &q, &f, r_k.energy + u_r, &w, &f_ref, u_ref, &w_ref);
        }
    }
}

