//! The `farfield` binary: [`farfield_cli::main`]. The tool's code is a library crate so that
//! cargo compiles it beside the farfield library, from the library's metadata, and only this
//! file's link waits for the library's object code (the build's critical path).
fn main() -> std::process::ExitCode {
    farfield_cli::main()
}
