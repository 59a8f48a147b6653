#!/usr/bin/env python3
"""Calibration runs of the NUFFT cost model (`nufft::params::CostModel`, docs/design.md §9.1).

Runs `farfield bench nufft --type 1` on one thread for D = 1, 2, 3 (N = 10⁶, 1000², 128³),
upsampling factors S and tolerances T (w from the ES table at each S), best of R runs per
configuration, and fits per dimension by least squares

    spread_s = M·(c_pt + c_tap·w^d) + c_grid·Nf          fft_s = c_fft·Nf·log2 Nf

(non-negative constants; the model's form, docs in `params.rs`). Prints per dimension the
fitted constants and a table of each configuration's measured and modelled times.

Usage: calibrate_nufft_cost.py [--farfield target/release/farfield] [--points 2e6]
       [--repeat 2] [--json-out FILE]
Needs numpy. Minutes on a 2-core machine; run it on a quiet machine.
"""
import argparse
import json
import subprocess
import sys

import numpy as np

CASES = {1: [1_000_000], 2: [1000, 1000], 3: [128, 128, 128]}
SIGMAS = [1.25, 1.5, 2.0, 2.5]
TOLS = [1e-3, 1e-6, 1e-9, 1e-12]


def run(exe, dim, modes, m, tol, sigma, repeat):
    """Best (smallest spread_s + fft_s) of `repeat` runs: the JSON record of that run."""
    best = None
    for _ in range(repeat):
        cmd = [exe, "bench", "nufft", "--type", "1", "--dim", str(dim), "--modes", ",".join(map(str, modes)),
               "--points", str(m), "--tol", str(tol), "--upsampfac", str(sigma), "--threads", "1",
               "--check", "0", "--json"]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout.strip().splitlines()[-1]
        rec = json.loads(out)
        if best is None or rec["spread_s"] + rec["fft_s"] < best["spread_s"] + best["fft_s"]:
            best = rec
    return best


def fit(recs, dim):
    """Non-negative least squares of the two fits (a small active-set loop on lstsq)."""
    m = np.array([r["points"] for r in recs], float)
    taps = np.array([r["kernel_width"] ** dim for r in recs], float)
    nf = np.array([np.prod(r["nf"]) for r in recs], float)
    a = np.stack([m, m * taps, nf], axis=1)
    y = np.array([r["spread_s"] for r in recs])
    # relative residuals: every configuration counts alike, whatever its time
    wgt = 1.0 / y
    keep = [0, 1, 2]
    while True:
        c, *_ = np.linalg.lstsq(a[:, keep] * wgt[:, None], y * wgt, rcond=None)
        if (c >= 0).all():
            break
        keep = [k for k, v in zip(keep, c) if v >= 0]
    coef = np.zeros(3)
    coef[keep] = c
    f = np.array([r["fft_s"] for r in recs])
    x = nf * np.log2(nf)
    c_fft = float(np.sum(x * f / f ** 2) / np.sum(x * x / f ** 2))
    return coef[0], coef[1], coef[2], c_fft


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--farfield", default="target/release/farfield")
    ap.add_argument("--points", type=float, default=2e6)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("--dims", default="1,2,3")
    ap.add_argument("--json-out")
    a = ap.parse_args()
    m = int(a.points)
    out = {"points": m, "repeat": a.repeat, "dims": {}}
    for dim in map(int, a.dims.split(",")):
        recs = [run(a.farfield, dim, CASES[dim], m, tol, s, a.repeat) for tol in TOLS for s in SIGMAS]
        c_pt, c_tap, c_grid, c_fft = fit(recs, dim)
        print(f"dim {dim}: c_pt {c_pt:.3g}  c_tap {c_tap:.3g}  c_grid {c_grid:.3g}  c_fft {c_fft:.3g}")
        print("| tol | sigma | w | nf | spread_s | fft_s | total | model |")
        print("|---|---|---|---|---|---|---|---|")
        for r in recs:
            nf = float(np.prod(r["nf"]))
            model = m * (c_pt + c_tap * r["kernel_width"] ** dim) + nf * (c_grid + c_fft * np.log2(nf))
            print(f"| {r['tol']:g} | {r['upsampfac']:g} | {r['kernel_width']} | {'x'.join(map(str, r['nf']))} | "
                  f"{r['spread_s']:.4f} | {r['fft_s']:.4f} | {r['spread_s'] + r['fft_s']:.4f} | {model:.4f} |")
        out["dims"][dim] = {"c_pt": c_pt, "c_tap": c_tap, "c_grid": c_grid, "c_fft": c_fft, "runs": recs}
        sys.stdout.flush()
    if a.json_out:
        with open(a.json_out, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
