// farfield GPU NUFFT kernels (CUDA C++): deconvolution between the upsampled FFT grid and the
// user's modes (Barnett et al. 2019 eq. 2.4), as src/nufft/deconv.rs. Compiled by NVRTC and,
// unchanged, by the CUDA-on-CPU emulator (see spread.cu for the rules).
//
// Output index i of an axis of n modes is mode k = ff_mode(i, n, fft) (CMCL order: k = i − n/2;
// FFT order: k = i for i ≤ (n−1)/2, else i − n; as src/nufft/deconv.rs `mode_of`), which sits at
// fine-grid index k mod nf and is scaled by inv[|k|] = 1/ψ̂(k). inv holds the three axes' tables
// one after the other: n0/2 + 1, then n1/2 + 1, then n2/2 + 1 entries (one entry, 1, on an
// unused axis, n = 1). Complex arrays are interleaved (re, im).

#ifndef FF_EMULATION
#define FF_EXTERN_C extern "C"
#define FF_REGISTER(name)
#endif

__device__ __forceinline__ int ff_mode(int i, int n, int fft) {
    return fft ? (i <= (n - 1) / 2 ? i : i - n) : i - n / 2;
}

__device__ __forceinline__ int ff_fine_index(int k, int nf) {
    return k < 0 ? k + nf : k;
}

// dir 1 (type 1): f[i] = fw[fine(i)]·s;  dir 2 (type 2): fw[fine(i)] = f[i]·s (fw zeroed before).
// Batched: nvec vectors; vector v of f is f + 2·(v0 + v)·Π n (v0: the chunk's first vector in
// the caller's stacked array), vector v of fw is fw + 2·v·Π nf (the chunk's fine grids). One
// thread per mode computes its fine index and factor once and loops over the vectors.
template <typename T>
__device__ void ff_deconv(int dir, int n0, int n1, int n2, int nf0, int nf1, int nf2, int nvec, int v0, int fft, const T* inv,
                          T* fw, T* f) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long total = (long long)n0 * n1 * n2;
    if (i >= total) return;
    const int m1 = ff_mode((int)(i % n0), n0, fft);
    const int m2 = ff_mode((int)((i / n0) % n1), n1, fft);
    const int m3 = ff_mode((int)(i / ((long long)n0 * n1)), n2, fft);
    const T* inv1 = inv + (n0 / 2 + 1);
    const T* inv2 = inv1 + (n1 / 2 + 1);
    const T s = (inv1[m2 < 0 ? -m2 : m2] * inv2[m3 < 0 ? -m3 : m3]) * inv[m1 < 0 ? -m1 : m1];
    const long long g = (long long)nf0 * (ff_fine_index(m2, nf1) + (long long)nf1 * ff_fine_index(m3, nf2)) + ff_fine_index(m1, nf0);
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

#define FF_DEFINE_DECONV(T, S)                                                                                 \
    FF_EXTERN_C __global__ void ff_deconv_t1_##S(int n0, int n1, int n2, int nf0, int nf1, int nf2, int nvec, int v0, \
                                                 int fft, const T* inv, const T* fw, T* f) {                      \
        ff_deconv<T>(1, n0, n1, n2, nf0, nf1, nf2, nvec, v0, fft, inv, const_cast<T*>(fw), f);                    \
    }                                                                                                            \
    FF_REGISTER(ff_deconv_t1_##S)                                                                                \
    FF_EXTERN_C __global__ void ff_deconv_t2_##S(int n0, int n1, int n2, int nf0, int nf1, int nf2, int nvec, int v0, \
                                                 int fft, const T* inv, const T* f, T* fw) {                      \
        ff_deconv<T>(2, n0, n1, n2, nf0, nf1, nf2, nvec, v0, fft, inv, fw, const_cast<T*>(f));                    \
    }                                                                                                            \
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

// ---------------------------------------------------------------------------------------------
// NUFFT type 3 set-up on the device (src/gpu/type3.rs): what the host's Type3Params::geometry
// and Type3Geometry compute from the points x (M per axis) and frequencies s (N per axis), on
// device arrays, so that only the extents (a few scalars) reach the host.

typedef unsigned long long ff_t3_u64;

// Order-preserving map of a finite double to an unsigned integer (atomicMin/Max then give the
// extremes; as fmm_tree.cu's, which NVRTC compiles apart from this file).
__device__ __forceinline__ ff_t3_u64 ff_t3_ord(double v) {
    const ff_t3_u64 b = (ff_t3_u64)__double_as_longlong(v);
    return (b >> 63) ? ~b : (b | 0x8000000000000000ull);
}

// out[0]: the first i with a[i] not finite (init ~0), out[1]: ord(min a), out[2]: ord(max a)
// (init ~0 and 0) over the finite values. Grid-stride: one atomic per thread and value.
template <typename T>
__device__ void ff_t3_bounds(ff_t3_u64 n, const T* a, ff_t3_u64* out) {
    ff_t3_u64 bad = ~0ull, lo = ~0ull, hi = 0ull;
    for (long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x; (ff_t3_u64)i < n; i += (long long)gridDim.x * blockDim.x) {
        const double v = (double)a[i];
        if (!(fabs(v) <= 1.7976931348623157e308)) {
            if ((ff_t3_u64)i < bad) bad = (ff_t3_u64)i;
        } else {
            const ff_t3_u64 o = ff_t3_ord(v);
            if (o < lo) lo = o;
            if (o > hi) hi = o;
        }
    }
    if (bad != ~0ull) atomicMin(out, bad);
    if (lo != ~0ull) atomicMin(out + 1, lo);
    if (hi != 0ull) atomicMax(out + 2, hi);
}

// In place: a[i] ← T((a[i] − centre)·scale), the host's rescale (the type-3 grid's points
// (x − C)/γ, the inner type 2's points hγ(s − D)), in the same double operations.
template <typename T>
__device__ void ff_t3_rescale(ff_t3_u64 n, T* a, double centre, double scale) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if ((ff_t3_u64)i < n) a[i] = (T)(((double)a[i] - centre) * scale);
}

// The pre-phase factors out[j] = e^{i·sign·Σ_d D_d x_dj} (interleaved complex), as
// Type3Geometry::prephase.
template <typename T>
__device__ void ff_t3_prephase(ff_t3_u64 m, int dim, const T* x, const T* y, const T* z, double d0, double d1, double d2,
                               double sign, T* out) {
    const long long j = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if ((ff_t3_u64)j >= m) return;
    double ph = d0 * (double)x[j];
    if (dim > 1) ph += d1 * (double)y[j];
    if (dim > 2) ph += d2 * (double)z[j];
    out[2 * j] = (T)cos(sign * ph);
    out[2 * j + 1] = (T)sin(sign * ph);
}

// The deconvolution and post-phase factors out[k] = e^{i·sign·(s_k − D)·C} / Π_d ψ̂(hγ(s_dk − D_d)),
// as Type3Geometry::deconv with KernelFt's tables. par (doubles): D_0..2, C_0..2, (hγ)_0..2,
// u_max (< 0: no band), the number of Chebyshev coefficients nc and of quadrature nodes nq,
// then c_0..nc−1, t_0..nq−1, a_0..nq−1: in the band (ω² ≤ u_max) ln ψ̂(ω) = Σ c_k
// T_k(2ω²/u_max − 1) (Clenshaw), else ψ̂(ω) = Σ a_i cos(ω t_i).
template <typename T>
__device__ void ff_t3_deconv(ff_t3_u64 n, int dim, const T* s, const T* t, const T* u, const double* par, double sign,
                             T* out) {
    const long long k = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if ((ff_t3_u64)k >= n) return;
    const T* in[3] = {s, t, u};
    const double umax = par[9];
    const int nc = (int)par[10], nq = (int)par[11];
    const double* c = par + 12;
    const double* tq = c + nc;
    const double* aq = tq + nq;
    double ph = 0.0, ln_amp = 0.0, amp = 1.0;
    for (int d = 0; d < dim; ++d) {
        const double sd = (double)in[d][k] - par[d];
        const double om = par[6 + d] * sd;
        const double uu = om * om;
        if (umax >= 0.0 && uu <= umax) {
            const double xx = 2.0 * uu / umax - 1.0;
            double b1 = 0.0, b2 = 0.0;
            for (int q = nc - 1; q >= 1; --q) {
                const double b0 = c[q] + 2.0 * xx * b1 - b2;
                b2 = b1;
                b1 = b0;
            }
            ln_amp += c[0] + xx * b1 - b2;
        } else {
            double f = 0.0;
            for (int q = 0; q < nq; ++q) f += aq[q] * cos(om * tq[q]);
            amp *= f;
        }
        ph += sd * par[3 + d];
    }
    const double r = exp(-ln_amp) / amp;
    if (ph == 0.0) {
        out[2 * k] = (T)r;
        out[2 * k + 1] = (T)0.0;
    } else {
        out[2 * k] = (T)(r * cos(sign * ph));
        out[2 * k + 1] = (T)(r * sin(sign * ph));
    }
}

#define FF_DEFINE_T3(T, S)                                                                                         \
    FF_EXTERN_C __global__ void ff_t3_bounds_##S(ff_t3_u64 n, const T* a, ff_t3_u64* out) {                        \
        ff_t3_bounds<T>(n, a, out);                                                                                \
    }                                                                                                              \
    FF_REGISTER(ff_t3_bounds_##S)                                                                                  \
    FF_EXTERN_C __global__ void ff_t3_rescale_##S(ff_t3_u64 n, T* a, double centre, double scale) {                \
        ff_t3_rescale<T>(n, a, centre, scale);                                                                     \
    }                                                                                                              \
    FF_REGISTER(ff_t3_rescale_##S)                                                                                 \
    FF_EXTERN_C __global__ void ff_t3_prephase_##S(ff_t3_u64 m, int dim, const T* x, const T* y, const T* z,       \
                                                   double d0, double d1, double d2, double sign, T* out) {         \
        ff_t3_prephase<T>(m, dim, x, y, z, d0, d1, d2, sign, out);                                                 \
    }                                                                                                              \
    FF_REGISTER(ff_t3_prephase_##S)                                                                                \
    FF_EXTERN_C __global__ void ff_t3_deconv_##S(ff_t3_u64 n, int dim, const T* s, const T* t, const T* u,         \
                                                 const double* par, double sign, T* out) {                         \
        ff_t3_deconv<T>(n, dim, s, t, u, par, sign, out);                                                          \
    }                                                                                                              \
    FF_REGISTER(ff_t3_deconv_##S)

FF_DEFINE_T3(float, f32)
FF_DEFINE_T3(double, f64)
