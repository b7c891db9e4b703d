// matmul.cu, Chinese notes (001, section 5.6 Shared Memory: the CUDA C Programming Guide's matrix
// product, "1. 不用shared memory优化版" and "2. 利用shared memory"). C = A * B for float matrices in
// row-major order, held in a Matrix of width, height and elements. MatMul, the host code: A and B
// copied to the GPU, C allocated there, a grid of BLOCK_SIZE x BLOCK_SIZE blocks launched, C copied
// back, the GPU memory freed. Two kernels, both named MatMulKernel in the notes:
// - plain::MatMulKernel: each thread accumulates one element of C straight from global memory;
// - tiled::MatMulKernel: each block computes one sub-matrix Csub of C, staging the matching
//   BLOCK_SIZE x BLOCK_SIZE sub-matrices of A and B in shared memory in turn.
// MatMul gets the kernel as its last argument (the notes' MatMul launches the one MatMulKernel they
// define); main, which the notes do not show, multiplies two 1024 x 1024 matrices with each.
//
// The notes time nothing and print nothing; neither does this program (run it under a profiler,
// e.g. nsys profile --stats=true, to time its kernels). Sizes, not in the notes: 1024 x 1024, the
// size of the float rows of compare.sh (lab-mmm --random 1024 --precision f32); BLOCK_SIZE 16 as in
// the notes (dimensions a multiple of it, as the guide assumes).
// Fixed from the notes: the copy of C back read Cd.elements (d_C.elements), and a stray brace closed
// MatMul before its cudaFree calls. The tiled kernel's GetSubMatrix, GetElement and SetElement, used
// but not shown in the notes, are written here as the guide has them, with the stride they need
// (a sub-matrix's rows lie a whole row of its parent apart); the notes' Matrix has no stride.
// Added: every CUDA call is checked (CHECK), so a failure ends the program with exit code 1.
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                             \
    do {                                                                                        \
        cudaError_t result = (call);                                                            \
        if (result != cudaSuccess) {                                                            \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
                         cudaGetErrorString(result));                                           \
            std::exit(1);                                                                       \
        }                                                                                       \
    } while (0)

// Row after row in memory: element (row, col) is elements[row * stride + col].
typedef struct {
    int width;
    int height;
    int stride;  // not in the notes: a row's length in memory (width, but a sub-matrix's parent's)
    float* elements;
} Matrix;

#define BLOCK_SIZE 16  // a block is BLOCK_SIZE x BLOCK_SIZE threads

typedef void (*Kernel)(const Matrix, const Matrix, Matrix);

// C = A * B from the host; every dimension a multiple of BLOCK_SIZE.
void MatMul(const Matrix A, const Matrix B, Matrix C, Kernel MatMulKernel) {
    // A and B onto the GPU
    Matrix d_A;
    d_A.width = d_A.stride = A.width; d_A.height = A.height;
    size_t size = A.width * A.height * sizeof(float);
    CHECK(cudaMalloc(&d_A.elements, size));
    CHECK(cudaMemcpy(d_A.elements, A.elements, size, cudaMemcpyHostToDevice));
    Matrix d_B;
    d_B.width = d_B.stride = B.width; d_B.height = B.height;
    size = B.width * B.height * sizeof(float);
    CHECK(cudaMalloc(&d_B.elements, size));
    CHECK(cudaMemcpy(d_B.elements, B.elements, size, cudaMemcpyHostToDevice));

    // room for C on the GPU
    Matrix d_C;
    d_C.width = d_C.stride = C.width; d_C.height = C.height;
    size = C.width * C.height * sizeof(float);
    CHECK(cudaMalloc(&d_C.elements, size));

    // one thread per element of C
    dim3 dimBlock(BLOCK_SIZE, BLOCK_SIZE);
    dim3 dimGrid(B.width / dimBlock.x, A.height / dimBlock.y);
    MatMulKernel<<<dimGrid, dimBlock>>>(d_A, d_B, d_C);
    CHECK(cudaGetLastError());  // not in the notes: a launch reports its own errors only here

    // C back to the host
    CHECK(cudaMemcpy(C.elements, d_C.elements, size, cudaMemcpyDeviceToHost));  // notes: Cd.elements

    // the GPU's copies freed (the notes' stray brace had already closed MatMul here)
    CHECK(cudaFree(d_A.elements));
    CHECK(cudaFree(d_B.elements));
    CHECK(cudaFree(d_C.elements));
}

namespace plain {

// Thread (row, col) sums row `row` of A times column `col` of B, reading both from global memory.
__global__ void MatMulKernel(Matrix A, Matrix B, Matrix C) {
    float Cvalue = 0;
    int row = blockIdx.y * blockDim.y + threadIdx.y;
    int col = blockIdx.x * blockDim.x + threadIdx.x;
    for (int e = 0; e < A.width; ++e) {
        Cvalue += A.elements[row * A.width + e] * B.elements[e * B.width + col];
    }
    C.elements[row * C.width + col] = Cvalue;
}

}  // namespace plain

namespace tiled {

// Element (row, col) of A, and its setter.
__device__ float GetElement(const Matrix A, int row, int col) {
    return A.elements[row * A.stride + col];
}
__device__ void SetElement(Matrix A, int row, int col, float value) {
    A.elements[row * A.stride + col] = value;
}

// The BLOCK_SIZE x BLOCK_SIZE sub-matrix of A that is row-th down and col-th across: a view into A's
// elements, with A's stride.
__device__ Matrix GetSubMatrix(Matrix A, int row, int col) {
    Matrix Asub;
    Asub.width = BLOCK_SIZE;
    Asub.height = BLOCK_SIZE;
    Asub.stride = A.stride;
    Asub.elements = &A.elements[A.stride * BLOCK_SIZE * row + BLOCK_SIZE * col];
    return Asub;
}

__global__ void MatMulKernel(Matrix A, Matrix B, Matrix C) {
    // this block's place among C's sub-matrices
    int blockRow = blockIdx.y;
    int blockCol = blockIdx.x;
    // the block's part of C
    Matrix Csub = GetSubMatrix(C, blockRow, blockCol);
    // this thread's element of Csub, summed here
    float Cvalue = 0;
    // the thread's place within Csub
    int row = threadIdx.y;
    int col = threadIdx.x;
    // pair m: the m-th sub-matrix along the block's rows of A and down its columns of B
    for (int m = 0; m < (A.width / BLOCK_SIZE); ++m) {
        Matrix Asub = GetSubMatrix(A, blockRow, m);
        Matrix Bsub = GetSubMatrix(B, m, blockCol);
        // staged in shared memory, shared by the block's threads
        __shared__ float As[BLOCK_SIZE][BLOCK_SIZE];
        __shared__ float Bs[BLOCK_SIZE][BLOCK_SIZE];
        // one element of each per thread
        As[row][col] = GetElement(Asub, row, col);
        Bs[row][col] = GetElement(Bsub, row, col);
        // both complete before anyone reads them
        __syncthreads();
        for (int e = 0; e < BLOCK_SIZE; ++e) {
            Cvalue += As[row][e] * Bs[e][col];
        }
        // everyone done with them before the next pair overwrites them
        __syncthreads();
    }
    // one element of C per thread
    SetElement(Csub, row, col, Cvalue);
}

}  // namespace tiled

int main() {
    const int n = 1024;  // not in the notes: compare.sh's size
    Matrix A = {n, n, n, new float[n * n]};
    Matrix B = {n, n, n, new float[n * n]};
    Matrix C = {n, n, n, new float[n * n]};
    for (int i = 0; i < n * n; ++i) {
        A.elements[i] = (float)(i % 17) / 17.0f;
        B.elements[i] = (float)(i % 13) / 13.0f;
    }
    MatMul(A, B, C, plain::MatMulKernel);
    MatMul(A, B, C, tiled::MatMulKernel);
    delete[] A.elements;
    delete[] B.elements;
    delete[] C.elements;
    return 0;
}
