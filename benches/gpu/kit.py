#!/usr/bin/env python3
"""The GPU kit: every GPU path of farfield measured against its peer in one command, results
written as a folder to commit.

    # here (no GPU): the bundle, with the peers' sources, wheels and the Ewald reference
    bash scripts/gpu-bundle.sh                 # -> build-gpu/ (git-ignored); carry it along
    # there (GPU machine, repository root): links for the CUDA 13 names, cuFINUFFT built once,
    # wheels installed, then this script
    bash benches/gpu/run.sh [--quick] [--only nufft,spread,ewald,fmm] [--out DIR]
    # anywhere, no GPU, seconds: the kit's own logic and a real CPU run of the CLI
    python3 benches/gpu/kit.py --selftest      # (benches/gpu/selftest.sh)
    python3 benches/gpu/kit.py --list [--quick] [--only ...]   # the cases, nothing run

Paths, runners and peers (`kit_runners.py`), the case list with full and `--quick` sizes, the
per-path budgets and per-case timeouts (`kit_cases.py`):

| path | ours | peer |
| --- | --- | --- |
| nufft | farfield CUDA NUFFT, C API on CuPy device arrays | cuFINUFFT 2.5.1 on the same arrays |
| spread | CUDA spreading kernels, every method (GM, GM-sort, SM, CSR, GROUP, AUTO) | the CPU spreader, same run |
| ewald | SPME on the device, host arrays (C API) and device arrays (CLI) | OpenMM PME, CUDA and OpenCL platforms |
| fmm | CUDA FMM, plain M2L (the default) and symmetric M2L | the CPU FMM, same p and D, all cores |

Each case runs in a child process with a timeout (a case that hangs is killed and recorded
as "timeout"); each path stops starting cases when its budget is spent (the rest are
recorded as "skipped"); how long each path took is printed and kept.

The results folder, `benches/results/gpu/<YYYY-MM-DD>-<gpu-name-slug>/` (`-quick` appended for
`--quick`), holds:
- `results.json`: `machine` (GPU name, driver, CUDA versions, clocks, host CPU, packages, the
  commit the binaries were built from), `command_line`, `mode`, `paths` (budget, wall time,
  status counts), `setup` (what run.sh did), `records` (one per side of each case: every
  repetition in seconds, stages, errors, status and reason; schema in `kit_report.py`), `raw`
  (the scripts' own JSON, for what the records leave out);
- `README.md`: the machine, the time per path, the ratios ours ÷ peer of the medians, one
  detail table per path, and the list of what was not measured and why.
`--out DIR` also copies both files into DIR/<folder name>/.
"""

import argparse
import datetime
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import kit_cases  # noqa: E402
import kit_machine  # noqa: E402
import kit_report  # noqa: E402
import kit_runners  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
T0 = time.monotonic()


def log(*a):
    print(f"[kit {time.monotonic() - T0:6.1f} s]", *a, file=sys.stderr, flush=True)


def parse_budgets(text):
    out = {}
    for item in filter(None, (t.strip() for t in (text or "").split(","))):
        k, _, v = item.partition("=")
        if k not in kit_cases.PATHS:
            raise SystemExit(f"--budget: unknown path {k!r}")
        out[k] = float(v)
    return out


def openmm_problem(python):
    """None when OpenMM imports in `python`, else the error's last line."""
    p = subprocess.run([python, "-c", "import openmm; print(openmm.__version__)"], capture_output=True, text=True)
    if p.returncode == 0:
        log(f"OpenMM {p.stdout.strip()} imports")
        return None
    return (p.stderr.strip().splitlines() or ["import failed"])[-1]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="one size per path (about 3 minutes)")
    ap.add_argument("--only", help="comma list of paths: " + ",".join(kit_cases.ORDER))
    ap.add_argument("--out", type=Path, help="also copy results.json and README.md into DIR/<folder name>/")
    ap.add_argument("--results-dir", type=Path, help="write the results here instead of benches/results/gpu/<date>-<gpu>/")
    ap.add_argument("--budget", help="override path budgets in seconds, e.g. nufft=200,spread=60")
    ap.add_argument("--list", action="store_true", help="print the cases and exit")
    ap.add_argument("--selftest", action="store_true", help="check the kit itself (no GPU, seconds) and exit")
    ap.add_argument("--bin", help="farfield CLI (default build-gpu/farfield)")
    ap.add_argument("--lib", help="libfarfield.so (default build-gpu/libfarfield.so)")
    ap.add_argument("--cufinufft-lib", type=Path, help="libcufinufft.so built from the peer source")
    ap.add_argument("--cufinufft-py", type=Path, help="folder holding the cufinufft Python package")
    ap.add_argument("--ewald-ref", type=Path, default=ROOT / "build-gpu" / "ewald-ref" / "jac_dhfr",
                    help="cached reference field of JAC DHFR (read if there, else computed and kept)")
    ap.add_argument("--setup", action="append", default=[], help="KEY=VALUE noted in the results (what run.sh did)")
    a = ap.parse_args(argv)
    if a.selftest:
        import kit_selftest
        return kit_selftest.main()

    try:
        cases = kit_cases.expand(a.quick, a.only)
    except ValueError as e:
        ap.error(str(e))
    if a.list:
        for c in cases:
            print(f"{c['path']:7} {c['id']:34} timeout {c['timeout_s']:4} s  {json.dumps(c['params'])}")
        paths = kit_cases.parse_only(a.only)
        print(f"{len(cases)} cases; budgets " + ", ".join(f"{p} {kit_cases.budget(p, a.quick)} s" for p in paths))
        return 0

    budgets = {p: kit_cases.budget(p, a.quick) for p in kit_cases.PATHS}
    budgets.update(parse_budgets(a.budget))
    machine = kit_machine.machine(ROOT)
    log(f"GPU: {machine['gpu_name']}; CUDA {machine['cuda']}; CPU {machine['cpu']['model']} x {machine['cpu']['logical_cpus']}")
    created = datetime.datetime.now(datetime.timezone.utc)
    name = f"{created:%Y-%m-%d}-{kit_machine.slug(machine['gpu_name'])}" + ("-quick" if a.quick else "")
    folder = a.results_dir or ROOT / "benches" / "results" / "gpu" / name

    cuf_lib = a.cufinufft_lib if a.cufinufft_lib and a.cufinufft_lib.exists() else None
    paths = kit_cases.parse_only(a.only)
    ctx = kit_runners.Ctx(ROOT, bin=a.bin, lib=a.lib, python=sys.executable, cufinufft_lib=cuf_lib,
                          cufinufft_py=a.cufinufft_py, ewald_ref=a.ewald_ref,
                          openmm_problem=openmm_problem(sys.executable) if "ewald" in paths else None)
    if "nufft" in paths and cuf_lib is None:
        log(f"cuFINUFFT library not found ({a.cufinufft_lib}): NUFFT runs farfield alone")
    for f in (ctx.bin, ctx.lib):
        if not Path(f).exists():
            log(f"warning: {f} not found (run scripts/gpu-bundle.sh where the binaries are built)")

    records, raw, per_path = [], {}, {}
    for path in paths:
        pc = [c for c in cases if c["path"] == path]
        t = time.monotonic()
        log(f"== {path}: {len(pc)} cases, budget {budgets[path]:.0f} s")
        recs, raw[path] = kit_runners.RUNNERS[path](ctx, pc, t + budgets[path], log)
        if path == "nufft" and cuf_lib is None:
            for r in recs:
                if r["side"] == "peer" and r["status"] == "skipped":
                    r["reason"] = f"libcufinufft.so not found ({a.cufinufft_lib}): cuFINUFFT was not built"
        wall = time.monotonic() - t
        counts = {s: sum(1 for r in recs if r["status"] == s) for s in kit_report.STATUSES}
        per_path[path] = {"budget_s": budgets[path], "wall_s": wall, "cases": len(pc), "status_counts": counts}
        records += recs
        log(f"== {path}: {wall:.1f} s (budget {budgets[path]:.0f} s); records " +
            ", ".join(f"{k} {v}" for k, v in counts.items() if v))

    setup = dict(s.split("=", 1) for s in a.setup if "=" in s)
    doc = {"schema": 1, "created_utc": created.isoformat(timespec="seconds"), "kit": "benches/gpu/kit.py",
           "command_line": " ".join(shlex.quote(x) for x in [Path(sys.argv[0]).name, *(argv if argv is not None else sys.argv[1:])]),
           "mode": "quick" if a.quick else "full", "only": paths, "folder": name, "machine": machine,
           "machine_end": {"gpus": kit_machine.gpus()}, "paths": per_path, "setup": setup,
           "wall_s": time.monotonic() - T0, "records": records, "raw": raw}
    doc = kit_report.relative_paths(doc, ROOT)
    jpath = kit_report.write_json(folder, doc)
    mpath = kit_report.write_markdown(folder, doc)
    print(kit_report.markdown(doc))
    shown = folder.resolve().relative_to(ROOT) if folder.resolve().is_relative_to(ROOT) else folder
    log(f"wrote results.json and README.md ({time.monotonic() - T0:.0f} s in all)")
    log(f"results folder: {shown}")
    if a.out:
        dest = a.out / name
        dest.mkdir(parents=True, exist_ok=True)
        for f in (jpath, mpath):
            shutil.copy2(f, dest / f.name)
        log(f"copied to {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
