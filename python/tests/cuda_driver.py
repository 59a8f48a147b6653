"""Device arrays for the tests without CuPy: a minimal ``__cuda_array_interface__`` producer on
the CUDA driver API (``libcuda.so.1``, through ctypes), in device 0's primary context — the
context farfield, CuPy and PyTorch use. Enough for the GPU tests of ``farfield.cufinufft`` on a
machine with the NVIDIA driver and no CuPy (the GPU measurement kit's machine).

``DeviceArray.from_host(a)`` uploads a NumPy array; ``DeviceArray(shape, dtype)`` allocates
(the constructor signature the package uses to make outputs); ``.get()`` synchronises the
context and downloads. ``available()`` says whether a driver and a device answer.
"""

import ctypes

import numpy as np

_lib = None


def _driver():
    global _lib
    if _lib is None:
        lib = ctypes.CDLL("libcuda.so.1")
        _check(lib.cuInit(0), "cuInit")
        ctx = ctypes.c_void_p()
        _check(lib.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), 0), "cuDevicePrimaryCtxRetain")
        _check(lib.cuCtxSetCurrent(ctx), "cuCtxSetCurrent")
        _lib = lib
    return _lib


def _check(status, what):
    if status != 0:
        raise RuntimeError(f"CUDA driver call {what} failed with status {status}")


def available():
    """Whether ``libcuda.so.1`` loads and device 0 has a primary context."""
    try:
        _driver()
        return True
    except (OSError, RuntimeError):
        return False


class DeviceArray:
    """A C-contiguous device array of ``shape`` and ``dtype`` (interface version 3, no stream)."""

    def __init__(self, shape, dtype):
        lib = _driver()
        self.shape = tuple(int(n) for n in (shape if isinstance(shape, (tuple, list)) else (shape,)))
        self.dtype = np.dtype(dtype)
        self.nbytes = int(np.prod(self.shape)) * self.dtype.itemsize
        self.ptr = ctypes.c_uint64(0)
        if self.nbytes:
            _check(lib.cuMemAlloc_v2(ctypes.byref(self.ptr), ctypes.c_size_t(self.nbytes)), "cuMemAlloc")

    @classmethod
    def from_host(cls, a):
        a = np.ascontiguousarray(a)
        d = cls(a.shape, a.dtype)
        if d.nbytes:
            _check(_driver().cuMemcpyHtoD_v2(d.ptr, a.ctypes.data_as(ctypes.c_void_p), ctypes.c_size_t(d.nbytes)), "cuMemcpyHtoD")
        return d

    def get(self):
        lib = _driver()
        _check(lib.cuCtxSynchronize(), "cuCtxSynchronize")
        out = np.empty(self.shape, self.dtype)
        if self.nbytes:
            _check(lib.cuMemcpyDtoH_v2(out.ctypes.data_as(ctypes.c_void_p), self.ptr, ctypes.c_size_t(self.nbytes)), "cuMemcpyDtoH")
        return out

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.ptr.value, False), "version": 3,
                "strides": None, "stream": None}

    def __del__(self):
        if self.nbytes and _lib is not None and self.ptr.value:
            _lib.cuMemFree_v2(self.ptr)
            self.ptr = ctypes.c_uint64(0)
