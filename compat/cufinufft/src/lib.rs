//! `libcufinufft.so` on farfield: cuFINUFFT 2.5's C interface implemented by farfield's CUDA
//! NUFFT ([`farfield::NufftPlan`] with backend CUDA, `setpts_device`,
//! `execute_device`), so that a program built against cuFINUFFT's own `cufinufft.h` runs
//! unchanged by relinking, or by putting this library where `libcufinufft.so` was (same
//! soname, `libcufinufft.so`). No header ships with it: callers keep cuFINUFFT's.
//!
//! Exported (double precision `cufinufft_…`, single precision `cufinufftf_…`):
//! `cufinufft_default_opts`, `cufinufft[f]_makeplan`, `cufinufft[f]_setpts`,
//! `cufinufft[f]_execute`, `cufinufft[f]_destroy` ([`api`]).
//!
//! Conventions (cuFINUFFT's, checked against direct sums by the emulator tests): types 1–3,
//! 1D–3D; every array is a device array; modes `fk[k1 + N1*(k2 + N2*k3)]` (x fastest), CMCL order `−N/2 …
//! (N−1)/2` or FFT order with `modeord = 1`; sign `+i` for `iflag ≥ 0`; vectors stacked
//! (`c[t*M + j]`, `fk[t*N + k]`); type 3's frequencies `s, t, u` at setpts; work queued on
//! the plan's stream, the caller synchronises.
//!
//! # Options (`cufinufft_opts`, [`opts`])
//!
//! | field | here |
//! |---|---|
//! | `upsampfac` | honoured: 0 = automatic, 1.25 and 2.0 as given; other values as cuFINUFFT: → 8 with `gpu_kerevalmeth = 1` (the default), else (1, 4] as given, ≤ 1 → 7, > 4 or NaN → 8 |
//! | `gpu_method` | mapped: 0 = farfield's automatic choice; 1 = points driven: GM (`gpu_sort = 0`) or GM-sort; 2 = SM (shared-memory subproblems); 3 (output driven, which farfield lacks) = automatic; others → 19 `INSUFFICIENT_SHMEM` (cuFINUFFT 2.5.1's code for an unknown method) |
//! | `gpu_sort` | honoured with `gpu_method = 1` (0 = GM, else GM-sort); otherwise ignored |
//! | `gpu_binsizex/y/z` | ignored (farfield sizes its bins from the device's shared-memory limit) |
//! | `gpu_obinsizex/y/z`, `gpu_np` | ignored (output-driven method) |
//! | `gpu_maxsubprobsize` | ignored (farfield's device subproblem size) |
//! | `gpu_kerevalmeth` | read to validate `upsampfac` as cuFINUFFT; farfield evaluates its kernel its own way |
//! | `gpu_spreadinterponly` | not supported: ≠ 0 → 21 `INVALID_ARGUMENT` |
//! | `gpu_maxbatchsize` | ignored (farfield's automatic batch: `min(ntransf, 8)` within 1 GiB of fine grids) |
//! | `gpu_device_id` | 0 only (farfield plans on device 0; use `CUDA_VISIBLE_DEVICES`); others → 15 `CUDA_FAILURE` |
//! | `gpu_stream` | honoured: every launch, copy and cuFFT call of the plan on that stream (NULL = default stream) |
//! | `modeord` | honoured (1 = FFT order, other values CMCL) |
//! | `debug` | honoured: farfield's plan parameters and device opening stages on stderr; failing calls print their message (silent otherwise) |
//!
//! # Status codes ([`ier`], shared with the FINUFFT drop-in)
//! * dim → 12, type → 10, a mode count ≤ 0 or > 2³¹ − 1 → 14, `ntransf < 1` → 9, NULL plan
//!   pointer / `n_modes` / device array → 21, NULL plan handle → 16 (destroy too), M < 0 → 20,
//!   M > 2³¹ − 1 → 14, execute before setpts or with `c == fk` → 21, non-finite coordinates
//!   → 21, tolerance below the precision's limit → 1 (warning; planned).
//! * No CUDA driver or device, and device failures (launch, copy, NVRTC, cuFFT) → 15
//!   `FINUFFT_ERR_CUDA_FAILURE`; a device allocation failure → 11.
//! * Type 3: N < 0 → 20. farfield's CUDA type 3 sizes its grids from the points and
//!   frequencies on the host, so its `setpts` downloads them (M + N values per axis, on the
//!   plan's stream); execute runs on device arrays like types 1 and 2.
//! * The results agree with cuFINUFFT's to the requested tolerance, not bit for bit.

pub mod api;
pub mod ier;
pub mod opts;
pub mod plan;

pub use api::{cufinufft_plan, cufinufftf_plan};
pub use opts::cufinufft_opts;
