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

static void poisson_cases(void) {
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
