/* Free-space Poisson through the C API: a Gaussian charge in the unit cube against its analytic
 * potential and field (all three methods), energy, 2D smoke, error paths, plan reuse.
 * SPDX-License-Identifier: MIT OR Apache-2.0
 *
 * rho(r) = exp(-r^2 / (2 s^2)) / ((2 pi)^(3/2) s^3)   (unit charge)
 * phi(r) = erf(r / (sqrt(2) s)) / (4 pi r)            (solves lap phi = -rho, phi -> 0)
 * E(r)   = -phi'(r) rhat,  -phi'(r) = (erf(r/(sqrt2 s)) - sqrt(2/pi) (r/s) exp(-r^2/(2 s^2))) / (4 pi r^2) */
#include "ff_test.h"

enum { N = 32 };
static const double S = 0.05;

static double phi_exact(double r) {
    if (r < 1e-12) return sqrt(2.0 / FF_PI) / (4 * FF_PI * S);
    return erf(r / (sqrt(2.0) * S)) / (4 * FF_PI * r);
}
static double er_exact(double r) { /* radial component of E */
    if (r < 1e-12) return 0.0;
    return (erf(r / (sqrt(2.0) * S)) - sqrt(2.0 / FF_PI) * (r / S) * exp(-r * r / (2 * S * S))) / (4 * FF_PI * r * r);
}

static double rel_l2(const double *a, const double *b, size_t n) {
    double num = 0, den = 0;
    for (size_t i = 0; i < n; i++) num += (a[i] - b[i]) * (a[i] - b[i]), den += b[i] * b[i];
    return sqrt(num / den);
}

int main(void) {
    const size_t npts = (size_t)N * N * N;
    const double hx = 1.0 / N;
    const int64_t n[3] = {N, N, N};
    const double h[3] = {hx, hx, hx};
    double *rho = malloc(sizeof(double) * npts), *phi = malloc(sizeof(double) * npts);
    double *phi_ref = malloc(sizeof(double) * npts), *e = malloc(sizeof(double) * 3 * npts);
    double *e_ref = malloc(sizeof(double) * 3 * npts);
    double energy_ref = 0.0;
    /* cell-centred nodes (i + 1/2) h, Gaussian at the cube centre */
    for (int k = 0; k < N; k++)
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                size_t idx = (size_t)i + N * ((size_t)j + N * (size_t)k);
                double d[3] = {(i + 0.5) * hx - 0.5, (j + 0.5) * hx - 0.5, (k + 0.5) * hx - 0.5};
                double r = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
                rho[idx] = exp(-r * r / (2 * S * S)) / (pow(2 * FF_PI, 1.5) * S * S * S);
                phi_ref[idx] = phi_exact(r);
                for (int c = 0; c < 3; c++) e_ref[idx + npts * (size_t)c] = r > 0 ? er_exact(r) * d[c] / r : 0.0;
                energy_ref += 0.5 * rho[idx] * phi_ref[idx] * hx * hx * hx;
            }

    farfield_poisson_opts o;
    memset(&o, 0x5a, sizeof o);
    EXPECT_STATUS(farfield_poisson_default_opts(&o, sizeof o), FARFIELD_OK);
    EXPECT(o.nthreads == 0 && o.debug == 0 && o.fftw == 64 && o.check_input == 1 && o.vico_factor == 1.1);
    EXPECT_STATUS(farfield_poisson_default_opts(NULL, sizeof(farfield_poisson_opts)), FARFIELD_ERR_NULL_POINTER);

    const int methods[3] = {FARFIELD_POISSON_HOCKNEY, FARFIELD_POISSON_VICO, FARFIELD_POISSON_VICO_DCT};
    /* Hockney-Eastwood is second order (measured 2.1e-3 / 1.2e-2 / 6.7e-3), Vico spectral (1.2e-9 / 5.8e-7 / 2.5e-13) */
    const double tol_phi[3] = {5e-3, 1e-7, 1e-7}, tol_e[3] = {5e-2, 1e-5, 1e-5}, tol_u[3] = {2e-2, 1e-7, 1e-7};
    for (int m = 0; m < 3; m++) {
        farfield_poisson_plan p = NULL;
        EXPECT_STATUS(farfield_poisson_makeplan(methods[m], 3, n, h, &p, NULL), FARFIELD_OK);
        double energy = 0.0;
        EXPECT_STATUS(farfield_poisson_execute(p, rho, phi, e, &energy), FARFIELD_OK);
        double ep = rel_l2(phi, phi_ref, npts), ee = rel_l2(e, e_ref, 3 * npts);
        double eu = fabs(energy - energy_ref) / energy_ref;
        printf("poisson method %d, %d^3: phi rel err %.2e, field rel err %.2e, energy rel err %.2e\n", methods[m], N,
               ep, ee, eu);
        EXPECT(ep <= tol_phi[m]);
        EXPECT(ee <= tol_e[m]);
        EXPECT(eu <= tol_u[m]);
        /* reuse: potential only, same answer */
        double *phi2 = malloc(sizeof(double) * npts);
        EXPECT_STATUS(farfield_poisson_execute(p, rho, phi2, NULL, NULL), FARFIELD_OK);
        EXPECT(memcmp(phi, phi2, sizeof(double) * npts) == 0);
        /* NaN input: error naming the index, outputs untouched, plan still usable */
        double keep = rho[123];
        rho[123] = NAN;
        phi2[0] = 42.0;
        EXPECT_STATUS(farfield_poisson_execute(p, rho, phi2, NULL, NULL), FARFIELD_ERR_NONFINITE);
        EXPECT(strstr(farfield_last_error_message(), "123") != NULL);
        EXPECT(phi2[0] == 42.0);
        rho[123] = keep;
        EXPECT_STATUS(farfield_poisson_execute(p, rho, phi2, NULL, NULL), FARFIELD_OK);
        EXPECT(memcmp(phi, phi2, sizeof(double) * npts) == 0);
        free(phi2);
        /* NULL arrays and plan */
        EXPECT_STATUS(farfield_poisson_execute(p, NULL, phi, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
        EXPECT_STATUS(farfield_poisson_execute(p, rho, NULL, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
        EXPECT_STATUS(farfield_poisson_execute(NULL, rho, phi, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
        EXPECT_STATUS(farfield_poisson_destroy(p), FARFIELD_OK);
    }

    /* 2D: the three methods agree (Vico and Vico-DCT to rounding, Hockney to second order) */
    {
        enum { NX = 24, NY = 20 };
        const int64_t n2[2] = {NX, NY};
        const double h2[2] = {1.0 / NX, 1.0 / NY};
        double r2[NX * NY], out[3][NX * NY];
        for (int j = 0; j < NY; j++)
            for (int i = 0; i < NX; i++) {
                double dx = (i + 0.5) / NX - 0.5, dy = (j + 0.5) / NY - 0.5;
                r2[i + NX * j] = exp(-(dx * dx + dy * dy) / (2 * 0.08 * 0.08));
            }
        for (int m = 0; m < 3; m++) {
            farfield_poisson_plan p = NULL;
            farfield_poisson_default_opts(&o, sizeof o);
            o.nthreads = 1;
            EXPECT_STATUS(farfield_poisson_makeplan(methods[m], 2, n2, h2, &p, &o), FARFIELD_OK);
            EXPECT_STATUS(farfield_poisson_execute(p, r2, out[m], NULL, NULL), FARFIELD_OK);
            farfield_poisson_destroy(p);
        }
        double d_dct = rel_l2(out[2], out[1], NX * NY), d_hock = rel_l2(out[0], out[1], NX * NY);
        printf("poisson 2D: |vico_dct - vico| %.2e, |hockney - vico| %.2e (relative)\n", d_dct, d_hock);
        EXPECT(d_dct <= 1e-12);
        EXPECT(d_hock <= 2e-2);
    }

    /* makeplan errors */
    {
        farfield_poisson_plan p = (farfield_poisson_plan)(void *)rho; /* garbage: must become NULL */
        const int64_t bad_n[3] = {8, 0, 8}, ok_n[3] = {8, 8, 8};
        const double bad_h[3] = {0.1, -0.1, 0.1}, nan_h[3] = {NAN, 0.1, 0.1};
        EXPECT_STATUS(farfield_poisson_makeplan(0, 3, bad_n, h, &p, NULL), FARFIELD_ERR_MODES);
        EXPECT(p == NULL);
        EXPECT_STATUS(farfield_poisson_makeplan(0, 3, ok_n, bad_h, &p, NULL), FARFIELD_ERR_INVALID_ARG);
        EXPECT_STATUS(farfield_poisson_makeplan(0, 3, ok_n, nan_h, &p, NULL), FARFIELD_ERR_INVALID_ARG);
        EXPECT_STATUS(farfield_poisson_makeplan(9, 3, ok_n, h, &p, NULL), FARFIELD_ERR_INVALID_ARG);
        EXPECT_STATUS(farfield_poisson_makeplan(0, 1, ok_n, h, &p, NULL), FARFIELD_ERR_DIM);
        EXPECT_STATUS(farfield_poisson_makeplan(0, 4, ok_n, h, &p, NULL), FARFIELD_ERR_DIM);
        EXPECT_STATUS(farfield_poisson_makeplan(0, 3, NULL, h, &p, NULL), FARFIELD_ERR_NULL_POINTER);
        EXPECT_STATUS(farfield_poisson_makeplan(0, 3, ok_n, NULL, &p, NULL), FARFIELD_ERR_NULL_POINTER);
        EXPECT_STATUS(farfield_poisson_makeplan(0, 3, ok_n, h, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
        const int64_t giant[3] = {(int64_t)1 << 20, (int64_t)1 << 20, (int64_t)1 << 20};
        /* doubled grid 2^63 points > the documented 2^40: RANGE before any allocation */
        EXPECT_STATUS(farfield_poisson_makeplan(0, 3, giant, h, &p, NULL), FARFIELD_ERR_RANGE);
        farfield_poisson_default_opts(&o, sizeof o);
        o.nthreads = -2;
        EXPECT_STATUS(farfield_poisson_makeplan(0, 3, ok_n, h, &p, &o), FARFIELD_ERR_INVALID_ARG);
        EXPECT(p == NULL);
        EXPECT_STATUS(farfield_poisson_destroy(NULL), FARFIELD_OK);
    }

    free(rho), free(phi), free(phi_ref), free(e), free(e_ref);
    return ff_finish("c_poisson");
}
