// A deliberately broken submission (assignments/README.md): every block writes the first blockDim.x sums; the rest are never written.
// Made from kernels/cuda/simpson.cu by `cargo run -p grading --bin templates`; --check must catch it (the GPU tests run it).

// simpson.cu: Simpson's rule on the GPU, one sub-interval per thread (the course's first slide program).
#include "integrands.cuh"

// The grid has N = gridDim.x * blockDim.x threads and [a, b] is cut into N sub-intervals of width h;
// thread i writes the Simpson sum of sub-interval i into sums[i]. The host adds the N sums.
template <typename F>
__device__ void simpson_rule(F f, double a, double b, double* sums) {
    // 64-bit on purpose: gridDim.x * blockDim.x can pass 2^31 on today's GPUs.
    const long long N = (long long)gridDim.x * blockDim.x;
    const long long i = threadIdx.x;  // BUG: forgets the block's offset
    const double h = (b - a) / N;
    const double x = a + i * h;
    sums[i] = h / 6.0 * (f(x) + 4.0 * f(x + h / 2.0) + f(x + h));
}

// C++ kernels, not extern "C": ptxas reports the slide's mangled name _Z7simpsonddPd, and the host
// looks each kernel up by its mangled name, as the slide's make output shows it.
__global__ void simpson(double a, double b, double* sums) { simpson_rule(FourOverOnePlusXSquared(), a, b, sums); }
__global__ void simpson_sin(double a, double b, double* sums) { simpson_rule(Sine(), a, b, sums); }
__global__ void simpson_exp(double a, double b, double* sums) { simpson_rule(Exponential(), a, b, sums); }
__global__ void simpson_peak(double a, double b, double* sums) { simpson_rule(Peak(), a, b, sums); }
