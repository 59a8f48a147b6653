// The emulator's launcher and runtime (test code, docs/design.md §5.3), and the library's kernels
// compiled as C++: see cuda_emu.h for the model.
//
// ff_emu_launch(name, grid, block, smem, args) runs the kernel `name` over the grid one block
// at a time, on the calling OS thread. Each CUDA thread of a block is a fiber (a stack of its
// own); a small scheduler resumes the block's runnable fibers in turn, each running until it
// reaches a barrier (__syncthreads, a shuffle's exchange, a warp vote) or leaves the kernel, and
// releases a barrier when every live thread it waits for has arrived. No barrier costs an OS
// context switch, a futex or a thread start, and on x86-64 no system call either: fibers are
// switched by ff_emu_switch below (swapcontext, used elsewhere, makes a signal-mask system call
// per switch). The state of a launch (fibers, shared memory, exchange buffer, and the kernels'
// static __shared__ variables) is thread_local, so launches from different OS threads (the
// test harness's threads) run at the same time, as kernels on different streams may.
#include "cuda_emu.h"

#include <sys/mman.h>
#if !defined(__x86_64__)
#include <ucontext.h>
#endif
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>
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

// Where a fiber stands: runnable, waiting at the block's barrier or at its warp's, or gone.
enum class State : unsigned char { Run, Block, Warp, Exited };

struct Fiber {
#if defined(__x86_64__)
    void* sp = nullptr;       // its saved stack pointer (ff_emu_switch's frame on top)
#else
    ucontext_t ctx;
#endif
    State state = State::Exited;
    unsigned char pred = 0;   // its vote while it waits at the warp barrier
    unsigned vote = 0;        // the ballot of its warp, set when the warp barrier opens
};

// Fiber stacks: 1 MiB each (the kernels' local arrays are a few KiB; the OS threads this
// replaces had 8 MiB), reserved once per CUDA thread index and OS thread and reused by every
// launch from it, released when the OS thread ends; pages are committed as touched. A guard
// page below each stack turns an overflow into a fault.
constexpr size_t kStack = size_t(1) << 20;
struct Stacks {
    std::vector<char*> base;  // the usable stacks (the guard page is below each)
    ~Stacks() {
        const size_t page = (size_t)sysconf(_SC_PAGESIZE);
        for (char* p : base) munmap(p - page, kStack + page);
    }
};
thread_local Stacks g_stacks;
char* stack_for(unsigned t) {
    while (g_stacks.base.size() <= t) {
        const size_t page = (size_t)sysconf(_SC_PAGESIZE);
        void* p = mmap(nullptr, kStack + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
        if (p == MAP_FAILED) {
            std::fprintf(stderr, "cuda emulator: cannot reserve a fiber stack\n");
            std::abort();
        }
        mprotect(p, page, PROT_NONE);
        g_stacks.base.push_back(static_cast<char*>(p) + page);
    }
    return g_stacks.base[t];
}

// The running launch, one per OS thread.
thread_local std::vector<unsigned char> g_smem;  // dynamic shared memory of the running block
thread_local std::vector<uint64_t> g_xchg;      // shuffle exchange buffer, one slot per thread
thread_local std::vector<Fiber> g_fib;          // the running block's threads
thread_local unsigned g_cur = 0;                // the running fiber
thread_local Kernel g_kernel;
thread_local void** g_args = nullptr;
std::atomic<bool> g_stagger{false};

[[noreturn]] void fiber_main();

#if defined(__x86_64__)
}  // namespace
}  // namespace ff_emu
// ff_emu_switch(save, load): saves the callee-saved registers, MXCSR and the x87 control word on
// the running stack and its stack pointer in *save, then resumes the stack `load` (saved the same
// way, or laid out by start_fiber), all in user space (System V AMD64 ABI: everything else is
// caller-saved around this call).
extern "C" void ff_emu_switch(void** save, void* load);
asm(R"(
    .text
    .p2align 4
    .globl ff_emu_switch
    .hidden ff_emu_switch
    .type ff_emu_switch, @function
ff_emu_switch:
    pushq %rbp
    pushq %rbx
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $8, %rsp
    stmxcsr (%rsp)
    fnstcw 4(%rsp)
    movq %rsp, (%rdi)
    movq %rsi, %rsp
    ldmxcsr (%rsp)
    fldcw 4(%rsp)
    addq $8, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %rbx
    popq %rbp
    ret
    .size ff_emu_switch, .-ff_emu_switch
)");
namespace ff_emu {
namespace {
thread_local void* g_sched = nullptr;  // the scheduler's stack pointer (on the launching thread)

// Leaves the running fiber in state `s` and returns to the scheduler.
void yield_as(State s) {
    Fiber& f = g_fib[g_cur];
    f.state = s;
    ff_emu_switch(&f.sp, g_sched);
}

// Resumes fiber t until it yields.
void resume(unsigned t) { ff_emu_switch(&g_sched, g_fib[t].sp); }

// Sets fiber t to start the kernel on its own stack: a frame as ff_emu_switch leaves one
// (MXCSR and control word of this thread, zero registers) whose return address is fiber_main,
// placed so that fiber_main starts with the stack alignment of a called function.
__attribute__((noinline)) void start_fiber(unsigned t) {
    Fiber& f = g_fib[t];
    uintptr_t top = reinterpret_cast<uintptr_t>(stack_for(t)) + kStack;
    top &= ~uintptr_t(15);
    uint64_t* sp = reinterpret_cast<uint64_t*>(top - 72);
    uint32_t mxcsr;
    uint16_t cw;
    asm volatile("stmxcsr %0" : "=m"(mxcsr));
    asm volatile("fnstcw %0" : "=m"(cw));
    sp[0] = (uint64_t)mxcsr | ((uint64_t)cw << 32);
    for (int i = 1; i <= 6; ++i) sp[i] = 0;                      // r15 … rbp
    sp[7] = reinterpret_cast<uint64_t>(&fiber_main);             // ff_emu_switch's ret
    sp[8] = 0;                                                   // fiber_main's return slot
    f.sp = sp;
    f.state = State::Run;
    f.vote = 0;
}
#else
thread_local ucontext_t g_sched;  // the scheduler's context (on the launching thread)

void yield_as(State s) {
    Fiber& f = g_fib[g_cur];
    f.state = s;
    swapcontext(&f.ctx, &g_sched);
}

void resume(unsigned t) { swapcontext(&g_sched, &g_fib[t].ctx); }

__attribute__((noinline)) void start_fiber(unsigned t) {
    Fiber& f = g_fib[t];
    getcontext(&f.ctx);
    f.ctx.uc_stack.ss_sp = stack_for(t);
    f.ctx.uc_stack.ss_size = kStack;
    f.ctx.uc_link = nullptr;
    makecontext(&f.ctx, fiber_main, 0);
    f.state = State::Run;
    f.vote = 0;
}
#endif

void fiber_main() {
    g_kernel.tramp(g_kernel.fn, g_args);
    yield_as(State::Exited);  // never resumed
    std::abort();
}

// A pseudo-random order of 0..n-1 (stagger mode), from a salt.
void shuffle_order(std::vector<unsigned>& order, unsigned long long salt) {
    unsigned long long h = salt * 0x9E3779B97F4A7C15ull + 0x632BE59BD9B4E019ull;
    for (size_t i = order.size(); i > 1; --i) {
        h ^= h >> 31;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
        std::swap(order[i - 1], order[(size_t)(h % i)]);
    }
}

// Runs one block to completion: resumes the runnable fibers (in thread order, or in a
// pseudo-random order per phase under stagger) until none is runnable, then opens the warp
// barriers whose live lanes have all voted, else the block barrier if every live thread waits
// there. A barrier that can never open (a thread waits at one the others skip) is a kernel bug:
// reported and aborted, where a GPU would hang.
void run_block(const char* name, unsigned nthreads, unsigned long long block) {
    const dim3 bd = tl_blockDim;
    for (unsigned t = 0; t < nthreads; ++t) start_fiber(t);
    std::vector<unsigned> order(nthreads);
    for (unsigned t = 0; t < nthreads; ++t) order[t] = t;
    const unsigned nwarps = (nthreads + 31) / 32;
    for (unsigned long long phase = 0;; ++phase) {
        if (g_stagger.load(std::memory_order_relaxed)) shuffle_order(order, block * 1000003ull + phase);
        for (unsigned t : order) {
            if (g_fib[t].state != State::Run) continue;
            g_cur = t;
            tl_threadIdx = dim3{t % bd.x, (t / bd.x) % bd.y, t / (bd.x * bd.y)};
            resume(t);
        }
        bool opened = false, live = false, all_at_block = true;
        for (unsigned w = 0; w < nwarps; ++w) {
            const unsigned a = 32 * w, b = std::min(nthreads, a + 32);
            bool any = false, all = true;
            unsigned m = 0;
            for (unsigned t = a; t < b; ++t) {
                const State s = g_fib[t].state;
                if (s == State::Exited) continue;
                live = true;
                if (s != State::Block) all_at_block = false;
                if (s == State::Warp) {
                    any = true;
                    m |= (unsigned)g_fib[t].pred << (t - a);
                } else {
                    all = false;
                }
            }
            if (any && all) {
                for (unsigned t = a; t < b; ++t) {
                    if (g_fib[t].state == State::Warp) {
                        g_fib[t].vote = m;
                        g_fib[t].state = State::Run;
                    }
                }
                opened = true;
            }
        }
        if (!live) return;
        if (opened) continue;
        if (!all_at_block) {
            std::fprintf(stderr, "cuda emulator: kernel %s, block %llu: threads wait at barriers that cannot open "
                                 "(a barrier or warp vote reached by only part of the threads)\n", name, block);
            std::abort();
        }
        for (unsigned t = 0; t < nthreads; ++t)
            if (g_fib[t].state == State::Block) g_fib[t].state = State::Run;
    }
}
}  // namespace

void syncthreads() { yield_as(State::Block); }
void* dyn_smem() { return g_smem.data(); }

void exchange(const void* v, int size, int kind, int arg, int width, void* out) {
    const int tid = (int)g_cur;  // the running fiber is the thread of linear index g_cur
    const int nthreads = (int)g_fib.size();
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
    g_fib[g_cur].pred = pred != 0;
    yield_as(State::Warp);
    return g_fib[g_cur].vote;
}

void register_kernel(const char* name, void (*tramp)(void*, void**), void* fn) {
    registry()[name] = Kernel{tramp, fn};
}
}  // namespace ff_emu

using namespace ff_emu;

extern "C" {

// Resumes the threads of every block in a pseudo-random order (race detection).
void ff_emu_set_stagger(int on) { g_stagger.store(on != 0); }

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
    const unsigned long long nblocks = (unsigned long long)grid[0] * grid[1] * grid[2];
    g_kernel = it->second;
    g_args = args;
    g_smem.assign(smem + 16, 0xFF);
    g_xchg.assign(nthreads, 0);
    g_fib.assign(nthreads, Fiber{});
    const dim3 saved[4] = {tl_threadIdx, tl_blockIdx, tl_blockDim, tl_gridDim};
    tl_blockDim = dim3{block[0], block[1], block[2]};
    tl_gridDim = dim3{grid[0], grid[1], grid[2]};
    for (unsigned long long b = 0; b < nblocks; ++b) {
        tl_blockIdx = dim3{(unsigned)(b % grid[0]), (unsigned)((b / grid[0]) % grid[1]),
                           (unsigned)(b / ((unsigned long long)grid[0] * grid[1]))};
        // shared memory poisoned before every block (NaN for floats)
        if (b > 0) std::memset(g_smem.data(), 0xFF, g_smem.size());
        run_block(name, nthreads, b);
    }
    tl_threadIdx = saved[0], tl_blockIdx = saved[1], tl_blockDim = saved[2], tl_gridDim = saved[3];
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
