/* farfield reliability tests: c_limits.c
 * Class 9: the smaller defects: thread caps, option validation that names the option, size
 * messages, coordinate ranges of the accuracy contract, memory estimates, tolerance clamps.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== common ==================================== */

static void common_cases(void) {
}




/* ==================================== nufft ==================================== */

/* exp(i k x) exact to ~1e-16 for an integer k and any double x: k x = p + e exactly (fma
 * two-product) and the C library reduces p exactly. */
static void nufft_limits_cis_kx(double k, double x, double *re, double *im) {
    double p = k * x, e = fma(k, x, -p);
    double cp = cos(p), sp = sin(p), ce = cos(e), se = sin(e);
    *re = cp * ce - sp * se;
    *im = sp * ce + cp * se;
}

/* 1D, 17 modes, 40 points at x0 + [-pi, pi): relative l2 error against the exact sums at the
 * coordinate values the plan was given (in single precision: the floats, widened). */
static double nufft_limits_large_x_error(int type, double x0, double tol, int single) {
    enum { N = 17, M = 40 };
    int64_t n = N;
    double x[M], cd[2 * M], fd[2 * N], ex[2 * (M > N ? M : N)], out[2 * (M > N ? M : N)];
    float xf[M], cf[2 * M], ff[2 * N];
    ff_rng r = {(uint64_t)(type + 3 * single)};
    for (int j = 0; j < M; j++) {
        x[j] = x0 + ff_range(&r, -FF_PI, FF_PI);
        xf[j] = (float)x[j];
        if (single) x[j] = (double)xf[j];
        cd[2 * j] = ff_range(&r, -1, 1);
        cd[2 * j + 1] = ff_range(&r, -1, 1);
    }
    for (int k = 0; k < 2 * N; k++) fd[k] = ff_range(&r, -1, 1);
    int nout = type == 1 ? N : M;
    memset(ex, 0, sizeof ex);
    for (int j = 0; j < M; j++)
        for (int i = 0; i < N; i++) {
            double re, im;
            nufft_limits_cis_kx((double)(i - N / 2), x[j], &re, &im);
            if (type == 1) {
                ex[2 * i] += cd[2 * j] * re - cd[2 * j + 1] * im;
                ex[2 * i + 1] += cd[2 * j] * im + cd[2 * j + 1] * re;
            } else {
                ex[2 * j] += fd[2 * i] * re - fd[2 * i + 1] * im;
                ex[2 * j + 1] += fd[2 * i] * im + fd[2 * i + 1] * re;
            }
        }
    farfield_nufft_opts o;
    farfield_nufft_default_opts(&o);
    o.nthreads = 1;
    if (single) {
        for (int k = 0; k < 2 * M; k++) cf[k] = (float)cd[k];
        for (int k = 0; k < 2 * N; k++) ff[k] = (float)fd[k];
        farfield_nufftf_plan p = NULL;
        EXPECT_STATUS(farfield_nufftf_makeplan(type, 1, &n, 1, 1, (float)tol, &p, &o), FARFIELD_OK);
        if (!p) return INFINITY;
        EXPECT_STATUS(farfield_nufftf_setpts(p, M, xf, NULL, NULL, 0, NULL, NULL, NULL), FARFIELD_OK);
        EXPECT_STATUS(farfield_nufftf_execute(p, (farfield_complexf *)cf, (farfield_complexf *)ff), FARFIELD_OK);
        farfield_nufftf_destroy(p);
        const float *res = type == 1 ? ff : cf;
        for (int k = 0; k < 2 * nout; k++) out[k] = res[k];
    } else {
        farfield_nufft_plan p = NULL;
        EXPECT_STATUS(farfield_nufft_makeplan(type, 1, &n, 1, 1, tol, &p, &o), FARFIELD_OK);
        if (!p) return INFINITY;
        EXPECT_STATUS(farfield_nufft_setpts(p, M, x, NULL, NULL, 0, NULL, NULL, NULL), FARFIELD_OK);
        EXPECT_STATUS(farfield_nufft_execute(p, (farfield_complex *)cd, (farfield_complex *)fd), FARFIELD_OK);
        farfield_nufft_destroy(p);
        memcpy(out, type == 1 ? fd : cd, sizeof(double) * 2 * (size_t)nout);
    }
    return ff_rel_err_d(out, ex, nout);
}

static void nufft_cases(void) {
    farfield_nufft_plan p = NULL;
    int64_t n1 = 16;
    farfield_nufft_opts o;

    /* opts.fftw: validated in makeplan, INVALID_ARG naming the option (was ERR_FFT) */
    static const int bad_fftw[] = {-1, 2, 4, 16, 128, 1 << 21};
    for (unsigned i = 0; i < sizeof bad_fftw / sizeof bad_fftw[0]; i++) {
        farfield_nufft_default_opts(&o);
        o.fftw = bad_fftw[i];
        EXPECT_STATUS(farfield_nufft_makeplan(1, 1, &n1, 1, 1, 1e-6, &p, &o), FARFIELD_ERR_INVALID_ARG);
        EXPECT(p == NULL && strstr(farfield_last_error_message(), "opts.fftw") != NULL);
    }
    static const int good_fftw[] = {64, 0, 32, 65};
    for (unsigned i = 0; i < sizeof good_fftw / sizeof good_fftw[0]; i++) {
        farfield_nufft_default_opts(&o);
        o.fftw = good_fftw[i];
        o.nthreads = 1;
        EXPECT_STATUS(farfield_nufft_makeplan(1, 1, &n1, 1, 1, 1e-6, &p, &o), FARFIELD_OK);
        farfield_nufft_destroy(p);
        p = NULL;
    }
    /* opts.points_by_reference: only 0 and 1 (-3 was taken as by-reference) */
    static const int bad_pbr[] = {-3, 2, -1};
    for (unsigned i = 0; i < 3; i++) {
        farfield_nufft_default_opts(&o);
        o.points_by_reference = bad_pbr[i];
        EXPECT_STATUS(farfield_nufft_makeplan(1, 1, &n1, 1, 1, 1e-6, &p, &o), FARFIELD_ERR_INVALID_ARG);
        EXPECT(strstr(farfield_last_error_message(), "opts.points_by_reference") != NULL);
        farfield_nufftf_plan pf = NULL;
        EXPECT_STATUS(farfield_nufftf_makeplan(1, 1, &n1, 1, 1, 1e-4f, &pf, &o), FARFIELD_ERR_INVALID_ARG);
    }
    /* floats in messages in exponent notation, not 300 digits */
    farfield_nufft_default_opts(&o);
    o.upsampfac = 1e300;
    EXPECT_STATUS(farfield_nufft_makeplan(1, 1, &n1, 1, 1, 1e-6, &p, &o), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "1e300") && strlen(farfield_last_error_message()) < 200);
    EXPECT_STATUS(farfield_nufft_makeplan(1, 1, &n1, 1, 1, -1e300, &p, NULL), FARFIELD_ERR_TOL);
    EXPECT(strstr(farfield_last_error_message(), "-1e300") && strlen(farfield_last_error_message()) < 200);

    /* setpts M = 2^32: the limit is 2^32 - 1 and the message says so ("4294967295 points
     * exceed the supported 2^32 - 1" was off by one); checked before the arrays are read */
    farfield_nufft_default_opts(&o);
    o.nthreads = 1;
    EXPECT_STATUS(farfield_nufft_makeplan(2, 1, &n1, 1, 1, 1e-6, &p, &o), FARFIELD_OK);
    if (p) {
        double x[2] = {0.5, 1.5};
        EXPECT_STATUS(farfield_nufft_setpts(p, 4294967296LL, x, NULL, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NPOINTS);
        const char *m = farfield_last_error_message();
        EXPECT(strstr(m, "4294967296") && strstr(m, "4294967295"));
        EXPECT_STATUS(farfield_nufft_setpts(p, INT64_MAX, x, NULL, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NPOINTS);
        farfield_nufft_destroy(p);
        p = NULL;
    }

    /* accuracy for large coordinates (the header's contract: |x| <= 1e16), against exact sums */
    static const double x0s[] = {1e6, 1e10, -1e13};
    for (int i = 0; i < 3; i++)
        for (int type = 1; type <= 2; type++) {
            double e = nufft_limits_large_x_error(type, x0s[i], 1e-12, 0);
            if (!(e <= 1e-11)) fprintf(stderr, "f64 x0 %g type %d: error %.3e\n", x0s[i], type, e);
            EXPECT(e <= 1e-11);
        }
    static const double x0f[] = {1e4, -3e5};
    for (int i = 0; i < 2; i++)
        for (int type = 1; type <= 2; type++) {
            double e = nufft_limits_large_x_error(type, x0f[i], 1e-5, 1);
            if (!(e <= 1e-4)) fprintf(stderr, "f32 x0 %g type %d: error %.3e\n", x0f[i], type, e);
            EXPECT(e <= 1e-4);
        }
}




/* ==================================== ewald ==================================== */

static void ewald_cases(void) {
}




/* ==================================== poisson ==================================== */

static void poisson_cases(void) {
}




/* ==================================== fmm ==================================== */

static void fmm_cases(void) {
}


int main(void) {
    common_cases();
    nufft_cases();
    ewald_cases();
    poisson_cases();
    fmm_cases();
    return ff_finish("c_limits");
}
