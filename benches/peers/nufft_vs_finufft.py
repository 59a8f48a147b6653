#!/usr/bin/env python3
"""farfield's NUFFT against FINUFFT and ducc0, in the same run on the same machine.

Usage (from anywhere; paths are relative to the repository):

    python3 benches/peers/nufft_vs_finufft.py                     # the acceptance run (below)
    python3 benches/peers/nufft_vs_finufft.py --quick             # M = 1e6, smaller N
    python3 benches/peers/nufft_vs_finufft.py --quick --threads 1,2 --tol 1e-3,1e-6 --json-out r.json
    python3 benches/peers/nufft_vs_finufft.py --threads 1,2,0     # + all cores (bigger machines)
    python3 benches/peers/nufft_vs_finufft.py --repeat 3 --cases 3d1,3d2 --tol 1e-6
    python3 benches/peers/nufft_vs_finufft.py --quick --memory --no-timed   # peak RSS only

Defaults: the issue's cases 1D N = 1e6, 2D 1000^2, 3D 128^3 with M = 1e7 uniform points
(`--quick`: 1e5, 320^2, 64^3 with M = 1e6), types 1 and 2, tol 1e-3, 1e-6, 1e-9, 1e-12, f64,
threads 1 and 2, one run per library, each library's automatic sigma and kernel.

What it does:
1. Creates the virtual environment `.venv-peers/` at the repository root (git-ignored) with
   `finufft`, `ducc0` and `numpy` from the package index (pip), and re-runs itself inside it
   (or runs as is in another virtual environment that has them).
2. Builds `target/release/farfield` with cargo if it is missing (or with `--build`).
3. Convention check: small cases (odd and even N, both signs, 1D-3D, types 1 and 2) through
   all three libraries on identical inputs at tol 1e-12; the outputs must agree to ~1e-10.
   This pins down the conventions used below: modes in CMCL order k = -N/2 ... (N-1)/2 (ours:
   flat array with x fastest; FINUFFT/ducc0 from Python: array [k1, k2, k3], last index
   fastest - the same numbers, transposed), exponent sign +i for iflag >= 0 (ducc0:
   forward = iflag < 0), points in radians with period 2 pi.
4. Timed cases (per case, tol and thread count; `nufft_peers_run.py`): `farfield bench nufft
   ... --json --save DIR` runs ours in a fresh process (plan + setpts + execute timed inside
   the process, plus its own direct-sum check on `--check` random outputs) and saves its
   inputs, output and the check's exact values; FINUFFT (`finufft.Plan` + `setpts` = setup,
   `execute` = exec) and ducc0 (`ducc0.nufft.plan(nu2u=..., coord=..., grid_shape=...,
   epsilon=..., nthreads=..., periodicity=2 pi)` = setup, `plan.nu2u` / `plan.u2nu` = exec)
   then run on exactly those inputs, so all three errors are measured against the same direct
   sums. Ours: setup = plan_s + setpts_s, exec = exec_s from its JSON. Layout conversions,
   ducc0's (M, d) coordinate array and the peers' output arrays (touched) are prepared before
   the clocks start. With `--repeat R` each library's time is the best total of R repetitions,
   the setup included in every one (ours: R fresh processes, so FFTW planning is never warm;
   the peers run in this process), the libraries taking turns (ours, FINUFFT, ducc0, then
   again), so that a host whose speed drifts over minutes slows all three alike. Errors: ours from the first run at each thread count (its
   own direct sums, the same seed and so the same values as the saved ones), the peers' from
   their best run (repetitions agree up to rounding). ducc0's chosen oversampled grid and
   kernel support are read from its verbosity report of one extra untimed execute
   (`--no-ducc0-params` skips it).
5. Prints (`nufft_peers_report.py`) a Markdown table per case, tol and thread count (our
   setup + exec = total, FINUFFT total, ducc0 setup + exec = total, ratio ours/ducc0 and
   ours/FINUFFT, the three errors, sigma and w of ours and ducc0); per library the parallel
   efficiency from 1 to T threads, t1 / (T tT), separately for setup and exec; and the
   acceptance lines at 2 threads: max ratio ours/ducc0 <= 1.0, median <= 0.8,
   every error <= 10 tol (all three libraries), efficiency 1 -> 2 >= 85 % (setup and exec),
   peak RSS ours/ducc0 <= 1.1 (with `--memory`), and whether the run covers the full set.
6. `--memory` (`nufft_peers_memory.py`): peak RSS (GNU time -v) of the 3D type-1 case (tol
   `--memory-tol`, 2 threads) for ours, FINUFFT and ducc0, each in its own process with its
   own inputs, their baselines, and the ratios ours/ducc0 and ours/FINUFFT.
7. `--json-out FILE`: {"meta": versions, CPUs, load, arguments; "cases": every case record
   (times, split, errors, sigma, w, efficiencies); "memory"; "acceptance"}.
8. Type 3 (`--type3`, e.g. `--type3 --no-convention-check --cases 3d3 --quick`): `farfield
   bench nufft --type 3` (points in [-pi, pi)^d, M target frequencies in [-N/2, N/2)^d) saves
   its inputs, and FINUFFT's type 3 (finufft.Plan(3, dim), setpts(x, y, z, s, t, u), execute)
   runs on them in the same run; both errors against the same direct sums. ducc0 has no type 3.

Timing on a shared or busy machine is noisy (the load average is printed at the start and
the end); OpenMP codes (FINUFFT) suffer most from oversubscription.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peer_env import BIN, ROOT, ensure_binary, log
from peer_env import ensure_venv as _ensure_venv
from nufft_peers_memory import memory
from nufft_peers_report import acceptance, efficiencies, fmt_e, fmt_t, print_tables
from nufft_peers_run import best_of, best_peers, load_saved, peers_on_saved, rel_l2, run_ours, threads_label

VENV = ROOT / ".venv-peers"
PACKAGES = ["finufft", "ducc0", "numpy"]


def ensure_venv():
    """Re-executes this script inside `.venv-peers/` (created with the peers on first use)."""
    _ensure_venv(VENV, PACKAGES, probe="import finufft, ducc0, numpy")


# ----------------------------------------------------------------------------- stages
def convention_check(threads):
    cases = [(1, 1, [65]), (2, 1, [64]), (1, 2, [24, 17]), (2, 2, [15, 20]), (1, 3, [12, 9, 10]), (2, 3, [11, 8, 6])]
    log("convention check (tol 1e-12, M = 3000, identical inputs):")
    rows = []
    worst = 0.0
    with tempfile.TemporaryDirectory(prefix="farfield-peers-") as tmp:
        for i, (ty, dim, n) in enumerate(cases):
            for iflag in (1, -1):
                d = Path(tmp) / f"c{i}{iflag}"
                ours = run_ours(ty, dim, n, 3000, 1e-12, threads, iflag=iflag, check=50, save=d)
                saved = load_saved(d, dim)
                peers = peers_on_saved(ty, dim, n, saved, 1e-12, iflag, threads, "f64")
                f, u = peers["finufft"], peers["ducc0"]
                worst = max(worst, f["diff_vs_ours"], u["diff_vs_ours"])
                rows.append(f"| {dim}D type {ty} N={'x'.join(map(str, n))} iflag {iflag:+d} | {ours['rel_error']:.1e} | "
                            f"{f['rel_error']:.1e} | {u['rel_error']:.1e} | {f['diff_vs_ours']:.1e} | {u['diff_vs_ours']:.1e} |")
    print("\nConvention check: all libraries on identical inputs, tol 1e-12 (ducc0 is documented down to 2e-13)\n")
    print("| case | err ours | err finufft | err ducc0 | ours vs finufft | ours vs ducc0 |")
    print("|---|---|---|---|---|---|")
    print("\n".join(rows))
    ok = worst < 1e-9
    print(f"\nlargest relative difference between libraries: {worst:.1e} -> "
          f"{'same conventions' if ok else 'MISMATCH'}\n")
    if not ok:
        sys.exit("convention check failed: the libraries do not compute the same thing")


def default_cases(quick):
    m = 10**6 if quick else 10**7
    n3, n2, n1 = ([64] * 3, [320] * 2, [10**5]) if quick else ([128] * 3, [1000] * 2, [10**6])
    return [(1, 3, n3, m), (2, 3, n3, m), (1, 2, n2, m), (2, 2, n2, m), (1, 1, n1, m), (2, 1, n1, m)]


def type3_cases(args, threads):
    """Type 3: ours (farfield bench nufft --type 3 --save) against FINUFFT's type 3 on the same
    inputs, at every thread count (ours saves its inputs in each run: same seed, same inputs)."""
    import numpy as np
    import finufft
    m = 10**5 if args.quick else 10**6
    n = {1: 10**5, 2: 320, 3: 64} if args.quick else {1: 10**6, 2: 1000, 3: 128}
    dims = [3, 2, 1]
    if args.cases:
        want = set(args.cases.split(","))
        dims = [d for d in dims if f"{d}d3" in want]
    rows, records = [], []
    for tol in [float(t) for t in args.tol.split(",")]:
        for dim in dims:
            for th in threads:
                name = f"{dim}D type 3, M=N={m:.0e}, freqs in [-{n[dim] // 2}, {n[dim] // 2})^{dim}"
                log(f"{name}, tol {tol:g}, {threads_label(th)} threads: ours ...")
                with tempfile.TemporaryDirectory(prefix="farfield-peers-", dir=args.tmpdir) as tmp:
                    d = Path(tmp) / "case"
                    cmd = [str(BIN), "bench", "nufft", "--type", "3", "--dim", str(dim), "--modes", str(n[dim]),
                           "--points", str(m), "--tol", repr(tol), "--threads", str(th), "--prec", args.prec,
                           "--check", str(args.check), "--json", "--save", str(d)]
                    p = subprocess.run(cmd, capture_output=True, text=True)
                    if p.returncode != 0:
                        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr}")
                    log(p.stdout)
                    ours = json.loads(p.stdout.strip().splitlines()[-1])
                    x = [np.load(d / f"{a}.npy") for a in "xyz"[:dim]]
                    s = [np.load(d / f"{a}.npy") for a in "stu"[:dim]]
                    c, our_out = np.load(d / "input.npy"), np.load(d / "output.npy")
                    idx, exact = np.load(d / "check_idx.npy").astype(np.int64), np.load(d / "check_exact.npy")
                log(f"{name}, tol {tol:g}, {threads_label(th)} threads: finufft ...")
                best, out = None, None
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    plan = finufft.Plan(3, dim, n_trans=1, eps=tol, isign=ours["iflag"], dtype=c.dtype.name,
                                        nthreads=th)
                    t1 = time.perf_counter()
                    plan.setpts(*x, **dict(zip("stu", s)))  # by name: in 1D/2D s is not the 2nd/3rd
                    t2 = time.perf_counter()
                    out = plan.execute(c)
                    t3 = time.perf_counter()
                    t = {"plan_s": t1 - t0, "setpts_s": t2 - t1, "exec_s": t3 - t2, "total_s": t3 - t0}
                    best = t if best is None or t["total_s"] < best["total_s"] else best
                    del plan
                f = dict(best, rel_error=rel_l2(out[idx], exact) if len(idx) else None,
                         diff_vs_ours=rel_l2(our_out, out))
                rows.append(f"| {name} | {tol:g} | {threads_label(th)} | {fmt_t(ours['total_s'])} "
                            f"({fmt_t(ours['setpts_s'])}, {fmt_t(ours['exec_s'])}) | {fmt_t(f['total_s'])} "
                            f"({fmt_t(f['setpts_s'])}, {fmt_t(f['exec_s'])}) | {ours['total_s'] / f['total_s']:.2f} | "
                            f"{ours['exec_s'] / f['exec_s']:.2f} | {fmt_e(ours['rel_error'])} | "
                            f"{fmt_e(f['rel_error'])} | {fmt_e(f['diff_vs_ours'])} |")
                records.append({"case": name, "type": 3, "dim": dim, "points": m, "tol": tol, "threads": th,
                                "ours": ours, "finufft": f})
    print(f"\nType 3: {args.prec}, {'best of ' + str(args.repeat) if args.repeat > 1 else 'one run'} per library "
          f"(ours: the first run only); total = plan + setpts + execute (setpts, execute in parentheses); ratios > 1 "
          f"mean ours is slower; errors relative l2 on {args.check} random targets against the same f64 direct sums\n")
    print("| case | tol | threads | ours total (setpts, exec) (s) | finufft total (setpts, exec) (s) | ours/finufft | "
          "exec ours/finufft | err ours | err finufft | ours vs finufft |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return records


def timed_cases(args, threads):
    """Types 1 and 2 on the default cases, every tol and thread count; returns the records
    described in nufft_peers_report.py."""
    cases = default_cases(args.quick)
    if args.cases:
        want = set(args.cases.split(","))
        cases = [c for c in cases if f"{c[1]}d{c[0]}" in want]
    records = []
    for tol in [float(t) for t in args.tol.split(",")]:
        for ty, dim, n, m in cases:
            name = f"{dim}D type {ty}, M={m:.0e}, N={'x'.join(map(str, n))}"
            runs, saved = {}, None
            with tempfile.TemporaryDirectory(prefix="farfield-peers-", dir=args.tmpdir) as tmp:
                d = Path(tmp) / "case"
                for t in threads:
                    log(f"{name}, tol {tol:g}, {threads_label(t)} threads: ours ...")
                    # the first run of each thread count checks its error against the direct sums
                    # (the same seed, so the same outputs and exact values every time) and the
                    # first of all saves the inputs for the peers
                    first = run_ours(ty, dim, n, m, tol, t, check=args.check, save=d if saved is None else None,
                                     prec=args.prec)
                    if saved is None:
                        saved = load_saved(d, dim)
                    # the repetitions interleaved (ours, FINUFFT, ducc0; then again), so that
                    # a drift of the host's speed over minutes reaches all three alike
                    ours_runs, peer_runs = [first], []
                    for r in range(args.repeat):
                        if r > 0:
                            ours_runs.append(run_ours(ty, dim, n, m, tol, t, check=0, prec=args.prec))
                        log(f"{name}, tol {tol:g}, {threads_label(t)} threads: finufft, ducc0 ({r + 1}/{args.repeat}) ...")
                        peer_runs.append(peers_on_saved(ty, dim, n, saved, tol, first["iflag"], t, args.prec,
                                                        want_params=r == 0 and not args.no_ducc0_params))
                    ours = dict(best_of(ours_runs), rel_error=first["rel_error"], checked=first["checked"])
                    runs[t] = {"ours": ours, **best_peers(peer_runs)}
                del saved
            records.append({"case": name, "type": ty, "dim": dim, "modes": n, "points": m, "tol": tol,
                            "prec": args.prec, "runs": runs, "efficiency": efficiencies(runs)})
    print_tables(records, args)
    return records


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="M = 1e6 and smaller N")
    ap.add_argument("--tol", default="1e-3,1e-6,1e-9,1e-12", help="comma-separated tolerances (default: all four)")
    ap.add_argument("--threads", default="1,2", help="comma-separated thread counts, 0 = all cores (default 1,2)")
    ap.add_argument("--cases", help="subset, e.g. 3d1,3d2,1d2 (dimension d, type)")
    ap.add_argument("--prec", choices=["f64", "f32"], default="f64")
    ap.add_argument("--repeat", type=int, default=1, help="best of R runs per library, setup included (default 1)")
    ap.add_argument("--check", type=int, default=100, help="outputs checked against direct sums (default 100)")
    ap.add_argument("--memory", action="store_true", help="peak RSS of the 3D type-1 case, ours vs FINUFFT and ducc0")
    ap.add_argument("--memory-tol", type=float, default=1e-6, help="tolerance of the --memory case (default 1e-6)")
    ap.add_argument("--type3", action="store_true", help="time type 3 against finufft instead of types 1 and 2 "
                    "(M = N = 1e6, or 1e5 with --quick; --cases 3d3,2d3,1d3)")
    ap.add_argument("--by-reference", action="store_true",
                    help="ours sets the points by reference (keeps only the sort permutation), as FINUFFT and "
                         "ducc0 keep references to the caller's coordinates; default: ours copies them")
    ap.add_argument("--no-convention-check", action="store_true")
    ap.add_argument("--no-timed", action="store_true", help="skip the timed cases (e.g. with --memory)")
    ap.add_argument("--no-ducc0-params", action="store_true",
                    help="skip the extra untimed ducc0 execute that reads its sigma and kernel width")
    ap.add_argument("--build", action="store_true", help="run cargo build --release -p farfield-cli first")
    ap.add_argument("--json-out", help="also write all results as JSON to this file")
    ap.add_argument("--tmpdir", help="where to put the saved inputs/outputs (default: system temp)")
    args = ap.parse_args()
    if args.by_reference:
        import nufft_peers_run
        nufft_peers_run.OURS_EXTRA_ARGS.append("--by-reference")
    threads = [int(t) for t in args.threads.split(",")]
    if not threads or min(threads) < 0 or args.repeat < 1:
        ap.error("--threads needs counts >= 0 (0 = all cores) and --repeat >= 1")

    ensure_venv()
    ensure_binary(args.build)
    import numpy, finufft, ducc0
    meta = {"farfield": subprocess.run([str(BIN), "--version"], capture_output=True, text=True).stdout.strip(),
            "finufft": finufft.__version__, "ducc0": ducc0.__version__, "numpy": numpy.__version__,
            "cpus": os.cpu_count(), "load_average_start": os.getloadavg()[0], "argv": sys.argv[1:],
            "date": time.strftime("%Y-%m-%d %H:%M:%S")}
    print(f"{meta['farfield']}, finufft {finufft.__version__}, ducc0 {ducc0.__version__}, numpy {numpy.__version__}, "
          f"{meta['cpus']} CPUs, threads {', '.join(map(threads_label, threads))}, load average "
          f"{meta['load_average_start']:.1f} (timings on a busy machine are noisy; OpenMP codes such as finufft "
          f"suffer most from oversubscription)")
    if not args.no_convention_check:
        convention_check(threads[-1])
    records = [] if args.no_timed else (type3_cases(args, threads) if args.type3 else timed_cases(args, threads))
    t_mem = 2 if 2 in threads else max(threads)
    mem = memory(args.quick, t_mem, args.memory_tol) if args.memory else None
    accept = None if args.type3 else acceptance(records, mem, threads)
    meta["load_average_end"] = os.getloadavg()[0]
    print(f"\nload average at the end {meta['load_average_end']:.1f}")
    if args.json_out:
        Path(args.json_out).write_text(json.dumps({"meta": meta, "cases": records, "memory": mem,
                                                   "acceptance": accept}, indent=1))


if __name__ == "__main__":
    main()
