!> Downstream Fortran program: `use farfield` from the installed module, 1D type 2 NUFFT
!> checked against the direct sum.
!> SPDX-License-Identifier: MIT OR Apache-2.0
program consumer
  use, intrinsic :: iso_c_binding
  use farfield
  implicit none
  integer, parameter :: n = 20, m = 50
  real(c_double) :: x(m), err
  complex(c_double_complex) :: c(m), cref(m), f(n)
  type(c_ptr) :: plan
  integer :: j, k, ier, lo

  lo = -n / 2
  do j = 1, m
     x(j) = 3 * sin(1.1_c_double * j)
  end do
  do k = 1, n
     f(k) = cmplx(cos(0.5_c_double * k), sin(0.2_c_double * k), kind=c_double_complex)
  end do
  ier = farfield_nufft_makeplan_f(2, [int(n, c_int64_t)], -1, 1, 1e-9_c_double, plan)
  if (ier == FARFIELD_OK) ier = farfield_nufft_setpts_f(plan, x)
  if (ier == FARFIELD_OK) ier = farfield_nufft_execute(plan, c, f)
  if (ier /= FARFIELD_OK) then
     write (*, '(a, i0, a, a)') 'farfield error ', ier, ': ', farfield_last_error_message_f()
     error stop 1
  end if
  ier = farfield_nufft_destroy_f(plan)
  do j = 1, m
     cref(j) = 0
     do k = 1, n
        cref(j) = cref(j) + f(k) * exp(cmplx(0, -(lo + k - 1) * x(j), kind=c_double_complex))
     end do
  end do
  err = sqrt(sum(abs(c - cref)**2) / sum(abs(cref)**2))
  write (*, '(a, a, a, es9.2)') 'consumer (Fortran, farfield ', farfield_version_f(), '): rel err ', err
  if (err > 1e-8_c_double) error stop 1
end program consumer
