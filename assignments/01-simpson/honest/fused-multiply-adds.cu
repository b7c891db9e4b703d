// fused-multiply-adds.cu: an honest week-1 kernel (issue 61's corpus): every point and the weighted
// sum written as explicit fma() calls, which round once where ours rounds twice.
// expect: PASS
#include "integrands.cuh"

template <typename F>
__device__ void simpson_rule(F f, double a, double b, double* sums) {
    const long long n = (long long)gridDim.x * blockDim.x;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const double h = (b - a) / n;
    const double x = fma((double)i, h, a);
    const double weighted = fma(4.0, f(fma(0.5, h, x)), f(x) + f(x + h));
    sums[i] = weighted * (h / 6.0);
}

// C++ kernels, as the starter declares them.
__global__ void simpson(double a, double b, double* sums) { simpson_rule(FourOverOnePlusXSquared(), a, b, sums); }
__global__ void simpson_sin(double a, double b, double* sums) { simpson_rule(Sine(), a, b, sums); }
__global__ void simpson_exp(double a, double b, double* sums) { simpson_rule(Exponential(), a, b, sums); }
__global__ void simpson_peak(double a, double b, double* sums) { simpson_rule(Peak(), a, b, sums); }
