//! Compile-only check of the CUDA kernels without a GPU (`farfield gpu check`; docs/design.md §5.3):
//! every source of [`super::KERNEL_SOURCES`] and the requested width-specialised modules
//! ([`super::WidthModule`]) are compiled by NVRTC for each requested
//! architecture (`--gpu-architecture=sm_XX`, always given: NVRTC's default compute_52 has no
//! double `atomicAdd`), and, when a `ptxas` executable is given, the PTX is assembled for the
//! same architecture.
//!
//! NVRTC is loaded dynamically: from `FARFIELD_NVRTC_LIB` (an absolute path to
//! `libnvrtc.so.12`, opened with `RTLD_GLOBAL` before cudarc looks the library up by its
//! soname) or from the loader path.

use std::path::{Path, PathBuf};

/// Result of compiling one source for one architecture.
#[derive(Debug, Clone)]
pub struct ArchResult {
    /// Source file name.
    pub source: String,
    /// Architecture (e.g. `sm_80`).
    pub arch: String,
    /// Kernel entry points in the PTX (empty when compilation failed).
    pub entries: Vec<String>,
    /// PTX `.version` line value.
    pub ptx_version: Option<String>,
    /// NVRTC error log (on failure).
    pub compile_error: Option<String>,
    /// `Some(true)` assembled, `Some(false)` ptxas failed, `None` not run.
    pub assembled: Option<bool>,
    /// ptxas error output (on failure).
    pub ptxas_error: Option<String>,
    /// Registers and static shared memory per kernel, from `ptxas -v` (empty when not run).
    pub resources: Vec<super::occupancy::KernelResources>,
    /// Size of the CUBIN NVRTC made in the same compilation (what a device loads), if any.
    pub cubin_bytes: Option<usize>,
}

/// Summary of a check.
#[derive(Debug, Clone)]
pub struct CheckReport {
    /// Distinct kernel entry points over all sources.
    pub kernels: usize,
    /// (kernel, arch) pairs compiled to PTX.
    pub compiled: usize,
    /// (kernel, arch) pairs whose PTX ptxas assembled.
    pub assembled: usize,
    /// (source, arch) pairs for which NVRTC also made a CUBIN.
    pub cubins: usize,
    /// (source, arch) pairs compiled for a CUBIN: all of them, except the width-specialised
    /// modules when ptxas is given (NVRTC makes only their PTX, which ptxas assembles: the same
    /// CUBIN without assembling twice).
    pub cubins_wanted: usize,
    /// Architectures checked.
    pub archs: Vec<String>,
    /// Whether a CUDA device was found.
    pub device_found: bool,
    /// How NVRTC was found, or why not.
    pub nvrtc: std::result::Result<String, String>,
    /// ptxas used, if any.
    pub ptxas: Option<PathBuf>,
    /// Per source and architecture.
    pub results: Vec<ArchResult>,
}

impl CheckReport {
    /// Every kernel compiled for every architecture (PTX and, for every module compiled for
    /// one, a CUBIN), and assembled when ptxas was given.
    pub fn ok(&self) -> bool {
        let want = self.kernels * self.archs.len();
        self.nvrtc.is_ok() && self.kernels > 0 && self.compiled == want && self.cubins == self.cubins_wanted
            && (self.ptxas.is_none() || self.assembled == want)
    }
}

/// Makes NVRTC loadable: opens `FARFIELD_NVRTC_LIB` globally when set, then asks cudarc.
/// Returns a description of where it was found, or why not.
pub fn load_nvrtc() -> std::result::Result<String, String> {
    let mut from = "the dynamic loader path".to_string();
    if let Some(p) = std::env::var_os("FARFIELD_NVRTC_LIB") {
        let c = std::ffi::CString::new(p.as_encoded_bytes()).map_err(|_| "FARFIELD_NVRTC_LIB contains a NUL byte".to_string())?;
        // SAFETY: dlopen with a valid C string; the handle is kept for the process lifetime.
        let h = unsafe { libc::dlopen(c.as_ptr(), libc::RTLD_NOW | libc::RTLD_GLOBAL) };
        if h.is_null() {
            // SAFETY: dlerror returns a thread-local message or null.
            let e = unsafe { libc::dlerror() };
            let msg = if e.is_null() { String::new() } else { unsafe { std::ffi::CStr::from_ptr(e) }.to_string_lossy().into_owned() };
            return Err(format!("FARFIELD_NVRTC_LIB={}: dlopen failed: {msg}", p.to_string_lossy()));
        }
        from = format!("FARFIELD_NVRTC_LIB={}", p.to_string_lossy());
    }
    if super::runtime::nvrtc_present() {
        Ok(from)
    } else {
        Err("NVRTC not found (looked for libnvrtc.so, libnvrtc.so.12, libnvrtc.so.11 on the loader path; set FARFIELD_NVRTC_LIB to the library, e.g. from the nvidia-cuda-nvrtc-cu12 wheel)".into())
    }
}

/// The version of the loaded NVRTC (`major.minor`), or `None` when it cannot be loaded.
pub fn nvrtc_version() -> Option<String> {
    std::panic::catch_unwind(|| {
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two out-parameters; cudarc loads the library (may panic without it: caught).
        let r = unsafe { cudarc::nvrtc::sys::nvrtcVersion(&mut major, &mut minor) };
        (r == cudarc::nvrtc::sys::nvrtcResult::NVRTC_SUCCESS).then(|| format!("{major}.{minor}"))
    })
    .ok()
    .flatten()
}

/// Compiles `src` for `arch` (e.g. `sm_80`); PTX text or the NVRTC log. NVRTC must be loadable
/// ([`load_nvrtc`]).
pub fn compile(name: &str, src: &str, arch: &str) -> std::result::Result<String, String> {
    compile_full(name, src, arch).map(|(ptx, _)| ptx)
}

/// Compiles `src` for the real architecture `arch` (`sm_XX`, as `--gpu-architecture`) once and
/// returns both products: the PTX and the CUBIN (`nvrtcGetCUBIN`; `None` if this NVRTC gives
/// none, e.g. for a virtual `compute_XX`). The CUBIN is what a device loads without the
/// driver's PTX JIT; the PTX is what `farfield gpu check` assembles with ptxas. On failure,
/// the NVRTC log. NVRTC must be loadable ([`load_nvrtc`]); never panics.
pub fn compile_full(name: &str, src: &str, arch: &str) -> std::result::Result<(String, Option<Vec<u8>>), String> {
    use cudarc::nvrtc::{result, sys};
    let r = std::panic::catch_unwind(|| -> std::result::Result<(String, Option<Vec<u8>>), String> {
        let csrc = std::ffi::CString::new(src).map_err(|_| format!("{name} contains a NUL byte"))?;
        let cname = std::ffi::CString::new(name).map_err(|_| format!("{name}: NUL in the name"))?;
        let prog = result::create_program(&csrc, Some(&cname)).map_err(|e| format!("nvrtcCreateProgram: {e:?}"))?;
        let out = (|| {
            let opts = [format!("--gpu-architecture={arch}"), "--std=c++17".to_string()];
            // SAFETY: prog is a live program (destroyed below, after its last use).
            if let Err(e) = unsafe { result::compile_program(prog, &opts) } {
                let log = unsafe { result::get_program_log(prog) }.unwrap_or_default();
                // SAFETY: NVRTC's log is NUL-terminated.
                let log = if log.is_empty() { String::new() } else { unsafe { std::ffi::CStr::from_ptr(log.as_ptr()) }.to_string_lossy().into_owned() };
                return Err(format!("{e:?} with {opts:?}: {log}"));
            }
            // SAFETY: compiled program.
            let ptx = unsafe { result::get_ptx(prog) }.map_err(|e| format!("nvrtcGetPTX: {e:?}"))?;
            let ptx = unsafe { std::ffi::CStr::from_ptr(ptx.as_ptr()) }.to_string_lossy().into_owned();
            let mut size = 0usize;
            // SAFETY: compiled program; size receives the CUBIN's size (0 or an error when none).
            let cubin = if unsafe { sys::nvrtcGetCUBINSize(prog, &mut size) } == sys::nvrtcResult::NVRTC_SUCCESS && size > 0 {
                let mut buf = vec![0u8; size];
                // SAFETY: buf holds `size` bytes.
                let ok = unsafe { sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut std::ffi::c_char) } == sys::nvrtcResult::NVRTC_SUCCESS;
                ok.then_some(buf)
            } else {
                None
            };
            Ok((ptx, cubin))
        })();
        // SAFETY: created above, destroyed once.
        let _ = unsafe { result::destroy_program(prog) };
        out
    });
    r.unwrap_or_else(|_| Err("NVRTC could not be loaded".into()))
}

/// Kernel entry points of a PTX module (`.entry name(`).
pub fn entries(ptx: &str) -> Vec<String> {
    ptx.lines()
        .filter_map(|l| {
            let t = l.trim_start();
            let rest = t.strip_prefix(".visible .entry ").or_else(|| t.strip_prefix(".entry "))?;
            Some(rest.split(|c: char| c == '(' || c.is_whitespace()).next()?.to_string())
        })
        .collect()
}

fn ptx_version(ptx: &str) -> Option<String> {
    ptx.lines().find_map(|l| l.trim().strip_prefix(".version ").map(|v| v.trim().to_string()))
}

/// Assembles `ptx` with `ptxas -v -arch=<arch>` in a scratch directory; the resources it
/// reports per kernel ([`super::occupancy::parse_ptxas_verbose`]).
pub fn assemble(ptxas: &Path, ptx: &str, arch: &str) -> std::result::Result<Vec<super::occupancy::KernelResources>, String> {
    static SEQ: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let dir = std::env::temp_dir().join(format!(
        "farfield-ptxas-{}-{}",
        std::process::id(),
        SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    ));
    std::fs::create_dir_all(&dir).map_err(|e| format!("scratch directory: {e}"))?;
    let input = dir.join("k.ptx");
    let out = dir.join("k.cubin");
    let res = (|| {
        std::fs::write(&input, ptx).map_err(|e| format!("writing PTX: {e}"))?;
        let o = std::process::Command::new(ptxas)
            .arg("-v")
            .arg(format!("-arch={arch}"))
            .arg(&input)
            .arg("-o")
            .arg(&out)
            .output()
            .map_err(|e| format!("running {}: {e}", ptxas.display()))?;
        if o.status.success() && out.exists() {
            // ptxas writes its -v report to stderr (some versions to stdout)
            let report = format!("{}{}", String::from_utf8_lossy(&o.stdout), String::from_utf8_lossy(&o.stderr));
            Ok(super::occupancy::parse_ptxas_verbose(&report))
        } else {
            Err(format!("ptxas exit {:?}: {}", o.status.code(), String::from_utf8_lossy(&o.stderr)))
        }
    })();
    let _ = std::fs::remove_dir_all(&dir);
    res
}

/// Runs the check for `archs` on the library's sources and the width modules `widths` (ptxas
/// from `ptxas` when given).
pub fn run(archs: &[String], widths: &[super::WidthModule], ptxas: Option<PathBuf>) -> CheckReport {
    run_with_progress(archs, widths, ptxas, |_, _, _, _| {})
}

/// The modules a check compiles: the library's sources, then the width modules `widths`, as
/// (name, source text).
pub fn modules(widths: &[super::WidthModule]) -> Vec<(String, String)> {
    let base = super::KERNEL_SOURCES.iter().map(|&(n, s)| (n.to_string(), s.to_string()));
    base.chain(widths.iter().map(|w| (w.name(), w.source()))).collect()
}

/// [`run`], calling `progress(done, total, source, arch)` on the calling thread as each
/// (source, architecture) pair finishes (`done` of the `total` pairs finished, that pair's
/// names), after `progress(0, total, "", "")` at the start; not called when NVRTC cannot be
/// loaded. The pairs compile and assemble on one worker thread per core (each its own NVRTC
/// program and ptxas process); the report lists them in the order of
/// [`modules`] and `archs` whatever order they finish in.
pub fn run_with_progress(archs: &[String], widths: &[super::WidthModule], ptxas: Option<PathBuf>,
                         mut progress: impl FnMut(usize, usize, &str, &str)) -> CheckReport {
    let mut rep = CheckReport {
        archs: archs.to_vec(),
        device_found: matches!(super::runtime::discover(), Ok(d) if !d.is_empty()),
        nvrtc: load_nvrtc(),
        ptxas,
        kernels: 0,
        compiled: 0,
        assembled: 0,
        cubins: 0,
        cubins_wanted: 0,
        results: Vec::new(),
    };
    if rep.nvrtc.is_err() {
        return rep;
    }
    let mods = modules(widths);
    // a width module's PTX alone when ptxas assembles it (see `cubins_wanted`)
    let (nbase, has_ptxas) = (super::KERNEL_SOURCES.len(), rep.ptxas.is_some());
    let pairs: Vec<(&str, &str, &String, bool)> = mods
        .iter()
        .enumerate()
        .flat_map(|(i, (name, src))| archs.iter().map(move |arch| (name.as_str(), src.as_str(), arch, i >= nbase && has_ptxas)))
        .collect();
    rep.cubins_wanted = pairs.iter().filter(|p| !p.3).count();
    let total = pairs.len();
    progress(0, total, "", "");
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get()).clamp(1, total.max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let mut done: Vec<Option<(ArchResult, bool)>> = (0..total).map(|_| None).collect();
    std::thread::scope(|scope| {
        let (tx, rx) = std::sync::mpsc::channel();
        for _ in 0..workers {
            let (tx, next, pairs, ptxas) = (tx.clone(), &next, &pairs, rep.ptxas.as_deref());
            scope.spawn(move || loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&(name, src, arch, ptx_only)) = pairs.get(i) else { break };
                if tx.send((i, check_pair(name, src, arch, ptxas, ptx_only))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        for (finished, (i, r)) in rx.iter().enumerate() {
            progress(finished + 1, total, pairs[i].0, pairs[i].2);
            done[i] = Some(r);
        }
    });
    let mut all = std::collections::BTreeSet::new();
    for (r, has_cubin) in done.into_iter().flatten() {
        rep.cubins += has_cubin as usize;
        if r.compile_error.is_none() {
            rep.compiled += r.entries.len();
        }
        if r.assembled == Some(true) {
            rep.assembled += r.entries.len();
        }
        for e in &r.entries {
            all.insert(format!("{}:{e}", r.source));
        }
        rep.results.push(r);
    }
    rep.kernels = all.len();
    rep
}

/// Compiles one kernel source for one architecture and, with `ptxas`, assembles its PTX; the
/// result and whether NVRTC gave a CUBIN. With `ptx_only` NVRTC makes the PTX alone (for the
/// virtual architecture `compute_XY` of `sm_XY`: the same PTX).
fn check_pair(name: &str, src: &str, arch: &str, ptxas: Option<&Path>, ptx_only: bool) -> (ArchResult, bool) {
    let mut r = ArchResult {
        source: name.to_string(),
        arch: arch.to_string(),
        entries: Vec::new(),
        ptx_version: None,
        compile_error: None,
        assembled: None,
        ptxas_error: None,
        cubin_bytes: None,
        resources: Vec::new(),
    };
    let mut has_cubin = false;
    let nvrtc_arch = if ptx_only { arch.replacen("sm_", "compute_", 1) } else { arch.to_string() };
    match compile_full(name, src, &nvrtc_arch) {
        Ok((ptx, cubin)) => {
            r.cubin_bytes = cubin.as_ref().map(|c| c.len());
            has_cubin = cubin.is_some();
            r.entries = entries(&ptx);
            r.ptx_version = ptx_version(&ptx);
            if let Some(p) = ptxas {
                match assemble(p, &ptx, arch) {
                    Ok(res) => {
                        r.resources = res;
                        r.assembled = Some(true);
                    }
                    Err(e) => {
                        r.assembled = Some(false);
                        r.ptxas_error = Some(e);
                    }
                }
            }
        }
        Err(e) => r.compile_error = Some(e),
    }
    (r, has_cubin)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names_are_parsed() {
        let ptx = ".version 8.8\n.target sm_80\n.visible .entry ff_scan_add(\n\t.param .u64 a\n)\n.visible .entry ff_fold_f32(\n";
        assert_eq!(entries(ptx), vec!["ff_scan_add".to_string(), "ff_fold_f32".to_string()]);
        assert_eq!(ptx_version(ptx).as_deref(), Some("8.8"));
    }

    #[test]
    fn one_compilation_gives_ptx_and_cubin() {
        // runs where NVRTC is loadable (scripts/gpu-check.sh sets FARFIELD_NVRTC_LIB); without
        // it the error names NVRTC and nothing panics
        let src = "extern \"C\" __global__ void k(double* a) { atomicAdd(a, 1.0); }";
        if load_nvrtc().is_err() {
            let e = compile_full("k.cu", src, "sm_80").unwrap_err();
            assert!(e.contains("NVRTC"), "{e}");
            return;
        }
        for arch in ["sm_80", "sm_90"] {
            let (ptx, cubin) = compile_full("k.cu", src, arch).unwrap();
            assert_eq!(entries(&ptx), vec!["k".to_string()]);
            assert!(ptx.contains(&format!(".target {arch}")), "{ptx}");
            let cubin = cubin.expect("a CUBIN for a real architecture");
            assert_eq!(&cubin[..4], b"\x7fELF", "{arch}: the CUBIN is an ELF image");
        }
        let e = compile_full("bad.cu", "__global__ void k( {", "sm_80").unwrap_err();
        assert!(e.contains("bad.cu") || e.contains("error"), "{e}");
    }

    #[test]
    fn report_ok_needs_every_kernel_for_every_arch() {
        let mut r = CheckReport { kernels: 3, compiled: 6, assembled: 6, cubins: 0, cubins_wanted: 0, archs: vec!["sm_80".into(), "sm_90".into()], nvrtc: Ok("x".into()), ptxas: Some("p".into()), device_found: false, results: Vec::new() };
        assert!(r.ok());
        let one = ArchResult { source: "a.cu".into(), arch: "sm_80".into(), entries: vec![], ptx_version: None, compile_error: None,
                               assembled: Some(true), ptxas_error: None, cubin_bytes: Some(10), resources: Vec::new() };
        r.results = vec![one.clone(), one];
        r.cubins_wanted = 2;
        assert!(!r.ok(), "a source without CUBIN");
        r.cubins = 2;
        assert!(r.ok());
        r.assembled = 5;
        assert!(!r.ok());
        r.ptxas = None;
        assert!(r.ok());
        r.compiled = 5;
        assert!(!r.ok());
    }
}
