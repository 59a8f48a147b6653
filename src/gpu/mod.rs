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
pub(crate) mod phases;
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

/// Kernel widths `w` (grid points per axis of a point's window) whose GM and SM spreading and
/// interpolation kernels, and the mesh methods' point weights, exist with the width as a
/// compile-time constant (`kernels/spread.cu`, `FF_DEFINE_WIDTHS`): the loop over a window's x
/// axis unrolls and that axis's kernel values and grid indices live in registers instead of
/// local memory. Other widths (wide
/// Gaussian or B-spline kernels) run the kernels that read the width at run time.
pub const SPECIALISED_WIDTHS: std::ops::RangeInclusive<usize> = 2..=16;

/// The kernels of one width-specialised module of `kernels/spread.cu`.
const WIDTH_KERNELS: [&str; 5] = ["gm_spread", "gm_interp", "sm_spread", "sm_interp", "pt_weights"];

/// One width-specialised module of `kernels/spread.cu`: the GM and SM spreading and
/// interpolation kernels and the point weights of CSR and GROUP, of one precision, dimension
/// and width, compiled by NVRTC on first use
/// (a plan needs one such module; compiling all 90 up front took 4–5 minutes of NVRTC) and kept
/// in the same caches as the library's other modules ([`cuda::compiled_module`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct WidthModule {
    /// Precision suffix, `f32` or `f64` ([`crate::real::Real::NAME`]).
    pub precision: &'static str,
    /// Dimension, 1–3.
    pub dim: usize,
    /// Kernel width, in [`SPECIALISED_WIDTHS`].
    pub w: usize,
}

impl WidthModule {
    /// The module of precision `precision` (`f32`/`f64`), dimension `dim` and width `w`; `None`
    /// when no such module exists (`w` outside [`SPECIALISED_WIDTHS`], `dim` outside 1–3).
    pub fn new(precision: &'static str, dim: usize, w: usize) -> Option<WidthModule> {
        (matches!(precision, "f32" | "f64") && (1..=3).contains(&dim) && SPECIALISED_WIDTHS.contains(&w))
            .then_some(WidthModule { precision, dim, w })
    }

    /// Every module: 2 precisions × 3 dimensions × the widths of [`SPECIALISED_WIDTHS`].
    pub fn all() -> Vec<WidthModule> {
        let mut v = Vec::new();
        for precision in ["f32", "f64"] {
            for dim in 1..=3 {
                v.extend(SPECIALISED_WIDTHS.filter_map(|w| WidthModule::new(precision, dim, w)));
            }
        }
        v
    }

    /// The entry point of kernel `base` (`gm_spread`, `gm_interp`, `sm_spread`, `sm_interp`,
    /// `pt_weights`) in this module: `ff_<base>_<dim>d_<precision>_w<w>`.
    pub fn kernel(&self, base: &str) -> String {
        format!("ff_{base}_{}d_{}_w{}", self.dim, self.precision, self.w)
    }

    /// Every entry point of this module.
    pub fn kernels(&self) -> Vec<String> {
        WIDTH_KERNELS.iter().map(|b| self.kernel(b)).collect()
    }

    /// The module holding entry point `name`, when `name` is a width-specialised kernel.
    pub fn of_kernel(name: &str) -> Option<WidthModule> {
        let (head, w) = name.rsplit_once("_w")?;
        let w: usize = w.parse().ok()?;
        let (head, precision) = head.rsplit_once('_')?;
        let precision = ["f32", "f64"].into_iter().find(|p| *p == precision)?;
        let (base, dim) = head.strip_prefix("ff_")?.rsplit_once('_')?;
        let dim: usize = dim.strip_suffix('d')?.parse().ok()?;
        let m = WidthModule::new(precision, dim, w)?;
        (WIDTH_KERNELS.contains(&base) && m.kernel(base) == name).then_some(m)
    }

    /// The module's name in caches and reports: `spread.cu[<dim>d_<precision>_w<w>]`.
    pub fn name(&self) -> String {
        format!("spread.cu[{}d_{}_w{}]", self.dim, self.precision, self.w)
    }

    /// The module's source: `kernels/spread.cu` with the defines that select this module's
    /// kernels in front.
    pub fn source(&self) -> String {
        let ty = if self.precision == "f32" { "float" } else { "double" };
        format!("#define FF_SPREAD_WIDTH {}\n#define FF_SPREAD_DIM {}\n#define FF_SPREAD_T {ty}\n#define FF_SPREAD_S {}\n{}",
                self.w, self.dim, self.precision, KERNEL_SOURCES[0].1)
    }

    /// The modules of the width-specialised kernels that the default plans launch
    /// ([`occupancy::LAUNCH_SHAPES`]), in order, each once.
    pub fn launched() -> Vec<WidthModule> {
        let mut v: Vec<WidthModule> = occupancy::parse_launch_shapes(occupancy::LAUNCH_SHAPES)
            .unwrap_or_default()
            .iter()
            .filter_map(|s| WidthModule::of_kernel(&s.kernel))
            .collect();
        v.sort();
        v.dedup();
        v
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn width_module_names_round_trip() {
        let all = WidthModule::all();
        assert_eq!(all.len(), 2 * 3 * SPECIALISED_WIDTHS.count());
        for m in &all {
            for base in WIDTH_KERNELS {
                assert_eq!(WidthModule::of_kernel(&m.kernel(base)), Some(*m));
            }
            assert!(m.source().starts_with("#define FF_SPREAD_WIDTH"));
        }
        for name in ["ff_gm_spread_3d_f64", "ff_csr_spread_f64_w9", "ff_gm_spread_3d_f64_w17", "ff_gm_spread_4d_f64_w9",
                     "ff_gm_spread_3d_f16_w9", "ff_gm_spread_3d_f64_w09", "ff_fold_3d_f64_w9", "ff_gm_spread_3d_f64_w"] {
            assert_eq!(WidthModule::of_kernel(name), None, "{name}");
        }
        assert_eq!(KERNEL_SOURCES[0].0, "spread.cu");
    }
}
