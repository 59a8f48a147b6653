//! Non-uniform FFT of types 1, 2 and 3 in 1, 2 and 3 dimensions (Barnett, Magland, af
//! Klinteberg, SIAM J. Sci. Comput. 41 (2019) C479, §2–3; Greengard–Lee 2004 for the Gaussian
//! kernel).
//!
//! * Type 1 (non-uniform → uniform): `f_k = Σ_{j<M} c_j e^{± i k·x_j}` for the modes `k`.
//! * Type 2 (uniform → non-uniform): `c_j = Σ_k f_k e^{± i k·x_j}`.
//! * Type 3 (non-uniform → non-uniform, [`type3`]): `f_k = Σ_{j<M} c_j e^{± i s_k·x_j}` for
//!   arbitrary real frequencies `s_k`, `k < N` ([`Type3Plan`]; the rest of this page is about
//!   types 1 and 2).
//!
//! The sign is `+` for `iflag ≥ 0`. Modes: `N1×N2×N3` array, x fastest, each axis ordered
//! `−N/2 … (N−1)/2` (CMCL, default) or in FFT order (`modeord = 1`). Points: separate
//! coordinate arrays in radians, any finite value (2π-periodic), reduced mod 2π in double
//! precision at `setpts` ([`crate::spread::reduce_2pi`], exact to ~4e-16 rad for
//! |x| ≤ 1e16: the accuracy contract holds in that range, for the coordinate values as given).
//! With `ntrans > 1` the vectors are stacked: `c[t*M + j]`, `f[t*N + k]`.
//!
//! Limits ([`params`]): fine grid ≤ 2³¹ − 1 points per axis and 2⁴⁰ in all, modes and
//! `ntrans·N` ≤ 2⁴⁰ ([`crate::Error::Modes`]), M ≤ 2³² − 1 and `ntrans·M` ≤ 2⁴⁰
//! ([`crate::Error::NPoints`]); every user-sized buffer is allocated fallibly
//! ([`crate::Error::Alloc`]).
//!
//! Steps: spread with kernel ψ onto the upsampled grid `nf = σN` ([`crate::spread`]), FFT
//! pruned to the modes ([`fine_fft`]), deconvolve by `1/ψ̂(k)` ([`deconv`]) — and the reverse for type 2.

//!
//! Layout: [`params`] chooses σ, kernel, fine grid and deconvolution factors for every backend
//! (a pure function); [`exec`] is the executor interface; [`cpu`] the CPU executor of types 1
//! and 2, [`type3`] that of type 3. The public plan, which picks the executor of the backend,
//! is the front [`crate::plans::NufftPlan`].

pub mod cpu;
pub mod deconv;
pub mod exec;
pub mod fine_fft;
pub mod options;
pub mod params;
pub mod type3;

pub use exec::{NufftExec, Points, Timings};
pub use options::{BackendChoice, GpuStream, ModeOrder, NufftInfo, NufftOpts};
pub use params::{Backend, NufftParams, Precision};
pub use params::{check_modes, fine_grid, FFTW_FLAGS_ACCEPTED, MAX_FINE_AXIS};
pub use type3::{Type3Plan, Type3Timings};

#[cfg(test)]
mod tests;
#[cfg(test)]
mod type3_tests;
