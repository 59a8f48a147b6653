//! Command-line parsing rules shared by every subcommand.
//!
//! * Negative numbers are values, not flags: [`command`] sets `allow_negative_numbers` on every
//!   option that takes a value, in every subcommand, so `--tol -1` reaches the tool's own check
//!   ("--tol -1 must be in (0, 1)") instead of clap reporting an unexpected argument `-1`.
//!   Options whose value is a number (parsed as `f64`, `usize`, …) also take any value that
//!   starts with `-` (`allow_hyphen_values`): clap does not count `-1e-3` as a negative number,
//!   and a forgotten value (`--tol --json`) is then reported by the number parser
//!   ("invalid value '--json' for '--tol <T>'"). Options with other values (`--out DIR`,
//!   `--modes N1,N2`) still read a non-numeric `-x` as a flag.
//! * Whole-number options (thread counts, repetitions, sizes, seeds) are parsed by [`whole`] and
//!   [`whole_in`], whose messages say what is expected ("-1 is negative: expected a whole number
//!   ≥ 0") rather than Rust's "invalid digit found in string". Real-valued options (tolerances,
//!   ξ, r_c, σ) are parsed as `f64` and checked by each subcommand with a message naming the
//!   option and its range.

use clap::{Arg, Command, CommandFactory};
use std::any::TypeId;

/// Whether `a`'s values are numbers (its value parser yields a Rust number type).
fn is_numeric(a: &Arg) -> bool {
    let t = a.get_value_parser().type_id();
    [TypeId::of::<f64>(), TypeId::of::<f32>(), TypeId::of::<usize>(), TypeId::of::<u64>(), TypeId::of::<u32>(), TypeId::of::<u8>(),
     TypeId::of::<i64>(), TypeId::of::<i32>()]
        .iter()
        .any(|id| t == *id)
}

/// Sets `allow_negative_numbers` on every value-taking option of `cmd` and of all its
/// subcommands, recursively, and `allow_hyphen_values` on those whose values are numbers.
pub fn numbers_as_values(cmd: Command) -> Command {
    let cmd = cmd.mut_args(|a: Arg| {
        if !a.get_action().takes_values() {
            return a;
        }
        let numeric = is_numeric(&a);
        a.allow_negative_numbers(true).allow_hyphen_values(numeric)
    });
    let names: Vec<String> = cmd.get_subcommands().map(|s| s.get_name().to_string()).collect();
    names.into_iter().fold(cmd, |c, n| c.mut_subcommand(n, numbers_as_values))
}

/// The tool's command: the derived one with [`numbers_as_values`] applied.
pub fn command<C: CommandFactory>() -> Command {
    numbers_as_values(C::command())
}

/// Parses a whole number `≥ 0` (plain or in `1e6` notation) into `T`, with a message that
/// says what is expected when `s` is negative, fractional, not a number or too large for `T`.
pub fn whole<T: TryFrom<u64>>(s: &str) -> Result<T, String> {
    parse_whole(s, 0, u64::MAX)
}

/// Like [`whole`], restricted to `lo ..= hi`; for `value_parser = whole_in::<T>(lo, hi)`.
pub fn whole_in<T: TryFrom<u64> + Clone + Send + Sync + 'static>(lo: u64, hi: u64)
                                                                 -> impl Fn(&str) -> Result<T, String> + Clone + Send + Sync + 'static {
    move |s: &str| parse_whole(s, lo, hi)
}

/// Parses three counts `≥ 1`, "A,B,C", or one count "K" meaning "K,K,K" (e.g. `--replicate`).
pub fn counts3(s: &str) -> Result<[usize; 3], String> {
    let v: Vec<usize> = s.split(',').map(|p| parse_whole::<usize>(p, 1, u64::MAX)).collect::<Result<_, _>>()?;
    match v[..] {
        [k] => Ok([k; 3]),
        [a, b, c] => Ok([a, b, c]),
        _ => Err(format!("'{s}': expected three counts A,B,C or one count K")),
    }
}

/// The range `lo ..= hi` in words.
fn expected(lo: u64, hi: u64) -> String {
    match (lo, hi) {
        (lo, u64::MAX) => format!("a whole number ≥ {lo}"),
        (lo, hi) => format!("a whole number from {lo} to {hi}"),
    }
}

fn parse_whole<T: TryFrom<u64>>(s: &str, lo: u64, hi: u64) -> Result<T, String> {
    let t = s.trim().replace('_', "");
    let v: u64 = match t.parse::<u64>() {
        Ok(v) => v,
        Err(_) => match t.parse::<f64>() {
            Ok(x) if x.is_nan() => return Err(format!("{s} is not a number: expected {}", expected(lo, hi))),
            Ok(x) if x < 0.0 => return Err(format!("{s} is negative: expected {}", expected(lo, hi))),
            Ok(x) if x.fract() != 0.0 => return Err(format!("{s} is not a whole number: expected {}", expected(lo, hi))),
            // 2^64 and above (and +inf) do not fit u64
            Ok(x) if x < 18446744073709551616.0 => x as u64,
            Ok(_) => return Err(format!("{s} is too large: expected {}", expected(lo, hi.min(max_of::<T>())))),
            Err(_) => return Err(format!("'{s}' is not a number: expected {}", expected(lo, hi))),
        },
    };
    if v < lo || v > hi {
        return Err(format!("{v} is out of range: expected {}", expected(lo, hi.min(max_of::<T>()))));
    }
    T::try_from(v).map_err(|_| format!("{v} is too large: expected {}", expected(lo, hi.min(max_of::<T>()))))
}

/// The largest `u64` that converts into `T` (binary search; `T` is an integer type).
fn max_of<T: TryFrom<u64>>() -> u64 {
    if T::try_from(u64::MAX).is_ok() {
        return u64::MAX;
    }
    let (mut ok, mut hi) = (0u64, u64::MAX);
    while hi - ok > 1 {
        let mid = ok + (hi - ok) / 2;
        if T::try_from(mid).is_ok() {
            ok = mid;
        } else {
            hi = mid;
        }
    }
    ok
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn three_counts() {
        assert_eq!(counts3("7,7,8"), Ok([7, 7, 8]));
        assert_eq!(counts3("3"), Ok([3, 3, 3]));
        assert!(counts3("1,2").unwrap_err().contains("three counts"));
        assert!(counts3("0,1,1").unwrap_err().contains("≥ 1"));
        assert!(counts3("a").is_err());
    }

    #[test]
    fn whole_numbers_and_their_messages() {
        assert_eq!(whole::<usize>("12"), Ok(12));
        assert_eq!(whole::<usize>("0"), Ok(0));
        assert_eq!(whole::<u64>("1e6"), Ok(1_000_000));
        assert_eq!(whole::<u64>("1_000"), Ok(1000));
        assert_eq!(whole::<usize>("-1"), Err("-1 is negative: expected a whole number ≥ 0".to_string()));
        assert_eq!(whole::<usize>("-1e3").unwrap_err(), "-1e3 is negative: expected a whole number ≥ 0");
        assert_eq!(whole::<usize>("2.5").unwrap_err(), "2.5 is not a whole number: expected a whole number ≥ 0");
        assert_eq!(whole::<usize>("four").unwrap_err(), "'four' is not a number: expected a whole number ≥ 0");
        assert_eq!(whole::<u32>("5000000000").unwrap_err(), "5000000000 is too large: expected a whole number from 0 to 4294967295");
        assert_eq!(whole::<i32>("3000000000").unwrap_err(), "3000000000 is too large: expected a whole number from 0 to 2147483647");
        assert!(whole::<u64>("1e30").unwrap_err().contains("too large"));
        let p = whole_in::<u64>(2, 4096);
        assert_eq!(p("64"), Ok(64));
        assert_eq!(p("-64").unwrap_err(), "-64 is negative: expected a whole number from 2 to 4096");
        assert_eq!(p("1").unwrap_err(), "1 is out of range: expected a whole number from 2 to 4096");
        assert_eq!(p("5000").unwrap_err(), "5000 is out of range: expected a whole number from 2 to 4096");
        assert_eq!(whole_in::<usize>(1, u64::MAX)("0").unwrap_err(), "0 is out of range: expected a whole number ≥ 1");
    }
}
