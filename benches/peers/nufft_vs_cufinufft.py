#!/usr/bin/env python3
"""farfield's CUDA NUFFT against cuFINUFFT 2.5, on a GPU machine without registry access.

Both libraries get device arrays (CuPy) and the same points and strengths; plan, setpts and
execute are timed separately (the device is synchronised before and after each call, median of
`--repeat` runs after one warm-up); both outputs are compared with exact direct sums at
`--samples` sampled outputs (computed on the GPU in double precision). The result is a Markdown
table on stdout (progress on stderr).

What the machine needs: an NVIDIA GPU with its driver, the CUDA toolkit (nvcc, cuFFT, NVRTC),
CMake (Ninja or make), Python 3 with NumPy and CuPy. Nothing is installed and nothing is fetched.

    # on the development machine (no GPU needed): build, strip, bundle with FFTW
    bash scripts/gpu-bundle.sh                       # -> build-gpu/ (git-ignored)
    # on the GPU machine, from the repository root (build-gpu/ carried along):
    python3 benches/peers/nufft_vs_cufinufft.py --cufinufft-src DIR
    python3 benches/peers/nufft_vs_cufinufft.py --cufinufft-src DIR --quick
    python3 benches/peers/nufft_vs_cufinufft.py --cufinufft-lib BUILD/libcufinufft.so --cufinufft-py DIR/python

`--cufinufft-src DIR` is a cuFINUFFT 2.5.1 source tree (FINUFFT v2.5.1's `CMakeLists.txt`,
`cmake/`, `include/`, `src/` and the pure-Python package `python/cufinufft/`) configured so that
CMake fetches nothing; it is built once with CMake (`-DFINUFFT_USE_CUDA=ON -DFINUFFT_USE_CPU=OFF`)
for the GPU's architecture into `build-gpu/cufinufft/`. `--lib` names libfarfield.so (default:
`build-gpu/libfarfield.so`, else `target/release/libfarfield.so`).

CUDA 13 toolkits name the libraries `libnvrtc.so.13` and `libcufft.so.12`, which farfield's
loader (cudarc, CUDA 12 names) does not try; the script makes a folder of links
(`libnvrtc.so`, `libcufft.so`) and re-runs itself with it on `LD_LIBRARY_PATH`
(docs/design.md §5.1, §5.5).

Cases (M = 1e7 uniform points in [-pi, pi)^d, `--quick`: 1e6 and smaller grids): 3D 128^3,
2D 1000^2, 1D 1e6 modes, types 1 and 2, tolerances `--tol` (default 1e-3,1e-6,1e-9) in double
precision, and 3D type 1 in single precision at 1e-3 and 1e-5. farfield runs the C API exactly
as a GPU code would: `farfield_nufft_makeplan` with `opts.backend = CUDA` and
`opts.gpu_stream` = CuPy's current stream, `farfield_nufft_setpts_device`,
`farfield_nufft_execute_device`.
"""

import argparse
import ctypes
import glob
import os
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
BUNDLE = ROOT / "build-gpu"


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Environment: CUDA libraries under the names farfield's loader looks for

def cuda_lib_dirs():
    """Folders of the CUDA toolkit's shared libraries (CUDA_HOME/CUDA_PATH, /usr/local/cuda*)."""
    roots = [os.environ.get(v) for v in ("CUDA_HOME", "CUDA_PATH")] + sorted(glob.glob("/usr/local/cuda*"), reverse=True)
    out = []
    for r in filter(None, roots):
        for sub in ("targets/x86_64-linux/lib", "lib64", "lib"):
            d = Path(r) / sub
            if d.is_dir() and d not in out:
                out.append(d)
    return out


def find_lib(stem):
    """Newest `stem.so.N` in the toolkit folders (None if absent)."""
    for d in cuda_lib_dirs():
        hits = sorted(d.glob(stem + ".so.[0-9]*"), key=lambda p: len(p.name))
        if hits:
            return hits[0]
    return None


def ensure_loader_path():
    """Re-executes the script once with a folder of links for NVRTC/cuFFT (and the bundle
    folder) on LD_LIBRARY_PATH."""
    if os.environ.get("FF_BENCH_REEXEC") == "1":
        return
    links = BUNDLE / "cuda-links"
    links.mkdir(parents=True, exist_ok=True)
    extra = [str(links)]
    for stem in ("libnvrtc", "libcufft"):
        lib = find_lib(stem)
        if lib is None:
            log(f"note: {stem}.so.N not found under the CUDA toolkit folders; relying on the loader path")
            continue
        for name in (stem + ".so", stem + ".so.12", stem + ".so.11"):
            p = links / name
            if p.is_symlink() or p.exists():
                p.unlink()
            if name != lib.name:
                p.symlink_to(lib)
        extra.append(str(lib.parent))
    if BUNDLE.is_dir():
        extra.append(str(BUNDLE))
    env = dict(os.environ, FF_BENCH_REEXEC="1")
    env["LD_LIBRARY_PATH"] = ":".join(extra + [p for p in os.environ.get("LD_LIBRARY_PATH", "").split(":") if p])
    os.execve(sys.executable, [sys.executable, str(Path(sys.argv[0]).resolve()), *sys.argv[1:]], env)


# ---------------------------------------------------------------------------------------------
# cuFINUFFT from source

def gpu_arch(cp):
    """The device's compute capability as CMake wants it (e.g. "90")."""
    return str(cp.cuda.Device().compute_capability)


def build_cufinufft(src, cp, jobs):
    """Builds libcufinufft.so from a source tree (once) and returns (library, python folder)."""
    src = Path(src).resolve()
    out = BUNDLE / "cufinufft"
    lib = out / "libcufinufft.so"
    if not lib.exists():
        gen = ["-G", "Ninja"] if shutil.which("ninja") else []
        arch = gpu_arch(cp)
        log(f"building cuFINUFFT from {src} for sm_{arch} into {out}")
        subprocess.check_call(["cmake", "-S", str(src), "-B", str(out), *gen, "-DFINUFFT_USE_CUDA=ON", "-DFINUFFT_USE_CPU=OFF",
                               "-DFINUFFT_STATIC_LINKING=OFF", f"-DCMAKE_CUDA_ARCHITECTURES={arch}", "-DCMAKE_BUILD_TYPE=Release"],
                              stdout=sys.stderr)
        subprocess.check_call(["cmake", "--build", str(out), "-j", str(jobs)], stdout=sys.stderr)
    return lib, src / "python"


def import_cufinufft(lib, pysrc):
    """Imports the pure-Python cufinufft package with `lib` placed beside it."""
    pkg_root = BUNDLE / "cufinufft-py"
    pkg = pkg_root / "cufinufft"
    if not pkg.exists():
        shutil.copytree(Path(pysrc) / "cufinufft", pkg)
    shutil.copy2(lib, pkg / "libcufinufft.so")
    sys.path.insert(0, str(pkg_root))
    import cufinufft
    return cufinufft


# ---------------------------------------------------------------------------------------------
# farfield through its C API (ctypes), device arrays

class Opts(ctypes.Structure):
    # farfield_nufft_opts, versioned (docs/design.md §3.2; sizes and offsets asserted by the C,
    # Rust and Fortran layout tests). A library older than a field ignores it.
    _fields_ = [("struct_size", ctypes.c_size_t), ("modeord", ctypes.c_int32), ("debug", ctypes.c_int32),
                ("nthreads", ctypes.c_int32), ("kernel", ctypes.c_int32), ("upsampfac", ctypes.c_double),
                ("fftw", ctypes.c_int32), ("spread_max_subprob_size", ctypes.c_int32), ("backend", ctypes.c_int32),
                ("points_by_reference", ctypes.c_int32), ("gpu_method", ctypes.c_int32),
                ("gpu_spread_reuse_hint", ctypes.c_int32), ("gpu_stream", ctypes.c_void_p)]


BACKEND_CUDA = 2


class Farfield:
    def __init__(self, path):
        self.lib = ctypes.CDLL(str(path))
        self.lib.farfield_last_error_message.restype = ctypes.c_char_p

    def check(self, st, what):
        if st != 0:
            raise RuntimeError(f"farfield {what}: status {st}: {self.lib.farfield_last_error_message().decode()}")

    def fn(self, single, verb):
        return getattr(self.lib, ("farfield_nufftf_" if single else "farfield_nufft_") + verb)

    def makeplan(self, ty, dims, tol, single, stream, method=0):
        o = Opts()
        self.check(self.lib.farfield_nufft_default_opts(ctypes.byref(o), ctypes.c_size_t(ctypes.sizeof(o))), "default_opts")
        o.backend = BACKEND_CUDA
        o.gpu_method = method
        o.gpu_stream = ctypes.c_void_p(stream)
        n = (ctypes.c_int64 * 3)(*dims, *([1] * (3 - len(dims))))
        plan = ctypes.c_void_p()
        tol_t = ctypes.c_float(tol) if single else ctypes.c_double(tol)
        self.check(self.fn(single, "makeplan")(ty, len(dims), n, 1, 1, tol_t, ctypes.byref(plan), ctypes.byref(o)), "makeplan")
        return plan

    def setpts(self, plan, single, pts):
        p = [ctypes.c_void_p(int(a.data.ptr)) for a in pts] + [ctypes.c_void_p()] * (3 - len(pts))
        self.check(self.fn(single, "setpts_device")(plan, ctypes.c_int64(pts[0].size), *p), "setpts_device")

    def execute(self, plan, single, c, f):
        self.check(self.fn(single, "execute_device")(plan, ctypes.c_void_p(int(c.data.ptr)), ctypes.c_void_p(int(f.data.ptr))),
                   "execute_device")

    def destroy(self, plan, single):
        self.fn(single, "destroy")(plan)


# ---------------------------------------------------------------------------------------------
# Exact sums at sampled outputs (GPU, double precision, chunked)

def direct_type1(cp, x, c, dims, ks):
    """f_k = sum_j c_j exp(+i k.x_j) for the sampled mode index tuples ks (CMCL order)."""
    out = []
    for k in ks:
        ph = cp.zeros(x[0].size, dtype=cp.float64)
        for d in range(len(dims)):
            ph += (k[d] - dims[d] // 2) * x[d].astype(cp.float64)
        out.append(complex(cp.sum(c.astype(cp.complex128) * cp.exp(1j * ph)).get()))
    return out


def direct_type2(cp, x, f, dims, js):
    """c_j = sum_k f_k exp(+i k.x_j) for the sampled points js (f flat, x fastest, CMCL order)."""
    grids = cp.meshgrid(*[cp.arange(n, dtype=cp.float64) - n // 2 for n in dims], indexing="ij")
    kf = [g.transpose(*reversed(range(len(dims)))).reshape(-1) for g in grids]  # x fastest
    out = []
    for j in js:
        ph = sum(kf[d] * float(x[d][j].get()) for d in range(len(dims)))
        out.append(complex(cp.sum(f.astype(cp.complex128) * cp.exp(1j * ph)).get()))
    return out


def flat_index(k, dims):
    idx, stride = 0, 1
    for d, n in enumerate(dims):
        idx += k[d] * stride
        stride *= n
    return idx


def rel_err(approx, exact):
    num = sum(abs(a - e) ** 2 for a, e in zip(approx, exact))
    den = sum(abs(e) ** 2 for e in exact)
    return (num / den) ** 0.5


# ---------------------------------------------------------------------------------------------

def timed(cp, f):
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    r = f()
    cp.cuda.Device().synchronize()
    return r, time.perf_counter() - t0


def run_case(cp, np, ff, cufinufft, dim, dims, ty, tol, single, m, repeat, samples, rng):
    real = cp.float32 if single else cp.float64
    cplx = cp.complex64 if single else cp.complex128
    x = [cp.asarray(rng.uniform(-np.pi, np.pi, m)).astype(real) for _ in range(dim)]
    nm = int(np.prod(dims))
    if ty == 1:
        c = cp.asarray(rng.standard_normal(m) + 1j * rng.standard_normal(m)).astype(cplx)
        f = cp.zeros(nm, dtype=cplx)
    else:
        f = cp.asarray(rng.standard_normal(nm) + 1j * rng.standard_normal(nm)).astype(cplx)
        c = cp.zeros(m, dtype=cplx)
    stream = cp.cuda.get_current_stream().ptr

    ours = {"plan": [], "setpts": [], "execute": []}
    theirs = {"plan": [], "setpts": [], "execute": []}
    out_ours = out_theirs = None
    # cuFINUFFT's mode arrays have the last index fastest: ours (x fastest, flat) transposed
    f_theirs_in = f.reshape(tuple(reversed(dims))).T.copy() if ty == 2 else None
    for it in range(repeat + 1):
        plan, t = timed(cp, lambda: ff.makeplan(ty, dims, tol, single, stream))
        _, ts = timed(cp, lambda: ff.setpts(plan, single, x))
        _, te = timed(cp, lambda: ff.execute(plan, single, c, f))
        if it == 0:
            out_ours = (f if ty == 1 else c).copy()
        else:
            ours["plan"].append(t); ours["setpts"].append(ts); ours["execute"].append(te)
        ff.destroy(plan, single)

        p, t = timed(cp, lambda: cufinufft.Plan(ty, tuple(dims), eps=tol, isign=1, dtype=cplx))
        _, ts = timed(cp, lambda: p.setpts(*x))
        res, te = timed(cp, lambda: p.execute(c if ty == 1 else f_theirs_in))
        if it == 0:
            out_theirs = res.T.reshape(-1) if ty == 1 else res.reshape(-1)
        else:
            theirs["plan"].append(t); theirs["setpts"].append(ts); theirs["execute"].append(te)
        del p

    # accuracy against exact sums at sampled outputs
    if ty == 1:
        ks = [tuple(int(rng.integers(0, n)) for n in dims) for _ in range(samples)]
        exact = direct_type1(cp, x, c, dims, ks)
        idx = [flat_index(k, dims) for k in ks]
    else:
        idx = [int(j) for j in rng.integers(0, m, samples)]
        exact = direct_type2(cp, x, f, dims, idx)
    e_ours = rel_err([complex(out_ours[i].get()) for i in idx], exact)
    e_theirs = rel_err([complex(out_theirs[i].get()) for i in idx], exact)
    med = lambda d: {k: statistics.median(v) * 1e3 for k, v in d.items()}
    return med(ours), med(theirs), e_ours, e_theirs


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cufinufft-src", help="cuFINUFFT 2.5.1 source tree (built once into build-gpu/cufinufft)")
    ap.add_argument("--cufinufft-lib", help="an already built libcufinufft.so (with --cufinufft-py)")
    ap.add_argument("--cufinufft-py", help="the folder holding the cufinufft Python package (python/ of the sources)")
    ap.add_argument("--lib", help="libfarfield.so (default build-gpu/, then target/release/)")
    ap.add_argument("--quick", action="store_true", help="M = 1e6 and smaller grids")
    ap.add_argument("--tol", default="1e-3,1e-6,1e-9")
    ap.add_argument("--single-tol", default="1e-3,1e-5", help="tolerances of the single-precision 3D type 1 row ('' for none)")
    ap.add_argument("--cases", default="3d1,3d2,2d1,2d2,1d1,1d2")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    a = ap.parse_args()
    if not (a.cufinufft_src or (a.cufinufft_lib and a.cufinufft_py)):
        ap.error("give --cufinufft-src, or --cufinufft-lib with --cufinufft-py")
    ensure_loader_path()
    import cupy as cp
    import numpy as np

    if a.cufinufft_lib:
        cuf_lib, cuf_py = Path(a.cufinufft_lib), Path(a.cufinufft_py)
    else:
        cuf_lib, cuf_py = build_cufinufft(a.cufinufft_src, cp, a.jobs)
    cufinufft = import_cufinufft(cuf_lib, cuf_py)
    lib = Path(a.lib) if a.lib else next((p for p in (BUNDLE / "libfarfield.so", ROOT / "target/release/libfarfield.so") if p.exists()), None)
    if lib is None:
        raise SystemExit("libfarfield.so not found: run scripts/gpu-bundle.sh on the build machine or pass --lib")
    ff = Farfield(lib)
    log(f"device: {cp.cuda.runtime.getDeviceProperties(0)['name'].decode()}, farfield {lib}, cuFINUFFT {cuf_lib}")

    m = 10**6 if a.quick else 10**7
    sizes = {3: [64] * 3 if a.quick else [128] * 3, 2: [500] * 2 if a.quick else [1000] * 2, 1: [10**5] if a.quick else [10**6]}
    want = set(a.cases.split(","))
    jobs = []
    for tol in [float(t) for t in a.tol.split(",") if t]:
        for dim in (3, 2, 1):
            for ty in (1, 2):
                if f"{dim}d{ty}" in want:
                    jobs.append((dim, ty, tol, False))
    for tol in [float(t) for t in a.single_tol.split(",") if t]:
        jobs.append((3, 1, tol, True))

    # the first plan of the process includes NVRTC and module loading: reported on its own
    st = cp.cuda.get_current_stream().ptr
    _, first = timed(cp, lambda: ff.destroy(ff.makeplan(1, sizes[3], 1e-6, False, st), False))
    log(f"first farfield plan in this process (NVRTC, modules): {first * 1e3:.1f} ms")

    rng = np.random.default_rng(0)
    rows = []
    for dim, ty, tol, single in jobs:
        dims = sizes[dim]
        o, t, eo, et = run_case(cp, np, ff, cufinufft, dim, dims, ty, tol, single, m, a.repeat, a.samples, rng)
        rows.append((dim, dims, ty, tol, single, o, t, eo, et))
        log(f"{dim}D type {ty} tol {tol:g} {'f32' if single else 'f64'}: execute {o['execute']:.2f} vs {t['execute']:.2f} ms, "
            f"errors {eo:.1e} / {et:.1e}")

    print(f"M = {m:.0e} uniform points; ms, median of {a.repeat} after a warm-up; first farfield plan in the process: "
          f"{first * 1e3:.0f} ms\n")
    print("| case | prec | tol | farfield plan / setpts / execute | cuFINUFFT plan / setpts / execute | execute ratio | setpts ratio | error farfield / cuFINUFFT |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for dim, dims, ty, tol, single, o, t, eo, et in rows:
        print(f"| {dim}D type {ty}, {'x'.join(map(str, dims))} | {'f32' if single else 'f64'} | {tol:g} | "
              f"{o['plan']:.2f} / {o['setpts']:.2f} / {o['execute']:.2f} | {t['plan']:.2f} / {t['setpts']:.2f} / {t['execute']:.2f} | "
              f"{o['execute'] / t['execute']:.2f} | {o['setpts'] / t['setpts']:.2f} | {eo:.1e} / {et:.1e} |")


if __name__ == "__main__":
    main()
