!> Fortran 2008 interface to the farfield C ABI (include/farfield.h).
!>
!> SPDX-License-Identifier: MIT OR Apache-2.0
!>
!> * Derived types `farfield_nufft_opts`, `farfield_nufft_info`, `farfield_poisson_opts`,
!>   `farfield_spread_opts`, `farfield_ewald_opts`, `farfield_ewald_params`, `farfield_fmm_opts` and
!>   `farfield_fmm_params` are `bind(c)` copies of the versioned C structs: the first field,
!>   `struct_size`, is the size the program was compiled with (fields are only ever appended;
!>   fortran/tests/test_layout.f90 asserts the layout). Fill options with the `_default_opts_f`
!>   wrappers (they pass `c_sizeof(opts)`), read plan information with `_get_info_f` /
!>   `_get_params_f` (they set `struct_size = c_sizeof(...)` first); calling the `bind(c)`
!>   functions directly, pass `c_sizeof(opts)` / set `struct_size` yourself.
!> * Named constants mirror every `FARFIELD_*` macro of the header.
!> * `bind(c)` interfaces carry the C names and mirror the C prototypes exactly: pointers that
!>   may be NULL (`opts`, `y`, `z`, `s`, `t`, `u`, the optional outputs of the Poisson, Ewald
!>   and FMM execute calls, the FMM `box`) are `type(c_ptr), value`; pass `c_null_ptr`
!>   or `c_loc(...)`. Plans are `type(c_ptr)`.
!> * Fortran-friendly wrappers end in `_f`: they take assumed-shape arrays, derive `dim` and
!>   `M` from the array sizes, take `opts` as an optional argument and return the status code.
!>   `farfield_string(cptr)` converts a C string to a Fortran string.
!>
!> Conventions (as in C): status 0 = success, failures are FARFIELD_ERR_* (>= 100);
!> mode arrays are x fastest, i.e. a Fortran array `f(N1, N2, N3)` in CMCL order
!> (k = -N/2 ... (N-1)/2 along each axis by default); coordinates in radians, 2*pi-periodic.
!> Poisson grids are node values x fastest, i.e. `rho(nx, ny, nz)`; the field is
!> `e(nx, ny, nz, 3)` (component last). Poisson solves lap(phi) = -rho with the Green's
!> function 1/(4 pi r) (2D: -ln(r)/(2 pi)): a point charge q gives phi = q/(4 pi r).
!> Ewald and FMM use the bare Coulomb kernel 1/r, no 1/(4 pi eps0) inside: phi_i =
!> sum_j q_j/r_ij, E = -grad phi, U = 1/2 sum_i q_i phi_i, i.e. potentials in charge/length,
!> fields in charge/length**2, energies in charge**2/length (multiply by your Coulomb
!> constant). Their particle arrays are xyz(3, n), q(n), phi(n), field(3, n) (component
!> first: C's interleaved xyz[3*i + d], field[3*i + d]).
!> Complex arrays are `complex(c_double_complex)` / `complex(c_float_complex)`.
module farfield
  use, intrinsic :: iso_c_binding, only: c_int, c_int32_t, c_int64_t, c_double, c_float, &
       c_double_complex, c_float_complex, c_ptr, c_null_ptr, c_char, c_size_t, &
       c_loc, c_f_pointer, c_associated, c_sizeof
  implicit none
  private

  ! ---- version --------------------------------------------------------------------------
  integer(c_int), parameter, public :: FARFIELD_VERSION_MAJOR = 1
  integer(c_int), parameter, public :: FARFIELD_VERSION_MINOR = 2
  integer(c_int), parameter, public :: FARFIELD_VERSION_PATCH = 0

  ! ---- status codes -----------------------------------------------------------------------
  integer(c_int), parameter, public :: FARFIELD_OK = 0
  integer(c_int), parameter, public :: FARFIELD_ERR_INTERNAL = 100
  integer(c_int), parameter, public :: FARFIELD_ERR_NULL_POINTER = 101
  integer(c_int), parameter, public :: FARFIELD_ERR_INVALID_ARG = 102
  integer(c_int), parameter, public :: FARFIELD_ERR_DIM = 103
  integer(c_int), parameter, public :: FARFIELD_ERR_TYPE = 104
  integer(c_int), parameter, public :: FARFIELD_ERR_NOT_SUPPORTED = 105
  integer(c_int), parameter, public :: FARFIELD_ERR_MODES = 106
  integer(c_int), parameter, public :: FARFIELD_ERR_TOL = 107
  integer(c_int), parameter, public :: FARFIELD_ERR_NPOINTS = 108
  integer(c_int), parameter, public :: FARFIELD_ERR_NONFINITE = 109
  integer(c_int), parameter, public :: FARFIELD_ERR_ALLOC = 110
  integer(c_int), parameter, public :: FARFIELD_ERR_NO_POINTS = 111
  integer(c_int), parameter, public :: FARFIELD_ERR_NO_DEVICE = 112
  integer(c_int), parameter, public :: FARFIELD_ERR_FFT = 113
  integer(c_int), parameter, public :: FARFIELD_ERR_RANGE = 114  !< size/scale outside the supported range, or result overflow

  ! ---- option values and warning bits -----------------------------------------------------
  integer(c_int32_t), parameter, public :: FARFIELD_BACKEND_AUTO = 0
  integer(c_int32_t), parameter, public :: FARFIELD_BACKEND_CPU = 1
  integer(c_int32_t), parameter, public :: FARFIELD_BACKEND_CUDA = 2
  integer(c_int32_t), parameter, public :: FARFIELD_KERNEL_ES = 0
  integer(c_int32_t), parameter, public :: FARFIELD_GPU_METHOD_AUTO = 0
  integer(c_int32_t), parameter, public :: FARFIELD_GPU_METHOD_GM = 1
  integer(c_int32_t), parameter, public :: FARFIELD_GPU_METHOD_GM_SORT = 2
  integer(c_int32_t), parameter, public :: FARFIELD_GPU_METHOD_SM = 3
  integer(c_int32_t), parameter, public :: FARFIELD_GPU_METHOD_CSR = 4
  integer(c_int32_t), parameter, public :: FARFIELD_GPU_METHOD_GROUP = 5
  integer(c_int32_t), parameter, public :: FARFIELD_KERNEL_GAUSSIAN = 1
  integer(c_int32_t), parameter, public :: FARFIELD_WARN_TOL_CLAMPED = 1

  ! ---- Poisson methods (argument `method` of farfield_poisson_makeplan) ---------------------
  integer(c_int), parameter, public :: FARFIELD_POISSON_HOCKNEY = 0
  integer(c_int), parameter, public :: FARFIELD_POISSON_VICO = 1
  integer(c_int), parameter, public :: FARFIELD_POISSON_VICO_DCT = 2

  ! ---- spreading kernels (argument `kernel` of farfield_spread_makeplan) --------------------
  !> ES kernel; width_or_tol = relative tolerance in (0, 1).
  integer(c_int), parameter, public :: FARFIELD_SPREAD_KERNEL_ES = 0
  !> Truncated Gaussian; width_or_tol = relative tolerance in (0, 1).
  integer(c_int), parameter, public :: FARFIELD_SPREAD_KERNEL_GAUSSIAN = 1
  !> Cardinal B-spline; width_or_tol = order 1..8 (1 NGP, 2 CIC, 3 TSC).
  integer(c_int), parameter, public :: FARFIELD_SPREAD_KERNEL_BSPLINE = 2

  ! ---- Ewald methods (argument `method` of farfield_ewald_makeplan) -------------------------
  integer(c_int), parameter, public :: FARFIELD_EWALD_SPECTRAL = 0
  integer(c_int), parameter, public :: FARFIELD_EWALD_SPME = 1
  integer(c_int), parameter, public :: FARFIELD_EWALD_DIRECT = 2
  !> Largest npairs of farfield_ewald_set_exclusions (2^40).
  integer(c_int64_t), parameter, public :: FARFIELD_EWALD_MAX_EXCLUSIONS = 1099511627776_c_int64_t
  !> Warning bit of farfield_ewald_get_warnings: overrides keep est_rel_err above tol_used.
  integer(c_int32_t), parameter, public :: FARFIELD_EWALD_WARN_TOL_NOT_MET = 2
  !> opts%gpu_precision of a CUDA Ewald plan: double-precision grids and FFT (default), or
  !> single-precision grids, FFT and real-space pair functions with double-precision positions,
  !> sums, potentials, fields, energy, virial.
  integer(c_int32_t), parameter, public :: FARFIELD_EWALD_GPU_DOUBLE = 0
  integer(c_int32_t), parameter, public :: FARFIELD_EWALD_GPU_MIXED = 1
  !> opts%terms: every term (default); the k-space, self and background terms and the k-space
  !> share of the exclusion corrections (the MD code sums erfc(xi r)/r itself); the real-space
  !> pair sum and its share of the exclusion corrections. KSPACE + REAL = ALL.
  integer(c_int32_t), parameter, public :: FARFIELD_EWALD_TERMS_ALL = 0
  integer(c_int32_t), parameter, public :: FARFIELD_EWALD_TERMS_KSPACE = 1
  integer(c_int32_t), parameter, public :: FARFIELD_EWALD_TERMS_REAL = 2

  ! ---- FMM boundaries (argument `boundary` of farfield_fmm_makeplan) and backends ------------
  integer(c_int), parameter, public :: FARFIELD_FMM_OPEN = 0
  integer(c_int), parameter, public :: FARFIELD_FMM_PERIODIC = 1
  integer(c_int), parameter, public :: FARFIELD_FMM_MAX_ORDER = 40  !< largest expansion order (opts%order)
  integer(c_int), parameter, public :: FARFIELD_MAX_THREADS = 1024  !< largest opts%nthreads
  integer(c_int), parameter, public :: FARFIELD_FMM_MAX_DEPTH = 20  !< largest tree depth (opts%depth)
  integer(c_int32_t), parameter, public :: FARFIELD_FMM_BACKEND_AUTO = 0
  integer(c_int32_t), parameter, public :: FARFIELD_FMM_BACKEND_CPU = 1
  integer(c_int32_t), parameter, public :: FARFIELD_FMM_BACKEND_CUDA = 2

  !> Options of a NUFFT plan (C: farfield_nufft_opts). Get defaults with
  !> farfield_nufft_default_opts, change fields, pass to makeplan.
  type, bind(c), public :: farfield_nufft_opts
     integer(c_size_t)  :: struct_size  !< sizeof as compiled (set by _default_opts / by the caller before _get_*)
     integer(c_int32_t) :: modeord                 !< 0 = CMCL order (default), 1 = FFT order
     integer(c_int32_t) :: debug                   !< 0 = silent, 1 = print to stderr
     integer(c_int32_t) :: nthreads                !< 0 = all cores, 1 = caller's thread only
     integer(c_int32_t) :: kernel                  !< FARFIELD_KERNEL_ES / _GAUSSIAN
     real(c_double)     :: upsampfac               !< 0 = automatic, else in (1, 4]
     integer(c_int32_t) :: fftw                    !< FFTW flags: 64 = ESTIMATE, 0 = MEASURE
     integer(c_int32_t) :: spread_max_subprob_size !< 0 = automatic
     integer(c_int32_t) :: backend                 !< FARFIELD_BACKEND_*
     integer(c_int32_t) :: points_by_reference     !< 0 = setpts copies (default), 1 = keeps a reference
     integer(c_int32_t) :: gpu_method              !< CUDA only: FARFIELD_GPU_METHOD_* (0 = automatic)
     integer(c_int32_t) :: gpu_spread_reuse_hint   !< CUDA only: executes expected per setpts (0 = unknown)
     type(c_ptr)        :: gpu_stream = c_null_ptr !< CUDA only: the caller's cudaStream_t (NULL = default stream)
  end type farfield_nufft_opts

  !> What a plan chose (C: farfield_nufft_info, filled by farfield_nufft_get_info).
  type, bind(c), public :: farfield_nufft_info
     integer(c_size_t)  :: struct_size  !< sizeof as compiled (set by _default_opts / by the caller before _get_*)
     integer(c_int64_t) :: nf(3)          !< fine grid sizes, x first; 1 for unused axes
     integer(c_int32_t) :: kernel_width   !< kernel width w in grid points
     integer(c_int32_t) :: nthreads       !< threads used
     real(c_double)     :: upsampfac      !< upsampling factor used
     real(c_double)     :: kernel_param   !< beta (ES) or tau (Gaussian)
     real(c_double)     :: tol_used       !< tolerance used after clamping
     integer(c_int32_t) :: warnings       !< bit set of FARFIELD_WARN_*
     integer(c_int32_t) :: backend        !< FARFIELD_BACKEND_CPU or _CUDA
  end type farfield_nufft_info

  !> Options of a Poisson plan (C: farfield_poisson_opts). Get defaults with
  !> farfield_poisson_default_opts.
  type, bind(c), public :: farfield_poisson_opts
     integer(c_size_t)  :: struct_size  !< sizeof as compiled (set by _default_opts / by the caller before _get_*)
     integer(c_int32_t) :: nthreads     !< 0 = all cores, 1 = caller's thread only
     integer(c_int32_t) :: debug        !< > 0: print sizes and timings to stderr
     integer(c_int32_t) :: fftw         !< FFTW flags: 64 = ESTIMATE, 0 = MEASURE
     integer(c_int32_t) :: check_input  !< non-zero: reject NaN/Inf in rho
     real(c_double)     :: vico_factor  !< Vico truncation radius factor (> 1, default 1.1)
  end type farfield_poisson_opts

  !> Options of a spreading plan (C: farfield_spread_opts; versioned by struct_size). Get
  !> defaults with farfield_spread_default_opts(opts, c_sizeof(opts)).
  type, bind(c), public :: farfield_spread_opts
     integer(c_size_t)  :: struct_size      !< sizeof the struct as compiled (set by default_opts)
     integer(c_int32_t) :: nthreads         !< 0 = all cores, 1 = caller's thread only
     integer(c_int32_t) :: debug            !< > 0: print choices and timings to stderr
     integer(c_int32_t) :: backend          !< FARFIELD_BACKEND_AUTO (CPU), _CPU or _CUDA
     integer(c_int32_t) :: gpu_method       !< CUDA: FARFIELD_GPU_METHOD_*
     integer(c_int32_t) :: gpu_reuse_hint   !< CUDA: spreads expected per setpts, 0 = unknown
     integer(c_int32_t) :: max_subprob_size !< points per subproblem, 0 = default
  end type farfield_spread_opts

  !> Options of an Ewald plan (C: farfield_ewald_opts). Get defaults with
  !> farfield_ewald_default_opts; every override left at 0 is chosen from tol.
  type, bind(c), public :: farfield_ewald_opts
     integer(c_size_t)  :: struct_size  !< sizeof as compiled (set by _default_opts / by the caller before _get_*)
     integer(c_int32_t) :: nthreads          !< 0 = all cores, 1 = caller's thread only
     integer(c_int32_t) :: debug             !< > 0: print parameters and timings to stderr
     integer(c_int32_t) :: fftw              !< FFTW flags: 64 = ESTIMATE, 0 = MEASURE
     integer(c_int32_t) :: order_or_support  !< spectral support P / SPME order; 0 = automatic
     real(c_double)     :: xi                !< splitting parameter; 0 = automatic
     real(c_double)     :: rc                !< real-space cutoff; 0 = automatic
     integer(c_int64_t) :: grid(3)           !< grid per axis (all or none); 0 = automatic
     integer(c_int32_t) :: backend           !< FARFIELD_BACKEND_* (AUTO = CPU, CPU, CUDA)
     integer(c_int32_t) :: gpu_precision     !< CUDA only: FARFIELD_EWALD_GPU_DOUBLE / _MIXED
     integer(c_int32_t) :: gpu_method        !< CUDA only: FARFIELD_GPU_METHOD_* (0 = automatic)
     integer(c_int32_t) :: terms             !< FARFIELD_EWALD_TERMS_ALL (default) / _KSPACE / _REAL
     type(c_ptr)        :: gpu_stream = c_null_ptr !< CUDA only: the caller's cudaStream_t (NULL = default stream)
  end type farfield_ewald_opts

  !> Parameters and last timings of an Ewald plan (C: farfield_ewald_params, filled by
  !> farfield_ewald_get_params).
  type, bind(c), public :: farfield_ewald_params
     integer(c_size_t)  :: struct_size  !< sizeof as compiled (set by _default_opts / by the caller before _get_*)
     real(c_double)     :: xi                !< splitting parameter
     real(c_double)     :: rc                !< real-space cutoff
     integer(c_int64_t) :: grid(3)           !< grid per axis (direct sum: 2 m_max + 1)
     integer(c_int32_t) :: order_or_support  !< support P / B-spline order; 0 for direct
     integer(c_int32_t) :: method            !< FARFIELD_EWALD_*
     real(c_double)     :: eta               !< spectral Ewald Gaussian shape; else 0
     real(c_double)     :: kc                !< direct-sum k-space cutoff; else 0
     real(c_double)     :: est_rel_err       !< estimated relative RMS force error
     real(c_double)     :: real_s            !< seconds in real space (last execute)
     real(c_double)     :: kspace_s          !< seconds in k space (last execute)
  end type farfield_ewald_params

  !> Options of an FMM plan (C: farfield_fmm_opts). Get defaults with farfield_fmm_default_opts.
  type, bind(c), public :: farfield_fmm_opts
     integer(c_size_t)  :: struct_size  !< sizeof as compiled (set by _default_opts / by the caller before _get_*)
     integer(c_int32_t) :: nthreads  !< 0 = all cores, 1 = caller's thread only
     integer(c_int32_t) :: debug     !< > 0: print parameters and stage timings to stderr
     integer(c_int32_t) :: order     !< expansion order: 0 = from tol, else 1..40
     integer(c_int32_t) :: depth     !< tree depth: -1 or 0 = automatic, else 1..20
     integer(c_int32_t) :: backend   !< FARFIELD_FMM_BACKEND_*
     integer(c_int32_t) :: max_leaf  !< 0 = tree chosen by the cost model, -1 = uniform tree, >= 1 = adaptive tree with at most max_leaf per leaf
     type(c_ptr)        :: gpu_stream = c_null_ptr !< CUDA only: the caller's cudaStream_t (NULL = default stream)
  end type farfield_fmm_opts

  !> Parameters and statistics of the last execute of an FMM plan (C: farfield_fmm_params,
  !> filled by farfield_fmm_get_params). Times in seconds.
  type, bind(c), public :: farfield_fmm_params
     integer(c_size_t)  :: struct_size  !< sizeof as compiled (set by _default_opts / by the caller before _get_*)
     integer(c_int32_t) :: order     !< expansion order p
     integer(c_int32_t) :: depth     !< depth of the last execute (-1 before the first)
     integer(c_int64_t) :: nleaves   !< occupied leaves of the last execute
     integer(c_int64_t) :: npoints   !< particles of the last execute
     real(c_double)     :: t_tree    !< input checks, sorting and tree
     real(c_double)     :: t_lists   !< interaction lists
     real(c_double)     :: t_p2m
     real(c_double)     :: t_m2m
     real(c_double)     :: t_m2l     !< with the periodic lattice operator
     real(c_double)     :: t_l2l
     real(c_double)     :: t_l2p
     real(c_double)     :: t_p2p
     real(c_double)     :: t_post    !< periodic corrections, energy, reordering
     real(c_double)     :: t_total
     integer(c_int32_t) :: tol_clamped  !< 1 if tol needed an order above the maximum (clamped)
     integer(c_int32_t) :: nthreads     !< threads used
  end type farfield_fmm_params

  ! ---- the C functions --------------------------------------------------------------------
  public :: farfield_nufft_default_opts
  public :: farfield_nufft_makeplan, farfield_nufft_setpts, farfield_nufft_execute
  public :: farfield_nufft_get_info, farfield_nufft_destroy, farfield_nufft_execute_device
  public :: farfield_nufft_setpts_device, farfield_nufftf_setpts_device
  public :: farfield_nufft_setpts_type3_device, farfield_nufftf_setpts_type3_device
  public :: farfield_nufftf_makeplan, farfield_nufftf_setpts, farfield_nufftf_execute
  public :: farfield_nufftf_get_info, farfield_nufftf_destroy, farfield_nufftf_execute_device
  public :: farfield_poisson_default_opts, farfield_poisson_makeplan, farfield_poisson_execute
  public :: farfield_poisson_estimate, farfield_poisson_makeplan_mpi, farfield_poisson_local_slab
  public :: farfield_poisson_destroy
  public :: farfield_spread_default_opts, farfield_spread_makeplan, farfield_spread_setpts
  public :: farfield_spread_spread, farfield_spread_spread_complex, farfield_spread_interp
  public :: farfield_spread_interp_complex, farfield_spread_get_width, farfield_spread_destroy
  public :: farfield_spreadf_default_opts, farfield_spreadf_makeplan, farfield_spreadf_setpts
  public :: farfield_spreadf_spread, farfield_spreadf_spread_complex, farfield_spreadf_interp
  public :: farfield_spreadf_interp_complex, farfield_spreadf_get_width, farfield_spreadf_destroy
  public :: farfield_spread_setpts_device, farfield_spread_spread_device
  public :: farfield_spread_spread_complex_device, farfield_spread_interp_device
  public :: farfield_spread_interp_complex_device, farfield_spreadf_setpts_device
  public :: farfield_spreadf_spread_device, farfield_spreadf_spread_complex_device
  public :: farfield_spreadf_interp_device, farfield_spreadf_interp_complex_device
  public :: farfield_ewald_default_opts, farfield_ewald_makeplan, farfield_ewald_set_box
  public :: farfield_ewald_makeplan_mpi
  public :: farfield_ewald_set_exclusions, farfield_ewald_set_exclusions_scaled
  public :: farfield_ewald_execute, farfield_ewald_execute_ids, farfield_ewald_get_params
  public :: farfield_ewald_get_warnings, farfield_ewald_execute_device
  public :: farfield_ewald_destroy
  public :: farfield_fmm_default_opts, farfield_fmm_makeplan, farfield_fmm_execute, farfield_fmm_execute_device
  public :: farfield_fmm_get_params, farfield_fmm_destroy
  public :: farfield_fmm_set_exclusions, farfield_fmm_set_exclusions_scaled
  public :: farfield_status_string, farfield_last_error_message, farfield_version

  ! ---- Fortran-friendly helpers and wrappers ----------------------------------------------
  public :: farfield_string
  public :: farfield_status_string_f, farfield_last_error_message_f, farfield_version_f
  public :: farfield_nufft_makeplan_f, farfield_nufft_setpts_f, farfield_nufft_destroy_f
  public :: farfield_nufft_setpts_device_f, farfield_nufftf_setpts_device_f
  public :: farfield_nufftf_makeplan_f, farfield_nufftf_setpts_f, farfield_nufftf_destroy_f
  public :: farfield_poisson_makeplan_f, farfield_poisson_execute_f, farfield_poisson_destroy_f
  public :: farfield_spread_makeplan_f, farfield_spread_setpts_f, farfield_spread_destroy_f
  public :: farfield_ewald_makeplan_f, farfield_ewald_execute_f, farfield_ewald_destroy_f
  public :: farfield_fmm_makeplan_f, farfield_fmm_execute_f, farfield_fmm_destroy_f
  public :: farfield_nufft_default_opts_f, farfield_poisson_default_opts_f
  public :: farfield_ewald_default_opts_f, farfield_fmm_default_opts_f
  public :: farfield_nufft_get_info_f, farfield_nufftf_get_info_f
  public :: farfield_ewald_get_params_f, farfield_fmm_get_params_f

  interface
     !> int farfield_nufft_default_opts(farfield_nufft_opts *opts, size_t struct_size);
     !> pass struct_size = c_sizeof(opts) (or use farfield_nufft_default_opts_f).
     function farfield_nufft_default_opts(opts, struct_size) result(ier) bind(c, name="farfield_nufft_default_opts")
       import :: c_int, c_size_t, farfield_nufft_opts
       type(farfield_nufft_opts), intent(inout) :: opts
       integer(c_size_t), value :: struct_size
       integer(c_int) :: ier
     end function farfield_nufft_default_opts

     !> int farfield_nufft_makeplan(int type, int dim, const int64_t *n_modes, int iflag,
     !>     int ntrans, double tol, farfield_nufft_plan *plan, const farfield_nufft_opts *opts)
     !> opts: c_null_ptr for defaults, or c_loc(an opts variable with the target attribute).
     function farfield_nufft_makeplan(ty, dim, n_modes, iflag, ntrans, tol, plan, opts) &
          result(ier) bind(c, name="farfield_nufft_makeplan")
       import :: c_int, c_int64_t, c_double, c_ptr
       integer(c_int), value :: ty, dim, iflag, ntrans
       integer(c_int64_t), intent(in) :: n_modes(*)
       real(c_double), value :: tol
       type(c_ptr), intent(out) :: plan
       type(c_ptr), value :: opts
       integer(c_int) :: ier
     end function farfield_nufft_makeplan

     !> int farfield_nufft_setpts(plan, int64_t M, const double *x, *y, *z, int64_t N, *s, *t, *u)
     !> y, z: c_loc(...) or c_null_ptr when the dimension does not use them. n, s, t, u: type 3's
     !> N target frequencies (c_loc(s) ...; c_null_ptr for unused axes); types 1, 2: 0, c_null_ptr.
     function farfield_nufft_setpts(plan, m, x, y, z, n, s, t, u) result(ier) &
          bind(c, name="farfield_nufft_setpts")
       import :: c_int, c_int64_t, c_double, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: m
       real(c_double), intent(in) :: x(*)
       type(c_ptr), value :: y, z
       integer(c_int64_t), value :: n
       type(c_ptr), value :: s, t, u
       integer(c_int) :: ier
     end function farfield_nufft_setpts

     !> int farfield_nufft_execute(plan, farfield_complex *c, farfield_complex *f)
     !> Type 1: reads c(ntrans*M), writes f(N1,N2,N3,ntrans); type 2: the other way round.
     function farfield_nufft_execute(plan, c, f) result(ier) bind(c, name="farfield_nufft_execute")
       import :: c_int, c_ptr, c_double_complex
       type(c_ptr), value :: plan
       complex(c_double_complex), intent(inout) :: c(*), f(*)
       integer(c_int) :: ier
     end function farfield_nufft_execute

     !> int farfield_nufft_setpts_device(plan, int64_t M, const double *x, *y, *z)
     !> As farfield_nufft_setpts (types 1 and 2) with CUDA device pointers (plan made with
     !> backend CUDA); unused axes may be c_null_ptr; the coordinates are copied on the device.
     function farfield_nufft_setpts_device(plan, m, x, y, z) result(ier) &
          bind(c, name="farfield_nufft_setpts_device")
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: m
       type(c_ptr), value :: x, y, z
       integer(c_int) :: ier
     end function farfield_nufft_setpts_device

     !> int farfield_nufft_setpts_type3_device(plan, int64_t M, const double *x, *y, *z,
     !>     int64_t N, const double *s, *t, *u)
     !> As farfield_nufft_setpts for type 3 with CUDA device pointers (plan made with backend
     !> CUDA); unused axes may be c_null_ptr; both sets are copied and set up on the device.
     function farfield_nufft_setpts_type3_device(plan, m, x, y, z, n, s, t, u) result(ier) &
          bind(c, name="farfield_nufft_setpts_type3_device")
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: m, n
       type(c_ptr), value :: x, y, z, s, t, u
       integer(c_int) :: ier
     end function farfield_nufft_setpts_type3_device

     !> int farfield_nufft_execute_device(plan, farfield_complex *c, farfield_complex *f)
     !> As farfield_nufft_execute with CUDA device pointers (plan made with backend CUDA).
     function farfield_nufft_execute_device(plan, c, f) result(ier) bind(c, name="farfield_nufft_execute_device")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan, c, f
       integer(c_int) :: ier
     end function farfield_nufft_execute_device

     !> int farfield_nufft_get_info(plan, farfield_nufft_info *info)
     function farfield_nufft_get_info(plan, info) result(ier) bind(c, name="farfield_nufft_get_info")
       import :: c_int, c_ptr, farfield_nufft_info
       type(c_ptr), value :: plan
       type(farfield_nufft_info), intent(inout) :: info  ! the caller sets info%struct_size
       integer(c_int) :: ier
     end function farfield_nufft_get_info

     !> int farfield_nufft_destroy(plan); c_null_ptr is fine.
     function farfield_nufft_destroy(plan) result(ier) bind(c, name="farfield_nufft_destroy")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       integer(c_int) :: ier
     end function farfield_nufft_destroy

     !> Single-precision farfield_nufft_makeplan (float tol).
     function farfield_nufftf_makeplan(ty, dim, n_modes, iflag, ntrans, tol, plan, opts) &
          result(ier) bind(c, name="farfield_nufftf_makeplan")
       import :: c_int, c_int64_t, c_float, c_ptr
       integer(c_int), value :: ty, dim, iflag, ntrans
       integer(c_int64_t), intent(in) :: n_modes(*)
       real(c_float), value :: tol
       type(c_ptr), intent(out) :: plan
       type(c_ptr), value :: opts
       integer(c_int) :: ier
     end function farfield_nufftf_makeplan

     !> Single-precision farfield_nufft_setpts (float coordinates).
     function farfield_nufftf_setpts(plan, m, x, y, z, n, s, t, u) result(ier) &
          bind(c, name="farfield_nufftf_setpts")
       import :: c_int, c_int64_t, c_float, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: m
       real(c_float), intent(in) :: x(*)
       type(c_ptr), value :: y, z
       integer(c_int64_t), value :: n
       type(c_ptr), value :: s, t, u
       integer(c_int) :: ier
     end function farfield_nufftf_setpts

     !> Single-precision farfield_nufft_execute (float complex arrays).
     function farfield_nufftf_execute(plan, c, f) result(ier) bind(c, name="farfield_nufftf_execute")
       import :: c_int, c_ptr, c_float_complex
       type(c_ptr), value :: plan
       complex(c_float_complex), intent(inout) :: c(*), f(*)
       integer(c_int) :: ier
     end function farfield_nufftf_execute

     !> Single-precision farfield_nufft_setpts_device (device pointers to floats).
     function farfield_nufftf_setpts_device(plan, m, x, y, z) result(ier) &
          bind(c, name="farfield_nufftf_setpts_device")
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: m
       type(c_ptr), value :: x, y, z
       integer(c_int) :: ier
     end function farfield_nufftf_setpts_device

     !> Single-precision farfield_nufft_setpts_type3_device (device pointers to floats).
     function farfield_nufftf_setpts_type3_device(plan, m, x, y, z, n, s, t, u) result(ier) &
          bind(c, name="farfield_nufftf_setpts_type3_device")
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: m, n
       type(c_ptr), value :: x, y, z, s, t, u
       integer(c_int) :: ier
     end function farfield_nufftf_setpts_type3_device

     !> Single-precision farfield_nufft_execute_device (device pointers).
     function farfield_nufftf_execute_device(plan, c, f) result(ier) bind(c, name="farfield_nufftf_execute_device")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan, c, f
       integer(c_int) :: ier
     end function farfield_nufftf_execute_device

     !> Single-precision farfield_nufft_get_info.
     function farfield_nufftf_get_info(plan, info) result(ier) bind(c, name="farfield_nufftf_get_info")
       import :: c_int, c_ptr, farfield_nufft_info
       type(c_ptr), value :: plan
       type(farfield_nufft_info), intent(inout) :: info  ! the caller sets info%struct_size
       integer(c_int) :: ier
     end function farfield_nufftf_get_info

     !> Single-precision farfield_nufft_destroy.
     function farfield_nufftf_destroy(plan) result(ier) bind(c, name="farfield_nufftf_destroy")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       integer(c_int) :: ier
     end function farfield_nufftf_destroy

     !> int farfield_poisson_default_opts(farfield_poisson_opts *opts, size_t struct_size);
     !> pass struct_size = c_sizeof(opts) (or use farfield_poisson_default_opts_f).
     function farfield_poisson_default_opts(opts, struct_size) result(ier) bind(c, name="farfield_poisson_default_opts")
       import :: c_int, c_size_t, farfield_poisson_opts
       type(farfield_poisson_opts), intent(inout) :: opts
       integer(c_size_t), value :: struct_size
       integer(c_int) :: ier
     end function farfield_poisson_default_opts

     !> int farfield_poisson_makeplan(int method, int dim, const int64_t *n, const double *h,
     !>     farfield_poisson_plan *plan, const farfield_poisson_opts *opts)
     !> opts: c_null_ptr for defaults, or c_loc(an opts variable with the target attribute).
     function farfield_poisson_makeplan(method, dim, n, h, plan, opts) result(ier) &
          bind(c, name="farfield_poisson_makeplan")
       import :: c_int, c_int64_t, c_double, c_ptr
       integer(c_int), value :: method, dim
       integer(c_int64_t), intent(in) :: n(*)
       real(c_double), intent(in) :: h(*)
       type(c_ptr), intent(out) :: plan
       type(c_ptr), value :: opts
       integer(c_int) :: ier
     end function farfield_poisson_makeplan

     !> int farfield_poisson_makeplan_mpi(MPI_Fint comm, method, dim, n, h, plan, opts):
     !> the distributed plan (collective); `comm` is the Fortran communicator itself
     !> (`integer :: comm` from `use mpi`, `comm%MPI_VAL` with `mpi_f08`). Returns
     !> FARFIELD_ERR_NOT_SUPPORTED when the library was built without MPI.
     function farfield_poisson_makeplan_mpi(comm, method, dim, n, h, plan, opts) result(ier) &
          bind(c, name="farfield_poisson_makeplan_mpi")
       import :: c_int, c_int64_t, c_double, c_ptr
       integer(c_int), value :: comm, method, dim
       integer(c_int64_t), intent(in) :: n(*)
       real(c_double), intent(in) :: h(*)
       type(c_ptr), intent(out) :: plan
       type(c_ptr), value :: opts
       integer(c_int) :: ier
     end function farfield_poisson_makeplan_mpi

     !> int farfield_poisson_local_slab(plan, int64_t *start, int64_t *count): the planes
     !> start .. start+count-1 (0-based) of the slowest axis held by this process.
     function farfield_poisson_local_slab(plan, start, count) result(ier) &
          bind(c, name="farfield_poisson_local_slab")
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), intent(out) :: start, count
       integer(c_int) :: ier
     end function farfield_poisson_local_slab

     !> int farfield_poisson_estimate(method, dim, const int64_t *n, const double *h, opts,
     !>     int64_t *precompute, int64_t *plan_bytes, int64_t *field_bytes, int64_t *peak_bytes):
     !> memory of a plan without allocating (each output may be c_null_ptr; precompute: 3 values).
     function farfield_poisson_estimate(method, dim, n, h, opts, precompute, plan_bytes, field_bytes, &
          peak_bytes) result(ier) bind(c, name="farfield_poisson_estimate")
       import :: c_int, c_int64_t, c_double, c_ptr
       integer(c_int), value :: method, dim
       integer(c_int64_t), intent(in) :: n(*)
       real(c_double), intent(in) :: h(*)
       type(c_ptr), value :: opts, precompute, plan_bytes, field_bytes, peak_bytes
       integer(c_int) :: ier
     end function farfield_poisson_estimate

     !> int farfield_poisson_execute(plan, const double *rho, double *phi, double *efield,
     !>     double *energy): solves lap(phi) = -rho, Green's function 1/(4 pi r) (2D
     !> -ln(r)/(2 pi)); rho(nx, ny, nz), phi(nx, ny, nz) x fastest; efield (dim*prod(n)
     !> values, component last: e(nx, ny, nz, 3)) and energy may be c_null_ptr.
     function farfield_poisson_execute(plan, rho, phi, efield, energy) result(ier) &
          bind(c, name="farfield_poisson_execute")
       import :: c_int, c_double, c_ptr
       type(c_ptr), value :: plan
       real(c_double), intent(in) :: rho(*)
       real(c_double), intent(inout) :: phi(*)
       type(c_ptr), value :: efield, energy
       integer(c_int) :: ier
     end function farfield_poisson_execute

     !> int farfield_poisson_destroy(plan); c_null_ptr is fine.
     function farfield_poisson_destroy(plan) result(ier) bind(c, name="farfield_poisson_destroy")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       integer(c_int) :: ier
     end function farfield_poisson_destroy

     !> int farfield_spread_default_opts(farfield_spread_opts *opts, size_t struct_size):
     !> pass c_sizeof(opts).
     function farfield_spread_default_opts(opts, struct_size) result(ier) bind(c, name="farfield_spread_default_opts")
       import :: c_int, c_size_t, farfield_spread_opts
       type(farfield_spread_opts), intent(inout) :: opts
       integer(c_size_t), value :: struct_size
       integer(c_int) :: ier
     end function farfield_spread_default_opts

     !> int farfield_spread_makeplan(int dim, const int64_t n[3], const double box_lo[3],
     !>     const double box_len[3], const int periodic[3], int kernel, double width_or_tol,
     !>     plan *plan, const farfield_spread_opts *opts); opts: c_null_ptr or c_loc(opts).
     function farfield_spread_makeplan(dim, n, box_lo, box_len, periodic, kernel, width_or_tol, plan, opts) &
          result(ier) bind(c, name="farfield_spread_makeplan")
       import :: c_int, c_int64_t, c_double, c_ptr
       integer(c_int), value :: dim, kernel
       integer(c_int64_t), intent(in) :: n(*)
       real(c_double), intent(in) :: box_lo(*), box_len(*)
       integer(c_int), intent(in) :: periodic(*)
       real(c_double), value :: width_or_tol
       type(c_ptr), intent(out) :: plan
       type(c_ptr), value :: opts
       integer(c_int) :: ier
     end function farfield_spread_makeplan

     !> int farfield_spread_setpts(plan, int64_t M, x, y, z): y, z may be c_null_ptr below dim 2, 3.
     function farfield_spread_setpts(plan, m, x, y, z) result(ier) bind(c, name="farfield_spread_setpts")
       import :: c_int, c_int64_t, c_double, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: m
       real(c_double), intent(in) :: x(*)
       type(c_ptr), value :: y, z
       integer(c_int) :: ier
     end function farfield_spread_setpts

     !> int farfield_spread_spread(plan, const values[M], grid[n1*n2*n3]): overwrites grid.
     function farfield_spread_spread(plan, values, grid) result(ier) bind(c, name="farfield_spread_spread")
       import :: c_int, c_double, c_ptr
       type(c_ptr), value :: plan
       real(c_double), intent(in) :: values(*)
       real(c_double), intent(inout) :: grid(*)
       integer(c_int) :: ier
     end function farfield_spread_spread

     !> int farfield_spread_spread_complex(plan, const values[M], grid[n1*n2*n3]) (complex).
     function farfield_spread_spread_complex(plan, values, grid) result(ier) bind(c, name="farfield_spread_spread_complex")
       import :: c_int, c_double_complex, c_ptr
       type(c_ptr), value :: plan
       complex(c_double_complex), intent(in) :: values(*)
       complex(c_double_complex), intent(inout) :: grid(*)
       integer(c_int) :: ier
     end function farfield_spread_spread_complex

     !> int farfield_spread_interp(plan, const grid[n1*n2*n3], values[M], grad[M*dim] or c_null_ptr).
     function farfield_spread_interp(plan, grid, values, grad) result(ier) bind(c, name="farfield_spread_interp")
       import :: c_int, c_double, c_ptr
       type(c_ptr), value :: plan
       real(c_double), intent(in) :: grid(*)
       real(c_double), intent(inout) :: values(*)
       type(c_ptr), value :: grad
       integer(c_int) :: ier
     end function farfield_spread_interp

     !> int farfield_spread_interp_complex(plan, const grid[n1*n2*n3], values[M]) (complex).
     function farfield_spread_interp_complex(plan, grid, values) result(ier) bind(c, name="farfield_spread_interp_complex")
       import :: c_int, c_double_complex, c_ptr
       type(c_ptr), value :: plan
       complex(c_double_complex), intent(in) :: grid(*)
       complex(c_double_complex), intent(inout) :: values(*)
       integer(c_int) :: ier
     end function farfield_spread_interp_complex

     !> int farfield_spread_setpts_device(plan, int64_t M, const double *x, *y, *z)
     !> As farfield_spread_setpts with CUDA device pointers (plan made with backend CUDA);
     !> unused axes may be c_null_ptr; the coordinates are copied on the device.
     function farfield_spread_setpts_device(plan, m, x, y, z) result(ier) &
          bind(c, name="farfield_spread_setpts_device")
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: m
       type(c_ptr), value :: x, y, z
       integer(c_int) :: ier
     end function farfield_spread_setpts_device

     !> int farfield_spread_spread_device(plan, values, grid): farfield_spread_spread on CUDA device
     !> pointers (values M, grid n1*n2*n3); overwrites grid; returns when done.
     function farfield_spread_spread_device(plan, values, grid) result(ier) &
          bind(c, name="farfield_spread_spread_device")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       type(c_ptr), value :: values, grid
       integer(c_int) :: ier
     end function farfield_spread_spread_device

     !> int farfield_spread_spread_complex_device(plan, values, grid): farfield_spread_spread_complex on CUDA device
     !> pointers (complex values M, grid n1*n2*n3); overwrites grid; returns when done.
     function farfield_spread_spread_complex_device(plan, values, grid) result(ier) &
          bind(c, name="farfield_spread_spread_complex_device")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       type(c_ptr), value :: values, grid
       integer(c_int) :: ier
     end function farfield_spread_spread_complex_device

     !> int farfield_spread_interp_device(plan, grid, values): farfield_spread_interp on CUDA device
     !> pointers (values M, grid n1*n2*n3); overwrites values; returns when done.
     function farfield_spread_interp_device(plan, grid, values) result(ier) &
          bind(c, name="farfield_spread_interp_device")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       type(c_ptr), value :: grid, values
       integer(c_int) :: ier
     end function farfield_spread_interp_device

     !> int farfield_spread_interp_complex_device(plan, grid, values): farfield_spread_interp_complex on CUDA device
     !> pointers (complex values M, grid n1*n2*n3); overwrites values; returns when done.
     function farfield_spread_interp_complex_device(plan, grid, values) result(ier) &
          bind(c, name="farfield_spread_interp_complex_device")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       type(c_ptr), value :: grid, values
       integer(c_int) :: ier
     end function farfield_spread_interp_complex_device

     !> int farfield_spread_get_width(plan, int *width): kernel width in grid points.
     function farfield_spread_get_width(plan, width) result(ier) bind(c, name="farfield_spread_get_width")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       integer(c_int), intent(out) :: width
       integer(c_int) :: ier
     end function farfield_spread_get_width

     !> int farfield_spread_destroy(plan); c_null_ptr is fine.
     function farfield_spread_destroy(plan) result(ier) bind(c, name="farfield_spread_destroy")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       integer(c_int) :: ier
     end function farfield_spread_destroy

     !> Single-precision int farfield_spreadf_default_opts(farfield_spread_opts *opts, size_t struct_size):
     !> pass c_sizeof(opts).
     function farfield_spreadf_default_opts(opts, struct_size) result(ier) bind(c, name="farfield_spreadf_default_opts")
       import :: c_int, c_size_t, farfield_spread_opts
       type(farfield_spread_opts), intent(inout) :: opts
       integer(c_size_t), value :: struct_size
       integer(c_int) :: ier
     end function farfield_spreadf_default_opts

     !> int farfield_spreadf_makeplan(int dim, const int64_t n[3], const double box_lo[3],
     !>     const double box_len[3], const int periodic[3], int kernel, double width_or_tol,
     !>     plan *plan, const farfield_spread_opts *opts); opts: c_null_ptr or c_loc(opts).
     function farfield_spreadf_makeplan(dim, n, box_lo, box_len, periodic, kernel, width_or_tol, plan, opts) &
          result(ier) bind(c, name="farfield_spreadf_makeplan")
       import :: c_int, c_int64_t, c_double, c_ptr
       integer(c_int), value :: dim, kernel
       integer(c_int64_t), intent(in) :: n(*)
       real(c_double), intent(in) :: box_lo(*), box_len(*)
       integer(c_int), intent(in) :: periodic(*)
       real(c_double), value :: width_or_tol
       type(c_ptr), intent(out) :: plan
       type(c_ptr), value :: opts
       integer(c_int) :: ier
     end function farfield_spreadf_makeplan

     !> int farfield_spreadf_setpts(plan, int64_t M, x, y, z): y, z may be c_null_ptr below dim 2, 3.
     function farfield_spreadf_setpts(plan, m, x, y, z) result(ier) bind(c, name="farfield_spreadf_setpts")
       import :: c_int, c_int64_t, c_float, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: m
       real(c_float), intent(in) :: x(*)
       type(c_ptr), value :: y, z
       integer(c_int) :: ier
     end function farfield_spreadf_setpts

     !> int farfield_spreadf_spread(plan, const values[M], grid[n1*n2*n3]): overwrites grid.
     function farfield_spreadf_spread(plan, values, grid) result(ier) bind(c, name="farfield_spreadf_spread")
       import :: c_int, c_float, c_ptr
       type(c_ptr), value :: plan
       real(c_float), intent(in) :: values(*)
       real(c_float), intent(inout) :: grid(*)
       integer(c_int) :: ier
     end function farfield_spreadf_spread

     !> int farfield_spreadf_spread_complex(plan, const values[M], grid[n1*n2*n3]) (complex).
     function farfield_spreadf_spread_complex(plan, values, grid) result(ier) bind(c, name="farfield_spreadf_spread_complex")
       import :: c_int, c_float_complex, c_ptr
       type(c_ptr), value :: plan
       complex(c_float_complex), intent(in) :: values(*)
       complex(c_float_complex), intent(inout) :: grid(*)
       integer(c_int) :: ier
     end function farfield_spreadf_spread_complex

     !> int farfield_spreadf_interp(plan, const grid[n1*n2*n3], values[M], grad[M*dim] or c_null_ptr).
     function farfield_spreadf_interp(plan, grid, values, grad) result(ier) bind(c, name="farfield_spreadf_interp")
       import :: c_int, c_float, c_ptr
       type(c_ptr), value :: plan
       real(c_float), intent(in) :: grid(*)
       real(c_float), intent(inout) :: values(*)
       type(c_ptr), value :: grad
       integer(c_int) :: ier
     end function farfield_spreadf_interp

     !> int farfield_spreadf_interp_complex(plan, const grid[n1*n2*n3], values[M]) (complex).
     function farfield_spreadf_interp_complex(plan, grid, values) result(ier) bind(c, name="farfield_spreadf_interp_complex")
       import :: c_int, c_float_complex, c_ptr
       type(c_ptr), value :: plan
       complex(c_float_complex), intent(in) :: grid(*)
       complex(c_float_complex), intent(inout) :: values(*)
       integer(c_int) :: ier
     end function farfield_spreadf_interp_complex

     !> int farfield_spreadf_setpts_device(plan, int64_t M, const float *x, *y, *z)
     !> As farfield_spreadf_setpts with CUDA device pointers (plan made with backend CUDA);
     !> unused axes may be c_null_ptr; the coordinates are copied on the device.
     function farfield_spreadf_setpts_device(plan, m, x, y, z) result(ier) &
          bind(c, name="farfield_spreadf_setpts_device")
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: m
       type(c_ptr), value :: x, y, z
       integer(c_int) :: ier
     end function farfield_spreadf_setpts_device

     !> int farfield_spreadf_spread_device(plan, values, grid): farfield_spreadf_spread on CUDA device
     !> pointers (values M, grid n1*n2*n3); overwrites grid; returns when done.
     function farfield_spreadf_spread_device(plan, values, grid) result(ier) &
          bind(c, name="farfield_spreadf_spread_device")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       type(c_ptr), value :: values, grid
       integer(c_int) :: ier
     end function farfield_spreadf_spread_device

     !> int farfield_spreadf_spread_complex_device(plan, values, grid): farfield_spreadf_spread_complex on CUDA device
     !> pointers (complex values M, grid n1*n2*n3); overwrites grid; returns when done.
     function farfield_spreadf_spread_complex_device(plan, values, grid) result(ier) &
          bind(c, name="farfield_spreadf_spread_complex_device")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       type(c_ptr), value :: values, grid
       integer(c_int) :: ier
     end function farfield_spreadf_spread_complex_device

     !> int farfield_spreadf_interp_device(plan, grid, values): farfield_spreadf_interp on CUDA device
     !> pointers (values M, grid n1*n2*n3); overwrites values; returns when done.
     function farfield_spreadf_interp_device(plan, grid, values) result(ier) &
          bind(c, name="farfield_spreadf_interp_device")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       type(c_ptr), value :: grid, values
       integer(c_int) :: ier
     end function farfield_spreadf_interp_device

     !> int farfield_spreadf_interp_complex_device(plan, grid, values): farfield_spreadf_interp_complex on CUDA device
     !> pointers (complex values M, grid n1*n2*n3); overwrites values; returns when done.
     function farfield_spreadf_interp_complex_device(plan, grid, values) result(ier) &
          bind(c, name="farfield_spreadf_interp_complex_device")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       type(c_ptr), value :: grid, values
       integer(c_int) :: ier
     end function farfield_spreadf_interp_complex_device

     !> int farfield_spreadf_get_width(plan, int *width): kernel width in grid points.
     function farfield_spreadf_get_width(plan, width) result(ier) bind(c, name="farfield_spreadf_get_width")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       integer(c_int), intent(out) :: width
       integer(c_int) :: ier
     end function farfield_spreadf_get_width

     !> int farfield_spreadf_destroy(plan); c_null_ptr is fine.
     function farfield_spreadf_destroy(plan) result(ier) bind(c, name="farfield_spreadf_destroy")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       integer(c_int) :: ier
     end function farfield_spreadf_destroy

     !> int farfield_ewald_default_opts(farfield_ewald_opts *opts, size_t struct_size);
     !> pass struct_size = c_sizeof(opts) (or use farfield_ewald_default_opts_f).
     function farfield_ewald_default_opts(opts, struct_size) result(ier) bind(c, name="farfield_ewald_default_opts")
       import :: c_int, c_size_t, farfield_ewald_opts
       type(farfield_ewald_opts), intent(inout) :: opts
       integer(c_size_t), value :: struct_size
       integer(c_int) :: ier
     end function farfield_ewald_default_opts

     !> int farfield_ewald_makeplan(int method, const double *box, int64_t n_max, double tol,
     !>     farfield_ewald_plan *plan, const farfield_ewald_opts *opts)
     !> box: 9 values, rows a, b, c (box(3*i+d+1) in C order, i.e. a Fortran box(3, 3) whose
     !> columns are the lattice vectors); opts: c_null_ptr for defaults, or c_loc(...).
     function farfield_ewald_makeplan(method, box, n_max, tol, plan, opts) result(ier) &
          bind(c, name="farfield_ewald_makeplan")
       import :: c_int, c_int64_t, c_double, c_ptr
       integer(c_int), value :: method
       real(c_double), intent(in) :: box(*)
       integer(c_int64_t), value :: n_max
       real(c_double), value :: tol
       type(c_ptr), intent(out) :: plan
       type(c_ptr), value :: opts
       integer(c_int) :: ier
     end function farfield_ewald_makeplan

     !> int farfield_ewald_makeplan_mpi(MPI_Fint comm, method, box, n_max, tol, plan, opts):
     !> the distributed SPME plan (collective); `comm` is the Fortran communicator itself
     !> (`integer :: comm` from `use mpi`, `comm%MPI_VAL` with `mpi_f08`); n_max is this rank's
     !> largest charge count. Returns FARFIELD_ERR_NOT_SUPPORTED when the library was built
     !> without MPI.
     function farfield_ewald_makeplan_mpi(comm, method, box, n_max, tol, plan, opts) result(ier) &
          bind(c, name="farfield_ewald_makeplan_mpi")
       import :: c_int, c_int64_t, c_double, c_ptr
       integer(c_int), value :: comm, method
       real(c_double), intent(in) :: box(*)
       integer(c_int64_t), value :: n_max
       real(c_double), value :: tol
       type(c_ptr), intent(out) :: plan
       type(c_ptr), value :: opts
       integer(c_int) :: ier
     end function farfield_ewald_makeplan_mpi

     !> int farfield_ewald_set_box(plan, const double *box): 9 values as in makeplan.
     function farfield_ewald_set_box(plan, box) result(ier) bind(c, name="farfield_ewald_set_box")
       import :: c_int, c_double, c_ptr
       type(c_ptr), value :: plan
       real(c_double), intent(in) :: box(*)
       integer(c_int) :: ier
     end function farfield_ewald_set_box

     !> int farfield_ewald_set_exclusions(plan, int64_t npairs, const int64_t *pairs):
     !> pairs(2, npairs) of 0-based indices; pairs may be c_null_ptr when npairs = 0.
     function farfield_ewald_set_exclusions(plan, npairs, pairs) result(ier) &
          bind(c, name="farfield_ewald_set_exclusions")
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: npairs
       type(c_ptr), value :: pairs
       integer(c_int) :: ier
     end function farfield_ewald_set_exclusions

     !> int farfield_ewald_set_exclusions_scaled(plan, int64_t npairs, const int64_t *pairs,
     !>     const double *scales): pair k interacts as scales(k) q_i q_j / r (0 = excluded,
     !> e.g. 0.5 or 1/1.2 for 1-4 pairs); pairs(2, npairs) 0-based, scales(npairs).
     function farfield_ewald_set_exclusions_scaled(plan, npairs, pairs, scales) result(ier) &
          bind(c, name="farfield_ewald_set_exclusions_scaled")
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: npairs
       type(c_ptr), value :: pairs
       type(c_ptr), value :: scales
       integer(c_int) :: ier
     end function farfield_ewald_set_exclusions_scaled

     !> int farfield_ewald_execute(plan, int64_t n, const double *xyz, const double *q,
     !>     double *phi, double *field, double *energy, double *virial)
     !> xyz(3, n), q(n); phi (n), field (3n), energy (1) and virial (9) may be c_null_ptr.
     function farfield_ewald_execute(plan, n, xyz, q, phi, field, energy, virial) result(ier) &
          bind(c, name="farfield_ewald_execute")
       import :: c_int, c_int64_t, c_double, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: n
       real(c_double), intent(in) :: xyz(*), q(*)
       type(c_ptr), value :: phi, field, energy, virial
       integer(c_int) :: ier
     end function farfield_ewald_execute

     !> int farfield_ewald_execute_ids(plan, int64_t n, const int64_t *ids, const double *xyz,
     !>     const double *q, double *phi, double *field, double *energy, double *virial)
     !> Distributed plans (farfield_ewald_makeplan_mpi): as farfield_ewald_execute with ids(n),
     !> the 0-based global id of each of this rank's charges (the pairs of
     !> farfield_ewald_set_exclusions on a distributed plan are pairs of these ids; a plan with
     !> exclusions needs them). Collective.
     function farfield_ewald_execute_ids(plan, n, ids, xyz, q, phi, field, energy, virial) result(ier) &
          bind(c, name="farfield_ewald_execute_ids")
       import :: c_int, c_int64_t, c_double, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: n
       integer(c_int64_t), intent(in) :: ids(*)
       real(c_double), intent(in) :: xyz(*), q(*)
       type(c_ptr), value :: phi, field, energy, virial
       integer(c_int) :: ier
     end function farfield_ewald_execute_ids

     !> int farfield_ewald_execute_device(plan, int64_t n, const double *xyz, const double *q,
     !>     double *phi, double *field, double *energy, double *virial)
     !> As farfield_ewald_execute with DEVICE arrays (c_devptr / CUDA Fortran device memory passed
     !> as c_ptr): xyz(3, n), q(n), phi(n), field(3, n) (the outputs may be c_null_ptr); energy (1)
     !> and virial (9) are host pointers (or c_null_ptr). Needs a plan with backend
     !> FARFIELD_BACKEND_CUDA. phi and field are complete in the plan stream's order on return
     !> (synchronise that stream before reading them on the host); energy and virial are final.
     function farfield_ewald_execute_device(plan, n, xyz, q, phi, field, energy, virial) result(ier) &
          bind(c, name="farfield_ewald_execute_device")
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: n
       type(c_ptr), value :: xyz, q, phi, field, energy, virial
       integer(c_int) :: ier
     end function farfield_ewald_execute_device

     !> int farfield_ewald_get_params(plan, farfield_ewald_params *out)
     function farfield_ewald_get_params(plan, out) result(ier) bind(c, name="farfield_ewald_get_params")
       import :: c_int, c_ptr, farfield_ewald_params
       type(c_ptr), value :: plan
       type(farfield_ewald_params), intent(inout) :: out  ! the caller sets out%struct_size
       integer(c_int) :: ier
     end function farfield_ewald_get_params

     !> int farfield_ewald_get_warnings(plan, double *tol_used, int *warnings): the tolerance in
     !> use and the warning bits (FARFIELD_WARN_TOL_CLAMPED, FARFIELD_EWALD_WARN_TOL_NOT_MET).
     function farfield_ewald_get_warnings(plan, tol_used, warnings) result(ier) &
          bind(c, name="farfield_ewald_get_warnings")
       import :: c_int, c_ptr, c_double
       type(c_ptr), value :: plan
       real(c_double), intent(out) :: tol_used
       integer(c_int), intent(out) :: warnings
       integer(c_int) :: ier
     end function farfield_ewald_get_warnings

     !> int farfield_ewald_destroy(plan); c_null_ptr is fine.
     function farfield_ewald_destroy(plan) result(ier) bind(c, name="farfield_ewald_destroy")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       integer(c_int) :: ier
     end function farfield_ewald_destroy

     !> int farfield_fmm_default_opts(farfield_fmm_opts *opts, size_t struct_size);
     !> pass struct_size = c_sizeof(opts) (or use farfield_fmm_default_opts_f).
     function farfield_fmm_default_opts(opts, struct_size) result(ier) bind(c, name="farfield_fmm_default_opts")
       import :: c_int, c_size_t, farfield_fmm_opts
       type(farfield_fmm_opts), intent(inout) :: opts
       integer(c_size_t), value :: struct_size
       integer(c_int) :: ier
     end function farfield_fmm_default_opts

     !> int farfield_fmm_makeplan(int boundary, const double *box, double tol,
     !>     farfield_fmm_plan *plan, const farfield_fmm_opts *opts)
     !> box: c_null_ptr for FARFIELD_FMM_OPEN, else c_loc(9 values): a diagonal box, cubic or
     !> rectangular with sides integer multiples of one length (see the C header); opts: c_null_ptr or c_loc.
     function farfield_fmm_makeplan(boundary, box, tol, plan, opts) result(ier) &
          bind(c, name="farfield_fmm_makeplan")
       import :: c_int, c_double, c_ptr
       integer(c_int), value :: boundary
       type(c_ptr), value :: box
       real(c_double), value :: tol
       type(c_ptr), intent(out) :: plan
       type(c_ptr), value :: opts
       integer(c_int) :: ier
     end function farfield_fmm_makeplan

     !> int farfield_fmm_execute(plan, int64_t n, const double *xyz, const double *q,
     !>     double *phi, double *field, double *energy)
     !> xyz(3, n), q(n); phi (n), field (3, n) and energy (1) may be c_null_ptr. Kernel 1/r, no
     !> 1/(4 pi eps0): phi_i = sum_j q_j/r_ij (charge/length), E = -grad phi (charge/length**2),
     !> energy = 1/2 sum q_i phi_i (charge**2/length).
     function farfield_fmm_execute(plan, n, xyz, q, phi, field, energy) result(ier) &
          bind(c, name="farfield_fmm_execute")
       import :: c_int, c_int64_t, c_double, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: n
       real(c_double), intent(in) :: xyz(*), q(*)
       type(c_ptr), value :: phi, field, energy
       integer(c_int) :: ier
     end function farfield_fmm_execute

     !> int farfield_fmm_set_exclusions(plan, int64_t npairs, const int64_t *pairs): the pairs
     !> (2, npairs), 0-based, are excluded (their nearest-image 1/r removed after the FMM sum).
     function farfield_fmm_set_exclusions(plan, npairs, pairs) result(ier) &
          bind(c, name="farfield_fmm_set_exclusions")
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: npairs
       type(c_ptr), value :: pairs
       integer(c_int) :: ier
     end function farfield_fmm_set_exclusions

     !> int farfield_fmm_set_exclusions_scaled(plan, int64_t npairs, const int64_t *pairs,
     !>     const double *scales): pair k interacts as scales(k) q_i q_j / r (0 = excluded).
     function farfield_fmm_set_exclusions_scaled(plan, npairs, pairs, scales) result(ier) &
          bind(c, name="farfield_fmm_set_exclusions_scaled")
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: npairs
       type(c_ptr), value :: pairs
       type(c_ptr), value :: scales
       integer(c_int) :: ier
     end function farfield_fmm_set_exclusions_scaled

     !> int farfield_fmm_execute_device(plan, int64_t n, const double *xyz, const double *q,
     !>     double *phi, double *field, double *energy)
     !> As farfield_fmm_execute with DEVICE arrays (c_devptr / CUDA Fortran device memory passed
     !> as c_ptr): xyz(3, n), q(n), phi(n), field(3, n) (the outputs may be c_null_ptr); energy is
     !> a host pointer (or c_null_ptr). Needs a plan with backend FARFIELD_FMM_BACKEND_CUDA.
     function farfield_fmm_execute_device(plan, n, xyz, q, phi, field, energy) result(ier) &
          bind(c, name="farfield_fmm_execute_device")
       import :: c_int, c_int64_t, c_ptr
       type(c_ptr), value :: plan
       integer(c_int64_t), value :: n
       type(c_ptr), value :: xyz, q, phi, field, energy
       integer(c_int) :: ier
     end function farfield_fmm_execute_device

     !> int farfield_fmm_get_params(plan, farfield_fmm_params *params)
     function farfield_fmm_get_params(plan, params) result(ier) bind(c, name="farfield_fmm_get_params")
       import :: c_int, c_ptr, farfield_fmm_params
       type(c_ptr), value :: plan
       type(farfield_fmm_params), intent(inout) :: params  ! the caller sets params%struct_size
       integer(c_int) :: ier
     end function farfield_fmm_get_params

     !> int farfield_fmm_destroy(plan); c_null_ptr is fine.
     function farfield_fmm_destroy(plan) result(ier) bind(c, name="farfield_fmm_destroy")
       import :: c_int, c_ptr
       type(c_ptr), value :: plan
       integer(c_int) :: ier
     end function farfield_fmm_destroy

     !> const char *farfield_status_string(int status) (static; see farfield_status_string_f)
     function farfield_status_string(status) result(p) bind(c, name="farfield_status_string")
       import :: c_int, c_ptr
       integer(c_int), value :: status
       type(c_ptr) :: p
     end function farfield_status_string

     !> const char *farfield_last_error_message(void) (see farfield_last_error_message_f)
     function farfield_last_error_message() result(p) bind(c, name="farfield_last_error_message")
       import :: c_ptr
       type(c_ptr) :: p
     end function farfield_last_error_message

     !> const char *farfield_version(void) (see farfield_version_f)
     function farfield_version() result(p) bind(c, name="farfield_version")
       import :: c_ptr
       type(c_ptr) :: p
     end function farfield_version

     ! C library strlen, for farfield_string.
     function c_strlen(s) result(n) bind(c, name="strlen")
       import :: c_ptr, c_size_t
       type(c_ptr), value :: s
       integer(c_size_t) :: n
     end function c_strlen
  end interface

contains

  !> Copies a NUL-terminated C string into a Fortran string ("" for a NULL pointer).
  function farfield_string(cptr) result(s)
    type(c_ptr), intent(in) :: cptr
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer :: n, i
    if (.not. c_associated(cptr)) then
       s = ""
       return
    end if
    n = int(c_strlen(cptr))
    allocate(character(len=n) :: s)
    if (n == 0) return
    call c_f_pointer(cptr, chars, [n])
    do i = 1, n
       s(i:i) = chars(i)
    end do
  end function farfield_string

  !> Description of a status code as a Fortran string.
  function farfield_status_string_f(status) result(s)
    integer, intent(in) :: status
    character(len=:), allocatable :: s
    s = farfield_string(farfield_status_string(int(status, c_int)))
  end function farfield_status_string_f

  !> Detail of the last failure on the calling thread ("" if none).
  function farfield_last_error_message_f() result(s)
    character(len=:), allocatable :: s
    s = farfield_string(farfield_last_error_message())
  end function farfield_last_error_message_f

  !> Library version "MAJOR.MINOR.PATCH".
  function farfield_version_f() result(s)
    character(len=:), allocatable :: s
    s = farfield_string(farfield_version())
  end function farfield_version_f

  !> Makes a double-precision plan; dim = size(n_modes); opts optional (defaults if absent).
  function farfield_nufft_makeplan_f(ty, n_modes, iflag, ntrans, tol, plan, opts) result(ier)
    integer, intent(in) :: ty, iflag, ntrans
    integer(c_int64_t), intent(in) :: n_modes(:)
    real(c_double), intent(in) :: tol
    type(c_ptr), intent(out) :: plan
    type(farfield_nufft_opts), intent(in), optional, target :: opts
    integer(c_int) :: ier
    integer(c_int64_t) :: nm(max(size(n_modes), 1))
    type(c_ptr) :: popts
    popts = c_null_ptr
    if (present(opts)) popts = c_loc(opts)
    nm = 0
    nm(1:size(n_modes)) = n_modes
    ier = farfield_nufft_makeplan(int(ty, c_int), int(size(n_modes), c_int), nm, int(iflag, c_int), &
         int(ntrans, c_int), tol, plan, popts)
  end function farfield_nufft_makeplan_f

  !> Single-precision farfield_nufft_makeplan_f.
  function farfield_nufftf_makeplan_f(ty, n_modes, iflag, ntrans, tol, plan, opts) result(ier)
    integer, intent(in) :: ty, iflag, ntrans
    integer(c_int64_t), intent(in) :: n_modes(:)
    real(c_float), intent(in) :: tol
    type(c_ptr), intent(out) :: plan
    type(farfield_nufft_opts), intent(in), optional, target :: opts
    integer(c_int) :: ier
    integer(c_int64_t) :: nm(max(size(n_modes), 1))
    type(c_ptr) :: popts
    popts = c_null_ptr
    if (present(opts)) popts = c_loc(opts)
    nm = 0
    nm(1:size(n_modes)) = n_modes
    ier = farfield_nufftf_makeplan(int(ty, c_int), int(size(n_modes), c_int), nm, int(iflag, c_int), &
         int(ntrans, c_int), tol, plan, popts)
  end function farfield_nufftf_makeplan_f

  !> Sets the points of a double-precision plan: M = size(x); y (dim >= 2) and z (dim 3) must
  !> have the same size (FARFIELD_ERR_NPOINTS otherwise). The coordinates are copied.
  function farfield_nufft_setpts_f(plan, x, y, z) result(ier)
    type(c_ptr), intent(in) :: plan
    real(c_double), intent(in), contiguous, target :: x(:)
    real(c_double), intent(in), contiguous, target, optional :: y(:), z(:)
    integer(c_int) :: ier
    real(c_double), target :: dummy(1)
    type(c_ptr) :: py, pz
    py = c_null_ptr
    pz = c_null_ptr
    dummy = 0
    if (present(y)) then
       if (size(y) /= size(x)) then
          ier = FARFIELD_ERR_NPOINTS
          return
       end if
       if (size(y) > 0) py = c_loc(y)
    end if
    if (present(z)) then
       if (size(z) /= size(x)) then
          ier = FARFIELD_ERR_NPOINTS
          return
       end if
       if (size(z) > 0) pz = c_loc(z)
    end if
    if (size(x) > 0) then
       ier = farfield_nufft_setpts(plan, size(x, kind=c_int64_t), x, py, pz, 0_c_int64_t, &
            c_null_ptr, c_null_ptr, c_null_ptr)
    else
       ier = farfield_nufft_setpts(plan, 0_c_int64_t, dummy, py, pz, 0_c_int64_t, &
            c_null_ptr, c_null_ptr, c_null_ptr)
    end if
  end function farfield_nufft_setpts_f

  !> farfield_nufft_setpts_device with optional y, z: m coordinates per axis at the CUDA device
  !> addresses x (and y, z for dim 2, 3; absent = c_null_ptr), e.g. from CUDA Fortran's
  !> c_devloc or cudaMalloc. Returns the status of farfield_nufft_setpts_device.
  function farfield_nufft_setpts_device_f(plan, m, x, y, z) result(ier)
    type(c_ptr), intent(in) :: plan
    integer(c_int64_t), intent(in) :: m
    type(c_ptr), intent(in) :: x
    type(c_ptr), intent(in), optional :: y, z
    integer(c_int) :: ier
    type(c_ptr) :: py, pz
    py = c_null_ptr
    pz = c_null_ptr
    if (present(y)) py = y
    if (present(z)) pz = z
    ier = farfield_nufft_setpts_device(plan, m, x, py, pz)
  end function farfield_nufft_setpts_device_f

  !> Single-precision farfield_nufft_setpts_device_f (device arrays of floats).
  function farfield_nufftf_setpts_device_f(plan, m, x, y, z) result(ier)
    type(c_ptr), intent(in) :: plan
    integer(c_int64_t), intent(in) :: m
    type(c_ptr), intent(in) :: x
    type(c_ptr), intent(in), optional :: y, z
    integer(c_int) :: ier
    type(c_ptr) :: py, pz
    py = c_null_ptr
    pz = c_null_ptr
    if (present(y)) py = y
    if (present(z)) pz = z
    ier = farfield_nufftf_setpts_device(plan, m, x, py, pz)
  end function farfield_nufftf_setpts_device_f

  !> Single-precision farfield_nufft_setpts_f.
  function farfield_nufftf_setpts_f(plan, x, y, z) result(ier)
    type(c_ptr), intent(in) :: plan
    real(c_float), intent(in), contiguous, target :: x(:)
    real(c_float), intent(in), contiguous, target, optional :: y(:), z(:)
    integer(c_int) :: ier
    real(c_float), target :: dummy(1)
    type(c_ptr) :: py, pz
    py = c_null_ptr
    pz = c_null_ptr
    dummy = 0
    if (present(y)) then
       if (size(y) /= size(x)) then
          ier = FARFIELD_ERR_NPOINTS
          return
       end if
       if (size(y) > 0) py = c_loc(y)
    end if
    if (present(z)) then
       if (size(z) /= size(x)) then
          ier = FARFIELD_ERR_NPOINTS
          return
       end if
       if (size(z) > 0) pz = c_loc(z)
    end if
    if (size(x) > 0) then
       ier = farfield_nufftf_setpts(plan, size(x, kind=c_int64_t), x, py, pz, 0_c_int64_t, &
            c_null_ptr, c_null_ptr, c_null_ptr)
    else
       ier = farfield_nufftf_setpts(plan, 0_c_int64_t, dummy, py, pz, 0_c_int64_t, &
            c_null_ptr, c_null_ptr, c_null_ptr)
    end if
  end function farfield_nufftf_setpts_f

  !> Destroys a double-precision plan and sets it to c_null_ptr (a null plan is fine).
  function farfield_nufft_destroy_f(plan) result(ier)
    type(c_ptr), intent(inout) :: plan
    integer(c_int) :: ier
    ier = farfield_nufft_destroy(plan)
    plan = c_null_ptr
  end function farfield_nufft_destroy_f

  !> Destroys a single-precision plan and sets it to c_null_ptr.
  function farfield_nufftf_destroy_f(plan) result(ier)
    type(c_ptr), intent(inout) :: plan
    integer(c_int) :: ier
    ier = farfield_nufftf_destroy(plan)
    plan = c_null_ptr
  end function farfield_nufftf_destroy_f

  !> Makes a Poisson plan: dim = size(n) (2 or 3), h(:) the spacings (same size as n);
  !> opts optional (defaults if absent).
  function farfield_poisson_makeplan_f(method, n, h, plan, opts) result(ier)
    integer, intent(in) :: method
    integer(c_int64_t), intent(in) :: n(:)
    real(c_double), intent(in) :: h(:)
    type(c_ptr), intent(out) :: plan
    type(farfield_poisson_opts), intent(in), optional, target :: opts
    integer(c_int) :: ier
    integer(c_int64_t) :: nn(max(size(n), 1))
    real(c_double) :: hh(max(size(n), 1))
    type(c_ptr) :: popts
    plan = c_null_ptr
    if (size(h) /= size(n)) then
       ier = FARFIELD_ERR_INVALID_ARG
       return
    end if
    popts = c_null_ptr
    if (present(opts)) popts = c_loc(opts)
    nn = 0
    hh = 0
    nn(1:size(n)) = n
    hh(1:size(h)) = h
    ier = farfield_poisson_makeplan(int(method, c_int), int(size(n), c_int), nn, hh, plan, popts)
  end function farfield_poisson_makeplan_f

  !> Solves lap(phi) = -rho (Green's function 1/(4 pi r); 2D -ln(r)/(2 pi)) for one
  !> right-hand side: rho and phi of prod(n) values, x fastest (any rank, e.g.
  !> rho(nx, ny, nz)); optional efield of dim*prod(n) values, component last (e.g.
  !> e(nx, ny, nz, 3)), and energy.
  function farfield_poisson_execute_f(plan, rho, phi, efield, energy) result(ier)
    type(c_ptr), intent(in) :: plan
    real(c_double), intent(in) :: rho(*)
    real(c_double), intent(inout) :: phi(*)
    real(c_double), intent(inout), optional, target :: efield(*)
    real(c_double), intent(inout), optional, target :: energy
    integer(c_int) :: ier
    type(c_ptr) :: pe, pu
    pe = c_null_ptr
    pu = c_null_ptr
    if (present(efield)) pe = c_loc(efield(1))
    if (present(energy)) pu = c_loc(energy)
    ier = farfield_poisson_execute(plan, rho, phi, pe, pu)
  end function farfield_poisson_execute_f

  !> Destroys a Poisson plan and sets it to c_null_ptr.
  function farfield_poisson_destroy_f(plan) result(ier)
    type(c_ptr), intent(inout) :: plan
    integer(c_int) :: ier
    ier = farfield_poisson_destroy(plan)
    plan = c_null_ptr
  end function farfield_poisson_destroy_f

  !> Makes a double-precision spreading plan: dim = size(n) (1..3); box_lo, box_len and
  !> periodic (logical) of the same size; kernel FARFIELD_SPREAD_KERNEL_*; opts optional.
  function farfield_spread_makeplan_f(n, box_lo, box_len, periodic, kernel, width_or_tol, plan, opts) &
       result(ier)
    integer(c_int64_t), intent(in) :: n(:)
    real(c_double), intent(in) :: box_lo(:), box_len(:)
    logical, intent(in) :: periodic(:)
    integer, intent(in) :: kernel
    real(c_double), intent(in) :: width_or_tol
    type(c_ptr), intent(out) :: plan
    type(farfield_spread_opts), intent(in), optional, target :: opts
    integer(c_int) :: ier
    integer(c_int64_t) :: nn(3)
    real(c_double) :: lo(3), ln(3)
    integer(c_int) :: per(3)
    type(c_ptr) :: popts
    integer :: d
    plan = c_null_ptr
    if (size(n) < 1 .or. size(n) > 3 .or. size(box_lo) /= size(n) .or. size(box_len) /= size(n) &
         .or. size(periodic) /= size(n)) then
       ier = FARFIELD_ERR_INVALID_ARG
       return
    end if
    nn = 1
    lo = 0
    ln = 1
    per = 1
    do d = 1, size(n)
       nn(d) = n(d)
       lo(d) = box_lo(d)
       ln(d) = box_len(d)
       per(d) = merge(1_c_int, 0_c_int, periodic(d))
    end do
    popts = c_null_ptr
    if (present(opts)) popts = c_loc(opts)
    ier = farfield_spread_makeplan(int(size(n), c_int), nn, lo, ln, per, int(kernel, c_int), &
         width_or_tol, plan, popts)
  end function farfield_spread_makeplan_f

  !> Sets the points: x(:) and, for dim >= 2 / 3, y(:) and z(:) of the same size
  !> (FARFIELD_ERR_NPOINTS otherwise).
  function farfield_spread_setpts_f(plan, x, y, z) result(ier)
    type(c_ptr), intent(in) :: plan
    real(c_double), intent(in), contiguous, target :: x(:)
    real(c_double), intent(in), contiguous, target, optional :: y(:), z(:)
    integer(c_int) :: ier
    type(c_ptr) :: py, pz
    py = c_null_ptr
    pz = c_null_ptr
    if (present(y)) then
       if (size(y) /= size(x)) then
          ier = FARFIELD_ERR_NPOINTS
          return
       end if
       if (size(y) > 0) py = c_loc(y)
    end if
    if (present(z)) then
       if (size(z) /= size(x)) then
          ier = FARFIELD_ERR_NPOINTS
          return
       end if
       if (size(z) > 0) pz = c_loc(z)
    end if
    ier = farfield_spread_setpts(plan, size(x, kind=c_int64_t), x, py, pz)
  end function farfield_spread_setpts_f

  !> Destroys a double-precision spreading plan and sets it to c_null_ptr.
  function farfield_spread_destroy_f(plan) result(ier)
    type(c_ptr), intent(inout) :: plan
    integer(c_int) :: ier
    ier = farfield_spread_destroy(plan)
    plan = c_null_ptr
  end function farfield_spread_destroy_f

  !> Makes an Ewald plan: box(3, 3) with the lattice vectors as columns (C rows a, b, c);
  !> opts optional (defaults if absent).
  function farfield_ewald_makeplan_f(method, box, n_max, tol, plan, opts) result(ier)
    integer, intent(in) :: method
    real(c_double), intent(in) :: box(3, 3)
    integer(c_int64_t), intent(in) :: n_max
    real(c_double), intent(in) :: tol
    type(c_ptr), intent(out) :: plan
    type(farfield_ewald_opts), intent(in), optional, target :: opts
    integer(c_int) :: ier
    type(c_ptr) :: popts
    popts = c_null_ptr
    if (present(opts)) popts = c_loc(opts)
    ier = farfield_ewald_makeplan(int(method, c_int), box, n_max, tol, plan, popts)
  end function farfield_ewald_makeplan_f

  !> Evaluates n = size(q) charges at xyz(3, n); optional outputs phi(n), field(3, n),
  !> energy and virial(3, 3). FARFIELD_ERR_NPOINTS if the sizes disagree.
  function farfield_ewald_execute_f(plan, xyz, q, phi, field, energy, virial) result(ier)
    type(c_ptr), intent(in) :: plan
    real(c_double), intent(in), contiguous :: xyz(:, :), q(:)
    real(c_double), intent(inout), contiguous, optional, target :: phi(:), field(:, :)
    real(c_double), intent(inout), optional, target :: energy
    real(c_double), intent(inout), optional, target :: virial(3, 3)
    integer(c_int) :: ier
    type(c_ptr) :: pphi, pf, pu, pw
    real(c_double) :: dummy(1)
    ier = FARFIELD_ERR_NPOINTS
    if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= size(q)) return
    pphi = c_null_ptr
    pf = c_null_ptr
    pu = c_null_ptr
    pw = c_null_ptr
    if (present(phi)) then
       if (size(phi) /= size(q)) return
       if (size(phi) > 0) pphi = c_loc(phi)
    end if
    if (present(field)) then
       if (size(field, 1) /= 3 .or. size(field, 2) /= size(q)) return
       if (size(field) > 0) pf = c_loc(field)
    end if
    if (present(energy)) pu = c_loc(energy)
    if (present(virial)) pw = c_loc(virial)
    dummy = 0
    if (size(q) > 0) then
       ier = farfield_ewald_execute(plan, size(q, kind=c_int64_t), xyz, q, pphi, pf, pu, pw)
    else
       ier = farfield_ewald_execute(plan, 0_c_int64_t, dummy, dummy, pphi, pf, pu, pw)
    end if
  end function farfield_ewald_execute_f

  !> Destroys an Ewald plan and sets it to c_null_ptr.
  function farfield_ewald_destroy_f(plan) result(ier)
    type(c_ptr), intent(inout) :: plan
    integer(c_int) :: ier
    ier = farfield_ewald_destroy(plan)
    plan = c_null_ptr
  end function farfield_ewald_destroy_f

  !> Makes an FMM plan; box(3, 3) (lattice vectors as columns) is required for
  !> FARFIELD_FMM_PERIODIC and ignored for FARFIELD_FMM_OPEN; opts optional.
  function farfield_fmm_makeplan_f(boundary, tol, plan, box, opts) result(ier)
    integer, intent(in) :: boundary
    real(c_double), intent(in) :: tol
    type(c_ptr), intent(out) :: plan
    real(c_double), intent(in), optional, target :: box(3, 3)
    type(farfield_fmm_opts), intent(in), optional, target :: opts
    integer(c_int) :: ier
    type(c_ptr) :: pbox, popts
    pbox = c_null_ptr
    popts = c_null_ptr
    if (present(box)) pbox = c_loc(box)
    if (present(opts)) popts = c_loc(opts)
    ier = farfield_fmm_makeplan(int(boundary, c_int), pbox, tol, plan, popts)
  end function farfield_fmm_makeplan_f

  !> Evaluates n = size(q) charges at xyz(3, n); optional outputs phi(n), field(3, n) and
  !> energy. Kernel 1/r, no 1/(4 pi eps0) (phi_i = sum_j q_j/r_ij). FARFIELD_ERR_NPOINTS if
  !> the sizes disagree.
  function farfield_fmm_execute_f(plan, xyz, q, phi, field, energy) result(ier)
    type(c_ptr), intent(in) :: plan
    real(c_double), intent(in), contiguous :: xyz(:, :), q(:)
    real(c_double), intent(inout), contiguous, optional, target :: phi(:), field(:, :)
    real(c_double), intent(inout), optional, target :: energy
    integer(c_int) :: ier
    type(c_ptr) :: pphi, pf, pu
    real(c_double) :: dummy(1)
    ier = FARFIELD_ERR_NPOINTS
    if (size(xyz, 1) /= 3 .or. size(xyz, 2) /= size(q)) return
    pphi = c_null_ptr
    pf = c_null_ptr
    pu = c_null_ptr
    if (present(phi)) then
       if (size(phi) /= size(q)) return
       if (size(phi) > 0) pphi = c_loc(phi)
    end if
    if (present(field)) then
       if (size(field, 1) /= 3 .or. size(field, 2) /= size(q)) return
       if (size(field) > 0) pf = c_loc(field)
    end if
    if (present(energy)) pu = c_loc(energy)
    dummy = 0
    if (size(q) > 0) then
       ier = farfield_fmm_execute(plan, size(q, kind=c_int64_t), xyz, q, pphi, pf, pu)
    else
       ier = farfield_fmm_execute(plan, 0_c_int64_t, dummy, dummy, pphi, pf, pu)
    end if
  end function farfield_fmm_execute_f

  !> Destroys an FMM plan and sets it to c_null_ptr.
  function farfield_fmm_destroy_f(plan) result(ier)
    type(c_ptr), intent(inout) :: plan
    integer(c_int) :: ier
    ier = farfield_fmm_destroy(plan)
    plan = c_null_ptr
  end function farfield_fmm_destroy_f

  ! ---- versioned structs: the size argument filled in -------------------------------------

  !> Default NUFFT options (both precisions) into opts, struct_size = c_sizeof(opts).
  function farfield_nufft_default_opts_f(opts) result(ier)
    type(farfield_nufft_opts), intent(inout) :: opts
    integer(c_int) :: ier
    ier = farfield_nufft_default_opts(opts, c_sizeof(opts))
  end function farfield_nufft_default_opts_f

  !> Default Poisson options into opts, struct_size = c_sizeof(opts).
  function farfield_poisson_default_opts_f(opts) result(ier)
    type(farfield_poisson_opts), intent(inout) :: opts
    integer(c_int) :: ier
    ier = farfield_poisson_default_opts(opts, c_sizeof(opts))
  end function farfield_poisson_default_opts_f

  !> Default Ewald options into opts, struct_size = c_sizeof(opts).
  function farfield_ewald_default_opts_f(opts) result(ier)
    type(farfield_ewald_opts), intent(inout) :: opts
    integer(c_int) :: ier
    ier = farfield_ewald_default_opts(opts, c_sizeof(opts))
  end function farfield_ewald_default_opts_f

  !> Default FMM options into opts, struct_size = c_sizeof(opts).
  function farfield_fmm_default_opts_f(opts) result(ier)
    type(farfield_fmm_opts), intent(inout) :: opts
    integer(c_int) :: ier
    ier = farfield_fmm_default_opts(opts, c_sizeof(opts))
  end function farfield_fmm_default_opts_f

  !> What a double-precision NUFFT plan chose (sets info%struct_size = c_sizeof(info) first).
  function farfield_nufft_get_info_f(plan, info) result(ier)
    type(c_ptr), intent(in) :: plan
    type(farfield_nufft_info), intent(inout) :: info
    integer(c_int) :: ier
    info%struct_size = c_sizeof(info)
    ier = farfield_nufft_get_info(plan, info)
  end function farfield_nufft_get_info_f

  !> What a single-precision NUFFT plan chose (sets info%struct_size = c_sizeof(info) first).
  function farfield_nufftf_get_info_f(plan, info) result(ier)
    type(c_ptr), intent(in) :: plan
    type(farfield_nufft_info), intent(inout) :: info
    integer(c_int) :: ier
    info%struct_size = c_sizeof(info)
    ier = farfield_nufftf_get_info(plan, info)
  end function farfield_nufftf_get_info_f

  !> Parameters and last timings of an Ewald plan (sets out%struct_size = c_sizeof(out) first).
  function farfield_ewald_get_params_f(plan, out) result(ier)
    type(c_ptr), intent(in) :: plan
    type(farfield_ewald_params), intent(inout) :: out
    integer(c_int) :: ier
    out%struct_size = c_sizeof(out)
    ier = farfield_ewald_get_params(plan, out)
  end function farfield_ewald_get_params_f

  !> Parameters and last statistics of an FMM plan (sets params%struct_size first).
  function farfield_fmm_get_params_f(plan, params) result(ier)
    type(c_ptr), intent(in) :: plan
    type(farfield_fmm_params), intent(inout) :: params
    integer(c_int) :: ier
    params%struct_size = c_sizeof(params)
    ier = farfield_fmm_get_params(plan, params)
  end function farfield_fmm_get_params_f

end module farfield
