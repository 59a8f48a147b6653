//! GPU backend (CUDA): kernels, host orchestration and device discovery.
//!
//! * `kernels/*.cu`: CUDA C++ sources, embedded with `include_str!` ([`KERNEL_SOURCES`]),
//!   compiled at run time by NVRTC for the device's compute capability. They also compile
//!   unchanged as C++ under the CUDA-on-CPU emulator (`gpu-emu/`, docs/design.md §5.3), where every
//!   kernel is checked against the CPU implementation;
//! * [`device`]: the device trait the host code is written against (CUDA or the emulator);
//! * [`spread`]: GPU spreading/interpolation (GM, GM-sort, SM, CSR single mesh, group mesh)
//!   and the method selection rule;
//! * [`cubin_cache`]: NVRTC's output kept on disk between processes;
//! * [`cuda`]: the CUDA device through cudarc: the per-process device registry (primary
//!   context, NVRTC-compiled CUBIN modules, function handles, limits, cuFFT plan pool) and
//!   device handles, each on one stream (the default stream or a caller's), with buffers;
//! * [`nufft`]: GPU NUFFT types 1 and 2 (spread/interp, device FFT, deconvolution on the
//!   device), host or device pointers, built from the shared parameter layer
//!   [`crate::nufft::params`]; its CUDA executor is chosen by `crate::plans::NufftPlan::new`;
//! * [`type3`]: GPU NUFFT type 3 (pre-phase, spreading on the type-3 fine grid, the GPU type 2,
//!   deconvolution), its host set-up shared with the CPU type 3 ([`crate::nufft::type3`]);
//! * [`ewald`]: periodic electrostatics on the device: the k-space part of SPME and spectral
//!   Ewald ([`ewald::kspace`]), the real-space pass by device cell lists ([`ewald::real_space`])
//!   and the plan that combines the parts ([`ewald::GpuEwaldPlan`]), with the parameters of the
//!   CPU path [`crate::ewald`];
//! * [`fmm`]: the CUDA FMM (tree, P2M/M2M/M2L/L2L/L2P/P2P, periodic lattice operator) on the
//!   conventions of the CPU FMM [`crate::fmm`];
//! * [`types`]: by-value kernel argument structs, and [`types::ff_kernel`], the one function
//!   that turns a [`crate::kernel::Kernel`] into the device kernel descriptor and its table;
//! * [`runtime`]: driver/device discovery that never panics without a driver, and the
//!   backend choice (AUTO → CPU when no device, CUDA → `FARFIELD_ERR_NO_DEVICE`);
//! * [`check`]: compile every kernel with NVRTC (and assemble with ptxas) without a GPU, for
//!   `farfield gpu check`;
//! * [`occupancy`]: registers and shared memory per kernel (`ptxas -v`), the default plans'
//!   launch shapes and the resulting blocks per multiprocessor, for `farfield gpu check
//!   --resources`.
//!
//! Semantics shared with the CPU ([`crate::spread`]): spreading **overwrites** the output grid
//! and interpolation the output values (as cuFINUFFT). A NUFFT execute with `ntrans > 1` runs
//! in batches of vectors (batched kernels and cuFFT plans) and, failing midway, leaves its
//! output untouched (host arrays are written after the last batch; device arrays receive the
//! results from scratch by one device copy at the end unless a single launch writes them all).
//! Points may be set from host or device arrays; either way folding, checking and sorting run
//! on the device (docs/design.md §5.2).

pub mod check;
pub mod cubin_cache;
pub mod cuda;
pub mod device;
pub mod ewald;
pub mod fmm;
pub mod nufft;
pub mod occupancy;
pub mod pairs;
pub mod runtime;
pub mod spread;
pub mod type3;
pub mod types;

/// The CUDA sources shipped with the library: (file name, text).
pub const KERNEL_SOURCES: &[(&str, &str)] = &[
    ("spread.cu", include_str!("kernels/spread.cu")),
    ("nufft.cu", include_str!("kernels/nufft.cu")),
    ("fmm_tree.cu", include_str!("kernels/fmm_tree.cu")),
    ("fmm_ops.cu", include_str!("kernels/fmm_ops.cu")),
    ("fmm_m2l.cu", include_str!("kernels/fmm_m2l.cu")),
    ("ewald_real.cu", include_str!("kernels/ewald_real.cu")),
    ("ewald_kspace.cu", include_str!("kernels/ewald_kspace.cu")),
];
