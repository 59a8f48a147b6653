//! The generator of `src/kernel/es_table.rs`: the ES kernel's fitted shape (β, e) and model
//! error E for every width and upsampling factor of the table.
//!
//! ```text
//! cargo bench --bench es_table                           # print the whole file
//! cargo bench --bench es_table -- --write                # write src/kernel/es_table.rs
//! cargo bench --bench es_table -- --widths 2,3 --columns 0,26 --threads 1
//! ```
//!
//! Arguments (all optional):
//! * `--write` — write the file `src/kernel/es_table.rs` of this source tree instead of
//!   printing it (the whole table only);
//! * `--widths W,W,…` — only these rows (widths 2 … 16; default all), printed, not written: a
//!   quick look at a part of the table;
//! * `--columns I,I,…` — only these columns (`σ = 1.20 + 0.05·I`, I = 0 … 26; default all),
//!   likewise;
//! * `--threads K` — threads for the entries, 0 = all cores (default 0).
//!
//! Each entry is `farfield::kernel::es::fit_table_entry(w, σ)` for w = 2 … 16
//! (`TABLE_W0 ..= MAX_ES_WIDTH`) and σ = 1.20, 1.25, … 2.50 (`table_sigma(i)`,
//! `i < TABLE_NSIGMA`), its error clamped below at `ALIAS_FLOOR`. The whole table takes about
//! ten minutes of one core, most of it in the wide kernels; the entries run in parallel.
//!
//! The table `kernel::es::table::ES_TABLE` is the shape and error estimate of every ES kernel
//! (`EsParams::shape_for`, `EsParams::error_estimate_dim` via `kernel::es::table_lookup`, in
//! `src/kernel/es.rs`), hence the width and σ the NUFFT chooses (docs/design.md §9.1). Regenerate
//! it after a change to the error model (`AliasModel`, `aliasing_error`) or the fit
//! (`AliasModel::best_shape`); the unit test `kernel::es::tests::table_entries_recompute`
//! recomputes a sample of entries against the committed file.

mod common;

use common::Args;
use farfield::kernel::es::{fit_table_entry, table_sigma, ALIAS_FLOOR, MAX_ES_WIDTH, TABLE_NSIGMA, TABLE_W0};
use rayon::prelude::*;

const HEADER: &str = "//! GENERATED — do not edit. The kernel's fitted shape per (w, σ):
//! `ES_TABLE[w − 2][i] = (β, e, E)` for widths w = 2 … 16 and σ = 1.20 + 0.05·i (i = 0 … 26), where
//! (β, e) minimise the aliasing-error model of `φ(z) = exp(β((1 − z²)^e − 1))` sampled at
//! `FIT_XI_SAMPLES` values of ξ (`AliasModel::best_shape`: β for e = ½ by a scan of β/w ∈ [1, 3.2]
//! refined by golden section, then a golden-section search over e with β refitted) and E is the
//! model error `kernel::es::aliasing_error(w, β, e, σ)` of that shape (`ALIAS_XI_SAMPLES` values
//! of ξ; clamped below at `ALIAS_FLOOR` = 1e-15, the model's rounding floor). See `kernel::es`
//! and docs/design.md §9.1.
//!
//! Regenerate with `cargo bench --bench es_table -- --write` (benches/es_table.rs);
//! `kernel::es::tests::table_entries_recompute` checks a sample of entries on every test run.

";

fn main() {
    let mut a = Args::parse(include_str!("es_table.rs"), "--widths 2 --columns 0,26 --threads 1");
    let write = a.flag("write");
    let all: Vec<usize> = (TABLE_W0..=MAX_ES_WIDTH).collect();
    let widths: Vec<usize> = a.list("widths", &all);
    let all_columns: Vec<usize> = (0..TABLE_NSIGMA).collect();
    let columns: Vec<usize> = a.list("columns", &all_columns);
    let threads: usize = a.get("threads", 0);
    if let Some(w) = widths.iter().find(|w| !all.contains(w)) {
        a.fail(&format!("--widths: {w} is not in {TABLE_W0} … {MAX_ES_WIDTH}"));
    }
    if let Some(i) = columns.iter().find(|&&i| i >= TABLE_NSIGMA) {
        a.fail(&format!("--columns: {i} is not in 0 … {}", TABLE_NSIGMA - 1));
    }
    if write && (widths != all || columns != all_columns) {
        a.fail("--write needs the whole table (leave out --widths and --columns)");
    }
    a.finish();
    let entries: Vec<(usize, usize)> = widths.iter().flat_map(|&w| columns.iter().map(move |&i| (w, i))).collect();
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build().expect("thread pool");
    let fitted: Vec<(f64, f64, f64)> = pool.install(|| entries.par_iter().map(|&(w, i)| fit_table_entry(w, table_sigma(i))).collect());
    let mut out = String::new();
    out.push_str(HEADER);
    out.push_str("/// `(β, e, E)` per width (rows, w = 2 … 16) and σ (columns, 1.20 … 2.50 by 0.05).\n");
    out.push_str(&format!("pub const ES_TABLE: [[(f64, f64, f64); {TABLE_NSIGMA}]; {}] = [\n", all.len()));
    for (row, &w) in widths.iter().enumerate() {
        out.push_str(&format!("    // w = {w}\n    [\n"));
        for (col, &i) in columns.iter().enumerate() {
            let sigma = table_sigma(i);
            let (beta, e, err) = fitted[row * columns.len() + col];
            out.push_str(&format!("        ({beta:.6}, {e:.6}, {:.4e}), // σ = {sigma:.2}, β/w = {:.4}\n", err.max(ALIAS_FLOOR), beta / w as f64));
        }
        out.push_str("    ],\n");
    }
    out.push_str("];\n");
    if write {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/src/kernel/es_table.rs");
        std::fs::write(path, &out).unwrap_or_else(|e| panic!("{path}: {e}"));
        println!("wrote {path}");
    } else {
        print!("{out}");
    }
}
