#!/usr/bin/env python3
"""farfield's Ewald solvers against OpenMM's CPU PME, in the same run, at equal force accuracy.

Usage (from anywhere; paths are relative to the repository):

    python3 benches/peers/ewald_vs_openmm.py                 # JAC DHFR + 1e5 random charges
    python3 benches/peers/ewald_vs_openmm.py --systems jac   # one system
    python3 benches/peers/ewald_vs_openmm.py --target 1e-5 --threads 2 --repeats 7

What it does:
1. Creates `.venv-peers/` at the repository root (git-ignored) with `openmm` and `numpy` from
   the package index (pip) and re-runs itself inside it; builds `target/release/farfield` if
   it is missing (or with `--build`).
2. Systems: JAC DHFR (`data/jac_dhfr` or `$FARFIELD_DATA_DIR/jac_dhfr`, docs/design.md §11.1; 23,558 atoms, net charge -11 e) and a
   random neutral system of 1e5 charges (+-1 on random sites of a jittered cubic lattice at
   100 charges/nm^3, minimum distance 0.11 nm, seed 7) written as .npy files to a temporary
   folder.
3. Reference: farfield's classic Ewald sum (`farfield ewald --method direct --tol 1e-8`),
   the O(N^1.5) explicit sum, independent of both mesh methods. Its energy is also compared
   with OpenMM's PME at ewaldErrorTolerance 1e-7 as a cross-check of the convention.
4. OpenMM: a System with one NonbondedForce (PME, the charges, Lennard-Jones off: sigma 1,
   epsilon 0, no exceptions), CPU platform with `Threads` = --threads, positions and box from
   the folder. Forces come back in kJ/mol/nm; ours are q_i E_i times 138.935458.
   For each cutoff in --openmm-cutoffs and each ewaldErrorTolerance in --openmm-tols: context
   creation, one warm-up `getState(getEnergy, getForces)`, then the fastest of --repeats.
5. farfield: `farfield ewald --input DIR --method {spme,spectral} --tol T --threads K --json
   --out DIR` for each T in --ours-tols (fastest of --repeats after a warm-up, timed inside the
   process; energy + potentials + fields).
6. For each code, the fastest setting whose measured relative RMS force error against the
   reference is <= --target is reported, with the ratio ours/OpenMM (<= 1.0: ours faster).

On a GPU machine (`--gpu`, after `bash scripts/gpu-bundle.sh`; what `benches/gpu/kit.py` runs):

    FARFIELD_BIN=build-gpu/farfield python3 benches/peers/ewald_vs_openmm.py --systems jac --gpu \
        --ours-prec f32 --openmm-precision single --openmm-platform CUDA,OpenCL --ours-host \
        --reference build-gpu/ewald-ref/jac_dhfr --skip-crosscheck --json rows.json

- `--openmm-platform CUDA,OpenCL`: each platform in turn (default: OpenCL with `--gpu`, else
  CPU); a platform that does not load is reported as a row with status "unavailable" and
  OpenMM's reason (its plugin load failures), and the run goes on.
- `--ours-host`: ours also through the C API with host arrays (`ewald_capi.py`: positions in,
  potentials and fields out on the host, as OpenMM's `getState` returns forces), code
  "farfield METHOD host"; the CLI rows ("farfield METHOD") keep their arrays on the device with
  `--gpu` (each evaluation ends when its energy is on the host).
- `--reference DIR`: the reference field is read from DIR (`field.npy` and `reference.json`,
  the CLI's JSON line) when it is there, else computed into DIR and kept (the classic sum at
  tol 1e-8 takes about 7 s per evaluation for JAC DHFR on 2 cores, and the CLI evaluates twice).
- `--no-openmm`: ours only (no virtual environment, no OpenMM); `--skip-crosscheck`: no
  OpenMM energy cross-check at ewaldErrorTolerance 1e-7.
- `--json FILE`: every row per system; rows carry `times_s` (every timed evaluation) where
  the code reports them (OpenMM, `--ours-host`; the CLI reports its fastest and median).

Timing notes: both codes are timed per evaluation after a warm-up (OpenMM from Python through
`getState`, which includes copying the forces out; ours inside the process). On a loaded
machine compare the ratios of one run only.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from peer_env import BIN, ROOT, ensure_binary, log
from peer_env import ensure_venv as _ensure_venv

BUNDLE = ROOT / "build-gpu"

VENV = ROOT / ".venv-peers"
PACKAGES = ["openmm", "numpy"]
KJ = 138.935458  # kJ mol^-1 nm e^-2
_DATA = os.environ.get("FARFIELD_DATA_DIR") or str(Path(__file__).resolve().parents[2] / "data")
JAC = Path(_DATA) / "jac_dhfr"


def ensure_venv():
    try:  # already importable here (e.g. a GPU machine's Python with carried wheels): no venv, no pip
        import numpy, openmm  # noqa: F401
        return
    except ImportError:
        _ensure_venv(VENV, PACKAGES, probe="import openmm, numpy")


def floats(s):
    return [float(v) for v in s.split(",") if v]


# ----------------------------------------------------------------------------- systems
def random_system(np, n, density, seed, folder):
    """n charges +-1 (neutral) on randomly chosen sites of a cubic lattice at the given density,
    each displaced uniformly by up to +-1/4 of the spacing: random, but with a minimum distance
    of half the spacing (0.11 nm at 100/nm^3), as in a liquid; uniform random points would have
    pairs closer than single-precision positions (OpenMM's CPU platform) can resolve."""
    rng = np.random.default_rng(seed)
    length = (n / density) ** (1.0 / 3.0)
    k = int(np.ceil(n ** (1.0 / 3.0)))
    h = length / k
    sites = rng.choice(k ** 3, size=n, replace=False)
    ijk = np.stack([sites % k, (sites // k) % k, sites // (k * k)], axis=1).astype(float)
    x = (ijk + 0.5 + rng.uniform(-0.25, 0.25, size=(n, 3))) * h
    q = np.where(np.arange(n) % 2 == 0, 1.0, -1.0)
    rng.shuffle(q)
    folder.mkdir(parents=True, exist_ok=True)
    np.save(folder / "positions.npy", x)
    np.save(folder / "charges.npy", q)
    np.save(folder / "box.npy", np.diag([length] * 3))
    return folder


def load(np, folder):
    x = np.load(folder / "positions.npy")
    q = np.load(folder / "charges.npy").reshape(-1)
    b = np.load(folder / "box.npy")
    if b.size == 3:
        b = np.diag(b.reshape(-1))
    return x, q, b.reshape(3, 3)


# ----------------------------------------------------------------------------- ours
def run_ours(folder, method, tol, threads, repeats, out, device=None, binary=None, extra=()):
    """`device` = None (CPU) or the grid precision ("f32", "f64") of `--backend cuda`; `binary`:
    another farfield tool (default BIN); `extra`: more CLI arguments (parameter overrides)."""
    cmd = [str(binary or BIN), "ewald", "--input", str(folder), "--method", method, "--tol", repr(tol),
           "--threads", str(threads), "--repeats", str(repeats), "--json", "--out", str(out)]
    if device is not None and method != "direct":
        cmd += ["--backend", "cuda", "--prec", device]
    cmd += list(extra)
    p = subprocess.run(cmd, capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr}")
    return json.loads(p.stdout.strip().splitlines()[-1])


def ours_forces(np, out, q):
    e = np.load(out / "field.npy")
    return KJ * q[:, None] * e


# ----------------------------------------------------------------------------- OpenMM
def openmm_context(mm, unit, x, q, box, cutoff, tol, threads, gpu=None, platform="OpenCL"):
    """`gpu` = None (CPU platform, `threads`) or the precision on `platform` (OpenCL, CUDA)."""
    system = mm.System()
    for _ in range(len(q)):
        system.addParticle(1.0)
    nb = mm.NonbondedForce()
    nb.setNonbondedMethod(mm.NonbondedForce.PME)
    nb.setCutoffDistance(cutoff * unit.nanometer)
    nb.setEwaldErrorTolerance(tol)
    nb.setUseDispersionCorrection(False)
    nb.setUseSwitchingFunction(False)
    for qi in q:
        nb.addParticle(float(qi), 1.0, 0.0)
    system.addForce(nb)
    vecs = [mm.Vec3(*[float(v) for v in row]) for row in box]
    system.setDefaultPeriodicBoxVectors(*vecs)
    integ = mm.VerletIntegrator(0.001)
    if gpu is None:
        ctx = mm.Context(system, integ, mm.Platform.getPlatformByName("CPU"), {"Threads": str(threads)})
    else:
        ctx = mm.Context(system, integ, mm.Platform.getPlatformByName(platform), {"Precision": gpu})
    ctx.setPositions(x)
    return ctx, nb, integ


def run_openmm(mm, unit, np, x, q, box, cutoff, tol, threads, repeats, gpu=None, platform="OpenCL"):
    t = time.perf_counter()
    ctx, nb, integ = openmm_context(mm, unit, x, q, box, cutoff, tol, threads, gpu, platform)
    st = ctx.getState(getEnergy=True, getForces=True)  # warm-up (also builds the PME plans)
    plan_s = time.perf_counter() - t
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        st = ctx.getState(getEnergy=True, getForces=True)
        times.append(time.perf_counter() - t)
    best = min(times)
    e = st.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    f = np.asarray(st.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer))
    alpha, nx, ny, nz = nb.getPMEParametersInContext(ctx)
    del ctx, integ
    return {"energy_kj_mol": e, "time_s": best, "times_s": times, "plan_s": plan_s, "alpha": alpha, "grid": [nx, ny, nz]}, f


def platform_problem(mm, name):
    """None when OpenMM has the platform `name`, else why not (its plugin load failures)."""
    try:
        mm.Platform.getPlatformByName(name)
        return None
    except Exception as e:  # noqa: BLE001  (OpenMMException)
        fails = [f for f in mm.Platform.getPluginLoadFailures() if name.lower() in f.lower()]
        return f"{e}" + (f"; plugin load failures: {' | '.join(fails)}" if fails else "")


def reference(folder, q, threads, cache, tmp):
    """The classic Ewald sum at tol 1e-8: (CLI JSON line, field, wall seconds, cached?)."""
    import numpy as np
    if cache is not None and (cache / "field.npy").exists() and (cache / "reference.json").exists():
        r = json.loads((cache / "reference.json").read_text())
        return r, np.load(cache / "field.npy"), r.get("wall_s", float("nan")), True
    out = cache if cache is not None else tmp / "ref"
    t = time.perf_counter()
    r = run_ours(folder, "direct", 1e-8, threads, 1, out)
    r["wall_s"] = time.perf_counter() - t
    if cache is not None:
        (cache / "reference.json").write_text(json.dumps(r))
    return r, np.load(out / "field.npy"), r["wall_s"], False


def capi_lib(path):
    for p in ([Path(path)] if path else [BUNDLE / "libfarfield.so", ROOT / "target" / "release" / "libfarfield.so"]):
        if p.exists():
            return p
    sys.exit("libfarfield.so not found (build-gpu/ or target/release/): pass --lib")


def rel_rms(np, f, fref):
    return float(np.sqrt(np.sum((f - fref) ** 2) / np.sum(fref ** 2)))


def best_meeting(rows, target):
    ok = [r for r in rows if r.get("status", "ok") == "ok" and r["force_err"] <= target]
    return min(ok, key=lambda r: r["time_s"]) if ok else None


# ----------------------------------------------------------------------------- main
def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--systems", default="jac,random", help="comma list of jac, random")
    ap.add_argument("--n-random", type=int, default=100000)
    ap.add_argument("--target", type=float, default=1e-5, help="relative RMS force error to reach")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--ours-tols", default="3e-4,1e-4,5e-5,3e-5,2e-5,1e-5")
    ap.add_argument("--ours-methods", default="spme,spectral")
    ap.add_argument("--openmm-cutoffs", default="0.8,0.9,1.0,1.2")
    ap.add_argument("--openmm-tols", default="5e-4,2e-4,1e-4,5e-5,2e-5,1e-5,5e-6")
    ap.add_argument("--ours-bins", default="",
                    help="NAME=PATH,...: more farfield tools timed on the same tols in the same run (A/B)")
    ap.add_argument("--ours-settings", default="",
                    help="explicit parameters, ';'-separated, each 'rc=R,grid=K[,xi=X,order=P]': ours with "
                         "these overrides (the first --ours-tols entry fills the rest), e.g. a cutoff sweep")
    ap.add_argument("--build", action="store_true")
    ap.add_argument("--json", type=Path, help="write all rows to this file")
    ap.add_argument("--gpu", action="store_true",
                    help="on a GPU machine: ours with --backend cuda, OpenMM on its OpenCL platform")
    ap.add_argument("--ours-prec", default="f32", help="with --gpu: grid precision of ours (f32, f64)")
    ap.add_argument("--openmm-precision", default="single", help="with --gpu: OpenMM precision (single, mixed, double)")
    ap.add_argument("--openmm-platform", default="",
                    help="comma list of OpenMM platforms (default: OpenCL with --gpu, else CPU), e.g. CUDA,OpenCL")
    ap.add_argument("--ours-host", action="store_true",
                    help="also ours through the C API with host arrays (forces on the host; ewald_capi.py)")
    ap.add_argument("--lib", help="libfarfield.so for --ours-host (default build-gpu/, then target/release/)")
    ap.add_argument("--reference", type=Path, help="folder caching the reference field (read if there, else written)")
    ap.add_argument("--no-openmm", action="store_true", help="ours only: no OpenMM, no virtual environment")
    ap.add_argument("--skip-crosscheck", action="store_true", help="no OpenMM energy cross-check at tolerance 1e-7")
    args = ap.parse_args()
    platforms = [p for p in (args.openmm_platform or ("OpenCL" if args.gpu else "CPU")).split(",") if p]
    if not args.no_openmm:
        ensure_venv()
    ensure_binary(args.build)
    import numpy as np
    if args.no_openmm:
        mm = unit = None
        log(f"OpenMM not used; load average {os.getloadavg()}")
    else:
        import openmm as mm
        from openmm import unit
        log(f"OpenMM {mm.__version__}; load average {os.getloadavg()}")
    capi = None
    if args.ours_host:
        from ewald_capi import EwaldCapi
        capi = EwaldCapi(capi_lib(args.lib))
    tmp = Path(tempfile.mkdtemp(prefix="ff-ewald-peers-"))
    systems = []
    for s in args.systems.split(","):
        if s == "jac":
            if JAC is None or not (JAC / "positions.npy").exists():
                log(f"skipping jac: {JAC or 'FARFIELD_DATA_DIR/jac_dhfr'} not found")
                continue
            systems.append(("JAC DHFR", JAC))
        elif s == "random":
            systems.append((f"random neutral {args.n_random:.0e}", random_system(np, args.n_random, 100.0, 7, tmp / "random")))
        else:
            sys.exit(f"unknown system {s}")

    table = []
    all_rows = {}
    for name, folder in systems:
        x, q, box = load(np, folder)
        n = len(q)
        log(f"== {name}: {n} charges, box diag {np.diag(box)}")
        cache = args.reference if args.reference and folder == JAC else None
        if cache is not None:
            cache.mkdir(parents=True, exist_ok=True)
        ref, eref, ref_s, cached = reference(folder, q, args.threads, cache, tmp)
        fref = KJ * q[:, None] * eref.reshape(-1, 3)
        uref = ref["energy"] * KJ
        log(f"reference (classic Ewald sum, tol 1e-8): {uref:.6f} kJ/mol, "
            + (f"read from {cache} (computed in {ref_s:.1f} s)" if cached else f"computed in {ref_s:.1f} s"))
        if not (args.no_openmm or args.skip_crosscheck):
            chk, _ = run_openmm(mm, unit, np, x, q, box, 1.2, 1e-7, args.threads, 1)
            log(f"cross-check: OpenMM PME at ewaldErrorTolerance 1e-7: {chk['energy_kj_mol']:.6f} kJ/mol "
                f"(rel. diff {abs(chk['energy_kj_mol'] - uref) / abs(uref):.2e})")

        rows = [{"code": "reference", "setting": "classic Ewald sum, tol 1e-8", "status": "reference", "time_s": ref_s,
                 "cached": cached, "energy_kj_mol": uref}]
        bins = [("", None)] + [tuple(b.split("=", 1)) for b in args.ours_bins.split(",") if b]
        runs = [(label, binary, method, tol, f"tol {tol:g}", ())
                for label, binary in bins for method in args.ours_methods.split(",") for tol in floats(args.ours_tols)]
        for setting in (s for s in args.ours_settings.split(";") if s):
            extra = [a for kv in setting.split(",") for a in ("--" + kv.split("=")[0], kv.split("=")[1])]
            runs += [("", None, method, floats(args.ours_tols)[0], setting, extra) for method in args.ours_methods.split(",")]
        for k, (label, binary, method, tol, setting, extra) in enumerate(runs):
            out = tmp / f"ours-{k}"
            code = f"farfield {method}" + (f" [{label}]" if label else "")
            try:
                r = run_ours(folder, method, tol, args.threads, args.repeats, out, args.ours_prec if args.gpu else None, binary, extra)
            except RuntimeError as e:  # one failed setting is reported; the others still run
                why = (str(e).strip().splitlines() or ["?"])[-1]
                log(f"  {code:18} {setting:24} failed: {why}")
                rows.append({"code": code, "setting": setting, "status": "error", "reason": why})
                continue
            f = ours_forces(np, out, q)
            row = {"code": code, "setting": setting, "time_s": r["time_s"], "median_s": r["median_s"],
                   "repeats": args.repeats, "real_s": r["real_s"], "kspace_s": r["kspace_s"],
                   "force_err": rel_rms(np, f, fref), "energy_err": abs(r["energy"] * KJ - uref) / abs(uref),
                   "params": f"xi {r['xi']:.3f}, rc {r['rc']:.3f}, grid {r['grid'][0]}, order {r['order_or_support']}"}
            log(f"  {row['code']:18} {row['setting']:24} {row['time_s']*1e3:8.2f} ms (real {r['real_s']*1e3:.3f}, "
                f"k-space {r['kspace_s']*1e3:.3f})  force err {row['force_err']:.2e}  {row['params']}")
            rows.append(row)
        if capi is not None:
            for method in args.ours_methods.split(","):
                for tol in floats(args.ours_tols):
                    try:
                        r = capi.run(x, q, box, method, tol, "cuda" if args.gpu else "cpu", args.ours_prec, args.repeats,
                                     0 if args.gpu else args.threads, debug_lines=True)
                    except RuntimeError as e:
                        log(f"  farfield {method} host tol {tol:g} failed: {e}")
                        rows.append({"code": f"farfield {method} host", "setting": f"tol {tol:g}", "status": "error",
                                     "reason": str(e)})
                        continue
                    f = KJ * q[:, None] * r["field"]
                    pr = r["params"]
                    row = {"code": f"farfield {method} host", "setting": f"tol {tol:g}", "time_s": min(r["times_s"]),
                           "times_s": r["times_s"], "plan_s": r["plan_s"], "real_s": pr["real_s"], "kspace_s": pr["kspace_s"],
                           "force_err": rel_rms(np, f, fref), "energy_err": abs(r["energy"] * KJ - uref) / abs(uref),
                           "params": f"xi {pr['xi']:.3f}, rc {pr['rc']:.3f}, grid {pr['grid'][0]}, order {pr['order_or_support']}",
                           "debug_lines": r["debug_lines"]}
                    log(f"  {row['code']:18} {row['setting']:24} {row['time_s']*1e3:8.2f} ms  force err {row['force_err']:.2e}  "
                        f"{row['params']}")
                    rows.append(row)
        for platform in ([] if args.no_openmm else platforms):
            code = f"OpenMM {platform + ' ' + args.openmm_precision if platform != 'CPU' else 'CPU'} PME"
            why = platform_problem(mm, platform)
            if why is not None:
                log(f"  {code}: unavailable: {why}")
                rows.append({"code": code, "setting": "-", "status": "unavailable", "reason": why, "version": mm.__version__})
                continue
            for cutoff in floats(args.openmm_cutoffs):
                if 2 * cutoff > min(np.diag(box)):
                    continue
                for tol in floats(args.openmm_tols):
                    try:
                        r, f = run_openmm(mm, unit, np, x, q, box, cutoff, tol, args.threads, args.repeats,
                                          args.openmm_precision if platform != "CPU" else None, platform)
                    except Exception as e:  # noqa: BLE001  (OpenMMException: a context that cannot be made)
                        log(f"  {code:18} rc {cutoff:g}, tol {tol:g} failed: {e}")
                        rows.append({"code": code, "setting": f"rc {cutoff:g}, tol {tol:g}", "status": "error",
                                     "reason": str(e), "version": mm.__version__})
                        continue
                    row = {"code": code, "setting": f"rc {cutoff:g}, tol {tol:g}", "time_s": r["time_s"],
                           "times_s": r["times_s"], "plan_s": r["plan_s"], "version": mm.__version__,
                           "force_err": rel_rms(np, f, fref), "energy_err": abs(r["energy_kj_mol"] - uref) / abs(uref),
                           "params": f"alpha {r['alpha']:.3f}, grid {r['grid'][0]}"}
                    log(f"  {row['code']:18} {row['setting']:24} {row['time_s']*1e3:8.2f} ms  force err {row['force_err']:.2e}  {row['params']}")
                    rows.append(row)
        all_rows[name] = rows
        peers = [(c, best_meeting([r for r in rows if r["code"] == c], args.target))
                 for c in dict.fromkeys(r["code"] for r in rows if r["code"].startswith("OpenMM"))] or [("", None)]
        for code in dict.fromkeys(r["code"] for r in rows if r["code"].startswith("farfield")):
            mine = best_meeting([r for r in rows if r["code"] == code], args.target)
            for pcode, peer in peers:
                table.append((name, n, code.removeprefix("farfield "), mine, pcode, peer))

    load_avg = os.getloadavg()
    where = (f"GPU: ours --backend cuda --prec {args.ours_prec} (CLI: device arrays; 'host': host arrays), "
             f"OpenMM {'/'.join(platforms)} {args.openmm_precision}" if args.gpu else f"{args.threads} threads")
    print(f"\nEwald at relative RMS force error <= {args.target:g} (measured against the classic Ewald sum), "
          f"{where}, fastest of {args.repeats} after a warm-up; load average {load_avg[0]:.1f}\n")
    print("| system | N | ours | ours: setting, error, time | OpenMM | OpenMM: setting, error, time | ours/OpenMM |")
    print("|---|---|---|---|---|---|---|")
    for name, n, method, mine, pcode, peer in table:
        def cell(r):
            return "none meets the target" if r is None else f"{r['setting']} ({r['params']}), {r['force_err']:.1e}, {r['time_s']*1e3:.2f} ms"
        ratio = f"{mine['time_s'] / peer['time_s']:.2f}" if mine and peer else "n/a"
        down = next((r for r in all_rows[name] if r["code"] == pcode and r.get("status") == "unavailable"), None)
        peer_cell = f"unavailable: {down['reason'][:80]}" if down else cell(peer) if pcode else "–"
        print(f"| {name} | {n} | {method} | {cell(mine)} | {pcode.removeprefix('OpenMM ') or '–'} | {peer_cell} | {ratio} |")
    if args.json:
        args.json.write_text(json.dumps(all_rows, indent=1))


if __name__ == "__main__":
    main()
