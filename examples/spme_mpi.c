/* Example: the long-range electrostatics of an MD code with its own domain decomposition,
 * distributed over MPI with smooth particle-mesh Ewald.
 *
 * Every rank owns some of the charges (here: the ions of every K-th atomic layer of a rock-salt
 * crystal; any split works, a rank may own none) and passes only those — no ghosts: the
 * library routes the charges to its slabs of the mesh, exchanges the real-space neighbours and
 * the halo planes itself, and returns the potentials and fields of this rank's charges in its
 * own order, with the energy and virial of the whole system on every rank. The calls: MPI_Init
 * -> makeplan_mpi (once) -> [execute] every step (set_box when the cell changes) -> destroy ->
 * MPI_Finalize. The program checks the NaCl Madelung constant (1.747564594633) and that the
 * forces vanish at the lattice sites, and fails otherwise.
 *
 * Units are the caller's: no Coulomb constant is applied (multiply by 138.935458 kJ mol^-1 nm
 * e^-2 for GROMACS units, LAMMPS's qqr2e, ...).
 *
 * Needs a farfield built with MPI (CMake -DFARFIELD_MPI=ON; the package sets farfield_HAS_MPI).
 *   CMake:      find_package(farfield 1.2 CONFIG REQUIRED COMPONENTS MPI)
 *               find_package(MPI REQUIRED COMPONENTS C)
 *               target_link_libraries(spme_mpi_c PRIVATE farfield::farfield MPI::MPI_C m)
 *   pkg-config: mpicc -std=c11 spme_mpi.c $(pkg-config --cflags --libs farfield) -lm -o spme_mpi
 *   run:        mpirun -np 4 ./spme_mpi
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <farfield.h>
#include <mpi.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* stops every rank: one rank returning early would leave the others waiting in a collective */
static void check(int status, const char *what) {
    if (status != FARFIELD_OK) {
        fprintf(stderr, "%s: %s (%s)\n", what, farfield_status_string(status), farfield_last_error_message());
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv) {
    enum { CELLS = 6, SITES = 2 * CELLS }; /* 6^3 conventional cells: 12^3 = 1728 ions */
    const double a = 0.5640;                /* lattice constant (nm); ions every a/2 */
    const double madelung = 1.747564594633;

    MPI_Init(&argc, &argv);
    int rank, nranks;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    /* this rank's ions: the layers k = rank, rank + K, ... (the caller's decomposition) */
    int64_t n = 0;
    for (int k = rank; k < SITES; k += nranks) n += SITES * SITES;
    double *xyz = malloc(sizeof(double) * (size_t)(3 * n + 1)), *q = malloc(sizeof(double) * (size_t)(n + 1));
    double *field = malloc(sizeof(double) * (size_t)(3 * n + 1));
    int64_t m = 0;
    for (int k = rank; k < SITES; k += nranks)
        for (int j = 0; j < SITES; j++)
            for (int i = 0; i < SITES; i++, m++) {
                xyz[3 * m] = i * a / 2, xyz[3 * m + 1] = j * a / 2, xyz[3 * m + 2] = k * a / 2;
                q[m] = (i + j + k) % 2 ? -1.0 : 1.0;
            }
    const double L = CELLS * a;
    const double box[9] = {L, 0, 0, 0, L, 0, 0, 0, L}; /* rows a, b, c */

    /* the communicator as its Fortran handle (Fortran: the integer communicator itself) */
    const MPI_Fint comm = MPI_Comm_c2f(MPI_COMM_WORLD);
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o, sizeof o);
    o.nthreads = 1; /* threads per rank */
    farfield_ewald_plan plan = NULL;
    /* n_max: the most charges this rank will pass per step */
    check(farfield_ewald_makeplan_mpi(comm, FARFIELD_EWALD_SPME, box, n > 0 ? n : 1, 1e-6, &plan, &o), "makeplan_mpi");

    double energy = 0, virial[9];
    check(farfield_ewald_execute(plan, n, xyz, q, NULL, field, &energy, virial), "execute");

    /* energy per ion pair = -M / d, d = a/2 the nearest-neighbour distance */
    const double npairs = SITES * SITES * SITES / 2.0;
    const double m_est = -energy / npairs * (a / 2);
    double fmax = 0;
    for (int64_t i = 0; i < 3 * n; i++) fmax = fmax > fabs(field[i]) ? fmax : fabs(field[i]);
    MPI_Allreduce(MPI_IN_PLACE, &fmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    const double rel = fabs(m_est - madelung) / madelung;
    if (rank == 0)
        printf("NaCl %d^3 ions on %d rank(s): energy %.10f e^2/nm, Madelung constant %.12f (exact %.12f, rel. error %.1e), "
               "largest |E| %.1e e/nm^2, pressure-virial trace %.6f\n",
               SITES, nranks, energy, m_est, madelung, rel, fmax, virial[0] + virial[4] + virial[8]);

    check(farfield_ewald_destroy(plan), "destroy");
    free(xyz), free(q), free(field);
    MPI_Finalize();
    /* the SPME force accuracy 1e-6 gives the energy far better; the sites are centres of symmetry */
    return rel < 1e-6 && fmax < 1e-3 ? EXIT_SUCCESS : EXIT_FAILURE;
}
