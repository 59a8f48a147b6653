"""Non-uniform fast Fourier transforms of types 1, 2 and 3 in 1D, 2D and 3D, with the Python
interface of FINUFFT 2.5 (``finufft.Plan`` and the 18 functions ``nufft1d1`` … ``nufft3d3``):
the same names, argument order, defaults, shapes, mode ordering and exceptions, so that::

    import farfield.nufft as finufft

runs code written for FINUFFT's Python package. The transforms are farfield's CPU NUFFT
(through the plan of its FINUFFT drop-in library); results agree with FINUFFT's to the
requested tolerance, not bit for bit (farfield chooses its own kernel width and upsampling
factor).

Definitions (``isign`` = ±1, default +1 for types 1 and 3, −1 for type 2):

* type 1: ``f[k1, k2, k3] = Σ_j c[j] exp(isign·i (k1 x_j + k2 y_j + k3 z_j))`` for
  ``−N_d/2 ≤ k_d ≤ (N_d−1)/2`` (``modeord=0``, "CMCL" order, the default) or in FFT order
  (``modeord=1``: ``0 … ⌈N/2⌉−1, −⌊N/2⌋ … −1``, as ``numpy.fft``);
* type 2: ``c[j] = Σ_k f[k] exp(isign·i k·x_j)`` (the adjoint of type 1 for opposite signs);
* type 3: ``f[k] = Σ_j c[j] exp(isign·i (s_k x_j + t_k y_j + u_k z_j))``.

Shapes and memory order: points ``x, y, z`` (and ``s, t, u``) are 1-D arrays of length M (N)
of the real dtype of the plan (``float64`` for ``complex128``, ``float32`` for ``complex64``),
in radians (any finite value; types 1, 2 are 2π-periodic in them); strengths ``c`` have shape
``(M,)`` or ``(n_trans, M)``; modes ``f`` shape ``(N1,)``, ``(N1, N2)``, ``(N1, N2, N3)`` or
with a leading ``n_trans`` axis, C order, ``f[..., k1, k2, k3]`` (the last axis fastest).
Arrays of the right dtype and C order are used without copies.

Tolerance ``eps``: the requested relative l2 accuracy of the output (about 1e-15 … 1e-1 in
double, 1e-7 … 1e-1 in single precision); a smaller value is raised to what the precision
reaches, with a ``Warning`` ("eps tolerance too small").

Errors: ``TypeError`` (wrong dtype, an output not C-contiguous or read-only), ``RuntimeError``
for FINUFFT's shape checks (their messages), and :class:`farfield.NufftError` (a
``RuntimeError``) carrying FINUFFT's status code ``ier`` as ``code`` with FINUFFT's text and
farfield's detail (e.g. a non-finite coordinate, naming its index).

Options (keyword arguments, FINUFFT's names, see FINUFFT's documentation "Options"):
``modeord``, ``spreadinterponly``, ``debug``, ``spread_debug``, ``showwarn`` (default 0 here:
warnings are Python warnings), ``nthreads`` (0 = all cores), ``fftw``, ``spread_sort``,
``spread_kerevalmeth``, ``spread_kerpad``, ``upsampfac`` (0 = automatic, else in (1, 4]),
``spread_thread``, ``maxbatchsize``, ``spread_nthr_atomic``, ``spread_max_sp_size``,
``spread_kerformula``. What farfield honours and what it only validates is the table of its
FINUFFT drop-in library (crate ``farfield-finufft``). Unknown names give a ``Warning`` and
are ignored, as in FINUFFT.

Sources: A. H. Barnett, J. F. Magland, L. af Klinteberg, "A parallel non-uniform fast Fourier
transform library based on an 'exponential of semicircle' kernel", SIAM J. Sci. Comput. 41
(2019) C479–C504; the FINUFFT Python interface (Flatiron Institute, Apache-2.0) whose calling
conventions this module follows.
"""

import math
import numbers
import warnings

import numpy as np

from . import _farfield

__all__ = ["Plan", "nufft1d1", "nufft1d2", "nufft1d3", "nufft2d1", "nufft2d2", "nufft2d3",
           "nufft3d1", "nufft3d2", "nufft3d3"]

# FINUFFT 2.5's option names (finufft_opts; the FFTW lock callbacks are not reachable from Python)
_OPTION_NAMES = ("modeord", "spreadinterponly", "debug", "spread_debug", "showwarn", "nthreads", "fftw",
                 "spread_sort", "spread_kerevalmeth", "spread_kerpad", "upsampfac", "spread_thread",
                 "maxbatchsize", "spread_nthr_atomic", "spread_max_sp_size", "spread_kerformula")


def _options(kwargs):
    """The options dict from keyword arguments: unknown names warn (FINUFFT's text) and are
    dropped; the lock callbacks raise ``TypeError``."""
    opts = {"showwarn": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("always")
        for key, value in kwargs.items():
            if key in ("fftw_lock_fun", "fftw_unlock_fun", "fftw_lock_data"):
                raise TypeError(f"Invalid option '{key}': FFTW locks are not exposed in Python")
            if key in _OPTION_NAMES:
                opts[key] = value
            else:
                warnings.warn('Warning: finufft_opts does not have attribute "' + key + '"', Warning, stacklevel=3)
    return opts


def _complex_dtype(dtype):
    dtype = np.dtype(dtype)
    if dtype == np.complex128 or dtype == np.complex64:
        return dtype
    raise RuntimeError("FINUFFT dtype(precision type) must be single or double")


def _warn_ier(ier):
    if ier == 1:
        warnings.warn("FINUFFT eps tolerance too small to achieve", Warning, stacklevel=3)


def _checked(x, name, dtype, output=False):
    """``x`` as an array of ``dtype`` (None → a 0-d placeholder): a wrong dtype is a
    ``TypeError``; an input that is not C-contiguous is copied with a warning, an output that is
    not C-contiguous and writeable is a ``TypeError`` (FINUFFT's rules and messages)."""
    if x is None:
        return np.array(0, dtype=dtype)
    if not isinstance(x, np.ndarray):
        x = np.asarray(x)
    if x.dtype != dtype:
        raise TypeError(f"Argument `{name}` does not have the correct dtype: {x.dtype} was given, "
                        f"but {dtype} was expected.")
    for flag in (("C", "W") if output else ("C",)):
        if not x.flags[flag]:
            if output:
                raise TypeError(f"Argument `{name}` does not satisfy the following requirement: {flag}")
            warnings.warn(f"Argument `{name}` does not satisfy the following requirement: {flag}. "
                          "Copying array (this may reduce performance)", stacklevel=3)
            x = np.array(x, dtype=dtype, order="C")
    return x


def _point_counts(tp, dim, x, y, z, s, t, u):
    """(M, N) after FINUFFT's checks of the point arrays."""
    if x.ndim != 1:
        raise RuntimeError("FINUFFT x must be a vector")
    nj = x.size
    nk = 0
    if tp == 3:
        if s.ndim != 1:
            raise RuntimeError("FINUFFT s must be a vector")
        nk = s.size
    for d, (a, b) in enumerate(((y, t), (z, u)), start=2):
        if dim < d:
            break
        an, bn = "yz"[d - 2], "tu"[d - 2]
        if a.ndim != 1:
            raise RuntimeError(f"FINUFFT {an} must be a vector")
        if a.size != nj:
            raise RuntimeError(f"FINUFFT {an} must have same length as x")
        if tp == 3:
            if b.ndim != 1:
                raise RuntimeError(f"FINUFFT {bn} must be a vector")
            if b.size != nk:
                raise RuntimeError(f"FINUFFT {bn} must have same length as s")
    return nj, nk


def _check_cshape(shape, n, n_trans):
    """Shape of strengths (or type-3 inputs) of n points: (n,) or (1, n) for one transform,
    (n_trans, n) otherwise."""
    if n_trans == 1:
        if len(shape) not in (1, 2):
            raise RuntimeError("FINUFFT c.ndim must be 1 or 2 if n_trans == 1")
        if shape[-1] != n or math.prod(shape) != n:
            raise RuntimeError("FINUFFT c.size must be same as x.size if n_trans == 1")
    else:
        if len(shape) != 2:
            raise RuntimeError("FINUFFT c.ndim must be 2 if n_trans > 1")
        if shape[1] != n or shape[0] != n_trans:
            raise RuntimeError("FINUFFT c.shape must be (n_trans, x.size) if n_trans > 1")


def _check_fshape(shape, n_trans, dim, modes, nk, tp):
    """Shape of modes (types 1, 2; ``modes`` in Python order) or type-3 outputs."""
    if tp == 3:
        if n_trans == 1:
            if len(shape) not in (1, 2):
                raise RuntimeError("FINUFFT f.ndim must be 1 or 2 for type 3 if n_trans == 1")
            if shape[-1] != nk or math.prod(shape) != nk:
                raise RuntimeError("FINUFFT f.size of must be nk if n_trans == 1")
        else:
            if len(shape) != 2:
                raise RuntimeError("FINUFFT f.ndim must be 2 for type 3 if n_trans > 1")
            if shape[1] != nk or shape[0] != n_trans:
                raise RuntimeError("FINUFFT f.shape must be (n_trans, nk) if n_trans > 1")
        return
    if n_trans == 1:
        if len(shape) not in (dim, dim + 1):
            raise RuntimeError("FINUFFT f.ndim must be same as the problem dimension or the problem dimension + 1 "
                               "for type 1 or 2 if n_trans == 1")
        if len(shape) == dim + 1 and shape[0] != 1:
            raise RuntimeError("FINUFFT f.shape[0] must be 1 for type 1 or 2 if n_trans == 1 and len(f.shape) == dim+1")
    else:
        if len(shape) != dim + 1:
            raise RuntimeError("FINUFFT f.ndim must be same as the problem dimension + 1 for type 1 or 2 if n_trans > 1")
        if shape[0] != n_trans:
            raise RuntimeError("FINUFFT f.shape[0] must be n_trans for type 1 or 2 if n_trans > 1")
    if tuple(shape[len(shape) - dim:]) != tuple(modes):
        raise RuntimeError("FINUFFT f.shape is not consistent with n_modes")


class Plan:
    r"""A NUFFT plan (FINUFFT's ``finufft.Plan``): make it once, set the points with
    :meth:`setpts`, then :meth:`execute` (or :meth:`execute_adjoint`) any number of times.

    Args:
        nufft_type (int): 1 (non-uniform → uniform), 2 (uniform → non-uniform) or 3
            (non-uniform → non-uniform).
        n_modes_or_dim (int or tuple of ints): types 1, 2: the mode counts ``(N1,)``,
            ``(N1, N2)`` or ``(N1, N2, N3)`` (each ≥ 0); type 3: the dimension 1–3.
        n_trans (int): transforms per execute (≥ 1), stacked along a leading axis.
        eps (float): requested relative l2 accuracy (see the module docs).
        isign (int or None): sign of the exponent; None = +1 for types 1, 3 and −1 for type 2.
        dtype: ``"complex128"`` (default) or ``"complex64"``; the points are of the matching
            real dtype.
        **kwargs: FINUFFT options (module docs).

    Raises:
        RuntimeError: an invalid dtype, mode tuple or type (FINUFFT's messages);
        farfield.NufftError: a status from the library (e.g. ``upsampfac`` out of range).

    The GIL is released while the plan is made, while points are sorted and while it executes.
    """

    def __init__(self, nufft_type, n_modes_or_dim, n_trans=1, eps=1e-6, isign=None, dtype="complex128", **kwargs):
        if isign is None:
            isign = -1 if nufft_type == 2 else 1
        opts = _options(kwargs)
        dtype = _complex_dtype(dtype)
        if nufft_type == 3:
            d = np.asarray(n_modes_or_dim, dtype=np.int64)
            if d.size != 1:
                raise RuntimeError("FINUFFT type 3 plan n_modes_or_dim must be one number, the dimension")
            dim = int(d.reshape(-1)[0])
            modes = ()
        else:
            m = np.asarray(n_modes_or_dim, dtype=np.int64).reshape(-1)
            if m.size > 3 or m.size < 1:
                raise RuntimeError("FINUFFT n_modes dimension must be 1, 2, or 3")
            dim = int(m.size)
            modes = tuple(int(v) for v in m)
        self._core = _farfield._NufftCore(int(nufft_type), dim, list(modes[::-1]), int(isign), int(n_trans), float(eps),
                                          dtype == np.complex64, opts)
        _warn_ier(self._core.ier)
        self._type = nufft_type
        self._dim = dim
        self._n_modes = modes
        self._n_trans = n_trans
        self._dtype = dtype
        self._real = np.dtype(np.float32 if dtype == np.complex64 else np.float64)
        self._nj = self._nk = None

    @property
    def type(self):
        """Transform type (1, 2 or 3)."""
        return self._type

    @property
    def dtype(self):
        """Complex dtype of the data (``complex64`` or ``complex128``)."""
        return self._dtype

    @property
    def dim(self):
        """Dimension (1–3)."""
        return self._dim

    @property
    def n_modes(self):
        """Mode counts ``(N1, …)`` as given (types 1, 2; empty for type 3)."""
        return self._n_modes

    @property
    def n_trans(self):
        """Transforms per execute."""
        return self._n_trans

    def setpts(self, x=None, y=None, z=None, s=None, t=None, u=None):
        r"""Sets the non-uniform points: ``x`` (and ``y``, ``z`` by dimension), 1-D arrays of M
        coordinates in radians, of the plan's real dtype; type 3 also the N target frequencies
        ``s`` (``t``, ``u``). FINUFFT semantics: the arrays must stay unchanged until the last
        execute with these points (the plan keeps references to them).

        Raises: ``TypeError`` (dtype), ``RuntimeError`` (shapes, FINUFFT's messages),
        farfield.NufftError (e.g. a non-finite coordinate: ``code`` 21, the index named)."""
        rd = self._real
        xj, yj, zj = (_checked(a, n, rd) for a, n in ((x, "x"), (y, "y"), (z, "z")))
        sk, tk, uk = (_checked(a, n, rd) for a, n in ((s, "s"), (t, "t"), (u, "u")))
        nj, nk = _point_counts(self._type, self._dim, xj, yj, zj, sk, tk, uk)
        # the C library's axis order: the last Python axis is its x
        pts = (xj, yj, zj)[: self._dim][::-1]
        frq = (sk, tk, uk)[: self._dim][::-1] if self._type == 3 else ()
        args = list(pts) + [None] * (3 - len(pts)) + list(frq)
        ier = self._core.setpts(*args)
        _warn_ier(ier)
        self._nj, self._nk = nj, nk

    def _run(self, data, out, adjoint):
        _data = _checked(data, "data", self._dtype)
        _out = _checked(out, "out", self._dtype, output=True)
        tp, nt, dim = self._type, self._n_trans, self._dim
        nj, nk = self._nj, self._nk
        if nj is None:
            raise RuntimeError("FINUFFT execute called before setpts")
        # (does the call read modes?, does it write modes?) for types 1, 2; type 3: nk values
        reads_f = (tp == 2) != adjoint
        if tp == 3:
            _check_cshape(_data.shape, nk if adjoint else nj, nt)
            if out is not None:
                if adjoint:
                    _check_cshape(_out.shape, nj, nt)
                else:
                    _check_fshape(_out.shape, nt, dim, None, nk, 3)
            else:
                _out = np.zeros([*_data.shape[:-1], nj if adjoint else nk], dtype=self._dtype)
            c, f = (_out, _data) if adjoint else (_data, _out)
            return self._exec(c, f, adjoint, adjoint, _out)
        if reads_f:
            _check_fshape(_data.shape, nt, dim, self._n_modes, None, 2)
            if out is not None:
                _check_cshape(_out.shape, nj, nt)
            else:
                _out = np.zeros([*_data.shape[:-dim], nj], dtype=self._dtype)
            return self._exec(_out, _data, adjoint, True, _out)
        _check_cshape(_data.shape, nj, nt)
        if out is not None:
            _check_fshape(_out.shape, nt, dim, self._n_modes, None, 1)
        else:
            _out = np.zeros([*_data.shape[:-1], *self._n_modes], dtype=self._dtype)
        return self._exec(_data, _out, adjoint, False, _out)

    def _exec(self, c, f, adjoint, out_is_c, result):
        self._core.execute(c, f, adjoint, out_is_c)
        return result

    def execute(self, data, out=None):
        r"""Executes the transform: types 1 and 3 take strengths ``data`` of shape ``(M,)`` or
        ``(n_trans, M)`` and return modes (type 1: ``(N1, …)`` or ``(n_trans, N1, …)``) or
        values at the N frequencies (type 3: ``(N,)`` or ``(n_trans, N)``); type 2 takes modes
        and returns values at the M points. ``out``, when given, must have the output's shape,
        the plan's dtype and be C-contiguous and writeable; it is filled and returned.

        Raises: ``TypeError``/``RuntimeError`` (FINUFFT's checks), farfield.NufftError."""
        # arrays of the plan's dtype and canonical shapes in C order: checked and run in one
        # native call; anything else takes the general path (FINUFFT's checks and messages)
        r = self._core.execute_fast(data, out, False)
        return self._run(data, out, False) if r is None else r

    def execute_adjoint(self, data, out=None):
        r"""Executes the adjoint of the transform (opposite sign; type 1 ↔ 2; type 3 from the N
        frequencies back to the M points): the input has the shape of :meth:`execute`'s output
        and the output that of its input."""
        r = self._core.execute_fast(data, out, True)
        return self._run(data, out, True) if r is None else r


def _simple(dim, tp, x, y, z, c, s, t, u, f, isign, eps, n_modes, kwargs):
    """The one-call interfaces: infer the precision from ``x``, ``n_trans`` and the modes from
    the arrays, plan, set the points and execute (FINUFFT's rules and messages)."""
    if x.dtype == np.float64:
        dtype = "complex128"
    elif x.dtype == np.float32:
        dtype = "complex64"
    else:
        raise RuntimeError("FINUFFT x dtype should be float64 for double precision or float32 for single precision")
    if n_modes is not None:
        if not isinstance(n_modes, (tuple, numbers.Integral)):
            raise RuntimeError("FINUFFT input n_modes must be a tuple or an integer")
        if isinstance(n_modes, tuple):
            if len(n_modes) != dim:
                raise RuntimeError("FINUFFT input n_modes dimension does not match problem dimension")
            if not all(isinstance(v, numbers.Integral) for v in n_modes):
                raise RuntimeError("FINUFFT all elements of input n_modes must be integer")
        else:
            n_modes = (n_modes,) * dim

    def n_trans_of(cc):
        nt = int(cc.size / x.size)
        if nt * x.size != cc.size:
            raise RuntimeError("FINUFFT c.size must be divisible by x.size")
        _check_cshape(cc.shape, x.size, nt)
        return nt

    def modes_of(shape, nt_in, modes_in):
        if len(shape) == dim + 1:
            nt, modes = shape[0], tuple(shape[1:dim + 1])
        elif len(shape) == dim:
            nt, modes = 1, tuple(shape)
        else:
            raise RuntimeError("FINUFFT type 1 output dimension or type 2 input dimension must be either dim "
                               "(n_trans==1) or dim+1 (n_trans>=1)")
        if nt_in is not None and nt != nt_in:
            raise RuntimeError("FINUFFT input n_trans and output n_trans do not match")
        if modes_in is not None and tuple(modes) != tuple(modes_in):
            raise RuntimeError("FINUFFT input n_modes and output n_modes do not match")
        return nt, modes

    if tp == 1:
        n_trans = n_trans_of(c)
        if n_modes is None and f is None:
            raise RuntimeError("FINUFFT type 1 input must supply n_modes or output vector, or both")
        if f is not None:
            n_trans, n_modes = modes_of(f.shape, n_trans, n_modes)
    elif tp == 2:
        n_trans, n_modes = modes_of(f.shape, None, None)
    else:
        n_trans = n_trans_of(c)
    plan = Plan(tp, dim if tp == 3 else n_modes, n_trans, eps, isign, dtype, **kwargs)
    plan.setpts(x, y, z, s, t, u)
    if tp == 2:
        return plan.execute(f, c)
    return plan.execute(c, f)


def nufft1d1(x, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """1D type 1: ``f[k] = Σ_j c[j] exp(isign·i k x[j])``, ``−N/2 ≤ k ≤ (N−1)/2``. ``x``:
    (M,) radians; ``c``: (M,) or (n_trans, M); ``n_modes``: N (or give ``out``, shape (N,) or
    (n_trans, N)). Returns the modes. See the module docs."""
    return _simple(1, 1, x, None, None, c, None, None, None, out, isign, eps, n_modes, kwargs)


def nufft1d2(x, f, out=None, eps=1e-6, isign=-1, **kwargs):
    """1D type 2: ``c[j] = Σ_k f[k] exp(isign·i k x[j])``. ``x``: (M,); ``f``: (N,) or
    (n_trans, N). Returns (M,) or (n_trans, M)."""
    return _simple(1, 2, x, None, None, out, None, None, None, f, isign, eps, None, kwargs)


def nufft1d3(x, c, s, out=None, eps=1e-6, isign=1, **kwargs):
    """1D type 3: ``f[k] = Σ_j c[j] exp(isign·i s[k] x[j])``. ``x``: (M,); ``c``: (M,) or
    (n_trans, M); ``s``: (N,). Returns (N,) or (n_trans, N)."""
    return _simple(1, 3, x, None, None, c, s, None, None, out, isign, eps, None, kwargs)


def nufft2d1(x, y, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """2D type 1: ``f[k1, k2] = Σ_j c[j] exp(isign·i (k1 x[j] + k2 y[j]))``. Returns
    (N1, N2) or (n_trans, N1, N2)."""
    return _simple(2, 1, x, y, None, c, None, None, None, out, isign, eps, n_modes, kwargs)


def nufft2d2(x, y, f, out=None, eps=1e-6, isign=-1, **kwargs):
    """2D type 2: ``c[j] = Σ f[k1, k2] exp(isign·i (k1 x[j] + k2 y[j]))``. ``f``: (N1, N2) or
    (n_trans, N1, N2). Returns (M,) or (n_trans, M)."""
    return _simple(2, 2, x, y, None, out, None, None, None, f, isign, eps, None, kwargs)


def nufft2d3(x, y, c, s, t, out=None, eps=1e-6, isign=1, **kwargs):
    """2D type 3: ``f[k] = Σ_j c[j] exp(isign·i (s[k] x[j] + t[k] y[j]))``."""
    return _simple(2, 3, x, y, None, c, s, t, None, out, isign, eps, None, kwargs)


def nufft3d1(x, y, z, c, n_modes=None, out=None, eps=1e-6, isign=1, **kwargs):
    """3D type 1: ``f[k1, k2, k3] = Σ_j c[j] exp(isign·i (k1 x[j] + k2 y[j] + k3 z[j]))``.
    Returns (N1, N2, N3) or (n_trans, N1, N2, N3)."""
    return _simple(3, 1, x, y, z, c, None, None, None, out, isign, eps, n_modes, kwargs)


def nufft3d2(x, y, z, f, out=None, eps=1e-6, isign=-1, **kwargs):
    """3D type 2: ``c[j] = Σ f[k1, k2, k3] exp(isign·i (k1 x[j] + k2 y[j] + k3 z[j]))``."""
    return _simple(3, 2, x, y, z, out, None, None, None, f, isign, eps, None, kwargs)


def nufft3d3(x, y, z, c, s, t, u, out=None, eps=1e-6, isign=1, **kwargs):
    """3D type 3: ``f[k] = Σ_j c[j] exp(isign·i (s[k] x[j] + t[k] y[j] + u[k] z[j]))``."""
    return _simple(3, 3, x, y, z, c, s, t, u, out, isign, eps, None, kwargs)
