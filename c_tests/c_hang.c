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
    ff_expect_nufft_makeplan(a->single, a->type, a->dim, a->n, 1e-6, 1e-3f, FARFIELD_ERR_MODES);
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

/* Ewald (bad-input class 1): each case returns well inside its watchdog. */
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
    EXPECT_STATUS(farfield_ewald_default_opts(&o, sizeof o), FARFIELD_OK);
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
    farfield_poisson_default_opts(&o, sizeof o);
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
    farfield_fmm_default_opts(&o, sizeof o);
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
