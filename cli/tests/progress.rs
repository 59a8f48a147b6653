//! Progress on stderr for the runs that take seconds: shown when stderr is
//! a terminal (here a pseudo-terminal made by util-linux `script`), never on stdout, so the
//! JSON object stays the clean last line; nothing at all when stderr is a pipe.

mod common;
use common::{farfield, last_json};
use std::process::Command;

/// Runs `farfield args` with stderr on a pseudo-terminal and stdout in a file; returns (what the
/// terminal received, stdout), after checking that it succeeded.
fn on_a_terminal(args: &[&str]) -> (String, String) {
    let (ok, tty, stdout) = on_a_terminal_status(args);
    assert!(ok, "farfield {args:?} failed: {tty}");
    (tty, stdout)
}

/// [`on_a_terminal`] without the success check: (succeeded, terminal, stdout).
fn on_a_terminal_status(args: &[&str]) -> (bool, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("stdout");
    let quote = |s: &str| format!("'{}'", s.replace('\'', r"'\''"));
    let cmd = format!("{} {} > {}", quote(env!("CARGO_BIN_EXE_farfield")),
                      args.iter().map(|a| quote(a)).collect::<Vec<_>>().join(" "), quote(out.to_str().unwrap()));
    // util-linux script: -q quiet, -e the command's exit status, -c the command; log to /dev/null
    let r = Command::new("script").args(["-q", "-e", "-c", &cmd, "/dev/null"]).output()
        .expect("util-linux `script` is needed for this test (Debian: bsdutils, an essential package)");
    let tty = String::from_utf8_lossy(&r.stdout).into_owned();
    (r.status.success(), tty, std::fs::read_to_string(&out).unwrap())
}

#[test]
#[cfg(target_os = "linux")]
fn long_runs_show_progress_on_a_terminal_and_keep_stdout_clean() {
    let dir = tempfile::tempdir().unwrap();
    let pc = dir.path().join("pc");
    let cases: Vec<(Vec<&str>, &[&str])> = vec![
        (vec!["poisson", "--convergence", "--max-n", "32", "--method", "hockney", "--json", "--out", pc.to_str().unwrap()],
         &["poisson [", "/6 ", "gaussian N = 16: hockney"]),
        (vec!["ewald", "--nacl-cells", "2", "--tol", "1e-4", "--repeats", "3", "--check", "--threads", "1", "--json"],
         &["ewald [", "/7 ", "check: classic Ewald sum at tol 1e-7"]),
        (vec!["fmm", "--n", "3000", "--tol", "1e-4", "--reps", "2", "--threads", "1", "--json"], &["fmm [", "/4 ", "check: direct sum"]),
    ];
    for (args, want) in cases {
        let (tty, stdout) = on_a_terminal(&args);
        for w in want {
            assert!(tty.contains(w), "farfield {args:?}: '{w}' not on the terminal: {tty:?}");
        }
        // stdout: readable lines and the JSON object last, without any terminal control codes
        assert!(!stdout.contains('\x1b') && !stdout.contains('\r'), "farfield {args:?}: control codes on stdout: {stdout:?}");
        assert!(!stdout.contains(" [=") && !stdout.contains("] 0/"), "farfield {args:?}: a bar on stdout: {stdout}");
        let j = last_json(stdout.as_bytes());
        assert!(j.is_object(), "{j}");
    }
}

/// `gpu check`: one step per kernel source and architecture. Without NVRTC (no
/// `FARFIELD_NVRTC_LIB`, nothing on the loader path) the check fails after "loading NVRTC",
/// with the bar shown meanwhile and the JSON still the last stdout line.
#[test]
#[cfg(target_os = "linux")]
fn gpu_check_shows_progress_on_a_terminal() {
    let (ok, tty, stdout) = on_a_terminal_status(&["gpu", "check", "--arch", "sm_80,sm_90", "--json"]);
    let j = last_json(stdout.as_bytes());
    assert!(!stdout.contains('\x1b'), "control codes on stdout: {stdout:?}");
    assert_eq!(j["ok"].as_bool(), Some(ok), "{j}");
    assert!(tty.contains(" gpu [") && tty.contains("loading NVRTC"), "{tty:?}");
    let steps = 2 * j["results"].as_array().map_or(0, |r| r.len() / 2);
    if j["nvrtc"]["found"] == true {
        // every source for both architectures, e.g. "spread.cu sm_90"
        assert!(steps > 0 && tty.contains(&format!("/{steps} ")) && tty.contains("sm_90"), "{tty:?}");
    } else {
        eprintln!("gpu check: NVRTC not loadable here, only the bar before loading it was checked");
    }
}

#[test]
fn no_progress_when_stderr_is_a_pipe() {
    let dir = tempfile::tempdir().unwrap();
    for args in [vec!["poisson", "--convergence", "--max-n", "24", "--method", "hockney", "--source", "gaussian", "--json", "--out",
                      dir.path().to_str().unwrap()],
                 vec!["fmm", "--n", "2000", "--tol", "1e-3", "--threads", "1", "--json"],
                 vec!["ewald", "--nacl-cells", "1", "--tol", "1e-3", "--repeats", "1", "--check", "--threads", "1", "--json"]] {
        let out = farfield().args(&args).output().unwrap();
        assert!(out.status.success(), "farfield {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        assert!(out.stderr.is_empty(), "farfield {args:?} wrote to stderr: {}", String::from_utf8_lossy(&out.stderr));
        assert!(last_json(&out.stdout).is_object());
    }
}
