/* farfield reliability tests: c_limits.c
 * Class 9: the smaller defects: thread caps, option validation that names the option, size
 * messages, coordinate ranges of the accuracy contract, memory estimates, tolerance clamps.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _DEFAULT_SOURCE 1 /* fork, setrlimit, alarm (ff_isolated) */
#include "ff_test.h"



/* ==================================== common ==================================== */

/* nthreads above FARFIELD_MAX_THREADS is refused with INVALID_ARG (the message names the
 * limit) by every plan kind, before any thread is started; the plan handle stays NULL. */
static void common_cases(void) {
    const int too_many[2] = {FARFIELD_MAX_THREADS + 1, 100000};
    double box[9] = {10, 0, 0, 0, 10, 0, 0, 0, 10};
    for (int t = 0; t < 2; t++) {
        farfield_nufft_opts no;
        farfield_nufft_default_opts(&no, sizeof no);
        no.nthreads = too_many[t];
        int64_t nm[1] = {16};
        farfield_nufft_plan np = (farfield_nufft_plan)1;
        EXPECT_STATUS(farfield_nufft_makeplan(1, 1, nm, 1, 1, 1e-6, &np, &no), FARFIELD_ERR_INVALID_ARG);
        EXPECT(np == NULL);
        EXPECT(strstr(farfield_last_error_message(), "1024") != NULL);
        farfield_nufftf_plan nfp = (farfield_nufftf_plan)1;
        EXPECT_STATUS(farfield_nufftf_makeplan(1, 1, nm, 1, 1, 1e-4, &nfp, &no), FARFIELD_ERR_INVALID_ARG);
        EXPECT(nfp == NULL);

        farfield_ewald_opts eo;
        farfield_ewald_default_opts(&eo, sizeof eo);
        eo.nthreads = too_many[t];
        farfield_ewald_plan ep = (farfield_ewald_plan)1;
        EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-5, &ep, &eo),
                      FARFIELD_ERR_INVALID_ARG);
        EXPECT(ep == NULL);

        farfield_fmm_opts fo;
        farfield_fmm_default_opts(&fo, sizeof fo);
        fo.nthreads = too_many[t];
        farfield_fmm_plan fp = (farfield_fmm_plan)1;
        EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, &fp, &fo), FARFIELD_ERR_INVALID_ARG);
        EXPECT(fp == NULL);

        farfield_poisson_opts po;
        farfield_poisson_default_opts(&po, sizeof po);
        po.nthreads = too_many[t];
        int64_t n[3] = {8, 8, 8};
        double h[3] = {0.1, 0.1, 0.1};
        farfield_poisson_plan pp = (farfield_poisson_plan)1;
        EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_HOCKNEY, 3, n, h, &pp, &po),
                      FARFIELD_ERR_INVALID_ARG);
        EXPECT(pp == NULL);
    }
    /* a count within the limit is accepted */
    farfield_nufft_opts no;
    farfield_nufft_default_opts(&no, sizeof no);
    no.nthreads = 4;
    int64_t nm[1] = {16};
    farfield_nufft_plan np = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(1, 1, nm, 1, 1, 1e-6, &np, &no), FARFIELD_OK);
    farfield_nufft_destroy(np);
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
    farfield_nufft_default_opts(&o, sizeof o);
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
        farfield_nufft_default_opts(&o, sizeof o);
        o.fftw = bad_fftw[i];
        EXPECT_STATUS(farfield_nufft_makeplan(1, 1, &n1, 1, 1, 1e-6, &p, &o), FARFIELD_ERR_INVALID_ARG);
        EXPECT(p == NULL && strstr(farfield_last_error_message(), "opts.fftw") != NULL);
    }
    static const int good_fftw[] = {64, 0, 32, 65};
    for (unsigned i = 0; i < sizeof good_fftw / sizeof good_fftw[0]; i++) {
        farfield_nufft_default_opts(&o, sizeof o);
        o.fftw = good_fftw[i];
        o.nthreads = 1;
        EXPECT_STATUS(farfield_nufft_makeplan(1, 1, &n1, 1, 1, 1e-6, &p, &o), FARFIELD_OK);
        farfield_nufft_destroy(p);
        p = NULL;
    }
    /* opts.points_by_reference: only 0 and 1 (-3 was taken as by-reference) */
    static const int bad_pbr[] = {-3, 2, -1};
    for (unsigned i = 0; i < 3; i++) {
        farfield_nufft_default_opts(&o, sizeof o);
        o.points_by_reference = bad_pbr[i];
        EXPECT_STATUS(farfield_nufft_makeplan(1, 1, &n1, 1, 1, 1e-6, &p, &o), FARFIELD_ERR_INVALID_ARG);
        EXPECT(strstr(farfield_last_error_message(), "opts.points_by_reference") != NULL);
        farfield_nufftf_plan pf = NULL;
        EXPECT_STATUS(farfield_nufftf_makeplan(1, 1, &n1, 1, 1, 1e-4f, &pf, &o), FARFIELD_ERR_INVALID_ARG);
    }
    /* floats in messages in exponent notation, not 300 digits */
    farfield_nufft_default_opts(&o, sizeof o);
    o.upsampfac = 1e300;
    EXPECT_STATUS(farfield_nufft_makeplan(1, 1, &n1, 1, 1, 1e-6, &p, &o), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "1e300") && strlen(farfield_last_error_message()) < 200);
    EXPECT_STATUS(farfield_nufft_makeplan(1, 1, &n1, 1, 1, -1e300, &p, NULL), FARFIELD_ERR_TOL);
    EXPECT(strstr(farfield_last_error_message(), "-1e300") && strlen(farfield_last_error_message()) < 200);

    /* setpts M = 2^32: the limit is 2^32 - 1 and the message says so ("4294967295 points
     * exceed the supported 2^32 - 1" was off by one); checked before the arrays are read */
    farfield_nufft_default_opts(&o, sizeof o);
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

/* Ewald (bad-input class 9): a tolerance below what the method reaches in double precision is
 * raised to it with FARFIELD_WARN_TOL_CLAMPED (farfield_ewald_get_warnings); sizes beyond
 * the stated limits are FARFIELD_ERR_RANGE, never FARFIELD_ERR_MODES; messages print floats
 * compactly. */
static void ewald_cases(void) {
    double box[9] = {10, 0, 0, 0, 10, 0, 0, 0, 10};
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o, sizeof o);
    o.nthreads = 1;
    o.order_or_support = 10; /* the order the automatic choice takes at the floor (one table) */
    farfield_ewald_plan p = NULL;
    farfield_ewald_params prm = {.struct_size = sizeof(farfield_ewald_params)};
    double tol_used = 0;
    int warnings = -1;
    /* SPME at tol 1e-20 picked a 720^3 grid (3 GB) with an estimated error of 5.4e-7 */
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-20, &p, &o), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_get_params(p, &prm), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_get_warnings(p, &tol_used, &warnings), FARFIELD_OK);
    EXPECT(warnings & FARFIELD_WARN_TOL_CLAMPED);
    EXPECT(tol_used == 1e-12);
    EXPECT(prm.est_rel_err <= 1.01 * tol_used);
    EXPECT(prm.grid[0] <= 256 && prm.grid[1] <= 256 && prm.grid[2] <= 256);
    farfield_ewald_destroy(p);
    /* an ordinary tol: no warning, tol_used = tol */
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-6, &p, &o), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_get_params(p, &prm), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_get_warnings(p, &tol_used, &warnings), FARFIELD_OK);
    EXPECT(warnings == 0 && tol_used == 1e-6);
    farfield_ewald_destroy(p);
    /* an override that keeps the estimated error above tol is reported, not silent */
    o.order_or_support = 4;
    o.grid[0] = o.grid[1] = o.grid[2] = 16;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-10, &p, &o), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_get_params(p, &prm), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_get_warnings(p, NULL, &warnings), FARFIELD_OK);
    EXPECT(warnings == FARFIELD_EWALD_WARN_TOL_NOT_MET && prm.est_rel_err > 1e-10);
    farfield_ewald_destroy(p);
    o.order_or_support = 10;
    /* grid limits: RANGE (documented), not MODES */
    o.grid[0] = (int64_t)1 << 17, o.grid[1] = o.grid[2] = 16;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-6, &p, &o), FARFIELD_ERR_RANGE);
    o.grid[0] = o.grid[1] = o.grid[2] = (int64_t)1 << 16;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-6, &p, &o), FARFIELD_ERR_RANGE);
    EXPECT(strstr(farfield_last_error_message(), "2^33") != NULL);
    o.grid[0] = o.grid[1] = o.grid[2] = 0;
    /* messages print floats in exponent form, not 300 digits */
    o.xi = 1e300;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-6, &p, &o), FARFIELD_ERR_RANGE);
    EXPECT(strlen(farfield_last_error_message()) < 400);
    EXPECT(strstr(farfield_last_error_message(), "00000000") == NULL);
    o.xi = 0;
    o.rc = 1e300;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 100, 1e-6, &p, &o), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "1e300") != NULL);
    o.rc = 0;
    /* exclusion count bound */
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_DIRECT, box, 100, 1e-6, &p, &o), FARFIELD_OK);
    const int64_t pr[2] = {0, 1};
    EXPECT_STATUS(farfield_ewald_set_exclusions(p, INT64_MAX, pr), FARFIELD_ERR_RANGE);
    EXPECT_STATUS(farfield_ewald_set_exclusions(p, FARFIELD_EWALD_MAX_EXCLUSIONS + 1, pr), FARFIELD_ERR_RANGE);
    farfield_ewald_destroy(p);
}




/* ==================================== poisson ==================================== */

/* Class 9, Poisson: the Vico memory estimate follows the precomputation grid actually built
 * (the old "16·Π 4n_d" was 13× low for a 64×64×2 slab), that grid is bounded relative to the
 * doubled grid (512×), vico_factor to (1, 4]; messages state value and limit in short form. */
static int pl_short_numbers(const char *msg) { /* no run of more than 20 digits */
    int run = 0;
    for (const char *c = msg; *c; c++) {
        run = (*c >= '0' && *c <= '9') ? run + 1 : 0;
        if (run > 20) return 0;
    }
    return 1;
}

static void poisson_cases(void) {
    const int64_t slab[3] = {64, 64, 2};
    const double h1[3] = {1, 1, 1};
    int64_t pc[3] = {0, 0, 0}, plan_b = 0, field_b = 0, peak_b = 0;
    EXPECT_STATUS(farfield_poisson_estimate(FARFIELD_POISSON_VICO, 3, slab, h1, NULL, pc, &plan_b, &field_b, &peak_b), 0);
    /* P_z ≥ 1.5·2 + L/h_z with L = 1.1·|(64, 64, 2)| = 99.6: the smallest 2,3,5-smooth even ≥ 103 is 108 */
    EXPECT(pc[0] == 256 && pc[1] == 256 && pc[2] == 108);
    const int64_t hl = (64 + 1) * 128 * 4; /* half spectrum of the doubled grid */
    EXPECT(plan_b == 8 * 128 * 128 * 4 + 24 * hl);
    EXPECT(field_b == 16 * hl + 8 * 3 * 64 * 64 * 2);
    EXPECT(peak_b == plan_b + 8 * pc[0] * pc[1] * pc[2] + 16 * (pc[0] / 2 + 1) * pc[1] * pc[2]);
    EXPECT(peak_b - plan_b > 10 * 16 * (4 * 64) * (4 * 64) * (4 * 2));
    EXPECT_STATUS(farfield_poisson_estimate(FARFIELD_POISSON_VICO_DCT, 3, slab, h1, NULL, pc, &plan_b, NULL, &peak_b), 0);
    EXPECT(peak_b == plan_b + 8 * (pc[0] / 2 + 1) * (pc[1] / 2 + 1) * (pc[2] / 2 + 1));
    EXPECT_STATUS(farfield_poisson_estimate(FARFIELD_POISSON_HOCKNEY, 3, slab, h1, NULL, pc, &plan_b, NULL, &peak_b), 0);
    EXPECT(pc[0] == 0 && peak_b == plan_b);
    /* the estimate is what the plan builds: a plan for a small slab works */
    const int64_t small[3] = {16, 16, 2};
    farfield_poisson_plan p = NULL;
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO, 3, small, h1, &p, NULL), 0);
    farfield_poisson_destroy(p);
    /* h_y = 1e-5 asked for 10.9 GB: now bounded (512 × the doubled grid) */
    const int64_t n32[3] = {32, 32, 32};
    const double hy[3] = {1, 1e-5, 1};
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO, 3, n32, hy, &p, NULL), FARFIELD_ERR_RANGE);
    const char *msg = farfield_last_error_message();
    EXPECT(strstr(msg, "512") != NULL && pl_short_numbers(msg));
    /* vico_factor bounds, named with the value */
    farfield_poisson_opts o;
    farfield_poisson_default_opts(&o, sizeof o);
    o.vico_factor = 1e15;
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO, 3, n32, h1, &p, &o), FARFIELD_ERR_INVALID_ARG);
    msg = farfield_last_error_message();
    EXPECT(strstr(msg, "vico_factor = 1e15") != NULL && pl_short_numbers(msg));
    o.vico_factor = 4.0;
    const int64_t n8[3] = {8, 8, 8};
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO_DCT, 3, n8, h1, &p, &o), 0);
    farfield_poisson_destroy(p);
    /* sizes: a short message with the limit */
    const int64_t huge[3] = {INT64_MAX, 1, 1};
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_HOCKNEY, 3, huge, h1, &p, NULL), FARFIELD_ERR_RANGE);
    EXPECT(pl_short_numbers(farfield_last_error_message()));
    o.vico_factor = 1.1;
    o.nthreads = 100000;
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_HOCKNEY, 3, n8, h1, &p, &o), FARFIELD_ERR_INVALID_ARG);
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
