// weights-in-a-loop.cu: an honest week-1 kernel (issue 61's corpus): the three points and their
// weights 1, 4, 1 in arrays, summed in a loop, the width divided out at the end.
// expect: PASS
#include "integrands.cuh"

template <typename F>
__device__ void simpson_rule(F f, double a, double b, double* sums) {
    const unsigned long long n = (unsigned long long)gridDim.x * blockDim.x;
    const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
    const double h = (b - a) / (double)n;
    const double x = a + (double)i * h;
    const double points[3] = {x, x + h / 2, x + h};
    const double weights[3] = {1, 4, 1};
    double total = 0;
#pragma unroll
    for (int p = 0; p < 3; ++p) total += weights[p] * f(points[p]);
    sums[i] = total * h / 6;
}

// C++ kernels, as the starter declares them.
__global__ void simpson(double a, double b, double* sums) { simpson_rule(FourOverOnePlusXSquared(), a, b, sums); }
__global__ void simpson_sin(double a, double b, double* sums) { simpson_rule(Sine(), a, b, sums); }
__global__ void simpson_exp(double a, double b, double* sums) { simpson_rule(Exponential(), a, b, sums); }
__global__ void simpson_peak(double a, double b, double* sums) { simpson_rule(Peak(), a, b, sums); }
