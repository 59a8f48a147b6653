/* Distributed SPME through the C API, run by CTest under `mpirun -np K` (K = 1…4,
 * --oversubscribe): 3000 random charges (net charge zero) in a triclinic cell, passed to the
 * distributed plan (farfield_ewald_makeplan_mpi) by two decompositions of the caller — every
 * K-th charge on each rank, and all charges on the last rank (the others pass none) — and
 * checked against
 *   (a) the single-process plan with the same parameters, on every rank: φ and E of each
 *       rank's own charges, the energy and the virial to ≤ 1e-12 relative (max-norm over all
 *       charges, relative to the largest value), and
 *   (b) the classic Ewald sum (FARFIELD_EWALD_DIRECT at tol 1e-10, rank 0): the relative RMS
 *       force error of the distributed result within the requested tol = 1e-5;
 * and the error paths: MPI_COMM_NULL gives a status (no MPI abort), spectral Ewald is refused on
 * every rank, a NULL input on one rank fails on every rank (and the plan stays usable), MPI not
 * (or no longer) initialised gives FARFIELD_ERR_NOT_SUPPORTED; and (c) excluded and scaled
 * pairs by global id (farfield_ewald_set_exclusions_scaled on rank 0 only,
 * farfield_ewald_execute_ids) against the single-process plan with the same pairs, ≤ 1e-12.
 * SPDX-License-Identifier: MIT OR Apache-2.0
 *
 * A rank whose check fails only counts the failure and goes on, so that every rank reaches the
 * same collectives; where a rank cannot go on (no plan), require_all() aborts the whole job. */
#include "ff_test.h"

#include <mpi.h>

enum { NQ = 3000 };
static const double TOL = 1e-5;
static const double CELL[9] = {3.0, 0.0, 0.0, 0.5, 3.2, 0.0, -0.3, 0.4, 3.4};
static int rank = 0, nranks = 1;

static void require_all(int ok, const char *what) {
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        if (!ok) fprintf(stderr, "rank %d: %s failed: %s\n", rank, what, farfield_last_error_message());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

/* max over ranks of max|a - b|, relative to the max over ranks of max|b| */
static double rel_max_all(const double *a, const double *b, size_t n) {
    double m[2] = {0, 0};
    for (size_t i = 0; i < n; i++) {
        m[0] = fmax(m[0], fabs(a[i] - b[i]));
        m[1] = fmax(m[1], fabs(b[i]));
    }
    MPI_Allreduce(MPI_IN_PLACE, m, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m[0] / m[1];
}

/* The system: positions inside (and a few outside) the cell, charges ±1, net charge zero. */
static void make_system(double *xyz, double *q) {
    uint64_t s = 12345;
    for (int i = 0; i < NQ; i++) {
        double f[3];
        for (int d = 0; d < 3; d++) {
            s = s * 6364136223846793005ULL + 1442695040888963407ULL;
            f[d] = 1.2 * (double)(s >> 11) / 9007199254740992.0 - 0.1; /* fractional, some outside [0, 1) */
        }
        for (int d = 0; d < 3; d++) xyz[3 * i + d] = f[0] * CELL[d] + f[1] * CELL[3 + d] + f[2] * CELL[6 + d];
        q[i] = (i % 2) ? -1.0 : 1.0;
    }
}

/* One decomposition: `mine[i]` says whether charge i is passed by this rank. */
static void check_decomposition(MPI_Fint fcomm, const char *name, const int *mine, const double *xyz, const double *q,
                                const double *phi_s, const double *e_s, double u_s, const double *w_s,
                                const farfield_ewald_params *par, const double *e_direct) {
    size_t nl = 0;
    for (int i = 0; i < NQ; i++) nl += (size_t)mine[i];
    double *lx = malloc(sizeof(double) * (3 * nl + 1)), *lq = malloc(sizeof(double) * (nl + 1));
    double *phi = malloc(sizeof(double) * (nl + 1)), *e = malloc(sizeof(double) * (3 * nl + 1));
    double *sphi = malloc(sizeof(double) * (nl + 1)), *se = malloc(sizeof(double) * (3 * nl + 1));
    size_t k = 0;
    for (int i = 0; i < NQ; i++)
        if (mine[i]) {
            for (int d = 0; d < 3; d++) lx[3 * k + d] = xyz[3 * i + d], se[3 * k + d] = e_s[3 * i + d];
            lq[k] = q[i], sphi[k] = phi_s[i];
            k++;
        }
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o, sizeof o);
    o.nthreads = 1;
    o.xi = par->xi, o.rc = par->rc, o.order_or_support = par->order_or_support;
    for (int d = 0; d < 3; d++) o.grid[d] = par->grid[d];
    farfield_ewald_plan p = NULL;
    int st = farfield_ewald_makeplan_mpi(fcomm, FARFIELD_EWALD_SPME, CELL, nl > 0 ? (int64_t)nl : 1, TOL, &p, &o);
    EXPECT_STATUS(st, FARFIELD_OK);
    require_all(st == FARFIELD_OK && p != NULL, "farfield_ewald_makeplan_mpi");
    double u = 0, w[9];
    st = farfield_ewald_execute(p, (int64_t)nl, lx, lq, phi, e, &u, w);
    EXPECT_STATUS(st, FARFIELD_OK);
    require_all(st == FARFIELD_OK, "farfield_ewald_execute");
    double dphi = rel_max_all(phi, sphi, nl), de = rel_max_all(e, se, 3 * nl);
    double wmax = 0, dw = 0;
    for (int c = 0; c < 9; c++) wmax = fmax(wmax, fabs(w_s[c])), dw = fmax(dw, fabs(w[c] - w_s[c]));
    dw /= wmax;
    double du = fabs(u - u_s) / fabs(u_s);
    /* (b) the relative RMS force error against the classic Ewald sum, over all charges */
    double sq[2] = {0, 0};
    k = 0;
    for (int i = 0; i < NQ; i++)
        if (mine[i]) {
            for (int d = 0; d < 3; d++) {
                double f = q[i] * e[3 * k + d], fr = q[i] * e_direct[3 * i + d];
                sq[0] += (f - fr) * (f - fr), sq[1] += fr * fr;
            }
            k++;
        }
    MPI_Allreduce(MPI_IN_PLACE, sq, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double ef = sqrt(sq[0] / sq[1]);
    if (rank == 0)
        printf("%s on %d rank(s): vs single process: phi %.1e, E %.1e, U %.1e, W %.1e; force error vs Ewald sum %.2e\n", name,
               nranks, dphi, de, du, dw, ef);
    EXPECT_MSG(dphi <= 1e-12 && de <= 1e-12 && du <= 1e-12 && dw <= 1e-12,
               "%s: differs from the single-process plan: phi %.3e, E %.3e, U %.3e, W %.3e", name, dphi, de, du, dw);
    EXPECT_MSG(ef <= TOL, "%s: force error %.3e > tol %.1e", name, ef, TOL);

    /* NULL inputs on rank 0: an error there if it passes charges, and then on every rank
       (NULL is fine for none); the plan stays usable */
    int bad = rank == 0, rank0_has = nl > 0;
    MPI_Bcast(&rank0_has, 1, MPI_INT, 0, MPI_COMM_WORLD);
    st = farfield_ewald_execute(p, (int64_t)nl, bad ? NULL : lx, bad ? NULL : lq, phi, NULL, NULL, NULL);
    if (!rank0_has)
        EXPECT_STATUS(st, FARFIELD_OK);
    else if (bad)
        EXPECT_STATUS(st, FARFIELD_ERR_NULL_POINTER);
    else
        EXPECT_MSG(st != FARFIELD_OK, "rank %d: status %d after a NULL input on rank 0", rank, st);
    EXPECT_STATUS(farfield_ewald_execute(p, (int64_t)nl, lx, lq, phi, NULL, &u, NULL), FARFIELD_OK);
    EXPECT_MSG(fabs(u - u_s) <= 1e-12 * fabs(u_s), "%s: energy after the failed call %.17g vs %.17g", name, u, u_s);
    /* exclusions and scaled pairs by global id (the charge's index in the system), passed by
       rank 0 only; farfield_ewald_execute_ids against the single-process plan with the pairs */
    enum { NP = NQ / 2 + NQ / 5 };
    int64_t *pairs = malloc(sizeof(int64_t) * 2 * NP), *ids = malloc(sizeof(int64_t) * (nl + 1));
    double *scales = malloc(sizeof(double) * NP), *phi_x = malloc(sizeof(double) * NQ), *e_x = malloc(sizeof(double) * 3 * NQ);
    int m = 0;
    for (int i = 0; i + 1 < NQ; i += 2) pairs[2 * m] = i, pairs[2 * m + 1] = i + 1, scales[m++] = 0.0;
    for (int i = 0; i < NQ && m < NP; i += 5) pairs[2 * m] = i, pairs[2 * m + 1] = (i + 7) % NQ, scales[m++] = 0.5;
    k = 0;
    for (int i = 0; i < NQ; i++)
        if (mine[i]) ids[k++] = i;
    EXPECT_STATUS(farfield_ewald_set_exclusions_scaled(p, rank == 0 ? m : 0, rank == 0 ? pairs : NULL, rank == 0 ? scales : NULL),
                  FARFIELD_OK);
    st = farfield_ewald_execute_ids(p, (int64_t)nl, ids, lx, lq, phi, e, &u, w);
    EXPECT_STATUS(st, FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_execute(p, (int64_t)nl, lx, lq, phi, NULL, NULL, NULL), FARFIELD_ERR_INVALID_ARG);
    farfield_ewald_plan ps = NULL;
    double ux = 0, wx[9];
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, CELL, NQ, TOL, &ps, &o), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_set_exclusions_scaled(ps, m, pairs, scales), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_execute(ps, NQ, xyz, q, phi_x, e_x, &ux, wx), FARFIELD_OK);
    farfield_ewald_destroy(ps);
    k = 0;
    for (int i = 0; i < NQ; i++)
        if (mine[i]) {
            for (int d = 0; d < 3; d++) se[3 * k + d] = e_x[3 * i + d];
            sphi[k++] = phi_x[i];
        }
    dphi = rel_max_all(phi, sphi, nl), de = rel_max_all(e, se, 3 * nl);
    wmax = 0, dw = 0;
    for (int c = 0; c < 9; c++) wmax = fmax(wmax, fabs(wx[c])), dw = fmax(dw, fabs(w[c] - wx[c]));
    dw /= wmax;
    du = fabs(u - ux) / fabs(ux);
    if (rank == 0)
        printf("%s with %d excluded and scaled pairs: vs single process: phi %.1e, E %.1e, U %.1e, W %.1e\n", name, m, dphi, de,
               du, dw);
    EXPECT_MSG(dphi <= 1e-12 && de <= 1e-12 && du <= 1e-12 && dw <= 1e-12,
               "%s with exclusions: differs from the single-process plan: phi %.3e, E %.3e, U %.3e, W %.3e", name, dphi, de, du, dw);
    EXPECT_STATUS(farfield_ewald_destroy(p), FARFIELD_OK);
    free(pairs), free(ids), free(scales), free(phi_x), free(e_x);
    free(lx), free(lq), free(phi), free(e), free(sphi), free(se);
}

int main(int argc, char **argv) {
    farfield_ewald_plan p = NULL;
    /* before MPI_Init: a status, not a crash */
    EXPECT_STATUS(farfield_ewald_makeplan_mpi(0, FARFIELD_EWALD_SPME, CELL, 10, TOL, &p, NULL), FARFIELD_ERR_NOT_SUPPORTED);
    EXPECT(p == NULL);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const MPI_Fint fcomm = MPI_Comm_c2f(MPI_COMM_WORLD);

    double *xyz = malloc(sizeof(double) * 3 * NQ), *q = malloc(sizeof(double) * NQ);
    double *phi_s = malloc(sizeof(double) * NQ), *e_s = malloc(sizeof(double) * 3 * NQ), *e_d = malloc(sizeof(double) * 3 * NQ);
    make_system(xyz, q);
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o, sizeof o);
    o.nthreads = 1;
    /* the single-process plan (every rank) and the classic Ewald sum (rank 0, broadcast) */
    double u_s = 0, w_s[9];
    farfield_ewald_params par;
    par.struct_size = sizeof par;
    int st = farfield_ewald_makeplan(FARFIELD_EWALD_SPME, CELL, NQ, TOL, &p, &o);
    require_all(st == FARFIELD_OK, "farfield_ewald_makeplan");
    EXPECT_STATUS(farfield_ewald_get_params(p, &par), FARFIELD_OK);
    st = farfield_ewald_execute(p, NQ, xyz, q, phi_s, e_s, &u_s, w_s);
    require_all(st == FARFIELD_OK, "farfield_ewald_execute (single process)");
    farfield_ewald_destroy(p);
    if (rank == 0) {
        st = farfield_ewald_makeplan(FARFIELD_EWALD_DIRECT, CELL, NQ, 1e-10, &p, &o);
        EXPECT_STATUS(st, FARFIELD_OK);
        EXPECT_STATUS(farfield_ewald_execute(p, NQ, xyz, q, NULL, e_d, NULL, NULL), FARFIELD_OK);
        farfield_ewald_destroy(p);
    }
    MPI_Bcast(e_d, 3 * NQ, MPI_DOUBLE, 0, MPI_COMM_WORLD);

    int *mine = malloc(sizeof(int) * NQ);
    for (int i = 0; i < NQ; i++) mine[i] = i % nranks == rank;
    check_decomposition(fcomm, "every K-th charge", mine, xyz, q, phi_s, e_s, u_s, w_s, &par, e_d);
    for (int i = 0; i < NQ; i++) mine[i] = rank == nranks - 1;
    check_decomposition(fcomm, "all on the last rank", mine, xyz, q, phi_s, e_s, u_s, w_s, &par, e_d);

    /* MPI_COMM_NULL: a status, not an abort */
    p = (farfield_ewald_plan)1;
    EXPECT_STATUS(farfield_ewald_makeplan_mpi(MPI_Comm_c2f(MPI_COMM_NULL), FARFIELD_EWALD_SPME, CELL, 10, TOL, &p, NULL),
                  FARFIELD_ERR_INVALID_ARG);
    EXPECT(p == NULL);
    /* spectral Ewald: refused on every rank */
    EXPECT_STATUS(farfield_ewald_makeplan_mpi(fcomm, FARFIELD_EWALD_SPECTRAL, CELL, 10, TOL, &p, NULL), FARFIELD_ERR_NOT_SUPPORTED);
    EXPECT(p == NULL);

    int failures = 0;
    MPI_Allreduce(&ff_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();
    /* after MPI_Finalize: a status again */
    EXPECT_STATUS(farfield_ewald_makeplan_mpi(fcomm, FARFIELD_EWALD_SPME, CELL, 10, TOL, &p, NULL), FARFIELD_ERR_NOT_SUPPORTED);
    EXPECT(p == NULL);
    free(xyz), free(q), free(phi_s), free(e_s), free(e_d), free(mine);
    if (rank == 0 && failures)
        fprintf(stderr, "c_ewald_mpi: %d check(s) FAILED over %d rank(s)\n", failures, nranks);
    else if (rank == 0 && !ff_failures)
        printf("c_ewald_mpi: all checks passed on %d rank(s)\n", nranks);
    return failures || ff_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
