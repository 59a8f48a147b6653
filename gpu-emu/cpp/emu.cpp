// The emulator's launcher and runtime (test code, docs/design.md §5.3), and the library's kernels
// compiled as C++: see cuda_emu.h for the model.
//
// ff_emu_launch(name, grid, block, smem, args) runs the kernel `name` over the grid one block
// at a time. It starts one OS thread per CUDA thread of a block; each of them runs the kernel
// for block 0, 1, 2, … in turn, with a block-end barrier between blocks. Launches are
// serialised by a global mutex (static __shared__ variables and the exchange buffer are global).
#include "cuda_emu.h"

#include <barrier>
#include <chrono>
#include <condition_variable>
#include <algorithm>
#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ff_emu {
thread_local dim3 tl_threadIdx, tl_blockIdx, tl_blockDim, tl_gridDim;

namespace {
struct Kernel {
    void (*tramp)(void*, void**);
    void* fn;
};
std::map<std::string, Kernel>& registry() {
    static std::map<std::string, Kernel> r;
    return r;
}

// Barrier over the block's live threads; a thread leaving the kernel drops out.
struct BlockBarrier {
    std::mutex m;
    std::condition_variable cv;
    int expected = 0;
    int arrived = 0;
    unsigned long long gen = 0;
    void reset(int n) {
        std::lock_guard<std::mutex> g(m);
        expected = n;
        arrived = 0;
    }
    // Returns the generation of the barrier phase completed.
    unsigned long long wait() {
        std::unique_lock<std::mutex> g(m);
        const unsigned long long my = gen;
        if (++arrived == expected) {
            arrived = 0;
            ++gen;
            cv.notify_all();
            return my;
        }
        cv.wait(g, [&] { return gen != my; });
        return my;
    }
    void drop() {
        std::lock_guard<std::mutex> g(m);
        --expected;
        if (arrived > 0 && arrived == expected) {
            arrived = 0;
            ++gen;
            cv.notify_all();
        }
    }
};

std::mutex g_launch_mutex;
BlockBarrier g_bar;
std::vector<unsigned char> g_smem;   // dynamic shared memory of the running block
std::vector<uint64_t> g_xchg;       // shuffle exchange buffer, one slot per thread
// Warp votes, one barrier each: vote number k of a thread goes to buffer k % 2, which it
// writes only after every lane of its warp has passed the barrier of vote k − 1 (and so has
// read vote k − 2 from that buffer). g_votes[t] counts the votes thread t has cast; a lane
// whose count is below a reader's vote number has left the kernel and counts as 0.
std::vector<unsigned char> g_vote[2];
std::unique_ptr<std::atomic<unsigned long long>[]> g_votes;
std::vector<std::unique_ptr<BlockBarrier>> g_warp_bar;  // one barrier per warp of the block

// Sets every warp barrier to its warp's number of threads.
void reset_warp_barriers(unsigned nthreads) {
    for (unsigned w = 0; w < g_warp_bar.size(); ++w) g_warp_bar[w]->reset((int)std::min(32u, nthreads - 32 * w));
}
bool g_stagger = false;
}  // namespace

static int linear_tid();

// Under stagger, after a barrier a pseudo-random subset of threads sleeps a little, so threads
// that skip a needed barrier get ahead of the ones they should wait for.
static void stagger_pause(unsigned long long salt) {
    if (!g_stagger) return;
    const unsigned long long h = (salt * 0x9E3779B97F4A7C15ull + (unsigned long long)linear_tid() * 40503ull) >> 33;
    if (h % 7 < 3) std::this_thread::sleep_for(std::chrono::microseconds(30 * (h % 7 + 1)));
}

void syncthreads() {
    stagger_pause(g_bar.wait());
}
void* dyn_smem() { return g_smem.data(); }

static int linear_tid() {
    return (int)(tl_threadIdx.x + tl_blockDim.x * (tl_threadIdx.y + tl_blockDim.y * tl_threadIdx.z));
}

void exchange(const void* v, int size, int kind, int arg, int width, void* out) {
    const int tid = linear_tid();
    const int nthreads = (int)(tl_blockDim.x * tl_blockDim.y * tl_blockDim.z);
    uint64_t slot = 0;
    std::memcpy(&slot, v, size);
    g_xchg[tid] = slot;
    syncthreads();
    const int lane = tid % 32;
    const int seg = lane - lane % width;
    int src_lane = lane;
    if (kind == FF_EMU_SHFL_DOWN) {
        if (lane % width + arg < width) src_lane = lane + arg;
    } else if (kind == FF_EMU_SHFL_XOR) {
        const int s = lane ^ arg;
        if (s - s % width == seg) src_lane = s;
    } else {
        src_lane = seg + ((arg % width) + width) % width;
    }
    const int src = tid - lane + src_lane;
    uint64_t got = src < nthreads ? g_xchg[src] : slot;
    syncthreads();
    std::memcpy(out, &got, size);
}

unsigned ballot(int pred) {
    const int tid = linear_tid();
    const int nthreads = (int)(tl_blockDim.x * tl_blockDim.y * tl_blockDim.z);
    const int base = tid - tid % 32;
    BlockBarrier& bar = *g_warp_bar[tid / 32];
    const unsigned long long k = g_votes[tid].load(std::memory_order_relaxed) + 1;
    std::vector<unsigned char>& v = g_vote[k % 2];
    v[tid] = pred != 0;
    g_votes[tid].store(k, std::memory_order_relaxed);
    bar.wait();
    unsigned m = 0;
    for (int l = 0; l < 32 && base + l < nthreads; ++l)
        if (g_votes[base + l].load(std::memory_order_relaxed) >= k) m |= (unsigned)v[base + l] << l;
    return m;
}

void register_kernel(const char* name, void (*tramp)(void*, void**), void* fn) {
    registry()[name] = Kernel{tramp, fn};
}
}  // namespace ff_emu

using namespace ff_emu;

extern "C" {

// Delays a pseudo-random subset of threads at the start of every block (race detection).
void ff_emu_set_stagger(int on) {
    std::lock_guard<std::mutex> g(g_launch_mutex);
    g_stagger = on != 0;
}

// Whether a kernel of this name exists.
int ff_emu_has_kernel(const char* name) { return registry().count(name) ? 1 : 0; }

// Number of kernels compiled into the emulator.
int ff_emu_kernel_count() { return (int)registry().size(); }

// Runs kernel `name` (returns 0; 1: unknown kernel; 2: bad launch configuration).
int ff_emu_launch(const char* name, const unsigned grid[3], const unsigned block[3], unsigned smem, void** args) {
    auto it = registry().find(name);
    if (it == registry().end()) return 1;
    const unsigned nthreads = block[0] * block[1] * block[2];
    if (nthreads == 0 || nthreads > 1024 || grid[0] == 0 || grid[1] == 0 || grid[2] == 0) return 2;
    if ((unsigned long long)grid[0] * grid[1] * grid[2] == 0) return 0;
    std::lock_guard<std::mutex> lk(g_launch_mutex);
    const Kernel k = it->second;
    const unsigned long long nblocks = (unsigned long long)grid[0] * grid[1] * grid[2];
    g_smem.assign(smem + 16, 0xFF);
    g_xchg.assign(nthreads, 0);
    g_bar.reset((int)nthreads);
    for (auto& v : g_vote) v.assign(nthreads, 0);
    g_votes = std::make_unique<std::atomic<unsigned long long>[]>(nthreads);
    for (unsigned t = 0; t < nthreads; ++t) g_votes[t].store(0);
    g_warp_bar.clear();
    for (unsigned w = 0; w < (nthreads + 31) / 32; ++w) g_warp_bar.push_back(std::make_unique<BlockBarrier>());
    reset_warp_barriers(nthreads);
    const bool stagger = g_stagger;
    std::barrier endbar((std::ptrdiff_t)nthreads, [&]() noexcept {
        g_bar.reset((int)nthreads);
        reset_warp_barriers(nthreads);
        for (unsigned t = 0; t < nthreads; ++t) g_votes[t].store(0);
        std::memset(g_smem.data(), 0xFF, g_smem.size());
    });
    auto body = [&](unsigned tid) {
        tl_blockDim = dim3{block[0], block[1], block[2]};
        tl_gridDim = dim3{grid[0], grid[1], grid[2]};
        tl_threadIdx = dim3{tid % block[0], (tid / block[0]) % block[1], tid / (block[0] * block[1])};
        for (unsigned long long b = 0; b < nblocks; ++b) {
            tl_blockIdx = dim3{(unsigned)(b % grid[0]), (unsigned)((b / grid[0]) % grid[1]),
                               (unsigned)(b / ((unsigned long long)grid[0] * grid[1]))};
            if (stagger) {
                const unsigned long long h = (b * 2654435761ull + tid * 40503ull) % 7ull;
                if (h < 3) std::this_thread::sleep_for(std::chrono::microseconds(50 * (h + 1)));
            }
            k.tramp(k.fn, args);
            g_warp_bar[tid / 32]->drop();
            g_bar.drop();
            endbar.arrive_and_wait();
        }
    };
    std::vector<std::thread> th;
    th.reserve(nthreads);
    for (unsigned t = 1; t < nthreads; ++t) th.emplace_back(body, t);
    body(0);
    for (auto& t : th) t.join();
    return 0;
}
}

// The library's kernels, unchanged.
#include "../../src/gpu/kernels/spread.cu"
#include "../../src/gpu/kernels/nufft.cu"
#include "../../src/gpu/kernels/fmm_tree.cu"
#include "../../src/gpu/kernels/fmm_ops.cu"
#include "../../src/gpu/kernels/fmm_m2l.cu"
#include "../../src/gpu/kernels/ewald_real.cu"
#include "../../src/gpu/kernels/ewald_kspace.cu"
// Harness self-test kernels.
#include "selftest.cu"
