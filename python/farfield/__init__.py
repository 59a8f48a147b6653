"""farfield: fast long-range solvers on NumPy arrays.

Sub-modules (each a plan object and a one-call function):

* :mod:`farfield.nufft`: non-uniform FFTs of types 1–3 with FINUFFT's Python interface
  (``import farfield.nufft as finufft``);
* :mod:`farfield.cufinufft`: the same on the GPU, on CuPy (any ``__cuda_array_interface__``)
  arrays, with cuFINUFFT's Python interface (``import farfield.cufinufft as cufinufft``);
* :mod:`farfield.spread`: particle↔mesh spreading and interpolation (ES, Gaussian, NGP/CIC/TSC
  and higher B-splines), with gradients, for particle-in-cell codes;
* :mod:`farfield.ewald`: periodic electrostatics of point charges (SPME, spectral Ewald, the
  classic Ewald sum) with exclusions and scaled pairs: energy, potentials, forces, virial;
* :mod:`farfield.poisson`: free-space Poisson solvers on uniform 2D/3D grids;
* :mod:`farfield.fmm`: the Coulomb fast multipole method (open or periodic boundaries).

Units are the caller's throughout: no Coulomb constant is applied (multiply potentials,
fields, energies and virials by yours, e.g. :data:`farfield.ewald.COULOMB_KJ_MOL_NM`).

Errors: bad arguments raise ``TypeError``/``ValueError`` naming the argument; failures
reported by the library raise :class:`FarfieldError` (a ``RuntimeError``) or its subclass
:class:`InvalidArgumentError` (also a ``ValueError``), carrying the library's status
``code`` and message. The GIL is released while the library computes.
"""

from ._errors import FarfieldError, InvalidArgumentError, NufftError
from ._farfield import __version__, cuda_available

__all__ = ["FarfieldError", "InvalidArgumentError", "NufftError", "__version__", "cuda_available",
           "nufft", "cufinufft", "spread", "ewald", "poisson", "fmm"]


def __getattr__(name):
    # sub-modules on first use (``farfield.ewald`` without an explicit import)
    if name in ("nufft", "cufinufft", "spread", "ewald", "poisson", "fmm", "ase"):
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module 'farfield' has no attribute {name!r}")
