"""farfield.nufft against the FINUFFT 2.5.1 wheel in the same process (relative l2 within
3 tol, FINUFFT's own accuracy being about tol) and against direct sums on small problems
(an oracle independent of both libraries); FINUFFT's calling conventions (shapes, n_trans,
out=, modeord, isign, adjoint) and error behaviour."""

import numpy as np
import pytest

import finufft
import farfield
import farfield.nufft as ff

from conftest import rel_l2

TOLS = {np.complex128: 1e-9, np.complex64: 1e-4}


def _points(rng, dim, m, rdt, r=np.pi):
    return [rng.uniform(-r, r, m).astype(rdt) for _ in range(dim)]


def _cplx(rng, shape, dt):
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dt)


def _direct_type1(pts, c, modes, isign):
    """f[k1, …] = Σ_j c_j exp(isign·i Σ_d k_d x_{d,j}), CMCL order, Python axis order."""
    ks = [np.arange(-(n // 2), (n + 1) // 2) for n in modes]
    grids = np.meshgrid(*ks, indexing="ij")
    phase = sum(g[..., None] * p.astype(np.float64)[(None,) * len(modes)] for g, p in zip(grids, pts))
    return (np.exp(isign * 1j * phase) * c.astype(np.complex128)).sum(-1)


@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
@pytest.mark.parametrize("dim,modes", [(1, (2000,)), (2, (96, 80)), (3, (24, 20, 28))])
@pytest.mark.parametrize("ty", [1, 2, 3])
@pytest.mark.parametrize("n_trans", [1, 3])
def test_plan_matches_finufft_wheel(rng, dt, dim, modes, ty, n_trans):
    tol = TOLS[dt]
    rdt = np.float32 if dt == np.complex64 else np.float64
    m = 5000
    pts = _points(rng, dim, m, rdt, np.pi if ty != 3 else 3.0)
    if ty == 3:
        freqs = _points(rng, dim, 4000, rdt, 30.0 if rdt == np.float64 else 10.0)
        args = (*pts, *((None,) * (3 - dim)), *freqs)
        data = _cplx(rng, (n_trans, m) if n_trans > 1 else (m,), dt)
    else:
        args = pts
        shape = ((n_trans,) if n_trans > 1 else ()) + (modes if ty == 2 else (m,))
        data = _cplx(rng, shape, dt)
    outs = []
    for mod in (ff, finufft):
        p = mod.Plan(ty, dim if ty == 3 else modes, n_trans, eps=tol, dtype=dt, nthreads=1)
        p.setpts(*args)
        outs.append(p.execute(data))
    assert outs[0].shape == outs[1].shape and outs[0].dtype == outs[1].dtype
    assert rel_l2(outs[0], outs[1]) <= 3 * tol


@pytest.mark.parametrize("name", ["nufft1d1", "nufft1d2", "nufft1d3", "nufft2d1", "nufft2d2", "nufft2d3",
                                  "nufft3d1", "nufft3d2", "nufft3d3"])
@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
def test_simple_functions_match_finufft_wheel(rng, name, dt):
    tol = TOLS[dt]
    rdt = np.float32 if dt == np.complex64 else np.float64
    dim, ty = int(name[5]), int(name[7])
    m = 3000
    pts = _points(rng, dim, m, rdt, np.pi if ty != 3 else 2.0)
    modes = {1: (300,), 2: (40, 36), 3: (16, 12, 14)}[dim]
    if ty == 1:
        args, kw = (*pts, _cplx(rng, m, dt), modes), {}
    elif ty == 2:
        args, kw = (*pts, _cplx(rng, modes, dt)), {}
    else:
        args, kw = (*pts, _cplx(rng, m, dt), *_points(rng, dim, 2000, rdt, 20.0 if rdt == np.float64 else 8.0)), {}
    a = getattr(ff, name)(*args, eps=tol, **kw)
    b = getattr(finufft, name)(*args, eps=tol, **kw)
    assert a.shape == b.shape
    assert rel_l2(a, b) <= 3 * tol


@pytest.mark.parametrize("modes", [(17,), (10, 7), (6, 5, 8)])
@pytest.mark.parametrize("modeord", [0, 1])
@pytest.mark.parametrize("isign", [1, -1])
def test_type1_against_direct_sum(rng, modes, modeord, isign):
    dim = len(modes)
    pts = _points(rng, dim, 50, np.float64)
    c = _cplx(rng, 50, np.complex128)
    p = ff.Plan(1, modes, eps=1e-12, isign=isign, modeord=modeord)
    p.setpts(*pts)
    f = p.execute(c)
    if modeord == 1:
        f = np.fft.fftshift(f)
    assert rel_l2(f, _direct_type1(pts, c, modes, isign)) < 1e-10


def test_type2_is_adjoint_of_type1_and_execute_adjoint(rng):
    modes = (12, 10)
    pts = _points(rng, 2, 200, np.float64)
    c = _cplx(rng, 200, np.complex128)
    f = _cplx(rng, modes, np.complex128)
    p1 = ff.Plan(1, modes, eps=1e-12)
    p1.setpts(*pts)
    p2 = ff.Plan(2, modes, eps=1e-12, isign=-1)
    p2.setpts(*pts)
    # <A c, f> = <c, A* f>
    lhs = np.vdot(f, p1.execute(c))
    rhs = np.vdot(p2.execute(f), c)
    assert abs(lhs - rhs) / abs(lhs) < 1e-10
    # execute_adjoint of the type 1 plan is the type 2 transform with the opposite sign
    assert rel_l2(p1.execute_adjoint(f), p2.execute(f)) < 1e-12
    # and against the wheel's execute_adjoint
    q = finufft.Plan(1, modes, eps=1e-12)
    q.setpts(*pts)
    assert rel_l2(p1.execute_adjoint(f), q.execute_adjoint(f)) < 3e-12


def test_out_argument_is_filled_without_copy(rng):
    pts = _points(rng, 3, 100, np.float32)
    c = _cplx(rng, (2, 100), np.complex64)
    out = np.zeros((2, 8, 6, 4), dtype=np.complex64)
    p = ff.Plan(1, (8, 6, 4), n_trans=2, eps=1e-5, dtype="complex64")
    p.setpts(*pts)
    r = p.execute(c, out=out)
    assert r is out and np.abs(out).max() > 0
    assert rel_l2(out, finufft.nufft3d1(*pts, c, (8, 6, 4), eps=1e-5)) < 3e-5


def test_errors_are_finufft_compatible_and_name_the_problem(rng):
    with pytest.raises(RuntimeError, match="must be single or double"):
        ff.Plan(1, (8, 8), dtype="float64")
    with pytest.warns(Warning, match="finufft_opts does not have"):
        ff.Plan(1, (8, 8), foo="bar")
    with pytest.warns(Warning, match="eps tolerance too small"):
        ff.Plan(1, (8, 8), eps=1e-30)
    with pytest.raises(RuntimeError, match="transform type invalid"):
        ff.Plan(4, (8,))
    with pytest.raises(TypeError, match="does not have the correct dtype"):
        ff.Plan(1, (8, 8), dtype="complex64").setpts(np.ones(1, dtype="complex128"))
    # a non-finite coordinate: FINUFFT's invalid-argument status, farfield's detail naming it
    p = ff.Plan(1, (8,))
    x = np.zeros(5)
    x[3] = np.nan
    with pytest.raises(farfield.NufftError, match=r"invalid argument.*3") as e:
        p.setpts(x)
    assert e.value.code == 21 and isinstance(e.value, RuntimeError)
    # upsampfac out of range → FINUFFT's code 7
    with pytest.raises(farfield.NufftError) as e:
        ff.Plan(1, (8,), upsampfac=0.5)
    assert e.value.code == 7
    # execute before setpts
    with pytest.raises(RuntimeError, match="before setpts"):
        ff.Plan(1, (8,)).execute(np.ones(3, dtype=np.complex128))
    # the output may not be a view of the input (no aliasing reaches Rust)
    p = ff.Plan(2, (8,), eps=1e-6)
    p.setpts(np.zeros(8))
    buf = np.ones(8, dtype=np.complex128)
    with pytest.raises(ValueError):
        p._core.execute(buf, buf, False, True)



@pytest.mark.parametrize("dt", [np.complex128, np.complex64])
@pytest.mark.parametrize("ty,modes,n_trans", [(1, (32,), 1), (2, (16, 12), 1), (1, (8, 6, 4), 3), (2, (9,), 2),
                                              (3, 2, 2), (3, 1, 1)])
def test_one_call_path_equals_general_path(rng, dt, ty, modes, n_trans):
    """Canonical arrays go through the one native call (`_NufftCore.execute_fast`), others
    through FINUFFT's checks in Python: same shapes, dtypes and values both ways, forward and
    adjoint, with and without `out`; the (1, M) form of one transform takes the general path."""
    rdt = np.float32 if dt == np.complex64 else np.float64
    m = 40
    p = ff.Plan(ty, modes, n_trans=n_trans, eps=1e-6, dtype=dt)
    dim = modes if ty == 3 else len(modes)
    pts = _points(rng, dim, m, rdt)
    if ty == 3:
        p.setpts(*pts, *([None] * (3 - dim)), *_points(rng, dim, 20, rdt, r=8.0))
    else:
        p.setpts(*pts)
    shape = ((n_trans,) if n_trans > 1 else ()) + (tuple(modes) if ty == 2 else (m,))
    data = _cplx(rng, shape, dt)
    fwd = None
    for adjoint in (False, True):
        inp = fwd if adjoint else data
        run = p.execute_adjoint if adjoint else p.execute
        assert p._core.execute_fast(inp, None, adjoint) is not None, "canonical arrays must take the one-call path"
        fast = run(inp)
        general = p._run(inp, None, adjoint)
        assert fast.shape == general.shape and fast.dtype == general.dtype == dt
        # type 3 with several transforms is not bitwise reproducible between calls (threads)
        assert rel_l2(fast, general) < 1e-5
        out = np.empty_like(fast)
        assert run(inp, out=out) is out and rel_l2(out, general) < 1e-5
        if n_trans == 1:
            one = run(inp[None])
            assert p._core.execute_fast(inp[None], None, adjoint) is None
            assert rel_l2(one.reshape(general.shape), general) < 1e-5
        fwd = fast if fwd is None else fwd
    o = np.empty_like(fwd)
    o.flags.writeable = False
    with pytest.raises(TypeError, match="requirement: W"):
        p.execute(data, out=o)
    with pytest.raises(TypeError, match="correct dtype"):
        p.execute(data.astype(np.complex128 if dt == np.complex64 else np.complex64))
