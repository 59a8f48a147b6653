/* Example: a 2D type-1 NUFFT (non-uniform points -> Fourier modes) in C.
 *
 *   f[k1, k2] = sum_j c[j] exp(+i (k1 x[j] + k2 y[j])),  k1 = -N1/2 .. (N1-1)/2, same for k2
 *
 * The four calls every farfield transform uses: makeplan -> setpts -> execute -> destroy.
 * A few modes are compared with the direct sum; the program fails if they disagree.
 *
 * Build against an installed farfield (prefix P):
 *   CMake:      find_package(farfield 1.0 CONFIG REQUIRED)  (cmake -DCMAKE_PREFIX_PATH=P)
 *               target_link_libraries(nufft2d_type1_c PRIVATE farfield::farfield m)
 *   pkg-config: cc -std=c11 nufft2d_type1.c $(pkg-config --cflags --libs farfield) -lm -o nufft2d_type1
 *               (PKG_CONFIG_PATH=P/lib/pkgconfig; at run time LD_LIBRARY_PATH=P/lib or -Wl,-rpath,P/lib)
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <farfield.h>

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(void) {
    const double pi = 3.14159265358979323846;
    enum { N1 = 64, N2 = 48, M = 2000 };
    const int64_t n_modes[2] = {N1, N2};

    /* M points anywhere (radians, 2pi-periodic) with complex strengths */
    double *x = malloc(M * sizeof *x), *y = malloc(M * sizeof *y);
    farfield_complex *c = malloc(M * sizeof *c);
    farfield_complex *f = malloc((size_t)N1 * N2 * sizeof *f); /* f[k1 + N1*k2]: x fastest */
    if (!x || !y || !c || !f) return 1;
    unsigned s = 12345; /* a tiny deterministic random generator */
    for (int j = 0; j < M; j++) {
        s = 1664525u * s + 1013904223u;
        x[j] = pi * (2.0 * s / 4294967296.0 - 1.0);
        s = 1664525u * s + 1013904223u;
        y[j] = pi * (2.0 * s / 4294967296.0 - 1.0);
        c[j] = cos(0.1 * j) + I * sin(0.37 * j);
    }

    /* 1. plan: type 1, 2D, sign +1, one vector per execute, tolerance 1e-9 */
    farfield_nufft_opts opts;
    int ier = farfield_nufft_default_opts(&opts, sizeof opts); /* sets opts.struct_size */
    opts.nthreads = 1;                                           /* 0 = all cores */
    farfield_nufft_plan plan = NULL;
    if (!ier) ier = farfield_nufft_makeplan(1, 2, n_modes, +1, 1, 1e-9, &plan, &opts);
    /* 2. the points (copied: x and y may be freed or reused afterwards) */
    if (!ier) ier = farfield_nufft_setpts(plan, M, x, y, NULL, 0, NULL, NULL, NULL);
    /* 3. transform (any number of times with new strengths c) */
    if (!ier) ier = farfield_nufft_execute(plan, c, f);
    /* 4. free the plan (NULL is fine) */
    farfield_nufft_destroy(plan);
    if (ier) { /* every failure has a code and a message saying what was wrong */
        fprintf(stderr, "farfield error %d: %s (%s)\n", ier, farfield_status_string(ier), farfield_last_error_message());
        return 1;
    }

    /* check a few modes against the direct sum */
    const int check[4][2] = {{-N1 / 2, -N2 / 2}, {0, 0}, {5, -7}, {(N1 - 1) / 2, (N2 - 1) / 2}};
    double max_err = 0, max_ref = 0;
    for (int t = 0; t < 4; t++) {
        const int k1 = check[t][0], k2 = check[t][1];
        double complex ref = 0;
        for (int j = 0; j < M; j++) ref += c[j] * cexp(I * (k1 * x[j] + k2 * y[j]));
        const double complex got = f[(k1 + N1 / 2) + (size_t)N1 * (k2 + N2 / 2)];
        printf("mode (%3d, %3d): farfield % .10f %+.10fi  direct % .10f %+.10fi\n", k1, k2, creal(got), cimag(got),
               creal(ref), cimag(ref));
        max_err = fmax(max_err, cabs(got - ref));
        max_ref = fmax(max_ref, cabs(ref));
    }
    const double rel = max_err / max_ref;
    printf("largest difference relative to the largest mode: %.2e (tolerance 1e-9)\n", rel);
    free(x), free(y), free(c), free(f);
    return rel <= 1e-8 ? 0 : 1;
}
