"""farfield.poisson against the exact potential and field of a Gaussian charge in free space,
φ(r) = erf(r/(√2σ)) / (4π r) (unit total charge), on grids with different sizes and spacings
per axis (which also checks the axis order of the NumPy binding)."""

import math

import numpy as np
import pytest

import farfield
from farfield import poisson

from conftest import rel_l2

SIGMA = 0.05
CENTRE = np.array([0.02, -0.03, 0.01])


def gaussian_problem(shape, h):
    axes = [(np.arange(n) - (n - 1) / 2) * hh for n, hh in zip(shape, h)]
    x = np.meshgrid(*axes, indexing="ij")
    d = [xi - c for xi, c in zip(x, CENTRE)]
    r = np.sqrt(sum(di * di for di in d))
    rho = np.exp(-r * r / (2 * SIGMA ** 2)) / ((2 * np.pi) ** 1.5 * SIGMA ** 3)
    erf = np.vectorize(math.erf)
    with np.errstate(invalid="ignore", divide="ignore"):
        phi = np.where(r > 0, erf(r / (math.sqrt(2) * SIGMA)) / (4 * np.pi * r), math.sqrt(2 / np.pi) / SIGMA / (4 * np.pi))
        g = math.sqrt(2 / np.pi) / SIGMA * np.exp(-r * r / (2 * SIGMA ** 2))
        dphidr = np.where(r > 0, (g * r - erf(r / (math.sqrt(2) * SIGMA))) / (4 * np.pi * r * r), 0.0)
        e = np.stack([np.where(r > 0, -dphidr * di / r, 0.0) for di in d])
    return rho, phi, e


@pytest.mark.parametrize("method,tol", [("vico", 1e-9), ("vico_dct", 1e-9), ("hockney", 3e-3)])
def test_gaussian_anisotropic_grid(method, tol):
    shape, h = (48, 40, 44), (1 / 48, 1.1 / 40, 1.05 / 44)
    rho, phi, e = gaussian_problem(shape, h)
    s = poisson.solve(rho, h, method=method, field=method != "hockney")
    assert s.phi.shape == shape
    assert rel_l2(s.phi, phi) < tol
    if method != "hockney":
        assert s.field.shape == (3,) + shape
        assert rel_l2(s.field, e) < 1e-7
    # energy ½∫ρφ of the Gaussian: 1/(8π^{3/2} σ)
    assert abs(s.energy - 1 / (8 * np.pi ** 1.5 * SIGMA)) < max(tol, 1e-9) * 10 / (8 * np.pi ** 1.5 * SIGMA)


def test_plan_reuse_and_errors():
    shape, h = (32, 32, 32), 1 / 32
    rho, phi, _ = gaussian_problem(shape, (h,) * 3)
    p = poisson.Plan(shape, h)
    a = p.solve(rho).phi
    b = p.solve(2 * rho).phi
    assert np.allclose(b, 2 * a, rtol=1e-13, atol=0)
    with pytest.raises(ValueError, match="rho"):
        p.solve(rho[:, :, :8].copy())
    with pytest.raises(ValueError, match="shape"):
        poisson.Plan((8, -8), 0.1)
    with pytest.raises(ValueError, match="method"):
        poisson.Plan(shape, h, method="multigrid")
    bad = rho.copy()
    bad[1, 2, 3] = np.nan
    with pytest.raises(farfield.InvalidArgumentError) as e:
        p.solve(bad)
    assert e.value.code == 109
    with pytest.raises(farfield.InvalidArgumentError):
        poisson.Plan(shape, -1.0)
