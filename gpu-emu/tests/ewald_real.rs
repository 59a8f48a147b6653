//! The GPU Ewald real-space pass (src/gpu/ewald/real_space.rs, kernels/ewald_real.cu) on the
//! emulator against the CPU real-space pass (`farfield::ewald::real_space_only`, the step
//! `CpuEwald::execute` runs) on the same parameters: random neutral and charged systems,
//! orthorhombic and triclinic cells, positions outside the cell, small and larger cell grids
//! (stencils of 27 and 125 offsets, cell images), the erfc fit and the exact erfc, 1 to 8
//! threads per atom, exclusions (duplicated, reversed, a coincident excluded pair, a pair
//! excluded across the periodic boundary). Tolerances: 1e-12 relative in the energy, 1e-11
//! relative RMS in φ and E, 1e-11 relative (to the largest entry) in the virial. Also: results
//! are added to the caller's arrays, errors as on the CPU, outputs untouched on error.

use farfield::ewald::{real_space_only, PeriodicBox};
use farfield::gpu::device::{download_vec, upload_new};
use farfield::gpu::ewald::real_space::GpuRealSpace;
use farfield::Error;
use farfield_gpu_emu::{EmuBuf, EmuDevice};
use rand::{Rng, SeedableRng};

struct Sys {
    bx: PeriodicBox,
    xyz: Vec<f64>,
    q: Vec<f64>,
}

/// `n` random charges in `cell` (fractional coordinates in [−0.5, 1.5): many outside the cell),
/// neutral or with a net charge.
fn system(cell: [f64; 9], n: usize, neutral: bool, seed: u64) -> Sys {
    let bx = PeriodicBox::new(&cell).unwrap();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(seed);
    let mut xyz = Vec::with_capacity(3 * n);
    for _ in 0..n {
        let s = [rng.gen_range(-0.5..1.5), rng.gen_range(-0.5..1.5), rng.gen_range(-0.5..1.5)];
        xyz.extend_from_slice(&bx.cart(s));
    }
    let mut q: Vec<f64> = (0..n).map(|_| rng.gen_range(-1.0..1.0)).collect();
    if neutral {
        let m = q.iter().sum::<f64>() / n as f64;
        q.iter_mut().for_each(|v| *v -= m);
    } else {
        q.iter_mut().for_each(|v| *v += 0.3);
    }
    Sys { bx, xyz, q }
}

/// Moves charge `j` to charge `i`'s position plus `off` plus the lattice vector combination
/// `img` (a bonded-like neighbour, possibly across the boundary).
fn place(s: &mut Sys, i: usize, j: usize, off: [f64; 3], img: [f64; 3]) {
    let l = s.bx.cart(img);
    for d in 0..3 {
        s.xyz[3 * j + d] = s.xyz[3 * i + d] + off[d] + l[d];
    }
}

fn rel_rms(a: &[f64], b: &[f64]) -> f64 {
    let num: f64 = a.iter().zip(b).map(|(x, y)| (x - y) * (x - y)).sum();
    let den: f64 = b.iter().map(|y| y * y).sum();
    (num / den).sqrt()
}

struct Run {
    phi: Vec<f64>,
    field: Vec<f64>,
    energy: f64,
    virial: [f64; 9],
}

/// The GPU pass with the outputs pre-filled (the pass adds to them; the fill is subtracted).
#[allow(clippy::too_many_arguments)]
fn gpu(s: &Sys, xi: f64, rc: f64, acc: f64, exact: bool, excl: &[[i64; 2]], kpa: Option<u32>, virial: bool) -> farfield::Result<Run> {
    gpu_prec(s, xi, rc, acc, exact, excl, kpa, virial, false)
}

/// [`gpu`] with the pair functions in `f32` when `mixed` ([`GpuRealSpace::set_mixed`]).
#[allow(clippy::too_many_arguments)]
fn gpu_prec(
    s: &Sys, xi: f64, rc: f64, acc: f64, exact: bool, excl: &[[i64; 2]], kpa: Option<u32>, virial: bool, mixed: bool,
) -> farfield::Result<Run> {
    let dev = EmuDevice::default();
    let n = s.q.len();
    let mut rs = GpuRealSpace::new(dev.clone(), xi, rc, acc, exact)?;
    rs.set_mixed(mixed);
    rs.set_exclusions(excl, None)?;
    rs.set_threads_per_atom(kpa)?;
    let xb = upload_new(&dev, &s.xyz)?;
    let qb = upload_new(&dev, &s.q)?;
    let phi0: Vec<f64> = (0..n).map(|i| 0.25 * i as f64).collect();
    let f0: Vec<f64> = (0..3 * n).map(|i| -0.5 * i as f64).collect();
    let mut pb = upload_new(&dev, &phi0)?;
    let mut fb = upload_new(&dev, &f0)?;
    let (energy, w) = rs.compute(&s.bx, n, &xb, &qb, Some(&mut pb), Some(&mut fb), virial)?;
    let phi: Vec<f64> = download_vec::<EmuDevice, f64>(&dev, &pb, n)?.iter().zip(&phi0).map(|(a, b)| a - b).collect();
    let field: Vec<f64> = download_vec::<EmuDevice, f64>(&dev, &fb, 3 * n)?.iter().zip(&f0).map(|(a, b)| a - b).collect();
    Ok(Run { phi, field, energy, virial: w })
}

/// GPU against CPU for one system and parameter set, with the given threads per atom.
#[allow(clippy::too_many_arguments)]
fn check(label: &str, s: &Sys, xi: f64, rc: f64, acc: f64, exact: bool, excl: &[[i64; 2]], kpas: &[Option<u32>]) {
    let (cphi, cfield, ce, cw) = real_space_only(&s.bx, &s.xyz, &s.q, xi, rc, acc, exact, excl, true, true).unwrap();
    for &kpa in kpas {
        let g = gpu(s, xi, rc, acc, exact, excl, kpa, true).unwrap();
        let ep = rel_rms(&g.phi, &cphi);
        let ef = rel_rms(&g.field, &cfield);
        let eu = (g.energy - ce).abs() / ce.abs();
        let wmax = cw.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let ew = g.virial.iter().zip(&cw).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max) / wmax;
        eprintln!("{label} kpa {kpa:?}: U {ce:.6e} rel err {eu:.1e}, phi {ep:.1e}, field {ef:.1e}, virial {ew:.1e}");
        assert!(eu <= 1e-12, "{label} kpa {kpa:?}: energy {} vs {ce} ({eu:e})", g.energy);
        assert!(ep <= 1e-11, "{label} kpa {kpa:?}: phi rel RMS {ep:e}");
        assert!(ef <= 1e-11, "{label} kpa {kpa:?}: field rel RMS {ef:e}");
        assert!(ew <= 1e-11, "{label} kpa {kpa:?}: virial {:?} vs {cw:?} ({ew:e})", g.virial);
        // the virial of a sum of Coulomb-like pair terms is symmetric
        for a in 0..3 {
            for b in 0..3 {
                assert_eq!(g.virial[3 * a + b], g.virial[3 * b + a]);
            }
        }
    }
}

const ORTHO: [f64; 9] = [2.0, 0.0, 0.0, 0.0, 2.2, 0.0, 0.0, 0.0, 1.9];
const TRI: [f64; 9] = [2.1, 0.0, 0.0, 0.6, 1.9, 0.0, -0.5, 0.7, 2.0];

fn half_min_height(cell: &[f64; 9]) -> f64 {
    0.5 * PeriodicBox::new(cell).unwrap().min_height()
}

#[test]
fn orthorhombic_neutral_and_charged() {
    let rc = 0.9;
    let xi = 3.3 / rc;
    let s = system(ORTHO, 300, true, 1);
    check("ortho neutral fit", &s, xi, rc, 1e-13, false, &[], &[None, Some(1), Some(2)]);
    let s = system(ORTHO, 280, false, 2);
    check("ortho charged fit", &s, xi, rc, 1e-13, false, &[], &[Some(4)]);
    check("ortho charged exact", &s, xi, rc, 1e-13, true, &[], &[None]);
    // a looser fit (fewer coefficients): still the CPU's polynomial, so the same numbers
    check("ortho charged fit 1e-7", &s, xi, rc, 1e-7, false, &[], &[None]);
}

#[test]
fn triclinic_neutral_and_charged() {
    let rc = 0.98 * half_min_height(&TRI);
    let xi = 3.5 / rc;
    let s = system(TRI, 300, true, 3);
    check("tri neutral fit", &s, xi, rc, 1e-13, false, &[], &[None, Some(1)]);
    let s = system(TRI, 260, false, 4);
    check("tri charged exact", &s, xi, rc, 1e-13, true, &[], &[Some(2)]);
}

/// Bounds on the `f32` rounding of the mixed pass for each atom `i`:
/// `ε (K + 1.5 m_i) Σ_j |q_j| / r_ij^k` over its pairs within `r_c` (all images), `k = 1` for
/// φ and `k = 2` for E, with `ε = 2⁻²⁴`, `K = 16` for the rounding of one pair term (`rsqrtf`
/// within 2 ulp, the fit's Horner steps, the subtraction from `1/r` or `1/r³`, the products),
/// and `1.5 m_i` for the thread's running sum of `m_i` terms (the pairs and the atom's
/// exclusions; a sum of `m` terms rounds by at most `m ε Σ |terms|`, and each term is at most
/// `1.5 |q_j| / r^k`: `f r² = erfc(ξr)/r + (2ξ/√π) e^{−ξ²r²} ≤ (1 + max_x (2/√π) x e^{−x²})/r`).
fn f32_bounds(s: &Sys, rc: f64, excl: &[[i64; 2]]) -> (Vec<f64>, Vec<f64>) {
    let n = s.q.len();
    let eps = 2f64.powi(-24);
    let (mut bp, mut bf) = (vec![0.0; n], vec![0.0; n]);
    for i in 0..n {
        let mut m = excl.iter().filter(|p| p[0] == i as i64 || p[1] == i as i64).count();
        let (mut sp, mut sf) = (0.0, 0.0);
        for j in 0..n {
            for img in 0..125 {
                let l = s.bx.cart([(img % 5) as f64 - 2.0, ((img / 5) % 5) as f64 - 2.0, (img / 25) as f64 - 2.0]);
                let d: Vec<f64> = (0..3).map(|a| s.xyz[3 * i + a] - s.xyz[3 * j + a] - l[a]).collect();
                let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                // positions are wrapped on the device: compare images of the wrapped pair
                if r > 0.0 && r < rc * (1.0 + 1e-9) {
                    m += 1;
                    sp += s.q[j].abs() / r;
                    sf += s.q[j].abs() / (r * r);
                }
            }
        }
        bp[i] = eps * (16.0 + 1.5 * m as f64) * sp;
        bf[i] = eps * (16.0 + 1.5 * m as f64) * sf;
    }
    (bp, bf)
}

#[test]
fn mixed_precision_pairs() {
    // f32 pair functions against the CPU's f64 pass, atom by atom within the f32 rounding
    // bounds of `f32_bounds`; the energy and the virial within the sums of those bounds; the
    // f64 kernel without the virial equals the one with it bit for bit
    let cases: [(&str, [f64; 9], usize, bool, f64, f64, &[[i64; 2]]); 2] = [
        ("ortho neutral", ORTHO, 300, true, 0.9, 3.3 / 0.9, &[]),
        ("tri charged, exclusions", TRI, 260, false, 0.98 * half_min_height(&TRI), 3.5 / (0.98 * half_min_height(&TRI)), &[[3, 17], [40, 41]]),
    ];
    for (label, cell, n, neutral, rc, xi, excl) in cases {
        let s = system(cell, n, neutral, 21);
        let (cphi, cfield, ce, cw) = real_space_only(&s.bx, &s.xyz, &s.q, xi, rc, 1e-7, false, excl, true, true).unwrap();
        let g = gpu_prec(&s, xi, rc, 1e-7, false, excl, None, true, true).unwrap();
        let (bp, bf) = f32_bounds(&s, rc, excl);
        let (mut worst_p, mut worst_f) = (0.0f64, 0.0f64);
        for i in 0..n {
            worst_p = worst_p.max((g.phi[i] - cphi[i]).abs() / bp[i]);
            let df = (0..3).map(|a| (g.field[3 * i + a] - cfield[3 * i + a]).powi(2)).sum::<f64>().sqrt();
            worst_f = worst_f.max(df / bf[i]);
        }
        let bu: f64 = (0..n).map(|i| 0.5 * s.q[i].abs() * bp[i]).sum();
        let wmax = cw.iter().fold(0.0f64, |a, v| a.max(v.abs()));
        let dw = g.virial.iter().zip(&cw).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max);
        eprintln!(
            "{label}: phi {worst_p:.2} of its bound, field {worst_f:.2}, energy {:.1e} (bound {bu:.1e}), virial {dw:.1e} of {wmax:.1e}, \
             rel RMS phi {:.1e} field {:.1e}",
            (g.energy - ce).abs(),
            rel_rms(&g.phi, &cphi),
            rel_rms(&g.field, &cfield)
        );
        assert!(worst_p <= 1.0 && worst_f <= 1.0, "{label}: f32 pairs beyond their rounding bound (phi {worst_p}, field {worst_f})");
        assert!((g.energy - ce).abs() <= bu, "{label}: energy {} vs {ce}", g.energy);
        // W = ½ Σ_i Σ_j q_i q_j f d⊗d (each pair from both sides, halved): |f d_a d_b| ≤ f r²,
        // the bound of a potential term, so the energy's bound bounds each entry
        assert!(dw <= bu, "{label}: virial {:?} vs {cw:?}", g.virial);
        let a = gpu_prec(&s, xi, rc, 1e-7, false, excl, None, true, false).unwrap();
        let b = gpu_prec(&s, xi, rc, 1e-7, false, excl, None, false, false).unwrap();
        assert!(a.phi == b.phi && a.field == b.field && a.energy == b.energy, "{label}: f64 kernels with and without the virial");
        assert_eq!(b.virial, [0.0; 9]);
    }
}

#[test]
fn cell_grids_and_stencils() {
    // dense: cells of ~r_c/2 (125-offset stencil); sparse: cells wider than r_c (27 offsets
    // over three cells per axis); a cutoff of exactly half the height (one cell per axis)
    let s = system([2.5, 0.0, 0.0, 0.0, 2.5, 0.0, 0.0, 0.0, 2.5], 600, true, 5);
    check("dense cubic", &s, 3.0, 1.0, 1e-13, false, &[], &[None]);
    let s = system([4.0, 0.0, 0.0, 0.0, 4.4, 0.0, 0.0, 0.0, 4.2], 200, false, 6);
    check("sparse", &s, 4.0, 0.8, 1e-13, false, &[], &[None]);
    let s = system([1.2, 0.0, 0.0, 0.3, 1.3, 0.0, 0.2, -0.4, 1.25], 150, true, 7);
    let rc = half_min_height(&[1.2, 0.0, 0.0, 0.3, 1.3, 0.0, 0.2, -0.4, 1.25]);
    check("tri rc = h/2", &s, 3.0 / rc, rc, 1e-13, false, &[], &[None, Some(8)]);
}

#[test]
fn more_than_one_sort_tile() {
    // 5000 charges: the radix sort's multi-pass path (more than 4096 keys), 512 cells;
    // the same pass called twice (buffers reused; results added again)
    let s = system([6.0, 0.0, 0.0, 0.8, 5.7, 0.0, -0.6, 0.9, 5.9], 5000, true, 11);
    check("5000 charges", &s, 3.0 / 0.8, 0.8, 1e-10, false, &[[1, 2], [4000, 4999]], &[Some(1)]);
    let dev = EmuDevice::default();
    let mut rs = GpuRealSpace::new(dev.clone(), 3.0 / 0.8, 0.8, 1e-10, false).unwrap();
    rs.set_threads_per_atom(Some(1)).unwrap();
    let xb = upload_new(&dev, &s.xyz).unwrap();
    let qb = upload_new(&dev, &s.q).unwrap();
    let mut pb = dev_zeros(&dev, 5000);
    let a = rs.compute(&s.bx, 5000, &xb, &qb, Some(&mut pb), None, true).unwrap();
    let p1 = download_vec::<EmuDevice, f64>(&dev, &pb, 5000).unwrap();
    let b = rs.compute(&s.bx, 5000, &xb, &qb, Some(&mut pb), None, true).unwrap();
    let p2 = download_vec::<EmuDevice, f64>(&dev, &pb, 5000).unwrap();
    assert_eq!(a, b, "deterministic energy and virial");
    assert!(p1.iter().zip(&p2).all(|(x, y)| *y == 2.0 * x), "the second call adds the same potentials");
}

#[test]
fn optional_outputs() {
    // φ only without the virial, E only with it: the same numbers as the full call
    let s = system(TRI, 120, false, 12);
    let rc = 0.9 * half_min_height(&TRI);
    let (xi, n) = (3.2 / rc, 120);
    let full = gpu(&s, xi, rc, 1e-13, false, &[[3, 4]], None, true).unwrap();
    let dev = EmuDevice::default();
    let mut rs = GpuRealSpace::new(dev.clone(), xi, rc, 1e-13, false).unwrap();
    rs.set_exclusions(&[[4, 3]], None).unwrap();
    let xb = upload_new(&dev, &s.xyz).unwrap();
    let qb = upload_new(&dev, &s.q).unwrap();
    let mut pb = dev_zeros(&dev, n);
    let (e, w) = rs.compute(&s.bx, n, &xb, &qb, Some(&mut pb), None, false).unwrap();
    assert_eq!(w, [0.0; 9]);
    assert!((e - full.energy).abs() <= 1e-14 * full.energy.abs());
    let phi = download_vec::<EmuDevice, f64>(&dev, &pb, n).unwrap();
    assert!(rel_rms(&phi, &full.phi) <= 1e-14);
    let mut fb = dev_zeros(&dev, 3 * n);
    let (e2, w2) = rs.compute(&s.bx, n, &xb, &qb, None, Some(&mut fb), true).unwrap();
    assert_eq!(e2, e);
    let field = download_vec::<EmuDevice, f64>(&dev, &fb, 3 * n).unwrap();
    assert!(rel_rms(&field, &full.field) <= 1e-14);
    let wmax = full.virial.iter().fold(0.0f64, |a, v| a.max(v.abs()));
    assert!(w2.iter().zip(&full.virial).all(|(a, b)| (a - b).abs() <= 1e-14 * wmax));
}

fn dev_zeros(dev: &EmuDevice, n: usize) -> EmuBuf {
    upload_new(dev, &vec![0.0f64; n]).unwrap()
}

#[test]
fn exclusions_with_a_coincident_pair() {
    for (cell, neutral, seed) in [(ORTHO, true, 8u64), (TRI, false, 9)] {
        let mut s = system(cell, 240, neutral, seed);
        // bonded-like neighbours, one across the boundary, one coincident pair (charges 4 and
        // 5 at the same place up to a lattice vector)
        place(&mut s, 0, 1, [0.1, 0.0, 0.0], [0.0, 0.0, 0.0]);
        place(&mut s, 0, 2, [0.0, -0.09, 0.05], [1.0, 0.0, -1.0]);
        place(&mut s, 10, 11, [0.05, 0.05, 0.05], [0.0, 0.0, 0.0]);
        place(&mut s, 4, 5, [0.0, 0.0, 0.0], [0.0, 1.0, 0.0]);
        // far pairs (beyond r_c) and pairs listed twice or reversed
        let excl = [[0, 1], [2, 0], [1, 0], [11, 10], [4, 5], [5, 4], [20, 200], [7, 150], [0, 239]];
        let rc = 0.98 * half_min_height(&cell);
        let label = if neutral { "ortho excl" } else { "tri excl" };
        check(label, &s, 3.4 / rc, rc, 1e-13, false, &excl, &[None, Some(1), Some(4)]);
        check(&format!("{label} exact"), &s, 3.4 / rc, rc, 1e-13, true, &excl, &[None]);
    }
}

#[test]
fn errors_as_on_the_cpu() {
    let mut s = system(TRI, 100, true, 10);
    let rc = 0.9 * half_min_height(&TRI);
    let xi = 3.0 / rc;
    // coincident charges that are not excluded: the CPU's error, naming both; outputs untouched
    place(&mut s, 70, 33, [0.0, 0.0, 0.0], [1.0, 0.0, 0.0]);
    let cpu = real_space_only(&s.bx, &s.xyz, &s.q, xi, rc, 1e-13, false, &[], true, true).unwrap_err();
    let dev = EmuDevice::default();
    let mut rs = GpuRealSpace::new(dev.clone(), xi, rc, 1e-13, false).unwrap();
    let xb = upload_new(&dev, &s.xyz).unwrap();
    let qb = upload_new(&dev, &s.q).unwrap();
    let phi0 = vec![1.5; 100];
    let mut pb = upload_new(&dev, &phi0).unwrap();
    let mut fb: EmuBuf = upload_new(&dev, &vec![2.5; 300]).unwrap();
    let e = rs.compute(&s.bx, 100, &xb, &qb, Some(&mut pb), Some(&mut fb), true).unwrap_err();
    eprintln!("coincident: {e}");
    assert!(matches!(e, Error::InvalidArg(_)));
    assert_eq!(e.to_string(), cpu.to_string());
    assert!(e.to_string().contains("charges 33 and 70"), "{e}");
    assert_eq!(download_vec::<EmuDevice, f64>(&dev, &pb, 100).unwrap(), phi0);
    assert!(download_vec::<EmuDevice, f64>(&dev, &fb, 300).unwrap().iter().all(|&v| v == 2.5));
    // excluded, the same pair is fine, and the pass still works after the error
    rs.set_exclusions(&[[33, 70]], None).unwrap();
    rs.compute(&s.bx, 100, &xb, &qb, Some(&mut pb), None, false).unwrap();
    // exclusion validation as the plan's; an index ≥ n at compute
    assert!(matches!(rs.set_exclusions(&[[3, 3]], None), Err(Error::InvalidArg(_))));
    assert!(matches!(rs.set_exclusions(&[[-1, 3]], None), Err(Error::InvalidArg(_))));
    rs.set_exclusions(&[[3, 100]], None).unwrap();
    let e = rs.compute(&s.bx, 100, &xb, &qb, None, None, false).unwrap_err();
    assert!(matches!(e, Error::InvalidArg(_)) && e.to_string().contains("≥ n = 100"), "{e}");
    rs.set_exclusions(&[], None).unwrap();
    // non-finite position and charge, named as the plan names them
    let mut bad = s.xyz.clone();
    bad[3 * 40 + 2] = f64::NAN;
    let bb = upload_new(&dev, &bad).unwrap();
    let e = rs.compute(&s.bx, 100, &bb, &qb, Some(&mut pb), None, false).unwrap_err();
    assert!(matches!(e, Error::NonFinite(_)) && e.to_string().contains("xyz[122] (coordinate z of charge 40)"), "{e}");
    let mut bq = s.q.clone();
    bq[57] = f64::INFINITY;
    let bqb = upload_new(&dev, &bq).unwrap();
    let e = rs.compute(&s.bx, 100, &xb, &bqb, None, None, false).unwrap_err();
    assert!(matches!(e, Error::NonFinite(_)) && e.to_string().contains("q[57]"), "{e}");
    // a cutoff above half the smallest height; short buffers; bad constructor arguments
    let small = PeriodicBox::orthorhombic([1.0, 1.0, 1.0]).unwrap();
    assert!(matches!(rs.compute(&small, 100, &xb, &qb, None, None, false), Err(Error::InvalidArg(_))));
    assert!(matches!(rs.compute(&s.bx, 101, &xb, &qb, None, None, false), Err(Error::InvalidArg(_))));
    assert!(matches!(GpuRealSpace::new(dev.clone(), f64::NAN, rc, 1e-13, false), Err(Error::InvalidArg(_))));
    assert!(matches!(GpuRealSpace::new(dev.clone(), xi, -1.0, 1e-13, false), Err(Error::InvalidArg(_))));
    assert!(matches!(rs.set_threads_per_atom(Some(3)), Err(Error::InvalidArg(_))));
    // no charges: nothing to do
    assert_eq!(rs.compute(&s.bx, 0, &xb, &qb, None, None, true).unwrap(), (0.0, [0.0; 9]));
}
