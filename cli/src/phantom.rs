//! The analytic Shepp–Logan head phantom, sampled on an N×N pixel grid.
//!
//! Uses the "modified" Shepp–Logan intensities of Toft (1996) (as MATLAB's `phantom` and
//! scikit-image's `shepp_logan_phantom`), which give a visible contrast: background 0, skull
//! 1.0, brain 0.2, features 0.1–0.4. The head spans the unit disc of `[−1, 1]²`;
//! `u` points right (columns), `v` points up (row 0 is the top of the image).

use crate::npy::Image;

/// One ellipse: intensity added, semi-axes (a along u, b along v), centre, rotation (degrees,
/// counter-clockwise).
struct Ellipse {
    value: f64,
    a: f64,
    b: f64,
    u0: f64,
    v0: f64,
    phi_deg: f64,
}

const ELLIPSES: [Ellipse; 10] = [
    Ellipse { value: 1.0, a: 0.69, b: 0.92, u0: 0.0, v0: 0.0, phi_deg: 0.0 },
    Ellipse { value: -0.8, a: 0.6624, b: 0.8740, u0: 0.0, v0: -0.0184, phi_deg: 0.0 },
    Ellipse { value: -0.2, a: 0.1100, b: 0.3100, u0: 0.22, v0: 0.0, phi_deg: -18.0 },
    Ellipse { value: -0.2, a: 0.1600, b: 0.4100, u0: -0.22, v0: 0.0, phi_deg: 18.0 },
    Ellipse { value: 0.1, a: 0.2100, b: 0.2500, u0: 0.0, v0: 0.35, phi_deg: 0.0 },
    Ellipse { value: 0.1, a: 0.0460, b: 0.0460, u0: 0.0, v0: 0.1, phi_deg: 0.0 },
    Ellipse { value: 0.1, a: 0.0460, b: 0.0460, u0: 0.0, v0: -0.1, phi_deg: 0.0 },
    Ellipse { value: 0.1, a: 0.0460, b: 0.0230, u0: -0.08, v0: -0.605, phi_deg: 0.0 },
    Ellipse { value: 0.1, a: 0.0230, b: 0.0230, u0: 0.0, v0: -0.606, phi_deg: 0.0 },
    Ellipse { value: 0.1, a: 0.0230, b: 0.0460, u0: 0.06, v0: -0.605, phi_deg: 0.0 },
];

/// Phantom value at `(u, v) ∈ [−1, 1]²` (u right, v up).
pub fn value(u: f64, v: f64) -> f64 {
    let mut s = 0.0;
    for e in &ELLIPSES {
        let (sn, cs) = e.phi_deg.to_radians().sin_cos();
        let (du, dv) = (u - e.u0, v - e.v0);
        let p = (du * cs + dv * sn) / e.a;
        let q = (-du * sn + dv * cs) / e.b;
        if p * p + q * q <= 1.0 {
            s += e.value;
        }
    }
    s
}

/// The phantom on an `n × n` grid, sampled at pixel centres: pixel (row, col) is at
/// `u = (col + ½ − n/2)/(n/2)`, `v = −(row + ½ − n/2)/(n/2)`.
pub fn shepp_logan(n: usize) -> Image {
    let h = n as f64 / 2.0;
    let mut data = Vec::with_capacity(n * n);
    for row in 0..n {
        let v = -(row as f64 + 0.5 - h) / h;
        for col in 0..n {
            let u = (col as f64 + 0.5 - h) / h;
            // clean up the floating-point dust of 1 − 0.8 − 0.2 etc.
            data.push((value(u, v) * 1e12).round() / 1e12);
        }
    }
    Image { rows: n, cols: n, data }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_values() {
        assert_eq!(value(0.0, 0.98), 0.0); // outside the head
        assert!((value(0.0, 0.9) - 1.0).abs() < 1e-12); // skull
        assert!((value(0.0, -0.3) - 0.2).abs() < 1e-12); // brain
        assert!((value(0.22, 0.0) - 0.0).abs() < 1e-12); // right ventricle
        assert!((value(0.0, 0.35) - 0.3).abs() < 1e-12); // top blob
        assert!((value(0.0, 0.1) - 0.4).abs() < 1e-12); // overlaps the top blob
    }

    #[test]
    fn grid_shape_range_and_orientation() {
        let im = shepp_logan(64);
        assert_eq!((im.rows, im.cols, im.data.len()), (64, 64, 4096));
        let max = im.data.iter().cloned().fold(f64::MIN, f64::max);
        let min = im.data.iter().cloned().fold(f64::MAX, f64::min);
        assert_eq!(min, 0.0);
        assert!((max - 1.0).abs() < 1e-12);
        // corners are outside the head
        assert_eq!(im.at(0, 0), 0.0);
        assert_eq!(im.at(63, 63), 0.0);
        // the large top blob (v = +0.35) is in the upper half: row < 32
        let blob = (0.35f64, 0.0f64);
        let row = ((1.0 - blob.0) * 32.0) as usize;
        assert!((im.at(row, 32) - 0.3).abs() < 1e-12, "{}", im.at(row, 32));
        // the skull and brain ellipses are mirror-symmetric about the vertical axis: column
        // c ↔ n−1−c along the middle row, away from the (asymmetric) ventricles
        assert_eq!(im.at(32, 10), im.at(32, 53));
    }
}
