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

static void ewald_cases(void) {
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
