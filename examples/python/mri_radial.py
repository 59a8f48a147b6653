#!/usr/bin/env python3
"""MRI reconstruction from radial k-space with farfield.nufft (the Python version of the
`farfield demo` MRI section, docs/design.md §11.1).

The real MR head slice data/images/mri_s1045_256.npy (optionally block-averaged to --n pixels
per side) is sampled on a golden-angle radial trajectory (spoke angle s·π(√5 − 1)/2, 2N
readout points per spoke, k ∈ [−π, π)²) with a 2D type-2 NUFFT of the forward model
F(k) = Σ f[y, x] e^{−i (k_y y + k_x x)} (centred pixel coordinates), then reconstructed by the
type-1 adjoint with ramp density compensation (scaled by its least-squares factor) and by
conjugate gradients on the density-weighted normal equations A^H W A x = A^H W y.

    python3 examples/python/mri_radial.py [--n 128] [--spokes 0 (= N·π/2)] [--iters 10] [--json]

Prints the relative l2 errors of both reconstructions against the image (--json: one JSON line).
"""

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np

import farfield.nufft as finufft

ROOT = Path(__file__).resolve().parents[2]
# the repository's data folder, or another of the same layout (FARFIELD_DATA_DIR, docs/design.md §11.1)
DATA = Path(os.environ.get("FARFIELD_DATA_DIR") or ROOT / "data")


def load_image(n):
    img = np.load(DATA / "images" / "mri_s1045_256.npy").astype(np.float64)
    b = img.shape[0] // n
    return img[: n * b, : n * b].reshape(n, b, n, b).mean(axis=(1, 3))


def trajectory(n, spokes):
    golden = np.pi * (np.sqrt(5) - 1) / 2
    r = np.linspace(-np.pi, np.pi, 2 * n, endpoint=False)
    ang = golden * np.arange(spokes)
    return np.outer(np.sin(ang), r).ravel(), np.outer(np.cos(ang), r).ravel()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--spokes", type=int, default=0)
    ap.add_argument("--iters", type=int, default=10)
    ap.add_argument("--eps", type=float, default=1e-6)
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    n = a.n
    spokes = a.spokes or int(np.ceil(n * np.pi / 2))
    img = load_image(n)
    ky, kx = trajectory(n, spokes)
    t0 = time.perf_counter()
    # forward model A (type 2, sign −1) and its adjoint A^H (type 1, sign +1) as reusable plans
    fwd = finufft.Plan(2, (n, n), eps=a.eps, isign=-1)
    fwd.setpts(ky, kx)
    adj = finufft.Plan(1, (n, n), eps=a.eps, isign=1)
    adj.setpts(ky, kx)
    y = fwd.execute(img.astype(np.complex128))
    w = np.hypot(ky, kx)
    w /= w.max()
    x0 = adj.execute(w * y)
    scale = np.vdot(x0, img).real / np.vdot(x0, x0).real
    err_adj = np.linalg.norm(scale * x0 - img) / np.linalg.norm(img)
    # CG on A^H W A x = A^H W y from x = 0
    normal = lambda v: adj.execute(w * fwd.execute(v))
    x = np.zeros((n, n), complex)
    r = x0.copy()
    p = r.copy()
    rr = np.vdot(r, r).real
    for _ in range(a.iters):
        q = normal(p)
        alpha = rr / np.vdot(p, q).real
        x += alpha * p
        r -= alpha * q
        rr_new = np.vdot(r, r).real
        p = r + (rr_new / rr) * p
        rr = rr_new
    err_cg = np.linalg.norm(x.real - img) / np.linalg.norm(img)
    res = {"n": n, "spokes": spokes, "samples": int(ky.size), "adjoint_rel_error": float(err_adj),
           "cg_rel_error": float(err_cg), "cg_iters": a.iters, "seconds": time.perf_counter() - t0}
    if a.json:
        print(json.dumps(res))
    else:
        print(f"{spokes} spokes × {2 * n} samples of a {n}×{n} image")
        print(f"adjoint with ramp density compensation: rel l2 error {err_adj:.4f} (scaled by {scale:.4g})")
        print(f"conjugate gradients, {a.iters} iterations:  rel l2 error {err_cg:.4f}   ({res['seconds']:.2f} s)")
    return res


if __name__ == "__main__":
    main(sys.argv[1:])
