// mmm.cu, German slides (000, matrix-matrix multiplication: "mmm.cu" slides with main, the Matrix
// class and the tiled kernel). C = A * B for two square matrices read from files, one thread per
// element of C in BLOCK_SIZE x BLOCK_SIZE blocks; each block stages a tile of A and one of B in
// shared memory per round. Prints A, B and C; the slides time nothing here.
//
//   mmm matrix-A matrix-B      (square, the same size, a multiple of BLOCK_SIZE = 16)
//
// Fixed from the slides: see matrix.hpp (delete[], cuda_allocated). Added: the launch's own error is
// checked (cudaGetLastError), so that a failed launch ends the program with exit code 1.
#include <iomanip>
#include <iostream>

#include "matrix.hpp"

#define BLOCK_SIZE 16

__global__ void mmm(Matrix a, Matrix b, Matrix c) {
    __shared__ double ablock[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ double bblock[BLOCK_SIZE][BLOCK_SIZE];
    unsigned int row = blockIdx.y * BLOCK_SIZE + threadIdx.y;
    unsigned int col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    double sum = 0;
    // Round r: the r-th tile of a's block row and of b's block column.
    for (int round = 0; round < gridDim.y; ++round) {
        ablock[threadIdx.y][threadIdx.x] = a(row, round * BLOCK_SIZE + threadIdx.x);
        bblock[threadIdx.y][threadIdx.x] = b(round * BLOCK_SIZE + threadIdx.y, col);
        __syncthreads();  // both tiles complete
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k) {
            sum += ablock[threadIdx.y][k] * bblock[k][threadIdx.x];
        }
        __syncthreads();  // both tiles used before the next round overwrites them
    }
    c(row, col) = sum;
}

int main(int argc, char** argv) {
    cmdname = *argv++; --argc;
    if (argc != 2) usage();
    Matrix A; if (!read_matrix(*argv++, A)) usage(); --argc;
    Matrix B; if (!read_matrix(*argv++, B)) usage(); --argc;
    std::cout << "A = " << std::endl << A << std::endl;
    std::cout << "B = " << std::endl << B << std::endl;
    if (A.N != B.N) {
        std::cerr << cmdname << ": sizes of the matrices do not match" << std::endl;
        exit(1);
    }
    if (A.N % BLOCK_SIZE) {
        // "multiply" (sic): the slide's words, printed as they are
        std::cerr << cmdname << ": size of matrices is not a multiply of " << BLOCK_SIZE << std::endl;
        exit(1);
    }
    A.copy_to_gpu(); B.copy_to_gpu();
    Matrix C; C.resize(A.N); C.allocate_cuda_data();
    dim3 block(BLOCK_SIZE, BLOCK_SIZE);
    dim3 grid(A.N / BLOCK_SIZE, A.N / BLOCK_SIZE);
    mmm<<<grid, block>>>(A, B, C);
    CHECK_CUDA(cudaGetLastError);  // not on the slide: a launch reports its own errors only here
    C.copy_from_gpu();
    std::cout << "C = " << std::endl << std::setprecision(14) << C << std::endl;
}
