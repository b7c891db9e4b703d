// points-from-the-ends.cu: an honest week-1 kernel, written differently from ours (issue 61's corpus):
// each point from the interval's ends, x = a + (b - a) * i / N, and the right end from i + 1, never
// x + h (the width stays h). The check must pass it: the error bound allows every correct way of
// placing the points.
// expect: PASS
#include "integrands.cuh"

template <typename F>
__device__ void simpson_rule(F f, double a, double b, double* sums) {
    const long long n = (long long)gridDim.x * blockDim.x;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const double left = a + (b - a) * (double)i / (double)n;
    const double right = a + (b - a) * (double)(i + 1) / (double)n;
    const double middle = a + (b - a) * (2.0 * (double)i + 1.0) / (2.0 * (double)n);
    sums[i] = (b - a) / (double)n / 6.0 * (f(left) + 4.0 * f(middle) + f(right));
}

// C++ kernels, as the starter declares them.
__global__ void simpson(double a, double b, double* sums) { simpson_rule(FourOverOnePlusXSquared(), a, b, sums); }
__global__ void simpson_sin(double a, double b, double* sums) { simpson_rule(Sine(), a, b, sums); }
__global__ void simpson_exp(double a, double b, double* sums) { simpson_rule(Exponential(), a, b, sums); }
__global__ void simpson_peak(double a, double b, double* sums) { simpson_rule(Peak(), a, b, sums); }
