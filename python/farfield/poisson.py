"""Free-space Poisson solvers on uniform 2D and 3D grids: ``∇²φ = −ρ`` with ``φ → 0`` at
infinity (3D; in 2D ``φ ~ −Q ln|x| / (2π)``), i.e. ``φ = G ∗ ρ`` with ``G = 1/(4π|x|)`` (3D)
or ``G = −ln|x| / (2π)`` (2D), ρ taken as zero outside the grid.

Grid: ``rho[i, j, k]`` is the source at node ``origin + (i h1, j h2, k h3)`` (C order; the
origin does not enter), float64. Units are the caller's: lengths in the unit of ``h``, φ in
units of ρ·length². Methods (Mayani, Montanaro, Cerfon, Frey, Muralikrishnan & Adelmann, ACM
Trans. Math. Softw. 51(3) (2025); Hockney & Eastwood 1988; Vico, Greengard & Ferrando, J.
Comput. Phys. 323 (2016) 191):

* ``"vico"`` (default): Vico–Greengard, spectrally accurate for smooth sources;
* ``"vico_dct"``: the same kernel from a DCT-I (less memory while planning);
* ``"hockney"``: Hockney–Eastwood, second order.
"""

from dataclasses import dataclass
from typing import Optional

import numpy as np

from ._farfield import _PoissonCore

__all__ = ["Plan", "Solution", "solve"]


@dataclass
class Solution:
    """``phi``: the potential (the grid's shape); ``field``: ``E = −∇φ`` of shape
    ``(dim, *shape)``, component ``a`` along grid axis ``a`` (None unless asked);
    ``energy``: ``U = ½ Σ ρ φ Π h`` (≈ ½∫ρφ)."""
    phi: np.ndarray
    field: Optional[np.ndarray]
    energy: float


class Plan:
    """A free-space Poisson plan for grids of ``shape`` (2 or 3 axes) with spacing ``h`` (one
    value or one per axis, > 0): the Green's function is transformed once here; :meth:`solve`
    then costs two FFTs of the doubled grid (plus one per field component).

    Args: ``shape``, ``h``; ``method`` (``"vico"``, ``"vico_dct"``, ``"hockney"``);
    ``vico_factor`` (truncation length over the grid diagonal, in (1, 4], default 1.1);
    ``nthreads`` (0 = all cores); ``check_input`` (reject non-finite ρ, naming the node).

    Raises: ``ValueError``/``TypeError`` naming a bad argument; farfield.InvalidArgumentError
    (sizes beyond the limits, e.g. ``code`` 114 with the limit stated)."""

    def __init__(self, shape, h, method="vico", vico_factor=1.1, nthreads=0, check_input=True, debug=0):
        self._core = _PoissonCore(list(shape), h, method, vico_factor, nthreads, check_input, debug)
        self.shape = tuple(shape)
        self.method = method

    def solve(self, rho, field=False):
        """Solves for ``rho`` (float64, the plan's shape, C order; used without a copy):
        returns a :class:`Solution`."""
        r = self._core.solve(rho, field)
        return Solution(r["phi"], r["field"], r["energy"])


def solve(rho, h, method="vico", field=False, **kwargs):
    """One-call solve: plans for ``rho.shape`` and spacing ``h`` and returns the
    :class:`Solution` (see :class:`Plan` for the arguments)."""
    rho = rho if isinstance(rho, np.ndarray) else np.asarray(rho, dtype=np.float64)
    return Plan(rho.shape, h, method, **kwargs).solve(rho, field)
