// mmm-ab.cu, German slides (000, matrix-matrix multiplication: the "mmm-ab.cu" slide, the plain
// kernel before the tiled one). Every thread computes c(row, col) straight from global memory; its
// reads of a are not consecutive within a warp. The rest is mmm.cu's program: C = A * B for two
// square matrices read from files, printed with A and B; the slides time nothing here.
//
//   mmm-ab matrix-A matrix-B   (square, the same size, a multiple of BLOCK_SIZE = 16)
//
// Fixed from the slides: see matrix.hpp (delete[], cuda_allocated). Added: the launch's own error is
// checked (cudaGetLastError), so that a failed launch ends the program with exit code 1.
#include <iomanip>
#include <iostream>

#include "matrix.hpp"

#define BLOCK_SIZE 16

__global__ void mmm(Matrix a, Matrix b, Matrix c) {
    unsigned int row = blockIdx.y * BLOCK_SIZE + threadIdx.y;
    unsigned int col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    double sum = 0;
    // The grid is square, so BLOCK_SIZE * gridDim.y is N.
    for (int k = 0; k < BLOCK_SIZE * gridDim.y; ++k) {
        sum += a(row, k) * b(k, col);
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
