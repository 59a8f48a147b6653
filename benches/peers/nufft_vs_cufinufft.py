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
`cmake/`, `include/`, `src/` and the pure-Python package `finufft/python/cufinufft/`) configured so that
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

`--case-list` replaces those defaults by explicit cases, `;`-separated, each a comma list of
`key=value` (what `benches/gpu/kit.py` passes):

    id=3d-t1-f64-1e-06,type=1,modes=128x128x128,m=1e7,prec=f64,tol=1e-6[,ntrans=8]
    id=3d-t3-f64-1e-06,type=3,dim=3,m=1e6,n=1e6,freq=128,prec=f64,tol=1e-6

Type 3 (`n` target frequencies uniform in [-freq/2, freq/2)^d, points as above): both
libraries take the points and frequencies as device arrays (ours through
`farfield_nufft_setpts_type3_device`). `ntrans` vectors are executed in one call by both
libraries; the error is checked on the last vector.

One more key changes only our side (the peer runs as always): `method=auto|gm|gm-sort|sm|csr|group`
sets `opts.gpu_method`, for comparing the methods inside the whole transform.

After the timed repetitions of a type-1 or type-2 case, one more plan of ours is made with
`opts.debug = 1` and executed once, untimed: the library's line per batch of its device time
per phase (spread or interp, fft, deconv) is recorded as `phases_ms`, with its other debug
lines (`debug_lines`: parameters and plan stages).

`--json FILE` writes every case (all repetitions of plan, setpts and execute of both
libraries in seconds, the errors, what our plan chose) as one JSON document, rewritten after
each case, so a run that is stopped keeps the cases it finished. A library that fails a case
is recorded with its message and the other is still timed.
"""

import argparse
import ctypes
import glob
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_env import stderr_of  # noqa: E402

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


class Info(ctypes.Structure):
    # farfield_nufft_info (versioned the same way)
    _fields_ = [("struct_size", ctypes.c_size_t), ("nf", ctypes.c_int64 * 3), ("kernel_width", ctypes.c_int32),
                ("nthreads", ctypes.c_int32), ("upsampfac", ctypes.c_double), ("kernel_param", ctypes.c_double),
                ("tol_used", ctypes.c_double), ("warnings", ctypes.c_int32), ("backend", ctypes.c_int32)]


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

    def makeplan(self, ty, dims, tol, single, stream, method=0, ntrans=1, debug=0):
        """`dims`: the mode counts (types 1, 2) or, for type 3, `dim` ones (not read)."""
        o = Opts()
        self.check(self.lib.farfield_nufft_default_opts(ctypes.byref(o), ctypes.c_size_t(ctypes.sizeof(o))), "default_opts")
        o.backend = BACKEND_CUDA
        o.debug = debug
        o.gpu_method = method
        o.gpu_stream = ctypes.c_void_p(stream)
        n = (ctypes.c_int64 * 3)(*dims, *([1] * (3 - len(dims))))
        plan = ctypes.c_void_p()
        tol_t = ctypes.c_float(tol) if single else ctypes.c_double(tol)
        self.check(self.fn(single, "makeplan")(ty, len(dims), n, 1, ntrans, tol_t, ctypes.byref(plan), ctypes.byref(o)),
                   "makeplan")
        return plan

    def setpts(self, plan, single, pts):
        p = [ctypes.c_void_p(int(a.data.ptr)) for a in pts] + [ctypes.c_void_p()] * (3 - len(pts))
        self.check(self.fn(single, "setpts_device")(plan, ctypes.c_int64(pts[0].size), *p), "setpts_device")

    def setpts_type3(self, plan, single, pts, freqs):
        """Type 3: device points and target frequencies through `farfield_nufft_setpts_type3_device`."""
        ptr = lambda arrs: [ctypes.c_void_p(int(a.data.ptr)) for a in arrs] + [ctypes.c_void_p()] * (3 - len(arrs))
        self.check(self.fn(single, "setpts_type3_device")(plan, ctypes.c_int64(pts[0].size), *ptr(pts),
                                                          ctypes.c_int64(freqs[0].size), *ptr(freqs)),
                   "setpts_type3_device")

    def execute(self, plan, single, c, f):
        self.check(self.fn(single, "execute_device")(plan, ctypes.c_void_p(int(c.data.ptr)), ctypes.c_void_p(int(f.data.ptr))),
                   "execute_device")

    def info(self, plan, single):
        i = Info()
        i.struct_size = ctypes.sizeof(i)
        self.check(self.fn(single, "get_info")(plan, ctypes.byref(i)), "get_info")
        return {"nf": list(i.nf), "kernel_width": i.kernel_width, "upsampfac": i.upsampfac, "tol_used": i.tol_used,
                "warnings": i.warnings, "backend": i.backend}

    def destroy(self, plan, single):
        self.fn(single, "destroy")(plan)


PHASE_LINE = re.compile(r"^\[farfield nufftf? cuda\] execute vectors \d+\.\.\d+ \(ms\):(.*)\| total ([0-9.]+) ms")


def phases_of(text):
    """The per-phase device times (ms) of each chunk of one execute, from the library's
    `opts.debug = 1` lines (`[farfield nufft cuda] execute vectors 0..1 (ms): spread 1.0 fft
    0.2 deconv 0.1 | total 1.3 ms`); an empty list from a library without them."""
    out = []
    for line in text.splitlines():
        m = PHASE_LINE.match(line.strip())
        if m:
            words = m.group(1).split()
            out.append({**{k: float(v) for k, v in zip(words[::2], words[1::2])}, "total": float(m.group(2))})
    return out


def debug_execute(ff, cp, ty, dims, tol, single, stream, method, nt, x, c, f):
    """One more untimed plan with `opts.debug = 1` (types 1 and 2): its execute's device time
    per phase, and the library's debug lines."""
    def run():
        plan = ff.makeplan(ty, dims, tol, single, stream, method=method, ntrans=nt, debug=1)
        try:
            ff.setpts(plan, single, x)
            ff.execute(plan, single, c, f)
            cp.cuda.get_current_stream().synchronize()
        finally:
            ff.destroy(plan, single)
    text = stderr_of(run)
    return phases_of(text), [l for l in text.splitlines() if l.startswith("[farfield")]


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


def direct_type3(cp, x, c, s, ks):
    """f_k = sum_j c_j exp(+i s_k.x_j) for the sampled target indices ks."""
    out = []
    for k in ks:
        ph = sum(float(s[d][k].get()) * x[d].astype(cp.float64) for d in range(len(x)))
        out.append(complex(cp.sum(c.astype(cp.complex128) * cp.exp(1j * ph)).get()))
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
# Cases

SPEC_KEYS = {"id": str, "type": int, "dim": int, "modes": str, "m": float, "n": float, "freq": float, "prec": str,
             "tol": float, "ntrans": int, "method": str}
GPU_METHODS = {"auto": 0, "gm": 1, "gm-sort": 2, "sm": 3, "csr": 4, "group": 5}  # FARFIELD_GPU_METHOD_*


def parse_spec(text):
    """One case from `key=value,...` (see the module docstring) as a normalised dict."""
    raw = {}
    for item in filter(None, (t.strip() for t in text.split(","))):
        key, sep, val = item.partition("=")
        if not sep or key not in SPEC_KEYS:
            raise ValueError(f"bad case item {item!r} (keys: {', '.join(SPEC_KEYS)})")
        raw[key] = SPEC_KEYS[key](val)
    ty = raw.get("type")
    if ty not in (1, 2, 3):
        raise ValueError(f"case {text!r}: type must be 1, 2 or 3")
    if raw.get("prec", "f64") not in ("f32", "f64"):
        raise ValueError(f"case {text!r}: prec must be f32 or f64")
    if raw.get("method", "auto") not in GPU_METHODS:
        raise ValueError(f"case {text!r}: method must be one of {', '.join(GPU_METHODS)}")
    spec = {"type": ty, "prec": raw.get("prec", "f64"), "tol": raw.get("tol", 1e-6), "m": int(raw.get("m", 1e6)),
            "ntrans": raw.get("ntrans", 1), "method": raw.get("method", "auto")}
    if ty == 3:
        spec["dim"] = raw.get("dim", 1)
        spec["n"] = int(raw.get("n", spec["m"]))
        spec["freq"] = raw.get("freq", 128.0)
        spec["modes"] = None
    else:
        spec["modes"] = [int(float(v)) for v in raw.get("modes", "").split("x") if v]
        spec["dim"] = len(spec["modes"])
        if not 1 <= spec["dim"] <= 3:
            raise ValueError(f"case {text!r}: modes must be N1[xN2[xN3]]")
    if not 1 <= spec["dim"] <= 3:
        raise ValueError(f"case {text!r}: dim must be 1, 2 or 3")
    spec["id"] = raw.get("id") or default_id(spec)
    return spec


def default_id(spec):
    nt = f"-nt{spec['ntrans']}" if spec["ntrans"] != 1 else ""
    meth = f"-{spec['method']}" if spec.get("method", "auto") != "auto" else ""
    return f"{spec['dim']}d-t{spec['type']}-{spec['prec']}-{spec['tol']:g}{nt}{meth}"


def parse_specs(text):
    return [parse_spec(t) for t in text.split(";") if t.strip()]


def legacy_specs(a):
    """The cases of the options --quick/--tol/--single-tol/--cases (the script's defaults)."""
    m = 10**6 if a.quick else 10**7
    sizes = {3: [64] * 3 if a.quick else [128] * 3, 2: [500] * 2 if a.quick else [1000] * 2, 1: [10**5] if a.quick else [10**6]}
    want = set(a.cases.split(","))
    specs = []
    for tol in [float(t) for t in a.tol.split(",") if t]:
        for dim in (3, 2, 1):
            for ty in (1, 2):
                if f"{dim}d{ty}" in want:
                    specs.append({"type": ty, "dim": dim, "modes": sizes[dim], "m": m, "prec": "f64", "tol": tol, "ntrans": 1})
    for tol in [float(t) for t in a.single_tol.split(",") if t]:
        specs.append({"type": 1, "dim": 3, "modes": sizes[3], "m": m, "prec": "f32", "tol": tol, "ntrans": 1})
    for s in specs:
        s["id"] = default_id(s)
    return specs


def describe(spec):
    if spec["type"] == 3:
        return f"{spec['dim']}D type 3, M = N = {spec['m']:.3g}" if spec['m'] == spec['n'] else \
            f"{spec['dim']}D type 3, M = {spec['m']:.3g}, N = {spec['n']:.3g}"
    nt = f", ntrans {spec['ntrans']}" if spec["ntrans"] != 1 else ""
    return f"{spec['dim']}D type {spec['type']}, {'x'.join(map(str, spec['modes']))}, M = {spec['m']:.0e}{nt}"


# ---------------------------------------------------------------------------------------------

def timed(cp, f):
    cp.cuda.Device().synchronize()
    t0 = time.perf_counter()
    r = f()
    cp.cuda.Device().synchronize()
    return r, time.perf_counter() - t0


class Inputs:
    """Device inputs, generated once per shape (f64 on the device, cast per precision)."""

    def __init__(self, cp, np, seed=0):
        self.cp, self.np, self.rng, self.memo = cp, np, np.random.default_rng(seed), {}

    def _get(self, key, make):
        if key not in self.memo:
            self.memo[key] = make()
        return self.memo[key]

    def points(self, dim, m):
        return [self._get(("x", d, m), lambda: self.cp.asarray(self.rng.uniform(-math.pi, math.pi, m))) for d in range(dim)]

    def complex(self, size):
        rng = self.rng
        return self._get(("c", size), lambda: self.cp.asarray(rng.standard_normal(size) + 1j * rng.standard_normal(size)))

    def freqs(self, dim, n, freq):
        return [self._get(("s", d, n, freq), lambda: self.cp.asarray(self.rng.uniform(-freq / 2, freq / 2, n))) for d in range(dim)]


def batch_to_theirs(a, nt, dims):
    """Our flat modes (nt vectors, x fastest) -> cuFINUFFT's (nt, N1, ..., Nd), last index fastest."""
    d = len(dims)
    return a.reshape((nt,) + tuple(reversed(dims))).transpose((0,) + tuple(range(d, 0, -1)))


def theirs_to_flat(a, nt, dims):
    d = len(dims)
    return a.reshape((nt,) + tuple(dims)).transpose((0,) + tuple(range(d, 0, -1))).reshape(-1)


def run_case(cp, np, ff, cufinufft, spec, inputs, repeat, samples, rng):
    """Times both libraries on one case; returns the case's record (seconds, all repetitions)."""
    ty, dim, nt, single = spec["type"], spec["dim"], spec["ntrans"], spec["prec"] == "f32"
    real = cp.float32 if single else cp.float64
    cplx = cp.complex64 if single else cp.complex128
    m, tol = spec["m"], spec["tol"]
    x = [a.astype(real) for a in inputs.points(dim, m)]
    dims = spec["modes"] if ty != 3 else [1] * dim
    if ty == 3:
        s = [a.astype(real) for a in inputs.freqs(dim, spec["n"], spec["freq"])]
        nout = spec["n"]
    else:
        nout = int(np.prod(dims))
    if ty == 2:
        f = inputs.complex(nt * nout).astype(cplx)
        c = cp.zeros(nt * m, dtype=cplx)
    else:
        c = inputs.complex(nt * m).astype(cplx)
        f = cp.zeros(nt * nout, dtype=cplx)
    stream = cp.cuda.get_current_stream().ptr
    rec = {"id": spec["id"], "spec": spec, "describe": describe(spec),
           "ours": {"status": "ok", "plan": [], "setpts": [], "execute": [], "setpts_from": "device arrays",
                    "gpu_method": spec.get("method", "auto")},
           "peer": {"status": "ok", "plan": [], "setpts": [], "execute": [], "setpts_from": "device arrays"}}
    out_ours = out_theirs = None

    # ours
    method = GPU_METHODS[spec.get("method", "auto")]
    try:
        for it in range(repeat + 1):
            plan, t = timed(cp, lambda: ff.makeplan(ty, dims, tol, single, stream, method=method, ntrans=nt))
            try:
                if ty == 3:
                    _, ts = timed(cp, lambda: ff.setpts_type3(plan, single, x, s))
                else:
                    _, ts = timed(cp, lambda: ff.setpts(plan, single, x))
                _, te = timed(cp, lambda: ff.execute(plan, single, c, f))
                if it == 0:
                    out_ours = (c if ty == 2 else f).copy()
                    rec["ours"]["info"] = ff.info(plan, single)
                else:
                    rec["ours"]["plan"].append(t); rec["ours"]["setpts"].append(ts); rec["ours"]["execute"].append(te)
            finally:
                ff.destroy(plan, single)
        if ty != 3:
            rec["ours"]["phases_ms"], rec["ours"]["debug_lines"] = debug_execute(ff, cp, ty, dims, tol, single, stream, method,
                                                                                 nt, x, c, f)
    except Exception as e:  # noqa: BLE001  (recorded, the peer still runs)
        rec["ours"].update(status="error", message=str(e))
        log(f"  farfield failed: {e}")

    # cuFINUFFT (mode arrays with the last index fastest)
    if cufinufft is None:
        rec["peer"] = {"status": "skipped", "message": "cuFINUFFT not run (--no-peer)"}
    try:
        if cufinufft is None:
            raise LookupError
        if ty == 2:
            data = batch_to_theirs(f, nt, dims).copy()
        else:
            data = c.reshape(nt, m)
        for it in range(repeat + 1):
            shape = dim if ty == 3 else tuple(dims)
            p, t = timed(cp, lambda: cufinufft.Plan(ty, shape, n_trans=nt, eps=tol, isign=1, dtype=cplx))
            kw = dict(zip("xyz", x), **(dict(zip("stu", s)) if ty == 3 else {}))
            _, ts = timed(cp, lambda: p.setpts(**kw))
            res, te = timed(cp, lambda: p.execute(data))
            if it == 0:
                out_theirs = theirs_to_flat(res, nt, dims) if ty == 1 else res.reshape(-1)
            else:
                rec["peer"]["plan"].append(t); rec["peer"]["setpts"].append(ts); rec["peer"]["execute"].append(te)
            del p
    except LookupError:
        pass
    except Exception as e:  # noqa: BLE001
        rec["peer"].update(status="error", message=str(e))
        log(f"  cuFINUFFT failed: {e}")

    # accuracy against exact sums at sampled outputs of the last vector
    v = nt - 1
    if ty == 1:
        ks = [tuple(int(rng.integers(0, n)) for n in dims) for _ in range(samples)]
        exact = direct_type1(cp, x, c[v * m:(v + 1) * m], dims, ks)
        idx = [v * nout + flat_index(k, dims) for k in ks]
    elif ty == 2:
        js = [int(j) for j in rng.integers(0, m, samples)]
        exact = direct_type2(cp, x, f[v * nout:(v + 1) * nout], dims, js)
        idx = [v * m + j for j in js]
    else:
        ks = [int(k) for k in rng.integers(0, nout, samples)]
        exact = direct_type3(cp, x, c[v * m:(v + 1) * m], s, ks)
        idx = [v * nout + k for k in ks]
    for side, out in (("ours", out_ours), ("peer", out_theirs)):
        if out is not None:
            rec[side]["rel_error"] = rel_err([complex(out[i].get()) for i in idx], exact)
    return rec


def med_ms(side, stage):
    v = side.get(stage) or []
    return statistics.median(v) * 1e3 if v else float("nan")


def write_json(path, doc):
    tmp = Path(str(path) + ".tmp")
    tmp.write_text(json.dumps(doc, indent=1))
    os.replace(tmp, path)


def print_table(rows, repeat, m_note, first):
    print(f"{m_note}; ms, median of {repeat} after a warm-up; first farfield plan in the process: {first * 1e3:.0f} ms\n")
    print("| case | prec | tol | farfield plan / setpts / execute | cuFINUFFT plan / setpts / execute | execute ratio | setpts ratio | error farfield / cuFINUFFT |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for r in rows:
        o, t, sp = r["ours"], r["peer"], r["spec"]
        cell = lambda d: (f"{med_ms(d, 'plan'):.2f} / {med_ms(d, 'setpts'):.2f} / {med_ms(d, 'execute'):.2f}"
                          if d["status"] == "ok" else f"{d['status']}: {d.get('message', '')[:60]}")
        ratio = lambda st: f"{med_ms(o, st) / med_ms(t, st):.2f}" if o["status"] == t["status"] == "ok" else "n/a"
        err = lambda d: f"{d['rel_error']:.1e}" if "rel_error" in d else "–"
        print(f"| {r['describe']} | {sp['prec']} | {sp['tol']:g} | {cell(o)} | {cell(t)} | {ratio('execute')} | "
              f"{ratio('setpts')} | {err(o)} / {err(t)} |")


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
    ap.add_argument("--case-list", help="explicit cases, ';'-separated key=value lists (module docstring); "
                                        "replaces --quick/--tol/--single-tol/--cases")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--samples", type=int, default=40)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--json", type=Path, help="write every case (all repetitions) to this JSON file, after each case")
    ap.add_argument("--no-peer", action="store_true", help="farfield only (no cuFINUFFT: its rows say 'skipped')")
    a = ap.parse_args()
    if not (a.no_peer or a.cufinufft_src or (a.cufinufft_lib and a.cufinufft_py)):
        ap.error("give --cufinufft-src, or --cufinufft-lib with --cufinufft-py (or --no-peer)")
    specs = parse_specs(a.case_list) if a.case_list else legacy_specs(a)
    ensure_loader_path()
    import cupy as cp
    import numpy as np

    if a.no_peer:
        cuf_lib, cufinufft = None, None
    else:
        if a.cufinufft_lib:
            cuf_lib, cuf_py = Path(a.cufinufft_lib), Path(a.cufinufft_py)
        else:
            cuf_lib, cuf_py = build_cufinufft(a.cufinufft_src, cp, a.jobs)
        cufinufft = import_cufinufft(cuf_lib, cuf_py)
    lib = Path(a.lib) if a.lib else next((p for p in (BUNDLE / "libfarfield.so", ROOT / "target/release/libfarfield.so") if p.exists()), None)
    if lib is None:
        raise SystemExit("libfarfield.so not found: run scripts/gpu-bundle.sh on the build machine or pass --lib")
    ff = Farfield(lib)
    device = cp.cuda.runtime.getDeviceProperties(0)["name"].decode()
    log(f"device: {device}, farfield {lib}, cuFINUFFT {cuf_lib}")

    # the first plan of the process includes NVRTC and module loading: reported on its own
    st = cp.cuda.get_current_stream().ptr
    _, first = timed(cp, lambda: ff.destroy(ff.makeplan(1, [32] * 3, 1e-6, False, st), False))
    log(f"first farfield plan in this process (NVRTC, modules): {first * 1e3:.1f} ms")

    doc = {"script": "nufft_vs_cufinufft", "device": device, "farfield_lib": str(lib), "cufinufft_lib": str(cuf_lib or ""),
           "cufinufft_version": getattr(cufinufft, "__version__", "?"), "repeat": a.repeat, "samples": a.samples,
           "first_plan_s": first, "unit": "s", "cases": []}
    if a.json:
        write_json(a.json, doc)
    inputs = Inputs(cp, np)
    rng = np.random.default_rng(1)
    for spec in specs:
        t0 = time.perf_counter()
        rec = run_case(cp, np, ff, cufinufft, spec, inputs, a.repeat, a.samples, rng)
        rec["wall_s"] = time.perf_counter() - t0
        doc["cases"].append(rec)
        if a.json:
            write_json(a.json, doc)
        o, t = rec["ours"], rec["peer"]
        log(f"{rec['id']}: execute {med_ms(o, 'execute'):.2f} vs {med_ms(t, 'execute'):.2f} ms, errors "
            f"{o.get('rel_error', float('nan')):.1e} / {t.get('rel_error', float('nan')):.1e} ({rec['wall_s']:.1f} s)")

    ms = sorted({s["m"] for s in specs})
    print_table(doc["cases"], a.repeat, "M = " + ", ".join(f"{m:.0e}" for m in ms) + " uniform points", first)


if __name__ == "__main__":
    main()
