!> Spreading API from Fortran: TSC charge conservation in a periodic 2D box with a shifted
!> origin, CIC interpolation of a linear field (free axes) with its gradient, an error path
!> (a point off a free axis), the device entries on a CPU plan, single precision, default options
!> by struct size.
!> SPDX-License-Identifier: MIT OR Apache-2.0
program test_spread
  use, intrinsic :: iso_c_binding
  use farfield
  implicit none
  integer, parameter :: nx = 12, ny = 10, m = 400
  integer(c_int64_t) :: n(2) = [int(nx, c_int64_t), int(ny, c_int64_t)]
  real(c_double) :: lo(2) = [-1.0d0, 2.5d0], ln(2) = [3.0d0, 1.5d0], h(2)
  real(c_double) :: x(m), y(m), q(m), v(m), grid(nx, ny)
  real(c_double), target :: grad(2, m)
  real(c_float) :: xf(m), qf(m), gridf(nx, ny)
  type(farfield_spread_opts), target :: opts
  type(c_ptr) :: plan
  integer(c_int) :: ier, w
  integer :: j, i, k, fails
  real(c_double) :: r(4), err

  fails = 0
  h = ln / real(n, c_double)
  ier = farfield_spread_default_opts(opts, c_sizeof(opts))
  call check(ier == 0 .and. opts%struct_size == c_sizeof(opts) .and. opts%nthreads == 0, "default_opts")
  opts%nthreads = 2

  ! TSC, periodic: charge conservation with points anywhere
  do j = 1, m
     call random_number(r)
     x(j) = lo(1) + (3 * r(1) - 1) * ln(1)
     y(j) = lo(2) + r(2) * ln(2)
     q(j) = r(3) - 0.5d0
  end do
  ier = farfield_spread_makeplan_f(n, lo, ln, [.true., .true.], FARFIELD_SPREAD_KERNEL_BSPLINE, 3d0, plan, opts)
  call check(ier == 0, "makeplan TSC")
  ier = farfield_spread_get_width(plan, w)
  call check(ier == 0 .and. w == 3, "width")
  ier = farfield_spread_setpts_f(plan, x, y)
  call check(ier == 0, "setpts")
  grid = 1d300
  ier = farfield_spread_spread(plan, q, grid)
  call check(ier == 0 .and. abs(sum(grid) - sum(q)) <= 1d-12 * sum(abs(q)), "TSC conserves charge")
  ier = farfield_spread_destroy_f(plan)
  call check(ier == 0 .and. .not. c_associated(plan), "destroy")

  ! CIC, free axes: a linear field is interpolated exactly, with its gradient
  do j = 1, m
     call random_number(r)
     x(j) = lo(1) + h(1) * r(1) * (nx - 1)
     y(j) = lo(2) + h(2) * r(2) * (ny - 1)
  end do
  do k = 1, ny
     do i = 1, nx
        grid(i, k) = 0.5d0 + 2d0 * (lo(1) + (i - 1) * h(1)) - 3d0 * (lo(2) + (k - 1) * h(2))
     end do
  end do
  ier = farfield_spread_makeplan_f(n, lo, ln, [.false., .false.], FARFIELD_SPREAD_KERNEL_BSPLINE, 2d0, plan, opts)
  call check(ier == 0, "makeplan CIC")
  ier = farfield_spread_setpts_f(plan, x, y)
  call check(ier == 0, "setpts CIC")
  ier = farfield_spread_interp(plan, grid, v, c_loc(grad))
  err = maxval(abs(v - (0.5d0 + 2d0 * x - 3d0 * y)))
  call check(ier == 0 .and. err <= 1d-12, "CIC linear field")
  call check(maxval(abs(grad(1, :) - 2d0)) <= 1d-10 .and. maxval(abs(grad(2, :) + 3d0)) <= 1d-10, "CIC gradient")
  x(5) = lo(1) - h(1)
  ier = farfield_spread_setpts_f(plan, x, y)
  call check(ier == FARFIELD_ERR_INVALID_ARG, "point off a free axis")
  call check(index(farfield_last_error_message_f(), "point 4") > 0, "message names the point (0-based)")
  ! the device entries need a CUDA plan (this one runs on the CPU; its points stay set)
  ier = farfield_spread_setpts_device(plan, int(m, c_int64_t), c_loc(grad), c_loc(grad), c_null_ptr)
  call check(ier == FARFIELD_ERR_INVALID_ARG, "setpts_device on a CPU plan")
  call check(index(farfield_last_error_message_f(), "needs a CUDA plan") > 0, "setpts_device message")
  ier = farfield_spread_interp_device(plan, c_loc(grad), c_loc(grad))
  call check(ier == FARFIELD_ERR_INVALID_ARG, "interp_device on a CPU plan")
  ier = farfield_spread_spread_device(c_null_ptr, c_loc(grad), c_loc(grad))
  call check(ier == FARFIELD_ERR_NULL_POINTER, "spread_device on a NULL plan")
  ier = farfield_spread_destroy_f(plan)

  ! single precision, 1D CIC
  xf = real(x, c_float)
  qf = real(q, c_float)
  ier = farfield_spreadf_makeplan(1_c_int, n, lo, ln, [1_c_int], FARFIELD_SPREAD_KERNEL_BSPLINE, 2d0, plan, c_null_ptr)
  call check(ier == 0, "spreadf makeplan")
  ier = farfield_spreadf_setpts(plan, int(m, c_int64_t), xf, c_null_ptr, c_null_ptr)
  ier = farfield_spreadf_spread(plan, qf, gridf)
  call check(ier == 0 .and. abs(sum(gridf(:, 1)) - sum(qf)) <= 1e-4, "single precision conserves charge")
  ier = farfield_spreadf_destroy(plan)

  if (fails > 0) then
     print *, "fortran_spread: ", fails, " check(s) FAILED"
     stop 1
  end if
  print *, "fortran_spread: all checks passed"
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(*), intent(in) :: what
    if (.not. ok) then
       print *, "FAILED: ", what, " (", farfield_last_error_message_f(), ")"
       fails = fails + 1
    end if
  end subroutine check
end program test_spread
