//! JSON summaries: every subcommand with `--json` prints exactly one JSON object, compact, on
//! the last line of stdout (after its human-readable lines), so scripts can take
//! `stdout.splitlines()[-1]`.

use serde_json::Value;
use std::io::Write;

/// Prints `v` as one line of compact JSON on stdout and flushes.
pub fn emit(v: &Value) {
    let mut out = std::io::stdout().lock();
    // serde_json never emits raw newlines in compact mode (they are escaped inside strings)
    let _ = writeln!(out, "{v}");
    let _ = out.flush();
}
