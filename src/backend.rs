//! The compute backend of a plan, for every method: the user's choice ([`BackendChoice`]), the
//! backend it resolves to once at makeplan ([`Backend`], by `crate::gpu::runtime::resolve`,
//! called only from the plan fronts of `crate::plans` and the C API), and the two CUDA options
//! that every plan front shares: the caller's stream ([`GpuStream`]) and the device spreading
//! method ([`GpuMethod`]).
//!
//! These are plain values, below every numerical module (docs/design.md §1): a numerical
//! module may carry them in its options without importing the GPU layer. Their C values are
//! `FARFIELD_BACKEND_*` and `FARFIELD_GPU_METHOD_*` (one set for every method; the FMM's
//! `FARFIELD_FMM_BACKEND_*` are aliases of the same values).

use crate::error::{Error, Result};

/// The user's backend choice (C values in parentheses); resolved once at makeplan into a
/// [`Backend`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum BackendChoice {
    /// AUTO (0, default): the CPU for every method today — AUTO will pick a CUDA device for a
    /// method once its GPU path has been timed against the CPU on hardware.
    #[default]
    Auto,
    /// CPU (1).
    Cpu,
    /// CUDA device 0 (2); [`Error::NoDevice`], naming what was looked for, when no CUDA
    /// driver/device is found.
    Cuda,
}

impl BackendChoice {
    /// From the C value `opts.backend` (0 AUTO, 1 CPU, 2 CUDA). Error: [`Error::InvalidArg`]
    /// naming the value.
    pub fn from_c(v: i32) -> Result<BackendChoice> {
        match v {
            0 => Ok(BackendChoice::Auto),
            1 => Ok(BackendChoice::Cpu),
            2 => Ok(BackendChoice::Cuda),
            b => Err(Error::InvalidArg(format!("opts.backend = {b} is not 0 (AUTO), 1 (CPU) or 2 (CUDA)"))),
        }
    }

    /// The C value (0, 1, 2).
    pub fn to_c(self) -> i32 {
        match self {
            BackendChoice::Auto => 0,
            BackendChoice::Cpu => 1,
            BackendChoice::Cuda => 2,
        }
    }
}

/// The backend a plan runs on, chosen once at makeplan from a [`BackendChoice`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Backend {
    /// CPU: rayon threads and FFTW.
    #[default]
    Cpu,
    /// CUDA device 0 (the primary context): the kernels of `src/gpu/kernels/` and cuFFT.
    Cuda,
}

/// A caller's CUDA stream (`CUstream` / `cudaStream_t`, non-NULL) for a CUDA plan: borrowed,
/// never destroyed by the library.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GpuStream(u64);

impl GpuStream {
    /// Wraps the stream at address `raw`; `None` for 0 (NULL = the default stream).
    ///
    /// # Safety
    /// `raw` must be a stream of CUDA device 0's primary context (the runtime API's context,
    /// which CuPy, PyTorch and cuFINUFFT use) that stays valid until every plan made with it is
    /// dropped (plan buffers are freed in stream order on it).
    pub unsafe fn from_raw(raw: u64) -> Option<GpuStream> {
        (raw != 0).then_some(GpuStream(raw))
    }

    /// The stream's address.
    pub fn as_raw(self) -> u64 {
        self.0
    }
}

/// Device spreading/interpolation method (C value `FARFIELD_GPU_METHOD_*` in parentheses;
/// 0 = automatic). The methods are described, with their sources, in `crate::gpu::spread`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GpuMethod {
    /// Particle-based with global atomics (1).
    Gm,
    /// GM after a device bin sort (2).
    GmSort,
    /// Shared-memory subproblem tiles (3).
    Sm,
    /// CSR single mesh with compute units and warp shuffles (4).
    Csr,
    /// Group mesh, 64 grid points per group (5).
    Group,
}

impl GpuMethod {
    /// All methods.
    pub fn all() -> [GpuMethod; 5] {
        [GpuMethod::Gm, GpuMethod::GmSort, GpuMethod::Sm, GpuMethod::Csr, GpuMethod::Group]
    }

    /// From the C value (1–5); 0 and others give `None`.
    pub fn from_code(c: i32) -> Option<GpuMethod> {
        match c {
            1 => Some(GpuMethod::Gm),
            2 => Some(GpuMethod::GmSort),
            3 => Some(GpuMethod::Sm),
            4 => Some(GpuMethod::Csr),
            5 => Some(GpuMethod::Group),
            _ => None,
        }
    }

    /// Short name (`gm`, `gm-sort`, `sm`, `csr`, `group`).
    pub fn name(self) -> &'static str {
        match self {
            GpuMethod::Gm => "gm",
            GpuMethod::GmSort => "gm-sort",
            GpuMethod::Sm => "sm",
            GpuMethod::Csr => "csr",
            GpuMethod::Group => "group",
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn c_values_round_trip() {
        for c in [BackendChoice::Auto, BackendChoice::Cpu, BackendChoice::Cuda] {
            assert_eq!(BackendChoice::from_c(c.to_c()).unwrap(), c);
        }
        assert!(matches!(BackendChoice::from_c(3), Err(Error::InvalidArg(m)) if m.contains("opts.backend = 3")));
        assert!(matches!(BackendChoice::from_c(-1), Err(Error::InvalidArg(_))));
        for (k, m) in GpuMethod::all().into_iter().enumerate() {
            assert_eq!(GpuMethod::from_code(k as i32 + 1), Some(m));
        }
        assert_eq!(GpuMethod::from_code(0), None);
    }
}
