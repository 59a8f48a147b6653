/* farfield reliability tests: c_hang.c
 * Class 1 of the reliability probe: calls that never return. Every size, grid and mode count
 * derived from user input is bounded before a loop or allocation depends on it, so each case
 * here must return (an error status) well inside its watchdog.
 * Runs isolated children under a watchdog (ff_isolated with timeout_s).
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== nufft ==================================== */

static void nufft_cases(void) {
}




/* ==================================== ewald ==================================== */

static void ewald_cases(void) {
}




/* ==================================== poisson ==================================== */

static void poisson_cases(void) {
}




/* ==================================== fmm ==================================== */

typedef struct {
    int boundary, n, kind;
} fmm_hang_arg;

/* inputs that once could, or might, make the FMM loop long: every one must return promptly
 * with a status (watchdog) */
static int fmm_hang_case(void *arg) {
    fmm_hang_arg *a = (fmm_hang_arg *)arg;
    int fails = 0, n = a->n;
    double *xyz = (double *)malloc(sizeof(double) * 3 * (size_t)n);
    double *q = (double *)malloc(sizeof(double) * (size_t)n);
    ff_rng r = {11};
    for (int i = 0; i < n; i++) {
        q[i] = ff_uniform(&r) - 0.5;
        for (int d = 0; d < 3; d++) {
            double v = ff_uniform(&r);
            if (a->kind == 0) v = 0.5;                          /* all coincident */
            if (a->kind == 1) v = 0.5 + 1e-9 * v;               /* distinct, in one deepest leaf */
            if (a->kind == 2) v = (v - 0.5) * 1e300;            /* huge coordinates (periodic: folded) */
            if (a->kind == 3) v = d == 0 ? (i % 2 ? 1.7e308 : -1.7e308) : v; /* spread overflows */
            xyz[3 * i + d] = v;
        }
    }
    double b[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, u = 0.0;
    farfield_fmm_opts o;
    farfield_fmm_default_opts(&o);
    o.nthreads = 1;
    farfield_fmm_plan p = NULL;
    if (farfield_fmm_makeplan(a->boundary, b, 1e-6, &p, &o) != FARFIELD_OK) fails++;
    int st = farfield_fmm_execute(p, n, xyz, q, NULL, NULL, &u);
    int want = a->kind == 0 ? FARFIELD_ERR_INVALID_ARG
               : a->kind == 3 && a->boundary == FARFIELD_FMM_OPEN ? FARFIELD_ERR_RANGE
                                                                   : FARFIELD_OK;
    if (a->kind == 2 && st == FARFIELD_ERR_INVALID_ARG) want = st; /* folded coordinates may coincide */
    if (st != want || (st == FARFIELD_OK && !isfinite(u))) {
        fprintf(stderr, "fmm hang case boundary %d kind %d n %d: status %d (%s)\n", a->boundary, a->kind, n, st,
                farfield_last_error_message());
        fails++;
    }
    farfield_fmm_destroy(p);
    free(xyz);
    free(q);
    return fails;
}

static void fmm_cases(void) {
    /* all coincident (2e5), a tight cluster of distinct particles (2e4 in one leaf of the
     * deepest tree: O(m^2) but bounded), huge and overflowing coordinates */
    const fmm_hang_arg cases[] = {{FARFIELD_FMM_OPEN, 200000, 0}, {FARFIELD_FMM_PERIODIC, 200000, 0},
                                  {FARFIELD_FMM_PERIODIC, 20000, 1}, {FARFIELD_FMM_OPEN, 20000, 1},
                                  {FARFIELD_FMM_PERIODIC, 20000, 2}, {FARFIELD_FMM_OPEN, 20000, 2},
                                  {FARFIELD_FMM_OPEN, 1000, 3},      {FARFIELD_FMM_PERIODIC, 1000, 3}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        fmm_hang_arg a = cases[k];
        FF_ISOLATED(fmm_hang_case, &a, 0, 30);
    }
    /* n beyond the limit, tol at the bottom of the range: prompt statuses */
    farfield_fmm_plan p = NULL;
    double x[3] = {0, 0, 0}, qq[1] = {1}, u;
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 5e-324, &p, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_fmm_execute(p, INT64_MAX, x, qq, NULL, NULL, &u), FARFIELD_ERR_NPOINTS);
    EXPECT_STATUS(farfield_fmm_execute(p, (int64_t)1 << 32, x, qq, NULL, NULL, &u), FARFIELD_ERR_NPOINTS);
    farfield_fmm_destroy(p);
}


int main(void) {
    nufft_cases();
    ewald_cases();
    poisson_cases();
    fmm_cases();
    return ff_finish("c_hang");
}
