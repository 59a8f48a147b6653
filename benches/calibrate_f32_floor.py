#!/usr/bin/env python3
"""Calibration runs of the single-precision rounding floor of the NUFFT
(`nufft::params::rounding_floor`, docs/design.md §9.5).

Runs `farfield bench nufft --prec f32` for types 1, 2, 3 in 1D–3D at upsampling factors S
(0 = automatic) and tolerances T (8 per decade from 1e-2 to 1e-7), checks `--check` outputs
against direct sums in double precision, and records per run the kernel width, σ, the
tolerance used and the relative l2 error. Writes one JSON object with the machine and every
run; prints a table of error / tol_used.

Usage: calibrate_f32_floor.py [--farfield target/release/farfield] [--json-out FILE]
       [--sigmas 0,1.25,1.5,2] [--prec f32] [--types 1,2,3]
"""
import argparse
import json
import platform
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "gpu"))
import kit_machine  # noqa: E402  (the one description of the host)

# modes per axis and points per dimension: small enough for direct sums over every output
SIZES = {1: ("400", 2000), 2: ("40,48", 3000), 3: ("16,18,20", 3000)}


def run(exe, ty, dim, tol, sigma, prec, modes, m, seed):
    cmd = [exe, "bench", "nufft", "--type", str(ty), "--dim", str(dim), "--modes", modes, "--points", str(m),
           "--tol", repr(tol), "--upsampfac", str(sigma), "--prec", prec, "--threads", "1",
           "--check", "400", "--seed", str(seed), "--json"]
    out = subprocess.run(cmd, capture_output=True, text=True)
    if out.returncode != 0:
        return {"cmd": " ".join(cmd[1:]), "failed": out.stderr.strip()[-300:]}
    rec = json.loads(out.stdout.strip().splitlines()[-1])
    rec["cmd"] = " ".join(cmd[1:])
    return rec



def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--farfield", default="target/release/farfield")
    ap.add_argument("--json-out")
    ap.add_argument("--sigmas", default="0,1.25,1.5,2")
    ap.add_argument("--prec", default="f32")
    ap.add_argument("--types", default="1,2,3")
    ap.add_argument("--dims", default="1,2,3")
    ap.add_argument("--seeds", default="1")
    a = ap.parse_args()
    tols = [10 ** (-2 - k / 8) for k in range(41)]
    recs = []
    for ty in map(int, a.types.split(",")):
        for dim in map(int, a.dims.split(",")):
            modes, m = SIZES[dim]
            for sigma in map(float, a.sigmas.split(",")):
                worst = 0.0
                for tol in tols:
                    for seed in map(int, a.seeds.split(",")):
                        r = run(a.farfield, ty, dim, tol, sigma, a.prec, modes, m, seed)
                        r.update({"type": ty, "dim": dim, "sigma_arg": sigma, "tol": tol, "seed": seed})
                        recs.append(r)
                        if "failed" in r:
                            print(f"type {ty} dim {dim} σ {sigma} tol {tol:.2e}: FAILED {r['failed']}")
                            continue
                        ratio = r["rel_error"] / r["tol_used"]
                        worst = max(worst, ratio)
                        print(f"type {ty} dim {dim} σ {sigma:4} tol {tol:.2e} w {r['kernel_width']:2} σ_used {r['upsampfac']:.2f} "
                              f"tol_used {r['tol_used']:.2e} err {r['rel_error']:.2e} err/tol_used {ratio:6.2f}"
                              f"{'  WARN' if r['tol_used'] > tol * (1 + 1e-12) else ''}", flush=True)
                print(f"== type {ty} dim {dim} σ {sigma}: worst err/tol_used {worst:.2f}")
    out = {"machine": {"cpu": kit_machine.cpu()["model"], "python": platform.python_version()}, "prec": a.prec, "runs": recs}
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    sys.exit(main())
