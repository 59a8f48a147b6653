//! Tests of the FMM: harmonics identities, each operator against the direct evaluation of the
//! expansion it represents, the full method against direct sums (open) and Ewald sums
//! (periodic), the NaCl Madelung constant.

use super::harmonics::*;
use super::*;
use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64;

fn rng(seed: u64) -> Pcg64 {
    Pcg64::seed_from_u64(seed)
}

fn rel(a: f64, b: f64) -> f64 {
    (a - b).abs() / b.abs().max(1e-300)
}

/// Relative l2 error of `a` against `b`.
fn rel_l2(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den).sqrt()
}

fn block(p: usize) -> Vec<f64> {
    vec![0.0; 2 * ncoef(p)]
}

/// Multipole expansion (box units) evaluated at `x`: `(1/h) Σ ω̃ conj(M((x−c)/h))`.
fn m2p(p: usize, om: &[f64], c: [f64; 3], h: f64, x: [f64; 3]) -> f64 {
    let mut b = block(p);
    irregular(p, [(x[0] - c[0]) / h, (x[1] - c[1]) / h, (x[2] - c[2]) / h], &mut b);
    dot_multipole(p, om, &b) / h
}

/// Local expansion (box units) evaluated at `x`: `(1/h) Σ μ̃ O((x−c)/h)`.
fn l2p_scalar(p: usize, mu: &[f64], c: [f64; 3], h: f64, x: [f64; 3]) -> f64 {
    let t = RegTables::new(p);
    let mut b = block(p);
    t.regular([(x[0] - c[0]) / h, (x[1] - c[1]) / h, (x[2] - c[2]) / h], &mut b);
    dot_local(p, mu, &b) / h
}

/// P2L (box units): `μ̃_lm = Σ q conj(M_lm((s − c)/h))`.
fn p2l(p: usize, src: &[([f64; 3], f64)], c: [f64; 3], h: f64) -> Vec<f64> {
    let nc = ncoef(p);
    let mut mu = block(p);
    let mut b = block(p);
    for &(s, q) in src {
        irregular(p, [(s[0] - c[0]) / h, (s[1] - c[1]) / h, (s[2] - c[2]) / h], &mut b);
        for i in 0..nc {
            mu[i] += q * b[i];
            mu[nc + i] -= q * b[nc + i];
        }
    }
    mu
}

fn p2m_ref(p: usize, src: &[([f64; 3], f64)], c: [f64; 3], h: f64) -> Vec<f64> {
    let t = RegTables::new(p);
    let x: Vec<f64> = src.iter().map(|s| s.0[0]).collect();
    let y: Vec<f64> = src.iter().map(|s| s.0[1]).collect();
    let z: Vec<f64> = src.iter().map(|s| s.0[2]).collect();
    let q: Vec<f64> = src.iter().map(|s| s.1).collect();
    let mut om = block(p);
    let mut s = p2m::LaneScratch::new(p);
    p2m::p2m(&t, &x, &y, &z, &q, c, 1.0 / h, &mut om, &mut s);
    om
}

fn direct_pot(src: &[([f64; 3], f64)], x: [f64; 3]) -> f64 {
    src.iter().map(|&(s, q)| q / ((x[0] - s[0]).powi(2) + (x[1] - s[1]).powi(2) + (x[2] - s[2]).powi(2)).sqrt()).sum()
}

/// Random charges in the cube of side `2a·h` about `c`.
fn cluster(r: &mut Pcg64, n: usize, c: [f64; 3], a: f64) -> Vec<([f64; 3], f64)> {
    (0..n)
        .map(|_| {
            ([c[0] + a * (2.0 * r.gen::<f64>() - 1.0), c[1] + a * (2.0 * r.gen::<f64>() - 1.0), c[2] + a * (2.0 * r.gen::<f64>() - 1.0)], r.gen::<f64>() - 0.5)
        })
        .collect()
}

fn max_rel_block(a: &[f64], b: &[f64]) -> f64 {
    let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    a.iter().zip(b).fold(0.0f64, |m, (x, y)| m.max((x - y).abs())) / scale
}

// ------------------------------------------------------------------ harmonics

#[test]
fn harmonics_match_legendre_definition() {
    // O_lm, M_lm against P_l^m computed by the textbook recurrence at a few points
    let p = 8;
    let fact = factorials(2 * p + 2);
    let t = RegTables::new(p);
    let nc = ncoef(p);
    for &r in &[[0.3f64, -0.7, 0.5], [-1.2, 0.1, -0.4], [0.0, 0.0, 2.0]] {
        let rn: f64 = (r[0] * r[0] + r[1] * r[1] + r[2] * r[2]).sqrt();
        let ct = r[2] / rn;
        let phi = r[1].atan2(r[0]);
        let mut o = block(p);
        let mut mm = block(p);
        t.regular(r, &mut o);
        irregular(p, r, &mut mm);
        for l in 0..=p {
            for m in 0..=l {
                // P_l^m with Condon–Shortley phase
                let st = (1.0 - ct * ct).sqrt();
                let mut pmm = 1.0;
                for k in 1..=m {
                    pmm *= -((2 * k - 1) as f64) * st;
                }
                let plm = if l == m {
                    pmm
                } else {
                    let mut a = pmm;
                    let mut b = ct * (2 * m + 1) as f64 * pmm;
                    for ll in m + 2..=l {
                        let c = ((2 * ll - 1) as f64 * ct * b - (ll + m - 1) as f64 * a) / (ll - m) as f64;
                        a = b;
                        b = c;
                    }
                    b
                };
                let (c, s) = ((m as f64 * phi).cos(), (m as f64 * phi).sin());
                let ov = rn.powi(l as i32) * plm / fact[l + m];
                let mv = fact[l - m] * plm / rn.powi(l as i32 + 1);
                let i = idx(l, m);
                assert!((o[i] - ov * c).abs() < 1e-13 * (1.0 + ov.abs()), "O re l={l} m={m}");
                assert!((o[nc + i] - ov * s).abs() < 1e-13 * (1.0 + ov.abs()), "O im l={l} m={m}");
                assert!((mm[i] - mv * c).abs() < 1e-12 * (1.0 + mv.abs()), "M re l={l} m={m}");
                assert!((mm[nc + i] - mv * s).abs() < 1e-12 * (1.0 + mv.abs()), "M im l={l} m={m}");
            }
        }
    }
}

#[test]
fn harmonics_addition_theorems() {
    let p = 10;
    let nc = ncoef(p);
    let t = RegTables::new(p);
    let a = [0.2, -0.3, 0.25];
    let b = [-0.1, 0.4, 0.3];
    let ab = [a[0] + b[0], a[1] + b[1], a[2] + b[2]];
    let (mut oa, mut ob, mut oab) = (block(p), block(p), block(p));
    t.regular(a, &mut oa);
    t.regular(b, &mut ob);
    t.regular(ab, &mut oab);
    // O(a+b) = Σ O_jk(a) O_{l−j,m−k}(b): the M2M formula with scale 1 applied to one point
    let mut sum = block(p);
    m2m::m2m(p, &oa, &ob, 1.0, &mut sum);
    assert!(max_rel_block(&sum, &oab) < 1e-14);
    // 1/|x − s| = Σ conj(O(s)) M(x), |s| < |x|
    let s = [0.1, 0.2, -0.15];
    let x = [1.5, -2.0, 1.0];
    let (mut os, mut mx) = (block(p), block(p));
    t.regular(s, &mut os);
    irregular(p, x, &mut mx);
    let approx = dot_multipole(p, &os, &mx);
    let exact = 1.0 / ((x[0] - s[0]).powi(2) + (x[1] - s[1]).powi(2) + (x[2] - s[2]).powi(2)).sqrt();
    assert!(rel(approx, exact) < 1e-11, "{approx} {exact}");
    let _ = nc;
}

// ------------------------------------------------------------------ operators

#[test]
fn p2m_against_direct_potential() {
    let mut r = rng(1);
    let p = 10;
    let (c, h) = ([0.3, -0.2, 0.5], 0.5);
    let src = cluster(&mut r, 40, c, 0.5 * h);
    let om = p2m_ref(p, &src, c, h);
    // far points at distance ≥ 4h: truncation error ≲ (√3/2 / 4)^{p+1} ≈ 5e-8
    let mut worst: f64 = 0.0;
    for _ in 0..50 {
        let dir = [r.gen::<f64>() - 0.5, r.gen::<f64>() - 0.5, r.gen::<f64>() - 0.5];
        let nn = (dir[0] * dir[0] + dir[1] * dir[1] + dir[2] * dir[2]).sqrt();
        let x = [c[0] + 4.0 * h * dir[0] / nn, c[1] + 4.0 * h * dir[1] / nn, c[2] + 4.0 * h * dir[2] / nn];
        let scale: f64 = src.iter().map(|s| s.1.abs()).sum::<f64>() / (4.0 * h);
        worst = worst.max((m2p(p, &om, c, h, x) - direct_pot(&src, x)).abs() / scale);
    }
    assert!(worst < 5e-8, "P2M error {worst}");
    // the error falls with distance like the bound
    let x = [c[0] + 20.0 * h, c[1], c[2]];
    assert!(rel(m2p(p, &om, c, h, x), direct_pot(&src, x)) < 1e-13);
}

#[test]
fn m2m_equals_direct_p2m_at_parent() {
    let mut r = rng(2);
    let p = 10;
    let (pc, h) = ([0.1, 0.2, -0.3], 1.0);
    for o in 0..8 {
        let d = [((o & 1) as f64 - 0.5) * 0.5, (((o >> 1) & 1) as f64 - 0.5) * 0.5, (((o >> 2) & 1) as f64 - 0.5) * 0.5];
        let cc = [pc[0] + d[0] * h, pc[1] + d[1] * h, pc[2] + d[2] * h];
        let src = cluster(&mut r, 30, cc, 0.25 * h);
        let child = p2m_ref(p, &src, cc, 0.5 * h);
        let t = RegTables::new(p);
        let mut shift = block(p);
        t.regular(d, &mut shift);
        let mut parent = block(p);
        m2m::m2m(p, &child, &shift, 0.5, &mut parent);
        let direct = p2m_ref(p, &src, pc, h);
        let e = max_rel_block(&parent, &direct);
        assert!(e < 1e-13, "octant {o}: M2M error {e}");
    }
}

#[test]
fn l2l_reexpands_the_parent_polynomial() {
    let mut r = rng(3);
    let p = 10;
    let (pc, h) = ([0.0, 0.5, -0.25], 2.0);
    // a local expansion from far sources
    let src = cluster(&mut r, 20, [pc[0] + 3.0 * h, pc[1] - 2.0 * h, pc[2] + 2.5 * h], 0.5 * h);
    let parent = p2l(p, &src, pc, h);
    let t = RegTables::new(p);
    for o in 0..8 {
        let d = [((o & 1) as f64 - 0.5) * 0.5, (((o >> 1) & 1) as f64 - 0.5) * 0.5, (((o >> 2) & 1) as f64 - 0.5) * 0.5];
        let cc = [pc[0] + d[0] * h, pc[1] + d[1] * h, pc[2] + d[2] * h];
        let mut shift = block(p);
        t.regular(d, &mut shift);
        let mut child = block(p);
        l2l::l2l(p, &parent, &shift, 0.5, &mut child);
        for _ in 0..10 {
            let x = [cc[0] + 0.25 * h * (2.0 * r.gen::<f64>() - 1.0), cc[1] + 0.25 * h * (2.0 * r.gen::<f64>() - 1.0), cc[2] + 0.25 * h * (2.0 * r.gen::<f64>() - 1.0)];
            let a = l2p_scalar(p, &child, cc, 0.5 * h, x);
            let b = l2p_scalar(p, &parent, pc, h, x);
            assert!(rel(a, b) < 1e-13, "octant {o}: {a} vs {b}");
        }
    }
}

#[test]
fn m2l_tensor_against_direct_local_expansion() {
    // sources concentrated near the source centre: the multipole truncation is negligible,
    // so the M2L result must equal the directly computed local expansion
    let mut r = rng(4);
    let p = 10;
    let h = 0.7;
    let ct = [0.1, -0.2, 0.3];
    for v in [[2, 0, 0], [3, -2, 1], [-2, -3, -3], [0, 2, -1]] {
        let cs = [ct[0] - v[0] as f64 * h, ct[1] - v[1] as f64 * h, ct[2] - v[2] as f64 * h];
        let src = cluster(&mut r, 10, cs, 0.02 * h);
        let om = p2m_ref(p, &src, cs, h);
        let mut tens = block(2 * p);
        irregular(2 * p, [v[0] as f64, v[1] as f64, v[2] as f64], &mut tens);
        let mut mu = block(p);
        m2l::m2l_tensor(p, &om, &tens, &mut mu);
        let direct = p2l(p, &src, ct, h);
        let e = max_rel_block(&mu, &direct);
        assert!(e < 1e-13, "v = {v:?}: M2L error {e}");
    }
}

#[test]
fn m2l_tile_kernel_equals_tensor_m2l_for_all_offsets() {
    let mut r = rng(5);
    for p in [1usize, 4, 10] {
        let tab = rotation::M2lTables::new(p);
        let nc2 = 2 * ncoef(p);
        // W random source expansions (with the m = 0 imaginary parts zero)
        let nsrc = simd::W;
        let mut mpole = vec![0.0; nsrc * nc2];
        // physically scaled: ω_lm ~ 1/√((l+m)!(l−m)!) (the normalised harmonics have O(1)
        // coefficients); errors are measured in the matching normalised norm of μ,
        // μ_lm ~ √((l+m)!(l−m)!)
        let fact = factorials(2 * p + 1);
        let nrm = |l: usize, m: usize| (fact[l + m] * fact[l - m]).sqrt();
        for b in 0..nsrc {
            for l in 0..=p {
                for m in 0..=l {
                    let i = idx(l, m);
                    mpole[b * nc2 + i] = (r.gen::<f64>() - 0.5) / nrm(l, m);
                    mpole[b * nc2 + nc2 / 2 + i] = if m == 0 { 0.0 } else { (r.gen::<f64>() - 0.5) / nrm(l, m) };
                }
            }
        }
        let w: Vec<f64> = (0..=p).flat_map(|l| (0..=l).map(move |m| (l, m))).map(|(l, m)| 1.0 / nrm(l, m)).collect();
        let mut s = m2l::M2lScratch::new(p);
        let mut worst: f64 = 0.0;
        for d in 0..rotation::NDIR {
            let v = rotation::dir_vector(d);
            if v.iter().map(|c| c.abs()).max().unwrap() < 2 {
                continue;
            }
            let mut src = [0u32; simd::W];
            for (k, sv) in src.iter_mut().enumerate() {
                *sv = if k == 3 { m2l::NONE } else { k as u32 };
            }
            let e = m2l::M2lEntry { dir: d as u16, src };
            m2l::m2l_tile(&tab, &[e], &mpole, &mut s);
            let mut tens = block(2 * p);
            irregular(2 * p, [v[0] as f64, v[1] as f64, v[2] as f64], &mut tens);
            for lane in 0..simd::W {
                let mut mu = block(p);
                if lane != 3 {
                    m2l::m2l_tensor(p, &mpole[lane * nc2..(lane + 1) * nc2], &tens, &mut mu);
                }
                let got: Vec<f64> = (0..nc2 / 2).map(|i| s.acc_re[i][lane]).chain((0..nc2 / 2).map(|i| s.acc_im[i][lane])).collect();
                let nc = nc2 / 2;
                let scale = (0..nc2).fold(1e-300f64, |m, i| m.max(mu[i].abs() * w[i % nc]));
                let err = (0..nc2).fold(0.0f64, |m, i| m.max((got[i] - mu[i]).abs() * w[i % nc])) / scale;
                if lane == 3 {
                    assert!(got.iter().all(|&x| x == 0.0));
                } else {
                    worst = worst.max(err);
                }
            }
        }
        assert!(worst < 1e-13, "p = {p}: tile kernel vs tensor M2L: {worst}");
    }
}

#[test]
fn l2p_potential_and_field_against_direct() {
    let mut r = rng(6);
    let p = 10;
    let (c, h) = ([0.2, 0.1, -0.1], 0.5);
    let src = cluster(&mut r, 30, [c[0] - 4.0 * h, c[1] + 3.0 * h, c[2] + 4.0 * h], 0.5 * h);
    let mu = p2l(p, &src, c, h);
    let tab = RegTables::new(p);
    let mut co = l2p::EvalCoefs::new(p);
    co.set(p, &mu, true);
    let n = 13;
    let pts = cluster(&mut r, n, c, 0.5 * h);
    let x: Vec<f64> = pts.iter().map(|s| s.0[0]).collect();
    let y: Vec<f64> = pts.iter().map(|s| s.0[1]).collect();
    let z: Vec<f64> = pts.iter().map(|s| s.0[2]).collect();
    let (mut ph, mut ex, mut ey, mut ez) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
    let mut s = p2m::LaneScratch::new(p);
    l2p::l2p(&tab, &co, &x, &y, &z, c, h, &mut ph, Some((&mut ex, &mut ey, &mut ez)), &mut s);
    // error bound ≈ (√3/2 · 2 / 6.4)^{p} ~ 1e-6 at this separation; check well below that
    for i in 0..n {
        let xi = pts[i].0;
        let pd = direct_pot(&src, xi);
        let mut e = [0.0; 3];
        for &(sp, q) in &src {
            let d = [xi[0] - sp[0], xi[1] - sp[1], xi[2] - sp[2]];
            let r3 = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).powf(1.5);
            for a in 0..3 {
                e[a] += q * d[a] / r3;
            }
        }
        let en = (e[0] * e[0] + e[1] * e[1] + e[2] * e[2]).sqrt();
        assert!((ph[i] - pd).abs() < 1e-7 * pd.abs().max(0.1), "phi {} vs {}", ph[i], pd);
        assert!((ex[i] - e[0]).abs() + (ey[i] - e[1]).abs() + (ez[i] - e[2]).abs() < 1e-6 * en.max(0.1), "E {:?} vs {:?}", [ex[i], ey[i], ez[i]], e);
        // and the vectorised potential equals the scalar evaluation of the same expansion
        assert!(rel(ph[i], l2p_scalar(p, &mu, c, h, xi)) < 1e-13);
    }
    // field = −∇ of the same polynomial: central differences of the scalar evaluation
    let xi = pts[0].0;
    let hh = 1e-5;
    for a in 0..3 {
        let mut xp = xi;
        let mut xm = xi;
        xp[a] += hh;
        xm[a] -= hh;
        let g = -(l2p_scalar(p, &mu, c, h, xp) - l2p_scalar(p, &mu, c, h, xm)) / (2.0 * hh);
        let got = [ex[0], ey[0], ez[0]][a];
        assert!((got - g).abs() < 1e-7 * got.abs().max(1.0), "axis {a}: {got} vs {g}");
    }
}

#[test]
fn p2p_against_direct() {
    let mut r = rng(7);
    let n = 37;
    let pts = cluster(&mut r, n, [0.0; 3], 1.0);
    let x: Vec<f64> = pts.iter().map(|s| s.0[0]).collect();
    let y: Vec<f64> = pts.iter().map(|s| s.0[1]).collect();
    let z: Vec<f64> = pts.iter().map(|s| s.0[2]).collect();
    let q: Vec<f64> = pts.iter().map(|s| s.1).collect();
    let pt = p2p::Particles { x: &x, y: &y, z: &z, q: &q };
    let shift = [0.3, -2.0, 0.1];
    let srcs = [p2p::SourceRange { start: 0, end: n as u32, shift: [0.0; 3] }, p2p::SourceRange { start: 5, end: 20, shift }];
    let (mut ph, mut ex, mut ey, mut ez) = (vec![0.0; n - 3], vec![0.0; n - 3], vec![0.0; n - 3], vec![0.0; n - 3]);
    p2p::p2p(pt, 3, n, &srcs, &mut ph, Some((&mut ex, &mut ey, &mut ez)));
    let mut ph2 = vec![0.0; n - 3];
    p2p::p2p(pt, 3, n, &srcs, &mut ph2, None);
    for i in 3..n {
        let (mut pd, mut e) = (0.0, [0.0; 3]);
        for j in 0..n {
            for (s, a, b) in [([0.0; 3], 0, n), (shift, 5, 20)] {
                if j < a || j >= b || (j == i && s == [0.0; 3]) {
                    continue;
                }
                let d = [x[i] - x[j] - s[0], y[i] - y[j] - s[1], z[i] - z[j] - s[2]];
                let rr = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                pd += q[j] / rr;
                for k in 0..3 {
                    e[k] += q[j] * d[k] / (rr * rr * rr);
                }
            }
        }
        let o = i - 3;
        assert!(rel(ph[o], pd) < 1e-13 && ph2[o] == ph[o]);
        assert!(rel(ex[o], e[0]) < 1e-12 && rel(ey[o], e[1]) < 1e-12 && rel(ez[o], e[2]) < 1e-12);
    }
}

// ------------------------------------------------------------------ full method, open

/// Direct sums over all pairs (potential, interleaved field), through the P2P kernel.
fn direct(xyz: &[f64], q: &[f64]) -> (Vec<f64>, Vec<f64>) {
    let n = q.len();
    let x: Vec<f64> = (0..n).map(|i| xyz[3 * i]).collect();
    let y: Vec<f64> = (0..n).map(|i| xyz[3 * i + 1]).collect();
    let z: Vec<f64> = (0..n).map(|i| xyz[3 * i + 2]).collect();
    let pt = p2p::Particles { x: &x, y: &y, z: &z, q };
    let srcs = [p2p::SourceRange { start: 0, end: n as u32, shift: [0.0; 3] }];
    let th = Threads::new(0).unwrap();
    const B: usize = 256;
    let nb = n.div_ceil(B);
    let mut out: Vec<Vec<f64>> = vec![Vec::new(); nb];
    th.chunks(&mut out, 1, |ci, o| {
        let (a, b) = (ci * B, ((ci + 1) * B).min(n));
        let (mut ph, mut ex, mut ey, mut ez) = (vec![0.0; b - a], vec![0.0; b - a], vec![0.0; b - a], vec![0.0; b - a]);
        p2p::p2p(pt, a, b, &srcs, &mut ph, Some((&mut ex, &mut ey, &mut ez)));
        let mut v = ph;
        for i in 0..b - a {
            v.extend_from_slice(&[ex[i], ey[i], ez[i]]);
        }
        o[0] = v;
    });
    let mut phi = Vec::with_capacity(n);
    let mut field = Vec::with_capacity(3 * n);
    for (ci, v) in out.iter().enumerate() {
        let m = ((ci + 1) * B).min(n) - ci * B;
        phi.extend_from_slice(&v[..m]);
        field.extend_from_slice(&v[m..]);
    }
    (phi, field)
}

fn uniform(r: &mut Pcg64, n: usize) -> (Vec<f64>, Vec<f64>) {
    let xyz: Vec<f64> = (0..3 * n).map(|_| r.gen::<f64>()).collect();
    let q: Vec<f64> = (0..n).map(|_| r.gen::<f64>() - 0.5).collect();
    (xyz, q)
}

/// Plummer sphere (scale 1), radii capped at 20, positive charges ±(random sign) — a strongly
/// clustered distribution.
fn plummer(r: &mut Pcg64, n: usize) -> (Vec<f64>, Vec<f64>) {
    let mut xyz = Vec::with_capacity(3 * n);
    for _ in 0..n {
        let rad = loop {
            let u: f64 = r.gen::<f64>();
            let rr = 1.0 / (u.powf(-2.0 / 3.0) - 1.0).sqrt();
            if rr < 20.0 {
                break rr;
            }
        };
        let ct: f64 = 2.0 * r.gen::<f64>() - 1.0;
        let ph: f64 = 2.0 * std::f64::consts::PI * r.gen::<f64>();
        let st = (1.0 - ct * ct).sqrt();
        xyz.extend_from_slice(&[rad * st * ph.cos(), rad * st * ph.sin(), rad * ct]);
    }
    let q: Vec<f64> = (0..n).map(|_| if r.gen::<bool>() { 1.0 } else { -1.0 } * r.gen::<f64>()).collect();
    (xyz, q)
}

fn run_open(xyz: &[f64], q: &[f64], tol: f64, opts: &FmmOpts) -> (Vec<f64>, Vec<f64>, f64, FmmStats) {
    let n = q.len();
    let mut plan = FmmPlan::new(Boundary::Open, tol, opts).unwrap();
    let mut phi = vec![0.0; n];
    let mut field = vec![0.0; 3 * n];
    let u = plan.execute(xyz, q, Some(&mut phi), Some(&mut field)).unwrap();
    (phi, field, u, plan.stats())
}

fn check_open(name: &str, xyz: &[f64], q: &[f64], tols: &[f64]) {
    let (pd, fd) = direct(xyz, q);
    let ud = 0.5 * q.iter().zip(&pd).map(|(a, b)| a * b).sum::<f64>();
    for &tol in tols {
        let (phi, field, u, st) = run_open(xyz, q, tol, &FmmOpts::default());
        let (ep, ef, eu) = (rel_l2(&phi, &pd), rel_l2(&field, &fd), rel(u, ud));
        eprintln!("{name}: n = {} tol = {tol:e}: p = {} D = {:?} leaves = {}: err phi {ep:.2e} field {ef:.2e} energy {eu:.2e} ({:.3} s)", q.len(), st.order, st.depth, st.nleaves, st.times.total);
        assert!(ep <= tol && ef <= tol && eu <= tol, "{name}: tol {tol:e}: phi {ep:e} field {ef:e} energy {eu:e}");
    }
}

#[test]
fn accuracy_uniform_1e3() {
    let (xyz, q) = uniform(&mut rng(10), 1000);
    check_open("uniform", &xyz, &q, &[1e-3, 1e-6, 1e-9]);
}

#[test]
fn accuracy_plummer_1e3() {
    let (xyz, q) = plummer(&mut rng(11), 1000);
    check_open("plummer", &xyz, &q, &[1e-3, 1e-6, 1e-9]);
}

#[test]
fn accuracy_uniform_2e4() {
    let (xyz, q) = uniform(&mut rng(12), 20000);
    check_open("uniform", &xyz, &q, &[1e-3, 1e-6, 1e-9]);
}

#[test]
fn accuracy_plummer_2e4() {
    let (xyz, q) = plummer(&mut rng(13), 20000);
    check_open("plummer", &xyz, &q, &[1e-3, 1e-6, 1e-9]);
}
