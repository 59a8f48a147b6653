//! The library's modules import downward only (docs/design.md §1, "Dependency direction"):
//! every `crate::<module>` path in the code of `src/` (comments and `#[cfg(test)]` code aside)
//! names a module of a lower layer than the file's own, by the order of [`LAYERS`].
//!
//! The imports that still run upward are listed in [`KNOWN_UPWARD`], each with the module it
//! reaches; the list is exact: an upward import not in it fails the test, and so does an entry
//! that no longer occurs (remove it: the list only shrinks).

use std::collections::BTreeSet;
use std::path::Path;

/// Top-level modules of `src/`, lowest layer first; modules of one layer do not import each
/// other.
const LAYERS: &[&[&str]] = &[
    &["error", "quad", "memo"],
    &["fft", "scale", "threads", "simd", "backend", "pairs"],
    &["real", "mpi"],
    &["kernel"],
    &["spread"],
    &["nufft"],
    &["ewald", "poisson", "fmm"],
    &["gpu"],
    &["plans"],
    &["capi"],
];

/// Upward imports not yet removed: (file under `src/`, module it imports).
const KNOWN_UPWARD: &[(&str, &str)] = &[];

/// The crate root's re-exports (`src/lib.rs`) and the modules they come from.
const ROOT_ITEMS: &[(&str, &str)] = &[("Error", "error"), ("Result", "error"), ("Real", "real")];

fn layer(module: &str) -> Option<usize> {
    let module = ROOT_ITEMS.iter().find(|(item, _)| *item == module).map_or(module, |(_, m)| m);
    LAYERS.iter().position(|l| l.contains(&module))
}

/// The code of a file without comments and without its test-only items (each item after a
/// `#[cfg(test)]`: a `mod x;`/`use …;` statement, or a braced block such as `mod tests { … }`).
fn code(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut block = 0usize;
    for line in text.lines() {
        let mut l = line;
        if block > 0 {
            match l.find("*/") {
                Some(i) => {
                    block -= 1;
                    l = &l[i + 2..];
                }
                None => continue,
            }
        }
        if let Some(i) = l.find("/*") {
            if !l[i..].contains("*/") {
                block += 1;
            }
            l = &l[..i];
        }
        out.push_str(l.split("//").next().unwrap_or_default());
        out.push('\n');
    }
    without_test_items(&out)
}

/// `code` with every item that follows a `#[cfg(test)]` removed, up to its `;` or the `}` that
/// closes its first `{` (braces inside string literals are not expected in such items).
fn without_test_items(code: &str) -> String {
    const MARK: &str = "#[cfg(test)]";
    let mut out = String::with_capacity(code.len());
    let mut rest = code;
    while let Some(i) = rest.find(MARK) {
        out.push_str(&rest[..i]);
        let item = &rest[i + MARK.len()..];
        let mut depth = 0usize;
        let mut end = item.len();
        for (k, c) in item.char_indices() {
            match c {
                ';' if depth == 0 => {
                    end = k + 1;
                    break;
                }
                '{' => depth += 1,
                '}' => {
                    depth = depth.saturating_sub(1);
                    if depth == 0 {
                        end = k + 1;
                        break;
                    }
                }
                _ => {}
            }
        }
        rest = &item[end..];
    }
    out.push_str(rest);
    out
}

/// The top-level modules a code text names as `crate::<module>`.
fn reached(code: &str) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    for (i, _) in code.match_indices("crate::") {
        if i > 0 && code[..i].ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_') {
            continue;
        }
        let rest = &code[i + 7..];
        let ident = |t: &str| -> String { t.trim_start().chars().take_while(|c| c.is_ascii_alphanumeric() || *c == '_').collect() };
        if let Some(group) = rest.strip_prefix('{') {
            // `crate::{a::x, b}`: the first segment of each item at the group's top level
            let (mut depth, mut start) = (0usize, 0usize);
            for (k, c) in group.char_indices() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => {
                        out.insert(ident(&group[start..k]));
                        break;
                    }
                    '}' => depth -= 1,
                    ',' if depth == 0 => {
                        out.insert(ident(&group[start..k]));
                        start = k + 1;
                    }
                    _ => {}
                }
            }
        } else {
            out.insert(ident(rest));
        }
    }
    out
}

fn rust_files(dir: &Path, out: &mut Vec<std::path::PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

#[test]
fn modules_import_downward_only() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let mut upward = BTreeSet::new();
    let mut unknown = BTreeSet::new();
    for f in &files {
        let rel = f.strip_prefix(&src).unwrap().to_string_lossy().replace('\\', "/");
        let stem = rel.rsplit('/').next().unwrap().trim_end_matches(".rs");
        // test modules kept in files of their own may reach anything
        if stem == "tests" || stem.starts_with("tests_") || stem.ends_with("_tests") || rel == "lib.rs" {
            continue;
        }
        let own = rel.split('/').next().unwrap().trim_end_matches(".rs").to_string();
        let Some(lo) = layer(&own) else {
            unknown.insert(own);
            continue;
        };
        for m in reached(&code(&std::fs::read_to_string(f).unwrap())) {
            if m == own {
                continue;
            }
            match layer(&m) {
                None => {
                    unknown.insert(m);
                }
                Some(l) if l >= lo => {
                    upward.insert((rel.clone(), m));
                }
                Some(_) => {}
            }
        }
    }
    assert!(unknown.is_empty(), "modules missing from LAYERS: {unknown:?}");
    let known: BTreeSet<(String, String)> = KNOWN_UPWARD.iter().map(|(f, m)| (f.to_string(), m.to_string())).collect();
    let new: Vec<_> = upward.difference(&known).collect();
    let gone: Vec<_> = known.difference(&upward).collect();
    assert!(new.is_empty(), "imports from a module to one of its own layer or above (docs/design.md §1): {new:?}");
    assert!(gone.is_empty(), "these upward imports are gone: remove them from KNOWN_UPWARD: {gone:?}");
}

#[test]
fn the_scanner_sees_paths_not_comments() {
    let c = code("use crate::gpu::x; // crate::capi\n/// [`crate::nufft`]\nfn f() { crate::fft::plan(); }\n/* crate::mpi */\n#[cfg(test)]\nuse crate::ewald;");
    assert_eq!(reached(&c), ["fft", "gpu"].iter().map(|s| s.to_string()).collect());
    assert_eq!(reached("farfield_crate::gpu"), BTreeSet::new());
    let g = reached("use crate::{gpu::{a, b}, nufft, fft::plan as p};");
    assert_eq!(g, ["fft", "gpu", "nufft"].iter().map(|s| s.to_string()).collect());
    // only the item after #[cfg(test)] is test code: imports after it still count
    let c = code("#[cfg(test)]\nmod tests;\n#[cfg(test)]\nmod t {\n    use crate::capi::{x};\n    fn f() { crate::mpi::g(); }\n}\nuse crate::gpu::cuda;\n");
    assert_eq!(reached(&c), ["gpu"].iter().map(|s| s.to_string()).collect());
}
