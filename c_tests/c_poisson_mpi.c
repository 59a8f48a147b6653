/* Distributed free-space Poisson through the C API, run by CTest under `mpirun -np K`
 * (K = 1…4, --oversubscribe): each rank asks for its slab (farfield_poisson_local_slab), fills
 * its planes of a Gaussian charge, solves with farfield_poisson_makeplan_mpi, and checks
 *   (a) against the exact potential, field and energy (tolerances of the method's accuracy, as
 *       c_tests/c_poisson.c measures them on the same grid), and
 *   (b) against the single-process plan on rank 0, the slabs gathered with MPI_Gatherv:
 *       φ, E and the energy to ≤ 1e-12 relative (max-norm), all three methods, and in 2D;
 * and the error paths: MPI_COMM_NULL and a handle that names no communicator give a status
 * (no MPI abort), grid arguments that differ between the ranks or a bad argument on one rank
 * give an error on every rank, and MPI not (or no longer) initialised gives
 * FARFIELD_ERR_NOT_SUPPORTED.
 * SPDX-License-Identifier: MIT OR Apache-2.0
 *
 * rho(r) = exp(-r^2 / (2 s^2)) / ((2 pi)^(3/2) s^3)   (unit charge)
 * phi(r) = erf(r / (sqrt(2) s)) / (4 pi r)            (solves lap phi = -rho, phi -> 0)
 * E(r)   = -phi'(r) rhat
 *
 * A rank whose check fails only counts the failure and goes on, so that every rank reaches the
 * same collectives; where a rank cannot go on (no plan), require_all() aborts the whole job,
 * since a rank left behind in a collective would hang the others. */
#include "ff_test.h"

#include <mpi.h>

enum { N = 32 };
static const double S = 0.05;
static int rank = 0, nranks = 1;

static double phi_exact(double r) {
    if (r < 1e-12) return sqrt(2.0 / FF_PI) / (4 * FF_PI * S);
    return erf(r / (sqrt(2.0) * S)) / (4 * FF_PI * r);
}
static double er_exact(double r) { /* radial component of E */
    if (r < 1e-12) return 0.0;
    return (erf(r / (sqrt(2.0) * S)) - sqrt(2.0 / FF_PI) * (r / S) * exp(-r * r / (2 * S * S))) / (4 * FF_PI * r * r);
}

/* Every rank learns whether `ok` holds on all ranks; if not, the job is aborted. */
static void require_all(int ok, const char *what) {
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
    if (!all) {
        if (!ok) fprintf(stderr, "rank %d: %s failed: %s\n", rank, what, farfield_last_error_message());
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static double sum_all(double x) {
    double s = 0;
    MPI_Allreduce(&x, &s, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    return s;
}

/* max |a - b| / max |b| over n values */
static double rel_max(const double *a, const double *b, size_t n) {
    double d = 0, m = 0;
    for (size_t i = 0; i < n; i++) {
        d = fmax(d, fabs(a[i] - b[i]));
        m = fmax(m, fabs(b[i]));
    }
    return d / m;
}

/* Gathers this rank's slab (`nloc` values from plane offset `lo`) into `all` on rank 0. */
static void gather_slab(const double *mine, int nloc, int lo, double *all) {
    int *counts = malloc(sizeof(int) * (size_t)nranks), *displs = malloc(sizeof(int) * (size_t)nranks);
    MPI_Gather(&nloc, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gather(&lo, 1, MPI_INT, displs, 1, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Gatherv(mine, nloc, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    free(counts), free(displs);
}

/* The slabs: contiguous, in rank order, covering all `nz` planes. */
static void check_slabs(int64_t start, int64_t count, int64_t nz) {
    int64_t mine[2] = {start, count};
    int64_t *all = malloc(sizeof(int64_t) * 2 * (size_t)nranks);
    MPI_Allgather(mine, 2, MPI_INT64_T, all, 2, MPI_INT64_T, MPI_COMM_WORLD);
    int64_t next = 0;
    for (int r = 0; r < nranks; r++) {
        EXPECT_MSG(all[2 * r] == next && all[2 * r + 1] >= 0, "rank %d holds planes %lld+%lld, expected start %lld", r,
                   (long long)all[2 * r], (long long)all[2 * r + 1], (long long)next);
        next = all[2 * r] + all[2 * r + 1];
    }
    EXPECT_MSG(next == nz, "the slabs cover %lld of %lld planes", (long long)next, (long long)nz);
    free(all);
}

/* 3D: the Gaussian at the centre of the unit cube, N^3 cell-centred nodes, one method. */
static void check_3d(MPI_Fint fcomm, int method, double tol_phi, double tol_e, double tol_u) {
    const int64_t n[3] = {N, N, N};
    const double hx = 1.0 / N, h[3] = {hx, hx, hx};
    const size_t plane = (size_t)N * N, npts = plane * N;
    farfield_poisson_opts o;
    farfield_poisson_default_opts(&o, sizeof o);
    o.nthreads = 1; /* several ranks share the cores */

    farfield_poisson_plan p = NULL;
    int st = farfield_poisson_makeplan_mpi(fcomm, method, 3, n, h, &p, &o);
    EXPECT_STATUS(st, FARFIELD_OK);
    require_all(st == FARFIELD_OK && p != NULL, "farfield_poisson_makeplan_mpi");
    int64_t start = -1, count = -1;
    EXPECT_STATUS(farfield_poisson_local_slab(p, &start, &count), FARFIELD_OK);
    check_slabs(start, count, N);

    /* this rank's planes start .. start+count-1 of rho, and the exact solution there */
    const size_t nloc = (size_t)count * plane;
    double *rho = malloc(sizeof(double) * (nloc + 1)), *phi = malloc(sizeof(double) * (nloc + 1));
    double *e = malloc(sizeof(double) * (3 * nloc + 1));
    double *phi_ref = malloc(sizeof(double) * (nloc + 1)), *e_ref = malloc(sizeof(double) * (3 * nloc + 1));
    double u_ref_local = 0;
    for (int64_t k = start; k < start + count; k++)
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                size_t idx = (size_t)i + N * ((size_t)j + N * (size_t)(k - start));
                double d[3] = {(i + 0.5) * hx - 0.5, (j + 0.5) * hx - 0.5, (k + 0.5) * hx - 0.5};
                double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                rho[idx] = exp(-r * r / (2 * S * S)) / (pow(2 * FF_PI, 1.5) * S * S * S);
                phi_ref[idx] = phi_exact(r);
                for (int c = 0; c < 3; c++) e_ref[idx + nloc * (size_t)c] = r > 0 ? er_exact(r) * d[c] / r : 0.0;
                u_ref_local += 0.5 * rho[idx] * phi_ref[idx] * hx * hx * hx;
            }
    double u = 0;
    st = farfield_poisson_execute(p, rho, phi, e, &u);
    EXPECT_STATUS(st, FARFIELD_OK);
    require_all(st == FARFIELD_OK, "farfield_poisson_execute");

    /* (a) the exact solution: relative L2 over the whole grid */
    double sq[4] = {0, 0, 0, 0};
    for (size_t i = 0; i < nloc; i++) {
        sq[0] += (phi[i] - phi_ref[i]) * (phi[i] - phi_ref[i]), sq[1] += phi_ref[i] * phi_ref[i];
        for (int c = 0; c < 3; c++) {
            size_t ic = i + nloc * (size_t)c;
            sq[2] += (e[ic] - e_ref[ic]) * (e[ic] - e_ref[ic]), sq[3] += e_ref[ic] * e_ref[ic];
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, sq, 4, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    double u_ref = sum_all(u_ref_local);
    double ep = sqrt(sq[0] / sq[1]), ee = sqrt(sq[2] / sq[3]), eu = fabs(u - u_ref) / u_ref;
    if (rank == 0)
        printf("method %d, %d^3 on %d rank(s): vs exact: phi %.2e, E %.2e, energy %.2e\n", method, N, nranks, ep, ee, eu);
    EXPECT_MSG(ep <= tol_phi, "phi rel err %.3e > %.1e", ep, tol_phi);
    EXPECT_MSG(ee <= tol_e, "E rel err %.3e > %.1e", ee, tol_e);
    EXPECT_MSG(eu <= tol_u, "energy rel err %.3e > %.1e", eu, tol_u);
    /* the energy is the total on every rank */
    double u_lo = u, u_hi = u;
    MPI_Allreduce(MPI_IN_PLACE, &u_lo, 1, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
    MPI_Allreduce(MPI_IN_PLACE, &u_hi, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    EXPECT_MSG(u_hi - u_lo <= 1e-14 * fabs(u), "energy differs between ranks: %.17g .. %.17g", u_lo, u_hi);

    /* potential only: the same values */
    double *phi2 = malloc(sizeof(double) * (nloc + 1));
    EXPECT_STATUS(farfield_poisson_execute(p, rho, phi2, NULL, NULL), FARFIELD_OK);
    double d2 = nloc ? rel_max(phi2, phi, nloc) : 0.0;
    EXPECT_MSG(d2 <= 1e-12, "potential-only execute differs by %.3e", d2);
    free(phi2);

    /* (b) the single-process plan on rank 0, the slabs gathered */
    double *rho_all = NULL, *phi_all = NULL, *e_all = NULL;
    if (rank == 0) {
        rho_all = malloc(sizeof(double) * npts), phi_all = malloc(sizeof(double) * npts);
        e_all = malloc(sizeof(double) * 3 * npts);
    }
    gather_slab(rho, (int)nloc, (int)((size_t)start * plane), rho_all);
    gather_slab(phi, (int)nloc, (int)((size_t)start * plane), phi_all);
    for (int c = 0; c < 3; c++)
        gather_slab(e + nloc * (size_t)c, (int)nloc, (int)((size_t)start * plane), rank == 0 ? e_all + npts * (size_t)c : NULL);
    double u_s = 0;
    if (rank == 0) {
        farfield_poisson_plan q = NULL;
        double *phi_s = malloc(sizeof(double) * npts), *e_s = malloc(sizeof(double) * 3 * npts);
        EXPECT_STATUS(farfield_poisson_makeplan(method, 3, n, h, &q, &o), FARFIELD_OK);
        int64_t s0 = -1, c0 = -1;
        EXPECT_STATUS(farfield_poisson_local_slab(q, &s0, &c0), FARFIELD_OK);
        EXPECT(s0 == 0 && c0 == N); /* a single-process plan holds the whole grid */
        EXPECT_STATUS(farfield_poisson_execute(q, rho_all, phi_s, e_s, &u_s), FARFIELD_OK);
        farfield_poisson_destroy(q);
        double dp = rel_max(phi_all, phi_s, npts), de = rel_max(e_all, e_s, 3 * npts);
        printf("method %d, %d^3 on %d rank(s): vs single-process: phi %.1e, E %.1e, energy %.1e\n", method, N,
               nranks, dp, de, fabs(u - u_s) / fabs(u_s));
        EXPECT_MSG(dp <= 1e-12, "phi differs from the single-process plan by %.3e", dp);
        EXPECT_MSG(de <= 1e-12, "E differs from the single-process plan by %.3e", de);
        free(phi_s), free(e_s), free(rho_all), free(phi_all), free(e_all);
    }
    MPI_Bcast(&u_s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    EXPECT_MSG(fabs(u - u_s) <= 1e-12 * fabs(u_s), "energy %.17g vs single-process %.17g", u, u_s);

    EXPECT_STATUS(farfield_poisson_destroy(p), FARFIELD_OK);
    free(rho), free(phi), free(e), free(phi_ref), free(e_ref);
}

/* 2D (slabs of y-rows), a non-square grid: equal to the single-process plan. */
static void check_2d(MPI_Fint fcomm, int method) {
    enum { NX = 40, NY = 28 };
    const int64_t n[2] = {NX, NY};
    const double h[2] = {0.025, 0.03};
    farfield_poisson_opts o;
    farfield_poisson_default_opts(&o, sizeof o);
    o.nthreads = 1;
    farfield_poisson_plan p = NULL;
    int st = farfield_poisson_makeplan_mpi(fcomm, method, 2, n, h, &p, &o);
    EXPECT_STATUS(st, FARFIELD_OK);
    require_all(st == FARFIELD_OK && p != NULL, "farfield_poisson_makeplan_mpi (2D)");
    int64_t start = -1, count = -1;
    EXPECT_STATUS(farfield_poisson_local_slab(p, &start, &count), FARFIELD_OK);
    check_slabs(start, count, NY);
    double rho_all[NX * NY], phi_all[NX * NY], e_all[2 * NX * NY];
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            double dx = i * h[0] - 0.45 * NX * h[0], dy = j * h[1] - 0.45 * NY * h[1];
            rho_all[i + NX * j] = exp(-(dx * dx + dy * dy) / (2 * 0.08 * 0.08));
        }
    const size_t nloc = (size_t)count * NX;
    double *phi = malloc(sizeof(double) * (nloc + 1)), *e = malloc(sizeof(double) * (2 * nloc + 1));
    double u = 0;
    st = farfield_poisson_execute(p, rho_all + (size_t)start * NX, phi, e, &u);
    EXPECT_STATUS(st, FARFIELD_OK);
    require_all(st == FARFIELD_OK, "farfield_poisson_execute (2D)");
    gather_slab(phi, (int)nloc, (int)(start * NX), phi_all);
    for (int c = 0; c < 2; c++) gather_slab(e + nloc * (size_t)c, (int)nloc, (int)(start * NX), e_all + NX * NY * c);
    double u_s = 0;
    if (rank == 0) {
        double phi_s[NX * NY], e_s[2 * NX * NY];
        farfield_poisson_plan q = NULL;
        EXPECT_STATUS(farfield_poisson_makeplan(method, 2, n, h, &q, &o), FARFIELD_OK);
        EXPECT_STATUS(farfield_poisson_execute(q, rho_all, phi_s, e_s, &u_s), FARFIELD_OK);
        farfield_poisson_destroy(q);
        double dp = rel_max(phi_all, phi_s, NX * NY), de = rel_max(e_all, e_s, 2 * NX * NY);
        printf("method %d, 2D %dx%d on %d rank(s): vs single-process: phi %.1e, E %.1e\n", method, NX, NY, nranks, dp,
               de);
        EXPECT_MSG(dp <= 1e-12, "2D phi differs from the single-process plan by %.3e", dp);
        EXPECT_MSG(de <= 1e-12, "2D E differs from the single-process plan by %.3e", de);
    }
    MPI_Bcast(&u_s, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    EXPECT_MSG(fabs(u - u_s) <= 1e-12 * fabs(u_s), "2D energy %.17g vs single-process %.17g", u, u_s);
    EXPECT_STATUS(farfield_poisson_destroy(p), FARFIELD_OK);
    free(phi), free(e);
}

/* Error paths: statuses, never an MPI abort or a rank left waiting. */
static void check_errors(MPI_Fint fcomm) {
    const int64_t n[3] = {16, 16, 16};
    const double h[3] = {0.1, 0.1, 0.1};
    farfield_poisson_plan garbage = (farfield_poisson_plan)(void *)&fcomm, p = garbage;

    /* MPI_COMM_NULL, and a handle that names no communicator */
    EXPECT_STATUS(farfield_poisson_makeplan_mpi(MPI_Comm_c2f(MPI_COMM_NULL), FARFIELD_POISSON_HOCKNEY, 3, n, h, &p, NULL),
                  FARFIELD_ERR_INVALID_ARG);
    EXPECT(p == NULL);
    EXPECT(strstr(farfield_last_error_message(), "communicator") != NULL);
    p = garbage;
    EXPECT_STATUS(farfield_poisson_makeplan_mpi(987654, FARFIELD_POISSON_HOCKNEY, 3, n, h, &p, NULL),
                  FARFIELD_ERR_INVALID_ARG);
    EXPECT(p == NULL);
    /* NULL plan: checked before any collective */
    EXPECT_STATUS(farfield_poisson_makeplan_mpi(fcomm, FARFIELD_POISSON_HOCKNEY, 3, n, h, NULL, NULL),
                  FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_poisson_local_slab(NULL, NULL, NULL), FARFIELD_ERR_NULL_POINTER);

    if (nranks > 1) {
        /* grid sizes, spacings, method or dimension that differ between the ranks: an error on
         * every rank (the plan stays NULL everywhere) */
        const int last = nranks - 1;
        int64_t n_mis[3] = {16, 16, rank == 0 ? 17 : 16};
        double h_mis[3] = {0.1, rank == last ? 0.2 : 0.1, 0.1};
        p = garbage;
        EXPECT_STATUS(farfield_poisson_makeplan_mpi(fcomm, FARFIELD_POISSON_HOCKNEY, 3, n_mis, h, &p, NULL),
                      FARFIELD_ERR_INVALID_ARG);
        EXPECT(p == NULL);
        p = garbage;
        EXPECT_STATUS(farfield_poisson_makeplan_mpi(fcomm, FARFIELD_POISSON_VICO, 3, n, h_mis, &p, NULL),
                      FARFIELD_ERR_INVALID_ARG);
        EXPECT(p == NULL);
        p = garbage;
        EXPECT_STATUS(farfield_poisson_makeplan_mpi(fcomm, rank == last ? FARFIELD_POISSON_VICO : FARFIELD_POISSON_HOCKNEY,
                                                    3, n, h, &p, NULL),
                      FARFIELD_ERR_INVALID_ARG);
        EXPECT(p == NULL);
        p = garbage;
        EXPECT_STATUS(farfield_poisson_makeplan_mpi(fcomm, FARFIELD_POISSON_HOCKNEY, rank == 0 ? 2 : 3, n, h, &p, NULL),
                      FARFIELD_ERR_INVALID_ARG);
        EXPECT(p == NULL);
    }
    /* a bad argument on one rank only: that rank's status on every rank (the header's "on
       every rank alike") */
    p = garbage;
    int st = farfield_poisson_makeplan_mpi(fcomm, FARFIELD_POISSON_HOCKNEY, 3, rank == 0 ? NULL : n, h, &p, NULL);
    EXPECT_MSG(st == FARFIELD_ERR_NULL_POINTER, "rank %d: rank 0's NULL n gave %d here", rank, st);
    EXPECT(p == NULL);

    /* a NULL output on one rank during execute: every rank gets an error, the plan stays usable */
    st = farfield_poisson_makeplan_mpi(fcomm, FARFIELD_POISSON_HOCKNEY, 3, n, h, &p, NULL);
    EXPECT_STATUS(st, FARFIELD_OK);
    require_all(st == FARFIELD_OK && p != NULL, "farfield_poisson_makeplan_mpi (16^3)");
    int64_t count = 0;
    farfield_poisson_local_slab(p, NULL, &count);
    const size_t nloc = (size_t)count * 16 * 16;
    double *rho = malloc(sizeof(double) * (nloc + 1)), *phi = malloc(sizeof(double) * (nloc + 1));
    for (size_t i = 0; i < nloc; i++) rho[i] = 1.0, phi[i] = 7.0;
    st = farfield_poisson_execute(p, rho, rank == 0 ? NULL : phi, NULL, NULL);
    if (rank == 0)
        EXPECT_STATUS(st, FARFIELD_ERR_NULL_POINTER);
    else
        EXPECT_MSG(st != FARFIELD_OK, "rank %d: rank 0's NULL output must fail here too", rank);
    for (size_t i = 0; i < nloc; i++) EXPECT(phi[i] == 7.0); /* nothing written on error */
    EXPECT_STATUS(farfield_poisson_execute(p, rho, phi, NULL, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_poisson_destroy(p), FARFIELD_OK);
    free(rho), free(phi);
}

int main(int argc, char **argv) {
    const int64_t n8[3] = {8, 8, 8};
    const double h8[3] = {0.1, 0.1, 0.1};
    farfield_poisson_plan p = NULL;
    /* before MPI_Init: a status, not a crash */
    EXPECT_STATUS(farfield_poisson_makeplan_mpi(0, FARFIELD_POISSON_HOCKNEY, 3, n8, h8, &p, NULL),
                  FARFIELD_ERR_NOT_SUPPORTED);
    EXPECT(p == NULL);

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    const MPI_Fint fcomm = MPI_Comm_c2f(MPI_COMM_WORLD); /* the handle the C ABI takes */

    /* Hockney-Eastwood is second order, Vico spectral (c_tests/c_poisson.c, same grid) */
    check_3d(fcomm, FARFIELD_POISSON_HOCKNEY, 5e-3, 5e-2, 2e-2);
    check_3d(fcomm, FARFIELD_POISSON_VICO, 1e-7, 1e-5, 1e-7);
    check_3d(fcomm, FARFIELD_POISSON_VICO_DCT, 1e-7, 1e-5, 1e-7);
    check_2d(fcomm, FARFIELD_POISSON_HOCKNEY);
    check_2d(fcomm, FARFIELD_POISSON_VICO_DCT);
    check_errors(fcomm);

    int failures = 0;
    MPI_Allreduce(&ff_failures, &failures, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Finalize();

    /* after MPI_Finalize: a status again */
    EXPECT_STATUS(farfield_poisson_makeplan_mpi(fcomm, FARFIELD_POISSON_HOCKNEY, 3, n8, h8, &p, NULL),
                  FARFIELD_ERR_NOT_SUPPORTED);
    EXPECT(p == NULL);
    if (rank == 0 && failures)
        fprintf(stderr, "c_poisson_mpi: %d check(s) FAILED over %d rank(s)\n", failures, nranks);
    else if (rank == 0 && !ff_failures)
        printf("c_poisson_mpi: all checks passed on %d rank(s)\n", nranks);
    return failures || ff_failures ? EXIT_FAILURE : EXIT_SUCCESS;
}
