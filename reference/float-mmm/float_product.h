// float_product.h: what the two float programs here share, around their kernels: square N x N
// random operands on both sides, and run_product, which times one kernel as the labs time (a warm-up,
// then the median of `repetitions` between CUDA events), copies C back and checks it (Freivalds).
#pragma once
#include "../check.h"
#include "../product_check.h"

// A, B and C on the host (A and B random in [-1, 1)) and on the GPU (A and B copied there).
struct Operands {
    int N;
    float *A, *B, *C;
    float *d_A, *d_B, *d_C;
};

inline Operands make_operands(int N) {
    const size_t count = (size_t)N * N, size = count * sizeof(float);
    Operands o = {N, new float[count], new float[count], new float[count], nullptr, nullptr, nullptr};
    Random random(1);
    for (size_t i = 0; i < count; ++i) o.A[i] = (float)random.uniform(-1, 1), o.B[i] = (float)random.uniform(-1, 1);
    CHECK_CUDA(cudaMalloc, (void**)&o.d_A, size);
    CHECK_CUDA(cudaMalloc, (void**)&o.d_B, size);
    CHECK_CUDA(cudaMalloc, (void**)&o.d_C, size);
    CHECK_CUDA(cudaMemcpy, o.d_A, o.A, size, cudaMemcpyHostToDevice);
    CHECK_CUDA(cudaMemcpy, o.d_B, o.B, size, cudaMemcpyHostToDevice);
    std::printf("Random A and B, %d x %d floats\n", N, N);
    return o;
}

inline void free_operands(Operands& o) {
    CHECK_CUDA(cudaFree, o.d_A); CHECK_CUDA(cudaFree, o.d_B); CHECK_CUDA(cudaFree, o.d_C);
    delete[] o.A; delete[] o.B; delete[] o.C;
}

// Times launch(grid, block) for blocks of block_size x block_size over C (d_C poisoned first), copies
// C back and checks it; prints the labs' line "LABEL f32 BLOCK_SIZE n: GPU time in ms ...".
template <typename Launch>
static bool run_product(const char* label, int block_size, Launch launch, Operands& o, int repetitions) {
    const size_t size = (size_t)o.N * o.N * sizeof(float);
    CHECK_CUDA(cudaMemset, o.d_C, 0xFF, size);  // NaN: an element never written shows
    dim3 dimBlock(block_size, block_size);
    dim3 dimGrid(o.N / block_size, o.N / block_size);
    const Timing timing = time_gpu(repetitions, [&] {
        launch(dimGrid, dimBlock);
        CHECK_LAUNCH();
    });
    CHECK_CUDA(cudaMemcpy, o.C, o.d_C, size, cudaMemcpyDeviceToHost);
    Random random(2);
    const double error = product_error(o.A, o.B, o.C, o.N, o.N, o.N, random);
    std::printf("%s f32 BLOCK_SIZE %d:", label, block_size);
    print_time("", timing);
    std::printf("    max relative error (Freivalds) %.1e\n", error);
    return error <= 1e-4;  // float sums of N products: lab-mmm allows the same
}

// The programs' shared command line: [N [REPETITIONS]], N a multiple of 32 (the largest tile).
inline bool read_sizes(int argc, char** argv, int& N, int& repetitions) {
    N = (int)argument(argc, argv, 1, 1024);
    repetitions = (int)argument(argc, argv, 2, 10);
    if (N % 32 == 0) return true;
    std::fprintf(stderr, "%s: N = %d is not a multiple of 32 (the largest TILE_WIDTH)\n", argv[0], N);
    return false;
}
