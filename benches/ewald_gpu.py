#!/usr/bin/env python3
"""Time per evaluation of the device Ewald plan (`farfield ewald --backend cuda`) on a real
system, f64 and f32 grids, at several tolerances, with the relative RMS force error against a
reference field. Needs numpy and a CUDA device.

    # once, anywhere (the classic Ewald sum at tol 1e-8 is slow: minutes on 2 cores)
    farfield ewald --input DATA/jac_dhfr --method direct --tol 1e-8 --repeats 0 --out REF
    # on the GPU machine
    python3 benches/ewald_gpu.py --input DATA/jac_dhfr --reference REF [--bin build-gpu/farfield]

Prints a Markdown table: method, precision, tol, ξ, r_c, grid, order/support, best and median
ms per evaluation (energy + potentials + fields, device arrays, `--repeats` timed runs after a
warm-up) and the measured relative RMS force error `‖q(E − E_ref)‖ / ‖q E_ref‖`; and the CPU
plan on all cores from the same binary for comparison.
"""

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np


def run(binary, args):
    out = subprocess.run([binary, "ewald", *args, "--json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--input", required=True, help="folder with positions.npy, charges.npy, box.npy")
    ap.add_argument("--reference", required=True, help="folder with the reference field.npy")
    ap.add_argument("--bin", default="build-gpu/farfield")
    ap.add_argument("--methods", default="spme,spectral")
    ap.add_argument("--tols", default="1e-4,3e-5,1e-5,1e-6")
    ap.add_argument("--repeats", type=int, default=20)
    ap.add_argument("--cpu-threads", type=int, default=0, help="threads of the CPU comparison (0 = all; -1 = none)")
    ap.add_argument("--gpu-methods", default="auto", help="spreading methods of the device runs, e.g. auto,gm,gm-sort,sm")
    args = ap.parse_args()
    q = np.load(Path(args.input) / "charges.npy")
    ref = np.load(Path(args.reference) / "field.npy").reshape(-1, 3)
    fref = q[:, None] * ref

    def err(folder):
        f = q[:, None] * np.load(Path(folder) / "field.npy").reshape(-1, 3)
        return float(np.sqrt(((f - fref) ** 2).sum() / (fref ** 2).sum()))

    print("| backend | method | grids | tol | xi (1/nm) | r_c (nm) | grid | order | best ms | median ms | rel. RMS force error |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for method in args.methods.split(","):
            for tol in args.tols.split(","):
                runs = [("cuda", p, g) for g in args.gpu_methods.split(",") for p in ("f64", "f32")]
                runs += [("cpu", "f64", "-")] if args.cpu_threads >= 0 else []
                for backend, prec, gm in runs:
                    extra = ["--backend", backend, "--prec", prec, "--gpu-method", gm] if backend == "cuda" else ["--threads", str(args.cpu_threads)]
                    r = run(args.bin, ["--input", args.input, "--method", method, "--tol", tol, "--repeats", str(args.repeats),
                                       "--out", tmp, *extra])
                    label = f"cuda ({gm})" if backend == "cuda" else f"cpu ({r['threads']} threads)"
                    print(f"| {label} | {method} | {prec if backend == 'cuda' else '-'} | {tol} | {r['xi']:.4f} | {r['rc']:.4f} | "
                          f"{'x'.join(map(str, r['grid']))} | {r['order_or_support']} | {1e3 * r['time_s']:.3f} | "
                          f"{1e3 * r['median_s']:.3f} | {err(tmp):.2e} |", flush=True)


if __name__ == "__main__":
    sys.exit(main())
