/* What MD codes call, through the C API: opts.terms (ALL, KSPACE, REAL) and
 * farfield_ewald_set_exclusions_scaled.
 *
 * System: 200 random charges (neutral, minimum distance 0.25) in an orthorhombic cell
 * 2.6 × 2.8 × 3.0, with bonded-like pairs: excluded (scale 0), 1-4 pairs scaled by 1/1.2 and
 * 0.5, and one scale-1 pair (unchanged).
 *
 * 1. Against the classic Ewald sum split the same way: a k-space-only SPME plan with the MD
 *    code's cutoff rc = 1.0 (xi and grid chosen for it from tol) plus the MD code's own pair
 *    loop (sum of w erfc(xi r)/r over minimum-image pairs within rc, w = 1, the scale, or 0;
 *    written here with erfc() from libm) must equal the classic Ewald sum (FARFIELD_EWALD_DIRECT
 *    at tol 1e-12, every pair) minus (1 − s) q_i q_j / r for each listed pair, within the
 *    documented contract of tol for random charges: relative RMS force ≤ tol, energy ≤ 4 tol,
 *    virial ≤ 8 tol (relative to the RMS of its nine entries). tol = 1e-5 and 1e-7.
 * 2. KSPACE + REAL plans with the ALL plan's xi, rc, grid and order equal the ALL plan to
 *    rounding (1e-12 relative; the parts are each ≥ 1 % of the whole, so a term in the wrong
 *    plan would show).
 * 3. Bad input: a NaN scale (NONFINITE, naming it), a pair with two scales (INVALID_ARG),
 *    NULL scales (NULL_POINTER), an unknown terms value (INVALID_ARG naming opts.terms); on
 *    error the earlier list is kept (the energy is unchanged).
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* M_PI */
#include "ff_test.h"

enum { N = 200, NP = 7 };

static const double L[3] = {2.6, 2.8, 3.0};
static const int64_t PAIRS[2 * NP] = {0, 1, 1, 2, 0, 3, 10, 11, 20, 21, 30, 31, 40, 41};
static const double SCALES[NP] = {0.0, 0.0, 1.0 / 1.2, 0.5, 0.0, 1.0, 0.5};

static void min_image(const double *xyz, int i, int j, double d[3]) {
    for (int a = 0; a < 3; a++) {
        double v = xyz[3 * i + a] - xyz[3 * j + a];
        d[a] = v - L[a] * round(v / L[a]);
    }
}

static double pair_scale(int i, int j) {
    for (int k = 0; k < NP; k++)
        if ((PAIRS[2 * k] == i && PAIRS[2 * k + 1] == j) || (PAIRS[2 * k] == j && PAIRS[2 * k + 1] == i)) return SCALES[k];
    return 1.0;
}

/* adds w · (pair term) to field f (3N), energy u and virial w9 for pair (i, j) at d with the
 * pair potential v = w g(r) and radial factor fs (force on i = q_i q_j fs d) */
static void add_pair(const double *q, int i, int j, const double d[3], double v, double fs, double *f, double *u, double *w9) {
    *u += q[i] * q[j] * v;
    for (int a = 0; a < 3; a++) {
        f[3 * i + a] += q[j] * fs * d[a];
        f[3 * j + a] -= q[i] * fs * d[a];
        for (int b = 0; b < 3; b++) w9[3 * a + b] += q[i] * q[j] * fs * d[a] * d[b];
    }
}

static int make(int method, int terms, double tol, double xi, double rc, const int64_t *grid, int order, farfield_ewald_plan *p) {
    double box[9] = {L[0], 0, 0, 0, L[1], 0, 0, 0, L[2]};
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o, sizeof o);
    o.nthreads = 2;
    o.terms = terms;
    o.xi = xi;
    o.rc = rc;
    if (grid)
        for (int d = 0; d < 3; d++) o.grid[d] = grid[d];
    o.order_or_support = order;
    return farfield_ewald_makeplan(method, box, N, tol, p, &o);
}

static double forces_err(const double *q, const double *f, const double *fref) {
    double a[3 * N], b[3 * N];
    for (int k = 0; k < 3 * N; k++) {
        a[k] = q[k / 3] * f[k];
        b[k] = q[k / 3] * fref[k];
    }
    return rel_rms(a, b, 3 * N);
}

int main(void) {
    double xyz[3 * N], q[N];
    ff_rng r = {2024};
    for (int i = 0; i < N;) {
        for (int a = 0; a < 3; a++) xyz[3 * i + a] = ff_range(&r, 0, L[a]);
        int ok = 1;
        for (int j = 0; j < i && ok; j++) {
            double d[3];
            min_image(xyz, i, j, d);
            ok = d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > 0.25 * 0.25;
        }
        if (ok) i++;
    }
    double mean = 0.0;
    for (int i = 0; i < N; i++) mean += (q[i] = ff_range(&r, -1, 1)) / N;
    for (int i = 0; i < N; i++) q[i] -= mean;

    /* reference: the classic sum with every pair, then (1 − s) q_i q_j / r off each listed pair */
    farfield_ewald_plan p = NULL;
    double f_ref[3 * N], u_ref, w_ref[9];
    EXPECT_STATUS(make(FARFIELD_EWALD_DIRECT, FARFIELD_EWALD_TERMS_ALL, 1e-12, 0, 0, NULL, 0, &p), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_execute(p, N, xyz, q, NULL, f_ref, &u_ref, w_ref), FARFIELD_OK);
    farfield_ewald_destroy(p);
    for (int k = 0; k < NP; k++) {
        int i = (int)PAIRS[2 * k], j = (int)PAIRS[2 * k + 1];
        double d[3], c = -(1.0 - SCALES[k]);
        min_image(xyz, i, j, d);
        double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2], rr = sqrt(r2);
        add_pair(q, i, j, d, c / rr, c / (rr * r2), f_ref, &u_ref, w_ref);
    }

    /* 1. k-space plan + the MD code's pair loop */
    const double rc = 1.0;
    const double tols[2] = {1e-5, 1e-7};
    for (int t = 0; t < 2; t++) {
        double tol = tols[t];
        EXPECT_STATUS(make(FARFIELD_EWALD_SPME, FARFIELD_EWALD_TERMS_KSPACE, tol, 0, rc, NULL, 0, &p), FARFIELD_OK);
        EXPECT_STATUS(farfield_ewald_set_exclusions_scaled(p, NP, PAIRS, SCALES), FARFIELD_OK);
        farfield_ewald_params prm = {.struct_size = sizeof prm};
        EXPECT_STATUS(farfield_ewald_get_params(p, &prm), FARFIELD_OK);
        EXPECT(prm.rc == rc);
        double f[3 * N], u, w9[9];
        EXPECT_STATUS(farfield_ewald_execute(p, N, xyz, q, NULL, f, &u, w9), FARFIELD_OK);
        farfield_ewald_destroy(p);
        const double xi = prm.xi, c2 = 2.0 * xi / sqrt(M_PI);
        for (int i = 0; i < N; i++)
            for (int j = i + 1; j < N; j++) {
                double d[3];
                min_image(xyz, i, j, d);
                double r2 = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
                if (r2 >= rc * rc) continue;
                double rr = sqrt(r2), s = pair_scale(i, j);
                double v = s * erfc(xi * rr) / rr;
                add_pair(q, i, j, d, v, (v + s * c2 * exp(-xi * xi * r2)) / r2, f, &u, w9);
            }
        double ef = forces_err(q, f, f_ref), eu = fabs(u - u_ref) / fabs(u_ref), ew = rel_rms(w9, w_ref, 9);
        printf("k-space plan + pair loop, tol %.0e: force %.2e energy %.2e virial %.2e\n", tol, ef, eu, ew);
        EXPECT(ef <= tol && eu <= 4 * tol && ew <= 8 * tol);
    }

    /* 2. KSPACE + REAL = ALL */
    farfield_ewald_plan pa = NULL, pk = NULL, pr = NULL;
    EXPECT_STATUS(make(FARFIELD_EWALD_SPME, FARFIELD_EWALD_TERMS_ALL, 1e-6, 0, 0, NULL, 0, &pa), FARFIELD_OK);
    farfield_ewald_params prm = {.struct_size = sizeof prm};
    EXPECT_STATUS(farfield_ewald_get_params(pa, &prm), FARFIELD_OK);
    EXPECT_STATUS(make(FARFIELD_EWALD_SPME, FARFIELD_EWALD_TERMS_KSPACE, 1e-6, prm.xi, prm.rc, prm.grid, prm.order_or_support, &pk), FARFIELD_OK);
    EXPECT_STATUS(make(FARFIELD_EWALD_SPME, FARFIELD_EWALD_TERMS_REAL, 1e-6, prm.xi, prm.rc, prm.grid, prm.order_or_support, &pr), FARFIELD_OK);
    double phi[3][N], f[3][3 * N], u[3], w9[3][9];
    farfield_ewald_plan ps[3] = {pa, pk, pr};
    for (int k = 0; k < 3; k++) {
        EXPECT_STATUS(farfield_ewald_set_exclusions_scaled(ps[k], NP, PAIRS, SCALES), FARFIELD_OK);
        EXPECT_STATUS(farfield_ewald_execute(ps[k], N, xyz, q, phi[k], f[k], &u[k], w9[k]), FARFIELD_OK);
    }
    double phis[N], fs[3 * N], ws[9];
    for (int i = 0; i < N; i++) phis[i] = phi[1][i] + phi[2][i];
    for (int i = 0; i < 3 * N; i++) fs[i] = f[1][i] + f[2][i];
    for (int i = 0; i < 9; i++) ws[i] = w9[1][i] + w9[2][i];
    EXPECT(rel_rms(phis, phi[0], N) < 1e-12 && rel_rms(fs, f[0], 3 * N) < 1e-12);
    EXPECT(fabs(u[1] + u[2] - u[0]) < 1e-12 * fabs(u[0]) && rel_rms(ws, w9[0], 9) < 1e-12);
    EXPECT(rel_rms(f[1], f[0], 3 * N) > 1e-2 && rel_rms(f[2], f[0], 3 * N) > 1e-2);

    /* 3. bad input; the earlier list is kept */
    const int64_t two[4] = {5, 6, 6, 5};
    const double nan_s[1] = {NAN}, two_s[2] = {0.5, 0.0};
    EXPECT_STATUS(farfield_ewald_set_exclusions_scaled(pa, 1, two, nan_s), FARFIELD_ERR_NONFINITE);
    EXPECT(strstr(farfield_last_error_message(), "scale 0") != NULL);
    EXPECT_STATUS(farfield_ewald_set_exclusions_scaled(pa, 2, two, two_s), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "two scales") != NULL);
    EXPECT_STATUS(farfield_ewald_set_exclusions_scaled(pa, 2, two, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_ewald_set_exclusions_scaled(pa, -1, two, two_s), FARFIELD_ERR_INVALID_ARG);
    double u_again;
    EXPECT_STATUS(farfield_ewald_execute(pa, N, xyz, q, NULL, NULL, &u_again, NULL), FARFIELD_OK);
    EXPECT(fabs(u_again - u[0]) <= 1e-12 * fabs(u[0]));
    EXPECT_STATUS(farfield_ewald_set_exclusions_scaled(pa, 0, NULL, NULL), FARFIELD_OK);
    for (int k = 0; k < 3; k++) farfield_ewald_destroy(ps[k]);
    p = NULL;
    EXPECT_STATUS(make(FARFIELD_EWALD_SPME, 7, 1e-6, 0, 0, NULL, 0, &p), FARFIELD_ERR_INVALID_ARG);
    EXPECT(p == NULL && strstr(farfield_last_error_message(), "opts.terms") != NULL);
    return ff_finish("c_ewald_terms");
}
