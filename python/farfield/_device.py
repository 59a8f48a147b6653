"""Device arrays (any object with a ``__cuda_array_interface__``: CuPy, PyTorch, Numba) in the
package's GPU entry points: recognising them, their shapes, and new arrays of the caller's
array library for outputs. The native module reads and checks each interface again (dtype, C
order, writability, counts; ``python/src/device.rs``) before an address reaches the library."""

import numpy as np


def is_device(a):
    """Whether ``a`` exposes ``__cuda_array_interface__``."""
    return hasattr(a, "__cuda_array_interface__")


def require(a, name):
    """``a`` if it is a device array, else a ``TypeError`` naming argument ``name``."""
    if not is_device(a):
        raise TypeError(f"argument `{name}` is not a device array (no __cuda_array_interface__: pass a CuPy array, "
                        "or host arrays to the CPU entry points)")
    return a


def shape(a):
    """The shape the interface gives."""
    return tuple(int(n) for n in a.__cuda_array_interface__["shape"])


def dtype(a):
    """The NumPy dtype of the interface's type string."""
    return np.dtype(a.__cuda_array_interface__["typestr"].replace("|", "<"))


def empty_like(template, shape, dtype):
    """A new C-ordered device array of ``shape`` and ``dtype`` from the array library of
    ``template``: PyTorch (on its device), Numba, else the template's own type called as
    ``type(template)(shape, dtype=dtype)`` (CuPy's ``ndarray``), on the current device."""
    module = type(template).__module__ or ""
    if module.startswith("torch"):
        import torch
        return torch.empty(shape, dtype=getattr(torch, np.dtype(dtype).name), device=template.device)
    if module.startswith("numba"):
        import numba.cuda
        return numba.cuda.device_array(shape, dtype=dtype)
    return type(template)(shape, dtype=dtype)
