/* Example: the free-space Poisson solve of a particle-in-cell code, distributed over MPI.
 *
 *   lap phi = -rho on an n^3 grid with free-space boundaries, E = -grad phi
 *
 * Every rank holds a slab of z-planes (the split FFTW-MPI makes; farfield_poisson_local_slab
 * says which), deposits its charge there, and gets phi and E back on the same planes. The
 * calls: MPI_Init -> makeplan_mpi (once) -> local_slab -> [deposit rho, execute, push with E]
 * every step -> destroy -> MPI_Finalize. The charge here is a Gaussian; the program checks
 * the field energy against the exact value and that the charge exerts no net force on itself,
 * and fails otherwise.
 *
 * Needs a farfield built with MPI (CMake -DFARFIELD_MPI=ON; the package sets farfield_HAS_MPI).
 *   CMake:      find_package(farfield 1.2 CONFIG REQUIRED COMPONENTS MPI)
 *               find_package(MPI REQUIRED COMPONENTS C)
 *               target_link_libraries(poisson_mpi_c PRIVATE farfield::farfield MPI::MPI_C m)
 *   pkg-config: mpicc -std=c11 poisson_mpi.c $(pkg-config --cflags --libs farfield) -lm -o poisson_mpi
 *   run:        mpirun -np 4 ./poisson_mpi
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
    const double pi = 3.14159265358979323846, s = 0.05; /* Gaussian width */
    enum { N = 64 };
    const int64_t n[3] = {N, N, N};
    const double h = 1.0 / N, spacing[3] = {h, h, h}; /* the unit cube */

    MPI_Init(&argc, &argv);
    int rank = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* 1. the plan, once (collective; every rank passes the same arguments). The C ABI takes
     *    the communicator as its Fortran handle. One thread per rank here; nthreads = 0 (the
     *    default) uses all cores, right for one rank per node. */
    farfield_poisson_opts opts;
    farfield_poisson_default_opts(&opts, sizeof opts);
    opts.nthreads = 1;
    farfield_poisson_plan plan = NULL;
    check(farfield_poisson_makeplan_mpi(MPI_Comm_c2f(MPI_COMM_WORLD), FARFIELD_POISSON_VICO, 3, n, spacing, &plan,
                                        &opts),
          "makeplan_mpi");

    /* 2. this rank's planes: z = z0 .. z0 + nz - 1, each N*N values, x fastest */
    int64_t z0 = 0, nz = 0;
    check(farfield_poisson_local_slab(plan, &z0, &nz), "local_slab");
    const size_t nloc = (size_t)nz * N * N; /* may be 0 on the last ranks */
    double *rho = malloc((nloc + 1) * sizeof *rho), *phi = malloc((nloc + 1) * sizeof *phi);
    double *e = malloc((3 * nloc + 1) * sizeof *e); /* E_x, then E_y, then E_z: e[idx + nloc*d] */
    if (!rho || !phi || !e) MPI_Abort(MPI_COMM_WORLD, 1);

    /* 3. the charge on this rank's planes (a PIC code deposits its particles here: a particle
     *    near a slab boundary deposits into the neighbour's planes, to be sent there first) */
    for (int64_t k = 0; k < nz; k++)
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                double x = i * h - 0.5, y = j * h - 0.5, z = (double)(z0 + k) * h - 0.5;
                double r2 = x * x + y * y + z * z;
                rho[i + N * (j + (size_t)N * k)] = exp(-r2 / (2 * s * s)) / (pow(2 * pi, 1.5) * s * s * s);
            }

    /* 4. solve (collective): phi and E on this rank's planes, the energy 1/2 sum rho phi h^3
     *    of the whole grid on every rank */
    double energy = 0;
    check(farfield_poisson_execute(plan, rho, phi, e, &energy), "execute");

    /* 5. use E: here the net force sum rho E h^3, which vanishes for any charge acting on
     *    itself (a PIC code interpolates E to its particles instead) */
    double force[4] = {0, 0, 0, 0}; /* x, y, z, and sum |rho E| h^3 as the scale */
    for (size_t idx = 0; idx < nloc; idx++)
        for (int d = 0; d < 3; d++) {
            force[d] += rho[idx] * e[idx + nloc * d] * h * h * h;
            force[3] += fabs(rho[idx] * e[idx + nloc * d]) * h * h * h;
        }
    MPI_Allreduce(MPI_IN_PLACE, force, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);

    /* 6. collective as well */
    farfield_poisson_destroy(plan);

    /* the field energy of a unit Gaussian charge, 1/(8 pi^(3/2) s) for the Green's function 1/(4 pi r) */
    const double exact = 1.0 / (8 * pow(pi, 1.5) * s);
    const double err = fabs(energy - exact) / exact;
    const double net = sqrt(force[0] * force[0] + force[1] * force[1] + force[2] * force[2]) / force[3];
    int ok = err < 1e-6 && net < 1e-10;
    if (rank == 0) {
        int nranks = 1;
        MPI_Comm_size(MPI_COMM_WORLD, &nranks);
        printf("poisson_mpi: %d^3 on %d rank(s): energy %.12f (exact %.12f, rel err %.1e), net force %.1e: %s\n", N,
               nranks, energy, exact, err, net, ok ? "ok" : "FAILED");
    }
    free(rho), free(phi), free(e);
    MPI_Finalize();
    return ok ? 0 : 1;
}
