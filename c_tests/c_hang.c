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

/* Ewald (issue 10, class 1): each case returns well inside its watchdog. */
typedef struct {
    const char *what;
    int method;
    double box[9];
    double tol, xi, rc;
    int expect; /* expected status; -1: OK or FARFIELD_ERR_RANGE */
} ew_hang_case;

static int ew_hang_run(void *arg) {
    const ew_hang_case *c = (const ew_hang_case *)arg;
    int f0 = ff_failures;
    farfield_ewald_opts o;
    EXPECT_STATUS(farfield_ewald_default_opts(&o), FARFIELD_OK);
    o.nthreads = 1;
    o.xi = c->xi;
    o.rc = c->rc;
    farfield_ewald_plan p = NULL;
    int s = farfield_ewald_makeplan(c->method, c->box, 100, c->tol, &p, &o);
    if (c->expect >= 0) {
        EXPECT_STATUS(s, c->expect);
    } else if (s != FARFIELD_OK && s != FARFIELD_ERR_RANGE) {
        fprintf(stderr, "ewald hang case %s: status %d (%s)\n", c->what, s, farfield_last_error_message());
        ff_failures++;
    }
    if (s != FARFIELD_OK) EXPECT(strlen(farfield_last_error_message()) < 400); /* no 300-digit numbers */
    if (s == FARFIELD_OK) {
        /* a plan that was made also evaluates promptly */
        double xyz[6] = {0.1 * c->box[0], 0.2 * c->box[4], 0.3 * c->box[8], 0.6 * c->box[0], 0.5 * c->box[4], 0.7 * c->box[8]};
        double q[2] = {1, -1}, u = 0;
        EXPECT_STATUS(farfield_ewald_execute(p, 2, xyz, q, NULL, NULL, &u, NULL), FARFIELD_OK);
        EXPECT(isfinite(u));
    }
    farfield_ewald_destroy(p);
    if (ff_failures != f0) fprintf(stderr, "  (case: %s)\n", c->what);
    return ff_failures - f0;
}

static void ewald_cases(void) {
    static const ew_hang_case cases[] = {
        {"SPME tol 5e-324 (clamped)", FARFIELD_EWALD_SPME, {10, 0, 0, 0, 10, 0, 0, 0, 10}, 5e-324, 0, 0, FARFIELD_OK},
        {"SPME tol 1e-310 (clamped)", FARFIELD_EWALD_SPME, {10, 0, 0, 0, 10, 0, 0, 0, 10}, 1e-310, 0, 0, FARFIELD_OK},
        {"SPECTRAL tol 5e-324 (clamped)", FARFIELD_EWALD_SPECTRAL, {10, 0, 0, 0, 10, 0, 0, 0, 10}, 5e-324, 0, 0, FARFIELD_OK},
        {"DIRECT tol 5e-324 (clamped)", FARFIELD_EWALD_DIRECT, {10, 0, 0, 0, 10, 0, 0, 0, 10}, 5e-324, 0, 0, FARFIELD_OK},
        {"SPME xi 1e300", FARFIELD_EWALD_SPME, {10, 0, 0, 0, 10, 0, 0, 0, 10}, 1e-6, 1e300, 0, FARFIELD_ERR_RANGE},
        {"DIRECT xi 1e300", FARFIELD_EWALD_DIRECT, {10, 0, 0, 0, 10, 0, 0, 0, 10}, 1e-6, 1e300, 0, FARFIELD_ERR_RANGE},
        {"SPME rc 1e-300", FARFIELD_EWALD_SPME, {10, 0, 0, 0, 10, 0, 0, 0, 10}, 1e-6, 0, 1e-300, FARFIELD_ERR_RANGE},
        {"SPECTRAL rc 1e-300", FARFIELD_EWALD_SPECTRAL, {10, 0, 0, 0, 10, 0, 0, 0, 10}, 1e-6, 0, 1e-300, FARFIELD_ERR_RANGE},
        {"DIRECT rc 1e-300", FARFIELD_EWALD_DIRECT, {10, 0, 0, 0, 10, 0, 0, 0, 10}, 1e-6, 0, 1e-300, FARFIELD_ERR_RANGE},
        {"SPME diagonal 5e-324", FARFIELD_EWALD_SPME, {10, 0, 0, 0, 10, 0, 0, 0, 5e-324}, 1e-6, 0, 0, FARFIELD_ERR_RANGE},
        {"SPME 10x10x1e-300", FARFIELD_EWALD_SPME, {10, 0, 0, 0, 10, 0, 0, 0, 1e-300}, 1e-6, 0, 0, FARFIELD_ERR_RANGE},
        {"DIRECT 10x10x1e-300", FARFIELD_EWALD_DIRECT, {10, 0, 0, 0, 10, 0, 0, 0, 1e-300}, 1e-6, 0, 0, FARFIELD_ERR_RANGE},
        {"SPECTRAL box 1e-100", FARFIELD_EWALD_SPECTRAL, {1e-100, 0, 0, 0, 1e-100, 0, 0, 0, 1e-100}, 1e-6, 0, 0, FARFIELD_OK},
        {"DIRECT box 1e-120", FARFIELD_EWALD_DIRECT, {1e-120, 0, 0, 0, 1e-120, 0, 0, 0, 1e-120}, 1e-6, 0, 0, FARFIELD_OK},
        {"DIRECT skewed b = (1000, 10, 0)", FARFIELD_EWALD_DIRECT, {10, 0, 0, 1000, 10, 0, 0, 0, 10}, 1e-6, 0, 0, -1},
        {"DIRECT skewed, thin a", FARFIELD_EWALD_DIRECT, {1, 0, 0, 1000, 10, 0, 0, 0, 10}, 1e-6, 0, 0, -1},
        {"SPME skewed b = (1000, 10, 0)", FARFIELD_EWALD_SPME, {10, 0, 0, 1000, 10, 0, 0, 0, 10}, 1e-6, 0, 0, -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) FF_ISOLATED(ew_hang_run, (void *)&cases[i], 0, 30);
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
