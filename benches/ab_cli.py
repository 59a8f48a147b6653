#!/usr/bin/env python3
"""Same-run A/B timing of two `farfield` binaries on the Ewald and FMM commands (the NUFFT
cases have benches/ab_nufft.py), to check that a change leaves run time where it was.

    python3 benches/ab_cli.py BIN_A BIN_B [--repeat 3] [--threads 2] [--json-out FILE]

Each case runs `BIN <command> ... --json` alternately for A and B, `--repeat` times each; a
run's time is the JSON's `median_s` (ewald: median over its own `--repeats` evaluations) or
`execute_s` (fmm: the fastest of its own `--reps 3`; the tree stage of that execute is recorded
beside it). Prints per case the best time of each binary and the ratio B/A, and the median of
those ratios; `--json-out` writes every run's time and the machine. `--only S` keeps the cases
whose name contains S.
"""

import argparse
import json
import os
import platform
import statistics
import subprocess

# (name, arguments after the binary, JSON key of the timed quantity)
CASES = [
    ("ewald spme JAC DHFR 1e-5", ["ewald", "--input", "data/jac_dhfr", "--method", "spme", "--tol", "1e-5",
                                  "--repeats", "5"], "median_s"),
    ("ewald spectral JAC DHFR 1e-5", ["ewald", "--input", "data/jac_dhfr", "--method", "spectral", "--tol", "1e-5",
                                      "--repeats", "5"], "median_s"),
    ("fmm open uniform 2e5 1e-6", ["fmm", "--n", "200000", "--tol", "1e-6", "--check", "0", "--reps", "3"], "execute_s"),
    ("fmm periodic JAC DHFR 1e-5", ["fmm", "--input", "data/jac_dhfr", "--periodic", "--tol", "1e-5",
                                    "--check", "0", "--reps", "3"], "execute_s"),
]


def run(binary, args, key, threads):
    """The timed quantity and, for the FMM, the tree stage of the timed execute (else None)."""
    out = subprocess.run([binary, *args, "--threads", str(threads), "--json"], check=True, capture_output=True,
                         text=True).stdout
    doc = json.loads(out.strip().splitlines()[-1])
    return doc[key], doc.get("stages", {}).get("tree")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("a")
    ap.add_argument("b")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--json-out")
    ap.add_argument("--only", default="")
    a = ap.parse_args()
    rows, ratios = [], []
    for name, args, key in CASES:
        if a.only not in name:
            continue
        times = {"a": [], "b": []}
        tree = {"a": [], "b": []}
        for _ in range(a.repeat):
            for side, binary in (("a", a.a), ("b", a.b)):
                t, tr = run(binary, args, key, a.threads)
                times[side].append(t)
                tree[side].append(tr)
        ratio = min(times["b"]) / min(times["a"])
        ratios.append(ratio)
        line = f"{name:32s} A {min(times['a']) * 1e3:9.2f} ms  B {min(times['b']) * 1e3:9.2f} ms  B/A {ratio:.3f}"
        row = {"case": name, "args": args, "key": key, "a_s": times["a"], "b_s": times["b"], "ratio_best": ratio}
        if tree["a"][0] is not None:
            line += f"  (tree stage A {min(tree['a']) * 1e3:.2f} ms, B {min(tree['b']) * 1e3:.2f} ms)"
            row.update({"a_tree_s": tree["a"], "b_tree_s": tree["b"]})
        print(line, flush=True)
        rows.append(row)
    print(f"median B/A {statistics.median(ratios):.3f}")
    if a.json_out:
        cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
        with open(a.json_out, "w", encoding="utf-8") as f:
            json.dump({"a": a.a, "b": a.b, "threads": a.threads, "repeat": a.repeat,
                       "machine": {"cpu": cpu, "cpus": os.cpu_count(), "platform": platform.platform()},
                       "cases": rows, "median_ratio": statistics.median(ratios)}, f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
