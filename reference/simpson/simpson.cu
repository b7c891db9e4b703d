// simpson.cu: Simpson's rule for the integral of 4/(1+x^2) over [0, 1] (= pi), one sub-interval per
// thread; the course's first program (German slides: its ptxas report names _Z7simpsonddPd).
//
//   simpson [N [BLOCK_SIZE [REPETITIONS]]]     N sub-intervals (default 2^20), N % BLOCK_SIZE == 0
//
// Beside: lab-simpson (scripts/compare.sh runs both with the same numbers).
#include "../check.h"

__device__ __host__ double f(double x) { return 4.0 / (1.0 + x * x); }

// Thread i of the N = gridDim.x * blockDim.x threads writes the Simpson sum of sub-interval i.
__global__ void simpson(double a, double b, double* sums) {
    const long long N = (long long)gridDim.x * blockDim.x;
    const long long i = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const double h = (b - a) / N;
    const double x = a + i * h;
    sums[i] = h / 6.0 * (f(x) + 4.0 * f(x + h / 2.0) + f(x + h));
}

int main(int argc, char** argv) {
    const long long N = argument(argc, argv, 1, 1 << 20);
    const int BLOCK_SIZE = (int)argument(argc, argv, 2, 256);
    const int repetitions = (int)argument(argc, argv, 3, 10);
    if (N % BLOCK_SIZE) {
        std::fprintf(stderr, "%s: N = %lld is not a multiple of BLOCK_SIZE = %d\n", argv[0], N, BLOCK_SIZE);
        return 1;
    }
    const double a = 0, b = 1;
    double* cuda_sums;
    CHECK_CUDA(cudaMalloc, (void**)&cuda_sums, N * sizeof(double));
    CHECK_CUDA(cudaMemset, cuda_sums, 0xFF, N * sizeof(double));  // NaN: a sum never written shows

    std::printf("Integral of 4/(1+x^2) over [0, 1] with %lld sub-intervals (%lld blocks of %d threads):\n", N,
                N / BLOCK_SIZE, BLOCK_SIZE);
    const Timing timing = time_gpu(repetitions, [&] {
        simpson<<<N / BLOCK_SIZE, BLOCK_SIZE>>>(a, b, cuda_sums);
        CHECK_LAUNCH();
    });
    print_time("", timing);

    std::vector<double> sums(N);
    CHECK_CUDA(cudaMemcpy, sums.data(), cuda_sums, N * sizeof(double), cudaMemcpyDeviceToHost);
    CHECK_CUDA(cudaFree, cuda_sums);
    // The CPU computes every sub-interval's sum the same way and compares.
    double sum = 0, worst = 0;
    const double h = (b - a) / N;
    for (long long i = 0; i < N; ++i) {
        const double x = a + i * h;
        const double expected = h / 6.0 * (f(x) + 4.0 * f(x + h / 2.0) + f(x + h));
        const double difference = std::fabs(sums[i] - expected) / std::fabs(expected);
        worst = difference > worst || difference != difference ? difference : worst;
        sum += sums[i];
    }
    std::printf("integral = %.15f, pi - integral = %.3e, worst relative difference to the CPU %.3e\n", sum,
                M_PI - sum, worst);
    return print_result(worst <= 1e-12);
}
