!> Fortran test of NUFFT type 3 through the raw bind(c) interfaces of the farfield module:
!> f_k = sum_j c_j exp(+-i s_k . x_j) for arbitrary real points and frequencies, a 2D double
!> precision case (off-centre data, tol 1e-10) and a 1D single precision case (tol 1e-4), each
!> against the direct sum (relative l2 error <= 10 tol), and the setpts error paths (N < 0,
!> NULL s, non-finite s).
!> SPDX-License-Identifier: MIT OR Apache-2.0
program test_nufft3
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_quiet_nan
  use farfield
  implicit none

  complex(c_double_complex), parameter :: iu = (0.0_c_double, 1.0_c_double)
  integer :: failures = 0
  integer :: nseed, i
  integer, allocatable :: seed(:)

  call random_seed(size=nseed)
  allocate (seed(nseed))
  seed = [(31337 + 11 * i, i = 1, nseed)]
  call random_seed(put=seed)

  call test_2d_double()
  call test_1d_single()

  if (failures > 0) then
     write (*, '(a, i0, a)') 'test_nufft3: ', failures, ' check(s) FAILED'
     error stop 1
  end if
  write (*, '(a)') 'test_nufft3: all checks passed'

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
       write (*, '(a, a, a, a)') 'check failed: ', what, '; last error: ', farfield_last_error_message_f()
       failures = failures + 1
    end if
  end subroutine expect

  real(c_double) function rel_err(a, b)
    complex(c_double_complex), intent(in) :: a(:), b(:)
    rel_err = sqrt(sum(abs(a - b)**2) / sum(abs(b)**2))
  end function rel_err

  !> 2D: points in (1 +- 4) x (-3 +- 2), frequencies in (-6 +- 15) x (20 +- 10), iflag +1.
  subroutine test_2d_double()
    integer, parameter :: m = 160, n = 140
    real(c_double), parameter :: tol = 1e-10_c_double
    real(c_double), target :: x(m), y(m), s(n), t(n)
    real(c_double) :: re(m), im(m)
    complex(c_double_complex) :: c(m), f(n), fref(n), f2(n)
    integer(c_int64_t) :: nm(2)
    type(c_ptr) :: plan
    type(farfield_nufft_info) :: info
    integer :: j, k
    real(c_double) :: err

    call random_number(x)
    call random_number(y)
    call random_number(s)
    call random_number(t)
    x = 1 + 4 * (2 * x - 1)
    y = -3 + 2 * (2 * y - 1)
    s = -6 + 15 * (2 * s - 1)
    t = 20 + 10 * (2 * t - 1)
    call random_number(re)
    call random_number(im)
    c = cmplx(re - 0.5_c_double, im - 0.5_c_double, kind=c_double_complex)

    nm = 0 ! not read for type 3
    call expect(farfield_nufft_makeplan(3_c_int, 2_c_int, nm, 1_c_int, 1_c_int, tol, plan, c_null_ptr) &
         == FARFIELD_OK, '2d type 3 makeplan')
    call expect(farfield_nufft_setpts(plan, int(m, c_int64_t), x, c_loc(y), c_null_ptr, int(n, c_int64_t), &
         c_loc(s), c_loc(t), c_null_ptr) == FARFIELD_OK, '2d type 3 setpts')
    call expect(farfield_nufft_execute(plan, c, f) == FARFIELD_OK, '2d type 3 execute')
    call expect(farfield_nufft_get_info_f(plan, info) == FARFIELD_OK, '2d type 3 get_info')
    call expect(info%nf(1) >= 2 * info%kernel_width .and. info%nf(3) == 1, '2d type 3 info')

    do k = 1, n
       fref(k) = 0
       do j = 1, m
          fref(k) = fref(k) + c(j) * exp(iu * (s(k) * x(j) + t(k) * y(j)))
       end do
    end do
    err = rel_err(f, fref)
    write (*, '(a, es10.3)') 'f64 2D type 3 tol 1e-10: rel err ', err
    call expect(err <= 10 * tol, '2d type 3 accuracy')

    ! error paths keep the previous points
    call expect(farfield_nufft_setpts(plan, int(m, c_int64_t), x, c_loc(y), c_null_ptr, -1_c_int64_t, &
         c_loc(s), c_loc(t), c_null_ptr) == FARFIELD_ERR_NPOINTS, 'N < 0')
    call expect(farfield_nufft_setpts(plan, int(m, c_int64_t), x, c_loc(y), c_null_ptr, int(n, c_int64_t), &
         c_null_ptr, c_loc(t), c_null_ptr) == FARFIELD_ERR_NULL_POINTER, 'NULL s')
    s(7) = ieee_value(s(7), ieee_quiet_nan)
    call expect(farfield_nufft_setpts(plan, int(m, c_int64_t), x, c_loc(y), c_null_ptr, int(n, c_int64_t), &
         c_loc(s), c_loc(t), c_null_ptr) == FARFIELD_ERR_NONFINITE, 'NaN in s')
    call expect(index(farfield_last_error_message_f(), 's[6]') > 0, 'message names s[6]')
    call expect(farfield_nufft_execute(plan, c, f2) == FARFIELD_OK, 'execute after failed setpts')
    ! the same points again (not bitwise: the parallel spreader's sums may be ordered differently)
    call expect(rel_err(f2, f) <= 1e-13_c_double, 'previous points kept')
    call expect(farfield_nufft_destroy(plan) == FARFIELD_OK, '2d type 3 destroy')
  end subroutine test_2d_double

  !> 1D single precision: points in [-2, 5], frequencies in [3, 40], iflag -1.
  subroutine test_1d_single()
    integer, parameter :: m = 200, n = 150
    real(c_float), parameter :: tol = 1e-4_c_float
    real(c_float), target :: x(m), s(n)
    real(c_float) :: re(m), im(m)
    complex(c_float_complex) :: c(m), f(n)
    complex(c_double_complex) :: fref(n)
    integer(c_int64_t) :: nm(1)
    type(c_ptr) :: plan
    integer :: j, k
    real(c_double) :: err

    call random_number(x)
    call random_number(s)
    x = -2 + 7 * x
    s = 3 + 37 * s
    call random_number(re)
    call random_number(im)
    c = cmplx(re - 0.5, im - 0.5, kind=c_float_complex)
    nm = 0
    call expect(farfield_nufftf_makeplan(3_c_int, 1_c_int, nm, -1_c_int, 1_c_int, tol, plan, c_null_ptr) &
         == FARFIELD_OK, '1d f32 type 3 makeplan')
    call expect(farfield_nufftf_setpts(plan, int(m, c_int64_t), x, c_null_ptr, c_null_ptr, int(n, c_int64_t), &
         c_loc(s), c_null_ptr, c_null_ptr) == FARFIELD_OK, '1d f32 type 3 setpts')
    call expect(farfield_nufftf_execute(plan, c, f) == FARFIELD_OK, '1d f32 type 3 execute')
    do k = 1, n
       fref(k) = 0
       do j = 1, m
          fref(k) = fref(k) + cmplx(c(j), kind=c_double_complex) &
               * exp(-iu * (real(s(k), c_double) * real(x(j), c_double)))
       end do
    end do
    err = rel_err(cmplx(f, kind=c_double_complex), fref)
    write (*, '(a, es10.3)') 'f32 1D type 3 tol 1e-4: rel err ', err
    call expect(err <= 10 * tol, '1d f32 type 3 accuracy')
    call expect(farfield_nufftf_destroy(plan) == FARFIELD_OK, '1d f32 type 3 destroy')
  end subroutine test_1d_single
end program test_nufft3
