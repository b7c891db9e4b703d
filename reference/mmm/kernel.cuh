// kernel.cuh: the German slides' tiled kernel `mmm`, for any matrix class with N and an operator()
// that reads cuda_data on the GPU: mmm.cu's Matrix and the stream programs' SquareMatrix<double> (nvprof
// on the slides lists it as mmm(SquareMatrix<double>, ...)). Each block stages one BLOCK_SIZE x
// BLOCK_SIZE tile of A and one of B in shared memory per round. Needs BLOCK_SIZE | N.
#pragma once

template <typename Matrix>
__global__ void mmm(Matrix a, Matrix b, Matrix c) {
    __shared__ double ablock[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ double bblock[BLOCK_SIZE][BLOCK_SIZE];
    unsigned int row = blockIdx.y * BLOCK_SIZE + threadIdx.y;
    unsigned int col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    double sum = 0;
    for (int round = 0; round < gridDim.y; ++round) {
        ablock[threadIdx.y][threadIdx.x] = a(row, round * BLOCK_SIZE + threadIdx.x);
        bblock[threadIdx.y][threadIdx.x] = b(round * BLOCK_SIZE + threadIdx.y, col);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k) {
            sum += ablock[threadIdx.y][k] * bblock[k][threadIdx.x];
        }
        __syncthreads();
    }
    c(row, col) = sum;
}
