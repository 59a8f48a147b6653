/* farfield reliability tests: c_exclusions.c
 * Class 6: duplicate exclusions (the same pair twice, in either order) have a documented
 * effect and never double-subtract.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== ewald ==================================== */

/* Ewald: exclusions are unordered pairs, deduplicated: {0,1, 1,0} removes the pair
 * once; a pair (i, i) is INVALID_ARG naming the index. */
static double ew_excl_energy(const int64_t *pairs, int64_t np, int *status) {
    double box[9] = {3, 0, 0, 0, 3, 0, 0, 0, 3};
    double xyz[12] = {0.3, 0.4, 0.5, 1.1, 0.9, 0.7, 2.0, 2.1, 1.5, 1.4, 2.6, 0.2};
    double q[4] = {1.0, -0.7, 0.4, -0.7}, u = NAN;
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o, sizeof o);
    o.nthreads = 1;
    farfield_ewald_plan p = NULL;
    *status = farfield_ewald_makeplan(FARFIELD_EWALD_DIRECT, box, 4, 1e-10, &p, &o);
    if (*status == FARFIELD_OK) *status = farfield_ewald_set_exclusions(p, np, pairs);
    if (*status == FARFIELD_OK) *status = farfield_ewald_execute(p, 4, xyz, q, NULL, NULL, &u, NULL);
    farfield_ewald_destroy(p);
    return u;
}

static void ewald_cases(void) {
    int s;
    const int64_t one[2] = {0, 1}, dup[4] = {0, 1, 1, 0}, many[8] = {1, 0, 0, 1, 0, 1, 1, 0};
    const int64_t two[4] = {0, 1, 2, 3}, two_dup[6] = {3, 2, 0, 1, 2, 3};
    double u0 = ew_excl_energy(NULL, 0, &s);
    EXPECT_STATUS(s, FARFIELD_OK);
    double u1 = ew_excl_energy(one, 1, &s);
    EXPECT_STATUS(s, FARFIELD_OK);
    /* the pair (0, 1) at r = |(0.8, 0.5, 0.2)| (nearest image) moves U by q0 q1 / r */
    double r = sqrt(0.8 * 0.8 + 0.5 * 0.5 + 0.2 * 0.2);
    EXPECT(fabs((u0 - u1) - (1.0 * -0.7) / r) < 1e-9);
    double ud = ew_excl_energy(dup, 2, &s);
    EXPECT_STATUS(s, FARFIELD_OK);
    EXPECT(fabs(ud - u1) <= 1e-12 * fabs(u1));
    double um = ew_excl_energy(many, 4, &s);
    EXPECT_STATUS(s, FARFIELD_OK);
    EXPECT(fabs(um - u1) <= 1e-12 * fabs(u1));
    double u2 = ew_excl_energy(two, 2, &s), u2d = ew_excl_energy(two_dup, 3, &s);
    EXPECT_STATUS(s, FARFIELD_OK);
    EXPECT(fabs(u2d - u2) <= 1e-12 * fabs(u2));
    /* a pair (i, i): INVALID_ARG naming the pair and the index */
    const int64_t self_pair[4] = {0, 1, 2, 2};
    ew_excl_energy(self_pair, 2, &s);
    EXPECT_STATUS(s, FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "pair 1") != NULL);
    EXPECT(strstr(farfield_last_error_message(), "charge 2") != NULL);
}


int main(void) {
    ewald_cases();
    return ff_finish("c_exclusions");
}
