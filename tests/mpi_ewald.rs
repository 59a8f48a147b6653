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

mod mpi_common;

use farfield::ewald::dist::DistEwaldPlan;
use farfield::ewald::testdata::load_system;
use farfield::ewald::{EwaldOpts, EwaldParams, EwaldPlan, EwaldResult, Method, Overrides, Terms};
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
    let mut p = EwaldPlan::new(Method::Spme, cell, n, tol, &opts).unwrap();
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
    check_errors(&world, &comm);
    check_c_api(&world, &comm);
    if comm.rank() == 0 {
        eprintln!("mpi_ewald: {} ranks passed", comm.size());
    }
}

/// The C entry points (`farfield_ewald_makeplan_mpi`, `_execute`, `_set_box`, `_destroy`) with
/// the communicator passed as its Fortran handle, against the single-process C plan.
fn check_c_api(world: &SimpleCommunicator, comm: &Comm) {
    use farfield::capi::ewald::*;
    use farfield::error::{FARFIELD_ERR_INVALID_ARG, FARFIELD_ERR_NOT_SUPPORTED, FARFIELD_ERR_NULL_POINTER};
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
        // no exclusions on a distributed plan
        let pair = [0i64, 1];
        assert_eq!(farfield_ewald_set_exclusions(plan, 1, pair.as_ptr()), FARFIELD_ERR_NOT_SUPPORTED);
        assert_eq!(farfield_ewald_destroy(plan), 0);
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
