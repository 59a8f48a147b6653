#!/usr/bin/env python3
"""The CUDA FMM against the CPU FMM on the same machine.

For every case (N, distribution, tol, boundary) it runs `farfield fmm --backend cuda
--compare-cpu --json` with the library's default M2L kernel (plain; the CPU FMM with the same
p and D on all cores, in the same process), then the same case with the symmetric M2L kernel
(Kohnke et al. 2021, §3.3.5), and prints a Markdown table: per-stage device
times from CUDA events, the CUDA and CPU execute times and their ratio, the error against the
direct sum (open) or the Ewald module (periodic), and the largest CPU/GPU difference.

Run on a GPU machine after `bash scripts/gpu-bundle.sh` (carry build-gpu/; no Rust needed):

    python3 benches/fmm_cuda.py                       # the full matrix of the issue
    python3 benches/fmm_cuda.py --n 1e5 --tol 1e-6    # one row
    python3 benches/fmm_cuda.py --input data/jac_dhfr --boundary periodic --tol 1e-5 --json out.json

`--input DIR` takes the particles from DIR (positions.npy, charges.npy and, periodic, box.npy)
instead of generating `--n` of each `--dist`; `--json FILE` writes every case (the CLI's JSON
objects of the plain run with the CPU comparison and of the symmetric run) after each case.

Nothing here is a test: timings are reported, never asserted.
"""
import argparse
import itertools
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def farfield_exe():
    """The CLI: build-gpu/ (the bundle), then target/release, then PATH."""
    for c in (os.path.join(ROOT, "build-gpu", "farfield"), os.path.join(ROOT, "target", "release", "farfield")):
        if os.path.exists(c):
            return c
    c = shutil.which("farfield")
    if c is None:
        sys.exit("farfield not found: run scripts/gpu-bundle.sh or cargo build --release -p farfield-cli")
    return c


def run(exe, n, dist, tol, periodic, m2l, compare, reps, input_dir=None):
    src = ["--input", input_dir] if input_dir else ["--n", n, "--dist", dist]
    cmd = [exe, "fmm", *src, "--tol", str(tol), "--backend", "cuda", "--m2l", m2l, "--reps", str(reps), "--json"]
    if periodic:
        cmd.append("--periodic")
    if compare:
        cmd.append("--compare-cpu")
    env = dict(os.environ)
    bundle = os.path.join(ROOT, "build-gpu")
    if os.path.isdir(bundle):
        env["LD_LIBRARY_PATH"] = bundle + os.pathsep + env.get("LD_LIBRARY_PATH", "")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if p.returncode != 0:
        return {"error": (p.stderr or p.stdout).strip().splitlines()[-1:]}
    return json.loads(p.stdout.strip().splitlines()[-1])


def saved(r, key):
    c = r.get("m2l_counts")
    if not c or not c["symmetric"][key]:
        return "–"
    return f"{c['plain'][key] / c['symmetric'][key]:.2f}×"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", nargs="*", default=["1e5", "1e6"])
    ap.add_argument("--dist", nargs="*", default=["uniform", "plummer"])
    ap.add_argument("--tol", nargs="*", type=float, default=[1e-3, 1e-6])
    ap.add_argument("--boundary", nargs="*", default=["open", "periodic"], choices=["open", "periodic"])
    ap.add_argument("--reps", type=int, default=3, help="executes per case (the fastest is kept)")
    ap.add_argument("--no-symmetric", action="store_true", help="skip the symmetric-M2L runs")
    ap.add_argument("--input", help="particles from this folder (positions.npy, charges.npy, box.npy) instead of --n/--dist")
    ap.add_argument("--json", help="write every case (the CLI's JSON objects) to this file, after each case")
    a = ap.parse_args()
    exe = farfield_exe()
    cases = []
    print("| N | dist | tol | boundary | p | D | tree | lists | P2M+M2M | M2L plain (sym) | L2L | L2P | P2P | post "
          "| CUDA execute [ms] | CPU execute [ms] | CPU ÷ CUDA | error φ / E | max rel diff vs CPU φ / E "
          "| M2L operator loads / mults saved by symmetry |")
    print("|" + " --- |" * 20)
    sources = [(os.path.basename(os.path.normpath(a.input)), "input")] if a.input else itertools.product(a.n, a.dist)
    for (n, dist), tol, bnd in itertools.product(sources, a.tol, a.boundary):
        t0 = time.perf_counter()
        r = run(exe, n, dist, tol, bnd == "periodic", "plain", True, a.reps, a.input)
        sym = None if a.no_symmetric or "error" in r else run(exe, n, dist, tol, bnd == "periodic", "symmetric", False, a.reps,
                                                               a.input)
        cases.append({"n": n, "dist": dist, "input": a.input, "tol": tol, "boundary": bnd, "reps": a.reps,
                      "plain": r, "symmetric": sym, "wall_s": time.perf_counter() - t0})
        if a.json:
            with open(a.json + ".tmp", "w") as fh:
                json.dump({"script": "fmm_cuda", "exe": exe, "cases": cases}, fh, indent=1)
            os.replace(a.json + ".tmp", a.json)
        if "error" in r:
            print(f"| {n} | {dist} | {tol:g} | {bnd} | failed: {r['error']} |")
            continue
        s = {k: 1e3 * v for k, v in r["stages"].items()}
        m2l = f"{s['m2l']:.2f}" + (f" ({1e3 * sym['stages']['m2l']:.2f})" if sym and "stages" in sym else "")
        v = r.get("vs_cpu") or {}
        cpu = 1e3 * v.get("cpu_execute_s", float("nan"))
        ex = 1e3 * r["execute_s"]
        print(f"| {n} | {dist} | {tol:g} | {bnd} | {r['p']} | {r['depth']} | {s['tree']:.2f} | {s['lists']:.2f} "
              f"| {s['p2m'] + s['m2m']:.2f} | {m2l} | {s['l2l']:.2f} | {s['l2p']:.2f} | {s['p2p']:.2f} | {s['post']:.2f} "
              f"| {ex:.2f} | {cpu:.1f} | {cpu / ex:.1f} | {r['rel_error_potential']:.2e} / {r['rel_error_field']:.2e} "
              f"| {v.get('max_rel_diff_potential', float('nan')):.1e} / {v.get('max_rel_diff_field', float('nan')):.1e} "
              f"| {saved(r, 'operator_loads')} / {saved(r, 'complex_mults')} |", flush=True)


if __name__ == "__main__":
    main()
