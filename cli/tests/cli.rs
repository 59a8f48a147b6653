//! Runs the built `farfield` binary: the demo on a small phantom (with its Poisson section) and a
//! small NUFFT bench, checking the JSON summaries (the last stdout line).

mod common;
use common::{farfield, last_json};

#[test]
fn demo_small_phantom_json() {
    let dir = tempfile::tempdir().unwrap();
    let out = farfield()
        .args(["demo", "--json", "--size", "64", "--threads", "2", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "demo failed: {}", String::from_utf8_lossy(&out.stderr));
    let j = last_json(&out.stdout);
    for key in ["image", "pixels", "samples", "nufft_s", "recon_rel_error", "png", "adjoint_rel_error", "points_per_s"] {
        assert!(j.get(key).is_some(), "missing key {key} in {j}");
    }
    assert_eq!(j["pixels"], 64 * 64);
    // Nyquist radial sampling: ⌈(π/2)·64⌉ = 101 spokes × 2·64 readout points
    assert_eq!(j["samples"], 101 * 128);
    let png = std::path::PathBuf::from(j["png"].as_str().unwrap());
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    assert!(dir.path().join("mri_cg.npy").exists());

    // Accuracy bound. A radial trajectory with k_r ∈ [−π, π) samples only the disc |k| < π;
    // the image's DFT outside it (the corners) is barely constrained by the data, so the
    // error of any reconstruction sits near ‖P_out f‖/‖f‖ ("out_of_disc_fraction").
    // For the point-sampled 64×64 Shepp–Logan phantom (sharp edges) that is 0.1945
    // (numpy's fft2 agrees); CG measured 0.178 after 10 iterations (adjoint with ramp DCF
    // 0.241). At 256×256 the same numbers are 0.090 / 0.089, for the MRI slice 0.011 / 0.011.
    // Bound: 0.21 — the disc floor plus 8 %, still well below the adjoint.
    let cg = j["recon_rel_error"].as_f64().unwrap();
    let adj = j["adjoint_rel_error"].as_f64().unwrap();
    let floor = j["out_of_disc_fraction"].as_f64().unwrap();
    assert!((floor - 0.1945).abs() < 1e-3, "out-of-disc fraction {floor}");
    assert!(cg < 0.21, "CG error {cg}");
    assert!(cg < adj, "CG {cg} not better than adjoint {adj}");
    assert!(adj < 0.3, "adjoint error {adj}");
    assert!((j["adjoint_scale"].as_f64().unwrap() - 1.0).abs() < 0.1, "density compensation scale {}", j["adjoint_scale"]);

    // Poisson section: Gaussian at N = 64, all three methods
    let p = &j["poisson"];
    assert_eq!(p["n"], 64);
    let err = |m: &str| p[m]["rel_error"].as_f64().unwrap_or_else(|| panic!("no poisson.{m}.rel_error in {p}"));
    assert!(err("hockney") < 1e-3 && err("hockney") > 1e-4, "Hockney {}", err("hockney"));
    assert!(err("vico") < 1e-12 && err("vico_dct") < 1e-12);
    for m in ["hockney", "vico", "vico_dct"] {
        assert!(p[m]["solve_s"].as_f64().unwrap() > 0.0);
    }

    // Ewald section: the NaCl Madelung constant (published 1.747564594633) at tol 1e-10
    let e = &j["ewald"];
    let m = e["nacl_madelung"].as_f64().unwrap_or_else(|| panic!("no ewald.nacl_madelung in {e}"));
    assert!((m - 1.747564594633).abs() / 1.747564594633 <= 1e-9, "Madelung {m}");
}

#[test]
fn bench_nufft_small_cases_json() {
    for (ty, dim, modes, tol) in [("1", "2", "32,24", 1e-6), ("2", "3", "12", 1e-9), ("1", "1", "100", 1e-3)] {
        let out = farfield()
            .args(["bench", "nufft", "--type", ty, "--dim", dim, "--modes", modes, "--points", "2e3", "--threads", "2",
                   "--json", "--tol"])
            .arg(tol.to_string())
            .output()
            .unwrap();
        assert!(out.status.success(), "bench failed: {}", String::from_utf8_lossy(&out.stderr));
        let j = last_json(&out.stdout);
        for key in ["type", "dim", "modes", "points", "tol", "threads", "plan_s", "setpts_s", "exec_s", "total_s",
                    "points_per_s", "rel_error"] {
            assert!(j.get(key).is_some(), "missing key {key} in {j}");
        }
        assert_eq!(j["points"], 2000);
        assert_eq!(j["dim"].as_u64().unwrap().to_string(), dim);
        assert_eq!(j["modes"].as_array().unwrap().len(), dim.parse::<usize>().unwrap());
        let err = j["rel_error"].as_f64().unwrap();
        assert!(err <= 10.0 * tol, "type {ty} dim {dim}: rel error {err} > 10·tol");
        let total = j["total_s"].as_f64().unwrap();
        let parts = j["plan_s"].as_f64().unwrap() + j["setpts_s"].as_f64().unwrap() + j["exec_s"].as_f64().unwrap();
        assert!((total - parts).abs() < 1e-9);
    }
}

#[test]
fn bench_nufft_f32_and_bad_arguments() {
    let out = farfield()
        .args(["bench", "nufft", "--type", "2", "--dim", "2", "--modes", "20", "--points", "1000", "--tol", "1e-4",
               "--prec", "f32", "--kernel", "gauss", "--threads", "1", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = last_json(&out.stdout);
    assert_eq!(j["prec"], "f32");
    assert!(j["rel_error"].as_f64().unwrap() <= 1e-3);

    let out = farfield().args(["bench", "nufft", "--type", "4", "--dim", "1", "--modes", "8", "--points", "10"]).output().unwrap();
    assert!(!out.status.success());
    let out = farfield().args(["bench", "nufft", "--type", "1", "--dim", "3", "--modes", "8,8", "--points", "10"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--modes"));
}

#[test]
fn bench_nufft_sizes_beyond_the_limits_are_errors_not_aborts() {
    // `bench nufft --modes 1e15` once aborted ("memory allocation of N bytes failed")
    for (ty, dim, modes, points) in [("1", "1", "1e15", "10"), ("2", "1", "1e15", "10"), ("2", "3", "1e5", "10"),
                                     ("1", "2", "67108864", "10"), ("1", "1", "16", "1e13")] {
        let out = farfield()
            .args(["bench", "nufft", "--type", ty, "--dim", dim, "--modes", modes, "--points", points, "--threads", "1"])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "type {ty} dim {dim} modes {modes}: {err}");
        assert!(err.starts_with("farfield: error:") && !err.contains("panicked"), "{err}");
        assert!(err.contains("limit") || err.contains("exceeds"), "{err}");
    }
}

/// `bench spread` in both precisions on the CPU: every repetition in the JSON, the precision
/// named, the same kernel width (tol 1e-5 is above the single-precision floor).
#[test]
fn bench_spread_in_both_precisions() {
    let mut grids = Vec::new();
    for prec in ["f64", "f32"] {
        let out = farfield()
            .args(["bench", "spread", "--dim", "2", "--grid", "32", "--m", "2000", "--tol", "1e-5", "--reps", "2",
                   "--threads", "1", "--precision", prec, "--json"])
            .output()
            .unwrap();
        assert!(out.status.success(), "{prec}: {}", String::from_utf8_lossy(&out.stderr));
        let j = last_json(&out.stdout);
        assert_eq!(j["precision"], prec);
        assert_eq!(j["cpu"]["spread_reps_s"].as_array().map(|v| v.len()), Some(2), "{j}");
        assert_eq!(j["cpu"]["interp_reps_s"].as_array().map(|v| v.len()), Some(2), "{j}");
        let best = j["cpu"]["spread_s"].as_f64().unwrap();
        assert!(j["cpu"]["spread_reps_s"].as_array().unwrap().iter().all(|t| t.as_f64().unwrap() >= best));
        grids.push(j["w"].as_u64().unwrap());
    }
    assert_eq!(grids[0], grids[1], "the same kernel width at tol 1e-5 in both precisions");
}
