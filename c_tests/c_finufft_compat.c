/* libfinufft.so (farfield's FINUFFT 2.5 compatibility library) used as a FINUFFT program uses
   it. The declarations below are written here from FINUFFT 2.5's documentation (the options
   struct, the guru and simple interfaces, the error codes); FINUFFT's header is not used.
   Checks: sizeof/offsetof of every finufft_opts field, the defaults, results of both
   precisions against direct sums (rel l2 <= 10 tol), the adjoint, ntrans, modeord, error codes. */
#include <complex.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ff_test.h" /* the check harness only */

/* ---- FINUFFT 2.5's documented C interface (declared here) ---- */
typedef struct finufft_opts {
  int modeord, spreadinterponly, debug, spread_debug, showwarn, nthreads, fftw, spread_sort,
      spread_kerevalmeth, spread_kerpad;
  double upsampfac;
  int spread_thread, maxbatchsize, spread_nthr_atomic, spread_max_sp_size, spread_kerformula;
  void (*fftw_lock_fun)(void *);
  void (*fftw_unlock_fun)(void *);
  void *fftw_lock_data;
} finufft_opts;
typedef struct finufft_plan_s *finufft_plan;
typedef struct finufftf_plan_s *finufftf_plan;
void finufft_default_opts(finufft_opts *o);
void finufftf_default_opts(finufft_opts *o);
int finufft_makeplan(int type, int dim, int64_t *n_modes, int iflag, int ntr, double eps, finufft_plan *p, finufft_opts *o);
int finufftf_makeplan(int type, int dim, int64_t *n_modes, int iflag, int ntr, float eps, finufftf_plan *p, finufft_opts *o);
int finufft_setpts(finufft_plan p, int64_t M, double *x, double *y, double *z, int64_t N, double *s, double *t, double *u);
int finufftf_setpts(finufftf_plan p, int64_t M, float *x, float *y, float *z, int64_t N, float *s, float *t, float *u);
int finufft_execute(finufft_plan p, double complex *c, double complex *f);
int finufftf_execute(finufftf_plan p, float complex *c, float complex *f);
int finufft_execute_adjoint(finufft_plan p, double complex *c, double complex *f);
int finufft_destroy(finufft_plan p);
int finufftf_destroy(finufftf_plan p);
int finufft1d1(int64_t nj, double *x, double complex *c, int iflag, double eps, int64_t ms, double complex *fk, finufft_opts *o);
int finufft2d2many(int ntr, int64_t nj, double *x, double *y, double complex *c, int iflag, double eps, int64_t ms, int64_t mt,
                   double complex *fk, finufft_opts *o);
int finufft3d3(int64_t nj, double *x, double *y, double *z, double complex *c, int iflag, double eps, int64_t nk, double *s,
               double *t, double *u, double complex *fk, finufft_opts *o);
int finufftf1d1(int64_t nj, float *x, float complex *c, int iflag, float eps, int64_t ms, float complex *fk, finufft_opts *o);
enum { WARN_EPS_TOO_SMALL = 1, ERR_UPSAMPFAC_TOO_SMALL = 7, ERR_NTRANS_NOTVALID = 9, ERR_TYPE_NOTVALID = 10,
       ERR_DIM_NOTVALID = 12, ERR_NUM_NU_PTS_INVALID = 20, ERR_LOCK_FUNS_INVALID = 22 };


static ff_rng rng = {12345};
static double urand(double a, double b) { return ff_range(&rng, a, b); }

/* k of index i on an axis of n modes (modeord 0: -n/2 .., 1: FFT order) */
static double freq(int i, int n, int modeord) { return (double)ff_mode(i, n, modeord); }

/* ||got - want|| / ||want|| of n complex values */
static double rel_l2(const double complex *got, const double complex *want, size_t n) {
  return ff_rel_err_d((const double *)got, (const double *)want, (int64_t)n);
}

static void layout(void) {
  EXPECT_MSG(sizeof(finufft_opts) == 96, "sizeof(finufft_opts) = %zu", sizeof(finufft_opts));
  const size_t off[] = {offsetof(finufft_opts, modeord), offsetof(finufft_opts, spreadinterponly),
                        offsetof(finufft_opts, debug), offsetof(finufft_opts, spread_debug),
                        offsetof(finufft_opts, showwarn), offsetof(finufft_opts, nthreads),
                        offsetof(finufft_opts, fftw), offsetof(finufft_opts, spread_sort),
                        offsetof(finufft_opts, spread_kerevalmeth), offsetof(finufft_opts, spread_kerpad),
                        offsetof(finufft_opts, upsampfac), offsetof(finufft_opts, spread_thread),
                        offsetof(finufft_opts, maxbatchsize), offsetof(finufft_opts, spread_nthr_atomic),
                        offsetof(finufft_opts, spread_max_sp_size), offsetof(finufft_opts, spread_kerformula),
                        offsetof(finufft_opts, fftw_lock_fun), offsetof(finufft_opts, fftw_unlock_fun),
                        offsetof(finufft_opts, fftw_lock_data)};
  const size_t want[] = {0, 4, 8, 12, 16, 20, 24, 28, 32, 36, 40, 48, 52, 56, 60, 64, 72, 80, 88};
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) EXPECT_MSG(off[i] == want[i], "field %zu at %zu, not %zu", i, off[i], want[i]);
  finufft_opts o;
  finufft_default_opts(&o);
  EXPECT_MSG(o.modeord == 0 && o.spreadinterponly == 0 && o.debug == 0 && o.showwarn == 1 && o.nthreads == 0 && o.fftw == 64 &&
            o.spread_sort == 2 && o.spread_kerevalmeth == 1 && o.spread_kerpad == 1 && o.upsampfac == 0.0 &&
            o.spread_thread == 0 && o.maxbatchsize == 0 && o.spread_nthr_atomic == -1 && o.spread_max_sp_size == 0 &&
            o.spread_kerformula == 0 && !o.fftw_lock_fun && !o.fftw_unlock_fun && !o.fftw_lock_data,
        "FINUFFT 2.5 defaults");
}

/* 2D type 1 (guru, ntrans 2, modeord 1) and its adjoint, double precision */
static void guru_2d(void) {
  enum { M = 200, N1 = 12, N2 = 9, NT = 2 };
  int64_t n[2] = {N1, N2};
  static double x[M], y[M];
  static double complex c[NT * M], f[NT * N1 * N2], want[N1 * N2], c2[NT * M], wantc[M];
  for (int j = 0; j < M; j++) x[j] = urand(-FF_PI, FF_PI), y[j] = urand(-3 * FF_PI, 3 * FF_PI);
  for (int j = 0; j < NT * M; j++) c[j] = urand(-1, 1) + I * urand(-1, 1);
  finufft_opts o;
  finufft_default_opts(&o);
  o.modeord = 1;
  finufft_plan p = NULL;
  EXPECT_MSG(finufft_makeplan(1, 2, n, -1, NT, 1e-9, &p, &o) == 0, "makeplan");
  EXPECT_MSG(finufft_setpts(p, M, x, y, NULL, 0, NULL, NULL, NULL) == 0, "setpts");
  EXPECT_MSG(finufft_execute(p, c, f) == 0, "execute");
  for (int t = 0; t < NT; t++) {
    for (int k2 = 0; k2 < N2; k2++)
      for (int k1 = 0; k1 < N1; k1++) {
        double complex s = 0;
        for (int j = 0; j < M; j++) s += c[t * M + j] * cexp(-I * (freq(k1, N1, 1) * x[j] + freq(k2, N2, 1) * y[j]));
        want[k1 + N1 * k2] = s;
      }
    double e = rel_l2(f + t * N1 * N2, want, N1 * N2);
    EXPECT_MSG(e <= 1e-8, "2d1 vector %d: rel l2 %g", t, e);
  }
  /* adjoint: c_j = sum_k f_k e^{+i k.x_j} */
  EXPECT_MSG(finufft_execute_adjoint(p, c2, f) == 0, "execute_adjoint");
  for (int j = 0; j < M; j++) {
    double complex s = 0;
    for (int k2 = 0; k2 < N2; k2++)
      for (int k1 = 0; k1 < N1; k1++) s += f[k1 + N1 * k2] * cexp(I * (freq(k1, N1, 1) * x[j] + freq(k2, N2, 1) * y[j]));
    wantc[j] = s;
  }
  double e = rel_l2(c2, wantc, M);
  EXPECT_MSG(e <= 1e-8, "adjoint rel l2 %g", e);
  EXPECT_MSG(finufft_destroy(p) == 0, "destroy");
}

/* simple interfaces: 1d1 (double, single), 3d3 */
static void simple(void) {
  enum { M = 100, N = 20, NK = 30 };
  static double x[M], y[M], z[M], s[NK], t[NK], u[NK];
  static float xf[M];
  static double complex c[M], f[N], want[NK], f3[NK];
  static float complex cf[M], ff[N];
  for (int j = 0; j < M; j++) {
    x[j] = urand(-FF_PI, FF_PI), y[j] = urand(-2, 2), z[j] = urand(-1, 3), xf[j] = (float)x[j];
    c[j] = urand(-1, 1) + I * urand(-1, 1), cf[j] = (float complex)c[j];
  }
  for (int k = 0; k < NK; k++) s[k] = urand(-10, 10), t[k] = urand(-5, 8), u[k] = urand(-7, 7);
  EXPECT_MSG(finufft1d1(M, x, c, 1, 1e-10, N, f, NULL) == 0, "1d1");
  EXPECT_MSG(finufftf1d1(M, xf, cf, 1, 1e-5f, N, ff, NULL) == 0, "f1d1");
  double complex w1[N], ffd[N];
  for (int k = 0; k < N; k++) {
    double complex a = 0, b = 0;
    for (int j = 0; j < M; j++) a += c[j] * cexp(I * freq(k, N, 0) * x[j]), b += cf[j] * cexp(I * freq(k, N, 0) * (double)xf[j]);
    w1[k] = a, want[k] = b, ffd[k] = ff[k];
  }
  EXPECT_MSG(rel_l2(f, w1, N) <= 1e-9, "1d1 rel l2 %g", rel_l2(f, w1, N));
  EXPECT_MSG(rel_l2(ffd, want, N) <= 1e-4, "f1d1 rel l2 %g", rel_l2(ffd, want, N));
  EXPECT_MSG(finufft3d3(M, x, y, z, c, -1, 1e-9, NK, s, t, u, f3, NULL) == 0, "3d3");
  for (int k = 0; k < NK; k++) {
    double complex a = 0;
    for (int j = 0; j < M; j++) a += c[j] * cexp(-I * (s[k] * x[j] + t[k] * y[j] + u[k] * z[j]));
    want[k] = a;
  }
  EXPECT_MSG(rel_l2(f3, want, NK) <= 1e-8, "3d3 rel l2 %g", rel_l2(f3, want, NK));
  /* tolerance too small: warning 1, result computed */
  EXPECT_MSG(finufft1d1(M, x, c, 1, 1e-20, N, f, NULL) == WARN_EPS_TOO_SMALL, "tiny tol warns");
  EXPECT_MSG(rel_l2(f, w1, N) <= 1e-12, "tiny tol result");
}

static void lock(void *d) { (void)d; }

static void errors(void) {
  finufft_opts o;
  finufft_default_opts(&o);
  o.showwarn = 0;
  int64_t n[3] = {10, 10, 10};
  finufft_plan p = (finufft_plan)&o;
  EXPECT_MSG(finufft_makeplan(0, 1, n, 1, 1, 1e-6, &p, &o) == ERR_TYPE_NOTVALID && p == NULL, "type 0");
  EXPECT_MSG(finufft_makeplan(1, 4, n, 1, 1, 1e-6, &p, &o) == ERR_DIM_NOTVALID, "dim 4");
  EXPECT_MSG(finufft_makeplan(1, 1, n, 1, 0, 1e-6, &p, &o) == ERR_NTRANS_NOTVALID, "ntrans 0");
  o.upsampfac = 1.0;
  EXPECT_MSG(finufft_makeplan(1, 1, n, 1, 1, 1e-6, &p, &o) == ERR_UPSAMPFAC_TOO_SMALL, "upsampfac 1");
  o.upsampfac = 0.0;
  o.fftw_lock_fun = lock;
  EXPECT_MSG(finufft_makeplan(1, 1, n, 1, 1, 1e-6, &p, &o) == ERR_LOCK_FUNS_INVALID, "one lock function");
  o.fftw_lock_fun = NULL;
  finufftf_plan pf = NULL;
  EXPECT_MSG(finufftf_makeplan(2, 3, n, 1, 1, 1e-4f, &pf, &o) == 0, "makeplan f32");
  float xf[3] = {0, 1, 2};
  EXPECT_MSG(finufftf_setpts(pf, -1, xf, xf, xf, 0, NULL, NULL, NULL) == ERR_NUM_NU_PTS_INVALID, "nj < 0");
  EXPECT_MSG(finufftf_setpts(pf, 3, xf, xf, xf, 0, NULL, NULL, NULL) == 0, "setpts f32");
  static float complex cf[3], ff[1000];
  EXPECT_MSG(finufftf_execute(pf, cf, ff) == 0, "execute f32");
  EXPECT_MSG(finufftf_destroy(pf) == 0, "destroy f32");
  EXPECT_MSG(finufft_destroy(NULL) == 1, "destroy(NULL) = 1 as FINUFFT 2.5");
  double x[4] = {0, 1, 2, 3};
  double complex c[8], f[8];
  EXPECT_MSG(finufft2d2many(0, 4, x, x, c, 1, 1e-6, 2, 4, f, &o) == ERR_NTRANS_NOTVALID, "2d2many ntr 0");
}

int main(void) {
  layout();
  guru_2d();
  simple();
  errors();
  return ff_finish("c_finufft_compat");
}
