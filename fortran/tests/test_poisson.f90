!> Fortran test of the Poisson interface: a Gaussian charge in the unit cube (32^3 cell-centred
!> nodes, Vico-Greengard) against its analytic potential and field, through the _f wrappers
!> with rank-3/rank-4 arrays.
!> SPDX-License-Identifier: MIT OR Apache-2.0
program test_poisson
  use, intrinsic :: iso_c_binding
  use farfield
  implicit none

  integer, parameter :: n = 32
  real(c_double), parameter :: pi = 3.14159265358979323846_c_double, s = 0.05_c_double
  real(c_double) :: rho(n, n, n), phi(n, n, n), phi_ref(n, n, n), e(n, n, n, 3), e_ref(n, n, n, 3)
  real(c_double) :: h, d(3), r, energy, energy_ref, err_phi, err_e
  type(c_ptr) :: plan
  type(farfield_poisson_opts) :: opts
  integer :: i, j, k, failures

  failures = 0
  h = 1.0_c_double / n
  energy_ref = 0
  do k = 1, n
     do j = 1, n
        do i = 1, n
           d = [(i - 0.5_c_double) * h - 0.5_c_double, (j - 0.5_c_double) * h - 0.5_c_double, &
                (k - 0.5_c_double) * h - 0.5_c_double]
           r = norm2(d)
           rho(i, j, k) = exp(-r**2 / (2 * s**2)) / ((2 * pi)**1.5_c_double * s**3)
           phi_ref(i, j, k) = erf(r / (sqrt(2.0_c_double) * s)) / (4 * pi * r)
           e_ref(i, j, k, :) = (erf(r / (sqrt(2.0_c_double) * s)) - sqrt(2 / pi) * (r / s) * exp(-r**2 / (2 * s**2))) &
                / (4 * pi * r**2) * d / r
           energy_ref = energy_ref + 0.5_c_double * rho(i, j, k) * phi_ref(i, j, k) * h**3
        end do
     end do
  end do

  if (farfield_poisson_default_opts_f(opts) /= FARFIELD_OK) failures = failures + 1
  opts%nthreads = 1
  if (farfield_poisson_makeplan_f(FARFIELD_POISSON_VICO, [int(n, c_int64_t), int(n, c_int64_t), int(n, c_int64_t)], &
       [h, h, h], plan, opts) /= FARFIELD_OK) then
     write (*, '(a, a)') 'makeplan failed: ', farfield_last_error_message_f()
     error stop 1
  end if
  if (farfield_poisson_execute_f(plan, rho, phi, e, energy) /= FARFIELD_OK) then
     write (*, '(a, a)') 'execute failed: ', farfield_last_error_message_f()
     error stop 1
  end if
  err_phi = sqrt(sum((phi - phi_ref)**2) / sum(phi_ref**2))
  err_e = sqrt(sum((e - e_ref)**2) / sum(e_ref**2))
  write (*, '(a, es9.2, a, es9.2, a, es9.2)') 'Vico 32^3: phi rel err ', err_phi, ', field rel err ', err_e, &
       ', energy rel err ', abs(energy - energy_ref) / energy_ref
  if (err_phi > 1e-7_c_double) failures = failures + 1
  if (err_e > 1e-5_c_double) failures = failures + 1
  if (abs(energy - energy_ref) / energy_ref > 1e-7_c_double) failures = failures + 1

  ! potential only (no field, no energy), same result
  e_ref(:, :, :, 1) = phi
  if (farfield_poisson_execute_f(plan, rho, phi) /= FARFIELD_OK) failures = failures + 1
  if (any(abs(phi - e_ref(:, :, :, 1)) > 0)) failures = failures + 1
  if (farfield_poisson_destroy_f(plan) /= FARFIELD_OK) failures = failures + 1
  if (c_associated(plan)) failures = failures + 1

  ! errors through the wrapper
  if (farfield_poisson_makeplan_f(FARFIELD_POISSON_HOCKNEY, [8_c_int64_t, 8_c_int64_t], [h], plan) &
       /= FARFIELD_ERR_INVALID_ARG) failures = failures + 1
  if (farfield_poisson_makeplan_f(FARFIELD_POISSON_HOCKNEY, [8_c_int64_t], [h], plan) /= FARFIELD_ERR_DIM) &
       failures = failures + 1
  if (c_associated(plan)) failures = failures + 1

  ! the distributed entry points link; makeplan_mpi reports FARFIELD_ERR_NOT_SUPPORTED here,
  ! whether the library has no MPI (the default) or has it (FARFIELD_MPI) and MPI is not
  ! initialised in this program (the MPI path runs under mpirun: tests/mpi_poisson.rs,
  ! fortran/tests/test_poisson_mpi.f90)
  if (farfield_poisson_makeplan_mpi(0_c_int, FARFIELD_POISSON_HOCKNEY, 3_c_int, &
       [8_c_int64_t, 8_c_int64_t, 8_c_int64_t], [h, h, h], plan, c_null_ptr) /= FARFIELD_ERR_NOT_SUPPORTED) &
       failures = failures + 1
  if (c_associated(plan)) failures = failures + 1

  if (failures > 0) then
     write (*, '(a, i0, a)') 'test_poisson: ', failures, ' check(s) FAILED'
     error stop 1
  end if
  write (*, '(a)') 'test_poisson: all checks passed'
end program test_poisson
