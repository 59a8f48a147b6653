!> Example: free-space Poisson in Fortran with the `farfield` module.
!>
!> Solves  laplacian(phi) = -rho  in free space (no periodic images, phi -> 0 far away) on a
!> 32^3 grid for a Gaussian charge of width s and unit total charge, and compares with the exact
!> potential  phi(r) = erf(r / (sqrt(2) s)) / (4 pi r). Fails if they differ by more than 1e-6.
!>
!> Build against an installed farfield (prefix P):
!>   CMake (a Fortran-only project is fine):
!>     find_package(farfield 1.0 CONFIG REQUIRED COMPONENTS Fortran)  (cmake -DCMAKE_PREFIX_PATH=P)
!>     target_link_libraries(poisson_gaussian_f90 PRIVATE farfield::fortran)
!>   pkg-config:
!>     gfortran poisson_gaussian.f90 $(pkg-config --cflags --libs farfield-fortran) -o poisson_gaussian
!>     (PKG_CONFIG_PATH=P/lib/pkgconfig; at run time LD_LIBRARY_PATH=P/lib or -Wl,-rpath,P/lib)
!> SPDX-License-Identifier: MIT OR Apache-2.0
program poisson_gaussian
  use, intrinsic :: iso_c_binding
  use farfield
  implicit none

  integer, parameter :: n = 32
  real(c_double), parameter :: pi = 3.14159265358979323846_c_double
  real(c_double), parameter :: s = 0.06_c_double       ! width of the Gaussian (box side 1)
  real(c_double) :: rho(n, n, n), phi(n, n, n), exact(n, n, n)   ! x fastest, as farfield expects
  real(c_double) :: h, d(3), r, err
  type(c_ptr) :: plan
  type(farfield_poisson_opts) :: opts
  integer :: i, j, k, ier

  ! charge density and exact potential at the cell-centred nodes of the unit cube
  h = 1.0_c_double / n
  do k = 1, n
     do j = 1, n
        do i = 1, n
           d = ([i, j, k] - 0.5_c_double) * h - 0.5_c_double   ! position relative to the centre
           r = norm2(d)
           rho(i, j, k) = exp(-r**2 / (2 * s**2)) / ((2 * pi)**1.5_c_double * s**3)
           exact(i, j, k) = erf(r / (sqrt(2.0_c_double) * s)) / (4 * pi * r)
        end do
     end do
  end do

  ! plan: Vico-Greengard (spectrally accurate for smooth sources) on n^3 nodes of spacing h;
  ! the options are optional (defaults if absent)
  ier = farfield_poisson_default_opts_f(opts)
  opts%nthreads = 1                                   ! 0 = all cores
  if (ier == FARFIELD_OK) ier = farfield_poisson_makeplan_f(FARFIELD_POISSON_VICO_DCT, &
       [int(n, c_int64_t), int(n, c_int64_t), int(n, c_int64_t)], [h, h, h], plan, opts)
  ! solve (any number of times with the same plan); efield and energy are optional outputs
  if (ier == FARFIELD_OK) ier = farfield_poisson_execute_f(plan, rho, phi)
  if (ier /= FARFIELD_OK) then
     write (*, '(a, i0, a, a)') 'farfield error ', ier, ': ', farfield_last_error_message_f()
     error stop 1
  end if
  ier = farfield_poisson_destroy_f(plan)             ! also sets plan to c_null_ptr

  err = sqrt(sum((phi - exact)**2) / sum(exact**2))
  write (*, '(a, f12.9, a, f12.9)') 'potential at the centre node: ', phi(n / 2, n / 2, n / 2), &
       ', exact ', exact(n / 2, n / 2, n / 2)
  write (*, '(a, es9.2)') 'relative l2 error over the grid: ', err
  if (err > 1e-6_c_double) error stop 1
end program poisson_gaussian
