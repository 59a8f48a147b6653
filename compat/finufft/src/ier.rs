//! FINUFFT 2.5's status codes, the mapping of farfield's errors onto them and the panic
//! boundary: shared with the cuFINUFFT drop-in, defined in `farfield-compat-common`
//! ([`farfield_compat_common::ier`]).

pub use farfield_compat_common::ier::*;
