/* farfield reliability tests: c_limits.c
 * Class 9: the smaller defects: thread caps, option validation that names the option, size
 * messages, coordinate ranges of the accuracy contract, memory estimates, tolerance clamps.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== common ==================================== */

/* nthreads above FARFIELD_MAX_THREADS is refused with INVALID_ARG (the message names the
 * limit) by every plan kind, before any thread is started; the plan handle stays NULL. */
static void common_cases(void) {
    const int too_many[2] = {FARFIELD_MAX_THREADS + 1, 100000};
    double box[9] = {10, 0, 0, 0, 10, 0, 0, 0, 10};
    for (int t = 0; t < 2; t++) {
        farfield_nufft_opts no;
        farfield_nufft_default_opts(&no);
        no.nthreads = too_many[t];
        int64_t nm[1] = {16};
        farfield_nufft_plan np = (farfield_nufft_plan)1;
        EXPECT_STATUS(farfield_nufft_makeplan(1, 1, nm, 1, 1, 1e-6, &np, &no), FARFIELD_ERR_INVALID_ARG);
        EXPECT(np == NULL);
        EXPECT(strstr(farfield_last_error_message(), "1024") != NULL);
        farfield_nufftf_plan nfp = (farfield_nufftf_plan)1;
        EXPECT_STATUS(farfield_nufftf_makeplan(1, 1, nm, 1, 1, 1e-4, &nfp, &no), FARFIELD_ERR_INVALID_ARG);
        EXPECT(nfp == NULL);

        farfield_ewald_opts eo;
        farfield_ewald_default_opts(&eo);
        eo.nthreads = too_many[t];
        farfield_ewald_plan ep = (farfield_ewald_plan)1;
        EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-5, &ep, &eo),
                      FARFIELD_ERR_INVALID_ARG);
        EXPECT(ep == NULL);

        farfield_fmm_opts fo;
        farfield_fmm_default_opts(&fo);
        fo.nthreads = too_many[t];
        farfield_fmm_plan fp = (farfield_fmm_plan)1;
        EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, &fp, &fo), FARFIELD_ERR_INVALID_ARG);
        EXPECT(fp == NULL);

        farfield_poisson_opts po;
        farfield_poisson_default_opts(&po);
        po.nthreads = too_many[t];
        int64_t n[3] = {8, 8, 8};
        double h[3] = {0.1, 0.1, 0.1};
        farfield_poisson_plan pp = (farfield_poisson_plan)1;
        EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_HOCKNEY, 3, n, h, &pp, &po),
                      FARFIELD_ERR_INVALID_ARG);
        EXPECT(pp == NULL);
    }
    /* a count within the limit is accepted */
    farfield_nufft_opts no;
    farfield_nufft_default_opts(&no);
    no.nthreads = 4;
    int64_t nm[1] = {16};
    farfield_nufft_plan np = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(1, 1, nm, 1, 1, 1e-6, &np, &no), FARFIELD_OK);
    farfield_nufft_destroy(np);
}




/* ==================================== nufft ==================================== */

static void nufft_cases(void) {
}




/* ==================================== ewald ==================================== */

/* Ewald (issue 10, class 9): a tolerance below what the method reaches in double precision is
 * raised to it with FARFIELD_WARN_TOL_CLAMPED (tol_used in farfield_ewald_params); sizes beyond
 * the stated limits are FARFIELD_ERR_RANGE, never FARFIELD_ERR_MODES; messages print floats
 * compactly. */
static void ewald_cases(void) {
    double box[9] = {10, 0, 0, 0, 10, 0, 0, 0, 10};
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o);
    o.nthreads = 1;
    o.order_or_support = 10; /* the order the automatic choice takes at the floor (one table) */
    farfield_ewald_plan p = NULL;
    farfield_ewald_params prm;
    /* SPME at tol 1e-20 picked a 720^3 grid (3 GB) with an estimated error of 5.4e-7 */
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-20, &p, &o), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_get_params(p, &prm), FARFIELD_OK);
    EXPECT(prm.warnings & FARFIELD_WARN_TOL_CLAMPED);
    EXPECT(prm.tol_used == 1e-12);
    EXPECT(prm.est_rel_err <= 1.01 * prm.tol_used);
    EXPECT(prm.grid[0] <= 256 && prm.grid[1] <= 256 && prm.grid[2] <= 256);
    farfield_ewald_destroy(p);
    /* an ordinary tol: no warning, tol_used = tol */
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-6, &p, &o), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_get_params(p, &prm), FARFIELD_OK);
    EXPECT(prm.warnings == 0 && prm.tol_used == 1e-6);
    farfield_ewald_destroy(p);
    /* an override that keeps the estimated error above tol is reported, not silent */
    o.order_or_support = 4;
    o.grid[0] = o.grid[1] = o.grid[2] = 16;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-10, &p, &o), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_get_params(p, &prm), FARFIELD_OK);
    EXPECT(prm.warnings == FARFIELD_EWALD_WARN_TOL_NOT_MET && prm.est_rel_err > 1e-10);
    farfield_ewald_destroy(p);
    o.order_or_support = 10;
    /* grid limits: RANGE (documented), not MODES */
    o.grid[0] = (int64_t)1 << 17, o.grid[1] = o.grid[2] = 16;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-6, &p, &o), FARFIELD_ERR_RANGE);
    o.grid[0] = o.grid[1] = o.grid[2] = (int64_t)1 << 16;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-6, &p, &o), FARFIELD_ERR_RANGE);
    EXPECT(strstr(farfield_last_error_message(), "2^33") != NULL);
    o.grid[0] = o.grid[1] = o.grid[2] = 0;
    /* messages print floats in exponent form, not 300 digits */
    o.xi = 1e300;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-6, &p, &o), FARFIELD_ERR_RANGE);
    EXPECT(strlen(farfield_last_error_message()) < 400);
    EXPECT(strstr(farfield_last_error_message(), "00000000") == NULL);
    o.xi = 0;
    o.rc = 1e300;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-6, &p, &o), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "1e300") != NULL);
    o.rc = 0;
    /* exclusion count bound */
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_DIRECT, box, 100, 1e-6, &p, &o), FARFIELD_OK);
    const int64_t pr[2] = {0, 1};
    EXPECT_STATUS(farfield_ewald_set_exclusions(p, INT64_MAX, pr), FARFIELD_ERR_RANGE);
    EXPECT_STATUS(farfield_ewald_set_exclusions(p, FARFIELD_EWALD_MAX_EXCLUSIONS + 1, pr), FARFIELD_ERR_RANGE);
    farfield_ewald_destroy(p);
}




/* ==================================== poisson ==================================== */

/* Class 9, Poisson: the Vico memory estimate follows the precomputation grid actually built
 * (the old "16·Π 4n_d" was 13× low for a 64×64×2 slab), that grid is bounded relative to the
 * doubled grid (512×), vico_factor to (1, 4]; messages state value and limit in short form. */
static int pl_short_numbers(const char *msg) { /* no run of more than 20 digits */
    int run = 0;
    for (const char *c = msg; *c; c++) {
        run = (*c >= '0' && *c <= '9') ? run + 1 : 0;
        if (run > 20) return 0;
    }
    return 1;
}

static void poisson_cases(void) {
    const int64_t slab[3] = {64, 64, 2};
    const double h1[3] = {1, 1, 1};
    int64_t pc[3] = {0, 0, 0}, plan_b = 0, field_b = 0, peak_b = 0;
    EXPECT_STATUS(farfield_poisson_estimate(FARFIELD_POISSON_VICO, 3, slab, h1, NULL, pc, &plan_b, &field_b, &peak_b), 0);
    /* P_z ≥ 1.5·2 + L/h_z with L = 1.1·|(64, 64, 2)| = 99.6: the smallest 2,3,5-smooth even ≥ 103 is 108 */
    EXPECT(pc[0] == 256 && pc[1] == 256 && pc[2] == 108);
    const int64_t hl = (64 + 1) * 128 * 4; /* half spectrum of the doubled grid */
    EXPECT(plan_b == 8 * 128 * 128 * 4 + 24 * hl);
    EXPECT(field_b == 16 * hl + 8 * 3 * 64 * 64 * 2);
    EXPECT(peak_b == plan_b + 8 * pc[0] * pc[1] * pc[2] + 16 * (pc[0] / 2 + 1) * pc[1] * pc[2]);
    EXPECT(peak_b - plan_b > 10 * 16 * (4 * 64) * (4 * 64) * (4 * 2));
    EXPECT_STATUS(farfield_poisson_estimate(FARFIELD_POISSON_VICO_DCT, 3, slab, h1, NULL, pc, &plan_b, NULL, &peak_b), 0);
    EXPECT(peak_b == plan_b + 8 * (pc[0] / 2 + 1) * (pc[1] / 2 + 1) * (pc[2] / 2 + 1));
    EXPECT_STATUS(farfield_poisson_estimate(FARFIELD_POISSON_HOCKNEY, 3, slab, h1, NULL, pc, &plan_b, NULL, &peak_b), 0);
    EXPECT(pc[0] == 0 && peak_b == plan_b);
    /* the estimate is what the plan builds: a plan for a small slab works */
    const int64_t small[3] = {16, 16, 2};
    farfield_poisson_plan p = NULL;
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO, 3, small, h1, &p, NULL), 0);
    farfield_poisson_destroy(p);
    /* h_y = 1e-5 asked for 10.9 GB: now bounded (512 × the doubled grid) */
    const int64_t n32[3] = {32, 32, 32};
    const double hy[3] = {1, 1e-5, 1};
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO, 3, n32, hy, &p, NULL), FARFIELD_ERR_RANGE);
    const char *msg = farfield_last_error_message();
    EXPECT(strstr(msg, "512") != NULL && pl_short_numbers(msg));
    /* vico_factor bounds, named with the value */
    farfield_poisson_opts o;
    farfield_poisson_default_opts(&o);
    o.vico_factor = 1e15;
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO, 3, n32, h1, &p, &o), FARFIELD_ERR_INVALID_ARG);
    msg = farfield_last_error_message();
    EXPECT(strstr(msg, "vico_factor = 1e15") != NULL && pl_short_numbers(msg));
    o.vico_factor = 4.0;
    const int64_t n8[3] = {8, 8, 8};
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO_DCT, 3, n8, h1, &p, &o), 0);
    farfield_poisson_destroy(p);
    /* sizes: a short message with the limit */
    const int64_t huge[3] = {INT64_MAX, 1, 1};
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_HOCKNEY, 3, huge, h1, &p, NULL), FARFIELD_ERR_RANGE);
    EXPECT(pl_short_numbers(farfield_last_error_message()));
    o.vico_factor = 1.1;
    o.nthreads = 100000;
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_HOCKNEY, 3, n8, h1, &p, &o), FARFIELD_ERR_INVALID_ARG);
}




/* ==================================== fmm ==================================== */

static void fmm_cases(void) {
}


int main(void) {
    common_cases();
    nufft_cases();
    ewald_cases();
    poisson_cases();
    fmm_cases();
    return ff_finish("c_limits");
}
