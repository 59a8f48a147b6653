//! NUFFT options (C: `farfield_nufft_opts`) and plan information (C: `farfield_nufft_info`).
//!
//! Both are `#[repr(C)]` plain old data. Fields are only ever appended; the C and Fortran
//! tests assert their sizes and offsets.

/// Options of a NUFFT plan (C: `farfield_nufft_opts`). Obtain the defaults with
/// `farfield_nufft_default_opts` (Rust: `NufftOpts::default()`), change fields, pass to makeplan.
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct NufftOpts {
    /// Mode ordering: 0 = CMCL (`k = −N/2 … (N−1)/2`, default), 1 = FFT order
    /// (`k = 0 … ⌈N/2⌉−1, −⌊N/2⌋ … −1`).
    pub modeord: i32,
    /// 0 = silent (default); 1 = print parameters and timings to stderr.
    pub debug: i32,
    /// Threads for spreading and FFTW: 0 = all cores (default), 1 = caller's thread only.
    pub nthreads: i32,
    /// Spreading kernel: 0 = exponential of semicircle (default), 1 = Gaussian (FGG).
    pub kernel: i32,
    /// Upsampling factor σ: 0 = automatic (as FINUFFT: 1.25 for tol ≥ 1e-9 on large grids,
    /// else 2.0; always 2.0 for the Gaussian kernel), or any value in (1, 4]; 2.0 and 1.25 are
    /// the tuned ones. Below 2 the widest kernel may not reach tol: the tolerance is then
    /// clamped to what it reaches (ES: `exp(−16π√(1 − 1/σ))`, 1.7e-10 at σ = 1.25; Gaussian:
    /// `exp(−16π(1 − 1/(2σ − 1)))`, 5e-8 at σ = 1.25), reported as `tol_used` with
    /// `FARFIELD_WARN_TOL_CLAMPED` by `get_info`. Other values → `FARFIELD_ERR_INVALID_ARG`.
    pub upsampfac: f64,
    /// FFTW planner flags (as FINUFFT's `opts.fftw`): 64 = `FFTW_ESTIMATE` (default),
    /// 0 = `FFTW_MEASURE`, 32 = `FFTW_PATIENT`, 8 = `FFTW_EXHAUSTIVE`, each optionally OR-ed with
    /// 1 = `FFTW_DESTROY_INPUT`; any other value (negative, other bits) →
    /// `FARFIELD_ERR_INVALID_ARG` naming `opts.fftw`.
    pub fftw: i32,
    /// Largest number of points in one spreading subproblem: 0 = automatic (10 000).
    pub spread_max_subprob_size: i32,
    /// Compute backend: 0 = AUTO (default; the CPU for now: AUTO will pick a CUDA device once
    /// the GPU NUFFT has been validated on hardware), 1 = CPU, 2 = CUDA (device 0; returns
    /// `FARFIELD_ERR_NO_DEVICE`, with what was looked for in the message, when no CUDA
    /// driver/device is found).
    pub backend: i32,
    /// 0 (default): `setpts` copies the coordinates (in bin-sorted order), so the caller may
    /// free or change its arrays afterwards. 1: `setpts` keeps only the sort permutation and a
    /// reference to the caller's arrays, which must then stay valid and unchanged until the next
    /// `setpts` or `destroy` (FINUFFT's semantics; saves 8·dim bytes per point in double
    /// precision). Other values → `FARFIELD_ERR_INVALID_ARG`.
    pub points_by_reference: i32,
    /// CUDA backend only: the spreading/interpolation method, `FARFIELD_GPU_METHOD_AUTO` (0,
    /// default: chosen at `setpts` from ASM = M·w^d/N_fine and `gpu_spread_reuse_hint`, see
    /// the README's selection rule and `gpu::spread::select_method`), `_GM` (1, atomics),
    /// `_GM_SORT` (2), `_SM` (3, shared-memory subproblems), `_CSR` (4, single-mesh sparse
    /// matrix), `_GROUP` (5, group mesh). Ignored on the CPU.
    pub gpu_method: i32,
    /// CUDA backend only: how many executes the caller expects per `setpts` (0 = unknown,
    /// treated as 1); from 20 on, the mesh-based methods (built once in `setpts`) are preferred,
    /// as seed 002 concludes. Ignored on the CPU.
    pub gpu_spread_reuse_hint: i32,
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
            modeord: 0,
            debug: 0,
            nthreads: 0,
            kernel: FARFIELD_KERNEL_ES,
            upsampfac: 0.0,
            fftw: crate::fft::FFTW_ESTIMATE as i32,
            spread_max_subprob_size: 0,
            backend: FARFIELD_BACKEND_AUTO,
            points_by_reference: 0,
            gpu_method: FARFIELD_GPU_METHOD_AUTO,
            gpu_spread_reuse_hint: 0,
        }
    }
}

impl NufftOpts {
    /// Validates every field (the checks of makeplan for all transform types) and returns the
    /// kernel family. Errors: [`crate::Error::InvalidArg`] naming the field and its valid values.
    pub fn check(&self) -> crate::Result<crate::kernel::KernelKind> {
        use crate::error::Error;
        use crate::kernel::KernelKind;
        let kind = match self.kernel {
            FARFIELD_KERNEL_ES => KernelKind::Es,
            FARFIELD_KERNEL_GAUSSIAN => KernelKind::Gaussian,
            k => return Err(Error::InvalidArg(format!("opts.kernel = {k} is not 0 (ES) or 1 (Gaussian)"))),
        };
        if self.modeord != 0 && self.modeord != 1 {
            return Err(Error::InvalidArg(format!("opts.modeord = {} is not 0 or 1", self.modeord)));
        }
        if self.nthreads < 0 {
            return Err(Error::InvalidArg(format!("opts.nthreads = {} is negative", self.nthreads)));
        }
        if self.spread_max_subprob_size < 0 {
            return Err(Error::InvalidArg(format!("opts.spread_max_subprob_size = {} is negative", self.spread_max_subprob_size)));
        }
        if !(0..=5).contains(&self.gpu_method) {
            return Err(Error::InvalidArg(format!("opts.gpu_method = {} is not 0 (auto) … 5", self.gpu_method)));
        }
        if self.gpu_spread_reuse_hint < 0 {
            return Err(Error::InvalidArg(format!("opts.gpu_spread_reuse_hint = {} is negative", self.gpu_spread_reuse_hint)));
        }
        if !(self.upsampfac == 0.0 || (self.upsampfac > 1.0 && self.upsampfac <= 4.0)) {
            return Err(Error::InvalidArg(format!("opts.upsampfac = {:e} is not 0 (auto) or in (1, 4]", self.upsampfac)));
        }
        if self.fftw < 0 || self.fftw as u32 & !super::plan::FFTW_FLAGS_ACCEPTED != 0 {
            return Err(Error::InvalidArg(format!(
                "opts.fftw = {} is not a combination of FFTW_ESTIMATE (64), FFTW_MEASURE (0), FFTW_PATIENT (32), \
                 FFTW_EXHAUSTIVE (8) and FFTW_DESTROY_INPUT (1)", self.fftw)));
        }
        if self.points_by_reference != 0 && self.points_by_reference != 1 {
            return Err(Error::InvalidArg(format!("opts.points_by_reference = {} is not 0 (copy) or 1 (by reference)",
                                                 self.points_by_reference)));
        }
        Ok(kind)
    }
}

/// What a plan chose (C: `farfield_nufft_info`, filled by `farfield_nufft_get_info`).
#[repr(C)]
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct NufftInfo {
    /// Fine (upsampled) grid sizes, x first; 1 for unused axes.
    pub nf: [i64; 3],
    /// Kernel width w in grid points.
    pub kernel_width: i32,
    /// Threads used.
    pub nthreads: i32,
    /// Upsampling factor σ used.
    pub upsampfac: f64,
    /// Kernel shape parameter: β for ES, τ (grid units²) for the Gaussian.
    pub kernel_param: f64,
    /// Tolerance used after clamping (the requested one unless `FARFIELD_WARN_TOL_CLAMPED`).
    pub tol_used: f64,
    /// Bit set of `FARFIELD_WARN_*`.
    pub warnings: i32,
    /// Backend used (`FARFIELD_BACKEND_CPU` or `FARFIELD_BACKEND_CUDA`).
    pub backend: i32,
}
