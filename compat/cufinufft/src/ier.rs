//! cuFINUFFT 2.5's status codes (FINUFFT's `finufft_errors.h`, shared by both libraries), the
//! mapping of farfield's errors onto them and the panic boundary: defined once for both
//! drop-ins in `farfield-compat-common` ([`farfield_compat_common::ier`]). Device failures of
//! a CUDA plan map to [`FINUFFT_ERR_CUDA_FAILURE`] ([`crate::plan::failure`]).

pub use farfield_compat_common::ier::*;
