/* farfield reliability tests: c_hang.c
 * Class 1 of the reliability probe: calls that never return. Every size, grid and mode count
 * derived from user input is bounded before a loop or allocation depends on it, so each case
 * here must return (an error status) well inside its watchdog.
 * Runs isolated children under a watchdog (ff_isolated with timeout_s).
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== nufft ==================================== */

typedef struct {
    int dim;
    int64_t n[3];
    int single; /* 1: single precision */
    int type;   /* 1 or 2 */
} nufft_hang_arg;

/* makeplan with mode counts beyond the limits: FARFIELD_ERR_MODES, at once, naming the limit. */
static int nufft_hang_makeplan(void *p) {
    nufft_hang_arg *a = (nufft_hang_arg *)p;
    int type = a->type;
    farfield_nufft_opts o;
    farfield_nufft_default_opts(&o);
    o.nthreads = 1;
    if (a->single) {
        farfield_nufftf_plan q = NULL;
        EXPECT_STATUS(farfield_nufftf_makeplan(type, a->dim, a->n, 1, 1, 1e-3f, &q, &o), FARFIELD_ERR_MODES);
        EXPECT(q == NULL);
    } else {
        farfield_nufft_plan q = NULL;
        EXPECT_STATUS(farfield_nufft_makeplan(type, a->dim, a->n, 1, 1, 1e-6, &q, &o), FARFIELD_ERR_MODES);
        EXPECT(q == NULL);
    }
    EXPECT(strstr(farfield_last_error_message(), "limit") != NULL);
    return ff_failures;
}

static void nufft_cases(void) {
    /* 1D: 1.2e17 never returned (next_smooth_even scanned ~1e14 candidates); 1e12 took 5.7 s,
     * 1e13 36 s; INT64_MAX wrapped. 2D/3D: products far beyond the limits. */
    static const int64_t one_d[] = {123456789012345678LL, 1000000000000LL, 10000000000000LL, INT64_MAX,
                                    2147483647LL, 1LL << 31};
    for (unsigned i = 0; i < sizeof one_d / sizeof one_d[0]; i++) {
        nufft_hang_arg a = {1, {one_d[i], 1, 1}, 0, 1};
        FF_ISOLATED(nufft_hang_makeplan, &a, 0, 30);
        a.type = 2;
        a.single = 1;
        FF_ISOLATED(nufft_hang_makeplan, &a, 0, 30);
    }
    nufft_hang_arg b2 = {2, {1LL << 26, 1LL << 26, 1}, 0, 1};
    FF_ISOLATED(nufft_hang_makeplan, &b2, 0, 30);
    nufft_hang_arg b3 = {3, {1000000, 1000000, 1000000}, 0, 2};
    FF_ISOLATED(nufft_hang_makeplan, &b3, 0, 30);
    nufft_hang_arg b3f = {3, {INT64_MAX, INT64_MAX, INT64_MAX}, 1, 1};
    FF_ISOLATED(nufft_hang_makeplan, &b3f, 0, 30);
}




/* ==================================== ewald ==================================== */

static void ewald_cases(void) {
}




/* ==================================== poisson ==================================== */

static void poisson_cases(void) {
}




/* ==================================== fmm ==================================== */

static void fmm_cases(void) {
}


int main(void) {
    nufft_cases();
    ewald_cases();
    poisson_cases();
    fmm_cases();
    return ff_finish("c_hang");
}
