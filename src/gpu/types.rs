//! Plain-old-data structs passed by value to the CUDA kernels (layouts mirror the structs of
//! `kernels/spread.cu`), and the precision trait of the GPU code.

use crate::real::Real;

/// Grid and bin geometry (`struct FfGeom` in `spread.cu`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FfGeom {
    /// Dimension 1, 2 or 3.
    pub dim: i32,
    /// Fine grid sizes (1 for unused axes).
    pub nf: [i32; 3],
    /// Bin sizes in grid points (1 for unused axes).
    pub bs: [i32; 3],
    /// Number of bins per axis (1 for unused axes).
    pub nb: [i32; 3],
}

/// Kernel description (`struct FfKernel` in `spread.cu`).
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct FfKernel {
    /// 0 = ES (Horner table), 1 = Gaussian (FGG, E3 table), 2 = centred B-spline.
    pub ty: i32,
    /// Width in grid points.
    pub w: i32,
    /// ES: Horner degree.
    pub deg: i32,
    /// Gaussian: M_sp = w/2.
    pub msp: i32,
    /// Gaussian: 1/(4τ).
    pub inv4tau: f64,
    /// Gaussian: 1/(2τ).
    pub inv2tau: f64,
    /// Device address of the table (ES coefficients or Gaussian E3), in the kernel precision.
    pub tab: u64,
}

/// Kernel type values of [`FfKernel::ty`].
pub(crate) const FF_KER_ES: i32 = 0;
/// Gaussian.
pub(crate) const FF_KER_GAUSS: i32 = 1;
/// Centred cardinal B-spline.
pub(crate) const FF_KER_BSPLINE: i32 = 2;

/// Precisions the GPU kernels exist in.
pub trait GpuReal: Real + Copy {
    /// Kernel-name suffix (`"f32"` or `"f64"`).
    const SUFFIX: &'static str;
}
impl GpuReal for f32 {
    const SUFFIX: &'static str = "f32";
}
impl GpuReal for f64 {
    const SUFFIX: &'static str = "f64";
}

/// The bytes of a slice of plain-old-data values.
pub(crate) fn as_bytes<T: Copy>(v: &[T]) -> &[u8] {
    // SAFETY: T is plain old data (f32/f64/i32/u32/Complex of those); any byte view is valid.
    unsafe { std::slice::from_raw_parts(v.as_ptr() as *const u8, std::mem::size_of_val(v)) }
}

/// The bytes of a mutable slice of plain-old-data values.
pub(crate) fn as_bytes_mut<T: Copy>(v: &mut [T]) -> &mut [u8] {
    // SAFETY: as above; every bit pattern is a valid f32/f64/i32/u32.
    unsafe { std::slice::from_raw_parts_mut(v.as_mut_ptr() as *mut u8, std::mem::size_of_val(v)) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn layouts_match_the_cuda_structs() {
        // struct FfGeom { int dim; int nf[3]; int bs[3]; int nb[3]; } — 40 bytes
        assert_eq!(std::mem::size_of::<FfGeom>(), 40);
        // struct FfKernel { int type, w, deg, msp; double inv4tau, inv2tau; const void* tab; }
        assert_eq!(std::mem::size_of::<FfKernel>(), 40);
        assert_eq!(std::mem::offset_of!(FfKernel, inv4tau), 16);
        assert_eq!(std::mem::offset_of!(FfKernel, tab), 32);
    }
}
