#!/usr/bin/env python3
"""cuFINUFFT 2.5.1's own Python package run on farfield's libcufinufft.so, on a GPU machine.

The pure-Python `cufinufft` package (cuFINUFFT 2.5.1's `finufft/python/cufinufft/`) loads
`libcufinufft.so` from its package folder through ctypes. This script copies the package into a
temporary folder beside a given library and, in a subprocess per library, runs through it:

* `Plan` for types 1, 2, 3 in 1D-3D, complex128 and complex64, with `n_trans` > 1, both
  `isign`, `modeord` 0/1, `gpu_method` 1/2, `gpu_sort` 0/1 and a caller's CUDA stream
  (`gpu_stream`), on CuPy device arrays;
* the simple functions `nufft{1,2,3}d{1,2,3}`;
* makeplan's return codes for bad arguments (called through the package's ctypes bindings).

Every output is compared with the exact sum, computed on the GPU in double precision (all
outputs: the cases are small), and must be within 10 tol (relative l2 over the outputs of all
transforms of the case). With `--cufinufft-src DIR` (a cuFINUFFT 2.5.1 source tree that CMake
configures without network) cuFINUFFT itself is built once for the GPU and run the same way:
then farfield's results must also agree with cuFINUFFT's to 3 tol (or within the sum of both
libraries' errors against the exact sum, where cuFINUFFT's own error exceeds tol, as its type 3
does), and its return codes must equal cuFINUFFT's. `--timing` adds larger cases whose plan, setpts and execute times are reported
(median of 3 after a warm-up; not asserted).

    python3 compat/cufinufft/tests/python_package_check.py --lib build-gpu/libcufinufft.so \\
        --cufinufft-py DIR/python [--cufinufft-src DIR] [--timing] [--json-out FILE]

Exit status: 0 when every check passed, 1 otherwise; 77 (skip) without CuPy or a GPU.
The CUDA libraries are found as `benches/peers/nufft_vs_cufinufft.py` finds them (a folder of
links for the CUDA 13 names, docs/design.md §5.5), which this script reuses.
"""
import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "benches" / "peers"))
import nufft_vs_cufinufft as bench  # noqa: E402  (loader path, cuFINUFFT build)

TOLS = {"complex128": (1e-9, 1e-6), "complex64": (1e-4,)}
MODES = {1: (101,), 2: (40, 33), 3: (14, 11, 9)}
M_POINTS = 4000
# type 3: point and frequency half-widths (space-bandwidth product X·S = 60-75 per axis)
T3 = {"m": 3000, "n": 2500, "x": 3.0, "s": 25.0}
# timing: (dtype, tol, type, n_modes or (type 3) dim, M (= N for type 3), type-3 point scale)
TIMING = [("complex64", 1e-5, 1, (1024, 1024), 10_000_000, 1), ("complex128", 1e-6, 1, (128, 128, 128), 10_000_000, 1),
          ("complex128", 1e-6, 2, (128, 128, 128), 10_000_000, 1), ("complex128", 1e-6, 3, 1, 1_000_000, 30),
          ("complex128", 1e-6, 3, 3, 1_000_000, 1)]


# makeplan arguments that every cuFINUFFT 2.5 refuses (the others' codes are compared with
# cuFINUFFT's when it is built)
ALWAYS_REFUSED = ("type 0", "type 4", "dim 4", "ntrans 0")


def log(*a):
    print(*a, file=sys.stderr, flush=True)


# ---------------------------------------------------------------------------------------------
# Exact sums (GPU, double precision)

def mode_grid(cp, n_modes, modeord):
    """(prod(n_modes), d) integer frequencies of the output array in C order (first axis slowest),
    CMCL order (modeord 0: -N/2 … (N-1)/2) or FFT order (modeord 1: 0 … ⌈N/2⌉-1, -⌊N/2⌋ … -1)."""
    axes = []
    for n in n_modes:
        i = cp.arange(n, dtype=cp.float64)
        axes.append(i - n // 2 if modeord == 0 else cp.where(i < (n + 1) // 2, i, i - n))
    g = cp.meshgrid(*axes, indexing="ij")
    return cp.stack([a.reshape(-1) for a in g], axis=1)


def exact(cp, ty, isign, pts, data, n_modes=None, modeord=0, freqs=None):
    """The exact transform of `data` (ntrans leading axis) at the plan's points."""
    x = cp.stack([p.astype(cp.float64) for p in pts], axis=1)  # (M, d)
    d = data.astype(cp.complex128)
    if ty == 3:
        k = cp.stack([s.astype(cp.float64) for s in freqs], axis=1)
    else:
        k = mode_grid(cp, n_modes, modeord)
    e = cp.exp(1j * isign * (k @ x.T))  # (K, M)
    if ty == 2:
        flat = d.reshape(d.shape[0], -1)  # (ntr, K)
        return flat @ e  # (ntr, M)
    out = d @ e.T  # (ntr, K)
    return out if ty == 3 else out.reshape((d.shape[0],) + tuple(n_modes))


def rel_l2(cp, a, b):
    a = a.astype(cp.complex128).reshape(-1)
    b = b.astype(cp.complex128).reshape(-1)
    return float(cp.linalg.norm(a - b) / cp.linalg.norm(b))


# ---------------------------------------------------------------------------------------------
# Child: one library, every case

def correctness_cases():
    """(name, dtype, tol, type, dim, options) for the checked cases."""
    out = []
    for dtype, tols in TOLS.items():
        for tol in tols:
            for dim in (1, 2, 3):
                for ty in (1, 2):
                    variants = [dict(), dict(isign=-1 if ty == 1 else 1, modeord=1, n_trans=3, gpu_method=1),
                                dict(gpu_method=2, n_trans=2) if ty == 1 else dict(gpu_method=1, gpu_sort=0, n_trans=2)]
                    for v in variants:
                        out.append((dtype, tol, ty, dim, v))
                for v in (dict(), dict(isign=-1, n_trans=2)):
                    out.append((dtype, tol, 3, dim, v))
    return out


def case_name(dtype, tol, ty, dim, v):
    opts = ",".join(f"{k}={val}" for k, val in sorted(v.items()))
    return f"{dim}d{ty} {dtype.replace('complex', 'c')} tol={tol:g}" + (f" [{opts}]" if opts else "")


def make_inputs(cp, np, rng, dtype, ty, dim, ntr, n_modes=None, m=M_POINTS, nk=None):
    real = np.float64 if dtype == "complex128" else np.float32
    if ty == 3:
        pts = [cp.asarray(rng.uniform(-T3["x"], T3["x"], m) + 0.5 * i) .astype(real) for i in range(dim)]
        freqs = [cp.asarray(rng.uniform(-T3["s"], T3["s"], nk) - 2.0 * i).astype(real) for i in range(dim)]
    else:
        pts = [cp.asarray(rng.uniform(-np.pi, np.pi, m)).astype(real) for _ in range(dim)]
        freqs = None
    shape = (ntr,) + tuple(n_modes) if ty == 2 else (ntr, m)
    data = cp.asarray(rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)
    return pts, freqs, data


def run_plan(cufinufft, ty, dim, n_modes, tol, dtype, v, pts, freqs, data):
    kw = {k: val for k, val in v.items() if k not in ("n_trans", "isign")}
    ntr = v.get("n_trans", 1)
    isign = v.get("isign", -1 if ty == 2 else 1)
    plan = cufinufft.Plan(ty, n_modes if ty != 3 else dim, n_trans=ntr, eps=tol, isign=isign, dtype=dtype, **kw)
    names = "xyz"[:dim]
    args = dict(zip(names, pts))
    if ty == 3:
        args.update(zip("stu"[:dim], freqs))
    plan.setpts(**args)
    return plan.execute(data if ntr > 1 else data[0]), isign


def child(lib, pkg_src, out_dir, timing):
    import cupy as cp
    import numpy as np
    work = Path(tempfile.mkdtemp(prefix="cufinufft-pkg-"))
    shutil.copytree(Path(pkg_src), work / "cufinufft")
    shutil.copy2(lib, work / "cufinufft" / "libcufinufft.so")
    sys.path.insert(0, str(work))
    import cufinufft
    res = {"cases": {}, "codes": {}, "timing": {}, "outputs": []}
    out_dir = Path(out_dir)

    def record(name, entry, out=None):
        """Stores a case's result at once, so that a library that crashes later leaves what it did."""
        res["cases"][name] = entry
        if out is not None:
            np.save(out_dir / f"o{len(res['outputs'])}.npy", cp.asnumpy(out).reshape(-1))
            res["outputs"].append(name)
        (out_dir / "result.json").write_text(json.dumps(res))

    def start(name):
        res["running"] = name
        (out_dir / "result.json").write_text(json.dumps(res))

    rng = np.random.default_rng(2025)
    for dtype, tol, ty, dim, v in correctness_cases():
        name = case_name(dtype, tol, ty, dim, v)
        ntr = v.get("n_trans", 1)
        n_modes = MODES[dim]
        pts, freqs, data = make_inputs(cp, np, rng, dtype, ty, dim, ntr, n_modes, m=T3["m"] if ty == 3 else M_POINTS,
                                       nk=T3["n"])
        start(name)
        try:
            out, isign = run_plan(cufinufft, ty, dim, n_modes, tol, dtype, v, pts, freqs, data)
            cp.cuda.Device().synchronize()
            ref = exact(cp, ty, isign, pts, data, n_modes, v.get("modeord", 0), freqs)
            record(name, {"err": rel_l2(cp, out, ref), "tol": tol}, out)
        except Exception as e:  # reported, compared by the parent
            record(name, {"error": f"{type(e).__name__}: {e}", "tol": tol})
    # the simple interface, and a caller's stream
    for dtype, tol in (("complex128", 1e-7), ("complex64", 1e-4)):
        for dim in (1, 2, 3):
            for ty in (1, 2, 3):
                name = f"simple nufft{dim}d{ty} {dtype.replace('complex', 'c')}"
                n_modes = MODES[dim]
                pts, freqs, data = make_inputs(cp, np, rng, dtype, ty, dim, 1, n_modes, m=T3["m"] if ty == 3 else M_POINTS,
                                               nk=T3["n"])
                fn = getattr(cufinufft, f"nufft{dim}d{ty}")
                start(name)
                try:
                    if ty == 1:
                        out = fn(*pts, data[0], n_modes, eps=tol)
                        ref = exact(cp, 1, 1, pts, data, n_modes)[0]
                    elif ty == 2:
                        out = fn(*pts, data[0], eps=tol)
                        ref = exact(cp, 2, -1, pts, data, n_modes)[0]
                    else:
                        out = fn(*pts, data[0], *freqs, eps=tol)
                        ref = exact(cp, 3, 1, pts, data, freqs=freqs)[0]
                    record(name, {"err": rel_l2(cp, out, ref), "tol": tol}, out)
                except Exception as e:
                    record(name, {"error": f"{type(e).__name__}: {e}", "tol": tol})
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        name = "3d1 complex128 on a caller's stream"
        pts, _, data = make_inputs(cp, np, rng, "complex128", 1, 3, 1, MODES[3])
        start(name)
        try:
            plan = cufinufft.Plan(1, MODES[3], eps=1e-9, dtype="complex128", gpu_stream=stream.ptr)
            plan.setpts(*pts)
            out = plan.execute(data[0])
            stream.synchronize()
            ref = exact(cp, 1, 1, pts, data, MODES[3])[0]
            record(name, {"err": rel_l2(cp, out, ref), "tol": 1e-9}, out)
        except Exception as e:
            record(name, {"error": f"{type(e).__name__}: {e}", "tol": 1e-9})
    if timing:
        for dtype, tol, ty, dims, m, scale in TIMING:
            dim = dims if ty == 3 else len(dims)
            name = f"{dim}d{ty} {dtype.replace('complex', 'c')} tol={tol:g} " + (f"M=N={m:.0e}" if ty == 3 else f"{dims} M={m:.0e}")
            pts, freqs, data = make_inputs(cp, np, rng, dtype, ty, dim, 1, None if ty == 3 else dims, m=m, nk=m)
            pts = [p * scale for p in pts]  # type 3 in 1D: X·S ≈ 2250
            times = {"plan": [], "setpts": [], "execute": []}
            start(f"timing {name}")
            for it in range(4):
                plan, tp = bench.timed(cp, lambda: cufinufft.Plan(ty, dims, eps=tol, dtype=dtype))
                args = dict(zip("xyz", pts))
                if ty == 3:
                    args.update(zip("stu", freqs))
                _, ts = bench.timed(cp, lambda: plan.setpts(**args))
                _, te = bench.timed(cp, lambda: plan.execute(data[0]))
                del plan
                if it:
                    for k, t in zip(times, (tp, ts, te)):
                        times[k].append(t)
            res["timing"][name] = {k: statistics.median(t) for k, t in times.items()}
            (out_dir / "result.json").write_text(json.dumps(res))
    # makeplan's codes for bad arguments (both precisions), through the package's bindings
    import ctypes
    from cufinufft import _cufinufft as low
    bad = {"type 0": (0, 1, (10, 1, 1), 1, 1e-6, {}), "type 4": (4, 1, (10, 1, 1), 1, 1e-6, {}),
           "dim 4": (1, 4, (10, 1, 1), 1, 1e-6, {}), "ntrans 0": (1, 1, (10, 1, 1), 0, 1e-6, {}),
           "modes 0": (1, 2, (10, 0, 1), 1, 1e-6, {}), "upsampfac 0.9": (1, 1, (10, 1, 1), 1, 1e-6, {"upsampfac": 0.9}),
           "gpu_method 7": (1, 2, (10, 10, 1), 1, 1e-6, {"gpu_method": 7}),
           "tol 1e-20": (1, 1, (10, 1, 1), 1, 1e-20, {}), "modeord 2": (1, 1, (10, 1, 1), 1, 1e-6, {"modeord": 2})}
    for single in (False, True):
        for what, (ty, dim, nm, ntr, eps, o) in bad.items():
            start(f"makeplan with {what}")
            opts = low.NufftOpts()
            low._default_opts(opts)
            for k, val in o.items():
                setattr(opts, k, val)
            plan = ctypes.c_void_p(None)
            mk = low._make_planf if single else low._make_plan
            ier = mk(ty, dim, (ctypes.c_int64 * 3)(*nm), 1, ntr, eps, ctypes.byref(plan), ctypes.byref(opts))
            if plan.value:
                (low._destroy_planf if single else low._destroy_plan)(plan)
            res["codes"][f"{what}{' (f32)' if single else ''}"] = int(ier)
            (out_dir / "result.json").write_text(json.dumps(res))
    res.pop("running", None)
    (out_dir / "result.json").write_text(json.dumps(res))


# ---------------------------------------------------------------------------------------------
# Parent

def run_child(lib, pkg, timing):
    out = tempfile.mkdtemp(prefix="cufinufft-run-")
    cmd = [sys.executable, str(Path(__file__).resolve()), "--child", str(lib), "--cufinufft-py", str(pkg), "--out", out]
    if timing:
        cmd.append("--timing")
    t0 = time.perf_counter()
    try:
        rc = subprocess.run(cmd, timeout=300).returncode
    except subprocess.TimeoutExpired:
        rc = 124
    log(f"  {lib}: {time.perf_counter() - t0:.1f} s, exit status {rc}")
    import numpy as np
    p = Path(out) / "result.json"
    res = json.loads(p.read_text()) if p.exists() else {"cases": {}, "codes": {}, "timing": {}, "outputs": []}
    res["outputs"] = {n: np.load(Path(out) / f"o{i}.npy") for i, n in enumerate(res["outputs"])}
    res["rc"] = rc
    if rc != 0:
        res["crashed_at"] = res.get("running", "start-up")
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--lib", help="farfield's libcufinufft.so (default: build-gpu/libcufinufft.so)")
    ap.add_argument("--cufinufft-py", required=True, help="the cufinufft Python package folder (…/python/cufinufft)")
    ap.add_argument("--cufinufft-src", help="cuFINUFFT 2.5.1 source tree: also build and compare with cuFINUFFT")
    ap.add_argument("--timing", action="store_true")
    ap.add_argument("--json-out")
    ap.add_argument("--jobs", type=int, default=14)
    ap.add_argument("--child")
    ap.add_argument("--out")
    a = ap.parse_args()
    if a.child:
        return child(a.child, a.cufinufft_py, a.out, a.timing)
    bench.ensure_loader_path()
    try:
        import cupy as cp
        cp.cuda.Device(0).compute_capability
    except Exception as e:  # no CuPy or no device
        print(f"skip: {e}")
        return 77
    lib = Path(a.lib) if a.lib else bench.BUNDLE / "libcufinufft.so"
    ours = run_child(lib.resolve(), Path(a.cufinufft_py).resolve(), a.timing)
    theirs = None
    if a.cufinufft_src:
        ref_lib, _ = bench.build_cufinufft(a.cufinufft_src, cp, a.jobs)
        theirs = run_child(ref_lib.resolve(), Path(a.cufinufft_py).resolve(), a.timing)
    import numpy as np
    failures = []
    if ours["rc"] != 0:
        failures.append(f"farfield's library: the run stopped with status {ours['rc']} at: {ours['crashed_at']}")
    if theirs and theirs["rc"] != 0:
        print(f"note: cuFINUFFT's own library stopped with status {theirs['rc']} at: {theirs['crashed_at']} "
              "(its later cases are missing below)\n")
    print("| case | farfield error | cuFINUFFT error | farfield vs cuFINUFFT | tol |\n|---|---|---|---|---|")
    for name, r in ours["cases"].items():
        t = theirs["cases"].get(name) if theirs else None
        tol = r["tol"]
        e_ours = r.get("err")
        if e_ours is None:
            failures.append(f"{name}: farfield raised {r['error']}")
        elif not e_ours <= 10 * tol:
            failures.append(f"{name}: farfield error {e_ours:.2e} > 10 tol")
        cell_t = "—" if t is None else (f"{t['err']:.2e}" if "err" in t else "raised")
        diff = "—"
        if t is not None and "err" in t and e_ours is not None:
            a_, b_ = ours["outputs"][name], theirs["outputs"][name]
            d = float(np.linalg.norm(a_ - b_) / np.linalg.norm(b_))
            diff = f"{d:.2e}"
            # agreement to 3 tol, unless the difference is explained by the two libraries'
            # own errors against the exact sum (cuFINUFFT 2.5.1's type 3 reaches 3.6 tol)
            if not (d <= 3 * tol or d <= e_ours + t["err"] + tol):
                failures.append(f"{name}: farfield differs from cuFINUFFT by {d:.2e} > 3 tol "
                                f"and > the sum of both errors against the exact sum")
        print(f"| {name} | {'raised' if e_ours is None else f'{e_ours:.2e}'} | {cell_t} | {diff} | {tol:g} |")
    print("\n| makeplan with | farfield | cuFINUFFT |\n|---|---|---|")
    for what, code in ours["codes"].items():
        tc = theirs["codes"].get(what) if theirs else None
        print(f"| {what} | {code} | {'—' if tc is None else tc} |")
        if tc is not None and tc != code:
            failures.append(f"makeplan with {what}: farfield returns {code}, cuFINUFFT {tc}")
        if tc is None and code == 0 and what.split(" (")[0] in ALWAYS_REFUSED:
            failures.append(f"makeplan with {what}: farfield accepts it")
    if ours["timing"]:
        print("\n| timing case | farfield plan / setpts / execute (ms) | cuFINUFFT (ms) | total ratio |\n|---|---|---|---|")
        for name, t in ours["timing"].items():
            r = theirs["timing"].get(name) if theirs else None
            fmt = lambda x: " / ".join(f"{1e3 * x[k]:.2f}" for k in ("plan", "setpts", "execute"))  # noqa: E731
            ratio = "—" if r is None else f"{sum(t.values()) / sum(r.values()):.2f}"
            print(f"| {name} | {fmt(t)} | {'—' if r is None else fmt(r)} | {ratio} |")
    if a.json_out:
        strip = lambda r: None if r is None else {k: v for k, v in r.items() if k != "outputs"}  # noqa: E731
        Path(a.json_out).write_text(json.dumps({"farfield": strip(ours), "cufinufft": strip(theirs)}, indent=1))
    for f in failures:
        print("FAIL:", f)
    print("python_package_check:", "FAILED" if failures else "passed", f"({len(ours['cases'])} cases)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
