#!/usr/bin/env python3
"""Periodic electrostatics of the JAC DHFR benchmark (23,558 atoms, cubic box 6.164 nm, net
charge −11 e; data/jac_dhfr: positions nm, charges e, box nm) with farfield.ewald: SPME and
spectral Ewald at --tol against an SPME reference at 1e-9, energies in kJ/mol (Coulomb constant
138.935458 kJ mol⁻¹ nm e⁻², the neutralising background of the net charge included).

    python3 examples/python/spme_dhfr.py [--tol 1e-5] [--atoms 0 (all)] [--json]

Prints the energy, the relative energy and RMS force errors against the reference, and the
time of one evaluation (after the plan is made).
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

from farfield import ewald

ROOT = Path(__file__).resolve().parents[2]
# the repository's data folder, or another of the same layout (FARFIELD_DATA_DIR, docs/design.md §11.1)
DATA = Path(os.environ.get("FARFIELD_DATA_DIR") or ROOT / "data")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tol", type=float, default=1e-5)
    ap.add_argument("--atoms", type=int, default=0, help="use only the first ATOMS atoms (0 = all)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    d = DATA / "jac_dhfr"
    pos, q, box = (np.load(d / f) for f in ("positions.npy", "charges.npy", "box.npy"))
    if a.atoms:
        pos, q = np.ascontiguousarray(pos[: a.atoms]), np.ascontiguousarray(q[: a.atoms])
    ke = ewald.COULOMB_KJ_MOL_NM
    ref = ewald.compute(box, pos, q, tol=1e-9)
    out = {"atoms": len(q), "net_charge": float(q.sum()), "reference_energy_kj_mol": ke * ref.energy, "methods": {}}
    for method in ("spme", "spectral"):
        plan = ewald.Plan(box, method=method, tol=a.tol, n_max=len(q))
        t0 = time.perf_counter()
        r = plan.compute(pos, q)
        dt = time.perf_counter() - t0
        out["methods"][method] = {
            "energy_kj_mol": ke * r.energy,
            "energy_rel_error": abs(r.energy - ref.energy) / abs(ref.energy),
            "force_rel_rms_error": float(np.linalg.norm(r.forces - ref.forces) / np.linalg.norm(ref.forces)),
            "seconds": dt, "params": {k: v for k, v in plan.params.items() if k in ("xi", "rc", "grid", "order")},
        }
    if a.json:
        print(json.dumps(out))
    else:
        print(f"JAC DHFR: {out['atoms']} atoms, net charge {out['net_charge']:+.3f} e, reference energy "
              f"{out['reference_energy_kj_mol']:.6f} kJ/mol (SPME at 1e-9)")
        for m, r in out["methods"].items():
            print(f"{m:9s} tol {a.tol:g}: energy {r['energy_kj_mol']:.6f} kJ/mol, rel. energy error "
                  f"{r['energy_rel_error']:.2e}, rel. RMS force error {r['force_rel_rms_error']:.2e}, {r['seconds']:.3f} s, {r['params']}")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
