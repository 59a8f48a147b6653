//! # farfield
//!
//! Fast long-range solvers for simulation codes, behind a stable C ABI (`include/farfield.h`),
//! a Fortran module and a CMake package:
//!
//! * [`spread`]: particle↔mesh spreading and interpolation (exponential-of-semicircle and
//!   Gaussian/FGG kernels), parallel by bin-sorted subproblems;
//! * [`nufft`]: non-uniform FFT types 1, 2 and 3 in 1D/2D/3D, `f32` and `f64`;
//! * [`ewald`]: periodic electrostatics of point charges (spectral Ewald, smooth PME, classic
//!   Ewald sum) in orthorhombic and triclinic cells: potentials, fields, energy, virial;
//! * [`poisson`]: free-space Poisson solvers on uniform 2D/3D grids (Hockney–Eastwood,
//!   Vico–Greengard, Vico–Greengard with DCT);
//! * [`fmm`]: CPU fast multipole method for the Coulomb kernel `1/r` (open or periodic cubic
//!   boundaries; potentials, fields, energy; order and depth from a tolerance);
//! * [`gpu`]: the CUDA backend (kernels checked without a GPU by NVRTC and a CUDA-on-CPU
//!   emulator; GPU spreading/interpolation; device discovery that never panics);
//! * [`fft`]: the one FFTW wrapper;
//! * [`backend`]: the backend choice, the CUDA stream and the device spreading method, shared by
//!   every plan;
//! * [`plans`]: the plan fronts [`NufftPlan`], [`SpreadPlan`], [`EwaldPlan`], [`FmmPlan`]: each validates its
//!   options, resolves the backend once and owns the CPU or the CUDA executor;
//! * `mpi` (cargo feature `mpi`): communicators and FFTW-MPI for the distributed solvers
//!   (`poisson::dist`);
//! * [`capi`]: every `extern "C"` function (plan → setpts → execute → destroy).
//!
//! Conventions (docs/design.md §2): grids and Fourier modes are stored x fastest,
//! `f[i + n1*(j + n2*k)]`; modes are ordered `−N/2 … (N−1)/2` (CMCL) unless `modeord = 1`
//! (FFT order); NUFFT coordinates are separate arrays x, y, z, interpreted 2π-periodically.
#![warn(missing_docs)]

pub mod backend;
pub mod capi;
pub mod error;
pub mod ewald;
pub mod fft;
pub mod fmm;
pub mod gpu;
pub mod kernel;
pub(crate) mod memo;
#[cfg(feature = "mpi")]
pub mod mpi;
pub mod nufft;
pub(crate) mod pairs;
pub mod plans;
pub mod poisson;
pub mod real;
pub(crate) mod scale;
pub(crate) mod quad;
pub(crate) mod simd;
pub mod spread;
pub mod threads;

pub use error::{Error, Result};
pub use plans::{EwaldPlan, FmmPlan, NufftPlan, SpreadPlan};
pub use real::Real;

/// Library version, `MAJOR.MINOR.PATCH` (equals `FARFIELD_VERSION_*` in the header).
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
