/* ABI layout of the versioned option/info structs (NUFFT, Poisson, Ewald, FMM) and the default
 * options. The numbers below are part of the stable ABI of libfarfield.so.1 (each struct starts
 * with size_t struct_size and has no padding; fields are only ever appended, see CHANGELOG.md
 * and c_abi.c); fortran/tests/test_layout.f90 asserts exactly the same numbers for the bind(c)
 * Fortran types.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include "ff_test.h"

#include <stddef.h>

#define EXPECT_SIZE(expr, want)                                                                 \
    do {                                                                                        \
        size_t ff_v_ = (expr);                                                                  \
        if (ff_v_ != (size_t)(want)) {                                                          \
            fprintf(stderr, "%s:%d: %s = %zu, expected %zu\n", __FILE__, __LINE__, #expr, ff_v_, \
                    (size_t)(want));                                                             \
            ff_failures++;                                                                      \
        }                                                                                       \
    } while (0)

int main(void) {
    /* farfield_nufft_opts */
    EXPECT_SIZE(sizeof(farfield_nufft_opts), 64);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, struct_size), 0);
    EXPECT_SIZE(sizeof(((farfield_nufft_opts *)0)->struct_size), sizeof(size_t));
    EXPECT_SIZE(offsetof(farfield_nufft_opts, modeord), 8);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, debug), 12);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, nthreads), 16);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, kernel), 20);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, upsampfac), 24);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, fftw), 32);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, spread_max_subprob_size), 36);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, backend), 40);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, points_by_reference), 44);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, gpu_method), 48);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, gpu_spread_reuse_hint), 52);
    EXPECT_SIZE(offsetof(farfield_nufft_opts, gpu_stream), 56);
    EXPECT_SIZE(sizeof(((farfield_nufft_opts *)0)->gpu_stream), 8);

    /* farfield_nufft_info */
    EXPECT_SIZE(sizeof(farfield_nufft_info), 72);
    EXPECT_SIZE(offsetof(farfield_nufft_info, struct_size), 0);
    EXPECT_SIZE(sizeof(((farfield_nufft_info *)0)->struct_size), sizeof(size_t));
    EXPECT_SIZE(offsetof(farfield_nufft_info, nf), 8);
    EXPECT_SIZE(sizeof(((farfield_nufft_info *)0)->nf), 24);
    EXPECT_SIZE(offsetof(farfield_nufft_info, kernel_width), 32);
    EXPECT_SIZE(offsetof(farfield_nufft_info, nthreads), 36);
    EXPECT_SIZE(offsetof(farfield_nufft_info, upsampfac), 40);
    EXPECT_SIZE(offsetof(farfield_nufft_info, kernel_param), 48);
    EXPECT_SIZE(offsetof(farfield_nufft_info, tol_used), 56);
    EXPECT_SIZE(offsetof(farfield_nufft_info, warnings), 64);
    EXPECT_SIZE(offsetof(farfield_nufft_info, backend), 68);

    /* farfield_poisson_opts */
    EXPECT_SIZE(sizeof(farfield_poisson_opts), 32);
    EXPECT_SIZE(offsetof(farfield_poisson_opts, struct_size), 0);
    EXPECT_SIZE(sizeof(((farfield_poisson_opts *)0)->struct_size), sizeof(size_t));
    EXPECT_SIZE(offsetof(farfield_poisson_opts, nthreads), 8);
    EXPECT_SIZE(offsetof(farfield_poisson_opts, debug), 12);
    EXPECT_SIZE(offsetof(farfield_poisson_opts, fftw), 16);
    EXPECT_SIZE(offsetof(farfield_poisson_opts, check_input), 20);
    EXPECT_SIZE(offsetof(farfield_poisson_opts, vico_factor), 24);

    /* farfield_ewald_opts */
    EXPECT_SIZE(sizeof(farfield_ewald_opts), 88);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, struct_size), 0);
    EXPECT_SIZE(sizeof(((farfield_ewald_opts *)0)->struct_size), sizeof(size_t));
    EXPECT_SIZE(offsetof(farfield_ewald_opts, nthreads), 8);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, debug), 12);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, fftw), 16);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, order_or_support), 20);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, xi), 24);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, rc), 32);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, grid), 40);
    EXPECT_SIZE(sizeof(((farfield_ewald_opts *)0)->grid), 24);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, backend), 64);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, gpu_precision), 68);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, gpu_method), 72);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, terms), 76);
    EXPECT_SIZE(offsetof(farfield_ewald_opts, gpu_stream), 80);
    EXPECT_SIZE(sizeof(((farfield_ewald_opts *)0)->gpu_stream), 8);

    /* farfield_ewald_params */
    EXPECT_SIZE(sizeof(farfield_ewald_params), 96);
    EXPECT_SIZE(offsetof(farfield_ewald_params, struct_size), 0);
    EXPECT_SIZE(sizeof(((farfield_ewald_params *)0)->struct_size), sizeof(size_t));
    EXPECT_SIZE(offsetof(farfield_ewald_params, xi), 8);
    EXPECT_SIZE(offsetof(farfield_ewald_params, rc), 16);
    EXPECT_SIZE(offsetof(farfield_ewald_params, grid), 24);
    EXPECT_SIZE(sizeof(((farfield_ewald_params *)0)->grid), 24);
    EXPECT_SIZE(offsetof(farfield_ewald_params, order_or_support), 48);
    EXPECT_SIZE(offsetof(farfield_ewald_params, method), 52);
    EXPECT_SIZE(offsetof(farfield_ewald_params, eta), 56);
    EXPECT_SIZE(offsetof(farfield_ewald_params, kc), 64);
    EXPECT_SIZE(offsetof(farfield_ewald_params, est_rel_err), 72);
    EXPECT_SIZE(offsetof(farfield_ewald_params, real_s), 80);
    EXPECT_SIZE(offsetof(farfield_ewald_params, kspace_s), 88);

    /* farfield_fmm_opts */
    EXPECT_SIZE(sizeof(farfield_fmm_opts), 40);
    EXPECT_SIZE(offsetof(farfield_fmm_opts, struct_size), 0);
    EXPECT_SIZE(sizeof(((farfield_fmm_opts *)0)->struct_size), sizeof(size_t));
    EXPECT_SIZE(offsetof(farfield_fmm_opts, nthreads), 8);
    EXPECT_SIZE(offsetof(farfield_fmm_opts, debug), 12);
    EXPECT_SIZE(offsetof(farfield_fmm_opts, order), 16);
    EXPECT_SIZE(offsetof(farfield_fmm_opts, depth), 20);
    EXPECT_SIZE(offsetof(farfield_fmm_opts, backend), 24);
    EXPECT_SIZE(offsetof(farfield_fmm_opts, max_leaf), 28);
    EXPECT_SIZE(offsetof(farfield_fmm_opts, gpu_stream), 32);
    EXPECT_SIZE(sizeof(((farfield_fmm_opts *)0)->gpu_stream), 8);

    /* farfield_fmm_params */
    EXPECT_SIZE(sizeof(farfield_fmm_params), 120);
    EXPECT_SIZE(offsetof(farfield_fmm_params, struct_size), 0);
    EXPECT_SIZE(sizeof(((farfield_fmm_params *)0)->struct_size), sizeof(size_t));
    EXPECT_SIZE(offsetof(farfield_fmm_params, order), 8);
    EXPECT_SIZE(offsetof(farfield_fmm_params, depth), 12);
    EXPECT_SIZE(offsetof(farfield_fmm_params, nleaves), 16);
    EXPECT_SIZE(offsetof(farfield_fmm_params, npoints), 24);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_tree), 32);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_lists), 40);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_p2m), 48);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_m2m), 56);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_m2l), 64);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_l2l), 72);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_l2p), 80);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_p2p), 88);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_post), 96);
    EXPECT_SIZE(offsetof(farfield_fmm_params, t_total), 104);
    EXPECT_SIZE(offsetof(farfield_fmm_params, tol_clamped), 112);
    EXPECT_SIZE(offsetof(farfield_fmm_params, nthreads), 116);

    /* complex types: (re, im) pairs */
    EXPECT_SIZE(sizeof(farfield_complex), 16);
    EXPECT_SIZE(sizeof(farfield_complexf), 8);

    /* default options: the whole struct written, struct_size recorded */
    farfield_nufft_opts o;
    memset(&o, 0xab, sizeof o);
    EXPECT(farfield_nufft_default_opts(&o, sizeof o) == FARFIELD_OK);
    EXPECT(o.struct_size == sizeof o);
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
    EXPECT(o.gpu_stream == NULL);
    EXPECT(farfield_nufft_default_opts(NULL, sizeof o) == FARFIELD_ERR_NULL_POINTER);

    farfield_poisson_opts po;
    memset(&po, 0xab, sizeof po);
    EXPECT(farfield_poisson_default_opts(&po, sizeof po) == FARFIELD_OK);
    EXPECT(po.struct_size == sizeof po && po.nthreads == 0 && po.debug == 0 && po.fftw == 64);
    EXPECT(po.check_input == 1 && po.vico_factor == 1.1);
    EXPECT(farfield_poisson_default_opts(NULL, sizeof po) == FARFIELD_ERR_NULL_POINTER);

    farfield_ewald_opts eo;
    memset(&eo, 0xab, sizeof eo);
    EXPECT(farfield_ewald_default_opts(&eo, sizeof eo) == FARFIELD_OK);
    EXPECT(eo.struct_size == sizeof eo);
    EXPECT(eo.nthreads == 0 && eo.debug == 0 && eo.fftw == 64 && eo.order_or_support == 0);
    EXPECT(eo.xi == 0.0 && eo.rc == 0.0 && eo.grid[0] == 0 && eo.grid[1] == 0 && eo.grid[2] == 0);
    EXPECT(eo.backend == FARFIELD_BACKEND_AUTO && eo.gpu_precision == FARFIELD_EWALD_GPU_DOUBLE);
    EXPECT(eo.gpu_method == FARFIELD_GPU_METHOD_AUTO && eo.terms == FARFIELD_EWALD_TERMS_ALL && eo.gpu_stream == NULL);
    EXPECT(farfield_ewald_default_opts(NULL, sizeof eo) == FARFIELD_ERR_NULL_POINTER);

    farfield_fmm_opts fo;
    memset(&fo, 0xab, sizeof fo);
    EXPECT(farfield_fmm_default_opts(&fo, sizeof fo) == FARFIELD_OK);
    EXPECT(fo.struct_size == sizeof fo);
    EXPECT(fo.nthreads == 0 && fo.debug == 0 && fo.order == 0 && fo.depth == -1);
    EXPECT(fo.backend == FARFIELD_FMM_BACKEND_AUTO && fo.max_leaf == 0);
    EXPECT(farfield_fmm_default_opts(NULL, sizeof fo) == FARFIELD_ERR_NULL_POINTER);

    /* constants */
    EXPECT(FARFIELD_OK == 0);
    EXPECT(FARFIELD_BACKEND_AUTO == 0 && FARFIELD_BACKEND_CPU == 1 && FARFIELD_BACKEND_CUDA == 2);
    EXPECT(FARFIELD_KERNEL_ES == 0 && FARFIELD_KERNEL_GAUSSIAN == 1);
    EXPECT(FARFIELD_WARN_TOL_CLAMPED == 1);
    EXPECT(FARFIELD_POISSON_HOCKNEY == 0 && FARFIELD_POISSON_VICO == 1 && FARFIELD_POISSON_VICO_DCT == 2);
    EXPECT(FARFIELD_EWALD_SPECTRAL == 0 && FARFIELD_EWALD_SPME == 1 && FARFIELD_EWALD_DIRECT == 2);
    EXPECT(FARFIELD_EWALD_GPU_DOUBLE == 0 && FARFIELD_EWALD_GPU_MIXED == 1);
    EXPECT(FARFIELD_FMM_OPEN == 0 && FARFIELD_FMM_PERIODIC == 1);
    EXPECT(FARFIELD_FMM_BACKEND_AUTO == 0 && FARFIELD_FMM_BACKEND_CPU == 1 && FARFIELD_FMM_BACKEND_CUDA == 2);
    return ff_finish("c_layout");
}
