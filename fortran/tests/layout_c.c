/* C side of the Fortran layout test: what the C compiler thinks the struct layouts are.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include "farfield.h"

#include <stddef.h>

/* out[0] = sizeof, out[1..] = offsets of the fields in declaration order. */
void farfield_test_opts_layout(int64_t out[10]) {
    out[0] = (int64_t)sizeof(farfield_nufft_opts);
    out[1] = (int64_t)offsetof(farfield_nufft_opts, modeord);
    out[2] = (int64_t)offsetof(farfield_nufft_opts, debug);
    out[3] = (int64_t)offsetof(farfield_nufft_opts, nthreads);
    out[4] = (int64_t)offsetof(farfield_nufft_opts, kernel);
    out[5] = (int64_t)offsetof(farfield_nufft_opts, upsampfac);
    out[6] = (int64_t)offsetof(farfield_nufft_opts, fftw);
    out[7] = (int64_t)offsetof(farfield_nufft_opts, spread_max_subprob_size);
    out[8] = (int64_t)offsetof(farfield_nufft_opts, backend);
    out[9] = (int64_t)offsetof(farfield_nufft_opts, points_by_reference);
}

void farfield_test_info_layout(int64_t out[9]) {
    out[0] = (int64_t)sizeof(farfield_nufft_info);
    out[1] = (int64_t)offsetof(farfield_nufft_info, nf);
    out[2] = (int64_t)offsetof(farfield_nufft_info, kernel_width);
    out[3] = (int64_t)offsetof(farfield_nufft_info, nthreads);
    out[4] = (int64_t)offsetof(farfield_nufft_info, upsampfac);
    out[5] = (int64_t)offsetof(farfield_nufft_info, kernel_param);
    out[6] = (int64_t)offsetof(farfield_nufft_info, tol_used);
    out[7] = (int64_t)offsetof(farfield_nufft_info, warnings);
    out[8] = (int64_t)offsetof(farfield_nufft_info, backend);
}

/* out[0] = sizeof, out[1..5] = offsets. */
void farfield_test_poisson_opts_layout(int64_t out[6]) {
    out[0] = (int64_t)sizeof(farfield_poisson_opts);
    out[1] = (int64_t)offsetof(farfield_poisson_opts, nthreads);
    out[2] = (int64_t)offsetof(farfield_poisson_opts, debug);
    out[3] = (int64_t)offsetof(farfield_poisson_opts, fftw);
    out[4] = (int64_t)offsetof(farfield_poisson_opts, check_input);
    out[5] = (int64_t)offsetof(farfield_poisson_opts, vico_factor);
}
