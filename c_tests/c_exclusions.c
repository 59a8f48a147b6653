/* farfield reliability tests: c_exclusions.c
 * Class 6: duplicate exclusions (the same pair twice, in either order) have a documented
 * effect and never double-subtract.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== ewald ==================================== */

static void ewald_cases(void) {
}


int main(void) {
    ewald_cases();
    return ff_finish("c_exclusions");
}
