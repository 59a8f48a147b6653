// farfield GPU FMM kernels (CUDA C++), see src/gpu/fmm/. Compiled by NVRTC and, unchanged, by
// the CUDA-on-CPU emulator (see spread.cu for the rules).
//
// M2L (src/gpu/fmm/m2l.rs): interaction lists built on the device, presorted per level, octant
// group G_s and symmetry class (seed paper: Kohnke et al., Int. J. HPC Appl. 35, 97 (2021),
// §3.3.3–3.3.5, eqs. 22–31), and the M2L application
//   μ_jk += (−1)^j Σ_{l ≤ pe} Σ_{|m| ≤ l} ω_lm conj(T_{l+j,m+k}),   j ≤ pe, 0 ≤ k ≤ j,
// (the direct form of src/fmm/m2l.rs, m2l_tensor) with T = M(v) the irregular harmonics of the
// offset v = c_t − c_s in box units (order 2p) and pe the distance-dependent order of the
// offset (src/fmm/params.rs, m2l_order); pe = p for the periodic lattice tensors.
//
// Storage: expansions box-major, block of 2·nc doubles (nc = (p+1)(p+2)/2): real parts at
// idx(l,m) = l(l+1)/2 + m, imaginary parts at nc + idx(l,m), m ≥ 0 only; negative m through
// X_{l,−m} = (−1)^m conj(X_lm). Operators: blocks of 2·nt doubles, nt = ncoef(2p).
//
// Symmetry (the reflections of an offset; derived here because the paper's eqs. 24–26 are all it
// states): with M_LM(v) = (L−M)! P_L^M(cos θ) e^{iMφ} / |v|^{L+1},
//   z → −z: cos θ → −cos θ, P_L^M(−x) = (−1)^{L+M} P_L^M(x)   ⇒ factor (−1)^{L+M};
//   y → −y: φ → −φ                                            ⇒ complex conjugate;
//   x → −x: φ → π − φ, e^{iM(π−φ)} = (−1)^M e^{−iMφ}          ⇒ factor (−1)^M and conjugate.
// So for the reflection σ = (sx, sy, sz) ∈ {0,1}³ (1: that component negated) of a reference
// offset a ≥ 0: Re M_LM(σa) = s·Re M_LM(a), Im M_LM(σa) = s·e·Im M_LM(a) with
// s = (−1)^{sx·M + sz·(L+M)} and e = (−1)^{sx+sy}; this holds for negative M too (only parities
// enter). The sign bitset B(u) of the paper (eq. 30–31, two bits per element) is this pair
// (s, s·e): it is evaluated from the member's three reflection bits by parity arithmetic
// instead of being stored.
// Applying one reference operator to all β members γ of a class (sources ω^γ, reflections σ_γ)
// at once: with s_γ = (−1)^{sx(m+k) + sz(l+j+m+k)}, e_γ as above,
//   Σ_γ ω^γ_lm conj((σ_γ T)_{l+j,m+k}) = Tr·U_r + Ti·U_i' + i (Tr·U_i − Ti·U_r'),
//   U_r = Σ s_γ Re ω^γ, U_i = Σ s_γ Im ω^γ, U_i' = Σ s_γ e_γ Im ω^γ, U_r' = Σ s_γ e_γ Re ω^γ,
// so each operator element costs 4 real multiplications (one complex multiplication) per class
// instead of β complex multiplications: the paper's split products ac, bd, ad, bc (eq. 29) with
// the signs applied to the sources' side. Target-oriented: one block per target box accumulates
// its classes in shared memory (no atomics, deterministic), the class's reference operator is
// read from global memory once and shared by its β pairs.

#ifndef FF_EMULATION
#define FF_EXTERN_C extern "C"
#define FF_DYN_SHARED(T, name) \
    extern __shared__ __align__(16) unsigned char ff_dyn_smem[]; \
    T* name = reinterpret_cast<T*>(ff_dyn_smem)
#define FF_REGISTER(name)
#endif

#define FF_M2L_NOPS 316
#define FF_M2L_NREFS 56
#define FF_M2L_LIST_BLOCK 256

__device__ __forceinline__ int ff_m2l_tri(int l) { return l * (l + 1) / 2; }
__device__ __forceinline__ int ff_m2l_iabs(int v) { return v < 0 ? -v : v; }

// Morton keys: bit i of x, y, z at bits 3i, 3i+1, 3i+2 (src/fmm/tree.rs).
__device__ __forceinline__ unsigned long long ff_m2l_encode(unsigned long long x, unsigned long long y,
                                                            unsigned long long z) {
    unsigned long long k = 0;
    for (int i = 0; i < 21; ++i) {
        k |= ((x >> i) & 1ull) << (3 * i);
        k |= ((y >> i) & 1ull) << (3 * i + 1);
        k |= ((z >> i) & 1ull) << (3 * i + 2);
    }
    return k;
}

__device__ __forceinline__ unsigned long long ff_m2l_compact(unsigned long long k) {
    unsigned long long x = 0;
    for (int i = 0; i < 21; ++i) x |= ((k >> (3 * i)) & 1ull) << i;
    return x;
}

// Index of `key` in the increasing `keys[0..n)`, or −1.
__device__ int ff_m2l_find(const unsigned long long* keys, int n, unsigned long long key) {
    int lo = 0, hi = n;
    while (lo < hi) {
        const int mid = (lo + hi) / 2;
        if (keys[mid] < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return (lo < n && keys[lo] == key) ? lo : -1;
}

// The level's boxes presorted by octant group G_s (s = key & 7, the box's position in its parent)
// and, within a group, by box index: targets[group_start[s] + rank] = box. group_start[0..9).
// One block of FF_M2L_LIST_BLOCK threads (deterministic, no atomics).
FF_EXTERN_C __global__ void ff_fmm_m2l_group(int n, const unsigned long long* keys, unsigned* targets,
                                             unsigned* group_start) {
    __shared__ unsigned cnt[8 * (FF_M2L_LIST_BLOCK + 1)];
    const int t = threadIdx.x, nt = blockDim.x;
    const int chunk = (n + nt - 1) / nt;
    const int a = t * chunk < n ? t * chunk : n;
    const int e = a + chunk < n ? a + chunk : n;
    unsigned c[8];
    for (int s = 0; s < 8; ++s) c[s] = 0;
    for (int i = a; i < e; ++i) c[keys[i] & 7ull] += 1;
    for (int s = 0; s < 8; ++s) cnt[s * (FF_M2L_LIST_BLOCK + 1) + t] = c[s];
    __syncthreads();
    if (t == 0) {
        unsigned acc = 0;
        for (int s = 0; s < 8; ++s) {
            group_start[s] = acc;
            for (int i = 0; i < nt; ++i) {
                const unsigned v = cnt[s * (FF_M2L_LIST_BLOCK + 1) + i];
                cnt[s * (FF_M2L_LIST_BLOCK + 1) + i] = acc;
                acc += v;
            }
        }
        group_start[8] = acc;
    }
    __syncthreads();
    for (int s = 0; s < 8; ++s) c[s] = cnt[s * (FF_M2L_LIST_BLOCK + 1) + t];
    for (int i = a; i < e; ++i) targets[c[keys[i] & 7ull]++] = (unsigned)i;
}
FF_REGISTER(ff_fmm_m2l_group)

// Interaction list rows, one thread per target (row r of the presorted order). The sources of a
// box are the children of its parent's 27 neighbours (periodic: wrapped, the offset stays the
// geometric one) that are not adjacent to it: v = o − b − 2δ, max|v_i| ≥ 2 (src/fmm/lists.rs).
// mode 0: counts (pairs into ps[r], nonempty symmetry classes into cs[r]);
// mode 1: fills from the starts ps[r], cs[r]:
//   plain:     pair_src[q], pair_op[q] (operator index 0..315, dir_to_op[(vx+3)+7(vy+3)+49(vz+3)]),
//              in the order of the parent neighbours δ (z slowest) and their children;
//   symmetric: class_info[2c] = first member, class_info[2c+1] = ref | β << 8, classes in the
//              order of refs[] (T_α1, T_α2, T_α3, T_α4: classes of 1, 2, 4, 8 reflections, eq. 28);
//              members mem_src[q], mem_bits[q] = sx | sy << 1 | sz << 2 (reflection of the
//              reference offset refs[ref] ≥ 0 giving v), reflections in increasing bit order;
//   hist[op] += 1 per pair, hist[316 + ref] += 1 per class (integer atomics: exact).
FF_EXTERN_C __global__ void ff_fmm_m2l_rows(int mode, int n, int level, int periodic,
                                            const unsigned long long* keys, const unsigned* parent,
                                            const unsigned long long* pkeys, int npar, const unsigned* pchild,
                                            const unsigned* targets, const int* refs, const int* dir_to_op,
                                            unsigned* ps, unsigned* cs, unsigned* pair_src, unsigned* pair_op,
                                            unsigned* class_info, unsigned* mem_src, unsigned* mem_bits,
                                            unsigned* hist) {
    const long long r = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (r >= n) return;
    const unsigned b = targets[r];
    const int oct = (int)(keys[b] & 7ull);
    const int o[3] = {oct & 1, (oct >> 1) & 1, (oct >> 2) & 1};
    const unsigned long long pk = pkeys[parent[b]];
    const long long pc[3] = {(long long)ff_m2l_compact(pk), (long long)ff_m2l_compact(pk >> 1),
                             (long long)ff_m2l_compact(pk >> 2)};
    const long long side = 1ll << (level - 1);
    int nb[27];
    for (int d = 0; d < 27; ++d) {
        const int del[3] = {d % 3 - 1, (d / 3) % 3 - 1, d / 9 - 1};
        unsigned long long c[3];
        bool ok = true;
        for (int a = 0; a < 3; ++a) {
            long long v = pc[a] + del[a];
            if (periodic) {
                v = ((v % side) + side) % side;
            } else if (v < 0 || v >= side) {
                ok = false;
            }
            c[a] = (unsigned long long)v;
        }
        nb[d] = ok ? ff_m2l_find(pkeys, npar, ff_m2l_encode(c[0], c[1], c[2])) : -1;
    }
    // plain pairs
    unsigned q = mode == 1 ? ps[r] : 0;
    unsigned npairs = 0;
    for (int d = 0; d < 27; ++d) {
        if (nb[d] < 0) continue;
        const int del[3] = {d % 3 - 1, (d / 3) % 3 - 1, d / 9 - 1};
        for (unsigned c = pchild[nb[d]]; c < pchild[nb[d] + 1]; ++c) {
            const int bo = (int)(keys[c] & 7ull);
            const int v[3] = {o[0] - (bo & 1) - 2 * del[0], o[1] - ((bo >> 1) & 1) - 2 * del[1],
                              o[2] - ((bo >> 2) & 1) - 2 * del[2]};
            if (ff_m2l_iabs(v[0]) < 2 && ff_m2l_iabs(v[1]) < 2 && ff_m2l_iabs(v[2]) < 2) continue;
            ++npairs;
            if (mode == 1) {
                const int op = dir_to_op[(v[0] + 3) + 7 * (v[1] + 3) + 49 * (v[2] + 3)];
                pair_src[q] = c;
                pair_op[q] = (unsigned)op;
                atomicAdd(hist + op, 1u);
                ++q;
            }
        }
    }
    // symmetry classes
    unsigned cl = mode == 1 ? cs[r] : 0;
    unsigned mq = mode == 1 ? ps[r] : 0;
    unsigned nclass = 0;
    for (int ref = 0; ref < FF_M2L_NREFS; ++ref) {
        const int av[3] = {refs[3 * ref], refs[3 * ref + 1], refs[3 * ref + 2]};
        unsigned beta = 0;
        const unsigned first = mq;
        for (int bits = 0; bits < 8; ++bits) {
            int v[3];
            bool ok = true;
            int d = 0, bo = 0;
            for (int a = 0; a < 3; ++a) {
                const int sa = (bits >> a) & 1;
                if (sa && av[a] == 0) ok = false;  // the reflection of 0 is itself
                v[a] = sa ? -av[a] : av[a];
                if (v[a] < o[a] - 3 || v[a] > o[a] + 2) ok = false;  // not among this octant's offsets
                const int ob = (o[a] - v[a]) & 1;
                const int del = (o[a] - v[a] - ob) / 2;
                bo |= ob << a;
                d += (del + 1) * (a == 0 ? 1 : (a == 1 ? 3 : 9));
            }
            if (!ok || nb[d] < 0) continue;
            int src = -1;
            for (unsigned c = pchild[nb[d]]; c < pchild[nb[d] + 1]; ++c)
                if ((int)(keys[c] & 7ull) == bo) src = (int)c;
            if (src < 0) continue;
            if (mode == 1) {
                mem_src[mq] = (unsigned)src;
                mem_bits[mq] = (unsigned)bits;
                ++mq;
            }
            ++beta;
        }
        if (beta == 0) continue;
        if (mode == 1) {
            class_info[2 * cl] = first;
            class_info[2 * cl + 1] = (unsigned)ref | (beta << 8);
            atomicAdd(hist + FF_M2L_NOPS + ref, 1u);
            ++cl;
        }
        ++nclass;
    }
    if (mode == 0) {
        ps[r] = npairs;
        cs[r] = nclass;
    }
}
FF_REGISTER(ff_fmm_m2l_rows)

// Adds to mu_sh (2·nc doubles: one target's local expansion of order p, real plane then
// imaginary plane) the M2L of one operator T (block `op` of 2·nt doubles, order 2p) applied with
// order pe to the nmem sources src[g] (blocks of the level's multipoles mp), each through the
// reflection bits[g] of T (bits == nullptr: no reflection). The operator's degrees 0..2pe pass
// through the shared buffer opsh (cap complex values: re at [0, cap), im at [cap, 2cap)) in
// chunks of whole degrees; cap ≥ 2p + 1. Called convergently by the whole block.
__device__ void ff_m2l_apply(int p, int pe, const double* __restrict__ op, int nt, int nmem,
                             const unsigned* __restrict__ src, const unsigned* __restrict__ bits,
                             const double* __restrict__ mp, double* mu_sh, double* opsh, int cap) {
    const int nc = ff_m2l_tri(p + 1);
    const int nce = ff_m2l_tri(pe + 1);
    const int tid = threadIdx.x, nth = blockDim.x;
    int L0 = 0;
    while (L0 <= 2 * pe) {
        int L1 = L0;
        while (L1 <= 2 * pe && ff_m2l_tri(L1 + 1) - ff_m2l_tri(L0) <= cap) ++L1;
        const int base = ff_m2l_tri(L0);
        const int cnt = ff_m2l_tri(L1) - base;
        __syncthreads();  // the previous chunk is no longer read
        for (int q = tid; q < cnt; q += nth) {
            opsh[q] = op[base + q];
            opsh[cap + q] = op[nt + base + q];
        }
        __syncthreads();
        for (int i = tid; i < nce; i += nth) {
            int j = 0;
            while (ff_m2l_tri(j + 1) <= i) ++j;
            const int k = i - ff_m2l_tri(j);
            const int lo = L0 - j > 0 ? L0 - j : 0;
            const int hi = L1 - 1 - j < pe ? L1 - 1 - j : pe;
            double sr = 0.0, si = 0.0;
            for (int l = lo; l <= hi; ++l) {
                const int L = l + j;
                const int rowT = ff_m2l_tri(L) - base;
                const int rowW = ff_m2l_tri(l);
                for (int m = -l; m <= l; ++m) {
                    const int M = m + k;
                    const int aM = M < 0 ? -M : M;
                    double tr = opsh[rowT + aM], ti = opsh[cap + rowT + aM];
                    if (M < 0) {  // T_{L,−M} = (−1)^M conj(T_LM)
                        if (aM & 1)
                            tr = -tr;
                        else
                            ti = -ti;
                    }
                    const int am = m < 0 ? -m : m;
                    double ur = 0.0, ui = 0.0, ue = 0.0, we = 0.0;
                    for (int g = 0; g < nmem; ++g) {
                        const double* w = mp + (long long)src[g] * 2 * nc;
                        double wr = __ldg(w + rowW + am), wi = __ldg(w + nc + rowW + am);
                        if (m < 0) {
                            if (am & 1)
                                wr = -wr;
                            else
                                wi = -wi;
                        }
                        if (bits) {
                            const int bsx = bits[g] & 1, bsy = (bits[g] >> 1) & 1, bsz = (bits[g] >> 2) & 1;
                            const int s = ((bsx & M) ^ (bsz & (L + M))) & 1;  // s_γ = (−1)^{sx·M + sz(L+M)}
                            if (s) {
                                wr = -wr;
                                wi = -wi;
                            }
                            ur += wr;
                            ui += wi;
                            if (bsx ^ bsy) {  // e_γ = −1: conjugated operator
                                ue -= wi;
                                we -= wr;
                            } else {
                                ue += wi;
                                we += wr;
                            }
                        } else {
                            ur += wr;
                            ui += wi;
                            ue += wi;
                            we += wr;
                        }
                    }
                    sr += tr * ur + ti * ue;
                    si += tr * ui - ti * we;
                }
            }
            const double sg = (j & 1) ? -1.0 : 1.0;
            mu_sh[i] += sg * sr;
            mu_sh[nc + i] += sg * si;
        }
        L0 = L1;
    }
}

// Zeroes the block's accumulator (before the first class), each element by the thread that owns
// it in ff_m2l_apply and ff_m2l_store (i ≡ tid mod blockDim, both planes).
__device__ void ff_m2l_zero(double* mu_sh, int nc) {
    for (int i = threadIdx.x; i < nc; i += blockDim.x) {
        mu_sh[i] = 0.0;
        mu_sh[nc + i] = 0.0;
    }
}

// loc[t] += mu_sh after the last class (every element written by the thread that owns it in
// ff_m2l_apply: i ≡ tid mod blockDim, as here, so no barrier is needed before); with a split
// row (split > 1) the block's partial sum goes to its own slot part_c instead (written, not
// added), for ff_fmm_m2l_reduce.
__device__ void ff_m2l_store(const double* mu_sh, double* loc_t, double* part_c, int nc) {
    for (int i = threadIdx.x; i < nc; i += blockDim.x) {
        if (part_c) {
            part_c[i] = mu_sh[i];
            part_c[nc + i] = mu_sh[nc + i];
        } else {
            loc_t[i] += mu_sh[i];
            loc_t[nc + i] += mu_sh[nc + i];
        }
    }
}

// Split rows: block b of a launch works on row row0 + b / split and on the part b % split of that
// row's items [s, e) (pairs or classes), the consecutive range [s + len·c/split, s + len·(c+1)/split).
__device__ __forceinline__ void ff_m2l_part(int split, unsigned* s, unsigned* e) {
    if (split > 1) {
        const unsigned long long len = *e - *s, c = blockIdx.x % (unsigned)split;
        const unsigned a = *s + (unsigned)(len * c / split);
        *e = *s + (unsigned)(len * (c + 1) / split);
        *s = a;
    }
}

// Plain M2L (the reference): block = row row0 + blockIdx.x / split of the presorted targets (and
// part blockIdx.x % split of its pairs, ff_m2l_part), one operator load per pair: pairs
// pair_start[r]..pair_start[r+1] with sources pair_src and operators ops[pair_op] of order
// op_pe[pair_op]. Also the periodic lattice operator (ops = the 27 level-1 lattice tensors,
// op_pe = p). split = 1: adds into loc; split > 1: writes part (split × nrows blocks of 2·nc,
// part-major) for ff_fmm_m2l_reduce. Dynamic shared memory: 2·nc + 2·cap doubles.
FF_EXTERN_C __global__ void ff_fmm_m2l_plain(int p, int nt, int cap, int row0, int split, int nrows, double* part,
                                             const unsigned* targets, const unsigned* pair_start,
                                             const unsigned* pair_src, const unsigned* pair_op, const double* ops,
                                             const unsigned* op_pe, const double* mp, double* loc) {
    FF_DYN_SHARED(double, smem);
    const int nc = ff_m2l_tri(p + 1);
    double* mu_sh = smem;
    double* opsh = smem + 2 * nc;
    const int r = row0 + (int)(blockIdx.x / (unsigned)split);
    unsigned q0 = pair_start[r], q1 = pair_start[r + 1];
    ff_m2l_part(split, &q0, &q1);
    ff_m2l_zero(mu_sh, nc);
    for (unsigned q = q0; q < q1; ++q) {
        const unsigned o = pair_op[q];
        ff_m2l_apply(p, (int)op_pe[o], ops + (long long)o * 2 * nt, nt, 1, pair_src + q, nullptr, mp, mu_sh, opsh, cap);
    }
    double* part_c = split > 1 ? part + ((long long)(blockIdx.x % (unsigned)split) * nrows + r) * 2 * nc : nullptr;
    ff_m2l_store(mu_sh, loc + (long long)targets[r] * 2 * nc, part_c, nc);
}
FF_REGISTER(ff_fmm_m2l_plain)

// Symmetric M2L: block = row row0 + blockIdx.x / split (part blockIdx.x % split of its classes,
// as ff_fmm_m2l_plain); classes class_start[r]..class_start[r+1], each with its reference
// operator refs_ops[ref] (order ref_pe[ref]) loaded once into shared memory and applied to its β
// members (sources mem_src, reflections mem_bits). Dynamic shared memory: 2·nc + 2·cap doubles.
FF_EXTERN_C __global__ void ff_fmm_m2l_sym(int p, int nt, int cap, int row0, int split, int nrows, double* part,
                                           const unsigned* targets, const unsigned* class_start,
                                           const unsigned* class_info, const unsigned* mem_src,
                                           const unsigned* mem_bits, const double* ref_ops, const unsigned* ref_pe,
                                           const double* mp, double* loc) {
    FF_DYN_SHARED(double, smem);
    const int nc = ff_m2l_tri(p + 1);
    double* mu_sh = smem;
    double* opsh = smem + 2 * nc;
    const int r = row0 + (int)(blockIdx.x / (unsigned)split);
    unsigned c0 = class_start[r], c1 = class_start[r + 1];
    ff_m2l_part(split, &c0, &c1);
    ff_m2l_zero(mu_sh, nc);
    for (unsigned c = c0; c < c1; ++c) {
        const unsigned first = class_info[2 * c];
        const unsigned ref = class_info[2 * c + 1] & 255u;
        const int beta = (int)(class_info[2 * c + 1] >> 8);
        ff_m2l_apply(p, (int)ref_pe[ref], ref_ops + (long long)ref * 2 * nt, nt, beta, mem_src + first, mem_bits + first,
                     mp, mu_sh, opsh, cap);
    }
    double* part_c = split > 1 ? part + ((long long)(blockIdx.x % (unsigned)split) * nrows + r) * 2 * nc : nullptr;
    ff_m2l_store(mu_sh, loc + (long long)targets[r] * 2 * nc, part_c, nc);
}
FF_REGISTER(ff_fmm_m2l_sym)

// The split rows' sums: loc[targets[r]] += Σ_{c < split} part[c][r] (c in order: deterministic),
// one thread per row and coefficient (nc2 = 2·nc doubles per row).
FF_EXTERN_C __global__ void ff_fmm_m2l_reduce(int nc2, int nrows, int split, const unsigned* targets,
                                              const double* part, double* loc) {
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= (long long)nrows * nc2) return;
    const long long r = i / nc2, k = i % nc2;
    double s = 0.0;
    for (int c = 0; c < split; ++c) s += part[((long long)c * nrows + r) * nc2 + k];
    loc[(long long)targets[r] * nc2 + k] += s;
}
FF_REGISTER(ff_fmm_m2l_reduce)

// Periodic lattice operator list (level 1, n ≤ 8 boxes): row t = box t, its sources are all n
// level-1 boxes s (itself included) with operator level1_index(d) = (dx+1) + 3(dy+1) + 9(dz+1),
// d = c_t − c_s (src/fmm/periodic.rs); pair_start[t] = n·t. One thread per target.
FF_EXTERN_C __global__ void ff_fmm_m2l_lattice_rows(int n, const unsigned long long* keys, unsigned* targets,
                                                    unsigned* pair_start, unsigned* pair_src, unsigned* pair_op) {
    const int t = (int)(blockIdx.x * blockDim.x + threadIdx.x);
    if (t >= n) return;
    targets[t] = (unsigned)t;
    pair_start[t] = (unsigned)(n * t);
    if (t == 0) pair_start[n] = (unsigned)(n * n);
    const unsigned long long kt = keys[t];
    for (int s = 0; s < n; ++s) {
        const unsigned long long ks = keys[s];
        const int d[3] = {(int)(kt & 1ull) - (int)(ks & 1ull), (int)((kt >> 1) & 1ull) - (int)((ks >> 1) & 1ull),
                          (int)((kt >> 2) & 1ull) - (int)((ks >> 2) & 1ull)};
        pair_src[n * t + s] = (unsigned)s;
        pair_op[n * t + s] = (unsigned)((d[0] + 1) + 3 * (d[1] + 1) + 9 * (d[2] + 1));
    }
}
FF_REGISTER(ff_fmm_m2l_lattice_rows)
