/* farfield reliability tests: c_alloc.c
 * Class 2: allocation failure returns FARFIELD_ERR_ALLOC (with the byte count in the message),
 * never aborts the process. Each case runs in a forked child whose address space is limited
 * (RLIMIT_AS) to its current size plus a budget.
 * Runs isolated children under RLIMIT_AS (ff_isolated with extra_as_bytes).
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== nufft ==================================== */

static void nufft_cases(void) {
}




/* ==================================== ewald ==================================== */

/* Ewald (issue 10, class 2): user-sized allocations under RLIMIT_AS return ALLOC (or a bound
 * returns RANGE first), never abort. nthreads = 1 (no pool threads). */
#define EW_BUDGET ((size_t)256 << 20)

static int ew_alloc_exclusions(void *arg) {
    int f0 = ff_failures;
    const int64_t *pairs = (const int64_t *)arg; /* 2^26 pairs of zeros, never touched */
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o);
    o.nthreads = 1;
    farfield_ewald_plan p = NULL;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_DIRECT, (double[9]){10, 0, 0, 0, 10, 0, 0, 0, 10}, 2, 1e-6, &p, &o), FARFIELD_OK);
    /* the sorted, deduplicated list of 2^26 pairs needs 512 MiB: ALLOC with the byte count */
    EXPECT_STATUS(farfield_ewald_set_exclusions(p, (int64_t)1 << 26, pairs), FARFIELD_ERR_ALLOC);
    EXPECT(strstr(farfield_last_error_message(), "bytes") != NULL);
    /* INT64_MAX pairs: refused by the stated bound before anything is read or allocated */
    EXPECT_STATUS(farfield_ewald_set_exclusions(p, INT64_MAX, pairs), FARFIELD_ERR_RANGE);
    /* the plan still works */
    double xyz[6] = {1, 2, 3, 4, 5, 6}, q[2] = {1, -1}, u = 0;
    EXPECT_STATUS(farfield_ewald_execute(p, 2, xyz, q, NULL, NULL, &u, NULL), FARFIELD_OK);
    farfield_ewald_destroy(p);
    return ff_failures - f0;
}

typedef struct {
    farfield_ewald_plan plan;
    int64_t n;
    const double *xyz, *q;
} ew_exec_arg;

static int ew_alloc_execute(void *arg) {
    int f0 = ff_failures;
    const ew_exec_arg *a = (const ew_exec_arg *)arg;
    double u = 0;
    EXPECT_STATUS(farfield_ewald_execute(a->plan, a->n, a->xyz, a->q, NULL, NULL, &u, NULL), FARFIELD_ERR_ALLOC);
    EXPECT(strstr(farfield_last_error_message(), "bytes") != NULL);
    return ff_failures - f0;
}

static int ew_alloc_grid(void *arg) {
    (void)arg;
    int f0 = ff_failures;
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o);
    o.nthreads = 1;
    o.grid[0] = o.grid[1] = o.grid[2] = 512;
    farfield_ewald_plan p = NULL;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, (double[9]){10, 0, 0, 0, 10, 0, 0, 0, 10}, 100, 1e-6, &p, &o), FARFIELD_ERR_ALLOC);
    EXPECT(p == NULL);
    o.grid[0] = o.grid[1] = o.grid[2] = 0;
    /* the direct sum in a flat box would list ~1e9 wave vectors: refused by its bound */
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_DIRECT, (double[9]){10, 0, 0, 0, 10, 0, 0, 0, 1e-6}, 100, 1e-6, &p, &o), FARFIELD_ERR_RANGE);
    return ff_failures - f0;
}

static void ewald_cases(void) {
    /* arrays made before the fork (calloc: untouched zero pages) count in the child's base size */
    int64_t *pairs = (int64_t *)calloc((size_t)2 << 26, sizeof(int64_t));
    if (pairs) {
        FF_ISOLATED(ew_alloc_exclusions, pairs, EW_BUDGET, 120);
        free(pairs);
    }
    FF_ISOLATED(ew_alloc_grid, NULL, EW_BUDGET, 120);
    const int64_t n = (int64_t)1 << 25;
    double *xyz = (double *)calloc((size_t)(3 * n), sizeof(double));
    double *q = (double *)calloc((size_t)n, sizeof(double));
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o);
    o.nthreads = 1;
    ew_exec_arg a = {NULL, n, xyz, q};
    if (xyz && q) {
        EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_DIRECT, (double[9]){10, 0, 0, 0, 10, 0, 0, 0, 10}, n, 1e-3, &a.plan, &o), FARFIELD_OK);
        if (a.plan) FF_ISOLATED(ew_alloc_execute, &a, EW_BUDGET, 120);
        farfield_ewald_destroy(a.plan);
    }
    free(xyz);
    free(q);
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
    return ff_finish("c_alloc");
}
