//! The one CPU-feature probe for the hand-vectorised hot loops (spreader subproblems, FMM
//! operators, the Ewald real-space pair kernel). Shipped builds target baseline x86-64; each
//! hot loop is compiled a second time with AVX2 and FMA enabled (`#[target_feature]` clones)
//! and that clone is chosen at run time when [`has_avx2_fma`] is true.
//!
//! The spreader's row loops have a third clone with AVX-512F (512-bit vectors), chosen when
//! [`has_avx512`] is true.
//!
//! `FARFIELD_NO_AVX2` — if this environment variable is set (to any value, e.g.
//! `FARFIELD_NO_AVX2=1`) when the first solver call probes the CPU, every module takes its
//! portable baseline path for the rest of the process. `FARFIELD_NO_AVX512` likewise turns
//! off only the AVX-512 clones (the AVX2 ones are used). They exist for testing the other
//! paths on newer machines and for comparing them; results agree to rounding.

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

/// Whether the AVX-512 code paths may be used: [`has_avx2_fma`], the CPU has AVX-512F and
/// `FARFIELD_NO_AVX512` is unset. Probed once per process and cached; always `false` off
/// x86-64.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // callers are x86-64 only
pub(crate) fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| has_avx2_fma() && std::env::var_os("FARFIELD_NO_AVX512").is_none() && std::is_x86_feature_detected!("avx512f"))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

#[cfg(test)]
mod tests {
    use super::{has_avx2_fma, has_avx512};

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
        let wide = has_avx512();
        assert_eq!(wide, has_avx512(), "the probe is cached");
        assert!(!wide || first, "AVX-512 clones only where the AVX2 ones run");
        #[cfg(target_arch = "x86_64")]
        if wide {
            assert!(std::is_x86_feature_detected!("avx512f") && std::env::var_os("FARFIELD_NO_AVX512").is_none());
        }
    }
}
