/* C side of the Fortran layout test: what the C compiler thinks the struct layouts are.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include "farfield.h"

#include <stddef.h>

/* out[0] = sizeof, out[1..] = offsets of the fields in declaration order (struct_size first). */
void farfield_test_opts_layout(int64_t out[14]) {
    out[0] = (int64_t)sizeof(farfield_nufft_opts);
    out[1] = (int64_t)offsetof(farfield_nufft_opts, struct_size);
    out[2] = (int64_t)offsetof(farfield_nufft_opts, modeord);
    out[3] = (int64_t)offsetof(farfield_nufft_opts, debug);
    out[4] = (int64_t)offsetof(farfield_nufft_opts, nthreads);
    out[5] = (int64_t)offsetof(farfield_nufft_opts, kernel);
    out[6] = (int64_t)offsetof(farfield_nufft_opts, upsampfac);
    out[7] = (int64_t)offsetof(farfield_nufft_opts, fftw);
    out[8] = (int64_t)offsetof(farfield_nufft_opts, spread_max_subprob_size);
    out[9] = (int64_t)offsetof(farfield_nufft_opts, backend);
    out[10] = (int64_t)offsetof(farfield_nufft_opts, points_by_reference);
    out[11] = (int64_t)offsetof(farfield_nufft_opts, gpu_method);
    out[12] = (int64_t)offsetof(farfield_nufft_opts, gpu_spread_reuse_hint);
    out[13] = (int64_t)offsetof(farfield_nufft_opts, gpu_stream);
}

void farfield_test_info_layout(int64_t out[10]) {
    out[0] = (int64_t)sizeof(farfield_nufft_info);
    out[1] = (int64_t)offsetof(farfield_nufft_info, struct_size);
    out[2] = (int64_t)offsetof(farfield_nufft_info, nf);
    out[3] = (int64_t)offsetof(farfield_nufft_info, kernel_width);
    out[4] = (int64_t)offsetof(farfield_nufft_info, nthreads);
    out[5] = (int64_t)offsetof(farfield_nufft_info, upsampfac);
    out[6] = (int64_t)offsetof(farfield_nufft_info, kernel_param);
    out[7] = (int64_t)offsetof(farfield_nufft_info, tol_used);
    out[8] = (int64_t)offsetof(farfield_nufft_info, warnings);
    out[9] = (int64_t)offsetof(farfield_nufft_info, backend);
}

/* out[0] = sizeof, out[1..] = offsets (struct_size first). */
void farfield_test_poisson_opts_layout(int64_t out[7]) {
    out[0] = (int64_t)sizeof(farfield_poisson_opts);
    out[1] = (int64_t)offsetof(farfield_poisson_opts, struct_size);
    out[2] = (int64_t)offsetof(farfield_poisson_opts, nthreads);
    out[3] = (int64_t)offsetof(farfield_poisson_opts, debug);
    out[4] = (int64_t)offsetof(farfield_poisson_opts, fftw);
    out[5] = (int64_t)offsetof(farfield_poisson_opts, check_input);
    out[6] = (int64_t)offsetof(farfield_poisson_opts, vico_factor);
}

/* out[0] = sizeof, out[1..] = offsets (struct_size first). */
void farfield_test_ewald_opts_layout(int64_t out[14]) {
    out[0] = (int64_t)sizeof(farfield_ewald_opts);
    out[1] = (int64_t)offsetof(farfield_ewald_opts, struct_size);
    out[2] = (int64_t)offsetof(farfield_ewald_opts, nthreads);
    out[3] = (int64_t)offsetof(farfield_ewald_opts, debug);
    out[4] = (int64_t)offsetof(farfield_ewald_opts, fftw);
    out[5] = (int64_t)offsetof(farfield_ewald_opts, order_or_support);
    out[6] = (int64_t)offsetof(farfield_ewald_opts, xi);
    out[7] = (int64_t)offsetof(farfield_ewald_opts, rc);
    out[8] = (int64_t)offsetof(farfield_ewald_opts, grid);
    out[9] = (int64_t)offsetof(farfield_ewald_opts, backend);
    out[10] = (int64_t)offsetof(farfield_ewald_opts, gpu_precision);
    out[11] = (int64_t)offsetof(farfield_ewald_opts, gpu_method);
    out[12] = (int64_t)offsetof(farfield_ewald_opts, terms);
    out[13] = (int64_t)offsetof(farfield_ewald_opts, gpu_stream);
}

/* out[0] = sizeof, out[1..] = offsets (struct_size first). */
void farfield_test_ewald_params_layout(int64_t out[12]) {
    out[0] = (int64_t)sizeof(farfield_ewald_params);
    out[1] = (int64_t)offsetof(farfield_ewald_params, struct_size);
    out[2] = (int64_t)offsetof(farfield_ewald_params, xi);
    out[3] = (int64_t)offsetof(farfield_ewald_params, rc);
    out[4] = (int64_t)offsetof(farfield_ewald_params, grid);
    out[5] = (int64_t)offsetof(farfield_ewald_params, order_or_support);
    out[6] = (int64_t)offsetof(farfield_ewald_params, method);
    out[7] = (int64_t)offsetof(farfield_ewald_params, eta);
    out[8] = (int64_t)offsetof(farfield_ewald_params, kc);
    out[9] = (int64_t)offsetof(farfield_ewald_params, est_rel_err);
    out[10] = (int64_t)offsetof(farfield_ewald_params, real_s);
    out[11] = (int64_t)offsetof(farfield_ewald_params, kspace_s);
}

/* out[0] = sizeof, out[1..] = offsets (struct_size first). */
void farfield_test_fmm_opts_layout(int64_t out[9]) {
    out[0] = (int64_t)sizeof(farfield_fmm_opts);
    out[1] = (int64_t)offsetof(farfield_fmm_opts, struct_size);
    out[2] = (int64_t)offsetof(farfield_fmm_opts, nthreads);
    out[3] = (int64_t)offsetof(farfield_fmm_opts, debug);
    out[4] = (int64_t)offsetof(farfield_fmm_opts, order);
    out[5] = (int64_t)offsetof(farfield_fmm_opts, depth);
    out[6] = (int64_t)offsetof(farfield_fmm_opts, backend);
    out[7] = (int64_t)offsetof(farfield_fmm_opts, max_leaf);
    out[8] = (int64_t)offsetof(farfield_fmm_opts, gpu_stream);
}

/* out[0] = sizeof, out[1..] = offsets (struct_size first). */
void farfield_test_fmm_params_layout(int64_t out[18]) {
    out[0] = (int64_t)sizeof(farfield_fmm_params);
    out[1] = (int64_t)offsetof(farfield_fmm_params, struct_size);
    out[2] = (int64_t)offsetof(farfield_fmm_params, order);
    out[3] = (int64_t)offsetof(farfield_fmm_params, depth);
    out[4] = (int64_t)offsetof(farfield_fmm_params, nleaves);
    out[5] = (int64_t)offsetof(farfield_fmm_params, npoints);
    out[6] = (int64_t)offsetof(farfield_fmm_params, t_tree);
    out[7] = (int64_t)offsetof(farfield_fmm_params, t_lists);
    out[8] = (int64_t)offsetof(farfield_fmm_params, t_p2m);
    out[9] = (int64_t)offsetof(farfield_fmm_params, t_m2m);
    out[10] = (int64_t)offsetof(farfield_fmm_params, t_m2l);
    out[11] = (int64_t)offsetof(farfield_fmm_params, t_l2l);
    out[12] = (int64_t)offsetof(farfield_fmm_params, t_l2p);
    out[13] = (int64_t)offsetof(farfield_fmm_params, t_p2p);
    out[14] = (int64_t)offsetof(farfield_fmm_params, t_post);
    out[15] = (int64_t)offsetof(farfield_fmm_params, t_total);
    out[16] = (int64_t)offsetof(farfield_fmm_params, tol_clamped);
    out[17] = (int64_t)offsetof(farfield_fmm_params, nthreads);
}
