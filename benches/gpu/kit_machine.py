"""What the GPU kit records about the machine (`benches/gpu/kit.py`): GPU name, driver, CUDA
versions, clocks (when nvidia-smi reads them), host CPU, memory, Python and package versions,
the git commit of the tree and of the bundled binaries. Every probe may fail: its field then
says why. Standard library only (package versions from their metadata, nothing imported).
"""

import json
import os
import platform
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path


def _run(cmd, timeout=20):
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p.stdout if p.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired):
        return None


def _query(fields):
    out = _run(["nvidia-smi", f"--query-gpu={','.join(fields)}", "--format=csv,noheader,nounits"])
    if out is None:
        return None
    rows = []
    for line in out.strip().splitlines():
        vals = [v.strip() for v in line.split(",")]
        rows.append({f: (None if v.startswith("[") or v == "N/A" else v) for f, v in zip(fields, vals)})
    return rows


def gpus():
    """One dict per GPU from nvidia-smi (None where a field is not supported), or None."""
    base = _query(["index", "name", "driver_version", "compute_cap", "memory.total", "pci.bus_id"])
    if base is None:
        return None
    for group in (["clocks.sm", "clocks.mem", "clocks.max.sm", "clocks.max.mem"], ["clocks.applications.graphics"],
                  ["power.limit", "pstate", "temperature.gpu"]):
        extra = _query(group)
        for row, e in zip(base, extra or []):
            row.update(e)
    return base


def cuda_versions():
    smi = _run(["nvidia-smi"])
    nvcc = _run(["nvcc", "--version"])
    m = re.search(r"CUDA Version:\s*([0-9.]+)", smi or "")
    n = re.search(r"release ([0-9.]+), V([0-9.]+)", nvcc or "")
    return {"driver_cuda": m.group(1) if m else None, "nvcc": n.group(2) if n else None}


def cpu():
    model, n = None, os.cpu_count()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    mem = None
    try:
        m = re.search(r"MemTotal:\s*(\d+) kB", Path("/proc/meminfo").read_text())
        mem = int(m.group(1)) * 1024 if m else None
    except OSError:
        pass
    return {"model": model or platform.processor() or None, "logical_cpus": n, "memory_bytes": mem,
            "load_average": list(os.getloadavg()) if hasattr(os, "getloadavg") else None}


def packages(names=("numpy", "cupy-cuda13x", "cupy-cuda12x", "cupy", "openmm", "openmm-cuda-12", "openmm-cuda-13")):
    out = {}
    for n in names:
        try:
            out[n] = metadata.version(n)
        except metadata.PackageNotFoundError:
            pass
    return out


def git(root):
    """The tree's commit (git, where the tree is a checkout) and the bundle's
    (build-gpu/bundle-info.json, written where the binaries were built)."""
    out = {}
    head = _run(["git", "-C", str(root), "rev-parse", "HEAD"])
    if head:
        dirty = _run(["git", "-C", str(root), "status", "--porcelain", "--untracked-files=no"])
        out["tree_commit"] = head.strip()
        out["tree_dirty"] = bool(dirty and dirty.strip())
    info = Path(root) / "build-gpu" / "bundle-info.json"
    if info.exists():
        try:
            out["bundle"] = json.loads(info.read_text())
        except ValueError as e:
            out["bundle"] = {"error": str(e)}
    return out


def slug(name):
    return re.sub(r"[^a-z0-9]+", "-", (name or "no-gpu").lower()).strip("-") or "no-gpu"


def machine(root):
    g = gpus()
    return {"gpus": g, "gpu_name": g[0]["name"] if g else None, "cuda": cuda_versions(), "cpu": cpu(),
            "os": platform.platform(), "python": sys.version.split()[0], "packages": packages(), "git": git(root)}
