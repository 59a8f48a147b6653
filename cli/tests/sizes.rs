//! Sizes on the command line that no machine can hold end with an error message and exit
//! status 1, never with an abort ("memory allocation of N bytes failed"), a crash or a hang
//! (bad-input class 2: the CLI included).

#[allow(dead_code)] // last_json is for the other test files
mod common;
use common::farfield;
use std::time::{Duration, Instant};

#[test]
fn huge_sizes_are_refused_with_a_message() {
    for args in [
        vec!["bench", "nufft", "--type", "1", "--dim", "1", "--modes", "1e15", "--points", "10"],
        vec!["bench", "nufft", "--type", "2", "--dim", "3", "--modes", "1e6", "--points", "10"],
        vec!["bench", "nufft", "--type", "1", "--dim", "1", "--modes", "100", "--points", "1e15"],
        vec!["bench", "spread", "--dim", "3", "--grid", "1e5", "--m", "10"],
        vec!["bench", "spread", "--dim", "1", "--grid", "64", "--m", "1e15"],
        vec!["fmm", "--n", "1e15"],
        vec!["poisson", "--method", "vico", "--n", "4096"],
        vec!["ewald", "--nacl-cells", "100000"],
    ] {
        let t = Instant::now();
        let out = farfield().args(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "farfield {args:?}: status {:?}, stderr: {err}", out.status);
        assert!(err.contains("farfield: error"), "farfield {args:?}: no error message: {err}");
        assert!(t.elapsed() < Duration::from_secs(30), "farfield {args:?} took {:?}", t.elapsed());
    }
}
