"""An ASE calculator for the Coulomb energy and forces of point charges: periodic cells by SPME
(:mod:`farfield.ewald`), open boundaries by the FMM (:mod:`farfield.fmm`).

Units are ASE's: positions and cells in Å, charges in e, energy in eV, forces in eV/Å, stress
in eV/Å³ (Coulomb constant :data:`farfield.ewald.COULOMB_EV_ANGSTROM`). Charges are the atoms'
initial charges (``atoms.set_initial_charges``) unless given to the calculator. The periodic
energy is that of the Ewald sum with tin-foil boundary conditions and, for a net charge, a
uniform neutralising background.
"""

import numpy as np
from ase.calculators.calculator import Calculator, all_changes

from . import ewald, fmm

__all__ = ["Coulomb"]


class Coulomb(Calculator):
    """Coulomb interactions of point charges.

    Args:
        charges: (N,) charges in e, or None to use ``atoms.get_initial_charges()``.
        tol: relative accuracy: RMS force accuracy of SPME (periodic), relative l2 accuracy
            of the FMM (open); default 1e-6.
        method: ``"spme"`` (default) or ``"spectral"`` for periodic cells.
        nthreads: CPU threads (0 = all cores).

    Periodic cells must be periodic along all three axes; open systems along none (mixed
    boundaries raise ``ValueError``). Properties: ``energy``, ``free_energy``, ``forces``,
    ``stress`` (periodic only).
    """

    implemented_properties = ["energy", "free_energy", "forces", "stress"]

    def __init__(self, charges=None, tol=1e-6, method="spme", nthreads=0, **kwargs):
        super().__init__(**kwargs)
        self._charges = None if charges is None else np.asarray(charges, dtype=np.float64)
        self._tol = tol
        self._method = method
        self._nthreads = nthreads

    def calculate(self, atoms=None, properties=("energy",), system_changes=all_changes):
        super().calculate(atoms, properties, system_changes)
        a = self.atoms
        q = self._charges if self._charges is not None else np.asarray(a.get_initial_charges(), dtype=np.float64)
        if q.shape != (len(a),):
            raise ValueError(f"argument `charges` has shape {q.shape}, expected ({len(a)},) for the atoms")
        ke = ewald.COULOMB_EV_ANGSTROM
        pbc = np.asarray(a.pbc)
        pos = np.ascontiguousarray(a.positions, dtype=np.float64)
        if pbc.all():
            # farfield takes a lower-triangular cell: rotate (rcell @ Q = cell), compute, rotate back
            rcell, rot = a.cell.standard_form()
            rcell = np.ascontiguousarray(np.asarray(rcell), dtype=np.float64)
            r = ewald.compute(rcell, np.ascontiguousarray(pos @ rot.T), q, method=self._method, tol=self._tol, virial=True,
                              nthreads=self._nthreads)
            energy = ke * r.energy
            forces = ke * r.forces @ rot
            w = ke * (rot.T @ r.virial @ rot)
            stress = -w / a.get_volume()
            self.results["stress"] = stress.ravel()[[0, 4, 8, 5, 2, 1]]
        elif not pbc.any():
            r = fmm.evaluate(pos, q, tol=self._tol, nthreads=self._nthreads)
            energy = ke * r.energy
            forces = ke * r.field * q[:, None]
        else:
            raise ValueError(f"atoms.pbc = {pbc.tolist()}: farfield.ase.Coulomb handles fully periodic or fully open systems")
        self.results["energy"] = self.results["free_energy"] = float(energy)
        self.results["forces"] = forces
