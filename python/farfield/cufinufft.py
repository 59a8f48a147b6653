"""Non-uniform FFTs of types 1, 2 and 3 on the GPU, on device arrays, with the Python interface
of cuFINUFFT 2.5 (``cufinufft.Plan`` and ``nufft1d1`` … ``nufft3d2``): the same names, argument
order, defaults (``dtype="complex64"``), shapes and mode ordering, so that::

    import farfield.cufinufft as cufinufft

runs code written for cuFINUFFT's Python package. The transforms are farfield's CUDA NUFFT on
device 0 (through the plan of its cuFINUFFT drop-in library, crate ``farfield-cufinufft``);
results agree with cuFINUFFT's to the requested tolerance.

Arrays: any object with a ``__cuda_array_interface__`` (version 2 or 3): CuPy arrays, PyTorch
CUDA tensors (without ``requires_grad``), Numba device arrays. Points ``x, y, z`` (``s, t, u``
for type 3) are 1-D arrays of length M (N) of the plan's real dtype (``float32`` for
``complex64``, ``float64`` for ``complex128``), in radians, any finite value; strengths ``c``
have shape ``(M,)`` or ``(n_trans, M)``; modes ``f`` have shape ``(N1,)``, ``(N1, N2)`` or
``(N1, N2, N3)``, optionally with a leading ``n_trans`` axis, C order (the last axis fastest).
Every array must be C-contiguous; none is copied. The points are copied on the device at
``setpts``, so their arrays may be freed afterwards. NumPy arrays are refused (``TypeError``):
the CPU transforms are :mod:`farfield.nufft`.

Definitions (``isign`` = ±1, default +1 for types 1 and 3, −1 for type 2; ``modeord=0``, the
default, orders modes ``−N/2 … (N−1)/2``, ``modeord=1`` in FFT order):

* type 1: ``f[k1, k2, k3] = Σ_j c[j] exp(isign·i (k1 x_j + k2 y_j + k3 z_j))``;
* type 2: ``c[j] = Σ_k f[k] exp(isign·i k·x_j)``;
* type 3: ``f[k] = Σ_j c[j] exp(isign·i (s_k x_j + t_k y_j + u_k z_j))``.

Streams: the plan runs on ``gpu_stream`` (an integer ``cudaStream_t`` address, or a stream
object with ``.ptr`` (CuPy) or ``.cuda_stream`` (PyTorch); default the default stream). An
argument whose interface names another stream is waited for before the plan reads it; the
output is written on the plan's stream, and ``execute`` returns once the work is queued (as
cuFINUFFT's), so work on another stream that reads it must wait for the plan's stream. The
plan keeps a stream object referenced until it is destroyed; a stream given as an integer
address must stay valid until then (the plan frees its device memory in stream order on it).

Options (keyword arguments, cuFINUFFT's names): ``upsampfac``, ``gpu_method``, ``gpu_sort``,
``gpu_kerevalmeth``, ``gpu_maxsubprobsize``, ``gpu_binsizex``/``y``/``z``,
``gpu_obinsizex``/``y``/``z``, ``gpu_spreadinterponly``, ``gpu_maxbatchsize``,
``gpu_device_id`` (only 0), ``gpu_stream``, ``gpu_np``, ``modeord``, ``debug``; what farfield
honours and what it only validates is the table of ``cufinufft_opts`` in crate
``farfield-cufinufft``. An unknown name is a ``TypeError``, as in cuFINUFFT.

Errors: ``TypeError`` (an argument that is not a device array, a wrong dtype or shape, an
unknown option; cuFINUFFT's messages), ``ValueError`` (point arrays of different lengths, an
array that is not C-contiguous, a read-only output), and :class:`farfield.NufftError` (a ``RuntimeError``) carrying
cuFINUFFT's status code as ``code`` (e.g. 15, a CUDA failure, when no CUDA device is usable).

Sources: A. H. Barnett, J. F. Magland, L. af Klinteberg, SIAM J. Sci. Comput. 41 (2019)
C479–C504; Y.-H. Shih, G. Wright, J. Andén, J. Blaschke, A. H. Barnett, "cuFINUFFT: a
load-balanced GPU library for general-purpose nonuniform FFTs", IEEE IPDPSW (2021) 688–697;
the cuFINUFFT Python interface (Flatiron Institute, Apache-2.0) whose calling conventions
this module follows.
"""

import numbers

import numpy as np

from . import _device, _errors, _farfield
from ._device import require as _device_arg, shape as _shape

__all__ = ["Plan", "nufft1d1", "nufft1d2", "nufft1d3", "nufft2d1", "nufft2d2", "nufft2d3",
           "nufft3d1", "nufft3d2", "nufft3d3"]

# cuFINUFFT 2.5's option names (cufinufft_opts)
_OPTION_NAMES = ("upsampfac", "gpu_method", "gpu_sort", "gpu_binsizex", "gpu_binsizey", "gpu_binsizez",
                 "gpu_obinsizex", "gpu_obinsizey", "gpu_obinsizez", "gpu_maxsubprobsize", "gpu_kerevalmeth",
                 "gpu_spreadinterponly", "gpu_maxbatchsize", "gpu_device_id", "gpu_stream", "modeord", "gpu_np",
                 "debug")


def _stream_address(s):
    """``gpu_stream`` as an integer address: an int, or a stream object of CuPy (``.ptr``) or
    PyTorch (``.cuda_stream``); None → 0 (the default stream)."""
    if s is None:
        return 0
    for attr in ("ptr", "cuda_stream"):
        if hasattr(s, attr):
            s = getattr(s, attr)
            break
    if isinstance(s, numbers.Integral) and s >= 0:
        return int(s)
    raise TypeError(f"option `gpu_stream` = {s!r} is not a stream (an int address, a CuPy or a PyTorch stream)")


def _options(kwargs):
    opts = {}
    for key, value in kwargs.items():
        if key not in _OPTION_NAMES:
            raise TypeError(f"Invalid option '{key}'")
        opts[key] = _stream_address(value) if key == "gpu_stream" else value
    return opts


class Plan:
    """A CUDA NUFFT plan with cuFINUFFT's Python interface.

    Args:
        nufft_type (int): 1, 2 or 3.
        n_modes (int or tuple of ints): types 1, 2: the mode counts ``(N1, …)`` (1 to 3 of
            them; the last one along the fastest axis); type 3: the dimension (1–3).
        n_trans (int): number of transforms computed together (≥ 1).
        eps (float): requested relative accuracy (below what the precision reaches it is
            raised, for type 3 with the warning code 1 in ``plan.ier``).
        isign (int or None): sign of the exponent; default +1 for types 1, 3 and −1 for type 2.
        dtype: ``"complex64"`` (default) or ``"complex128"``.
        **kwargs: cuFINUFFT options (module docstring).

    Errors: ``TypeError`` (dtype, unknown option), :class:`farfield.NufftError` (cuFINUFFT's
    status codes: invalid type, dimension, mode counts, options; 15 without a CUDA device).
    """

    def __init__(self, nufft_type, n_modes, n_trans=1, eps=1e-6, isign=None, dtype="complex64", **kwargs):
        self._dtype = np.dtype(dtype)
        if self._dtype not in (np.complex64, np.complex128):
            raise TypeError("Expected complex64 or complex128.")
        if nufft_type == 3:
            if not isinstance(n_modes, numbers.Integral):
                raise ValueError("For a type 3 plan, n_modes_or_dim must be a single number, the dimension")
            dim, n_modes = int(n_modes), ()
        else:
            n_modes = (int(n_modes),) if isinstance(n_modes, numbers.Integral) else tuple(int(n) for n in n_modes)
            dim = len(n_modes)
        if dim not in (1, 2, 3):
            raise ValueError("Only dimensions 1, 2, and 3 supported")
        if isign is None:
            isign = -1 if nufft_type == 2 else 1
        self._type, self._dim, self._n_modes, self._n_trans = nufft_type, dim, n_modes, int(n_trans)
        self._nj = self._nk = None
        self._core = _farfield._CuNufftCore(nufft_type, dim, list(n_modes[::-1]), int(isign), int(n_trans), float(eps),
                                            self._dtype == np.complex64, _options(kwargs))
        # the caller's stream object stays referenced while the plan lives: the plan frees its
        # device memory in stream order on that stream when it is destroyed, and CuPy and
        # PyTorch destroy a stream with the last reference to its object
        self._stream = kwargs.get("gpu_stream")

    def __del__(self):
        # the plan first, while `_stream` still holds its stream (__init__ may have failed
        # before `_core` was set)
        self.__dict__.pop("_core", None)

    type = property(lambda self: self._type, doc="The transform type (1, 2 or 3).")
    dtype = property(lambda self: self._dtype, doc="The complex dtype.")
    dim = property(lambda self: self._dim, doc="The dimension.")
    n_modes = property(lambda self: self._n_modes, doc="The mode counts (types 1, 2), Python's axis order.")
    n_trans = property(lambda self: self._n_trans, doc="The number of transforms per execute.")
    ier = property(lambda self: self._core.ier, doc="0, or 1 (tolerance raised) from the plan.")

    def setpts(self, x, y=None, z=None, s=None, t=None, u=None):
        """Sets the M points ``x`` (and ``y``, ``z`` by dimension; 1-D device arrays of the
        plan's real dtype) and, for type 3, the N target frequencies ``s`` (``t``, ``u``).
        Arrays beyond the dimension must be None or empty. Errors: ``TypeError`` (not device
        arrays, wrong dtype, not 1-D, an array beyond the dimension), ``ValueError`` (lengths
        differ),
        :class:`farfield.NufftError` (e.g. a non-finite coordinate)."""
        pts = [_device_arg(a, n) if a is not None else None for a, n in zip((x, y, z), "xyz")]
        frq = [_device_arg(a, n) if a is not None else None for a, n in zip((s, t, u), "stu")]
        for group, names in ((pts, "xyz"), (frq, "stu")):
            for d, (a, n) in enumerate(zip(group, names)):
                if a is None:
                    continue
                if d >= self._dim and int(np.prod(_shape(a))) > 0:
                    raise TypeError(f"Plan dimension is {self._dim}, but `{n}` was specified")
                if d < self._dim and len(_shape(a)) != 1:
                    raise TypeError(f"Argument `{n}` must be a vector")
        if self._type != 3:
            frq = [None] * 3
        # the C library's axis order: x is the fastest axis, i.e. Python's last
        c_pts = pts[:self._dim][::-1] + [None] * (3 - self._dim)
        c_frq = frq[:self._dim][::-1] + [None] * (3 - self._dim)
        self._core.setpts(*c_pts, *c_frq)
        self._nj = _shape(pts[0])[0]
        self._nk = _shape(frq[0])[0] if self._type == 3 else None

    def execute(self, data, out=None):
        """Runs the transform on ``data`` (type 1, 3: strengths ``(M,)`` or ``(n_trans, M)``;
        type 2: modes ``(N1, …)`` or ``(n_trans, N1, …)``; any shape of as many values is
        taken as the canonical one) and returns ``out``: a new device array (of ``data``'s
        array library) or the given one, of shape ``batch + (N1, …)`` (type 1), ``batch +
        (M,)`` (type 2), ``batch + (N,)`` (type 3). Errors: ``TypeError`` (not a device
        array, wrong dtype or shape), :class:`farfield.NufftError` (before
        ``setpts``: code 21; device failures: 15)."""
        _device_arg(data, "data")
        if self._nj is None:
            raise _errors._finufft_error(21, "execute before setpts")
        n_tr, nj = self._n_trans, self._nj
        per = self._n_modes if self._type == 2 else (nj,)
        out_tail = (nj,) if self._type == 2 else self._n_modes if self._type == 1 else (self._nk,)
        shape = _shape(data)
        if int(np.prod(shape)) != n_tr * int(np.prod(per)):
            raise TypeError(f"Argument `data` must be of shape {(n_tr, *per)}")
        k = len(shape) - len(per)
        batch = shape[:k] if k >= 0 and shape[k:] == per else ((n_tr,) if n_tr > 1 else ())
        out_shape = batch + tuple(out_tail)
        if out is None:
            out = _device.empty_like(data, out_shape, self._dtype)
        else:
            _device_arg(out, "out")
            if _shape(out) != out_shape:
                raise TypeError(f"Argument `out` must be of shape {out_shape}")
        c, f = (out, data) if self._type == 2 else (data, out)
        self._core.execute(c, f)
        return out


def _n_trans(dim, tp, data):
    expect = 1 if tp in (1, 3) else dim
    shape = _shape(_device_arg(data, "data"))
    return 1 if len(shape) == expect else shape[0]


def _simple(dim, tp, pts, frq, data, out, eps, isign, n_modes, kwargs):
    n_tr = _n_trans(dim, tp, data)
    if tp == 1 and out is not None:
        n_modes = _shape(_device_arg(out, "out"))[-dim:]
    if tp == 2:
        n_modes = _shape(data)[-dim:]
    if tp == 1 and n_modes is None:
        raise ValueError("n_modes must be given when out is not")
    plan = Plan(tp, dim if tp == 3 else n_modes, n_tr, eps, isign, _device.dtype(data), **kwargs)
    plan.setpts(*pts, *frq)
    return plan.execute(data, out=out)


def nufft1d1(x, data, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """1D type 1 on device arrays: ``data`` ``(M,)`` or ``(n_tr, M)`` → modes ``(N1,)`` or
    ``(n_tr, N1)``; ``n_modes`` (int or 1-tuple) unless ``out`` gives it."""
    return _simple(1, 1, (x,), (), data, out, eps, isign, n_modes, kwargs)


def nufft1d2(x, data, out=None, eps=1e-6, isign=-1, **kwargs):
    """1D type 2 on device arrays: modes ``(N1,)`` or ``(n_tr, N1)`` → ``(M,)`` or ``(n_tr, M)``."""
    return _simple(1, 2, (x,), (), data, out, eps, isign, None, kwargs)


def nufft1d3(x, data, s, out=None, eps=1e-6, isign=1, **kwargs):
    """1D type 3 on device arrays: strengths at ``x`` → values at the frequencies ``s``."""
    return _simple(1, 3, (x,), (s,), data, out, eps, isign, None, kwargs)


def nufft2d1(x, y, data, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """2D type 1 on device arrays: ``data`` ``(M,)`` or ``(n_tr, M)`` → ``(N1, N2)`` (batched)."""
    return _simple(2, 1, (x, y), (), data, out, eps, isign, n_modes, kwargs)


def nufft2d2(x, y, data, out=None, eps=1e-6, isign=-1, **kwargs):
    """2D type 2 on device arrays: modes ``(N1, N2)`` (batched) → ``(M,)`` (batched)."""
    return _simple(2, 2, (x, y), (), data, out, eps, isign, None, kwargs)


def nufft2d3(x, y, data, s, t, out=None, eps=1e-6, isign=1, **kwargs):
    """2D type 3 on device arrays: strengths at ``(x, y)`` → values at ``(s, t)``."""
    return _simple(2, 3, (x, y), (s, t), data, out, eps, isign, None, kwargs)


def nufft3d1(x, y, z, data, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """3D type 1 on device arrays: ``data`` ``(M,)`` or ``(n_tr, M)`` → ``(N1, N2, N3)`` (batched)."""
    return _simple(3, 1, (x, y, z), (), data, out, eps, isign, n_modes, kwargs)


def nufft3d2(x, y, z, data, out=None, eps=1e-6, isign=-1, **kwargs):
    """3D type 2 on device arrays: modes ``(N1, N2, N3)`` (batched) → ``(M,)`` (batched)."""
    return _simple(3, 2, (x, y, z), (), data, out, eps, isign, None, kwargs)


def nufft3d3(x, y, z, data, s, t, u, out=None, eps=1e-6, isign=1, **kwargs):
    """3D type 3 on device arrays: strengths at ``(x, y, z)`` → values at ``(s, t, u)``."""
    return _simple(3, 3, (x, y, z), (s, t, u), data, out, eps, isign, None, kwargs)
