"""Running one NUFFT case through farfield (its CLI), FINUFFT and ducc0 on identical inputs.

Used by `nufft_vs_finufft.py` (the same-run comparison). Conventions (pinned down by that
script's convention check): modes in CMCL order k = -N/2 ... (N-1)/2; ours is a flat array with
x fastest, FINUFFT and ducc0 from Python use an array [k1, k2, k3] with the last index fastest
(the same numbers, transposed); exponent sign +i for iflag >= 0 (ducc0: forward = iflag < 0);
points in radians with period 2 pi.

Timing split, the same for all three libraries:
- setup = plan + setpts: ours `plan_s + setpts_s` (timed inside the CLI process), FINUFFT
  `finufft.Plan(...)` + `plan.setpts(...)`, ducc0 the `ducc0.nufft.plan(...)` constructor (it
  sorts the points and chooses sigma and the kernel);
- exec = one execute: ours `exec_s`, FINUFFT `plan.execute(data, out=...)`, ducc0
  `plan.nu2u(...)` / `plan.u2nu(...)`;
- total = setup + exec. Inputs are converted to each library's layout and its output array is
  allocated and touched before the clocks start (ours allocates and zeroes its output before
  its clock too). Seconds, wall clock (`time.perf_counter`).
Best of R keeps the repetition with the smallest total (with its split); the setup is part of
every repetition.
"""

import ctypes
import json
import os
import re
import subprocess
import tempfile
import time

from peer_env import BIN

TWO_PI = 6.283185307179586


# ----------------------------------------------------------------------------- layouts, errors
def to_flat(a):
    """Python-order mode array [k1, k2, k3] (last index fastest) -> our flat layout (x fastest)."""
    return a.transpose().reshape(-1)


def from_flat(v, n):
    """Our flat mode array (x fastest) -> Python-order [k1, k2, k3], C-contiguous."""
    import numpy as np
    return np.ascontiguousarray(v.reshape(tuple(reversed(n))).transpose())


def rel_l2(a, b):
    """Relative l2 difference ||a - b|| / ||b||."""
    import numpy as np
    return float(np.linalg.norm(a - b) / np.linalg.norm(b))


def threads_label(t):
    """0 means all cores for every library."""
    return f"all ({os.cpu_count()})" if t == 0 else str(t)


def threads_count(t):
    return os.cpu_count() if t == 0 else t


def best_of(runs):
    """The run (dict with total_s) with the smallest total."""
    return min(runs, key=lambda r: r["total_s"])


# ----------------------------------------------------------------------------- ours
# extra arguments of every `farfield bench nufft` run (main() adds `--by-reference` when asked)
OURS_EXTRA_ARGS = []


def run_ours(ty, dim, n, m, tol, threads, iflag=None, check=100, save=None, prec="f64"):
    """Runs `farfield bench nufft ... --json` in a fresh process; returns its JSON record
    (plan_s, setpts_s, exec_s, total_s, rel_error, upsampfac, kernel_width, nf, ...)."""
    cmd = [str(BIN), "bench", "nufft", "--type", str(ty), "--dim", str(dim), "--modes", ",".join(map(str, n)),
           "--points", str(m), "--tol", repr(tol), "--threads", str(threads), "--prec", prec,
           "--check", str(check), "--json", *OURS_EXTRA_ARGS]
    if iflag is not None:
        cmd += ["--iflag", str(iflag)]
    if save is not None:
        cmd += ["--save", str(save)]
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr}")
    r = json.loads(p.stdout.strip().splitlines()[-1])
    r["setup_s"] = r["plan_s"] + r["setpts_s"]
    return r


def load_saved(d, dim):
    """Inputs, output and check data saved by `farfield bench nufft --save d`."""
    import numpy as np
    coords = [np.load(d / f"{a}.npy") for a in "xyz"[:dim]]
    return (coords, np.load(d / "input.npy"), np.load(d / "output.npy"),
            np.load(d / "check_idx.npy").astype(np.int64), np.load(d / "check_exact.npy"))


# ----------------------------------------------------------------------------- FINUFFT
def run_finufft(ty, n, coords, data_py, tol, iflag, threads, out):
    """data_py: type 1 strengths (M,), type 2 modes [k1, k2, k3]; out: the output array
    (modes [k1, k2, k3] or (M,)). Returns the times (s); the result is in `out`."""
    import finufft
    t0 = time.perf_counter()
    plan = finufft.Plan(ty, tuple(n), n_trans=1, eps=tol, isign=iflag, dtype=data_py.dtype.name, nthreads=threads)
    tp = time.perf_counter()
    plan.setpts(*coords)
    t1 = time.perf_counter()
    plan.execute(data_py, out=out)
    t2 = time.perf_counter()
    del plan
    return {"plan_s": tp - t0, "setpts_s": t1 - tp, "setup_s": t1 - t0, "exec_s": t2 - t1, "total_s": t2 - t0}


# ----------------------------------------------------------------------------- ducc0
def ducc0_ok(tol, prec):
    """ducc0.nufft's documented accuracy limits: epsilon > 1e-6 (f32), > 2e-13 (f64)."""
    return tol > (1e-6 if prec == "f32" else 2e-13)


def ducc0_plan(ty, n, coord_md, tol, threads):
    import ducc0
    return ducc0.nufft.plan(nu2u=ty == 1, coord=coord_md, grid_shape=tuple(n), epsilon=tol, nthreads=threads,
                            periodicity=TWO_PI, fft_order=False)


def ducc0_execute(plan, ty, data_py, iflag, out, verbosity=0):
    if ty == 1:
        plan.nu2u(points=data_py, forward=iflag < 0, out=out, verbosity=verbosity)
    else:
        plan.u2nu(grid=data_py, forward=iflag < 0, out=out, verbosity=verbosity)


def run_ducc0(ty, n, coord_md, data_py, tol, iflag, threads, out):
    """ducc0's plan interface: constructor = setup, nu2u/u2nu = execute. coord_md: (M, d)."""
    t0 = time.perf_counter()
    plan = ducc0_plan(ty, n, coord_md, tol, threads)
    t1 = time.perf_counter()
    ducc0_execute(plan, ty, data_py, iflag, out)
    t2 = time.perf_counter()
    del plan
    return {"setup_s": t1 - t0, "exec_s": t2 - t1, "total_s": t2 - t0}


def ducc0_params(ty, n, coord_md, data_py, tol, iflag, threads, out):
    """ducc0's chosen oversampled grid and kernel support, read from its verbosity=1 report of
    one extra (untimed) execute: {"nf": [...], "w": int, "sigma": [nf_i / n_i]} or None."""
    import sys
    libc = ctypes.CDLL(None)
    sys.stdout.flush()
    with tempfile.TemporaryFile(mode="w+") as f:
        saved = os.dup(1)
        os.dup2(f.fileno(), 1)
        try:
            plan = ducc0_plan(ty, n, coord_md, tol, threads)
            ducc0_execute(plan, ty, data_py, iflag, out, verbosity=1)
            del plan
        finally:
            libc.fflush(None)
            os.dup2(saved, 1)
            os.close(saved)
        f.seek(0)
        text = f.read()
    g = re.search(r"oversampled grid=\(([0-9x]+)\)", text)
    s = re.search(r"supp=(\d+)", text)
    if not g or not s:
        return None
    nf = [int(v) for v in g.group(1).split("x")]
    return {"nf": nf, "w": int(s.group(1)), "sigma": [f / k for f, k in zip(nf, n)]}


# ----------------------------------------------------------------------------- peers on saved inputs
def best_peers(reps):
    """The best repetition of each peer among `reps` (results of `peers_on_saved`, one
    repetition each): its times and errors, with ducc0's `params` from whichever repetition
    read them."""
    out = {}
    for lib in reps[0]:
        got = [r[lib] for r in reps if r[lib] is not None]
        if not got:
            out[lib] = None
            continue
        best = dict(best_of(got))
        for g in got:
            if "params" in g:
                best["params"] = g["params"]
        out[lib] = best
    return out


def peers_on_saved(ty, dim, n, saved, tol, iflag, threads, prec, want_params=False):
    """Runs FINUFFT and ducc0 once each on our saved inputs (`best_peers` picks among
    repetitions).

    Returns {"finufft": {...}, "ducc0": {...} or None}: each with setup_s, exec_s, total_s,
    `rel_error` (relative l2 on the saved check outputs against the saved direct sums; None without checks), `diff_vs_ours` (relative l2 of the whole output against
    ours); ducc0 also `params` (nf, w, sigma) when `want_params`. ducc0 is None below its
    documented accuracy limit."""
    import numpy as np
    coords, inp, ours_out, idx, exact = saved
    data_py = inp if ty == 1 else from_flat(inp, n)
    m = coords[0].shape[0]
    out = np.empty(tuple(n) if ty == 1 else (m,), dtype=data_py.dtype)
    out[...] = 0  # touch the pages before the clocks
    res = {}

    def finish(run):
        flat = to_flat(out) if ty == 1 else out
        return dict(run, rel_error=rel_l2(flat[idx], exact) if len(idx) else None,
                    diff_vs_ours=rel_l2(ours_out, flat))

    res["finufft"] = finish(run_finufft(ty, n, coords, data_py, tol, iflag, threads, out))
    if ducc0_ok(tol, prec):
        coord_md = np.ascontiguousarray(np.stack(coords, axis=1))
        out[...] = 0
        res["ducc0"] = finish(run_ducc0(ty, n, coord_md, data_py, tol, iflag, threads, out))
        if want_params:
            res["ducc0"]["params"] = ducc0_params(ty, n, coord_md, data_py, tol, iflag, threads, out)
        del coord_md
    else:
        res["ducc0"] = None
    return res
