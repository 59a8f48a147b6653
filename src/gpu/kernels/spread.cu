// farfield GPU spreading and interpolation kernels (CUDA C++).
//
// Compiled at run time by NVRTC (src/gpu/check.rs, called from src/gpu/cuda.rs) for the device's
// compute capability, and compiled unchanged as plain C++ by the CUDA-on-CPU emulation harness
// (gpu-emu/, docs/design.md §5.3),
// which defines FF_EMULATION and CUDA's built-ins before including this file. Therefore:
//  * no #include (NVRTC has no system headers here); math goes through the ff_* overloads below;
//  * every __syncthreads() and __shfl_*_sync() is reached by all non-exited threads of the block
//    (the emulator's barriers and shuffles are block-wide);
//  * dynamic shared memory only through FF_DYN_SHARED.
//
// Conventions (as the CPU spreader, src/spread/mod.rs): grid point i of an axis of nf points
// sits at x = 2πi/nf; a coordinate x is folded to g = frac(x/2π)·nf ∈ [0, nf); the first grid
// index a point touches is i0 = ceil(g − w/2) and its kernel values are ψ(i0 + j − g), j < w.
// Grids and strengths are interleaved complex (re, im) arrays, grid index i + nf0·(j + nf1·k).
//
// Methods (see src/gpu/spread.rs for the host side and the selection rule):
//  GM       particle-based: one thread per point, atomicAdd into the global grid (Guo et al. §2);
//  GM-sort  the same, points visited in bin-sorted order (device bin sort: count, scan, permute);
//  SM       subproblems of one bin spread into a shared-memory tile, then added to the grid
//           (cuFINUFFT's method);
//  CSR      "single mesh" (Guo et al. §3.1): a sparse matrix with one row per grid point built in
//           setpts (count, prefix sum, fill), applied with compute units of 1–16 threads and
//           warp-shuffle reductions (Guo et al. §3.2);
//  GROUP    "group mesh" (Guo et al. §3.1): rows grouped by 64 grid points, each group's entries
//           contiguous; one block per group accumulates in shared memory.
// Interpolation (the transpose) exists for each.
//
// Batches (NUFFT ntrans > 1, src/gpu/nufft.rs): every spreading/interpolation kernel takes nvec
// vectors at once. Vector v of the strengths/values is c + 2·(v0 + v)·M (v0: the first vector
// of the chunk in the caller's stacked array), vector v of the grid is grid + 2·v·Πnf (the
// chunk's fine grids, one after the other). GM computes a point's kernel values once and
// applies them to every vector; CSR and the point-major interpolation loop over the vectors
// inside a thread (weights re-read from cache); SM and GROUP run nsub·nvec (ngroups·nvec)
// blocks, block b working on vector b / nsub, so a block's shared memory holds one tile.
// Guo et al. = X. Guo, X. Liu, P. Xu, Z. Du, E. Chow, "Efficient particle-mesh spreading on GPUs",
// Procedia Comput. Sci. 51 (2015) 120–129.

#ifndef FF_EMULATION
#define FF_EXTERN_C extern "C"
#define FF_DYN_SHARED(T, name) \
    extern __shared__ __align__(16) unsigned char ff_dyn_smem[]; \
    T* name = reinterpret_cast<T*>(ff_dyn_smem)
#define FF_REGISTER(name)
#endif

#define FF_MAXW 32
#define FF_ES_ROW 16
#define FF_KER_ES 0
#define FF_KER_GAUSS 1
#define FF_KER_BSPLINE 2
#define FF_GROUP_SHIFT 6
#define FF_GROUP_SIZE 64
#define FF_SCAN_BLOCK 256
#define FF_FULL_MASK 0xffffffffu

// Geometry of the fine grid and of the bins (mirrored by FfGeom in src/gpu/types.rs).
struct FfGeom {
    int dim;
    int nf[3];
    int bs[3];   // bin sizes (grid points per bin and axis)
    int nb[3];   // bins per axis
};

// Kernel description (mirrored by FfKernel in src/gpu/types.rs). tab points to device memory
// of the kernel's precision: ES Horner coefficients tab[m*16 + j] (power deg−m of piece j), or
// the Gaussian's E3 factors tab[j]; unused for the B-spline.
struct FfKernel {
    int type;
    int w;
    int deg;
    int msp;
    double inv4tau;
    double inv2tau;
    const void* tab;
};

__device__ __forceinline__ float ff_exp(float x) { return expf(x); }
__device__ __forceinline__ double ff_exp(double x) { return exp(x); }
__device__ __forceinline__ float ff_ceil(float x) { return ceilf(x); }
__device__ __forceinline__ double ff_ceil(double x) { return ceil(x); }
__device__ __forceinline__ int ff_imin(int a, int b) { return a < b ? a : b; }
__device__ __forceinline__ unsigned ff_global_id() { return blockIdx.x * blockDim.x + threadIdx.x; }

// Width W: W > 0 is the kernel's width known at compile time (the loops over a point's window
// unroll and its per-axis kernel values and indices live in registers: ptxas reports no stack
// frame); W = 0 reads the width from FfKernel (arrays of FF_MAXW values in local memory). The
// host launches the W > 0 entry points for the widths of `SPECIALISED_WIDTHS` (src/gpu/mod.rs;
// FF_DEFINE_WIDTHS below lists the same widths) and the W = 0 ones otherwise.
#define FF_WCAP(W) ((W) > 0 ? (W) : FF_MAXW)
// FF_UNROLL: the x loop over a window (and the kernel evaluation), unrolled completely when W > 0;
// FF_ROLLED: the y and z loops, kept as loops (their per-axis arrays stay in local memory, read
// once per row; unrolled they cost registers and compile time: W = 16, 3D, f64 took 9 s of NVRTC
// and 150–170 registers instead of 5 s and 94–116).
#ifdef FF_EMULATION
#define FF_UNROLL
#define FF_ROLLED
#else
#define FF_UNROLL _Pragma("unroll")
#define FF_ROLLED _Pragma("unroll 1")
#endif

// Kernel values ψ(t + j), j < w, for t = i0 − g ∈ [−w/2, −w/2 + 1): the same formulas, in the
// same order, as src/kernel/{es,gaussian,bspline}.rs.
template <typename T, int W>
__device__ __forceinline__ void ff_eval_kernel(const FfKernel& k, T t, T* out) {
    const int w = W > 0 ? W : k.w;
    if (k.type == FF_KER_ES) {
        const T* c = static_cast<const T*>(k.tab);
        const T s = (t + (T)(0.5 * w)) * (T)2 - (T)1;
        FF_UNROLL
        for (int j = 0; j < w; ++j) {
            T acc = c[j];
            for (int m = 1; m <= k.deg; ++m) acc = acc * s + c[m * FF_ES_ROW + j];
            out[j] = acc;
        }
    } else if (k.type == FF_KER_GAUSS) {
        const T* e3 = static_cast<const T*>(k.tab);
        const T d = -(t + (T)(k.msp - 1));
        const T e1 = ff_exp(-d * d * (T)k.inv4tau);
        const T e2 = ff_exp(d * (T)k.inv2tau);
        const T e2inv = (T)1 / e2;
        const int c = k.msp - 1;
        // upward from c, then downward from c − 1 (the loops run over the whole window, so
        // that with W > 0 every index into out is a compile-time constant)
        T p = e1;
        FF_UNROLL
        for (int j = 0; j < w; ++j) {
            if (j >= c) { out[j] = p * e3[j]; p = p * e2; }
        }
        p = e1 * e2inv;
        FF_UNROLL
        for (int j = w - 1; j >= 0; --j) {
            if (j < c) { out[j] = p * e3[j]; p = p * e2inv; }
        }
    } else {
        // centred cardinal B-spline of order w: M_w(f + j), f = t + w/2 ∈ [0, 1)
        const T f = t + (T)(0.5 * w);
        if (w == 1) { out[0] = (T)1; return; }  // order 1: nearest grid point
        out[0] = f;
        out[1] = (T)1 - f;
        FF_UNROLL
        for (int kk = 3; kk <= w; ++kk) {
            const T inv = (T)1 / (T)(kk - 1);
            const T kf = (T)kk;
            out[kk - 1] = (kf - f - (T)(kk - 1)) * out[kk - 2] * inv;
            FF_UNROLL
            for (int j = kk - 2; j >= 1; --j) {
                const T u = f + (T)j;
                out[j] = (u * out[j] + (kf - u) * out[j - 1]) * inv;
            }
            out[0] = f * out[0] * inv;
        }
    }
}

// Kernel values kv[q] and wrapped grid indices ix[q] (q < w) of grid coordinate g on an axis of
// n points; returns the first (unwrapped) index i0.
template <typename T, int W>
__device__ __forceinline__ int ff_axis(const FfKernel& ker, T g, int n, T* kv, int* ix) {
    const int w = W > 0 ? W : ker.w;
    const T start = ff_ceil(g - (T)(0.5 * w));
    const int i0 = (int)start;
    ff_eval_kernel<T, W>(ker, start - g, kv);
    FF_UNROLL
    for (int q = 0; q < w; ++q) {
        int i = i0 + q;
        if (i < 0) i += n;
        if (i >= n) i -= n;
        ix[q] = i;
    }
    return i0;
}

// Kernel values and wrapped grid indices of point j along each axis (kx, ix: x; ky, iy: y; kz,
// iz: z; one value 1 at index 0 on unused axes), first indices i0. Separate arrays per axis, so
// that those indexed only inside unrolled loops (x, y) stay in registers when W > 0.
template <typename T, int DIM, int W>
__device__ __forceinline__ void ff_point(const FfGeom& geo, const FfKernel& ker, const T* gx, const T* gy, const T* gz,
                                         int j, T* kx, T* ky, T* kz, int* ix, int* iy, int* iz, int i0[3]) {
    i0[0] = ff_axis<T, W>(ker, gx[j], geo.nf[0], kx, ix);
    if (DIM > 1) {
        i0[1] = ff_axis<T, W>(ker, gy[j], geo.nf[1], ky, iy);
    } else {
        ky[0] = (T)1; iy[0] = 0; i0[1] = 0;
    }
    if (DIM > 2) {
        i0[2] = ff_axis<T, W>(ker, gz[j], geo.nf[2], kz, iz);
    } else {
        kz[0] = (T)1; iz[0] = 0; i0[2] = 0;
    }
}

// The per-point arrays of ff_point, declared in the calling kernel.
#define FF_POINT_ARRAYS(T, W) \
    T psx[FF_WCAP(W)], psy[FF_WCAP(W)], psz[FF_WCAP(W)]; \
    int gix[FF_WCAP(W)], giy[FF_WCAP(W)], giz[FF_WCAP(W)]; \
    int i0[3]

template <int DIM> __device__ __forceinline__ int ff_wy(int w) { return DIM > 1 ? w : 1; }
template <int DIM> __device__ __forceinline__ int ff_wz(int w) { return DIM > 2 ? w : 1; }

// ---------------------------------------------------------------------------------------------
// Folding: g = frac(x/2π)·nf, as src/spread/mod.rs `fold`: the reduction mod 2π is done in
// double precision whatever T is (`reduce_2pi`: x·(1/2π) for |x| ≤ 64, else a two-term
// Cody–Waite 2π with fused multiply-adds), and only the grid coordinate is rounded to T, so
// the CPU and the GPU fold every coordinate of either precision to the same value.
__device__ __forceinline__ double ff_reduce_2pi(double x) {
    const double two_pi_hi = 6.283185307179586, two_pi_lo = 2.4492935982947064e-16;
    const double inv = 1.0 / two_pi_hi;
    double u;
    if (fabs(x) <= 64.0) {
        u = x * inv;
    } else {
        const double q = round(x * inv);
        double r = fma(-q, two_pi_hi, x);
        r = fma(-q, two_pi_lo, r);
        u = r * inv;
    }
    const double f = u - floor(u);
    return f >= 1.0 ? 0.0 : f;
}

__device__ __forceinline__ bool ff_finite(float v) { return fabsf(v) <= 3.40282346638528859812e+38f; }
__device__ __forceinline__ bool ff_finite(double v) { return fabs(v) <= 1.7976931348623157e308; }

// Folds the M points and checks them: bad[d] (set to M before the launch) ends as the smallest
// index of a point whose axis-d coordinate is not finite (atomicMin), M when all are finite.
template <typename T>
__device__ void ff_fold(FfGeom geo, const T* x, const T* y, const T* z, T* gx, T* gy, T* gz, int M, int* bad) {
    const int j = ff_global_id();
    if (j >= M) return;
    const T* in[3] = {x, y, z};
    T* out[3] = {gx, gy, gz};
    for (int d = 0; d < geo.dim; ++d) {
        const T v = in[d][j];
        if (!ff_finite(v)) {
            atomicMin(bad + d, j);
            out[d][j] = (T)0;
            continue;
        }
        const T nfd = (T)geo.nf[d];
        T g = (T)(ff_reduce_2pi((double)v) * (double)geo.nf[d]);
        if (g >= nfd) g = (T)0;  // rounding to T may give nf itself
        out[d][j] = g;
    }
}

// ---------------------------------------------------------------------------------------------
// Spreading plans in physical units (src/plans/spread.rs `SpreadPlan::setpts`, device arrays):
// coordinate x of axis d becomes 2π·u with u = (x − box[d])/box[3 + d], wrapped into [0, 1)
// on a periodic axis (bit `d` of `periodic`); on a free axis the kernel's support
// ceil(u·n − w/2) … + w − 1 (n = box[6 + d]) must lie in 0 … n − 1. Point j's coordinate of
// axis d is in[d][j·stride] (stride 1: one array per axis; dim: rows of interleaved points). In double precision with
// the product unfused, as the host does, so both give the same radians bit for bit. bad[d]
// (set to M before the launch) ends as the smallest index whose axis-d coordinate fails (not
// finite, u not finite, or outside a free axis); the host re-checks that one coordinate to
// name the failure.
template <typename T>
__device__ void ff_box_map(const T* x, const T* y, const T* z, int stride, T* rx, T* ry, T* rz, const double* box,
                           int dim, int periodic, int w, int M, int* bad) {
    const int j = ff_global_id();
    if (j >= M) return;
    const T* in[3] = {x, y, z};
    T* out[3] = {rx, ry, rz};
    for (int d = 0; d < dim; ++d) {
        const double v = (double)in[d][(long long)j * stride];
        double u = (v - box[d]) / box[3 + d];
        bool ok = ff_finite(v) && ff_finite(u);
        if (ok && ((periodic >> d) & 1)) {
            u -= floor(u);
            if (u >= 1.0) u = 0.0;
        } else if (ok) {
            const double n = box[6 + d];
            const double i0 = ceil(__dmul_rn(u, n) - 0.5 * w);
            ok = i0 >= 0.0 && i0 + (double)w <= n;
        }
        if (!ok) {
            atomicMin(bad + d, j);
            u = 0.0;
        }
        out[d][j] = (T)(6.283185307179586 * u);
    }
}

// Real values as complex ones (imaginary part 0), and the real parts of complex values: the
// real-valued device entries of a spreading plan run the complex kernels, as its host arrays do.
template <typename T>
__device__ void ff_real_to_complex(int n, const T* re, T* z) {
    const int j = ff_global_id();
    if (j >= n) return;
    z[2 * j] = re[j];
    z[2 * j + 1] = (T)0;
}

template <typename T>
__device__ void ff_complex_real(int n, const T* z, T* re) {
    const int j = ff_global_id();
    if (j >= n) return;
    re[j] = z[2 * j];
}

// ---------------------------------------------------------------------------------------------
// GM / GM-sort: one thread per point (order == 0: natural order; else sorted order); the
// point's kernel values are computed once and applied to the nvec vectors.
__device__ __forceinline__ long long ff_grid_total(const FfGeom& geo) {
    return (long long)geo.nf[0] * geo.nf[1] * geo.nf[2];
}

template <typename T, int DIM, int W>
__device__ void ff_gm_spread(FfGeom geo, FfKernel ker, const T* gx, const T* gy, const T* gz, const int* order, int M,
                             int nvec, int v0, const T* c, T* grid) {
    const int q = ff_global_id();
    if (q >= M) return;
    const int j = order ? order[q] : q;
    FF_POINT_ARRAYS(T, W);
    ff_point<T, DIM, W>(geo, ker, gx, gy, gz, j, psx, psy, psz, gix, giy, giz, i0);
    const int w = W > 0 ? W : ker.w;
    const long long ntot = ff_grid_total(geo);
    for (int v = 0; v < nvec; ++v) {
        const T* cv = c + 2 * ((long long)(v0 + v) * M);
        T* gv = grid + 2 * ((long long)v * ntot);
        const T cr = cv[2 * j], ci = cv[2 * j + 1];
        FF_ROLLED
        for (int kz = 0; kz < ff_wz<DIM>(w); ++kz) {
            FF_ROLLED
            for (int ky = 0; ky < ff_wy<DIM>(w); ++ky) {
                const T a0 = psz[kz] * psy[ky];
                const int row = geo.nf[0] * (giy[ky] + geo.nf[1] * giz[kz]);
                FF_UNROLL
                for (int kx = 0; kx < w; ++kx) {
                    const T a = psx[kx] * a0;
                    T* p = gv + 2 * (row + gix[kx]);
                    // a zero part adds nothing: real strengths (Ewald's charges) need half the
                    // atomics
                    if (cr != (T)0) atomicAdd(p, cr * a);
                    if (ci != (T)0) atomicAdd(p + 1, ci * a);
                }
            }
        }
    }
}

// The kernel is evaluated once per point and axis (w values each, ff_point); the w^DIM tensor
// product is formed on the fly, x innermost.
template <typename T, int DIM, int W>
__device__ void ff_gm_interp(FfGeom geo, FfKernel ker, const T* gx, const T* gy, const T* gz, const int* order, int M,
                             int nvec, int v0, const T* grid, T* c) {
    const int q = ff_global_id();
    if (q >= M) return;
    const int j = order ? order[q] : q;
    FF_POINT_ARRAYS(T, W);
    ff_point<T, DIM, W>(geo, ker, gx, gy, gz, j, psx, psy, psz, gix, giy, giz, i0);
    const int w = W > 0 ? W : ker.w;
    const long long ntot = ff_grid_total(geo);
    for (int v = 0; v < nvec; ++v) {
        const T* gv = grid + 2 * ((long long)v * ntot);
        T sr = 0, si = 0;
        FF_ROLLED
        for (int kz = 0; kz < ff_wz<DIM>(w); ++kz) {
            FF_ROLLED
            for (int ky = 0; ky < ff_wy<DIM>(w); ++ky) {
                const T a0 = psz[kz] * psy[ky];
                const int row = geo.nf[0] * (giy[ky] + geo.nf[1] * giz[kz]);
                T rr = 0, ri = 0;
                FF_UNROLL
                for (int kx = 0; kx < w; ++kx) {
                    const T* p = gv + 2 * (row + gix[kx]);
                    rr += __ldg(p) * psx[kx];
                    ri += __ldg(p + 1) * psx[kx];
                }
                sr += rr * a0;
                si += ri * a0;
            }
        }
        T* cv = c + 2 * ((long long)(v0 + v) * M);
        cv[2 * j] = sr;
        cv[2 * j + 1] = si;
    }
}

// Zeroes nvec vectors of n complex values, from vector v0 on (GROUP interpolation accumulates).
template <typename T>
__device__ void ff_zero_vecs(int n, int nvec, int v0, T* a) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)n * nvec) return;
    T* p = a + 2 * ((long long)v0 * n + i);
    p[0] = (T)0;
    p[1] = (T)0;
}

// ---------------------------------------------------------------------------------------------
// Device bin sort: bin of each point and its rank inside the bin (atomic count), exclusive scan
// of the counts (ff_scan_*), then idx[start[bin] + rank] = j.
template <typename T>
__device__ void ff_bin_count(FfGeom geo, const T* gx, const T* gy, const T* gz, int M, int* bin, int* rank,
                             unsigned* count) {
    const int j = ff_global_id();
    if (j >= M) return;
    const T* g[3] = {gx, gy, gz};
    int b = 0;
    for (int d = geo.dim - 1; d >= 0; --d) {
        int bd = (int)(g[d][j] / (T)geo.bs[d]);
        if (bd >= geo.nb[d]) bd = geo.nb[d] - 1;
        b = b * geo.nb[d] + bd;
    }
    bin[j] = b;
    rank[j] = (int)atomicAdd(count + b, 1u);
}

#ifndef FF_SPREAD_WIDTH  // not in the width-specialised modules
FF_EXTERN_C __global__ void ff_bin_permute(const int* bin, const int* rank, const unsigned* start, int M, int* idx) {
    const int j = ff_global_id();
    if (j >= M) return;
    idx[start[bin[j]] + rank[j]] = j;
}
FF_REGISTER(ff_bin_permute)
#endif  // FF_SPREAD_WIDTH

// ---------------------------------------------------------------------------------------------
// Exclusive prefix sum of n unsigned values in three launches (blockDim = FF_SCAN_BLOCK):
// ff_scan_local (per block, block totals to sums), ff_scan_single (one block, in place over the
// block totals, looping over chunks), ff_scan_add (adds the scanned totals).
__device__ unsigned ff_block_inclusive_scan(unsigned v) {
    __shared__ unsigned s[FF_SCAN_BLOCK];
    const int t = threadIdx.x;
    s[t] = v;
    __syncthreads();
    for (int off = 1; off < FF_SCAN_BLOCK; off *= 2) {
        const unsigned x = t >= off ? s[t - off] : 0u;
        __syncthreads();
        s[t] += x;
        __syncthreads();
    }
    const unsigned r = s[t];
    __syncthreads();
    return r;
}

#ifndef FF_SPREAD_WIDTH  // not in the width-specialised modules
FF_EXTERN_C __global__ void ff_scan_local(const unsigned* in, unsigned* out, int n, unsigned* sums) {
    const int i = ff_global_id();
    const unsigned v = i < n ? in[i] : 0u;
    const unsigned inc = ff_block_inclusive_scan(v);
    if (i < n) out[i] = inc - v;
    if (threadIdx.x == FF_SCAN_BLOCK - 1) sums[blockIdx.x] = inc;
}
FF_REGISTER(ff_scan_local)

FF_EXTERN_C __global__ void ff_scan_single(unsigned* data, int n) {
    __shared__ unsigned carry;
    if (threadIdx.x == 0) carry = 0u;
    __syncthreads();
    for (int base = 0; base < n; base += FF_SCAN_BLOCK) {
        const int i = base + threadIdx.x;
        const unsigned v = i < n ? data[i] : 0u;
        const unsigned inc = ff_block_inclusive_scan(v);
        const unsigned c0 = carry;
        if (i < n) data[i] = c0 + inc - v;
        __syncthreads();
        if (threadIdx.x == FF_SCAN_BLOCK - 1) carry = c0 + inc;
        __syncthreads();
    }
}
FF_REGISTER(ff_scan_single)

FF_EXTERN_C __global__ void ff_scan_add(unsigned* out, int n, const unsigned* sums) {
    const int i = ff_global_id();
    if (i < n) out[i] += sums[blockIdx.x];
}
FF_REGISTER(ff_scan_add)

// ---------------------------------------------------------------------------------------------
// SM: subproblems (≤ maxsub points of one bin). nsub[b] = ceil(count[b]/maxsub); after a scan,
// subprob s of bin b has sub_bin = b and sub_off = s·maxsub.
FF_EXTERN_C __global__ void ff_subprob_count(const unsigned* count, int nbins, int maxsub, unsigned* nsub) {
    const int b = ff_global_id();
    if (b >= nbins) return;
    nsub[b] = (count[b] + (unsigned)maxsub - 1u) / (unsigned)maxsub;
}
FF_REGISTER(ff_subprob_count)

FF_EXTERN_C __global__ void ff_subprob_map(const unsigned* nsub, const unsigned* substart, int nbins, int maxsub,
                                           int* sub_bin, int* sub_off) {
    const int b = ff_global_id();
    if (b >= nbins) return;
    for (unsigned s = 0; s < nsub[b]; ++s) {
        sub_bin[substart[b] + s] = b;
        sub_off[substart[b] + s] = (int)s * maxsub;
    }
}
FF_REGISTER(ff_subprob_map)
#endif  // FF_SPREAD_WIDTH

// Tile of bin b: origin b·bs − pad per axis, size bs + 2·pad, pad = ceil(w/2) (pad = 0 and size
// 1 on unused axes). Every kernel window of a point in the bin lies inside it.
template <int DIM>
__device__ void ff_tile(const FfGeom& geo, int w, int b, int org[3], int tsz[3]) {
    const int pad = (w + 1) / 2;
    int rest = b;
    for (int d = 0; d < 3; ++d) {
        if (d < DIM) {
            const int bd = rest % geo.nb[d];
            rest /= geo.nb[d];
            org[d] = bd * geo.bs[d] - pad;
            tsz[d] = geo.bs[d] + 2 * pad;
        } else {
            org[d] = 0;
            tsz[d] = 1;
        }
    }
}

__device__ __forceinline__ int ff_wrap(int i, int n) {
    i %= n;
    return i < 0 ? i + n : i;
}

// Grid index (periodic) of element e of a tile with origin org and sizes tsz (x fastest).
template <int DIM>
__device__ __forceinline__ int ff_tile_to_grid(const FfGeom& geo, const int* org, const int* tsz, int e) {
    const int gxi = ff_wrap(org[0] + e % tsz[0], geo.nf[0]);
    const int gyi = DIM > 1 ? ff_wrap(org[1] + (e / tsz[0]) % tsz[1], geo.nf[1]) : 0;
    const int gzi = DIM > 2 ? ff_wrap(org[2] + e / (tsz[0] * tsz[1]), geo.nf[2]) : 0;
    return gxi + geo.nf[0] * (gyi + geo.nf[1] * gzi);
}

// Subproblem sp: its point count *n and first sorted index *first, the tile's origin and sizes;
// returns the number of tile elements. Block b of an SM launch works on subproblem b % nsub of
// vector b / nsub.
template <int DIM>
__device__ __forceinline__ int ff_sm_subproblem(const FfGeom& geo, int w, const unsigned* binstart, const unsigned* count,
                                                const int* sub_bin, const int* sub_off, int maxsub, int sp, int* n,
                                                unsigned* first, int* org, int* tsz) {
    const int b = sub_bin[sp];
    const int off = sub_off[sp];
    *n = ff_imin(maxsub, (int)count[b] - off);
    *first = binstart[b] + (unsigned)off;
    ff_tile<DIM>(geo, w, b, org, tsz);
    return tsz[0] * tsz[1] * tsz[2];
}

template <typename T, int DIM, int W>
__device__ void ff_sm_spread(FfGeom geo, FfKernel ker, const T* gx, const T* gy, const T* gz, const int* idx,
                             const unsigned* binstart, const unsigned* count, const int* sub_bin, const int* sub_off,
                             int maxsub, int nsub, int M, int v0, const T* c, T* grid) {
    FF_DYN_SHARED(T, tile);
    int n, org[3], tsz[3];
    unsigned first;
    const int sp = (int)(blockIdx.x % (unsigned)nsub), v = (int)(blockIdx.x / (unsigned)nsub);
    const int ntile = ff_sm_subproblem<DIM>(geo, ker.w, binstart, count, sub_bin, sub_off, maxsub, sp, &n, &first, org, tsz);
    c += 2 * ((long long)(v0 + v) * M);
    grid += 2 * ((long long)v * ff_grid_total(geo));
    for (int e = threadIdx.x; e < 2 * ntile; e += blockDim.x) tile[e] = (T)0;
    __syncthreads();
    const int w = W > 0 ? W : ker.w;
    for (int q = threadIdx.x; q < n; q += blockDim.x) {
        const int j = idx[first + q];
        FF_POINT_ARRAYS(T, W);
        ff_point<T, DIM, W>(geo, ker, gx, gy, gz, j, psx, psy, psz, gix, giy, giz, i0);
        const T cr = c[2 * j], ci = c[2 * j + 1];
        const int lx = i0[0] - org[0], ly = i0[1] - org[1], lz = i0[2] - org[2];
        FF_ROLLED
        for (int kz = 0; kz < ff_wz<DIM>(w); ++kz) {
            FF_ROLLED
            for (int ky = 0; ky < ff_wy<DIM>(w); ++ky) {
                const T v = psz[kz] * psy[ky];
                const int row = tsz[0] * (ly + ky + tsz[1] * (lz + kz));
                FF_UNROLL
                for (int kx = 0; kx < w; ++kx) {
                    const T a = psx[kx] * v;
                    T* p = tile + 2 * (row + lx + kx);
                    atomicAdd(p, cr * a);
                    atomicAdd(p + 1, ci * a);
                }
            }
        }
    }
    __syncthreads();
    for (int e = threadIdx.x; e < ntile; e += blockDim.x) {
        T* p = grid + 2 * ff_tile_to_grid<DIM>(geo, org, tsz, e);
        const T vr = tile[2 * e], vi = tile[2 * e + 1];
        if (vr != (T)0 || vi != (T)0) {
            atomicAdd(p, vr);
            atomicAdd(p + 1, vi);
        }
    }
}

template <typename T, int DIM, int W>
__device__ void ff_sm_interp(FfGeom geo, FfKernel ker, const T* gx, const T* gy, const T* gz, const int* idx,
                             const unsigned* binstart, const unsigned* count, const int* sub_bin, const int* sub_off,
                             int maxsub, int nsub, int M, int v0, const T* grid, T* c) {
    FF_DYN_SHARED(T, tile);
    int n, org[3], tsz[3];
    unsigned first;
    const int sp = (int)(blockIdx.x % (unsigned)nsub), v = (int)(blockIdx.x / (unsigned)nsub);
    const int ntile = ff_sm_subproblem<DIM>(geo, ker.w, binstart, count, sub_bin, sub_off, maxsub, sp, &n, &first, org, tsz);
    c += 2 * ((long long)(v0 + v) * M);
    grid += 2 * ((long long)v * ff_grid_total(geo));
    for (int e = threadIdx.x; e < ntile; e += blockDim.x) {
        const T* p = grid + 2 * ff_tile_to_grid<DIM>(geo, org, tsz, e);
        tile[2 * e] = __ldg(p);
        tile[2 * e + 1] = __ldg(p + 1);
    }
    __syncthreads();
    const int w = W > 0 ? W : ker.w;
    for (int q = threadIdx.x; q < n; q += blockDim.x) {
        const int j = idx[first + q];
        FF_POINT_ARRAYS(T, W);
        ff_point<T, DIM, W>(geo, ker, gx, gy, gz, j, psx, psy, psz, gix, giy, giz, i0);
        const int lx = i0[0] - org[0], ly = i0[1] - org[1], lz = i0[2] - org[2];
        T sr = 0, si = 0;
        FF_ROLLED
        for (int kz = 0; kz < ff_wz<DIM>(w); ++kz) {
            FF_ROLLED
            for (int ky = 0; ky < ff_wy<DIM>(w); ++ky) {
                const T v = psz[kz] * psy[ky];
                const int row = tsz[0] * (ly + ky + tsz[1] * (lz + kz));
                T rr = 0, ri = 0;
                FF_UNROLL
                for (int kx = 0; kx < w; ++kx) {
                    rr += tile[2 * (row + lx + kx)] * psx[kx];
                    ri += tile[2 * (row + lx + kx) + 1] * psx[kx];
                }
                sr += rr * v;
                si += ri * v;
            }
        }
        c[2 * j] = sr;
        c[2 * j + 1] = si;
    }
}

// ---------------------------------------------------------------------------------------------
// Mesh-based structures (setpts). Point-major weights: entry e = j·P + l (P = w^dim, l the
// position in the point's window, x fastest) has weight pt_w[e] and grid index pt_g[e].
template <typename T, int DIM, int W>
__device__ void ff_pt_weights(FfGeom geo, FfKernel ker, const T* gx, const T* gy, const T* gz, int M, T* pt_w,
                              int* pt_g) {
    const int j = ff_global_id();
    if (j >= M) return;
    FF_POINT_ARRAYS(T, W);
    ff_point<T, DIM, W>(geo, ker, gx, gy, gz, j, psx, psy, psz, gix, giy, giz, i0);
    const int w = W > 0 ? W : ker.w;
    const int wy = ff_wy<DIM>(w), wz = ff_wz<DIM>(w);
    const long long base = (long long)j * (long long)(w * wy * wz);
    int l = 0;
    FF_ROLLED
    for (int kz = 0; kz < wz; ++kz) {
        FF_ROLLED
        for (int ky = 0; ky < wy; ++ky) {
            const T v = psz[kz] * psy[ky];
            const int row = geo.nf[0] * (giy[ky] + geo.nf[1] * giz[kz]);
            FF_UNROLL
            for (int kx = 0; kx < w; ++kx, ++l) {
                pt_w[base + l] = psx[kx] * v;
                pt_g[base + l] = row + gix[kx];
            }
        }
    }
}

// Count entries per row (shift 0: CSR rows = grid points) or per group (shift 6: 64 grid
// points), one thread per entry (p^dim threads per point, as Guo et al. §3.1).
#ifndef FF_SPREAD_WIDTH  // not in the width-specialised modules
FF_EXTERN_C __global__ void ff_entry_count(const int* pt_g, unsigned nent, int shift, unsigned* cnt) {
    const unsigned e = ff_global_id();
    if (e >= nent) return;
    atomicAdd(cnt + (pt_g[e] >> shift), 1u);
}
FF_REGISTER(ff_entry_count)

// Insert entries: col[ptr[r] + cursor[r]++] = e (cursor zeroed before).
FF_EXTERN_C __global__ void ff_entry_fill(const int* pt_g, unsigned nent, int shift, const unsigned* ptr,
                                          unsigned* cursor, unsigned* col) {
    const unsigned e = ff_global_id();
    if (e >= nent) return;
    const int r = pt_g[e] >> shift;
    col[ptr[r] + atomicAdd(cursor + r, 1u)] = e;
}
FF_REGISTER(ff_entry_fill)

// Sorts each row's entries by entry index (insertion sort, one thread per row), so the row
// sums do not depend on the order the atomics handed out the slots.
FF_EXTERN_C __global__ void ff_rows_sort(const unsigned* ptr, int nrows, unsigned* col) {
    const int r = ff_global_id();
    if (r >= nrows) return;
    const unsigned a = ptr[r], b = ptr[r + 1];
    for (unsigned i = a + 1; i < b; ++i) {
        const unsigned v = col[i];
        unsigned k = i;
        while (k > a && col[k - 1] > v) { col[k] = col[k - 1]; --k; }
        col[k] = v;
    }
}
FF_REGISTER(ff_rows_sort)
#endif  // FF_SPREAD_WIDTH

// Sum over the cu lanes of a compute unit (cu a power of two ≤ 32, aligned in the warp) by warp
// shuffles, binomial tree (Guo et al. Fig. 2); lane 0 of the unit gets the total. All 32 lanes of
// the warp must call it.
template <typename T>
__device__ __forceinline__ T ff_cu_reduce(T v, int cu) {
    for (int off = cu / 2; off > 0; off /= 2) v += __shfl_down_sync(FF_FULL_MASK, v, off, cu);
    return v;
}

// CSR spread: grid[r] = Σ_{k ∈ row r} pt_w[col[k]] · c[col[k] / P]; one compute unit of cu
// threads per row, looping over the nvec vectors. Writes every grid point (no atomics, no
// zeroing).
template <typename T>
__device__ void ff_csr_spread(const unsigned* ptr, const unsigned* col, const T* pt_w, int P, int nrows, int cu,
                              int M, int nvec, int v0, const T* c, T* grid) {
    const unsigned t = ff_global_id();
    const int r = (int)(t / (unsigned)cu);
    const int lane = (int)(t % (unsigned)cu);
    for (int v = 0; v < nvec; ++v) {
        const T* cv = c + 2 * ((long long)(v0 + v) * M);
        T sr = 0, si = 0;
        if (r < nrows) {
            const unsigned b = ptr[r + 1];
            for (unsigned k = ptr[r] + (unsigned)lane; k < b; k += (unsigned)cu) {
                const unsigned e = col[k];
                const unsigned j = e / (unsigned)P;
                const T wv = pt_w[e];
                sr += wv * cv[2 * j];
                si += wv * cv[2 * j + 1];
            }
        }
        sr = ff_cu_reduce(sr, cu);
        si = ff_cu_reduce(si, cu);
        if (r < nrows && lane == 0) {
            T* gv = grid + 2 * ((long long)v * nrows);
            gv[2 * r] = sr;
            gv[2 * r + 1] = si;
        }
    }
}

// Point-major interpolation (the transpose of CSR): c[j] = Σ_l pt_w[jP+l] · grid[pt_g[jP+l]],
// one compute unit per point, looping over the nvec vectors (grids of nrows points).
template <typename T>
__device__ void ff_csr_interp(const T* pt_w, const int* pt_g, int P, int M, int cu, int nrows, int nvec, int v0,
                              const T* grid, T* c) {
    const unsigned t = ff_global_id();
    const int j = (int)(t / (unsigned)cu);
    const int lane = (int)(t % (unsigned)cu);
    for (int v = 0; v < nvec; ++v) {
        const T* gv = grid + 2 * ((long long)v * nrows);
        T sr = 0, si = 0;
        if (j < M) {
            const long long base = (long long)j * P;
            for (int l = lane; l < P; l += cu) {
                const T wv = pt_w[base + l];
                const int g = pt_g[base + l];
                sr += wv * __ldg(gv + 2 * g);
                si += wv * __ldg(gv + 2 * g + 1);
            }
        }
        sr = ff_cu_reduce(sr, cu);
        si = ff_cu_reduce(si, cu);
        if (j < M && lane == 0) {
            T* cv = c + 2 * ((long long)(v0 + v) * M);
            cv[2 * j] = sr;
            cv[2 * j + 1] = si;
        }
    }
}

// Group mesh spread: block b owns grid points 64g … 64g+63 (g = b % ngroups) of vector
// b / ngroups, accumulates its entries in shared memory and writes its 64 points (no global
// atomics, no zeroing).
template <typename T>
__device__ void ff_group_spread(const unsigned* gptr, const unsigned* col, const T* pt_w, const int* pt_g, int P,
                                int nrows, int M, int v0, const T* c, T* grid) {
    __shared__ T acc[2 * FF_GROUP_SIZE];
    const unsigned ngroups = (unsigned)((nrows + FF_GROUP_SIZE - 1) / FF_GROUP_SIZE);
    const int g = (int)(blockIdx.x % ngroups), v = (int)(blockIdx.x / ngroups);
    c += 2 * ((long long)(v0 + v) * M);
    grid += 2 * ((long long)v * nrows);
    for (int r = threadIdx.x; r < 2 * FF_GROUP_SIZE; r += blockDim.x) acc[r] = (T)0;
    __syncthreads();
    const unsigned b = gptr[g + 1];
    for (unsigned k = gptr[g] + threadIdx.x; k < b; k += blockDim.x) {
        const unsigned e = col[k];
        const unsigned j = e / (unsigned)P;
        const int r = pt_g[e] & (FF_GROUP_SIZE - 1);
        const T wv = pt_w[e];
        atomicAdd(acc + 2 * r, wv * c[2 * j]);
        atomicAdd(acc + 2 * r + 1, wv * c[2 * j + 1]);
    }
    __syncthreads();
    for (int r = threadIdx.x; r < FF_GROUP_SIZE; r += blockDim.x) {
        const int gr = g * FF_GROUP_SIZE + r;
        if (gr < nrows) {
            grid[2 * gr] = acc[2 * r];
            grid[2 * gr + 1] = acc[2 * r + 1];
        }
    }
}

// Group mesh interpolation: block b loads the 64 grid values of group g = b % ngroups of vector
// b / ngroups into shared memory, then adds each entry's contribution to its point (c zeroed
// before).
template <typename T>
__device__ void ff_group_interp(const unsigned* gptr, const unsigned* col, const T* pt_w, const int* pt_g, int P,
                                int nrows, int M, int v0, const T* grid, T* c) {
    __shared__ T gv[2 * FF_GROUP_SIZE];
    const unsigned ngroups = (unsigned)((nrows + FF_GROUP_SIZE - 1) / FF_GROUP_SIZE);
    const int g = (int)(blockIdx.x % ngroups), v = (int)(blockIdx.x / ngroups);
    c += 2 * ((long long)(v0 + v) * M);
    grid += 2 * ((long long)v * nrows);
    for (int r = threadIdx.x; r < FF_GROUP_SIZE; r += blockDim.x) {
        const int gr = g * FF_GROUP_SIZE + r;
        gv[2 * r] = gr < nrows ? grid[2 * gr] : (T)0;
        gv[2 * r + 1] = gr < nrows ? grid[2 * gr + 1] : (T)0;
    }
    __syncthreads();
    const unsigned b = gptr[g + 1];
    for (unsigned k = gptr[g] + threadIdx.x; k < b; k += blockDim.x) {
        const unsigned e = col[k];
        const unsigned j = e / (unsigned)P;
        const int r = pt_g[e] & (FF_GROUP_SIZE - 1);
        const T wv = pt_w[e];
        atomicAdd(c + 2 * j, wv * gv[2 * r]);
        atomicAdd(c + 2 * j + 1, wv * gv[2 * r + 1]);
    }
}

// ---------------------------------------------------------------------------------------------
// Entry points (extern "C", one per precision and dimension).
#define FF_PTS(T) const T *gx, const T *gy, const T *gz

#define FF_DEFINE_T(T, S)                                                                                  \
    FF_EXTERN_C __global__ void ff_fold_##S(FfGeom geo, const T* x, const T* y, const T* z, T* gx, T* gy,   \
                                            T* gz, int M, int* bad) {                                       \
        ff_fold<T>(geo, x, y, z, gx, gy, gz, M, bad);                                                       \
    }                                                                                                       \
    FF_REGISTER(ff_fold_##S)                                                                                \
    FF_EXTERN_C __global__ void ff_box_map_##S(const T* x, const T* y, const T* z, int stride, T* rx, T* ry, \
                                               T* rz, const double* box, int dim, int periodic, int w, int M, \
                                               int* bad) {                                                  \
        ff_box_map<T>(x, y, z, stride, rx, ry, rz, box, dim, periodic, w, M, bad);                          \
    }                                                                                                       \
    FF_REGISTER(ff_box_map_##S)                                                                             \
    FF_EXTERN_C __global__ void ff_real_to_complex_##S(int n, const T* re, T* z) {                          \
        ff_real_to_complex<T>(n, re, z);                                                                    \
    }                                                                                                       \
    FF_REGISTER(ff_real_to_complex_##S)                                                                     \
    FF_EXTERN_C __global__ void ff_complex_real_##S(int n, const T* z, T* re) {                             \
        ff_complex_real<T>(n, z, re);                                                                       \
    }                                                                                                       \
    FF_REGISTER(ff_complex_real_##S)                                                                        \
    FF_EXTERN_C __global__ void ff_bin_count_##S(FfGeom geo, FF_PTS(T), int M, int* bin, int* rank,         \
                                                 unsigned* count) {                                         \
        ff_bin_count<T>(geo, gx, gy, gz, M, bin, rank, count);                                              \
    }                                                                                                       \
    FF_REGISTER(ff_bin_count_##S)                                                                           \
    FF_EXTERN_C __global__ void ff_zero_vecs_##S(int n, int nvec, int v0, T* a) {                           \
        ff_zero_vecs<T>(n, nvec, v0, a);                                                                    \
    }                                                                                                       \
    FF_REGISTER(ff_zero_vecs_##S)                                                                           \
    FF_EXTERN_C __global__ void ff_csr_spread_##S(const unsigned* ptr, const unsigned* col, const T* pt_w,  \
                                                  int P, int nrows, int cu, int M, int nvec, int v0,        \
                                                  const T* c, T* grid) {                                    \
        ff_csr_spread<T>(ptr, col, pt_w, P, nrows, cu, M, nvec, v0, c, grid);                               \
    }                                                                                                       \
    FF_REGISTER(ff_csr_spread_##S)                                                                          \
    FF_EXTERN_C __global__ void ff_csr_interp_##S(const T* pt_w, const int* pt_g, int P, int M, int cu,     \
                                                  int nrows, int nvec, int v0, const T* grid, T* c) {       \
        ff_csr_interp<T>(pt_w, pt_g, P, M, cu, nrows, nvec, v0, grid, c);                                   \
    }                                                                                                       \
    FF_REGISTER(ff_csr_interp_##S)                                                                          \
    FF_EXTERN_C __global__ void ff_group_spread_##S(const unsigned* gptr, const unsigned* col, const T* pt_w, \
                                                    const int* pt_g, int P, int nrows, int M, int v0,        \
                                                    const T* c, T* grid) {                                    \
        ff_group_spread<T>(gptr, col, pt_w, pt_g, P, nrows, M, v0, c, grid);                                \
    }                                                                                                       \
    FF_REGISTER(ff_group_spread_##S)                                                                        \
    FF_EXTERN_C __global__ void ff_group_interp_##S(const unsigned* gptr, const unsigned* col, const T* pt_w, \
                                                    const int* pt_g, int P, int nrows, int M, int v0,        \
                                                    const T* grid, T* c) {                                    \
        ff_group_interp<T>(gptr, col, pt_w, pt_g, P, nrows, M, v0, grid, c);                                \
    }                                                                                                       \
    FF_REGISTER(ff_group_interp_##S)

// The GM and SM entry points and the point weights of the mesh methods (CSR, GROUP set-up), of
// precision T (suffix S), dimension D and width W (0: read at run time), named
// ff_<kernel>_<D>d_<S><SUF>.
#define FF_POINT_KERNELS(T, S, D, W, SUF)                                                                      \
    FF_EXTERN_C __global__ void ff_gm_spread_##D##d_##S##SUF(FfGeom geo, FfKernel ker, FF_PTS(T), const int* order, \
                                                        int M, int nvec, int v0, const T* c, T* grid) {       \
        ff_gm_spread<T, D, W>(geo, ker, gx, gy, gz, order, M, nvec, v0, c, grid);                                \
    }                                                                                                         \
    FF_REGISTER(ff_gm_spread_##D##d_##S##SUF)                                                                      \
    FF_EXTERN_C __global__ void ff_gm_interp_##D##d_##S##SUF(FfGeom geo, FfKernel ker, FF_PTS(T), const int* order, \
                                                        int M, int nvec, int v0, const T* grid, T* c) {       \
        ff_gm_interp<T, D, W>(geo, ker, gx, gy, gz, order, M, nvec, v0, grid, c);                                \
    }                                                                                                         \
    FF_REGISTER(ff_gm_interp_##D##d_##S##SUF)                                                                      \
    FF_EXTERN_C __global__ void ff_sm_spread_##D##d_##S##SUF(FfGeom geo, FfKernel ker, FF_PTS(T), const int* idx,   \
                                                        const unsigned* binstart, const unsigned* count,      \
                                                        const int* sub_bin, const int* sub_off, int maxsub,   \
                                                        int nsub, int M, int v0, const T* c, T* grid) {       \
        ff_sm_spread<T, D, W>(geo, ker, gx, gy, gz, idx, binstart, count, sub_bin, sub_off, maxsub, nsub, M, v0, \
                           c, grid);                                                                          \
    }                                                                                                         \
    FF_REGISTER(ff_sm_spread_##D##d_##S##SUF)                                                                      \
    FF_EXTERN_C __global__ void ff_sm_interp_##D##d_##S##SUF(FfGeom geo, FfKernel ker, FF_PTS(T), const int* idx,   \
                                                        const unsigned* binstart, const unsigned* count,      \
                                                        const int* sub_bin, const int* sub_off, int maxsub,   \
                                                        int nsub, int M, int v0, const T* grid, T* c) {       \
        ff_sm_interp<T, D, W>(geo, ker, gx, gy, gz, idx, binstart, count, sub_bin, sub_off, maxsub, nsub, M, v0, \
                           grid, c);                                                                          \
    }                                                                                                         \
    FF_REGISTER(ff_sm_interp_##D##d_##S##SUF)                                                                 \
    FF_EXTERN_C __global__ void ff_pt_weights_##D##d_##S##SUF(FfGeom geo, FfKernel ker, FF_PTS(T), int M, T* pt_w, \
                                                              int* pt_g) {                                    \
        ff_pt_weights<T, D, W>(geo, ker, gx, gy, gz, M, pt_w, pt_g);                                          \
    }                                                                                                         \
    FF_REGISTER(ff_pt_weights_##D##d_##S##SUF)

#define FF_DEFINE_TD(T, S, D) FF_POINT_KERNELS(T, S, D, 0, )

// Width-specialised entry points (W in `SPECIALISED_WIDTHS`): the names above
// with the suffix _w<W>.
#define FF_DEFINE_TDW(T, S, D, W) FF_POINT_KERNELS(T, S, D, W, _w##W)

#define FF_DEFINE_WIDTHS(T, S, D)                                                                            \
    FF_DEFINE_TDW(T, S, D, 2) FF_DEFINE_TDW(T, S, D, 3) FF_DEFINE_TDW(T, S, D, 4) FF_DEFINE_TDW(T, S, D, 5)  \
    FF_DEFINE_TDW(T, S, D, 6) FF_DEFINE_TDW(T, S, D, 7) FF_DEFINE_TDW(T, S, D, 8) FF_DEFINE_TDW(T, S, D, 9)  \
    FF_DEFINE_TDW(T, S, D, 10) FF_DEFINE_TDW(T, S, D, 11) FF_DEFINE_TDW(T, S, D, 12)                          \
    FF_DEFINE_TDW(T, S, D, 13) FF_DEFINE_TDW(T, S, D, 14) FF_DEFINE_TDW(T, S, D, 15)                          \
    FF_DEFINE_TDW(T, S, D, 16)

// The library's module (KERNEL_SOURCES) holds the runtime-width kernels; each width-specialised
// (precision, dimension, width) is a module of its own, compiled on first use from this file
// with FF_SPREAD_WIDTH, FF_SPREAD_DIM, FF_SPREAD_T and FF_SPREAD_S defined in front of it
// (src/gpu/mod.rs `width_module`). The emulator compiles all of them.
#if defined(FF_SPREAD_WIDTH)
#define FF_DEFINE_TDW_EXPANDED(T, S, D, W) FF_DEFINE_TDW(T, S, D, W)
FF_DEFINE_TDW_EXPANDED(FF_SPREAD_T, FF_SPREAD_S, FF_SPREAD_DIM, FF_SPREAD_WIDTH)
#else
#define FF_EACH_PRECISION_AND_DIM(M) \
    M(float, f32, 1) M(float, f32, 2) M(float, f32, 3) M(double, f64, 1) M(double, f64, 2) M(double, f64, 3)
FF_DEFINE_T(float, f32)
FF_DEFINE_T(double, f64)
FF_EACH_PRECISION_AND_DIM(FF_DEFINE_TD)
#if defined(FF_EMULATION)
FF_EACH_PRECISION_AND_DIM(FF_DEFINE_WIDTHS)
#endif
#endif
