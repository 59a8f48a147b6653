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

use clap::{Parser, Subcommand};
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

fn main() -> ExitCode {
    let cli = Cli::parse();
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
