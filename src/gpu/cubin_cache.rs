//! On-disk cache of NVRTC's output (PTX and CUBIN per kernel source and architecture), so that
//! only the first process on a machine pays for compiling the embedded kernels (seconds per
//! source; about 10 s for all of them on one core), as CuPy keeps its kernel cache and the
//! CUDA driver its JIT cache.
//!
//! Folder: `FARFIELD_CUDA_CACHE` when set (`0`, `off` or empty: no disk cache), else
//! `$XDG_CACHE_HOME/farfield/cuda`, else `$HOME/.cache/farfield/cuda`. An entry is named by
//! the source file, the architecture and a 64-bit FNV-1a hash of the source text, the
//! architecture, the NVRTC version and this library's version, so a changed kernel, compiler or
//! library never reads an old entry. Entries are written to a temporary name and renamed, so a
//! reader sees a whole file or none; any I/O error only means a miss (compile as before).

use std::path::{Path, PathBuf};

/// The cache folder, or `None` when the disk cache is off or no folder can be named.
pub fn dir() -> Option<PathBuf> {
    if let Some(v) = std::env::var_os("FARFIELD_CUDA_CACHE") {
        let s = v.to_string_lossy();
        if s.is_empty() || s == "0" || s.eq_ignore_ascii_case("off") {
            return None;
        }
        return Some(PathBuf::from(v));
    }
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").filter(|v| !v.is_empty()).map(|h| PathBuf::from(h).join(".cache")))?;
    Some(base.join("farfield").join("cuda"))
}

fn fnv1a(parts: &[&[u8]]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for p in parts {
        for &b in p.iter().chain(&[0xffu8]) {
            h ^= b as u64;
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
    h
}

/// The entry name of source `name` (text `src`) compiled for `arch` by NVRTC `nvrtc_version`.
pub fn key(name: &str, src: &str, arch: &str, nvrtc_version: &str) -> String {
    let stem = name.strip_suffix(".cu").unwrap_or(name);
    let h = fnv1a(&[src.as_bytes(), arch.as_bytes(), nvrtc_version.as_bytes(), env!("CARGO_PKG_VERSION").as_bytes()]);
    format!("{stem}-{arch}-{h:016x}")
}

/// The PTX and, when stored, the CUBIN of entry `key` in `dir`; `None` on a miss, and for an
/// entry that is not PTX text (a `.version` line) with, if any, an ELF image beside it (a file
/// damaged after it was written is compiled again rather than loaded).
pub fn load(dir: &Path, key: &str) -> Option<(String, Option<Vec<u8>>)> {
    let ptx = std::fs::read_to_string(dir.join(format!("{key}.ptx"))).ok()?;
    if !ptx.lines().any(|l| l.trim_start().starts_with(".version ")) {
        return None;
    }
    let cubin = std::fs::read(dir.join(format!("{key}.cubin"))).ok();
    if cubin.as_ref().is_some_and(|c| !c.starts_with(b"\x7fELF")) {
        return None;
    }
    Some((ptx, cubin))
}

/// Stores entry `key` (CUBIN first, so that a PTX file always has its CUBIN beside it when one
/// was made); errors are ignored (a later process compiles again).
pub fn store(dir: &Path, key: &str, ptx: &str, cubin: Option<&[u8]>) {
    let write = |file: String, bytes: &[u8]| -> std::io::Result<()> {
        let tmp = dir.join(format!(".{file}.{}.tmp", std::process::id()));
        std::fs::write(&tmp, bytes)?;
        std::fs::rename(&tmp, dir.join(&file)).inspect_err(|_| {
            let _ = std::fs::remove_file(&tmp);
        })
    };
    if std::fs::create_dir_all(dir).is_err() {
        return;
    }
    if let Some(c) = cubin {
        if write(format!("{key}.cubin"), c).is_err() {
            return;
        }
    }
    let _ = write(format!("{key}.ptx"), ptx.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_change_with_every_input() {
        let k = key("spread.cu", "__global__ void k() {}", "sm_90", "12.9");
        assert!(k.starts_with("spread-sm_90-") && k.len() == "spread-sm_90-".len() + 16, "{k}");
        assert_ne!(k, key("spread.cu", "__global__ void k() { }", "sm_90", "12.9"));
        assert_ne!(k, key("spread.cu", "__global__ void k() {}", "sm_80", "12.9"));
        assert_ne!(k, key("spread.cu", "__global__ void k() {}", "sm_90", "13.0"));
        assert_eq!(k, key("spread.cu", "__global__ void k() {}", "sm_90", "12.9"));
    }

    #[test]
    fn entries_round_trip_and_misses_are_none() {
        let d = std::env::temp_dir().join(format!("farfield-cubin-cache-test-{}", std::process::id()));
        let k = key("a.cu", "src", "sm_80", "12.9");
        assert_eq!(load(&d, &k), None);
        let ptx = ".version 8.8\n.target sm_80\n";
        store(&d, &k, ptx, Some(b"\x7fELF..."));
        assert_eq!(load(&d, &k), Some((ptx.to_string(), Some(b"\x7fELF...".to_vec()))));
        let k2 = key("b.cu", "src", "sm_80", "12.9");
        store(&d, &k2, ptx, None);
        assert_eq!(load(&d, &k2), Some((ptx.to_string(), None)));
        // damaged entries are misses: PTX without a version line, a CUBIN that is not ELF
        let k3 = key("c.cu", "src", "sm_80", "12.9");
        store(&d, &k3, "garbage", None);
        assert_eq!(load(&d, &k3), None);
        store(&d, &k3, ptx, Some(b"\0\0\0\0"));
        assert_eq!(load(&d, &k3), None);
        // no temporary files left behind
        assert!(std::fs::read_dir(&d).unwrap().all(|e| !e.unwrap().file_name().to_string_lossy().ends_with(".tmp")));
        let _ = std::fs::remove_dir_all(&d);
        // a folder that cannot be made: store is silent, load misses
        let f = std::env::temp_dir().join(format!("farfield-cubin-cache-file-{}", std::process::id()));
        std::fs::write(&f, b"x").unwrap();
        store(&f.join("sub"), &k, "p", None);
        assert_eq!(load(&f.join("sub"), &k), None);
        let _ = std::fs::remove_file(&f);
    }
}
