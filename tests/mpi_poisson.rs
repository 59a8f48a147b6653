//! Distributed free-space Poisson (feature `mpi`) against the single-process plan.
//!
//! Run by `cargo test --features mpi --test mpi_poisson`: started without an MPI launcher, the
//! binary launches itself under `mpirun -np K` for K = 1, 2, 3, 4 (`--oversubscribe`, so 4
//! ranks run on a 2-core machine) and fails if any run fails; under the launcher each rank
//! checks its slab. Acceptance: φ, E and the energy equal the single-process
//! results to ≤ 1e-12 relative (max-norm over the whole grid) on the Gaussian of Mayani et al.
//! 2025 at n = 64 and on a non-cubic 48×32×40 grid, all three methods, and in 2D; each rank's
//! plan memory is ≤ 1/K of the single-process plan plus its slab buffers; mismatched
//! arguments are reported on every rank; an invalid communicator handle is an error, not an
//! abort; an allocation failure injected on one rank (the hidden test hook: makeplan, the Vico
//! precomputation, execute) and a NaN density on one rank end the call on every rank with the
//! same status, under a watchdog of 20 s per call.

use farfield::mpi::{Comm, Op};
use farfield::poisson::dist::DistPoissonPlan;
use farfield::poisson::testcases::{gaussian_fns, sample};
use farfield::poisson::{Method, PoissonOpts, PoissonPlan};
use farfield::Error;

mod mpi_common;

/// Global max-norm relative difference of two slabs.
fn rel_diff(comm: &Comm, a: &[f64], b: &[f64]) -> f64 {
    let mut m = [
        a.iter().zip(b).fold(0f64, |s, (x, y)| s.max((x - y).abs())),
        b.iter().fold(0f64, |s, y| s.max(y.abs())),
    ];
    comm.allreduce_f64(&mut m, Op::Max).unwrap();
    m[0] / m[1]
}

/// Solves the Gaussian on grid `n` (spacings `h`) distributed and single-process, compares.
fn check_case(world: &mpi::topology::SimpleCommunicator, comm: &Comm, method: Method, n: &[usize], h: &[f64]) {
    let dim = n.len();
    let opts = PoissonOpts { nthreads: 1, ..Default::default() };
    let centre = [0, 1, 2].map(|d| if d < dim { 0.45 * n[d] as f64 * h[d] } else { 0.0 });
    let (rho_f, _) = gaussian_fns(0.1 * n.iter().zip(h).map(|(&a, &b)| a as f64 * b).fold(f64::INFINITY, f64::min), centre);
    let rho = sample(n, h, rho_f);
    let npts: usize = n.iter().product();

    let mut serial = PoissonPlan::new(method, n, h, &opts).unwrap();
    let mut phi_s = vec![0.0; npts];
    let mut e_s = vec![0.0; dim * npts];
    let mut u_s = 0.0;
    serial.execute_into(&rho, &mut phi_s, Some(&mut e_s), Some(&mut u_s)).unwrap();

    let mut plan = DistPoissonPlan::new(Comm::duplicate(world).unwrap(), method, n, h, &opts).unwrap();
    let (start, count) = plan.local_slab();
    let plane: usize = n[..dim - 1].iter().product();
    let npl = plan.local_npts();
    assert_eq!(npl, count * plane);
    let lo = start * plane;
    let rho_l = &rho[lo..lo + npl];
    let mut phi = vec![0.0; npl];
    let mut e = vec![0.0; dim * npl];
    let mut u = 0.0;
    plan.execute_into(rho_l, &mut phi, Some(&mut e), Some(&mut u)).unwrap();
    // potential only, energy only: the same values
    let mut phi2 = vec![0.0; npl];
    plan.execute_into(rho_l, &mut phi2, None, None).unwrap();

    let d_phi = rel_diff(comm, &phi, &phi_s[lo..lo + npl]);
    let d_phi2 = rel_diff(comm, &phi2, &phi_s[lo..lo + npl]);
    let mut d_e = 0f64;
    for d in 0..dim {
        let s = &e_s[d * npts + lo..d * npts + lo + npl];
        d_e = d_e.max(rel_diff(comm, &e[d * npl..(d + 1) * npl], s));
    }
    let d_u = (u - u_s).abs() / u_s.abs();
    let mem = plan.memory();
    let k = comm.size();
    let serial_plan = serial.memory().plan_bytes;
    // FFTW-MPI splits the doubled grid's slowest axis (real space) and the next one (the
    // transposed spectrum) in blocks of ⌈N/K⌉: a rank may hold that rounding more than 1/K;
    // plus one physical slab (the potential before scaling)
    let n2s = 2 * n[dim - 1];
    let n1c = if dim == 3 { 2 * n[1] } else { n[0] + 1 };
    let rounding = [n2s, n1c].iter().map(|&m| (m.div_ceil(k) * k) as f64 / m as f64).fold(1.0, f64::max);
    let slab_bytes = 8 * plane * n[dim - 1].div_ceil(k);
    // and FFTW-MPI's real arrays have rows padded from 2n_x to 2n_x + 2 values
    let padding = (2 * n[0] + 2) as f64 / (2 * n[0]) as f64;
    let bound = (serial_plan as f64 / k as f64 * rounding * padding) as usize + slab_bytes;
    if comm.rank() == 0 {
        eprintln!(
            "  {method:?} n {n:?} K={k}: phi {d_phi:.1e} (phi only {d_phi2:.1e}) E {d_e:.1e} U {d_u:.1e}; \
             plan memory rank 0 {} B vs single-process {} B / K = {} B",
            mem.plan_bytes, serial_plan, serial_plan / k
        );
    }
    assert!(d_phi <= 1e-12 && d_phi2 <= 1e-12, "{method:?} {n:?}: phi differs by {d_phi:e} / {d_phi2:e}");
    assert!(d_e <= 1e-12, "{method:?} {n:?}: E differs by {d_e:e}");
    assert!(d_u <= 1e-12, "{method:?} {n:?}: energy differs by {d_u:e}");
    assert!(
        mem.plan_bytes <= bound,
        "{method:?} {n:?}: rank {} holds {} B, more than single-process/K (block rounding {rounding:.3}) + slabs = {bound} B",
        comm.rank(), mem.plan_bytes
    );
}

fn main() {
    if !mpi_common::is_child() {
        mpi_common::launch("mpi_poisson");
        return;
    }
    let universe = mpi_common::init();
    let world = universe.world();
    let comm = Comm::duplicate(&world).unwrap();
    for method in [Method::Hockney, Method::Vico, Method::VicoDct] {
        check_case(&world, &comm, method, &[64, 64, 64], &[1.0 / 64.0; 3]);
        check_case(&world, &comm, method, &[48, 32, 40], &[0.02, 0.03, 0.025]);
        check_case(&world, &comm, method, &[40, 56], &[0.025, 0.02]);
    }

    // Mismatched arguments: reported on every rank, not a hang.
    if comm.size() > 1 {
        let n = if comm.rank() == 0 { [17, 16, 16] } else { [16, 16, 16] };
        let r = DistPoissonPlan::new(Comm::duplicate(&universe.world()).unwrap(), Method::Hockney, &n, &[0.1; 3],
                                     &PoissonOpts::default());
        assert!(matches!(r, Err(Error::InvalidArg(_))), "mismatched sizes: {r:?}");
    }
    // A bad buffer length on one rank: every rank returns an error.
    {
        let mut plan = DistPoissonPlan::new(Comm::duplicate(&universe.world()).unwrap(), Method::Hockney,
                                            &[16, 16, 16], &[0.1; 3], &PoissonOpts::default()).unwrap();
        let npl = plan.local_npts();
        let short = if comm.rank() == comm.size() - 1 { npl + 1 } else { npl };
        let rho = vec![1.0; short];
        let mut phi = vec![7.0; npl];
        let r = plan.execute_into(&rho, &mut phi, None, None);
        assert!(r.is_err(), "wrong length on the last rank must fail everywhere");
        assert!(phi.iter().all(|&v| v == 7.0), "no output is written on error");
        // the plan still works afterwards
        let rho = vec![1.0; npl];
        plan.execute_into(&rho, &mut phi, None, None).unwrap();
    }
    check_failures(&world, &comm);
    // Invalid communicator handles.
    for f in [-1, 123_456] {
        let r = Comm::from_fint(f);
        assert!(matches!(r, Err(Error::InvalidArg(_))), "handle {f}: {:?}", r.err());
    }
    check_c_api(&world, &comm);
    if comm.rank() == 0 {
        eprintln!("mpi_poisson: {} ranks passed", comm.size());
    }
}

/// A failure on one rank (the last) ends the call on every rank with the same status within
/// seconds: allocation failures injected by the test hook into makeplan (its buffers, the
/// Vico kernel precomputation, whose distributed transform follows) and execute, and a NaN
/// density on one rank. The plan works as before after a failed execute.
fn check_failures(world: &mpi::topology::SimpleCommunicator, comm: &Comm) {
    use farfield::error::{FARFIELD_ERR_ALLOC, FARFIELD_ERR_NONFINITE};
    use farfield::mpi::inject_failure;
    let (k, me) = (comm.size(), comm.rank());
    let bad = me == k - 1;
    let opts = PoissonOpts { nthreads: 1, ..Default::default() };
    let all = |st: &[i64], code: i32, what: &str| {
        assert!(st.iter().all(|&c| c == code as i64), "{what}: statuses {st:?} on the ranks, expected {code} on every rank");
    };
    let (n, h) = ([24usize, 20, 16], [0.05, 0.05, 0.05]);
    for (method, point) in [(Method::Hockney, "poisson.makeplan"), (Method::Vico, "poisson.kernel_table"),
                            (Method::VicoDct, "poisson.kernel_table")] {
        inject_failure(if bad { Some(point) } else { None });
        let r = mpi_common::within(20, point, || DistPoissonPlan::new(Comm::duplicate(world).unwrap(), method, &n, &h, &opts));
        inject_failure(None);
        all(&mpi_common::statuses(comm, &r), FARFIELD_ERR_ALLOC, &format!("{method:?} {point}"));
    }
    let mut plan = DistPoissonPlan::new(Comm::duplicate(world).unwrap(), Method::Vico, &n, &h, &opts).unwrap();
    let npl = plan.local_npts();
    let rho: Vec<f64> = (0..npl).map(|i| ((i * 7 + me * 13) % 11) as f64 - 5.0).collect();
    let mut phi0 = vec![0.0; npl];
    plan.execute_into(&rho, &mut phi0, None, None).unwrap();
    inject_failure(if bad { Some("poisson.execute") } else { None });
    let mut phi = vec![7.0; npl];
    let r = mpi_common::within(20, "poisson.execute", || plan.execute_into(&rho, &mut phi, None, None));
    inject_failure(None);
    all(&mpi_common::statuses(comm, &r), FARFIELD_ERR_ALLOC, "poisson.execute");
    assert!(phi.iter().all(|&v| v == 7.0), "no output is written on error");
    let mut rb = rho.clone();
    if bad && npl > 0 {
        rb[npl / 2] = f64::NAN;
    }
    let r = mpi_common::within(20, "a NaN density", || plan.execute_into(&rb, &mut phi, None, None));
    let nan_somewhere = comm.allgather_i64(&[(bad && npl > 0) as i64]).unwrap().contains(&1);
    if nan_somewhere {
        all(&mpi_common::statuses(comm, &r), FARFIELD_ERR_NONFINITE, "a NaN density on one rank");
    }
    plan.execute_into(&rho, &mut phi, None, None).unwrap();
    assert!(phi == phi0, "the plan works as before after the failures");
    if me == 0 {
        eprintln!("  failures on rank {}: the same status on every rank ({k} ranks)", k - 1);
    }
}

/// The C entry points (`farfield_poisson_makeplan_mpi`, `_local_slab`, `_execute`, `_destroy`)
/// with the communicator passed as its Fortran handle, against the single-process C plan.
fn check_c_api(world: &mpi::topology::SimpleCommunicator, comm: &Comm) {
    use farfield::capi::poisson::*;
    use farfield::error::{FARFIELD_ERR_INVALID_ARG, FARFIELD_ERR_NULL_POINTER};
    use mpi::traits::AsRaw;
    use std::ptr::{null, null_mut};
    // SAFETY: MPI is initialised; world is a valid communicator.
    let fint = unsafe { mpi::ffi::MPI_Comm_c2f(world.as_raw()) };
    let n = [48i64, 32, 40];
    let h = [0.02, 0.03, 0.025];
    let nu = [48usize, 32, 40];
    let (rho_f, _) = gaussian_fns(0.1, [0.5, 0.5, 0.5]);
    let rho = sample(&nu, &h, rho_f);
    let npts = rho.len();
    unsafe {
        let mut serial = null_mut();
        assert_eq!(farfield_poisson_makeplan(FARFIELD_POISSON_VICO_DCT, 3, n.as_ptr(), h.as_ptr(), &mut serial, null()), 0);
        let mut phi_s = vec![0.0; npts];
        let mut u_s = 0.0;
        assert_eq!(farfield_poisson_execute(serial, rho.as_ptr(), phi_s.as_mut_ptr(), null_mut(), &mut u_s), 0);
        assert_eq!(farfield_poisson_destroy(serial), 0);

        let mut plan = 0x1 as farfield_poisson_plan;
        assert_eq!(farfield_poisson_makeplan_mpi(fint, FARFIELD_POISSON_VICO_DCT, 3, n.as_ptr(), h.as_ptr(), &mut plan, null()), 0);
        let (mut start, mut count) = (-1i64, -1i64);
        assert_eq!(farfield_poisson_local_slab(plan, &mut start, &mut count), 0);
        let lo = start as usize * 48 * 32;
        let npl = count as usize * 48 * 32;
        let mut phi = vec![0.0; npl];
        let mut u = 0.0;
        assert_eq!(farfield_poisson_execute(plan, rho[lo..].as_ptr(), phi.as_mut_ptr(), null_mut(), &mut u), 0);
        let d = rel_diff(comm, &phi, &phi_s[lo..lo + npl]);
        assert!(d <= 1e-12 && (u - u_s).abs() <= 1e-12 * u_s.abs(), "C API: phi differs by {d:e}, energy {u:e} vs {u_s:e}");
        // a NULL output on one rank: every rank gets an error, and the plan stays usable
        let bad = comm.rank() == 0;
        let st = farfield_poisson_execute(plan, rho[lo..].as_ptr(), if bad { null_mut() } else { phi.as_mut_ptr() }, null_mut(), null_mut());
        if bad {
            assert_eq!(st, FARFIELD_ERR_NULL_POINTER);
        } else {
            assert_ne!(st, 0, "rank {}: another rank's NULL output must fail here too", comm.rank());
        }
        assert_eq!(farfield_poisson_execute(plan, rho[lo..].as_ptr(), phi.as_mut_ptr(), null_mut(), null_mut()), 0);
        assert_eq!(farfield_poisson_destroy(plan), 0);
        // an invalid handle: a status, not an MPI abort; the plan stays NULL
        let mut plan = 0x1 as farfield_poisson_plan;
        let st = farfield_poisson_makeplan_mpi(987_654, FARFIELD_POISSON_HOCKNEY, 3, n.as_ptr(), h.as_ptr(), &mut plan, null());
        assert_eq!((st, plan), (FARFIELD_ERR_INVALID_ARG, null_mut()));
        // a bad argument on one rank only is reported on every rank
        let mut hb = h;
        if comm.rank() == 0 {
            hb[1] = -1.0;
        }
        let st = farfield_poisson_makeplan_mpi(fint, FARFIELD_POISSON_HOCKNEY, 3, n.as_ptr(), hb.as_ptr(), &mut plan, null());
        assert_eq!((st, plan), (FARFIELD_ERR_INVALID_ARG, null_mut()));
    }
}
