/* libcufinufft.so (farfield's cuFINUFFT 2.5 compatibility library) used as a cuFINUFFT program
   uses it. The declarations below are written here from cuFINUFFT 2.5's documentation (the
   options struct, the C interface, the error codes); cuFINUFFT's headers are not used (they
   need the CUDA toolkit's cuComplex.h/cufft.h).
   Checks: sizeof/offsetof of every cufinufft_opts field against the published layout (LP64),
   the defaults, and without a GPU (FARFIELD_DISABLE_CUDA=1 hides any there is) makeplan
   returning FINUFFT_ERR_CUDA_FAILURE with a NULL plan in both precisions and types 1-3, the
   argument errors reported before the device is looked for, and the NULL-plan codes. The transforms themselves
   are checked on the CUDA-on-CPU emulator (gpu-emu/tests/cufinufft_compat.rs). */
#define _POSIX_C_SOURCE 200112L /* setenv */
#include <complex.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "ff_test.h" /* the check harness only */

/* ---- cuFINUFFT 2.5's documented C interface (declared here) ---- */
typedef struct cufinufft_opts {
  double upsampfac;
  int gpu_method, gpu_sort, gpu_binsizex, gpu_binsizey, gpu_binsizez, gpu_obinsizex, gpu_obinsizey,
      gpu_obinsizez, gpu_maxsubprobsize, gpu_kerevalmeth, gpu_spreadinterponly, gpu_maxbatchsize,
      gpu_device_id;
  void *gpu_stream;
  int modeord, gpu_np, debug;
} cufinufft_opts;
typedef struct cufinufft_plan_s *cufinufft_plan;
typedef struct cufinufft_fplan_s *cufinufftf_plan;
void cufinufft_default_opts(cufinufft_opts *opts);
int cufinufft_makeplan(int type, int dim, const int64_t *n_modes, int iflag, int ntr, double eps, cufinufft_plan *p,
                       cufinufft_opts *opts);
int cufinufftf_makeplan(int type, int dim, const int64_t *n_modes, int iflag, int ntr, float eps, cufinufftf_plan *p,
                        cufinufft_opts *opts);
int cufinufft_setpts(cufinufft_plan p, int64_t M, double *x, double *y, double *z, int N, double *s, double *t, double *u);
int cufinufftf_setpts(cufinufftf_plan p, int64_t M, float *x, float *y, float *z, int N, float *s, float *t, float *u);
int cufinufft_execute(cufinufft_plan p, double complex *c, double complex *fk);
int cufinufftf_execute(cufinufftf_plan p, float complex *c, float complex *fk);
int cufinufft_destroy(cufinufft_plan p);
int cufinufftf_destroy(cufinufftf_plan p);
enum { ERR_NTRANS_NOTVALID = 9, ERR_TYPE_NOTVALID = 10, ERR_DIM_NOTVALID = 12, ERR_NDATA_NOTVALID = 14,
       ERR_CUDA_FAILURE = 15, ERR_PLAN_NOTVALID = 16, ERR_HORNER_WRONG_BETA = 8, ERR_INSUFFICIENT_SHMEM = 19 };


#define OFF(f, want) EXPECT_MSG(offsetof(cufinufft_opts, f) == (want), #f " at %zu, want %d", offsetof(cufinufft_opts, f), (want))

static void layout(void) {
  if (sizeof(void *) != 8 || sizeof(int) != 4) {
    printf("layout: not LP64, offsets not checked\n");
    return;
  }
  EXPECT_MSG(sizeof(cufinufft_opts) == 88, "sizeof(cufinufft_opts) = %zu, want 88", sizeof(cufinufft_opts));
  OFF(upsampfac, 0);
  OFF(gpu_method, 8);
  OFF(gpu_sort, 12);
  OFF(gpu_binsizex, 16);
  OFF(gpu_binsizey, 20);
  OFF(gpu_binsizez, 24);
  OFF(gpu_obinsizex, 28);
  OFF(gpu_obinsizey, 32);
  OFF(gpu_obinsizez, 36);
  OFF(gpu_maxsubprobsize, 40);
  OFF(gpu_kerevalmeth, 44);
  OFF(gpu_spreadinterponly, 48);
  OFF(gpu_maxbatchsize, 52);
  OFF(gpu_device_id, 56);
  OFF(gpu_stream, 64);
  OFF(modeord, 72);
  OFF(gpu_np, 76);
  OFF(debug, 80);
}

static void defaults(void) {
  cufinufft_opts o;
  /* poison first: every field must be written */
  unsigned char *b = (unsigned char *)&o;
  for (size_t i = 0; i < sizeof o; i++) b[i] = 0xA5;
  cufinufft_default_opts(&o);
  EXPECT_MSG(o.upsampfac == 0.0 && o.gpu_method == 0 && o.gpu_sort == 1 && o.gpu_binsizex == 0 && o.gpu_binsizey == 0 &&
            o.gpu_binsizez == 0 && o.gpu_obinsizex == 0 && o.gpu_obinsizey == 0 && o.gpu_obinsizez == 0 &&
            o.gpu_maxsubprobsize == 1024 && o.gpu_kerevalmeth == 1 && o.gpu_spreadinterponly == 0 &&
            o.gpu_maxbatchsize == 0 && o.gpu_device_id == 0 && o.gpu_stream == NULL && o.modeord == 0 && o.gpu_np == 0 &&
            o.debug == 0,
        "cufinufft_default_opts: not cuFINUFFT 2.5's defaults");
  cufinufft_default_opts(NULL); /* ignored */
}

static void without_device(void) {
  int64_t nm[3] = {16, 8, 4};
  cufinufft_opts o;
  cufinufft_default_opts(&o);
  for (int type = 1; type <= 3; type++)
    for (int dim = 1; dim <= 3; dim++) {
      cufinufft_plan p = (cufinufft_plan)&o; /* must be reset to NULL */
      int ier = cufinufft_makeplan(type, dim, nm, 1, 2, 1e-6, &p, &o);
      EXPECT_MSG(ier == ERR_CUDA_FAILURE && p == NULL, "makeplan type %d dim %d without a device: %d", type, dim, ier);
      cufinufftf_plan pf = NULL;
      ier = cufinufftf_makeplan(type, dim, nm, -1, 1, 1e-5f, &pf, NULL);
      EXPECT_MSG(ier == ERR_CUDA_FAILURE && pf == NULL, "makeplanf type %d dim %d without a device: %d", type, dim, ier);
    }
  /* debug = 1 prints farfield's message on stderr; same code */
  o.debug = 1;
  cufinufft_plan p = NULL;
  EXPECT_MSG(cufinufft_makeplan(1, 2, nm, 1, 1, 1e-6, &p, &o) == ERR_CUDA_FAILURE, "makeplan with debug");
  o.debug = 0;
  /* argument errors come first */
  EXPECT_MSG(cufinufft_makeplan(1, 4, nm, 1, 1, 1e-6, &p, NULL) == ERR_DIM_NOTVALID, "dim 4");
  EXPECT_MSG(cufinufft_makeplan(5, 1, nm, 1, 1, 1e-6, &p, NULL) == ERR_TYPE_NOTVALID, "type 5");
  EXPECT_MSG(cufinufft_makeplan(0, 1, nm, 1, 1, 1e-6, &p, NULL) == ERR_TYPE_NOTVALID, "type 0");
  int64_t bad[3] = {16, 0, 4};
  EXPECT_MSG(cufinufft_makeplan(1, 2, bad, 1, 1, 1e-6, &p, NULL) == ERR_NDATA_NOTVALID, "a mode count 0");
  EXPECT_MSG(cufinufft_makeplan(1, 2, nm, 1, 0, 1e-6, &p, NULL) == ERR_NTRANS_NOTVALID, "ntransf 0");
  o.gpu_method = 9;
  /* cuFINUFFT 2.5.1 reports an unknown method from its bin-size set-up: 19, not 17 */
  EXPECT_MSG(cufinufft_makeplan(1, 2, nm, 1, 1, 1e-6, &p, &o) == ERR_INSUFFICIENT_SHMEM, "gpu_method 9");
  o.gpu_method = 0;
  o.upsampfac = 1.5; /* with the default gpu_kerevalmeth = 1, only 1.25 and 2.0 */
  EXPECT_MSG(cufinufft_makeplan(1, 2, nm, 1, 1, 1e-6, &p, &o) == ERR_HORNER_WRONG_BETA, "upsampfac 1.5, kerevalmeth 1");
  o.upsampfac = 0.0;
  /* NULL plans */
  EXPECT_MSG(cufinufft_setpts(NULL, 10, NULL, NULL, NULL, 0, NULL, NULL, NULL) == ERR_PLAN_NOTVALID, "setpts NULL plan");
  EXPECT_MSG(cufinufftf_setpts(NULL, 10, NULL, NULL, NULL, 0, NULL, NULL, NULL) == ERR_PLAN_NOTVALID, "setptsf NULL plan");
  EXPECT_MSG(cufinufft_execute(NULL, NULL, NULL) == ERR_PLAN_NOTVALID, "execute NULL plan");
  EXPECT_MSG(cufinufftf_execute(NULL, NULL, NULL) == ERR_PLAN_NOTVALID, "executef NULL plan");
  EXPECT_MSG(cufinufft_destroy(NULL) == ERR_PLAN_NOTVALID, "destroy NULL");
  EXPECT_MSG(cufinufftf_destroy(NULL) == ERR_PLAN_NOTVALID, "destroyf NULL");
}

int main(void) {
  setenv("FARFIELD_DISABLE_CUDA", "1", 1);
  layout();
  defaults();
  without_device();
  return ff_finish("c_cufinufft_compat");
}
