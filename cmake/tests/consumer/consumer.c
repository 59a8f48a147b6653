/* Downstream C program: 1D type 1 NUFFT through the installed library, checked against the
 * direct sum. Built against the install prefix (CMake package or pkg-config).
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include <farfield.h>

#include <complex.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

int main(void) {
    enum { N = 32, M = 100 };
    const int64_t n[1] = {N};
    double x[M];
    farfield_complex c[M], f[N];
    for (int j = 0; j < M; j++) {
        x[j] = 3.0 * sin(1.3 * j + 0.1);
        c[j] = cos(0.7 * j) + I * sin(0.3 * j);
    }
    farfield_nufft_plan plan = NULL;
    int ier = farfield_nufft_makeplan(1, 1, n, +1, 1, 1e-9, &plan, NULL);
    if (!ier) ier = farfield_nufft_setpts(plan, M, x, NULL, NULL, 0, NULL, NULL, NULL);
    if (!ier) ier = farfield_nufft_execute(plan, c, f);
    farfield_nufft_destroy(plan);
    if (ier) {
        fprintf(stderr, "farfield error %d: %s (%s)\n", ier, farfield_status_string(ier), farfield_last_error_message());
        return 1;
    }
    double num = 0, den = 0;
    for (int k = 0; k < N; k++) {
        double complex s = 0;
        for (int j = 0; j < M; j++) s += c[j] * cexp(I * (k - N / 2) * x[j]);
        num += pow(cabs(f[k] - s), 2);
        den += pow(cabs(s), 2);
    }
    double err = sqrt(num / den);
    printf("consumer (C, farfield %s): rel err %.2e\n", farfield_version(), err);
    return err <= 1e-8 && strcmp(farfield_version(), "") != 0 ? 0 : 1;
}
