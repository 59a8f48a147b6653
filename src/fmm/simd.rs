//! Run-time CPU feature dispatch of the FMM's hot loops (DESIGN.md §8): the kernels are
//! `#[inline(always)]` bodies written over fixed-width lane arrays (`[f64; W]`), compiled once
//! for baseline x86-64 and once more with AVX2+FMA enabled; the AVX2 clone is used when the CPU
//! has it. `FARFIELD_NO_AVX2=1` in the environment forces the baseline path (for testing).

/// Lane count of the vectorised kernels (particles per P2M/L2P/P2P step, target boxes per M2L
/// tile): 8 doubles = one AVX-512 or two AVX2 registers.
pub const W: usize = 8;

/// Whether the AVX2+FMA clones may be used (detected once per process).
#[cfg(target_arch = "x86_64")]
pub fn has_avx2_fma() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        std::env::var_os("FARFIELD_NO_AVX2").is_none() && std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma")
    })
}
