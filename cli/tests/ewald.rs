//! Runs the built `farfield ewald`: the NaCl crystal with `--check` and `--out`, a folder in
//! the shared-data format, and bad arguments.

mod common;
use common::{farfield, last_json};

/// Writes a little-endian float64 C-order `.npy` file.
fn write_npy(path: &std::path::Path, shape: &[usize], data: &[f64]) {
    let dims: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
    let shape_s = if shape.len() == 1 { format!("({},)", dims[0]) } else { format!("({})", dims.join(", ")) };
    let mut header = format!("{{'descr': '<f8', 'fortran_order': False, 'shape': {shape_s}, }}");
    while (10 + header.len() + 1) % 64 != 0 {
        header.push(' ');
    }
    header.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend_from_slice(&(header.len() as u16).to_le_bytes());
    b.extend_from_slice(header.as_bytes());
    for v in data {
        b.extend_from_slice(&v.to_le_bytes());
    }
    std::fs::write(path, b).unwrap();
}

#[test]
fn ewald_nacl_check_and_out() {
    let dir = tempfile::tempdir().unwrap();
    for method in ["spme", "spectral"] {
        let out = farfield()
            .args(["ewald", "--nacl-cells", "2", "--method", method, "--tol", "1e-6", "--threads", "2", "--repeats", "2",
                   "--check", "--json", "--out"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "ewald failed: {}", String::from_utf8_lossy(&out.stderr));
        let j = last_json(&out.stdout);
        for key in ["method", "n", "tol", "energy", "time_s", "real_s", "kspace_s", "xi", "rc", "grid", "order_or_support",
                    "rel_rms_force_error", "energy_rel_error"] {
            assert!(j.get(key).is_some(), "missing key {key} in {j}");
        }
        assert_eq!(j["method"], method);
        assert_eq!(j["n"], 64);
        // 32 ion pairs at nearest-neighbour distance 0.282 nm: U = −32 M / 0.282
        let u = j["energy"].as_f64().unwrap();
        let m = -u * 0.5 * 0.5640 / 32.0;
        assert!((m - 1.747564594633).abs() / 1.747564594633 <= 1e-6, "{method}: Madelung {m}");
        // every ion sits at a centre of symmetry: the forces vanish, so the relative force
        // error is not meaningful here, but the energy is
        assert!(j["energy_rel_error"].as_f64().unwrap() <= 1e-6);
        assert!(j["time_s"].as_f64().unwrap() > 0.0);
    }
    assert!(dir.path().join("potential.npy").exists() && dir.path().join("field.npy").exists());
}

#[test]
fn ewald_reads_a_folder_and_checks_forces() {
    // 200 random charges (neutral) in a 2.5 nm cubic box, written in the shared-data format
    let dir = tempfile::tempdir().unwrap();
    let n = 200;
    let mut s = 12345u64;
    let mut rnd = || {
        s = s.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (s >> 11) as f64 / (1u64 << 53) as f64
    };
    let xyz: Vec<f64> = (0..3 * n).map(|_| 2.5 * rnd()).collect();
    let q: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 0.8 } else { -0.8 }).collect();
    write_npy(&dir.path().join("positions.npy"), &[n, 3], &xyz);
    write_npy(&dir.path().join("charges.npy"), &[n], &q);
    write_npy(&dir.path().join("box.npy"), &[3], &[2.5, 2.5, 2.5]);
    for tol in ["1e-3", "1e-5"] {
        let out = farfield()
            .args(["ewald", "--method", "spme", "--tol", tol, "--threads", "2", "--check", "--json", "--input"])
            .arg(dir.path())
            .output()
            .unwrap();
        assert!(out.status.success(), "ewald failed: {}", String::from_utf8_lossy(&out.stderr));
        let j = last_json(&out.stdout);
        let tol: f64 = tol.parse().unwrap();
        let ef = j["rel_rms_force_error"].as_f64().unwrap();
        assert!(ef <= tol, "tol {tol}: force error {ef}");
        // random charges: the energy's relative error is documented up to 4 tol
        // (`farfield::ewald` module docs, "Accuracy and parameters")
        let eu = j["energy_rel_error"].as_f64().unwrap();
        assert!(eu <= 4.0 * tol, "tol {tol}: energy error {eu}");
    }
    // a cutoff above half the box
    let out = farfield().args(["ewald", "--rc", "1.5", "--input"]).arg(dir.path()).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cutoff"), "{}", String::from_utf8_lossy(&out.stderr));
}

#[test]
fn ewald_bad_arguments() {
    let out = farfield().args(["ewald", "--tol", "2"]).output().unwrap();
    assert!(!out.status.success());
    let dir = tempfile::tempdir().unwrap();
    write_npy(&dir.path().join("positions.npy"), &[4], &[0.0, 1.0, 2.0, 3.0]);
    write_npy(&dir.path().join("charges.npy"), &[4], &[1.0, -1.0, 1.0, -1.0]);
    let out = farfield().args(["ewald", "--input"]).arg(dir.path()).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("positions.npy"), "{}", String::from_utf8_lossy(&out.stderr));
}
