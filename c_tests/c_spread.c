/* Spreading/interpolation C API (farfield_spread_*): PIC checks and direct kernel sums.
 * SPDX-License-Identifier: MIT OR Apache-2.0
 *
 * - CIC and TSC conserve charge: sum(grid) = sum(q), periodic box with a shifted origin;
 * - CIC interpolates a linear field exactly (free axes) with its exact gradient;
 * - 1D CIC and TSC spreading against the weights written out by hand
 *   (CIC: 1 - |d|, TSC: 3/4 - d^2 and (3/2 - |d|)^2 / 2, d = distance in grid units);
 * - complex spreading, single precision, default_opts with an older (smaller) struct;
 * - error paths: NULL pointers, bad kernel/order/tolerance, n too small, points off a free
 *   axis (the message names the point), gradient with a non-B-spline kernel, CUDA without a
 *   device, overlapping arrays. */
#include "ff_test.h"

#include <stddef.h>

/* Hand-written 1D weights of the point at grid coordinate g on grid point l (periodic n). */
static double cic(double l, double g, int n) {
    double d = fabs(fmod(l - g + 1.5 * n, (double)n) - 0.5 * n);
    return d < 1 ? 1 - d : 0;
}
static double tsc(double l, double g, int n) {
    double d = fabs(fmod(l - g + 1.5 * n, (double)n) - 0.5 * n);
    if (d < 0.5) return 0.75 - d * d;
    if (d < 1.5) return 0.5 * (1.5 - d) * (1.5 - d);
    return 0;
}

int main(void) {
    ff_rng r = {42};
    farfield_spread_opts o;
    memset(&o, 0x5a, sizeof o);
    EXPECT_STATUS(farfield_spread_default_opts(&o, sizeof o), FARFIELD_OK);
    EXPECT(o.struct_size == sizeof o && o.nthreads == 0 && o.debug == 0 && o.backend == FARFIELD_BACKEND_AUTO &&
           o.gpu_method == 0 && o.max_subprob_size == 0 && o.gpu_reuse_hint == 0);
    EXPECT_STATUS(farfield_spread_default_opts(NULL, sizeof o), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_spread_default_opts(&o, 3), FARFIELD_ERR_INVALID_ARG);
    /* an older caller whose struct ends after gpu_method: the library writes only its bytes */
    {
        unsigned char old[sizeof o + 8];
        size_t old_size = offsetof(farfield_spread_opts, gpu_reuse_hint);
        memset(old, 0x77, sizeof old);
        EXPECT_STATUS(farfield_spread_default_opts((farfield_spread_opts *)old, old_size), FARFIELD_OK);
        for (size_t i = old_size; i < sizeof old; i++) EXPECT(old[i] == 0x77);
        farfield_spread_plan p = NULL;
        const int64_t n1[1] = {16};
        const double lo1[1] = {0}, len1[1] = {1};
        const int per1[1] = {1};
        ((farfield_spread_opts *)old)->nthreads = 1;
        EXPECT_STATUS(farfield_spread_makeplan(1, n1, lo1, len1, per1, FARFIELD_SPREAD_KERNEL_BSPLINE, 2, &p,
                                               (const farfield_spread_opts *)old), FARFIELD_OK);
        farfield_spread_destroy(p);
    }
    o.nthreads = 2;

    /* ---- 3D CIC/TSC charge conservation in a periodic box with a shifted origin ---------- */
    enum { M = 2000 };
    const int64_t n[3] = {16, 12, 10};
    const double lo[3] = {-3.0, 1.5, 0.25}, len[3] = {4.0, 3.0, 2.5};
    const int per[3] = {1, 1, 1};
    const size_t ng = 16 * 12 * 10;
    double *x = malloc(sizeof(double) * M), *y = malloc(sizeof(double) * M), *z = malloc(sizeof(double) * M);
    double *q = malloc(sizeof(double) * M), *v = malloc(sizeof(double) * M), *grad = malloc(sizeof(double) * 3 * M);
    double *grid = malloc(sizeof(double) * ng);
    double qsum = 0, qabs = 0;
    for (int j = 0; j < M; j++) {
        x[j] = ff_range(&r, lo[0] - 2 * len[0], lo[0] + 3 * len[0]); /* points anywhere: periodic */
        y[j] = ff_range(&r, lo[1], lo[1] + len[1]);
        z[j] = ff_range(&r, lo[2] - len[2], lo[2]);
        q[j] = ff_range(&r, -1, 1);
        qsum += q[j];
        qabs += fabs(q[j]);
    }
    for (int order = 1; order <= 8; order++) {
        farfield_spread_plan p = NULL;
        EXPECT_STATUS(farfield_spread_makeplan(3, n, lo, len, per, FARFIELD_SPREAD_KERNEL_BSPLINE, order, &p, &o),
                      order <= 5 ? FARFIELD_OK : FARFIELD_ERR_MODES); /* n >= 2w: 10 >= 2*order */
        if (!p) continue;
        int w = 0;
        EXPECT_STATUS(farfield_spread_get_width(p, &w), FARFIELD_OK);
        EXPECT(w == order);
        EXPECT_STATUS(farfield_spread_spread(p, q, grid), FARFIELD_ERR_NO_POINTS);
        EXPECT_STATUS(farfield_spread_setpts(p, M, x, y, z), FARFIELD_OK);
        for (size_t l = 0; l < ng; l++) grid[l] = 1e300; /* overwritten, not added to */
        EXPECT_STATUS(farfield_spread_spread(p, q, grid), FARFIELD_OK);
        double gsum = 0;
        for (size_t l = 0; l < ng; l++) gsum += grid[l];
        EXPECT(fabs(gsum - qsum) <= 1e-12 * qabs);
        /* spreading and interpolation are adjoint: <spread q, G> = <q, interp G> */
        double *gr = malloc(sizeof(double) * ng);
        for (size_t l = 0; l < ng; l++) gr[l] = ff_range(&r, -1, 1);
        EXPECT_STATUS(farfield_spread_interp(p, gr, v, order >= 2 ? grad : NULL), FARFIELD_OK);
        double lhs = 0, rhs = 0;
        for (size_t l = 0; l < ng; l++) lhs += grid[l] * gr[l];
        for (int j = 0; j < M; j++) rhs += q[j] * v[j];
        EXPECT(fabs(lhs - rhs) <= 1e-12 * qabs);
        /* overlapping arrays are refused */
        EXPECT_STATUS(farfield_spread_interp(p, gr, gr, NULL), FARFIELD_ERR_INVALID_ARG);
        free(gr);
        EXPECT_STATUS(farfield_spread_destroy(p), FARFIELD_OK);
    }

    /* ---- CIC interpolates a linear field exactly on free axes ------------------------------ */
    {
        const int fre[3] = {0, 0, 0};
        const double a[3] = {0.7, -1.3, 2.1}, b = 0.4;
        double h[3];
        for (int d = 0; d < 3; d++) h[d] = len[d] / (double)n[d];
        for (int j = 0; j < M; j++) { /* keep the CIC window on the grid: g in [0, n - 1] */
            x[j] = lo[0] + h[0] * ff_range(&r, 0, (double)n[0] - 1);
            y[j] = lo[1] + h[1] * ff_range(&r, 0, (double)n[1] - 1);
            z[j] = lo[2] + h[2] * ff_range(&r, 0, (double)n[2] - 1);
        }
        for (int k = 0; k < n[2]; k++)
            for (int jj = 0; jj < n[1]; jj++)
                for (int i = 0; i < n[0]; i++)
                    grid[i + n[0] * (jj + n[1] * k)] =
                        b + a[0] * (lo[0] + i * h[0]) + a[1] * (lo[1] + jj * h[1]) + a[2] * (lo[2] + k * h[2]);
        farfield_spread_plan p = NULL;
        EXPECT_STATUS(farfield_spread_makeplan(3, n, lo, len, fre, FARFIELD_SPREAD_KERNEL_BSPLINE, 2, &p, &o), FARFIELD_OK);
        EXPECT_STATUS(farfield_spread_setpts(p, M, x, y, z), FARFIELD_OK);
        EXPECT_STATUS(farfield_spread_interp(p, grid, v, grad), FARFIELD_OK);
        double err = 0, gerr = 0;
        for (int j = 0; j < M; j++) {
            double exact = b + a[0] * x[j] + a[1] * y[j] + a[2] * z[j];
            err = fmax(err, fabs(v[j] - exact));
            for (int d = 0; d < 3; d++) gerr = fmax(gerr, fabs(grad[3 * j + d] - a[d]));
        }
        EXPECT(err <= 1e-12);
        EXPECT(gerr <= 1e-10);
        /* a point whose CIC window leaves the free y axis: status and message name it */
        double ybad = y[7];
        y[7] = lo[1] + len[1]; /* g = n: touches grid point n */
        EXPECT_STATUS(farfield_spread_setpts(p, M, x, y, z), FARFIELD_ERR_INVALID_ARG);
        EXPECT(strstr(farfield_last_error_message(), "point 7") != NULL);
        EXPECT(strstr(farfield_last_error_message(), "free y axis") != NULL);
        y[7] = ybad;
        /* the previous points stay set */
        EXPECT_STATUS(farfield_spread_interp(p, grid, v, NULL), FARFIELD_OK);
        x[3] = NAN;
        EXPECT_STATUS(farfield_spread_setpts(p, M, x, y, z), FARFIELD_ERR_NONFINITE);
        EXPECT(strstr(farfield_last_error_message(), "point 3") != NULL);
        EXPECT_STATUS(farfield_spread_setpts(p, M, x, NULL, z), FARFIELD_ERR_NULL_POINTER);
        EXPECT_STATUS(farfield_spread_setpts(p, -1, x, y, z), FARFIELD_ERR_NPOINTS);
        EXPECT_STATUS(farfield_spread_interp(p, NULL, v, NULL), FARFIELD_ERR_NULL_POINTER);
        EXPECT_STATUS(farfield_spread_destroy(p), FARFIELD_OK);
    }

    /* ---- 1D CIC and TSC against hand-written weights; complex and single precision ---------- */
    {
        enum { N1 = 20, M1 = 5 };
        const int64_t n1[1] = {N1};
        const double lo1[1] = {-0.5}, len1[1] = {2.0};
        const int per1[1] = {1};
        const double x1[M1] = {-0.5, 0.37, 1.4999, 3.2, -7.05};
        const double q1[M1] = {1.0, -2.0, 0.5, 0.25, 3.0};
        double g1[N1];
        farfield_complex qc[M1], gc[N1];
        for (int j = 0; j < M1; j++) qc[j] = q1[j] - 2.0 * q1[j] * I;
        for (int order = 2; order <= 3; order++) {
            farfield_spread_plan p = NULL;
            EXPECT_STATUS(farfield_spread_makeplan(1, n1, lo1, len1, per1, FARFIELD_SPREAD_KERNEL_BSPLINE, order, &p, NULL), FARFIELD_OK);
            EXPECT_STATUS(farfield_spread_setpts(p, M1, x1, NULL, NULL), FARFIELD_OK);
            EXPECT_STATUS(farfield_spread_spread(p, q1, g1), FARFIELD_OK);
            EXPECT_STATUS(farfield_spread_spread_complex(p, qc, gc), FARFIELD_OK);
            double err = 0;
            for (int l = 0; l < N1; l++) {
                double want = 0;
                for (int j = 0; j < M1; j++) {
                    double g = fmod((x1[j] - lo1[0]) / len1[0] * N1, (double)N1);
                    if (g < 0) g += N1;
                    want += q1[j] * (order == 2 ? cic(l, g, N1) : tsc(l, g, N1));
                }
                err = fmax(err, fabs(g1[l] - want));
                err = fmax(err, cabs(gc[l] - (want - 2.0 * want * I)));
            }
            EXPECT(err <= 1e-13);
            farfield_complex vc[M1];
            EXPECT_STATUS(farfield_spread_interp_complex(p, gc, vc), FARFIELD_OK);
            farfield_spread_destroy(p);

            /* single precision: same weights to float rounding */
            farfield_spreadf_plan pf = NULL;
            float x1f[M1], q1f[M1], g1f[N1];
            for (int j = 0; j < M1; j++) x1f[j] = (float)x1[j], q1f[j] = (float)q1[j];
            EXPECT_STATUS(farfield_spreadf_makeplan(1, n1, lo1, len1, per1, FARFIELD_SPREAD_KERNEL_BSPLINE, order, &pf, NULL), FARFIELD_OK);
            EXPECT_STATUS(farfield_spreadf_setpts(pf, M1, x1f, NULL, NULL), FARFIELD_OK);
            EXPECT_STATUS(farfield_spreadf_spread(pf, q1f, g1f), FARFIELD_OK);
            double errf = 0;
            for (int l = 0; l < N1; l++) errf = fmax(errf, fabs((double)g1f[l] - g1[l]));
            EXPECT(errf <= 1e-5);
            EXPECT_STATUS(farfield_spreadf_destroy(pf), FARFIELD_OK);
        }
    }

    /* ---- ES kernel: gradient not supported; error paths of makeplan ------------------------- */
    {
        farfield_spread_plan p = (farfield_spread_plan)1;
        EXPECT_STATUS(farfield_spread_makeplan(3, n, lo, len, per, FARFIELD_SPREAD_KERNEL_ES, 1e-3, &p, &o), FARFIELD_OK);
        int w = 0;
        EXPECT_STATUS(farfield_spread_get_width(p, &w), FARFIELD_OK);
        EXPECT(w == 4); /* ceil(log10(10/tol)) */
        EXPECT_STATUS(farfield_spread_setpts(p, M, x, y, z), FARFIELD_ERR_NONFINITE); /* x[3] is NaN */
        x[3] = lo[0];
        EXPECT_STATUS(farfield_spread_setpts(p, M, x, y, z), FARFIELD_OK);
        EXPECT_STATUS(farfield_spread_interp(p, grid, v, NULL), FARFIELD_OK);
        EXPECT_STATUS(farfield_spread_interp(p, grid, v, grad), FARFIELD_ERR_NOT_SUPPORTED);
        farfield_spread_destroy(p);

        EXPECT_STATUS(farfield_spread_makeplan(3, n, lo, len, per, FARFIELD_SPREAD_KERNEL_BSPLINE, 2, NULL, &o), FARFIELD_ERR_NULL_POINTER);
        p = (farfield_spread_plan)1;
        EXPECT_STATUS(farfield_spread_makeplan(3, NULL, lo, len, per, FARFIELD_SPREAD_KERNEL_BSPLINE, 2, &p, &o), FARFIELD_ERR_NULL_POINTER);
        EXPECT(p == NULL);
        EXPECT_STATUS(farfield_spread_makeplan(4, n, lo, len, per, FARFIELD_SPREAD_KERNEL_BSPLINE, 2, &p, &o), FARFIELD_ERR_DIM);
        EXPECT_STATUS(farfield_spread_makeplan(3, n, lo, len, per, 7, 2, &p, &o), FARFIELD_ERR_INVALID_ARG);
        EXPECT_STATUS(farfield_spread_makeplan(3, n, lo, len, per, FARFIELD_SPREAD_KERNEL_BSPLINE, 9, &p, &o), FARFIELD_ERR_INVALID_ARG);
        EXPECT_STATUS(farfield_spread_makeplan(3, n, lo, len, per, FARFIELD_SPREAD_KERNEL_BSPLINE, 2.5, &p, &o), FARFIELD_ERR_INVALID_ARG);
        EXPECT_STATUS(farfield_spread_makeplan(3, n, lo, len, per, FARFIELD_SPREAD_KERNEL_ES, 0.0, &p, &o), FARFIELD_ERR_TOL);
        EXPECT_STATUS(farfield_spread_makeplan(3, n, lo, len, per, FARFIELD_SPREAD_KERNEL_GAUSSIAN, -1.0, &p, &o), FARFIELD_ERR_TOL);
        const int64_t small[3] = {16, 5, 10}; /* TSC needs n >= 6 */
        EXPECT_STATUS(farfield_spread_makeplan(3, small, lo, len, per, FARFIELD_SPREAD_KERNEL_BSPLINE, 3, &p, &o), FARFIELD_ERR_MODES);
        const double badlen[3] = {4.0, -1.0, 2.0};
        EXPECT_STATUS(farfield_spread_makeplan(3, n, lo, badlen, per, FARFIELD_SPREAD_KERNEL_BSPLINE, 2, &p, &o), FARFIELD_ERR_INVALID_ARG);
        const int badper[3] = {1, 2, 1};
        EXPECT_STATUS(farfield_spread_makeplan(3, n, lo, len, badper, FARFIELD_SPREAD_KERNEL_BSPLINE, 2, &p, &o), FARFIELD_ERR_INVALID_ARG);
        farfield_spread_opts oc = o;
        oc.backend = FARFIELD_BACKEND_CUDA;
        int st = farfield_spread_makeplan(3, n, lo, len, per, FARFIELD_SPREAD_KERNEL_BSPLINE, 2, &p, &oc);
        EXPECT(st == FARFIELD_OK || st == FARFIELD_ERR_NO_DEVICE);
        farfield_spread_destroy(p);
        oc = o;
        oc.gpu_method = 9;
        EXPECT_STATUS(farfield_spread_makeplan(3, n, lo, len, per, FARFIELD_SPREAD_KERNEL_BSPLINE, 2, &p, &oc), FARFIELD_ERR_INVALID_ARG);
        EXPECT(p == NULL);
        EXPECT_STATUS(farfield_spread_destroy(NULL), FARFIELD_OK);
        EXPECT_STATUS(farfield_spread_setpts(NULL, M, x, y, z), FARFIELD_ERR_NULL_POINTER);
    }

    free(x), free(y), free(z), free(q), free(v), free(grad), free(grid);
    return ff_finish("c_spread");
}
