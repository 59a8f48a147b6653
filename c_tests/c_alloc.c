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
    for (int type = 1; type <= 2; type++) {
        ff_expect_nufft_makeplan(a->single, type, a->dim, a->n, 1e-6, 1e-4f, FARFIELD_ERR_ALLOC);
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
    farfield_nufft_default_opts(&o, sizeof o);
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
    farfield_nufft_default_opts(&o, sizeof o);
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
        EXPECT_STATUS(farfield_nufft_execute(q, (farfield_complex *)c, (farfield_complex *)f), FARFIELD_OK);
        /* mode (0, 0) (centred order: index 1024 + 2048·1024) is Σ c_j = M; its error is at
         * most tol times the l2 norm of all modes, sqrt(2048²·M) ≈ 4e4 */
        size_t k0 = 2 * ((size_t)1024 + (size_t)2048 * 1024);
        EXPECT(fabs(f[k0] - M) <= 1e-3 * 2048.0 * 20.0 && fabs(f[k0 + 1]) <= 1e-3 * 2048.0 * 20.0);
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

    /* execute: spreading scratch is bounded by tiles (one box of a 32² bin plus the kernel's
     * halo per subproblem, whatever the points), so 400 points scattered over the 4096² fine
     * grid (256 MiB, made before the limit) spread within 64 MiB of address space beyond the
     * 64 MiB of the output array (before the tiles, one subproblem's box spanned the whole
     * grid and execute returned FARFIELD_ERR_ALLOC here). */
    farfield_nufft_opts o;
    farfield_nufft_default_opts(&o, sizeof o);
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

/* Ewald (bad-input class 2): user-sized allocations under RLIMIT_AS return ALLOC (or a bound
 * returns RANGE first), never abort. nthreads = 1 (no pool threads). */
#define EW_BUDGET ((size_t)256 << 20)

static int ew_alloc_exclusions(void *arg) {
    int f0 = ff_failures;
    const int64_t *pairs = (const int64_t *)arg; /* 2^26 pairs of zeros, never touched */
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o, sizeof o);
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
    farfield_ewald_default_opts(&o, sizeof o);
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
    farfield_ewald_default_opts(&o, sizeof o);
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

/* Class 2, Poisson: grids that do not fit the address space give FARFIELD_ERR_ALLOC with the
 * byte count (nthreads = 1: no pool threads), and the plan stays usable. */
#define POISSON_BUDGET ((size_t)256 << 20)

static int poisson_alloc_plans(void *arg) {
    (void)arg;
    const int before = ff_failures;
    farfield_poisson_opts o;
    farfield_poisson_default_opts(&o, sizeof o);
    o.nthreads = 1;
    farfield_poisson_plan p = NULL;
    const double h[3] = {0.01, 0.01, 0.01};
    /* 1024³ Hockney: the doubled grid alone is 8 GiB */
    const int64_t n1024[3] = {1024, 1024, 1024};
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_HOCKNEY, 3, n1024, h, &p, &o), FARFIELD_ERR_ALLOC);
    EXPECT(p == NULL && strstr(farfield_last_error_message(), "bytes") != NULL);
    /* 96³ Vico: the plan (≈142 MB) fits, the 384³ precomputation grid (453 MB + spectrum) not */
    const int64_t n96[3] = {96, 96, 96};
    int64_t plan_b = 0, peak_b = 0;
    EXPECT_STATUS(farfield_poisson_estimate(FARFIELD_POISSON_VICO, 3, n96, h, &o, NULL, &plan_b, NULL, &peak_b), 0);
    EXPECT(plan_b < (int64_t)POISSON_BUDGET && peak_b > (int64_t)POISSON_BUDGET);
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO, 3, n96, h, &p, &o), FARFIELD_ERR_ALLOC);
    EXPECT(p == NULL && strstr(farfield_last_error_message(), "bytes") != NULL);
    /* still works for a small grid afterwards */
    const int64_t n8[3] = {8, 8, 8};
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO, 3, n8, h, &p, &o), 0);
    farfield_poisson_destroy(p);
    return ff_failures - before;
}

/* Execute under exhaustion: the field buffers (first execute with efield) and the FFTW
 * headroom probe fail with FARFIELD_ERR_ALLOC, outputs untouched, plan usable afterwards. */
static int poisson_alloc_execute(void *arg) {
    (void)arg;
    const int before = ff_failures;
    farfield_poisson_opts o;
    farfield_poisson_default_opts(&o, sizeof o);
    o.nthreads = 1;
    farfield_poisson_plan p = NULL;
    const int64_t n[3] = {48, 48, 48};
    const double h[3] = {0.02, 0.02, 0.02};
    const size_t npts = 48 * 48 * 48;
    double *rho = malloc(npts * sizeof(double)), *phi = malloc(npts * sizeof(double)),
           *e = malloc(3 * npts * sizeof(double));
    EXPECT(rho && phi && e);
    if (!rho || !phi || !e) return ff_failures - before;
    for (size_t i = 0; i < npts; i++) rho[i] = sin(0.37 * (double)i);
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_HOCKNEY, 3, n, h, &p, &o), 0);
    if (!p) return ff_failures - before;
    /* use up the address space in 1 MiB blocks, then give back 4 MiB */
    enum { MAXB = 4096 };
    static void *blocks[MAXB];
    int nb = 0;
    while (nb < MAXB && (blocks[nb] = malloc((size_t)1 << 20)) != NULL) nb++;
    EXPECT(nb < MAXB);
    for (int k = 0; k < 4 && nb > 0; k++) free(blocks[--nb]);
    for (size_t i = 0; i < npts; i++) phi[i] = 7.0;
    double u = 7.0;
    /* the field buffers: 16·49·96·96 + 8·3·48³ ≈ 9.9 MB */
    EXPECT_STATUS(farfield_poisson_execute(p, rho, phi, e, &u), FARFIELD_ERR_ALLOC);
    EXPECT(strstr(farfield_last_error_message(), "bytes") != NULL);
    /* without the field: the 32 MiB FFTW headroom probe */
    EXPECT_STATUS(farfield_poisson_execute(p, rho, phi, NULL, &u), FARFIELD_ERR_ALLOC);
    int untouched = u == 7.0;
    for (size_t i = 0; i < npts; i++) untouched &= phi[i] == 7.0;
    EXPECT(untouched);
    while (nb > 0) free(blocks[--nb]);
    EXPECT_STATUS(farfield_poisson_execute(p, rho, phi, e, &u), 0);
    int finite = isfinite(u);
    for (size_t i = 0; i < npts; i++) finite &= isfinite(phi[i]) && isfinite(e[i]);
    EXPECT(finite && u > 0);
    farfield_poisson_destroy(p);
    free(rho);
    free(phi);
    free(e);
    return ff_failures - before;
}

static void poisson_cases(void) {
    FF_ISOLATED(poisson_alloc_plans, NULL, POISSON_BUDGET, 120);
    FF_ISOLATED(poisson_alloc_execute, NULL, POISSON_BUDGET, 120);
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
    farfield_fmm_default_opts(&o, sizeof o);
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
