/* The Ewald C API on the CUDA backend (opts.backend = FARFIELD_BACKEND_CUDA, opts.gpu_precision,
 * opts.gpu_method, opts.gpu_stream; farfield_ewald_execute_device).
 *
 * Everywhere: the error paths — GPU options on a CPU plan and bad GPU option values
 * (INVALID_ARG naming the field), FARFIELD_EWALD_DIRECT with CUDA (NOT_SUPPORTED), device
 * execution of a CPU plan (INVALID_ARG, "execute_device needs a CUDA plan", nothing written),
 * and without a device makeplan's NO_DEVICE.
 *
 * With a device (the driver is opened with dlopen, so the test needs no CUDA headers): a small
 * random neutral system with exclusions (bonded-like pairs 0.1 apart) in a triclinic cell,
 * SPME and spectral Ewald, double and mixed precision; the CUDA plan has the CPU plan's
 * parameters, and its host-array execute and its execute_device (device arrays from
 * cuMemAlloc, results read back after synchronising) agree with the CPU plan in energy,
 * potentials, fields and virial; the same on a caller's stream; a set_box on both plans; a
 * non-finite device coordinate (NONFINITE naming the charge) and coincident charges that are not
 * excluded (INVALID_ARG) leave the device outputs untouched.
 *
 * Tolerances. Both backends evaluate the same approximation (the same xi, r_c, grid and
 * order/support from the same rule), so they differ by rounding only:
 * - double precision: sums in a different order, ~1e-15 per operation, grown by the FFT and
 *   the reductions to ~1e-13 at this size; checked at 1e-10 (relative RMS for phi and the
 *   forces q_i E_i, and energy/virial relative to the scale U_s = 1/2 sum |q_i phi_i| of the
 *   terms they are sums of, since a neutral system's U is a sum with cancellation).
 * - mixed precision (f32 grids and FFT, f64 sums): the f32 unit roundoff u = 2^-24 = 6e-8 enters
 *   each grid value (a sum of P^3 = 216 B-spline-weighted charges at order 6, whose rounding
 *   errors add up like sqrt(P^3) u ~ 1e-6 relative in the worst cells, less on average) and
 *   each FFT level (log2 of 16^3 … 32^3 grid points ~ 12–15 levels, ~15 u ~ 1e-6); the k-space
 *   fields inherit ~1e-6 relative, and the k-space part is at most the whole force, so the
 *   relative RMS force difference is ~1e-6. Checked at 1e-5 (a factor 10 for the constants),
 *   the bound tests/gpu_ewald.rs also uses for the k-space part alone.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#define _POSIX_C_SOURCE 200809L
#include "ff_test.h"
#include "ff_cuda.h"

enum { NQ = 300, NPAIR = 50 };

typedef struct {
    double phi[NQ], field[3 * NQ], energy, virial[9];
} result;

/* relative RMS differences of phi, of the forces q_i E_i, and of U and W on the scale U_s */
static double compare(const char *what, const result *g, const result *c, const double *q) {
    static double fg[3 * NQ], fc[3 * NQ];
    double us = 0.0, dw = 0.0;
    for (int i = 0; i < NQ; i++) {
        us += 0.5 * fabs(q[i] * c->phi[i]);
        for (int d = 0; d < 3; d++) {
            fg[3 * i + d] = q[i] * g->field[3 * i + d];
            fc[3 * i + d] = q[i] * c->field[3 * i + d];
        }
    }
    for (int k = 0; k < 9; k++) dw = fmax(dw, fabs(g->virial[k] - c->virial[k]));
    const double e_phi = rel_rms(g->phi, c->phi, NQ), e_f = rel_rms(fg, fc, 3 * NQ);
    const double e_u = fabs(g->energy - c->energy) / us, e_w = dw / us;
    printf("  %-34s phi %.1e  force %.1e  energy %.1e  virial %.1e\n", what, e_phi, e_f, e_u, e_w);
    return fmax(fmax(e_phi, e_f), fmax(e_u, e_w));
}

static void error_paths(void) {
    const double box[9] = {2, 0, 0, 0, 2, 0, 0, 0, 2};
    double xyz[6] = {0.1, 0.2, 0.3, 1.0, 1.1, 1.2}, q[2] = {1, -1}, phi[2] = {7, 7}, u = 7.0;
    farfield_ewald_opts o;
    EXPECT_STATUS(farfield_ewald_default_opts(&o, sizeof o), 0);
    o.nthreads = 1;
    farfield_ewald_plan p = NULL;
    /* GPU options on a CPU plan, bad values: refused naming the field */
    farfield_ewald_opts b = o;
    b.gpu_precision = FARFIELD_EWALD_GPU_MIXED;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 2, 1e-5, &p, &b), FARFIELD_ERR_INVALID_ARG);
    EXPECT(p == NULL && strstr(farfield_last_error_message(), "gpu_precision") != NULL);
    b = o;
    b.backend = FARFIELD_BACKEND_CPU;
    b.gpu_method = FARFIELD_GPU_METHOD_SM;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 2, 1e-5, &p, &b), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "gpu_method") != NULL);
    b = o;
    b.gpu_stream = (void *)&b;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 2, 1e-5, &p, &b), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "gpu_stream") != NULL);
    b = o;
    b.backend = FARFIELD_BACKEND_CUDA;
    b.gpu_precision = 2;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 2, 1e-5, &p, &b), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "gpu_precision") != NULL);
    b.gpu_precision = 0;
    b.gpu_method = 6;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 2, 1e-5, &p, &b), FARFIELD_ERR_INVALID_ARG);
    b.gpu_method = 0;
    b.backend = 3;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 2, 1e-5, &p, &b), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "backend") != NULL);
    /* the direct sum has no CUDA path (with or without a device) */
    b.backend = FARFIELD_BACKEND_CUDA;
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_DIRECT, box, 2, 1e-5, &p, &b), FARFIELD_ERR_NOT_SUPPORTED);
    EXPECT(p == NULL);
    /* device execution of a CPU plan: refused, nothing read or written */
    EXPECT_STATUS(farfield_ewald_makeplan(FARFIELD_EWALD_SPME, box, 2, 1e-5, &p, &o), 0);
    EXPECT_STATUS(farfield_ewald_execute_device(p, 2, xyz, q, phi, NULL, &u, NULL), FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "execute_device needs a CUDA plan") != NULL);
    EXPECT(phi[0] == 7.0 && u == 7.0);
    EXPECT_STATUS(farfield_ewald_execute_device(NULL, 2, xyz, q, phi, NULL, &u, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_ewald_execute_device(p, 3, xyz, q, phi, NULL, &u, NULL), FARFIELD_ERR_NPOINTS);
    EXPECT_STATUS(farfield_ewald_execute_device(p, 2, NULL, q, phi, NULL, &u, NULL), FARFIELD_ERR_NULL_POINTER);
    EXPECT_STATUS(farfield_ewald_execute(p, 2, xyz, q, phi, NULL, &u, NULL), 0);
    EXPECT(u < 0.0);
    farfield_ewald_destroy(p);
}

/* The system: NQ random charges in a triclinic cell at 100 per unit volume (positions spread
 * over the neighbouring cells too), neutral; charge 2k+1 bonded to charge 2k (0.1 apart) and
 * the pair excluded, k < NPAIR. */
static double cell[9], xyz[3 * NQ], q[NQ];
static int64_t pairs[2 * NPAIR];

static void make_system(void) {
    const double l = cbrt(NQ / 100.0);
    const double c[9] = {l, 0, 0, 0.1 * l, 0.95 * l, 0, -0.05 * l, 0.1 * l, 1.05 * l};
    memcpy(cell, c, sizeof cell);
    ff_rng r = {42};
    double qm = 0.0;
    for (int i = 0; i < NQ; i++) {
        const double s[3] = {ff_range(&r, -0.5, 1.5), ff_range(&r, -0.5, 1.5), ff_range(&r, -0.5, 1.5)};
        for (int a = 0; a < 3; a++) xyz[3 * i + a] = s[0] * cell[a] + s[1] * cell[3 + a] + s[2] * cell[6 + a];
        q[i] = ff_range(&r, -1, 1);
        qm += q[i] / NQ;
    }
    for (int i = 0; i < NQ; i++) q[i] -= qm;
    for (int k = 0; k < NPAIR; k++) {
        for (int a = 0; a < 3; a++) xyz[3 * (2 * k + 1) + a] = xyz[3 * (2 * k) + a] + (a == k % 3 ? 0.1 : 0.0);
        pairs[2 * k] = 2 * k;
        pairs[2 * k + 1] = 2 * k + 1;
    }
}

static farfield_ewald_plan plan_for(int method, int backend, int precision, double tol, void *stream) {
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o, sizeof o);
    o.nthreads = 2;
    o.backend = backend;
    o.gpu_precision = precision;
    o.gpu_stream = stream;
    farfield_ewald_plan p = NULL;
    EXPECT_STATUS(farfield_ewald_makeplan(method, cell, NQ, tol, &p, &o), 0);
    if (p) EXPECT_STATUS(farfield_ewald_set_exclusions(p, NPAIR, pairs), 0);
    return p;
}

static void host_run(farfield_ewald_plan p, result *r) {
    EXPECT_STATUS(farfield_ewald_execute(p, NQ, xyz, q, r->phi, r->field, &r->energy, r->virial), 0);
}

/* execute_device with device copies of xyz and q, the outputs read back after synchronising
 * the plan's stream (`stream`, NULL = the default stream: the whole context). */
static void device_run(ff_cuda *cu, farfield_ewald_plan p, void *stream, result *r) {
    ff_cu_ptr dx = ff_cuda_upload(cu, xyz, sizeof xyz), dq = ff_cuda_upload(cu, q, sizeof q), dp = 0, df = 0;
    EXPECT(dx && dq && cu->mem_alloc(&dp, sizeof r->phi) == 0 && cu->mem_alloc(&df, sizeof r->field) == 0);
    EXPECT_STATUS(farfield_ewald_execute_device(p, NQ, FF_DEV(dx), FF_DEV(dq), FF_DEV(dp), FF_DEV(df), &r->energy, r->virial), 0);
    EXPECT((stream ? cu->stream_sync(stream) : cu->ctx_sync()) == 0);
    EXPECT(cu->dtoh(r->phi, dp, sizeof r->phi) == 0 && cu->dtoh(r->field, df, sizeof r->field) == 0);
    cu->mem_free(dx);
    cu->mem_free(dq);
    cu->mem_free(dp);
    cu->mem_free(df);
}

static void same_params(farfield_ewald_plan g, farfield_ewald_plan c) {
    farfield_ewald_params pg = {.struct_size = sizeof pg}, pc = {.struct_size = sizeof pc};
    EXPECT_STATUS(farfield_ewald_get_params(g, &pg), 0);
    EXPECT_STATUS(farfield_ewald_get_params(c, &pc), 0);
    EXPECT(pg.xi == pc.xi && pg.rc == pc.rc && pg.order_or_support == pc.order_or_support && pg.method == pc.method);
    EXPECT(pg.grid[0] == pc.grid[0] && pg.grid[1] == pc.grid[1] && pg.grid[2] == pc.grid[2]);
    EXPECT(pg.est_rel_err == pc.est_rel_err && pg.eta == pc.eta);
    double tg = 0, tc = 0;
    int wg = -1, wc = -1;
    EXPECT_STATUS(farfield_ewald_get_warnings(g, &tg, &wg), 0);
    EXPECT_STATUS(farfield_ewald_get_warnings(c, &tc, &wc), 0);
    EXPECT(tg == tc && wg == wc);
}

static void with_device(ff_cuda *cu) {
    static result rc, rg;
    const int methods[2] = {FARFIELD_EWALD_SPME, FARFIELD_EWALD_SPECTRAL};
    const char *names[2] = {"SPME", "spectral"};
    for (int m = 0; m < 2; m++) {
        for (int prec = 0; prec < 2; prec++) {
            const double tol = prec ? 1e-5 : 1e-6, bound = prec ? 1e-5 : 1e-10;
            char what[64];
            farfield_ewald_plan c = plan_for(methods[m], FARFIELD_BACKEND_CPU, 0, tol, NULL);
            farfield_ewald_plan g = plan_for(methods[m], FARFIELD_BACKEND_CUDA, prec, tol, NULL);
            if (!c || !g) return;
            same_params(g, c);
            host_run(c, &rc);
            host_run(g, &rg);
            snprintf(what, sizeof what, "%s %s host arrays", names[m], prec ? "mixed" : "double");
            EXPECT(compare(what, &rg, &rc, q) < bound);
            memset(&rg, 0, sizeof rg);
            device_run(cu, g, NULL, &rg);
            snprintf(what, sizeof what, "%s %s device arrays", names[m], prec ? "mixed" : "double");
            EXPECT(compare(what, &rg, &rc, q) < bound);
            farfield_ewald_destroy(g);
            farfield_ewald_destroy(c);
        }
    }

    /* a caller's stream, then a new cell on both plans */
    void *stream = NULL;
    EXPECT(cu->stream_create(&stream, 0) == 0);
    farfield_ewald_plan c = plan_for(FARFIELD_EWALD_SPME, FARFIELD_BACKEND_CPU, 0, 1e-6, NULL);
    farfield_ewald_plan g = plan_for(FARFIELD_EWALD_SPME, FARFIELD_BACKEND_CUDA, 0, 1e-6, stream);
    if (!c || !g) return;
    host_run(c, &rc);
    device_run(cu, g, stream, &rg);
    EXPECT(compare("SPME double, caller's stream", &rg, &rc, q) < 1e-10);
    double cell2[9];
    for (int k = 0; k < 9; k++) cell2[k] = 1.02 * cell[k];
    cell2[3] += 0.01;
    EXPECT_STATUS(farfield_ewald_set_box(c, cell2), 0);
    EXPECT_STATUS(farfield_ewald_set_box(g, cell2), 0);
    same_params(g, c);
    host_run(c, &rc);
    host_run(g, &rg);
    EXPECT(compare("SPME double after set_box", &rg, &rc, q) < 1e-10);

    /* errors on the device leave the device outputs untouched */
    static double sentinel[3 * NQ], back[4 * NQ];
    for (int i = 0; i < 3 * NQ; i++) sentinel[i] = 7.0;
    ff_cu_ptr dp = ff_cuda_upload(cu, sentinel, 8 * NQ), df = ff_cuda_upload(cu, sentinel, 24 * NQ);
    const double keep = xyz[3 * 17 + 1];
    xyz[3 * 17 + 1] = NAN;
    ff_cu_ptr dx = ff_cuda_upload(cu, xyz, sizeof xyz), dq = ff_cuda_upload(cu, q, sizeof q);
    double u = 7.0;
    EXPECT_STATUS(farfield_ewald_execute_device(g, NQ, FF_DEV(dx), FF_DEV(dq), FF_DEV(dp), FF_DEV(df), &u, NULL),
                  FARFIELD_ERR_NONFINITE);
    EXPECT(strstr(farfield_last_error_message(), "charge 17") != NULL);
    cu->mem_free(dx);
    xyz[3 * 17 + 1] = keep;
    const double moved[3] = {xyz[3 * 9], xyz[3 * 9 + 1], xyz[3 * 9 + 2]};
    for (int a = 0; a < 3; a++) xyz[3 * 9 + a] = xyz[3 * 100 + a] + cell2[3 + a]; /* charge 9 on an image of 100 */
    dx = ff_cuda_upload(cu, xyz, sizeof xyz);
    EXPECT_STATUS(farfield_ewald_execute_device(g, NQ, FF_DEV(dx), FF_DEV(dq), FF_DEV(dp), FF_DEV(df), &u, NULL),
                  FARFIELD_ERR_INVALID_ARG);
    EXPECT(strstr(farfield_last_error_message(), "charges 9 and 100 coincide") != NULL);
    EXPECT_STATUS(farfield_ewald_execute(g, NQ, xyz, q, rg.phi, NULL, &u, NULL), FARFIELD_ERR_INVALID_ARG);
    for (int a = 0; a < 3; a++) xyz[3 * 9 + a] = moved[a];
    EXPECT(cu->stream_sync(stream) == 0);
    EXPECT(cu->dtoh(back, dp, 8 * NQ) == 0 && cu->dtoh(back + NQ, df, 24 * NQ) == 0);
    int untouched = u == 7.0;
    for (int i = 0; i < 4 * NQ; i++) untouched &= back[i] == 7.0;
    EXPECT(untouched);
    cu->mem_free(dx);
    cu->mem_free(dq);
    cu->mem_free(dp);
    cu->mem_free(df);
    /* the plan still works */
    host_run(g, &rg);
    EXPECT(compare("SPME double after the errors", &rg, &rc, q) < 1e-10);
    farfield_ewald_destroy(g);
    farfield_ewald_destroy(c);
    EXPECT(cu->stream_destroy(stream) == 0);
}

int main(void) {
    error_paths();
    make_system();
    farfield_ewald_opts o;
    farfield_ewald_default_opts(&o, sizeof o);
    o.backend = FARFIELD_BACKEND_CUDA;
    farfield_ewald_plan probe = NULL;
    const int s = farfield_ewald_makeplan(FARFIELD_EWALD_SPME, cell, NQ, 1e-5, &probe, &o);
    farfield_ewald_destroy(probe);
    ff_cuda cu;
    if (s == FARFIELD_OK && ff_cuda_open(&cu)) {
        printf("c_ewald_device: CUDA device found\n");
        with_device(&cu);
    } else {
        /* no device: makeplan says so (any other status is a failure) */
        EXPECT_STATUS(s, FARFIELD_ERR_NO_DEVICE);
        EXPECT(probe == NULL && strstr(farfield_last_error_message(), "CUDA") != NULL);
        printf("c_ewald_device: no CUDA device; the device comparison is skipped (error paths checked)\n");
    }
    return ff_finish("c_ewald_device");
}
