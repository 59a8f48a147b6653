//! Reading the molecular systems of the repository's `data/` folder (docs/design.md §11.1):
//! `positions.npy` (N×3, nm), `charges.npy` (N, e) and `box.npy` (3×3, rows a, b, c, nm),
//! little-endian float64. Shared by the Ewald tests here and the MPI test (`tests/`); not part
//! of the supported API.

/// Reads a little-endian float64 `.npy` file (format 1.0/2.0, C order).
pub fn read_npy(path: &std::path::Path) -> Option<(Vec<usize>, Vec<f64>)> {
    let b = std::fs::read(path).ok()?;
    if b.len() < 10 || &b[..6] != b"\x93NUMPY" {
        return None;
    }
    let (hlen, off) = if b[6] == 1 { (u16::from_le_bytes([b[8], b[9]]) as usize, 10) } else { (u32::from_le_bytes([b[8], b[9], b[10], b[11]]) as usize, 12) };
    let h = std::str::from_utf8(&b[off..off + hlen]).ok()?;
    if !h.contains("'<f8'") || h.contains("'fortran_order': True") {
        return None;
    }
    let sh = &h[h.find("'shape': (")? + 10..];
    let sh = &sh[..sh.find(')')?];
    let shape: Vec<usize> = sh.split(',').filter_map(|t| t.trim().parse().ok()).collect();
    let data = b[off + hlen..].chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect();
    Some((shape, data))
}

/// `<data>/<name>`: the repository's `data/` or `$FARFIELD_DATA_DIR` when set (docs/design.md
/// §11.1), if it holds the system.
pub fn data_dir(name: &str) -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("FARFIELD_DATA_DIR")
        .filter(|d| !d.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("data"));
    let d = dir.join(name);
    if d.join("positions.npy").exists() {
        Some(d)
    } else {
        None
    }
}

/// The system `name` of the data folder ([`data_dir`]): positions, charges, cell.
pub fn load_system(name: &str) -> Option<(Vec<f64>, Vec<f64>, [f64; 9])> {
    load_dir(&data_dir(name)?)
}

/// Reads `positions.npy`, `charges.npy`, `box.npy` from a folder.
pub fn load_dir(d: &std::path::Path) -> Option<(Vec<f64>, Vec<f64>, [f64; 9])> {
    let (_, x) = read_npy(&d.join("positions.npy"))?;
    let (_, q) = read_npy(&d.join("charges.npy"))?;
    let (_, b) = read_npy(&d.join("box.npy"))?;
    Some((x, q, b.try_into().ok()?))
}

