/* Every error path of the NUFFT C API, status strings, last-error messages and the version.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include "ff_test.h"

#include <stdint.h>

static int contains(const char *hay, const char *needle) { return hay && strstr(hay, needle) != NULL; }

/* A non-NULL garbage handle: makeplan must set *plan to NULL before it fails. */
static int dummy_object;
#define GARBAGE_PLAN ((farfield_nufft_plan)(void *)&dummy_object)
#define GARBAGE_PLANF ((farfield_nufftf_plan)(void *)&dummy_object)

/* makeplan (double) expecting `want`; also checks *plan was set to NULL. */
static void makeplan_fails(int line, int type, int dim, const int64_t *n, int ntrans, double tol,
                           const farfield_nufft_opts *opts, int want) {
    farfield_nufft_plan p = GARBAGE_PLAN;
    int st = farfield_nufft_makeplan(type, dim, n, +1, ntrans, tol, &p, opts);
    if (st != want || p != NULL) {
        fprintf(stderr, "line %d: makeplan(type %d, dim %d, ntrans %d, tol %g) -> %d (%s), plan %p; expected %d\n",
                line, type, dim, ntrans, tol, st, farfield_last_error_message(), (void *)p, want);
        ff_failures++;
    }
    if (st == FARFIELD_OK) farfield_nufft_destroy(p);
    if (st != FARFIELD_OK) EXPECT(strlen(farfield_last_error_message()) > 0);
}

static void makeplanf_fails(int line, int type, int dim, const int64_t *n, float tol, int want) {
    farfield_nufftf_plan p = GARBAGE_PLANF;
    int st = farfield_nufftf_makeplan(type, dim, n, -1, 1, tol, &p, NULL);
    if (st != want || p != NULL) {
        fprintf(stderr, "line %d: nufftf_makeplan(type %d, dim %d, tol %g) -> %d (%s); expected %d\n", line, type,
                dim, (double)tol, st, farfield_last_error_message(), want);
        ff_failures++;
    }
    if (st == FARFIELD_OK) farfield_nufftf_destroy(p);
}

static void test_status_strings(void) {
    const int codes[] = {FARFIELD_OK,
                         FARFIELD_ERR_INTERNAL,
                         FARFIELD_ERR_NULL_POINTER,
                         FARFIELD_ERR_INVALID_ARG,
                         FARFIELD_ERR_DIM,
                         FARFIELD_ERR_TYPE,
                         FARFIELD_ERR_NOT_SUPPORTED,
                         FARFIELD_ERR_MODES,
                         FARFIELD_ERR_TOL,
                         FARFIELD_ERR_NPOINTS,
                         FARFIELD_ERR_NONFINITE,
                         FARFIELD_ERR_ALLOC,
                         FARFIELD_ERR_NO_POINTS,
                         FARFIELD_ERR_NO_DEVICE,
                         FARFIELD_ERR_FFT,
                         FARFIELD_ERR_RANGE};
    const int ncodes = (int)(sizeof codes / sizeof codes[0]);
    const char *unknown = farfield_status_string(-1);
    EXPECT(unknown != NULL && strlen(unknown) > 0);
    EXPECT(strcmp(farfield_status_string(99), unknown) == 0);
    EXPECT(strcmp(farfield_status_string(1), unknown) == 0);
    EXPECT(strcmp(farfield_status_string(FARFIELD_ERR_RANGE + 1), unknown) == 0);
    EXPECT(strcmp(farfield_status_string(INT32_MAX), unknown) == 0);
    EXPECT(strcmp(farfield_status_string(INT32_MIN), unknown) == 0);
    for (int i = 0; i < ncodes; i++) {
        const char *s = farfield_status_string(codes[i]);
        EXPECT(s != NULL && strlen(s) > 0);
        EXPECT(strcmp(s, unknown) != 0);
        if (i > 0) EXPECT(codes[i] >= 100); /* never mistaken for a FINUFFT ier */
        for (int k = 0; k < i; k++) {
            if (strcmp(s, farfield_status_string(codes[k])) == 0) {
                fprintf(stderr, "status strings of %d and %d are equal: \"%s\"\n", codes[i], codes[k], s);
                ff_failures++;
            }
        }
        EXPECT(farfield_status_string(codes[i]) == s); /* static */
    }
}

static void test_version(void) {
    char want[64];
    snprintf(want, sizeof want, "%d.%d.%d", FARFIELD_VERSION_MAJOR, FARFIELD_VERSION_MINOR, FARFIELD_VERSION_PATCH);
    const char *v = farfield_version();
    EXPECT(v != NULL);
    if (v && strcmp(v, want) != 0) {
        fprintf(stderr, "farfield_version() = \"%s\", macros say \"%s\"\n", v, want);
        ff_failures++;
    }
}

static void test_makeplan_errors(void) {
    const int64_t n3[3] = {8, 8, 8};
    farfield_nufft_opts o;

    /* NULL plan pointer, NULL n_modes */
    EXPECT_STATUS(farfield_nufft_makeplan(1, 2, n3, +1, 1, 1e-6, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT(contains(farfield_last_error_message(), "plan"));
    makeplan_fails(__LINE__, 1, 2, NULL, 1, 1e-6, NULL, FARFIELD_ERR_NULL_POINTER);
    EXPECT(contains(farfield_last_error_message(), "n_modes"));
    EXPECT_STATUS(farfield_nufftf_makeplan(1, 2, n3, +1, 1, 1e-4f, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    makeplanf_fails(__LINE__, 1, 2, NULL, 1e-4f, FARFIELD_ERR_NULL_POINTER);

    /* dim not in {1, 2, 3} */
    const int bad_dims[] = {0, 4, -1, 100};
    for (int i = 0; i < 4; i++) {
        makeplan_fails(__LINE__, 1, bad_dims[i], n3, 1, 1e-6, NULL, FARFIELD_ERR_DIM);
        makeplanf_fails(__LINE__, 2, bad_dims[i], n3, 1e-4f, FARFIELD_ERR_DIM);
    }

    /* type not in {1, 2, 3} (type 3 itself: c_nufft3.c) */
    const int bad_types[] = {0, 4, -1, 1000};
    for (int i = 0; i < 4; i++) {
        makeplan_fails(__LINE__, bad_types[i], 2, n3, 1, 1e-6, NULL, FARFIELD_ERR_TYPE);
        makeplanf_fails(__LINE__, bad_types[i], 1, n3, 1e-4f, FARFIELD_ERR_TYPE);
    }

    /* modes <= 0, or whose product overflows */
    const int64_t zero[3] = {8, 0, 8}, neg[3] = {-4, 8, 8}, minv[3] = {INT64_MIN, 8, 8};
    const int64_t big[3] = {(int64_t)1 << 40, (int64_t)1 << 40, (int64_t)1 << 40};
    const int64_t huge2[3] = {INT64_MAX, 2, 1};
    for (int dim = 1; dim <= 3; dim++) makeplan_fails(__LINE__, 1, dim, neg, 1, 1e-6, NULL, FARFIELD_ERR_MODES);
    makeplan_fails(__LINE__, 2, 2, zero, 1, 1e-6, NULL, FARFIELD_ERR_MODES);
    makeplan_fails(__LINE__, 2, 1, minv, 1, 1e-6, NULL, FARFIELD_ERR_MODES);
    makeplan_fails(__LINE__, 1, 3, big, 1, 1e-6, NULL, FARFIELD_ERR_MODES);
    makeplan_fails(__LINE__, 2, 2, huge2, 1, 1e-6, NULL, FARFIELD_ERR_MODES);
    makeplanf_fails(__LINE__, 1, 3, big, 1e-4f, FARFIELD_ERR_MODES);
    makeplanf_fails(__LINE__, 1, 2, zero, 1e-4f, FARFIELD_ERR_MODES);

    /* tol <= 0, NaN, infinite */
    const double bad_tols[] = {0.0, -1e-6, NAN, INFINITY, -INFINITY};
    for (int i = 0; i < 5; i++) {
        makeplan_fails(__LINE__, 1, 1, n3, 1, bad_tols[i], NULL, FARFIELD_ERR_TOL);
        makeplanf_fails(__LINE__, 2, 1, n3, (float)bad_tols[i], FARFIELD_ERR_TOL);
    }

    /* ntrans < 1 and out-of-range options */
    makeplan_fails(__LINE__, 1, 1, n3, 0, 1e-6, NULL, FARFIELD_ERR_INVALID_ARG);
    makeplan_fails(__LINE__, 1, 1, n3, -3, 1e-6, NULL, FARFIELD_ERR_INVALID_ARG);
    farfield_nufft_default_opts(&o, sizeof o);
    o.kernel = 7;
    makeplan_fails(__LINE__, 1, 1, n3, 1, 1e-6, &o, FARFIELD_ERR_INVALID_ARG);
    farfield_nufft_default_opts(&o, sizeof o);
    o.modeord = 2;
    makeplan_fails(__LINE__, 1, 1, n3, 1, 1e-6, &o, FARFIELD_ERR_INVALID_ARG);
    farfield_nufft_default_opts(&o, sizeof o);
    o.upsampfac = 0.5;
    makeplan_fails(__LINE__, 1, 1, n3, 1, 1e-6, &o, FARFIELD_ERR_INVALID_ARG);
    farfield_nufft_default_opts(&o, sizeof o);
    o.nthreads = -1;
    makeplan_fails(__LINE__, 1, 1, n3, 1, 1e-6, &o, FARFIELD_ERR_INVALID_ARG);
    farfield_nufft_default_opts(&o, sizeof o);
    o.backend = 9;
    makeplan_fails(__LINE__, 1, 1, n3, 1, 1e-6, &o, FARFIELD_ERR_INVALID_ARG);
    farfield_nufft_default_opts(&o, sizeof o);
    o.gpu_method = 6;
    makeplan_fails(__LINE__, 1, 1, n3, 1, 1e-6, &o, FARFIELD_ERR_INVALID_ARG);
    farfield_nufft_default_opts(&o, sizeof o);
    o.gpu_spread_reuse_hint = -1;
    makeplan_fails(__LINE__, 1, 1, n3, 1, 1e-6, &o, FARFIELD_ERR_INVALID_ARG);

    /* CUDA demanded, not available here */
    farfield_nufft_default_opts(&o, sizeof o);
    o.backend = FARFIELD_BACKEND_CUDA;
    makeplan_fails(__LINE__, 1, 2, n3, 1, 1e-6, &o, FARFIELD_ERR_NO_DEVICE);
    /* the message says what was looked for (the driver library) */
    EXPECT(strstr(farfield_last_error_message(), "libcuda") != NULL ||
           strstr(farfield_last_error_message(), "CUDA") != NULL);
    /* AUTO falls back to the CPU: the plan works */
    {
        farfield_nufft_opts oa;
        farfield_nufft_default_opts(&oa, sizeof oa);
        oa.backend = FARFIELD_BACKEND_AUTO;
        farfield_nufft_plan pa = NULL;
        EXPECT_STATUS(farfield_nufft_makeplan(1, 2, n3, +1, 1, 1e-6, &pa, &oa), FARFIELD_OK);
        farfield_nufft_info ia = {.struct_size = sizeof(farfield_nufft_info)};
        EXPECT_STATUS(farfield_nufft_get_info(pa, &ia), FARFIELD_OK);
        EXPECT(ia.backend == FARFIELD_BACKEND_CPU);
        /* device-pointer execute needs a CUDA plan: an error, not a crash */
        farfield_complex dc[1], df[1];
        EXPECT_STATUS(farfield_nufft_execute_device(pa, dc, df), FARFIELD_ERR_INVALID_ARG);
        EXPECT_STATUS(farfield_nufft_execute_device(NULL, dc, df), FARFIELD_ERR_NULL_POINTER);
        farfield_nufft_destroy(pa);
    }
    {
        farfield_nufftf_plan pf = GARBAGE_PLANF;
        EXPECT_STATUS(farfield_nufftf_makeplan(2, 1, n3, +1, 1, 1e-4f, &pf, &o), FARFIELD_ERR_NO_DEVICE);
        EXPECT(pf == NULL);
    }

    /* a grid beyond the 2^40 limit: refused before any allocation */
    const int64_t giant[3] = {(int64_t)1 << 20, (int64_t)1 << 20, (int64_t)1 << 10};
    makeplan_fails(__LINE__, 1, 3, giant, 1, 1e-6, NULL, FARFIELD_ERR_MODES);
    makeplanf_fails(__LINE__, 2, 3, giant, 1e-4f, FARFIELD_ERR_MODES);
    /* a grid inside the limits (10240^3 fine points, 17 TB) that cannot be allocated: an
     * error, not an abort */
    const int64_t vast[3] = {(int64_t)1 << 13, (int64_t)1 << 13, (int64_t)1 << 13};
    makeplan_fails(__LINE__, 1, 3, vast, 1, 1e-6, NULL, FARFIELD_ERR_ALLOC);
    makeplanf_fails(__LINE__, 2, 3, vast, 1e-4f, FARFIELD_ERR_ALLOC);
}

static void test_tol_clamped(void) {
    const int64_t n[1] = {32};
    farfield_nufft_info info = {.struct_size = sizeof(farfield_nufft_info)};
    farfield_nufft_plan p = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(1, 1, n, +1, 1, 1e-20, &p, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufft_get_info(p, &info), FARFIELD_OK);
    EXPECT(info.warnings & FARFIELD_WARN_TOL_CLAMPED);
    EXPECT(info.tol_used > 1e-20 && info.tol_used < 1e-12);
    farfield_nufft_destroy(p);

    EXPECT_STATUS(farfield_nufft_makeplan(1, 1, n, +1, 1, 1e-9, &p, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufft_get_info(p, &info), FARFIELD_OK);
    EXPECT((info.warnings & FARFIELD_WARN_TOL_CLAMPED) == 0);
    EXPECT(info.tol_used == 1e-9);
    farfield_nufft_destroy(p);

    farfield_nufftf_plan pf = NULL;
    EXPECT_STATUS(farfield_nufftf_makeplan(2, 1, n, +1, 1, 1e-12f, &pf, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufftf_get_info(pf, &info), FARFIELD_OK);
    EXPECT(info.warnings & FARFIELD_WARN_TOL_CLAMPED);
    EXPECT(info.tol_used > 1e-12 && info.tol_used < 1e-3);
    farfield_nufftf_destroy(pf);
}

/* Errors of setpts / execute / get_info on live plans; the plan must stay usable. */
static void test_plan_errors(void) {
    const int64_t n[2] = {12, 10};
    enum { M = 40 };
    double x[M], y[M], c[2 * M], f[2 * 120], c_good[2 * M];
    ff_rng r = {7};
    for (int j = 0; j < M; j++) x[j] = ff_range(&r, -FF_PI, FF_PI), y[j] = ff_range(&r, -FF_PI, FF_PI);
    for (int k = 0; k < 2 * 120; k++) f[k] = ff_range(&r, -1, 1);

    farfield_nufft_plan p = NULL;
    farfield_nufft_info info = {.struct_size = sizeof(farfield_nufft_info)};
    EXPECT_STATUS(farfield_nufft_makeplan(2, 2, n, +1, 1, 1e-9, &p, NULL), FARFIELD_OK);

    /* execute before setpts */
    EXPECT_STATUS(farfield_nufft_execute(p, (farfield_complex *)c, (farfield_complex *)f), FARFIELD_ERR_NO_POINTS);
    EXPECT(strlen(farfield_last_error_message()) > 0);

    /* NULL plan everywhere */
    EXPECT_STATUS(farfield_nufft_setpts(NULL, M, x, y, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufft_execute(NULL, (farfield_complex *)c, (farfield_complex *)f),
                  FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufft_get_info(NULL, &info), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufft_get_info(p, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufft_destroy(NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufftf_setpts(NULL, 0, NULL, NULL, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufftf_execute(NULL, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufftf_get_info(NULL, &info), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufftf_destroy(NULL), FARFIELD_OK);

    /* NULL coordinate arrays (y is needed in 2D), negative M */
    EXPECT_STATUS(farfield_nufft_setpts(p, M, NULL, y, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT(contains(farfield_last_error_message(), "x"));
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x, NULL, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT(contains(farfield_last_error_message(), "y"));
    EXPECT_STATUS(farfield_nufft_setpts(p, -1, x, y, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NPOINTS);
    EXPECT_STATUS(farfield_nufft_setpts(p, INT64_MIN, x, y, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NPOINTS);
    /* a failed setpts leaves the plan without points */
    EXPECT_STATUS(farfield_nufft_execute(p, (farfield_complex *)c, (farfield_complex *)f), FARFIELD_ERR_NO_POINTS);

    /* good points, then a reference result */
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x, y, NULL, 0, NULL, NULL, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufft_execute(p, (farfield_complex *)c_good, (farfield_complex *)f), FARFIELD_OK);

    /* NULL data arrays */
    EXPECT_STATUS(farfield_nufft_execute(p, NULL, (farfield_complex *)f), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufft_execute(p, (farfield_complex *)c, NULL), FARFIELD_ERR_NULL_POINTER);

    /* c and f overlapping (c = M values, f = 120): refused naming both, nothing written */
    {
        double buf[2 * (M + 120)];
        for (int k = 0; k < 2 * (M + 120); k++) buf[k] = 0.5;
        farfield_complex *b = (farfield_complex *)buf;
        EXPECT_STATUS(farfield_nufft_execute(p, b, b), FARFIELD_ERR_INVALID_ARG);
        EXPECT(contains(farfield_last_error_message(), "`c`") && contains(farfield_last_error_message(), "`f`"));
        EXPECT_STATUS(farfield_nufft_execute(p, b + 10, b), FARFIELD_ERR_INVALID_ARG);      /* c starts inside f */
        EXPECT_STATUS(farfield_nufft_execute(p, b, b + M - 1), FARFIELD_ERR_INVALID_ARG);  /* last c = first f */
        EXPECT_STATUS(farfield_nufft_execute_device(p, b, b + 3), FARFIELD_ERR_INVALID_ARG);
        int untouched = 1;
        for (int k = 0; k < 2 * (M + 120); k++) untouched &= buf[k] == 0.5;
        EXPECT(untouched);
        /* adjacent is fine: c = buf[0..M), f = buf[M..M+120) */
        memcpy(buf + 2 * M, f, sizeof(double) * 2 * 120);
        EXPECT_STATUS(farfield_nufft_execute(p, b, b + M), FARFIELD_OK);
        EXPECT(memcmp(buf, c_good, sizeof c_good) == 0);
    }

    /* non-finite coordinates: the message names the index */
    double xb[M], yb[M];
    memcpy(xb, x, sizeof xb);
    memcpy(yb, y, sizeof yb);
    xb[5] = NAN;
    EXPECT_STATUS(farfield_nufft_setpts(p, M, xb, yb, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NONFINITE);
    if (!contains(farfield_last_error_message(), "point 5")) {
        fprintf(stderr, "NaN at x[5]: message \"%s\" does not name point 5\n", farfield_last_error_message());
        ff_failures++;
    }
    xb[5] = x[5];
    yb[17] = -INFINITY;
    EXPECT_STATUS(farfield_nufft_setpts(p, M, xb, yb, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NONFINITE);
    if (!contains(farfield_last_error_message(), "point 17")) {
        fprintf(stderr, "-Inf at y[17]: message \"%s\" does not name point 17\n", farfield_last_error_message());
        ff_failures++;
    }

    /* after the failed calls the plan still works, with the previous points */
    memset(c, 0, sizeof c);
    EXPECT_STATUS(farfield_nufft_execute(p, (farfield_complex *)c, (farfield_complex *)f), FARFIELD_OK);
    EXPECT(memcmp(c, c_good, sizeof c) == 0);
    double ref[2 * M];
    ff_direct(2, 2, n, +1, 0, 1, M, x, y, NULL, ref, f);
    EXPECT(ff_rel_err_d(c, ref, M) <= 1e-8);

    /* M = 0 is allowed (an empty transform); type 2 writes nothing */
    EXPECT_STATUS(farfield_nufft_setpts(p, 0, NULL, NULL, NULL, 0, NULL, NULL, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufft_execute(p, NULL, (farfield_complex *)f), FARFIELD_OK);

    EXPECT_STATUS(farfield_nufft_destroy(p), FARFIELD_OK);

    /* the same with opts.points_by_reference = 1 (the plan reads x, y until the next setpts) */
    farfield_nufft_opts o;
    farfield_nufft_default_opts(&o, sizeof o);
    o.points_by_reference = 1;
    EXPECT_STATUS(farfield_nufft_makeplan(2, 2, n, +1, 1, 1e-9, &p, &o), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufft_execute(p, (farfield_complex *)c, (farfield_complex *)f), FARFIELD_ERR_NO_POINTS);
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x, y, NULL, 0, NULL, NULL, NULL), FARFIELD_OK);
    xb[5] = NAN;
    yb[17] = y[17];
    EXPECT_STATUS(farfield_nufft_setpts(p, M, xb, yb, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NONFINITE);
    EXPECT(contains(farfield_last_error_message(), "point 5"));
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x, NULL, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    memset(c, 0, sizeof c);
    EXPECT_STATUS(farfield_nufft_execute(p, (farfield_complex *)c, (farfield_complex *)f), FARFIELD_OK);
    EXPECT(ff_rel_err_d(c, ref, M) <= 1e-8);
    EXPECT_STATUS(farfield_nufft_destroy(p), FARFIELD_OK);

    /* single precision: NONFINITE with index, plan still usable */
    float xf[M];
    for (int j = 0; j < M; j++) xf[j] = (float)x[j];
    farfield_nufftf_plan pf = NULL;
    const int64_t n1[1] = {16};
    float cf[2 * M], ff[2 * 16];
    for (int k = 0; k < 2 * 16; k++) ff[k] = (float)f[k];
    EXPECT_STATUS(farfield_nufftf_makeplan(2, 1, n1, -1, 1, 1e-5f, &pf, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufftf_execute(pf, (farfield_complexf *)cf, (farfield_complexf *)ff),
                  FARFIELD_ERR_NO_POINTS);
    EXPECT_STATUS(farfield_nufftf_setpts(pf, M, xf, NULL, NULL, 0, NULL, NULL, NULL), FARFIELD_OK);
    xf[3] = INFINITY;
    EXPECT_STATUS(farfield_nufftf_setpts(pf, M, xf, NULL, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NONFINITE);
    EXPECT(contains(farfield_last_error_message(), "point 3"));
    EXPECT_STATUS(farfield_nufftf_setpts(pf, -5, xf, NULL, NULL, 0, NULL, NULL, NULL), FARFIELD_ERR_NPOINTS);
    EXPECT_STATUS(farfield_nufftf_execute(pf, (farfield_complexf *)cf, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufftf_execute(pf, (farfield_complexf *)cf, (farfield_complexf *)ff), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufftf_get_info(pf, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufftf_destroy(pf), FARFIELD_OK);
}

int main(void) {
    /* nothing has failed on this thread yet */
    EXPECT(farfield_last_error_message() != NULL && strlen(farfield_last_error_message()) == 0);
    test_status_strings();
    test_version();
    test_makeplan_errors();
    test_tol_clamped();
    test_plan_errors();
    return ff_finish("c_errors");
}
