//! Code shared by farfield's two drop-in libraries, `libfinufft.so` (`compat/finufft`) and
//! `libcufinufft.so` (`compat/cufinufft`): FINUFFT 2.5's status codes (`finufft_errors.h`,
//! which cuFINUFFT shares), the mapping of [`farfield::Error`] onto them and the panic
//! boundary of every exported function ([`ier`]).

pub mod ier;
