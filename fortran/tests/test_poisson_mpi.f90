!> Fortran test of the distributed Poisson solver (run by CTest under mpirun -np 2 and 3): with
!> `use mpi_f08`, the communicator is passed to farfield_poisson_makeplan_mpi as its integer
!> handle `MPI_COMM_WORLD%MPI_VAL` (with `use mpi` it is the integer communicator itself).
!> Each rank asks for its slab of z-planes, fills ρ(n, n, count) of a Gaussian charge in the
!> unit cube (32^3 cell-centred nodes), solves with Vico-Greengard and Hockney-Eastwood, and
!> checks φ, E and the energy against the exact solution (relative L2 over the whole grid,
!> the tolerances of fortran/tests/test_poisson.f90 and c_tests/c_poisson.c).
!> SPDX-License-Identifier: MIT OR Apache-2.0
program test_poisson_mpi
  use, intrinsic :: iso_c_binding
  use mpi_f08
  use farfield
  implicit none

  integer, parameter :: n = 32
  real(c_double), parameter :: pi = 3.14159265358979323846_c_double, s = 0.05_c_double
  integer :: rank, nranks, failures, total, ierr

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  failures = 0

  ! Vico-Greengard is spectral, Hockney-Eastwood second order
  call check(FARFIELD_POISSON_VICO, 1e-7_c_double, 1e-5_c_double, 1e-7_c_double)
  call check(FARFIELD_POISSON_HOCKNEY, 5e-3_c_double, 5e-2_c_double, 2e-2_c_double)

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (total > 0) then
     if (rank == 0) write (*, '(a, i0, a, i0, a)') 'test_poisson_mpi: ', total, ' check(s) FAILED on ', &
          nranks, ' ranks'
     error stop 1
  end if
  if (rank == 0) write (*, '(a, i0, a)') 'test_poisson_mpi: all checks passed on ', nranks, ' rank(s)'

contains

  subroutine check(method, tol_phi, tol_e, tol_u)
    integer(c_int), intent(in) :: method
    real(c_double), intent(in) :: tol_phi, tol_e, tol_u
    type(farfield_poisson_opts), target :: opts
    type(c_ptr) :: plan
    integer(c_int64_t) :: start, count, k
    real(c_double), allocatable :: rho(:, :, :), phi(:, :, :), phi_ref(:, :, :), e(:, :, :, :), e_ref(:, :, :, :)
    real(c_double) :: h, d(3), r, energy, sums(5), err_phi, err_e, err_u
    integer :: i, j, ok, all_ok

    h = 1.0_c_double / n
    if (farfield_poisson_default_opts(opts, c_sizeof(opts)) /= FARFIELD_OK) failures = failures + 1
    opts%nthreads = 1   ! the ranks share the cores
    ok = merge(1, 0, farfield_poisson_makeplan_mpi(MPI_COMM_WORLD%MPI_VAL, method, 3_c_int, &
         [int(n, c_int64_t), int(n, c_int64_t), int(n, c_int64_t)], [h, h, h], plan, c_loc(opts)) &
         == FARFIELD_OK)
    ! a rank without a plan cannot take part in the solve: stop every rank
    call MPI_Allreduce(ok, all_ok, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
    if (all_ok == 0) then
       write (*, '(a, i0, a, a)') 'rank ', rank, ': makeplan_mpi: ', farfield_last_error_message_f()
       call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    end if
    if (farfield_poisson_local_slab(plan, start, count) /= FARFIELD_OK) failures = failures + 1

    ! this rank's planes start+1 .. start+count (Fortran indices) of the n^3 grid
    allocate(rho(n, n, count), phi(n, n, count), phi_ref(n, n, count), e(n, n, count, 3), e_ref(n, n, count, 3))
    sums = 0
    do k = 1, count
       do j = 1, n
          do i = 1, n
             d = [(i - 0.5_c_double) * h - 0.5_c_double, (j - 0.5_c_double) * h - 0.5_c_double, &
                  (start + k - 0.5_c_double) * h - 0.5_c_double]
             r = norm2(d)
             rho(i, j, k) = exp(-r**2 / (2 * s**2)) / ((2 * pi)**1.5_c_double * s**3)
             phi_ref(i, j, k) = erf(r / (sqrt(2.0_c_double) * s)) / (4 * pi * r)
             e_ref(i, j, k, :) = (erf(r / (sqrt(2.0_c_double) * s)) - sqrt(2 / pi) * (r / s) &
                  * exp(-r**2 / (2 * s**2))) / (4 * pi * r**2) * d / r
             sums(5) = sums(5) + 0.5_c_double * rho(i, j, k) * phi_ref(i, j, k) * h**3
          end do
       end do
    end do

    ! collective: every rank calls, with its own slab
    ok = merge(1, 0, farfield_poisson_execute_f(plan, rho, phi, e, energy) == FARFIELD_OK)
    call MPI_Allreduce(ok, all_ok, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
    if (all_ok == 0) then
       write (*, '(a, i0, a, a)') 'rank ', rank, ': execute: ', farfield_last_error_message_f()
       call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
    end if

    sums(1:4) = [sum((phi - phi_ref)**2), sum(phi_ref**2), sum((e - e_ref)**2), sum(e_ref**2)]
    call MPI_Allreduce(MPI_IN_PLACE, sums, 5, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
    err_phi = sqrt(sums(1) / sums(2))
    err_e = sqrt(sums(3) / sums(4))
    err_u = abs(energy - sums(5)) / sums(5)   ! the energy is the total on every rank
    if (rank == 0) write (*, '(a, i0, a, i0, a, es9.2, a, es9.2, a, es9.2)') 'method ', method, ' on ', nranks, &
         ' ranks: phi rel err ', err_phi, ', field rel err ', err_e, ', energy rel err ', err_u
    if (err_phi > tol_phi) failures = failures + 1
    if (err_e > tol_e) failures = failures + 1
    if (err_u > tol_u) failures = failures + 1

    if (farfield_poisson_destroy_f(plan) /= FARFIELD_OK) failures = failures + 1
  end subroutine check

end program test_poisson_mpi
