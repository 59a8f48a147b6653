//! Nothing to do at build time: `libfinufft.so` is linked by CMake from this crate's static
//! library (soname `libfinufft.so`, as FINUFFT's own CMake build and the PyPI wheel's bundled
//! library have; only the `finufft*` symbols exported). A cargo `cdylib` cannot carry that
//! soname: cargo passes the `rustc-cdylib-link-arg` of the `farfield` dependency
//! (`-soname,libfarfield.so.1`) on to this crate's link, after this crate's own arguments.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
