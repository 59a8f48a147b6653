#!/usr/bin/env python3
"""The FMM on a Plummer cluster with farfield.fmm: N random charges (±, Gaussian) at positions
drawn from a Plummer sphere (radius r = a / sqrt(u^(−2/3) − 1), u uniform; Aarseth, Hénon &
Wielen, Astron. Astrophys. 37 (1974) 183; cut at 20a), potentials and fields at --tol,
checked against a direct NumPy sum at --check random particles.

    python3 examples/python/fmm_plummer.py [--n 100000] [--tol 1e-6] [--check 200] [--json]
"""

import argparse
import json
import sys
import time

import numpy as np

from farfield import fmm


def plummer(rng, n, a=1.0):
    r = a / np.sqrt(rng.uniform(0, 1, n) ** (-2.0 / 3.0) - 1.0)
    r = np.minimum(r, 20 * a)
    v = rng.standard_normal((n, 3))
    return v / np.linalg.norm(v, axis=1)[:, None] * r[:, None]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=100000)
    ap.add_argument("--tol", type=float, default=1e-6)
    ap.add_argument("--check", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    rng = np.random.default_rng(a.seed)
    x = plummer(rng, a.n)
    q = rng.standard_normal(a.n)
    plan = fmm.Plan(tol=a.tol)
    t0 = time.perf_counter()
    r = plan.evaluate(x, q)
    dt = time.perf_counter() - t0
    idx = rng.choice(a.n, size=min(a.check, a.n), replace=False)
    d = x[idx][:, None, :] - x[None, :, :]
    dist = np.linalg.norm(d, axis=-1)
    dist[np.arange(len(idx)), idx] = np.inf
    phi = (q[None, :] / dist).sum(1)
    e = (q[None, :, None] * d / dist[..., None] ** 3).sum(1)
    out = {"n": a.n, "tol": a.tol, "seconds": dt, "stats": plan.stats(),
           "potential_rel_error": float(np.linalg.norm(r.potential[idx] - phi) / np.linalg.norm(phi)),
           "field_rel_error": float(np.linalg.norm(r.field[idx] - e) / np.linalg.norm(e))}
    if a.json:
        print(json.dumps(out))
    else:
        print(f"Plummer cluster, {a.n} charges, tol {a.tol:g}: {dt:.3f} s ({out['stats']})")
        print(f"against the direct sum at {len(idx)} particles: potential rel. error {out['potential_rel_error']:.2e}, "
              f"field rel. error {out['field_rel_error']:.2e}")
    return out


if __name__ == "__main__":
    main(sys.argv[1:])
