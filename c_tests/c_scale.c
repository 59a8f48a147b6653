/* farfield reliability tests: c_scale.c
 * Classes 5 and 7: extreme but finite scales (box sides, grid spacings) give the right answer
 * (checked against the scale-free value) or a clear status (FARFIELD_ERR_RANGE), never a wrong
 * or non-finite result with status 0.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



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
    ewald_cases();
    poisson_cases();
    fmm_cases();
    return ff_finish("c_scale");
}
