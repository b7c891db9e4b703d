// simpson.cu: the starter of this week's assignment (the week's README.md says what to write).
// Write the parts marked TODO; the README says how the lab compiles this file and checks it with --check.

// simpson.cu: Simpson's rule on the GPU, one sub-interval per thread (the course's first slide program).
#include "integrands.cuh"

// The grid has N = gridDim.x * blockDim.x threads and [a, b] is cut into N sub-intervals of width h;
// thread i writes the Simpson sum of sub-interval i into sums[i]. The host adds the N sums.
template <typename F>
__device__ void simpson_rule(F f, double a, double b, double* sums) {
    // TODO: the grid has N = gridDim.x * blockDim.x threads and [a, b] has N sub-intervals of width
    // TODO: h = (b - a) / N. Thread i (its index in the whole grid) takes sub-interval i, from x = a + i * h,
    // TODO: and writes sums[i] = h / 6 * (f(x) + 4 f(x + h / 2) + f(x + h)). Count N and i in 64 bits.
}

// C++ kernels, not extern "C": ptxas reports the slide's mangled name _Z7simpsonddPd, and the host
// looks each kernel up by its mangled name, as the slide's make output shows it.
__global__ void simpson(double a, double b, double* sums) { simpson_rule(FourOverOnePlusXSquared(), a, b, sums); }
__global__ void simpson_sin(double a, double b, double* sums) { simpson_rule(Sine(), a, b, sums); }
__global__ void simpson_exp(double a, double b, double* sums) { simpson_rule(Exponential(), a, b, sums); }
__global__ void simpson_peak(double a, double b, double* sums) { simpson_rule(Peak(), a, b, sums); }
