//! Nothing to do at build time: `libcufinufft.so` is linked by CMake from this crate's static
//! library (soname `libcufinufft.so`, as cuFINUFFT 2.5's CMake build gives it: no version
//! suffix; only the `cufinufft*` symbols exported). A cargo `cdylib` would also export every
//! `farfield_*` function: rustc exports the `#[no_mangle]` functions of the crates it links.
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
