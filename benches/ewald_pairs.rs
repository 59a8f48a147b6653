//! Cost per pair of the Ewald real-space pass: thread CPU time per pair inside the cutoff.
//!
//! ```text
//! cargo bench --bench ewald_pairs                        # 8000 charges, 131 neighbours each
//! cargo bench --bench ewald_pairs -- --n 20000 --acc 1e-9 --reps 10
//! FARFIELD_NO_AVX512=1 cargo bench --bench ewald_pairs   # the AVX2 loop on an AVX-512 CPU
//! ```
//!
//! Arguments (all optional):
//! * `--n N` — charges uniform in the unit cube (periodic), ±0.3 alternating (default 8000);
//! * `--rc R` — the cutoff in mean spacings `(1/N)^{1/3}` (default 3.15: about 131 neighbours
//!   within `r_c`, as `r_c = 0.68 nm` in water, 100 atoms per nm³; at most half the box);
//! * `--xirc X` — `ξ r_c` (default 3.22: `erfc(ξ r_c) ≈ 5e-6`);
//! * `--acc A` — accuracy of the fitted `erfc` polynomials (default 1e-6);
//! * `--exact` — the portable loop with `libm::erfc` (the reference sum's path) instead;
//! * `--reps R` — passes timed, the fastest reported (default 20).
//!
//! The pass is `farfield::ewald::real_space_only` (the CPU plan's real-space part on one
//! thread: wrapping, cell lists, the pair kernel; potentials and fields, no virial). It prints
//! the number of pairs inside `r_c`, the CPU features the library may use (AVX2+FMA,
//! AVX-512F; `FARFIELD_NO_AVX2` and `FARFIELD_NO_AVX512` turn its clones off), and the thread
//! CPU time of the fastest pass, in total and per pair inside `r_c`.
//!
//! The time per pair is what the cost model's `C_PAIR` (`src/ewald/params.rs`: ns on one core
//! per real-space pair inside the cutoff) stands for, which balances the real-space cutoff
//! against the k-space grid; it also compares the SIMD loops of `src/ewald/pair_kernel.rs`
//! (`cell_avx2`, `cell_avx512`) after a change to them.

mod common;

use common::{thread_cpu, Args};
use farfield::ewald::{real_space_only, PeriodicBox};
use rand::{Rng, SeedableRng};

/// Pairs of `xyz` (unit cube, periodic) at a minimum-image distance below `rc`.
fn pairs_within(xyz: &[f64], rc: f64) -> usize {
    let n = xyz.len() / 3;
    let mut count = 0;
    for i in 0..n {
        for j in i + 1..n {
            let r2: f64 = (0..3).map(|d| xyz[3 * i + d] - xyz[3 * j + d]).map(|v| v - v.round()).map(|v| v * v).sum();
            count += (r2 < rc * rc) as usize;
        }
    }
    count
}

fn main() {
    let mut a = Args::parse(include_str!("ewald_pairs.rs"), "--n 2000 --reps 2");
    let n: usize = a.get("n", 8000);
    let rc: f64 = a.get::<f64>("rc", 3.15) / (n as f64).cbrt();
    let xirc: f64 = a.get("xirc", 3.22);
    let acc: f64 = a.get("acc", 1e-6);
    let exact = a.flag("exact");
    let reps: usize = a.get("reps", 20);
    a.finish();
    if !(rc > 0.0 && rc <= 0.5) {
        eprintln!("ewald_pairs: r_c = {rc} is not in (0, ½] of the box: more charges or a smaller --rc");
        std::process::exit(2);
    }
    let mut r = rand_pcg::Pcg64::seed_from_u64(7);
    let xyz: Vec<f64> = (0..3 * n).map(|_| r.gen::<f64>()).collect();
    let q: Vec<f64> = (0..n).map(|i| if i % 2 == 0 { 0.3 } else { -0.3 }).collect();
    let bx = PeriodicBox::new(&[1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0]).expect("box");
    let pairs = pairs_within(&xyz, rc);
    #[cfg(target_arch = "x86_64")]
    let features = format!(
        "avx2+fma {}, avx512f {}",
        std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma") && std::env::var_os("FARFIELD_NO_AVX2").is_none(),
        std::is_x86_feature_detected!("avx512f") && std::env::var_os("FARFIELD_NO_AVX2").is_none() && std::env::var_os("FARFIELD_NO_AVX512").is_none()
    );
    #[cfg(not(target_arch = "x86_64"))]
    let features = "portable".to_string();
    let mut best = f64::INFINITY;
    for _ in 0..reps.max(1) {
        let t = thread_cpu();
        let out = real_space_only(&bx, &xyz, &q, xirc / rc, rc, acc, exact, &[], true, false).expect("real-space pass");
        best = best.min(thread_cpu() - t);
        assert!(out.2.is_finite());
    }
    println!(
        "n {n}, r_c {rc:.4}, ξ r_c {xirc}, erfc fit {acc:e}{}; {features}: {pairs} pairs inside r_c ({:.0} neighbours per charge); \
         {:.3} ms per pass, {:.2} ns (thread CPU) per pair",
        if exact { " (exact erfc)" } else { "" },
        2.0 * pairs as f64 / n as f64,
        1e3 * best,
        1e9 * best / pairs as f64
    );
}
