#!/usr/bin/env python3
"""The Python package's step of the test command (scripts/test.sh):

    python3 python/tests/run_tests.py [pytest arguments]

1. a virtual environment with the test dependencies of python/tests/requirements.txt:
   FARFIELD_PY_VENV (scripts/test.sh: its per-user cache), default the git-ignored `.venv-python`
   at the repository root (created on first use by benches/peers/peer_env.py's `ensure_venv`,
   then this script re-runs itself inside it; steps 2 and 3 hold `<venv>.lock`, so runs from two
   clones sharing the environment take turns);
2. `pip install --no-build-isolation ./python` with the environment's maturin (an isolated build
   environment has a new path each time, which makes cargo rebuild PyO3 and the extension,
   ~2 min, on every run; without it a run with unchanged sources takes seconds). The extension
   is a member of the root cargo workspace; maturin builds it with cargo in
   FARFIELD_PY_TARGET_DIR (default: CARGO_TARGET_DIR, else the workspace's `target`), with the
   cargo features FARFIELD_PY_FEATURES (space-separated, default none). scripts/test.sh passes
   its own target directory and `mpi`: python/Cargo.toml's feature pins then resolve farfield's
   dependencies as its cargo steps did, and the build links the farfield library they compiled.
   With FARFIELD_PY_REUSE=1 (scripts/test.sh) this step fails if pip's build compiled farfield's
   library again, i.e. if the pins no longer match (an edit of a Cargo.toml's dependencies):
   cargo would then rebuild it in place, without MPI, on top of the library the C tests link;
3. `pytest python/tests -ra` (the summary lists every skip with its reason).
Exit status: pytest's.
"""

import fcntl
import os
import re
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "benches" / "peers"))
from peer_env import ensure_venv, log  # noqa: E402

REQS = [l.strip() for l in (HERE / "requirements.txt").read_text().splitlines() if l.strip() and not l.startswith("#")]
VENV = Path(os.environ.get("FARFIELD_PY_VENV") or ROOT / ".venv-python")
ensure_venv(VENV, REQS, probe="import numpy, pytest, finufft, fmm3dpy, openmm, ase, pymatgen, maturin")
LOCK = open(f"{VENV}.lock", "w")  # held until exit: this run's install of ./python is the one tested
fcntl.flock(LOCK, fcntl.LOCK_EX)

env = dict(os.environ)
# the environment's maturin, found by the build hook on PATH
env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
target = Path(os.environ.get("FARFIELD_PY_TARGET_DIR") or os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
env["CARGO_TARGET_DIR"] = str(target)
features = os.environ.get("FARFIELD_PY_FEATURES", "").split()
if features:
    env["MATURIN_PEP517_ARGS"] = " ".join(["--features", ",".join(features), env.get("MATURIN_PEP517_ARGS", "")]).strip()
# farfield's compiled library: its rlib, named with or without cargo's hash suffix
def farfield_libs():
    deps = target / "release" / "deps"
    return {p.name: p.stat().st_mtime_ns for p in deps.glob("libfarfield*.rlib") if re.fullmatch(r"libfarfield(-[0-9a-f]+)?\.rlib", p.name)}
before = farfield_libs()
t0 = time.time()
log(f"pip install ./python (cargo target directory {target}, features {features or 'none'})")
subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", str(ROOT / "python")],
                      env=env, cwd=ROOT)
log(f"pip install ./python took {time.time() - t0:.0f} s")
if os.environ.get("FARFIELD_PY_REUSE") == "1":
    after = farfield_libs()
    rebuilt = sorted(n for n, t in after.items() if before.get(n) != t)
    if not before or rebuilt:
        sys.exit(f"run_tests.py: pip's build compiled farfield's library ({rebuilt or 'none there before'}) instead "
                 "of reusing the test command's: the Python extension's features no longer resolve farfield's "
                 "dependencies as the cargo steps do (see the feature pins in python/Cargo.toml)")
    log(f"the extension reused farfield's library compiled by the cargo steps ({', '.join(sorted(after))})")
sys.exit(subprocess.call([sys.executable, "-m", "pytest", str(HERE), "-ra", *sys.argv[1:]], cwd=ROOT))
