/* farfield reliability tests: c_scale.c
 * Classes 5 and 7: extreme but finite scales (box sides, grid spacings) give the right answer
 * (checked against the scale-free value) or a clear status (FARFIELD_ERR_RANGE), never a wrong
 * or non-finite result with status 0.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== ewald ==================================== */

/* Ewald (issue 10, classes 5 and 7): NaCl (8 ions, conventional cell of side L, shifted off
 * the lattice planes) at L = 1e-150 … 1e150: energy·L equals its value at L = 1 to the
 * requested tol for every method; results that are not representable give FARFIELD_ERR_RANGE
 * and leave the outputs untouched. Fixed window (one error-model table per method). */
static void ew_nacl(double l, double *xyz, double *q) {
    static const double fcc[4][3] = {{0, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}, {0, 0.5, 0.5}};
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 4; k++) {
            int i = 4 * s + k;
            for (int d = 0; d < 3; d++) xyz[3 * i + d] = l * (fcc[k][d] + (s == 1 && d == 0 ? 0.5 : 0.0) + 0.1);
            q[i] = s == 0 ? 1.0 : -1.0;
        }
}

/* status of makeplan + execute; energy in *u, field in f (may be NULL) */
static int ew_energy(int method, double l, double tol, double *u, double *f) {
    double box[9] = {l, 0, 0, 0, l, 0, 0, 0, l}, xyz[24], q[8];
    ew_nacl(l, xyz, q);
    if (f) xyz[0] += 0.05 * l; /* off the lattice: non-zero fields */
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o);
    o.nthreads = 1;
    /* the windows the automatic choice takes at this tol (one error-model table each) */
    o.order_or_support = method == FARFIELD_EWALD_SPECTRAL ? 16 : method == FARFIELD_EWALD_SPME ? 8 : 0;
    farfield_ewald_plan p = NULL;
    int s = farfield_ewald_makeplan(method, box, 8, tol, &p, &o);
    if (s == FARFIELD_OK) s = farfield_ewald_execute(p, 8, xyz, q, NULL, f, u, NULL);
    farfield_ewald_destroy(p);
    return s;
}

static void ewald_cases(void) {
    const int methods[3] = {FARFIELD_EWALD_SPECTRAL, FARFIELD_EWALD_SPME, FARFIELD_EWALD_DIRECT};
    const double scales[5] = {1e-150, 1e-19, 1.0, 1e20, 1e150};
    const double tol = 1e-8;
    for (int m = 0; m < 3; m++) {
        double u1 = 0;
        EXPECT_STATUS(ew_energy(methods[m], 1.0, tol, &u1, NULL), FARFIELD_OK);
        /* Madelung: U = −4 · 1.747565 · 2 / L for 8 ions at nearest distance L/2 */
        EXPECT(fabs(u1 + 8.0 * 1.7475645946331822) < 1e-6 * 8.0 * 1.75);
        for (int k = 0; k < 5; k++) {
            double u = NAN;
            EXPECT_STATUS(ew_energy(methods[m], scales[k], tol, &u, NULL), FARFIELD_OK);
            if (!(fabs(u * scales[k] - u1) <= tol * fabs(u1)))
                fprintf(stderr, "ewald method %d L %g: U·L = %.17g vs %.17g\n", methods[m], scales[k], u * scales[k], u1);
            EXPECT(fabs(u * scales[k] - u1) <= tol * fabs(u1));
        }
    }
    /* class 7: DIRECT with a 1e120 box is right (it was non-finite with status 0) */
    double u = NAN, u1 = 0;
    EXPECT_STATUS(ew_energy(FARFIELD_EWALD_DIRECT, 1.0, tol, &u1, NULL), FARFIELD_OK);
    EXPECT_STATUS(ew_energy(FARFIELD_EWALD_DIRECT, 1e120, tol, &u, NULL), FARFIELD_OK);
    EXPECT(fabs(u * 1e120 - u1) <= tol * fabs(u1));
    /* a field that overflows (E ~ 1/L² at L = 1e-160) or underflows (L = 1e200): RANGE, outputs untouched */
    for (int m = 0; m < 3; m++) {
        double f[24], e = 7.0;
        for (int i = 0; i < 24; i++) f[i] = 7.0;
        EXPECT_STATUS(ew_energy(methods[m], 1e-160, 1e-6, &e, f), FARFIELD_ERR_RANGE);
        EXPECT(e == 7.0 && f[0] == 7.0 && f[23] == 7.0);
        /* the energy alone (~1e160) is representable */
        EXPECT_STATUS(ew_energy(methods[m], 1e-160, 1e-6, &e, NULL), FARFIELD_OK);
        EXPECT(isfinite(e) && e < 0);
    }
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
