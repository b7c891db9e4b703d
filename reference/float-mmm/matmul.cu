// matmul.cu: the float matrix products of the Chinese notes (the CUDA C Programming Guide's MatMul:
// a Matrix struct of width, height and elements, first one thread per element straight from global
// memory, then sub-matrices staged in shared memory) and of the Greek notes (the same tiling with
// TILE_WIDTH 16 and 32). Square N x N here, BLOCK_SIZE | N, as the guide assumes.
//
//   matmul [N [REPETITIONS]]     defaults 1024, 10
//
// Beside: lab-mmm --precision f32 (mmm-ab is the first kernel here, mmm the tiled one).
#include "../check.h"
#include "../product_check.h"

// Matrices are stored in row-major order: M(row, col) = *(M.elements + row * M.width + col)
struct Matrix {
    int width;
    int height;
    float* elements;
};

// The guide's first kernel: each thread computes one element of C from global memory.
__global__ void MatMulKernel(Matrix A, Matrix B, Matrix C) {
    float Cvalue = 0;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    for (int e = 0; e < A.width; ++e) Cvalue += A.elements[row * A.width + e] * B.elements[e * B.width + col];
    C.elements[row * C.width + col] = Cvalue;
}

// The guide's shared-memory version (its GetSubMatrix / GetElement written out); TILE_WIDTH is the
// Greek notes' name for its BLOCK_SIZE.
template <int TILE_WIDTH>
__global__ void MatMulSharedKernel(Matrix A, Matrix B, Matrix C) {
    __shared__ float As[TILE_WIDTH][TILE_WIDTH];
    __shared__ float Bs[TILE_WIDTH][TILE_WIDTH];
    int row = threadIdx.y, col = threadIdx.x;
    int globalRow = blockIdx.y * TILE_WIDTH + row, globalCol = blockIdx.x * TILE_WIDTH + col;
    float Cvalue = 0;
    for (int m = 0; m < A.width / TILE_WIDTH; ++m) {
        // Each thread loads one element of each sub-matrix.
        As[row][col] = A.elements[globalRow * A.width + m * TILE_WIDTH + col];
        Bs[row][col] = B.elements[(m * TILE_WIDTH + row) * B.width + globalCol];
        __syncthreads();  // the sub-matrices are loaded before the computation starts
        for (int e = 0; e < TILE_WIDTH; ++e) Cvalue += As[row][e] * Bs[e][col];
        __syncthreads();  // done with them before the next ones overwrite them
    }
    C.elements[globalRow * C.width + globalCol] = Cvalue;
}

// Times `kernel` on d_A, d_B into d_C (poisoned first), copies C back and checks it.
template <typename Kernel>
static bool run(const char* label, int block_size, Kernel kernel, Matrix d_A, Matrix d_B, Matrix d_C, Matrix A,
                Matrix B, Matrix C, int repetitions) {
    const size_t size = (size_t)C.width * C.height * sizeof(float);
    CHECK_CUDA(cudaMemset, d_C.elements, 0xFF, size);  // NaN: an element never written shows
    dim3 dimBlock(block_size, block_size);
    dim3 dimGrid(B.width / dimBlock.x, A.height / dimBlock.y);
    const Timing timing = time_gpu(repetitions, [&] {
        kernel<<<dimGrid, dimBlock>>>(d_A, d_B, d_C);
        CHECK_LAUNCH();
    });
    CHECK_CUDA(cudaMemcpy, C.elements, d_C.elements, size, cudaMemcpyDeviceToHost);
    Random random(2);
    const double error = product_error(A.elements, B.elements, C.elements, A.height, A.width, B.width, random);
    std::printf("%s f32 BLOCK_SIZE %d:", label, block_size);
    print_time("", timing);
    std::printf("    max relative error (Freivalds) %.1e\n", error);
    return error <= 1e-4;  // float sums of N products: lab-mmm allows the same
}

int main(int argc, char** argv) {
    const int N = (int)argument(argc, argv, 1, 1024);
    const int repetitions = (int)argument(argc, argv, 2, 10);
    if (N % 32) {
        std::fprintf(stderr, "%s: N = %d is not a multiple of 32 (the largest TILE_WIDTH)\n", argv[0], N);
        return 1;
    }
    Matrix A = {N, N, new float[(size_t)N * N]}, B = {N, N, new float[(size_t)N * N]}, C = {N, N, new float[(size_t)N * N]};
    Random random(1);
    for (size_t i = 0; i < (size_t)N * N; ++i) A.elements[i] = (float)random.uniform(-1, 1), B.elements[i] = (float)random.uniform(-1, 1);
    // Load A and B to device memory, allocate C there.
    const size_t size = (size_t)N * N * sizeof(float);
    Matrix d_A = A, d_B = B, d_C = C;
    CHECK_CUDA(cudaMalloc, (void**)&d_A.elements, size);
    CHECK_CUDA(cudaMalloc, (void**)&d_B.elements, size);
    CHECK_CUDA(cudaMalloc, (void**)&d_C.elements, size);
    CHECK_CUDA(cudaMemcpy, d_A.elements, A.elements, size, cudaMemcpyHostToDevice);
    CHECK_CUDA(cudaMemcpy, d_B.elements, B.elements, size, cudaMemcpyHostToDevice);
    std::printf("Random A and B, %d x %d floats\n", N, N);
    bool pass = run("mmm-ab", 16, MatMulKernel, d_A, d_B, d_C, A, B, C, repetitions);
    pass &= run("mmm", 16, MatMulSharedKernel<16>, d_A, d_B, d_C, A, B, C, repetitions);
    pass &= run("mmm", 32, MatMulSharedKernel<32>, d_A, d_B, d_C, A, B, C, repetitions);
    CHECK_CUDA(cudaFree, d_A.elements); CHECK_CUDA(cudaFree, d_B.elements); CHECK_CUDA(cudaFree, d_C.elements);
    delete[] A.elements; delete[] B.elements; delete[] C.elements;
    return print_result(pass);
}
