!> Fortran test of the farfield module: a 2D type 1 and a 3D type 2 NUFFT (double precision,
!> tol 1e-9) and a 2D type 2 in single precision (tol 1e-4), each against the direct sum
!> (relative l2 error <= 10 tol), plus a few error paths through the Fortran wrappers.
!> SPDX-License-Identifier: MIT OR Apache-2.0
program test_nufft
  use, intrinsic :: iso_c_binding
  use, intrinsic :: ieee_arithmetic, only: ieee_value, ieee_positive_inf
  use farfield
  implicit none

  real(c_double), parameter :: pi = 3.14159265358979323846_c_double
  complex(c_double_complex), parameter :: iu = (0.0_c_double, 1.0_c_double)
  integer :: failures = 0
  integer :: nseed, i
  integer, allocatable :: seed(:)

  ! fixed seed: the test is deterministic
  call random_seed(size=nseed)
  allocate (seed(nseed))
  seed = [(20240 + 37 * i, i = 1, nseed)]
  call random_seed(put=seed)

  call check_version()
  call test_2d_type1()
  call test_3d_type2()
  call test_single()
  call test_errors()

  if (failures > 0) then
     write (*, '(a, i0, a)') 'test_nufft: ', failures, ' check(s) FAILED'
     error stop 1
  end if
  write (*, '(a)') 'test_nufft: all checks passed'

contains

  subroutine expect(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
       write (*, '(a, a, a, a)') 'check failed: ', what, '; last error: ', farfield_last_error_message_f()
       failures = failures + 1
    end if
  end subroutine expect

  subroutine check_version()
    character(len=32) :: want
    write (want, '(i0, ".", i0, ".", i0)') FARFIELD_VERSION_MAJOR, FARFIELD_VERSION_MINOR, FARFIELD_VERSION_PATCH
    call expect(farfield_version_f() == trim(want), 'version string equals the constants')
    call expect(len(farfield_status_string_f(FARFIELD_ERR_TOL)) > 0, 'status string')
    call expect(farfield_status_string_f(FARFIELD_ERR_TOL) /= farfield_status_string_f(FARFIELD_ERR_MODES), &
         'distinct status strings')
  end subroutine check_version

  !> floor(n / 2): the lowest mode is -floor(n/2) in CMCL order.
  integer function half(n)
    integer, intent(in) :: n
    half = n / 2
  end function half

  real(c_double) function rel_err(a, b)
    complex(c_double_complex), intent(in) :: a(:), b(:)
    rel_err = sqrt(sum(abs(a - b)**2) / sum(abs(b)**2))
  end function rel_err

  !> 2D type 1: f(k1, k2) = sum_j c_j exp(+i (k1 x_j + k2 y_j)), k = -N/2 ... (N-1)/2.
  subroutine test_2d_type1()
    integer, parameter :: n1 = 24, n2 = 17, m = 300
    real(c_double), parameter :: tol = 1e-9_c_double
    real(c_double) :: x(m), y(m), re(m), im(m)
    complex(c_double_complex) :: c(m), f(n1, n2), fref(n1, n2)
    type(c_ptr) :: plan
    type(farfield_nufft_opts) :: opts
    type(farfield_nufft_info) :: info
    integer :: j, k1, k2, h1, h2
    real(c_double) :: err

    h1 = half(n1) ! the lowest modes are -h1, -h2
    h2 = half(n2)
    call random_number(x)
    call random_number(y)
    x = pi * (2 * x - 1)
    y = 3 * pi * (2 * y - 1)
    call random_number(re)
    call random_number(im)
    c = cmplx(re - 0.5_c_double, im - 0.5_c_double, kind=c_double_complex)

    call expect(farfield_nufft_default_opts_f(opts) == FARFIELD_OK, 'default opts')
    opts%nthreads = 1
    call expect(farfield_nufft_makeplan_f(1, [int(n1, c_int64_t), int(n2, c_int64_t)], +1, 1, tol, plan, opts) &
         == FARFIELD_OK, '2d makeplan')
    call expect(farfield_nufft_setpts_f(plan, x, y) == FARFIELD_OK, '2d setpts')
    call expect(farfield_nufft_execute(plan, c, f) == FARFIELD_OK, '2d execute')
    call expect(farfield_nufft_get_info_f(plan, info) == FARFIELD_OK, '2d get_info')
    call expect(info%nthreads == 1 .and. info%nf(3) == 1 .and. info%nf(1) >= n1, '2d info')
    call expect(info%warnings == 0 .and. abs(info%tol_used - tol) <= 0, '2d info tol')
    call expect(farfield_nufft_destroy_f(plan) == FARFIELD_OK, '2d destroy')
    call expect(.not. c_associated(plan), 'destroy_f nulls the plan')

    fref = 0
    do k2 = 1, n2
       do k1 = 1, n1
          do j = 1, m
             fref(k1, k2) = fref(k1, k2) + c(j) * exp(iu * ((k1 - 1 - h1) * x(j) + (k2 - 1 - h2) * y(j)))
          end do
       end do
    end do
    err = rel_err(reshape(f, [n1 * n2]), reshape(fref, [n1 * n2]))
    write (*, '(a, es10.3)') 'f64 2D type 1 tol 1e-9: rel err ', err
    call expect(err <= 10 * tol, '2d type 1 accuracy')
  end subroutine test_2d_type1

  !> 3D type 2: c_j = sum_k f(k1, k2, k3) exp(-i (k1 x_j + k2 y_j + k3 z_j)), using the raw
  !> bind(c) interfaces (c_loc for the optional pointers).
  subroutine test_3d_type2()
    integer, parameter :: n1 = 12, n2 = 10, n3 = 9, m = 200
    real(c_double), parameter :: tol = 1e-9_c_double
    real(c_double), target :: x(m), y(m), z(m)
    real(c_double) :: re(n1, n2, n3), im(n1, n2, n3)
    complex(c_double_complex) :: c(m), cref(m), f(n1, n2, n3)
    integer(c_int64_t) :: nm(3)
    type(c_ptr) :: plan
    integer :: j, k1, k2, k3, h1, h2, h3
    real(c_double) :: err

    h1 = half(n1)
    h2 = half(n2)
    h3 = half(n3)
    call random_number(x)
    call random_number(y)
    call random_number(z)
    x = pi * (2 * x - 1)
    y = pi * (2 * y - 1)
    z = pi * (2 * z - 1)
    call random_number(re)
    call random_number(im)
    f = cmplx(re - 0.5_c_double, im - 0.5_c_double, kind=c_double_complex)

    nm = [n1, n2, n3]
    call expect(farfield_nufft_makeplan(2_c_int, 3_c_int, nm, -1_c_int, 1_c_int, tol, plan, c_null_ptr) &
         == FARFIELD_OK, '3d makeplan')
    call expect(farfield_nufft_setpts(plan, int(m, c_int64_t), x, c_loc(y), c_loc(z), 0_c_int64_t, &
         c_null_ptr, c_null_ptr, c_null_ptr) == FARFIELD_OK, '3d setpts')
    call expect(farfield_nufft_execute(plan, c, f) == FARFIELD_OK, '3d execute')
    call expect(farfield_nufft_destroy(plan) == FARFIELD_OK, '3d destroy')

    cref = 0
    do j = 1, m
       do k3 = 1, n3
          do k2 = 1, n2
             do k1 = 1, n1
                cref(j) = cref(j) + f(k1, k2, k3) * exp(-iu * ((k1 - 1 - h1) * x(j) &
                     + (k2 - 1 - h2) * y(j) + (k3 - 1 - h3) * z(j)))
             end do
          end do
       end do
    end do
    err = rel_err(c, cref)
    write (*, '(a, es10.3)') 'f64 3D type 2 tol 1e-9: rel err ', err
    call expect(err <= 10 * tol, '3d type 2 accuracy')
  end subroutine test_3d_type2

  !> 2D type 2 in single precision, tol 1e-4, reference in double.
  subroutine test_single()
    integer, parameter :: n1 = 16, n2 = 12, m = 150
    real(c_float), parameter :: tol = 1e-4_c_float
    real(c_float) :: x(m), y(m), re(n1, n2), im(n1, n2)
    complex(c_float_complex) :: c(m), f(n1, n2)
    complex(c_double_complex) :: cref(m)
    type(c_ptr) :: plan
    integer :: j, k1, k2, h1, h2
    real(c_double) :: err

    h1 = half(n1)
    h2 = half(n2)
    call random_number(x)
    call random_number(y)
    x = real(pi, c_float) * (2 * x - 1)
    y = real(pi, c_float) * (2 * y - 1)
    call random_number(re)
    call random_number(im)
    f = cmplx(re - 0.5, im - 0.5, kind=c_float_complex)

    call expect(farfield_nufftf_makeplan_f(2, [int(n1, c_int64_t), int(n2, c_int64_t)], +1, 1, tol, plan) &
         == FARFIELD_OK, 'f32 makeplan')
    call expect(farfield_nufftf_setpts_f(plan, x, y) == FARFIELD_OK, 'f32 setpts')
    call expect(farfield_nufftf_execute(plan, c, f) == FARFIELD_OK, 'f32 execute')
    call expect(farfield_nufftf_destroy_f(plan) == FARFIELD_OK, 'f32 destroy')

    cref = 0
    do j = 1, m
       do k2 = 1, n2
          do k1 = 1, n1
             cref(j) = cref(j) + cmplx(f(k1, k2), kind=c_double_complex) * &
                  exp(iu * ((k1 - 1 - h1) * real(x(j), c_double) + (k2 - 1 - h2) * real(y(j), c_double)))
          end do
       end do
    end do
    err = rel_err(cmplx(c, kind=c_double_complex), cref)
    write (*, '(a, es10.3)') 'f32 2D type 2 tol 1e-4: rel err ', err
    call expect(err <= 10 * tol, 'f32 accuracy')
  end subroutine test_single

  subroutine test_errors()
    type(c_ptr) :: plan
    type(farfield_nufft_opts) :: opts
    type(farfield_nufft_info) :: info
    real(c_double) :: x(10), y(9)
    complex(c_double_complex) :: c(10), f(8)
    integer(c_int64_t), parameter :: n8(1) = [8_c_int64_t]
    integer(c_int), target :: not_a_stream
    type(c_ptr) :: null_plan

    call expect(farfield_nufft_makeplan_f(4, n8, 1, 1, 1e-6_c_double, plan) == FARFIELD_ERR_TYPE, 'type 4')
    call expect(.not. c_associated(plan), 'plan NULL after failure')
    call expect(farfield_nufft_makeplan_f(1, [8_c_int64_t, 0_c_int64_t], 1, 1, 1e-6_c_double, plan) &
         == FARFIELD_ERR_MODES, 'modes 0')
    call expect(farfield_nufft_makeplan_f(1, n8, 1, 1, -1.0_c_double, plan) == FARFIELD_ERR_TOL, 'tol < 0')
    call expect(farfield_nufft_makeplan_f(1, [1_c_int64_t, 1_c_int64_t, 1_c_int64_t, 1_c_int64_t], 1, 1, &
         1e-6_c_double, plan) == FARFIELD_ERR_DIM, 'dim 4')
    call expect(farfield_nufft_default_opts_f(opts) == FARFIELD_OK, 'default opts')
    opts%backend = FARFIELD_BACKEND_CUDA
    call expect(farfield_nufft_makeplan_f(1, n8, 1, 1, 1e-6_c_double, plan, opts) == FARFIELD_ERR_NO_DEVICE, &
         'CUDA without device')
    call expect(len(farfield_last_error_message_f()) > 0, 'last error message')

    call expect(farfield_nufft_makeplan_f(2, n8, 1, 1, 1e-20_c_double, plan) == FARFIELD_OK, 'tiny tol accepted')
    call expect(farfield_nufft_get_info_f(plan, info) == FARFIELD_OK, 'get_info')
    call expect(iand(info%warnings, FARFIELD_WARN_TOL_CLAMPED) /= 0, 'tol clamped warning')
    call expect(farfield_nufft_execute(plan, c, f) == FARFIELD_ERR_NO_POINTS, 'execute before setpts')
    x = 0
    y = 0
    x(6) = ieee_value(x(6), ieee_positive_inf)
    call expect(farfield_nufft_setpts_f(plan, x) == FARFIELD_ERR_NONFINITE, 'non-finite point')
    call expect(index(farfield_last_error_message_f(), 'point 5') > 0, 'message names point 5 (0-based)')
    call expect(farfield_nufft_setpts_f(plan, x, y) == FARFIELD_ERR_NPOINTS, 'size mismatch in wrapper')
    x(6) = 1
    f = 1
    call expect(farfield_nufft_setpts_f(plan, x) == FARFIELD_OK, 'setpts after failures')
    call expect(farfield_nufft_execute(plan, c, f) == FARFIELD_OK, 'execute after failures')
    ! the device entry points need a CUDA plan; a NULL plan is reported as such
    call expect(farfield_nufft_setpts_device_f(plan, 10_c_int64_t, c_loc(not_a_stream)) == FARFIELD_ERR_INVALID_ARG, &
         'setpts_device on a CPU plan')
    call expect(index(farfield_last_error_message_f(), 'CUDA') > 0, 'setpts_device message names CUDA')
    null_plan = c_null_ptr
    call expect(farfield_nufft_setpts_device_f(null_plan, 10_c_int64_t, c_loc(not_a_stream)) == FARFIELD_ERR_NULL_POINTER, &
         'setpts_device on a NULL plan')
    call expect(farfield_nufftf_setpts_device_f(null_plan, 10_c_int64_t, c_loc(not_a_stream)) == FARFIELD_ERR_NULL_POINTER, &
         'f32 setpts_device on a NULL plan')
    call expect(farfield_nufft_setpts_type3_device(plan, 1_c_int64_t, c_loc(not_a_stream), c_null_ptr, c_null_ptr, &
         1_c_int64_t, c_loc(not_a_stream), c_null_ptr, c_null_ptr) == FARFIELD_ERR_INVALID_ARG, &
         'setpts_type3_device on a CPU plan')
    call expect(farfield_nufftf_setpts_type3_device(null_plan, 1_c_int64_t, c_loc(not_a_stream), c_null_ptr, c_null_ptr, &
         1_c_int64_t, c_loc(not_a_stream), c_null_ptr, c_null_ptr) == FARFIELD_ERR_NULL_POINTER, &
         'f32 setpts_type3_device on a NULL plan')
    call expect(farfield_nufft_destroy_f(plan) == FARFIELD_OK, 'destroy')
    ! a CUDA stream on a CPU plan is refused, naming the field
    call expect(farfield_nufft_default_opts_f(opts) == FARFIELD_OK, 'default opts for the stream check')
    call expect(.not. c_associated(opts%gpu_stream), 'gpu_stream defaults to NULL')
    opts%backend = FARFIELD_BACKEND_CPU
    opts%gpu_stream = c_loc(not_a_stream)
    call expect(farfield_nufft_makeplan_f(1, n8, 1, 1, 1e-6_c_double, plan, opts) == FARFIELD_ERR_INVALID_ARG, &
         'gpu_stream on a CPU plan')
    call expect(index(farfield_last_error_message_f(), 'gpu_stream') > 0, 'message names gpu_stream')
    call expect(farfield_nufft_destroy_f(plan) == FARFIELD_OK, 'destroy of a null plan')
  end subroutine test_errors

end program test_nufft
