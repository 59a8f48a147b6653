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

/// Spreads one point into a box, width `W`:
/// `bx[(lx+i) + sx*((ly+j) + sy*(lz+k))] += c·kx[i]·ky[j]·kz[k]` for `i < W`, `j < wy`, `k < wz`
/// (`wy = wz = 1` and `ky = kz = [1]` in lower dimensions); `s = [sx, sy]` are the box strides.
#[inline(always)]
pub fn spread_w<T: Real, const W: usize>(bx: &mut [[T; 2]], s: [usize; 2], l: [usize; 3], wyz: [usize; 2], ker: &PointKernel<T>, c: Complex<T>) {
    let mut kc = [[T::zero(); 2]; W];
    for i in 0..W {
        kc[i] = [ker[0][i] * c.re, ker[0][i] * c.im];
    }
    for k in 0..wyz[1] {
        let vz = ker[2][k];
        for j in 0..wyz[0] {
            let v = vz * ker[1][j];
            let base = l[0] + s[0] * (l[1] + j + s[1] * (l[2] + k));
            let row: &mut [[T; 2]; W] = (&mut bx[base..base + W]).try_into().expect("row in box");
            for i in 0..W {
                row[i][0] += kc[i][0] * v;
                row[i][1] += kc[i][1] * v;
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

/// Interpolates one point, width `W`: returns `Σ g[rows[j + wy*k] + i]·kx[i]·ky[j]·kz[k]`, where
/// `rows` holds the starts of the `wy·wz` grid rows (already wrapped, each with `W` contiguous
/// entries).
#[inline(always)]
pub fn interp_w<T: Real, const W: usize>(g: &[Complex<T>], rows: &[usize], wyz: [usize; 2], ker: &PointKernel<T>) -> Complex<T> {
    let mut acc = [[T::zero(); 2]; W];
    for k in 0..wyz[1] {
        let vz = ker[2][k];
        for j in 0..wyz[0] {
            let v = vz * ker[1][j];
            let r0 = rows[j + wyz[0] * k];
            let row: &[Complex<T>; W] = (&g[r0..r0 + W]).try_into().expect("row in grid");
            for i in 0..W {
                acc[i][0] += row[i].re * v;
                acc[i][1] += row[i].im * v;
            }
        }
    }
    let (mut re, mut im) = (T::zero(), T::zero());
    for i in 0..W {
        re += acc[i][0] * ker[0][i];
        im += acc[i][1] * ker[0][i];
    }
    Complex::new(re, im)
}

/// Runtime-width interpolation (widths above 16).
#[inline(always)]
pub fn interp_dyn<T: Real>(g: &[Complex<T>], rows: &[usize], wyz: [usize; 2], ker: &PointKernel<T>, w: usize) -> Complex<T> {
    let mut out = Complex::new(T::zero(), T::zero());
    for k in 0..wyz[1] {
        for j in 0..wyz[0] {
            let v = ker[2][k] * ker[1][j];
            let r0 = rows[j + wyz[0] * k];
            for (gv, &kx) in g[r0..r0 + w].iter().zip(&ker[0][..w]) {
                out += gv * (kx * v);
            }
        }
    }
    out
}
