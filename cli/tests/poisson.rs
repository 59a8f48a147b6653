//! Runs the built `farfield poisson`: one small case with the JSON summary, and a small
//! convergence sweep writing the PNG and the Markdown table.

mod common;
use common::{farfield, last_json};

#[test]
fn poisson_vico_dct_n32_json() {
    let out = farfield()
        .args(["poisson", "--method", "vico-dct", "--n", "32", "--threads", "2", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "poisson failed: {}", String::from_utf8_lossy(&out.stderr));
    let j = last_json(&out.stdout);
    for key in ["method", "n", "source", "rel_error", "plan_s", "solve_s", "fft_pair_s", "peak_rss_bytes",
                "plan_peak_rss_bytes", "energy_rel_error", "solve_over_fft_pair", "threads"] {
        assert!(j.get(key).is_some(), "missing key {key} in {j}");
    }
    assert_eq!(j["method"], "vico-dct");
    assert_eq!(j["n"], 32);
    assert_eq!(j["source"], "gaussian");
    let e = j["rel_error"].as_f64().unwrap();
    assert!(e <= 1e-8, "rel error {e}");
    assert!(j["energy_rel_error"].as_f64().unwrap() < 1e-8);
    for key in ["plan_s", "solve_s", "fft_pair_s"] {
        assert!(j[key].as_f64().unwrap() > 0.0, "{key} = {}", j[key]);
    }
    // peak memory: at least the (2N)³ doubled grid's real array (8·64³ bytes)
    assert!(j["peak_rss_bytes"].as_u64().unwrap() > 8 * 64 * 64 * 64);
    // plan_peak_rss_bytes is null where /proc/self/clear_refs is unavailable
    if let Some(p) = j["plan_peak_rss_bytes"].as_u64() {
        assert!(p > 8 * 64 * 64 * 64, "plan peak {p}");
    }
}

#[test]
fn poisson_hockney_sphere_and_bad_arguments() {
    let out = farfield()
        .args(["poisson", "--method", "hockney", "--n", "24", "--source", "sphere", "--reps", "1", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let j = last_json(&out.stdout);
    assert_eq!(j["source"], "sphere");
    let e = j["rel_error"].as_f64().unwrap();
    assert!(e > 1e-4 && e < 5e-3, "sphere N=24 rel error {e}"); // second order: 1.4e-3 measured

    assert!(!farfield().args(["poisson", "--n", "16"]).output().unwrap().status.success()); // no method
    assert!(!farfield().args(["poisson", "--method", "fmm", "--n", "16"]).output().unwrap().status.success());
    let out = farfield().args(["poisson", "--convergence", "--max-n", "8"]).output().unwrap();
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("--max-n"));
}

#[test]
fn poisson_convergence_small_sweep() {
    let dir = tempfile::tempdir().unwrap();
    let out = farfield()
        .args(["poisson", "--convergence", "--max-n", "32", "--threads", "2", "--json", "--out"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert!(out.status.success(), "sweep failed: {}", String::from_utf8_lossy(&out.stderr));
    let j = last_json(&out.stdout);
    assert_eq!(j["ns"], serde_json::json!([16, 24, 32]));
    let png = dir.path().join("poisson_convergence.png");
    let md = dir.path().join("poisson_convergence.md");
    assert_eq!(j["png"].as_str().unwrap(), png.display().to_string());
    let bytes = std::fs::read(&png).unwrap();
    assert!(bytes.starts_with(b"\x89PNG\r\n\x1a\n"), "not a PNG");
    let table = std::fs::read_to_string(&md).unwrap();
    assert!(table.contains("| 32 |") && table.contains("Hockney") && table.contains("Vico–Greengard DCT"), "{table}");
    // errors as in the library's tests: Vico/DCT spectral, Hockney second order
    let g = &j["results"]["gaussian"];
    let dct = g["vico-dct"]["rel_error"].as_array().unwrap();
    assert!(dct[2].as_f64().unwrap() <= 1e-8);
    let vico = g["vico"]["rel_error"].as_array().unwrap();
    assert!((vico[2].as_f64().unwrap() - dct[2].as_f64().unwrap()).abs() < 1e-12);
    let slope = j["orders"]["gaussian_hockney"]["slope"].as_f64().unwrap();
    assert!((-2.2..=-1.6).contains(&slope), "Hockney slope {slope}");
    let slope = j["orders"]["sphere_vico-dct"]["slope"].as_f64().unwrap();
    assert!((-2.6..=-1.7).contains(&slope), "sphere slope {slope}");
}
