"""farfield.fmm against fmm3dpy (FMM3D's Laplace FMM, run at a tolerance far below ours) at
the sources and at separate targets, and against direct sums (a Plummer sphere), open
boundaries; periodic boundaries against the NaCl Madelung constant; argument errors."""

import numpy as np
import pytest

import farfield
from farfield import fmm

from conftest import FakeDevice, direct_sum, needs_gpu, rel_l2

MADELUNG_NACL = 1.747564594633182190636212035544397403481


def fmm3d_reference(src, q, targets=None, eps=1e-12):
    """FMM3D's potentials and fields (−∇φ) of `q` at the sources or at `targets`. FMM3D's
    Laplace kernel is 1/(4π r); farfield's is 1/r: its results are scaled by 4π here."""
    import fmm3dpy
    kw = dict(eps=eps, sources=np.ascontiguousarray(src.T), charges=q, pg=2)
    if targets is not None:
        kw.update(targets=np.ascontiguousarray(targets.T), pgt=2)
    out = fmm3dpy.lfmm3d(**kw)
    s = 4 * np.pi
    if targets is None:
        return s * out.pot, -s * out.grad.T
    return s * out.pottarg, -s * out.gradtarg.T


def plummer(rng, n, a=1.0):
    """Plummer sphere positions (Aarseth, Hénon & Wielen 1974 sampling of the radius)."""
    r = a / np.sqrt(rng.uniform(0, 1, n) ** (-2.0 / 3.0) - 1.0)
    r = np.minimum(r, 20 * a)
    v = rng.standard_normal((n, 3))
    return v / np.linalg.norm(v, axis=1)[:, None] * r[:, None]


@pytest.mark.parametrize("dist", ["uniform", "plummer"])
@pytest.mark.parametrize("tol", [1e-4, 1e-8])
def test_sources_against_fmm3d_and_direct_sums(rng, dist, tol):
    # the clustered case against direct sums: FMM3D needs 12 s for it at 1e-11 on two cores
    n = 20000 if dist == "uniform" else 8000
    src = rng.uniform(0, 1, (n, 3)) if dist == "uniform" else plummer(rng, n)
    q = rng.standard_normal(n)
    pot, fld = fmm3d_reference(src, q, eps=1e-3 * tol) if dist == "uniform" else direct_sum(src, q)
    r = fmm.evaluate(src, q, tol=tol)
    assert rel_l2(r.potential, pot) <= tol
    assert rel_l2(r.field, fld) <= tol
    assert abs(r.energy - 0.5 * np.dot(q, pot)) <= tol * abs(0.5 * np.dot(np.abs(q), np.abs(pot)))


def test_targets_against_fmm3d(rng):
    src = rng.uniform(-1, 1, (5000, 3))
    q = rng.standard_normal(5000)
    trg = rng.uniform(-1.5, 1.5, (3000, 3))
    pot, fld = fmm3d_reference(src, q, trg)
    r = fmm.Plan(tol=1e-7).evaluate(src, q, targets=trg)
    assert r.potential.shape == (3000,) and r.field.shape == (3000, 3)
    assert rel_l2(r.potential, pot) <= 1e-7
    assert rel_l2(r.field, fld) <= 1e-7


def test_periodic_nacl_madelung():
    na = np.array([[0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 1, 0]], float) + 0.25
    pos = np.concatenate([na, na + np.array([1.0, 0, 0])])
    q = np.array([1.0] * 4 + [-1.0] * 4)
    r = fmm.evaluate(pos, q, tol=1e-10, periodic=2.0)
    assert abs(r.energy / 4 + MADELUNG_NACL) < 1e-7


def test_bad_input_raises_naming_the_argument(rng):
    src = rng.uniform(0, 1, (10, 3))
    q = np.ones(10)
    with pytest.raises(ValueError, match="sources"):
        fmm.evaluate(src[:5], q)
    with pytest.raises(ValueError, match="targets"):
        fmm.evaluate(src, q, targets=np.zeros((3, 2)))
    with pytest.raises(ValueError, match="nthreads"):
        fmm.Plan(nthreads=-1)
    with pytest.raises(TypeError, match="charges"):
        fmm.evaluate(src, q.astype(np.int64))
    with pytest.raises(farfield.InvalidArgumentError) as e:
        fmm.evaluate(src, q, tol=0.0)
    assert e.value.code == 107
    bad = src.copy()
    bad[4, 2] = np.nan
    with pytest.raises(farfield.InvalidArgumentError, match="4"):
        fmm.evaluate(bad, q)


def test_exclusions_against_fmm3d_and_the_pair_terms(rng):
    """Excluded and scaled pairs: the plan's answer equals fmm3dpy's sums at the sources minus
    each listed pair's (1 − s) q q / r (computed here), potentials, fields and energy; bad lists
    raise naming the pair."""
    n = 400
    src = rng.uniform(0, 1, (n, 3))
    q = rng.uniform(-1, 1, n)
    pairs = np.array([[0, 1], [2, 5], [7, 30], [40, 41], [41, 40]], dtype=np.int64)
    scales = np.array([0.0, 0.5, 1 / 1.2, 0.0, 0.0])
    pot, grad = fmm3d_reference(src, q)
    pot, grad = pot.copy(), grad.copy()
    e0 = 0.5 * np.dot(q, pot)
    for (i, j), s in zip(pairs[:4], scales[:4]):
        d = src[i] - src[j]
        r = np.linalg.norm(d)
        w = 1 - s
        pot[i] -= w * q[j] / r
        pot[j] -= w * q[i] / r
        grad[i] -= w * q[j] * d / r ** 3
        grad[j] += w * q[i] * d / r ** 3
        e0 -= w * q[i] * q[j] / r
    r = fmm.evaluate(src, q, tol=1e-10, exclusions=pairs, scales=scales)
    assert rel_l2(r.potential, pot) < 1e-8
    assert rel_l2(r.field, grad) < 1e-8
    assert abs(r.energy - e0) < 1e-8 * abs(e0)
    p = fmm.Plan(tol=1e-6)
    with pytest.raises(farfield.InvalidArgumentError, match="two scales"):
        p.set_exclusions(np.array([[0, 1], [1, 0]]), np.array([0.0, 0.5]))
    with pytest.raises(ValueError, match="pairs"):
        p.set_exclusions(np.zeros((2, 3), dtype=np.int64))
    p.set_exclusions(np.array([[3, n]]))
    with pytest.raises(farfield.InvalidArgumentError, match="exclusion pair"):
        p.evaluate(src, q)



def test_device_arrays_need_a_cuda_plan_and_matching_shapes():
    plan = fmm.Plan(tol=1e-6)
    with pytest.raises(farfield.FarfieldError, match="backend CUDA"):
        plan.evaluate(FakeDevice((10, 3)), FakeDevice((10,)))
    with pytest.raises(TypeError, match="targets"):
        plan.evaluate(FakeDevice((10, 3)), FakeDevice((10,)), targets=FakeDevice((4, 3)))
    with pytest.raises(ValueError, match=r"\(N, 3\) and \(N,\)"):
        plan.evaluate(FakeDevice((10, 3)), FakeDevice((9,)))
    with pytest.raises(TypeError, match="`charges` is not a device array"):
        plan.evaluate(FakeDevice((10, 3)), np.ones(10))
    with pytest.raises(TypeError, match="dtype <f4"):
        plan.evaluate(FakeDevice((10, 3)), FakeDevice((10,), np.float32))
    # the library's own check of overlapping outputs (reached with the plan's checks still ahead)
    x, q = FakeDevice((10, 3)), FakeDevice((10,))
    with pytest.raises(ValueError, match="`field` and `sources` overlap"):
        plan._core.evaluate_device(x, q, FakeDevice((10,)), x)


@needs_gpu
def test_device_arrays_equal_the_cpu_plan(rng):
    import cuda_driver
    src = rng.uniform(-1, 1, (20000, 3))
    q = rng.standard_normal(20000)
    want = fmm.Plan(tol=1e-8).evaluate(src, q)
    got = fmm.Plan(tol=1e-8, backend="cuda").evaluate(cuda_driver.DeviceArray.from_host(src), cuda_driver.DeviceArray.from_host(q))
    assert isinstance(got.potential, cuda_driver.DeviceArray) and got.field.shape == (20000, 3)
    assert rel_l2(got.potential.get(), want.potential) < 1e-7
    assert rel_l2(got.field.get(), want.field) < 1e-7
    assert abs(got.energy - want.energy) <= 1e-7 * abs(want.energy)
