/* ABI stability of the versioned structs (docs/design.md §3, CHANGELOG.md): a program compiled
 * against an OLDER header, whose option/info structs are a prefix of today's (fewer trailing
 * fields, smaller sizeof), must keep working with this library: default_opts and get_info /
 * get_params write only the caller's struct_size bytes (guard bytes right after the struct stay
 * untouched), makeplan reads only struct_size bytes (the fields the old struct lacks take
 * their defaults, the guard bytes after it are never read: they hold values makeplan would
 * refuse), and the results equal those of a full-size caller. Also a NEWER, larger caller
 * struct, and the error cases (size 0, a size ending inside a field, NULL). Runs under
 * valgrind (CMakeLists.txt), which reports any read or write past a caller's struct.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include "ff_test.h"

#include <stddef.h>

enum { GUARD = 32 };
#define GUARD_BYTE 0xA5

/* Every older struct below is a valid earlier version: a prefix of today's fields with no
 * padding (as every version of a versioned struct is), so sizeof ends at a field boundary. */
typedef struct {
    size_t struct_size;
    int32_t modeord, debug, nthreads, kernel;
    double upsampfac;
    int32_t fftw, spread_max_subprob_size;
} old_nufft_opts; /* without backend, points_by_reference, gpu_method, gpu_spread_reuse_hint, gpu_stream */

typedef struct {
    size_t struct_size;
    int32_t modeord, debug, nthreads, kernel;
    double upsampfac;
    int32_t fftw, spread_max_subprob_size, backend, points_by_reference, gpu_method, gpu_spread_reuse_hint;
} v100_nufft_opts; /* the 1.0.0 header's struct (56 bytes): without gpu_stream */

typedef struct {
    size_t struct_size;
    int64_t nf[3];
    int32_t kernel_width, nthreads;
    double upsampfac, kernel_param, tol_used;
} old_nufft_info; /* without warnings, backend */

typedef struct {
    size_t struct_size;
    int32_t nthreads, debug, fftw, check_input;
} old_poisson_opts; /* without vico_factor */

typedef struct {
    size_t struct_size;
    int32_t nthreads, debug, fftw, order_or_support;
    double xi, rc;
} old_ewald_opts; /* without grid */

typedef struct {
    size_t struct_size;
    int32_t nthreads, debug, fftw, order_or_support;
    double xi, rc;
    int64_t grid[3];
} v120_ewald_opts; /* the 1.2.0 header's struct (64 bytes): without backend … gpu_stream */

typedef struct {
    size_t struct_size;
    double xi, rc;
    int64_t grid[3];
    int32_t order_or_support, method;
} old_ewald_params; /* without eta, kc, est_rel_err, real_s, kspace_s */

typedef struct {
    size_t struct_size;
    int32_t nthreads, debug, order, depth;
} old_fmm_opts; /* without backend, reserved */

typedef struct {
    size_t struct_size;
    int32_t nthreads, debug, order, depth, backend, reserved;
} v110_fmm_opts; /* the 1.1.0 header's struct (32 bytes): without gpu_stream */

typedef struct {
    size_t struct_size;
    int32_t order, depth;
    int64_t nleaves, npoints;
    double t[10];
} old_fmm_params; /* without tol_clamped, nthreads */

/* An old struct followed by guard bytes (the struct has no tail padding: the guard follows
 * it directly, checked below). */
#define GUARDED(T)                        \
    struct {                              \
        T s;                              \
        unsigned char guard[GUARD];       \
    }

typedef GUARDED(old_nufft_opts) guarded_nufft_opts;
typedef GUARDED(v100_nufft_opts) guarded_v100_nufft_opts;
typedef GUARDED(old_nufft_info) guarded_nufft_info;
typedef GUARDED(old_poisson_opts) guarded_poisson_opts;
typedef GUARDED(old_ewald_opts) guarded_ewald_opts;
typedef GUARDED(old_ewald_params) guarded_ewald_params;
typedef GUARDED(old_fmm_opts) guarded_fmm_opts;
typedef GUARDED(old_fmm_params) guarded_fmm_params;

static int guard_intact(const unsigned char *g) {
    for (int i = 0; i < GUARD; i++)
        if (g[i] != GUARD_BYTE) return 0;
    return 1;
}

static int all_bytes(const void *p, size_t n, unsigned char v) {
    const unsigned char *b = (const unsigned char *)p;
    for (size_t i = 0; i < n; i++)
        if (b[i] != v) return 0;
    return 1;
}

/* A newer, larger caller struct: today's fields and two the library does not know. */
typedef struct {
    farfield_nufft_opts o;
    double future_a;
    int64_t future_b;
} new_nufft_opts;
typedef struct {
    farfield_nufft_info i;
    double future_a;
} new_nufft_info;

static void test_layouts_are_prefixes(void) {
    /* the old structs are what the older headers had: the same offsets as today's fields */
    EXPECT(sizeof(old_nufft_opts) == offsetof(farfield_nufft_opts, backend));
    EXPECT(offsetof(old_nufft_opts, upsampfac) == offsetof(farfield_nufft_opts, upsampfac));
    EXPECT(offsetof(old_nufft_opts, spread_max_subprob_size) == offsetof(farfield_nufft_opts, spread_max_subprob_size));
    EXPECT(sizeof(old_nufft_info) == offsetof(farfield_nufft_info, warnings));
    EXPECT(offsetof(old_nufft_info, tol_used) == offsetof(farfield_nufft_info, tol_used));
    EXPECT(sizeof(old_poisson_opts) == offsetof(farfield_poisson_opts, vico_factor));
    EXPECT(sizeof(old_ewald_opts) == offsetof(farfield_ewald_opts, grid));
    EXPECT(sizeof(old_ewald_params) == offsetof(farfield_ewald_params, eta));
    EXPECT(sizeof(old_fmm_opts) == offsetof(farfield_fmm_opts, backend));
    EXPECT(sizeof(old_fmm_params) == offsetof(farfield_fmm_params, tol_clamped));
    EXPECT(offsetof(guarded_nufft_opts, guard) == sizeof(old_nufft_opts));
    EXPECT(sizeof(v100_nufft_opts) == 56 && sizeof(v100_nufft_opts) == offsetof(farfield_nufft_opts, gpu_stream));
    EXPECT(sizeof(v110_fmm_opts) == 32 && sizeof(v110_fmm_opts) == offsetof(farfield_fmm_opts, gpu_stream));
    EXPECT(sizeof(v120_ewald_opts) == 64 && sizeof(v120_ewald_opts) == offsetof(farfield_ewald_opts, backend));
    EXPECT(offsetof(v100_nufft_opts, gpu_spread_reuse_hint) == offsetof(farfield_nufft_opts, gpu_spread_reuse_hint));
    EXPECT(offsetof(guarded_v100_nufft_opts, guard) == sizeof(v100_nufft_opts));
    EXPECT(offsetof(guarded_nufft_info, guard) == sizeof(old_nufft_info));
    EXPECT(offsetof(guarded_fmm_params, guard) == sizeof(old_fmm_params));
}

/* Type 1 in 2D with the given opts (NULL = defaults); c, f: outputs of ntrans = 1. */
enum { M = 64, N1 = 16, N2 = 12 };
static int run_nufft(const void *opts, double *f) {
    const int64_t n[2] = {N1, N2};
    double x[M], y[M], c[2 * M];
    ff_rng r = {11};
    for (int j = 0; j < M; j++) {
        x[j] = ff_range(&r, -FF_PI, FF_PI);
        y[j] = ff_range(&r, -FF_PI, FF_PI);
        c[2 * j] = ff_range(&r, -1, 1);
        c[2 * j + 1] = ff_range(&r, -1, 1);
    }
    farfield_nufft_plan p = NULL;
    int s = farfield_nufft_makeplan(1, 2, n, +1, 1, 1e-9, &p, (const farfield_nufft_opts *)opts);
    if (s != FARFIELD_OK) return s;
    EXPECT_STATUS(farfield_nufft_setpts(p, M, x, y, NULL, 0, NULL, NULL, NULL), FARFIELD_OK);
    EXPECT_STATUS(farfield_nufft_execute(p, (farfield_complex *)c, (farfield_complex *)f), FARFIELD_OK);
    double ref[2 * N1 * N2];
    ff_direct(1, 2, n, +1, 0, 1, M, x, y, NULL, c, ref);
    EXPECT(ff_rel_err_d(f, ref, N1 * N2) <= 1e-8);
    EXPECT_STATUS(farfield_nufft_destroy(p), FARFIELD_OK);
    return FARFIELD_OK;
}

static void test_nufft_old_caller(void) {
    /* the full-size (today's) caller: the reference */
    farfield_nufft_opts full;
    EXPECT_STATUS(farfield_nufft_default_opts(&full, sizeof full), FARFIELD_OK);
    full.nthreads = 1;
    double f_full[2 * N1 * N2], f_old[2 * N1 * N2];
    EXPECT_STATUS(run_nufft(&full, f_full), FARFIELD_OK);

    /* the old caller: default_opts writes its 40 bytes only */
    guarded_nufft_opts g;
    memset(&g, GUARD_BYTE, sizeof g);
    EXPECT_STATUS(farfield_nufft_default_opts((farfield_nufft_opts *)&g.s, sizeof g.s), FARFIELD_OK);
    EXPECT(guard_intact(g.guard));
    EXPECT(g.s.struct_size == sizeof g.s);
    EXPECT(g.s.modeord == 0 && g.s.debug == 0 && g.s.nthreads == 0 && g.s.kernel == FARFIELD_KERNEL_ES);
    EXPECT(g.s.upsampfac == 0.0 && g.s.fftw == 64 && g.s.spread_max_subprob_size == 0);
    /* makeplan reads 40 bytes: the guard (backend = 0xA5A5A5A5, refused if it were read) is
     * not read; the missing fields take their defaults, so the result is the full caller's */
    g.s.nthreads = 1;
    EXPECT_STATUS(run_nufft(&g.s, f_old), FARFIELD_OK);
    EXPECT(memcmp(f_old, f_full, sizeof f_full) == 0);
    EXPECT(guard_intact(g.guard));

    /* a 1.0.0 caller (56 bytes, no gpu_stream): the guard where gpu_stream would be is not
     * read (as a non-NULL stream it would be refused by the CPU plan) */
    guarded_v100_nufft_opts g1;
    memset(&g1, GUARD_BYTE, sizeof g1);
    EXPECT_STATUS(farfield_nufft_default_opts((farfield_nufft_opts *)&g1.s, sizeof g1.s), FARFIELD_OK);
    EXPECT(guard_intact(g1.guard) && g1.s.struct_size == 56 && g1.s.backend == FARFIELD_BACKEND_AUTO);
    EXPECT(g1.s.gpu_method == 0 && g1.s.gpu_spread_reuse_hint == 0 && g1.s.points_by_reference == 0);
    g1.s.nthreads = 1;
    EXPECT_STATUS(run_nufft(&g1.s, f_old), FARFIELD_OK);
    EXPECT(memcmp(f_old, f_full, sizeof f_full) == 0);
    EXPECT(guard_intact(g1.guard));
    /* today's caller with a stream on the CPU backend: refused, naming the field */
    farfield_nufft_opts ws = full;
    ws.gpu_stream = (void *)&ws; /* never used as a stream: refused first */
    EXPECT_STATUS(run_nufft(&ws, f_old), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "opts.gpu_stream") != NULL);
    EXPECT(full.gpu_stream == NULL);

    /* get_info into an old, smaller info struct */
    const int64_t n[2] = {N1, N2};
    farfield_nufft_plan p = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(1, 2, n, +1, 1, 1e-9, &p, &full), FARFIELD_OK);
    farfield_nufft_info info = {.struct_size = sizeof(farfield_nufft_info)};
    EXPECT_STATUS(farfield_nufft_get_info(p, &info), FARFIELD_OK);
    EXPECT(info.struct_size == sizeof info && info.backend == FARFIELD_BACKEND_CPU);
    guarded_nufft_info gi;
    memset(&gi, GUARD_BYTE, sizeof gi);
    gi.s.struct_size = sizeof gi.s;
    EXPECT_STATUS(farfield_nufft_get_info(p, (farfield_nufft_info *)&gi.s), FARFIELD_OK);
    EXPECT(guard_intact(gi.guard));
    EXPECT(gi.s.struct_size == sizeof gi.s);
    EXPECT(gi.s.nf[0] == info.nf[0] && gi.s.nf[1] == info.nf[1] && gi.s.nf[2] == info.nf[2]);
    EXPECT(gi.s.kernel_width == info.kernel_width && gi.s.nthreads == info.nthreads);
    EXPECT(gi.s.upsampfac == info.upsampfac && gi.s.kernel_param == info.kernel_param && gi.s.tol_used == 1e-9);
    /* single precision: the same structs */
    farfield_nufftf_plan pf = NULL;
    EXPECT_STATUS(farfield_nufftf_makeplan(1, 2, n, +1, 1, 1e-5f, &pf, (farfield_nufft_opts *)&g.s), FARFIELD_OK);
    memset(&gi, GUARD_BYTE, sizeof gi);
    gi.s.struct_size = sizeof gi.s;
    EXPECT_STATUS(farfield_nufftf_get_info(pf, (farfield_nufft_info *)&gi.s), FARFIELD_OK);
    EXPECT(guard_intact(gi.guard) && gi.s.kernel_width > 0);
    EXPECT_STATUS(farfield_nufftf_destroy(pf), FARFIELD_OK);

    /* a newer, larger caller: the library writes what it knows and says how much */
    new_nufft_opts nw;
    memset(&nw, GUARD_BYTE, sizeof nw);
    EXPECT_STATUS(farfield_nufft_default_opts(&nw.o, sizeof nw), FARFIELD_OK);
    EXPECT(nw.o.struct_size == sizeof(farfield_nufft_opts));
    EXPECT(all_bytes(&nw.future_a, sizeof nw - offsetof(new_nufft_opts, future_a), GUARD_BYTE));
    nw.o.nthreads = 1;
    nw.o.struct_size = sizeof nw; /* a newer program's makeplan call: the unknown tail is ignored */
    EXPECT_STATUS(run_nufft(&nw.o, f_old), FARFIELD_OK);
    EXPECT(memcmp(f_old, f_full, sizeof f_full) == 0);
    new_nufft_info ni;
    memset(&ni, GUARD_BYTE, sizeof ni);
    ni.i.struct_size = sizeof ni;
    EXPECT_STATUS(farfield_nufft_get_info(p, &ni.i), FARFIELD_OK);
    EXPECT(ni.i.struct_size == sizeof(farfield_nufft_info) && ni.i.backend == FARFIELD_BACKEND_CPU);
    EXPECT(all_bytes(&ni.future_a, sizeof ni.future_a, GUARD_BYTE));

    /* errors: size 0, below the struct_size field, ending inside a field, NULL; nothing written */
    const size_t bad[] = {0, 4, 7, 30, offsetof(farfield_nufft_opts, upsampfac) + 4, offsetof(farfield_nufft_opts, gpu_stream) + 4};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        memset(&g, GUARD_BYTE, sizeof g);
        EXPECT_STATUS(farfield_nufft_default_opts((farfield_nufft_opts *)&g.s, bad[k]), FARFIELD_ERR_INVALID_ARG);
        EXPECT(strstr(farfield_last_error_message(), "sizeof") != NULL);
        EXPECT(all_bytes(&g, sizeof g, GUARD_BYTE));
    }
    EXPECT_STATUS(farfield_nufft_default_opts(NULL, sizeof full), FARFIELD_ERR_NULL_POINTER);
    /* makeplan with struct_size never set (a zero-initialised struct) or cutting a field */
    farfield_nufft_opts zero;
    memset(&zero, 0, sizeof zero);
    farfield_nufft_plan q = (farfield_nufft_plan)&zero; /* must be reset to NULL */
    EXPECT_STATUS(farfield_nufft_makeplan(1, 2, n, +1, 1, 1e-6, &q, &zero), FARFIELD_ERR_INVALID_ARG);
    EXPECT(q == NULL && strstr(farfield_last_error_message(), "struct_size") != NULL);
    zero.struct_size = 26;
    EXPECT_STATUS(farfield_nufft_makeplan(1, 2, n, +1, 1, 1e-6, &q, &zero), FARFIELD_ERR_INVALID_ARG);
    farfield_nufftf_plan qf = NULL;
    EXPECT_STATUS(farfield_nufftf_makeplan(1, 2, n, +1, 1, 1e-5f, &qf, &zero), FARFIELD_ERR_INVALID_ARG);
    EXPECT(qf == NULL);
    /* get_info: struct_size not set, or cutting a field; nothing written */
    for (size_t k = 0; k < 3; k++) {
        const size_t sz[] = {0, 5, offsetof(farfield_nufft_info, tol_used) + 2};
        memset(&gi, GUARD_BYTE, sizeof gi);
        gi.s.struct_size = sz[k];
        EXPECT_STATUS(farfield_nufft_get_info(p, (farfield_nufft_info *)&gi.s), FARFIELD_ERR_INVALID_ARG);
        EXPECT(strstr(farfield_last_error_message(), "sizeof") != NULL);
        EXPECT(gi.s.struct_size == sz[k] && all_bytes(gi.s.nf, sizeof gi - sizeof(size_t), GUARD_BYTE));
    }
    EXPECT_STATUS(farfield_nufft_get_info(p, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_nufft_destroy(p), FARFIELD_OK);
}

static void test_poisson_old_caller(void) {
    const int64_t n[3] = {6, 5, 4};
    const double h[3] = {0.2, 0.25, 0.3};
    double rho[120], phi_full[120], phi_old[120];
    for (int i = 0; i < 120; i++) rho[i] = sin(0.37 * i);
    farfield_poisson_opts full;
    EXPECT_STATUS(farfield_poisson_default_opts(&full, sizeof full), FARFIELD_OK);
    full.nthreads = 1;
    farfield_poisson_plan p = NULL;
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO, 3, n, h, &p, &full), FARFIELD_OK);
    EXPECT_STATUS(farfield_poisson_execute(p, rho, phi_full, NULL, NULL), FARFIELD_OK);
    farfield_poisson_destroy(p);

    guarded_poisson_opts g;
    memset(&g, GUARD_BYTE, sizeof g);
    EXPECT_STATUS(farfield_poisson_default_opts((farfield_poisson_opts *)&g.s, sizeof g.s), FARFIELD_OK);
    EXPECT(guard_intact(g.guard) && g.s.struct_size == sizeof g.s && g.s.fftw == 64 && g.s.check_input == 1);
    g.s.nthreads = 1;
    /* vico_factor would read as a huge double from the guard bytes and be refused */
    EXPECT_STATUS(farfield_poisson_makeplan(FARFIELD_POISSON_VICO, 3, n, h, &p, (farfield_poisson_opts *)&g.s), FARFIELD_OK);
    EXPECT_STATUS(farfield_poisson_execute(p, rho, phi_old, NULL, NULL), FARFIELD_OK);
    EXPECT(memcmp(phi_old, phi_full, sizeof phi_full) == 0);
    farfield_poisson_destroy(p);
    EXPECT(guard_intact(g.guard));
    int64_t pb = 0;
    EXPECT_STATUS(farfield_poisson_estimate(FARFIELD_POISSON_VICO, 3, n, h, (farfield_poisson_opts *)&g.s, NULL, &pb, NULL, NULL),
                  FARFIELD_OK);
    EXPECT(pb > 0);
    EXPECT_STATUS(farfield_poisson_default_opts((farfield_poisson_opts *)&g.s, 14), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_poisson_default_opts(NULL, sizeof full), FARFIELD_ERR_NULL_POINTER);
}

static void test_ewald_old_caller(void) {
    enum { NQ = 16 };
    const double box[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2};
    double xyz[3 * NQ], q[NQ], phi_full[NQ], phi_old[NQ];
    ff_rng r = {5};
    for (int i = 0; i < 3 * NQ; i++) xyz[i] = ff_range(&r, 0, 2);
    for (int i = 0; i < NQ; i++) q[i] = i % 2 ? -1.0 : 1.0;
    farfield_ewald_opts full;
    EXPECT_STATUS(farfield_ewald_default_opts(&full, sizeof full), FARFIELD_OK);
    full.nthreads = 1;
    farfield_ewald_plan p = NULL;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, NQ, 1e-6, &p, &full), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_execute(p, NQ, xyz, q, phi_full, NULL, NULL, NULL), FARFIELD_OK);
    farfield_ewald_params prm = {.struct_size = sizeof(farfield_ewald_params)};
    EXPECT_STATUS(farfield_ewald_get_params(p, &prm), FARFIELD_OK);
    farfield_ewald_destroy(p);

    guarded_ewald_opts g;
    memset(&g, GUARD_BYTE, sizeof g);
    EXPECT_STATUS(farfield_ewald_default_opts((farfield_ewald_opts *)&g.s, sizeof g.s), FARFIELD_OK);
    EXPECT(guard_intact(g.guard) && g.s.struct_size == sizeof g.s && g.s.fftw == 64 && g.s.xi == 0.0);
    g.s.nthreads = 1;
    /* grid[] would read as negative numbers from the guard bytes and be refused */
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, NQ, 1e-6, &p, (farfield_ewald_opts *)&g.s), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_execute(p, NQ, xyz, q, phi_old, NULL, NULL, NULL), FARFIELD_OK);
    EXPECT(memcmp(phi_old, phi_full, sizeof phi_full) == 0);
    guarded_ewald_params gp;
    memset(&gp, GUARD_BYTE, sizeof gp);
    gp.s.struct_size = sizeof gp.s;
    EXPECT_STATUS(farfield_ewald_get_params(p, (farfield_ewald_params *)&gp.s), FARFIELD_OK);
    EXPECT(guard_intact(gp.guard) && gp.s.struct_size == sizeof gp.s);
    EXPECT(gp.s.xi == prm.xi && gp.s.rc == prm.rc && gp.s.grid[0] == prm.grid[0] && gp.s.method == FARFIELD_EWALD_SPME);
    gp.s.struct_size = 0;
    EXPECT_STATUS(farfield_ewald_get_params(p, (farfield_ewald_params *)&gp.s), FARFIELD_ERR_INVALID_ARG);
    farfield_ewald_destroy(p);
    /* a 1.2.0 caller (64 bytes, no backend … gpu_stream): the guard where they would be is not
       read (backend 0xA5A5A5A5 and a non-NULL stream would be refused) */
    GUARDED(v120_ewald_opts) g120;
    memset(&g120, GUARD_BYTE, sizeof g120);
    EXPECT_STATUS(farfield_ewald_default_opts((farfield_ewald_opts *)&g120.s, sizeof g120.s), FARFIELD_OK);
    EXPECT(guard_intact(g120.guard) && g120.s.struct_size == 64 && g120.s.grid[0] == 0 && g120.s.fftw == 64);
    g120.s.nthreads = 1;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, NQ, 1e-6, &p, (farfield_ewald_opts *)&g120.s), FARFIELD_OK);
    EXPECT_STATUS(farfield_ewald_execute(p, NQ, xyz, q, phi_old, NULL, NULL, NULL), FARFIELD_OK);
    EXPECT(memcmp(phi_old, phi_full, sizeof phi_full) == 0);
    /* device execution of a CPU plan */
    EXPECT_STATUS(farfield_ewald_execute_device(p, NQ, xyz, q, phi_old, NULL, NULL, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "CUDA") != NULL);
    farfield_ewald_destroy(p);
    /* a stream on a CPU plan; terms outside ALL, KSPACE, REAL */
    full.gpu_stream = (void *)&full;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, NQ, 1e-6, &p, &full), FARFIELD_ERR_INVALID_ARG);
    EXPECT(p == NULL && strstr(farfield_last_error_message(), "gpu_stream") != NULL);
    full.gpu_stream = NULL;
    full.terms = 3;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, NQ, 1e-6, &p, &full), FARFIELD_ERR_INVALID_ARG);
    EXPECT(p == NULL && strstr(farfield_last_error_message(), "opts.terms") != NULL);
    EXPECT_STATUS(farfield_ewald_default_opts((farfield_ewald_opts *)&g.s, 44), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_ewald_default_opts(NULL, sizeof full), FARFIELD_ERR_NULL_POINTER);
}

static void test_fmm_old_caller(void) {
    enum { NP = 200 };
    double xyz[3 * NP], q[NP], phi_full[NP], phi_old[NP];
    ff_rng r = {9};
    for (int i = 0; i < 3 * NP; i++) xyz[i] = ff_range(&r, -1, 1);
    for (int i = 0; i < NP; i++) q[i] = ff_range(&r, -1, 1);
    farfield_fmm_opts full;
    EXPECT_STATUS(farfield_fmm_default_opts(&full, sizeof full), FARFIELD_OK);
    full.nthreads = 1;
    farfield_fmm_plan p = NULL;
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, &p, &full), FARFIELD_OK);
    EXPECT_STATUS(farfield_fmm_execute(p, NP, xyz, q, phi_full, NULL, NULL), FARFIELD_OK);
    farfield_fmm_params prm = {.struct_size = sizeof(farfield_fmm_params)};
    EXPECT_STATUS(farfield_fmm_get_params(p, &prm), FARFIELD_OK);
    farfield_fmm_destroy(p);

    guarded_fmm_opts g;
    memset(&g, GUARD_BYTE, sizeof g);
    EXPECT_STATUS(farfield_fmm_default_opts((farfield_fmm_opts *)&g.s, sizeof g.s), FARFIELD_OK);
    EXPECT(guard_intact(g.guard) && g.s.struct_size == sizeof g.s && g.s.depth == -1 && g.s.order == 0);
    g.s.nthreads = 1;
    /* backend and reserved would read as 0xA5A5A5A5 from the guard bytes and be refused */
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, &p, (farfield_fmm_opts *)&g.s), FARFIELD_OK);
    EXPECT_STATUS(farfield_fmm_execute(p, NP, xyz, q, phi_old, NULL, NULL), FARFIELD_OK);
    EXPECT(memcmp(phi_old, phi_full, sizeof phi_full) == 0);
    guarded_fmm_params gp;
    memset(&gp, GUARD_BYTE, sizeof gp);
    gp.s.struct_size = sizeof gp.s;
    EXPECT_STATUS(farfield_fmm_get_params(p, (farfield_fmm_params *)&gp.s), FARFIELD_OK);
    EXPECT(guard_intact(gp.guard) && gp.s.struct_size == sizeof gp.s);
    EXPECT(gp.s.order == prm.order && gp.s.depth == prm.depth && gp.s.npoints == NP && gp.s.nleaves == prm.nleaves);
    gp.s.struct_size = 10;
    EXPECT_STATUS(farfield_fmm_get_params(p, (farfield_fmm_params *)&gp.s), FARFIELD_ERR_INVALID_ARG);
    farfield_fmm_destroy(p);
    EXPECT_STATUS(farfield_fmm_default_opts((farfield_fmm_opts *)&g.s, 0), FARFIELD_ERR_INVALID_ARG);
    EXPECT_STATUS(farfield_fmm_default_opts(NULL, sizeof full), FARFIELD_ERR_NULL_POINTER);
    /* a 1.1.0 caller (32 bytes, no gpu_stream): the guard where gpu_stream would be is not
       read (it would be a non-NULL stream, refused on a CPU plan) */
    GUARDED(v110_fmm_opts) g110;
    memset(&g110, GUARD_BYTE, sizeof g110);
    EXPECT_STATUS(farfield_fmm_default_opts((farfield_fmm_opts *)&g110.s, sizeof g110.s), FARFIELD_OK);
    EXPECT(guard_intact(g110.guard) && g110.s.struct_size == 32 && g110.s.backend == FARFIELD_FMM_BACKEND_AUTO);
    g110.s.nthreads = 1;
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, &p, (farfield_fmm_opts *)&g110.s), FARFIELD_OK);
    EXPECT_STATUS(farfield_fmm_execute(p, NP, xyz, q, phi_old, NULL, NULL), FARFIELD_OK);
    EXPECT(memcmp(phi_old, phi_full, sizeof phi_full) == 0);
    farfield_fmm_destroy(p);
    /* a stream on a CPU plan, and device execution of a CPU plan */
    full.gpu_stream = (void *)&full;
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, &p, &full), FARFIELD_ERR_INVALID_ARG);
    EXPECT(p == NULL && strstr(farfield_last_error_message(), "gpu_stream") != NULL);
    full.gpu_stream = NULL;
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, &p, &full), FARFIELD_OK);
    EXPECT_STATUS(farfield_fmm_execute_device(p, NP, xyz, q, phi_old, NULL, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "CUDA") != NULL);
    farfield_fmm_destroy(p);
    /* max_leaf (the 1.2.0 header's `reserved`, which had to be 0 = still the default):
       below −1 refused; the adaptive tree only with open boundaries; with it, the same
       potentials as the default plan to the tolerance */
    full.max_leaf = -2;
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, &p, &full), FARFIELD_ERR_INVALID_ARG);
    EXPECT(p == NULL && strstr(farfield_last_error_message(), "max_leaf") != NULL);
    full.max_leaf = 8;
    const double cube[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2};
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_PERIODIC, cube, 1e-6, &p, &full), FARFIELD_ERR_INVALID_ARG);
    EXPECT(p == NULL);
    EXPECT_STATUS(farfield_fmm_makeplan(FARFIELD_FMM_OPEN, NULL, 1e-6, &p, &full), FARFIELD_OK);
    EXPECT_STATUS(farfield_fmm_execute(p, NP, xyz, q, phi_old, NULL, NULL), FARFIELD_OK);
    double num = 0, den = 0;
    for (int i = 0; i < NP; i++) {
        num += (phi_old[i] - phi_full[i]) * (phi_old[i] - phi_full[i]);
        den += phi_full[i] * phi_full[i];
    }
    EXPECT(sqrt(num / den) <= 2e-6);
    farfield_fmm_destroy(p);
}

int main(void) {
    test_layouts_are_prefixes();
    test_nufft_old_caller();
    test_poisson_old_caller();
    test_ewald_old_caller();
    test_fmm_old_caller();
    return ff_finish("c_abi");
}
