//! NUFFT options and plan information, typed Rust structs (the C structs `farfield_nufft_opts`
//! and `farfield_nufft_info` live in `capi/` and are converted there), and the C values of
//! their choices (`FARFIELD_BACKEND_*`, `FARFIELD_KERNEL_*`, `FARFIELD_GPU_METHOD_*`,
//! `FARFIELD_WARN_*`).

pub use crate::backend::{BackendChoice, GpuMethod, GpuStream};
use crate::backend::Backend;
pub use crate::kernel::KernelKind;

/// Mode order of the user's mode arrays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ModeOrder {
    /// CMCL: `k = −N/2 … (N−1)/2` (default; C value 0).
    #[default]
    Cmcl,
    /// FFT order: `k = 0 … ⌈N/2⌉−1, −⌊N/2⌋ … −1` (C value 1).
    Fft,
}

/// Options of a NUFFT plan (Rust side; the C struct `farfield_nufft_opts` is converted to this
/// in `capi/`). `NufftOpts::default()` gives the defaults.
#[derive(Debug, Clone, PartialEq)]
pub struct NufftOpts {
    /// Mode ordering (default CMCL).
    pub modeord: ModeOrder,
    /// 0 = silent (default); ≥ 1 = print parameters and timings to stderr (on a CUDA plan also
    /// the device time of each execute's phases, waiting for the device after each batch).
    pub debug: u32,
    /// Threads for spreading and FFTW: 0 = all cores (default), 1 = caller's thread only.
    pub nthreads: usize,
    /// Spreading kernel family: exponential of semicircle (default) or Gaussian (FGG).
    pub kernel: KernelKind,
    /// Upsampling factor σ: `None` = automatic (ES kernel: σ in [1.2, 2.5] and the width w
    /// chosen together by the cost model of docs/design.md §9 over the tabulated ES kernels,
    /// for the number of modes at makeplan and again for the number of points at each
    /// `setpts` of at least 2²⁰ points on the CPU; always 2.0 for the Gaussian kernel), or a value in (1, 4], used as
    /// given. When the widest kernel cannot reach tol at σ the tolerance is clamped to what it
    /// reaches ([`crate::kernel::Kernel::achievable_tol`]), reported as `tol_used` with
    /// `FARFIELD_WARN_TOL_CLAMPED` in [`NufftInfo`]. Other values → [`crate::Error::InvalidArg`].
    pub upsampfac: Option<f64>,
    /// FFTW planner flags (as FINUFFT's `opts.fftw`): 64 = `FFTW_ESTIMATE` (default),
    /// 0 = `FFTW_MEASURE`, 32 = `FFTW_PATIENT`, 8 = `FFTW_EXHAUSTIVE`, each optionally OR-ed with
    /// 1 = `FFTW_DESTROY_INPUT`; other bits → [`crate::Error::InvalidArg`] naming `opts.fftw`.
    pub fftw: u32,
    /// Largest number of points in one spreading subproblem: 0 = automatic (10 000).
    pub spread_max_subprob_size: usize,
    /// Compute backend (default AUTO = CPU for now).
    pub backend: BackendChoice,
    /// false (default): `setpts` copies the coordinates (in bin-sorted order), so the caller may
    /// free or change its arrays afterwards. true: `setpts` keeps only the sort permutation and
    /// a reference to the caller's arrays, which must then stay valid and unchanged until the
    /// next `setpts` or drop (FINUFFT's semantics; saves 8·dim bytes per point in f64; Rust:
    /// [`super::NufftPlan::setpts_by_reference`]). The CUDA backend copies the points to the
    /// device either way.
    pub points_by_reference: bool,
    /// CUDA backend only: the spreading/interpolation method; `None` (default) = chosen at
    /// `setpts` from ASM = M·w^d/N_fine and `gpu_spread_reuse_hint` (the README's selection
    /// rule, `crate::gpu::spread::select_method`). Ignored on the CPU.
    pub gpu_method: Option<GpuMethod>,
    /// CUDA backend only: how many executes the caller expects per `setpts` (0 = unknown,
    /// treated as 1); from 20 on, the mesh-based methods (built once in `setpts`) are preferred.
    /// Ignored on the CPU.
    pub gpu_spread_reuse_hint: usize,
    /// CUDA backend only: the caller's CUDA stream (C: `opts.gpu_stream`). `None` (default) =
    /// the device context's default stream (cuFINUFFT's default). With a stream, every launch,
    /// copy and cuFFT execution of the plan runs on it; `execute` with host arrays synchronises
    /// it before returning, `execute_device` does not (the caller orders its work on the
    /// stream). A plan on the CPU with a stream → [`crate::Error::InvalidArg`] naming
    /// `opts.gpu_stream` ([`NufftOpts::check_cpu`]).
    pub gpu_stream: Option<GpuStream>,
}

/// Backend value `AUTO`.
pub const FARFIELD_BACKEND_AUTO: i32 = 0;
/// Backend value `CPU`.
pub const FARFIELD_BACKEND_CPU: i32 = 1;
/// Backend value `CUDA`.
pub const FARFIELD_BACKEND_CUDA: i32 = 2;
/// `gpu_method`: chosen at `setpts` (default).
pub const FARFIELD_GPU_METHOD_AUTO: i32 = 0;
/// `gpu_method`: particle-based with global atomics (GM).
pub const FARFIELD_GPU_METHOD_GM: i32 = 1;
/// `gpu_method`: GM after a device bin sort of the points (GM-sort).
pub const FARFIELD_GPU_METHOD_GM_SORT: i32 = 2;
/// `gpu_method`: bin subproblems spread into shared-memory tiles (SM).
pub const FARFIELD_GPU_METHOD_SM: i32 = 3;
/// `gpu_method`: CSR single-mesh sparse matrix with warp-shuffle reductions.
pub const FARFIELD_GPU_METHOD_CSR: i32 = 4;
/// `gpu_method`: group mesh (64 grid points per group).
pub const FARFIELD_GPU_METHOD_GROUP: i32 = 5;
/// Kernel value: exponential of semicircle.
pub const FARFIELD_KERNEL_ES: i32 = 0;
/// Kernel value: Gaussian with fast Gaussian gridding.
pub const FARFIELD_KERNEL_GAUSSIAN: i32 = 1;
/// Warning bit: the requested tolerance was below what the precision (1e-15 in double, 1e-7
/// in single precision) or the widest kernel at the plan's upsampling factor σ can give, and
/// was clamped; `tol_used` holds the value used.
pub const FARFIELD_WARN_TOL_CLAMPED: i32 = 1;

impl Default for NufftOpts {
    fn default() -> Self {
        NufftOpts {
            modeord: ModeOrder::Cmcl,
            debug: 0,
            nthreads: 0,
            kernel: KernelKind::Es,
            upsampfac: None,
            fftw: crate::fft::FFTW_ESTIMATE,
            spread_max_subprob_size: 0,
            backend: BackendChoice::Auto,
            points_by_reference: false,
            gpu_method: None,
            gpu_spread_reuse_hint: 0,
            gpu_stream: None,
        }
    }
}

impl NufftOpts {
    /// The check of a plan that runs on the CPU: the CUDA-only `gpu_stream` must be `None`.
    /// Errors: [`crate::Error::InvalidArg`] naming `opts.gpu_stream` and the backend.
    pub fn check_cpu(&self) -> crate::Result<()> {
        match self.gpu_stream {
            None => Ok(()),
            Some(s) => Err(crate::Error::InvalidArg(format!(
                "opts.gpu_stream = {:#x} is a CUDA stream, but the plan runs on the CPU (opts.backend = {:?}); \
                 set opts.backend = CUDA or gpu_stream = NULL", s.as_raw(), self.backend))),
        }
    }
}

/// What a plan chose (Rust side; C: `farfield_nufft_info`, filled by `farfield_nufft_get_info`).
/// With an automatic σ the CPU plan re-chooses σ, the kernel and the fine grid for the number
/// of points at each `setpts` of at least 2²⁰ points ([`super::NufftParams::with_points`],
/// [`super::cpu::RECHOOSE_MIN_POINTS`]): query after `setpts` for the choice that executes.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NufftInfo {
    /// Fine (upsampled) grid sizes, x first; 1 for unused axes.
    pub nf: [usize; 3],
    /// Kernel width w in grid points.
    pub kernel_width: usize,
    /// Threads used (1 on CUDA: the host side is single-threaded).
    pub nthreads: usize,
    /// Upsampling factor σ used.
    pub upsampfac: f64,
    /// Kernel shape parameter: β for ES, τ (grid units²) for the Gaussian.
    pub kernel_param: f64,
    /// Tolerance used after clamping (the requested one unless `FARFIELD_WARN_TOL_CLAMPED`).
    pub tol_used: f64,
    /// Bit set of `FARFIELD_WARN_*`.
    pub warnings: i32,
    /// Backend used.
    pub backend: Backend,
}

impl NufftInfo {
    /// The backend-independent part from the parameter layer; `nthreads` from the executor.
    pub fn from_params(p: &super::params::NufftParams, nthreads: usize) -> NufftInfo {
        NufftInfo {
            nf: p.nf,
            kernel_width: p.width(),
            nthreads,
            upsampfac: p.sigma,
            kernel_param: p.kernel.shape_param(),
            tol_used: p.tol_used,
            warnings: p.warnings,
            backend: p.backend,
        }
    }
}
