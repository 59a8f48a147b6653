/* The few CUDA driver calls the device tests need (c_nufft_device, c_ewald_device), looked up
 * at run time with dlopen, so the tests need no CUDA headers or libraries to build. The arrays
 * are allocated in device 0's primary context, the context the library uses.
 * SPDX-License-Identifier: MIT OR Apache-2.0 */
#ifndef FF_CUDA_H
#define FF_CUDA_H

#include <dlfcn.h>
#include <string.h>

typedef unsigned long long ff_cu_ptr;
typedef struct {
    void *lib;
    int (*init)(unsigned);
    int (*device_get)(int *, int);
    int (*ctx_retain)(void **, int);
    int (*ctx_set)(void *);
    int (*mem_alloc)(ff_cu_ptr *, size_t);
    int (*htod)(ff_cu_ptr, const void *, size_t);
    int (*dtoh)(void *, ff_cu_ptr, size_t);
    int (*mem_free)(ff_cu_ptr);
    int (*stream_create)(void **, unsigned);
    int (*stream_sync)(void *);
    int (*stream_destroy)(void *);
    int (*ctx_sync)(void);
} ff_cuda;

/* 1 when the driver, device 0 and its primary context are usable (made current). */
static inline int ff_cuda_open(ff_cuda *cu) {
    memset(cu, 0, sizeof *cu);
    cu->lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (!cu->lib) return 0;
    /* POSIX's idiom for function pointers from dlsym (no object-to-function pointer cast) */
    *(void **)(&cu->init) = dlsym(cu->lib, "cuInit");
    *(void **)(&cu->device_get) = dlsym(cu->lib, "cuDeviceGet");
    *(void **)(&cu->ctx_retain) = dlsym(cu->lib, "cuDevicePrimaryCtxRetain");
    *(void **)(&cu->ctx_set) = dlsym(cu->lib, "cuCtxSetCurrent");
    *(void **)(&cu->mem_alloc) = dlsym(cu->lib, "cuMemAlloc_v2");
    *(void **)(&cu->htod) = dlsym(cu->lib, "cuMemcpyHtoD_v2");
    *(void **)(&cu->dtoh) = dlsym(cu->lib, "cuMemcpyDtoH_v2");
    *(void **)(&cu->mem_free) = dlsym(cu->lib, "cuMemFree_v2");
    *(void **)(&cu->stream_create) = dlsym(cu->lib, "cuStreamCreate");
    *(void **)(&cu->stream_sync) = dlsym(cu->lib, "cuStreamSynchronize");
    *(void **)(&cu->stream_destroy) = dlsym(cu->lib, "cuStreamDestroy_v2");
    *(void **)(&cu->ctx_sync) = dlsym(cu->lib, "cuCtxSynchronize");
    if (!cu->init || !cu->device_get || !cu->ctx_retain || !cu->ctx_set || !cu->mem_alloc || !cu->htod || !cu->dtoh ||
        !cu->mem_free || !cu->stream_create || !cu->stream_sync || !cu->stream_destroy || !cu->ctx_sync)
        return 0;
    int dev = 0;
    void *ctx = NULL;
    return cu->init(0) == 0 && cu->device_get(&dev, 0) == 0 && cu->ctx_retain(&ctx, dev) == 0 && cu->ctx_set(ctx) == 0;
}

/* A device copy of `bytes` bytes of `src` (0 on failure). */
static inline ff_cu_ptr ff_cuda_upload(ff_cuda *cu, const void *src, size_t bytes) {
    ff_cu_ptr p = 0;
    if (cu->mem_alloc(&p, bytes) != 0) return 0;
    if (cu->htod(p, src, bytes) != 0) {
        cu->mem_free(p);
        return 0;
    }
    return p;
}

/* A device pointer as the library's `double *` arguments take it. */
#define FF_DEV(p) ((double *)(uintptr_t)(p))

#endif
