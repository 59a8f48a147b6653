//! Field `E = −∇φ` by spectral differentiation on the doubled grid: the potential's spectrum
//! is multiplied by `−i k_d` per component (`k_d = 2π s / (2n_d h_d)`, `s` the signed FFT index;
//! the Nyquist mode `s = n_d` is dropped so the result stays real) and transformed back with
//! the plan's c2r.

use crate::threads::Threads;
use super::Geom;
use num_complex::Complex64;
use std::f64::consts::PI;

/// `dst = −i k_d · src` on the half spectrum of the doubled grid (x halved, x fastest).
pub(crate) fn derivative(g: &Geom, exec: &Threads, src: &[Complex64], dst: &mut [Complex64], d: usize) {
    let n2 = g.n2;
    let hx = n2[0] / 2 + 1;
    let dk = 2.0 * PI / (n2[d] as f64 * g.h[d]);
    exec.chunks2(dst, hx, src, hx, |row, out, inp| {
        let (j, k) = (row % n2[1], row / n2[1]);
        if d == 0 {
            for (i, (o, s)) in out.iter_mut().zip(inp).enumerate() {
                let kk = dk * freq_no_nyquist(i, n2[0]);
                *o = Complex64::new(s.im * kk, -s.re * kk);
            }
        } else {
            let kk = dk * if d == 1 { freq_no_nyquist(j, n2[1]) } else { freq_no_nyquist(k, n2[2]) };
            for (o, s) in out.iter_mut().zip(inp) {
                *o = Complex64::new(s.im * kk, -s.re * kk);
            }
        }
    });
}

/// Signed frequency of index `j` on an axis of even length `n`, the Nyquist mode → 0.
pub(crate) fn freq_no_nyquist(j: usize, n: usize) -> f64 {
    if 2 * j == n {
        0.0
    } else if 2 * j < n {
        j as f64
    } else {
        j as f64 - n as f64
    }
}
