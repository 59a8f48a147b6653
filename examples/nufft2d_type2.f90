!> Example: a 2D type-2 NUFFT (Fourier modes -> non-uniform points) in Fortran.
!>
!>   c(j) = sum_{k1,k2} f(k1, k2) exp(-i (k1 x(j) + k2 y(j))),  k1 = -n1/2 .. (n1-1)/2, same for k2
!>
!> The modes live in an ordinary Fortran array f(n1, n2) whose first index is k1 (the library's
!> "x fastest" layout is Fortran's column order). Compared with the direct sum; fails if the
!> relative error exceeds 1e-8.
!>
!> Build against an installed farfield (prefix P):
!>   CMake (a Fortran-only project is fine):
!>     find_package(farfield 1.0 CONFIG REQUIRED COMPONENTS Fortran)  (cmake -DCMAKE_PREFIX_PATH=P)
!>     target_link_libraries(nufft2d_type2_f90 PRIVATE farfield::fortran)
!>   pkg-config:
!>     gfortran nufft2d_type2.f90 $(pkg-config --cflags --libs farfield-fortran) -o nufft2d_type2
!>     (PKG_CONFIG_PATH=P/lib/pkgconfig; at run time LD_LIBRARY_PATH=P/lib or -Wl,-rpath,P/lib)
!> SPDX-License-Identifier: MIT OR Apache-2.0
program nufft2d_type2
  use, intrinsic :: iso_c_binding
  use farfield
  implicit none

  integer, parameter :: n1 = 24, n2 = 17, m = 500
  real(c_double), parameter :: pi = 3.14159265358979323846_c_double
  real(c_double) :: x(m), y(m), err
  complex(c_double_complex) :: f(n1, n2), c(m), cref(m)
  type(c_ptr) :: plan
  integer :: j, k1, k2, ier

  ! points anywhere (radians, 2 pi-periodic) and some mode coefficients
  call random_number(x)
  call random_number(y)
  x = pi * (2 * x - 1)
  y = pi * (2 * y - 1)
  do k2 = 1, n2
     do k1 = 1, n1
        f(k1, k2) = cmplx(cos(0.3_c_double * k1 + 0.1_c_double * k2), sin(0.7_c_double * k1 * k2), &
             kind=c_double_complex)
     end do
  end do

  ! plan (type 2, 2D because n_modes has two entries, sign -1, one vector, tol 1e-10),
  ! points (copied: x and y may change afterwards), execute, destroy
  ier = farfield_nufft_makeplan_f(2, [int(n1, c_int64_t), int(n2, c_int64_t)], -1, 1, 1e-10_c_double, plan)
  if (ier == FARFIELD_OK) ier = farfield_nufft_setpts_f(plan, x, y)
  if (ier == FARFIELD_OK) ier = farfield_nufft_execute(plan, c, f)   ! type 2: reads f, writes c
  if (ier /= FARFIELD_OK) then
     write (*, '(a, i0, a, a)') 'farfield error ', ier, ': ', farfield_last_error_message_f()
     error stop 1
  end if
  ier = farfield_nufft_destroy_f(plan)

  ! direct sum; f(k1, k2) holds mode (k1 - 1 - n1/2, k2 - 1 - n2/2)
  do j = 1, m
     cref(j) = 0
     do k2 = 1, n2
        do k1 = 1, n1
           cref(j) = cref(j) + f(k1, k2) * exp(cmplx(0, -((k1 - 1 - n1 / 2) * x(j) + (k2 - 1 - n2 / 2) * y(j)), &
                kind=c_double_complex))
        end do
     end do
  end do
  err = sqrt(sum(abs(c - cref)**2) / sum(abs(cref)**2))
  write (*, '(a, 2f13.9, a, 2f13.9)') 'c(1) = ', c(1), ', direct ', cref(1)
  write (*, '(a, es9.2, a)') 'relative l2 error: ', err, ' (tolerance 1e-10)'
  if (err > 1e-8_c_double) error stop 1
end program nufft2d_type2
