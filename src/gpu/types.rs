//! Plain-old-data structs passed by value to the CUDA kernels (layouts mirror the structs of
//! `kernels/spread.cu`), and the precision trait of the GPU code.

use crate::kernel::es::EsHorner;
use crate::kernel::Kernel;
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

// Kernel type values of `FfKernel::ty` (the `FF_KER_*` defines of `spread.cu`); used only by
// `ff_kernel` below.
const FF_KER_ES: i32 = 0;
const FF_KER_GAUSS: i32 = 1;
const FF_KER_BSPLINE: i32 = 2;

/// The GPU kernel descriptor of `k` and its table in precision `T` (the one place where a
/// [`Kernel`] becomes what `spread.cu` evaluates): ES → Horner coefficients of
/// [`crate::kernel::es::EsHorner`]; Gaussian → the `E3` factors `exp(−l²/(4τ))`,
/// `l = j − (M_sp − 1)`, of fast Gaussian gridding (as [`crate::kernel::gaussian::Fgg`]);
/// B-spline → no table (evaluated by the recursion on the device). `tab` is left 0: the caller
/// uploads the table and sets its device address.
pub fn ff_kernel<T: Real>(k: &Kernel) -> (FfKernel, Vec<T>) {
    let w = k.width() as i32;
    match k {
        Kernel::Es(p) => {
            let h = EsHorner::<T>::new(p);
            (FfKernel { ty: FF_KER_ES, w, deg: h.degree() as i32, ..Default::default() }, h.coeffs().to_vec())
        }
        Kernel::Gaussian(p) => {
            let msp = p.w / 2;
            let e3: Vec<T> = (0..p.w)
                .map(|j| {
                    let l = j as f64 - (msp as f64 - 1.0);
                    T::of((-l * l / (4.0 * p.tau)).exp())
                })
                .collect();
            (FfKernel { ty: FF_KER_GAUSS, w, msp: msp as i32, inv4tau: 0.25 / p.tau, inv2tau: 0.5 / p.tau, ..Default::default() }, e3)
        }
        Kernel::BSpline(_) => (FfKernel { ty: FF_KER_BSPLINE, w, ..Default::default() }, vec![T::zero()]),
    }
}

/// Precisions the GPU kernels exist in: every [`Real`] (`f32`, `f64`); the kernel-name suffix
/// is the precision's name.
pub trait GpuReal: Real + Copy {
    /// Kernel-name suffix (`"f32"` or `"f64"`).
    const SUFFIX: &'static str;
}
impl<T: Real> GpuReal for T {
    const SUFFIX: &'static str = T::NAME;
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

/// Inverse of the kernels' order-preserving map of finite doubles to unsigned integers
/// (`ff_fmmt_ord`, `ff_t3_ord`: the sign bit set for non-negative values, every bit flipped
/// for negative ones), through which `atomicMin`/`atomicMax` find extremes.
pub(crate) fn from_ord(o: u64) -> f64 {
    f64::from_bits(if o >> 63 != 0 { o ^ (1 << 63) } else { !o })
}
