/* farfield reliability tests: c_coincident.c
 * Class 8: coincident distinct charges follow the documented contract in Ewald and FMM, and
 * the all-coincident input costs O(n), not O(n^2).
 * Runs a watchdog for the O(n) cases.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== ewald ==================================== */

static void ewald_cases(void) {
}




/* ==================================== fmm ==================================== */

static void fmm_cases(void) {
}


int main(void) {
    ewald_cases();
    fmm_cases();
    return ff_finish("c_coincident");
}
