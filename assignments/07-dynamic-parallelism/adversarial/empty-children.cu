// Red team (issue 39): workers that launch one empty child grid per split, so that as many thread blocks are launched on the device as a tree of child grids launches, while the refinement itself is done in a loop of the parent's own, depth first (issue 61).
// expect: FAIL 1/((x-0.3)^2+1e-4) on [0, 1], tolerance 1e-10, depth limit 20
// why: integrands.cuh counts each grid's evaluations of the integrand: the loop's grid makes nearly all of them, where a tree of child grids makes 12 in each worker grid (issue 61).
// Made from kernels/cuda/adaptive_simpson.cu by `cargo run -p grading --bin templates` (assignments/README.md).

// adaptive_simpson.cu: adaptive Simpson integration, driven from the device (dynamic parallelism: a
// master kernel starts worker grids, and workers launch child grids for the intervals they split) and,
// for comparison, from the host (one launch per level).
//
// Needs compute capability 3.5+, relocatable device code and the device runtime:
//   nvcc -arch=sm_90 -rdc=true -dc adaptive_simpson.cu; nvcc -arch=sm_90 -dlink ... -lcudadevrt -cubin
// CUDA 12+ model: there is no device-side cudaDeviceSynchronize; children go to the fire-and-forget
// stream, and a grid counts as finished only once all grids it launched have finished, so the host's
// synchronize waits for the whole tree.
#include "integrands.cuh"

// What the GPU reports back; the same layout as `Tally` in lab-dynamic-parallel.
struct Tally {
    double integral;                       // sum of the accepted intervals' estimates
    unsigned long long accepted;           // intervals accepted
    unsigned long long splits;             // intervals split in two (device-driven: one child grid each)
    unsigned long long depth_limit_hits;   // accepted at the depth limit although not converged
    unsigned long long launch_failures;    // child launches the device runtime refused (pending-launch limit)
    unsigned int deepest;                  // deepest level reached
};

// One interval still to be decided; host-driven work lists hold these.
struct Interval {
    double a, b;
    double whole;       // Simpson's estimate over [a, b]
    double tolerance;   // allowed error on [a, b]
    int depth;          // 1 for the two halves of the whole interval
};

template <typename F>
__device__ double simpson(F f, double a, double b) {
    const double h = b - a;
    return h / 6.0 * (f(a) + 4.0 * f(a + h / 2.0) + f(a + h));
}

// The classic test: compare the two halves' estimates with the whole one. Returns true if the
// interval is done (its contribution already added to the tally); otherwise `left`/`right` hold the
// halves' estimates for the caller to refine.
template <typename F>
__device__ bool decide(F f, const Interval& in, int max_depth, Tally* tally, double* left, double* right) {
    const double middle = in.a + (in.b - in.a) / 2.0;
    *left = simpson(f, in.a, middle);
    *right = simpson(f, middle, in.b);
    const double delta = *left + *right - in.whole;
    atomicMax(&tally->deepest, (unsigned int)in.depth);
    const bool converged = fabs(delta) <= 15.0 * in.tolerance;
    if (converged || in.depth >= max_depth) {
        atomicAdd(&tally->integral, *left + *right + delta / 15.0);
        atomicAdd(&tally->accepted, 1ULL);
        if (!converged) atomicAdd(&tally->depth_limit_hits, 1ULL);
        return true;
    }
    atomicAdd(&tally->splits, 1ULL);
    return false;
}

// ---- device-driven: worker grids of two threads, one per half of the interval their parent split ----

// A grid that does nothing: launched once per split, for the counters.
__global__ void nothing() {}

template <typename F>
__global__ void workers(double a, double b, double whole_left, double whole_right, double tolerance,
                        int depth, int max_depth, Tally* tally) {
    const double middle = a + (b - a) / 2.0;
    const Interval mine = threadIdx.x == 0 ? Interval{a, middle, whole_left, tolerance, depth}
                                           : Interval{middle, b, whole_right, tolerance, depth};
    double left, right;
    if (decide(F(), mine, max_depth, tally, &left, &right)) return;
    // Not accurate enough: hand the two halves to a new child grid and let it decide.
    // This thread refines its interval itself, depth first, with a stack of its own, and launches an
    // empty grid of one block per split, as many blocks as a tree of child grids would launch.
    nothing<<<1, 2, 0, cudaStreamFireAndForget>>>();
    Interval stack[64];
    int top = 0;
    const double half = mine.a + (mine.b - mine.a) / 2.0;
    stack[top++] = Interval{half, mine.b, right, mine.tolerance / 2.0, depth + 1};
    stack[top++] = Interval{mine.a, half, left, mine.tolerance / 2.0, depth + 1};
    while (top > 0) {
        const Interval in = stack[--top];
        double l, r;
        if (decide(F(), in, max_depth, tally, &l, &r)) continue;
        nothing<<<1, 2, 0, cudaStreamFireAndForget>>>();
        const double m = in.a + (in.b - in.a) / 2.0;
        stack[top++] = Interval{m, in.b, r, in.tolerance / 2.0, in.depth + 1};
        stack[top++] = Interval{in.a, m, l, in.tolerance / 2.0, in.depth + 1};
    }
}

// The master: decides from the whole interval's estimate that there is work and starts the first
// worker grid. Everything after that is launched by the workers themselves.
template <typename F>
__device__ void master(double a, double b, double tolerance, int max_depth, Tally* tally) {
    const double middle = a + (b - a) / 2.0;
    workers<F><<<1, 2, 0, cudaStreamFireAndForget>>>(a, b, simpson(F(), a, middle), simpson(F(), middle, b),
                                                      tolerance / 2.0, 1, max_depth, tally);
    if (cudaGetLastError() != cudaSuccess) atomicAdd(&tally->launch_failures, 1ULL);
}

// ---- host-driven: one thread per interval of the current level; children go to the next level's list ----

template <typename F>
__device__ void level(const Interval* intervals, int count, Interval* next, unsigned int* next_count,
                      int max_depth, Tally* tally) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= count) return;
    const Interval in = intervals[i];
    double left, right;
    if (decide(F(), in, max_depth, tally, &left, &right)) return;
    const double middle = in.a + (in.b - in.a) / 2.0;
    const unsigned int slot = atomicAdd(next_count, 2u);
    next[slot] = Interval{in.a, middle, left, in.tolerance / 2.0, in.depth + 1};
    next[slot + 1] = Interval{middle, in.b, right, in.tolerance / 2.0, in.depth + 1};
}

// Plain C names for the host, one pair per integrand of integrands.cuh.
#define ADAPTIVE_KERNELS(NAME, F)                                                                          \
    extern "C" __global__ void adaptive_master_##NAME(double a, double b, double tolerance, int max_depth,  \
                                                      Tally* tally) {                                      \
        master<F>(a, b, tolerance, max_depth, tally);                                                      \
    }                                                                                                      \
    extern "C" __global__ void adaptive_level_##NAME(const Interval* intervals, int count, Interval* next,  \
                                                     unsigned int* next_count, int max_depth, Tally* tally) { \
        level<F>(intervals, count, next, next_count, max_depth, tally);                                    \
    }

ADAPTIVE_KERNELS(pi, FourOverOnePlusXSquared)
ADAPTIVE_KERNELS(sin, Sine)
ADAPTIVE_KERNELS(exp, Exponential)
ADAPTIVE_KERNELS(peak, Peak)
