#!/usr/bin/env python3
"""farfield's CUDA NUFFT against cuFINUFFT, on a machine with an NVIDIA GPU.

Usage (from anywhere; paths are relative to the repository):

    python3 benches/peers/nufft_vs_cufinufft.py               # 3D/2D/1D types 1 and 2, tol 1e-6
    python3 benches/peers/nufft_vs_cufinufft.py --quick       # M = 1e6, smaller N
    python3 benches/peers/nufft_vs_cufinufft.py --tol 1e-3,1e-6 --precision single

What it does:
1. Creates `.venv-gpu-peers/` at the repository root (git-ignored) with `cufinufft`, `cupy-cuda12x`,
   `numpy` and the CUDA runtime wheels (`nvidia-cuda-nvrtc-cu12`, `nvidia-cufft-cu12`), and
   re-runs itself inside it.
2. Builds the shared library with `cargo build --release` if `target/release/libfarfield.so` is
   missing (or with `--build`).
3. Loads libfarfield through ctypes and runs the C API (`farfield_nufft_makeplan` with
   `opts.backend = FARFIELD_BACKEND_CUDA`, setpts, execute with host arrays) — exactly what a C
   caller does; NVRTC and cuFFT come from the wheels (`FARFIELD_NVRTC_LIB`, loader path).
4. Runs cuFINUFFT (`cufinufft.Plan`, inputs moved to the GPU with CuPy before the clock starts)
   on the same inputs, times plan + setpts + execute for both (best of --repeat; ours includes
   its host<->device copies), and reports the relative l2 difference of the two outputs (both
   approximate the same sums to `tol`, so the difference must be of the order of `tol`).
5. Prints a Markdown table.

Without a GPU the script stops at step 3 with farfield's FARFIELD_ERR_NO_DEVICE message.
Written for a GPU machine and not yet run on one (this project has none).
"""

import argparse
import ctypes
import os
import subprocess
import sys
import time
from pathlib import Path

from peer_env import ROOT, log
from peer_env import ensure_venv as _ensure_venv

VENV = ROOT / ".venv-gpu-peers"
PACKAGES = ["cufinufft", "cupy-cuda12x", "numpy", "nvidia-cuda-nvrtc-cu12", "nvidia-cufft-cu12"]
LIB = ROOT / "target" / "release" / "libfarfield.so"


def ensure_venv():
    _ensure_venv(VENV, PACKAGES, probe="import cufinufft, cupy, numpy")


def wheel_libs():
    """Paths of libnvrtc.so.12 and the cuFFT library folder inside the venv."""
    import glob
    site = glob.glob(str(VENV / "lib" / "python3*" / "site-packages"))[0]
    nvrtc = glob.glob(f"{site}/nvidia/cuda_nvrtc/lib/libnvrtc.so.12")
    cufft = glob.glob(f"{site}/nvidia/cufft/lib")
    return (nvrtc[0] if nvrtc else None), (cufft[0] if cufft else None)


class Opts(ctypes.Structure):
    # farfield_nufft_opts (asserted by c_tests/c_layout.c: 56 bytes, struct_size first)
    _fields_ = [("struct_size", ctypes.c_size_t), ("modeord", ctypes.c_int32), ("debug", ctypes.c_int32), ("nthreads", ctypes.c_int32),
                ("kernel", ctypes.c_int32), ("upsampfac", ctypes.c_double), ("fftw", ctypes.c_int32),
                ("spread_max_subprob_size", ctypes.c_int32), ("backend", ctypes.c_int32),
                ("points_by_reference", ctypes.c_int32), ("gpu_method", ctypes.c_int32),
                ("gpu_spread_reuse_hint", ctypes.c_int32)]


BACKEND_CUDA = 2


def farfield_lib():
    if not LIB.exists():
        subprocess.check_call(["cargo", "build", "--release", "-p", "farfield"], cwd=ROOT)
    lib = ctypes.CDLL(str(LIB))
    lib.farfield_last_error_message.restype = ctypes.c_char_p
    return lib


def check(lib, st, what):
    if st != 0:
        raise SystemExit(f"{what}: status {st}: {lib.farfield_last_error_message().decode()}")


def run_ours(lib, np, ty, dims, x, c_or_f, tol, single, iflag=1):
    real = np.float32 if single else np.float64
    cplx = np.complex64 if single else np.complex128
    pre = "farfield_nufftf_" if single else "farfield_nufft_"
    o = Opts()
    check(lib, lib.farfield_nufft_default_opts(ctypes.byref(o), ctypes.c_size_t(ctypes.sizeof(o))), "default_opts")
    o.backend = BACKEND_CUDA
    n = (ctypes.c_int64 * 3)(*dims, *([1] * (3 - len(dims))))
    plan = ctypes.c_void_p()
    xs = [np.ascontiguousarray(v, dtype=real) for v in x]
    m = len(xs[0])
    nm = int(np.prod(dims))
    t0 = time.perf_counter()
    tol_t = ctypes.c_float(tol) if single else ctypes.c_double(tol)
    check(lib, getattr(lib, pre + "makeplan")(ty, len(dims), n, iflag, 1, tol_t, ctypes.byref(plan), ctypes.byref(o)), "makeplan")
    ptr = lambda a: a.ctypes.data_as(ctypes.c_void_p)
    null = ctypes.c_void_p()
    check(lib, getattr(lib, pre + "setpts")(plan, ctypes.c_int64(m), ptr(xs[0]), ptr(xs[1]) if len(xs) > 1 else null,
                                           ptr(xs[2]) if len(xs) > 2 else null), "setpts")
    if ty == 1:
        c = np.ascontiguousarray(c_or_f, dtype=cplx)
        f = np.zeros(nm, dtype=cplx)
    else:
        f = np.ascontiguousarray(c_or_f, dtype=cplx)
        c = np.zeros(m, dtype=cplx)
    check(lib, getattr(lib, pre + "execute")(plan, ptr(c), ptr(f)), "execute")
    dt = time.perf_counter() - t0
    getattr(lib, pre + "destroy")(plan)
    return (f if ty == 1 else c), dt


def run_cufinufft(np, ty, dims, x, c_or_f, tol, single, iflag=1):
    import cufinufft
    import cupy as cp
    dtype = np.complex64 if single else np.complex128
    # cuFINUFFT's mode arrays are [k1, k2, k3] with the last index fastest; ours are flat with
    # k1 fastest: the same numbers, transposed (converted outside the timed region)
    if ty == 2:
        f_in = cp.asarray(np.ascontiguousarray(np.asarray(c_or_f).reshape(tuple(reversed(dims))).T, dtype=dtype))
    else:
        c_in = cp.asarray(np.asarray(c_or_f, dtype=dtype))
    pts = [cp.asarray(np.asarray(v, dtype=np.float32 if single else np.float64)) for v in x]
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    p = cufinufft.Plan(ty, tuple(dims), eps=tol, isign=iflag, dtype=dtype)
    p.setpts(*pts)
    out = p.execute(c_in if ty == 1 else f_in)
    cp.cuda.Device().synchronize()
    dt = time.perf_counter() - t0
    res = cp.asnumpy(out)
    res = res.T.reshape(-1) if ty == 1 else res.reshape(-1)
    return res, dt


def main():
    ensure_venv()
    import numpy as np
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--tol", default="1e-6")
    ap.add_argument("--precision", choices=["double", "single"], default="double")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--build", action="store_true")
    a = ap.parse_args()
    nvrtc, cufft = wheel_libs()
    if nvrtc and "FARFIELD_NVRTC_LIB" not in os.environ:
        os.environ["FARFIELD_NVRTC_LIB"] = nvrtc
    if cufft:
        # cudarc finds libcufft by name: preload it so the soname resolves
        ctypes.CDLL(os.path.join(cufft, "libcufft.so.11"), mode=ctypes.RTLD_GLOBAL)
    if a.build and LIB.exists():
        LIB.unlink()
    lib = farfield_lib()
    single = a.precision == "single"
    m = 10**6 if a.quick else 10**7
    cases = [(3, [64] * 3 if a.quick else [128] * 3), (2, [500] * 2 if a.quick else [1000] * 2), (1, [10**5] if a.quick else [10**6])]
    rng = np.random.default_rng(0)
    rows = []
    for tol in [float(t) for t in a.tol.split(",")]:
        for dim, dims in cases:
            x = [rng.uniform(-np.pi, np.pi, m) for _ in range(dim)]
            for ty in (1, 2):
                nm = int(np.prod(dims))
                inp = (rng.standard_normal(m) + 1j * rng.standard_normal(m)) if ty == 1 else (rng.standard_normal(nm) + 1j * rng.standard_normal(nm))
                ours = min((run_ours(lib, np, ty, dims, x, inp, tol, single) for _ in range(a.repeat)), key=lambda r: r[1])
                theirs = min((run_cufinufft(np, ty, dims, x, inp, tol, single) for _ in range(a.repeat)), key=lambda r: r[1])
                diff = np.linalg.norm(ours[0] - theirs[0]) / np.linalg.norm(theirs[0])
                rows.append((dim, dims, ty, tol, ours[1], theirs[1], diff))
                log(f"{dim}D type {ty} tol {tol:g}: ours {ours[1]:.4f} s, cuFINUFFT {theirs[1]:.4f} s, rel diff {diff:.1e}")
    print("| case | tol | ours (s) | cuFINUFFT (s) | ours / cuFINUFFT | rel. l2 diff |")
    print("| --- | --- | --- | --- | --- | --- |")
    for dim, dims, ty, tol, t0, t1, d in rows:
        print(f"| {dim}D type {ty}, {'x'.join(map(str, dims))} | {tol:g} | {t0:.4f} | {t1:.4f} | {t0 / t1:.2f} | {d:.1e} |")


if __name__ == "__main__":
    main()
