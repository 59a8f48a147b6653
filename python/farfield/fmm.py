"""The fast multipole method for the Coulomb kernel ``1/r`` in 3D (Greengard & Rokhlin, J.
Comput. Phys. 73 (1987) 325; rotation-based operators after White & Head-Gordon, J. Chem.
Phys. 101 (1994) 6593), with open or periodic boundaries, on the CPU or a CUDA device.

For charges ``q_j`` at ``x_j`` it computes ``φ(y) = Σ_j q_j / |y − x_j|`` and the field
``E = −∇φ`` at the sources themselves (the particle's own term left out) or at separate
targets, and the energy ``U = ½ Σ_i q_i φ(x_i)``. Periodic boundaries (a cube side, or three
box sides that are integer multiples of a common length) sum over all images with the Ewald
convention (tin-foil boundary, neutralising background for a net charge). Units are the
caller's: no Coulomb constant, no 1/(4π).

``tol`` is the target of the relative l2 error of the potentials and fields over all
evaluation points (a statistical target, calibrated on uniform and clustered sets).
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from . import _device
from ._farfield import _FmmCore

__all__ = ["Plan", "Result", "evaluate"]


@dataclass
class Result:
    """``potential`` ((N,) at the sources, or (T,) at the targets), ``field`` ((N, 3) or
    (T, 3), ``−∇φ``; None when not asked), ``energy`` (of the sources, ``½ Σ q φ``). NumPy
    arrays, or device arrays of the caller's library when the inputs were device arrays."""
    potential: np.ndarray
    field: Optional[np.ndarray]
    energy: float


class Plan:
    """An FMM plan, reusable for any particles.

    Args:
        tol: relative accuracy in (0, 1) (module docs); default 1e-6.
        periodic: None (open boundaries), a cube side, or three box sides (each an integer
            multiple of a common length, e.g. 2:1:1; CPU only).
        order: expansion order (0 = from ``tol``); depth: uniform tree depth (None = chosen);
        tree: ``"auto"``, ``"uniform"`` or ``"adaptive"`` (open boundaries);
        nthreads: CPU threads (0 = all cores); backend: ``"cpu"`` or ``"cuda"``.

    Raises: ``ValueError``/``TypeError`` naming a bad argument; farfield.InvalidArgumentError
    (``tol`` out of range, a box without a common cube side, a non-finite coordinate naming
    its index); farfield.FarfieldError (e.g. no CUDA device)."""

    def __init__(self, tol=1e-6, periodic=None, order=0, depth=None, tree="auto", nthreads=0, backend="cpu", debug=0):
        self._core = _FmmCore(tol, periodic, order, depth, tree, nthreads, backend, debug)

    @property
    def order(self):
        """Expansion order in use."""
        return self._core.order

    def stats(self):
        """Statistics of the last evaluation (dict: order, depth, nleaves, npoints, nthreads,
        tol_clamped)."""
        return self._core.stats()

    def set_exclusions(self, pairs, scales=None):
        """Sets the excluded pairs (replacing earlier ones), as MD force fields need for bonded
        atoms: ``pairs`` (K, 2) int64 indices into the charges; with ``scales`` (K,) each pair
        interacts as ``s q_i q_j / r`` instead (0 = excluded, e.g. 1/1.2 for AMBER 1-4 pairs,
        0.5 for OPLS). After the FMM sum ``(1 − s)`` of each pair's ``1/r`` (nearest image when
        periodic) is removed from the potentials, fields and energy at the sources (targets are
        not corrected). A pair is unordered; indices are checked at the next :meth:`evaluate`
        (farfield.InvalidArgumentError naming the pair). Coincident sources stay an error
        even when excluded."""
        self._core.set_exclusions(pairs, scales)

    def evaluate(self, sources, charges, targets=None, field=True):
        """Potentials (and fields) of ``charges`` (N,) at ``sources`` (N, 3), evaluated at the
        sources or at ``targets`` (T, 3); float64, used without copies when C-ordered. A
        target at a source's position does not see that source. Returns a :class:`Result`.

        On a CUDA plan (``backend="cuda"``) ``sources`` and ``charges`` may be device arrays
        (CuPy, PyTorch, Numba: anything with a ``__cuda_array_interface__``, float64, C
        order): the potentials and fields are then new device arrays of the same library, at
        the sources (``targets`` must be None: a ``TypeError`` otherwise), ready when the call
        returns; a producer's stream is waited for before the plan reads its array."""
        if _device.is_device(sources) or _device.is_device(charges):
            return self._evaluate_device(sources, charges, targets, field)
        r = self._core.evaluate(sources, charges, targets, field)
        return Result(r["potential"], r["field"], r["energy"])

    def _evaluate_device(self, sources, charges, targets, field):
        _device.require(sources, "sources")
        _device.require(charges, "charges")
        if targets is not None:
            raise TypeError("argument `targets`: with device arrays the potentials are evaluated at the sources only "
                            "(targets=None); add targets as sources of charge 0, or pass host arrays")
        n = _device.shape(charges)[0] if len(_device.shape(charges)) == 1 else -1
        if n < 0 or _device.shape(sources) != (n, 3):
            raise ValueError(f"arguments `sources` {_device.shape(sources)} and `charges` {_device.shape(charges)}: "
                             "expected shapes (N, 3) and (N,)")
        phi = _device.empty_like(sources, (n,), np.float64)
        fld = _device.empty_like(sources, (n, 3), np.float64) if field else None
        energy = self._core.evaluate_device(sources, charges, phi, fld)
        return Result(phi, fld, energy)


def evaluate(sources, charges, targets=None, tol=1e-6, periodic=None, field=True, exclusions=None, scales=None, **kwargs):
    """One call: a :class:`Plan` (``tol``, ``periodic`` and ``kwargs``, with ``exclusions`` and
    ``scales`` as :meth:`Plan.set_exclusions` takes them) evaluated once; returns the
    :class:`Result`."""
    p = Plan(tol, periodic, **kwargs)
    if exclusions is not None:
        p.set_exclusions(exclusions, scales)
    return p.evaluate(sources, charges, targets, field)
