//! `farfield gpu check`: compiles every CUDA kernel of the library with NVRTC for each
//! requested architecture and, when `FARFIELD_PTXAS` names a `ptxas` executable, assembles the
//! PTX — no GPU needed; the same compilation also gives the CUBIN a device loads. NVRTC comes
//! from the loader path or from `FARFIELD_NVRTC_LIB`.
//! Prints one line per source and architecture, then (with `--json`) one JSON object on the last
//! line: `kernels, compiled, assembled, cubins, archs, device_found, ok, nvrtc, ptxas, results`.
//! Exits non-zero unless every kernel compiled, every source gave a CUBIN (and every kernel
//! assembled, when ptxas was given).

use crate::json;
use crate::progress;
use crate::CliResult;
use clap::{Args, Subcommand};
use serde_json::json;

/// `farfield gpu …`
#[derive(Subcommand, Debug)]
pub enum GpuCommand {
    /// Compile every CUDA kernel with NVRTC (and assemble with ptxas when FARFIELD_PTXAS is
    /// set) for the given architectures; works without a GPU.
    Check(CheckArgs),
}

/// Arguments of `farfield gpu check`.
#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Comma-separated architectures (sm_XY), at least sm_60 (double atomicAdd).
    #[arg(long, default_value = "sm_80,sm_90", value_delimiter = ',')]
    pub arch: Vec<String>,
    /// Print a JSON summary as the last stdout line.
    #[arg(long)]
    pub json: bool,
    /// Also list, per kernel and architecture, registers and static shared memory (`ptxas -v`;
    /// needs FARFIELD_PTXAS), the block and dynamic shared memory of the default plans' launches
    /// and the resulting blocks per multiprocessor and occupancy (docs/gpu_occupancy.md).
    #[arg(long)]
    pub resources: bool,
    /// Compile every width-specialised spreading module (2 precisions x 3 dimensions x widths
    /// 2-16: minutes of NVRTC) instead of those the default plans launch.
    #[arg(long)]
    pub all_widths: bool,
}

fn valid_arch(a: &str) -> bool {
    a.strip_prefix("sm_")
        .or_else(|| a.strip_prefix("compute_"))
        .is_some_and(|v| v.len() >= 2 && v.chars().take(2).all(|c| c.is_ascii_digit()) && v[..2].parse::<u32>().is_ok_and(|n| n >= 60))
}

/// Runs the check.
pub fn run_check(a: &CheckArgs) -> CliResult<()> {
    let archs: Vec<String> = a.arch.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
    if archs.is_empty() {
        return Err("--arch: no architecture given".into());
    }
    if let Some(bad) = archs.iter().find(|s| !valid_arch(s)) {
        return Err(format!("--arch: {bad} is not sm_XY / compute_XY with XY >= 60"));
    }
    let ptxas = std::env::var_os("FARFIELD_PTXAS").map(std::path::PathBuf::from);
    if let Some(p) = &ptxas {
        if !p.is_file() {
            return Err(format!("FARFIELD_PTXAS={} is not a file", p.display()));
        }
    } else if a.resources {
        return Err("--resources needs ptxas: set FARFIELD_PTXAS to a ptxas executable (e.g. from the nvidia-cuda-nvcc-cu12 wheel)".into());
    }
    // one step per (source, architecture) compilation (stderr, only when it is a terminal)
    let widths = if a.all_widths { farfield::gpu::WidthModule::all() } else { farfield::gpu::WidthModule::launched() };
    let pb = progress::bar(((farfield::gpu::KERNEL_SOURCES.len() + widths.len()) * archs.len()) as u64, "gpu", progress::visible());
    pb.set_message("loading NVRTC");
    let rep = farfield::gpu::check::run_with_progress(&archs, &widths, ptxas, |done, total, source, arch| {
        pb.set_length(total as u64);
        pb.set_position(done as u64);
        pb.set_message(if done < total { format!("{source} {arch}") } else { String::new() });
    });
    pb.finish_and_clear();
    match &rep.nvrtc {
        Ok(from) => println!("NVRTC: loaded from {from}"),
        Err(e) => println!("NVRTC: {e}"),
    }
    match &rep.ptxas {
        Some(p) => println!("ptxas: {}", p.display()),
        None => println!("ptxas: not run (set FARFIELD_PTXAS to assemble the PTX)"),
    }
    println!("CUDA device: {}", match farfield::gpu::runtime::discover() {
        Ok(d) if !d.is_empty() => d.iter().map(|i| format!("{} (sm_{}{})", i.name, i.compute_capability.0, i.compute_capability.1)).collect::<Vec<_>>().join(", "),
        Ok(_) => "none".into(),
        Err(why) => format!("none ({why})"),
    });
    let mut results = Vec::new();
    // column width of the longest source name (e.g. ewald_kspace.cu)
    let sw = rep.results.iter().map(|r| r.source.len()).max().unwrap_or(0);
    for r in &rep.results {
        let status = match (&r.compile_error, r.assembled) {
            (Some(_), _) => "COMPILE FAILED".to_string(),
            (None, Some(true)) => "compiled, assembled".to_string(),
            (None, Some(false)) => "compiled, ptxas FAILED".to_string(),
            (None, None) => "compiled".to_string(),
        };
        println!("  {:<sw$} {:<8} {:>3} kernels  PTX {}  CUBIN {}  {status}", r.source, r.arch, r.entries.len(), r.ptx_version.as_deref().unwrap_or("-"),
                 r.cubin_bytes.map_or(if r.assembled == Some(true) { "by ptxas" } else { "none" }.to_string(), |b| format!("{b} B")));
        if let Some(e) = &r.compile_error {
            println!("{e}");
        }
        if let Some(e) = &r.ptxas_error {
            println!("{e}");
        }
        results.push(json!({
            "source": r.source, "arch": r.arch, "kernels": r.entries.len(), "ptx_version": r.ptx_version,
            "compiled": r.compile_error.is_none(), "assembled": r.assembled, "cubin_bytes": r.cubin_bytes,
            "error": r.compile_error.clone().or_else(|| r.ptxas_error.clone()),
        }));
    }
    let resources = if a.resources { resource_table(&rep)? } else { Vec::new() };
    let ok = rep.ok();
    println!(
        "{} kernels x {} archs: {} compiled, {} assembled, {} of {} CUBINs: {}",
        rep.kernels,
        rep.archs.len(),
        rep.compiled,
        rep.assembled,
        rep.cubins,
        rep.cubins_wanted,
        if ok { "OK" } else { "FAILED" }
    );
    if a.json {
        json::emit(&json!({
            "kernels": rep.kernels,
            "compiled": rep.compiled,
            "assembled": rep.assembled,
            "cubins": rep.cubins,
            "archs": rep.archs,
            "device_found": rep.device_found,
            "ok": ok,
            "nvrtc": rep.nvrtc.as_ref().map_or_else(|e| json!({"found": false, "error": e}), |f| json!({"found": true, "from": f})),
            "ptxas": rep.ptxas.as_ref().map(|p| p.display().to_string()),
            "results": results,
            "resources": resources,
        }));
    }
    if ok {
        Ok(())
    } else {
        Err("GPU kernel check failed".into())
    }
}

/// Prints the occupancy table of `--resources` (one row per kernel and architecture, sorted by
/// blocks per multiprocessor) and returns its rows as JSON.
fn resource_table(rep: &farfield::gpu::check::CheckReport) -> CliResult<Vec<serde_json::Value>> {
    use farfield::gpu::occupancy::{arch_limits, occupancy, parse_launch_shapes, LAUNCH_SHAPES};
    let shapes = parse_launch_shapes(LAUNCH_SHAPES)?;
    let mut rows = Vec::new();
    for r in &rep.results {
        let Some(lim) = arch_limits(&r.arch) else { continue };
        for k in &r.resources {
            let shape = shapes.iter().find(|s| s.arch == r.arch && s.kernel == k.kernel);
            let occ = shape.map(|s| occupancy(&lim, k.registers, s.block, k.static_smem + s.dynamic_smem));
            rows.push((r, k, shape, occ));
        }
    }
    rows.sort_by(|a, b| (&a.0.arch, a.3.map_or(u32::MAX, |o| o.blocks_per_sm), &a.1.kernel).cmp(&(&b.0.arch, b.3.map_or(u32::MAX, |o| o.blocks_per_sm), &b.1.kernel)));
    let kw = rows.iter().map(|r| r.1.kernel.len()).max().unwrap_or(6);
    println!("\nResources (ptxas -v) and occupancy at the default plans' launch shapes (src/gpu/launch_shapes.tsv):");
    println!("  {:<6} {:<kw$} {:>4} {:>7} {:>5} {:>8} {:>9} {:>6}  {:<13} case", "arch", "kernel", "regs", "static", "block", "dynamic", "blocks/SM", "occ.", "limiter");
    let mut out = Vec::new();
    for (r, k, shape, occ) in rows {
        match (shape, occ) {
            (Some(s), Some(o)) => println!("  {:<6} {:<kw$} {:>4} {:>7} {:>5} {:>8} {:>9} {:>5.0}%  {:<13} {}", r.arch, k.kernel, k.registers, k.static_smem, s.block,
                                            s.dynamic_smem, o.blocks_per_sm, 100.0 * o.occupancy, o.limiter, s.case),
            _ => println!("  {:<6} {:<kw$} {:>4} {:>7} {:>5} {:>8} {:>9} {:>6}  {:<13} not launched by the default plans", r.arch, k.kernel, k.registers, k.static_smem, "-", "-", "-", "-", "-"),
        }
        out.push(json!({
            "arch": r.arch, "source": r.source, "kernel": k.kernel, "registers": k.registers, "static_smem": k.static_smem,
            "spill_stores": k.spill.0, "spill_loads": k.spill.1, "stack_frame": k.stack,
            "block": shape.map(|s| s.block), "dynamic_smem": shape.map(|s| s.dynamic_smem), "case": shape.map(|s| s.case.clone()),
            "blocks_per_sm": occ.map(|o| o.blocks_per_sm), "occupancy": occ.map(|o| o.occupancy), "limiter": occ.map(|o| o.limiter),
        }));
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #[test]
    fn arch_names() {
        assert!(super::valid_arch("sm_80"));
        assert!(super::valid_arch("sm_90"));
        assert!(super::valid_arch("compute_86"));
        assert!(!super::valid_arch("sm_52"));
        assert!(!super::valid_arch("80"));
        assert!(!super::valid_arch("sm_x0"));
    }
}
