//! The repository's documentation stands on its own (docs/design.md §11): no tracked text file
//! refers to a file outside the repository, every repository path it names exists, and every
//! `docs/design.md §N` it cites names a section of that document.
//!
//! Checked in every tracked text file (`git ls-files`; without git, a walk of the tree that
//! skips build and environment folders):
//! * design or dependency notes kept elsewhere: an upper-case Markdown file name (`NAME.md`)
//!   that no tracked file has;
//! * sibling or private folders: `../shared`, `shared/data`, `seeds/`, "seed 00N" (the papers
//!   are cited by authors, journal and year instead), and absolute home or work paths;
//! * repository paths: a word starting with a top-level folder of the repository (`src/…`,
//!   `docs/…`, `c_tests/…`, `fortran/…`, `cli/…`, …) must name a tracked file or folder,
//!   relative to the repository root or to a folder above the mentioning file (so `src/main.rs`
//!   in `cli/README.md` is `cli/src/main.rs`). Words glued to a preceding path or variable
//!   (`${PREFIX}/lib/cmake/…`, `lib/cmake/farfield`) and templates (`<name>`, `*`, `{…}`) are
//!   not repository paths and are skipped;
//! * `docs/design.md §N` (also `` `docs/design.md` §N``, `docs/design.md section N`, and lists
//!   `§N, §M`) must name a heading `## N.` or `### N.M` of docs/design.md.
//!
//! This file itself is exempt from the forbidden-word checks (it has to name them).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::Command;

const THIS_FILE: &str = "tests/doc_links.rs";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Tracked files, relative to the root, with `/` separators.
fn tracked_files(root: &Path) -> Vec<String> {
    if let Ok(o) = Command::new("git").arg("-C").arg(root).args(["ls-files", "-z"]).output() {
        if o.status.success() && !o.stdout.is_empty() {
            return o
                .stdout
                .split(|&b| b == 0)
                .filter(|s| !s.is_empty())
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .collect();
        }
    }
    // no git (e.g. a packaged crate): walk the tree, skipping outputs and environments
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(rd) = std::fs::read_dir(&d) else { continue };
        for e in rd.flatten() {
            let p = e.path();
            let name = e.file_name().to_string_lossy().into_owned();
            if p.is_dir() {
                if !(name == "target" || name == "build" || name.starts_with('.')) {
                    stack.push(p);
                }
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().replace('\\', "/"));
            }
        }
    }
    out.sort();
    out
}

/// Text of a file, or None for binary files (NUL bytes, invalid UTF-8) and lock files.
fn text_of(root: &Path, rel: &str) -> Option<String> {
    if rel.ends_with(".lock") {
        return None;
    }
    let b = std::fs::read(root.join(rel)).ok()?;
    if b.contains(&0) {
        return None;
    }
    String::from_utf8(b).ok()
}

/// Every tracked file and every folder above one.
fn known_paths(files: &[String]) -> BTreeSet<String> {
    let mut s = BTreeSet::new();
    for f in files {
        s.insert(f.clone());
        let mut p = f.as_str();
        while let Some(i) = p.rfind('/') {
            p = &p[..i];
            s.insert(p.to_string());
        }
    }
    s
}

/// Top-level folders of the repository (the first component of tracked paths).
fn top_folders(files: &[String]) -> BTreeSet<String> {
    files.iter().filter_map(|f| f.split_once('/').map(|(a, _)| a.to_string())).collect()
}

fn is_path_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/')
}

/// Characters that glue a word to what precedes it (a longer path, a variable, a URL).
fn glued(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | '/' | '$' | '}' | ')' | ':' | '~' | '@' | '%')
}

/// Repository-path words of a text: `(line, word)` for words starting with `<top>/`.
fn path_words(text: &str, tops: &BTreeSet<String>) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (ln, line) in text.lines().enumerate() {
        let chars: Vec<(usize, char)> = line.char_indices().collect();
        let mut k = 0;
        while k < chars.len() {
            let (i, c) = chars[k];
            let starts = c.is_ascii_alphanumeric() || c == '.' || c == '_';
            let prev_ok = k == 0 || !glued(chars[k - 1].1);
            if !(starts && prev_ok) {
                k += 1;
                continue;
            }
            let mut j = k;
            while j < chars.len() && is_path_char(chars[j].1) {
                j += 1;
            }
            let end = if j < chars.len() { chars[j].0 } else { line.len() };
            let word = &line[i..end];
            let next = if j < chars.len() { Some(chars[j].1) } else { None };
            k = j.max(k + 1);
            let Some((top, rest)) = word.split_once('/') else { continue };
            if !tops.contains(top) || rest.is_empty() {
                continue;
            }
            // templates and globs: src/<module>/, gpu/kernels/*.cu, src/{a,b}
            if matches!(next, Some('<' | '*' | '{' | '$')) {
                continue;
            }
            let w = word.trim_end_matches(['.', ',', ':', ';']).trim_end_matches('/');
            if w.contains('/') && !w.ends_with("..") {
                out.push((ln + 1, w.to_string()));
            }
        }
    }
    out
}

/// Whether `word` names a known path relative to the root or to a folder above `file`.
fn resolves(word: &str, file: &str, known: &BTreeSet<String>) -> bool {
    let mut base = file;
    loop {
        base = match base.rfind('/') {
            Some(i) => &base[..i],
            None => "",
        };
        let cand = if base.is_empty() { word.to_string() } else { format!("{base}/{word}") };
        if known.contains(&cand) {
            return true;
        }
        if base.is_empty() {
            return false;
        }
    }
}

/// Upper-case Markdown file names (`NAME.md`) in a line.
fn upper_md_names(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let b = line.as_bytes();
    let mut i = 0;
    while let Some(p) = line[i..].find(".md") {
        let end = i + p;
        let mut s = end;
        while s > 0 && (b[s - 1].is_ascii_uppercase() || b[s - 1].is_ascii_digit() || b[s - 1] == b'_') {
            s -= 1;
        }
        let after = b.get(end + 3).copied();
        let boundary_after = after.is_none_or(|c| !(c.is_ascii_alphanumeric() || c == b'_'));
        let boundary_before = s == 0 || !(b[s - 1].is_ascii_alphanumeric() || b[s - 1] == b'_');
        if s < end && b[s].is_ascii_uppercase() && boundary_after && boundary_before {
            out.push(line[s..end + 3].to_string());
        }
        i = end + 3;
    }
    out
}

/// Forbidden references to places outside the repository in a line (lower-cased matching
/// where the spelling varies).
fn outside_refs(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for pat in ["../shared", "shared/data", "seeds/", "/home/", "/root/", "/work/", "/Users/"] {
        if line.contains(pat) {
            out.push(pat.to_string());
        }
    }
    // "seed 000", "seed-002", "seed_001", "seeds 003": papers are cited by authors instead
    let lower = line.to_ascii_lowercase();
    let lb = lower.as_bytes();
    let mut i = 0;
    while let Some(p) = lower[i..].find("seed") {
        let s = i + p;
        let mut j = s + 4;
        if lb.get(j) == Some(&b's') {
            j += 1;
        }
        if matches!(lb.get(j), Some(b' ' | b'-' | b'_')) {
            j += 1;
        }
        let digits = lb[j..].iter().take_while(|c| c.is_ascii_digit()).count();
        if digits == 3 && lb[j] == b'0' && lb[j + 1] == b'0' {
            out.push(line[s..j + 3].to_string());
        }
        i = s + 4;
    }
    out
}

/// Section numbers of docs/design.md: "N" for `## N.` and "N.M" for `### N.M`.
fn design_sections(text: &str) -> BTreeSet<String> {
    let mut s = BTreeSet::new();
    for line in text.lines() {
        let h = line.trim_start_matches('#');
        if h.len() == line.len() || !h.starts_with(' ') {
            continue;
        }
        let num: String = h.trim_start().chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
        let num = num.trim_end_matches('.');
        if !num.is_empty() {
            s.insert(num.to_string());
        }
    }
    s
}

/// Section numbers cited as `docs/design.md §N` (and the variants of the module docs) in a line.
fn design_citations(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut i = 0;
    while let Some(p) = line[i..].find("docs/design.md") {
        let mut rest = &line[i + p + "docs/design.md".len()..];
        i += p + "docs/design.md".len();
        rest = rest.trim_start_matches('`').trim_start_matches([' ', ',']);
        loop {
            let r = if let Some(r) = rest.strip_prefix('§') {
                r
            } else if let Some(r) = rest.strip_prefix("section ") {
                r
            } else {
                break;
            };
            let num: String = r.chars().take_while(|c| c.is_ascii_digit() || *c == '.').collect();
            let num = num.trim_end_matches('.').to_string();
            if num.is_empty() {
                break;
            }
            out.push(num.clone());
            rest = &r[num.len()..];
            // a list: "§3.1, §6" or "§3 and §5"
            let next = rest.trim_start_matches([',', ' ']).trim_start_matches("and ").trim_start();
            if !next.starts_with('§') {
                break;
            }
            rest = next;
        }
    }
    out
}

#[test]
fn docs_refer_only_to_the_repository() {
    let root = root();
    let files = tracked_files(&root);
    assert!(files.iter().any(|f| f == "docs/design.md"), "docs/design.md is missing");
    let known = known_paths(&files);
    let tops = top_folders(&files);
    let basenames: BTreeSet<&str> = files.iter().map(|f| f.rsplit('/').next().unwrap_or(f)).collect();
    let design = text_of(&root, "docs/design.md").expect("docs/design.md is text");
    let sections = design_sections(&design);
    assert!(sections.contains("3") && sections.contains("3.2"), "no numbered headings found in docs/design.md");

    let mut problems = Vec::new();
    let mut checked = 0usize;
    for f in &files {
        let Some(text) = text_of(&root, f) else { continue };
        checked += 1;
        let exempt = f == THIS_FILE;
        for (ln, line) in text.lines().enumerate() {
            if !exempt {
                for name in upper_md_names(line) {
                    if !basenames.contains(name.as_str()) {
                        problems.push(format!("{f}:{}: refers to {name}, which is not in the repository", ln + 1));
                    }
                }
                for r in outside_refs(line) {
                    problems.push(format!("{f}:{}: refers to a place outside the repository ({r})", ln + 1));
                }
            }
            for n in design_citations(line) {
                if !sections.contains(&n) {
                    problems.push(format!("{f}:{}: cites docs/design.md §{n}, which has no such section", ln + 1));
                }
            }
        }
        if exempt {
            continue;
        }
        for (ln, w) in path_words(&text, &tops) {
            if !resolves(&w, f, &known) {
                problems.push(format!("{f}:{ln}: names {w}, which is not a file or folder of the repository"));
            }
        }
    }
    assert!(checked > 20, "only {checked} text files found");
    assert!(
        problems.is_empty(),
        "{} reference(s) outside the repository or to missing paths:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

#[test]
fn the_checks_catch_what_they_should() {
    let tops: BTreeSet<String> = ["src", "docs", "cli"].iter().map(|s| s.to_string()).collect();
    let files: Vec<String> =
        ["src/gpu/check.rs", "cli/src/main.rs", "docs/design.md"].iter().map(|s| s.to_string()).collect();
    let known = known_paths(&files);
    let words = |t: &str| path_words(t, &tops).into_iter().map(|(_, w)| w).collect::<Vec<_>>();
    // a missing file is found, an existing one resolves, relative to a folder above the file too
    assert_eq!(
        words("// compiled by NVRTC (src/gpu/nvrtc.rs) and src/gpu/check.rs."),
        ["src/gpu/nvrtc.rs", "src/gpu/check.rs"]
    );
    assert!(!resolves("src/gpu/nvrtc.rs", "src/gpu/kernels/spread.cu", &known));
    assert!(resolves("src/gpu/check.rs", "src/gpu/kernels/spread.cu", &known));
    assert!(resolves("src/main.rs", "cli/README.md", &known));
    assert!(resolves("src/gpu", "README.md", &known));
    // glued words, templates and globs are not repository paths
    assert!(words("${PREFIX}/lib/cmake/farfield, lib/src/x, https://x.org/src/y").is_empty());
    assert!(words("src/<module>/mod.rs, src/gpu/kernels/*.cu, src/{a,b}").is_empty());
    // outside references
    assert_eq!(upper_md_names("see DESIGN.md §5 and README.md, not readme.md"), ["DESIGN.md", "README.md"]);
    assert_eq!(outside_refs("(seed 002 §3.1), Seed-001, seeds 003"), ["seed 002", "Seed-001", "seeds 003"]);
    assert!(outside_refs("random seed 7, seed 42, seed 1234").is_empty());
    assert_eq!(outside_refs("../shared/data/x"), ["../shared", "shared/data"]);
    // design citations
    assert_eq!(design_citations("(docs/design.md §3.1, §6) and `docs/design.md` §11.1."), ["3.1", "6", "11.1"]);
    assert_eq!(design_citations("(docs/design.md section 5.3)"), ["5.3"]);
    assert_eq!(
        design_sections("# t\n## 3. C API\n### 3.2 Versioned\ntext 4. no\n"),
        ["3", "3.2"].iter().map(|s| s.to_string()).collect()
    );
}
