// farfield GPU FMM kernels (CUDA C++), see src/gpu/fmm/. Compiled by NVRTC and, unchanged, by
// the CUDA-on-CPU emulator (see spread.cu for the rules).
//
// The operators other than M2L, on the conventions of the CPU FMM (src/fmm/harmonics.rs):
// expansions of order p in box units, nc = (p+1)(p+2)/2 complex coefficients with m >= 0,
// stored box-major per level: blk[idx(l,m)] real part, blk[nc + idx(l,m)] imaginary part,
// idx(l,m) = l(l+1)/2 + m; X_{l,-m} = (-1)^m conj(X_lm). Coordinates in units of the root cube
// (tree lo = 0, size = 1): the box of key k at level L has side h = 2^-L and centre
// (decode(k) + 1/2) h.
//
//  * P2M  ff_fmm_p2m:   one block per leaf, one thread per coefficient (l,m), particles staged
//                       through shared memory; O_lm by the column recurrence of harmonics.rs.
//  * M2M  ff_fmm_m2m:   one block per parent box, one thread per parent coefficient; the
//                       children (scaled by 2^-j) staged in shared memory; the direct O(p^4)
//                       translation through the regular harmonics of the child offset
//                       d = (c_child - c_parent)/h_parent (seed paper eq. 14).
//  * L2L  ff_fmm_l2l:   one block per child box, one thread per child coefficient, the parent's
//                       locals in shared memory (the transpose of M2M).
//  * L2P  ff_fmm_l2p:   one block per leaf: the evaluation coefficients of the potential and of
//                       the derived gradient expansions (src/fmm/l2p.rs) in shared memory, one
//                       thread per particle running the harmonics recurrence.
//  * P2P  ff_fmm_p2p_lists / ff_fmm_p2p: 27 neighbour source ranges per leaf (binary search in
//                       the leaf keys, periodic image code), then one block per target leaf,
//                       sources of all 27 ranges staged through shared memory in tiles.
//  * finish: periodic background correction (src/fmm/periodic.rs), range checks, energy and
//                       scatter to the caller's order (src/fmm/stages.rs).

#ifndef FF_EMULATION
#define FF_EXTERN_C extern "C"
#define FF_REGISTER(name)
#define FF_DYN_SHARED(T, name) extern __shared__ __align__(16) unsigned char ff_dyn_smem[]; T* name = reinterpret_cast<T*>(ff_dyn_smem)
#endif

// Block size of the reduction kernels (fixed: static shared arrays).
#define FF_OPS_RED 256

__device__ __forceinline__ int ff_ops_idx(int l, int m) { return l * (l + 1) / 2 + m; }

// Coefficient (l, m) of a block for any m (|m| <= l, else 0), by X_{l,-m} = (-1)^m conj(X_lm).
__device__ __forceinline__ void ff_ops_get(const double* blk, int nc, int l, int m, double& re, double& im) {
    if (l < 0 || m > l || -m > l) {
        re = 0.0;
        im = 0.0;
        return;
    }
    const int am = m < 0 ? -m : m;
    const int i = ff_ops_idx(l, am);
    re = blk[i];
    im = blk[nc + i];
    if (m < 0) {
        if (am & 1) re = -re;
        else im = -im;
    }
}

// Compacts every third bit of k (inverse of the Morton spreading, src/fmm/tree.rs).
__device__ __forceinline__ unsigned long long ff_ops_compact(unsigned long long x) {
    x &= 0x1249249249249249ULL;
    x = (x | x >> 2) & 0x10c30c30c30c30c3ULL;
    x = (x | x >> 4) & 0x100f00f00f00f00fULL;
    x = (x | x >> 8) & 0x1f0000ff0000ffULL;
    x = (x | x >> 16) & 0x1f00000000ffffULL;
    x = (x | x >> 32) & 0x1fffffULL;
    return x;
}
__device__ __forceinline__ unsigned long long ff_ops_part(unsigned long long x) {
    x &= 0x1fffffULL;
    x = (x | x << 32) & 0x1f00000000ffffULL;
    x = (x | x << 16) & 0x1f0000ff0000ffULL;
    x = (x | x << 8) & 0x100f00f00f00f00fULL;
    x = (x | x << 4) & 0x10c30c30c30c30c3ULL;
    x = (x | x << 2) & 0x1249249249249249ULL;
    return x;
}

// 2^-j (exact), 0 <= j < 64.
__device__ __forceinline__ double ff_ops_pow2neg(int j) { return 1.0 / (double)(1ULL << j); }

// Centre coordinate along one axis of box coordinate c at a level of side h.
__device__ __forceinline__ double ff_ops_centre(unsigned long long c, double h) { return ((double)c + 0.5) * h; }

// Regular solid harmonic O_lm(x, y, z) for one (l, m), m >= 0, by the recurrences of
// src/fmm/harmonics.rs (diagonal, then up the column); a[i] = (2l-1)/((l+m)(l-m)),
// b[i] = 1/((l+m)(l-m)) at i = idx(l, m).
__device__ __forceinline__ void ff_ops_regular_one(int l, int m, double x, double y, double z, const double* a,
                                                   const double* b, double& ore, double& oim) {
    double dr = 1.0, di = 0.0;
    for (int k = 1; k <= m; ++k) {
        const double f = -0.5 / (double)k;
        const double nr = f * (x * dr - y * di);
        const double ni = f * (x * di + y * dr);
        dr = nr;
        di = ni;
    }
    if (l == m) {
        ore = dr;
        oim = di;
        return;
    }
    const double r2 = x * x + y * y + z * z;
    double ar = dr, ai = di;          // O_{l-2,m}
    double br = z * dr, bi = z * di;  // O_{l-1,m}
    for (int k = m + 2; k <= l; ++k) {
        const int i = ff_ops_idx(k, m);
        const double az = a[i] * z, br2 = b[i] * r2;
        const double cr = az * br - br2 * ar;
        const double ci = az * bi - br2 * ai;
        ar = br;
        ai = bi;
        br = cr;
        bi = ci;
    }
    ore = br;
    oim = bi;
}

// ---------------------------------------------------------------------------------------------
// P2M: w_lm = sum_i q_i O_lm((s_i - c)/h) of every leaf. Grid: nleaves blocks; block: >= 1
// thread (threads loop over the coefficients); dynamic shared memory: 4*chunk doubles (the
// staged particles, chunk = blockDim.x). out: f64[nleaves * 2nc] (overwritten).
FF_EXTERN_C __global__ void ff_fmm_p2m(int p, int depth, const unsigned long long* keys, const unsigned* leaf_start,
                                       const double* x, const double* y, const double* z, const double* q,
                                       const double* ta, const double* tb, double* out) {
    FF_DYN_SHARED(double, sh);
    const int nc = (p + 1) * (p + 2) / 2;
    const int leaf = blockIdx.x;
    const int nt = blockDim.x, tid = threadIdx.x;
    double* sx = sh;
    double* sy = sh + nt;
    double* sz = sh + 2 * nt;
    double* sq = sh + 3 * nt;
    const unsigned long long k = keys[leaf];
    const double h = 1.0 / (double)(1ULL << depth);
    const double inv_h = (double)(1ULL << depth);
    const double cx = ff_ops_centre(ff_ops_compact(k), h), cy = ff_ops_centre(ff_ops_compact(k >> 1), h),
                 cz = ff_ops_centre(ff_ops_compact(k >> 2), h);
    const unsigned a0 = leaf_start[leaf], a1 = leaf_start[leaf + 1];
    for (int c0 = 0; c0 < nc; c0 += nt) {
        const int i = c0 + tid;
        int l = 0, m = 0;
        if (i < nc) {
            while (ff_ops_idx(l + 1, 0) <= i) ++l;
            m = i - ff_ops_idx(l, 0);
        }
        double accr = 0.0, acci = 0.0;
        for (unsigned s0 = a0; s0 < a1; s0 += nt) {
            __syncthreads();
            if (s0 + tid < a1) {
                const unsigned j = s0 + tid;
                sx[tid] = (x[j] - cx) * inv_h;
                sy[tid] = (y[j] - cy) * inv_h;
                sz[tid] = (z[j] - cz) * inv_h;
                sq[tid] = q[j];
            }
            __syncthreads();
            const unsigned cnt = (a1 - s0) < (unsigned)nt ? (a1 - s0) : (unsigned)nt;
            if (i < nc) {
                for (unsigned s = 0; s < cnt; ++s) {
                    double ore, oim;
                    ff_ops_regular_one(l, m, sx[s], sy[s], sz[s], ta, tb, ore, oim);
                    accr += sq[s] * ore;
                    acci += sq[s] * oim;
                }
            }
        }
        if (i < nc) {
            out[(size_t)leaf * 2 * nc + i] = accr;
            out[(size_t)leaf * 2 * nc + nc + i] = acci;
        }
    }
}
FF_REGISTER(ff_fmm_p2m)

// ---------------------------------------------------------------------------------------------
// M2M: parent_lm = sum_children sum_jk 2^-j w^C_jk O_{l-j,m-k}(d_o), d_o the child offset of
// octant o in parent units (shift: f64[8 * 2nc], O_lm(d_o) per octant). Grid: one block per
// parent box of the level; block: >= nc threads (one per parent coefficient); dynamic shared
// memory: cg * 2nc doubles (cg children staged at once, 1 <= cg <= 8). parent: overwritten.
FF_EXTERN_C __global__ void ff_fmm_m2m(int p, int cg, const unsigned* child_start, const unsigned long long* child_keys,
                                       const double* shift, const double* child, double* parent) {
    FF_DYN_SHARED(double, sh);
    const int nc = (p + 1) * (p + 2) / 2;
    const int b = blockIdx.x, tid = threadIdx.x;
    int l = 0, m = 0;
    if (tid < nc) {
        while (ff_ops_idx(l + 1, 0) <= tid) ++l;
        m = tid - ff_ops_idx(l, 0);
    }
    const unsigned c0 = child_start[b], c1 = child_start[b + 1];
    double sr = 0.0, si = 0.0;
    for (unsigned g0 = c0; g0 < c1; g0 += cg) {
        const unsigned ng = (c1 - g0) < (unsigned)cg ? (c1 - g0) : (unsigned)cg;
        __syncthreads();
        // stage ng children, coefficient (j, k) scaled by 2^-j
        for (int t = tid; t < (int)ng * 2 * nc; t += blockDim.x) {
            const int c = t / (2 * nc), r = t % (2 * nc);
            const int i = r < nc ? r : r - nc;
            int j = 0;
            while (ff_ops_idx(j + 1, 0) <= i) ++j;
            sh[t] = child[(size_t)(g0 + c) * 2 * nc + r] * ff_ops_pow2neg(j);
        }
        __syncthreads();
        if (tid < nc) {
            for (unsigned c = 0; c < ng; ++c) {
                const double* cb = sh + (size_t)c * 2 * nc;
                const double* sb = shift + (size_t)(child_keys[g0 + c] & 7) * 2 * nc;
                double ar = 0.0, ai = 0.0;
                for (int j = 0; j <= l; ++j) {
                    const int n = l - j;
                    const int k0 = (-j > m - n) ? -j : m - n;
                    const int k1 = (j < m + n) ? j : m + n;
                    for (int k = k0; k <= k1; ++k) {
                        double xr, xi, yr, yi;
                        ff_ops_get(cb, nc, j, k, xr, xi);
                        ff_ops_get(sb, nc, n, m - k, yr, yi);
                        ar += xr * yr - xi * yi;
                        ai += xr * yi + xi * yr;
                    }
                }
                sr += ar;
                si += ai;
            }
        }
    }
    if (tid < nc) {
        parent[(size_t)b * 2 * nc + tid] = sr;
        parent[(size_t)b * 2 * nc + nc + tid] = si;
    }
}
FF_REGISTER(ff_fmm_m2m)

// ---------------------------------------------------------------------------------------------
// L2L: child_jk += 2^-(j+1) sum_{l>=j} sum_m mu^P_lm O_{l-j,m-k}(d_o). Grid: one block per box
// of the child level; block: >= nc threads; dynamic shared memory: 2nc doubles (the parent).
FF_EXTERN_C __global__ void ff_fmm_l2l(int p, const unsigned* parent_of, const unsigned long long* keys,
                                       const double* shift, const double* parent, double* child) {
    FF_DYN_SHARED(double, sh);
    const int nc = (p + 1) * (p + 2) / 2;
    const int b = blockIdx.x, tid = threadIdx.x;
    const unsigned pb = parent_of[b];
    for (int t = tid; t < 2 * nc; t += blockDim.x) sh[t] = parent[(size_t)pb * 2 * nc + t];
    __syncthreads();
    if (tid >= nc) return;
    int j = 0;
    while (ff_ops_idx(j + 1, 0) <= tid) ++j;
    const int k = tid - ff_ops_idx(j, 0);
    const double* sb = shift + (size_t)(keys[b] & 7) * 2 * nc;
    double sr = 0.0, si = 0.0;
    for (int l = j; l <= p; ++l) {
        const int n = l - j;
        const int m0 = (-l > k - n) ? -l : k - n;
        const int m1 = (l < k + n) ? l : k + n;
        for (int m = m0; m <= m1; ++m) {
            double xr, xi, yr, yi;
            ff_ops_get(sh, nc, l, m, xr, xi);
            ff_ops_get(sb, nc, n, m - k, yr, yi);
            sr += xr * yr - xi * yi;
            si += xr * yi + xi * yr;
        }
    }
    const double s = ff_ops_pow2neg(j + 1);
    child[(size_t)b * 2 * nc + tid] += s * sr;
    child[(size_t)b * 2 * nc + nc + tid] += s * si;
}
FF_REGISTER(ff_fmm_l2l)

// ---------------------------------------------------------------------------------------------
// L2P: phi_i += (1/h) sum_lm mu_lm O_lm(u_i), E_i -= (1/h^2) grad (derived expansions of order
// p-1, src/fmm/l2p.rs), u_i = (x_i - c)/h. Grid: nleaves blocks; block: any size (threads loop
// over the particles of the leaf); dynamic shared memory: 8nc doubles, or none when cog (a
// scratch of nleaves * 8nc doubles, for orders whose table exceeds shared memory) is given.
// ex == nullptr: no field.
FF_EXTERN_C __global__ void ff_fmm_l2p(int p, int depth, const unsigned long long* keys, const unsigned* leaf_start,
                                       const double* x, const double* y, const double* z, const double* ta,
                                       const double* tb, const double* loc, double* cog, double* phi, double* ex,
                                       double* ey, double* ez) {
    FF_DYN_SHARED(double, sh);
    const int nc = (p + 1) * (p + 2) / 2;
    const int leaf = blockIdx.x, tid = threadIdx.x;
    // [4][2][nc]: (phi, dx, dy, dz) x (cre, cim), in shared memory or in this leaf's slice of cog
    double* co = cog != nullptr ? cog + (size_t)leaf * 8 * nc : sh;
    const bool field = ex != nullptr;
    const double* mu = loc + (size_t)leaf * 2 * nc;
    for (int i = tid; i < nc; i += blockDim.x) {
        int l = 0;
        while (ff_ops_idx(l + 1, 0) <= i) ++l;
        const int m = i - ff_ops_idx(l, 0);
        const double w = m == 0 ? 1.0 : 2.0;
        co[i] = w * mu[i];
        co[nc + i] = -w * mu[nc + i];
        double g[3][2] = {{0.0, 0.0}, {0.0, 0.0}, {0.0, 0.0}};
        if (field && l + 1 <= p) {
            double amr, ami, apr, api, a0r, a0i;
            ff_ops_get(mu, nc, l + 1, m - 1, amr, ami);
            ff_ops_get(mu, nc, l + 1, m + 1, apr, api);
            ff_ops_get(mu, nc, l + 1, m, a0r, a0i);
            g[0][0] = 0.5 * (amr - apr);
            g[0][1] = 0.5 * (ami - api);
            g[1][0] = 0.5 * (api + ami);
            g[1][1] = -0.5 * (apr + amr);
            g[2][0] = a0r;
            g[2][1] = a0i;
        }
        for (int a = 0; a < 3; ++a) {
            co[(2 + 2 * a) * nc + i] = w * g[a][0];
            co[(3 + 2 * a) * nc + i] = -w * g[a][1];
        }
    }
    __syncthreads();
    const unsigned long long k = keys[leaf];
    const double h = 1.0 / (double)(1ULL << depth);
    const double inv_h = (double)(1ULL << depth);
    const double inv_h2 = inv_h * inv_h;
    const double cx = ff_ops_centre(ff_ops_compact(k), h), cy = ff_ops_centre(ff_ops_compact(k >> 1), h),
                 cz = ff_ops_centre(ff_ops_compact(k >> 2), h);
    const unsigned a0 = leaf_start[leaf], a1 = leaf_start[leaf + 1];
    for (unsigned i = a0 + tid; i < a1; i += blockDim.x) {
        const double ux = (x[i] - cx) * inv_h, uy = (y[i] - cy) * inv_h, uz = (z[i] - cz) * inv_h;
        const double r2 = ux * ux + uy * uy + uz * uz;
        double f = 0.0, gx = 0.0, gy = 0.0, gz = 0.0;
        double dr = 1.0, di = 0.0;  // O_mm
        for (int m = 0; m <= p; ++m) {
            if (m > 0) {
                const double s = -0.5 / (double)m;
                const double nr = s * (ux * dr - uy * di);
                const double ni = s * (ux * di + uy * dr);
                dr = nr;
                di = ni;
            }
            double ar = 0.0, ai = 0.0, br = dr, bi = di;  // O_{l-1,m}, O_{l,m}
            for (int l = m; l <= p; ++l) {
                if (l == m + 1) {
                    ar = dr;
                    ai = di;
                    br = uz * dr;
                    bi = uz * di;
                } else if (l > m + 1) {
                    const int c = ff_ops_idx(l, m);
                    const double az = ta[c] * uz, br2 = tb[c] * r2;
                    const double cr = az * br - br2 * ar;
                    const double ci = az * bi - br2 * ai;
                    ar = br;
                    ai = bi;
                    br = cr;
                    bi = ci;
                }
                const int c = ff_ops_idx(l, m);
                f += co[c] * br + co[nc + c] * bi;
                if (field && l < p) {
                    gx += co[2 * nc + c] * br + co[3 * nc + c] * bi;
                    gy += co[4 * nc + c] * br + co[5 * nc + c] * bi;
                    gz += co[6 * nc + c] * br + co[7 * nc + c] * bi;
                }
            }
        }
        phi[i] += f * inv_h;
        if (field) {
            ex[i] -= gx * inv_h2;
            ey[i] -= gy * inv_h2;
            ez[i] -= gz * inv_h2;
        }
    }
}
FF_REGISTER(ff_fmm_l2p)

// ---------------------------------------------------------------------------------------------
// P2P lists: for every (leaf b, neighbour slot s = (dx+1) + 3(dy+1) + 9(dz+1)) the source range
// of the occupied leaf at offset (dx, dy, dz) (empty if none) and the periodic image code
// (ix+1) + 3(iy+1) + 9(iz+1), image shift = (ix, iy, iz) root cubes. One thread per entry;
// ranges: u32[27 nleaves][2] (start, end), img: i32[27 nleaves]. Slots in (dz, dy, dx) order,
// the CPU's order (src/fmm/lists.rs).
FF_EXTERN_C __global__ void ff_fmm_p2p_lists(int nleaves, int depth, int periodic, const unsigned long long* keys,
                                             const unsigned* leaf_start, unsigned* ranges, int* img) {
    const long long e = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (e >= 27LL * nleaves) return;
    const int b = (int)(e / 27), s = (int)(e % 27);
    const int off[3] = {s % 3 - 1, (s / 3) % 3 - 1, s / 9 - 1};
    const unsigned long long k = keys[b];
    const long long n = 1LL << depth;
    unsigned long long cc[3];
    int im[3];
    bool ok = true;
    for (int d = 0; d < 3; ++d) {
        const long long v = (long long)ff_ops_compact(k >> d) + off[d];
        if (periodic) {
            long long w = v % n;
            if (w < 0) w += n;
            im[d] = (int)((v - w) / n);
            cc[d] = (unsigned long long)w;
        } else {
            if (v < 0 || v >= n) ok = false;
            im[d] = 0;
            cc[d] = (unsigned long long)(v < 0 ? 0 : v);
        }
    }
    unsigned start = 0, end = 0;
    if (ok) {
        const unsigned long long key = ff_ops_part(cc[0]) | ff_ops_part(cc[1]) << 1 | ff_ops_part(cc[2]) << 2;
        int lo = 0, hi = nleaves;  // first index with keys[i] >= key
        while (lo < hi) {
            const int mid = (lo + hi) / 2;
            if (keys[mid] < key) lo = mid + 1;
            else hi = mid;
        }
        if (lo < nleaves && keys[lo] == key) {
            start = leaf_start[lo];
            end = leaf_start[lo + 1];
        }
    }
    ranges[2 * e] = start;
    ranges[2 * e + 1] = end;
    img[e] = (im[0] + 1) + 3 * (im[1] + 1) + 9 * (im[2] + 1);
}
FF_REGISTER(ff_fmm_p2p_lists)

// P2P: phi_i += sum_j q_j / r_ij, E_i += sum_j q_j (x_i - x_j)/r_ij^3 over the 27 source ranges of
// the target's leaf (a pair at distance 0, the particle itself, contributes nothing; the image
// shift is subtracted from the target, as the CPU). Grid: nleaves blocks; block: any size
// (threads loop over the targets); dynamic shared memory: tile * (4 doubles + 1 int) + 28 ints
// (+ 27*2 unsigned + 27 ints) = tile*36 + 352 bytes. ex == nullptr: no field.
FF_EXTERN_C __global__ void ff_fmm_p2p(int tile, const unsigned* leaf_start, const unsigned* ranges, const int* img,
                                       const double* x, const double* y, const double* z, const double* q,
                                       double* phi, double* ex, double* ey, double* ez) {
    FF_DYN_SHARED(double, sh);
    double* sx = sh;
    double* sy = sh + tile;
    double* sz = sh + 2 * tile;
    double* sq = sh + 3 * tile;
    int* scode = reinterpret_cast<int*>(sh + 4 * tile);
    int* pre = scode + tile;                             // [28] prefix sums of the range lengths
    unsigned* rstart = reinterpret_cast<unsigned*>(pre + 28);  // [27]
    int* rcode = reinterpret_cast<int*>(rstart + 27);    // [27]
    const int leaf = blockIdx.x, tid = threadIdx.x, nt = blockDim.x;
    const bool field = ex != nullptr;
    if (tid < 27) {
        const size_t e = (size_t)leaf * 27 + tid;
        rstart[tid] = ranges[2 * e];
        rcode[tid] = img[e];
    }
    if (tid == 0) {
        int acc = 0;
        for (int r = 0; r < 27; ++r) {
            pre[r] = acc;
            const size_t e = (size_t)leaf * 27 + r;
            acc += (int)(ranges[2 * e + 1] - ranges[2 * e]);
        }
        pre[27] = acc;
    }
    __syncthreads();
    const int total = pre[27];
    const unsigned t0 = leaf_start[leaf], t1 = leaf_start[leaf + 1];
    for (unsigned tb = t0; tb < t1; tb += nt) {
        const unsigned i = tb + tid;
        const bool valid = i < t1;
        const double tx = valid ? x[i] : 0.0, ty = valid ? y[i] : 0.0, tz = valid ? z[i] : 0.0;
        double ap = 0.0, ax = 0.0, ay = 0.0, az = 0.0;
        for (int sb = 0; sb < total; sb += tile) {
            const int cnt = (total - sb) < tile ? (total - sb) : tile;
            __syncthreads();
            for (int kk = tid; kk < cnt; kk += nt) {
                const int g = sb + kk;
                int r = 0;
                while (pre[r + 1] <= g) ++r;
                const unsigned j = rstart[r] + (unsigned)(g - pre[r]);
                sx[kk] = x[j];
                sy[kk] = y[j];
                sz[kk] = z[j];
                sq[kk] = q[j];
                scode[kk] = rcode[r];
            }
            __syncthreads();
            if (valid) {
                for (int kk = 0; kk < cnt; ++kk) {
                    const int c = scode[kk];
                    const double shx = (double)(c % 3 - 1), shy = (double)((c / 3) % 3 - 1), shz = (double)(c / 9 - 1);
                    const double dx = (tx - shx) - sx[kk];
                    const double dy = (ty - shy) - sy[kk];
                    const double dz = (tz - shz) - sz[kk];
                    const double r2 = dx * dx + dy * dy + dz * dz;
                    const double inv = r2 > 0.0 ? 1.0 / sqrt(r2) : 0.0;
                    const double qi = sq[kk] * inv;
                    ap += qi;
                    if (field) {
                        const double q3 = qi * (inv * inv);
                        ax += q3 * dx;
                        ay += q3 * dy;
                        az += q3 * dz;
                    }
                }
            }
        }
        if (valid) {
            phi[i] += ap;
            if (field) {
                ex[i] += ax;
                ey[i] += ay;
                ez[i] += az;
            }
        }
    }
}
FF_REGISTER(ff_fmm_p2p)

// ---------------------------------------------------------------------------------------------
// Reductions (block size FF_OPS_RED, grid-stride; per-block partials, then one block).

// Block sum of v (all threads of the block call it); the result is valid in thread 0.
__device__ double ff_ops_block_sum(double v, double* s) {
    const int tid = threadIdx.x;
    __syncthreads();
    s[tid] = v;
    __syncthreads();
    for (int w = FF_OPS_RED / 2; w > 0; w >>= 1) {
        if (tid < w) s[tid] += s[tid + w];
        __syncthreads();
    }
    return s[0];
}

// max(|a|, |b|) that propagates NaN (as src/scale.rs max_abs).
__device__ __forceinline__ double ff_ops_nanmax(double a, double b) {
    if (a != a) return a;
    if (b != b) return b;
    return a > b ? a : b;
}

__device__ double ff_ops_block_max(double v, double* s) {
    const int tid = threadIdx.x;
    __syncthreads();
    s[tid] = v;
    __syncthreads();
    for (int w = FF_OPS_RED / 2; w > 0; w >>= 1) {
        if (tid < w) s[tid] = ff_ops_nanmax(s[tid], s[tid + w]);
        __syncthreads();
    }
    return s[0];
}

// Leaf of sorted particle i: the b with leaf_start[b] <= i < leaf_start[b+1] (binary search;
// leaves are not empty).
__device__ __forceinline__ int ff_ops_leaf_of(unsigned i, int nleaves, const unsigned* leaf_start) {
    int lo = 0, hi = nleaves;
    while (hi - lo > 1) {
        const int mid = (lo + hi) / 2;
        if (leaf_start[mid] <= i) lo = mid;
        else hi = mid;
    }
    return lo;
}

// r = x_i - c1 with c1 the centre of the level-1 box of particle i's leaf.
__device__ __forceinline__ void ff_ops_rel_level1(int i, int nleaves, int depth, const unsigned long long* keys,
                                                  const unsigned* leaf_start, const double* x, const double* y,
                                                  const double* z, double& rx, double& ry, double& rz) {
    const unsigned long long k1 = keys[ff_ops_leaf_of((unsigned)i, nleaves, leaf_start)] >> (3 * (depth - 1));
    rx = x[i] - ff_ops_centre(ff_ops_compact(k1), 0.5);
    ry = y[i] - ff_ops_centre(ff_ops_compact(k1 >> 1), 0.5);
    rz = z[i] - ff_ops_centre(ff_ops_compact(k1 >> 2), 0.5);
}

// Periodic background partial sums per block (one thread per particle, grid-stride):
// (Q, D'x, D'y, D'z, S') with r = x - c1 (c1 the level-1 centre of the particle's leaf).
// Block: FF_OPS_RED threads; part: f64[gridDim.x * 5].
FF_EXTERN_C __global__ void ff_fmm_bg_partial(int n, int nleaves, int depth, const unsigned long long* keys,
                                              const unsigned* leaf_start, const double* x, const double* y,
                                              const double* z, const double* q, double* part) {
    __shared__ double s[FF_OPS_RED];
    double acc[5] = {0.0, 0.0, 0.0, 0.0, 0.0};
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double rx, ry, rz;
        ff_ops_rel_level1(i, nleaves, depth, keys, leaf_start, x, y, z, rx, ry, rz);
        const double qi = q[i];
        acc[0] += qi;
        acc[1] += qi * rx;
        acc[2] += qi * ry;
        acc[3] += qi * rz;
        acc[4] += qi * (rx * rx + ry * ry + rz * rz);
    }
    for (int a = 0; a < 5; ++a) {
        const double t = ff_ops_block_sum(acc[a], s);
        if (threadIdx.x == 0) part[5 * blockIdx.x + a] = t;
    }
}
FF_REGISTER(ff_fmm_bg_partial)

// Sums (op 0) or NaN-propagating maxima (op 1) of nvals interleaved values over nparts partials:
// out[v] = reduce_j part[j * nvals + v]. One block of FF_OPS_RED threads.
FF_EXTERN_C __global__ void ff_fmm_fin_reduce(int nparts, int nvals, int op, const double* part, double* out) {
    __shared__ double s[FF_OPS_RED];
    for (int v = 0; v < nvals; ++v) {
        double acc = 0.0;
        for (int j = threadIdx.x; j < nparts; j += blockDim.x) {
            const double t = part[(size_t)j * nvals + v];
            acc = op == 0 ? acc + t : ff_ops_nanmax(acc, t);
        }
        const double r = op == 0 ? ff_ops_block_sum(acc, s) : ff_ops_block_max(acc, s);
        if (threadIdx.x == 0) out[v] = r;
    }
}
FF_REGISTER(ff_fmm_fin_reduce)

// Adds the periodic background correction (src/fmm/periodic.rs background_correction) with
// tot = (Q, D', S') and f = 2 pi / (3 V): phi_i += f (Q |r|^2 - 2 D'.r + S'),
// E_i += 2 f (D' - Q r). One thread per particle (grid-stride); ex == nullptr: no field.
FF_EXTERN_C __global__ void ff_fmm_bg_apply(int n, int nleaves, int depth, const unsigned long long* keys,
                                            const unsigned* leaf_start, const double* x, const double* y,
                                            const double* z, const double* tot, double f, double* phi, double* ex,
                                            double* ey, double* ez) {
    const double qt = tot[0], dx = tot[1], dy = tot[2], dz = tot[3], sp = tot[4];
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        double rx, ry, rz;
        ff_ops_rel_level1(i, nleaves, depth, keys, leaf_start, x, y, z, rx, ry, rz);
        const double rr = rx * rx + ry * ry + rz * rz;
        phi[i] += f * (qt * rr - 2.0 * (dx * rx + dy * ry + dz * rz) + sp);
        if (ex != nullptr) {
            ex[i] += 2.0 * f * (dx - qt * rx);
            ey[i] += 2.0 * f * (dy - qt * ry);
            ez[i] += 2.0 * f * (dz - qt * rz);
        }
    }
}
FF_REGISTER(ff_fmm_bg_apply)

// Range check of one sorted output a[n] before it is scaled to the caller's units by
// nscale divisions by `size`: per-block NaN-propagating max |a| into part[blockIdx.x], and the
// first index whose scaled value is not finite into *bad (atomicMin; initialise to 0xffffffff).
FF_EXTERN_C __global__ void ff_fmm_fin_range(int n, const double* a, double size, int nscale, double* part,
                                                 unsigned* bad) {
    __shared__ double s[FF_OPS_RED];
    double mx = 0.0;
    unsigned first = 0xffffffffu;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) {
        const double v = a[i];
        mx = ff_ops_nanmax(mx, fabs(v));
        double w = v / size;
        if (nscale == 2) w = w / size;
        if (!(fabs(w) <= 1.7976931348623157e308) && (unsigned)i < first) first = (unsigned)i;
    }
    if (first != 0xffffffffu) atomicMin(bad, first);
    const double r = ff_ops_block_max(mx, s);
    if (threadIdx.x == 0) part[blockIdx.x] = r;
}
FF_REGISTER(ff_fmm_fin_range)

// Energy partials: part[blockIdx.x] = sum_i q_i (phi_i / size) over the block's grid-stride share.
FF_EXTERN_C __global__ void ff_fmm_fin_energy(int n, const double* q, const double* phi, double size, double* part) {
    __shared__ double s[FF_OPS_RED];
    double acc = 0.0;
    for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x * blockDim.x) acc += q[i] * (phi[i] / size);
    const double r = ff_ops_block_sum(acc, s);
    if (threadIdx.x == 0) part[blockIdx.x] = r;
}
FF_REGISTER(ff_fmm_fin_energy)

// Scatter to the caller's order and units: phi_out[perm[i]] = phi[i]/size,
// field_out[3 perm[i] + d] = e_d[i]/size/size; a null output is skipped. One thread per particle.
FF_EXTERN_C __global__ void ff_fmm_fin_scatter(int n, const unsigned* perm, double size, const double* phi, const double* ex,
                                           const double* ey, const double* ez, double* phi_out, double* field_out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const size_t j = perm[i];
    if (phi_out != nullptr) phi_out[j] = phi[i] / size;
    if (field_out != nullptr) {
        field_out[3 * j] = ex[i] / size / size;
        field_out[3 * j + 1] = ey[i] / size / size;
        field_out[3 * j + 2] = ez[i] / size / size;
    }
}
FF_REGISTER(ff_fmm_fin_scatter)

// The inverse permutation: rank[perm[i]] = i (the sorted slot of each caller's index). One
// thread per particle.
FF_EXTERN_C __global__ void ff_fmm_rank(int n, const unsigned* perm, unsigned* rank) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) rank[perm[i]] = (unsigned)i;
}
FF_REGISTER(ff_fmm_rank)

// Excluded and scaled pairs (src/fmm/exclusions.rs; CSR as src/gpu/pairs.rs): sorted particle
// i (caller's index oi = perm[i]) subtracts (1 − s) q_j / r from phi[i] and (1 − s) q_j d / r³
// (d = x_i − x_j) from (ex, ey, ez)[i] for each partner oj of its row (sorted slot rank[oj],
// scale xscale[k], 0 when xscale is null), in root-cube units, d the nearest image in the unit
// cube when periodic. Null field arrays are skipped. One thread per particle, its row in
// order: deterministic, no atomics. The FMM refuses coincident particles before, so r > 0.
FF_EXTERN_C __global__ void ff_fmm_excl(int n, const unsigned* perm, const unsigned* rank, const double* x, const double* y,
                                        const double* z, const double* q, int periodic, const unsigned* xptr,
                                        const unsigned* xlist, int nxa, const double* xscale, double* phi, double* ex,
                                        double* ey, double* ez) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const unsigned oi = perm[i];
    if ((int)oi >= nxa) return;
    double dp = 0.0, e0 = 0.0, e1 = 0.0, e2 = 0.0;
    for (unsigned k = xptr[oi]; k < xptr[oi + 1]; ++k) {
        const unsigned j = rank[xlist[k]];
        const double w = xscale != nullptr ? 1.0 - xscale[k] : 1.0;
        double d[3] = {x[i] - x[j], y[i] - y[j], z[i] - z[j]};
        if (periodic)
            for (int a = 0; a < 3; ++a) d[a] -= round(d[a]);
        const double inv = 1.0 / sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        dp += w * q[j] * inv;
        const double c = w * q[j] * inv * inv * inv;
        e0 += c * d[0];
        e1 += c * d[1];
        e2 += c * d[2];
    }
    phi[i] -= dp;
    if (ex != nullptr) {
        ex[i] -= e0;
        ey[i] -= e1;
        ez[i] -= e2;
    }
}
FF_REGISTER(ff_fmm_excl)
