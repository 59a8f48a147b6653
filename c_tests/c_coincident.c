/* farfield reliability tests: c_coincident.c
 * Class 8: coincident distinct charges follow the documented contract in Ewald and FMM, and
 * the all-coincident input costs O(n), not O(n^2).
 * Runs a watchdog for the O(n) cases.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== ewald ==================================== */

static void ewald_cases(void) {
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
    farfield_fmm_default_opts(&o);
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
    farfield_fmm_default_opts(&o);
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
