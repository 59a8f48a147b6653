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

/* Class 1, Poisson: every grid derived from the input (vico_factor, spacings, sizes) is bounded
 * before any loop or allocation; each case returns its status at once (watchdog 10 s). */
static int poisson_hang_child(void *arg) {
    (void)arg;
    const int before = ff_failures;
    farfield_poisson_opts o;
    farfield_poisson_default_opts(&o);
    o.nthreads = 1;
    farfield_poisson_plan p = NULL;
    const int64_t n8[3] = {8, 8, 8}, n32[3] = {32, 32, 32};
    const double h1[3] = {1, 1, 1};
    /* vico_factor = 1e15: an unbounded precomputation grid before the fix */
    o.vico_factor = 1e15;
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO, 3, n8, h1, &p, &o), FARFIELD_ERR_INVALID_ARG);
    EXPECT(p == NULL && strstr(farfield_last_error_message(), "vico_factor") != NULL);
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO_DCT, 3, n8, h1, &p, &o), FARFIELD_ERR_INVALID_ARG);
    o.vico_factor = 1.1;
    /* anisotropic spacings: the precomputation grid (P_y ~ L/h_y) is bounded */
    const double hy[3][3] = {{1, 1e-5, 1}, {1, 1e-300, 1}, {1, 5e-324, 1}};
    for (int k = 0; k < 3; k++) {
        EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO, 3, n32, hy[k], &p, &o), FARFIELD_ERR_RANGE);
        EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO_DCT, 3, n32, hy[k], &p, &o), FARFIELD_ERR_RANGE);
        EXPECT_STATUS(farfield_poisson_estimate(FARFIELD_POISSON_VICO, 3, n32, hy[k], &o, NULL, NULL, NULL, NULL),
                      FARFIELD_ERR_RANGE);
    }
    /* huge sizes: bounded before any allocation */
    const int64_t big[3][3] = {{INT64_MAX, 1, 1}, {1 << 30, 1 << 30, 1 << 30}, {1 << 20, 1 << 20, 1 << 20}};
    for (int k = 0; k < 3; k++) {
        for (int m = 0; m < 3; m++) {
            EXPECT_STATUS(farfield_poisson_makeplan(m, 3, big[k], h1, &p, &o), FARFIELD_ERR_RANGE);
            EXPECT(p == NULL);
        }
    }
    return ff_failures - before;
}

static void poisson_cases(void) {
    FF_ISOLATED(poisson_hang_child, NULL, 0, 10);
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
