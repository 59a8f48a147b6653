//! `farfield`: the command-line tool of the farfield library.
//!
//! * `farfield demo` — MRI-style reconstruction from golden-angle radial k-space samples
//!   (2D type-2 NUFFT forward model, type-1 adjoint with ramp density compensation, then
//!   conjugate gradients on the density-weighted normal equations), with a PNG figure.
//! * `farfield bench nufft` — one timed NUFFT case (plan, setpts, execute, stage split,
//!   throughput, error against a direct sum on a random subset of outputs).
//! * `farfield poisson` — the free-space Poisson solvers on exact test problems (error, time
//!   against the FFT pair of the doubled grid, peak memory); `--convergence` sweeps N and
//!   writes a log-log PNG and a Markdown table.
//! * `farfield ewald` — periodic electrostatics of a charge system (spectral Ewald, SPME or the
//!   classic Ewald sum): energy, time per evaluation, parameters, RMS force error (`--check`).
//! * `farfield fmm` — one fast multipole run (open or periodic): chosen p and depth, time per
//!   stage, error against a direct sum on a subset (or Ewald, periodic).
//! * `farfield gpu check` — compiles every CUDA kernel with NVRTC (and ptxas) for the given
//!   architectures, without a GPU.
//!
//! All print human-readable lines; with `--json` the last stdout line is one JSON object.
//! Numeric options accept negative values as values (checked by the tool, see [`args`]);
//! long runs show progress on stderr when it is a terminal ([`progress`]).

mod args;
mod bench;
mod bench_spread;
mod bench_type3;
mod demo;
mod direct;
mod ewald;
mod fmm;
mod gpu;
mod json;
mod mem;
mod npy;
mod phantom;
mod plot;
mod poisson;
mod progress;
mod system;

use clap::{FromArgMatches, Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(name = "farfield", version, about = "farfield: fast long-range solvers — demos and benchmarks")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// MRI-style reconstruction demo: image → radial k-space (type-2 NUFFT) → adjoint and CG
    /// reconstructions (type-1 NUFFT), timings, errors and a PNG figure; then the free-space
    /// Poisson solvers on a Gaussian at N = 64; periodic electrostatics of JAC DHFR and NaCl;
    /// the FMM on a Plummer cluster of 1e5 charges.
    Demo(demo::DemoArgs),
    /// Benchmarks.
    #[command(subcommand)]
    Bench(BenchCommand),
    /// Free-space Poisson solvers on exact test problems: one case (error, plan and solve
    /// time against one r2c+c2r FFT pair of the doubled grid, peak memory), or a convergence
    /// sweep with a log-log PNG and a Markdown table.
    Poisson(poisson::PoissonArgs),
    /// Periodic electrostatics (spectral Ewald, SPME, classic Ewald sum) of a charge system
    /// from a positions/charges/box .npy folder (or an NaCl crystal): energy, time per
    /// evaluation (real / k-space), chosen parameters, and with --check the RMS force error
    /// against the classic Ewald sum.
    Ewald(ewald::EwaldArgs),
    /// Fast multipole method for 1/r (open or periodic): time per stage, chosen p and depth,
    /// error against a direct sum (or Ewald, periodic).
    Fmm(fmm::FmmArgs),
    /// GPU (CUDA) tools: `gpu check` compiles every kernel with NVRTC (and ptxas) without a GPU.
    #[command(subcommand)]
    Gpu(gpu::GpuCommand),
}

#[derive(Subcommand, Debug)]
enum BenchCommand {
    /// Time one NUFFT case (type 1 or 2, 1D–3D) and check it against direct sums.
    Nufft(bench::NufftBenchArgs),
    /// Time spreading and interpolation on the CPU or a CUDA device (`--backend cuda
    /// --method gm|gm-sort|sm|csr|group|auto`), GPU results checked against the CPU.
    Spread(bench_spread::SpreadBenchArgs),
}

/// The tool's entry point (the `farfield` binary's `main`): parses the command line, runs the
/// subcommand, prints an error on stderr and returns failure on error.
pub fn main() -> ExitCode {
    // the derived parser, with negative numbers accepted as option values (`args::command`)
    let cli = Cli::from_arg_matches(&args::command::<Cli>().get_matches()).unwrap_or_else(|e| e.exit());
    let result = match cli.command {
        Command::Demo(args) => demo::run(&args),
        Command::Bench(BenchCommand::Nufft(args)) => bench::run_nufft(&args),
        Command::Bench(BenchCommand::Spread(args)) => bench_spread::run(&args),
        Command::Poisson(args) => poisson::run(&args),
        Command::Ewald(args) => ewald::run(&args),
        Command::Fmm(args) => fmm::run(&args),
        Command::Gpu(gpu::GpuCommand::Check(args)) => gpu::run_check(&args),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("farfield: error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Error type of the tool: a message (library errors, I/O errors and argument problems are
/// all turned into text for the user).
pub type CliResult<T> = Result<T, String>;

#[cfg(test)]
mod tests {
    use super::*;

    /// Every option that takes a value, in every subcommand, reads a negative number as its
    /// value (`--tol -1` was once "unexpected argument '-1'").
    #[test]
    fn every_value_option_accepts_negative_numbers() {
        fn walk(cmd: &clap::Command, path: &str, checked: &mut usize) {
            for a in cmd.get_arguments().filter(|a| a.get_action().takes_values() && !a.is_positional()) {
                assert!(a.is_allow_negative_numbers_set(), "{path} --{}", a.get_long().unwrap_or("?"));
                *checked += 1;
            }
            // the numeric ones take any dash value (`-1e-3` is not a number to clap)
            for name in ["tol", "threads", "xi", "rc", "upsampfac", "seed"] {
                if let Some(a) = cmd.get_arguments().find(|a| a.get_long() == Some(name)) {
                    assert!(a.is_allow_hyphen_values_set(), "{path} --{name}");
                }
            }
            for s in cmd.get_subcommands() {
                walk(s, &format!("{path} {}", s.get_name()), checked);
            }
        }
        let mut checked = 0;
        walk(&args::command::<Cli>(), "farfield", &mut checked);
        assert!(checked > 50, "only {checked} options found");
        let parse = |v: &[&str]| Cli::from_arg_matches(&args::command::<Cli>().try_get_matches_from(v).map_err(|e| e.to_string())?)
            .map_err(|e| e.to_string());
        match parse(&["farfield", "ewald", "--tol", "-1e-3", "--xi", "-2.5e-1", "--rc", "-.5"]).unwrap().command {
            Command::Ewald(a) => assert_eq!((a.tol, a.xi, a.rc), (-1e-3, Some(-0.25), Some(-0.5))),
            c => panic!("{c:?}"),
        }
        match parse(&["farfield", "bench", "nufft", "--type", "2", "--dim", "1", "--modes", "-8", "--points", "10", "--iflag", "-1"]).unwrap().command {
            Command::Bench(BenchCommand::Nufft(a)) => assert_eq!((a.modes.as_str(), a.iflag), ("-8", Some(-1))),
            c => panic!("{c:?}"),
        }
        // a negative whole number reaches our parser and its message
        let e = parse(&["farfield", "fmm", "--n", "10", "--threads", "-2"]).unwrap_err();
        assert!(e.contains("-2 is negative: expected a whole number ≥ 0"), "{e}");
        // a forgotten number is reported by the number parser, naming the option
        let e = parse(&["farfield", "ewald", "--tol", "--json"]).unwrap_err();
        assert!(e.contains("'--tol <T>'"), "{e}");
        // a dash that is not a number is still a flag for a non-numeric option
        assert!(parse(&["farfield", "ewald", "--out", "--json"]).is_err());
    }
}
