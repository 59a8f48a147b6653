/* The Ewald and FMM C APIs end to end: the Madelung constant of NaCl through
 * farfield_ewald_* (SPME), 200 random charges in the open through farfield_fmm_* against the
 * direct sum, excluded and scaled pairs (farfield_fmm_set_exclusions*), and the error paths
 * (NULL pointers, bad tolerance, NaN positions, bad pair lists).
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include "ff_test.h"

#define NACL_MADELUNG 1.747564594633

/* NaCl, conventional cubic cell of side a = 2 (nearest-neighbour distance r0 = 1): Na+ on the
 * fcc sites, Cl- shifted by a/2 along x. */
static void nacl(double xyz[24], double q[8]) {
    static const double fcc[4][3] = {{0, 0, 0}, {0, 0.5, 0.5}, {0.5, 0, 0.5}, {0.5, 0.5, 0}};
    const double a = 2.0;
    for (int s = 0; s < 4; s++) {
        for (int d = 0; d < 3; d++) {
            xyz[3 * (2 * s) + d] = a * fcc[s][d];
            xyz[3 * (2 * s + 1) + d] = a * (fcc[s][d] + (d == 0 ? 0.5 : 0.0));
        }
        /* fold the shifted ion back into [0, a) */
        if (xyz[3 * (2 * s + 1)] >= a) xyz[3 * (2 * s + 1)] -= a;
        q[2 * s] = 1.0;
        q[2 * s + 1] = -1.0;
    }
}

static void test_ewald_nacl(void) {
    const double box[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2};
    double xyz[24], q[8], phi[8], field[24], energy = 0, virial[9];
    nacl(xyz, q);

    farfield_ewald_opts o;
    EXPECT_STATUS(farfield_ewald_default_opts(&o, sizeof o), FARFIELD_OK);
    o.nthreads = 1;
    farfield_ewald_plan plan = NULL;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 8, 1e-10, &plan, &o), FARFIELD_OK);
    if (!plan) return;
    EXPECT_STATUS(farfield_ewald_execute(plan, 8, xyz, q, phi, field, &energy, virial), FARFIELD_OK);

    const double r0 = 1.0, npairs = 4.0;
    double m = -energy * r0 / npairs;
    double err = fabs(m - NACL_MADELUNG) / NACL_MADELUNG;
    printf("NaCl SPME: M = %.13f (rel err %.2e)\n", m, err);
    EXPECT(err <= 1e-8);
    for (int i = 0; i < 8; i++) EXPECT(fabs(phi[i] * r0 + q[i] * NACL_MADELUNG) < 1e-7);
    for (int i = 0; i < 24; i++) EXPECT(fabs(field[i]) < 1e-6);

    /* only the energy (all other outputs NULL) gives the same number */
    double e2 = 0;
    EXPECT_STATUS(farfield_ewald_execute(plan, 8, xyz, q, NULL, NULL, &e2, NULL), FARFIELD_OK);
    EXPECT(fabs(e2 - energy) <= 1e-12 * fabs(energy));

    farfield_ewald_params prm = {.struct_size = sizeof(farfield_ewald_params)}; /* the rest zero */
    EXPECT_STATUS(farfield_ewald_get_params(plan, &prm), FARFIELD_OK);
    EXPECT(prm.method == FARFIELD_EWALD_SPME);
    EXPECT(prm.xi > 0 && prm.rc > 0 && prm.rc <= 1.0 + 1e-12);
    EXPECT(prm.grid[0] > 0 && prm.grid[1] > 0 && prm.grid[2] > 0 && prm.order_or_support > 0);

    /* same cell again through set_box: unchanged result */
    EXPECT_STATUS(farfield_ewald_set_box(plan, box), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_execute(plan, 8, xyz, q, NULL, NULL, &e2, NULL), FARFIELD_OK);
    EXPECT(fabs(e2 - energy) <= 1e-10 * fabs(energy));

    /* error paths */
    double bad[24];
    memcpy(bad, xyz, sizeof bad);
    bad[4] = NAN;
    e2 = 12345.0;
    EXPECT_STATUS(farfield_ewald_execute(plan, 8, bad, q, phi, NULL, &e2, NULL), FARFIELD_ERR_NONFINITE);
    EXPECT(e2 == 12345.0); /* outputs written only on success */
    EXPECT_STATUS(farfield_ewald_execute(NULL, 8, xyz, q, NULL, NULL, &e2, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_ewald_execute(plan, 8, NULL, q, NULL, NULL, &e2, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_ewald_execute(plan, 8, xyz, NULL, NULL, NULL, &e2, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_ewald_execute(plan, 9, xyz, q, NULL, NULL, &e2, NULL), FARFIELD_ERR_NPOINTS);
    EXPECT_STATUS(farfield_ewald_set_box(plan, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_ewald_set_box(NULL, box), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_ewald_get_params(plan, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_ewald_get_params(NULL, &prm), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_ewald_set_exclusions(NULL, 0, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_ewald_destroy(plan), FARFIELD_OK);

    farfield_ewald_plan p2 = (farfield_ewald_plan)&o; /* must be reset to NULL on failure */
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 8, 0.0, &p2, NULL), FARFIELD_ERR_TOL);
    EXPECT(p2 == NULL);
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 8, -1e-5, &p2, NULL), FARFIELD_ERR_TOL);
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, NULL, 8, 1e-5, &p2, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 8, 1e-5, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT(p2 == NULL);
    /* cells: zero volume, a negative height, not lower-triangular, non-finite */
    const double flat[9] = {2, 0, 0, 1, 0, 0, 0, 0, 2};
    const double negative[9] = {2, 0, 0, 0, -2, 0, 0, 0, 2};
    const double upper[9] = {2, 0.5, 0, 0, 2, 0, 0, 0, 2};
    const double nonfinite[9] = {2, 0, 0, 0, 2, 0, 0, 0, NAN};
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, flat, 8, 1e-5, &p2, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, negative, 8, 1e-5, &p2, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, upper, 8, 1e-5, &p2, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, nonfinite, 8, 1e-5, &p2, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT(p2 == NULL);
    /* a cutoff above half the shortest height (1.0 here) */
    farfield_ewald_opts big;
    EXPECT_STATUS(farfield_ewald_default_opts(&big, sizeof big), FARFIELD_OK);
    big.rc = 1.01;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 8, 1e-5, &p2, &big), FARFIELD_ERR_INVALID_ARG);
    EXPECT(p2 == NULL);
    /* set_box to a degenerate cell fails and leaves the plan usable */
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 8, 1e-5, &p2, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_set_box(p2, flat), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_ewald_execute(p2, 8, xyz, q, NULL, NULL, &energy, NULL), FARFIELD_OK);
    EXPECT(fabs(-energy * r0 / npairs - 1.747564594633) < 1e-4);
    EXPECT_STATUS(farfield_ewald_destroy(p2), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_destroy(NULL), FARFIELD_OK);
}

static void test_fmm_open(void) {
    enum { N = 200 };
    static double xyz[3 * N], q[N], phi[N], field[3 * N], ref[N];
    ff_rng rng = {12345};
    for (int i = 0; i < N; i++) {
        for (int d = 0; d < 3; d++) xyz[3 * i + d] = ff_range(&rng, -1.0, 1.0);
        q[i] = ff_range(&rng, -1.0, 1.0);
    }
    double uref = 0;
    for (int i = 0; i < N; i++) {
        double s = 0;
        for (int j = 0; j < N; j++) {
            if (j == i) continue;
            double dx = xyz[3 * i] - xyz[3 * j], dy = xyz[3 * i + 1] - xyz[3 * j + 1],
                   dz = xyz[3 * i + 2] - xyz[3 * j + 2];
            s += q[j] / sqrt(dx * dx + dy * dy + dz * dz);
        }
        ref[i] = s;
        uref += 0.5 * q[i] * s;
    }

    farfield_fmm_opts o;
    EXPECT_STATUS(farfield_fmm_default_opts(&o, sizeof o), FARFIELD_OK);
    o.nthreads = 1;
    o.depth = 2; /* force a real tree (the automatic choice may be one leaf for n = 200) */
    farfield_fmm_plan plan = NULL;
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, &plan, &o), FARFIELD_OK);
    if (!plan) return;
    double energy = 0;
    EXPECT_STATUS(farfield_fmm_execute(plan, N, xyz, q, phi, field, &energy), FARFIELD_OK);
    double num = 0, den = 0;
    for (int i = 0; i < N; i++) {
        num += (phi[i] - ref[i]) * (phi[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    double err = sqrt(num / den);
    printf("FMM open, n = %d: rel l2 error of phi %.2e, energy %.12f vs %.12f\n", N, err, energy, uref);
    EXPECT(err <= 1e-6);
    EXPECT(fabs(energy - uref) <= 1e-6 * fabs(uref));

    /* excluded and scaled pairs: the energy loses (1 - s) q_i q_j / r of each, phi_i (1 - s) q_j / r */
    {
        const int64_t pairs[6] = {0, 1, 5, 2, 7, 30};
        const double scales[3] = {0.0, 0.5, 1.0 / 1.2};
        double du = 0, dphi0 = 0, e2 = 0;
        static double phi2[N];
        for (int k = 0; k < 3; k++) {
            int i = (int)pairs[2 * k], j = (int)pairs[2 * k + 1];
            double dx = xyz[3 * i] - xyz[3 * j], dy = xyz[3 * i + 1] - xyz[3 * j + 1], dz = xyz[3 * i + 2] - xyz[3 * j + 2];
            double r = sqrt(dx * dx + dy * dy + dz * dz);
            du += (1 - scales[k]) * q[i] * q[j] / r;
            if (i == 0) dphi0 += (1 - scales[k]) * q[j] / r;
            if (j == 0) dphi0 += (1 - scales[k]) * q[i] / r;
        }
        EXPECT_STATUS(farfield_fmm_set_exclusions_scaled(plan, 3, pairs, scales), FARFIELD_OK);
        EXPECT_STATUS(farfield_fmm_execute(plan, N, xyz, q, phi2, NULL, &e2), FARFIELD_OK);
        printf("FMM open with 3 scaled pairs: energy %.12f vs %.12f\n", e2, uref - du);
        EXPECT(fabs(e2 - (uref - du)) <= 1e-6 * fabs(uref));
        /* the same FMM sum as the first execute, then the pairs' terms */
        EXPECT(fabs(phi2[0] - (phi[0] - dphi0)) <= 1e-12 * (fabs(phi[0]) + fabs(dphi0)));
        /* bad lists keep the earlier one; an index >= n fails the execute */
        const int64_t same[4] = {0, 1, 1, 0};
        const double two[2] = {0.0, 0.5};
        EXPECT_STATUS(farfield_fmm_set_exclusions_scaled(plan, 2, same, two), FARFIELD_ERR_INVALID_ARG);
        EXPECT_STATUS(farfield_fmm_set_exclusions_scaled(plan, 1, pairs, NULL), FARFIELD_ERR_NULL_POINTER);
        EXPECT_STATUS(farfield_fmm_set_exclusions(plan, -1, pairs), FARFIELD_ERR_INVALID_ARG);
        EXPECT_STATUS(farfield_fmm_execute(plan, 20, xyz, q, NULL, NULL, &e2), FARFIELD_ERR_INVALID_ARG);
        EXPECT_STATUS(farfield_fmm_set_exclusions(plan, 0, NULL), FARFIELD_OK);
        EXPECT_STATUS(farfield_fmm_execute(plan, N, xyz, q, NULL, NULL, &e2), FARFIELD_OK);
        EXPECT(fabs(e2 - energy) <= 1e-12 * fabs(energy));
    }

    farfield_fmm_params prm = {.struct_size = sizeof(farfield_fmm_params)}; /* the rest zero */
    EXPECT_STATUS(farfield_fmm_get_params(plan, &prm), FARFIELD_OK);
    EXPECT(prm.order > 0 && prm.depth == 2 && prm.npoints == N && prm.nleaves > 0);

    /* n = 0 is a no-op with energy 0 */
    energy = 1;
    EXPECT_STATUS(farfield_fmm_execute(plan, 0, NULL, NULL, NULL, NULL, &energy), FARFIELD_OK);
    EXPECT(energy == 0.0);

    /* error paths */
    double saved = xyz[7];
    xyz[7] = NAN;
    phi[0] = 12345.0;
    EXPECT_STATUS(farfield_fmm_execute(plan, N, xyz, q, phi, NULL, NULL), FARFIELD_ERR_NONFINITE);
    EXPECT(phi[0] == 12345.0);
    xyz[7] = saved;
    EXPECT_STATUS(farfield_fmm_execute(NULL, N, xyz, q, phi, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_fmm_execute(plan, N, NULL, q, phi, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_fmm_execute(plan, N, xyz, NULL, phi, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_fmm_execute(plan, -1, xyz, q, phi, NULL, NULL), FARFIELD_ERR_NPOINTS);
    EXPECT_STATUS(farfield_fmm_get_params(plan, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_fmm_get_params(NULL, &prm), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_fmm_destroy(plan), FARFIELD_OK);

    farfield_fmm_plan p2 = NULL;
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 0.0, &p2, NULL), FARFIELD_ERR_TOL);
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, -1.0, &p2, NULL), FARFIELD_ERR_TOL);
    EXPECT(p2 == NULL);
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_PERIODIC, NULL, 1e-6, &p2, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT(p2 == NULL);
    EXPECT_STATUS(farfield_fmm_destroy(NULL), FARFIELD_OK);
}

int main(void) {
    test_ewald_nacl();
    test_fmm_open();
    return ff_finish("c_ewald_fmm");
}
