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
    }
    // one step per (source, architecture) compilation (stderr, only when it is a terminal)
    let pb = progress::bar((farfield::gpu::KERNEL_SOURCES.len() * archs.len()) as u64, "gpu", progress::visible());
    pb.set_message("loading NVRTC");
    let rep = farfield::gpu::check::run_with_progress(&archs, ptxas, |done, total, source, arch| {
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
                 r.cubin_bytes.map_or("none".to_string(), |b| format!("{b} B")));
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
    let ok = rep.ok();
    println!(
        "{} kernels x {} archs: {} compiled, {} assembled, {} of {} CUBINs: {}",
        rep.kernels,
        rep.archs.len(),
        rep.compiled,
        rep.assembled,
        rep.cubins,
        rep.results.len(),
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
        }));
    }
    if ok {
        Ok(())
    } else {
        Err("GPU kernel check failed".into())
    }
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
