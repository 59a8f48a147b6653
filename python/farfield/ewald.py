"""Periodic electrostatics of point charges: smooth particle-mesh Ewald (SPME; Essmann,
Perera, Berkowitz, Darden, Lee & Pedersen, J. Chem. Phys. 103 (1995) 8577), spectral Ewald
(Lindbo & Tornberg, J. Comput. Phys. 229 (2010) 8994) and the classic Ewald sum, in
orthorhombic and triclinic cells, with excluded and scaled pairs.

For charges ``q_i`` at ``r_i`` in a cell with lattice vectors ``a, b, c`` it computes the
potential ``φ_i = Σ_j Σ_n' q_j / |r_i − r_j + n|`` (all periodic images, tin-foil boundary,
self term included so that ``φ_i = ∂U/∂q_i``, a uniform neutralising background for a net
charge), the field ``E_i = −∇_i φ``, the forces ``F_i = q_i E_i``, the energy
``U = ½ Σ q_i φ_i`` and the virial ``W_αβ = −∂U/∂ε_αβ`` (``tr W = U``).

Units are the caller's, as in farfield's C API: Gaussian-like ``1/r`` with no Coulomb constant
(``φ`` in charge/length, ``E`` in charge/length², ``U`` and ``W`` in charge²/length). Multiply
by yours: :data:`COULOMB_KJ_MOL_NM` for kJ/mol with nm and e (GROMACS, OpenMM),
:data:`COULOMB_EV_ANGSTROM` for eV with Å and e (ASE).

``tol`` is a relative RMS force accuracy (RMS force error over the RMS Coulomb force of all
pairs), calibrated on condensed molecular systems; the energy's relative error is of the same
order or smaller.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from . import _device
from ._farfield import _EwaldCore

__all__ = ["Plan", "Result", "compute", "COULOMB_KJ_MOL_NM", "COULOMB_EV_ANGSTROM"]

#: 1/(4πε₀) in kJ mol⁻¹ nm e⁻² (the value of GROMACS and OpenMM)
COULOMB_KJ_MOL_NM = 138.935458
#: 1/(4πε₀) in eV Å e⁻² (CODATA 2018: e / (4πε₀ · 1 Å) in volts)
COULOMB_EV_ANGSTROM = 14.399645478425668


@dataclass
class Result:
    """Results of :meth:`Plan.compute`, in the caller's units without a Coulomb constant:
    ``energy`` (float), ``potentials`` (N,), ``field`` (N, 3), ``forces`` (N, 3) = ``q E``,
    ``virial`` (3, 3); each None when not requested. NumPy arrays, or device arrays of the
    caller's library when the inputs were device arrays."""
    energy: Optional[float]
    potentials: Optional[np.ndarray]
    field: Optional[np.ndarray]
    forces: Optional[np.ndarray]
    virial: Optional[np.ndarray]


class Plan:
    """An Ewald plan for a periodic cell.

    Args:
        box: (3, 3) array whose rows are the lattice vectors a, b, c (lower-triangular:
            ``a = (ax, 0, 0)``, ``b = (bx, by, 0)``, as GROMACS, LAMMPS and OpenMM give them),
            or the three sides of an orthorhombic box; the caller's length unit.
        method: ``"spme"`` (default), ``"spectral"`` or ``"direct"`` (the classic Ewald sum,
            a reference).
        tol: relative RMS force accuracy in (0, 1) (module docs); default 1e-5.
        terms: ``"all"`` (default), ``"kspace"`` (k-space, self and background terms and the
            k-space share of the exclusion corrections: for MD codes with their own real-space
            loop) or ``"real"``.
        n_max: largest number of charges per call; None: the plan is made at the first
            :meth:`compute` for its count and made again when a later call has more.
        xi, rc, grid, order: overrides of the splitting parameter (1/length), the real-space
            cutoff, the grid (three sizes) and the spline order / window support (0 or None =
            chosen from ``tol``).
        nthreads: CPU threads (0 = all cores); backend: ``"cpu"`` or ``"cuda"``.

    Raises: ``ValueError``/``TypeError`` naming a bad argument; farfield.InvalidArgumentError
    (e.g. a cell that is not lower-triangular, ``tol`` out of range); farfield.FarfieldError.
    """

    def __init__(self, box, method="spme", tol=1e-5, terms="all", n_max=None, xi=0.0, rc=0.0, grid=None, order=0,
                 nthreads=0, backend="cpu", debug=0):
        self._core = _EwaldCore(box, method, tol, terms, n_max, float(xi or 0.0), float(rc or 0.0),
                                None if grid is None else tuple(int(g) for g in grid), int(order or 0), nthreads, backend, debug)

    def set_exclusions(self, pairs, scales=None):
        """Sets the excluded pairs (replacing earlier ones): ``pairs`` (K, 2) int64 indices into
        the charges; with ``scales`` (K,) each pair interacts as ``s q_i q_j / r`` instead
        (0 = excluded, e.g. 1/1.2 for AMBER 1-4 pairs, 0.5 for OPLS). A pair is unordered;
        indices are checked at the next :meth:`compute` (farfield.InvalidArgumentError naming
        the pair)."""
        self._core.set_exclusions(pairs, scales)

    def set_box(self, box):
        """Changes the cell (the parameters are kept while the error estimate allows)."""
        self._core.set_box(box)

    @property
    def params(self):
        """The parameters in use (dict: ``xi``, ``rc``, ``grid``, ``order``, ``est_rel_err``,
        ``tol_used``, ``warnings``, timings ``real_s``, ``kspace_s``), None before the first
        :meth:`compute` when ``n_max`` was not given."""
        return self._core.params()

    def compute(self, positions, charges, potentials=True, forces=True, energy=True, virial=False):
        """Evaluates for ``positions`` (N, 3) float64 (any values: wrapped into the cell) and
        ``charges`` (N,) float64, both used without copies when C-ordered float64 arrays.
        Returns a :class:`Result` (``forces`` also gives ``field``).

        On a CUDA plan (``backend="cuda"``) ``positions`` and ``charges`` may be device arrays
        (CuPy, PyTorch, Numba: anything with a ``__cuda_array_interface__``, float64, C
        order): ``potentials`` and ``field`` are then new device arrays of the same library,
        ``forces`` = ``field * charges[:, None]`` computed by that library (None for arrays
        without arithmetic, e.g. Numba's: use ``field``); a producer's stream is waited for
        before the plan reads its array. Errors as for host arrays, and
        farfield.FarfieldError for device arrays on a CPU plan."""
        if _device.is_device(positions) or _device.is_device(charges):
            return self._compute_device(positions, charges, potentials, forces, energy, virial)
        r = self._core.compute(positions, charges, potentials, forces, energy, virial)
        f = r["field"]
        frc = None
        if f is not None:
            q = charges if isinstance(charges, np.ndarray) else np.asarray(charges, dtype=np.float64)
            frc = f * q[:, None]
        return Result(r["energy"], r["potentials"], f, frc, r["virial"])

    def _compute_device(self, positions, charges, potentials, forces, energy, virial):
        _device.require(positions, "positions")
        _device.require(charges, "charges")
        qs = _device.shape(charges)
        if len(qs) != 1 or _device.shape(positions) != (qs[0], 3):
            raise ValueError(f"arguments `positions` {_device.shape(positions)} and `charges` {qs}: "
                             "expected shapes (N, 3) and (N,)")
        n = qs[0]
        phi = _device.empty_like(positions, (n,), np.float64) if potentials else None
        fld = _device.empty_like(positions, (n, 3), np.float64) if forces else None
        r = self._core.compute_device(positions, charges, phi, fld, energy, virial)
        frc = None
        if fld is not None:
            try:
                frc = fld * charges[:, None]
            except TypeError:
                frc = None  # an array library without arithmetic: the field is the result
        return Result(r["energy"], phi, fld, frc, r["virial"])


def compute(box, positions, charges, method="spme", tol=1e-5, exclusions=None, scales=None, virial=False, **kwargs):
    """One call: a :class:`Plan` for ``box`` (and ``exclusions``/``scales``), evaluated once
    for ``positions`` and ``charges``; returns the :class:`Result`."""
    p = Plan(box, method, tol, **kwargs)
    if exclusions is not None:
        p.set_exclusions(exclusions, scales)
    return p.compute(positions, charges, virial=virial)
