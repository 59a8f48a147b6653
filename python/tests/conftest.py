"""Shared fixtures of the farfield Python tests: the repository's data folder, a seeded
random generator, stand-in device arrays and the marker of the tests that need a GPU."""

import os
from pathlib import Path

import numpy as np
import pytest

# the repository's data folder (python/tests → ../../data), or FARFIELD_DATA_DIR
DATA = Path(os.environ.get("FARFIELD_DATA_DIR") or Path(__file__).resolve().parents[2] / "data")


@pytest.fixture
def rng():
    return np.random.default_rng(20261202)


def load_system(name):
    """positions (N, 3) nm, charges (N,) e, box (3, 3) nm of data/<name>."""
    d = DATA / name
    return np.load(d / "positions.npy"), np.load(d / "charges.npy"), np.load(d / "box.npy")


def rel_l2(a, b):
    """‖a − b‖₂ / ‖b‖₂."""
    return float(np.linalg.norm(np.ravel(a) - np.ravel(b)) / np.linalg.norm(np.ravel(b)))


def direct_sum(src, q):
    """Potentials Σ_j q_j/|x_i − x_j| and fields −∇φ = Σ_j q_j (x_i − x_j)/|x_i − x_j|³ (1/r,
    no Coulomb constant) at the sources `src` (N, 3), j ≠ i, summed over every pair in blocks
    of 256 targets: (N,) and (N, 3)."""
    pot, fld = np.empty(len(src)), np.empty((len(src), 3))
    for i in range(0, len(src), 256):
        d = src[i:i + 256, None, :] - src[None, :, :]
        r2 = np.einsum("ijk,ijk->ij", d, d)
        r2[np.arange(len(r2)), np.arange(i, i + len(r2))] = np.inf  # the source itself
        inv = 1.0 / np.sqrt(r2)
        pot[i:i + 256] = inv @ q
        fld[i:i + 256] = np.einsum("ij,ijk->ik", inv**3 * q, d)
    return pot, fld


def _gpu_present():
    import farfield
    import cuda_driver
    return farfield.cuda_available() and cuda_driver.available()


#: whether a CUDA device and the driver answer (the device-array tests run)
GPU_PRESENT = _gpu_present()
#: marks a test that runs on a CUDA device (skipped, with this reason in the summary, elsewhere)
needs_gpu = pytest.mark.skipif(not GPU_PRESENT, reason="no CUDA device: farfield.cuda_available() is False "
                                                          "(the hardware tests run on a GPU machine)")


class FakeDevice:
    """A stand-in device array: a ``__cuda_array_interface__`` of ``shape`` and ``dtype`` at an
    address of its own that is never read (the tests using it fail before the library is
    reached)."""
    next_address = 0x10000

    def __init__(self, shape, dtype=np.float64):
        FakeDevice.next_address += 0x100000
        self.__cuda_array_interface__ = {"shape": tuple(shape), "typestr": np.dtype(dtype).str,
                                         "data": (FakeDevice.next_address, False), "version": 3, "strides": None,
                                         "stream": None}
