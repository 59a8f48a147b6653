// farfield GPU Ewald k-space kernels (CUDA C++): the device side of src/gpu/ewald/kspace.rs,
// the smooth part of smooth particle-mesh Ewald (Essmann et al., J. Chem. Phys. 103 (1995) 8577)
// and of spectral Ewald (Lindbo & Tornberg, J. Comput. Phys. 230 (2011) 8744), with the same
// formulas, in the same order where it matters, as the CPU path (src/ewald/spme.rs,
// src/ewald/spectral.rs, src/ewald/influence.rs). Spreading and the spectral Ewald
// interpolation are done by the spreader (spread.cu); FFTs by cuFFT.
//
// Compiled by NVRTC on its own and, unchanged, by the CUDA-on-CPU emulator together with the
// other .cu files (see spread.cu for the rules): no #include, every name here starts with
// ff_ewald_ or ff_ew_ (the emulator compiles all sources as one translation unit), barriers
// are reached by every thread of a block (grid-stride loops, no early return before them).
//
// Conventions: positions interleaved xyz[3i + d] (double), charges q[i] (double); the cell is
// given by its reciprocal vectors rb[3d + a] = a*_d,a (rows of B^-T, without 2π, as
// PeriodicBox::recip); grids are interleaved complex (re, im), index i0 + nf0·(i1 + nf1·i2);
// potentials phi[i] and fields field[3i + a] are double. Reductions accumulate in double: each
// block of FF_EW_BLOCK threads writes its partial sums to partials[block·nv + c], and
// ff_ewald_sum_partials adds them in a fixed order (deterministic results).

#ifndef FF_EMULATION
#define FF_EXTERN_C extern "C"
#define FF_REGISTER(name)
#endif

#define FF_EW_BLOCK 128
#define FF_EW_MAXORD 32
#define FF_EW_TWO_PI 6.283185307179586

__device__ __forceinline__ bool ff_ew_finite(double v) { return fabs(v) <= 1.7976931348623157e308; }
__device__ __forceinline__ float ff_ew_ceil(float x) { return ceilf(x); }
__device__ __forceinline__ double ff_ew_ceil(double x) { return ceil(x); }

// Wraps a fractional coordinate into [0, 1) (src/ewald/box_.rs wrap01).
__device__ __forceinline__ double ff_ew_wrap01(double s) {
    const double w = s - floor(s);
    return w >= 1.0 ? 0.0 : w;
}

// The integer mode of FFT index i on an axis of n points; false on the Nyquist index
// (src/ewald/influence.rs mode_of).
__device__ __forceinline__ bool ff_ew_mode(long long i, long long n, double* m) {
    if (2 * i < n) {
        *m = (double)i;
        return true;
    }
    if (2 * i == n) return false;
    *m = (double)(i - n);
    return true;
}

// Wave vector k(m) = 2π Σ_d m_d a*_d (PeriodicBox::kvec).
__device__ __forceinline__ void ff_ew_kvec(const double* rb, double m0, double m1, double m2, double* k) {
    const double tp = FF_EW_TWO_PI;
    k[0] = tp * m0 * rb[0];
    k[1] = tp * (m0 * rb[1] + m1 * rb[4]);
    k[2] = tp * (m0 * rb[2] + m1 * rb[5] + m2 * rb[8]);
}

// Block sum of nv ≤ 8 values per thread into out[0..nv) (thread 0 writes). Every thread of the
// block (FF_EW_BLOCK of them) must call it.
__device__ void ff_ew_block_sum(int nv, const double* v, double* out) {
    __shared__ double sh[FF_EW_BLOCK];
    const int t = threadIdx.x;
    for (int c = 0; c < nv; ++c) {
        sh[t] = v[c];
        __syncthreads();
        for (int s = FF_EW_BLOCK / 2; s > 0; s >>= 1) {
            if (t < s) sh[t] += sh[t + s];
            __syncthreads();
        }
        if (t == 0) out[c] = sh[0];
        __syncthreads();
    }
}

// ---------------------------------------------------------------------------------------------
// Positions → spreader coordinates x_d = 2π(s_d − sh_d), s the wrapped fractional coordinates
// (sh_d = order/(2 K_d) for SPME's centred B-spline, 0 for spectral Ewald), and complex
// strengths (q_i, 0) in precision T. bad[0] (set to n before the launch) ends as the first
// index with a non-finite coordinate, bad[1] with a non-finite charge, bad[2] with fractional
// coordinates that are not finite (a position too far outside the cell).
template <typename T>
__device__ void ff_ew_prep(int n, const double* xyz, const double* q, const double* rb, double sh0, double sh1, double sh2,
                           T* x, T* y, T* z, T* c, int* bad) {
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double r0 = xyz[3 * i], r1 = xyz[3 * i + 1], r2 = xyz[3 * i + 2];
        const double qi = q[i];
        if (!(ff_ew_finite(r0) && ff_ew_finite(r1) && ff_ew_finite(r2))) atomicMin(bad, i);
        if (!ff_ew_finite(qi)) atomicMin(bad + 1, i);
        const double f0 = rb[0] * r0 + rb[1] * r1 + rb[2] * r2;
        const double f1 = rb[4] * r1 + rb[5] * r2;
        const double f2 = rb[8] * r2;
        if (!(ff_ew_finite(f0) && ff_ew_finite(f1) && ff_ew_finite(f2))) atomicMin(bad + 2, i);
        const double tp = FF_EW_TWO_PI;
        x[i] = (T)(tp * (ff_ew_wrap01(f0) - sh0));
        y[i] = (T)(tp * (ff_ew_wrap01(f1) - sh1));
        z[i] = (T)(tp * (ff_ew_wrap01(f2) - sh2));
        c[2 * i] = (T)qi;
        c[2 * i + 1] = (T)0;
    }
}

// ---------------------------------------------------------------------------------------------
// The k-space step on the forward-transformed charge grid g1 = B(m): multiplies by the
// influence function θ (src/ewald/influence.rs, precomputed per cell on the host and stored
// on the device), and
//  * field = 1 (spectral Ewald: fields by ik-differentiation, two outputs packed per complex
//    grid as src/ewald/spectral.rs): g1 ← θB(1 + k_x), g2 ← θB(k_z − i k_y), whose inverse
//    transforms are φ + iE_x and E_y + iE_z;
//  * field = 0: g1 ← θB (SPME; spectral Ewald without fields);
//  * virial = 1: the k-space virial Σ_m ½θ|B|² [δ − 2(1/(4ξ²) + 1/k²) k ⊗ k] (xx, xy, xz, yy,
//    yz, zz), one partial sum per block into partials[6·block + c].
// Every stored mode counts once (full complex spectrum). Grid-stride loop; launched with
// FF_EW_BLOCK threads per block.
template <typename T>
__device__ void ff_ew_scale(int nf0, int nf1, int nf2, const double* rb, const T* theta, double xi, int field, int virial, T* g1,
                            T* g2, double* partials) {
    const long long total = (long long)nf0 * nf1 * nf2;
    const long long stride = (long long)gridDim.x * blockDim.x;
    const double a = 1.0 / (4.0 * xi * xi);
    double v[6] = {0, 0, 0, 0, 0, 0};
    for (long long l = (long long)blockIdx.x * blockDim.x + threadIdx.x; l < total; l += stride) {
        const T th = theta[l];
        const T br = g1[2 * l], bi = g1[2 * l + 1];
        const T fr = br * th, fi = bi * th;
        double m0 = 0, m1 = 0, m2 = 0;
        double k[3] = {0, 0, 0};
        if (th != (T)0) {
            ff_ew_mode(l % nf0, nf0, &m0);
            ff_ew_mode((l / nf0) % nf1, nf1, &m1);
            ff_ew_mode(l / ((long long)nf0 * nf1), nf2, &m2);
            ff_ew_kvec(rb, m0, m1, m2, k);
            if (virial) {
                const double e = 0.5 * (double)th * ((double)br * (double)br + (double)bi * (double)bi);
                const double k2 = k[0] * k[0] + k[1] * k[1] + k[2] * k[2];
                const double b = 2.0 * (a + 1.0 / k2);
                v[0] += e * (1.0 - b * k[0] * k[0]);
                v[1] -= e * b * k[0] * k[1];
                v[2] -= e * b * k[0] * k[2];
                v[3] += e * (1.0 - b * k[1] * k[1]);
                v[4] -= e * b * k[1] * k[2];
                v[5] += e * (1.0 - b * k[2] * k[2]);
            }
        }
        if (field) {
            if (th != (T)0) {
                const T s = (T)1 + (T)k[0];
                const T kz = (T)k[2], ky = (T)k[1];
                g1[2 * l] = fr * s;
                g1[2 * l + 1] = fi * s;
                // (fr + i fi)(kz − i ky)
                g2[2 * l] = fr * kz + fi * ky;
                g2[2 * l + 1] = fi * kz - fr * ky;
            } else {
                g1[2 * l] = fr;
                g1[2 * l + 1] = fi;
                g2[2 * l] = (T)0;
                g2[2 * l + 1] = (T)0;
            }
        } else {
            g1[2 * l] = fr;
            g1[2 * l + 1] = fi;
        }
    }
    if (virial) ff_ew_block_sum(6, v, partials + 6 * (long long)blockIdx.x);
}

// ---------------------------------------------------------------------------------------------
// Cardinal B-spline weights M_n(f + j) and derivatives M_n'(f + j), j < n, f ∈ [0, 1)
// (src/kernel/bspline.rs bspline_weights, same recursion and order). P > 0: n is the constant P
// and the loops unroll (every index into v and dv a compile-time constant); P = 0: n at run time.
#ifndef FF_EW_UNROLL
#ifdef FF_EMULATION
#define FF_EW_UNROLL
#define FF_EW_ROLLED
#else
#define FF_EW_UNROLL _Pragma("unroll")
#define FF_EW_ROLLED _Pragma("unroll 1")
#endif
#endif

template <typename T>
__device__ __forceinline__ void ff_ew_bspline_step(int k, T f, T* v) {
    const T inv = (T)1 / (T)(k - 1);
    const T kk = (T)k;
    v[k - 1] = (kk - f - (T)(k - 1)) * v[k - 2] * inv;
    FF_EW_UNROLL
    for (int j = k - 2; j >= 1; --j) {
        const T u = f + (T)j;
        v[j] = (u * v[j] + (kk - u) * v[j - 1]) * inv;
    }
    v[0] = f * v[0] * inv;
}

template <typename T, int P>
__device__ __forceinline__ void ff_ew_bspline(int n_rt, T f, T* v, T* dv) {
    const int n = P > 0 ? P : n_rt;
    if (n == 1) {
        v[0] = (T)1;
        dv[0] = (T)0;
        return;
    }
    v[0] = f;
    v[1] = (T)1 - f;
    if (n == 2) {
        dv[0] = (T)1;
        dv[1] = (T)-1;
        return;
    }
    FF_EW_UNROLL
    for (int k = 3; k <= n; ++k) {
        if (k == n) {
            dv[0] = v[0];
            FF_EW_UNROLL
            for (int j = 1; j < n - 1; ++j) dv[j] = v[j] - v[j - 1];
            dv[n - 1] = -v[n - 2];
        }
        ff_ew_bspline_step<T>(k, f, v);
    }
}

__device__ __forceinline__ int ff_ew_wrap(int i, int n) { return i < 0 ? i + n : (i >= n ? i - n : i); }

// SPME: the potential and its gradient at the points by B-spline interpolation of the real
// part of the inverse-transformed grid (Essmann et al. eq. 4.9; src/spread/grad.rs
// interp_grad_real), from the spreader's folded grid coordinates g ∈ [0, K_d): weights
// ψ(l − g) = M_n(l − g + n/2) at l = ceil(g − n/2) + j; the field is E_a = −Σ_d ∂φ/∂g_d K_d a*_d,a.
// Overwrites phi[i] and, when field is not NULL, field[3i + a]. Accumulation in double.
// P > 0: the order is the constant P: the x loop unrolls and the x axis's weights stay in
// registers (the y and z loops stay loops; their weights, read once per row, in local memory);
// P = 0: any order (every weight in local memory). One entry point per order
// (ff_ewald_spme_gather_<S>_p<P> for the orders of src/gpu/ewald/kspace.rs
// `SPECIALISED_ORDERS`, those the parameter selection chooses, src/ewald/params.rs;
// FF_EWALD_DEFINE_GATHERS below lists the same orders), so that each has the registers of its
// own order; ff_ewald_spme_gather_<S> for the others.
template <typename T, int P>
__device__ void ff_ew_spme_gather(int n, int nf0, int nf1, int nf2, int order_rt, const T* gx, const T* gy, const T* gz,
                                  const T* grid, const double* rb, double* phi, double* field) {
    const int order = P > 0 ? P : order_rt;
    constexpr int CAP = P > 0 ? P : FF_EW_MAXORD;
    const int stride = gridDim.x * blockDim.x;
    const T half = (T)(0.5 * order);
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        // one array per axis and kind, so that those indexed only in unrolled loops (x) are
        // registers
        T vx[CAP], dvx[CAP], vy[CAP], dvy[CAP], vz[CAP], dvz[CAP];
        const T sx = ff_ew_ceil(gx[i] - half), sy = ff_ew_ceil(gy[i] - half), sz = ff_ew_ceil(gz[i] - half);
        const int i0x = (int)sx, i0y = (int)sy, i0z = (int)sz;
        ff_ew_bspline<T, P>(order, (sx - gx[i]) + half, vx, dvx);
        ff_ew_bspline<T, P>(order, (sy - gy[i]) + half, vy, dvy);
        ff_ew_bspline<T, P>(order, (sz - gz[i]) + half, vz, dvz);
        double val = 0, ax = 0, ay = 0, az = 0;
        FF_EW_ROLLED
        for (int kz = 0; kz < order; ++kz) {
            const int iz = ff_ew_wrap(i0z + kz, nf2);
            FF_EW_ROLLED
            for (int jy = 0; jy < order; ++jy) {
                const int iy = ff_ew_wrap(i0y + jy, nf1);
                const long long base = (long long)nf0 * (iy + (long long)nf1 * iz);
                double rv = 0, rd = 0;
                FF_EW_UNROLL
                for (int ix = 0; ix < order; ++ix) {
                    const double gv = (double)grid[2 * (base + ff_ew_wrap(i0x + ix, nf0))];
                    rv += gv * (double)vx[ix];
                    rd += gv * (double)dvx[ix];
                }
                const double wy = (double)vy[jy], dwy = (double)dvy[jy];
                const double wz = (double)vz[kz], dwz = (double)dvz[kz];
                val += rv * (wy * wz);
                ax += rd * (wy * wz);
                ay += rv * (dwy * wz);
                az += rv * (wy * dwz);
            }
        }
        phi[i] = val;
        if (field) {
            // ∂φ/∂g_d = −(ax, ay, az)_d (∂/∂g ψ(l − g) = −ψ'), E_a = −Σ_d ∂φ/∂g_d K_d a*_d,a
            for (int a = 0; a < 3; ++a) {
                field[3 * i + a] = ax * ((double)nf0 * rb[a]) + ay * ((double)nf1 * rb[3 + a]) + az * ((double)nf2 * rb[6 + a]);
            }
        }
    }
}

// Spectral Ewald: potentials and fields from the interpolated values (vals[0..n): φ + iE_x,
// vals[n..2n): E_y + iE_z; interleaved complex T). Overwrites phi and, when not NULL, field.
template <typename T>
__device__ void ff_ew_spectral_out(int n, const T* vals, double* phi, double* field) {
    const int stride = gridDim.x * blockDim.x;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        phi[i] = (double)vals[2 * i];
        if (field) {
            field[3 * i] = (double)vals[2 * i + 1];
            field[3 * i + 1] = (double)vals[2 * ((long long)n + i)];
            field[3 * i + 2] = (double)vals[2 * ((long long)n + i) + 1];
        }
    }
}

#define FF_EWALD_DEFINE_T(T, S)                                                                                    \
    FF_EXTERN_C __global__ void ff_ewald_prep_##S(int n, const double* xyz, const double* q, const double* rb,     \
                                                  double sh0, double sh1, double sh2, T* x, T* y, T* z, T* c,      \
                                                  int* bad) {                                                      \
        ff_ew_prep<T>(n, xyz, q, rb, sh0, sh1, sh2, x, y, z, c, bad);                                              \
    }                                                                                                              \
    FF_REGISTER(ff_ewald_prep_##S)                                                                                 \
    FF_EXTERN_C __global__ void ff_ewald_scale_##S(int nf0, int nf1, int nf2, const double* rb, const T* theta,    \
                                                   double xi, int field, int virial, T* g1, T* g2,                 \
                                                   double* partials) {                                             \
        ff_ew_scale<T>(nf0, nf1, nf2, rb, theta, xi, field, virial, g1, g2, partials);                             \
    }                                                                                                              \
    FF_REGISTER(ff_ewald_scale_##S)                                                                                \
    FF_EXTERN_C __global__ void ff_ewald_spme_gather_##S(int n, int nf0, int nf1, int nf2, int order, const T* gx, \
                                                         const T* gy, const T* gz, const T* grid, const double* rb, \
                                                         double* phi, double* field) {                             \
        ff_ew_spme_gather<T, 0>(n, nf0, nf1, nf2, order, gx, gy, gz, grid, rb, phi, field);                         \
    }                                                                                                              \
    FF_REGISTER(ff_ewald_spme_gather_##S)                                                                          \
    FF_EXTERN_C __global__ void ff_ewald_spectral_out_##S(int n, const T* vals, double* phi, double* field) {      \
        ff_ew_spectral_out<T>(n, vals, phi, field);                                                                \
    }                                                                                                              \
    FF_REGISTER(ff_ewald_spectral_out_##S)

// The SPME gather for order P (the order argument is not read).
#define FF_EWALD_DEFINE_GATHER(T, S, P)                                                                            \
    FF_EXTERN_C __global__ void ff_ewald_spme_gather_##S##_p##P(int n, int nf0, int nf1, int nf2, int order,       \
                                                                const T* gx, const T* gy, const T* gz,             \
                                                                const T* grid, const double* rb, double* phi,      \
                                                                double* field) {                                   \
        ff_ew_spme_gather<T, P>(n, nf0, nf1, nf2, order, gx, gy, gz, grid, rb, phi, field);                         \
    }                                                                                                              \
    FF_REGISTER(ff_ewald_spme_gather_##S##_p##P)
#define FF_EWALD_DEFINE_GATHERS(T, S)                                                                              \
    FF_EWALD_DEFINE_GATHER(T, S, 4) FF_EWALD_DEFINE_GATHER(T, S, 5) FF_EWALD_DEFINE_GATHER(T, S, 6)                \
    FF_EWALD_DEFINE_GATHER(T, S, 7) FF_EWALD_DEFINE_GATHER(T, S, 8) FF_EWALD_DEFINE_GATHER(T, S, 9)                \
    FF_EWALD_DEFINE_GATHER(T, S, 10)

FF_EWALD_DEFINE_T(float, f32)
FF_EWALD_DEFINE_T(double, f64)
FF_EWALD_DEFINE_GATHERS(float, f32)
FF_EWALD_DEFINE_GATHERS(double, f64)

// ---------------------------------------------------------------------------------------------
// Per-block partial sums over the charges: Σ q_i φ_i, Σ q_i, Σ q_i² into partials[3·block + c]
// (FF_EW_BLOCK threads per block, grid-stride).
FF_EXTERN_C __global__ void ff_ewald_charge_sums(int n, const double* q, const double* phi, double* partials) {
    const int stride = gridDim.x * blockDim.x;
    double v[3] = {0, 0, 0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const double qi = q[i];
        v[0] += qi * phi[i];
        v[1] += qi;
        v[2] += qi * qi;
    }
    ff_ew_block_sum(3, v, partials + 3 * (long long)blockIdx.x);
}
FF_REGISTER(ff_ewald_charge_sums)

// out[off + c] = Σ_b partials[nv·b + c], c < nv ≤ 8, b < nparts: one block of FF_EW_BLOCK
// threads, a fixed summation order.
FF_EXTERN_C __global__ void ff_ewald_sum_partials(int nparts, int nv, int off, const double* partials, double* out) {
    double v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
    for (int b = threadIdx.x; b < nparts; b += blockDim.x) {
        for (int c = 0; c < nv; ++c) v[c] += partials[(long long)nv * b + c];
    }
    ff_ew_block_sum(nv, v, out + off);
}
FF_REGISTER(ff_ewald_sum_partials)

// Self and background terms on the potentials (src/ewald/mod.rs): φ_i += −c_self q_i + bg·Q with
// c_self = 2ξ/√π, bg = −π/(Vξ²) and the net charge Q = sums[iq] (from ff_ewald_sum_partials,
// read on the device: no host round trip).
FF_EXTERN_C __global__ void ff_ewald_self_bg(int n, const double* q, double c_self, double bg, const double* sums, int iq,
                                             double* phi) {
    const int stride = gridDim.x * blockDim.x;
    const double pbg = bg * sums[iq];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) phi[i] += -c_self * q[i] + pbg;
}
FF_REGISTER(ff_ewald_self_bg)
