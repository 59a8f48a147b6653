//! The plan fronts: for each method the one public plan type that validates its options,
//! resolves the backend once at makeplan (`crate::gpu::runtime::resolve`) and owns the
//! executor of that backend. This layer sits above the numerical modules and the GPU layer
//! and imports both; nothing below it imports it (docs/design.md §1).
//!
//! * [`NufftPlan`] (NUFFT types 1, 2, 3: CPU or CUDA);
//! * [`SpreadPlan`] (spreading and interpolation in physical coordinates: CPU or CUDA);
//! * [`EwaldPlan`] (periodic electrostatics: CPU, CUDA or, with feature `mpi`, distributed SPME);
//! * [`FmmPlan`] (the Coulomb FMM: CPU or CUDA).
//!
//! The free-space Poisson solvers run on the CPU (and over MPI) only; their plan is
//! [`crate::poisson::PoissonPlan`].

pub mod ewald;
pub mod fmm;
pub mod nufft;
pub mod spread;

pub use ewald::EwaldPlan;
pub use fmm::FmmPlan;
pub use nufft::NufftPlan;
pub use spread::SpreadPlan;
