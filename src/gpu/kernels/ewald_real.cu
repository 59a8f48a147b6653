// farfield GPU Ewald real-space kernels (CUDA C++); host side and the algorithm's description in
// src/gpu/ewald/real_space.rs, the CPU pass it reproduces in src/ewald/real_space.rs. Compiled
// by NVRTC and, unchanged, by the CUDA-on-CPU emulator (see spread.cu for the rules: no
// #include, convergent barriers and shuffles); every name here starts with ff_ewr_ (the emulator
// compiles all .cu files as one translation unit).
//
// Per call: ff_ewr_wrap (wrap into the cell, cell keys and counts, finiteness), the scan of the
// counts (src/gpu/fmm/tree.rs) into cell starts, ff_ewr_bucket and ff_ewr_cell_order (a
// counting sort by cell, the caller's order within a cell), ff_ewr_gather
// (sorted positions and charges), ff_ewr_cell_bounds (bounding box of each cell's atoms),
// ff_ewr_pairs (the pair sums and the exclusion corrections, energy and virial partials per
// block), ff_ewr_finish (one block: the totals and the status words), ff_ewr_scatter (adds the
// results into the caller's arrays, in the caller's order).
//
// The parameter block `par` (doubles, uploaded per call; FF_EWR_P_* below): the lower-triangular
// cell a = (ax, 0, 0), b = (bx, by, 0), c = (cx, cy, cz); the reciprocal rows a*_d (without 2π);
// r_c², the squared coincidence distance, the fit's s, 2ξ/√π, ξ, and 1 for a triclinic cell.

#ifndef FF_EMULATION
#define FF_EXTERN_C extern "C"
#define FF_REGISTER(name)
#endif

#define FF_EWR_P_AX 0
#define FF_EWR_P_BX 1
#define FF_EWR_P_BY 2
#define FF_EWR_P_CX 3
#define FF_EWR_P_CY 4
#define FF_EWR_P_CZ 5
#define FF_EWR_P_R00 6
#define FF_EWR_P_R01 7
#define FF_EWR_P_R02 8
#define FF_EWR_P_R11 9
#define FF_EWR_P_R12 10
#define FF_EWR_P_R22 11
#define FF_EWR_P_RC2 12
#define FF_EWR_P_R2CO 13
#define FF_EWR_P_S 14
#define FF_EWR_P_C2 15
#define FF_EWR_P_XI 16
#define FF_EWR_P_TRI 17
// The shares of the exclusion corrections (the shares argument of the pair kernels).
#define FF_EWR_SHARE_REAL 1
#define FF_EWR_SHARE_K 2
// Threads per block of ff_ewr_pairs and ff_ewr_finish (a power of two; host: PAIR_BLOCK).
#define FF_EWR_BLOCK 128
// The pair kernels are compiled for a number of resident blocks of FF_EWR_BLOCK threads per
// multiprocessor (__launch_bounds__): 8 for the f32 pair functions (at most 64 registers per
// thread), 6 for the f64 ones (at most 85). The pair loop is latency bound, so extra resident
// warps pay more than the spills cost: JAC DHFR on an H200, f32 pair kernel 0.415 ms unbounded
// → 0.346 ms at 6 blocks; per evaluation, same run, f32 8 blocks against 6 and f64 6 against
// unbounded each about 5–9 % faster (benches/results/ewald_gpu_2026-11-27.md).
#define FF_EWR_F32_MIN_BLOCKS 8
#define FF_EWR_F64_MIN_BLOCKS 6
#ifdef FF_EMULATION
#define FF_EWR_F32_BOUNDS
#define FF_EWR_F64_BOUNDS
#else
#define FF_EWR_F32_BOUNDS __launch_bounds__(FF_EWR_BLOCK, FF_EWR_F32_MIN_BLOCKS)
#define FF_EWR_F64_BOUNDS __launch_bounds__(FF_EWR_BLOCK, FF_EWR_F64_MIN_BLOCKS)
#endif
// Lanes of a warp that hold a pair when the pair kernels evaluate the pair functions.
#define FF_EWR_EVAL_LANES 16
// Stencil entries per thread and chunk of the pair kernels (their lists in shared memory: 2 ×
// 4 B × FF_EWR_LIST × FF_EWR_BLOCK = 16 KiB per block).
#define FF_EWR_LIST 16
// Most coefficients of one fit polynomial (src/ewald/erfc.rs: degree ≤ 39).
#define FF_EWR_MAXC 40
#define FF_EWR_FULL_MASK 0xffffffffu
#define FF_EWR_DMAX 1.7976931348623157e308

__device__ __forceinline__ unsigned ff_ewr_gid() { return blockIdx.x * blockDim.x + threadIdx.x; }

__device__ __forceinline__ double ff_ewr_rsqrt(double x) {
#ifdef FF_EMULATION
    return 1.0 / sqrt(x);
#else
    return rsqrt(x);
#endif
}
__device__ __forceinline__ float ff_ewr_rsqrt(float x) {
#ifdef FF_EMULATION
    return 1.0f / sqrtf(x);
#else
    return rsqrtf(x);
#endif
}

// The coincidence flag (smallest key min << 32 | max of a coincident, not excluded pair, or all
// ones): read while other threads may lower it.
__device__ __forceinline__ bool ff_ewr_stopped(const unsigned long long* flag) {
#ifdef FF_EMULATION
    return __atomic_load_n(flag, __ATOMIC_RELAXED) != ~0ull;
#else
    return *(volatile const unsigned long long*)flag != ~0ull;
#endif
}

// wrap01 of src/ewald/box_.rs: a fractional coordinate into [0, 1).
__device__ __forceinline__ double ff_ewr_wrap01(double s) {
    const double w = s - floor(s);
    return w >= 1.0 ? 0.0 : w;
}

// PeriodicBox::cart: Cartesian position of fractional coordinates s.
__device__ __forceinline__ void ff_ewr_cart(const double* p, double s0, double s1, double s2, double* r) {
    r[0] = s0 * p[FF_EWR_P_AX] + s1 * p[FF_EWR_P_BX] + s2 * p[FF_EWR_P_CX];
    r[1] = s1 * p[FF_EWR_P_BY] + s2 * p[FF_EWR_P_CY];
    r[2] = s2 * p[FF_EWR_P_CZ];
}

// Stencil entry s for a thread whose atom lies in cell ac: the neighbour cell's coordinates
// bc (wrapped into the grid nc), the image img it lies in (c = ac + o = bc + img · nc), and
// whether it is the home cell itself (o = 0). Comparisons where the neighbour lies within one
// grid length of the home cell (on all but the smallest cell grids), divisions otherwise.
__device__ __forceinline__ bool ff_ewr_neighbour(const int* stencil, int s, const int* ac, const int* nc, int* bc,
                                                 int* img) {
    bool self = true;
    for (int d = 0; d < 3; ++d) {
        const int o = stencil[3 * s + d];
        self = self && o == 0;
        const int c = ac[d] + o;
        if (c >= -nc[d] && c < 2 * nc[d]) img[d] = c < 0 ? -1 : (c >= nc[d] ? 1 : 0);
        else img[d] = c >= 0 ? c / nc[d] : -((-c + nc[d] - 1) / nc[d]);
        bc[d] = c - img[d] * nc[d];
    }
    return self;
}

// x − (img_0 a + img_1 b + img_2 c): a position shifted by the lattice vectors of image img.
__device__ __forceinline__ void ff_ewr_shift(const double* p, const int* img, double x, double y, double z, double& xs,
                                             double& ys, double& zs) {
    xs = x - (img[0] * p[FF_EWR_P_AX] + img[1] * p[FF_EWR_P_BX] + img[2] * p[FF_EWR_P_CX]);
    ys = y - (img[1] * p[FF_EWR_P_BY] + img[2] * p[FF_EWR_P_CY]);
    zs = z - img[2] * p[FF_EWR_P_CZ];
}

// Horner split into even and odd parts, as poly() of src/ewald/erfc.rs.
template <typename R>
__device__ __forceinline__ R ff_ewr_poly(const R* c, int n, R w) {
    const R w2 = w * w;
    R e = 0, o = 0;
    for (int i = n - 1; i >= 0; --i) {
        if (i & 1) o = o * w2 + c[i];
        else e = e * w2 + c[i];
    }
    return o * w + e;
}

// (v(r), f(r)) of src/ewald/pair_kernel.rs for 0 < r² ≤ r_c²: v = erfc(ξr)/r,
// f = −v'(r)/r = (erfc(ξr)/r + (2ξ/√π) e^{−ξ²r²}) / r²; by the fit (g, h: nc coefficients each,
// in w = r² s − 1, evaluated in R) or, with `exact`, by erfc and exp (in double, then rounded
// to R).
template <typename R>
__device__ __forceinline__ void ff_ewr_pair(R r2, const double* p, const R* g, const R* h, int nc, int exact, R& pot,
                                            R& fs) {
    if (exact) {
        const double rinv = ff_ewr_rsqrt((double)r2);
        const double x = p[FF_EWR_P_XI] * ((double)r2 * rinv);
        const double v = erfc(x) * rinv;
        pot = (R)v;
        fs = (R)((v + p[FF_EWR_P_C2] * exp(-x * x)) * rinv * rinv);
    } else {
        const R rinv = ff_ewr_rsqrt(r2);
        const R w = r2 * (R)p[FF_EWR_P_S] - (R)1;
        pot = rinv - ff_ewr_poly(g, nc, w);
        fs = rinv * rinv * rinv - ff_ewr_poly(h, nc, w);
    }
}

// Sum over the block (blockDim.x a power of two ≤ FF_EWR_BLOCK); every thread gets the total.
__device__ double ff_ewr_block_sum(double v, double* s) {
    s[threadIdx.x] = v;
    __syncthreads();
    for (int off = blockDim.x / 2; off > 0; off >>= 1) {
        if ((int)threadIdx.x < off) s[threadIdx.x] += s[threadIdx.x + off];
        __syncthreads();
    }
    const double r = s[0];
    __syncthreads();
    return r;
}

// One thread per atom i (caller's order): fractional coordinates wrapped into [0, 1) (as
// EwaldPlan::execute), its cell key c0 + nc0 (c1 + nc1 c2) with c_d = ⌊s_d nc_d⌋ (at most
// nc_d − 1), counted in cnt[key] (zeroed by the caller). First non-finite position and charge, and first position whose
// fractional coordinates are not representable, into bad[0..3] by atomicMin (such an atom is
// put at s = 0 so that nothing downstream indexes out of range; the host reports the error).
FF_EXTERN_C __global__ void ff_ewr_wrap(int n, const double* xyz, const double* q, const double* par, int nc0, int nc1,
                                        int nc2, double* sfrac, unsigned long long* keys, unsigned* cnt, unsigned* bad) {
    const int i = (int)ff_ewr_gid();
    if (i >= n) return;
    const double x = xyz[3 * (size_t)i], y = xyz[3 * (size_t)i + 1], z = xyz[3 * (size_t)i + 2];
    const bool fin = fabs(x) <= FF_EWR_DMAX && fabs(y) <= FF_EWR_DMAX && fabs(z) <= FF_EWR_DMAX;
    if (!fin) atomicMin(bad, (unsigned)i);
    if (!(fabs(q[i]) <= FF_EWR_DMAX)) atomicMin(bad + 1, (unsigned)i);
    const double* p = par;
    double s[3] = {
        ff_ewr_wrap01(p[FF_EWR_P_R00] * x + p[FF_EWR_P_R01] * y + p[FF_EWR_P_R02] * z),
        ff_ewr_wrap01(p[FF_EWR_P_R11] * y + p[FF_EWR_P_R12] * z),
        ff_ewr_wrap01(p[FF_EWR_P_R22] * z),
    };
    bool ok = true;
    for (int d = 0; d < 3; ++d) {
        if (!(s[d] >= 0.0 && s[d] < 1.0)) {
            ok = false;
            s[d] = 0.0;
        }
    }
    if (fin && !ok) atomicMin(bad + 2, (unsigned)i);
    const int nc[3] = {nc0, nc1, nc2};
    int c[3];
    for (int d = 0; d < 3; ++d) {
        c[d] = (int)(s[d] * (double)nc[d]);
        if (c[d] > nc[d] - 1) c[d] = nc[d] - 1;
        sfrac[3 * (size_t)i + d] = s[d];
    }
    const unsigned long long key =
        (unsigned long long)c[0] + (unsigned long long)nc0 * ((unsigned long long)c[1] + (unsigned long long)nc1 * c[2]);
    keys[i] = key;
    atomicAdd(cnt + key, 1u);
}
FF_REGISTER(ff_ewr_wrap)

// One thread per atom i: its slot in the cell order, start[key] + the arrival rank within the
// cell (fill[key], zeroed by the caller); perm[slot] = i, skeys[slot] = key. The order within a
// cell is then made the caller's order by ff_ewr_cell_order.
FF_EXTERN_C __global__ void ff_ewr_bucket(int n, const unsigned long long* keys, const unsigned* start, unsigned* fill,
                                          unsigned* perm, unsigned long long* skeys) {
    const int i = (int)ff_ewr_gid();
    if (i >= n) return;
    const unsigned long long key = keys[i];
    const unsigned slot = start[key] + atomicAdd(fill + key, 1u);
    perm[slot] = (unsigned)i;
    skeys[slot] = key;
}
FF_REGISTER(ff_ewr_bucket)

// One thread per cell: its atoms' indices perm[start[c] .. start[c+1]) sorted ascending
// (insertion sort; cells hold about 8 atoms), so that the cell order equals a stable sort by
// key and every sum downstream is deterministic.
FF_EXTERN_C __global__ void ff_ewr_cell_order(int ncell, const unsigned* start, unsigned* perm) {
    const int c = (int)ff_ewr_gid();
    if (c >= ncell) return;
    const unsigned a = start[c], b = start[c + 1];
    for (unsigned j = a + 1; j < b; ++j) {
        const unsigned v = perm[j];
        unsigned k = j;
        while (k > a && perm[k - 1] > v) {
            perm[k] = perm[k - 1];
            --k;
        }
        perm[k] = v;
    }
}
FF_REGISTER(ff_ewr_cell_order)

// One thread per sorted slot: pos[4 slot + (0, 1, 2, 3)] = wrapped Cartesian position and charge
// of atom perm[slot].
FF_EXTERN_C __global__ void ff_ewr_gather(int n, const unsigned* perm, const double* sfrac, const double* q,
                                          const double* par, double* pos) {
    const int slot = (int)ff_ewr_gid();
    if (slot >= n) return;
    const size_t i = perm[slot];
    double r[3];
    ff_ewr_cart(par, sfrac[3 * i], sfrac[3 * i + 1], sfrac[3 * i + 2], r);
    double* o = pos + 4 * (size_t)slot;
    o[0] = r[0];
    o[1] = r[1];
    o[2] = r[2];
    o[3] = q[i];
}
FF_REGISTER(ff_ewr_gather)

// One thread per cell: the Cartesian bounding box of its atoms, bbox[6c + (lo x, y, z, hi x, y, z)]
// (left as is for an empty cell, which the pair kernel never reads).
FF_EXTERN_C __global__ void ff_ewr_cell_bounds(int ncell, const unsigned* start, const double* pos, double* bbox) {
    const int c = (int)ff_ewr_gid();
    if (c >= ncell) return;
    const unsigned a = start[c], b = start[c + 1];
    if (a == b) return;
    double lo[3] = {FF_EWR_DMAX, FF_EWR_DMAX, FF_EWR_DMAX}, hi[3] = {-FF_EWR_DMAX, -FF_EWR_DMAX, -FF_EWR_DMAX};
    for (unsigned j = a; j < b; ++j) {
        for (int d = 0; d < 3; ++d) {
            const double v = pos[4 * (size_t)j + d];
            lo[d] = v < lo[d] ? v : lo[d];
            hi[d] = v > hi[d] ? v : hi[d];
        }
    }
    for (int d = 0; d < 3; ++d) {
        bbox[6 * (size_t)c + d] = lo[d];
        bbox[6 * (size_t)c + 3 + d] = hi[d];
    }
}
FF_REGISTER(ff_ewr_cell_bounds)

// Whether atoms i and j (caller's indices) may coincide: j is in the sorted exclusion list of
// atom i with scale 0 (xscale null: every listed pair has scale 0); a scaled pair's remaining
// interaction is infinite at r = 0 (the CPU's Exclusions::allows_coincident).
__device__ __forceinline__ bool ff_ewr_excluded(unsigned i, unsigned j, const unsigned* xptr, const unsigned* xlist,
                                                int nxa, const double* xscale) {
    if ((int)i >= nxa) return false;
    unsigned lo = xptr[i], hi = xptr[i + 1];
    while (lo < hi) {
        const unsigned mid = (lo + hi) / 2;
        const unsigned v = xlist[mid];
        if (v == j) return xscale == nullptr || xscale[mid] == 0.0;
        if (v < j) lo = mid + 1;
        else hi = mid;
    }
    return false;
}

// The pair sums. Thread g works on sorted slot g / kpa (atom i) and part g % kpa: the stencil
// entries part, part + kpa, … (offsets o of the cell grid, full shell, the cell itself
// included) and, in the same way, the entries of i's exclusion list. For an entry: the
// neighbour cell b = a + o wrapped, with the lattice shift of its image subtracted from x_i; the
// cell is skipped if x_i is at least r_c from its atoms' bounding box; else every atom j of b
// (not i itself in the zero offset) within r_c contributes q_j v(r) to φ_i, q_j f(r) d to E_i
// and q_i q_j f(r) d⊗d to W (d = x_i − x_j); a pair closer than the coincidence distance
// contributes nothing and, unless excluded, lowers the flag (and every thread stops at its next
// chunk of entries). Exclusions (src/ewald/real_space.rs `exclusions`, from i's side): the nearest image
// of the pair from the wrapped fractional coordinates (27 images searched in a triclinic cell),
// minus the real-space term (if r_c > r > coincidence distance; when shares has
// FF_EWR_SHARE_REAL) and minus erf(ξr)/r (its limit 2ξ/√π at r → 0; when shares has
// FF_EWR_SHARE_K), both times 1 − s for a pair with scale s = xscale[k] (xscale: the scale of
// each entry of xlist; null: every pair fully excluded, s = 0). nst = 0 runs the corrections
// alone (a k-space-only plan). The kpa parts of an atom are adjacent lanes, summed by shuffles; part 0
// writes φ_i and E_i into out (slot order: φ | E_x | E_y | E_z, n each). Energy partials
// Σ q_i φ_i and W (xx, xy, xz, yy, yz, zz; each pair is met from both sides, the host halves
// both) are summed per block into part[7 · block + k] (zeros unless VIRIAL).
//
// Precision: positions, distances and the cutoff tests are double; the pair functions and each
// thread's sums are R (double, or float for mixed-precision plans: the fit evaluated in float,
// rsqrtf, about 2⁻²³ relative per pair term); the kpa parts, the block sums and everything
// after are double. One kernel per (R, VIRIAL), so that a plan without the virial does not hold
// its six sums in registers.
template <typename R, bool VIRIAL>
__device__ void ff_ewr_pairs_t(int n, int kpa, const double* pos, const unsigned* perm, const unsigned long long* keys,
                               const unsigned* start, const double* bbox, const int* stencil, int nst, int nc0, int nc1,
                               int nc2, const double* par, const double* coef, int ncoef, int exact,
                               const unsigned* xptr, const unsigned* xlist, int nxa, const double* xscale,
                               int shares, const double* sfrac, const double* q, int want_field, double* out, double* part,
                               unsigned long long* flag) {
    __shared__ R sc[2 * FF_EWR_MAXC];
    __shared__ double red[FF_EWR_BLOCK];
    for (int t = threadIdx.x; t < 2 * ncoef; t += blockDim.x) sc[t] = (R)coef[t];
    __syncthreads();
    const R* g = sc;
    const R* h = sc + ncoef;
    const double* p = par;
    const long long gid = (long long)ff_ewr_gid();
    const int slot = (int)(gid / kpa), prt = (int)(gid % kpa);
    R acc[4] = {0, 0, 0, 0};
    R w[6] = {0, 0, 0, 0, 0, 0};
    double qi = 0.0;
    // A thread past the last atom keeps zeros and still takes part in its warp's votes.
    const bool has = slot < n;
    double xi0 = 0.0, yi0 = 0.0, zi0 = 0.0;
    unsigned oi = 0;
    int ac[3] = {0, 0, 0};
    if (has) {
        const double* pi = pos + 4 * (size_t)slot;
        xi0 = pi[0];
        yi0 = pi[1];
        zi0 = pi[2];
        qi = pi[3];
        oi = perm[slot];
        const long long a = (long long)keys[slot];
        ac[0] = (int)(a % nc0);
        ac[1] = (int)((a / nc0) % nc1);
        ac[2] = (int)(a / ((long long)nc0 * nc1));
    }
    const int nc[3] = {nc0, nc1, nc2};
    const double rc2 = p[FF_EWR_P_RC2], r2co = p[FF_EWR_P_R2CO];
    // The lanes of a warp work in step, so that the instructions of each phase run with
    // (nearly) all lanes busy: warps whose lanes wandered through their entries, candidates and
    // pair evaluations independently ran each with a quarter of its lanes (JAC DHFR on an H200,
    // benches/results/ewald_gpu_2026-11-28.md). In chunks of up to FF_EWR_LIST stencil entries
    // per thread (the entries prt, prt + kpa, …; one chunk for kpa ≥ nst / FF_EWR_LIST):
    //  A. every thread visits its chunk's entries (the same count in every lane, loads
    //     independent of one another): the neighbour cell b = a + o wrapped and the image it
    //     lies in; an empty cell, or one whose atoms' bounding box lies at least r_c from the
    //     shifted x_i, is dropped, the others are kept in the thread's list (shared memory:
    //     the cell and the entry, whose image is found again when the cell is searched);
    //  B. steps, the warp voting at each: a lane without a pair in hand takes one step through
    //     its list (the next entry when its cell is used up, then one candidate atom: a
    //     distance test), a lane with one waits; once FF_EWR_EVAL_LANES lanes hold a pair (or
    //     no lane searches any more) they evaluate the pair functions together. Lanes that
    //     loop on their own drift apart: independent searches ran with 4 of 32 lanes busy,
    //     the evaluations with 8. Per thread the pairs are visited in the order of a plain
    //     loop over its entries and their atoms (j ascending), so sums are deterministic.
    // The coincidence flag (an L2 round trip) is read once per chunk.
    __shared__ unsigned lst_cell[FF_EWR_LIST][FF_EWR_BLOCK];
    __shared__ unsigned lst_entry[FF_EWR_LIST][FF_EWR_BLOCK];
    int s = prt;
    bool stop = false;
    while (__any_sync(FF_EWR_FULL_MASK, has && !stop && s < nst)) {
        int cnt = 0;
        if (has && !stop && s < nst) {
            stop = ff_ewr_stopped(flag);
            for (int u = 0; u < FF_EWR_LIST && s < nst && !stop; ++u, s += kpa) {
                int img[3], bc[3];
                ff_ewr_neighbour(stencil, s, ac, nc, bc, img);
                const unsigned b = (unsigned)bc[0] + (unsigned)nc0 * ((unsigned)bc[1] + (unsigned)nc1 * (unsigned)bc[2]);
                if (start[b] == start[b + 1]) continue;
                double xs, ys, zs;
                ff_ewr_shift(p, img, xi0, yi0, zi0, xs, ys, zs);
                const double* bb = bbox + 6 * (size_t)b;
                const double ex = fmax(fmax(bb[0] - xs, xs - bb[3]), 0.0);
                const double ey = fmax(fmax(bb[1] - ys, ys - bb[4]), 0.0);
                const double ez = fmax(fmax(bb[2] - zs, zs - bb[5]), 0.0);
                if (ex * ex + ey * ey + ez * ez >= rc2) continue;
                lst_cell[cnt][threadIdx.x] = b;
                lst_entry[cnt][threadIdx.x] = (unsigned)s;
                ++cnt;
            }
        }
        int e = 0;
        unsigned j = 0, j1 = 0;
        bool self = false, found = false, done = false;
        double xs = 0.0, ys = 0.0, zs = 0.0, dx = 0.0, dy = 0.0, dz = 0.0, r2 = 0.0, qj = 0.0;
        for (;;) {
            const unsigned holding = __ballot_sync(FF_EWR_FULL_MASK, found);
            const unsigned searching = __ballot_sync(FF_EWR_FULL_MASK, !found && !done);
            if (holding == 0 && searching == 0) break;
            if (searching == 0 || __popc(holding) >= FF_EWR_EVAL_LANES) {
                if (found) {
                    found = false;
                    R pot, fs;
                    ff_ewr_pair((R)r2, p, g, h, ncoef, exact, pot, fs);
                    const R qr = (R)qj, dxr = (R)dx, dyr = (R)dy, dzr = (R)dz;
                    acc[0] += qr * pot;
                    if (want_field) {
                        const R t = qr * fs;
                        acc[1] += t * dxr;
                        acc[2] += t * dyr;
                        acc[3] += t * dzr;
                    }
                    if (VIRIAL) {
                        const R c = (R)qi * qr * fs;
                        w[0] += c * dxr * dxr;
                        w[1] += c * dxr * dyr;
                        w[2] += c * dxr * dzr;
                        w[3] += c * dyr * dyr;
                        w[4] += c * dyr * dzr;
                        w[5] += c * dzr * dzr;
                    }
                }
                continue;
            }
            if (found || done) continue;
            // one step of this lane's search: the next list entry when its cell is used up
            // (cells in the list are not empty), then one candidate atom
            if (j >= j1) {
                if (e >= cnt) {
                    done = true;
                    continue;
                }
                const unsigned b = lst_cell[e][threadIdx.x], se = lst_entry[e][threadIdx.x];
                ++e;
                int img[3], bc[3];
                self = ff_ewr_neighbour(stencil, (int)se, ac, nc, bc, img);
                j = start[b];
                j1 = start[b + 1];
                ff_ewr_shift(p, img, xi0, yi0, zi0, xs, ys, zs);
            }
            const unsigned jj = j++;
            if (self && jj == (unsigned)slot) continue;
            const double* pj = pos + 4 * (size_t)jj;
            dx = xs - pj[0];
            dy = ys - pj[1];
            dz = zs - pj[2];
            r2 = dx * dx + dy * dy + dz * dz;
            if (r2 <= r2co) {
                const unsigned oj = perm[jj];
                if (!ff_ewr_excluded(oi, oj, xptr, xlist, nxa, xscale)) {
                    const unsigned lo = oi < oj ? oi : oj, hi = oi < oj ? oj : oi;
                    atomicMin(flag, ((unsigned long long)lo << 32) | hi);
                }
            } else if (r2 < rc2) {
                qj = pj[3];
                found = true;
            }
        }
    }
    if (has) {
        // exclusion corrections of atom i (its share of its list)
        if ((int)oi < nxa) {
            const double xi = p[FF_EWR_P_XI], c2 = p[FF_EWR_P_C2];
            const double* si = sfrac + 3 * (size_t)oi;
            for (unsigned k = xptr[oi] + prt; k < xptr[oi + 1]; k += kpa) {
                const unsigned oj = xlist[k];
                const double* sj = sfrac + 3 * (size_t)oj;
                double ds[3];
                for (int d = 0; d < 3; ++d) {
                    const double v = si[d] - sj[d];
                    ds[d] = v - round(v);
                }
                double dv[3];
                ff_ewr_cart(p, ds[0], ds[1], ds[2], dv);
                double r2 = dv[0] * dv[0] + dv[1] * dv[1] + dv[2] * dv[2];
                if (p[FF_EWR_P_TRI] != 0.0) {
                    for (int m = 0; m < 27; ++m) {
                        double c[3];
                        ff_ewr_cart(p, ds[0] + (double)(m % 3 - 1), ds[1] + (double)((m / 3) % 3 - 1), ds[2] + (double)(m / 9 - 1), c);
                        const double cc = c[0] * c[0] + c[1] * c[1] + c[2] * c[2];
                        if (cc < r2) {
                            r2 = cc;
                            dv[0] = c[0];
                            dv[1] = c[1];
                            dv[2] = c[2];
                        }
                    }
                }
                double pot = 0.0, fs = 0.0;
                if ((shares & FF_EWR_SHARE_REAL) && r2 < rc2 && r2 > r2co) {
                    R pr, fr;
                    ff_ewr_pair((R)r2, p, g, h, ncoef, exact, pr, fr);
                    pot = (double)pr;
                    fs = (double)fr;
                }
                if (shares & FF_EWR_SHARE_K) {
                    const double r = sqrt(r2);
                    const double x = xi * r;
                    if (x < 1e-4) {
                        pot += c2 * (1.0 - x * x / 3.0);
                        fs += 4.0 * xi * xi * xi / (3.0 * 1.7724538509055160273) * (1.0 - 0.6 * x * x);
                    } else {
                        const double p2 = erf(x) / r;
                        pot += p2;
                        fs += (p2 - c2 * exp(-x * x)) / r2;
                    }
                }
                // a scaled pair (scale s) keeps s of its interaction: (1 − s) of it is removed
                if (xscale != nullptr) {
                    const double w1 = 1.0 - xscale[k];
                    pot *= w1;
                    fs *= w1;
                }
                const double qj = q[oj];
                acc[0] -= (R)(qj * pot);
                if (want_field) {
                    acc[1] -= (R)(qj * fs * dv[0]);
                    acc[2] -= (R)(qj * fs * dv[1]);
                    acc[3] -= (R)(qj * fs * dv[2]);
                }
                if (VIRIAL) {
                    const double c = qi * qj * fs;
                    w[0] -= (R)(c * dv[0] * dv[0]);
                    w[1] -= (R)(c * dv[0] * dv[1]);
                    w[2] -= (R)(c * dv[0] * dv[2]);
                    w[3] -= (R)(c * dv[1] * dv[1]);
                    w[4] -= (R)(c * dv[1] * dv[2]);
                    w[5] -= (R)(c * dv[2] * dv[2]);
                }
            }
        }
    }
    // from here on in double: the kpa parts of the atom, the block's energy and virial
    double sum[4] = {(double)acc[0], (double)acc[1], (double)acc[2], (double)acc[3]};
    const double en = qi * sum[0];
    // sum the kpa parts of the atom (adjacent lanes; every thread of the block takes part)
    for (int off = 1; off < kpa; off *= 2)
        for (int d = 0; d < 4; ++d) sum[d] += __shfl_xor_sync(FF_EWR_FULL_MASK, sum[d], off, kpa);
    if (slot < n && prt == 0) {
        out[slot] = sum[0];
        if (want_field) {
            out[(size_t)n + slot] = sum[1];
            out[2 * (size_t)n + slot] = sum[2];
            out[3 * (size_t)n + slot] = sum[3];
        }
    }
    const double tot_e = ff_ewr_block_sum(en, red);
    if (threadIdx.x == 0) part[7 * (size_t)blockIdx.x] = tot_e;
    if (VIRIAL) {
        for (int k = 0; k < 6; ++k) {
            const double t = ff_ewr_block_sum((double)w[k], red);
            if (threadIdx.x == 0) part[7 * (size_t)blockIdx.x + 1 + k] = t;
        }
    } else if (threadIdx.x == 0) {
        for (int k = 0; k < 6; ++k) part[7 * (size_t)blockIdx.x + 1 + k] = 0.0;
    }
}

#define FF_EWR_DEFINE_PAIRS(NAME, R, VIRIAL, BOUNDS)                                                                   \
    FF_EXTERN_C __global__ void BOUNDS NAME(int n, int kpa, const double* pos, const unsigned* perm,                   \
                                     const unsigned long long* keys, const unsigned* start, const double* bbox,        \
                                     const int* stencil, int nst, int nc0, int nc1, int nc2, const double* par,        \
                                     const double* coef, int ncoef, int exact, const unsigned* xptr,                   \
                                     const unsigned* xlist, int nxa, const double* xscale, int shares,                 \
                                     const double* sfrac, const double* q, int want_field, double* out, double* part,  \
                                     unsigned long long* flag) {                                                       \
        ff_ewr_pairs_t<R, VIRIAL>(n, kpa, pos, perm, keys, start, bbox, stencil, nst, nc0, nc1, nc2, par, coef,        \
                                  ncoef, exact, xptr, xlist, nxa, xscale, shares, sfrac, q, want_field, out, part, flag);\
    }                                                                                                                  \
    FF_REGISTER(NAME)

FF_EWR_DEFINE_PAIRS(ff_ewr_pairs_f64, double, false, FF_EWR_F64_BOUNDS)
FF_EWR_DEFINE_PAIRS(ff_ewr_pairs_f64_virial, double, true, FF_EWR_F64_BOUNDS)
FF_EWR_DEFINE_PAIRS(ff_ewr_pairs_f32, float, false, FF_EWR_F32_BOUNDS)
FF_EWR_DEFINE_PAIRS(ff_ewr_pairs_f32_virial, float, true, FF_EWR_F32_BOUNDS)

// One block of FF_EWR_BLOCK threads: out[0] = the coincidence flag, out[1..4] = bad[0..3],
// out[4 + k] = the bits of Σ_blocks part[7 · block + k] (k < 7). The seven sums share one pass
// over the partials and one reduction tree (each in the order of ff_ewr_block_sum).
FF_EXTERN_C __global__ void ff_ewr_finish(int nparts, const double* part, const unsigned long long* flag,
                                          const unsigned* bad, unsigned long long* out) {
    __shared__ double red[7][FF_EWR_BLOCK];
    double acc[7] = {0, 0, 0, 0, 0, 0, 0};
    for (int j = threadIdx.x; j < nparts; j += blockDim.x)
        for (int k = 0; k < 7; ++k) acc[k] += part[7 * (size_t)j + k];
    for (int k = 0; k < 7; ++k) red[k][threadIdx.x] = acc[k];
    __syncthreads();
    for (int off = blockDim.x / 2; off > 0; off >>= 1) {
        if ((int)threadIdx.x < off)
            for (int k = 0; k < 7; ++k) red[k][threadIdx.x] += red[k][threadIdx.x + off];
        __syncthreads();
    }
    if (threadIdx.x == 0) {
        for (int k = 0; k < 7; ++k) out[4 + k] = (unsigned long long)__double_as_longlong(red[k][0]);
        out[0] = *flag;
        for (int k = 0; k < 3; ++k) out[1 + k] = bad[k];
    }
}
FF_REGISTER(ff_ewr_finish)

// One thread per sorted slot: phi[i] += φ, field[3i + d] += E_d for atom i = perm[slot] (a null
// output is skipped).
FF_EXTERN_C __global__ void ff_ewr_scatter(int n, const unsigned* perm, const double* out, double* phi, double* field) {
    const int slot = (int)ff_ewr_gid();
    if (slot >= n) return;
    const size_t i = perm[slot];
    if (phi != nullptr) phi[i] += out[slot];
    if (field != nullptr)
        for (int d = 0; d < 3; ++d) field[3 * i + d] += out[(size_t)(1 + d) * n + slot];
}
FF_REGISTER(ff_ewr_scatter)
