// farfield GPU FMM kernels (CUDA C++), see src/gpu/fmm/. Compiled by NVRTC and, unchanged, by
// the CUDA-on-CPU emulator (see spread.cu for the rules).
//
// The octree on the device (host side: src/gpu/fmm/tree.rs), the same tree as the CPU's
// (src/fmm/tree.rs), built from the particles in the caller's order and units:
//  * ff_fmmt_check_bounds  first non-finite index of xyz and of q (atomicMin) and the per-axis
//                          minimum and maximum (atomicMin/Max on order-preserving integers);
//  * ff_fmmt_sample        the ≤ 4096-point strided sample the root-cube rules look at;
//  * ff_fmmt_keys          60-bit Morton keys at KEY_DEPTH = 20 bits per axis, from the unit
//                          coordinates computed with the CPU's IEEE operations (no FMA);
//  * ff_fmmt_key_orand     OR and AND of all keys (digit passes over constant bits are skipped);
//  * ff_fmmt_rs_count / ff_fmmt_rs_scatter   one pass of a stable LSD radix sort (8-bit
//                          digits): per-tile digit histograms, an exclusive scan of them
//                          (digit-major), a stable scatter carrying the permutation;
//  * ff_fmmt_scan_*        exclusive prefix sums of unsigned values;
//  * ff_fmmt_run_*         particles in runs of equal keys (the coincidence check's candidates);
//  * ff_fmmt_occ_*         occupied boxes and Σ n_b² per level (the depth rule's statistics);
//  * ff_fmmt_leaf_* / ff_fmmt_level_*   leaves, parent levels, parents and children by
//                          compaction (flags, scan, fill);
//  * ff_fmmt_particles     the sorted particles in unit coordinates.
// Names carry the ff_fmmt_ prefix: the emulator compiles every .cu file in one translation unit.

#ifndef FF_EMULATION
#define FF_EXTERN_C extern "C"
#define FF_REGISTER(name)
#endif

#define FF_FMMT_KD 20
#define FF_FMMT_SCAN_T 64
#define FF_FMMT_SCAN_I 32
#define FF_FMMT_RS_T FF_FMMT_SCAN_T  // one block size: the radix passes scan with ff_fmmt_block_excl
#define FF_FMMT_RS_I 64
#define FF_FMMT_RS_R 256
#define FF_FMMT_MAXLEV 21

typedef unsigned long long ff_fmmt_u64;

__device__ __forceinline__ ff_fmmt_u64 ff_fmmt_gid() {
    return (ff_fmmt_u64)blockIdx.x * blockDim.x + threadIdx.x;
}
__device__ __forceinline__ ff_fmmt_u64 ff_fmmt_gstride() {
    return (ff_fmmt_u64)gridDim.x * blockDim.x;
}

// Finite ⇔ the exponent field is not all ones.
__device__ __forceinline__ bool ff_fmmt_finite(double v) {
    return (((ff_fmmt_u64)__double_as_longlong(v) >> 52) & 0x7ffull) != 0x7ffull;
}
// Order-preserving map of a non-NaN double to an unsigned integer (−0 just below +0).
__device__ __forceinline__ ff_fmmt_u64 ff_fmmt_ord(double v) {
    const ff_fmmt_u64 b = (ff_fmmt_u64)__double_as_longlong(v);
    return (b >> 63) ? ~b : (b | 0x8000000000000000ull);
}

// ---------------------------------------------------------------------------------------------
// out[0]: first i with xyz[i] not finite (init ~0), out[1]: first i with q[i] not finite (init ~0),
// out[2 + d]: ord(min xyz[3j + d]) (init ~0), out[5 + d]: ord(max) (init 0), over finite values.
// Grid-stride (any grid and block).
FF_EXTERN_C __global__ void ff_fmmt_check_bounds(const double* xyz, const double* q, ff_fmmt_u64 n,
                                                 ff_fmmt_u64* out) {
    ff_fmmt_u64 v[8];
    v[0] = ~0ull;
    v[1] = ~0ull;
    for (int d = 0; d < 3; ++d) {
        v[2 + d] = ~0ull;
        v[5 + d] = 0ull;
    }
    for (ff_fmmt_u64 j = ff_fmmt_gid(); j < n; j += ff_fmmt_gstride()) {
        for (int d = 0; d < 3; ++d) {
            const double c = xyz[3 * j + d];
            if (!ff_fmmt_finite(c)) {
                if (3 * j + d < v[0]) v[0] = 3 * j + d;
            } else {
                const ff_fmmt_u64 o = ff_fmmt_ord(c);
                if (o < v[2 + d]) v[2 + d] = o;
                if (o > v[5 + d]) v[5 + d] = o;
            }
        }
        if (!ff_fmmt_finite(q[j]) && j < v[1]) v[1] = j;
    }
    // one atomic per thread and value (the grid is small: ≥ 16 particles per thread)
    if (v[0] != ~0ull) atomicMin(out, v[0]);
    if (v[1] != ~0ull) atomicMin(out + 1, v[1]);
    for (int d = 0; d < 3; ++d) {
        atomicMin(out + 2 + d, v[2 + d]);
        atomicMax(out + 5 + d, v[5 + d]);
    }
}
FF_REGISTER(ff_fmmt_check_bounds)

// out[3k + d] = xyz[3·k·stride + d], k < s.
FF_EXTERN_C __global__ void ff_fmmt_sample(const double* xyz, ff_fmmt_u64 stride, ff_fmmt_u64 s, double* out) {
    for (ff_fmmt_u64 k = ff_fmmt_gid(); k < s; k += ff_fmmt_gstride())
        for (int d = 0; d < 3; ++d) out[3 * k + d] = xyz[3 * k * stride + d];
}
FF_REGISTER(ff_fmmt_sample)

// ---------------------------------------------------------------------------------------------
// Unit coordinates exactly as src/fmm/tree.rs (fold, unit_coord): the _rn intrinsics keep NVRTC
// from contracting x − l·floor(x/l) into an FMA.
__device__ __forceinline__ double ff_fmmt_fold(double x, double l) {
    const double y = __dsub_rn(x, __dmul_rn(l, floor(__ddiv_rn(x, l))));
    if (y >= l || y < 0.0) return 0.0;
    return y;
}
__device__ __forceinline__ double ff_fmmt_unit(double p, double lo, double size, int periodic) {
    if (periodic) {
        const double u = __ddiv_rn(ff_fmmt_fold(__dsub_rn(p, lo), size), size);
        return u < 1.0 ? u : 0.0;
    }
    return __ddiv_rn(__dsub_rn(p, lo), size);
}
__device__ __forceinline__ ff_fmmt_u64 ff_fmmt_part1by2(ff_fmmt_u64 x) {
    x &= 0x1fffffull;
    x = (x | x << 32) & 0x1f00000000ffffull;
    x = (x | x << 16) & 0x1f0000ff0000ffull;
    x = (x | x << 8) & 0x100f00f00f00f00full;
    x = (x | x << 4) & 0x10c30c30c30c30c3ull;
    x = (x | x << 2) & 0x1249249249249249ull;
    return x;
}

// keys[j] = Morton key of particle j at KEY_DEPTH, perm[j] = j.
FF_EXTERN_C __global__ void ff_fmmt_keys(const double* xyz, ff_fmmt_u64 n, double lo0, double lo1, double lo2,
                                         double size, int periodic, ff_fmmt_u64* keys, unsigned* perm) {
    const double nk = (double)(1ull << FF_FMMT_KD);
    const ff_fmmt_u64 maxc = (1ull << FF_FMMT_KD) - 1;
    for (ff_fmmt_u64 j = ff_fmmt_gid(); j < n; j += ff_fmmt_gstride()) {
        ff_fmmt_u64 key = 0;
        for (int d = 0; d < 3; ++d) {
            const double lo = d == 0 ? lo0 : (d == 1 ? lo1 : lo2);
            const double t = floor(__dmul_rn(ff_fmmt_unit(xyz[3 * j + d], lo, size, periodic), nk));
            const ff_fmmt_u64 ic = t <= 0.0 ? 0ull : (t >= (double)maxc ? maxc : (ff_fmmt_u64)t);
            key |= ff_fmmt_part1by2(ic) << d;
        }
        keys[j] = key;
        perm[j] = (unsigned)j;
    }
}
FF_REGISTER(ff_fmmt_keys)

// out[0] |= every key (init 0), out[1] &= every key (init ~0). Grid-stride.
FF_EXTERN_C __global__ void ff_fmmt_key_orand(const ff_fmmt_u64* keys, ff_fmmt_u64 n, ff_fmmt_u64* out) {
    ff_fmmt_u64 o = 0ull, a = ~0ull;
    for (ff_fmmt_u64 j = ff_fmmt_gid(); j < n; j += ff_fmmt_gstride()) {
        o |= keys[j];
        a &= keys[j];
    }
    if (ff_fmmt_gid() < n) {
        atomicOr(out, o);
        atomicAnd(out + 1, a);
    }
}
FF_REGISTER(ff_fmmt_key_orand)

// Exclusive scan of one value per thread (thread 0 scans the FF_FMMT_SCAN_T totals serially:
// few barriers); *total = the block's sum.
__device__ unsigned ff_fmmt_block_excl(unsigned v, unsigned* total) {
    __shared__ unsigned s[FF_FMMT_SCAN_T + 1];
    const int t = threadIdx.x;
    s[t] = v;
    __syncthreads();
    if (t == 0) {
        unsigned run = 0;
        for (int k = 0; k < FF_FMMT_SCAN_T; ++k) {
            const unsigned x = s[k];
            s[k] = run;
            run += x;
        }
        s[FF_FMMT_SCAN_T] = run;
    }
    __syncthreads();
    const unsigned r = s[t];
    *total = s[FF_FMMT_SCAN_T];
    __syncthreads();
    return r;
}

// ---------------------------------------------------------------------------------------------
// Radix sort pass over the digit (key >> shift) & 255. Tile b (one block of FF_FMMT_RS_T threads)
// holds elements b·TILE … b·TILE + TILE − 1, TILE = FF_FMMT_RS_T·FF_FMMT_RS_I; thread t owns the
// FF_FMMT_RS_I consecutive elements from b·TILE + t·FF_FMMT_RS_I, so (thread, item) is the input
// order inside the tile. cnt[d·ntiles + b] = elements of tile b with digit d (digit-major, so
// that its exclusive scan is the first output position of (digit, tile)).
__device__ __forceinline__ unsigned ff_fmmt_digit(ff_fmmt_u64 k, int shift) {
    return (unsigned)(k >> shift) & (FF_FMMT_RS_R - 1);
}

FF_EXTERN_C __global__ void ff_fmmt_rs_count(const ff_fmmt_u64* keys, ff_fmmt_u64 n, int shift, unsigned ntiles,
                                             unsigned* cnt) {
    __shared__ unsigned h[FF_FMMT_RS_R];
    const int t = threadIdx.x;
    for (int d = t; d < FF_FMMT_RS_R; d += FF_FMMT_RS_T) h[d] = 0u;
    __syncthreads();
    const ff_fmmt_u64 base = (ff_fmmt_u64)blockIdx.x * (FF_FMMT_RS_T * FF_FMMT_RS_I) + (ff_fmmt_u64)t * FF_FMMT_RS_I;
    for (int j = 0; j < FF_FMMT_RS_I; ++j) {
        const ff_fmmt_u64 i = base + j;
        if (i < n) atomicAdd(h + ff_fmmt_digit(keys[i], shift), 1u);
    }
    __syncthreads();
    for (int d = t; d < FF_FMMT_RS_R; d += FF_FMMT_RS_T) cnt[(ff_fmmt_u64)d * ntiles + blockIdx.x] = h[d];
}
FF_REGISTER(ff_fmmt_rs_count)

// Stable scatter: off = exclusive scan of cnt. An element of digit d, tile b, thread t, preceded
// inside the thread by r elements of digit d, goes to off[d·ntiles + b] + (elements of digit d in
// the threads before t) + r.
FF_EXTERN_C __global__ void ff_fmmt_rs_scatter(const ff_fmmt_u64* kin, const unsigned* pin, ff_fmmt_u64 n, int shift,
                                               unsigned ntiles, const unsigned* off, ff_fmmt_u64* kout,
                                               unsigned* pout) {
    __shared__ unsigned short h[FF_FMMT_RS_R * FF_FMMT_RS_T];  // [digit][thread]
    __shared__ unsigned short first[FF_FMMT_RS_R];
    const int t = threadIdx.x;
    // thread t counts into its own column h[· ·FF_FMMT_RS_T + t]
    for (int d = 0; d < FF_FMMT_RS_R; ++d) h[d * FF_FMMT_RS_T + t] = 0;
    const ff_fmmt_u64 base = (ff_fmmt_u64)blockIdx.x * (FF_FMMT_RS_T * FF_FMMT_RS_I) + (ff_fmmt_u64)t * FF_FMMT_RS_I;
    for (int j = 0; j < FF_FMMT_RS_I; ++j) {
        const ff_fmmt_u64 i = base + j;
        if (i < n) ++h[ff_fmmt_digit(kin[i], shift) * FF_FMMT_RS_T + t];
    }
    __syncthreads();
    // exclusive scan of h in its flat (digit-major) order: thread t scans its segment of
    // FF_FMMT_RS_R entries (digits seg·t/FF_FMMT_RS_T …), thread 0 scans the segment totals,
    // each thread adds its offset and records the first column of its digits
    const int seg = FF_FMMT_RS_R;
    unsigned s = 0, total;
    for (int k = t * seg; k < (t + 1) * seg; ++k) s += h[k];
    unsigned r = ff_fmmt_block_excl(s, &total);
    for (int k = t * seg; k < (t + 1) * seg; ++k) {
        const unsigned v = h[k];
        h[k] = (unsigned short)r;
        if (k % FF_FMMT_RS_T == 0) first[k / FF_FMMT_RS_T] = (unsigned short)r;
        r += v;
    }
    __syncthreads();
    for (int j = 0; j < FF_FMMT_RS_I; ++j) {
        const ff_fmmt_u64 i = base + j;
        if (i < n) {
            const ff_fmmt_u64 k = kin[i];
            const unsigned d = ff_fmmt_digit(k, shift);
            unsigned short* c = h + d * FF_FMMT_RS_T + t;  // written by this thread only
            const ff_fmmt_u64 o = (ff_fmmt_u64)off[(ff_fmmt_u64)d * ntiles + blockIdx.x] + (unsigned)(*c - first[d]);
            *c = (unsigned short)(*c + 1);
            kout[o] = k;
            pout[o] = pin[i];
        }
    }
}
FF_REGISTER(ff_fmmt_rs_scatter)

// The whole sort of n ≤ TILE keys in one block (FF_FMMT_RS_T threads): OR/AND of the keys, then
// every pass over a digit with varying bits, ping-ponging between (ka, pa) and (kb, pb); the
// within-tile exclusive scan is then the output position itself. npass[0] = passes made (odd:
// the result is in kb, pb).
FF_EXTERN_C __global__ void ff_fmmt_rs_tile(ff_fmmt_u64* ka, unsigned* pa, ff_fmmt_u64* kb, unsigned* pb, ff_fmmt_u64 n,
                                            unsigned* npass) {
    __shared__ unsigned short h[FF_FMMT_RS_R * FF_FMMT_RS_T];  // [digit][thread]
    __shared__ ff_fmmt_u64 orand[2];
    const int t = threadIdx.x;
    const ff_fmmt_u64 base = (ff_fmmt_u64)t * FF_FMMT_RS_I;
    if (t == 0) {
        orand[0] = 0ull;
        orand[1] = ~0ull;
    }
    __syncthreads();
    ff_fmmt_u64 o = 0ull, a = ~0ull;
    for (int j = 0; j < FF_FMMT_RS_I; ++j)
        if (base + j < n) {
            o |= ka[base + j];
            a &= ka[base + j];
        }
    atomicOr(orand, o);
    atomicAnd(orand + 1, a);
    __syncthreads();
    const ff_fmmt_u64 varying = orand[0] ^ orand[1];
    unsigned passes = 0;
    for (int shift = 0; shift < 64; shift += 8) {
        if (((varying >> shift) & (FF_FMMT_RS_R - 1)) == 0) continue;  // the same in every thread
        for (int d = 0; d < FF_FMMT_RS_R; ++d) h[d * FF_FMMT_RS_T + t] = 0;
        for (int j = 0; j < FF_FMMT_RS_I; ++j)
            if (base + j < n) ++h[ff_fmmt_digit(ka[base + j], shift) * FF_FMMT_RS_T + t];
        __syncthreads();
        unsigned s = 0, total;
        for (int k = t * FF_FMMT_RS_R; k < (t + 1) * FF_FMMT_RS_R; ++k) s += h[k];
        unsigned r = ff_fmmt_block_excl(s, &total);
        for (int k = t * FF_FMMT_RS_R; k < (t + 1) * FF_FMMT_RS_R; ++k) {
            const unsigned v = h[k];
            h[k] = (unsigned short)r;
            r += v;
        }
        __syncthreads();
        for (int j = 0; j < FF_FMMT_RS_I; ++j) {
            const ff_fmmt_u64 i = base + j;
            if (i < n) {
                const ff_fmmt_u64 k = ka[i];
                unsigned short* c = h + ff_fmmt_digit(k, shift) * FF_FMMT_RS_T + t;  // this thread's
                kb[*c] = k;
                pb[*c] = pa[i];
                *c = (unsigned short)(*c + 1);
            }
        }
        __syncthreads();  // the pass's output is the next one's input
        ff_fmmt_u64* tk = ka;
        ka = kb;
        kb = tk;
        unsigned* tp = pa;
        pa = pb;
        pb = tp;
        ++passes;
    }
    if (t == 0) npass[0] = passes;
}
FF_REGISTER(ff_fmmt_rs_tile)

// ---------------------------------------------------------------------------------------------
// Exclusive prefix sum of n unsigned values in place. Tiles of FF_FMMT_SCAN_T·FF_FMMT_SCAN_I
// values, thread t owning FF_FMMT_SCAN_I consecutive ones. ff_fmmt_scan_local scans each tile
// and writes its total to sums[tile]; ff_fmmt_scan_single scans the whole array in one block
// (tile by tile with a carry); ff_fmmt_scan_add adds the scanned totals.
__device__ unsigned ff_fmmt_scan_tile(unsigned* data, ff_fmmt_u64 n, ff_fmmt_u64 tile, unsigned carry) {
    const ff_fmmt_u64 base = tile * (FF_FMMT_SCAN_T * FF_FMMT_SCAN_I) + (ff_fmmt_u64)threadIdx.x * FF_FMMT_SCAN_I;
    unsigned v[FF_FMMT_SCAN_I];
    unsigned s = 0;
    for (int j = 0; j < FF_FMMT_SCAN_I; ++j) {
        v[j] = base + j < n ? data[base + j] : 0u;
        s += v[j];
    }
    unsigned total;
    unsigned r = carry + ff_fmmt_block_excl(s, &total);
    for (int j = 0; j < FF_FMMT_SCAN_I; ++j) {
        if (base + j < n) data[base + j] = r;
        r += v[j];
    }
    return total;
}

FF_EXTERN_C __global__ void ff_fmmt_scan_local(unsigned* data, ff_fmmt_u64 n, unsigned* sums) {
    const unsigned total = ff_fmmt_scan_tile(data, n, blockIdx.x, 0u);
    if (threadIdx.x == 0) sums[blockIdx.x] = total;
}
FF_REGISTER(ff_fmmt_scan_local)

FF_EXTERN_C __global__ void ff_fmmt_scan_single(unsigned* data, ff_fmmt_u64 n) {
    unsigned carry = 0;
    const ff_fmmt_u64 ntiles = (n + FF_FMMT_SCAN_T * FF_FMMT_SCAN_I - 1) / (FF_FMMT_SCAN_T * FF_FMMT_SCAN_I);
    for (ff_fmmt_u64 tile = 0; tile < ntiles; ++tile) carry += ff_fmmt_scan_tile(data, n, tile, carry);
}
FF_REGISTER(ff_fmmt_scan_single)

FF_EXTERN_C __global__ void ff_fmmt_scan_add(unsigned* data, ff_fmmt_u64 n, const unsigned* sums) {
    const ff_fmmt_u64 base = (ff_fmmt_u64)blockIdx.x * (FF_FMMT_SCAN_T * FF_FMMT_SCAN_I) + (ff_fmmt_u64)threadIdx.x * FF_FMMT_SCAN_I;
    const unsigned a = sums[blockIdx.x];
    for (int j = 0; j < FF_FMMT_SCAN_I; ++j)
        if (base + j < n) data[base + j] += a;
}
FF_REGISTER(ff_fmmt_scan_add)

// ---------------------------------------------------------------------------------------------
// Coincidence candidates: flag[i] = 1 if sorted particle i has a neighbour with the same key,
// flag[n] = 0; after the scan, gather them (key, caller's index, caller's coordinates).
FF_EXTERN_C __global__ void ff_fmmt_run_flags(const ff_fmmt_u64* keys, ff_fmmt_u64 n, unsigned* flag) {
    for (ff_fmmt_u64 i = ff_fmmt_gid(); i <= n; i += ff_fmmt_gstride()) {
        unsigned f = 0;
        if (i < n) f = (i > 0 && keys[i] == keys[i - 1]) || (i + 1 < n && keys[i] == keys[i + 1]);
        flag[i] = f;
    }
}
FF_REGISTER(ff_fmmt_run_flags)

FF_EXTERN_C __global__ void ff_fmmt_run_gather(const ff_fmmt_u64* keys, const unsigned* perm, const double* xyz,
                                               ff_fmmt_u64 n, const unsigned* scan, ff_fmmt_u64* okeys,
                                               unsigned* operm, double* oxyz) {
    for (ff_fmmt_u64 i = ff_fmmt_gid(); i < n; i += ff_fmmt_gstride()) {
        if (scan[i + 1] == scan[i]) continue;
        const ff_fmmt_u64 o = scan[i];
        const ff_fmmt_u64 j = perm[i];
        okeys[o] = keys[i];
        operm[o] = (unsigned)j;
        for (int d = 0; d < 3; ++d) oxyz[3 * o + d] = xyz[3 * j + d];
    }
}
FF_REGISTER(ff_fmmt_run_gather)

// ---------------------------------------------------------------------------------------------
// Occupancy per level d ≤ dmax (< FF_FMMT_MAXLEV): sorted particle i starts a box of level d
// iff i = 0 or its key differs from the previous one above bit 3(KD − d). Thread c scans the
// particles c·chunk … and writes, per level, part[(c·(dmax+1) + d)·4 + …] = {particles before
// the chunk's first box start (all if none), particles from the last box start to the chunk's
// end, box starts, Σ n_b² of the boxes that start and end inside the chunk}.
FF_EXTERN_C __global__ void ff_fmmt_occ_chunks(const ff_fmmt_u64* keys, ff_fmmt_u64 n, ff_fmmt_u64 chunk, int dmax,
                                               ff_fmmt_u64* part) {
    const ff_fmmt_u64 nchunks = (n + chunk - 1) / chunk;
    for (ff_fmmt_u64 c = ff_fmmt_gid(); c < nchunks; c += ff_fmmt_gstride()) {
        ff_fmmt_u64 head[FF_FMMT_MAXLEV], cur[FF_FMMT_MAXLEV], nb[FF_FMMT_MAXLEV], sq[FF_FMMT_MAXLEV];
        for (int d = 0; d <= dmax; ++d) head[d] = cur[d] = nb[d] = sq[d] = 0;
        const ff_fmmt_u64 a = c * chunk;
        const ff_fmmt_u64 e = a + chunk < n ? a + chunk : n;
        for (ff_fmmt_u64 i = a; i < e; ++i) {
            int first = 0;
            if (i > 0) {
                const ff_fmmt_u64 x = keys[i] ^ keys[i - 1];
                first = x == 0 ? dmax + 1 : FF_FMMT_KD - (63 - __clzll((long long)x)) / 3;
            }
            for (int d = 0; d <= dmax; ++d) {
                if (d >= first) {
                    if (nb[d] == 0)
                        head[d] = cur[d];
                    else
                        sq[d] += cur[d] * cur[d];
                    ++nb[d];
                    cur[d] = 0;
                }
                ++cur[d];
            }
        }
        for (int d = 0; d <= dmax; ++d) {
            ff_fmmt_u64* o = part + (c * (dmax + 1) + d) * 4;
            o[0] = nb[d] == 0 ? cur[d] : head[d];
            o[1] = nb[d] == 0 ? 0 : cur[d];
            o[2] = nb[d];
            o[3] = sq[d];
        }
    }
}
FF_REGISTER(ff_fmmt_occ_chunks)

// Thread d ≤ dmax joins the chunks of level d: out[d] = occupied boxes, out[dmax + 1 + d] = Σ n_b².
FF_EXTERN_C __global__ void ff_fmmt_occ_combine(const ff_fmmt_u64* part, ff_fmmt_u64 nchunks, int dmax,
                                                ff_fmmt_u64* out) {
    const int d = threadIdx.x;
    if (d > dmax) return;
    ff_fmmt_u64 open = 0, s = 0, cnt = 0;
    for (ff_fmmt_u64 c = 0; c < nchunks; ++c) {
        const ff_fmmt_u64* p = part + (c * (dmax + 1) + d) * 4;
        open += p[0];
        if (p[2] != 0) {
            s += open * open + p[3];
            open = p[1];
            cnt += p[2];
        }
    }
    s += open * open;
    out[d] = cnt;
    out[dmax + 1 + d] = s;
}
FF_REGISTER(ff_fmmt_occ_combine)

// ---------------------------------------------------------------------------------------------
// Leaves at depth D (shift = 3(KD − D)): flag[i] = 1 where sorted particle i starts a leaf,
// flag[n] = 0; after the exclusive scan, leaf scan[i] has key keys[i] >> shift and starts at i,
// and leaf_start[nleaves] = n.
FF_EXTERN_C __global__ void ff_fmmt_leaf_flags(const ff_fmmt_u64* keys, ff_fmmt_u64 n, int shift, unsigned* flag) {
    for (ff_fmmt_u64 i = ff_fmmt_gid(); i <= n; i += ff_fmmt_gstride())
        flag[i] = i < n && (i == 0 || (keys[i] >> shift) != (keys[i - 1] >> shift));
}
FF_REGISTER(ff_fmmt_leaf_flags)

FF_EXTERN_C __global__ void ff_fmmt_leaf_fill(const ff_fmmt_u64* keys, ff_fmmt_u64 n, int shift, const unsigned* scan,
                                              ff_fmmt_u64* lkeys, unsigned* leaf_start) {
    for (ff_fmmt_u64 i = ff_fmmt_gid(); i <= n; i += ff_fmmt_gstride()) {
        if (i == n) {
            leaf_start[scan[n]] = (unsigned)n;
        } else if (scan[i + 1] != scan[i]) {
            lkeys[scan[i]] = keys[i] >> shift;
            leaf_start[scan[i]] = (unsigned)i;
        }
    }
}
FF_REGISTER(ff_fmmt_leaf_fill)

// The level above nc child boxes with keys ckeys: flag[c] = 1 where child c starts a parent,
// flag[nc] = 0; after the scan, parent scan[c] has key ckeys[c] >> 3 and its children start at
// c, child_start[nparents] = nc, and parent[c] = scan[c + 1] − 1.
FF_EXTERN_C __global__ void ff_fmmt_level_flags(const ff_fmmt_u64* ckeys, ff_fmmt_u64 nc, unsigned* flag) {
    for (ff_fmmt_u64 c = ff_fmmt_gid(); c <= nc; c += ff_fmmt_gstride())
        flag[c] = c < nc && (c == 0 || (ckeys[c] >> 3) != (ckeys[c - 1] >> 3));
}
FF_REGISTER(ff_fmmt_level_flags)

FF_EXTERN_C __global__ void ff_fmmt_level_fill(const ff_fmmt_u64* ckeys, ff_fmmt_u64 nc, const unsigned* scan,
                                               ff_fmmt_u64* pkeys, unsigned* child_start, unsigned* parent) {
    for (ff_fmmt_u64 c = ff_fmmt_gid(); c <= nc; c += ff_fmmt_gstride()) {
        if (c == nc) {
            child_start[scan[nc]] = (unsigned)nc;
        } else {
            if (scan[c + 1] != scan[c]) {
                pkeys[scan[c]] = ckeys[c] >> 3;
                child_start[scan[c]] = (unsigned)c;
            }
            parent[c] = scan[c + 1] - 1u;
        }
    }
}
FF_REGISTER(ff_fmmt_level_fill)

// Sorted particles in units of the root cube: x[i] = unit(xyz[3·perm[i]]) …, qs[i] = q[perm[i]].
FF_EXTERN_C __global__ void ff_fmmt_particles(const double* xyz, const double* q, const unsigned* perm, ff_fmmt_u64 n,
                                              double lo0, double lo1, double lo2, double size, int periodic,
                                              double* x, double* y, double* z, double* qs) {
    for (ff_fmmt_u64 i = ff_fmmt_gid(); i < n; i += ff_fmmt_gstride()) {
        const ff_fmmt_u64 j = perm[i];
        x[i] = ff_fmmt_unit(xyz[3 * j], lo0, size, periodic);
        y[i] = ff_fmmt_unit(xyz[3 * j + 1], lo1, size, periodic);
        z[i] = ff_fmmt_unit(xyz[3 * j + 2], lo2, size, periodic);
        qs[i] = q[j];
    }
}
FF_REGISTER(ff_fmmt_particles)
