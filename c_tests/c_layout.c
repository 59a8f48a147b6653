/* ABI layout of the option/info structs (NUFFT, Poisson, Ewald, FMM) and the default options. The numbers below are part
 * of the stable ABI (fields are only ever appended); fortran/tests/test_layout.f90 asserts
 * exactly the same numbers for the bind(c) Fortran types.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include "ff_test.h"

#include <stddef.h>

#define EXPECT_SIZE(expr, want)                                                                 \
    do {                                                                                        \
        size_t ff_v_ = (expr);                                                                  \
        if (ff_v_ != (size_t)(want)) {                                                          \
            fprintf(stderr, "%s:%d: %s = %zu, expected %d\n", __FILE__, __LINE__, #expr, ff_v_, \
                    (int)(want));                                                               \
            ff_failures++;                                                                      \
        }                                                                                       \
    } while (0)

int main(void) {
    /* farfield_nufft_opts */
    EXPECT_SIZE(sizeof(farfield_nufft_opts), 48);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, modeord), 0);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, debug), 4);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, nthreads), 8);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, kernel), 12);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, upsampfac), 16);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, fftw), 24);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, spread_max_subprob_size), 28);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, backend), 32);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, points_by_reference), 36);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, gpu_method), 40);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, gpu_spread_reuse_hint), 44);

    /* farfield_nufft_info */
    EXPECT_SIZE(sizeof(farfield_nufft_info), 64);
    EXPECT_SIZE(offsetof(farfield_nufft_info, nf), 0);
    EXPECT_SIZE(sizeof(((farfield_nufft_info *)0)->nf), 24);
    EXPECT_SIZE(offsetof(farfield_nufft_info, kernel_width), 24);
    EXPECT_SIZE(offsetof(farfield_nufft_info, nthreads), 28);
    EXPECT_SIZE(offsetof(farfield_nufft_info, upsampfac), 32);
    EXPECT_SIZE(offsetof(farfield_nufft_info, kernel_param), 40);
    EXPECT_SIZE(offsetof(farfield_nufft_info, tol_used), 48);
    EXPECT_SIZE(offsetof(farfield_nufft_info, warnings), 56);
    EXPECT_SIZE(offsetof(farfield_nufft_info, backend), 60);

    /* farfield_poisson_opts */
    EXPECT_SIZE(sizeof(farfield_poisson_opts), 24);
    EXPECT_SIZE(offsetof(farfield_poisson_opts, nthreads), 0);
    EXPECT_SIZE(offsetof(farfield_poisson_opts, debug), 4);
    EXPECT_SIZE(offsetof(farfield_poisson_opts, fftw), 8);
    EXPECT_SIZE(offsetof(farfield_poisson_opts, check_input), 12);
    EXPECT_SIZE(offsetof(farfield_poisson_opts, vico_factor), 16);

    /* farfield_ewald_opts */
    EXPECT_SIZE(sizeof(farfield_ewald_opts), 56);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, nthreads), 0);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, debug), 4);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, fftw), 8);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, order_or_support), 12);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, xi), 16);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, rc), 24);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, grid), 32);
    EXPECT_SIZE(sizeof(((farfield_ewald_opts *)0)->grid), 24);

    /* farfield_ewald_params */
    EXPECT_SIZE(sizeof(farfield_ewald_params), 88);
    EXPECT_SIZE(offsetof(farfield_ewald_params, xi), 0);
    EXPECT_SIZE(offsetof(farfield_ewald_params, rc), 8);
    EXPECT_SIZE(offsetof(farfield_ewald_params, grid), 16);
    EXPECT_SIZE(sizeof(((farfield_ewald_params *)0)->grid), 24);
    EXPECT_SIZE(offsetof(farfield_ewald_params, order_or_support), 40);
    EXPECT_SIZE(offsetof(farfield_ewald_params, method), 44);
    EXPECT_SIZE(offsetof(farfield_ewald_params, eta), 48);
    EXPECT_SIZE(offsetof(farfield_ewald_params, kc), 56);
    EXPECT_SIZE(offsetof(farfield_ewald_params, est_rel_err), 64);
    EXPECT_SIZE(offsetof(farfield_ewald_params, real_s), 72);
    EXPECT_SIZE(offsetof(farfield_ewald_params, kspace_s), 80);

    /* farfield_fmm_opts */
    EXPECT_SIZE(sizeof(farfield_fmm_opts), 20);
    EXPECT_SIZE(offsetof(farfield_fmm_opts, nthreads), 0);
    EXPECT_SIZE(offsetof(farfield_fmm_opts, debug), 4);
    EXPECT_SIZE(offsetof(farfield_fmm_opts, order), 8);
    EXPECT_SIZE(offsetof(farfield_fmm_opts, depth), 12);
    EXPECT_SIZE(offsetof(farfield_fmm_opts, backend), 16);

    /* farfield_fmm_params */
    EXPECT_SIZE(sizeof(farfield_fmm_params), 112);
    EXPECT_SIZE(offsetof(farfield_fmm_params, order), 0);
    EXPECT_SIZE(offsetof(farfield_fmm_params, depth), 4);
    EXPECT_SIZE(offsetof(farfield_fmm_params, nleaves), 8);
    EXPECT_SIZE(offsetof(farfield_fmm_params, npoints), 16);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_tree), 24);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_lists), 32);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_p2m), 40);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_m2m), 48);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_m2l), 56);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_l2l), 64);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_l2p), 72);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_p2p), 80);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_post), 88);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_total), 96);
    EXPECT_SIZE(offsetof(farfield_fmm_params, tol_clamped), 104);
    EXPECT_SIZE(offsetof(farfield_fmm_params, nthreads), 108);

    /* complex types: (re, im) pairs */
    EXPECT_SIZE(sizeof(farfield_complex), 16);
    EXPECT_SIZE(sizeof(farfield_complexf), 8);

    /* default options */
    farfield_nufft_opts o;
    memset(&o, 0xab, sizeof o);
    farfield_nufft_default_opts(&o);
    EXPECT(o.modeord == 0);
    EXPECT(o.debug == 0);
    EXPECT(o.nthreads == 0);
    EXPECT(o.kernel == FARFIELD_KERNEL_ES);
    EXPECT(o.upsampfac == 0.0);
    EXPECT(o.fftw == 64); /* FFTW_ESTIMATE */
    EXPECT(o.spread_max_subprob_size == 0);
    EXPECT(o.backend == FARFIELD_BACKEND_AUTO);
    EXPECT(o.points_by_reference == 0);
    EXPECT(o.gpu_method == FARFIELD_GPU_METHOD_AUTO && o.gpu_spread_reuse_hint == 0);
    farfield_nufft_default_opts(NULL); /* ignored */

    farfield_ewald_opts eo;
    memset(&eo, 0xab, sizeof eo);
    EXPECT(farfield_ewald_default_opts(&eo) == FARFIELD_OK);
    EXPECT(eo.nthreads == 0 && eo.debug == 0 && eo.fftw == 64 && eo.order_or_support == 0);
    EXPECT(eo.xi == 0.0 && eo.rc == 0.0 && eo.grid[0] == 0 && eo.grid[1] == 0 && eo.grid[2] == 0);
    EXPECT(farfield_ewald_default_opts(NULL) == FARFIELD_ERR_NULL_POINTER);

    farfield_fmm_opts fo;
    memset(&fo, 0xab, sizeof fo);
    EXPECT(farfield_fmm_default_opts(&fo) == FARFIELD_OK);
    EXPECT(fo.nthreads == 0 && fo.debug == 0 && fo.order == 0 && fo.depth == -1);
    EXPECT(fo.backend == FARFIELD_FMM_BACKEND_AUTO);
    EXPECT(farfield_fmm_default_opts(NULL) == FARFIELD_ERR_NULL_POINTER);

    /* constants */
    EXPECT(FARFIELD_OK == 0);
    EXPECT(FARFIELD_BACKEND_AUTO == 0 && FARFIELD_BACKEND_CPU == 1 && FARFIELD_BACKEND_CUDA == 2);
    EXPECT(FARFIELD_KERNEL_ES == 0 && FARFIELD_KERNEL_GAUSSIAN == 1);
    EXPECT(FARFIELD_WARN_TOL_CLAMPED == 1);
    EXPECT(FARFIELD_POISSON_HOCKNEY == 0 && FARFIELD_POISSON_VICO == 1 && FARFIELD_POISSON_VICO_DCT == 2);
    EXPECT(FARFIELD_EWALD_SPECTRAL == 0 && FARFIELD_EWALD_SPME == 1 && FARFIELD_EWALD_DIRECT == 2);
    EXPECT(FARFIELD_FMM_OPEN == 0 && FARFIELD_FMM_PERIODIC == 1);
    EXPECT(FARFIELD_FMM_BACKEND_AUTO == 0 && FARFIELD_FMM_BACKEND_CPU == 1 && FARFIELD_FMM_BACKEND_CUDA == 2);
    return ff_finish("c_layout");
}
