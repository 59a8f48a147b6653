//! Compiles the emulator (cpp/emu.cpp), which includes the library's CUDA sources unchanged.
fn main() {
    cc::Build::new()
        .cpp(true)
        .std("c++20")
        .file("cpp/emu.cpp")
        .flag("-pthread")
        .flag_if_supported("-Wno-unused-parameter")
        .opt_level(2)
        .compile("farfield_cuda_emu");
    println!("cargo:rustc-link-lib=pthread");
    println!("cargo:rerun-if-changed=cpp");
    println!("cargo:rerun-if-changed=../src/gpu/kernels");
    println!("cargo:rerun-if-changed=build.rs");
}
