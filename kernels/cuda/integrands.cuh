// integrands.cuh: the functions lab-simpson and lab-dynamic-parallel integrate, one functor each, so
// every integrand is compiled into its own kernel and ptxas reports each separately (sin, for one,
// brings a stack frame for its slow-path argument reduction; the slide's 4/(1+x^2) needs none).
// The Rust side, common::integrand::Integrand, has the same functions for the CPU reference.
#pragma once

#ifdef LAB_COUNT_EVALUATIONS
// Week 7 (issue 61; adaptive_simpson.cu is built with this): how often each grid evaluates the
// integrand, in buckets by the grid's launch number (%gridid, one per grid, device launches
// included). A tree of child grids evaluates it 12 times per worker grid; workers that refine in a
// loop of their own, beside empty child grids, evaluate it all in one. lab-dynamic-parallel's
// --check reads the counts back. One atomic per warp and call.
constexpr unsigned int LAB_EVALUATION_BUCKETS = 1u << 16;
__device__ unsigned int lab_evaluations[LAB_EVALUATION_BUCKETS];

__device__ inline void lab_count_evaluation() {
    unsigned long long grid;
    unsigned int lane;
    asm volatile("mov.u64 %0, %%gridid;" : "=l"(grid));
    asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
    const unsigned int active = __activemask();
    if (lane == (unsigned int)(__ffs(active) - 1)) {
        atomicAdd(&lab_evaluations[(grid * 0x9E3779B97F4A7C15ull) >> 48], (unsigned int)__popc(active));
    }
}
#define LAB_EVALUATION() lab_count_evaluation()
#else
#define LAB_EVALUATION() ((void)0)
#endif

// 4/(1+x^2): its integral over [0, 1] is pi. The slide's integrand.
struct FourOverOnePlusXSquared {
    __device__ double operator()(double x) const { LAB_EVALUATION(); return 4.0 / (1.0 + x * x); }
};

struct Sine {
    __device__ double operator()(double x) const { LAB_EVALUATION(); return sin(x); }
};

struct Exponential {
    __device__ double operator()(double x) const { LAB_EVALUATION(); return exp(x); }
};

// A sharp peak of height 10^4 and width about 0.01 at x = 0.3: hard for a uniform grid.
struct Peak {
    __device__ double operator()(double x) const { LAB_EVALUATION(); return 1.0 / ((x - 0.3) * (x - 0.3) + 1.0e-4); }
};
