"""Plan, setpts and execute times and errors through FINUFFT's Python package: its own library
against the FINUFFT drop-in (our libfinufft.so in a copy of the same package), in one run.

    python3 benches/peers/finufft_plan_overhead.py --lib build/test/lib/finufft/libfinufft.so \
        [--lib NAME=OTHER.so ...] [--rounds 3] [--threads 2] [--json-out FILE]

The finufft 2.5.1 wheel runs in the git-ignored .venv-peers (made on first use). Each round runs
every library (FINUFFT's, and each `--lib`: `farfield` for the first unless named, e.g. a build
before and after a change), alternating, each in a fresh process on the same inputs. Per case: `Plan(...)`
alone (median of 20 plans; the mri-nufft pattern of planning per operator call), `setpts` and
`execute` (median of 5 after a warm-up), and the relative l2 error of 100 output modes (type 1)
or 100 outputs (type 2) against direct sums in double precision. The cases are small problems,
where the plan's set-up is a visible share: 1D 1000, 2D 256², 3D 32³ modes with M = 2·10⁵
uniform points, in double precision at 1e-6 and single at 1e-5, and single precision at 1e-6,
below what FINUFFT's own single precision reaches (its warning), the tolerance mri-nufft asks for.
The JSON holds every repetition, the libraries' SHA-256 and the machine.
"""

import argparse
import hashlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_env import ROOT, log, ensure_venv  # noqa: E402

CASES = [  # (type, modes, dtype, eps)
    (t, n, dt, eps)
    for n in [(1000,), (256, 256), (32, 32, 32)]
    for (dt, eps) in [("complex128", 1e-6), ("complex64", 1e-5), ("complex64", 1e-6)]
    for t in (1, 2)
]

CHILD = r"""
import json, sys, time, warnings
import numpy as np
import finufft
warnings.simplefilter("ignore")
cases, threads, M = json.loads(sys.argv[1]), int(sys.argv[2]), 200000
out = []
for (ty, n, dt, eps) in cases:
    n = tuple(n)
    rng = np.random.default_rng(7)
    d = len(n)
    x = [rng.uniform(-np.pi, np.pi, M) for _ in range(d)]
    rdt = np.float32 if dt == "complex64" else np.float64
    xs = [v.astype(rdt) for v in x]
    plan_s = []
    for _ in range(20):
        t0 = time.perf_counter()
        p = finufft.Plan(ty, n, eps=eps, dtype=dt, nthreads=threads)
        plan_s.append(time.perf_counter() - t0)
        del p
    p = finufft.Plan(ty, n, eps=eps, dtype=dt, nthreads=threads)
    setpts_s = []
    for _ in range(5):
        t0 = time.perf_counter(); p.setpts(*xs); setpts_s.append(time.perf_counter() - t0)
    if ty == 1:
        c = (rng.standard_normal(M) + 1j * rng.standard_normal(M)).astype(dt)
    else:
        c = (rng.standard_normal(n) + 1j * rng.standard_normal(n)).astype(dt)
    f = p.execute(c)
    exec_s = []
    for _ in range(5):
        t0 = time.perf_counter(); p.execute(c); exec_s.append(time.perf_counter() - t0)
    # direct sums in f64 on the rounded coordinates the library was given; FINUFFT's default signs
    # (type 1: +i, type 2: -i) and mode order (CMCL: index i is mode i - N//2)
    xd = [v.astype(np.float64) for v in xs]
    if ty == 1:
        idx = [rng.integers(0, nn, 100) for nn in n]
        k = [i - nn // 2 for i, nn in zip(idx, n)]
        ph = sum(np.outer(kk, xx) for kk, xx in zip(k, xd))
        exact = np.exp(1j * ph) @ c.astype(np.complex128)
        got = f[tuple(idx)]
    else:
        j = rng.integers(0, M, 100)
        grids = np.meshgrid(*[np.arange(nn) - nn // 2 for nn in n], indexing="ij")
        ph = sum(np.multiply.outer(xx[j], g) for xx, g in zip(xd, grids))
        exact = (np.exp(-1j * ph) * c.astype(np.complex128)).reshape(100, -1).sum(axis=1)
        got = f[j]
    err = float(np.linalg.norm(got - exact) / np.linalg.norm(exact))
    out.append(dict(type=ty, modes=list(n), dtype=dt, eps=eps, M=M, plan_s=plan_s, setpts_s=setpts_s,
                    execute_s=exec_s, rel_err_100=err))
print(json.dumps(out))
"""


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def machine():
    cpu = "unknown"
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {"cpu": cpu, "cores": os.cpu_count(), "python": platform.python_version(), "os": platform.platform()}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", required=True, action="append",
                    help="our libfinufft.so (the FINUFFT drop-in, CMake target finufft_compat), as PATH or NAME=PATH; repeatable")
    ap.add_argument("--rounds", type=int, default=3, help="alternating rounds of both libraries (default 3)")
    ap.add_argument("--threads", type=int, default=2, help="nthreads of every plan (default 2)")
    ap.add_argument("--json-out", help="write every repetition as JSON to this file")
    args = ap.parse_args()
    ours = {}
    for i, spec in enumerate(args.lib):
        name, _, path = spec.rpartition("=") if "=" in spec else ("farfield" if i == 0 else f"lib{i}", "", spec)
        ours[name] = Path(path).resolve()
    ensure_venv(ROOT / ".venv-peers", ["finufft==2.5.1", "numpy"], probe="import finufft, numpy")
    import finufft  # the wheel, in this environment

    pkg = Path(finufft.__file__).parent
    tmp = Path(tempfile.mkdtemp())
    try:
        shutil.copytree(pkg, tmp / "finufft", ignore=shutil.ignore_patterns("__pycache__"))
        if (pkg.parent / "finufft.libs").is_dir():
            shutil.copytree(pkg.parent / "finufft.libs", tmp / "finufft.libs")
        sides, libs = {}, {}
        for name, lib in ours.items():
            shutil.copytree(tmp / "finufft", tmp / name / "finufft")
            if (tmp / "finufft.libs").is_dir():
                shutil.copytree(tmp / "finufft.libs", tmp / name / "finufft.libs")
            shutil.copy(lib, tmp / name / "finufft" / "libfinufft.so")
            sides[name], libs[name] = {"PYTHONPATH": str(tmp / name)}, sha256(lib)
        sides["finufft"], libs["finufft"] = {}, sha256(pkg / "libfinufft.so")
        runs = {s: [] for s in sides}
        for r in range(args.rounds):
            for side, env in sides.items():
                log(f"round {r + 1}/{args.rounds}: {side}")
                res = subprocess.run([sys.executable, "-c", CHILD, json.dumps(CASES), str(args.threads)],
                                     env={**os.environ, **env}, capture_output=True, text=True, check=True)
                runs[side].append(json.loads(res.stdout.strip().splitlines()[-1]))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)

    med = lambda v: sorted(v)[len(v) // 2]  # noqa: E731
    names = list(sides)
    print("medians in ms; relative error of 100 outputs; columns: " + ", ".join(names))
    for i, (ty, n, dt, eps) in enumerate(CASES):
        row = {s: [runs[s][r][i] for r in range(args.rounds)] for s in names}
        col = lambda k: "/".join(f"{med([v for x in row[s] for v in x[k]]) * 1e3:.3g}" for s in names)  # noqa: E731
        err = "/".join(f"{med([x['rel_err_100'] for x in row[s]]):.2e}" for s in names)
        name = f"{len(n)}D type {ty} {'x'.join(map(str, n))} {'f32' if dt == 'complex64' else 'f64'} {eps:g}"
        print(f"{name:<30} plan {col('plan_s'):<22} setpts {col('setpts_s'):<18} execute {col('execute_s'):<20} error {err}")
    if args.json_out:
        git = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        Path(args.json_out).write_text(json.dumps({
            "what": "FINUFFT's Python package on its own library and on farfield's drop-in, alternating rounds",
            "command": "python3 benches/peers/finufft_plan_overhead.py " + " ".join(sys.argv[1:]),
            "git": git, "machine": machine(), "threads": args.threads, "libraries_sha256": libs,
            "cases": [dict(type=t, modes=list(n), dtype=dt, eps=eps) for (t, n, dt, eps) in CASES],
            "runs": runs}, indent=1) + "\n")


if __name__ == "__main__":
    main()
