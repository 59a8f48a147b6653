// Toy kernels for the harness self-test (gpu-emu/tests/harness.rs): a correct block reduction
// (shared-memory tree, warp shuffles, double atomicAdd) and two planted bugs that the harness
// must expose as wrong results: a tree reduction missing its __syncthreads(), and a neighbour
// read of shared memory with no barrier between the write and the read.

// out += Σ in[i]; blockDim a multiple of 32, ≤ 1024; dynamic shared memory blockDim doubles.
FF_EXTERN_C __global__ void ff_test_reduce_ok(const double* in, int n, double* out) {
    FF_DYN_SHARED(double, s);
    __shared__ double warp_sums[32];
    const int t = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0;
    __syncthreads();
    // tree in shared memory down to 64 values, then shuffles within each warp
    for (int off = blockDim.x / 2; off >= 32; off /= 2) {
        if (t < off) s[t] += s[t + off];
        __syncthreads();
    }
    double v = t < 32 ? s[t] : 0.0;
    for (int off = 16; off > 0; off /= 2) v += __shfl_down_sync(0xffffffffu, v, off);
    if (t % 32 == 0) warp_sums[t / 32] = v;
    __syncthreads();
    if (t == 0) {
        double tot = 0.0;
        for (int w = 0; w < (int)(blockDim.x / 32); ++w) tot += warp_sums[w];
        atomicAdd(out, tot);
    }
}
FF_REGISTER(ff_test_reduce_ok)

// The same tree without the barriers inside the loop (the planted race).
FF_EXTERN_C __global__ void ff_test_reduce_racy(const double* in, int n, double* out) {
    FF_DYN_SHARED(double, s);
    const int t = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0;
    __syncthreads();
    for (int off = blockDim.x / 2; off > 0; off /= 2) {
        if (t < off) s[t] += s[t + off];
        // missing __syncthreads();
    }
    if (t == 0) atomicAdd(out, s[0]);
}
FF_REGISTER(ff_test_reduce_racy)

// out[i] = in[i] + in[i+1 within the block], read through shared memory without a barrier
// between the write and the read (the planted missing __syncthreads()).
FF_EXTERN_C __global__ void ff_test_neighbour_nosync(const double* in, int n, double* out) {
    FF_DYN_SHARED(double, s);
    const int t = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0;
    // missing __syncthreads();
    const double r = s[(t + 1) % blockDim.x];
    if (i < n) out[i] = s[t] + r;
}
FF_REGISTER(ff_test_neighbour_nosync)

// The correct version of the neighbour kernel.
FF_EXTERN_C __global__ void ff_test_neighbour_sync(const double* in, int n, double* out) {
    FF_DYN_SHARED(double, s);
    const int t = threadIdx.x;
    const int i = blockIdx.x * blockDim.x + t;
    s[t] = i < n ? in[i] : 0.0;
    __syncthreads();
    const double r = s[(t + 1) % blockDim.x];
    if (i < n) out[i] = s[t] + r;
}
FF_REGISTER(ff_test_neighbour_sync)

// Shuffle semantics check: out[i] = shfl_xor(v, 1) + 1000·shfl_down(v, 2, width 4) per thread.
FF_EXTERN_C __global__ void ff_test_shuffles(const double* in, double* out) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const double v = in[i];
    const double a = __shfl_xor_sync(0xffffffffu, v, 1);
    const double b = __shfl_down_sync(0xffffffffu, v, 2, 4);
    out[i] = a + 1000.0 * b;
}
FF_REGISTER(ff_test_shuffles)

// Warp vote semantics check: warp k of the block votes k + 1 times (so warps vote independently
// of one another), vote r with the lanes l ≤ 3r; out[i] = Σ_r ballot_r, plus 1000 if __any_sync of
// "lane 31" and 2000 if __all_sync of "lane ≥ 0" hold.
FF_EXTERN_C __global__ void ff_test_votes(unsigned long long* out) {
    const int t = threadIdx.x;
    const int warp = t / 32, lane = t % 32;
    unsigned long long s = 0;
    for (int r = 0; r <= warp; ++r) s += __ballot_sync(0xffffffffu, lane <= 3 * r);
    if (__any_sync(0xffffffffu, lane == 31)) s += 1000;
    if (__all_sync(0xffffffffu, lane >= 0)) s += 2000;
    out[blockIdx.x * blockDim.x + t] = s;
}
FF_REGISTER(ff_test_votes)
