//! Progress bars (indicatif) on stderr, shown only when stderr is a terminal ([`visible`]):
//! piped or redirected stderr gets nothing, and stdout — where `--json` writes its one object —
//! is never touched. Lines printed to stdout while a bar is shown go through [`say!`], which
//! clears the bar, prints, and draws it again.
//!
//! Used by the runs that take seconds: `farfield demo` (CG iterations), `ewald` (plan,
//! evaluations, the `--check` reference), `fmm` (plan, executes, the error check), `gpu check`
//! (one step per kernel source and architecture) and `poisson --convergence` (one step per
//! case).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressFinish, ProgressStyle};
use std::io::IsTerminal;
use std::time::Duration;

/// Whether progress is shown: stderr is a terminal.
pub fn visible() -> bool {
    std::io::stderr().is_terminal()
}

/// A bar of `len` steps labelled `label`, drawn on stderr when `visible`, else hidden (all
/// calls on it are then no-ops). A visible bar redraws itself every 200 ms, so the elapsed time
/// moves during a long step; the message (`set_message`) says what runs.
pub fn bar(len: u64, label: &str, visible: bool) -> ProgressBar {
    if !visible {
        return ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::hidden());
    }
    // dropped unfinished (an error return), the bar clears itself before the error message
    let pb = ProgressBar::with_draw_target(Some(len), ProgressDrawTarget::stderr()).with_finish(ProgressFinish::AndClear);
    if let Ok(style) = ProgressStyle::with_template("{prefix:>4} [{bar:30}] {pos}/{len} {msg} ({elapsed})") {
        pb.set_style(style.progress_chars("=> "));
    }
    pb.set_prefix(label.to_string());
    pb.enable_steady_tick(Duration::from_millis(200));
    pb
}

/// `say!(pb, "format", args…)`: `println!` to stdout without breaking the bar `pb` (hidden or
/// not): the bar is cleared, the line printed, the bar drawn again.
macro_rules! say {
    ($pb:expr, $($arg:tt)*) => {
        $pb.suspend(|| println!($($arg)*))
    };
}
pub(crate) use say;
