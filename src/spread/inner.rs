//! The spreader's innermost loops, specialised on the kernel width `W` (a const generic) so
//! that they unroll and vectorise (docs/design.md §8). Widths above 16 (wide Gaussians) use the
//! runtime-width versions. All are `#[inline(always)]` so that they are compiled inside the
//! callers' AVX2/FMA clones (see [`super::simd`]).
//!
//! Boxes and grids hold interleaved complex values (`[re, im]`). For spreading, the complex
//! strength is folded into the x-kernel once per point (`kc[i] = c·kx[i]`), so every row update
//! is a real axpy of length 2W; for interpolation, rows are accumulated with their y·z weight
//! and contracted with the x-kernel at the end.

use crate::kernel::MAX_WIDTH;
use crate::real::Real;
use num_complex::Complex;

/// Kernel values of one point along the three axes (`ker[d][0..w_d]`).
pub type PointKernel<T> = [[T; MAX_WIDTH]; 3];

/// `a·b + c`, fused (one rounding) when `FMA` — only inside the AVX2/FMA clones, where it is
/// one instruction; elsewhere `mul_add` would be a library call.
#[inline(always)]
fn madd<T: Real, const FMA: bool>(a: T, b: T, c: T) -> T {
    if FMA { a.mul_add(b, c) } else { a * b + c }
}

/// Spreads one point into a box, width `W`:
/// `bx[(lx+i) + sx*((ly+j) + sy*(lz+k))] += c·kx[i]·ky[j]·kz[k]` for `i < W`, `j < wy`, `k < wz`
/// (`wy = wz = 1` and `ky = kz = [1]` in lower dimensions); `s = [sx, sy]` are the box strides.
/// Each row update is one real axpy of length 2W over the interleaved values.
#[inline(always)]
pub fn spread_w<T: Real, const W: usize, const FMA: bool>(bx: &mut [[T; 2]], s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<T>, c: Complex<T>) {
    let mut kc = [T::zero(); 2 * MAX_WIDTH];
    for i in 0..W {
        kc[2 * i] = ker[0][i] * c.re;
        kc[2 * i + 1] = ker[0][i] * c.im;
    }
    for k in 0..wyz[1] {
        let vz = ker[2][k];
        for j in 0..wyz[0] {
            let v = vz * ker[1][j];
            let base = l[0] + s[0] * (l[1] + j + s[1] * (l[2] + k));
            let row: &mut [[T; 2]; W] = (&mut bx[base..base + W]).try_into().expect("row in box");
            let row = row.as_flattened_mut();
            for i in 0..2 * W {
                row[i] = madd::<T, FMA>(kc[i], v, row[i]);
            }
        }
    }
}

/// Runtime-width spreading (widths above 16).
#[inline(always)]
pub fn spread_dyn<T: Real>(bx: &mut [[T; 2]], s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<T>, c: Complex<T>, w: usize) {
    for k in 0..wyz[1] {
        for j in 0..wyz[0] {
            let v = ker[2][k] * ker[1][j];
            let base = l[0] + s[0] * (l[1] + j + s[1] * (l[2] + k));
            for (r, &kx) in bx[base..base + w].iter_mut().zip(&ker[0][..w]) {
                r[0] += kx * c.re * v;
                r[1] += kx * c.im * v;
            }
        }
    }
}

/// Interpolates one point from a box, width `W` (the transpose of [`spread_w`], same
/// indexing): returns `Σ bx[(lx+i) + sx*((ly+j) + sy*(lz+k))]·kx[i]·ky[j]·kz[k]`. The rows are
/// accumulated as real vectors of length 2W with their y·z weight, then contracted with the
/// x-kernel.
#[inline(always)]
pub fn interp_w<T: Real, const W: usize, const FMA: bool>(bx: &[[T; 2]], s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<T>) -> Complex<T> {
    let mut acc = [T::zero(); 2 * MAX_WIDTH];
    for k in 0..wyz[1] {
        let vz = ker[2][k];
        for j in 0..wyz[0] {
            let v = vz * ker[1][j];
            let base = l[0] + s[0] * (l[1] + j + s[1] * (l[2] + k));
            let row: &[[T; 2]; W] = (&bx[base..base + W]).try_into().expect("row in box");
            let row = row.as_flattened();
            for i in 0..2 * W {
                acc[i] = madd::<T, FMA>(row[i], v, acc[i]);
            }
        }
    }
    let (mut re, mut im) = (T::zero(), T::zero());
    for i in 0..W {
        re = madd::<T, FMA>(acc[2 * i], ker[0][i], re);
        im = madd::<T, FMA>(acc[2 * i + 1], ker[0][i], im);
    }
    Complex::new(re, im)
}

/// Runtime-width interpolation (widths above 16).
#[inline(always)]
pub fn interp_dyn<T: Real>(bx: &[[T; 2]], s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<T>, w: usize) -> Complex<T> {
    let mut out = Complex::new(T::zero(), T::zero());
    for k in 0..wyz[1] {
        for j in 0..wyz[0] {
            let v = ker[2][k] * ker[1][j];
            let base = l[0] + s[0] * (l[1] + j + s[1] * (l[2] + k));
            for (gv, &kx) in bx[base..base + w].iter().zip(&ker[0][..w]) {
                out.re += gv[0] * (kx * v);
                out.im += gv[1] * (kx * v);
            }
        }
    }
    out
}
