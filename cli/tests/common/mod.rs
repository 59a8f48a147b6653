//! Helpers shared by the CLI integration tests.

use std::process::Command;

/// The built `farfield` binary.
pub fn farfield() -> Command {
    Command::new(env!("CARGO_BIN_EXE_farfield"))
}

/// The JSON object on the last line of a subcommand's stdout.
pub fn last_json(stdout: &[u8]) -> serde_json::Value {
    let s = String::from_utf8_lossy(stdout);
    let line = s.lines().last().expect("no output");
    serde_json::from_str(line).unwrap_or_else(|e| panic!("last line is not JSON ({e}): {line}"))
}
