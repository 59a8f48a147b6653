//! The CUDA-on-CPU emulator tests, one test binary (one link instead of one per file; build
//! time, docs/design.md §7.4): each file of this folder is a module. The emulator's own
//! harness (`harness.rs`, which sets the emulator's global stagger flag) stays a binary of its
//! own. Run one file's tests with `cargo test -p farfield-gpu-emu --release --test emu <file>::`.

mod ewald_common;

mod batch;
mod cufinufft_compat;
mod ewald_exec;
mod ewald_kspace;
mod ewald_real;
mod fmm;
mod fmm_m2l;
mod fmm_ops;
mod fmm_tree;
mod launch_shapes;
mod nufft;
mod setpts_dev;
mod shared_memory;
mod spread;
mod spread_plan;
mod streams;
mod type3;
