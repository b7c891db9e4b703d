// products.cuh: what the German slides' five stream programs share (000, streams and the nvprof
// table) and the slides show only in part: N and COUNT, BLOCK_SIZE, the tiled kernel mmm (mmm.cu's,
// here for SquareMatrix<double>: nvprof lists it as mmm(SquareMatrix<double>, ...)), and the COUNT
// products' matrices. Include it after one of matrix.hpp, pinned-matrix.hpp or mapped-matrix.hpp.
//
// N and COUNT are constants in the slides' programs that the slides do not print. Chosen:
// - COUNT = 10: nvprof counts 10 kernel calls, 20 copies to the GPU (A and B) and 10 back (C).
// - N = 1024 (8 MiB a matrix): the slides' nvprof figures fit it, and not the labs' 2048:
//   * a copy from pinned memory took 2.36 ms: 8 MiB at 3.5 GB/s, what PCIe 2 gave a Fermi card;
//     32 MiB (N = 2048) would need 14 GB/s, more than PCIe 2 x16 carries at all (8 GB/s);
//   * mmm-mapped's kernel took 304 ms instead of 164: it reads A and B across the bus N / BLOCK_SIZE
//     = 64 times, 2 x 8 MiB x 64 = 1.07 GB, 0.30 s at the same 3.5 GB/s (N = 2048: 8.6 GB, 2.4 s);
//   * 10 products of three matrices take 240 MiB of Hochwanner's 1 GiB; with N = 2048, 960 MiB.
// compare.toml runs the labs at these sizes beside the programs.
#pragma once

#include <cstddef>

const unsigned int N = 1024;
const unsigned int COUNT = 10;

#define BLOCK_SIZE 16

// C = A * B, one thread per element of C; each block stages a BLOCK_SIZE x BLOCK_SIZE tile of a and
// one of b in shared memory per round (N % BLOCK_SIZE == 0, square grid).
__global__ void mmm(SquareMatrix<double> a, SquareMatrix<double> b, SquareMatrix<double> c) {
    __shared__ double ablock[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ double bblock[BLOCK_SIZE][BLOCK_SIZE];
    unsigned int row = blockIdx.y * BLOCK_SIZE + threadIdx.y;
    unsigned int col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    double sum = 0;
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

// The COUNT products' matrices, before the timed region: A[i] and B[i] filled on the host (small
// integers; the slides do not say with what), and every matrix given its GPU memory (mapped: its GPU
// address), so that the timed region holds what nvprof lists, kernels and copies. copy_to_gpu still
// calls allocate_cuda_data, as on the slide, and finds the memory there.
inline void prepare_matrices(SquareMatrix<double> A[], SquareMatrix<double> B[], SquareMatrix<double> C[]) {
    for (unsigned int i = 0; i < COUNT; ++i) {
        A[i].resize(N); B[i].resize(N); C[i].resize(N);
        for (unsigned int row = 0; row < N; ++row) {
            for (unsigned int col = 0; col < N; ++col) {
                A[i](row, col) = (double)((row + 2 * col + i) % 7) - 3;
                B[i](row, col) = (double)((2 * row + col + i) % 5) - 2;
            }
        }
        A[i].allocate_cuda_data(); B[i].allocate_cuda_data(); C[i].allocate_cuda_data();
    }
}
