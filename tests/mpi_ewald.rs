//! Distributed SPME (feature `mpi`) against the single-process plan, under `mpirun -np 1…4`
//! (see `mpi_common`).
//!
//! Acceptance: φ and E of every charge, the energy and the virial equal the
//! single-process results to ≤ 1e-12 relative (max-norm over all charges, relative to the
//! largest value) on JAC DHFR and the TIP3P water box of `data/`, whatever the assignment of
//! the charges to the ranks: random, all on one rank, one rank empty, blocks in the caller's
//! order; the k-space-only and real-space-only terms likewise; each rank's mesh memory is ≤ 1/K
//! of the single-process mesh plus its halo planes; mismatched cells and a bad argument on one
//! rank are errors on every rank; methods other than SPME are refused.
//!
//! Exclusions and scaled pairs (by global ids): the same ≤ 1e-12 against the single-process
//! plan with the same pairs, on the water box with every molecule's pairs excluded, 400 random
//! pairs between molecules (scales 0, 0.5, 1/1.2, −0.25, 1) and a coincident fully excluded
//! pair, for ALL, KSPACE and REAL, the charges split randomly, all on rank 0 or with one rank
//! empty, and the pairs passed by rank 0, by the ranks owning their first charge or by every
//! rank; once against the classic Ewald sum with the same pairs (relative RMS force error
//! ≤ tol); through the C API (`farfield_ewald_execute_ids`). Failures on one rank (bad input,
//! and allocation failures injected by the hidden test hook into makeplan, set_exclusions and
//! each local step of execute) end the call on every rank with the same status, under a
//! watchdog of 20 s per call.

mod mpi_common;

use farfield::ewald::dist::DistEwaldPlan;
use farfield::ewald::testdata::load_system;
use farfield::ewald::{EwaldOpts, EwaldParams, CpuEwald, EwaldResult, Method, Overrides, Terms};
use farfield::mpi::{Comm, Op};
use farfield::Error;
use mpi::topology::SimpleCommunicator;
use rand::{Rng, SeedableRng};

/// Global max-norm difference of `a` and `b` (this rank's values) relative to the largest
/// `|b|` over all ranks.
fn rel_diff(comm: &Comm, a: &[f64], b: &[f64]) -> f64 {
    let mut m = [a.iter().zip(b).fold(0f64, |s, (x, y)| s.max((x - y).abs())), b.iter().fold(0f64, |s, y| s.max(y.abs()))];
    comm.allreduce_f64(&mut m, Op::Max).unwrap();
    m[0] / m[1]
}

/// Which rank gets each charge.
#[derive(Debug, Clone, Copy)]
enum Assign {
    Random,
    AllOnRankZero,
    LastRankEmpty,
    Blocks,
}

fn owners(assign: Assign, n: usize, k: usize) -> Vec<usize> {
    let mut rng = rand_pcg::Pcg64::seed_from_u64(42);
    (0..n)
        .map(|i| match assign {
            Assign::Random => rng.gen_range(0..k),
            Assign::AllOnRankZero => 0,
            Assign::LastRankEmpty => {
                if k == 1 {
                    0
                } else {
                    i * (k - 1) / n
                }
            }
            Assign::Blocks => i * k / n,
        })
        .collect()
}

/// The single-process results (φ, E, energy and virial) and parameters.
type Reference = (Vec<f64>, Vec<f64>, EwaldResult, EwaldParams);

fn serial(cell: &[f64; 9], xyz: &[f64], q: &[f64], tol: f64, terms: Terms) -> Reference {
    let n = q.len();
    let opts = EwaldOpts { nthreads: 1, terms, ..Default::default() };
    let mut p = CpuEwald::new(Method::Spme, cell, n, tol, &opts).unwrap();
    let mut phi = vec![0.0; n];
    let mut e = vec![0.0; 3 * n];
    let r = p.execute(xyz, q, Some(&mut phi), Some(&mut e), true).unwrap();
    (phi, e, r, p.params().clone())
}

/// One system, terms and assignment: the distributed plan against the single-process one.
#[allow(clippy::too_many_arguments)]
fn check(world: &SimpleCommunicator, comm: &Comm, name: &str, cell: &[f64; 9], xyz: &[f64], q: &[f64], tol: f64, terms: Terms,
         reference: &Reference, assign: Assign) {
    let (k, me) = (comm.size(), comm.rank());
    let own: Vec<usize> = owners(assign, q.len(), k).iter().enumerate().filter(|&(_, &r)| r == me).map(|(i, _)| i).collect();
    let lx: Vec<f64> = own.iter().flat_map(|&i| xyz[3 * i..3 * i + 3].to_vec()).collect();
    let lq: Vec<f64> = own.iter().map(|&i| q[i]).collect();
    // the distributed plan chooses its parameters for the sum of n_max over the ranks: the
    // single-process plan's are given, so that both compute the same sum
    let (rphi, re, rr, rp) = reference;
    let overrides = Overrides { xi: rp.xi, rc: rp.rc, grid: rp.grid, order: rp.order };
    let opts = EwaldOpts { nthreads: 1, terms, overrides, ..Default::default() };
    let mut plan = DistEwaldPlan::new(Comm::duplicate(world).unwrap(), Method::Spme, cell, own.len().max(1), tol, &opts).unwrap();
    assert_eq!((plan.params().xi, plan.params().rc, plan.params().grid), (rp.xi, rp.rc, rp.grid));
    let mut phi = vec![0.0; own.len()];
    let mut e = vec![0.0; 3 * own.len()];
    let r = plan.execute(&lx, &lq, Some(&mut phi), Some(&mut e), true).unwrap();
    // potentials only, energy only: the same values
    let mut phi2 = vec![0.0; own.len()];
    let r2 = plan.execute_with(&lx, &lq, Some(&mut phi2), None, true, false).unwrap();

    let sphi: Vec<f64> = own.iter().map(|&i| rphi[i]).collect();
    let se: Vec<f64> = own.iter().flat_map(|&i| re[3 * i..3 * i + 3].to_vec()).collect();
    let d_phi = rel_diff(comm, &phi, &sphi).max(rel_diff(comm, &phi2, &sphi));
    let d_e = rel_diff(comm, &e, &se);
    let d_u = ((r.energy - rr.energy).abs()).max((r2.energy - rr.energy).abs()) / rr.energy.abs();
    let wmax = rr.virial.iter().fold(0f64, |a, v| a.max(v.abs()));
    let d_w = r.virial.iter().zip(&rr.virial).fold(0f64, |a, (x, y)| a.max((x - y).abs())) / wmax;
    if me == 0 {
        eprintln!("  {name} {terms:?} {assign:?} K={k}: phi {d_phi:.1e} E {d_e:.1e} U {d_u:.1e} W {d_w:.1e}");
    }
    assert!(d_phi <= 1e-12, "{name} {terms:?} {assign:?}: phi differs by {d_phi:e}");
    assert!(d_e <= 1e-12, "{name} {terms:?} {assign:?}: E differs by {d_e:e}");
    assert!(d_u <= 1e-12, "{name} {terms:?} {assign:?}: energy differs by {d_u:e}");
    assert!(d_w <= 1e-12, "{name} {terms:?} {assign:?}: virial differs by {d_w:e}");
}

/// Which ranks pass the exclusion list to `set_exclusions_scaled` (the list is the union).
#[derive(Debug, Clone, Copy)]
enum PairsOn {
    /// All pairs on rank 0, none elsewhere.
    RankZero,
    /// Each rank the pairs whose first charge it passes.
    Owner,
    /// The whole list on every rank.
    Every,
}

/// Positions, charges, cell, pairs (global ids) and their scales.
type SystemWithPairs = (Vec<f64>, Vec<f64>, [f64; 9], Vec<[i64; 2]>, Vec<f64>);

/// The water box with one extra charge (a "virtual site" of 0.3 e on the first oxygen, so a
/// coincident fully excluded pair and a net charge) and its pairs: each molecule's three
/// pairs excluded, and 400 random pairs between different molecules (many beyond r_c, several
/// on other ranks' slabs) with scales 0, 0.5, 1/1.2, −0.25 and 1 (dropped).
fn water_with_pairs() -> SystemWithPairs {
    let (mut xyz, mut q, cell) = load_system("water_tip3p_900").expect("data/water_tip3p_900");
    let n = q.len();
    xyz.extend_from_slice(&[xyz[0], xyz[1], xyz[2]]);
    q.push(0.3);
    let mut pairs = Vec::new();
    let mut scales = Vec::new();
    for m in 0..n / 3 {
        let o = 3 * m as i64;
        for p in [[o, o + 1], [o + 2, o], [o + 1, o + 2]] {
            pairs.push(p);
            scales.push(0.0);
        }
    }
    pairs.push([n as i64, 0]);
    scales.push(0.0);
    let mut rng = rand_pcg::Pcg64::seed_from_u64(11);
    let mut seen = std::collections::HashSet::new();
    while seen.len() < 400 {
        let (i, j) = (rng.gen_range(0..n), rng.gen_range(0..n));
        if i / 3 == j / 3 || !seen.insert((i.min(j), i.max(j))) {
            continue;
        }
        pairs.push([i as i64, j as i64]);
        scales.push([0.0, 0.5, 1.0 / 1.2, -0.25, 1.0][seen.len() % 5]);
    }
    (xyz, q, cell, pairs, scales)
}

/// The distributed plan with exclusions and scaled pairs against the single-process plan with
/// the same pairs (same parameters): φ, E, energy and virial to ≤ 1e-12 relative. Returns
/// this rank's fields and the charges' global ids (for the comparison with the Ewald sum).
#[allow(clippy::too_many_arguments)]
fn check_exclusions(world: &SimpleCommunicator, comm: &Comm, xyz: &[f64], q: &[f64], cell: &[f64; 9], pairs: &[[i64; 2]],
                    scales: &[f64], tol: f64, terms: Terms, assign: Assign, on: PairsOn) -> (Vec<f64>, Vec<usize>) {
    let (k, me) = (comm.size(), comm.rank());
    let n = q.len();
    let opts = EwaldOpts { nthreads: 1, terms, ..Default::default() };
    let mut sp = CpuEwald::new(Method::Spme, cell, n, tol, &opts).unwrap();
    sp.set_exclusions_scaled(pairs, scales).unwrap();
    let (mut rphi, mut re) = (vec![0.0; n], vec![0.0; 3 * n]);
    let rr = sp.execute(xyz, q, Some(&mut rphi), Some(&mut re), true).unwrap();
    let rp = sp.params().clone();

    let owner = owners(assign, n, k);
    let own: Vec<usize> = (0..n).filter(|&i| owner[i] == me).collect();
    let lx: Vec<f64> = own.iter().flat_map(|&i| xyz[3 * i..3 * i + 3].to_vec()).collect();
    let lq: Vec<f64> = own.iter().map(|&i| q[i]).collect();
    let ids: Vec<i64> = own.iter().map(|&i| i as i64).collect();
    let (mp, ms): (Vec<[i64; 2]>, Vec<f64>) = pairs
        .iter()
        .zip(scales)
        .filter(|(p, _)| match on {
            PairsOn::RankZero => me == 0,
            PairsOn::Owner => owner[p[0] as usize] == me,
            PairsOn::Every => true,
        })
        .map(|(p, s)| (*p, *s))
        .unzip();
    let overrides = Overrides { xi: rp.xi, rc: rp.rc, grid: rp.grid, order: rp.order };
    let dopts = EwaldOpts { nthreads: 1, terms, overrides, ..Default::default() };
    let mut plan = DistEwaldPlan::new(Comm::duplicate(world).unwrap(), Method::Spme, cell, own.len().max(1), tol, &dopts).unwrap();
    plan.set_exclusions_scaled(&mp, &ms).unwrap();
    assert_eq!(plan.n_exclusions().unwrap(), sp.n_exclusions(), "the distributed list holds every distinct pair once");
    let mut phi = vec![0.0; own.len()];
    let mut e = vec![0.0; 3 * own.len()];
    let r = plan.execute_ids(Some(&ids), &lx, &lq, Some(&mut phi), Some(&mut e), true, true).unwrap();
    // without the ids: refused on every rank, nothing written
    let mut phi2 = vec![7.0; own.len()];
    let r2 = plan.execute(&lx, &lq, Some(&mut phi2), None, false);
    let st = mpi_common::statuses(comm, &r2);
    assert!(st.iter().all(|&c| c == farfield::error::FARFIELD_ERR_INVALID_ARG as i64), "execute without ids: {st:?}");
    assert!(phi2.iter().all(|&v| v == 7.0));

    let sphi: Vec<f64> = own.iter().map(|&i| rphi[i]).collect();
    let se: Vec<f64> = own.iter().flat_map(|&i| re[3 * i..3 * i + 3].to_vec()).collect();
    let d_phi = rel_diff(comm, &phi, &sphi);
    let d_e = rel_diff(comm, &e, &se);
    let d_u = (r.energy - rr.energy).abs() / rr.energy.abs();
    let wmax = rr.virial.iter().fold(0f64, |a, v| a.max(v.abs()));
    let d_w = r.virial.iter().zip(&rr.virial).fold(0f64, |a, (x, y)| a.max((x - y).abs())) / wmax;
    if me == 0 {
        eprintln!("  exclusions {terms:?} {assign:?} pairs on {on:?} K={k}: phi {d_phi:.1e} E {d_e:.1e} U {d_u:.1e} W {d_w:.1e}");
    }
    let what = format!("exclusions {terms:?} {assign:?} {on:?}");
    assert!(d_phi <= 1e-12, "{what}: phi differs by {d_phi:e}");
    assert!(d_e <= 1e-12, "{what}: E differs by {d_e:e}");
    assert!(d_u <= 1e-12, "{what}: energy differs by {d_u:e}");
    assert!(d_w <= 1e-12, "{what}: virial differs by {d_w:e}");
    (e, own)
}

/// The distributed fields with exclusions (terms ALL) against the classic Ewald sum with the
/// same pairs (tol 1e-10, an independent k-space method): the RMS force error over all
/// charges, relative to the RMS Coulomb force of all pairs (the scale `tol` refers to; here
/// all but the coincident pair of the last charge and charge 0), within `tol`.
#[allow(clippy::too_many_arguments)]
fn check_against_ewald_sum(comm: &Comm, xyz: &[f64], q: &[f64], cell: &[f64; 9], pairs: &[[i64; 2]], scales: &[f64], tol: f64,
                           e: &[f64], own: &[usize]) {
    let n = q.len();
    // the reference on rank 0 only (it is the slow part), summed to every rank
    let mut refs = vec![0.0; 6 * n];
    if comm.rank() == 0 {
        let opts = EwaldOpts { nthreads: 1, ..Default::default() };
        let mut d = CpuEwald::new(Method::Direct, cell, n, 1e-10, &opts).unwrap();
        // the force scale: all pairs but the coincident one (the last charge sits on charge 0)
        d.set_exclusions(&[[0, n as i64 - 1]]).unwrap();
        d.execute(xyz, q, None, Some(&mut refs[3 * n..]), false).unwrap();
        d.set_exclusions_scaled(pairs, scales).unwrap();
        d.execute(xyz, q, None, Some(&mut refs[..3 * n]), false).unwrap();
    }
    comm.allreduce_f64(&mut refs, Op::Sum).unwrap();
    let mut sq = [0.0; 2];
    for (k, &i) in own.iter().enumerate() {
        for d in 0..3 {
            let (f, fr) = (q[i] * e[3 * k + d], q[i] * refs[3 * i + d]);
            sq[0] += (f - fr) * (f - fr);
        }
    }
    if comm.rank() == 0 {
        sq[1] = (0..3 * n).map(|c| (q[c / 3] * refs[3 * n + c]).powi(2)).sum();
    }
    comm.allreduce_f64(&mut sq, Op::Sum).unwrap();
    let err = (sq[0] / sq[1]).sqrt();
    if comm.rank() == 0 {
        eprintln!("  exclusions vs the classic Ewald sum: relative RMS force error {err:.2e} (tol {tol:e})");
    }
    assert!(err <= tol, "force error against the Ewald sum {err:e} > tol {tol:e}");
}

/// A failure on one rank (the last) ends the call on every rank with the same status within
/// seconds: bad input (a NaN, an id out of range, an id given twice, an exclusion naming an id
/// no rank passed) and allocation failures injected by the test hook at each local step of
/// makeplan, set_exclusions and execute. After each failure the plan still works.
fn check_failures(world: &SimpleCommunicator, comm: &Comm) {
    use farfield::error::{FARFIELD_ERR_ALLOC, FARFIELD_ERR_INVALID_ARG, FARFIELD_ERR_NONFINITE};
    use farfield::mpi::inject_failure;
    let (k, me) = (comm.size(), comm.rank());
    let bad = me == k - 1;
    let cell = [3.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 3.0];
    let opts = EwaldOpts { nthreads: 1, ..Default::default() };
    let all = |st: &[i64], code: i32, what: &str| {
        assert!(st.iter().all(|&c| c == code as i64), "{what}: statuses {st:?} on the ranks, expected {code} on every rank");
    };
    let inject = |point: &str| inject_failure(if bad { Some(point) } else { None });
    // makeplan
    inject("ewald.makeplan");
    let r = mpi_common::within(20, "makeplan with an injected failure", || {
        DistEwaldPlan::new(Comm::duplicate(world).unwrap(), Method::Spme, &cell, 10, 1e-5, &opts)
    });
    inject_failure(None);
    all(&mpi_common::statuses(comm, &r), FARFIELD_ERR_ALLOC, "makeplan");
    if !bad {
        let m = r.err().map(|e| e.message().to_string()).unwrap_or_default();
        assert!(m.contains(&format!("rank {}", k - 1)) && m.contains("injected"), "the message names the failing rank: {m}");
    }
    let mut plan = DistEwaldPlan::new(Comm::duplicate(world).unwrap(), Method::Spme, &cell, 10, 1e-5, &opts).unwrap();
    // ten charges per rank, ids me·10 + i; pairs within and across ranks
    let mut rng = rand_pcg::Pcg64::seed_from_u64(3 + me as u64);
    let xyz: Vec<f64> = (0..30).map(|_| rng.gen_range(0.0..3.0)).collect();
    let q: Vec<f64> = (0..10).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
    let ids: Vec<i64> = (0..10).map(|i| (10 * me + i) as i64).collect();
    let nt = 10 * k as i64;
    let pairs: Vec<[i64; 2]> = (0..nt).map(|g| [g, (g + 13) % nt]).filter(|p| p[0] != p[1]).collect();
    let scales: Vec<f64> = (0..pairs.len()).map(|i| if i % 2 == 0 { 0.0 } else { 0.5 }).collect();
    // set_exclusions: an injected failure, then a bad pair on one rank; the earlier (empty) list stays
    inject("ewald.set_exclusions");
    let r = mpi_common::within(20, "set_exclusions with an injected failure", || plan.set_exclusions_scaled(&pairs, &scales));
    inject_failure(None);
    all(&mpi_common::statuses(comm, &r), FARFIELD_ERR_ALLOC, "set_exclusions");
    let badpairs: Vec<[i64; 2]> = if bad { vec![[0, nt]] } else { pairs.clone() };
    let r = mpi_common::within(20, "set_exclusions with an id out of range on one rank", || plan.set_exclusions(&badpairs));
    all(&mpi_common::statuses(comm, &r), FARFIELD_ERR_INVALID_ARG, "set_exclusions, id out of range");
    assert_eq!(plan.n_exclusions().unwrap(), 0, "a failed set_exclusions keeps the earlier list");
    // one pair with scale 1 on rank 0 and scale 0.5 on the last rank (both on it with one rank):
    // two scales for one pair, wherever they were given
    let (mut cp, mut cs) = (Vec::new(), Vec::new());
    if me == 0 {
        cp.push([0i64, 1]);
        cs.push(1.0);
    }
    if me == k - 1 {
        cp.push([1, 0]);
        cs.push(0.5);
    }
    let r = mpi_common::within(20, "set_exclusions_scaled with two scales on two ranks", || plan.set_exclusions_scaled(&cp, &cs));
    all(&mpi_common::statuses(comm, &r), FARFIELD_ERR_INVALID_ARG, "set_exclusions_scaled, scales 1 and 0.5 for one pair");
    assert_eq!(plan.n_exclusions().unwrap(), 0, "a failed set_exclusions_scaled keeps the earlier list");
    plan.set_exclusions_scaled(&pairs, &scales).unwrap();
    let mut phi0 = vec![0.0; 10];
    let u0 = plan.execute_ids(Some(&ids), &xyz, &q, Some(&mut phi0), None, true, false).unwrap().energy;
    // execute: injected failures at each local step, before the first exchange and after
    for point in ["ewald.execute", "ewald.execute.route", "ewald.exchange", "ewald.execute.exclusions", "ewald.execute.real",
                  "ewald.execute.mesh"] {
        inject(point);
        let mut phi = vec![7.0; 10];
        let r = mpi_common::within(20, point, || plan.execute_ids(Some(&ids), &xyz, &q, Some(&mut phi), None, true, false));
        inject_failure(None);
        all(&mpi_common::statuses(comm, &r), FARFIELD_ERR_ALLOC, point);
        assert!(phi.iter().all(|&v| v == 7.0), "{point}: no output is written on error");
        let r = plan.execute_ids(Some(&ids), &xyz, &q, Some(&mut phi), None, true, false).unwrap();
        assert!(phi == phi0 && r.energy == u0, "{point}: the plan works as before after the failure");
    }
    // bad input on one rank: the same status everywhere
    let mut x2 = xyz.clone();
    if bad {
        x2[4] = f64::NAN;
    }
    let r = mpi_common::within(20, "a NaN on one rank", || plan.execute_ids(Some(&ids), &x2, &q, None, None, true, false));
    all(&mpi_common::statuses(comm, &r), FARFIELD_ERR_NONFINITE, "a NaN on one rank");
    let mut i2 = ids.clone();
    if bad {
        i2[3] = nt + 5;
    }
    let r = mpi_common::within(20, "an id out of range", || plan.execute_ids(Some(&i2), &xyz, &q, None, None, true, false));
    all(&mpi_common::statuses(comm, &r), FARFIELD_ERR_INVALID_ARG, "an id out of range");
    // an id given twice (on two ranks when there are two), and so another missing
    let mut i3 = ids.clone();
    if bad {
        i3[0] = if k > 1 { 0 } else { 1 };
    }
    let r = mpi_common::within(20, "an id given twice", || plan.execute_ids(Some(&i3), &xyz, &q, None, None, true, false));
    all(&mpi_common::statuses(comm, &r), FARFIELD_ERR_INVALID_ARG, "an id given twice");
    // a pair naming an id that no rank passes: the last rank passes one charge fewer
    let nl = if bad { 9 } else { 10 };
    let r = mpi_common::within(20, "a pair without its charge", || {
        plan.execute_ids(Some(&ids[..nl]), &xyz[..3 * nl], &q[..nl], None, None, true, false)
    });
    all(&mpi_common::statuses(comm, &r), FARFIELD_ERR_INVALID_ARG, "a pair naming an id that no rank passed");
    if let Err(e) = &r {
        assert!(e.message().contains(&format!("global id {}", 10 * k - 1)), "the message names the id: {}", e.message());
    }
    plan.execute_ids(Some(&ids), &xyz, &q, Some(&mut phi0), None, true, false).unwrap();
    if me == 0 {
        eprintln!("  failures on rank {}: the same status on every rank ({k} ranks)", k - 1);
    }
}

/// Each rank's mesh memory against the single-process mesh (real grid, half spectrum and
/// influence function) divided by K, with FFTW-MPI's block rounding and row padding, plus the
/// halo planes of the extended slab.
fn check_memory(world: &SimpleCommunicator, comm: &Comm, cell: &[f64; 9], n: usize, tol: f64) {
    let k = comm.size();
    let plan = DistEwaldPlan::new(Comm::duplicate(world).unwrap(), Method::Spme, cell, n.div_ceil(k), tol,
                                  &EwaldOpts { nthreads: 1, ..Default::default() }).unwrap();
    let p = plan.params();
    let g = p.grid;
    let nx = g[0] / 2 + 1;
    let serial = 8 * g[0] * g[1] * g[2] + 24 * nx * g[1] * g[2];
    let rounding = [g[2], g[1]].iter().map(|&m| (m.div_ceil(k) * k) as f64 / m as f64).fold(1.0, f64::max);
    let padding = (2 * nx) as f64 / g[0] as f64;
    let (_, nloc) = plan.local_slab();
    // the extended slab lives in the spectrum buffer: it grows that buffer by at most its
    // planes beyond the slab's own (order + 2 of them, or up to 2·order on thin slabs)
    let halo = 8 * g[0] * g[1] * ((nloc + p.order + 2).max(2 * p.order) - nloc);
    let bound = (serial as f64 / k as f64 * rounding * padding) as usize + halo;
    let mine = plan.mesh_bytes();
    let mut worst = [mine as f64 / bound as f64];
    comm.allreduce_f64(&mut worst, Op::Max).unwrap();
    if comm.rank() == 0 {
        eprintln!("  mesh {g:?} K={k}: rank 0 holds {mine} B; single-process {serial} B, /K = {} B; worst rank at {:.2} of its bound",
                  serial / k, worst[0]);
    }
    assert!(mine <= bound, "rank {} holds {mine} B of mesh, bound {bound} B", comm.rank());
}

fn check_errors(world: &SimpleCommunicator, comm: &Comm) {
    let (k, me) = (comm.size(), comm.rank());
    let cell = [3.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 3.0];
    let opts = EwaldOpts { nthreads: 1, ..Default::default() };
    // other methods
    for m in [Method::Spectral, Method::Direct] {
        let r = DistEwaldPlan::new(Comm::duplicate(world).unwrap(), m, &cell, 10, 1e-5, &opts);
        assert!(matches!(r, Err(Error::NotSupported(_))), "{m:?}: {:?}", r.err());
    }
    // mismatched cells
    if k > 1 {
        let mut c = cell;
        if me == k - 1 {
            c[0] = 3.5;
        }
        let r = DistEwaldPlan::new(Comm::duplicate(world).unwrap(), Method::Spme, &c, 10, 1e-5, &opts);
        assert!(matches!(r, Err(Error::InvalidArg(_))), "mismatched cells: {:?}", r.err());
    }
    // a NaN on the last rank: an error everywhere, nothing written, the plan still works
    let mut plan = DistEwaldPlan::new(Comm::duplicate(world).unwrap(), Method::Spme, &cell, 10, 1e-5, &opts).unwrap();
    let mut rng = rand_pcg::Pcg64::seed_from_u64(7 + me as u64);
    let xyz: Vec<f64> = (0..30).map(|_| rng.gen_range(0.0..3.0)).collect();
    let q: Vec<f64> = (0..10).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
    let mut bad = xyz.clone();
    if me == k - 1 {
        bad[4] = f64::NAN;
    }
    let mut phi = vec![7.0; 10];
    let r = plan.execute(&bad, &q, Some(&mut phi), None, false);
    assert!(r.is_err(), "a NaN on the last rank must fail everywhere");
    assert!(phi.iter().all(|&v| v == 7.0), "no output is written on error");
    plan.execute(&xyz, &q, Some(&mut phi), None, false).unwrap();
    // too many charges on rank 0
    let many = if me == 0 { 11 } else { 10 };
    let r = plan.execute(&vec![1.0; 3 * many], &vec![0.0; many], None, None, false);
    assert!(r.is_err(), "n > n_max on rank 0 must fail everywhere");
}

fn main() {
    if !mpi_common::is_child() {
        mpi_common::launch("mpi_ewald");
        return;
    }
    let universe = mpi_common::init();
    let world = universe.world();
    let comm = Comm::duplicate(&world).unwrap();
    for (name, tol) in [("water_tip3p_900", 1e-6), ("jac_dhfr", 1e-5)] {
        let (xyz, q, cell) = load_system(name).unwrap_or_else(|| panic!("data/{name} (docs/design.md §11.1)"));
        for terms in [Terms::All, Terms::KSpace, Terms::Real] {
            if name == "jac_dhfr" && terms != Terms::All {
                continue;
            }
            let reference = serial(&cell, &xyz, &q, tol, terms);
            let assigns: &[Assign] = if terms == Terms::All {
                &[Assign::Random, Assign::AllOnRankZero, Assign::LastRankEmpty, Assign::Blocks]
            } else {
                &[Assign::Random]
            };
            for &a in assigns {
                check(&world, &comm, name, &cell, &xyz, &q, tol, terms, &reference, a);
            }
        }
        check_memory(&world, &comm, &cell, q.len(), tol);
    }
    // exclusions and scaled pairs: every terms setting, three assignments of the charges,
    // three ways of passing the pairs
    let (xyz, q, cell, pairs, scales) = water_with_pairs();
    let tol = 1e-6;
    let cases = [
        (Terms::All, Assign::Random, PairsOn::Owner),
        (Terms::All, Assign::AllOnRankZero, PairsOn::RankZero),
        (Terms::All, Assign::LastRankEmpty, PairsOn::Every),
        (Terms::KSpace, Assign::Random, PairsOn::RankZero),
        (Terms::KSpace, Assign::LastRankEmpty, PairsOn::Owner),
        (Terms::Real, Assign::Random, PairsOn::Every),
        (Terms::Real, Assign::AllOnRankZero, PairsOn::Owner),
    ];
    for (i, &(terms, assign, on)) in cases.iter().enumerate() {
        let (e, own) = check_exclusions(&world, &comm, &xyz, &q, &cell, &pairs, &scales, tol, terms, assign, on);
        if i == 0 {
            check_against_ewald_sum(&comm, &xyz, &q, &cell, &pairs, &scales, tol, &e, &own);
        }
    }
    check_errors(&world, &comm);
    check_failures(&world, &comm);
    check_c_api(&world, &comm);
    if comm.rank() == 0 {
        eprintln!("mpi_ewald: {} ranks passed", comm.size());
    }
}

/// The C entry points (`farfield_ewald_makeplan_mpi`, `_execute`, `_set_box`, `_destroy`) with
/// the communicator passed as its Fortran handle, against the single-process C plan.
fn check_c_api(world: &SimpleCommunicator, comm: &Comm) {
    use farfield::capi::ewald::*;
    use farfield::error::{FARFIELD_ERR_INVALID_ARG, FARFIELD_ERR_NULL_POINTER};
    use mpi::traits::AsRaw;
    use std::ptr::{null, null_mut};
    // SAFETY: MPI is initialised; world is a valid communicator.
    let fint = unsafe { mpi::ffi::MPI_Comm_c2f(world.as_raw()) };
    let (k, me) = (comm.size(), comm.rank());
    let (xyz, q, cell) = load_system("water_tip3p_900").expect("data/water_tip3p_900");
    let n = q.len();
    let own: Vec<usize> = owners(Assign::Random, n, k).iter().enumerate().filter(|&(_, &r)| r == me).map(|(i, _)| i).collect();
    let lx: Vec<f64> = own.iter().flat_map(|&i| xyz[3 * i..3 * i + 3].to_vec()).collect();
    let lq: Vec<f64> = own.iter().map(|&i| q[i]).collect();
    let nl = own.len();
    unsafe {
        let mut o: farfield_ewald_opts = std::mem::zeroed();
        assert_eq!(farfield_ewald_default_opts(&mut o, std::mem::size_of::<farfield_ewald_opts>()), 0);
        o.nthreads = 1;
        let mut serial = null_mut();
        assert_eq!(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, cell.as_ptr(), n as i64, 1e-5, &mut serial, &o), 0);
        let mut par = farfield_ewald_params::default();
        assert_eq!(farfield_ewald_get_params(serial, &mut par), 0);
        let mut phi_s = vec![0.0; n];
        let (mut u_s, mut w_s) = (0.0, [0.0; 9]);
        assert_eq!(farfield_ewald_execute(serial, n as i64, xyz.as_ptr(), q.as_ptr(), phi_s.as_mut_ptr(), null_mut(), &mut u_s,
                                          w_s.as_mut_ptr()), 0);
        assert_eq!(farfield_ewald_destroy(serial), 0);

        // the same parameters
        o.xi = par.xi;
        o.rc = par.rc;
        o.grid = par.grid;
        o.order_or_support = par.order_or_support;
        let mut plan = 0x1 as farfield_ewald_plan;
        assert_eq!(farfield_ewald_makeplan_mpi(fint, FARFIELD_EWALD_SPME, cell.as_ptr(), nl.max(1) as i64, 1e-5, &mut plan, &o), 0);
        let mut phi = vec![0.0; nl];
        let (mut u, mut w) = (0.0, [0.0; 9]);
        assert_eq!(farfield_ewald_execute(plan, nl as i64, lx.as_ptr(), lq.as_ptr(), phi.as_mut_ptr(), null_mut(), &mut u, w.as_mut_ptr()), 0);
        let sphi: Vec<f64> = own.iter().map(|&i| phi_s[i]).collect();
        let d = rel_diff(comm, &phi, &sphi);
        let wmax = w_s.iter().fold(0f64, |a, v| a.max(v.abs()));
        let dw = w.iter().zip(&w_s).fold(0f64, |a, (x, y)| a.max((x - y).abs())) / wmax;
        assert!(d <= 1e-12 && (u - u_s).abs() <= 1e-12 * u_s.abs() && dw <= 1e-12,
                "C API: phi differs by {d:e}, energy {u:e} vs {u_s:e}, virial by {dw:e}");
        // a NULL input on one rank: every rank gets an error, and the plan stays usable
        assert!(me != 0 || nl > 0, "the random assignment gives rank 0 charges");
        let bad = me == 0;
        let st = farfield_ewald_execute(plan, nl as i64, if bad { null() } else { lx.as_ptr() }, lq.as_ptr(), phi.as_mut_ptr(),
                                        null_mut(), null_mut(), null_mut());
        if bad {
            assert_eq!(st, FARFIELD_ERR_NULL_POINTER);
        } else {
            assert_ne!(st, 0, "rank {me}: another rank's NULL input must fail here too");
        }
        // set_box: a NULL box on one rank fails on all; the same box on all keeps the results
        let st = farfield_ewald_set_box(plan, if me == 0 { null() } else { cell.as_ptr() });
        assert_ne!(st, 0, "rank {me}: a NULL box on rank 0 must fail on every rank");
        assert_eq!(farfield_ewald_set_box(plan, cell.as_ptr()), 0);
        assert_eq!(farfield_ewald_execute(plan, nl as i64, lx.as_ptr(), lq.as_ptr(), phi.as_mut_ptr(), null_mut(), &mut u, null_mut()), 0);
        assert!(rel_diff(comm, &phi, &sphi) <= 1e-12);
        // exclusions by global ids: the molecules' pairs excluded, passed by rank 0 only, and
        // farfield_ewald_execute_ids against the single-process plan with the same pairs
        let pairs: Vec<i64> = (0..n as i64 / 3).flat_map(|m| [3 * m, 3 * m + 1, 3 * m, 3 * m + 2, 3 * m + 1, 3 * m + 2]).collect();
        let scales: Vec<f64> = (0..pairs.len() / 2).map(|i| if i % 3 == 2 { 0.5 } else { 0.0 }).collect();
        let np = if me == 0 { scales.len() as i64 } else { 0 };
        assert_eq!(farfield_ewald_set_exclusions_scaled(plan, np, if me == 0 { pairs.as_ptr() } else { null() },
                                                        if me == 0 { scales.as_ptr() } else { null() }), 0);
        let ids: Vec<i64> = own.iter().map(|&i| i as i64).collect();
        assert_eq!(farfield_ewald_execute_ids(plan, nl as i64, ids.as_ptr(), lx.as_ptr(), lq.as_ptr(), phi.as_mut_ptr(), null_mut(), &mut u,
                                              w.as_mut_ptr()), 0);
        // execute without ids on a plan with exclusions: refused on every rank
        assert_eq!(farfield_ewald_execute(plan, nl as i64, lx.as_ptr(), lq.as_ptr(), phi.as_mut_ptr(), null_mut(), null_mut(), null_mut()),
                   FARFIELD_ERR_INVALID_ARG);
        let mut serial = null_mut();
        assert_eq!(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, cell.as_ptr(), n as i64, 1e-5, &mut serial, &o), 0);
        assert_eq!(farfield_ewald_set_exclusions_scaled(serial, scales.len() as i64, pairs.as_ptr(), scales.as_ptr()), 0);
        assert_eq!(farfield_ewald_execute(serial, n as i64, xyz.as_ptr(), q.as_ptr(), phi_s.as_mut_ptr(), null_mut(), &mut u_s,
                                          w_s.as_mut_ptr()), 0);
        assert_eq!(farfield_ewald_destroy(serial), 0);
        let sphi: Vec<f64> = own.iter().map(|&i| phi_s[i]).collect();
        let d = rel_diff(comm, &phi, &sphi);
        let wmax = w_s.iter().fold(0f64, |a, v| a.max(v.abs()));
        let dw = w.iter().zip(&w_s).fold(0f64, |a, (x, y)| a.max((x - y).abs())) / wmax;
        if me == 0 {
            eprintln!("  C API with exclusions K={k}: phi {d:.1e} U {:.1e} W {dw:.1e}", (u - u_s).abs() / u_s.abs());
        }
        assert!(d <= 1e-12 && (u - u_s).abs() <= 1e-12 * u_s.abs() && dw <= 1e-12,
                "C API with exclusions: phi differs by {d:e}, energy {u:e} vs {u_s:e}, virial by {dw:e}");
        // a NULL ids array on one rank: NULL_POINTER on every rank
        let st = farfield_ewald_execute_ids(plan, nl as i64, if me == 0 { null() } else { ids.as_ptr() }, lx.as_ptr(), lq.as_ptr(),
                                            phi.as_mut_ptr(), null_mut(), null_mut(), null_mut());
        let all: Vec<i64> = comm.allgather_i64(&[st as i64]).unwrap();
        assert!(all.iter().all(|&c| c == FARFIELD_ERR_NULL_POINTER as i64), "NULL ids on rank 0: {all:?}");
        assert_eq!(farfield_ewald_destroy(plan), 0);
        // ids on a single-process plan: refused
        let mut serial = null_mut();
        assert_eq!(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, cell.as_ptr(), n as i64, 1e-5, &mut serial, &o), 0);
        let ids_all: Vec<i64> = (0..n as i64).collect();
        assert_eq!(farfield_ewald_execute_ids(serial, n as i64, ids_all.as_ptr(), xyz.as_ptr(), q.as_ptr(), phi_s.as_mut_ptr(),
                                              null_mut(), null_mut(), null_mut()), FARFIELD_ERR_INVALID_ARG);
        assert_eq!(farfield_ewald_destroy(serial), 0);
        // an invalid handle: a status, not an MPI abort; the plan stays NULL
        let mut plan = 0x1 as farfield_ewald_plan;
        let st = farfield_ewald_makeplan_mpi(987_654, FARFIELD_EWALD_SPME, cell.as_ptr(), 10, 1e-5, &mut plan, null());
        assert_eq!((st, plan), (FARFIELD_ERR_INVALID_ARG, null_mut()));
        // a bad argument on one rank only is reported on every rank
        let tol = if me == 0 { 2.0 } else { 1e-5 };
        let st = farfield_ewald_makeplan_mpi(fint, FARFIELD_EWALD_SPME, cell.as_ptr(), 10, tol, &mut plan, null());
        assert!(st != 0 && plan.is_null(), "rank {me}: a bad tolerance on rank 0 must fail everywhere ({st})");
    }
}
