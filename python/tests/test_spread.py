"""farfield.spread against NumPy evaluations of the cardinal B-spline weights (CIC, TSC) and
their derivatives on boxes with a different origin, length and grid size per axis, periodic
and free; charge conservation; the ES kernel against the NUFFT (type 1 = spreading + FFT +
deconvolution is not tested here: only the spreading's adjointness)."""

import numpy as np
import pytest

import farfield
from conftest import FakeDevice, needs_gpu
from farfield import spread


def bspline(u, order):
    """Centred cardinal B-spline of order 2 (CIC) or 3 (TSC) and its derivative."""
    a = np.abs(u)
    if order == 2:
        return np.maximum(0, 1 - a), np.where(a < 1, -np.sign(u), 0.0)
    w = np.where(a <= 0.5, 0.75 - a * a, np.where(a <= 1.5, 0.5 * (1.5 - a) ** 2, 0.0))
    dw = np.where(a <= 0.5, -2 * u, np.where(a <= 1.5, -(1.5 - a) * np.sign(u), 0.0))
    return w, dw


def reference_weights(points, n, lo, length, order, periodic):
    """Dense (M, n1·…·nd) weight matrix and its derivatives per axis (physical units)."""
    m, dim = points.shape
    per_axis, dper_axis = [], []
    for a in range(dim):
        h = length[a] / n[a]
        g = (points[:, a] - lo[a]) / h
        l = np.arange(n[a])
        if periodic[a]:
            # the nearest image of each grid point
            u = (l[None, :] - g[:, None] + n[a] / 2) % n[a] - n[a] / 2
        else:
            u = l[None, :] - g[:, None]
        w, dw = bspline(u, order)
        per_axis.append(w)
        dper_axis.append(-dw / h)
    full = per_axis[0]
    for a in range(1, dim):
        full = (full[:, :, None] * per_axis[a][:, None, :]).reshape(m, -1)
    grads = []
    for b in range(dim):
        f = dper_axis[0] if b == 0 else per_axis[0]
        for a in range(1, dim):
            f = (f[:, :, None] * (dper_axis[a] if a == b else per_axis[a])[:, None, :]).reshape(m, -1)
        grads.append(f)
    return full, grads


CASES = [((40,), (1.5,), (-0.3,)), ((24, 18), (2.0, 1.2), (0.5, -1.0)), ((12, 16, 10), (1.0, 1.6, 0.9), (0.1, 0.2, -0.4))]


@pytest.mark.parametrize("n,length,lo", CASES)
@pytest.mark.parametrize("kernel,order", [("cic", 2), ("tsc", 3)])
def test_periodic_bspline_against_numpy(rng, n, length, lo, kernel, order):
    dim = len(n)
    m = 300
    pts = np.stack([rng.uniform(lo[a] - length[a], lo[a] + 2 * length[a], m) for a in range(dim)], 1)
    c = rng.standard_normal(m)
    w, dws = reference_weights(pts, n, lo, length, order, [True] * dim)
    p = spread.Plan(n, length, lo, True, kernel)
    p.setpts(pts)
    grid = p.spread(c)
    assert grid.shape == n
    assert np.allclose(grid.ravel(), c @ w, rtol=0, atol=1e-12)
    assert abs(grid.sum() - c.sum()) < 1e-11  # partition of unity: the charge is conserved
    g = rng.standard_normal(n)
    v, dv = p.interp(g, grad=True)
    assert np.allclose(v, w @ g.ravel(), rtol=0, atol=1e-12)
    assert dv.shape == (m, dim)
    for a in range(dim):
        assert np.allclose(dv[:, a], dws[a] @ g.ravel(), rtol=0, atol=1e-9), a


def test_free_axes_complex_and_single_precision(rng):
    n, length, lo = (20, 30), (1.0, 1.5), (0.0, 0.0)
    m = 100
    # keep the kernels on the grid: pad by 2 points
    pts = np.stack([rng.uniform(0.1, 0.9, m), rng.uniform(0.15, 1.35, m)], 1)
    c = rng.standard_normal(m) + 1j * rng.standard_normal(m)
    w, _ = reference_weights(pts, n, lo, length, 2, [False, False])
    p = spread.Plan(n, length, lo, periodic=False, kernel="cic")
    p.setpts(pts)
    assert np.allclose(p.spread(c).ravel(), c @ w, atol=1e-12)
    p32 = spread.Plan(n, length, lo, periodic=False, kernel="cic", dtype="float32")
    p32.setpts(pts.astype(np.float32))
    g = p32.spread(c.real.astype(np.float32))
    assert g.dtype == np.float32 and np.allclose(g.ravel(), c.real @ w, atol=1e-5)
    # a point whose kernel leaves a free axis is named
    bad = pts.copy()
    bad[17, 0] = 0.999
    with pytest.raises(farfield.InvalidArgumentError, match="17"):
        p.setpts(bad)


def test_es_spread_interp_adjoint(rng):
    n = (32, 24, 20)
    pts = rng.uniform(0, 1, (500, 3))
    p = spread.Plan(n, 1.0, kernel="es", tol=1e-8)
    p.setpts(pts)
    c = rng.standard_normal(500)
    g = rng.standard_normal(n)
    # <S c, g> = <c, S* g>
    assert abs(np.vdot(p.spread(c), g) - np.vdot(c, p.interp(g))) < 1e-10 * np.abs(c).sum()


def test_errors_name_the_argument(rng):
    with pytest.raises(ValueError, match="kernel"):
        spread.Plan((16,), 1.0, kernel="quadratic")
    with pytest.raises(ValueError, match="n_grid"):
        spread.Plan((16, -4), 1.0)
    with pytest.raises(ValueError, match="box_len"):
        spread.Plan((16, 16), (1.0, 2.0, 3.0))
    p = spread.Plan((16, 16), 1.0, kernel="cic")
    with pytest.raises(ValueError, match="points"):
        p.setpts(np.zeros((5, 3)))
    p.setpts(np.zeros((5, 2)))
    with pytest.raises(ValueError, match="grid"):
        p.interp(np.zeros((16, 15)))
    with pytest.raises(TypeError, match="values"):
        p.spread(np.zeros(5, dtype=np.float32))
    with pytest.raises(farfield.InvalidArgumentError) as e:
        spread.Plan((4,), 1.0, kernel="es", tol=1e-12)
    assert e.value.code == 106


def test_device_arrays_need_a_cuda_plan_and_matching_shapes(rng):
    plan = spread.Plan((16, 16), 1.0, kernel="cic")
    with pytest.raises(farfield.FarfieldError, match="needs a CUDA plan"):
        plan.setpts(FakeDevice((10, 2)))
    with pytest.raises(ValueError, match=r"expected \(M, 2\)"):
        plan.setpts(FakeDevice((10, 3)))
    with pytest.raises(TypeError, match="dtype <f4"):
        plan.setpts(FakeDevice((10, 2), np.float32))
    plan.setpts(rng.uniform(0, 1, (10, 2)))
    with pytest.raises(farfield.FarfieldError, match="needs a CUDA plan"):
        plan.spread(FakeDevice((10,)))
    with pytest.raises(farfield.FarfieldError, match="needs a CUDA plan"):
        plan.interp(FakeDevice((16, 16), np.complex128))
    with pytest.raises(ValueError, match="M = 10"):
        plan.spread(FakeDevice((9,)))
    with pytest.raises(ValueError, match="shape"):
        plan.spread(FakeDevice((10,)), out=FakeDevice((16, 15)))
    with pytest.raises(TypeError, match="plan's dtype"):
        plan.spread(FakeDevice((10,), np.float32))
    with pytest.raises(ValueError, match="grad"):
        plan.interp(FakeDevice((16, 16)), grad=True)


@needs_gpu
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_device_arrays_equal_host_arrays(rng, dtype):
    import cuda_driver
    up = cuda_driver.DeviceArray.from_host
    cdtype = np.result_type(dtype, np.complex64)
    shape = (24, 20, 28)
    kw = dict(box_len=(1.0, 0.8, 1.2), box_lo=(0.0, -0.1, 0.2), kernel="es", tol=1e-5, dtype=np.dtype(dtype).name, backend="cuda")
    host, dev = spread.Plan(shape, **kw), spread.Plan(shape, **kw)
    pts = rng.uniform(-0.5, 1.5, (500, 3)).astype(dtype)
    host.setpts(pts)
    dev.setpts(up(pts))
    assert dev.num_points == 500
    c = rng.standard_normal(500).astype(dtype)
    cz = (c + 1j * c[::-1]).astype(cdtype)
    grid = rng.standard_normal(shape).astype(dtype)
    gz = (grid - 0.5j * grid).astype(cdtype)
    g = dev.spread(up(c))
    assert isinstance(g, cuda_driver.DeviceArray) and g.shape == shape
    np.testing.assert_array_equal(g.get(), host.spread(c))
    np.testing.assert_array_equal(dev.spread(up(cz)).get(), host.spread(cz))
    np.testing.assert_array_equal(dev.interp(up(grid)).get(), host.interp(grid))
    np.testing.assert_array_equal(dev.interp(up(gz)).get(), host.interp(gz))
    # a point outside a free axis: the host path's error, the previous points kept
    free = spread.Plan((16, 16), 1.0, periodic=False, kernel="cic", dtype=np.dtype(dtype).name, backend="cuda")
    free.setpts(up(np.full((3, 2), 0.5, dtype)))
    with pytest.raises(farfield.InvalidArgumentError, match="outside"):
        free.setpts(up(np.array([[0.5, 0.5], [0.5, 0.0001]], dtype)))
    assert free.num_points == 3
