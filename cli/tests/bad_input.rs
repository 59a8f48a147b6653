//! Bad command-line input that new users hit: negative numbers reach the
//! tool's own checks instead of clap's "unexpected argument '-1'", whole-number options say what
//! they expect, and `.npy` inputs of the wrong shape (charges of shape (N, 1), a positions file
//! given as `--image`) are refused with the expected and the actual shape.

use npyz::WriterBuilder;
use std::path::Path;

mod common;
use common::farfield;

/// Runs `farfield args` and returns (exit code, stderr).
fn fails(args: &[&str]) -> (Option<i32>, String) {
    let out = farfield().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!out.status.success(), "farfield {args:?} succeeded: {}", String::from_utf8_lossy(&out.stdout));
    assert!(!err.contains("unexpected argument") && !err.contains("panicked"), "farfield {args:?}: {err}");
    (out.status.code(), err)
}

/// Writes a float64 C-order `.npy` file.
fn write_npy(path: &Path, shape: &[u64], data: &[f64]) {
    let mut buf = Vec::new();
    {
        let mut w = npyz::WriteOptions::<f64>::new().default_dtype().shape(shape).writer(&mut buf).begin_nd().unwrap();
        w.extend(data.iter().copied()).unwrap();
        w.finish().unwrap();
    }
    std::fs::write(path, buf).unwrap();
}

#[test]
fn negative_real_values_reach_our_range_checks() {
    // (arguments, the message of the tool's own check); exit status 1 = the tool's error
    let nufft = ["bench", "nufft", "--type", "1", "--dim", "1", "--modes", "16", "--points", "100"];
    let cases: Vec<(Vec<&str>, &str)> = vec![
        (vec!["ewald", "--tol", "-1"], "--tol -1 must be in (0, 1)"),
        (vec!["ewald", "--tol", "-1e-3"], "--tol -0.001 must be in (0, 1)"),
        (vec!["ewald", "--xi", "-2"], "--xi -2 must be a positive number"),
        (vec!["ewald", "--rc", "-0.5"], "--rc -0.5 must be a positive number"),
        (vec!["fmm", "--n", "100", "--tol", "-1e-6"], "--tol -0.000001 must lie in (0, 1)"),
        (vec!["fmm", "--n", "-5"], "--n: '-5' is not a positive integer"),
        (vec!["demo", "--tol", "-1"], "--tol -1 must be positive"),
        (vec!["bench", "spread", "--tol", "-0.1"], "--tol -0.1 must be in (0, 1)"),
        ([&nufft[..], &["--tol", "-1"]].concat(), "--tol -1 must be positive"),
        ([&nufft[..], &["--upsampfac", "-2"]].concat(), "--upsampfac -2 must be 0 (automatic) or in (1, 4]"),
        (vec!["bench", "nufft", "--type", "1", "--dim", "1", "--modes", "-16", "--points", "100"], "--modes: '-16' is not a positive integer"),
        (vec!["bench", "nufft", "--type", "1", "--dim", "1", "--modes", "16", "--points", "-1e3"], "--points: '-1e3' is not a positive integer"),
    ];
    for (args, msg) in cases {
        let (code, err) = fails(&args);
        assert_eq!(code, Some(1), "farfield {args:?}: {err}");
        assert!(err.starts_with("farfield: error: ") && err.contains(msg), "farfield {args:?}: expected '{msg}', got: {err}");
    }
}

#[test]
fn negative_whole_numbers_say_what_is_expected() {
    // clap's usage errors (exit status 2) with our parser's message, naming the option
    for (args, msg) in [
        (vec!["ewald", "--threads", "-1"], "invalid value '-1' for '--threads <K>': -1 is negative: expected a whole number ≥ 0"),
        (vec!["ewald", "--repeats", "0"], "0 is out of range: expected a whole number ≥ 1"),
        (vec!["ewald", "--grid", "-32"], "-32 is negative"),
        (vec!["fmm", "--n", "100", "--depth", "-1"], "invalid value '-1' for '--depth <D>': -1 is negative"),
        (vec!["fmm", "--n", "100", "--reps", "-2"], "-2 is negative: expected a whole number ≥ 1"),
        (vec!["poisson", "--method", "hockney", "--n", "-64"], "-64 is negative: expected a whole number from 2 to 4096"),
        (vec!["poisson", "--method", "hockney", "--n", "1"], "1 is out of range: expected a whole number from 2 to 4096"),
        (vec!["demo", "--iters", "-3"], "-3 is negative"),
        (vec!["bench", "spread", "--threads", "2.5"], "2.5 is not a whole number"),
        (vec!["bench", "nufft", "--type", "-1", "--dim", "1", "--modes", "8", "--points", "10"], "'--type <1|2|3>'"),
        // a forgotten value is reported as such, not swallowed into a confusing state
        (vec!["ewald", "--tol", "--check"], "invalid value '--check' for '--tol <T>'"),
    ] {
        let (code, err) = fails(&args);
        assert_eq!(code, Some(2), "farfield {args:?}: {err}");
        assert!(err.contains(msg), "farfield {args:?}: expected '{msg}', got: {err}");
    }
}

#[test]
fn a_negative_iflag_is_a_value() {
    let out = farfield()
        .args(["bench", "nufft", "--type", "2", "--dim", "1", "--modes", "16", "--points", "100", "--iflag", "-1", "--threads", "1",
               "--json"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(common::last_json(&out.stdout)["iflag"], -1);
}

/// A folder with 50 particles in a 2 nm box; charges of the given shape.
fn particle_folder(charges_shape: &[u64]) -> tempfile::TempDir {
    let d = tempfile::tempdir().unwrap();
    let n = 50;
    let xyz: Vec<f64> = (0..3 * n).map(|i| ((i * 37 % 101) as f64 + 0.5) / 101.0 * 2.0).collect();
    let q: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 1.0 } else { -1.0 }).collect();
    write_npy(&d.path().join("positions.npy"), &[n as u64, 3], &xyz);
    write_npy(&d.path().join("charges.npy"), charges_shape, &q);
    write_npy(&d.path().join("box.npy"), &[3], &[2.0, 2.0, 2.0]);
    d
}

#[test]
fn charges_of_the_wrong_shape_are_refused() {
    for shape in [[50u64, 1], [1, 50]] {
        let d = particle_folder(&shape);
        let want = format!("charges.npy has shape ({}, {}), expected (50,)", shape[0], shape[1]);
        for cmd in [&["ewald", "--input"][..], &["fmm", "--periodic", "--input"][..], &["fmm", "--input"][..]] {
            let out = farfield().args(cmd).arg(d.path()).output().unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(1), "{cmd:?} {shape:?}: {err}");
            assert!(err.contains(&want) && err.contains("positions.npy (50, 3)"), "{cmd:?} {shape:?}: {err}");
        }
    }
    // the same folder with 1-D charges runs (the check refuses only wrong shapes)
    let d = particle_folder(&[50]);
    let out = farfield().args(["ewald", "--tol", "1e-3", "--repeats", "1", "--threads", "1", "--input"]).arg(d.path()).output().unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // positions of the wrong shape
    write_npy(&d.path().join("positions.npy"), &[50, 2], &[0.5; 100]);
    let out = farfield().args(["ewald", "--input"]).arg(d.path()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("positions.npy has shape (50, 2), expected (N, 3)"), "{err}");
}

#[test]
fn a_positions_file_is_not_an_image() {
    let d = particle_folder(&[50]);
    let out_dir = d.path().join("out");
    let image_rule = "an image is a 2D .npy array of real pixel values";
    for (file, shape) in [("positions.npy", "(50, 3)"), ("charges.npy", "(50,)")] {
        let out = farfield().arg("demo").arg("--image").arg(d.path().join(file)).arg("--out").arg(&out_dir).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{file}: {err}");
        assert!(err.contains(&format!("{file}: shape {shape} is not an image")) && err.contains(image_rule), "{file}: {err}");
        assert!(!out_dir.join("mri_recon.png").exists(), "{file}: the demo ran");
    }
    let err = String::from_utf8_lossy(&farfield().arg("demo").arg("--image").arg(d.path().join("positions.npy")).output().unwrap().stderr)
        .into_owned();
    assert!(err.contains("looks like particle positions"), "{err}");
    // the transposed positions (3, N) and a too small picture are refused as well
    write_npy(&d.path().join("t.npy"), &[3, 50], &[0.5; 150]);
    write_npy(&d.path().join("small.npy"), &[4, 4], &[1.0; 16]);
    for (file, shape) in [("t.npy", "(3, 50)"), ("small.npy", "(4, 4)")] {
        let out = farfield().arg("demo").arg("--image").arg(d.path().join(file)).arg("--out").arg(&out_dir).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success() && err.contains(&format!("shape {shape} is not an image")), "{file}: {err}");
    }
}

/// `bench nufft --backend cuda`: on a machine with a CUDA device the case runs there and meets
/// its tolerance; without one the library's NoDevice message comes back as a clean failure.
/// Type 3 is refused with the reason either way.
#[test]
fn bench_nufft_on_cuda_runs_or_says_why_not() {
    let args = ["bench", "nufft", "--backend", "cuda", "--type", "1", "--dim", "2", "--modes", "32", "--points", "2000", "--tol", "1e-6",
                "--check", "50", "--json"];
    let out = farfield().args(args).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() {
        let j = common::last_json(&out.stdout);
        assert_eq!(j["backend"], "cuda", "{j}");
        assert!(j["rel_error"].as_f64().unwrap() < 1e-5, "{j}");
        assert!(j["spread_s"].is_null(), "the CPU stage split is not reported for CUDA: {j}");
    } else {
        assert_eq!(out.status.code(), Some(1), "{err}");
        assert!(err.contains("NUFFT: ") && err.contains("CUDA") && !err.contains("panicked"), "{err}");
    }
    let (code, err) = fails(&["bench", "nufft", "--backend", "cuda", "--type", "3", "--dim", "1", "--modes", "16", "--points", "100"]);
    assert_eq!(code, Some(1));
    assert!(err.contains("--backend cuda: type 3"), "{err}");
}
