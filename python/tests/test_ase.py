"""farfield.ase.Coulomb: the rock-salt Madelung energy of NaCl in a primitive (triclinic) and
a conventional cell, pymatgen's Ewald summation on a rattled triclinic crystal (neutral and
charged), forces and stress against finite differences, and an open cluster against a direct
NumPy sum."""

import numpy as np
import pytest

from ase.build import bulk

from farfield.ase import Coulomb
from farfield.ewald import COULOMB_EV_ANGSTROM as KE

from conftest import direct_sum

MADELUNG_NACL = 1.747564594633182190636212035544397403481


@pytest.mark.parametrize("cubic", [False, True])
def test_nacl_madelung(cubic):
    a = 5.64
    atoms = bulk("NaCl", "rocksalt", a=a, cubic=cubic)
    atoms.set_initial_charges([1.0 if s == "Na" else -1.0 for s in atoms.get_chemical_symbols()])
    atoms.calc = Coulomb(tol=1e-10)
    npairs = len(atoms) // 2
    expected = -npairs * MADELUNG_NACL * KE / (a / 2)
    assert abs(atoms.get_potential_energy() - expected) < 1e-8 * abs(expected)
    assert np.abs(atoms.get_forces()).max() < 1e-7


def test_forces_and_stress_are_derivatives_of_the_energy(rng):
    atoms = bulk("NaCl", "rocksalt", a=5.64, cubic=True)
    atoms.rattle(0.1, seed=3)
    atoms.set_cell(atoms.cell @ (np.eye(3) + 0.03 * rng.standard_normal((3, 3))), scale_atoms=True)
    atoms.set_initial_charges([1.0 if s == "Na" else -1.0 for s in atoms.get_chemical_symbols()])
    atoms.calc = Coulomb(tol=1e-10)
    f = atoms.get_forces()
    s = atoms.get_stress()
    h = 1e-5
    for i, d in [(0, 0), (3, 2), (5, 1)]:
        e = []
        for sgn in (1, -1):
            b = atoms.copy()
            b.calc = Coulomb(tol=1e-10)
            b.positions[i, d] += sgn * h
            e.append(b.get_potential_energy())
        assert abs(-(e[0] - e[1]) / (2 * h) - f[i, d]) < 1e-5
    # numerical stress of ASE (finite differences of the energy under strain)
    sn = atoms.calc.calculate_numerical_stress(atoms, d=1e-6)
    assert np.allclose(s, sn, rtol=0, atol=1e-6)


def test_open_cluster_against_direct_sum(rng):
    from ase import Atoms
    n = 200
    pos = rng.uniform(0, 12, (n, 3))
    q = rng.standard_normal(n)
    atoms = Atoms("H" * n, positions=pos, pbc=False)
    atoms.calc = Coulomb(charges=q, tol=1e-10)
    pot, fld = direct_sum(pos, q)
    e = 0.5 * KE * np.dot(q, pot)
    f = KE * q[:, None] * fld
    assert abs(atoms.get_potential_energy() - e) < 1e-9 * np.sum(np.abs(q)) ** 2
    assert np.linalg.norm(atoms.get_forces() - f) < 1e-9 * np.linalg.norm(f)


@pytest.mark.parametrize("net_charge", [0.0, 1.5])
def test_against_pymatgen_ewald_summation(rng, net_charge):
    """pymatgen's EwaldSummation (real-space, reciprocal and point terms summed to 12 figures,
    the same neutralising background for a net charge) on a rattled, triclinic 3×2×2 rock-salt
    supercell with random charges."""
    from pymatgen.core import Lattice, Structure
    from pymatgen.analysis.ewald import EwaldSummation
    atoms = bulk("NaCl", "rocksalt", a=5.64).repeat((3, 2, 2))
    atoms.set_cell(atoms.cell @ (np.eye(3) + 0.05 * rng.standard_normal((3, 3))), scale_atoms=True)
    atoms.rattle(0.2, seed=11)
    q = rng.standard_normal(len(atoms))
    q += (net_charge - q.sum()) / len(q)
    s = Structure(Lattice(atoms.cell[:]), atoms.get_chemical_symbols(), atoms.positions, coords_are_cartesian=True,
                  site_properties={"charge": q})
    ew = EwaldSummation(s, compute_forces=True)
    atoms.calc = Coulomb(charges=q, tol=1e-10)
    e = atoms.get_potential_energy()
    assert abs(e - ew.total_energy) < 1e-8 * abs(ew.total_energy)
    f = atoms.get_forces()
    assert np.linalg.norm(f - ew.forces) < 1e-7 * np.linalg.norm(ew.forces)
