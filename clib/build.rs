//! Gives the shared library `libfarfield.so` its soname and leaves the soname link beside
//! cargo's output. (FFTW's link libraries come from the `farfield` crate's `build.rs`.)
use std::path::PathBuf;

/// The soname; its major version is the ABI version (FARFIELD_VERSION_MAJOR; the policy of what
/// bumps it is in CHANGELOG.md).
const SONAME: &str = "libfarfield.so.1";

fn main() {
    println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,{SONAME}");
    println!("cargo:rerun-if-changed=build.rs");
    soname_link();
}

/// A program linked against `target/<profile>/libfarfield.so` records `NEEDED
/// libfarfield.so.1`; without that name beside the library it builds but cannot load. So the
/// build leaves `libfarfield.so.1 -> libfarfield.so` (relative) in the profile directory
/// (`OUT_DIR` is `<profile>/build/farfield-clib-<hash>/out`), as cargo-c and CMake's install tree
/// do. It dangles until the first build of the library completes. Best effort: a failure only
/// prints a warning (the CMake build tree has its own links).
fn soname_link() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() != Ok("linux") {
        return;
    }
    let Some(out) = std::env::var_os("OUT_DIR") else { return };
    let Some(profile_dir) = PathBuf::from(out).ancestors().nth(3).map(PathBuf::from) else { return };
    let link = profile_dir.join(SONAME);
    if std::fs::read_link(&link).map(|t| t == PathBuf::from("libfarfield.so")).unwrap_or(false) {
        return;
    }
    let _ = std::fs::remove_file(&link);
    #[cfg(unix)]
    if let Err(e) = std::os::unix::fs::symlink("libfarfield.so", &link) {
        println!("cargo:warning=could not create {}: {e}", link.display());
    }
}
