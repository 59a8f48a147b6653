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

/* The same neutral system (n = 16 random charges in the unit cube, scaled by s) at box side s
 * (periodic) and s (open, the particles' extent): U*s, phi*s and E*s^2 equal the scale-1
 * values within tol where representable, else FARFIELD_ERR_RANGE (at makeplan for a subnormal
 * periodic side; at execute where an output overflows or underflows); never status 0 with a
 * non-finite output. */
enum { FMM_SCALE_N = 16 };
static void fmm_scale_run(int boundary, double s, const double *x1, const double *q, int with_field, double tol,
                          const double *phi1, const double *f1, double u1, double uabs) {
    const int n = FMM_SCALE_N;
    double xyz[3 * FMM_SCALE_N], phi[FMM_SCALE_N], field[3 * FMM_SCALE_N], u = 0.0;
    for (int i = 0; i < 3 * n; i++) xyz[i] = x1[i] * s;
    double b[9] = {s, 0, 0, 0, s, 0, 0, 0, s};
    farfield_fmm_plan p = NULL;
    farfield_fmm_opts o;
    farfield_fmm_default_opts(&o);
    o.nthreads = 1;
    int st = farfield_fmm_makeplan(boundary, b, tol, &p, &o);
    if (st == FARFIELD_ERR_RANGE) {
        EXPECT(boundary == FARFIELD_FMM_PERIODIC && s < 2.2250738585072014e-308);
        EXPECT(p == NULL);
        return;
    }
    EXPECT_STATUS(st, FARFIELD_OK);
    st = farfield_fmm_execute(p, n, xyz, q, phi, with_field ? field : NULL, &u);
    if (st == FARFIELD_OK) {
        int finite = isfinite(u);
        for (int i = 0; i < n; i++) finite &= isfinite(phi[i]);
        for (int i = 0; with_field && i < 3 * n; i++) finite &= isfinite(field[i]);
        EXPECT(finite);
        double ep = 0, dp = 0, ef = 0, df = 0;
        for (int i = 0; i < n; i++) {
            ep += (phi[i] * s - phi1[i]) * (phi[i] * s - phi1[i]);
            dp += phi1[i] * phi1[i];
        }
        for (int i = 0; with_field && i < 3 * n; i++) {
            ef += (field[i] * s * s - f1[i]) * (field[i] * s * s - f1[i]);
            df += f1[i] * f1[i];
        }
        if (!(fabs(u * s - u1) <= tol * uabs && sqrt(ep / dp) <= tol && (!with_field || sqrt(ef / df) <= tol)))
            fprintf(stderr, "fmm scale: boundary %d s %g field %d: U*s %.15g vs %.15g, phi %.2e, field %.2e\n", boundary, s,
                    with_field, u * s, u1, sqrt(ep / dp), with_field ? sqrt(ef / df) : 0.0);
        EXPECT(fabs(u * s - u1) <= tol * uabs);
        EXPECT(sqrt(ep / dp) <= tol);
        EXPECT(!with_field || sqrt(ef / df) <= tol);
    } else {
        EXPECT_STATUS(st, FARFIELD_ERR_RANGE);
        /* only where the outputs are not representable: phi ~ 1/s, E ~ 1/s^2 */
        EXPECT(with_field ? (s < 1e-150 || s > 1e150) : (s < 1e-300 || s > 1e300));
    }
    farfield_fmm_destroy(p);
}

static void fmm_cases(void) {
    const int n = FMM_SCALE_N;
    ff_rng r = {77};
    double x1[3 * FMM_SCALE_N], q[FMM_SCALE_N], phi1[FMM_SCALE_N], f1[3 * FMM_SCALE_N], u1 = 0, qs = 0;
    for (int i = 0; i < 3 * n; i++) x1[i] = ff_uniform(&r);
    for (int i = 0; i < n; i++) qs += (q[i] = ff_uniform(&r) - 0.5);
    for (int i = 0; i < n; i++) q[i] -= qs / n;
    const double tol = 1e-4;
    const double scales[] = {5e-324, 1e-300, 1e-160, 1e300, 1.7e308, 1e-310, 1e-200, 1e-150,
                             1e-10,  1.0,    1e10,   1e150, 1e160,   1e200};
    /* under valgrind (a periodic execute costs ~1 s there) the first three scales only */
    const char *pre = getenv("LD_PRELOAD");
    const size_t nscales = pre && strstr(pre, "vgpreload") ? 3 : sizeof scales / sizeof scales[0];
    for (int bc = 0; bc < 2; bc++) {
        int boundary = bc == 0 ? FARFIELD_FMM_PERIODIC : FARFIELD_FMM_OPEN;
        double b1[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1};
        farfield_fmm_plan p = NULL;
        EXPECT_STATUS(farfield_fmm_makeplan(boundary, b1, tol, &p, NULL), FARFIELD_OK);
        EXPECT_STATUS(farfield_fmm_execute(p, n, x1, q, phi1, f1, &u1), FARFIELD_OK);
        farfield_fmm_destroy(p);
        double uabs = 0;
        for (int i = 0; i < n; i++) uabs += 0.5 * fabs(q[i] * phi1[i]);
        for (size_t k = 0; k < nscales; k++)
            for (int wf = 0; wf < 2; wf++) fmm_scale_run(boundary, scales[k], x1, q, wf, tol, phi1, f1, u1, uabs);
    }
    /* open: coordinates whose spread overflows */
    {
        double xyz[6] = {-1.5e308, 0, 0, 1.5e308, 0, 0}, qq[2] = {1, 1}, u = 7.0;
        farfield_fmm_plan p = NULL;
        EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, &p, NULL), FARFIELD_OK);
        EXPECT_STATUS(farfield_fmm_execute(p, 2, xyz, qq, NULL, NULL, &u), FARFIELD_ERR_RANGE);
        EXPECT(u == 7.0);
        /* charges so large that the potentials overflow */
        double x2[6] = {0, 0, 0, 1e-10, 0, 0}, q2[2] = {1e300, 1e300};
        EXPECT_STATUS(farfield_fmm_execute(p, 2, x2, q2, NULL, NULL, &u), FARFIELD_ERR_RANGE);
        EXPECT(u == 7.0);
        farfield_fmm_destroy(p);
    }
}


int main(void) {
    ewald_cases();
    poisson_cases();
    fmm_cases();
    return ff_finish("c_scale");
}
