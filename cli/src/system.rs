//! Point-charge systems for the Ewald and FMM subcommands: reading the `positions.npy` /
//! `charges.npy` / `box.npy` folder format of the project's shared data, and building ionic
//! crystals when no folder is given.

use crate::npy;
use crate::CliResult;
use std::path::Path;

/// Charges at positions, optionally with a periodic cell.
#[derive(Debug, Clone)]
pub struct System {
    /// Where it came from (folder or crystal name).
    pub name: String,
    /// Positions, interleaved `xyz[3*i + d]` (nm for the shared data).
    pub xyz: Vec<f64>,
    /// Charges `q[i]` (e for the shared data).
    pub q: Vec<f64>,
    /// Lattice vectors as rows (`cell[3*i + j]` = component j of vector i), lower-triangular;
    /// `None` when the folder has no `box.npy`.
    pub cell: Option<[f64; 9]>,
}

impl System {
    /// Number of charges.
    pub fn n(&self) -> usize {
        self.q.len()
    }

    /// Net charge `Σ q_i`.
    pub fn net_charge(&self) -> f64 {
        self.q.iter().sum()
    }

    /// The periodic system repeated `reps[a]` times along lattice vector `a` (a supercell of
    /// `reps[0]·reps[1]·reps[2]` copies, copy by copy in the order a fastest; the cell's
    /// vectors scaled), e.g. a water box of 10⁶ atoms from a small one. Errors without a cell,
    /// with a zero count, or when the result would not fit in memory.
    pub fn replicate(&self, reps: [usize; 3]) -> CliResult<System> {
        let cell = self.cell.ok_or_else(|| format!("{}: no periodic cell to replicate", self.name))?;
        if reps.contains(&0) {
            return Err(format!("--replicate {reps:?}: every count must be at least 1"));
        }
        let copies = reps.iter().product::<usize>();
        let n = self.n().checked_mul(copies).ok_or("--replicate: too many charges")?;
        crate::mem::ensure_fits(n as f64 * 1024.0, &format!("--replicate {reps:?} ({n} charges)"))?;
        let (mut xyz, mut q) = (Vec::with_capacity(3 * n), Vec::with_capacity(n));
        for c in 0..reps[2] {
            for b in 0..reps[1] {
                for a in 0..reps[0] {
                    let shift: [f64; 3] =
                        std::array::from_fn(|d| a as f64 * cell[d] + b as f64 * cell[3 + d] + c as f64 * cell[6 + d]);
                    xyz.extend(self.xyz.chunks_exact(3).flat_map(|p| [p[0] + shift[0], p[1] + shift[1], p[2] + shift[2]]));
                    q.extend_from_slice(&self.q);
                }
            }
        }
        let big = std::array::from_fn(|i| cell[i] * reps[i / 3] as f64);
        Ok(System { name: format!("{} x{}x{}x{}", self.name, reps[0], reps[1], reps[2]), xyz, q, cell: Some(big) })
    }
}

/// Reads a folder holding `positions.npy` (N×3), `charges.npy` (N) and, when `need_box`,
/// `box.npy` (3 lengths, or 3×3 with row i = lattice vector i). Checks shapes exactly (a
/// charges array of shape (N, 1) or (1, N) is refused, not reinterpreted) and finiteness.
pub fn read_dir(dir: &Path, need_box: bool) -> CliResult<System> {
    let (ps, xyz) = npy::read_array(&dir.join("positions.npy"))?;
    let (qs, q) = npy::read_array(&dir.join("charges.npy"))?;
    let d = dir.display();
    if ps.len() != 2 || ps[1] != 3 {
        return Err(format!("{d}: positions.npy has shape {}, expected (N, 3): one row (x, y, z) per particle",
                           npy::shape_str(&ps)));
    }
    let n = ps[0];
    if qs.len() != 1 || qs[0] != n {
        return Err(format!("{d}: charges.npy has shape {}, expected ({n},): a 1-D array of one charge per particle, \
                            as many as positions.npy {} has rows", npy::shape_str(&qs), npy::shape_str(&ps)));
    }
    if n == 0 {
        return Err(format!("{d}: no particles"));
    }
    if let Some(i) = xyz.iter().position(|v| !v.is_finite()) {
        return Err(format!("{d}: position of particle {} is not finite", i / 3));
    }
    if let Some(i) = q.iter().position(|v| !v.is_finite()) {
        return Err(format!("{d}: charge of particle {i} is not finite"));
    }
    let box_path = dir.join("box.npy");
    let cell = if box_path.exists() {
        let (bs, b) = npy::read_array(&box_path)?;
        Some(match bs[..] {
            [3] => [b[0], 0.0, 0.0, 0.0, b[1], 0.0, 0.0, 0.0, b[2]],
            [3, 3] => b.try_into().expect("nine values"),
            _ => return Err(format!("{d}: box.npy has shape {}, expected (3,) (the side lengths) or (3, 3) (lattice vectors \
                                     as rows)", npy::shape_str(&bs))),
        })
    } else if need_box {
        return Err(format!("{d}: box.npy not found (a periodic cell is needed)"));
    } else {
        None
    };
    Ok(System { name: dir.display().to_string(), xyz, q, cell })
}

/// Rock-salt (NaCl) crystal of `k`×`k`×`k` conventional cubic cells with nearest-neighbour
/// distance `a/2`: 8k³ charges ±1, cubic cell of side `k·a`. Its Madelung constant is
/// 1.747564594633 (energy per ion pair `−M/(a/2)`).
pub fn nacl(k: usize, a: f64) -> System {
    let mut xyz = Vec::with_capacity(24 * k * k * k);
    let mut q = Vec::with_capacity(8 * k * k * k);
    for i in 0..2 * k {
        for j in 0..2 * k {
            for l in 0..2 * k {
                xyz.extend_from_slice(&[i as f64 * 0.5 * a, j as f64 * 0.5 * a, l as f64 * 0.5 * a]);
                q.push(if (i + j + l) % 2 == 0 { 1.0 } else { -1.0 });
            }
        }
    }
    let l = k as f64 * a;
    System { name: format!("NaCl crystal {k}x{k}x{k} cells"), xyz, q, cell: Some([l, 0.0, 0.0, 0.0, l, 0.0, 0.0, 0.0, l]) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nacl_is_neutral_and_alternating() {
        let s = nacl(2, 0.5640);
        assert_eq!(s.n(), 64);
        assert_eq!(s.net_charge(), 0.0);
        // nearest neighbours (distance a/2 along x) carry opposite charges
        assert_eq!(s.q[0], -s.q[16]);
    }

    #[test]
    fn replicate_is_the_larger_crystal() {
        // 2×2×2 copies of the 1-cell crystal hold the same ions as the 2-cell crystal
        let big = nacl(1, 0.5640).replicate([2, 2, 2]).unwrap();
        let want = nacl(2, 0.5640);
        assert_eq!(big.cell, want.cell);
        let key = |s: &System| {
            let mut v: Vec<(i64, i64, i64, i64)> = (0..s.n())
                .map(|i| {
                    let r = |d: usize| (s.xyz[3 * i + d] * 1e6).round() as i64;
                    (r(0), r(1), r(2), s.q[i] as i64)
                })
                .collect();
            v.sort();
            v
        };
        assert_eq!(key(&big), key(&want));
        assert!(nacl(1, 0.5640).replicate([1, 0, 1]).is_err());
        let open = System { name: "open".into(), xyz: vec![0.0; 3], q: vec![1.0], cell: None };
        assert!(open.replicate([2, 2, 2]).unwrap_err().contains("no periodic cell"));
    }

    #[test]
    fn reads_a_written_folder_and_rejects_bad_shapes() {
        let d = tempfile::tempdir().unwrap();
        npy::write_array(&d.path().join("positions.npy"), &[2, 3], &[0.0, 0.1, 0.2, 1.0, 1.1, 1.2]).unwrap();
        npy::write_array(&d.path().join("charges.npy"), &[2], &[1.0, -1.0]).unwrap();
        assert!(read_dir(d.path(), true).is_err(), "missing box must be an error when needed");
        let s = read_dir(d.path(), false).unwrap();
        assert!(s.cell.is_none() && s.n() == 2 && s.xyz[4] == 1.1);
        npy::write_array(&d.path().join("box.npy"), &[3], &[2.0, 3.0, 4.0]).unwrap();
        let s = read_dir(d.path(), true).unwrap();
        assert_eq!(s.cell.unwrap(), [2.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 4.0]);
        npy::write_array(&d.path().join("charges.npy"), &[3], &[1.0, -1.0, 0.0]).unwrap();
        assert!(read_dir(d.path(), true).is_err());
        // the right number of charges in a 2-D array is refused too, with both shapes named
        for shape in [[2u64, 1], [1, 2]] {
            npy::write_array(&d.path().join("charges.npy"), &shape, &[1.0, -1.0]).unwrap();
            let e = read_dir(d.path(), true).unwrap_err();
            assert!(e.contains(&format!("charges.npy has shape ({}, {}), expected (2,)", shape[0], shape[1])) && e.contains("(2, 3)"), "{e}");
        }
        npy::write_array(&d.path().join("charges.npy"), &[2], &[1.0, -1.0]).unwrap();
        npy::write_array(&d.path().join("box.npy"), &[9], &[2.0, 0.0, 0.0, 0.0, 2.0, 0.0, 0.0, 0.0, 2.0]).unwrap();
        assert!(read_dir(d.path(), true).unwrap_err().contains("box.npy has shape (9,)"));
    }

    #[test]
    fn reads_the_jac_dhfr_data() {
        let d = crate::demo::data_path("jac_dhfr").unwrap();
        let s = read_dir(&d, true).unwrap();
        assert_eq!(s.n(), 23558);
        assert!((s.net_charge() + 11.0).abs() < 1e-6, "docs/design.md §11.1: net charge -11 e");
        let c = s.cell.unwrap();
        assert!((c[0] - 6.1644723).abs() < 1e-6 && c[1] == 0.0 && c[3] == 0.0);
    }
}
