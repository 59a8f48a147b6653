//! Run-time CPU feature dispatch for the spreader's hot loops (DESIGN.md §8): shipped builds
//! target baseline x86-64, and the subproblem loops are compiled a second time with AVX2 and
//! FMA enabled (`#[target_feature]` clones of `#[inline(always)]` bodies), chosen when the CPU
//! has them. `FARFIELD_NO_AVX2=1` in the environment forces the baseline path (for testing).

/// Whether the AVX2+FMA clones may be used (detected once per process).
#[cfg(target_arch = "x86_64")]
pub fn has_avx2_fma() -> bool {
    use std::sync::OnceLock;
    static HAS: OnceLock<bool> = OnceLock::new();
    *HAS.get_or_init(|| {
        std::env::var_os("FARFIELD_NO_AVX2").is_none()
            && std::is_x86_feature_detected!("avx2")
            && std::is_x86_feature_detected!("fma")
    })
}
