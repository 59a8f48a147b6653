//! The one CPU-feature probe for the hand-vectorised hot loops (spreader subproblems, FMM
//! operators, the Ewald real-space pair kernel). Shipped builds target baseline x86-64; each
//! hot loop is compiled a second time with AVX2 and FMA enabled (`#[target_feature]` clones)
//! and that clone is chosen at run time when [`has_avx2_fma`] is true.
//!
//! The spreader's row loops have a third clone with AVX-512F (512-bit vectors; AVX-512VL too
//! in interpolation, for 32 registers of 256-bit vectors), chosen when [`has_avx512`] is true;
//! where [`splits_512bit_ops`] is true, its spreading loops write rows with 256-bit vectors,
//! and its 2D/3D interpolation loops read them for f32 and for f64 in 3D.
//!
//! `FARFIELD_NO_AVX2` — if this environment variable is set (to any value, e.g.
//! `FARFIELD_NO_AVX2=1`) when the first solver call probes the CPU, every module takes its
//! portable baseline path for the rest of the process. `FARFIELD_NO_AVX512` likewise turns
//! off only the AVX-512 clones (the AVX2 ones are used). They exist for testing the other
//! paths on newer machines and for comparing them; results agree to rounding
//! (`tests/spread_baseline.rs` checks the spreader's baseline clone against its AVX2 one).
//!
//! On x86-64 the spreader's baseline clone (a CPU without AVX2/FMA, 2013 and older) runs the
//! loops that read the kernel width at run time, not the ones specialised per width: a fourth
//! copy of the per-width loops cost 18 % of the library's compile time
//! (`benches/results/build_baseline_clone_2026-12-02.json`), for CPUs that take the AVX2 clone
//! almost everywhere now; on such a CPU 3D spreading and interpolation take about twice the
//! time, 2D up to 1.15×, 1D the same (`benches/results/spread_baseline_clone_2026-12-02.json`).
//! On other architectures the baseline clone is the only one and keeps the per-width loops.

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
/// AVX-512VL, and `FARFIELD_NO_AVX512` is unset. VL is required because the spreader's
/// AVX-512 interpolation clone also runs 256-bit row loops ([`splits_512bit_ops`]): without
/// VL those can use only 16 vector registers, and that loop spilled its accumulators to the
/// stack (docs/performance.md, "Interpolation rows on 256-bit vectors, with AVX-512VL"). Every
/// AVX-512 CPU but the Xeon Phi has VL. Probed once per process and cached; always `false`
/// off x86-64.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // callers are x86-64 only
pub(crate) fn has_avx512() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static HAS: OnceLock<bool> = OnceLock::new();
        *HAS.get_or_init(|| {
            has_avx2_fma()
                && std::env::var_os("FARFIELD_NO_AVX512").is_none()
                && std::is_x86_feature_detected!("avx512f")
                && std::is_x86_feature_detected!("avx512vl")
        })
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// Whether this CPU runs 512-bit vector operations as two 256-bit halves: AMD family 19h
/// (Zen 4) with AVX-512F. There a 512-bit load, FMA or store costs what two 256-bit ones cost,
/// so a loop whose rows fill 512-bit vectors only in part does more work than the same loop on
/// 256-bit vectors. The spreader's 2D/3D box loops (read-modify-write of every vector of a row)
/// take 256-bit rows there, and so do its interpolation loops for f32 and for f64 in 3D
/// ([`crate::spread`]; docs/performance.md, "Spreading rows on 256-bit vectors where 512-bit
/// ones are split" and "Interpolation rows on 256-bit vectors, with AVX-512VL"). Probed once
/// per process and cached; always `false` off x86-64 and where [`has_avx512`] is `false`.
#[cfg_attr(not(target_arch = "x86_64"), allow(dead_code))] // callers are x86-64 only
pub(crate) fn splits_512bit_ops() -> bool {
    #[cfg(target_arch = "x86_64")]
    {
        use std::sync::OnceLock;
        static SPLITS: OnceLock<bool> = OnceLock::new();
        *SPLITS.get_or_init(|| has_avx512() && amd_family() == Some(0x19))
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        false
    }
}

/// The CPU family (base plus extended family, CPUID leaf 1) of an AMD CPU ("AuthenticAMD",
/// CPUID leaf 0), `None` on other vendors.
#[cfg(target_arch = "x86_64")]
fn amd_family() -> Option<u32> {
    use std::arch::x86_64::__cpuid;
    // SAFETY: CPUID exists on every x86-64 CPU; leaves 0 and 1 are always defined.
    #[allow(unused_unsafe)]
    let (v, l1) = unsafe { (__cpuid(0), __cpuid(1)) };
    let vendor = [v.ebx.to_le_bytes(), v.edx.to_le_bytes(), v.ecx.to_le_bytes()].concat();
    if vendor != b"AuthenticAMD" {
        return None;
    }
    let base = (l1.eax >> 8) & 0xf;
    Some(if base == 0xf { base + ((l1.eax >> 20) & 0xff) } else { base })
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
        assert!(!super::splits_512bit_ops() || wide, "split 512-bit operations only where AVX-512 is used");
        #[cfg(target_arch = "x86_64")]
        if wide {
            assert!(std::is_x86_feature_detected!("avx512f") && std::is_x86_feature_detected!("avx512vl"));
            assert!(std::env::var_os("FARFIELD_NO_AVX512").is_none());
        }
    }
}
