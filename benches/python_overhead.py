#!/usr/bin/env python3
"""What a Python call of farfield.nufft costs on top of the Rust API call it makes.

For each problem, one plan; the Rust API's time is that of `CompatPlan::execute` called in a
Rust loop by the native module's benchmark hook (`_NufftCore._time_execute`, the arrays
borrowed once), the Python time that of `Plan.execute(data, out=out)` (FINUFFT's checks, the
array borrows, the GIL release); both best-of and median, over 5 rounds of 2000 calls each
(small problems) or 31 alternating single calls (large ones), so that a busy spell hits both.
Overhead = median(Python) − median(Rust).
Writes a Markdown table to stdout and raw JSON (with machine information) to --json.

    python3 benches/python_overhead.py [--json benches/results/python_overhead_<date>.json]

Runs inside the test environment (.venv-python: python3 python/tests/run_tests.py makes it and
installs the package), re-executing itself there.
"""

import argparse
import datetime
import json
import os
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
import kit_machine  # noqa: E402  (the one description of the host)

sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))
from peer_env import ROOT, ensure_venv, log  # noqa: E402

ensure_venv(ROOT / ".venv-python", ["numpy"], probe="import numpy, farfield")

import numpy as np  # noqa: E402

import farfield  # noqa: E402
import farfield.nufft as ffn  # noqa: E402

# (label, type, modes, M): two small problems where the call cost matters, two large ones
CASES = [("1D type 1, N=32, M=16", 1, (32,), 16),
         ("2D type 2, N=16², M=64", 2, (16, 16), 64),
         ("2D type 1, N=512², M=1e6", 1, (512, 512), 1_000_000),
         ("3D type 2, N=64³, M=1e6", 2, (64, 64, 64), 1_000_000)]



def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    rng = np.random.default_rng(1)
    meta = {"what": "Python call overhead of farfield.nufft over the Rust API call (same plan, same arrays)",
            "command": "python3 benches/python_overhead.py" + (f" --threads {a.threads}" if a.threads != 1 else ""),
            "date": datetime.date.today().isoformat(),
            "machine": {"cpu": kit_machine.cpu()["model"], "cpus": os.cpu_count(), "python": platform.python_version(),
                        "numpy": np.__version__, "farfield": farfield.__version__, "platform": platform.platform(),
                        "load_average_start": os.getloadavg()[0]},
            "threads": a.threads, "results": []}
    print(f"| problem | Rust API median (µs) | Python median (µs) | overhead (µs) | overhead (%) |\n|---|---|---|---|---|")
    for label, ty, modes, m in CASES:
        small = m < 10_000
        # small problems: blocks of REPS calls; large ones: one call of each, alternating
        reps, rounds = (2000, 5) if small else (1, 31)
        pts = [rng.uniform(-np.pi, np.pi, m) for _ in modes]
        p = ffn.Plan(ty, modes, eps=1e-6, nthreads=a.threads)
        p.setpts(*pts)
        if ty == 1:
            data = rng.standard_normal(m) + 1j * rng.standard_normal(m)
            out = np.zeros(modes, complex)
            c, f, out_is_c = data, out, False
        else:
            data = rng.standard_normal(modes) + 1j * rng.standard_normal(modes)
            out = np.zeros(m, complex)
            c, f, out_is_c = out, data, True
        rust, py = [], []
        for _ in range(rounds):
            rust += p._core._time_execute(c, f, False, out_is_c, reps)
            for _ in range(reps):
                t0 = time.perf_counter()
                p.execute(data, out=out)
                py.append(time.perf_counter() - t0)
        r_med, p_med = float(np.median(rust)), float(np.median(py))
        row = {"problem": label, "type": ty, "modes": modes, "M": m, "calls": len(py),
               "rust_median_s": r_med, "rust_min_s": float(np.min(rust)), "python_median_s": p_med,
               "python_min_s": float(np.min(py)), "overhead_s": p_med - r_med, "overhead_rel": (p_med - r_med) / r_med}
        meta["results"].append(row)
        print(f"| {label} | {1e6 * r_med:.2f} | {1e6 * p_med:.2f} | {1e6 * (p_med - r_med):.2f} | {100 * row['overhead_rel']:.2f} |")
    meta["machine"]["load_average_end"] = os.getloadavg()[0]
    if a.json:
        a.json.write_text(json.dumps(meta, indent=1) + "\n")
        log(f"wrote {a.json}")


if __name__ == "__main__":
    main()
