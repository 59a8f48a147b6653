#!/usr/bin/env python3
"""Calibration of the Ewald error model (`src/ewald/params.rs`) on real systems.

Usage (from the repository root; builds target/release/farfield if it is missing):

    python3 benches/calibrate_ewald.py --data DIR                    # measured / tol per system
    python3 benches/calibrate_ewald.py --data DIR --systems jac_dhfr --methods spme --tols 1e-5

DIR is the folder of real inputs (`FARFIELD_DATA_DIR`, docs/design.md §11.1: `jac_dhfr`,
`water_tip3p_900`, `dna_dodecamer`, `adk_oplsaa`, `src_kinase`). For each system the reference
is the classic Ewald sum at tol 1e-8 (`farfield ewald --method direct`, cached under
target/ewald_refs). For each method and tol the script runs `farfield ewald` with its automatic
parameters and prints the measured relative RMS force error `sqrt(Σ q²|E − E_ref|² / Σ q²|E_ref|²)`,
its ratio to tol (the goal: within [1/3, 1]), the chosen ξ, r_c, grid and order, the time per
evaluation and the ratio `F_rms / F_s` of the system's RMS force to the model's force scale
`F_s = (Σq²/N) (N/V)^{2/3}`.
"""

import argparse
import json
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "peers"))
from peer_env import BIN, ROOT, ensure_binary, ensure_venv  # noqa: E402

ensure_venv(ROOT / ".venv-peers", ["numpy"], probe="import numpy")
import numpy as np  # noqa: E402

SYSTEMS = ["water_tip3p_900", "dna_dodecamer", "jac_dhfr", "adk_oplsaa", "src_kinase"]


def run(args):
    out = subprocess.run([str(BIN), "ewald", "--json", *args], check=True, capture_output=True, text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def reference(sysdir, cache, threads):
    d = cache / sysdir.name
    if not (d / "field.npy").exists():
        run(["--input", str(sysdir), "--method", "direct", "--tol", "1e-8", "--repeats", "0",
             "--threads", str(threads), "--out", str(d)])
    return np.load(d / "field.npy")


def rel_err(sysdir, q, ref, extra, tmp, threads, repeats):
    j = run(["--input", str(sysdir), "--threads", str(threads), "--repeats", str(repeats), "--out", str(tmp), *extra])
    e = np.load(tmp / "field.npy")
    q2 = q[:, None] ** 2
    err = float(np.sqrt(np.sum(q2 * (e - ref) ** 2) / np.sum(q2 * ref ** 2)))
    return err, j


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--data", type=Path, required=True, help="folder of the real inputs")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--methods", default="spme,spectral")
    ap.add_argument("--tols", default="1e-3,1e-4,1e-5,1e-6")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--repeats", type=int, default=0, help="timed evaluations per run (0: no timing)")
    ap.add_argument("--json", type=Path, help="write all rows to this file")
    a = ap.parse_args()
    ensure_binary()
    cache = ROOT / "target" / "ewald_refs"
    tmp = cache / "run"
    rows = []
    print("| system | method | tol | measured | / tol | F_rms/F_s | ξ | r_c | grid | order | ms |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |")
    for s in a.systems.split(","):
        sysdir = a.data / s
        q = np.load(sysdir / "charges.npy")
        box = np.load(sysdir / "box.npy")
        vol = abs(np.linalg.det(box.reshape(3, 3) if box.size == 9 else np.diag(box)))
        ref = reference(sysdir, cache, a.threads)
        n = len(q)
        f_s = np.sum(q * q) / n * (n / vol) ** (2 / 3)
        f_rms = np.sqrt(np.mean(np.sum((q[:, None] * ref) ** 2, axis=1)))
        for m in a.methods.split(","):
            for t in a.tols.split(","):
                err, j = rel_err(sysdir, q, ref, ["--method", m, "--tol", t], tmp, a.threads, a.repeats)
                row = dict(system=s, method=m, tol=float(t), err=err, frms_fs=f_rms / f_s, xi=j["xi"], rc=j["rc"],
                           grid=j["grid"], order=j["order_or_support"], est=j["est_rel_err"],
                           ms=(j["time_s"] or 0) * 1e3)
                rows.append(row)
                print(f"| {s} | {m} | {t} | {err:.2e} | {err / float(t):.2f} | {f_rms / f_s:.1f} | {j['xi']:.3f} | "
                      f"{j['rc']:.3f} | {'×'.join(map(str, j['grid']))} | {j['order_or_support']} | {row['ms']:.1f} |", flush=True)
    if a.json:
        a.json.write_text(json.dumps(rows, indent=1))


if __name__ == "__main__":
    main()
