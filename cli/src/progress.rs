//! Progress bars (indicatif) on stderr; hidden when stderr is not a terminal or with `--json`.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// A bar of `len` steps labelled `label`, drawn on stderr when `visible`, else hidden (all
/// calls on it are then no-ops).
pub fn bar(len: u64, label: &str, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    }
    let pb = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr());
    if let Ok(style) = ProgressStyle::with_template("{prefix:>4} [{bar:30}] {pos}/{len} {msg} ({elapsed})") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_prefix(label.to_string());
    pb
}
