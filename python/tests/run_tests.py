#!/usr/bin/env python3
"""The Python package's step of the test command (scripts/test.sh):

    python3 python/tests/run_tests.py [pytest arguments]

1. a git-ignored virtual environment `.venv-python` at the repository root with the test
   dependencies of python/tests/requirements.txt (created on first use by
   benches/peers/peer_env.py's `ensure_venv`, then this script re-runs itself inside it);
2. `pip install --no-build-isolation ./python` with the environment's maturin (an isolated build
   environment has a new path each time, which makes cargo rebuild PyO3 and the extension,
   ~2 min, on every run; without it a run with unchanged sources takes seconds); maturin builds
   the extension with cargo in its own target directory, the git-ignored `target` beside
   python/Cargo.toml unless FARFIELD_PY_TARGET_DIR is set. Not the root workspace's: cargo
   builds farfield there with other features (MPI) and names its cdylib without a hash, so a
   build for the extension would overwrite the library the C tests link;
3. `pytest python/tests -ra` (the summary lists every skip with its reason).
Exit status: pytest's.
"""

import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT / "benches" / "peers"))
from peer_env import ensure_venv, log  # noqa: E402

REQS = [l.strip() for l in (HERE / "requirements.txt").read_text().splitlines() if l.strip() and not l.startswith("#")]
ensure_venv(ROOT / ".venv-python", REQS, probe="import numpy, pytest, finufft, fmm3dpy, openmm, ase, pymatgen, maturin")

env = dict(os.environ)
# the environment's maturin, found by the build hook on PATH
env["PATH"] = os.pathsep.join([str(Path(sys.executable).parent), env.get("PATH", "")])
env["CARGO_TARGET_DIR"] = os.environ.get("FARFIELD_PY_TARGET_DIR", str(ROOT / "python" / "target"))
t0 = time.time()
log(f"pip install ./python (cargo target directory {env['CARGO_TARGET_DIR']})")
subprocess.check_call([sys.executable, "-m", "pip", "install", "--quiet", "--no-build-isolation", str(ROOT / "python")],
                      env=env, cwd=ROOT)
log(f"pip install ./python took {time.time() - t0:.0f} s")
sys.exit(subprocess.call([sys.executable, "-m", "pytest", str(HERE), "-ra", *sys.argv[1:]], cwd=ROOT))
