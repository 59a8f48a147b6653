//! `libfarfield.so` and `libfarfield.a`: the C library. The C ABI itself is the `farfield`
//! crate's `capi` module (`src/capi/`, declared in `include/farfield.h`); its `#[no_mangle]`
//! functions are exported from here. This crate exists so that the `farfield` crate is an
//! rlib only (see `Cargo.toml`).
pub use farfield_rs;
