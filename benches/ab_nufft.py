#!/usr/bin/env python3
"""A/B timing of two farfield binaries on the NUFFT acceptance cases (M = 1e7; 1D
1e6, 2D 1000^2, 3D 128^3; types 1 and 2; tol 1e-3 ... 1e-12), for measuring one change before
and after in the same run on the same machine.

    python3 benches/ab_nufft.py BIN_A BIN_B [--threads 2] [--repeat 3] [--cases 1d1,1d2] [--taskset 0,1]

Runs `BIN bench nufft ... --check 0 --json` alternately for A and B, `--repeat` times each,
and prints per case the best setup (plan + setpts), execute and total of each and the ratio
B/A of the totals, then the median ratio. `--taskset` pins both to those CPUs (Linux
`taskset -c`), e.g. to take 2-thread figures on a bigger machine. `--json-out FILE` writes
every run's setup and execute times of both binaries and the machine.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys

MODES = {1: "1000000", 2: "1000,1000", 3: "128,128,128"}


def run(binary, ty, dim, tol, threads, taskset):
    cmd = [binary, "bench", "nufft", "--type", str(ty), "--dim", str(dim), "--modes", MODES[dim],
           "--points", "1e7", "--tol", tol, "--threads", str(threads), "--check", "0", "--json"]
    if taskset:
        cmd = ["taskset", "-c", taskset] + cmd
    out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    r = json.loads(out.strip().splitlines()[-1])
    return r["plan_s"] + r["setpts_s"], r["exec_s"]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--tol", default="1e-3,1e-6,1e-9,1e-12")
    ap.add_argument("--cases", default="1d1,1d2,2d1,2d2,3d1,3d2", help="dimension d and type, comma-separated")
    ap.add_argument("--taskset", help="CPU list for taskset -c")
    ap.add_argument("--json-out", help="write every run (setup and execute seconds of A and B) to this file")
    args = ap.parse_args()
    print(f"| case | tol | A setup + exec = total (s) | B setup + exec = total (s) | B/A |")
    print("|---|---|---|---|---|")
    ratios, rows = [], []
    for case in args.cases.split(","):
        dim, ty = int(case[0]), int(case[2])
        for tol in args.tol.split(","):
            best = {"a": None, "b": None}
            runs = {"a": [], "b": []}
            for _ in range(args.repeat):
                for k in ("a", "b"):
                    s, e = run(getattr(args, k), ty, dim, tol, args.threads, args.taskset)
                    runs[k].append({"setup_s": s, "exec_s": e})
                    if best[k] is None or s + e < sum(best[k]):
                        best[k] = (s, e)
            (sa, ea), (sb, eb) = best["a"], best["b"]
            ratio = (sb + eb) / (sa + ea)
            ratios.append(ratio)
            rows.append({"dim": dim, "type": ty, "tol": float(tol), "a": runs["a"], "b": runs["b"], "ratio_best_total": ratio})
            print(f"| {dim}D type {ty} | {tol} | {sa:.3f} + {ea:.3f} = {sa + ea:.3f} | {sb:.3f} + {eb:.3f} = {sb + eb:.3f} | {ratio:.2f} |",
                  flush=True)
    print(f"\nmedian B/A over {len(ratios)} cases: {statistics.median(ratios):.3f}; threads {args.threads}, "
          f"best of {args.repeat}{', taskset ' + args.taskset if args.taskset else ''}")
    if args.json_out:
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
        with open(args.json_out, "w", encoding="utf-8") as f:
            json.dump({"a": args.a, "b": args.b, "threads": args.threads, "repeat": args.repeat, "points": 1e7,
                       "modes": MODES, "machine": {"cpu": cpu, "cpus": os.cpu_count(), "platform": platform.platform()},
                       "cases": rows, "median_ratio": statistics.median(ratios)}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    sys.exit(main())
