"""The GPU kit's case list: every case of every path, full and `--quick` sizes, per-path time
budgets and per-case timeouts (`benches/gpu/kit.py` runs them; see its docstring).

`expand(quick, only)` turns the tables below into case dicts, in the order they are run:

    {"path": "spread", "id": "3d-128-w7-sm-f64", "params": {...}, "timeout_s": 45}

The order is a priority: a path that spends its budget skips the cases after it (recorded as
skipped, with the reason), so the most telling cases come first.
"""

# Per path: wall-clock budget (seconds) of the whole path in a full / quick run (no case is
# started after it; one started in time is cut 20 s after it), and the timeout of one case (a
# case that runs past it is killed and recorded as "timeout"). Full: 440 s in all, quick 165 s,
# plus setup (run.sh). NUFFT runs its cases in one process; its first case also gets
# `startup_s` (CuPy, NVRTC, cuFINUFFT). The full budgets follow the first hardware run (H200,
# 2026-12-04, benches/results/gpu/2026-12-04-*): the NUFFT path took 60–71 s, Ewald 34 s, the
# FMM 35 s, and spreading 1.6 s per case (67 cases in 110 s).
PATHS = {
    "nufft": {"budget_s": {"full": 100, "quick": 45}, "timeout_s": 60, "startup_s": 60},
    "spread": {"budget_s": {"full": 220, "quick": 45}, "timeout_s": 45},
    "ewald": {"budget_s": {"full": 60, "quick": 45}, "timeout_s": 150},
    "fmm": {"budget_s": {"full": 60, "quick": 30}, "timeout_s": 90},
}
ORDER = ("nufft", "spread", "ewald", "fmm")

# NUFFT (farfield CUDA vs cuFINUFFT 2.5.1): M points, modes per dimension, type 3 sizes (M = N
# points and targets, targets in [-freq/2, freq/2)^d), tolerances per precision.
NUFFT = {
    "full": {"m": 10**7, "modes": {1: [10**6], 2: [1000, 1000], 3: [128, 128, 128]},
             "tols": {"f64": [1e-6, 1e-3, 1e-9], "f32": [1e-5, 1e-3]}, "dims": [3, 2, 1],
             "type3": {"m": 10**6, "freq": {1: 10**6, 3: 128}, "dims": [1, 3], "tol": 1e-6},
             "ntrans": {"n": 8, "dim": 3, "tol": 1e-6, "types": [1, 2]}},
    "quick": {"m": 10**6, "modes": {3: [64, 64, 64]},
              "tols": {"f64": [1e-6], "f32": [1e-5]}, "dims": [3],
              "type3": {"m": 10**5, "freq": {3: 64}, "dims": [3], "tol": 1e-6},
              "ntrans": {"n": 8, "dim": 3, "tol": 1e-6, "types": [1]}},
}

# Spreading (`farfield bench spread --backend cuda`: kernels only, device arrays) against the
# CPU spreader of the same run. ES kernel widths from the kernel tolerance (σ = 2 rules; the
# self-test checks each width against the binary); single precision at the widths its
# tolerances use (`f32_widths`), so that the full list (108 cases, about 175 s) fits its budget.
SPREAD_WIDTH_TOL = {4: 1e-3, 7: 1e-6, 10: 1e-9, 13: 1e-11}
SPREAD_METHODS = ["auto", "sm", "gm-sort", "gm", "csr", "group"]
SPREAD = {
    # (dim, grid points per axis, M)
    "full": {"grids": [(3, 128, 2 * 10**6), (2, 2048, 2 * 10**6), (3, 256, 4 * 10**6)], "widths": [7, 4, 10, 13],
             "f32_widths": [7, 4], "precs": ["f64", "f32"], "reps": 3},
    "quick": {"grids": [(3, 128, 10**6)], "widths": [7], "precs": ["f64"], "reps": 3},
}

# Ewald/SPME, JAC DHFR (data/jac_dhfr): ours f32 grids vs OpenMM single, ours f64 grids vs
# OpenMM mixed, each on the OpenMM platforms listed; the fastest setting at force error <=
# target counts.
EWALD = {
    "full": {"cases": [("f32", "single"), ("f64", "mixed")], "platforms": ["CUDA", "OpenCL"],
             "ours_tols": [1.5e-5, 1e-5], "openmm_cutoffs": [1.2, 0.9], "openmm_tols": [2e-5],
             "target": 1e-5, "repeats": 20},
    "quick": {"cases": [("f32", "single")], "platforms": ["CUDA", "OpenCL"],
              "ours_tols": [1.5e-5], "openmm_cutoffs": [1.2], "openmm_tols": [2e-5],
              "target": 1e-5, "repeats": 10},
}

# FMM (`benches/fmm_cuda.py`: CUDA FMM with the default, plain M2L vs the CPU FMM on all cores,
# same p and D; `symmetric`: also the symmetric M2L kernel).
FMM = {
    "full": {"cases": [("uniform", "1e6", 1e-6, "open"), ("plummer", "1e6", 1e-6, "open"),
                       ("jac_dhfr", None, 1e-5, "periodic")], "reps": 3, "symmetric": True},
    "quick": {"cases": [("uniform", "1e6", 1e-6, "open")], "reps": 3, "symmetric": False},
}


def _case(path, cid, params):
    return {"path": path, "id": cid, "params": params, "timeout_s": PATHS[path]["timeout_s"]}


def nufft_cases(quick):
    c = NUFFT["quick" if quick else "full"]
    out = []

    def t12(prec, tol, dims, types=(1, 2), ntrans=1):
        for dim in dims:
            for ty in types:
                nt = f"-nt{ntrans}" if ntrans != 1 else ""
                p = {"type": ty, "dim": dim, "modes": c["modes"][dim], "m": c["m"], "prec": prec, "tol": tol, "ntrans": ntrans}
                out.append(_case("nufft", f"{dim}d-t{ty}-{prec}-{tol:g}{nt}", p))

    f64, f32 = c["tols"]["f64"], c["tols"]["f32"]
    t12("f64", f64[0], c["dims"])
    t3 = c["type3"]
    for dim in t3["dims"]:
        p = {"type": 3, "dim": dim, "m": t3["m"], "n": t3["m"], "freq": t3["freq"][dim], "prec": "f64", "tol": t3["tol"],
             "ntrans": 1}
        out.append(_case("nufft", f"{dim}d-t3-f64-{t3['tol']:g}", p))
    nt = c["ntrans"]
    t12("f64", nt["tol"], [nt["dim"]], nt["types"], nt["n"])
    t12("f32", f32[0], c["dims"])
    for tol in f64[1:]:
        t12("f64", tol, c["dims"])
    for tol in f32[1:]:
        t12("f32", tol, c["dims"])
    return out


def nufft_spec(case):
    """The case as `nufft_vs_cufinufft.py --case-list` takes it."""
    p = case["params"]
    items = [f"id={case['id']}", f"type={p['type']}"]
    if p["type"] == 3:
        items += [f"dim={p['dim']}", f"m={p['m']}", f"n={p['n']}", f"freq={p['freq']:g}"]
    else:
        items += ["modes=" + "x".join(str(n) for n in p["modes"]), f"m={p['m']}"]
    items += [f"prec={p['prec']}", f"tol={p['tol']:g}", f"ntrans={p['ntrans']}"]
    return ",".join(items)


def spread_cases(quick):
    c = SPREAD["quick" if quick else "full"]
    grid_name = lambda g: f"{g[0]}d-{g[1]}"
    seen, out = set(), []

    def add(grid, w, method, prec):
        cid = f"{grid_name(grid)}-w{w}-{method}-{prec}"
        if cid not in seen:
            seen.add(cid)
            p = {"dim": grid[0], "grid": grid[1], "m": grid[2], "w": w, "tol": SPREAD_WIDTH_TOL[w], "method": method,
                 "prec": prec, "reps": c["reps"]}
            out.append(_case("spread", cid, p))

    first_grid, first_w = c["grids"][0], c["widths"][0]
    for method in SPREAD_METHODS:                     # every method at the first size
        add(first_grid, first_w, method, "f64")
    for grid in c["grids"]:                           # what AUTO picks at every size
        for w in c["widths"]:
            add(grid, w, "auto", "f64")
    for w in c["widths"]:                             # the other methods, width by width
        for grid in c["grids"]:
            for method in SPREAD_METHODS:
                add(grid, w, method, "f64")
    for prec in c["precs"]:
        if prec != "f64":
            for grid in c["grids"]:
                for w in c.get("f32_widths", c["widths"]):
                    for method in SPREAD_METHODS:
                        add(grid, w, method, prec)
    return out


def ewald_cases(quick):
    c = EWALD["quick" if quick else "full"]
    keys = ("platforms", "ours_tols", "openmm_cutoffs", "openmm_tols", "target", "repeats")
    return [_case("ewald", f"jac-{ours}", dict({"system": "jac_dhfr", "ours_prec": ours, "openmm_precision": omm},
                                             **{k: c[k] for k in keys}))
            for ours, omm in c["cases"]]


def fmm_cases(quick):
    c = FMM["quick" if quick else "full"]
    out = []
    for dist, n, tol, bnd in c["cases"]:
        cid = f"{dist}-{bnd}-{tol:g}" if n is None else f"{dist}-{n}-{bnd}-{tol:g}"
        out.append(_case("fmm", cid, {"dist": dist, "n": n, "input": None if n else dist, "tol": tol, "boundary": bnd,
                                      "reps": c["reps"], "symmetric": c["symmetric"]}))
    return out


BUILDERS = {"nufft": nufft_cases, "spread": spread_cases, "ewald": ewald_cases, "fmm": fmm_cases}


def parse_only(text):
    """`--only nufft,spread` -> the paths in run order; unknown names are an error."""
    if not text:
        return list(ORDER)
    want = [t.strip() for t in text.split(",") if t.strip()]
    bad = [t for t in want if t not in PATHS]
    if bad:
        raise ValueError(f"unknown path(s) {', '.join(bad)}; known: {', '.join(ORDER)}")
    return [p for p in ORDER if p in want]


def expand(quick=False, only=None):
    """All cases of the selected paths, in run order."""
    out = []
    for path in parse_only(only):
        out += BUILDERS[path](quick)
    return out


def budget(path, quick):
    return PATHS[path]["budget_s"]["quick" if quick else "full"]
