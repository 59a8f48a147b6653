/* Thread safety: two plans used concurrently from two pthreads (each thread checks its own
 * results against a direct sum), then two threads executing the same plan concurrently
 * (calls on one plan are serialised inside the library; each thread has its own arrays).
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#include "ff_test.h"

#include <pthread.h>

typedef struct {
    int type, dim, nthreads, reps;
    uint64_t seed;
    farfield_nufft_plan shared; /* NULL: make an own plan */
    double err;                 /* worst relative error seen */
    int status;                 /* first failing status, 0 if none */
} job;

static void *worker(void *arg) {
    job *jb = (job *)arg;
    ff_rng r = {jb->seed};
    const int64_t sizes[4][3] = {{0, 0, 0}, {64, 1, 1}, {20, 18, 1}, {8, 10, 12}};
    const int64_t *n = sizes[jb->dim];
    const int64_t m = jb->shared ? 100 : 250, nm = n[0] * n[1] * n[2];
    const double tol = 1e-8;
    double *x = malloc(sizeof(double) * 250), *y = malloc(sizeof(double) * 250), *z = malloc(sizeof(double) * 250);
    double *c = malloc(2 * sizeof(double) * m), *f = malloc(2 * sizeof(double) * nm);
    double *ref = malloc(2 * sizeof(double) * (nm > m ? nm : m));
    jb->err = 0.0;
    jb->status = 0;
    for (int64_t j = 0; j < 250; j++) {
        /* a shared plan's points are set by main with seed 99 */
        x[j] = ff_range(&r, -FF_PI, FF_PI), y[j] = ff_range(&r, -FF_PI, FF_PI), z[j] = ff_range(&r, -FF_PI, FF_PI);
    }
    farfield_nufft_plan plan = jb->shared;
    int st = 0;
    if (!plan) {
        farfield_nufft_opts o;
        farfield_nufft_default_opts(&o, sizeof o);
        o.nthreads = jb->nthreads;
        st = farfield_nufft_makeplan(jb->type, jb->dim, n, +1, 1, tol, &plan, &o);
        if (!st) st = farfield_nufft_setpts(plan, m, x, y, z, 0, NULL, NULL, NULL);
    } else {
        ff_rng r2 = {99};
        for (int64_t j = 0; j < m; j++) {
            x[j] = ff_range(&r2, -FF_PI, FF_PI), y[j] = ff_range(&r2, -FF_PI, FF_PI), z[j] = ff_range(&r2, -FF_PI, FF_PI);
        }
    }
    for (int rep = 0; rep < jb->reps && !st; rep++) {
        for (int64_t i = 0; i < 2 * (jb->type == 1 ? m : nm); i++) (jb->type == 1 ? c : f)[i] = ff_range(&r, -1, 1);
        st = farfield_nufft_execute(plan, (farfield_complex *)c, (farfield_complex *)f);
        if (st) break;
        double err;
        if (jb->type == 1) {
            ff_direct(1, jb->dim, n, +1, 0, 1, m, x, y, z, c, ref);
            err = ff_rel_err_d(f, ref, nm);
        } else {
            ff_direct(2, jb->dim, n, +1, 0, 1, m, x, y, z, ref, f);
            err = ff_rel_err_d(c, ref, m);
        }
        if (err > jb->err) jb->err = err;
    }
    jb->status = st;
    if (!jb->shared) farfield_nufft_destroy(plan);
    free(x), free(y), free(z), free(c), free(f), free(ref);
    return NULL;
}

static void run(job *jobs, int njobs, const char *what) {
    pthread_t th[4];
    for (int i = 0; i < njobs; i++) EXPECT(pthread_create(&th[i], NULL, worker, &jobs[i]) == 0);
    for (int i = 0; i < njobs; i++) EXPECT(pthread_join(th[i], NULL) == 0);
    for (int i = 0; i < njobs; i++) {
        printf("%s: thread %d (type %d dim %d): status %d, worst rel err %.3e\n", what, i, jobs[i].type, jobs[i].dim,
               jobs[i].status, jobs[i].err);
        EXPECT_STATUS(jobs[i].status, FARFIELD_OK);
        EXPECT(jobs[i].err <= 1e-7);
    }
}

int main(void) {
    /* two plans, two threads: one single-threaded plan, one using all cores */
    job a[2] = {{1, 3, 1, 4, 11, NULL, 0, 0}, {2, 2, 0, 4, 12, NULL, 0, 0}};
    run(a, 2, "own plans");
    job b[2] = {{2, 1, 0, 3, 21, NULL, 0, 0}, {1, 2, 2, 3, 22, NULL, 0, 0}};
    run(b, 2, "own plans");

    /* one plan, two threads executing it concurrently */
    const int64_t n[3] = {20, 18, 1};
    farfield_nufft_plan shared = NULL;
    EXPECT_STATUS(farfield_nufft_makeplan(2, 2, n, +1, 1, 1e-8, &shared, NULL), FARFIELD_OK);
    ff_rng r = {99};
    double x[100], y[100], z[100];
    for (int j = 0; j < 100; j++) {
        x[j] = ff_range(&r, -FF_PI, FF_PI), y[j] = ff_range(&r, -FF_PI, FF_PI), z[j] = ff_range(&r, -FF_PI, FF_PI);
    }
    EXPECT_STATUS(farfield_nufft_setpts(shared, 100, x, y, z, 0, NULL, NULL, NULL), FARFIELD_OK); /* z ignored */
    job s[2] = {{2, 2, 0, 5, 31, shared, 0, 0}, {2, 2, 0, 5, 32, shared, 0, 0}};
    run(s, 2, "shared plan");
    EXPECT_STATUS(farfield_nufft_destroy(shared), FARFIELD_OK);
    return ff_finish("c_threads");
}
