//! Offline occupancy of the CUDA kernels (`farfield gpu check --resources`; docs/gpu_occupancy.md):
//! per kernel and architecture, the registers and static shared memory `ptxas -v` reports, the
//! block and dynamic shared memory the default plans launch it with ([`LAUNCH_SHAPES`]), and
//! from them the resident blocks per multiprocessor by the rules of NVIDIA's CUDA occupancy
//! calculator (CUDA C++ Programming Guide, "Compute Capabilities", table of technical
//! specifications; CUDA Occupancy Calculator): the least of the limits set by threads, blocks,
//! registers (allocated per warp in units of 256) and shared memory (per block: static +
//! dynamic + 1 KiB reserved by the system, in units of 128 bytes, against the largest carve-out).

/// The default plans' launch shapes, recorded on the CUDA-on-CPU emulator and kept fresh by
/// `gpu-emu/tests/launch_shapes.rs`: tab-separated `arch, kernel, block, dynamic shared memory
/// (bytes), case`, one line per kernel and architecture, `#` comments.
pub const LAUNCH_SHAPES: &str = include_str!("launch_shapes.tsv");

/// One line of [`LAUNCH_SHAPES`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LaunchShape {
    /// Architecture (`sm_80`, `sm_90`).
    pub arch: String,
    /// Kernel entry point.
    pub kernel: String,
    /// Threads per block.
    pub block: u32,
    /// Dynamic shared memory per block (bytes): the largest any default plan asks for.
    pub dynamic_smem: u32,
    /// The plan that launched it so.
    pub case: String,
}

/// Parses a launch-shape manifest ([`LAUNCH_SHAPES`]'s format); the line of any malformed entry.
pub fn parse_launch_shapes(text: &str) -> Result<Vec<LaunchShape>, String> {
    text.lines()
        .enumerate()
        .filter(|(_, l)| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|(i, l)| {
            let f: Vec<&str> = l.split('\t').collect();
            let bad = || format!("launch shapes, line {}: {l:?}", i + 1);
            if f.len() != 5 {
                return Err(bad());
            }
            Ok(LaunchShape {
                arch: f[0].to_string(),
                kernel: f[1].to_string(),
                block: f[2].parse().map_err(|_| bad())?,
                dynamic_smem: f[3].parse().map_err(|_| bad())?,
                case: f[4].to_string(),
            })
        })
        .collect()
}

/// What `ptxas -v` reports for one kernel.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KernelResources {
    /// Kernel entry point.
    pub kernel: String,
    /// Registers per thread.
    pub registers: u32,
    /// Static shared memory per block (bytes).
    pub static_smem: u32,
    /// Bytes of register spill stores and loads per thread.
    pub spill: (u32, u32),
    /// Bytes of stack frame per thread: arrays the compiler keeps in local memory (e.g. a
    /// point's kernel values when the window's width is not a compile-time constant).
    pub stack: u32,
}

/// Parses the output of `ptxas -v` (its `Compiling entry function 'k'`, `N bytes stack frame,
/// N bytes spill stores, N bytes spill loads` and `Used N registers, …, N bytes smem` lines) into one record per
/// kernel, in order.
pub fn parse_ptxas_verbose(out: &str) -> Vec<KernelResources> {
    fn number_before(s: &str, unit: &str) -> Option<u32> {
        let i = s.find(unit)?;
        s[..i].split(|c: char| !c.is_ascii_digit()).rfind(|t| !t.is_empty())?.parse().ok()
    }
    let mut res: Vec<KernelResources> = Vec::new();
    for l in out.lines() {
        if let Some(rest) = l.split("Compiling entry function '").nth(1) {
            let name = rest.split('\'').next().unwrap_or_default();
            res.push(KernelResources { kernel: name.to_string(), registers: 0, static_smem: 0, spill: (0, 0), stack: 0 });
        } else if let Some(k) = res.last_mut() {
            if l.contains("spill stores") {
                k.spill = (number_before(l, "bytes spill stores").unwrap_or(0), number_before(l, "bytes spill loads").unwrap_or(0));
                k.stack = number_before(l, "bytes stack frame").unwrap_or(0);
            } else if l.contains("Used ") && l.contains(" registers") {
                k.registers = number_before(l, " registers").unwrap_or(0);
                k.static_smem = number_before(l, " bytes smem").unwrap_or(0);
            }
        }
    }
    res
}

/// The per-multiprocessor limits of a compute capability that decide occupancy.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ArchLimits {
    /// Resident threads per multiprocessor.
    pub threads: u32,
    /// Resident blocks per multiprocessor.
    pub blocks: u32,
    /// 32-bit registers per multiprocessor (also the most one block may use).
    pub registers: u32,
    /// Shared memory per multiprocessor at the largest carve-out (bytes).
    pub smem: u32,
    /// Shared memory one block may use with the opt-in attribute (bytes).
    pub smem_per_block: u32,
}

/// The limits of `sm_XY` (compute capability X.Y) for the architectures farfield builds for
/// (sm_60 and later); `None` for others.
pub fn arch_limits(arch: &str) -> Option<ArchLimits> {
    const K: u32 = 1024;
    let cc: u32 = arch.strip_prefix("sm_").or_else(|| arch.strip_prefix("compute_"))?.get(..2)?.parse().ok()?;
    let (threads, blocks, smem, smem_per_block) = match cc {
        60..=62 => (2048, 32, 64 * K, 48 * K),
        70 | 72 => (2048, 32, 96 * K, 96 * K),
        75 => (1024, 16, 64 * K, 64 * K),
        80 | 87 => (2048, 32, 164 * K, 163 * K),
        86 => (1536, 16, 100 * K, 99 * K),
        89 => (1536, 24, 100 * K, 99 * K),
        90 => (2048, 32, 228 * K, 227 * K),
        100 | 103 => (2048, 32, 228 * K, 227 * K),
        120 => (1536, 32, 100 * K, 99 * K),
        _ => return None,
    };
    Some(ArchLimits { threads, blocks, registers: 64 * K, smem, smem_per_block })
}

/// Resident blocks and occupancy of one kernel launch shape.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Occupancy {
    /// Blocks resident on one multiprocessor (0: the launch cannot run).
    pub blocks_per_sm: u32,
    /// Resident warps ÷ the multiprocessor's maximum.
    pub occupancy: f64,
    /// The binding limit: `threads`, `blocks`, `registers` or `shared memory`.
    pub limiter: &'static str,
}

/// The occupancy of a kernel using `registers` per thread and `smem` bytes of shared memory
/// (static + dynamic) per block of `block` threads on `lim`.
pub fn occupancy(lim: &ArchLimits, registers: u32, block: u32, smem: u32) -> Occupancy {
    let warps = block.div_ceil(32).max(1);
    let max_warps = lim.threads / 32;
    let by_threads = max_warps / warps;
    let regs_per_warp = (registers * 32).div_ceil(256) * 256;
    let by_regs = if regs_per_warp == 0 {
        u32::MAX
    } else if regs_per_warp * warps > lim.registers {
        0
    } else {
        (lim.registers / regs_per_warp) / warps
    };
    let smem_alloc = (smem + 1024).div_ceil(128) * 128;
    let by_smem = if smem > lim.smem_per_block { 0 } else { lim.smem / smem_alloc };
    let limits = [(by_threads, "threads"), (lim.blocks, "blocks"), (by_regs, "registers"), (by_smem, "shared memory")];
    let (blocks, limiter) = limits.into_iter().min_by_key(|&(b, _)| b).unwrap_or((0, "threads"));
    Occupancy { blocks_per_sm: blocks, occupancy: (blocks * warps) as f64 / max_warps as f64, limiter }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ptxas_verbose_output_is_parsed() {
        let out = "ptxas info    : 0 bytes gmem\n\
ptxas info    : Compiling entry function 'ff_a' for 'sm_80'\n\
ptxas info    : Function properties for ff_a\n    0 bytes stack frame, 8 bytes spill stores, 12 bytes spill loads\n\
ptxas info    : Used 40 registers, used 1 barriers, 256 bytes smem, 360 bytes cmem[0]\n\
ptxas info    : Compiling entry function 'ff_b' for 'sm_80'\n\
ptxas info    : Function properties for ff_b\n    216 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\n\
ptxas info    : Used 8 registers, used 0 barriers, 360 bytes cmem[0]\n";
        let r = parse_ptxas_verbose(out);
        assert_eq!(r, vec![
            KernelResources { kernel: "ff_a".into(), registers: 40, static_smem: 256, spill: (8, 12), stack: 0 },
            KernelResources { kernel: "ff_b".into(), registers: 8, static_smem: 0, spill: (0, 0), stack: 216 },
        ]);
    }

    #[test]
    fn occupancy_follows_the_calculator() {
        // values of NVIDIA's occupancy calculator for compute capability 8.0 and 9.0
        let a100 = arch_limits("sm_80").unwrap();
        let h100 = arch_limits("sm_90").unwrap();
        // 256 threads, 32 registers, no shared memory: 8 blocks, 100 %
        let o = occupancy(&a100, 32, 256, 0);
        assert_eq!((o.blocks_per_sm, o.occupancy), (8, 1.0));
        // 128 registers per thread at 256 threads: 65536 / (128·32·8) = 2 blocks, 25 %
        let o = occupancy(&a100, 128, 256, 0);
        assert_eq!((o.blocks_per_sm, o.limiter), (2, "registers"));
        assert!((o.occupancy - 0.25).abs() < 1e-12);
        // 40 registers round up to 1280 per warp: 51 warps → 6 blocks of 8 warps
        assert_eq!(occupancy(&a100, 40, 256, 0).blocks_per_sm, 6);
        // a 227 KiB tile leaves one block on sm_90 and cannot launch on sm_80
        let o = occupancy(&h100, 32, 128, 227 * 1024);
        assert_eq!((o.blocks_per_sm, o.limiter), (1, "shared memory"));
        assert_eq!(occupancy(&a100, 32, 128, 227 * 1024).blocks_per_sm, 0);
        // 100 KiB: two per sm_90 multiprocessor (2·(100 + 1) KiB ≤ 228 KiB), one per sm_80
        assert_eq!(occupancy(&h100, 32, 128, 100 * 1024).blocks_per_sm, 2);
        assert_eq!(occupancy(&a100, 32, 128, 100 * 1024).blocks_per_sm, 1);
        // small blocks hit the 32-block limit
        assert_eq!(occupancy(&h100, 16, 32, 0).limiter, "blocks");
        assert_eq!(arch_limits("sm_52"), None);
    }

    #[test]
    fn the_committed_manifest_parses() {
        let s = parse_launch_shapes(LAUNCH_SHAPES).unwrap();
        assert!(s.iter().any(|l| l.arch == "sm_90") && s.iter().any(|l| l.arch == "sm_80"), "{} shapes", s.len());
        assert!(parse_launch_shapes("sm_80\tk\t128\tx\tcase").is_err());
        assert!(parse_launch_shapes("sm_80\tk\t128\n").is_err());
    }
}
