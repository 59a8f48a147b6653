"""Shared set-up of the peer benchmarks in this folder: the repository paths, logging to stderr,
a git-ignored virtual environment with the peer packages (created on first use, then the calling
script re-runs itself inside it), and the release binary.

Usage from a script in this folder (its folder is on sys.path when run as a script):

    from peer_env import ROOT, BIN, log, ensure_venv, ensure_binary, stderr_of
    ensure_venv(ROOT / ".venv-peers", ["openmm", "numpy"], probe="import openmm, numpy")
"""

import fcntl
import os
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# FARFIELD_BIN overrides the binary (e.g. build-gpu/farfield of scripts/gpu-bundle.sh on a machine
# without a Rust toolchain).
BIN = Path(os.environ["FARFIELD_BIN"]).resolve() if os.environ.get("FARFIELD_BIN") else ROOT / "target" / "release" / "farfield"


def log(*a):
    """Prints to stderr (stdout is kept for the result tables)."""
    print(*a, file=sys.stderr, flush=True)


def ensure_venv(venv, packages, probe=None):
    """Re-executes the calling script with `venv`'s interpreter, creating the environment and
    installing `packages` with pip first when `probe` (Python source, default: importing nothing)
    fails there. Returns when already running inside `venv`, or inside another virtual
    environment where `probe` succeeds (e.g. a checkout's worktree run with the main checkout's
    `.venv-peers/bin/python`)."""
    py = venv / "bin" / "python"
    if Path(sys.prefix).resolve() == venv.resolve():
        return
    if probe is not None and sys.prefix != sys.base_prefix and \
            subprocess.run([sys.executable, "-c", probe], capture_output=True).returncode == 0:
        return
    venv.parent.mkdir(parents=True, exist_ok=True)
    # one creator at a time (the environment may be in a per-user cache that clones share)
    with open(f"{venv}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not py.exists():
            log(f"creating virtual environment {venv}")
            subprocess.check_call([sys.executable, "-m", "venv", str(venv)])
        if probe is None or subprocess.run([str(py), "-c", probe], capture_output=True).returncode != 0:
            log("installing " + ", ".join(packages) + " with pip")
            subprocess.check_call([str(py), "-m", "pip", "install", "--quiet", *packages])
    script = Path(sys.argv[0]).resolve()
    os.execv(str(py), [str(py), str(script), *sys.argv[1:]])


def ensure_binary(force=False):
    """Builds target/release/farfield with cargo when it is missing (or when `force`)."""
    if force or not BIN.exists():
        log("building target/release/farfield (cargo build --release -p farfield-cli)")
        subprocess.check_call(["cargo", "build", "--release", "-p", "farfield-cli"], cwd=ROOT)


def stderr_of(fn):
    """Runs `fn()` with file descriptor 2 (the C library's stderr) sent to a temporary file;
    returns that text."""
    sys.stderr.flush()
    with tempfile.TemporaryFile() as tmp:
        saved = os.dup(2)
        os.dup2(tmp.fileno(), 2)
        try:
            fn()
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        tmp.seek(0)
        return tmp.read().decode(errors="replace")
