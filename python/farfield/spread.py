"""Particle↔mesh spreading and interpolation in physical coordinates (particle-in-cell charge
deposition and force interpolation), on the CPU or a CUDA device.

:class:`Plan` (farfield's ``SpreadPlan``): make it for a grid, a box and a kernel, set the
points (``(M, dim)`` array), then :meth:`Plan.spread` values onto the grid or
:meth:`Plan.interp` the grid at the points (with the gradient for B-splines of order ≥ 2).
Grids are C-ordered NumPy arrays of shape ``n_grid = (n1[, n2[, n3]])`` whose axis ``a`` is
the point coordinate's column ``a``. The one-call functions :func:`spread` and :func:`interp`
make a plan, set the points and run once. A plan made with ``backend="cuda"`` also takes device
arrays (``__cuda_array_interface__``: CuPy, PyTorch, Numba) in :meth:`Plan.setpts`,
:meth:`Plan.spread` and :meth:`Plan.interp` and returns device arrays of the same library, with
the host arrays' results bit for bit (no gradient on the device).

Kernels: ``"es"`` (exponential of semicircle; Barnett, Magland & af Klinteberg, SIAM J. Sci.
Comput. 41 (2019) C479), ``"gaussian"`` (Greengard & Lee, SIAM Rev. 46 (2004) 443), both
from a relative tolerance; cardinal B-splines ``"ngp"``, ``"cic"``, ``"tsc"``, ``"pqs"``
(orders 1–4) or ``"bspline"`` with ``order`` up to 8 (Hockney & Eastwood, "Computer
Simulation Using Particles", 1988, §5-3). B-splines are a partition of unity: spreading
conserves the total charge to rounding, and CIC interpolates linear fields exactly.
"""

from ._farfield import SpreadPlan as Plan

__all__ = ["Plan", "spread", "interp"]


def spread(points, values, n_grid, box_len, box_lo=None, periodic=None, kernel="cic", **kwargs):
    """Spreads ``values`` (shape ``(M,)``, real or complex) at ``points`` (``(M, dim)``) onto a
    new grid of shape ``n_grid`` and returns it. Arguments as :class:`Plan`; the plan's dtype
    is that of ``points`` unless ``dtype`` is given."""
    kwargs.setdefault("dtype", getattr(points, "dtype", "float64"))
    p = Plan(tuple(n_grid), box_len, box_lo, periodic, kernel, **kwargs)
    p.setpts(points)
    return p.spread(values)


def interp(points, grid, box_len, box_lo=None, periodic=None, kernel="cic", grad=False, **kwargs):
    """Interpolates ``grid`` at ``points`` (``(M, dim)``): returns ``(M,)`` values, or
    ``(values, gradient)`` with ``grad=True`` (``gradient`` of shape ``(M, dim)``, per unit
    length; real grids, B-splines of order ≥ 2). Arguments as :class:`Plan`."""
    kwargs.setdefault("dtype", getattr(points, "dtype", "float64"))
    p = Plan(tuple(grid.shape), box_len, box_lo, periodic, kernel, **kwargs)
    p.setpts(points)
    return p.interp(grid, grad=grad)
