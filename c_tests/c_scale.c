/* farfield reliability tests: c_scale.c
 * Classes 5 and 7: extreme but finite scales (box sides, grid spacings) give the right answer
 * (checked against the scale-free value) or a clear status (FARFIELD_ERR_RANGE), never a wrong
 * or non-finite result with status 0.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== ewald ==================================== */

/* Ewald (bad-input classes 5 and 7): NaCl (8 ions, conventional cell of side L, shifted off
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
    farfield_ewald_default_opts(&o, sizeof o);
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

/* Class 7, Poisson: all spacings scaled by c = 1e±110 give phi = c²·phi(1), E = c·E(1) for every
 * method (the discrete problems are exactly scale covariant, so the tolerance is rounding,
 * 1e-12; phi(1) itself meets the documented accuracy of the Gaussian test, n = 16: Hockney
 * 7.2e-3, Vico 2.9e-4). Spacing ratios beyond the documented 1e150 and results outside double
 * range give FARFIELD_ERR_RANGE with the outputs untouched, never NaN/0 with status 0. */
#define PS_N 16
#define PS_NPTS (PS_N * PS_N * PS_N)

static double ps_rel(const double *a, double sa, const double *b, int64_t len) {
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < len; i++) {
        num += (a[i] * sa - b[i]) * (a[i] * sa - b[i]);
        den += b[i] * b[i];
    }
    return sqrt(num / den);
}

static int ps_untouched(const double *v, int64_t len) {
    for (int64_t i = 0; i < len; i++)
        if (v[i] != 7.0) return 0;
    return 1;
}

static void poisson_scaled_gaussian(void) {
    static double rho[PS_NPTS], exact[PS_NPTS], phi1[PS_NPTS], e1[3 * PS_NPTS], phi[PS_NPTS], e[3 * PS_NPTS];
    const double sigma = 0.05, h0 = 1.0 / PS_N;
    for (int k = 0; k < PS_N; k++)
        for (int j = 0; j < PS_N; j++)
            for (int i = 0; i < PS_N; i++) {
                double x = (i + 0.5) * h0 - 0.5, y = (j + 0.5) * h0 - 0.5, z = (k + 0.5) * h0 - 0.5;
                double r = sqrt(x * x + y * y + z * z);
                int idx = i + PS_N * (j + PS_N * k);
                rho[idx] = exp(-r * r / (2 * sigma * sigma)) / (pow(2 * FF_PI, 1.5) * sigma * sigma * sigma);
                exact[idx] = erf(r / (sqrt(2.0) * sigma)) / (4 * FF_PI * r);
            }
    farfield_poisson_opts o;
    farfield_poisson_default_opts(&o, sizeof o);
    o.nthreads = 1;
    const int64_t n[3] = {PS_N, PS_N, PS_N};
    const double tol[3] = {1e-2, 5e-4, 5e-4};
    for (int m = 0; m < 3; m++) {
        const double c[3] = {1.0, 1e-110, 1e110};
        for (int s = 0; s < 3; s++) {
            const double h[3] = {h0 * c[s], h0 * c[s], h0 * c[s]};
            farfield_poisson_plan p = NULL;
            EXPECT_STATUS(farfield_poisson_makeplan(m, 3, n, h, &p, &o), 0);
            if (!p) continue;
            double *ph = s == 0 ? phi1 : phi, *ef = s == 0 ? e1 : e;
            EXPECT_STATUS(farfield_poisson_execute(p, rho, ph, ef, NULL), 0);
            if (s == 0) {
                double err = ps_rel(phi1, 1.0, exact, PS_NPTS);
                EXPECT(err < tol[m]);
            } else {
                EXPECT(ps_rel(phi, 1.0 / (c[s] * c[s]), phi1, PS_NPTS) < 1e-12);
                EXPECT(ps_rel(e, 1.0 / c[s], e1, 3 * PS_NPTS) < 1e-12);
                /* the energy (∝ c⁵ = 1e±550) is not representable: RANGE, phi untouched */
                double u = 7.0;
                for (int i = 0; i < PS_NPTS; i++) phi[i] = 7.0;
                EXPECT_STATUS(farfield_poisson_execute(p, rho, phi, NULL, &u), FARFIELD_ERR_RANGE);
                EXPECT(u == 7.0 && ps_untouched(phi, PS_NPTS));
            }
            farfield_poisson_destroy(p);
        }
    }
}

/* 2D: phi(c·h) = c²·(phi(h) − ln(c)·Q/(2π)), Q = Σρ·h_x h_y (the log kernel's constant). */
static void poisson_scaled_2d(void) {
    enum { NX = 24, NY = 20 };
    static double rho[NX * NY], phi1[NX * NY], phi[NX * NY];
    const double hx = 1.0 / NX, hy = 1.0 / NY;
    double q = 0.0;
    for (int j = 0; j < NY; j++)
        for (int i = 0; i < NX; i++) {
            double x = (i + 0.5) * hx - 0.5, y = (j + 0.5) * hy - 0.5;
            rho[i + NX * j] = exp(-(x * x + y * y) / 0.02);
            q += rho[i + NX * j] * hx * hy;
        }
    const int64_t n[2] = {NX, NY};
    for (int m = 0; m < 3; m++) {
        const double c[3] = {1.0, 1e-110, 1e110};
        for (int s = 0; s < 3; s++) {
            const double h[2] = {hx * c[s], hy * c[s]};
            farfield_poisson_plan p = NULL;
            EXPECT_STATUS(farfield_poisson_makeplan(m, 2, n, h, &p, NULL), 0);
            if (!p) continue;
            EXPECT_STATUS(farfield_poisson_execute(p, rho, s == 0 ? phi1 : phi, NULL, NULL), 0);
            farfield_poisson_destroy(p);
            if (s == 0) continue;
            for (int i = 0; i < NX * NY; i++) phi[i] = phi[i] / (c[s] * c[s]) + log(c[s]) * q / (2 * FF_PI);
            EXPECT(ps_rel(phi, 1.0, phi1, NX * NY) < 1e-12);
        }
    }
}

/* One extreme spacing: beyond h_max/h_min = 1e150 → RANGE; within it (1e-100) Hockney equals
 * the direct sum of the sampled Green's function (the self term, ~1e-100 relative, omitted). */
static void poisson_anisotropic(void) {
    enum { N = 4, NP = N * N * N };
    double rho[NP], phi[NP];
    for (int i = 0; i < NP; i++) rho[i] = sin(0.71 * (7 * i + 3));
    const int64_t n[3] = {N, N, N};
    const double bad[3] = {1e-300, 5e-324, 1e300};
    for (int m = 0; m < 3; m++)
        for (int k = 0; k < 3; k++) {
            const double h[3] = {0.1, bad[k], 0.1};
            farfield_poisson_plan p = NULL;
            EXPECT_STATUS(farfield_poisson_makeplan(m, 3, n, h, &p, NULL), FARFIELD_ERR_RANGE);
            EXPECT(p == NULL && strstr(farfield_last_error_message(), "1e150") != NULL);
        }
    const double h[3] = {1.0, 1.0, 1e-100};
    farfield_poisson_plan p = NULL;
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_HOCKNEY, 3, n, h, &p, NULL), 0);
    if (p) {
        EXPECT_STATUS(farfield_poisson_execute(p, rho, phi, NULL, NULL), 0);
        double want[NP], num = 0, den = 0;
        for (int i = 0; i < NP; i++) {
            want[i] = 0.0;
            for (int j = 0; j < NP; j++) {
                if (i == j) continue;
                double d[3] = {(i % N - j % N) * h[0], ((i / N) % N - (j / N) % N) * h[1], (i / (N * N) - j / (N * N)) * h[2]};
                double t = fmax(fabs(d[0]), fmax(fabs(d[1]), fabs(d[2])));
                double r = t * sqrt((d[0] / t) * (d[0] / t) + (d[1] / t) * (d[1] / t) + (d[2] / t) * (d[2] / t));
                want[i] += rho[j] * h[0] * h[1] * h[2] / (4 * FF_PI * r);
            }
        }
        for (int i = 0; i < NP; i++) {
            num += (phi[i] - want[i]) * (phi[i] - want[i]);
            den += want[i] * want[i];
        }
        EXPECT(sqrt(num / den) < 1e-13);
        farfield_poisson_destroy(p);
    }
    /* results out of double range: h = 1e-300 (phi ~ 1e-600) and 1e300 (phi ~ 1e600) */
    const double ext[2] = {1e-300, 1e300};
    for (int m = 0; m < 3; m++)
        for (int k = 0; k < 2; k++) {
            const double hh[3] = {ext[k], ext[k], ext[k]};
            EXPECT_STATUS(farfield_poisson_makeplan(m, 3, n, hh, &p, NULL), 0);
            if (!p) continue;
            for (int i = 0; i < NP; i++) phi[i] = 7.0;
            EXPECT_STATUS(farfield_poisson_execute(p, rho, phi, NULL, NULL), FARFIELD_ERR_RANGE);
            EXPECT(ps_untouched(phi, NP) && strstr(farfield_last_error_message(), "flows") != NULL);
            farfield_poisson_destroy(p);
        }
}

static void poisson_cases(void) {
    poisson_scaled_gaussian();
    poisson_scaled_2d();
    poisson_anisotropic();
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
    farfield_fmm_default_opts(&o, sizeof o);
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
