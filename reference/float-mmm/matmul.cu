// matmul.cu: the float matrix products of the Chinese notes (the CUDA C Programming Guide's MatMul:
// a Matrix struct of width, height and elements, first one thread per element straight from global
// memory, then sub-matrices staged in shared memory) and of the Greek notes (the same tiling with
// TILE_WIDTH 16 and 32; tiled-matmul.cu has the Greek kernels as printed). Square N x N here,
// BLOCK_SIZE | N, as the guide assumes.
//
//   matmul [N [REPETITIONS]]     defaults 1024, 10
//
// Beside: lab-mmm --precision f32 (mmm-ab is the first kernel here, mmm the tiled one).
#include "float_product.h"

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

int main(int argc, char** argv) {
    int N, repetitions;
    if (!read_sizes(argc, argv, N, repetitions)) return 1;
    Operands o = make_operands(N);
    // The guide's Matrix views of the device operands.
    const Matrix d_A = {N, N, o.d_A}, d_B = {N, N, o.d_B}, d_C = {N, N, o.d_C};
    bool pass = run_product("mmm-ab", 16, [&](dim3 grid, dim3 block) { MatMulKernel<<<grid, block>>>(d_A, d_B, d_C); }, o, repetitions);
    pass &= run_product("mmm", 16, [&](dim3 grid, dim3 block) { MatMulSharedKernel<16><<<grid, block>>>(d_A, d_B, d_C); }, o, repetitions);
    pass &= run_product("mmm", 32, [&](dim3 grid, dim3 block) { MatMulSharedKernel<32><<<grid, block>>>(d_A, d_B, d_C); }, o, repetitions);
    free_operands(o);
    return print_result(pass);
}
