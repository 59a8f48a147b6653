#!/usr/bin/env python3
"""farfield's NUFFT against FINUFFT and ducc0, in the same run on the same machine.

Usage (from anywhere; paths are relative to the repository):

    python3 benches/peers/nufft_vs_finufft.py              # the issue's cases, tol 1e-6, 2 threads
    python3 benches/peers/nufft_vs_finufft.py --quick      # M = 1e6, smaller N
    python3 benches/peers/nufft_vs_finufft.py --tol 1e-3,1e-6,1e-12 --threads 2
    python3 benches/peers/nufft_vs_finufft.py --quick --memory   # + peak RSS, 3D type 1

What it does:
1. Creates the virtual environment `.venv-peers/` at the repository root (git-ignored) with
   `finufft`, `ducc0` and `numpy` from the package index (pip), and re-runs itself inside it.
2. Builds `target/release/farfield` with cargo if it is missing (or with `--build`).
3. Convention check: small cases (odd and even N, both signs, 1D-3D, types 1 and 2) through
   all three libraries on identical inputs at tol 1e-12; the outputs must agree to ~1e-10.
   This pins down the conventions used below: modes in CMCL order k = -N/2 ... (N-1)/2 (ours:
   flat array with x fastest; FINUFFT/ducc0 from Python: array [k1, k2, k3], last index
   fastest - the same numbers, transposed), exponent sign +i for iflag >= 0 (ducc0:
   forward = iflag < 0), points in radians with period 2 pi.
4. Timed cases: `farfield bench nufft ... --json --save DIR` runs ours (plan + setpts +
   execute, timed inside the process, plus its own direct-sum check on 100 random outputs)
   and saves its inputs, its output and the check's exact values; FINUFFT (guru interface:
   finufft.Plan, setpts, execute) and ducc0 (nu2u / u2nu, one call) then run on exactly
   those inputs, so all three errors are measured against the same direct sums, and the
   outputs are compared with each other. Array layout conversions (and ducc0's (M, d)
   coordinate array) are prepared before the clocks start.
5. Prints a Markdown table; optionally (`--memory`) peak RSS of the 3D type-1 case for ours
   vs FINUFFT, each in its own process under `/usr/bin/time -v`.
6. Type 3 (`--type3`, e.g. `--type3 --no-convention-check --cases 3d3 --quick`): `farfield
   bench nufft --type 3` (points in [-pi, pi)^d, M target frequencies in [-N/2, N/2)^d) saves
   its inputs, and FINUFFT's type 3 (finufft.Plan(3, dim), setpts(x, y, z, s, t, u), execute)
   runs on them in the same run; both errors against the same direct sums. ducc0 has no type 3.

Timings are single cold runs (plan + setpts + execute once, as a user calling it once
would see) unless `--repeat R` asks for the best of R.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peer_env import BIN, ROOT, ensure_binary, log
from peer_env import ensure_venv as _ensure_venv

VENV = ROOT / ".venv-peers"
PACKAGES = ["finufft", "ducc0", "numpy"]


# ----------------------------------------------------------------------------- environment
def ensure_venv():
    """Re-executes this script inside `.venv-peers/` (created with the peers on first use)."""
    _ensure_venv(VENV, PACKAGES, probe="import finufft, ducc0, numpy")


def ensure_gnu_time():
    if Path("/usr/bin/time").exists():
        return "/usr/bin/time"
    log("/usr/bin/time is missing: installing the Debian package 'time'")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.check_call(sudo + ["apt-get", "install", "-y", "-q", "time"])
    return "/usr/bin/time"


# ----------------------------------------------------------------------------- helpers
def to_flat(a):
    """Python-order mode array [k1, k2, k3] (last index fastest) -> our flat layout (x fastest)."""
    return a.transpose().reshape(-1)


def from_flat(v, n):
    """Our flat mode array (x fastest) -> Python-order [k1, k2, k3], C-contiguous."""
    import numpy as np
    return np.ascontiguousarray(v.reshape(tuple(reversed(n))).transpose())


def rel_l2(a, b):
    import numpy as np
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def run_ours(ty, dim, n, m, tol, threads, iflag=None, check=100, save=None, prec="f64"):
    cmd = [str(BIN), "bench", "nufft", "--type", str(ty), "--dim", str(dim), "--modes", ",".join(map(str, n)),
           "--points", str(m), "--tol", repr(tol), "--threads", str(threads), "--prec", prec,
           "--check", str(check), "--json"]
    if iflag is not None:
        cmd += ["--iflag", str(iflag)]
    if save is not None:
        cmd += ["--save", str(save)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def load_saved(d, dim):
    import numpy as np
    coords = [np.load(d / f"{a}.npy") for a in "xyz"[:dim]]
    return (coords, np.load(d / "input.npy"), np.load(d / "output.npy"),
            np.load(d / "check_idx.npy").astype(np.int64), np.load(d / "check_exact.npy"))


def run_finufft(ty, n, coords, data_py, tol, iflag, threads):
    """data_py: type 1 strengths (M,), type 2 modes [k1, k2, k3]. Returns (times, output)."""
    import finufft
    t0 = time.perf_counter()
    plan = finufft.Plan(ty, tuple(n), n_trans=1, eps=tol, isign=iflag, dtype=data_py.dtype.name, nthreads=threads)
    t1 = time.perf_counter()
    plan.setpts(*coords)
    t2 = time.perf_counter()
    out = plan.execute(data_py)
    t3 = time.perf_counter()
    return {"plan_s": t1 - t0, "setpts_s": t2 - t1, "exec_s": t3 - t2, "total_s": t3 - t0}, out


def run_ducc0(ty, n, coord_md, data_py, tol, iflag, threads):
    import numpy as np
    import ducc0
    m = coord_md.shape[0]
    if ty == 1:
        out = np.empty(tuple(n), dtype=data_py.dtype)
        t0 = time.perf_counter()
        ducc0.nufft.nu2u(points=data_py, coord=coord_md, forward=iflag < 0, epsilon=tol, nthreads=threads,
                         out=out, periodicity=2 * np.pi, fft_order=False)
    else:
        out = np.empty(m, dtype=data_py.dtype)
        t0 = time.perf_counter()
        ducc0.nufft.u2nu(grid=data_py, coord=coord_md, forward=iflag < 0, epsilon=tol, nthreads=threads,
                         out=out, periodicity=2 * np.pi, fft_order=False)
    t1 = time.perf_counter()
    return {"total_s": t1 - t0}, out


def ducc0_ok(tol, prec):
    return tol > (1e-6 if prec == "f32" else 2e-13)   # documented limits of ducc0.nufft


def peers_on_saved(ty, dim, n, saved, tol, iflag, threads, prec, repeat=1):
    """Runs FINUFFT and ducc0 on our saved inputs; returns dict of results."""
    import numpy as np
    coords, inp, ours_out, idx, exact = saved
    data_py = inp if ty == 1 else from_flat(inp, n)
    res = {}
    best, out = None, None
    for _ in range(repeat):
        t, out = run_finufft(ty, n, coords, data_py, tol, iflag, threads)
        best = t if best is None or t["total_s"] < best["total_s"] else best
    flat = to_flat(out) if ty == 1 else out
    res["finufft"] = dict(best, rel_error=rel_l2(flat[idx], exact) if len(idx) else None,
                          diff_vs_ours=rel_l2(ours_out, flat))
    del out, flat
    if ducc0_ok(tol, prec):
        coord_md = np.ascontiguousarray(np.stack(coords, axis=1))
        best = None
        for _ in range(repeat):
            t, out = run_ducc0(ty, n, coord_md, data_py, tol, iflag, threads)
            best = t if best is None or t["total_s"] < best["total_s"] else best
        flat = to_flat(out) if ty == 1 else out
        res["ducc0"] = dict(best, rel_error=rel_l2(flat[idx], exact) if len(idx) else None,
                            diff_vs_ours=rel_l2(ours_out, flat))
    else:
        res["ducc0"] = None
    return res


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


def fmt_t(x):
    return "-" if x is None else (f"{x:.3f}" if x >= 0.01 else f"{x:.4f}")


def fmt_e(x):
    return "-" if x is None else f"{x:.1e}"


def type3_cases(args):
    """Type 3: ours (farfield bench nufft --type 3 --save) against FINUFFT's type 3 on the same inputs."""
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
            name = f"{dim}D type 3, M=N={m:.0e}, freqs in [-{n[dim] // 2}, {n[dim] // 2})^{dim}"
            log(f"{name}, tol {tol:g}: ours ...")
            with tempfile.TemporaryDirectory(prefix="farfield-peers-", dir=args.tmpdir) as tmp:
                d = Path(tmp) / "case"
                cmd = [str(BIN), "bench", "nufft", "--type", "3", "--dim", str(dim), "--modes", str(n[dim]),
                       "--points", str(m), "--tol", repr(tol), "--threads", str(args.threads), "--prec", args.prec,
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
            log(f"{name}, tol {tol:g}: finufft ...")
            best, out = None, None
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                plan = finufft.Plan(3, dim, n_trans=1, eps=tol, isign=ours["iflag"], dtype=c.dtype.name,
                                    nthreads=args.threads)
                t1 = time.perf_counter()
                plan.setpts(*x, *s)
                t2 = time.perf_counter()
                out = plan.execute(c)
                t3 = time.perf_counter()
                t = {"plan_s": t1 - t0, "setpts_s": t2 - t1, "exec_s": t3 - t2, "total_s": t3 - t0}
                best = t if best is None or t["total_s"] < best["total_s"] else best
                del plan
            f = dict(best, rel_error=rel_l2(out[idx], exact) if len(idx) else None, diff_vs_ours=rel_l2(our_out, out))
            rows.append(f"| {name} | {tol:g} | {fmt_t(ours['total_s'])} ({fmt_t(ours['setpts_s'])}, "
                        f"{fmt_t(ours['exec_s'])}) | {fmt_t(f['total_s'])} ({fmt_t(f['setpts_s'])}, {fmt_t(f['exec_s'])}) | "
                        f"{ours['total_s'] / f['total_s']:.2f} | {ours['exec_s'] / f['exec_s']:.2f} | "
                        f"{fmt_e(ours['rel_error'])} | {fmt_e(f['rel_error'])} | {fmt_e(f['diff_vs_ours'])} |")
            records.append({"case": name, "type": 3, "dim": dim, "points": m, "tol": tol, "ours": ours, "finufft": f})
    print(f"\nType 3: {args.threads} threads, {args.prec}, "
          f"{'best of ' + str(args.repeat) if args.repeat > 1 else 'single cold run'}; total = plan + setpts + "
          f"execute (setpts, execute in parentheses); ratios > 1 mean ours is slower; errors relative l2 on "
          f"{args.check} random targets against the same f64 direct sums\n")
    print("| case | tol | ours total (setpts, exec) (s) | finufft total (setpts, exec) (s) | ours/finufft | "
          "exec ours/finufft | err ours | err finufft | ours vs finufft |")
    print("|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return records


def timed_cases(args):
    cases = default_cases(args.quick)
    if args.cases:
        want = set(args.cases.split(","))
        cases = [c for c in cases if f"{c[1]}d{c[0]}" in want]
    tols = [float(t) for t in args.tol.split(",")]
    rows, records = [], []
    for tol in tols:
        for ty, dim, n, m in cases:
            name = f"{dim}D type {ty}, M={m:.0e}, N={'x'.join(map(str, n))}"
            log(f"{name}, tol {tol:g}: ours ...")
            with tempfile.TemporaryDirectory(prefix="farfield-peers-", dir=args.tmpdir) as tmp:
                d = Path(tmp) / "case"
                ours = run_ours(ty, dim, n, m, tol, args.threads, check=args.check, save=d, prec=args.prec)
                for _ in range(args.repeat - 1):
                    again = run_ours(ty, dim, n, m, tol, args.threads, check=0, prec=args.prec)
                    if again["total_s"] < ours["total_s"]:
                        ours.update({k: again[k] for k in ("plan_s", "setpts_s", "exec_s", "total_s", "points_per_s")})
                saved = load_saved(d, dim)
                iflag = ours["iflag"]
                log(f"{name}, tol {tol:g}: finufft, ducc0 ...")
                peers = peers_on_saved(ty, dim, n, saved, tol, iflag, args.threads, args.prec, args.repeat)
                del saved
            f, u = peers["finufft"], peers["ducc0"]
            r_f = ours["total_s"] / f["total_s"]
            r_fx = ours["exec_s"] / f["exec_s"]
            r_u = ours["total_s"] / u["total_s"] if u else None
            rows.append(f"| {name} | {tol:g} | {fmt_t(ours['total_s'])} | {fmt_t(ours['exec_s'])} | "
                        f"{fmt_t(f['total_s'])} ({fmt_t(f['exec_s'])}) | {fmt_t(u['total_s']) if u else '-'} | "
                        f"{r_f:.2f} | {r_fx:.2f} | {'-' if r_u is None else f'{r_u:.2f}'} | "
                        f"{fmt_e(ours['rel_error'])} | {fmt_e(f['rel_error'])} | {fmt_e(u['rel_error']) if u else '-'} | "
                        f"{fmt_e(f['diff_vs_ours'])} |")
            records.append({"case": name, "type": ty, "dim": dim, "modes": n, "points": m, "tol": tol,
                            "ours": ours, "finufft": f, "ducc0": u})
    print(f"\nTimed cases: {args.threads} threads, {args.prec}, "
          f"{'best of ' + str(args.repeat) if args.repeat > 1 else 'single cold run'} per library; "
          f"ours and finufft = plan + setpts + execute (execute alone in parentheses / its own column), "
          f"ducc0 = one nu2u/u2nu call; ratios > 1 mean ours is slower; errors are relative l2 on "
          f"{args.check} random outputs against the same f64 direct sums\n")
    print("| case | tol | ours total (s) | ours exec (s) | finufft total (exec) (s) | ducc0 (s) | ours/finufft | "
          "exec ours/finufft | ours/ducc0 | err ours | err finufft | err ducc0 | ours vs finufft |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    return records


MEM_SCRIPT = r"""
import sys, numpy as np
m, n, tol, threads, run = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3]), int(sys.argv[4]), sys.argv[5] == "1"
import finufft
rng = np.random.default_rng(42)
# fill the arrays in place: no temporaries, so the baseline peak is interpreter + arrays
x, y, z = (np.empty(m) for _ in range(3))
for a in (x, y, z):
    rng.random(out=a); a *= 2 * np.pi; a -= np.pi
c = np.empty(m, dtype=np.complex128)
cv = c.view(np.float64); rng.random(out=cv); cv *= 2; cv -= 1
out = np.zeros((n, n, n), dtype=np.complex128)
out[...] = 0  # touch the output pages, as the Rust side does
if run:
    p = finufft.Plan(1, (n, n, n), eps=tol, isign=1, nthreads=threads)
    p.setpts(x, y, z)
    p.execute(c, out=out)
print(abs(out[0, 0, :4]).sum())
"""


def peak_rss_kb(cmd, time_bin):
    p = subprocess.run([time_bin, "-v", *cmd], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    for line in p.stderr.splitlines():
        if "Maximum resident set size" in line:
            return int(line.split(":")[-1])
    raise RuntimeError("no 'Maximum resident set size' in /usr/bin/time output")


def memory(args):
    time_bin = ensure_gnu_time()
    m = 10**6 if args.quick else 10**7
    n = 64 if args.quick else 128
    tol = 1e-6
    log(f"peak RSS: 3D type 1, M={m:.0e}, N={n}^3 ...")
    ours = peak_rss_kb([str(BIN), "bench", "nufft", "--type", "1", "--dim", "3", "--modes", str(n), "--points", str(m),
                        "--tol", str(tol), "--threads", str(args.threads), "--check", "0"], time_bin)
    # the binary's own footprint (code, libraries, thread pool) on a trivial case
    ours_base = peak_rss_kb([str(BIN), "bench", "nufft", "--type", "1", "--dim", "3", "--modes", "2", "--points", "1",
                             "--threads", str(args.threads), "--check", "0"], time_bin)
    py = [sys.executable, "-c", MEM_SCRIPT, str(m), str(n), str(tol), str(args.threads)]
    fin = peak_rss_kb(py + ["1"], time_bin)
    base = peak_rss_kb(py + ["0"], time_bin)
    arrays_mb = (3 * 8 * m + 16 * m + 16 * n**3) / 2**20
    print(f"\nPeak RSS, 3D type 1, M={m:.0e}, N={n}^3, tol {tol:g}, {args.threads} threads "
          f"(each process holds its own inputs and output: {arrays_mb:.0f} MiB)\n")
    ours_work = ours / 1024 - ours_base / 1024 - arrays_mb
    fin_work = (fin - base) / 1024
    print("| | peak RSS (MiB) | NUFFT working memory (MiB) |")
    print("|---|---|---|")
    print(f"| ours (farfield bench nufft) | {ours / 1024:.0f} | {ours_work:.0f} (peak - arrays - trivial run's "
          f"{ours_base / 1024:.0f}) |")
    print(f"| finufft (Python) | {fin / 1024:.0f} | {fin_work:.0f} (peak - the same script without the NUFFT) |")
    print(f"| Python baseline (interpreter, numpy arrays, finufft imported) | {base / 1024:.0f} | |")
    print(f"\nratio of peaks ours/finufft = {ours / fin:.2f}; ratio of NUFFT working memory ours/finufft = "
          f"{ours_work / max(fin_work, 1e-9):.2f}")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="M = 1e6 and smaller N")
    ap.add_argument("--tol", default="1e-6", help="comma-separated tolerances (default 1e-6)")
    ap.add_argument("--threads", type=int, default=2, help="threads for every library (default 2)")
    ap.add_argument("--cases", help="subset, e.g. 3d1,3d2,1d2 (dimension d, type)")
    ap.add_argument("--prec", choices=["f64", "f32"], default="f64")
    ap.add_argument("--repeat", type=int, default=1, help="best of R runs per library (default 1)")
    ap.add_argument("--check", type=int, default=100, help="outputs checked against direct sums (default 100)")
    ap.add_argument("--memory", action="store_true", help="peak RSS of the 3D type-1 case, ours vs finufft")
    ap.add_argument("--type3", action="store_true", help="time type 3 against finufft instead of types 1 and 2 "
                    "(M = N = 1e6, or 1e5 with --quick; --cases 3d3,2d3,1d3)")
    ap.add_argument("--no-convention-check", action="store_true")
    ap.add_argument("--no-timed", action="store_true", help="skip the timed cases (e.g. with --memory)")
    ap.add_argument("--build", action="store_true", help="run cargo build --release -p farfield-cli first")
    ap.add_argument("--json-out", help="also write all results as JSON to this file")
    ap.add_argument("--tmpdir", help="where to put the saved inputs/outputs (default: system temp)")
    args = ap.parse_args()

    ensure_venv()
    ensure_binary(args.build)
    import numpy, finufft, ducc0
    print(f"{subprocess.run([str(BIN), '--version'], capture_output=True, text=True).stdout.strip()}, "
          f"finufft {finufft.__version__}, ducc0 {ducc0.__version__}, numpy {numpy.__version__}, "
          f"{os.cpu_count()} CPUs, threads {args.threads}, load average {os.getloadavg()[0]:.1f} "
          f"(timings on a busy machine are noisy; OpenMP codes such as finufft suffer most from oversubscription)")
    if not args.no_convention_check:
        convention_check(args.threads)
    records = [] if args.no_timed else (type3_cases(args) if args.type3 else timed_cases(args))
    if args.memory:
        memory(args)
    if args.json_out:
        Path(args.json_out).write_text(json.dumps(records, indent=1))


if __name__ == "__main__":
    main()
