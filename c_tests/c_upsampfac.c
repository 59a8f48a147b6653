/* farfield reliability tests: c_upsampfac.c
 * Class 4: a NUFFT with a user upsampling factor sigma below 2 either reaches tol (wider
 * kernel) or reports the achievable tolerance (tol_used, FARFIELD_WARN_TOL_CLAMPED) in
 * farfield_nufft_get_info; the measured error against the direct sum is within the reported
 * tolerance.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== nufft ==================================== */

static void nufft_cases(void) {
}


int main(void) {
    nufft_cases();
    return ff_finish("c_upsampfac");
}
