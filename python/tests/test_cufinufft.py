"""farfield.cufinufft: cuFINUFFT's Python interface on device arrays.

Without a GPU: the reading of ``__cuda_array_interface__`` (every check a device entry point
applies), the option and argument checks made before the device is touched, and the status a
plan reports when no device is usable. With a GPU (the NVIDIA driver and a device; CuPy not
needed, `cuda_driver.py` makes device arrays): every type and dimension in both precisions
against farfield.nufft on the CPU (itself checked against direct sums and the FINUFFT wheel),
batches, given outputs, and the errors of bad device arguments.
"""

import numpy as np
import pytest

import farfield.cufinufft as cufinufft
import farfield.nufft as cpu_nufft
from farfield import NufftError
from farfield._farfield import _device_array_info

from conftest import GPU_PRESENT as HAVE_GPU, needs_gpu as gpu, rel_l2
import cuda_driver


class Fake:
    """An object with a given __cuda_array_interface__ (never handed to the library)."""

    def __init__(self, **cai):
        base = {"shape": (4,), "typestr": "<f8", "data": (0x10000, False), "version": 3, "strides": None}
        base.update(cai)
        self.__cuda_array_interface__ = {k: v for k, v in base.items() if v is not Ellipsis}


def test_interface_read():
    assert _device_array_info(Fake(), "x", "<f8") == (0x10000, 4, None)
    assert _device_array_info(Fake(shape=(2, 3), typestr="<c8", stream=1), "c", "<c8") == (0x10000, 6, 1)
    # dense strides are C order; axes of extent 1 may have any stride
    assert _device_array_info(Fake(shape=(2, 3), strides=(24, 8)), "f", "<f8")[1] == 6
    assert _device_array_info(Fake(shape=(1, 3), strides=(7, 8)), "f", "<f8")[1] == 3
    assert _device_array_info(Fake(shape=(0,), data=(0, False)), "x", "<f8") == (0, 0, None)
    assert _device_array_info(Fake(typestr="|f8"), "x", "<f8")[1] == 4


@pytest.mark.parametrize("cai, exc, text", [
    (dict(typestr="<f4"), TypeError, "dtype <f4"),
    (dict(strides=(16,)), ValueError, "not C-contiguous"),
    (dict(shape=(2, 3), strides=(8, 16)), ValueError, "not C-contiguous"),
    (dict(data=(0x10000, True)), ValueError, "read-only"),
    (dict(mask=object()), TypeError, "masked"),
    (dict(stream=0), ValueError, "stream 0"),
    (dict(shape=[4]), TypeError, "shape is not a tuple"),
    (dict(shape=(4,), data=(0, False)), TypeError, "NULL"),
    (dict(typestr=Ellipsis), TypeError, "no typestr"),
])
def test_interface_errors_name_the_argument(cai, exc, text):
    with pytest.raises(exc, match=text) as e:
        _device_array_info(Fake(**cai), "fk", "<f8", True)
    assert "`fk`" in str(e.value)


def test_host_arrays_are_not_device_arrays():
    with pytest.raises(TypeError, match="not a device array"):
        _device_array_info(np.zeros(3), "x", "<f8")


def test_checks_before_the_device():
    with pytest.raises(TypeError, match="complex64 or complex128"):
        cufinufft.Plan(1, (8,), dtype="float64")
    with pytest.raises(TypeError, match="Invalid option 'spread_sort'"):
        cufinufft.Plan(1, (8,), spread_sort=1)
    with pytest.raises(TypeError, match="gpu_stream"):
        cufinufft.Plan(1, (8,), gpu_stream="fast")
    with pytest.raises(ValueError, match="dimensions 1, 2, and 3"):
        cufinufft.Plan(1, (8, 8, 8, 8))
    with pytest.raises(ValueError, match="the dimension"):
        cufinufft.Plan(3, (8, 8))
    for args, code in [((4, (8,)), 10), ((1, (0,)), 14), ((1, (8,), 0), 9)]:
        with pytest.raises(NufftError) as e:
            cufinufft.Plan(*args)
        assert e.value.code == code, e.value


@pytest.mark.skipif(HAVE_GPU, reason="a CUDA device is present: the no-device status is not reachable")
def test_no_device_is_a_cuda_failure():
    with pytest.raises(NufftError) as e:
        cufinufft.Plan(1, (16, 16), eps=1e-6)
    assert e.value.code == 15 and "CUDA" in str(e.value)


# ---- on a GPU ----

def _points(rng, dim, m, rdt, scale=np.pi):
    return [rng.uniform(-scale, scale, m).astype(rdt) for _ in range(dim)]


def _cplx(rng, shape, dt):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)


D = cuda_driver.DeviceArray.from_host if HAVE_GPU else None


@gpu
@pytest.mark.parametrize("dt, eps", [(np.complex128, 1e-9), (np.complex64, 1e-4)])
@pytest.mark.parametrize("dim", [1, 2, 3])
@pytest.mark.parametrize("tp", [1, 2, 3])
def test_against_the_cpu_plan(rng, tp, dim, dt, eps):
    rdt = np.float64 if dt == np.complex128 else np.float32
    modes = (24, 16, 12)[:dim]
    m, n_tr = 2000, 2
    x = _points(rng, dim, m, rdt)
    s = _points(rng, dim, 500, rdt, scale=10.0) if tp == 3 else []
    data = _cplx(rng, (n_tr, *modes) if tp == 2 else (n_tr, m), dt)
    cpu = cpu_nufft.Plan(tp, dim if tp == 3 else modes, n_trans=n_tr, eps=eps, dtype=dt)
    cpu.setpts(*x, *([None] * (3 - dim)), *s)
    want = cpu.execute(data)
    plan = cufinufft.Plan(tp, dim if tp == 3 else modes, n_trans=n_tr, eps=eps, dtype=dt)
    plan.setpts(*[D(a) for a in x], *([None] * (3 - dim)), *[D(a) for a in s])
    got = plan.execute(D(data))
    assert got.shape == want.shape
    assert rel_l2(got.get(), want) < 10 * eps


@gpu
def test_simple_functions_batches_and_outputs(rng):
    x, y = _points(rng, 2, 3000, np.float64)
    c = _cplx(rng, (3000,), np.complex128)
    want = cpu_nufft.nufft2d1(x, y, c, (20, 30), eps=1e-9)
    got = cufinufft.nufft2d1(D(x), D(y), D(c), (20, 30), eps=1e-9)
    assert got.shape == (20, 30) and rel_l2(got.get(), want) < 1e-8
    out = cuda_driver.DeviceArray((20, 30), np.complex128)
    assert cufinufft.nufft2d1(D(x), D(y), D(c), out=out, eps=1e-9) is out
    assert rel_l2(out.get(), want) < 1e-8
    f = _cplx(rng, (2, 20, 30), np.complex128)
    got2 = cufinufft.nufft2d2(D(x), D(y), D(f), eps=1e-9)
    assert got2.shape == (2, 3000)
    assert rel_l2(got2.get(), cpu_nufft.nufft2d2(x, y, f, eps=1e-9)) < 1e-8


@gpu
def test_bad_device_arguments(rng):
    x = _points(rng, 1, 100, np.float32)[0]
    plan = cufinufft.Plan(1, (32,), eps=1e-5)
    c = D(_cplx(rng, (100,), np.complex64))
    with pytest.raises(NufftError) as e:
        plan.execute(c)
    assert e.value.code == 21
    with pytest.raises(TypeError, match="dtype"):
        plan.setpts(D(x.astype(np.float64)))
    with pytest.raises(TypeError, match="not a device array"):
        plan.setpts(x)
    plan.setpts(D(x))
    with pytest.raises(TypeError, match="shape"):
        plan.execute(D(_cplx(rng, (99,), np.complex64)))
    with pytest.raises(TypeError, match="shape"):
        plan.execute(c, out=cuda_driver.DeviceArray((31,), np.complex64))
    with pytest.raises(NufftError) as e:
        plan.setpts(D(np.array([0.0, np.nan], np.float32)))
    assert "finite" in str(e.value).lower() or "NaN" in str(e.value)
    got = plan.execute(c)
    assert rel_l2(got.get(), cpu_nufft.nufft1d1(x, c.get(), 32, eps=1e-5)) < 1e-4


@gpu
def test_cupy_arrays_and_streams(rng):
    cp = pytest.importorskip("cupy", reason="CuPy is not installed (the driver-API arrays above cover the rest)")
    x = _points(rng, 2, 5000, np.float32)
    c = _cplx(rng, (5000,), np.complex64)
    want = cpu_nufft.nufft2d1(*x, c, (32, 48), eps=1e-5)
    stream = cp.cuda.Stream(non_blocking=True)
    with stream:
        xg = [cp.asarray(a) for a in x]
        plan = cufinufft.Plan(1, (32, 48), eps=1e-5, gpu_stream=stream)  # the plan on CuPy's stream
        plan.setpts(*xg)
        f = plan.execute(cp.asarray(c))
        stream.synchronize()
    assert isinstance(f, cp.ndarray) and f.shape == (32, 48)
    assert rel_l2(f.get(), want) < 1e-4
    # the plan keeps its stream alive: the caller's last reference may go first (the plan then
    # frees its memory on a live stream; this crashed when the plan held only the address)
    del stream
    del plan
    # an input made on another stream than the plan's (the default one) is waited for
    other = cp.cuda.Stream(non_blocking=True)
    with other:
        c2 = cp.asarray(c) * 2
        plan0 = cufinufft.Plan(1, (32, 48), eps=1e-5)
        plan0.setpts(*xg)
        f2 = plan0.execute(c2)
    cp.cuda.Device().synchronize()
    assert rel_l2(f2.get(), 2 * want) < 1e-4
