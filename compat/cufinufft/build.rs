//! Nothing to do at build time: `libcufinufft.so` is linked by CMake from this crate's static
//! library (soname `libcufinufft.so`, as cuFINUFFT 2.5's CMake build gives it: no version
//! suffix; only the `cufinufft*` symbols exported). A cargo `cdylib` cannot carry that soname
//! (it would inherit the `farfield` dependency's `-soname,libfarfield.so.1`).
fn main() {
    println!("cargo:rerun-if-changed=build.rs");
}
