//! The one CPU-feature probe for the hand-vectorised hot loops (spreader subproblems, FMM
//! operators, the Ewald real-space pair kernel). Shipped builds target baseline x86-64; each
//! hot loop is compiled a second time with AVX2 and FMA enabled (`#[target_feature]` clones)
//! and that clone is chosen at run time when [`has_avx2_fma`] is true.
//!
//! `FARFIELD_NO_AVX2` — if this environment variable is set (to any value, e.g.
//! `FARFIELD_NO_AVX2=1`) when the first solver call probes the CPU, every module takes its
//! portable baseline path for the rest of the process. It exists for testing the baseline
//! path on AVX2 machines and for comparing the two; results agree to rounding.

/// Whether the AVX2+FMA code paths may be used: the CPU has both AVX2 and FMA and
/// `FARFIELD_NO_AVX2` is unset. Probed once per process and cached; always `false` off
/// x86-64.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // callers are x86-64 only
pub(crate) fn has_avx2_fma() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            std::env::var_os("FARFIELD_NO_AVX2").is_none()
                && std::is_x86_feature_detected!("avx2")
                && std::is_x86_feature_detected!("fma")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::has_avx2_fma;

    #[test]
    fn probe_is_stable_and_honours_the_cpu() {
        let first = has_avx2_fma();
        assert_eq!(first, has_avx2_fma(), "the probe is cached");
        #[cfg(target_arch = "x86_64")]
        if first {
            assert!(std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma"));
            assert!(std::env::var_os("FARFIELD_NO_AVX2").is_none());
        }
        #[cfg(not(target_arch = "x86_64"))]
        assert!(!first);
    }
}
