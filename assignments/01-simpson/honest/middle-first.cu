// middle-first.cu: an honest week-1 kernel (issue 61's corpus): the middle point first, the ends from
// it (x - h/2, x + h/2), the sum in another order, the index from a block offset.
// expect: PASS
#include "integrands.cuh"

template <typename F>
__device__ void simpson_rule(F f, double a, double b, double* sums) {
    const long long first_of_block = (long long)blockIdx.x * blockDim.x;
    const long long i = first_of_block + threadIdx.x;
    const long long n = (long long)blockDim.x * gridDim.x;
    const double h = (b - a) / n;
    const double half = h / 2;
    const double middle = a + i * h + half;
    sums[i] = h / 6 * (4 * f(middle) + f(middle + half) + f(middle - half));
}

// C++ kernels, as the starter declares them.
__global__ void simpson(double a, double b, double* sums) { simpson_rule(FourOverOnePlusXSquared(), a, b, sums); }
__global__ void simpson_sin(double a, double b, double* sums) { simpson_rule(Sine(), a, b, sums); }
__global__ void simpson_exp(double a, double b, double* sums) { simpson_rule(Exponential(), a, b, sums); }
__global__ void simpson_peak(double a, double b, double* sums) { simpson_rule(Peak(), a, b, sums); }
