/* Shared helpers of the C tests: a tiny check harness, a deterministic random generator,
 * and direct (exact) NUFFT sums to compare against.
 * SPDX-License-Identifier: MIT OR Apache-2.0
 *
 * Direct sums (FINUFFT convention, sign s = +1 if iflag >= 0 else -1, modes x fastest):
 *   type 1:  f[k1,k2,k3] = sum_j c_j exp(s i (k1 x_j + k2 y_j + k3 z_j))
 *   type 2:  c_j         = sum_k f[k1,k2,k3] exp(s i (k1 x_j + k2 y_j + k3 z_j))
 * with k = -N/2 ... (N-1)/2 along each axis (modeord 0) or FFT order (modeord 1). */
#ifndef FF_TEST_H
#define FF_TEST_H

#include "farfield.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int ff_failures = 0;

#define EXPECT(cond)                                                                     \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);     \
            ff_failures++;                                                               \
        }                                                                                \
    } while (0)

/* EXPECT with a printf-style message (the values behind a failure). */
#define EXPECT_MSG(cond, ...)                                                            \
    do {                                                                                 \
        if (!(cond)) {                                                                   \
            fprintf(stderr, "%s:%d: check failed: %s: ", __FILE__, __LINE__, #cond);     \
            fprintf(stderr, __VA_ARGS__);                                                \
            fprintf(stderr, "\n");                                                      \
            ff_failures++;                                                               \
        }                                                                                \
    } while (0)

/* Expects status `got` == `want`; prints both (and the last error message) otherwise. */
#define EXPECT_STATUS(got, want)                                                         \
    do {                                                                                 \
        int ff_g_ = (got), ff_w_ = (want);                                               \
        if (ff_g_ != ff_w_) {                                                            \
            fprintf(stderr, "%s:%d: %s returned %d (%s), expected %d (%s); last error: %s\n", \
                    __FILE__, __LINE__, #got, ff_g_, farfield_status_string(ff_g_), ff_w_, \
                    farfield_status_string(ff_w_), farfield_last_error_message());       \
            ff_failures++;                                                               \
        }                                                                                \
    } while (0)

static inline int ff_finish(const char *name) {
    if (ff_failures) {
        fprintf(stderr, "%s: %d check(s) FAILED\n", name, ff_failures);
        return EXIT_FAILURE;
    }
    printf("%s: all checks passed\n", name);
    return EXIT_SUCCESS;
}

/* Makes a NUFFT plan (type, dim, modes n; nthreads = 1) in double precision at `tol` or, with
 * `single`, in single precision at `tolf`, and expects status `want` with the handle left NULL
 * (a plan made anyway is destroyed). */
static inline void ff_expect_nufft_makeplan(int single, int type, int dim, const int64_t *n, double tol, float tolf,
                                            int want) {
    farfield_nufft_opts o;
    farfield_nufft_default_opts(&o, sizeof o);
    o.nthreads = 1;
    if (single) {
        farfield_nufftf_plan q = NULL;
        EXPECT_STATUS(farfield_nufftf_makeplan(type, dim, n, 1, 1, tolf, &q, &o), want);
        EXPECT(q == NULL);
        farfield_nufftf_destroy(q);
    } else {
        farfield_nufft_plan q = NULL;
        EXPECT_STATUS(farfield_nufft_makeplan(type, dim, n, 1, 1, tol, &q, &o), want);
        EXPECT(q == NULL);
        farfield_nufft_destroy(q);
    }
}

/* ---- deterministic random numbers (64-bit LCG + xorshift output) ---------------------- */
/* Relative RMS difference of a from b (len values): sqrt(sum (a-b)^2 / sum b^2). */
static inline double rel_rms(const double *a, const double *b, size_t len) {
    double num = 0.0, den = 0.0;
    for (size_t i = 0; i < len; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return sqrt(num / den);
}

typedef struct { uint64_t s; } ff_rng;
static inline double ff_uniform(ff_rng *r) { /* in [0, 1) */
    r->s = r->s * 6364136223846793005ULL + 1442695040888963407ULL;
    uint64_t v = r->s ^ (r->s >> 29);
    return (double)(v >> 11) * (1.0 / 9007199254740992.0);
}
/* In [a, b). */
static inline double ff_range(ff_rng *r, double a, double b) { return a + (b - a) * ff_uniform(r); }

#define FF_PI 3.14159265358979323846

/* Mode number of output index i of an axis with n modes. */
static inline int64_t ff_mode(int64_t i, int64_t n, int modeord) {
    if (modeord == 1) return i <= (n - 1) / 2 ? i : i - n;
    return i - n / 2;
}

/* Direct sum in double precision. Complex numbers are interleaved (re, im) doubles so that the
 * same routine serves the float tests (after widening). n_in holds `dim` mode counts; x, y, z of
 * unused axes may be NULL. `ntrans` stacked vectors: c[t*M + j], f[t*N + k]. */
static inline void ff_direct(int type, int dim, const int64_t *n_in, int iflag, int modeord, int ntrans,
                             int64_t m, const double *x, const double *y, const double *z,
                             double *c, double *f) {
    int64_t n[3] = {1, 1, 1};
    for (int d = 0; d < dim; d++) n[d] = n_in[d];
    const int64_t ntot = n[0] * n[1] * n[2];
    const double s = iflag >= 0 ? 1.0 : -1.0;
    double *e[3];
    for (int d = 0; d < 3; d++) e[d] = (double *)malloc(2 * sizeof(double) * (size_t)n[d]);
    if (type == 1) memset(f, 0, 2 * sizeof(double) * (size_t)(ntot * ntrans));
    for (int64_t j = 0; j < m; j++) {
        const double *cs[3] = {x, y, z};
        for (int d = 0; d < 3; d++) {
            for (int64_t i = 0; i < n[d]; i++) {
                double ph = d < dim ? s * (double)ff_mode(i, n[d], modeord) * cs[d][j] : 0.0;
                e[d][2 * i] = cos(ph);
                e[d][2 * i + 1] = sin(ph);
            }
        }
        for (int t = 0; t < ntrans; t++) {
            double *cj = c + 2 * (t * m + j);
            double *ft = f + 2 * t * ntot;
            double acc_re = 0.0, acc_im = 0.0;
            for (int64_t i3 = 0; i3 < n[2]; i3++) {
                for (int64_t i2 = 0; i2 < n[1]; i2++) {
                    double a_re = e[1][2 * i2] * e[2][2 * i3] - e[1][2 * i2 + 1] * e[2][2 * i3 + 1];
                    double a_im = e[1][2 * i2] * e[2][2 * i3 + 1] + e[1][2 * i2 + 1] * e[2][2 * i3];
                    for (int64_t i1 = 0; i1 < n[0]; i1++) {
                        double p_re = a_re * e[0][2 * i1] - a_im * e[0][2 * i1 + 1];
                        double p_im = a_re * e[0][2 * i1 + 1] + a_im * e[0][2 * i1];
                        int64_t k = i1 + n[0] * (i2 + n[1] * i3);
                        if (type == 1) {
                            ft[2 * k] += cj[0] * p_re - cj[1] * p_im;
                            ft[2 * k + 1] += cj[0] * p_im + cj[1] * p_re;
                        } else {
                            acc_re += ft[2 * k] * p_re - ft[2 * k + 1] * p_im;
                            acc_im += ft[2 * k] * p_im + ft[2 * k + 1] * p_re;
                        }
                    }
                }
            }
            if (type == 2) {
                cj[0] = acc_re;
                cj[1] = acc_im;
            }
        }
    }
    for (int d = 0; d < 3; d++) free(e[d]);
}

/* Relative l2 error ||a - b|| / ||b|| of len interleaved complex values (a float or double). */
static inline double ff_rel_err_d(const double *a, const double *b, int64_t len) {
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < 2 * len; i++) {
        num += (a[i] - b[i]) * (a[i] - b[i]);
        den += b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}
static inline double ff_rel_err_f(const float *a, const double *b, int64_t len) {
    double num = 0.0, den = 0.0;
    for (int64_t i = 0; i < 2 * len; i++) {
        num += ((double)a[i] - b[i]) * ((double)a[i] - b[i]);
        den += b[i] * b[i];
    }
    return den > 0 ? sqrt(num / den) : sqrt(num);
}

/* ---- isolation: a case in a forked child, under a watchdog and an address-space limit ----
 * ff_isolated(name, fn, arg, extra_as_bytes, timeout_s) runs fn(arg) in a child process.
 *  - timeout_s > 0: the child is killed by SIGALRM after that many seconds (a call that
 *    never returns is reported as a hang);
 *  - extra_as_bytes > 0: the child's address space (RLIMIT_AS) is limited to its current size
 *    plus that many bytes, so every allocation larger than that fails; the library must then
 *    return FARFIELD_ERR_ALLOC, never abort.
 * fn returns the number of failed checks (0 = pass); EXPECTs inside the child count too
 * (the child starts from zero, not from the parent's count). The parent reports a signal (SIGABRT: an
 * abort, e.g. "memory allocation failed"; SIGALRM: a hang; SIGSEGV: a crash) as a failure and
 * returns the child's failures. POSIX only (Linux: the address-space size is read from
 * /proc/self/statm). Under valgrind, run without the limit (valgrind reserves its own space). */
#if defined(__unix__) || defined(__APPLE__)
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static inline size_t ff_address_space_bytes(void) {
    FILE *f = fopen("/proc/self/statm", "r");
    unsigned long pages = 0;
    if (f) {
        if (fscanf(f, "%lu", &pages) != 1) pages = 0;
        fclose(f);
    }
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

static inline int ff_isolated(const char *name, int (*fn)(void *), void *arg, size_t extra_as_bytes,
                              unsigned timeout_s) {
    fflush(stdout);
    fflush(stderr);
    pid_t pid = fork();
    if (pid < 0) {
        fprintf(stderr, "%s: fork failed\n", name);
        return 1;
    }
    if (pid == 0) {
        if (extra_as_bytes > 0) {
            struct rlimit rl;
            rl.rlim_cur = rl.rlim_max = (rlim_t)(ff_address_space_bytes() + extra_as_bytes);
            if (setrlimit(RLIMIT_AS, &rl) != 0) _exit(120);
        }
        if (timeout_s > 0) alarm(timeout_s);
        ff_failures = 0; /* count only this child's failed checks, not the parent's so far */
        int fails = fn(arg);
        if (ff_failures > fails) fails = ff_failures;
        fflush(stdout);
        fflush(stderr);
        _exit(fails > 100 ? 100 : fails);
    }
    int st = 0;
    if (waitpid(pid, &st, 0) < 0) {
        fprintf(stderr, "%s: waitpid failed\n", name);
        return 1;
    }
    if (WIFSIGNALED(st)) {
        int sig = WTERMSIG(st);
        fprintf(stderr, "%s: child killed by signal %d (%s)\n", name, sig,
                sig == SIGALRM ? "hang: watchdog expired" : sig == SIGABRT ? "abort" : "crash");
        return 1;
    }
    int code = WIFEXITED(st) ? WEXITSTATUS(st) : 1;
    if (code == 120) fprintf(stderr, "%s: setrlimit(RLIMIT_AS) failed\n", name);
    if (code != 0) fprintf(stderr, "%s: %d failure(s)\n", name, code);
    return code;
}

/* Runs one isolated case and counts its failures into ff_failures. */
#define FF_ISOLATED(fn, arg, extra_as_bytes, timeout_s) \
    (ff_failures += ff_isolated(#fn, fn, arg, extra_as_bytes, timeout_s))
#endif

#endif /* FF_TEST_H */
