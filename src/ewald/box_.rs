//! The periodic cell: three lattice vectors as GROMACS, LAMMPS and OpenMM give them (rows
//! `a, b, c`, lower-triangular: `a` along x, `b` in the xy plane), reciprocal vectors, heights,
//! and wrapping of Cartesian positions to fractional coordinates.
//!
//! With `B` the matrix whose rows are `a, b, c`, a position is `r = Σ_d s_d vec_d = Bᵀ s`; the
//! fractional coordinates are `s_d = a*_d · r` with the reciprocal vectors `a*_d` (rows of
//! `B⁻ᵀ`, so `a*_d · vec_e = δ_de`). Wave vectors of the periodic lattice are
//! `k(m) = 2π Σ_d m_d a*_d`, so `k·r = 2π m·s`. The height of the cell along axis `d` (the
//! distance between the two faces not containing `vec_d`) is `1/|a*_d|`.

use crate::error::{Error, Result};

/// A periodic cell (orthorhombic or triclinic), see the module docs.
#[derive(Debug, Clone, PartialEq)]
pub struct PeriodicBox {
    /// Lattice vectors, rows `a, b, c` (lower-triangular).
    pub vecs: [[f64; 3]; 3],
    /// Reciprocal vectors `a*_d` (rows), without the factor 2π.
    pub recip: [[f64; 3]; 3],
    /// Cell volume `a_x b_y c_z` (> 0).
    pub volume: f64,
    /// Heights `1/|a*_d|`.
    pub heights: [f64; 3],
    /// Lengths `|vec_d|`.
    pub lengths: [f64; 3],
}

impl PeriodicBox {
    /// Builds a cell from the nine numbers `box[3*i + j]` = component `j` of vector `i`.
    /// Errors ([`Error::InvalidArg`]): a non-finite entry, a non-zero entry above the
    /// diagonal (`box[1], box[2], box[5]`), or a non-positive diagonal (volume ≤ 0).
    pub fn new(b: &[f64; 9]) -> Result<Self> {
        if let Some(i) = b.iter().position(|v| !v.is_finite()) {
            return Err(Error::InvalidArg(format!("box[{i}] = {} is not finite", b[i])));
        }
        for &i in &[1usize, 2, 5] {
            if b[i] != 0.0 {
                return Err(Error::InvalidArg(format!(
                    "box[{i}] = {}: the box must be lower-triangular (rows a, b, c with a along x and b in the xy plane), \
                     so box[1], box[2] and box[5] must be 0",
                    b[i]
                )));
            }
        }
        for (i, name) in [(0usize, "a_x = box[0]"), (4, "b_y = box[4]"), (8, "c_z = box[8]")] {
            if b[i] <= 0.0 {
                return Err(Error::InvalidArg(format!(
                    "{name} = {}: the diagonal of the box must be positive (volume a_x b_y c_z > 0)",
                    b[i]
                )));
            }
        }
        let vecs = [[b[0], b[1], b[2]], [b[3], b[4], b[5]], [b[6], b[7], b[8]]];
        let (ax, bx, by, cx, cy, cz) = (b[0], b[3], b[4], b[6], b[7], b[8]);
        // B⁻ᵀ for lower-triangular B, written out (see the module docs).
        let recip = [
            [1.0 / ax, -bx / (ax * by), (bx * cy - by * cx) / (ax * by * cz)],
            [0.0, 1.0 / by, -cy / (by * cz)],
            [0.0, 0.0, 1.0 / cz],
        ];
        let norm = |v: &[f64; 3]| (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt();
        let heights = [1.0 / norm(&recip[0]), 1.0 / norm(&recip[1]), 1.0 / norm(&recip[2])];
        let lengths = [norm(&vecs[0]), norm(&vecs[1]), norm(&vecs[2])];
        Ok(PeriodicBox { vecs, recip, volume: ax * by * cz, heights, lengths })
    }

    /// An orthorhombic cell with edges `l`.
    pub fn orthorhombic(l: [f64; 3]) -> Result<Self> {
        Self::new(&[l[0], 0.0, 0.0, 0.0, l[1], 0.0, 0.0, 0.0, l[2]])
    }

    /// The nine numbers of the cell (`box[3*i + j]`).
    pub fn as_array(&self) -> [f64; 9] {
        let v = &self.vecs;
        [v[0][0], v[0][1], v[0][2], v[1][0], v[1][1], v[1][2], v[2][0], v[2][1], v[2][2]]
    }

    /// Smallest height (a cutoff must not exceed half of it).
    pub fn min_height(&self) -> f64 {
        self.heights.iter().cloned().fold(f64::INFINITY, f64::min)
    }

    /// Whether the cell is orthorhombic (all off-diagonal entries zero).
    pub fn is_orthorhombic(&self) -> bool {
        self.vecs[1][0] == 0.0 && self.vecs[2][0] == 0.0 && self.vecs[2][1] == 0.0
    }

    /// Fractional coordinates of `r` (not wrapped).
    #[inline(always)]
    pub fn frac(&self, r: [f64; 3]) -> [f64; 3] {
        let a = &self.recip;
        [
            a[0][0] * r[0] + a[0][1] * r[1] + a[0][2] * r[2],
            a[1][1] * r[1] + a[1][2] * r[2],
            a[2][2] * r[2],
        ]
    }

    /// Cartesian position of the fractional coordinates `s`.
    #[inline(always)]
    pub fn cart(&self, s: [f64; 3]) -> [f64; 3] {
        let v = &self.vecs;
        [
            s[0] * v[0][0] + s[1] * v[1][0] + s[2] * v[2][0],
            s[1] * v[1][1] + s[2] * v[2][1],
            s[2] * v[2][2],
        ]
    }

    /// Wave vector `k(m) = 2π Σ_d m_d a*_d` of the integer mode `m` (given as floats).
    #[inline(always)]
    pub fn kvec(&self, m: [f64; 3]) -> [f64; 3] {
        let a = &self.recip;
        let tp = 2.0 * std::f64::consts::PI;
        [
            tp * m[0] * a[0][0],
            tp * (m[0] * a[0][1] + m[1] * a[1][1]),
            tp * (m[0] * a[0][2] + m[1] * a[1][2] + m[2] * a[2][2]),
        ]
    }
}

/// Wraps a fractional coordinate into `[0, 1)`.
#[inline(always)]
pub fn wrap01(s: f64) -> f64 {
    let w = s - s.floor();
    if w >= 1.0 {
        0.0
    } else {
        w
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reciprocal_and_heights() {
        let b = PeriodicBox::new(&[2.0, 0.0, 0.0, 0.7, 1.8, 0.0, -0.4, 0.5, 2.5]).unwrap();
        for d in 0..3 {
            for e in 0..3 {
                let dot: f64 = (0..3).map(|k| b.recip[d][k] * b.vecs[e][k]).sum();
                assert!((dot - if d == e { 1.0 } else { 0.0 }).abs() < 1e-14);
            }
        }
        let r = [0.3, -1.2, 4.1];
        let s = b.frac(r);
        let r2 = b.cart(s);
        for d in 0..3 {
            assert!((r[d] - r2[d]).abs() < 1e-14);
        }
        assert!((b.volume - 2.0 * 1.8 * 2.5).abs() < 1e-14);
        // the height along c is c_z for a lower-triangular box
        assert!((b.heights[2] - 2.5).abs() < 1e-14);
        assert!(b.min_height() <= 1.8);
    }

    #[test]
    fn rejects_bad_boxes() {
        assert!(matches!(PeriodicBox::new(&[1.0, 0.1, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]), Err(Error::InvalidArg(_))));
        assert!(matches!(PeriodicBox::new(&[1.0, 0.0, 0.0, 0.0, -1.0, 0.0, 0.0, 0.0, 1.0]), Err(Error::InvalidArg(_))));
        assert!(matches!(PeriodicBox::new(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, f64::NAN]), Err(Error::InvalidArg(_))));
        assert_eq!(wrap01(-1e-20), 0.0);
        assert_eq!(wrap01(3.25), 0.25);
    }
}
