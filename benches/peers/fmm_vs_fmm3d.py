#!/usr/bin/env python3
"""farfield's FMM against fmm3dpy (the Flatiron Institute FMM3D library), same points, same run.

This script installs nothing. Run it with an interpreter that has `fmm3dpy` and `numpy`, for
example a throwaway virtual environment:

    python3 -m venv /tmp/peers-fmm && /tmp/peers-fmm/bin/pip install fmm3dpy numpy
    cargo build --release -p farfield-cli
    /tmp/peers-fmm/bin/python benches/peers/fmm_vs_fmm3d.py                  # N = 1e5, 1e6, tol 1e-6, 2 threads
    /tmp/peers-fmm/bin/python benches/peers/fmm_vs_fmm3d.py --n 1e5 --tol 1e-3,1e-6,1e-9 --repeat 3

What it does:
1. Convention check (N = 400, tol 1e-12): fmm3dpy's `lfmm3d` against the exact sum in numpy
   fixes its normalisation (fmm3dpy 2.x documents and computes the kernel 1/(4 pi r); older
   releases used 1/r: the factor is measured, not assumed) and the sign of its gradient
   (`grad u`, so our field E = -grad phi corresponds to -grad/scale). fmm3dpy's own direct
   routine `l3ddir` is checked against numpy too and then serves as the exact reference.
2. For each case: points uniform in the unit cube (or `--dist`, generated here with numpy),
   charges uniform in [-1/2, 1/2), saved as positions.npy (N x 3) and charges.npy (N) in a
   temporary folder. Ours: `farfield fmm --input DIR --tol T --threads K --json --out DIR`
   (a subprocess; its `time_s` = plan + execute, measured inside the process, and its stage
   split), on K threads and on 1. fmm3dpy: one `lfmm3d(eps=T, sources, charges, pg=2)` call in
   this process, with OMP_NUM_THREADS = K set before fmm3dpy is imported, timed around the call
   (it includes fmm3d's tree and precomputation, like our plan + execute). The PyPI wheels of
   fmm3dpy 2.x are built without OpenMP (no OpenMP runtime linked: the script checks and says
   so), so they run on one thread whatever K is; hence the 1-thread column of ours.
3. Errors: relative l2 errors of potentials and fields of both codes against the exact sum at
   the same `--check` random targets (l3ddir over all N sources).
4. Prints the load average, a Markdown table with times, errors and the ratio ours/fmm3d, and
   our stage breakdown (P2M ... P2P, M2L share). `--repeat R` takes the fastest of R runs of
   each code (interleaved). `--json FILE` also writes all numbers.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BIN = ROOT / "target" / "release" / "farfield"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


def parse_args():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--n", default="1e5,1e6", help="comma-separated particle counts (default 1e5,1e6)")
    ap.add_argument("--tol", default="1e-6", help="comma-separated tolerances (default 1e-6)")
    ap.add_argument("--dist", default="uniform", choices=["uniform", "sphere", "plummer", "clusters"])
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--check", type=int, default=1000, help="random targets of the direct-sum check")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each code; the fastest is reported")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", type=Path, help="also write the results to this file")
    ap.add_argument("--bin", type=Path, default=BIN, help="the farfield binary (default target/release/farfield)")
    return ap.parse_args()


ARGS = parse_args()
# OpenMP reads the thread count when the runtime starts: set it before importing fmm3dpy
os.environ["OMP_NUM_THREADS"] = str(ARGS.threads)
try:
    import numpy as np
    import fmm3dpy
except ImportError as e:  # pragma: no cover - environment problem
    sys.exit(f"{e}\nThis script needs fmm3dpy and numpy, e.g.:\n"
             "  python3 -m venv /tmp/peers-fmm && /tmp/peers-fmm/bin/pip install fmm3dpy numpy\n"
             "  /tmp/peers-fmm/bin/python benches/peers/fmm_vs_fmm3d.py")


def fmm3d_openmp():
    """Whether the installed fmm3dpy extension links an OpenMP runtime (the PyPI wheels of
    fmm3dpy 2.x do not: they run on one thread whatever OMP_NUM_THREADS says)."""
    import glob
    base = Path(fmm3dpy.__file__).parent
    files = glob.glob(str(base / "lfmm3d*.so")) + glob.glob(str(base.parent / "fmm3dpy.libs" / "*"))
    for f in files:
        if "gomp" in Path(f).name or "iomp" in Path(f).name:
            return True
        try:
            if b"omp_get_num_threads" in Path(f).read_bytes() or b"GOMP_parallel" in Path(f).read_bytes():
                return True
        except OSError:
            pass
    return False


def count(s):
    v = float(s)
    if v < 1 or v != int(v):
        raise ValueError(f"bad count {s}")
    return int(v)


def rel_l2(a, b):
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def generate(dist, n, rng):
    """Points in the unit cube as in `farfield fmm --dist` (module docs of cli/src/fmm.rs)."""
    if dist == "uniform":
        x = rng.random((n, 3))
    else:
        if dist == "sphere":
            rad = np.full(n, 0.5)
        else:
            rad = np.empty(n)
            filled = 0
            while filled < n:
                u = rng.random(n - filled)
                s = 1.0 / np.sqrt(u ** (-2.0 / 3.0) - 1.0)
                s = s[s < 20.0]
                rad[filled:filled + len(s)] = s / (40.0 if dist == "plummer" else 400.0)
                filled += len(s)
        ct = 2.0 * rng.random(n) - 1.0
        ph = 2.0 * np.pi * rng.random(n)
        st = np.sqrt(np.maximum(1.0 - ct * ct, 0.0))
        x = 0.5 + rad[:, None] * np.stack([st * np.cos(ph), st * np.sin(ph), ct], axis=1)
        if dist == "clusters":  # two clusters at x = 1/4 and 3/4, half the points each
            x[:, 0] += np.where(np.arange(n) < n // 2, -0.25, 0.25)
    q = rng.random(n) - 0.5
    return np.ascontiguousarray(x), q


def exact_numpy(x, q, idx):
    """Exact potentials and fields at targets x[idx] (numpy, coincident points skipped)."""
    d = x[idx][:, None, :] - x[None, :, :]
    r2 = (d * d).sum(-1)
    with np.errstate(divide="ignore"):
        inv = np.where(r2 > 0, 1.0 / np.sqrt(r2), 0.0)
    phi = inv @ q
    e = np.einsum("tsk,ts->tk", d, q[None, :] * inv ** 3)
    return phi, e


def convention_check():
    """Returns fmm3dpy's kernel scale s (pot = s*phi, grad = -s*E) after checking it."""
    rng = np.random.default_rng(7)
    x, q = generate("uniform", 400, rng)
    phi, e = exact_numpy(x, q, np.arange(400))
    out = fmm3dpy.lfmm3d(eps=1e-12, sources=np.asfortranarray(x.T), charges=q, pg=2)
    s = float(np.dot(out.pot, phi) / np.dot(phi, phi))
    for cand in (1.0, 1.0 / (4.0 * np.pi)):
        if abs(s / cand - 1.0) < 1e-8:
            s = cand
            break
    else:
        sys.exit(f"fmm3dpy's potential is {s} x the 1/r sum: unknown convention")
    ep = rel_l2(out.pot / s, phi)
    ef = rel_l2(-out.grad.T / s, e)
    d = fmm3dpy.l3ddir(sources=np.asfortranarray(x.T), charges=q, targets=np.asfortranarray(x.T), pgt=2)
    dp, df = rel_l2(d.pottarg / s, phi), rel_l2(-d.gradtarg.T / s, e)
    if max(ep, ef) > 1e-9 or max(dp, df) > 1e-13:
        sys.exit(f"convention check failed: lfmm3d {ep:.1e} {ef:.1e}, l3ddir {dp:.1e} {df:.1e}")
    log(f"convention: fmm3dpy {getattr(fmm3dpy, '__version__', '?')} kernel = {'1/r' if s == 1.0 else '1/(4 pi r)'}, "
        f"field = -grad/scale; lfmm3d at 1e-12: {ep:.1e}/{ef:.1e}, l3ddir: {dp:.1e}/{df:.1e}")
    return s


def exact_subset(x, q, idx, scale):
    d = fmm3dpy.l3ddir(sources=np.asfortranarray(x.T), charges=q, targets=np.asfortranarray(x[idx].T), pgt=2)
    return d.pottarg / scale, -d.gradtarg.T / scale


def run_ours(d, tol, threads):
    cmd = [str(ARGS.bin), "fmm", "--input", str(d), "--tol", repr(tol), "--threads", str(threads), "--check", "0",
           "--json", "--out", str(d / "ours")]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stdout}\n{p.stderr}")
    res = json.loads(p.stdout.strip().splitlines()[-1])
    phi = np.load(d / "ours" / "potential.npy")
    field = np.load(d / "ours" / "field.npy")
    return res, phi, field


def run_fmm3d(x, q, tol, scale):
    src = np.asfortranarray(x.T)
    t = time.perf_counter()
    out = fmm3dpy.lfmm3d(eps=tol, sources=src, charges=q, pg=2)
    dt = time.perf_counter() - t
    return dt, out.pot / scale, -out.grad.T / scale


def main():
    if not ARGS.bin.exists():
        sys.exit(f"{ARGS.bin} not found: build it with `cargo build --release -p farfield-cli`")
    ns = [count(s) for s in ARGS.n.split(",")]
    tols = [float(s) for s in ARGS.tol.split(",")]
    load0 = os.getloadavg()
    log(f"load average at start: {load0[0]:.2f} {load0[1]:.2f} {load0[2]:.2f} ({os.cpu_count()} CPUs)")
    scale = convention_check()
    omp = fmm3d_openmp()
    fmm3d_threads = ARGS.threads if omp else 1
    if not omp:
        log("note: this fmm3dpy build has no OpenMP runtime: it runs on 1 thread; ours is also timed on 1 thread")
    rows = []
    with tempfile.TemporaryDirectory(prefix="fmm-peers-") as tmp:
        for n in ns:
            rng = np.random.default_rng(ARGS.seed + n)
            x, q = generate(ARGS.dist, n, rng)
            d = Path(tmp) / f"n{n}"
            d.mkdir()
            np.save(d / "positions.npy", x)
            np.save(d / "charges.npy", q)
            idx = np.sort(rng.choice(n, size=min(ARGS.check, n), replace=False))
            t = time.perf_counter()
            pe, fe = exact_subset(x, q, idx, scale)
            log(f"N = {n}: exact sums at {len(idx)} targets in {time.perf_counter() - t:.1f} s")
            for tol in tols:
                best_o, best_f, best_1 = None, None, None
                for _ in range(ARGS.repeat):
                    res, po, fo = run_ours(d, tol, ARGS.threads)
                    if best_o is None or res["time_s"] < best_o[0]["time_s"]:
                        best_o = (res, po, fo)
                    if ARGS.threads != 1:
                        r1, _, _ = run_ours(d, tol, 1)
                        if best_1 is None or r1["time_s"] < best_1["time_s"]:
                            best_1 = r1
                    tf, pf, ff = run_fmm3d(x, q, tol, scale)
                    if best_f is None or tf < best_f[0]:
                        best_f = (tf, pf, ff)
                res, po, fo = best_o
                tf, pf, ff = best_f
                t1 = best_1["time_s"] if best_1 is not None else res["time_s"]
                row = {
                    "n": n, "dist": ARGS.dist, "tol": tol, "threads": ARGS.threads,
                    "p": res["p"], "depth": res["depth"], "tree": res.get("tree", "uniform"), "max_leaf": res.get("max_leaf"),
                    "ours_s": res["time_s"], "ours_plan_s": res["plan_s"], "ours_execute_s": res["execute_s"],
                    "fmm3d_s": tf, "ratio": res["time_s"] / tf, "fmm3d_threads": fmm3d_threads,
                    "ours_1thread_s": t1, "ratio_1thread": t1 / tf,
                    "ours_err_phi": rel_l2(po[idx], pe), "ours_err_field": rel_l2(fo[idx], fe),
                    "fmm3d_err_phi": rel_l2(pf[idx], pe), "fmm3d_err_field": rel_l2(ff[idx], fe),
                    "stages": res["stages"], "m2l_share": res["m2l_share"],
                    "load": os.getloadavg()[0],
                }
                rows.append(row)
                log(f"N = {n} tol = {tol:g}: ours {row['ours_s']:.3f} s ({t1:.3f} s on 1 thread), fmm3d {tf:.3f} s, "
                    f"ratio {row['ratio']:.2f} ({row['ratio_1thread']:.2f} on 1 thread), "
                    f"load {row['load']:.2f}")
    load1 = os.getloadavg()
    print(f"# farfield FMM vs fmm3dpy ({ARGS.dist}; ours on {ARGS.threads} threads and on 1, fmm3dpy on "
          f"{fmm3d_threads}{'' if omp else ' (its build has no OpenMP)'}; fastest of {ARGS.repeat}; "
          f"load average {load0[0]:.2f} at start, {load1[0]:.2f} at end, {os.cpu_count()} CPUs)\n")
    print(f"| N | tol | ours p / D / tree | ours s ({ARGS.threads} thr) | ours s (1 thr) | fmm3d s | ours/fmm3d | ours/fmm3d (1 thr) "
          "| ours err φ | ours err E | fmm3d err φ | fmm3d err E | M2L share |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['n']:.0e} | {r['tol']:g} | {r['p']} / {r['depth']} / {r.get('tree', 'uniform')} | {r['ours_s']:.3f} | {r['ours_1thread_s']:.3f} | "
              f"{r['fmm3d_s']:.3f} | {r['ratio']:.2f} | {r['ratio_1thread']:.2f} | {r['ours_err_phi']:.1e} | "
              f"{r['ours_err_field']:.1e} | {r['fmm3d_err_phi']:.1e} | {r['fmm3d_err_field']:.1e} | {100 * r['m2l_share']:.0f} % |")
    print("\nOur stages (s): tree, lists, P2M, M2M, M2L, L2L, L2P, P2P, post; plan\n")
    print("| N | tol | tree | lists | P2M | M2M | M2L | L2L | L2P | P2P | post | plan |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        s = r["stages"]
        vals = " | ".join(f"{s[k]:.3f}" for k in ["tree", "lists", "p2m", "m2m", "m2l", "l2l", "l2p", "p2p", "post"])
        print(f"| {r['n']:.0e} | {r['tol']:g} | {vals} | {r['ours_plan_s']:.3f} |")
    if ARGS.json:
        ARGS.json.write_text(json.dumps({"load_start": load0, "load_end": load1, "fmm3d_openmp": omp, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
