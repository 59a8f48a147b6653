//! `libfinufft.so` on farfield: FINUFFT 2.5's C interface (CPU library) implemented by
//! farfield's CPU NUFFT ([`farfield::NufftPlan`]), so that a program built against
//! FINUFFT's own `finufft.h` runs unchanged by relinking, or by putting this library where
//! `libfinufft.so` was (same soname, `libfinufft.so`). No header ships with it: callers keep
//! FINUFFT's.
//!
//! Exported (double precision `finufft…`, single precision `finufftf…`):
//! `finufft_default_opts`, `finufft_makeplan`, `finufft_setpts`, `finufft_execute`,
//! `finufft_execute_adjoint`, `finufft_destroy` ([`guru`]), and the 36 simple interfaces
//! `finufft{1,2,3}d{1,2,3}[many]` ([`simple`]).
//!
//! Conventions (FINUFFT's, checked against direct sums by the tests): modes `f[k1 + N1*(k2 +
//! N2*k3)]` (x fastest), CMCL order `−N/2 … (N−1)/2` or FFT order with `modeord = 1`; sign
//! `+i` for `iflag ≥ 0`; vectors stacked (`c[t*M + j]`, `f[t*N + k]`); type 3's frequencies
//! at setpts; tolerances below what the precision reaches (≤ 0 included) are raised and
//! reported as [`ier::FINUFFT_WARN_EPS_TOO_SMALL`] (1), with the result computed.
//!
//! # Options (`finufft_opts`, [`opts`])
//!
//! | field | here |
//! |---|---|
//! | `modeord` | honoured (1 = FFT order, other values CMCL, as FINUFFT) |
//! | `spreadinterponly` | types 1, 2: spreading / interpolation only on the grid of the given mode counts ([`gridding`]); type 3: ignored (as FINUFFT) |
//! | `debug` | honoured as farfield's debug output (parameters, timings; not FINUFFT's text) |
//! | `spread_debug` | ignored |
//! | `showwarn` | honoured: warnings and error messages go to stderr unless 0 |
//! | `nthreads` | honoured (≤ 0 = `OMP_NUM_THREADS` when set, else all cores; at most 1024) |
//! | `fftw` | honoured for FFTW_ESTIMATE/MEASURE/PATIENT/EXHAUSTIVE (± DESTROY_INPUT); others → ESTIMATE |
//! | `spread_sort` | ignored (farfield bin-sorts 2D and 3D points; 1D points stay in the caller's order for type 2, and for types 1 and 3 when every thread can have its own fine grid, else are sorted) |
//! | `spread_kerevalmeth`, `spread_kerpad` | ignored (farfield's own kernel evaluation) |
//! | `upsampfac` | honoured: 0 = automatic, (1, 4] as given (1.25, 2.0 and any other); ≤ 1 → 7, > 4 → 8 |
//! | `spread_thread` | validated (0–2, else 13), then ignored |
//! | `maxbatchsize` | ignored (farfield batches `ntrans` its own way) |
//! | `spread_nthr_atomic` | ignored (no atomics in farfield's CPU spreader) |
//! | `spread_max_sp_size` | honoured (> 0: points per spreading subproblem) |
//! | `spread_kerformula` | validated (0–9, else 24), then ignored (farfield's kernel is the exponential of semicircle) |
//! | `fftw_lock_fun`, `fftw_unlock_fun`, `fftw_lock_data` | checked for pairing (one set → 22), never called: farfield plans FFTW behind its own process-wide lock |
//!
//! # Differences from FINUFFT 2.5 (status codes, [`ier`])
//! * Negative mode counts → 14 (FINUFFT 2.5 returned 0); non-finite coordinates, NULL
//!   arrays, overlapping `c`/`f`, execute before setpts → 21 (FINUFFT does not check);
//!   a NULL plan handle → 16 (destroy: 1, as FINUFFT); sizes beyond farfield's limits
//!   (fine grid; M and nk ≤ 2³² − 1, checked before any array is touched) → 2 or 20.
//! * The results agree with FINUFFT's to the requested tolerance, not bit for bit (a
//!   different kernel choice and σ).

pub mod gridding;
pub mod guru;
pub mod ier;
pub mod opts;
pub mod plan;
pub mod simple;

pub use guru::{finufft_plan, finufftf_plan};
pub use opts::finufft_opts;
