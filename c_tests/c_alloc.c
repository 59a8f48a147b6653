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

static void fmm_cases(void) {
}


int main(void) {
    nufft_cases();
    ewald_cases();
    poisson_cases();
    fmm_cases();
    return ff_finish("c_alloc");
}
