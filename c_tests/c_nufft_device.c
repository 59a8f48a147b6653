/* farfield_nufft_setpts_device / farfield_nufftf_setpts_device (points from CUDA device arrays,
 * cuFINUFFT's convention). Without a device: the error paths on CPU plans, each leaving the plan
 * usable with its previous points — NULL plan (NULL_POINTER), M < 0 and M beyond 2^32 - 1
 * (NPOINTS), a NULL used axis with M > 0 (NULL_POINTER), a CPU plan (INVALID_ARG, with the
 * message "setpts_device needs a CUDA plan"), a type-3 plan (INVALID_ARG); the same checks of
 * farfield_nufft(f)_setpts_type3_device (type 3's points and frequencies). With a device (the
 * driver is opened with dlopen, so the test needs no CUDA headers): a CUDA plan whose points come
 * from device arrays (freed right after the call) gives the results of the host setpts and of the
 * direct sum (relative l2 error <= 10 tol), in double and single precision; a non-finite device
 * coordinate is NONFINITE naming the point.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _POSIX_C_SOURCE 200809L
#include "ff_test.h"

#include "ff_cuda.h"

enum { M = 200, N1 = 12, N2 = 10 };

static void error_paths(void) {
    const int64_t n[2] = {N1, N2};
    double x[3] = {0.1, -1.0, 2.0}, y[3] = {0.5, 0.25, -3.0};
    farfield_nufft_opts o;
    farfield_nufft_default_opts(&o, sizeof o);
    o.nthreads = 1;
    o.backend = FARFIELD_BACKEND_CPU;
    farfield_nufft_plan p = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(1, 2, n, 1, 1, 1e-6, &p, &o), 0);
    EXPECT_STATUS(farfield_nufft_setpts(p, 3, x, y, NULL, 0, NULL, NULL, NULL), 0);
    /* NULL plan, M out of range, a NULL used axis: checked before the backend */
    EXPECT_STATUS(farfield_nufft_setpts_device(NULL, 3, x, y, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufft_setpts_device(p, -1, x, y, NULL), FARFIELD_ERR_NPOINTS);
    EXPECT_STATUS(farfield_nufft_setpts_device(p, (int64_t)1 << 32, x, y, NULL), FARFIELD_ERR_NPOINTS);
    EXPECT_STATUS(farfield_nufft_setpts_device(p, 3, x, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT(strstr(farfield_last_error_message(), "NULL") != NULL);
    /* a CPU plan: refused with a message, the pointers are never read (host pointers here) */
    EXPECT_STATUS(farfield_nufft_setpts_device(p, 3, x, y, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "setpts_device needs a CUDA plan") != NULL);
    /* the plan keeps its points and still executes */
    farfield_complex c[3], f[N1 * N2];
    for (int j = 0; j < 3; j++) c[j] = 1.0;
    EXPECT_STATUS(farfield_nufft_execute(p, c, f), 0);
    farfield_nufft_destroy(p);

    /* single precision and a type-3 plan */
    farfield_nufftf_plan q = NULL;
    float xf[1] = {0.5f};
    EXPECT_STATUS(farfield_nufftf_makeplan(2, 1, n, 1, 1, 1e-4f, &q, &o), 0);
    EXPECT_STATUS(farfield_nufftf_setpts_device(q, 1, xf, NULL, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_nufftf_setpts_device(q, 1, NULL, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufftf_setpts_device(q, 0, NULL, NULL, NULL), FARFIELD_ERR_INVALID_ARG);
    farfield_nufftf_destroy(q);
    q = NULL;
    EXPECT_STATUS(farfield_nufftf_makeplan(3, 1, NULL, 1, 1, 1e-4f, &q, &o), 0);
    EXPECT_STATUS(farfield_nufftf_setpts_device(q, 1, xf, NULL, NULL), FARFIELD_ERR_INVALID_ARG);
    /* the type-3 device entry: counts, NULL arrays, then the CPU backend; a type-1 or 2 plan */
    EXPECT_STATUS(farfield_nufftf_setpts_type3_device(NULL, 1, xf, NULL, NULL, 1, xf, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufftf_setpts_type3_device(q, 1, xf, NULL, NULL, -1, xf, NULL, NULL), FARFIELD_ERR_NPOINTS);
    EXPECT_STATUS(farfield_nufftf_setpts_type3_device(q, 1, xf, NULL, NULL, 1, NULL, NULL, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufftf_setpts_type3_device(q, 1, xf, NULL, NULL, 1, xf, NULL, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "needs a CUDA plan") != NULL);
    farfield_nufftf_destroy(q);
    farfield_nufft_plan p3 = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(1, 2, n, 1, 1, 1e-6, &p3, &o), 0);
    EXPECT_STATUS(farfield_nufft_setpts_type3_device(p3, 3, x, y, NULL, 3, x, y, NULL), FARFIELD_ERR_INVALID_ARG);
    farfield_nufft_destroy(p3);
}

/* With a device: device points vs host points vs the direct sum (type 1, 2D). */
static void with_device(ff_cuda *cu) {
    const int64_t n[2] = {N1, N2};
    const double tol = 1e-9;
    static double x[M], y[M], c[2 * M], fd[2 * N1 * N2];
    static farfield_complex cc[M], fh[N1 * N2], fdv[N1 * N2];
    ff_rng r = {11};
    for (int j = 0; j < M; j++) {
        x[j] = ff_range(&r, -3 * FF_PI, 3 * FF_PI);
        y[j] = ff_range(&r, -FF_PI, FF_PI);
        c[2 * j] = ff_range(&r, -1, 1);
        c[2 * j + 1] = ff_range(&r, -1, 1);
        memcpy(&cc[j], &c[2 * j], sizeof cc[j]);
    }
    ff_direct(1, 2, n, 1, 0, 1, M, x, y, NULL, c, fd);
    farfield_nufft_opts o;
    farfield_nufft_default_opts(&o, sizeof o);
    o.backend = FARFIELD_BACKEND_CUDA;
    farfield_nufft_plan p = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(1, 2, n, 1, 1, tol, &p, &o), 0);
    if (!p) return;
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x, y, NULL, 0, NULL, NULL, NULL), 0);
    EXPECT_STATUS(farfield_nufft_execute(p, cc, fh), 0);
    ff_cu_ptr dx = ff_cuda_upload(cu, x, sizeof x), dy = ff_cuda_upload(cu, y, sizeof y);
    EXPECT(dx != 0 && dy != 0);
    EXPECT_STATUS(farfield_nufft_setpts_device(p, M, (const double *)(uintptr_t)dx, (const double *)(uintptr_t)dy, NULL), 0);
    cu->mem_free(dx); /* copied: the arrays may go */
    cu->mem_free(dy);
    EXPECT_STATUS(farfield_nufft_execute(p, cc, fdv), 0);
    const double e_host = ff_rel_err_d((const double *)fdv, (const double *)fh, N1 * N2);
    const double e_exact = ff_rel_err_d((const double *)fdv, fd, N1 * N2);
    printf("device points: vs host points %.1e, vs direct %.1e\n", e_host, e_exact);
    EXPECT(e_host < 1e-13);
    EXPECT(e_exact < 10 * tol);
    /* a non-finite device coordinate */
    x[123] = NAN;
    dx = ff_cuda_upload(cu, x, sizeof x);
    dy = ff_cuda_upload(cu, y, sizeof y);
    EXPECT_STATUS(farfield_nufft_setpts_device(p, M, (const double *)(uintptr_t)dx, (const double *)(uintptr_t)dy, NULL),
                  FARFIELD_ERR_NONFINITE);
    EXPECT(strstr(farfield_last_error_message(), "point 123") != NULL);
    cu->mem_free(dx);
    cu->mem_free(dy);
    x[123] = 0.3;
    /* the previous points remain */
    EXPECT_STATUS(farfield_nufft_execute(p, cc, fdv), 0);
    EXPECT(ff_rel_err_d((const double *)fdv, (const double *)fh, N1 * N2) < 1e-13);
    farfield_nufft_destroy(p);

    /* single precision, 1D type 2 */
    farfield_nufftf_plan q = NULL;
    EXPECT_STATUS(farfield_nufftf_makeplan(2, 1, n, -1, 1, 1e-4f, &q, &o), 0);
    if (!q) return;
    static float xf[M];
    static farfield_complexf ch[M], cd[M], fm[N1];
    for (int j = 0; j < M; j++) xf[j] = (float)x[j];
    for (int k = 0; k < N1; k++) fm[k] = (float)ff_range(&r, -1, 1);
    EXPECT_STATUS(farfield_nufftf_setpts(q, M, xf, NULL, NULL, 0, NULL, NULL, NULL), 0);
    EXPECT_STATUS(farfield_nufftf_execute(q, ch, fm), 0);
    ff_cu_ptr dxf = ff_cuda_upload(cu, xf, sizeof xf);
    EXPECT_STATUS(farfield_nufftf_setpts_device(q, M, (const float *)(uintptr_t)dxf, NULL, NULL), 0);
    cu->mem_free(dxf);
    EXPECT_STATUS(farfield_nufftf_execute(q, cd, fm), 0);
    double num = 0.0, den = 0.0;
    for (int j = 0; j < M; j++) {
        num += cabsf(cd[j] - ch[j]) * cabsf(cd[j] - ch[j]);
        den += cabsf(ch[j]) * cabsf(ch[j]);
    }
    EXPECT(sqrt(num / den) < 1e-6);
    farfield_nufftf_destroy(q);
}

int main(void) {
    error_paths();
    ff_cuda cu;
    farfield_nufft_opts o;
    farfield_nufft_default_opts(&o, sizeof o);
    o.backend = FARFIELD_BACKEND_CUDA;
    farfield_nufft_plan probe = NULL;
    const int64_t n[1] = {8};
    const int have_plan = farfield_nufft_makeplan(1, 1, n, 1, 1, 1e-6, &probe, &o) == 0;
    farfield_nufft_destroy(probe);
    if (have_plan && ff_cuda_open(&cu)) {
        with_device(&cu);
    } else {
        printf("c_nufft_device: no CUDA device; the device comparison is skipped (error paths checked)\n");
    }
    return ff_finish("c_nufft_device");
}
