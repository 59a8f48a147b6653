//! Process memory readings (Linux; `None` elsewhere or when `/proc` is not readable).
//!
//! * Resident set size and its high-water mark: `VmRSS` / `VmHWM` from `/proc/self/status`.
//! * Process peak: `getrusage(RUSAGE_SELF).ru_maxrss` (KiB on Linux).
//! * Peak of one phase (e.g. plan creation): [`Phase`] resets the high-water mark with
//!   `echo 5 > /proc/self/clear_refs` (Linux ≥ 4.0), so `VmHWM` afterwards is the peak since the
//!   reset; the phase's peak increase is `VmHWM(end) − VmRSS(start)`. The reset also lowers
//!   what `ru_maxrss` reports, so every peak seen before a reset is remembered here and
//!   [`peak_rss_bytes`] is the maximum over all of them.

use std::sync::atomic::{AtomicU64, Ordering};

/// Difference allowed between a `VmHWM` and a `VmRSS` read at about the same time (bytes): the
/// kernel batches its resident counters per CPU, so the two may disagree by a little (about
/// 100 KB measured).
const RSS_DRIFT: u64 = 1 << 20;

/// Largest peak observed before any high-water-mark reset (bytes).
static PEAK_SEEN: AtomicU64 = AtomicU64::new(0);

/// A `kB` field of `/proc/self/status` in bytes.
fn status_field(name: &str) -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with(name) && l[name.len()..].starts_with(':'))?;
    let kib: u64 = line[name.len() + 1..].trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

/// Current resident set size (`VmRSS`).
pub fn rss_bytes() -> Option<u64> {
    status_field("VmRSS")
}

/// Resident high-water mark since process start or the last reset (`VmHWM`).
pub fn hwm_bytes() -> Option<u64> {
    status_field("VmHWM")
}

/// `getrusage(RUSAGE_SELF).ru_maxrss` in bytes.
pub fn maxrss_bytes() -> Option<u64> {
    // SAFETY: getrusage writes into the zeroed struct we pass.
    let mut ru: libc::rusage = unsafe { std::mem::zeroed() };
    let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, &mut ru) };
    if rc != 0 || ru.ru_maxrss <= 0 {
        return None;
    }
    let scale = if cfg!(target_os = "macos") { 1 } else { 1024 };
    Some(ru.ru_maxrss as u64 * scale)
}

fn remember_peak() {
    let p = hwm_bytes().into_iter().chain(maxrss_bytes()).max().unwrap_or(0);
    PEAK_SEEN.fetch_max(p, Ordering::Relaxed);
}

/// Peak resident memory of the process so far (bytes), including peaks before any reset.
pub fn peak_rss_bytes() -> Option<u64> {
    remember_peak();
    let p = PEAK_SEEN.load(Ordering::Relaxed);
    (p > 0).then_some(p)
}

/// Peak-memory measurement of one phase of the program.
pub struct Phase {
    start_rss: Option<u64>,
    /// Whether the high-water mark was reset at the start (else no phase peak is reported).
    reset: bool,
}

impl Phase {
    /// Starts a phase: remembers the process peak so far, resets `VmHWM` and records `VmRSS`.
    pub fn begin() -> Phase {
        remember_peak();
        let ok = std::fs::write("/proc/self/clear_refs", "5").is_ok();
        let start_rss = rss_bytes();
        // the reset worked if the high-water mark now sits at the current RSS (within the
        // drift between the two reads)
        let reset = ok && matches!((hwm_bytes(), start_rss), (Some(h), Some(r)) if h <= r + RSS_DRIFT);
        Phase { start_rss, reset }
    }

    /// Peak resident memory added since [`Phase::begin`] (`VmHWM − VmRSS(start)`), or `None`
    /// when the high-water mark could not be reset.
    pub fn peak_increase(&self) -> Option<u64> {
        if !self.reset {
            return None;
        }
        Some(hwm_bytes()?.saturating_sub(self.start_rss?))
    }

    /// Resident memory added since [`Phase::begin`] and still held (`VmRSS(now) − VmRSS(start)`).
    pub fn retained(&self) -> Option<u64> {
        Some(rss_bytes()?.saturating_sub(self.start_rss?))
    }
}

/// `bytes` as MiB for display (`"n/a"` for `None`).
pub fn mib(bytes: Option<u64>) -> String {
    match bytes {
        Some(b) => format!("{:.1} MiB", b as f64 / (1u64 << 20) as f64),
        None => "n/a".to_string(),
    }
}

/// `MemAvailable` from `/proc/meminfo` (bytes).
pub fn available_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = s.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line["MemAvailable:".len()..].trim().trim_end_matches("kB").trim().parse().ok()?;
    Some(kib * 1024)
}

/// Refuses a run whose estimated memory (`bytes`, an upper estimate of the tool's inputs,
/// outputs and the library's plan) exceeds what the system can give ([`available_bytes`]),
/// with a message naming the request, instead of letting an allocation fail later: sizes on
/// the command line are bounded before anything is generated. Where the available memory is
/// unknown, only sizes beyond 2⁶⁰ bytes are refused.
pub fn ensure_fits(bytes: f64, what: &str) -> crate::CliResult<()> {
    let limit = available_bytes().map_or(2f64.powi(60), |b| b as f64);
    if !(bytes <= limit) {
        return Err(format!(
            "{what} needs about {:.3e} bytes of memory, more than the {:.3e} bytes available here; use a smaller size",
            bytes, limit
        ));
    }
    Ok(())
}

/// `n` values `f()` (in order), allocated fallibly: an allocation failure is an error message
/// (with the byte count), not an abort of the tool. Arrays of 4 MiB and more are asked for
/// transparent huge pages before they are filled ([`farfield::error::advise_huge_pages`]), as
/// NumPy asks for its arrays by default, so that the benchmarks' inputs and outputs are backed
/// like those the peers (FINUFFT, ducc0 through NumPy) read and write in the same run.
pub fn try_vec<T>(n: usize, what: &str, f: impl FnMut() -> T) -> crate::CliResult<Vec<T>> {
    let mut v = farfield::error::try_vec(n, what).map_err(|e| e.to_string())?;
    farfield::error::advise_huge_pages(v.as_mut_ptr() as *mut u8, v.capacity() * std::mem::size_of::<T>());
    v.extend(std::iter::repeat_with(f).take(n));
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The phase's peak covers every resident size seen while it ran. Other tests run in the
    /// same process at the same time and allocate and free their own memory, so the test
    /// compares with the resident size read while the 64 MiB were held, not with
    /// `start + 64 MiB`: a test that freed memory meanwhile lowers both alike (CI once saw a
    /// phase peak of 55.6 MiB for the 64 MiB this way), within [`RSS_DRIFT`].
    #[test]
    fn phase_sees_a_touched_allocation() {
        if rss_bytes().is_none() {
            return; // no /proc
        }
        let ph = Phase::begin();
        let mut v = vec![0u8; 64 << 20];
        for i in (0..v.len()).step_by(4096) {
            v[i] = 1;
        }
        std::hint::black_box(&v);
        let held = rss_bytes().unwrap();
        drop(v);
        assert!(held >= 64 << 20, "resident size {held} while 64 MiB were touched");
        if let (Some(p), Some(start)) = (ph.peak_increase(), ph.start_rss) {
            assert!(start + p + RSS_DRIFT >= held, "phase peak {} below the resident size {held} seen in the phase", start + p);
        }
        assert!(peak_rss_bytes().unwrap() + RSS_DRIFT >= held);
    }
}
