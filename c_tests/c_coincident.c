/* farfield reliability tests: c_coincident.c
 * Class 8: coincident distinct charges follow the documented contract in Ewald and FMM, and
 * the all-coincident input costs O(n), not O(n^2).
 * Runs a watchdog for the O(n) cases.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== ewald ==================================== */

/* Ewald: distinct charges at the same point (closer than 2^-40 of the largest cell
 * length) are INVALID_ARG naming both, unless the pair is excluded; an excluded coincident pair
 * loses its whole interaction (the r -> 0 limit of the k-space part), continuously with the
 * pair a small distance apart; an all-coincident input is refused in O(n). */
static int ew_coinc(int method, const double *xyz, const double *q, int64_t n, const int64_t *pairs, int64_t np, double *u) {
    double box[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2};
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o, sizeof o);
    o.nthreads = 1;
    o.order_or_support = method == FARFIELD_EWALD_SPECTRAL ? 16 : method == FARFIELD_EWALD_SPME ? 8 : 0;
    farfield_ewald_plan p = NULL;
    int s = farfield_ewald_makeplan(method, box, n, 1e-8, &p, &o);
    if (s == FARFIELD_OK && np > 0) s = farfield_ewald_set_exclusions(p, np, pairs);
    if (s == FARFIELD_OK) s = farfield_ewald_execute(p, n, xyz, q, NULL, NULL, u, NULL);
    farfield_ewald_destroy(p);
    return s;
}

static int ew_all_coincident(void *arg) {
    (void)arg;
    int f0 = ff_failures;
    const int64_t n = 200000;
    double *xyz = (double *)malloc(sizeof(double) * 3 * (size_t)n), *q = (double *)malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        xyz[3 * i] = 0.7, xyz[3 * i + 1] = 1.3, xyz[3 * i + 2] = 0.2;
        q[i] = i % 2 ? -1.0 : 1.0;
    }
    double u = 7.0;
    EXPECT_STATUS(ew_coinc(FARFIELD_EWALD_DIRECT, xyz, q, n, NULL, 0, &u), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "coincide") != NULL);
    EXPECT(u == 7.0);
    free(xyz);
    free(q);
    return ff_failures - f0;
}

static void ewald_cases(void) {
    const int methods[3] = {FARFIELD_EWALD_SPECTRAL, FARFIELD_EWALD_SPME, FARFIELD_EWALD_DIRECT};
    /* charge 1 on top of charge 3 (through a periodic image), plus two others */
    const double xyz[12] = {0.3, 0.4, 0.5, 1.1, 0.9, 0.7, 1.7, 1.5, 0.1, 1.1, 0.9 + 2.0, 0.7};
    const double q[4] = {0.5, 1.0, -0.5, -1.0};
    const int64_t pair[2] = {3, 1};
    for (int m = 0; m < 3; m++) {
        double u = 7.0, ua = NAN, ub = NAN;
        EXPECT_STATUS(ew_coinc(methods[m], xyz, q, 4, NULL, 0, &u), FARFIELD_ERR_INVALID_ARG);
        EXPECT(strstr(farfield_last_error_message(), "charges 1 and 3") != NULL);
        EXPECT(u == 7.0);
        EXPECT_STATUS(ew_coinc(methods[m], xyz, q, 4, pair, 1, &ua), FARFIELD_OK);
        /* the same excluded pair 1e-5 apart: U changes by O(1e-5) (the others' fields) */
        double xb[12];
        memcpy(xb, xyz, sizeof xb);
        xb[9] += 1e-5;
        EXPECT_STATUS(ew_coinc(methods[m], xb, q, 4, pair, 1, &ub), FARFIELD_OK);
        EXPECT(isfinite(ua) && fabs(ua - ub) < 1e-4);
        /* the ±1 pair alone, excluded: nothing left but the two charges' own periodic images,
         * whose energies cancel for opposite charges at one point: U = 0 */
        double u2 = NAN;
        const double x2[6] = {0.4, 0.8, 1.2, 0.4, 0.8, 1.2}, q2[2] = {1.0, -1.0};
        const int64_t p01[2] = {0, 1};
        EXPECT_STATUS(ew_coinc(methods[m], x2, q2, 2, NULL, 0, &u2), FARFIELD_ERR_INVALID_ARG);
        EXPECT_STATUS(ew_coinc(methods[m], x2, q2, 2, p01, 1, &u2), FARFIELD_OK);
        EXPECT(fabs(u2) < 1e-8);
    }
    FF_ISOLATED(ew_all_coincident, NULL, 0, 60);
}




/* ==================================== fmm ==================================== */

/* all-coincident input, n = 2e5: must be rejected fast (O(n log n)), not O(n^2) */
static int fmm_all_coincident(void *arg) {
    int boundary = *(int *)arg, fails = 0;
    const int64_t n = 200000;
    double *xyz = (double *)malloc(sizeof(double) * 3 * (size_t)n);
    double *q = (double *)malloc(sizeof(double) * (size_t)n);
    for (int64_t i = 0; i < n; i++) {
        xyz[3 * i] = 0.25;
        xyz[3 * i + 1] = 0.5;
        xyz[3 * i + 2] = 0.75;
        q[i] = 1.0;
    }
    double b[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, u = 0;
    farfield_fmm_opts o;
    farfield_fmm_default_opts(&o, sizeof o);
    o.nthreads = 1;
    farfield_fmm_plan p = NULL;
    int st0 = farfield_fmm_makeplan(boundary, b, 1e-6, &p, &o);
    if (st0 != FARFIELD_OK) {
        fprintf(stderr, "fmm all-coincident: makeplan status %d: %s\n", st0, farfield_last_error_message());
        fails++;
    }
    int st = farfield_fmm_execute(p, n, xyz, q, NULL, NULL, &u);
    if (st != FARFIELD_ERR_INVALID_ARG || !strstr(farfield_last_error_message(), "particles 0 and 1")) {
        fprintf(stderr, "fmm all-coincident (boundary %d): status %d: %s\n", boundary, st, farfield_last_error_message());
        fails++;
    }
    farfield_fmm_destroy(p);
    free(xyz);
    free(q);
    return fails;
}

static void fmm_cases(void) {
    /* contract: coincident distinct particles -> FARFIELD_ERR_INVALID_ARG naming both */
    double b[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
    double xyz[12] = {0.25, 0.3, 0.3, 0.7, 0.2, 0.9, 1.25, 0.3, 0.3, 0.7, 0.2, 0.9};
    double q[4] = {1, -1, 2, -2}, phi[4] = {7, 7, 7, 7}, u = 7.0;
    farfield_fmm_plan po = NULL, pp = NULL;
    farfield_fmm_opts o; /* no thread pool: the isolated cases below fork */
    farfield_fmm_default_opts(&o, sizeof o);
    o.nthreads = 1;
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, &po, &o), FARFIELD_OK);
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_PERIODIC, b, 1e-6, &pp, &o), FARFIELD_OK);
    EXPECT_STATUS(farfield_fmm_execute(po, 4, xyz, q, phi, NULL, &u), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "particles 1 and 3") != NULL);
    EXPECT(u == 7.0 && phi[0] == 7.0 && phi[3] == 7.0); /* outputs untouched */
    /* periodic: 1.25 and 0.25 are the same point up to a period (particles 0 and 2 as well;
     * exactly representable: x + L folds back onto x exactly) */
    EXPECT_STATUS(farfield_fmm_execute(pp, 4, xyz, q, phi, NULL, &u), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "particles 0 and 2") != NULL);
    /* distinct (1e-12 apart) is fine; the plans stay usable */
    xyz[6] = 0.25 + 1e-12;
    xyz[9] = 0.25;
    EXPECT_STATUS(farfield_fmm_execute(pp, 4, xyz, q, phi, NULL, &u), FARFIELD_OK);
    EXPECT(isfinite(u));
    EXPECT_STATUS(farfield_fmm_execute(po, 4, xyz, q, phi, NULL, &u), FARFIELD_OK);
    EXPECT(isfinite(u));
    farfield_fmm_destroy(po);
    farfield_fmm_destroy(pp);
    /* the degenerate case, under a watchdog */
    int bo = FARFIELD_FMM_OPEN, bp = FARFIELD_FMM_PERIODIC;
    FF_ISOLATED(fmm_all_coincident, &bo, 0, 60);
    FF_ISOLATED(fmm_all_coincident, &bp, 0, 60);
}


int main(void) {
    ewald_cases();
    fmm_cases();
    return ff_finish("c_coincident");
}
