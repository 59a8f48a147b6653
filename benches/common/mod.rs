//! Helpers shared by the calibration benches (the `harness = false` programs under `benches/`
//! that print a table for the record or for a constant of the library): the command line, CPU
//! clocks and error norms; [`fmm`] holds the FMM benches' particle sets and direct sums. Each
//! bench includes this folder with `mod common;` and uses a part of it.

#![allow(dead_code)] // each bench uses a part of the module

pub mod fmm;

use std::str::FromStr;

/// The command line of a bench: `--name value` pairs and bare `--flag`s, in any order.
///
/// `cargo bench --bench NAME -- ARGS` runs the program with `ARGS --bench`. Without `--bench`
/// (as under `cargo test --benches` or `--all-targets`) the program is in smoke mode: the
/// command line is replaced by the bench's smoke arguments (a small case that finishes in
/// seconds), as criterion does in its test mode. `--help` prints the bench's module docstring.
pub struct Args {
    bench: &'static str,
    pairs: Vec<(String, Option<String>)>,
    /// Whether the program runs in smoke mode (no `--bench` on the command line).
    pub smoke: bool,
}

impl Args {
    /// Parses `std::env::args()`. `source` is the bench's own source text
    /// (`include_str!("NAME.rs")`): `--help` prints its `//!` docstring and exits. `smoke`:
    /// the arguments of smoke mode (see [`Args`]).
    pub fn parse(source: &'static str, smoke: &str) -> Args {
        let mut argv = std::env::args();
        let bench = leak(bench_name(&argv.next().unwrap_or_default()));
        let argv: Vec<String> = argv.collect();
        if argv.iter().any(|a| a == "--help" || a == "-h") {
            for l in source.lines().take_while(|l| l.starts_with("//!")) {
                let t = l.trim_start_matches("//!");
                println!("{}", t.strip_prefix(' ').unwrap_or(t));
            }
            std::process::exit(0);
        }
        let smoke_mode = !argv.iter().any(|a| a == "--bench");
        let words: Vec<String> = if smoke_mode {
            println!("{bench}: smoke run (no --bench on the command line): {smoke}");
            smoke.split_whitespace().map(String::from).collect()
        } else {
            argv.into_iter().filter(|a| a != "--bench").collect()
        };
        let mut pairs = Vec::new();
        let mut it = words.into_iter().peekable();
        while let Some(w) = it.next() {
            let Some(name) = w.strip_prefix("--") else {
                fail(bench, &format!("unexpected argument {w:?} (options are --name value)"));
            };
            let value = it.next_if(|v| !v.starts_with("--"));
            pairs.push((name.to_string(), value));
        }
        Args { bench, pairs, smoke: smoke_mode }
    }

    /// The value of `--name`, or `default` when absent. Integers may be written as `1e6`.
    pub fn get<T: FromStr>(&mut self, name: &str, default: T) -> T {
        self.opt(name).unwrap_or(default)
    }

    /// The value of `--name`, if given.
    pub fn opt<T: FromStr>(&mut self, name: &str) -> Option<T> {
        let v = self.take(name)?;
        let Some(v) = v else { fail(self.bench, &format!("--{name} needs a value")) };
        Some(parse_value(&v).unwrap_or_else(|| fail(self.bench, &format!("--{name}: cannot read {v:?}"))))
    }

    /// The comma-separated list `--name a,b,c`, or `default` when absent.
    pub fn list<T: FromStr + Clone>(&mut self, name: &str, default: &[T]) -> Vec<T> {
        match self.opt::<String>(name) {
            None => default.to_vec(),
            Some(s) => s
                .split(',')
                .map(|v| parse_value(v.trim()).unwrap_or_else(|| fail(self.bench, &format!("--{name}: cannot read {v:?}"))))
                .collect(),
        }
    }

    /// Whether the bare flag `--name` is given.
    pub fn flag(&mut self, name: &str) -> bool {
        match self.take(name) {
            None => false,
            Some(None) => true,
            Some(Some(v)) => fail(self.bench, &format!("--{name} takes no value (got {v:?})")),
        }
    }

    /// Ends the parsing: an option not read by the bench is an error.
    pub fn finish(self) {
        if let Some((name, _)) = self.pairs.first() {
            fail(self.bench, &format!("unknown option --{name}"));
        }
    }

    /// Exits with `message` as an error of this bench.
    pub fn fail(&self, message: &str) -> ! {
        fail(self.bench, message)
    }

    fn take(&mut self, name: &str) -> Option<Option<String>> {
        let i = self.pairs.iter().position(|(n, _)| n == name)?;
        Some(self.pairs.remove(i).1)
    }
}

/// `fmm_order` from `…/deps/fmm_order-0123abcd`.
fn bench_name(argv0: &str) -> &str {
    let file = argv0.rsplit('/').next().unwrap_or(argv0);
    file.rsplit_once('-').map_or(file, |(n, _)| n)
}

fn leak(s: &str) -> &'static str {
    Box::leak(s.to_string().into_boxed_str())
}

/// `s` as a `T`; an integer `T` also from a whole number in floating-point notation (`1e6`).
fn parse_value<T: FromStr>(s: &str) -> Option<T> {
    s.parse().ok().or_else(|| {
        let f: f64 = s.parse().ok()?;
        (f.fract() == 0.0 && f.abs() < 9e15).then(|| (f as i64).to_string().parse().ok())?
    })
}

fn fail(bench: &str, message: &str) -> ! {
    eprintln!("{bench}: {message}; see --help");
    std::process::exit(2)
}

/// CPU time of the calling thread, seconds: timings that do not depend on the machine's load.
pub fn thread_cpu() -> f64 {
    clock(libc::CLOCK_THREAD_CPUTIME_ID)
}

/// CPU time of the whole process (all threads), seconds.
pub fn process_cpu() -> f64 {
    clock(libc::CLOCK_PROCESS_CPUTIME_ID)
}

fn clock(id: libc::clockid_t) -> f64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec out-pointer.
    unsafe { libc::clock_gettime(id, &mut ts) };
    ts.tv_sec as f64 + 1e-9 * ts.tv_nsec as f64
}

/// Relative l2 error `‖a − b‖ / ‖b‖`.
#[allow(unused_imports)] // not every bench compares arrays
pub use farfield::poisson::testcases::rel_l2;
