!> Fortran test of the distributed SPME (run by CTest under mpirun -np 2 and 3): with `use mpi`,
!> the communicator is the integer handle MPI_COMM_WORLD itself (fortran/tests/test_poisson_mpi.f90
!> covers `use mpi_f08`). A rock-salt crystal of 12^3 ions, each rank passing the ions of every
!> K-th atomic layer (the caller's decomposition); checked: the Madelung constant from the
!> energy (1.747564594633, to 1e-6 at tol 1e-6), the fields at the lattice sites (zero by
!> symmetry), the energy equal on every rank, and tr W = U (Coulomb).
!> SPDX-License-Identifier: MIT OR Apache-2.0
program test_ewald_mpi
  use, intrinsic :: iso_c_binding
  use mpi
  use farfield
  implicit none

  integer, parameter :: sites = 12
  real(c_double), parameter :: a = 0.5640_c_double, madelung = 1.747564594633_c_double
  type(farfield_ewald_opts), target :: opts
  type(c_ptr) :: plan
  real(c_double), allocatable, target :: xyz(:, :), q(:), field(:, :)
  real(c_double), target :: energy, virial(9)
  real(c_double) :: box(3, 3), m_est, fmax, u_lo, u_hi
  integer(c_int64_t) :: n, m
  integer :: rank, nranks, ierr, i, j, k, ok, all_ok, failures, total

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nranks, ierr)
  failures = 0

  ! this rank's ions: the layers k = rank, rank + K, ... (0-based)
  n = 0
  do k = rank, sites - 1, nranks
     n = n + sites * sites
  end do
  allocate(xyz(3, max(n, 1_c_int64_t)), q(max(n, 1_c_int64_t)), field(3, max(n, 1_c_int64_t)))
  m = 0
  do k = rank, sites - 1, nranks
     do j = 0, sites - 1
        do i = 0, sites - 1
           m = m + 1
           xyz(:, m) = [i, j, k] * a / 2
           q(m) = merge(-1.0_c_double, 1.0_c_double, mod(i + j + k, 2) == 1)
        end do
     end do
  end do
  box = 0
  do i = 1, 3
     box(i, i) = sites * a / 2   ! columns are the lattice vectors
  end do

  if (farfield_ewald_default_opts(opts, c_sizeof(opts)) /= FARFIELD_OK) failures = failures + 1
  opts%nthreads = 1   ! the ranks share the cores
  ok = merge(1, 0, farfield_ewald_makeplan_mpi(MPI_COMM_WORLD, FARFIELD_EWALD_SPME, box, max(n, 1_c_int64_t), &
       1e-6_c_double, plan, c_loc(opts)) == FARFIELD_OK)
  call MPI_Allreduce(ok, all_ok, 1, MPI_INTEGER, MPI_MIN, MPI_COMM_WORLD, ierr)
  if (all_ok == 0) then
     write (*, '(a, i0, a, a)') 'rank ', rank, ': makeplan_mpi: ', farfield_last_error_message_f()
     call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
  end if
  if (farfield_ewald_execute(plan, n, xyz, q, c_null_ptr, c_loc(field), c_loc(energy), c_loc(virial)) /= FARFIELD_OK) then
     write (*, '(a, i0, a, a)') 'rank ', rank, ': execute: ', farfield_last_error_message_f()
     failures = failures + 1
  end if
  if (farfield_ewald_destroy(plan) /= FARFIELD_OK) failures = failures + 1

  ! energy per ion pair = -M / d, d = a/2
  m_est = -energy / (sites**3 / 2.0_c_double) * (a / 2)
  fmax = 0
  if (n > 0) fmax = maxval(abs(field(:, 1:n)))
  call MPI_Allreduce(MPI_IN_PLACE, fmax, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(energy, u_lo, 1, MPI_DOUBLE_PRECISION, MPI_MIN, MPI_COMM_WORLD, ierr)
  call MPI_Allreduce(energy, u_hi, 1, MPI_DOUBLE_PRECISION, MPI_MAX, MPI_COMM_WORLD, ierr)
  if (rank == 0) write (*, '(a, i0, a, f16.12, a, es9.2, a, es9.2)') 'test_ewald_mpi on ', nranks, &
       ' ranks: Madelung constant ', m_est, ', largest |E| ', fmax, ', tr W / U - 1 ', &
       (virial(1) + virial(5) + virial(9)) / energy - 1
  if (abs(m_est - madelung) > 1e-6_c_double * madelung) failures = failures + 1
  if (fmax > 1e-3_c_double) failures = failures + 1
  if (u_hi - u_lo > 1e-14_c_double * abs(energy)) failures = failures + 1
  if (abs((virial(1) + virial(5) + virial(9)) / energy - 1) > 1e-5_c_double) failures = failures + 1

  call MPI_Allreduce(failures, total, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  call MPI_Finalize(ierr)
  if (total > 0) then
     if (rank == 0) write (*, '(a, i0, a)') 'test_ewald_mpi: ', total, ' check(s) FAILED'
     error stop 1
  end if
  if (rank == 0) write (*, '(a, i0, a)') 'test_ewald_mpi: all checks passed on ', nranks, ' rank(s)'
end program test_ewald_mpi
