// CUDA-on-CPU emulation header (test code, docs/design.md §5.3).
//
// Gives CUDA's built-ins a CPU meaning so that the library's .cu sources compile unchanged as
// C++20 and run on the CPU, one block at a time, each CUDA thread a fiber (emu.cpp):
//  * threadIdx / blockIdx / blockDim / gridDim are thread_local, set as each fiber resumes;
//  * __shared__ is `static thread_local` (a launch runs its blocks one at a time on the calling
//    OS thread; launches from different OS threads run at the same time);
//    dynamic shared memory (FF_DYN_SHARED) is a per-launch buffer, poisoned (all bytes 0xFF,
//    a NaN for floats) before every block so reads of unwritten shared memory show up;
//  * __syncthreads() is a barrier over the block's threads that have not exited (a thread that
//    returns from the kernel drops out, as exited threads do on current GPUs); a fiber runs
//    until it reaches a barrier, so without one, thread t's code before and after runs before
//    thread t + 1's: a missing barrier between a write and another thread's read shows up;
//  * __shfl_down_sync / __shfl_xor_sync / __shfl_sync go through a per-block exchange buffer
//    with two block-wide barriers, so kernels must call them convergently (all live threads of
//    the block), which the library's kernels do;
//  * __ballot_sync / __any_sync / __all_sync are warp-wide: one barrier of the warp's lanes;
//  * a barrier or vote that can never open (reached by only part of the threads) aborts with a
//    message naming the kernel, where a GPU would hang;
//  * atomicAdd on int, unsigned, unsigned long long, float, double by compare-and-swap,
//    atomicMin on int and unsigned;
//  * __ldg(p) is *p.
// Optional "stagger" mode (ff_emu_set_stagger) resumes a block's threads in a pseudo-random order
// at its start and after every barrier instead of in thread order, so that races in the other
// direction (thread t reading what a higher thread writes) show up too.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#define FF_EMULATION 1

struct dim3 {
    unsigned x, y, z;
};

namespace ff_emu {
extern thread_local dim3 tl_threadIdx, tl_blockIdx, tl_blockDim, tl_gridDim;
void syncthreads();
void* dyn_smem();
void exchange(const void* v, int size, int src_lane_offset_kind, int arg, int width, void* out);
unsigned ballot(int pred);
void register_kernel(const char* name, void (*tramp)(void* fn, void** args), void* fn);

// Trampoline: calls fn with the arguments args[i] points at (cudarc/cuLaunchKernel style).
template <typename... A, std::size_t... I>
void call_with(void (*f)(A...), void** args, std::index_sequence<I...>) {
    f(*static_cast<std::remove_cv_t<std::remove_reference_t<A>>*>(args[I])...);
}
template <typename... A>
void tramp(void* fn, void** args) {
    call_with(reinterpret_cast<void (*)(A...)>(fn), args, std::index_sequence_for<A...>{});
}
template <typename... A>
struct Registrar {
    Registrar(const char* name, void (*f)(A...)) { register_kernel(name, &tramp<A...>, reinterpret_cast<void*>(f)); }
};
template <typename... A>
Registrar<A...> make_registrar(const char* name, void (*f)(A...)) {
    return Registrar<A...>(name, f);
}
}  // namespace ff_emu

#define threadIdx (ff_emu::tl_threadIdx)
#define blockIdx (ff_emu::tl_blockIdx)
#define blockDim (ff_emu::tl_blockDim)
#define gridDim (ff_emu::tl_gridDim)
#define __global__
#define __device__
#define __host__
#define __forceinline__ inline
#define __shared__ static thread_local
#define __restrict__ __restrict
#define __align__(n) alignas(n)
#define FF_EXTERN_C extern "C"
#define FF_DYN_SHARED(T, name) T* name = reinterpret_cast<T*>(ff_emu::dyn_smem())
#define FF_REGISTER(name) static auto ff_emu_reg_##name = ff_emu::make_registrar(#name, &name);

inline void __syncthreads() { ff_emu::syncthreads(); }

template <typename T>
inline T __ldg(const T* p) {
    return *p;
}

template <typename T>
inline T ff_emu_atomic_add(T* p, T v) {
    T old;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    T nw;
    do {
        nw = old + v;
    } while (!__atomic_compare_exchange(p, &old, &nw, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
    return old;
}
inline int atomicAdd(int* p, int v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned atomicAdd(unsigned* p, unsigned v) { return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST); }
inline unsigned long long atomicAdd(unsigned long long* p, unsigned long long v) {
    return __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
}
inline float atomicAdd(float* p, float v) { return ff_emu_atomic_add(p, v); }
inline double atomicAdd(double* p, double v) { return ff_emu_atomic_add(p, v); }
template <typename T>
inline T ff_emu_atomic_min(T* p, T v) {
    T old;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    while (v < old && !__atomic_compare_exchange(p, &old, &v, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
    return old;
}
inline int atomicMin(int* p, int v) { return ff_emu_atomic_min(p, v); }
inline unsigned atomicMin(unsigned* p, unsigned v) { return ff_emu_atomic_min(p, v); }

// kinds for ff_emu::exchange
#define FF_EMU_SHFL_DOWN 0
#define FF_EMU_SHFL_XOR 1
#define FF_EMU_SHFL_IDX 2

template <typename T>
inline T __shfl_down_sync(unsigned, T v, unsigned delta, int width = 32) {
    static_assert(sizeof(T) <= 8, "shuffle of at most 8 bytes");
    T out;
    ff_emu::exchange(&v, sizeof(T), FF_EMU_SHFL_DOWN, (int)delta, width, &out);
    return out;
}
template <typename T>
inline T __shfl_xor_sync(unsigned, T v, int lane_mask, int width = 32) {
    T out;
    ff_emu::exchange(&v, sizeof(T), FF_EMU_SHFL_XOR, lane_mask, width, &out);
    return out;
}
template <typename T>
inline T __shfl_sync(unsigned, T v, int src_lane, int width = 32) {
    T out;
    ff_emu::exchange(&v, sizeof(T), FF_EMU_SHFL_IDX, src_lane, width, &out);
    return out;
}

// Warp votes: the lanes of one warp (32 consecutive linear thread indices) meet at a barrier
// of their own, so a warp may vote any number of times independently of the block's other
// warps; every live lane of the warp must vote (kernels vote in warp-uniform control flow).
inline unsigned __ballot_sync(unsigned mask, int pred) { return ff_emu::ballot(pred) & mask; }
inline int __any_sync(unsigned mask, int pred) { return (ff_emu::ballot(pred) & mask) != 0; }
inline int __all_sync(unsigned mask, int pred) { return (ff_emu::ballot(!pred) & mask) == 0; }

// ---------------------------------------------------------------------------------------------
// Built-ins of the FMM tree kernels (src/gpu/kernels/fmm_tree.cu): IEEE double operations with
// explicit rounding (no FMA contraction on the device; plain operations here, which the host
// compiler does not contract without FMA instructions), bit casts, count of leading zeros, and
// 64-bit atomicMin/atomicMax/atomicOr/atomicAnd.
inline double __dadd_rn(double a, double b) { return a + b; }
inline double __dsub_rn(double a, double b) { return a - b; }
inline double __dmul_rn(double a, double b) { return a * b; }
inline double __ddiv_rn(double a, double b) { return a / b; }
inline long long __double_as_longlong(double v) {
    long long r;
    std::memcpy(&r, &v, sizeof r);
    return r;
}
inline double __longlong_as_double(long long v) {
    double r;
    std::memcpy(&r, &v, sizeof r);
    return r;
}
inline int __popc(unsigned x) { return __builtin_popcount(x); }
inline int __clzll(long long x) { return x == 0 ? 64 : __builtin_clzll((unsigned long long)x); }
inline unsigned long long atomicMin(unsigned long long* p, unsigned long long v) { return ff_emu_atomic_min(p, v); }
inline unsigned long long atomicMax(unsigned long long* p, unsigned long long v) {
    unsigned long long old;
    __atomic_load(p, &old, __ATOMIC_RELAXED);
    while (v > old && !__atomic_compare_exchange(p, &old, &v, true, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)) {
    }
    return old;
}
inline unsigned long long atomicOr(unsigned long long* p, unsigned long long v) {
    return __atomic_fetch_or(p, v, __ATOMIC_SEQ_CST);
}
inline unsigned long long atomicAnd(unsigned long long* p, unsigned long long v) {
    return __atomic_fetch_and(p, v, __ATOMIC_SEQ_CST);
}
