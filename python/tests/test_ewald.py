"""farfield.ewald against OpenMM's NonbondedForce PME (Reference platform, double precision)
on the TIP3P water box of data/water_tip3p_900 (positions nm, charges e, box nm), with and
without exclusions and scaled pairs; the NaCl Madelung constant; the virial against a finite
difference of the energy under strain."""

import numpy as np
import pytest

import farfield
from farfield import ewald

from conftest import FakeDevice, load_system, needs_gpu, rel_l2

KE = ewald.COULOMB_KJ_MOL_NM
MADELUNG_NACL = 1.747564594633182190636212035544397403481


def openmm_pme(pos, q, box, exceptions=(), tol=1e-7, cutoff=1.2):
    """Energy (kJ/mol) and forces (kJ/mol/nm) of OpenMM's PME; `exceptions`: (i, j, scale)."""
    import openmm as mm
    from openmm import unit
    system = mm.System()
    system.setDefaultPeriodicBoxVectors(*[mm.Vec3(*row) for row in box])
    nb = mm.NonbondedForce()
    nb.setNonbondedMethod(mm.NonbondedForce.PME)
    nb.setCutoffDistance(cutoff)
    nb.setEwaldErrorTolerance(tol)
    nb.setUseDispersionCorrection(False)
    for qi in q:
        system.addParticle(1.0)
        nb.addParticle(float(qi), 1.0, 0.0)
    for i, j, s in exceptions:
        nb.addException(int(i), int(j), float(s * q[i] * q[j]), 1.0, 0.0)
    system.addForce(nb)
    ctx = mm.Context(system, mm.VerletIntegrator(1e-3), mm.Platform.getPlatformByName("Reference"))
    ctx.setPositions(pos)
    st = ctx.getState(getEnergy=True, getForces=True)
    e = st.getPotentialEnergy().value_in_unit(unit.kilojoule_per_mole)
    f = np.asarray(st.getForces(asNumpy=True).value_in_unit(unit.kilojoule_per_mole / unit.nanometer))
    return e, f


def water_pairs(n_atoms):
    """The intramolecular pairs (O-H1, O-H2, H1-H2) of O,H,H-ordered water."""
    mol = np.arange(0, n_atoms, 3)
    return np.concatenate([np.stack([mol, mol + 1], 1), np.stack([mol, mol + 2], 1), np.stack([mol + 1, mol + 2], 1)])


@pytest.fixture(scope="module")
def water():
    return load_system("water_tip3p_900")


@pytest.mark.parametrize("method", ["spme", "spectral"])
def test_water_all_pairs_against_openmm(water, method):
    pos, q, box = water
    tol = 1e-6
    e_mm, f_mm = openmm_pme(pos, q, box)
    r = ewald.Plan(box, method=method, tol=tol).compute(pos, q)
    assert abs(KE * r.energy - e_mm) <= tol * abs(e_mm)
    assert rel_l2(KE * r.forces, f_mm) <= tol
    # φ_i = ∂U/∂q_i: U = ½ Σ q φ
    assert abs(0.5 * np.dot(q, r.potentials) - r.energy) <= 1e-12 * abs(r.energy)


def test_water_exclusions_and_scaled_pairs_against_openmm(water):
    pos, q, box = water
    pairs = water_pairs(len(q))
    # O-H pairs excluded, H-H pairs scaled by 0.5 (an OPLS-like 1-4 scale, to exercise both)
    scales = np.where(np.arange(len(pairs)) < 2 * len(q) // 3, 0.0, 0.5)
    e_mm, f_mm = openmm_pme(pos, q, box, exceptions=[(i, j, s) for (i, j), s in zip(pairs, scales)])
    p = ewald.Plan(box, tol=1e-7)
    p.set_exclusions(pairs, scales)
    r = p.compute(pos, q, virial=True)
    # relative to the RMS of the force field's own Coulomb forces the error of the same
    # absolute size is larger (farfield's tol is relative to the all-pairs RMS force)
    assert abs(KE * r.energy - e_mm) <= 1e-6 * abs(e_mm)
    assert rel_l2(KE * r.forces, f_mm) <= 1e-6


def test_virial_is_minus_strain_derivative_of_energy(water):
    pos, q, box = water
    p = ewald.Plan(box, method="spme", tol=1e-8)
    r = p.compute(pos, q, virial=True)
    assert np.allclose(r.virial, r.virial.T, rtol=0, atol=1e-12 * abs(r.energy))
    assert abs(np.trace(r.virial) - r.energy) <= 1e-6 * abs(r.energy)
    # one plan, the cell changed by set_box (parameters kept): the derivative of the same
    # discretised energy; strains ε with one upper-triangular entry keep the cell
    # lower-triangular, and −∂U/∂ε_ab = W_ab
    h = 1e-5
    ps = ewald.Plan(box, method="spme", tol=1e-8, n_max=len(q))
    for a, b in [(0, 0), (1, 1), (2, 2), (0, 1), (0, 2), (1, 2)]:
        u = []
        for s in (h, -h):
            m = np.eye(3)
            m[a, b] += s
            ps.set_box(box @ m.T)
            u.append(ps.compute(pos @ m.T, q, potentials=False, forces=False).energy)
        dudeps = (u[0] - u[1]) / (2 * h)
        assert abs(-dudeps - r.virial[a, b]) <= 1e-6 * abs(r.energy), (a, b)


@pytest.mark.parametrize("method", ["spme", "spectral", "direct"])
def test_nacl_madelung_constant(method):
    # rock salt, conventional cubic cell of side 2 (nearest neighbours at distance 1)
    na = np.array([[0, 0, 0], [0, 1, 1], [1, 0, 1], [1, 1, 0]], float)
    cl = na + np.array([1.0, 0, 0])
    pos = np.concatenate([na, cl])
    q = np.array([1.0] * 4 + [-1.0] * 4)
    r = ewald.compute([2.0, 2.0, 2.0], pos, q, method=method, tol=1e-10)
    assert abs(r.energy / 4 + MADELUNG_NACL) < 1e-8
    # every ion sits at a centre of symmetry: no force
    assert np.abs(r.forces).max() < 1e-8


def test_triclinic_cell_equals_orthorhombic_images(water):
    # a sheared description of the same lattice (b' = b + a) gives the same energy
    pos, q, box = water
    sheared = box.copy()
    sheared[1] += box[0]
    e0 = ewald.compute(box, pos, q, tol=1e-8).energy
    e1 = ewald.compute(sheared, pos, q, tol=1e-8).energy
    assert abs(e1 - e0) <= 1e-6 * abs(e0)


def test_bad_input_raises_naming_the_argument(water):
    pos, q, box = water
    with pytest.raises(ValueError, match="positions"):
        ewald.Plan(box).compute(pos[:, :2], q)
    with pytest.raises(TypeError, match="charges"):
        ewald.Plan(box).compute(pos, q.astype(np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        ewald.Plan(box).compute(np.asfortranarray(pos), q)
    with pytest.raises(ValueError, match="grid"):
        ewald.Plan(box, grid=(32, -1, 32))
    with pytest.raises(ValueError, match="method"):
        ewald.Plan(box, method="pppm")
    with pytest.raises(ValueError, match="box"):
        ewald.Plan(np.ones(4))
    bad = pos.copy()
    bad[7, 1] = np.inf
    with pytest.raises(farfield.InvalidArgumentError) as e:
        ewald.Plan(box).compute(bad, q)
    assert e.value.code == 109 and "7" in str(e.value)
    p = ewald.Plan(box)
    p.set_exclusions(np.array([[0, 5000]]))
    with pytest.raises(farfield.InvalidArgumentError, match="5000"):
        p.compute(pos, q)
    with pytest.raises(farfield.InvalidArgumentError) as e:
        ewald.Plan(box, tol=2.0).compute(pos, q)
    assert e.value.code == 107


def test_device_arrays_need_a_cuda_plan_and_matching_shapes(water):
    x, q, box = water
    plan = ewald.Plan(box, tol=1e-5)
    n = len(q)
    with pytest.raises(farfield.FarfieldError, match="backend=\"cuda\""):
        plan.compute(FakeDevice((n, 3)), FakeDevice((n,)))
    with pytest.raises(ValueError, match=r"\(N, 3\) and \(N,\)"):
        plan.compute(FakeDevice((n, 3)), FakeDevice((n - 1,)))
    with pytest.raises(TypeError, match="`positions` is not a device array"):
        plan.compute(x, FakeDevice((n,)))
    a, b = FakeDevice((n, 3)), FakeDevice((n,))
    with pytest.raises(ValueError, match="`field` and `positions` overlap"):
        plan._core.compute_device(a, b, None, a)


@needs_gpu
def test_device_arrays_equal_host_arrays(water):
    import cuda_driver
    x, q, box = water
    plan = ewald.Plan(box, tol=1e-6, backend="cuda")
    want = plan.compute(x, q, virial=True)
    got = plan.compute(cuda_driver.DeviceArray.from_host(x), cuda_driver.DeviceArray.from_host(q), virial=True)
    assert got.forces is None  # the test's arrays have no arithmetic: the field is the result
    assert rel_l2(got.field.get(), want.field) < 1e-12
    assert rel_l2(got.potentials.get(), want.potentials) < 1e-12
    assert abs(got.energy - want.energy) <= 1e-12 * abs(want.energy)
    assert np.allclose(got.virial, want.virial, rtol=1e-12, atol=1e-12 * np.abs(want.virial).max())
