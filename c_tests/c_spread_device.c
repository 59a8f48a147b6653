/* farfield_spread(f)_{setpts,spread,spread_complex,interp,interp_complex}_device: spreading
 * plans on CUDA device arrays. Without a device: the error paths — NULL plan (NULL_POINTER),
 * M < 0 (NPOINTS), a CPU plan (INVALID_ARG, "needs a CUDA plan"), each leaving the plan usable
 * with its previous points. With a device (driver opened with dlopen: no CUDA headers needed):
 * a CUDA plan set from device coordinates (freed right after the call) and run on device
 * arrays gives the host-array calls' results bit for bit, in double and single precision, real
 * and complex; a point outside a free axis gets the host call's status and message.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _POSIX_C_SOURCE 200809L
#include "ff_test.h"

#include "ff_cuda.h"

enum { M = 300, N0 = 16, N1 = 20, NG = N0 * N1 };

static const int64_t n[2] = {N0, N1};
static const double lo[2] = {-1.0, 0.5}, len[2] = {2.0, 2.5};
static const int per[2] = {1, 0};

static void error_paths(void) {
    double x[3] = {0.1, -1.0, 2.0}, y[3] = {1.5, 1.75, 2.0}, v[3] = {1, 2, 3}, g[NG];
    farfield_spread_opts o;
    farfield_spread_default_opts(&o, sizeof o);
    o.nthreads = 1;
    o.backend = FARFIELD_BACKEND_CPU;
    farfield_spread_plan p = NULL;
    EXPECT_STATUS(farfield_spread_makeplan(2, n, lo, len, per, FARFIELD_SPREAD_KERNEL_BSPLINE, 3, &p, &o), 0);
    EXPECT_STATUS(farfield_spread_setpts(p, 3, x, y, NULL), 0);
    EXPECT_STATUS(farfield_spread_setpts_device(NULL, 3, x, y, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_spread_setpts_device(p, -1, x, y, NULL), FARFIELD_ERR_NPOINTS);
    EXPECT_STATUS(farfield_spread_setpts_device(p, 3, x, y, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "setpts_device needs a CUDA plan") != NULL);
    EXPECT_STATUS(farfield_spread_spread_device(NULL, v, g), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_spread_spread_device(p, v, g), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "spread_device needs a CUDA plan") != NULL);
    EXPECT_STATUS(farfield_spread_interp_device(p, g, v), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_spread_spread_complex_device(p, (farfield_complex *)v, (farfield_complex *)g), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_spread_interp_complex_device(p, (farfield_complex *)g, (farfield_complex *)v), FARFIELD_ERR_INVALID_ARG);
    /* the plan keeps its points */
    EXPECT_STATUS(farfield_spread_spread(p, v, g), 0);
    double total = 0;
    for (int i = 0; i < NG; i++) total += g[i];
    EXPECT(fabs(total - 6.0) < 1e-12);
    farfield_spread_destroy(p);
    farfield_spreadf_plan q = NULL;
    float xf[1] = {0.1f}, yf[1] = {1.5f};
    EXPECT_STATUS(farfield_spreadf_makeplan(2, n, lo, len, per, FARFIELD_SPREAD_KERNEL_BSPLINE, 3, &q, &o), 0);
    EXPECT_STATUS(farfield_spreadf_setpts_device(q, 1, xf, yf, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_spreadf_spread_device(q, xf, yf), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_spreadf_interp_device(q, xf, yf), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_spreadf_spread_complex_device(q, NULL, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_spreadf_interp_complex_device(q, NULL, NULL), FARFIELD_ERR_INVALID_ARG);
    farfield_spreadf_destroy(q);
}

static ff_cu_ptr up(ff_cuda *cu, const void *src, size_t bytes) {
    ff_cu_ptr d = ff_cuda_upload(cu, src, bytes);
    EXPECT(d != 0);
    return d;
}

static void down(ff_cuda *cu, void *dst, ff_cu_ptr src, size_t bytes) {
    EXPECT(cu->dtoh(dst, src, bytes) == 0);
    cu->mem_free(src);
}

#define DP(p) ((double *)(uintptr_t)(p))
#define FP(p) ((float *)(uintptr_t)(p))
#define ZP(p) ((farfield_complex *)(uintptr_t)(p))

/* With a device: device arrays vs host arrays of the same CUDA plan, bit for bit. */
static void with_device(ff_cuda *cu) {
    static double x[M], y[M], v[M], grid[NG], gh[NG], gd[NG], vh[M], vd[M];
    static farfield_complex cz[M], gz[NG], gzh[NG], gzd[NG], vzh[M], vzd[M];
    ff_rng r = {7};
    for (int j = 0; j < M; j++) {
        x[j] = ff_range(&r, -5, 5);            /* periodic x: anywhere */
        y[j] = ff_range(&r, 0.5 + 0.6, 3.0 - 0.6); /* free y: inside by more than the kernel's half-width */
        v[j] = ff_range(&r, -1, 1);
        cz[j] = v[j] + 0.5 * I * v[M - 1 - j];
    }
    for (int i = 0; i < NG; i++) {
        grid[i] = ff_range(&r, -1, 1);
        gz[i] = grid[i] - 0.25 * I * grid[i];
    }
    farfield_spread_opts o;
    farfield_spread_default_opts(&o, sizeof o);
    o.backend = FARFIELD_BACKEND_CUDA;
    farfield_spread_plan p = NULL;
    EXPECT_STATUS(farfield_spread_makeplan(2, n, lo, len, per, FARFIELD_SPREAD_KERNEL_ES, 1e-6, &p, &o), 0);
    if (!p) return;
    EXPECT_STATUS(farfield_spread_setpts(p, M, x, y, NULL), 0);
    EXPECT_STATUS(farfield_spread_spread(p, v, gh), 0);
    EXPECT_STATUS(farfield_spread_interp(p, grid, vh, NULL), 0);
    EXPECT_STATUS(farfield_spread_spread_complex(p, cz, gzh), 0);
    EXPECT_STATUS(farfield_spread_interp_complex(p, gz, vzh), 0);
    ff_cu_ptr dx = up(cu, x, sizeof x), dy = up(cu, y, sizeof y);
    EXPECT_STATUS(farfield_spread_setpts_device(p, M, DP(dx), DP(dy), NULL), 0);
    cu->mem_free(dx); /* copied: the arrays may go */
    cu->mem_free(dy);
    ff_cu_ptr dv = up(cu, v, sizeof v), dg = up(cu, gd, sizeof gd);
    EXPECT_STATUS(farfield_spread_spread_device(p, DP(dv), DP(dg)), 0);
    down(cu, gd, dg, sizeof gd);
    cu->mem_free(dv);
    EXPECT(memcmp(gd, gh, sizeof gd) == 0);
    dg = up(cu, grid, sizeof grid);
    dv = up(cu, vd, sizeof vd);
    EXPECT_STATUS(farfield_spread_interp_device(p, DP(dg), DP(dv)), 0);
    down(cu, vd, dv, sizeof vd);
    cu->mem_free(dg);
    EXPECT(memcmp(vd, vh, sizeof vd) == 0);
    dv = up(cu, cz, sizeof cz);
    dg = up(cu, gzd, sizeof gzd);
    EXPECT_STATUS(farfield_spread_spread_complex_device(p, ZP(dv), ZP(dg)), 0);
    down(cu, gzd, dg, sizeof gzd);
    cu->mem_free(dv);
    EXPECT(memcmp(gzd, gzh, sizeof gzd) == 0);
    dg = up(cu, gz, sizeof gz);
    dv = up(cu, vzd, sizeof vzd);
    EXPECT_STATUS(farfield_spread_interp_complex_device(p, ZP(dg), ZP(dv)), 0);
    down(cu, vzd, dv, sizeof vzd);
    cu->mem_free(dg);
    EXPECT(memcmp(vzd, vzh, sizeof vzd) == 0);
    /* a point outside the free y axis: the host call's status and message */
    y[77] = 0.5;
    EXPECT_STATUS(farfield_spread_setpts(p, M, x, y, NULL), FARFIELD_ERR_INVALID_ARG);
    char host_msg[512];
    snprintf(host_msg, sizeof host_msg, "%s", farfield_last_error_message());
    dx = up(cu, x, sizeof x);
    dy = up(cu, y, sizeof y);
    EXPECT_STATUS(farfield_spread_setpts_device(p, M, DP(dx), DP(dy), NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strcmp(farfield_last_error_message(), host_msg) == 0);
    EXPECT(strstr(host_msg, "point 77") != NULL);
    cu->mem_free(dx);
    cu->mem_free(dy);
    farfield_spread_destroy(p);

    /* single precision, real values */
    static float xf[M], yf[M], vf[M], ghf[NG], gdf[NG];
    for (int j = 0; j < M; j++) {
        xf[j] = (float)x[j];
        yf[j] = (float)(j == 77 ? 1.5 : y[j]);
        vf[j] = (float)v[j];
    }
    farfield_spreadf_plan q = NULL;
    EXPECT_STATUS(farfield_spreadf_makeplan(2, n, lo, len, per, FARFIELD_SPREAD_KERNEL_BSPLINE, 4, &q, &o), 0);
    if (!q) return;
    EXPECT_STATUS(farfield_spreadf_setpts(q, M, xf, yf, NULL), 0);
    EXPECT_STATUS(farfield_spreadf_spread(q, vf, ghf), 0);
    dx = up(cu, xf, sizeof xf);
    dy = up(cu, yf, sizeof yf);
    EXPECT_STATUS(farfield_spreadf_setpts_device(q, M, FP(dx), FP(dy), NULL), 0);
    cu->mem_free(dx);
    cu->mem_free(dy);
    dv = up(cu, vf, sizeof vf);
    dg = up(cu, gdf, sizeof gdf);
    EXPECT_STATUS(farfield_spreadf_spread_device(q, FP(dv), FP(dg)), 0);
    down(cu, gdf, dg, sizeof gdf);
    cu->mem_free(dv);
    EXPECT(memcmp(gdf, ghf, sizeof gdf) == 0);
    farfield_spreadf_destroy(q);
}

int main(void) {
    error_paths();
    ff_cuda cu;
    farfield_spread_opts o;
    farfield_spread_default_opts(&o, sizeof o);
    o.backend = FARFIELD_BACKEND_CUDA;
    farfield_spread_plan probe = NULL;
    const int have_plan = farfield_spread_makeplan(2, n, lo, len, per, FARFIELD_SPREAD_KERNEL_BSPLINE, 2, &probe, &o) == 0;
    farfield_spread_destroy(probe);
    if (have_plan && ff_cuda_open(&cu)) {
        with_device(&cu);
    } else {
        printf("c_spread_device: no CUDA device; the device comparison is skipped (error paths checked)\n");
    }
    return ff_finish("c_spread_device");
}
