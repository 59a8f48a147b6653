#!/usr/bin/env python3
"""The FINUFFT 2.5.1 PyPI wheel's own Python interface run on farfield's libfinufft.so.

Copies the installed `finufft` package into a temporary folder, replaces its bundled
`libfinufft.so` (which `finufft/_finufft.py` loads from the package folder) by the compat
library, and runs the wheel's `Plan` (and, through it, the simple functions nufft{1,2,3}d{1,2,3})
for types 1, 2, 3 in 1D-3D, double and single precision, in a subprocess per library: the
original wheel and the compat one. Asserts relative l2 agreement <= 3 tol; prints the errors
and the time ratios compat : wheel (setpts + execute, best of --repeats plans; not asserted).

Usage: python_wheel_check.py <path to the compat libfinufft.so> [--rounds R] [--repeats P]
(R rounds alternate the two libraries' processes; each time is the best over the rounds, so
that a busy spell on the machine does not land on one library only; P plans per case and
round, the time the best of them: 1, the test's setting, checks and times one plan, 5 makes
the table a comparison of timings).
A Python without numpy or finufft 2.5.1 skips (exit 0, message; CTest SKIP_RETURN_CODE 77 when
--skip-code 77 is given).
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

# (type, dim, modes, M, nk) per case; small enough to keep the whole check well under 60 s
CASES = [(1, 1, (20000,), 200000, 0), (2, 1, (20000,), 200000, 0), (3, 1, None, 50000, 50000),
         (1, 2, (256, 200), 200000, 0), (2, 2, (256, 200), 200000, 0), (3, 2, None, 30000, 30000),
         (1, 3, (40, 32, 36), 150000, 0), (2, 3, (40, 32, 36), 150000, 0), (3, 3, None, 20000, 20000)]
# single precision: 1e-4 (at 1e-5 both libraries sit at the rounding floor of float, ~N·eps per
# axis for N = 20000 modes, FINUFFT's docs; they then differ by ~1e-3 from each other)
TOLS = {"complex128": 1e-9, "complex64": 1e-4}


def child(out_path, repeats):
    """Runs every case with the finufft package importable from sys.path[0]; writes results."""
    import time
    import numpy as np
    import finufft
    res = {}
    rng = np.random.default_rng(42)
    for dtype, tol in TOLS.items():
        rdt = np.float64 if dtype == "complex128" else np.float32
        for ty, dim, modes, m, nk in CASES:
            if rdt == np.float32 and dim == 1 and modes:
                modes = (2000,)
            xr = np.pi if ty != 3 else 3.0
            pts = [rng.uniform(-xr, xr, m).astype(rdt) for _ in range(dim)]
            kw = dict(eps=tol, dtype=dtype, nthreads=1)
            if ty == 3:
                fr = 40 if rdt == np.float64 else 15  # float phases s·x lose ~eps·|s·x|
                freqs = [rng.uniform(-fr, fr, nk).astype(rdt) for _ in range(dim)]
            if ty == 2:
                data = (rng.standard_normal(modes) + 1j * rng.standard_normal(modes)).astype(dtype)
            else:
                data = (rng.standard_normal(m) + 1j * rng.standard_normal(m)).astype(dtype)
            # time of setpts + execute: the best of `repeats` plans (the first is also a warm-up)
            dt = float("inf")
            for _ in range(repeats):
                if ty == 3:
                    plan = finufft.Plan(3, dim, **kw)
                    t0 = time.perf_counter()
                    plan.setpts(**dict(zip("xyz", pts)), **dict(zip("stu", freqs)))
                else:
                    plan = finufft.Plan(ty, modes, **kw)
                    t0 = time.perf_counter()
                    plan.setpts(*pts)
                out = plan.execute(data)
                dt = min(dt, time.perf_counter() - t0)
                del plan
            # the simple interface on a small problem (the wheel's nufftNdT calls the same library)
            simple = getattr(finufft, f"nufft{dim}d{ty}")
            sm = 500
            sp = [p[:sm] for p in pts]
            if ty == 1:
                so = simple(*sp, data[:sm], modes, eps=tol)
            elif ty == 2:
                so = simple(*sp, data, eps=tol)
            else:
                so = simple(*sp, data[:sm], *[f[:sm] for f in freqs], eps=tol)
            key = f"{dtype} t{ty} {dim}d"
            np.save(out_path + key.replace(" ", "_") + ".npy", out)
            np.save(out_path + key.replace(" ", "_") + "_simple.npy", so)
            res[key] = dt
    with open(out_path + "times.json", "w") as f:
        json.dump(res, f)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("lib", nargs="?")
    ap.add_argument("--child", help=argparse.SUPPRESS)
    ap.add_argument("--skip-code", type=int, default=0)
    ap.add_argument("--rounds", type=int, default=1,
                    help="runs of both libraries, alternating; each case's time is its best over all rounds")
    ap.add_argument("--repeats", type=int, default=1,
                    help="plans per case and round (single runs scatter by 2-4x on a loaded machine: 5 for timings)")
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.repeats)
    try:
        import numpy as np
        import finufft
        from importlib.metadata import version
        v = version("finufft")
    except Exception as e:  # numpy or finufft missing
        print(f"SKIP: the finufft wheel (2.5.1) and numpy are not importable here ({e})")
        return a.skip_code
    if not v.startswith("2.5"):
        print(f"SKIP: finufft {v} installed, the check is for 2.5.x")
        return a.skip_code
    pkg = os.path.dirname(finufft.__file__)
    with tempfile.TemporaryDirectory() as tmp:
        dirs = {}
        for name in ("wheel", "compat"):
            d = os.path.join(tmp, name)
            os.makedirs(d)
            shutil.copytree(pkg, os.path.join(d, "finufft"), ignore=shutil.ignore_patterns("__pycache__"))
            libs = os.path.join(os.path.dirname(pkg), "finufft.libs")
            if os.path.isdir(libs):  # the wheel library's RPATH $ORIGIN/../finufft.libs
                shutil.copytree(libs, os.path.join(d, "finufft.libs"))
            dirs[name] = d
        shutil.copyfile(a.lib, os.path.join(dirs["compat"], "finufft", "libfinufft.so"))
        # per library: (prefix of its first round's outputs, per case the best time of all
        # rounds); the rounds alternate the libraries, so a busy spell hits both alike
        out = {}
        for r in range(a.rounds):
            for name, d in dirs.items():
                env = dict(os.environ, PYTHONPATH=d, OMP_NUM_THREADS="1")
                prefix = os.path.join(tmp, f"{name}_{r}_")
                subprocess.run([sys.executable, __file__, "--child", prefix, "--repeats", str(a.repeats)], env=env, check=True)
                with open(prefix + "times.json") as f:
                    times = json.load(f)
                if name in out:
                    times = {k: min(t, out[name][1][k]) for k, t in times.items()}
                out[name] = (out.get(name, (prefix,))[0], times)
        print("| case | rel l2 (plan) | rel l2 (simple) | limit 3 tol | time wheel [s] | time compat [s] | compat : wheel |")
        print("|---|---|---|---|---|---|---|")
        bad = []
        for key, tw in out["wheel"][1].items():
            tol = TOLS[key.split()[0]]
            errs = []
            for suffix in ("", "_simple"):
                f = key.replace(" ", "_") + suffix + ".npy"
                w = np.load(out["wheel"][0] + f).astype(np.complex128)
                c = np.load(out["compat"][0] + f).astype(np.complex128)
                errs.append(np.linalg.norm(c - w) / np.linalg.norm(w))
            tc = out["compat"][1][key]
            print(f"| {key} | {errs[0]:.2e} | {errs[1]:.2e} | {3 * tol:.0e} | {tw:.4f} | {tc:.4f} | {tc / tw:.2f} |")
            if max(errs) > 3 * tol:
                bad.append(key)
        if bad:
            print("FAIL: compat and wheel disagree beyond 3 tol:", ", ".join(bad))
            return 1
        print("compat libfinufft.so agrees with the FINUFFT 2.5.1 wheel within 3 tol in every case")
    return 0


if __name__ == "__main__":
    sys.exit(main())
