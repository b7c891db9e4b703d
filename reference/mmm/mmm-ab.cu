// mmm-ab.cu: C = A * B with the German slides' naive kernel: every thread computes c(row, col) straight
// from global memory. Main program: matrix.hpp. Beside: lab-mmm --kernel naive --precision f64.
#include "matrix.hpp"

__global__ void mmm_ab(Matrix a, Matrix b, Matrix c) {
    unsigned int row = blockIdx.y * BLOCK_SIZE + threadIdx.y;
    unsigned int col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    double sum = 0;
    for (int k = 0; k < BLOCK_SIZE * gridDim.y; ++k) {
        sum += a(row, k) * b(k, col);
    }
    c(row, col) = sum;
}

int main(int argc, char** argv) { return run(argc, argv, "mmm-ab", mmm_ab); }
