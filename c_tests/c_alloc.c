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

static void ewald_cases(void) {
}




/* ==================================== poisson ==================================== */

static void poisson_cases(void) {
}




/* ==================================== fmm ==================================== */

typedef struct {
    int64_t n;
    const double *xyz, *q;
    farfield_fmm_plan plan;
    int want_field;
} fmm_alloc_arg;

/* execute under the address-space limit: FARFIELD_ERR_ALLOC, never an abort; the plan stays
 * usable for a small system afterwards */
static int fmm_alloc_execute(void *arg) {
    fmm_alloc_arg *a = (fmm_alloc_arg *)arg;
    int fails = 0;
    double *field = NULL, u = 0.0;
    int st = farfield_fmm_execute(a->plan, a->n, a->xyz, a->q, NULL, field, &u);
    if (st != FARFIELD_ERR_ALLOC) {
        fprintf(stderr, "fmm alloc n=%lld: status %d (%s)\n", (long long)a->n, st, farfield_last_error_message());
        fails++;
    }
    double x[6] = {0.1, 0.2, 0.3, 0.6, 0.5, 0.4}, q[2] = {1, -1};
    if (farfield_fmm_execute(a->plan, 2, x, q, NULL, NULL, &u) != FARFIELD_OK || !isfinite(u)) fails++;
    return fails;
}

static void fmm_cases(void) {
    farfield_fmm_opts o;
    farfield_fmm_default_opts(&o);
    o.nthreads = 1;
    /* n = 2^25: the work arrays (~2 GiB) exceed a 256 MiB budget (inputs mapped, untouched) */
    {
        const int64_t n = (int64_t)1 << 25;
        double *xyz = (double *)calloc(3 * (size_t)n, sizeof(double));
        double *q = (double *)calloc((size_t)n, sizeof(double));
        fmm_alloc_arg a = {n, xyz, q, NULL, 0};
        EXPECT(xyz && q);
        EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, &a.plan, &o), FARFIELD_OK);
        if (xyz && q) FF_ISOLATED(fmm_alloc_execute, &a, (size_t)256 << 20, 120);
        farfield_fmm_destroy(a.plan);
        free(xyz);
        free(q);
    }
    /* n = 2^20 with p = 40 and a depth-7 tree: the work arrays fit, the tree, lists and
     * expansions (~30 GB) do not; periodic as well */
    for (int bc = 0; bc < 2; bc++) {
        const int64_t n = (int64_t)1 << 20;
        double *xyz = (double *)malloc(sizeof(double) * 3 * (size_t)n);
        double *q = (double *)malloc(sizeof(double) * (size_t)n);
        ff_rng r = {5};
        for (int64_t i = 0; i < 3 * n; i++) xyz[i] = ff_uniform(&r);
        for (int64_t i = 0; i < n; i++) q[i] = ff_uniform(&r) - 0.5;
        double b[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        farfield_fmm_opts o2 = o;
        o2.order = 40;
        o2.depth = 7;
        fmm_alloc_arg a = {n, xyz, q, NULL, 0};
        EXPECT_STATUS(farfield_fmm_makeplan(bc ? FARFIELD_FMM_PERIODIC : FARFIELD_FMM_OPEN, b, 1e-6, &a.plan, &o2), FARFIELD_OK);
        FF_ISOLATED(fmm_alloc_execute, &a, (size_t)256 << 20, 120);
        farfield_fmm_destroy(a.plan);
        free(xyz);
        free(q);
    }
}


int main(void) {
    nufft_cases();
    ewald_cases();
    poisson_cases();
    fmm_cases();
    return ff_finish("c_alloc");
}
