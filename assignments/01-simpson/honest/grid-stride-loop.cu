// grid-stride-loop.cu: an honest week-1 kernel (issue 61's corpus): a grid-stride loop, as many
// CUDA programs write one, which here runs once per thread (the grid has one thread per
// sub-interval), with a `while` and the width computed once per thread.
// expect: PASS
#include "integrands.cuh"

template <typename F>
__device__ void simpson_rule(F f, double a, double b, double* sums) {
    const long long stride = (long long)gridDim.x * blockDim.x;
    const double h = (b - a) / stride;
    long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    while (i < stride) {
        const double left = a + i * h;
        const double right = left + h;
        sums[i] = (f(left) + 4.0 * f((left + right) / 2.0) + f(right)) * h / 6.0;
        i += stride;
    }
}

// C++ kernels, as the starter declares them.
__global__ void simpson(double a, double b, double* sums) { simpson_rule(FourOverOnePlusXSquared(), a, b, sums); }
__global__ void simpson_sin(double a, double b, double* sums) { simpson_rule(Sine(), a, b, sums); }
__global__ void simpson_exp(double a, double b, double* sums) { simpson_rule(Exponential(), a, b, sums); }
__global__ void simpson_peak(double a, double b, double* sums) { simpson_rule(Peak(), a, b, sums); }
