/* Types 1 and 2 in 1D/2D/3D, double and single precision, against direct sums
 * (relative l2 error <= 10 tol), plus plan reuse (setpts again, several executes, ntrans = 3).
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include "ff_test.h"

static const int64_t SIZES[4][3] = {{0, 0, 0}, {37, 1, 1}, {16, 13, 1}, {10, 9, 8}};
static const int64_t NPTS[4] = {0, 150, 200, 150};

/* Fills x, y, z (length m, unused axes zero) with points in [-3pi, 3pi) (any finite value is
 * allowed; wrapping is the library's job). */
static void points(ff_rng *r, int64_t m, double *x, double *y, double *z) {
    for (int64_t j = 0; j < m; j++) {
        x[j] = ff_range(r, -3 * FF_PI, 3 * FF_PI);
        y[j] = ff_range(r, -3 * FF_PI, 3 * FF_PI);
        z[j] = ff_range(r, -3 * FF_PI, 3 * FF_PI);
    }
}

static void values(ff_rng *r, int64_t len, double *v) {
    for (int64_t i = 0; i < 2 * len; i++) v[i] = ff_range(r, -1.0, 1.0);
}

/* One double-precision transform (fresh plan), checked against the direct sum; byref sets
 * opts.points_by_reference (the plan then reads the caller's coordinate arrays). */
static void check_f64_opts(int type, int dim, int iflag, int modeord, int ntrans, double tol, uint64_t seed,
                           int byref) {
    ff_rng r = {seed};
    const int64_t *n = SIZES[dim];
    const int64_t m = NPTS[dim], nmodes = n[0] * n[1] * n[2];
    double *x = malloc(sizeof(double) * m), *y = malloc(sizeof(double) * m), *z = malloc(sizeof(double) * m);
    double *c = malloc(2 * sizeof(double) * m * ntrans), *f = malloc(2 * sizeof(double) * nmodes * ntrans);
    double *ref = malloc(2 * sizeof(double) * (type == 1 ? nmodes : m) * ntrans);
    points(&r, m, x, y, z);
    values(&r, type == 1 ? m * ntrans : nmodes * ntrans, type == 1 ? c : f);

    farfield_nufft_opts opts;
    farfield_nufft_default_opts(&opts, sizeof opts);
    opts.modeord = modeord;
    opts.points_by_reference = byref;
    farfield_nufft_plan plan = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(type, dim, n, iflag, ntrans, tol, &plan, &opts), FARFIELD_OK);
    EXPECT(plan != NULL);
    EXPECT_STATUS(farfield_nufft_setpts(plan, m, x, dim > 1 ? y : NULL, dim > 2 ? z : NULL, 0, NULL, NULL, NULL),
                  FARFIELD_OK);
    EXPECT_STATUS(farfield_nufft_execute(plan, (farfield_complex *)c, (farfield_complex *)f), FARFIELD_OK);
    farfield_nufft_info info = {.struct_size = sizeof(farfield_nufft_info)};
    EXPECT_STATUS(farfield_nufft_get_info(plan, &info), FARFIELD_OK);
    EXPECT(info.warnings == 0);
    EXPECT(info.tol_used == tol);
    EXPECT(info.backend == FARFIELD_BACKEND_CPU);
    EXPECT(info.kernel_width >= 2 && info.kernel_width <= 16);
    /* automatic sigma from the cost model: at least 1.2 (docs/design.md §9.1) */
    for (int d = 0; d < 3; d++) EXPECT(d < dim ? 5 * info.nf[d] >= 6 * n[d] : info.nf[d] == 1);
    EXPECT_STATUS(farfield_nufft_destroy(plan), FARFIELD_OK);

    if (type == 1) {
        ff_direct(1, dim, n, iflag, modeord, ntrans, m, x, y, z, c, ref);
        double err = ff_rel_err_d(f, ref, nmodes * ntrans);
        printf("f64 type %d dim %d iflag %+d modeord %d ntrans %d byref %d tol %.0e: rel err %.3e\n", type, dim,
               iflag, modeord, ntrans, byref, tol, err);
        EXPECT(err <= 10 * tol);
    } else {
        ff_direct(2, dim, n, iflag, modeord, ntrans, m, x, y, z, ref, f);
        double err = ff_rel_err_d(c, ref, m * ntrans);
        printf("f64 type %d dim %d iflag %+d modeord %d ntrans %d byref %d tol %.0e: rel err %.3e\n", type, dim,
               iflag, modeord, ntrans, byref, tol, err);
        EXPECT(err <= 10 * tol);
    }
    free(x), free(y), free(z), free(c), free(f), free(ref);
}

static void check_f64(int type, int dim, int iflag, int modeord, int ntrans, double tol, uint64_t seed) {
    check_f64_opts(type, dim, iflag, modeord, ntrans, tol, seed, 0);
}

/* One single-precision transform, checked against the double-precision direct sum of the
 * same (float) inputs. */
static void check_f32(int type, int dim, int iflag, float tol, uint64_t seed) {
    ff_rng r = {seed};
    const int64_t *n = SIZES[dim];
    const int64_t m = NPTS[dim], nmodes = n[0] * n[1] * n[2];
    double *x = malloc(sizeof(double) * m), *y = malloc(sizeof(double) * m), *z = malloc(sizeof(double) * m);
    float *xf = malloc(sizeof(float) * m), *yf = malloc(sizeof(float) * m), *zf = malloc(sizeof(float) * m);
    double *cd = malloc(2 * sizeof(double) * m), *fd = malloc(2 * sizeof(double) * nmodes);
    float *c = malloc(2 * sizeof(float) * m), *f = malloc(2 * sizeof(float) * nmodes);
    points(&r, m, x, y, z);
    for (int64_t j = 0; j < m; j++) {
        xf[j] = (float)x[j], yf[j] = (float)y[j], zf[j] = (float)z[j];
        x[j] = xf[j], y[j] = yf[j], z[j] = zf[j]; /* reference uses exactly the float inputs */
    }
    double *in_d = type == 1 ? cd : fd;
    float *in_f = type == 1 ? c : f;
    int64_t in_len = type == 1 ? m : nmodes;
    values(&r, in_len, in_d);
    for (int64_t i = 0; i < 2 * in_len; i++) {
        in_f[i] = (float)in_d[i];
        in_d[i] = in_f[i];
    }

    farfield_nufftf_plan plan = NULL;
    EXPECT_STATUS(farfield_nufftf_makeplan(type, dim, n, iflag, 1, tol, &plan, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufftf_setpts(plan, m, xf, dim > 1 ? yf : NULL, dim > 2 ? zf : NULL, 0, NULL, NULL, NULL),
                  FARFIELD_OK);
    EXPECT_STATUS(farfield_nufftf_execute(plan, (farfield_complexf *)c, (farfield_complexf *)f), FARFIELD_OK);
    farfield_nufft_info info = {.struct_size = sizeof(farfield_nufft_info)};
    EXPECT_STATUS(farfield_nufftf_get_info(plan, &info), FARFIELD_OK);
    EXPECT(info.warnings == 0);
    EXPECT_STATUS(farfield_nufftf_destroy(plan), FARFIELD_OK);

    ff_direct(type, dim, n, iflag, 0, 1, m, x, y, z, cd, fd);
    double err = type == 1 ? ff_rel_err_f(f, fd, nmodes) : ff_rel_err_f(c, cd, m);
    printf("f32 type %d dim %d iflag %+d tol %.0e: rel err %.3e\n", type, dim, iflag, (double)tol, err);
    EXPECT(err <= 10 * (double)tol);
    free(x), free(y), free(z), free(xf), free(yf), free(zf), free(cd), free(fd), free(c), free(f);
}

/* Plan reuse: one plan with ntrans = 3; setpts, execute twice, setpts with new points, execute
 * again; every result checked. */
static void check_reuse(int type, int dim, double tol) {
    ff_rng r = {4242 + 10 * (uint64_t)type + (uint64_t)dim};
    const int ntrans = 3;
    const int64_t *n = SIZES[dim];
    const int64_t m = NPTS[dim], nmodes = n[0] * n[1] * n[2];
    double *x = malloc(sizeof(double) * m), *y = malloc(sizeof(double) * m), *z = malloc(sizeof(double) * m);
    double *c = malloc(2 * sizeof(double) * m * ntrans), *f = malloc(2 * sizeof(double) * nmodes * ntrans);
    const int64_t out_len = (type == 1 ? nmodes : m) * ntrans;
    double *ref = malloc(2 * sizeof(double) * out_len);

    farfield_nufft_plan plan = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(type, dim, n, -1, ntrans, tol, &plan, NULL), FARFIELD_OK);
    for (int round = 0; round < 2; round++) {
        points(&r, m, x, y, z);
        EXPECT_STATUS(farfield_nufft_setpts(plan, m, x, y, z, 0, NULL, NULL, NULL), FARFIELD_OK);
        /* the plan copied the points: scribbling over the caller's arrays must not matter */
        double *xs = malloc(sizeof(double) * m);
        memcpy(xs, x, sizeof(double) * m);
        for (int64_t j = 0; j < m; j++) x[j] = 1e300;
        for (int rep = 0; rep < 2; rep++) {
            values(&r, type == 1 ? m * ntrans : nmodes * ntrans, type == 1 ? c : f);
            EXPECT_STATUS(farfield_nufft_execute(plan, (farfield_complex *)c, (farfield_complex *)f), FARFIELD_OK);
            double err;
            if (type == 1) {
                ff_direct(1, dim, n, -1, 0, ntrans, m, xs, y, z, c, ref);
                err = ff_rel_err_d(f, ref, out_len);
            } else {
                ff_direct(2, dim, n, -1, 0, ntrans, m, xs, y, z, ref, f);
                err = ff_rel_err_d(c, ref, out_len);
            }
            printf("reuse f64 type %d dim %d ntrans %d round %d rep %d: rel err %.3e\n", type, dim, ntrans, round,
                   rep, err);
            EXPECT(err <= 10 * tol);
        }
        free(xs);
    }
    EXPECT_STATUS(farfield_nufft_destroy(plan), FARFIELD_OK);
    free(x), free(y), free(z), free(c), free(f), free(ref);
}

int main(void) {
    uint64_t seed = 1;
    for (int type = 1; type <= 2; type++) {
        for (int dim = 1; dim <= 3; dim++) {
            check_f64(type, dim, +1, 0, 1, 1e-6, seed++);
            check_f64(type, dim, -1, 0, 1, 1e-6, seed++);
            check_f32(type, dim, +1, 1e-4f, seed++);
            check_f32(type, dim, -1, 1e-4f, seed++);
        }
        check_f64(type, 1, +1, 1, 1, 1e-6, seed++);  /* FFT mode order */
        check_f64(type, 2, -1, 1, 1, 1e-6, seed++);
        check_f64(type, 2, +1, 0, 1, 1e-12, seed++); /* high accuracy */
        check_f64_opts(type, 2, +1, 0, 1, 1e-6, seed++, 1); /* points by reference */
        check_f64_opts(type, 3, -1, 0, 2, 1e-6, seed++, 1);
        check_reuse(type, 2, 1e-6);
        check_reuse(type, 3, 1e-6);
    }
    return ff_finish("c_accuracy");
}
