// farfield GPU NUFFT kernels (CUDA C++): deconvolution between the upsampled FFT grid and the
// user's modes (Barnett et al. 2019 eq. 2.4), as src/nufft/deconv.rs. Compiled by NVRTC and,
// unchanged, by the CUDA-on-CPU emulator (see spread.cu for the rules).
//
// Mode i of an axis (output index, CMCL or FFT order, resolved on the host) sits at fine-grid
// index fine[i] and is scaled by inv[i] = 1/ψ̂(k_i). fine and inv hold the three axes one after
// the other (n0, then n1, then n2 entries). Complex arrays are interleaved (re, im).

#ifndef FF_EMULATION
#define FF_EXTERN_C extern "C"
#define FF_REGISTER(name)
#endif

// dir 1 (type 1): f[i] = fw[fine(i)]·s;  dir 2 (type 2): fw[fine(i)] = f[i]·s (fw zeroed before).
// Batched: nvec vectors; vector v of f is f + 2·(v0 + v)·Π n (v0: the chunk's first vector in
// the caller's stacked array), vector v of fw is fw + 2·v·Π nf (the chunk's fine grids). One
// thread per mode computes its fine index and factor once and loops over the vectors.
template <typename T>
__device__ void ff_deconv(int dir, int n0, int n1, int n2, int nf0, int nf1, int nf2, int nvec, int v0, const int* fine,
                          const T* inv, T* fw, T* f) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long total = (long long)n0 * n1 * n2;
    if (i >= total) return;
    const int k1 = (int)(i % n0);
    const int k2 = (int)((i / n0) % n1);
    const int k3 = (int)(i / ((long long)n0 * n1));
    const T s = (inv[n0 + k2] * inv[n0 + n1 + k3]) * inv[k1];
    const long long g = (long long)nf0 * (fine[n0 + k2] + (long long)nf1 * fine[n0 + n1 + k3]) + fine[k1];
    const long long ftot = (long long)nf0 * nf1 * nf2;
    for (int v = 0; v < nvec; ++v) {
        T* fv = f + 2 * ((long long)(v0 + v) * total + i);
        T* gv = fw + 2 * ((long long)v * ftot + g);
        if (dir == 1) {
            fv[0] = gv[0] * s;
            fv[1] = gv[1] * s;
        } else {
            gv[0] = fv[0] * s;
            gv[1] = fv[1] * s;
        }
    }
}

#define FF_DEFINE_DECONV(T, S)                                                                              \
    FF_EXTERN_C __global__ void ff_deconv_t1_##S(int n0, int n1, int n2, int nf0, int nf1, int nf2, int nvec, \
                                                 int v0, const int* fine, const T* inv, const T* fw, T* f) {  \
        ff_deconv<T>(1, n0, n1, n2, nf0, nf1, nf2, nvec, v0, fine, inv, const_cast<T*>(fw), f);               \
    }                                                                                                         \
    FF_REGISTER(ff_deconv_t1_##S)                                                                             \
    FF_EXTERN_C __global__ void ff_deconv_t2_##S(int n0, int n1, int n2, int nf0, int nf1, int nf2, int nvec, \
                                                 int v0, const int* fine, const T* inv, const T* f, T* fw) {  \
        ff_deconv<T>(2, n0, n1, n2, nf0, nf1, nf2, nvec, v0, fine, inv, fw, const_cast<T*>(f));               \
    }                                                                                                         \
    FF_REGISTER(ff_deconv_t2_##S)

FF_DEFINE_DECONV(float, f32)
FF_DEFINE_DECONV(double, f64)

// Pointwise complex product in place, a[v·n + i] ← a[v·n + i]·b[i] for i < n and each of the
// nvec vectors of a (interleaved complex): the pre-phase e^{±i D·x_j} and the
// deconvolution/post-phase factors of NUFFT type 3 (src/gpu/type3.rs, as src/nufft/type3.rs),
// one thread per factor looping over the vectors.
template <typename T>
__device__ void ff_cmul(int n, int nvec, const T* b, T* a) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const T br = b[2 * i], bi = b[2 * i + 1];
    for (int v = 0; v < nvec; ++v) {
        T* p = a + 2 * ((long long)v * n + i);
        const T ar = p[0], ai = p[1];
        p[0] = ar * br - ai * bi;
        p[1] = ar * bi + ai * br;
    }
}

#define FF_DEFINE_CMUL(T, S)                                                    \
    FF_EXTERN_C __global__ void ff_cmul_##S(int n, int nvec, const T* b, T* a) { \
        ff_cmul<T>(n, nvec, b, a);                                              \
    }                                                                           \
    FF_REGISTER(ff_cmul_##S)

FF_DEFINE_CMUL(float, f32)
FF_DEFINE_CMUL(double, f64)
