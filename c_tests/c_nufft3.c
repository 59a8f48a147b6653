/* NUFFT type 3 through the C API: f_k = sum_j c_j exp(+-i s_k . x_j) for arbitrary real points
 * and frequencies, in double (3D, ntrans = 2, off-centre data) and single precision (1D),
 * against the direct sum (relative l2 error <= 10 tol), and the error paths of setpts
 * (NULL s, N < 0, non-finite s, a space-bandwidth product too large for any grid), each
 * leaving the plan usable with its previous points.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include "ff_test.h"

/* Direct type 3 sum: c, f interleaved (re, im); ntrans stacked vectors. */
static void direct3(int dim, int iflag, int ntrans, int64_t m, const double *const x[3], int64_t n,
                    const double *const s[3], const double *c, double *f) {
    const double sg = iflag >= 0 ? 1.0 : -1.0;
    for (int t = 0; t < ntrans; t++) {
        for (int64_t k = 0; k < n; k++) {
            double re = 0.0, im = 0.0;
            for (int64_t j = 0; j < m; j++) {
                double ph = 0.0;
                for (int d = 0; d < dim; d++) ph += s[d][k] * x[d][j];
                const double cr = cos(sg * ph), ci = sin(sg * ph);
                const double *cj = c + 2 * (t * m + j);
                re += cj[0] * cr - cj[1] * ci;
                im += cj[0] * ci + cj[1] * cr;
            }
            f[2 * (t * n + k)] = re;
            f[2 * (t * n + k) + 1] = im;
        }
    }
}

static void test_double_3d(void) {
    enum { M = 150, N = 120, NT = 2 };
    const double tol = 1e-9;
    static double x[3][M], s[3][N], c[2 * NT * M], fd[2 * NT * N];
    static farfield_complex cc[NT * M], f[NT * N], f2[NT * N];
    /* points around (2, 0, -5) with half-widths 3, 1, 0.5; frequencies around (10, -4, 0) */
    const double cx[3] = {2.0, 0.0, -5.0}, hx[3] = {3.0, 1.0, 0.5};
    const double cs[3] = {10.0, -4.0, 0.0}, hs[3] = {20.0, 9.0, 30.0};
    ff_rng r = {7};
    for (int d = 0; d < 3; d++) {
        for (int j = 0; j < M; j++) x[d][j] = ff_range(&r, cx[d] - hx[d], cx[d] + hx[d]);
        for (int k = 0; k < N; k++) s[d][k] = ff_range(&r, cs[d] - hs[d], cs[d] + hs[d]);
    }
    for (int i = 0; i < NT * M; i++) {
        c[2 * i] = ff_range(&r, -1, 1);
        c[2 * i + 1] = ff_range(&r, -1, 1);
        memcpy(&cc[i], &c[2 * i], sizeof cc[i]);
    }
    const double *xs[3] = {x[0], x[1], x[2]}, *ss[3] = {s[0], s[1], s[2]};
    direct3(3, -1, NT, M, xs, N, ss, c, fd);

    farfield_nufft_plan p = NULL;
    /* type 3 reads no n_modes: NULL is fine */
    EXPECT_STATUS(farfield_nufft_makeplan(3, 3, NULL, -1, NT, tol, &p, NULL), FARFIELD_OK);
    /* execute before setpts */
    EXPECT_STATUS(farfield_nufft_execute(p, cc, f), FARFIELD_ERR_NO_POINTS);
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x[0], x[1], x[2], N, s[0], s[1], s[2]), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufft_execute(p, cc, f), FARFIELD_OK);
    double err = ff_rel_err_d((const double *)f, fd, NT * N);
    printf("c_nufft3: f64 3D type 3 M %d N %d ntrans %d tol %.0e: rel l2 err %.3e\n", M, N, NT, tol, err);
    EXPECT(err <= 10 * tol);
    farfield_nufft_info info = {.struct_size = sizeof info};
    EXPECT_STATUS(farfield_nufft_get_info(p, &info), FARFIELD_OK);
    EXPECT(info.nf[0] >= 2 * info.kernel_width && info.nf[1] >= 2 * info.kernel_width && info.warnings == 0);

    /* error paths: each keeps the previous points */
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x[0], x[1], x[2], N, NULL, s[1], s[2]), FARFIELD_ERR_NULL_POINTER);
    EXPECT(strstr(farfield_last_error_message(), "`s`") != NULL);
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x[0], x[1], x[2], N, s[0], NULL, s[2]), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x[0], x[1], x[2], -1, s[0], s[1], s[2]), FARFIELD_ERR_NPOINTS);
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x[0], x[1], x[2], INT64_MAX, s[0], s[1], s[2]), FARFIELD_ERR_NPOINTS);
    const double keep = s[2][3];
    s[2][3] = NAN;
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x[0], x[1], x[2], N, s[0], s[1], s[2]), FARFIELD_ERR_NONFINITE);
    EXPECT(strstr(farfield_last_error_message(), "u[3]") != NULL);
    s[2][3] = INFINITY;
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x[0], x[1], x[2], N, s[0], s[1], s[2]), FARFIELD_ERR_NONFINITE);
    s[2][3] = keep;
    x[1][5] = -INFINITY;
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x[0], x[1], x[2], N, s[0], s[1], s[2]), FARFIELD_ERR_NONFINITE);
    EXPECT(strstr(farfield_last_error_message(), "y[5]") != NULL);
    x[1][5] = 0.25;
    /* X*S = 1e8 * 1e8 along x: no grid can hold it */
    const double wide_x[2] = {-1e8, 1e8}, wide_s[2] = {-1e8, 1e8}, zero2[2] = {0, 0};
    EXPECT_STATUS(farfield_nufft_setpts(p, 2, wide_x, zero2, zero2, 2, wide_s, zero2, zero2), FARFIELD_ERR_MODES);
    EXPECT(strstr(farfield_last_error_message(), "space-bandwidth") != NULL);
    EXPECT_STATUS(farfield_nufft_execute(p, cc, f2), FARFIELD_OK);
    /* the same points again (not bitwise: the parallel spreader's sums may be ordered differently) */
    EXPECT(ff_rel_err_d((const double *)f2, (const double *)f, NT * N) <= 1e-13);
    /* type 3 has no device path */
    EXPECT_STATUS(farfield_nufft_execute_device(p, cc, f), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_nufft_destroy(p), FARFIELD_OK);

    /* makeplan errors */
    farfield_nufft_plan q = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(3, 0, NULL, 1, 1, 1e-6, &q, NULL), FARFIELD_ERR_DIM);
    EXPECT_STATUS(farfield_nufft_makeplan(3, 2, NULL, 1, 0, 1e-6, &q, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_nufft_makeplan(3, 2, NULL, 1, 1, -1.0, &q, NULL), FARFIELD_ERR_TOL);
    EXPECT(q == NULL);
}

static void test_single_1d(void) {
    enum { M = 200, N = 180 };
    const float tol = 1e-4f;
    static float x[M], s[N];
    static double xd[M], sd[N], c[2 * M], fd[2 * N], fw[2 * N];
    static farfield_complexf cf[M], f[N];
    ff_rng r = {11};
    for (int j = 0; j < M; j++) {
        x[j] = (float)ff_range(&r, 4.0, 10.0);
        xd[j] = x[j];
        float re = (float)ff_range(&r, -1, 1), im = (float)ff_range(&r, -1, 1);
        c[2 * j] = re;
        c[2 * j + 1] = im;
        float v[2] = {re, im};
        memcpy(&cf[j], v, sizeof cf[j]);
    }
    for (int k = 0; k < N; k++) {
        s[k] = (float)ff_range(&r, -25.0, 5.0);
        sd[k] = s[k];
    }
    const double *xs[3] = {xd, NULL, NULL}, *ss[3] = {sd, NULL, NULL};
    direct3(1, 1, 1, M, xs, N, ss, c, fd);
    farfield_nufftf_plan p = NULL;
    EXPECT_STATUS(farfield_nufftf_makeplan(3, 1, NULL, 1, 1, tol, &p, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufftf_setpts(p, M, x, NULL, NULL, N, s, NULL, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufftf_execute(p, cf, f), FARFIELD_OK);
    for (int k = 0; k < N; k++) {
        float v[2];
        memcpy(v, &f[k], sizeof v);
        fw[2 * k] = v[0];
        fw[2 * k + 1] = v[1];
    }
    double err = ff_rel_err_d(fw, fd, N);
    printf("c_nufft3: f32 1D type 3 M %d N %d tol %.0e: rel l2 err %.3e\n", M, N, (double)tol, err);
    EXPECT(err <= 10 * tol);
    EXPECT_STATUS(farfield_nufftf_setpts(p, M, x, NULL, NULL, N, NULL, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufftf_setpts(p, M, x, NULL, NULL, -5, s, NULL, NULL), FARFIELD_ERR_NPOINTS);
    s[0] = NAN;
    EXPECT_STATUS(farfield_nufftf_setpts(p, M, x, NULL, NULL, N, s, NULL, NULL), FARFIELD_ERR_NONFINITE);
    EXPECT(strstr(farfield_last_error_message(), "s[0]") != NULL);
    EXPECT_STATUS(farfield_nufftf_execute(p, cf, f), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufftf_destroy(p), FARFIELD_OK);
}

int main(void) {
    test_double_3d();
    test_single_1d();
    return ff_finish("c_nufft3");
}
