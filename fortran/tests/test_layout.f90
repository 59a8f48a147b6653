!> Layout of the bind(c) types of the farfield module (NUFFT opts/info, Poisson opts, Ewald
!> opts/params, FMM opts/params; each starts with struct_size): c_sizeof and field offsets (c_loc
!> differences) must equal (a) the frozen ABI numbers that c_tests/c_layout.c also asserts and
!> (b) what the C compiler reports (layout_c.c, compiled into this test). Also checks the
!> default options arrive intact through the Fortran type.
!> SPDX-License-Identifier: MIT OR Apache-2.0
program test_layout
  use, intrinsic :: iso_c_binding
  use farfield
  implicit none

  interface
     subroutine farfield_test_opts_layout(out) bind(c, name="farfield_test_opts_layout")
       import :: c_int64_t
       integer(c_int64_t), intent(out) :: out(14)
     end subroutine farfield_test_opts_layout
     subroutine farfield_test_info_layout(out) bind(c, name="farfield_test_info_layout")
       import :: c_int64_t
       integer(c_int64_t), intent(out) :: out(10)
     end subroutine farfield_test_info_layout
     subroutine farfield_test_poisson_opts_layout(out) bind(c, name="farfield_test_poisson_opts_layout")
       import :: c_int64_t
       integer(c_int64_t), intent(out) :: out(7)
     end subroutine farfield_test_poisson_opts_layout
     subroutine farfield_test_ewald_opts_layout(out) bind(c, name="farfield_test_ewald_opts_layout")
       import :: c_int64_t
       integer(c_int64_t), intent(out) :: out(14)
     end subroutine farfield_test_ewald_opts_layout
     subroutine farfield_test_ewald_params_layout(out) bind(c, name="farfield_test_ewald_params_layout")
       import :: c_int64_t
       integer(c_int64_t), intent(out) :: out(12)
     end subroutine farfield_test_ewald_params_layout
     subroutine farfield_test_fmm_opts_layout(out) bind(c, name="farfield_test_fmm_opts_layout")
       import :: c_int64_t
       integer(c_int64_t), intent(out) :: out(9)
     end subroutine farfield_test_fmm_opts_layout
     subroutine farfield_test_fmm_params_layout(out) bind(c, name="farfield_test_fmm_params_layout")
       import :: c_int64_t
       integer(c_int64_t), intent(out) :: out(18)
     end subroutine farfield_test_fmm_params_layout
  end interface

  ! the frozen ABI of libfarfield.so.1 (same numbers as c_tests/c_layout.c): sizeof, then offsets
  ! in field order, struct_size first
  integer(c_int64_t), parameter :: opts_abi(14) = [64, 0, 8, 12, 16, 20, 24, 32, 36, 40, 44, 48, 52, 56]
  integer(c_int64_t), parameter :: info_abi(10) = [72, 0, 8, 32, 36, 40, 48, 56, 64, 68]
  integer(c_int64_t), parameter :: poisson_abi(7) = [32, 0, 8, 12, 16, 20, 24]
  integer(c_int64_t), parameter :: ewo_abi(14) = [88, 0, 8, 12, 16, 20, 24, 32, 40, 64, 68, 72, 76, 80]
  integer(c_int64_t), parameter :: ewp_abi(12) = [96, 0, 8, 16, 24, 48, 52, 56, 64, 72, 80, 88]
  integer(c_int64_t), parameter :: fmo_abi(9) = [40, 0, 8, 12, 16, 20, 24, 28, 32]
  integer(c_int64_t), parameter :: fmp_abi(18) = [120, 0, 8, 12, 16, 24, 32, 40, 48, 56, 64, 72, 80, 88, 96, 104, 112, 116]

  type(farfield_nufft_opts), target :: o
  type(farfield_nufft_info), target :: inf
  type(farfield_poisson_opts), target :: po
  integer(c_int64_t) :: fo(14), fi(10), co(14), ci(10), fp(7), cp(7)
  type(farfield_ewald_opts), target :: ewo
  type(farfield_ewald_params), target :: ewp
  type(farfield_fmm_opts), target :: fmo
  type(farfield_fmm_params), target :: fmp
  integer(c_int64_t) :: fewo(14), cewo(14), fewp(12), cewp(12), ffmo(9), cfmo(9), ffmp(18), cfmp(18)
  integer :: failures = 0, i

  fo(1) = c_sizeof(o)
  fo(2) = off(c_loc(o%struct_size), c_loc(o))
  fo(3) = off(c_loc(o%modeord), c_loc(o))
  fo(4) = off(c_loc(o%debug), c_loc(o))
  fo(5) = off(c_loc(o%nthreads), c_loc(o))
  fo(6) = off(c_loc(o%kernel), c_loc(o))
  fo(7) = off(c_loc(o%upsampfac), c_loc(o))
  fo(8) = off(c_loc(o%fftw), c_loc(o))
  fo(9) = off(c_loc(o%spread_max_subprob_size), c_loc(o))
  fo(10) = off(c_loc(o%backend), c_loc(o))
  fo(11) = off(c_loc(o%points_by_reference), c_loc(o))
  fo(12) = off(c_loc(o%gpu_method), c_loc(o))
  fo(13) = off(c_loc(o%gpu_spread_reuse_hint), c_loc(o))
  fo(14) = off(c_loc(o%gpu_stream), c_loc(o))

  fi(1) = c_sizeof(inf)
  fi(2) = off(c_loc(inf%struct_size), c_loc(inf))
  fi(3) = off(c_loc(inf%nf), c_loc(inf))
  fi(4) = off(c_loc(inf%kernel_width), c_loc(inf))
  fi(5) = off(c_loc(inf%nthreads), c_loc(inf))
  fi(6) = off(c_loc(inf%upsampfac), c_loc(inf))
  fi(7) = off(c_loc(inf%kernel_param), c_loc(inf))
  fi(8) = off(c_loc(inf%tol_used), c_loc(inf))
  fi(9) = off(c_loc(inf%warnings), c_loc(inf))
  fi(10) = off(c_loc(inf%backend), c_loc(inf))

  fp(1) = c_sizeof(po)
  fp(2) = off(c_loc(po%struct_size), c_loc(po))
  fp(3) = off(c_loc(po%nthreads), c_loc(po))
  fp(4) = off(c_loc(po%debug), c_loc(po))
  fp(5) = off(c_loc(po%fftw), c_loc(po))
  fp(6) = off(c_loc(po%check_input), c_loc(po))
  fp(7) = off(c_loc(po%vico_factor), c_loc(po))

  fewo(1) = c_sizeof(ewo)
  fewo(2) = off(c_loc(ewo%struct_size), c_loc(ewo))
  fewo(3) = off(c_loc(ewo%nthreads), c_loc(ewo))
  fewo(4) = off(c_loc(ewo%debug), c_loc(ewo))
  fewo(5) = off(c_loc(ewo%fftw), c_loc(ewo))
  fewo(6) = off(c_loc(ewo%order_or_support), c_loc(ewo))
  fewo(7) = off(c_loc(ewo%xi), c_loc(ewo))
  fewo(8) = off(c_loc(ewo%rc), c_loc(ewo))
  fewo(9) = off(c_loc(ewo%grid), c_loc(ewo))
  fewo(10) = off(c_loc(ewo%backend), c_loc(ewo))
  fewo(11) = off(c_loc(ewo%gpu_precision), c_loc(ewo))
  fewo(12) = off(c_loc(ewo%gpu_method), c_loc(ewo))
  fewo(13) = off(c_loc(ewo%terms), c_loc(ewo))
  fewo(14) = off(c_loc(ewo%gpu_stream), c_loc(ewo))

  fewp(1) = c_sizeof(ewp)
  fewp(2) = off(c_loc(ewp%struct_size), c_loc(ewp))
  fewp(3) = off(c_loc(ewp%xi), c_loc(ewp))
  fewp(4) = off(c_loc(ewp%rc), c_loc(ewp))
  fewp(5) = off(c_loc(ewp%grid), c_loc(ewp))
  fewp(6) = off(c_loc(ewp%order_or_support), c_loc(ewp))
  fewp(7) = off(c_loc(ewp%method), c_loc(ewp))
  fewp(8) = off(c_loc(ewp%eta), c_loc(ewp))
  fewp(9) = off(c_loc(ewp%kc), c_loc(ewp))
  fewp(10) = off(c_loc(ewp%est_rel_err), c_loc(ewp))
  fewp(11) = off(c_loc(ewp%real_s), c_loc(ewp))
  fewp(12) = off(c_loc(ewp%kspace_s), c_loc(ewp))

  ffmo(1) = c_sizeof(fmo)
  ffmo(2) = off(c_loc(fmo%struct_size), c_loc(fmo))
  ffmo(3) = off(c_loc(fmo%nthreads), c_loc(fmo))
  ffmo(4) = off(c_loc(fmo%debug), c_loc(fmo))
  ffmo(5) = off(c_loc(fmo%order), c_loc(fmo))
  ffmo(6) = off(c_loc(fmo%depth), c_loc(fmo))
  ffmo(7) = off(c_loc(fmo%backend), c_loc(fmo))
  ffmo(8) = off(c_loc(fmo%max_leaf), c_loc(fmo))
  ffmo(9) = off(c_loc(fmo%gpu_stream), c_loc(fmo))

  ffmp(1) = c_sizeof(fmp)
  ffmp(2) = off(c_loc(fmp%struct_size), c_loc(fmp))
  ffmp(3) = off(c_loc(fmp%order), c_loc(fmp))
  ffmp(4) = off(c_loc(fmp%depth), c_loc(fmp))
  ffmp(5) = off(c_loc(fmp%nleaves), c_loc(fmp))
  ffmp(6) = off(c_loc(fmp%npoints), c_loc(fmp))
  ffmp(7) = off(c_loc(fmp%t_tree), c_loc(fmp))
  ffmp(8) = off(c_loc(fmp%t_lists), c_loc(fmp))
  ffmp(9) = off(c_loc(fmp%t_p2m), c_loc(fmp))
  ffmp(10) = off(c_loc(fmp%t_m2m), c_loc(fmp))
  ffmp(11) = off(c_loc(fmp%t_m2l), c_loc(fmp))
  ffmp(12) = off(c_loc(fmp%t_l2l), c_loc(fmp))
  ffmp(13) = off(c_loc(fmp%t_l2p), c_loc(fmp))
  ffmp(14) = off(c_loc(fmp%t_p2p), c_loc(fmp))
  ffmp(15) = off(c_loc(fmp%t_post), c_loc(fmp))
  ffmp(16) = off(c_loc(fmp%t_total), c_loc(fmp))
  ffmp(17) = off(c_loc(fmp%tol_clamped), c_loc(fmp))
  ffmp(18) = off(c_loc(fmp%nthreads), c_loc(fmp))

  call farfield_test_ewald_opts_layout(cewo)
  call farfield_test_ewald_params_layout(cewp)
  call farfield_test_fmm_opts_layout(cfmo)
  call farfield_test_fmm_params_layout(cfmp)
  call farfield_test_opts_layout(co)
  call farfield_test_poisson_opts_layout(cp)
  call farfield_test_info_layout(ci)

  write (*, '(a, 14i4)') 'opts Fortran: ', fo
  write (*, '(a, 14i4)') 'opts C:       ', co
  write (*, '(a, 10i4)') 'info Fortran: ', fi
  write (*, '(a, 10i4)') 'info C:       ', ci
  write (*, '(a, 7i4)') 'poisson opts Fortran: ', fp
  write (*, '(a, 7i4)') 'poisson opts C:       ', cp
  do i = 1, 14
     call expect(fo(i) == opts_abi(i), 'opts layout (Fortran) vs frozen ABI', i)
     call expect(co(i) == opts_abi(i), 'opts layout (C) vs frozen ABI', i)
  end do
  do i = 1, 10
     call expect(fi(i) == info_abi(i), 'info layout (Fortran) vs frozen ABI', i)
     call expect(ci(i) == info_abi(i), 'info layout (C) vs frozen ABI', i)
  end do
  do i = 1, 7
     call expect(fp(i) == poisson_abi(i), 'poisson opts layout (Fortran) vs frozen ABI', i)
     call expect(cp(i) == poisson_abi(i), 'poisson opts layout (C) vs frozen ABI', i)
  end do
  call expect(c_sizeof(inf%nf) == 24, 'sizeof(info%nf)', 0)
  write (*, '(a, 14i4)') 'ewald opts Fortran: ', fewo
  write (*, '(a, 14i4)') 'ewald opts C:       ', cewo
  write (*, '(a, 12i4)') 'ewald params Fortran: ', fewp
  write (*, '(a, 12i4)') 'ewald params C:       ', cewp
  write (*, '(a, 9i4)') 'fmm opts Fortran: ', ffmo
  write (*, '(a, 9i4)') 'fmm opts C:       ', cfmo
  write (*, '(a, 18i4)') 'fmm params Fortran: ', ffmp
  write (*, '(a, 18i4)') 'fmm params C:       ', cfmp
  do i = 1, 14
     call expect(fewo(i) == ewo_abi(i), 'ewald opts layout (Fortran) vs frozen ABI', i)
     call expect(cewo(i) == ewo_abi(i), 'ewald opts layout (C) vs frozen ABI', i)
  end do
  do i = 1, 12
     call expect(fewp(i) == ewp_abi(i), 'ewald params layout (Fortran) vs frozen ABI', i)
     call expect(cewp(i) == ewp_abi(i), 'ewald params layout (C) vs frozen ABI', i)
  end do
  do i = 1, 9
     call expect(ffmo(i) == fmo_abi(i), 'fmm opts layout (Fortran) vs frozen ABI', i)
     call expect(cfmo(i) == fmo_abi(i), 'fmm opts layout (C) vs frozen ABI', i)
  end do
  do i = 1, 18
     call expect(ffmp(i) == fmp_abi(i), 'fmm params layout (Fortran) vs frozen ABI', i)
     call expect(cfmp(i) == fmp_abi(i), 'fmm params layout (C) vs frozen ABI', i)
  end do
  call expect(c_sizeof(ewo%grid) == 24 .and. c_sizeof(ewp%grid) == 24, 'sizeof(ewald grid)', 0)

  ! default options through the Fortran type
  o%modeord = -7
  o%upsampfac = -7
  o%backend = -7
  o%points_by_reference = -7
  o%gpu_method = -7
  o%gpu_stream = c_loc(o)
  call expect(farfield_nufft_default_opts(o, c_sizeof(o)) == FARFIELD_OK, 'default opts status', 0)
  call expect(o%struct_size == c_sizeof(o), 'default opts struct_size', 0)
  call expect(o%modeord == 0 .and. o%debug == 0 .and. o%nthreads == 0, 'default opts (1)', 0)
  call expect(o%kernel == FARFIELD_KERNEL_ES .and. abs(o%upsampfac) <= 0, 'default opts (2)', 0)
  call expect(o%fftw == 64 .and. o%spread_max_subprob_size == 0, 'default opts (3)', 0)
  call expect(o%backend == FARFIELD_BACKEND_AUTO .and. o%points_by_reference == 0, 'default opts (4)', 0)
  call expect(o%gpu_method == FARFIELD_GPU_METHOD_AUTO .and. o%gpu_spread_reuse_hint == 0, 'default opts (5)', 0)
  call expect(.not. c_associated(o%gpu_stream), 'default opts (6): gpu_stream NULL', 0)
  po%vico_factor = -7
  call expect(farfield_poisson_default_opts(po, c_sizeof(po)) == FARFIELD_OK .and. &
       po%struct_size == 32, 'poisson default opts status', 0)
  call expect(po%nthreads == 0 .and. po%debug == 0 .and. po%fftw == 64 .and. po%check_input == 1, &
       'poisson default opts (1)', 0)
  call expect(abs(po%vico_factor - 1.1_c_double) < 1e-15_c_double, 'poisson default opts (2)', 0)
  ewo%grid = -7
  ewo%xi = -7
  ewo%backend = -7
  ewo%gpu_precision = -7
  ewo%gpu_method = -7
  ewo%terms = -7
  ewo%gpu_stream = c_loc(ewo)
  call expect(farfield_ewald_default_opts_f(ewo) == FARFIELD_OK .and. &
       ewo%struct_size == 88, 'ewald default opts status', 0)
  call expect(ewo%nthreads == 0 .and. ewo%debug == 0 .and. ewo%fftw == 64 .and. ewo%order_or_support == 0, &
       'ewald default opts (1)', 0)
  call expect(abs(ewo%xi) <= 0 .and. abs(ewo%rc) <= 0 .and. all(ewo%grid == 0), 'ewald default opts (2)', 0)
  call expect(ewo%backend == FARFIELD_BACKEND_AUTO .and. ewo%gpu_precision == FARFIELD_EWALD_GPU_DOUBLE .and. &
       ewo%gpu_method == FARFIELD_GPU_METHOD_AUTO .and. ewo%terms == FARFIELD_EWALD_TERMS_ALL .and. &
       .not. c_associated(ewo%gpu_stream), &
       'ewald default opts (3)', 0)
  fmo%depth = -7
  fmo%backend = -7
  call expect(farfield_fmm_default_opts_f(fmo) == FARFIELD_OK .and. &
       fmo%struct_size == 40, 'fmm default opts status', 0)
  call expect(fmo%nthreads == 0 .and. fmo%debug == 0 .and. fmo%order == 0 .and. fmo%depth == -1 .and. &
       fmo%backend == FARFIELD_FMM_BACKEND_AUTO .and. fmo%max_leaf == 0 .and. &
       .not. c_associated(fmo%gpu_stream), 'fmm default opts', 0)
  ! NULL-free error path: a size that is too small is refused, nothing written
  fmo%depth = -7
  call expect(farfield_fmm_default_opts(fmo, 4_c_size_t) == FARFIELD_ERR_INVALID_ARG .and. fmo%depth == -7, &
       'fmm default opts, size 4', 0)

  if (failures > 0) then
     write (*, '(a, i0, a)') 'test_layout: ', failures, ' check(s) FAILED'
     error stop 1
  end if
  write (*, '(a)') 'test_layout: all checks passed'

contains

  integer(c_int64_t) function off(field, base)
    type(c_ptr), intent(in) :: field, base
    off = transfer(field, 0_c_intptr_t) - transfer(base, 0_c_intptr_t)
  end function off

  subroutine expect(ok, what, i)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    integer, intent(in) :: i
    if (.not. ok) then
       write (*, '(a, a, a, i0)') 'check failed: ', what, ', entry ', i
       failures = failures + 1
    end if
  end subroutine expect

end program test_layout
