//! Time and accuracy of the CPU Ewald plans (SPME and spectral Ewald) on a real molecular
//! system, against the classic Ewald sum.
//!
//! ```text
//! cargo bench --bench ewald_system                       # JAC DHFR, tol 1e-5, 2 threads
//! cargo bench --bench ewald_system -- --system water_tip3p_900 --tol 1e-6 --methods spme
//! cargo bench --bench ewald_system -- --data DIR --no-ref --threads 0
//! ```
//!
//! Arguments (all optional):
//! * `--system NAME` — a system folder of the data folder (`data/`, or `$FARFIELD_DATA_DIR`,
//!   docs/design.md §11.1; default `jac_dhfr`);
//! * `--data DIR` — a folder with `positions.npy`, `charges.npy`, `box.npy` instead;
//! * `--tol T` — tolerance of the plans (default 1e-5);
//! * `--threads K` — threads, 0 = all cores (default 2);
//! * `--methods M,M` — `spme`, `se` (spectral Ewald) or both (default `spme,se`);
//! * `--fftw FLAGS` — FFTW planner flags of the plans (default `FFTW_ESTIMATE` = 64;
//!   `FFTW_MEASURE` = 0);
//! * `--reps R` — evaluations per method, the fastest reported (default 7);
//! * `--no-ref` — skip the reference (no errors reported);
//! * `--dump-ref PATH` — write the reference forces `q_i E_i` (raw little-endian f64, N×3);
//! * `--load-ref PATH` — read them instead of computing the reference (no energy error then).
//!
//! The reference is `Method::Direct` at tol 1e-9 (its time is printed). Per method, one line:
//! the fastest evaluation's wall time with its real-space and k-space parts
//! (`EwaldParams::real_s`, `kspace_s`), the smallest process CPU time of an evaluation (all
//! threads; robust to a loaded machine), the plan time, the relative RMS force error and the
//! relative energy error, and the chosen parameters.
//!
//! It checks the parameter selection of `src/ewald/params.rs` on real data: the error model
//! (the force error should land in `[tol/3, tol]`; `benches/calibrate_ewald.py` runs this
//! over all systems and tolerances through `farfield ewald`) and the cost model whose
//! constants (`C_PAIR`, `C_SPREAD_SPME`, `C_SPREAD_SE`, `C_FFT`; ns on one core) should make
//! the real-space and k-space shares of the chosen parameters comparable to the measured ones.

mod common;

use common::{process_cpu, rel_l2, Args};
use farfield::ewald::testdata::{load_dir, load_system};
use farfield::ewald::{CpuEwald, EwaldOpts, Method};
use farfield::fft::FFTW_ESTIMATE;
use std::time::Instant;

/// Forces `F = q E` from fields `E` (interleaved, N×3).
fn forces(field: &[f64], q: &[f64]) -> Vec<f64> {
    field.iter().enumerate().map(|(k, e)| e * q[k / 3]).collect()
}

fn main() {
    let mut a = Args::parse(include_str!("ewald_system.rs"), "--system water_tip3p_900 --tol 1e-4 --methods spme --reps 1");
    let name: String = a.get("system", "jac_dhfr".to_string());
    let data: Option<String> = a.opt("data");
    let tol: f64 = a.get("tol", 1e-5);
    let nthreads: usize = a.get("threads", 2);
    let methods: Vec<String> = a.list("methods", &["spme".to_string(), "se".to_string()]);
    let fftw_flags: u32 = a.get("fftw", FFTW_ESTIMATE);
    let reps: usize = a.get("reps", 7);
    let no_ref = a.flag("no-ref");
    let dump: Option<String> = a.opt("dump-ref");
    let load: Option<String> = a.opt("load-ref");
    let methods: Vec<Method> = methods
        .iter()
        .map(|m| match m.as_str() {
            "spme" => Method::Spme,
            "se" => Method::Spectral,
            _ => a.fail(&format!("--methods: {m} is not spme or se")),
        })
        .collect();
    a.finish();
    let loaded = match &data {
        Some(dir) => load_dir(std::path::Path::new(dir)),
        None => load_system(&name),
    };
    let Some((xyz, q, cell)) = loaded else {
        eprintln!("ewald_system: system {} not found (docs/design.md §11.1)", data.unwrap_or(name));
        std::process::exit(1);
    };
    let name = data.unwrap_or(name);
    let n = q.len();
    let opts = EwaldOpts { nthreads, fftw_flags, ..EwaldOpts::default() };
    let reference = if no_ref {
        None
    } else if let Some(path) = &load {
        let b = std::fs::read(path).unwrap_or_else(|e| panic!("{path}: {e}"));
        Some((b.chunks_exact(8).map(|c| f64::from_le_bytes(c.try_into().unwrap())).collect::<Vec<f64>>(), f64::NAN))
    } else {
        let t = Instant::now();
        let mut dp = CpuEwald::new(Method::Direct, &cell, n, 1e-9, &EwaldOpts { nthreads, ..EwaldOpts::default() }).expect("reference plan");
        let mut field = vec![0.0; 3 * n];
        let u = dp.execute(&xyz, &q, None, Some(&mut field), false).expect("reference").energy;
        println!("{name}: direct sum {:.2} s, params {:?}", t.elapsed().as_secs_f64(), dp.params());
        let fr = forces(&field, &q);
        if let Some(path) = &dump {
            let bytes: Vec<u8> = fr.iter().flat_map(|v| v.to_le_bytes()).collect();
            std::fs::write(path, bytes).unwrap_or_else(|e| panic!("{path}: {e}"));
        }
        Some((fr, u))
    };
    for method in methods {
        let t = Instant::now();
        let mut p = CpuEwald::new(method, &cell, n, tol, &opts).expect("plan");
        let tplan = t.elapsed().as_secs_f64();
        let mut phi = vec![0.0; n];
        let mut f = vec![0.0; 3 * n];
        let (mut best, mut cpu, mut split) = (f64::INFINITY, f64::INFINITY, (0.0, 0.0));
        let mut energy = 0.0;
        for _ in 0..reps.max(1) {
            let t = Instant::now();
            let c0 = process_cpu();
            energy = p.execute(&xyz, &q, Some(&mut phi), Some(&mut f), false).expect("execute").energy;
            cpu = cpu.min(process_cpu() - c0);
            let dt = t.elapsed().as_secs_f64();
            if dt < best {
                best = dt;
                split = (p.params().real_s, p.params().kspace_s);
            }
        }
        let (ef, eu) = match &reference {
            Some((fr0, u0)) => (rel_l2(&forces(&f, &q), fr0), (energy - u0).abs() / u0.abs()),
            None => (f64::NAN, f64::NAN),
        };
        println!(
            "{name} {method:?} tol {tol:e} threads {nthreads}: {:.2} ms per evaluation (real {:.2} ms, k-space {:.2} ms; process CPU {:.2} ms), \
             plan {:.1} ms; force error {ef:.2e}, energy error {eu:.2e}; {:?}",
            1e3 * best, 1e3 * split.0, 1e3 * split.1, 1e3 * cpu, 1e3 * tplan, p.params()
        );
    }
}
