!> Fortran test of the Ewald and FMM interfaces through the _f wrappers:
!> * NaCl crystal (2x2x2 conventional cells, 64 ions) with SPME and spectral Ewald at tol 1e-10:
!>   Madelung constant 1.747564594633 to 1e-9 relative, fields zero by symmetry;
!> * 300 random charges in a triclinic cell: SPME at tol 1e-6 against the classic Ewald sum at
!>   tol 1e-10 (relative RMS force error <= tol, energy <= 4 tol), virial trace = energy (Coulomb);
!> * what MD codes call: pairs scaled by 0, 0.5 and 1/1.2 (farfield_ewald_set_exclusions_scaled),
!>   a k-space-only plan plus a real-space-only plan (opts%terms, the SPME plan's xi, rc, grid
!>   and order) against the classic Ewald sum with the same scaled pairs (force <= tol,
!>   energy <= 4 tol at tol 1e-6);
!> * open-boundary FMM on 4000 random charges (a tree of depth >= 2) at tol 1e-6 against a direct sum written here;
!> * error statuses: n > n_max, a non-finite charge, a box that is not lower-triangular, the FMM's
!>   device entry point on a CPU plan.
!> SPDX-License-Identifier: MIT OR Apache-2.0
program test_ewald_fmm
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use farfield
  implicit none

  real(c_double), parameter :: madelung = 1.747564594633_c_double
  integer, parameter :: nc = 2, nion = 8 * nc**3, nr = 300, nf = 4000
  real(c_double) :: box(3, 3), xyz(3, nion), q(nion), phi(nion), field(3, nion), energy, m_est
  real(c_double) :: xr(3, nr), qr(nr), fr(3, nr), fref(3, nr), ur, uref, vir(3, 3), err
  real(c_double) :: xf(3, nf), qf(nf), pf(nf), ef(3, nf), pd(nf), ed(3, nf), d(3), r
  type(c_ptr) :: plan, plan2
  integer(c_int64_t), target :: pairs(2, 3)
  real(c_double), target :: scales(3)
  real(c_double) :: fk(3, nr), fre(3, nr), uk, ure
  type(farfield_ewald_opts) :: eo2
  type(farfield_ewald_opts) :: eopts
  type(farfield_ewald_params) :: par
  type(farfield_fmm_params) :: fpar
  integer :: i, j, k, n, failures, method
  integer(c_int) :: ier

  failures = 0
  if (farfield_ewald_default_opts_f(eopts) /= FARFIELD_OK) failures = failures + 1
  eopts%nthreads = 2

  ! ---- NaCl: lattice constant 1, nearest-neighbour distance 1/2 --------------------------
  n = 0
  do k = 0, 2 * nc - 1
     do j = 0, 2 * nc - 1
        do i = 0, 2 * nc - 1
           n = n + 1
           xyz(:, n) = 0.5_c_double * [i, j, k]
           q(n) = merge(1.0_c_double, -1.0_c_double, mod(i + j + k, 2) == 0)
        end do
     end do
  end do
  box = 0
  box(1, 1) = nc
  box(2, 2) = nc
  box(3, 3) = nc
  do method = FARFIELD_EWALD_SPECTRAL, FARFIELD_EWALD_SPME
     ier = farfield_ewald_makeplan_f(method, box, int(nion, c_int64_t), 1e-10_c_double, plan, eopts)
     if (ier /= FARFIELD_OK) then
        write (*, '(a, a)') 'makeplan failed: ', farfield_last_error_message_f()
        error stop 1
     end if
     if (farfield_ewald_execute_f(plan, xyz, q, phi, field, energy) /= FARFIELD_OK) failures = failures + 1
     ! U = -M (N/2) / d, d = 1/2
     m_est = -energy * 0.5_c_double / (0.5_c_double * nion)
     write (*, '(a, i0, a, f16.12, a, es9.2, a, es9.2)') 'NaCl method ', method, ': Madelung ', m_est, &
          ', rel err ', abs(m_est - madelung) / madelung, ', max |E| ', maxval(abs(field))
     if (abs(m_est - madelung) / madelung > 1e-9_c_double) failures = failures + 1
     if (maxval(abs(field)) > 1e-8_c_double) failures = failures + 1
     ! phi_i = -q_i M / d on every ion
     if (maxval(abs(phi + q * madelung / 0.5_c_double)) > 1e-8_c_double) failures = failures + 1
     if (farfield_ewald_destroy_f(plan) /= FARFIELD_OK) failures = failures + 1
  end do

  ! ---- random charges in a triclinic cell (vectors as columns: a, b, c) ------------------
  box = 0
  box(:, 1) = [3.0_c_double, 0.0_c_double, 0.0_c_double]
  box(:, 2) = [0.7_c_double, 2.8_c_double, 0.0_c_double]
  box(:, 3) = [-0.5_c_double, 0.6_c_double, 3.1_c_double]
  call random_seed_fixed()
  call random_number(xr)
  xr = matmul(box, xr)
  do i = 1, nr
     qr(i) = merge(1.0_c_double, -1.0_c_double, mod(i, 2) == 0)
  end do
  if (farfield_ewald_makeplan_f(FARFIELD_EWALD_DIRECT, box, int(nr, c_int64_t), 1e-10_c_double, plan, eopts) &
       /= FARFIELD_OK) failures = failures + 1
  if (farfield_ewald_execute_f(plan, xr, qr, field=fref, energy=uref) /= FARFIELD_OK) failures = failures + 1
  if (farfield_ewald_destroy_f(plan) /= FARFIELD_OK) failures = failures + 1
  if (farfield_ewald_makeplan_f(FARFIELD_EWALD_SPME, box, int(nr, c_int64_t), 1e-6_c_double, plan, eopts) &
       /= FARFIELD_OK) failures = failures + 1
  if (farfield_ewald_execute_f(plan, xr, qr, field=fr, energy=ur, virial=vir) /= FARFIELD_OK) failures = failures + 1
  if (farfield_ewald_get_params_f(plan, par) /= FARFIELD_OK) failures = failures + 1
  err = sqrt(sum((spread(qr, 1, 3) * (fr - fref))**2) / sum((spread(qr, 1, 3) * fref)**2))
  write (*, '(a, es9.2, a, es9.2, a, es9.2, a, i0, a, f7.4)') 'triclinic SPME tol 1e-6: force err ', err, &
       ', energy err ', abs(ur - uref) / abs(uref), ', |tr W - U| / |U| ', abs(vir(1, 1) + vir(2, 2) + vir(3, 3) - ur) / abs(ur), &
       ', order ', par%order_or_support, ', xi ', par%xi
  if (err > 1e-6_c_double) failures = failures + 1
  ! energy and virial: relative errors up to 4 tol and 8 tol on random charges (the contract
  ! in the Ewald module docs: tol is calibrated on the forces of molecular systems)
  if (abs(ur - uref) / abs(uref) > 4e-6_c_double) failures = failures + 1
  ! tr W = U holds exactly for 1/r; both sides carry their error
  if (abs(vir(1, 1) + vir(2, 2) + vir(3, 3) - ur) / abs(ur) > 1.2e-5_c_double) failures = failures + 1
  if (par%method /= FARFIELD_EWALD_SPME .or. par%order_or_support < 4) failures = failures + 1

  ! ---- what MD codes call: scaled pairs, k-space-only and real-space-only plans ---------
  pairs = reshape([0_c_int64_t, 1_c_int64_t, 2_c_int64_t, 3_c_int64_t, 4_c_int64_t, 5_c_int64_t], [2, 3])
  scales = [0.0_c_double, 0.5_c_double, 1.0_c_double / 1.2_c_double]
  ! reference: the classic sum with the same scaled pairs
  if (farfield_ewald_makeplan_f(FARFIELD_EWALD_DIRECT, box, int(nr, c_int64_t), 1e-10_c_double, plan2, eopts) &
       /= FARFIELD_OK) failures = failures + 1
  if (farfield_ewald_set_exclusions_scaled(plan2, 3_c_int64_t, c_loc(pairs), c_loc(scales)) /= FARFIELD_OK) &
       failures = failures + 1
  if (farfield_ewald_execute_f(plan2, xr, qr, field=fref, energy=uref) /= FARFIELD_OK) failures = failures + 1
  if (farfield_ewald_destroy_f(plan2) /= FARFIELD_OK) failures = failures + 1
  eo2 = eopts
  eo2%xi = par%xi
  eo2%rc = par%rc
  eo2%grid = par%grid
  eo2%order_or_support = par%order_or_support
  eo2%terms = FARFIELD_EWALD_TERMS_KSPACE
  if (farfield_ewald_makeplan_f(FARFIELD_EWALD_SPME, box, int(nr, c_int64_t), 1e-6_c_double, plan2, eo2) &
       /= FARFIELD_OK) failures = failures + 1
  if (farfield_ewald_set_exclusions_scaled(plan2, 3_c_int64_t, c_loc(pairs), c_loc(scales)) /= FARFIELD_OK) &
       failures = failures + 1
  if (farfield_ewald_execute_f(plan2, xr, qr, field=fk, energy=uk) /= FARFIELD_OK) failures = failures + 1
  if (farfield_ewald_destroy_f(plan2) /= FARFIELD_OK) failures = failures + 1
  eo2%terms = FARFIELD_EWALD_TERMS_REAL
  if (farfield_ewald_makeplan_f(FARFIELD_EWALD_SPME, box, int(nr, c_int64_t), 1e-6_c_double, plan2, eo2) &
       /= FARFIELD_OK) failures = failures + 1
  if (farfield_ewald_set_exclusions_scaled(plan2, 3_c_int64_t, c_loc(pairs), c_loc(scales)) /= FARFIELD_OK) &
       failures = failures + 1
  if (farfield_ewald_execute_f(plan2, xr, qr, field=fre, energy=ure) /= FARFIELD_OK) failures = failures + 1
  if (farfield_ewald_destroy_f(plan2) /= FARFIELD_OK) failures = failures + 1
  err = sqrt(sum((spread(qr, 1, 3) * (fk + fre - fref))**2) / sum((spread(qr, 1, 3) * fref)**2))
  write (*, '(a, es9.2, a, es9.2)') 'k-space + real-space plans, scaled pairs, tol 1e-6: force err ', err, &
       ', energy err ', abs(uk + ure - uref) / abs(uref)
  if (err > 1e-6_c_double) failures = failures + 1
  if (abs(uk + ure - uref) / abs(uref) > 4e-6_c_double) failures = failures + 1
  ! both parts matter
  if (sqrt(sum((fk - fref)**2) / sum(fref**2)) < 1e-2_c_double) failures = failures + 1
  if (sqrt(sum((fre - fref)**2) / sum(fref**2)) < 1e-2_c_double) failures = failures + 1

  ! ---- Ewald error statuses -------------------------------------------------------------
  call random_number(xf)
  call random_number(qf)
  qf = qf - 0.5_c_double
  if (farfield_ewald_execute_f(plan, xf, qf, energy=energy) /= FARFIELD_ERR_NPOINTS) failures = failures + 1
  qr(7) = ieee_value(1.0_c_double, ieee_quiet_nan)
  if (farfield_ewald_execute_f(plan, xr, qr, energy=energy) /= FARFIELD_ERR_NONFINITE) failures = failures + 1
  if (farfield_ewald_destroy_f(plan) /= FARFIELD_OK) failures = failures + 1
  box(2, 1) = 0.3_c_double  ! a has a y component: not lower-triangular
  if (farfield_ewald_makeplan_f(FARFIELD_EWALD_SPME, box, 10_c_int64_t, 1e-5_c_double, plan) /= FARFIELD_ERR_INVALID_ARG) &
       failures = failures + 1
  if (c_associated(plan)) failures = failures + 1
  ! the distributed entry point links; MPI is not initialised here (and the default build has
  ! no MPI), so it reports NOT_SUPPORTED (the MPI path is tested under mpirun by
  ! tests/mpi_ewald.rs)
  box(2, 1) = 0.0_c_double
  if (farfield_ewald_makeplan_mpi(0_c_int, FARFIELD_EWALD_SPME, box, 10_c_int64_t, 1e-5_c_double, plan, c_null_ptr) &
       /= FARFIELD_ERR_NOT_SUPPORTED) failures = failures + 1
  if (c_associated(plan)) failures = failures + 1

  ! ---- open-boundary FMM against a direct sum --------------------------------------------
  pd = 0
  ed = 0
  do i = 1, nf
     do j = 1, nf
        if (i == j) cycle
        d = xf(:, i) - xf(:, j)
        r = norm2(d)
        pd(i) = pd(i) + qf(j) / r
        ed(:, i) = ed(:, i) + qf(j) * d / r**3
     end do
  end do
  if (farfield_fmm_makeplan_f(FARFIELD_FMM_OPEN, 1e-6_c_double, plan) /= FARFIELD_OK) then
     write (*, '(a, a)') 'fmm makeplan failed: ', farfield_last_error_message_f()
     error stop 1
  end if
  if (farfield_fmm_execute_f(plan, xf, qf, pf, ef, energy) /= FARFIELD_OK) failures = failures + 1
  if (farfield_fmm_get_params_f(plan, fpar) /= FARFIELD_OK) failures = failures + 1
  write (*, '(a, i0, a, i0)') 'FMM order ', fpar%order, ', depth ', fpar%depth
  if (fpar%depth < 2) failures = failures + 1
  write (*, '(a, es9.2, a, es9.2, a, es9.2)') 'FMM open tol 1e-6: phi err ', sqrt(sum((pf - pd)**2) / sum(pd**2)), &
       ', field err ', sqrt(sum((ef - ed)**2) / sum(ed**2)), ', energy err ', &
       abs(energy - 0.5_c_double * sum(qf * pd)) / abs(0.5_c_double * sum(qf * pd))
  if (sqrt(sum((pf - pd)**2) / sum(pd**2)) > 1e-6_c_double) failures = failures + 1
  if (sqrt(sum((ef - ed)**2) / sum(ed**2)) > 1e-6_c_double) failures = failures + 1
  if (abs(energy - 0.5_c_double * sum(qf * pd)) > 1e-6_c_double * abs(0.5_c_double * sum(qf * pd))) failures = failures + 1
  qf(3) = ieee_value(1.0_c_double, ieee_quiet_nan)
  if (farfield_fmm_execute_f(plan, xf, qf, pf) /= FARFIELD_ERR_NONFINITE) failures = failures + 1
  if (farfield_fmm_execute_f(plan, xf(:, 1:10), qf, pf) /= FARFIELD_ERR_NPOINTS) failures = failures + 1
  if (farfield_fmm_destroy_f(plan) /= FARFIELD_OK) failures = failures + 1
  if (farfield_fmm_makeplan_f(FARFIELD_FMM_OPEN, 2.0_c_double, plan) /= FARFIELD_ERR_TOL) failures = failures + 1
  ! the device entry point refuses a plan on the CPU (no GPU needed to check that)
  if (farfield_fmm_makeplan_f(FARFIELD_FMM_OPEN, 1e-6_c_double, plan) /= FARFIELD_OK) failures = failures + 1
  if (farfield_fmm_execute_device(plan, 0_c_int64_t, c_null_ptr, c_null_ptr, c_null_ptr, c_null_ptr, c_null_ptr) &
       /= FARFIELD_ERR_INVALID_ARG) failures = failures + 1
  if (farfield_fmm_destroy_f(plan) /= FARFIELD_OK) failures = failures + 1

  if (failures > 0) then
     write (*, '(a, i0, a)') 'test_ewald_fmm: ', failures, ' check(s) FAILED'
     error stop 1
  end if
  write (*, '(a)') 'test_ewald_fmm: all checks passed'

contains

  subroutine random_seed_fixed()
    integer :: sz
    integer, allocatable :: seed(:)
    call random_seed(size=sz)
    allocate (seed(sz))
    seed = 12345
    call random_seed(put=seed)
  end subroutine random_seed_fixed

end program test_ewald_fmm
