//! NUFFT.
