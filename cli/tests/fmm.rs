//! Runs the built `farfield fmm`: generated inputs (JSON keys, errors within the tolerance,
//! subset check), the `.npy` round trip (`--input`, `--out`), the periodic check against Ewald
//! on the cubic water box of the repository's `data/` (or `$FARFIELD_DATA_DIR`), and bad arguments.

use npyz::WriterBuilder;
use std::path::Path;

mod common;
use common::{farfield, last_json};

fn run_json(args: &[&str]) -> serde_json::Value {
    let out = farfield().args(args).output().unwrap();
    assert!(out.status.success(), "farfield {args:?} failed: {}", String::from_utf8_lossy(&out.stderr));
    last_json(&out.stdout)
}

#[test]
fn fmm_generated_json() {
    for (dist, n, tol, check) in [("uniform", "3000", 1e-3, "1000"), ("plummer", "3e4", 1e-6, "300"), ("sphere", "5000", 1e-9, "1000")] {
        let ts = format!("{tol:e}");
        let j = run_json(&["fmm", "--n", n, "--dist", dist, "--tol", &ts, "--threads", "2", "--check", check, "--json"]);
        for key in ["n", "dist", "tol", "p", "depth", "time_s", "rel_error_potential", "rel_error_field", "stages"] {
            assert!(j.get(key).is_some(), "missing key {key} in {j}");
        }
        for st in ["p2m", "m2m", "m2l", "l2l", "l2p", "p2p"] {
            assert!(j["stages"][st].as_f64().unwrap() >= 0.0, "stage {st} in {j}");
        }
        assert_eq!(j["dist"], dist);
        assert!(j["time_s"].as_f64().unwrap() > 0.0);
        let (ep, ef) = (j["rel_error_potential"].as_f64().unwrap(), j["rel_error_field"].as_f64().unwrap());
        assert!(ep <= tol && ef <= tol, "{dist} tol {tol:e}: {ep:e} {ef:e}");
        // exact over all particles up to 2e4, a subset beyond
        let nn = j["n"].as_u64().unwrap();
        let expect = if nn <= 20000 { nn } else { check.parse().unwrap() };
        assert_eq!(j["check_targets"].as_u64().unwrap(), expect);
    }
}

fn write_npy(path: &Path, shape: &[u64], data: &[f64]) {
    let mut buf = Vec::new();
    {
        let mut w = npyz::WriteOptions::<f64>::new().default_dtype().shape(shape).writer(&mut buf).begin_nd().unwrap();
        w.extend(data.iter().copied()).unwrap();
        w.finish().unwrap();
    }
    std::fs::write(path, buf).unwrap();
}

fn read_npy(path: &Path) -> (Vec<u64>, Vec<f64>) {
    let bytes = std::fs::read(path).unwrap();
    let f = npyz::NpyFile::new(&bytes[..]).unwrap();
    let shape = f.shape().to_vec();
    (shape, f.into_vec::<f64>().unwrap())
}

#[test]
fn fmm_input_and_output_files() {
    // four charges at the corners of a unit square (exact potentials), plus a far one
    let dir = tempfile::tempdir().unwrap();
    let xyz = [0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 1.0, 0.0, 10.0, 10.0, 10.0];
    let q = [1.0, -1.0, -1.0, 1.0, 0.5];
    write_npy(&dir.path().join("positions.npy"), &[5, 3], &xyz);
    write_npy(&dir.path().join("charges.npy"), &[5], &q);
    let out = dir.path().join("out");
    let j = run_json(&["fmm", "--input", dir.path().to_str().unwrap(), "--tol", "1e-8", "--json", "--out", out.to_str().unwrap()]);
    assert_eq!(j["n"], 5);
    assert_eq!(j["dist"], "input");
    let (ps, phi) = read_npy(&out.join("potential.npy"));
    let (fs, field) = read_npy(&out.join("field.npy"));
    assert_eq!((ps, fs), (vec![5], vec![5, 3]));
    for i in 0..5 {
        let (mut p, mut e) = (0.0, [0.0; 3]);
        for k in 0..5 {
            if k != i {
                let d: Vec<f64> = (0..3).map(|a| xyz[3 * i + a] - xyz[3 * k + a]).collect();
                let r = (d[0] * d[0] + d[1] * d[1] + d[2] * d[2]).sqrt();
                p += q[k] / r;
                for a in 0..3 {
                    e[a] += q[k] * d[a] / (r * r * r);
                }
            }
        }
        assert!((phi[i] - p).abs() < 1e-12, "phi[{i}] = {} vs {p}", phi[i]);
        for a in 0..3 {
            assert!((field[3 * i + a] - e[a]).abs() < 1e-12, "E[{i}][{a}]");
        }
    }
    // a triclinic box is refused with --periodic, a rectangular one without a common cube side too
    write_npy(&dir.path().join("box.npy"), &[3, 3], &[2.0, 0.0, 0.0, 0.5, 3.0, 0.0, 0.0, 0.0, 2.0]);
    let o = farfield().args(["fmm", "--input", dir.path().to_str().unwrap(), "--periodic"]).output().unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("triclinic"));
    write_npy(&dir.path().join("box.npy"), &[3, 3], &[2.0, 0.0, 0.0, 0.0, 2.9, 0.0, 0.0, 0.0, 2.0]);
    let o = farfield().args(["fmm", "--input", dir.path().to_str().unwrap(), "--periodic"]).output().unwrap();
    assert!(!o.status.success());
    assert!(String::from_utf8_lossy(&o.stderr).contains("integer multiples"));
}

#[test]
fn fmm_rectangular_box_against_ewald() {
    let j = run_json(&["fmm", "--n", "3000", "--box", "2,1,1", "--tol", "1e-6", "--threads", "2", "--json"]);
    assert_eq!(j["boundary"], "periodic");
    assert_eq!(j["box"], serde_json::json!([2.0, 1.0, 1.0]));
    let (ep, ef) = (j["rel_error_potential"].as_f64().unwrap(), j["rel_error_field"].as_f64().unwrap());
    assert!(ep <= 1e-6 && ef <= 1e-6, "{ep:e} {ef:e}");
}

#[test]
fn fmm_periodic_water_box_against_ewald() {
    // the water box of the data folder (docs/design.md §11.1)
    let d = std::env::var_os("FARFIELD_DATA_DIR")
        .filter(|d| !d.is_empty())
        .map(|d| Path::new(&d).to_path_buf())
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../data"))
        .join("water_tip3p_900");
    let j = run_json(&["fmm", "--input", d.to_str().unwrap(), "--periodic", "--tol", "1e-6", "--threads", "2", "--json"]);
    assert_eq!(j["n"], 2700);
    assert_eq!(j["boundary"], "periodic");
    let (ep, ef, eu) = (
        j["rel_error_potential"].as_f64().unwrap(),
        j["rel_error_field"].as_f64().unwrap(),
        j["rel_error_energy"].as_f64().unwrap(),
    );
    assert!(ep <= 1e-6 && ef <= 1e-6 && eu <= 1e-6, "{ep:e} {ef:e} {eu:e}");
}

#[test]
fn fmm_bad_arguments() {
    for args in [
        vec!["fmm", "--n", "100", "--tol", "0"],
        vec!["fmm", "--n", "100", "--tol", "1.5"],
        vec!["fmm", "--n", "0"],
        vec!["fmm", "--tol", "1e-6"],
        vec!["fmm", "--n", "100", "--input", "/nonexistent-dir"],
        vec!["fmm", "--input", "/nonexistent-dir"],
        vec!["fmm", "--n", "100", "--dist", "gaussian"],
        vec!["fmm", "--n", "100", "--box", "2,1"],
        vec!["fmm", "--n", "100", "--box", "2,0,1"],
        vec!["fmm", "--n", "100", "--box", "1,1.41421356,1"],
    ] {
        assert!(!farfield().args(&args).output().unwrap().status.success(), "{args:?} should fail");
    }
}
