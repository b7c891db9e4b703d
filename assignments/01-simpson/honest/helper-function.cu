// helper-function.cu: an honest week-1 kernel (issue 61's corpus): the rule for one sub-interval in a
// function of its own, called with the sub-interval's left end and width; the index in size_t.
// expect: PASS
#include "integrands.cuh"

// Simpson's rule on [x, x + h].
template <typename F>
__device__ double simpson_on(F f, double x, double h) {
    const double ends = f(x) + f(x + h);
    const double middle = f(x + 0.5 * h);
    return h * (ends + 4.0 * middle) / 6.0;
}

template <typename F>
__device__ void simpson_rule(F f, double a, double b, double* sums) {
    const size_t threads = (size_t)gridDim.x * (size_t)blockDim.x;
    const size_t me = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const double h = (b - a) / (double)threads;
    sums[me] = simpson_on(f, a + (double)me * h, h);
}

// C++ kernels, as the starter declares them.
__global__ void simpson(double a, double b, double* sums) { simpson_rule(FourOverOnePlusXSquared(), a, b, sums); }
__global__ void simpson_sin(double a, double b, double* sums) { simpson_rule(Sine(), a, b, sums); }
__global__ void simpson_exp(double a, double b, double* sums) { simpson_rule(Exponential(), a, b, sums); }
__global__ void simpson_peak(double a, double b, double* sums) { simpson_rule(Peak(), a, b, sums); }
