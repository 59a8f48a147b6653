/* farfield reliability tests: c_alloc.c
 * Class 2: allocation failure returns FARFIELD_ERR_ALLOC (with the byte count in the message),
 * never aborts the process. Each case runs in a forked child whose address space is limited
 * (RLIMIT_AS) to its current size plus a budget.
 * Runs isolated children under RLIMIT_AS (ff_isolated with extra_as_bytes).
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== nufft ==================================== */

#define NUFFT_ALLOC_BUDGET (256u << 20)

typedef struct {
    int dim;
    int64_t n[3];
    int single;
} nufft_alloc_plan_arg;

static int nufft_alloc_message_has_bytes(void) {
    const char *m = farfield_last_error_message();
    int ok = strstr(m, "bytes") != NULL;
    if (!ok) fprintf(stderr, "ALLOC message without a byte count: %s\n", m);
    return ok;
}

static int nufft_alloc_makeplan(void *p) {
    const nufft_alloc_plan_arg *a = (const nufft_alloc_plan_arg *)p;
    farfield_nufft_opts o;
    farfield_nufft_default_opts(&o);
    o.nthreads = 1;
    for (int type = 1; type <= 2; type++) {
        if (a->single) {
            farfield_nufftf_plan q = NULL;
            EXPECT_STATUS(farfield_nufftf_makeplan(type, a->dim, a->n, 1, 1, 1e-4f, &q, &o), FARFIELD_ERR_ALLOC);
            EXPECT(q == NULL);
        } else {
            farfield_nufft_plan q = NULL;
            EXPECT_STATUS(farfield_nufft_makeplan(type, a->dim, a->n, 1, 1, 1e-6, &q, &o), FARFIELD_ERR_ALLOC);
            EXPECT(q == NULL);
        }
        EXPECT(nufft_alloc_message_has_bytes());
    }
    return ff_failures;
}

static int nufft_alloc_beyond_limit(void *p) {
    const nufft_alloc_plan_arg *a = (const nufft_alloc_plan_arg *)p;
    farfield_nufft_plan q = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(1, a->dim, a->n, 1, 1, 1e-6, &q, NULL), FARFIELD_ERR_MODES);
    EXPECT(strstr(farfield_last_error_message(), "2^40") != NULL);
    EXPECT(q == NULL);
    return ff_failures;
}

static int nufft_alloc_fftw_headroom(void *unused) {
    (void)unused;
    farfield_nufft_opts o;
    farfield_nufft_default_opts(&o);
    o.nthreads = 1;
    o.upsampfac = 2.0;
    int64_t n[2] = {1536, 1536};
    farfield_nufft_plan q = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(1, 2, n, 1, 1, 1e-6, &q, &o), FARFIELD_ERR_ALLOC);
    EXPECT(q == NULL && strstr(farfield_last_error_message(), "FFTW") != NULL);
    return ff_failures;
}

typedef struct {
    int64_t m;
    double *x;
} nufft_alloc_setpts_arg;

static int nufft_alloc_setpts(void *p) {
    nufft_alloc_setpts_arg *a = (nufft_alloc_setpts_arg *)p;
    farfield_nufft_opts o;
    farfield_nufft_default_opts(&o);
    o.nthreads = 1;
    int64_t n = 64;
    farfield_nufft_plan q = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(2, 1, &n, 1, 1, 1e-6, &q, &o), FARFIELD_OK);
    if (!q) return ff_failures;
    EXPECT_STATUS(farfield_nufft_setpts(q, a->m, a->x, NULL, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_ALLOC);
    EXPECT(nufft_alloc_message_has_bytes());
    /* the plan stays usable: without points, then with a few */
    double f[128] = {0}, c[8];
    EXPECT_STATUS(farfield_nufft_execute(q, (farfield_complex *)c, (farfield_complex *)f), FARFIELD_ERR_NO_POINTS);
    double x[4] = {0.1, -1.0, 2.0, 3.0};
    EXPECT_STATUS(farfield_nufft_setpts(q, 4, x, NULL, NULL, 0, NULL, NULL, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufft_execute(q, (farfield_complex *)c, (farfield_complex *)f), FARFIELD_OK);
    farfield_nufft_destroy(q);
    return ff_failures;
}

static int nufft_alloc_execute(void *p) {
    farfield_nufft_plan q = (farfield_nufft_plan)p;
    enum { M = 400 };
    double x[M], y[M], c[2 * M];
    ff_rng r = {5};
    for (int j = 0; j < M; j++) {
        x[j] = ff_range(&r, -FF_PI, FF_PI);
        y[j] = ff_range(&r, -FF_PI, FF_PI);
        c[2 * j] = 1.0;
        c[2 * j + 1] = 0.0;
    }
    EXPECT_STATUS(farfield_nufft_setpts(q, M, x, y, NULL, 0, NULL, NULL, NULL), FARFIELD_OK);
    double *f = (double *)malloc(2 * sizeof(double) * 2048 * 2048);
    EXPECT(f != NULL);
    if (f) {
        EXPECT_STATUS(farfield_nufft_execute(q, (farfield_complex *)c, (farfield_complex *)f), FARFIELD_ERR_ALLOC);
        EXPECT(nufft_alloc_message_has_bytes());
        free(f);
    }
    return ff_failures;
}

static void nufft_cases(void) {
    /* makeplan: 1D N = 2^27 (aborted in ModeMap::new), 2D 2^14 x 2^14, 3D 512^3, both
     * precisions: the fine grid alone is beyond the 256 MiB budget */
    static const nufft_alloc_plan_arg plans[] = {
        {1, {1LL << 27, 1, 1}, 0}, {1, {1LL << 27, 1, 1}, 1}, {2, {1LL << 14, 1LL << 14, 1}, 0},
        {2, {1LL << 14, 1LL << 14, 1}, 1}, {3, {512, 512, 512}, 0},
    };
    for (unsigned i = 0; i < sizeof plans / sizeof plans[0]; i++)
        FF_ISOLATED(nufft_alloc_makeplan, (void *)&plans[i], NUFFT_ALLOC_BUDGET, 60);
    /* 2D 2^26 x 2^26 (also aborted in ModeMap::new): refused by the size limit, before any
     * allocation */
    static const nufft_alloc_plan_arg beyond = {2, {1LL << 26, 1LL << 26, 1}, 0};
    FF_ISOLATED(nufft_alloc_beyond_limit, (void *)&beyond, NUFFT_ALLOC_BUDGET, 60);
    /* a 3072^2 fine grid (144 MiB) fits the budget, but not again as FFTW's planning headroom:
     * the probe allocation refuses the plan (FFTW itself would abort on a failed malloc) */
    FF_ISOLATED(nufft_alloc_fftw_headroom, NULL, NUFFT_ALLOC_BUDGET, 60);

    /* setpts: 2^25 points need 384 MiB of sort permutation and sorted coordinates. The
     * coordinates (all 0: calloc'ed zero pages, no memory touched) exist before the limit. */
    nufft_alloc_setpts_arg s;
    s.m = 1LL << 25;
    s.x = (double *)calloc((size_t)s.m, sizeof(double));
    EXPECT(s.x != NULL);
    if (s.x) FF_ISOLATED(nufft_alloc_setpts, &s, NUFFT_ALLOC_BUDGET, 120);
    free(s.x);

    /* execute: one spreading subproblem whose box spans the whole 4096^2 fine grid (256 MiB)
     * while the budget is 128 MiB; the plan is made before the limit. */
    farfield_nufft_opts o;
    farfield_nufft_default_opts(&o);
    o.nthreads = 1;
    o.upsampfac = 2.0;
    int64_t n2[2] = {2048, 2048};
    farfield_nufft_plan p = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(1, 2, n2, 1, 1, 1e-3, &p, &o), FARFIELD_OK);
    if (p) {
        FF_ISOLATED(nufft_alloc_execute, p, 128u << 20, 120);
        farfield_nufft_destroy(p);
    }
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
    return ff_finish("c_alloc");
}
