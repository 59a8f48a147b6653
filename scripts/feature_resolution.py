#!/usr/bin/env python3
"""Checks, without compiling, that the test command compiles farfield's library once:

    python3 scripts/feature_resolution.py <cargo selection of the test step...>

scripts/test.sh runs its cargo tests with CMake's selection (<build>/cargo-selection.txt) and
later builds the Python extension (`farfield-python` with the cargo features
FARFIELD_PY_FEATURES, through pip: python/tests/run_tests.py, which reads the same variable) in
the same target directory. Cargo resolves features per command, so the two share farfield's compiled
library only if farfield and every crate below it get the same features, profile and
dependencies in both (python/Cargo.toml's feature pins and the root Cargo.toml's num-integer
pin keep them equal; docs/design.md §7.4). When they differ, cargo compiles the library a second
time in place (~5 minutes on 2 cores) and the Python step fails after it; this check names the
differing crates in seconds, before anything is compiled.

It reads cargo's unit graph (`--unit-graph`, a nightly flag that stable cargo takes with
RUSTC_BOOTSTRAP=1) of both commands and compares the closure of farfield's library unit.
Exit status 0 when equal, 1 when not (the differing units are printed), 2 when cargo failed.
"""

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the Python step's build (run_tests.py: FARFIELD_PY_FEATURES, space-separated)
PYTHON_BUILD = ["build", "--release", "-p", "farfield-python",
                *(f for name in os.environ.get("FARFIELD_PY_FEATURES", "").split() for f in ("--features", name))]


def unit_graph(args):
    env = dict(os.environ, RUSTC_BOOTSTRAP="1")
    cmd = ["cargo", *args, "--unit-graph", "-Z", "unstable-options"]
    r = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write(r.stderr)
        print(f"feature_resolution: `{' '.join(cmd)}` failed", file=sys.stderr)
        sys.exit(2)
    return json.loads(r.stdout)["units"]


def library_closure(units):
    """The units farfield's library is compiled from: (package, target, mode, features, platform,
    profile) of each, farfield's own included."""
    roots = [i for i, u in enumerate(units)
             if u["pkg_id"].split("#")[-1].startswith("farfield@") and u["mode"] == "build"
             and "rlib" in u["target"]["kind"]]
    seen, closure, todo = set(), set(), list(roots)
    while todo:
        i = todo.pop()
        if i in seen:
            continue
        seen.add(i)
        u = units[i]
        p = u["profile"]
        closure.add((u["pkg_id"].split("#")[-1], u["target"]["name"], u["mode"],
                     ",".join(u["features"]), u["platform"] or "target",
                     f"opt {p['opt_level']}, debuginfo {p['debuginfo']}, cgu {p['codegen_units']}"))
        todo.extend(d["index"] for d in u["dependencies"])
    return len(roots), closure


def main():
    selection = sys.argv[1:]
    n_test, tests = library_closure(unit_graph(["test", "--release", "--no-run", *selection]))
    n_py, python = library_closure(unit_graph(PYTHON_BUILD))
    if n_test != 1 or n_py != 1:
        print(f"feature_resolution: expected one farfield library unit per command, found "
              f"{n_test} (tests) and {n_py} (Python extension)")
        return 1
    if tests == python:
        print(f"feature_resolution: the test step and the Python extension resolve farfield's "
              f"library alike ({len(tests)} units): it is compiled once")
        return 0
    print("feature_resolution: the Python extension's build would compile farfield's library "
          "again; units that differ (package, target, mode, features, platform, profile):")
    for side, units in (("tests only ", tests - python), ("python only", python - tests)):
        for u in sorted(units):
            print(f"  {side}  {u}")
    print("Pin the features in python/Cargo.toml (or the root Cargo.toml's dev-dependencies) "
          "until both sides agree.")
    return 1


if __name__ == "__main__":
    sys.exit(main())
