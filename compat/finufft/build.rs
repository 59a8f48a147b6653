//! Nothing to do at build time: `libfinufft.so` is linked by CMake from this crate's static
//! library (soname `libfinufft.so`, as FINUFFT's own CMake build and the PyPI wheel's bundled
//! library have; only the `finufft*` symbols exported). A cargo `cdylib` would also export every
//! `farfield_*` function: rustc exports the `#[no_mangle]` functions of the crates it links.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
