#!/usr/bin/env python3
"""Summarise cargo's build timing reports (`cargo build --timings`) as one JSON results file.

    python3 benches/build_timings.py --what "..." --prediction "..." --result "..." \\
        --out OUT.json  VARIANT=COMMIT=REPORT.html [VARIANT=COMMIT=REPORT.html ...]

Each argument names one run: a variant label, the commit it built and cargo's HTML report
(`target/cargo-timings/cargo-timing-<time>.html`). The file holds, per run, the build's wall time
(the report's last unit end), each `farfield*` unit (start, duration, front-end/codegen split
where cargo reports it) and the ten longest units; and the machine (CPU model, cores, rustc).
"""
import argparse
import json
import os
import platform
import re
import subprocess
import sys


def units(report):
    html = open(report, encoding="utf-8").read()
    m = re.search(r"const UNIT_DATA = (\[.*?\]);", html, re.S)
    if not m:
        sys.exit(f"{report}: no UNIT_DATA (not a cargo --timings report?)")
    return json.loads(m.group(1))


def summary(u):
    def row(x):
        r = {"name": x["name"], "target": x["target"].strip(), "start_s": x["start"], "duration_s": x["duration"]}
        if x.get("sections"):
            r["sections"] = {name: [s["start"], s["end"]] for name, s in x["sections"]}
        return r
    return {
        "wall_s": round(max(x["start"] + x["duration"] for x in u), 2),
        "farfield_units": [row(x) for x in u if x["name"].startswith("farfield")],
        "longest_units": [row(x) for x in sorted(u, key=lambda x: -x["duration"])[:10]],
    }


def machine():
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    rustc = subprocess.run(["rustc", "--version"], capture_output=True, text=True).stdout.strip()
    return {"cpu": cpu, "cpus": os.cpu_count(), "rustc": rustc, "platform": platform.platform()}


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--what", required=True)
    ap.add_argument("--command", required=True, help="the cargo command each run timed")
    ap.add_argument("--prediction", default="")
    ap.add_argument("--result", default="")
    ap.add_argument("--date", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("runs", nargs="+", metavar="VARIANT=COMMIT=REPORT")
    a = ap.parse_args()
    runs = []
    for spec in a.runs:
        variant, commit, report = spec.split("=", 2)
        runs.append({"variant": variant, "commit": commit, **summary(units(report))})
    out = {"what": a.what, "date": a.date, "command": a.command, "machine": machine(),
           "prediction": a.prediction, "runs": runs, "result": a.result}
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(out, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
