/* farfield reliability tests: c_limits.c
 * Class 9: the smaller defects: thread caps, option validation that names the option, size
 * messages, coordinate ranges of the accuracy contract, memory estimates, tolerance clamps.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== common ==================================== */

static void common_cases(void) {
}




/* ==================================== nufft ==================================== */

static void nufft_cases(void) {
}




/* ==================================== ewald ==================================== */

static void ewald_cases(void) {
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
