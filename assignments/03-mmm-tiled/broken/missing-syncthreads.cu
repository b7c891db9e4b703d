// A deliberately broken submission (assignments/README.md): the first __syncthreads() is gone.
// Made from kernels/cuda/mmm.cu by `cargo run -p grading --bin templates`; --check must catch it (the GPU tests run it).

// mmm.cu: C = A * B, the slides' naive kernel mmm-ab and the tiled kernel mmm.
// Compiled once per BLOCK_SIZE (-DBLOCK_SIZE=16, -DBLOCK_SIZE=32); the host reads the same numbers
// from kernels::MMM_BLOCK_SIZES. Unlike the slides, any sizes work: A is m x k, B is k x n, and
// threads outside C (or tile elements outside A and B) are masked instead of required away.
#include "matrix_view.cuh"
#include "stamps.cuh"

#ifndef BLOCK_SIZE
#error "compile with -DBLOCK_SIZE=16 or 32"
#endif

// mmm-ab: one thread per c(row, col), every operand straight from global memory. Within a warp all
// threads share `row`, so a(row, k) is one address (a broadcast, no coalescing to be had) while b(k, col)
// is read by consecutive threads from consecutive addresses. Every element of A and B is read n and m
// times from device memory (or L2).
template <typename T>
__device__ void mmm_ab(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < c.rows && col < c.cols) {
        T sum = 0;
        for (int k = 0; k < a.cols; ++k) {
            sum += a(row, k) * b(k, col);
        }
        c(row, col) = sum;
    }
}

// mmm: BLOCK_SIZE x BLOCK_SIZE threads stage one tile of A and one of B in shared memory, then each
// thread reads BLOCK_SIZE pairs from the tiles: BLOCK_SIZE operations per float loaded from global.
template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x;
    const int ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty;
    const int col = blockIdx.x * BLOCK_SIZE + tx;
    T sum = 0;
    for (int tile = 0; tile < a.cols; tile += BLOCK_SIZE) {
        // Outside A or B a tile is padded with zeros, which add nothing to the sum.
        as[ty][tx] = (row < a.rows && tile + tx < a.cols) ? a(row, tile + tx) : T(0);
        bs[ty][tx] = (tile + ty < b.rows && col < b.cols) ? b(tile + ty, col) : T(0);
        // BUG: no __syncthreads() here: threads read tiles other warps have not written yet
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k) {
            sum += as[ty][k] * bs[k][tx];
        }
        __syncthreads();  // everyone is done with the tiles before they are overwritten
    }
    if (row < c.rows && col < c.cols) {
        c(row, col) = sum;
    }
}

// Plain C names for the host to look up, one per precision.
extern "C" __global__ void mmm_ab_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { mmm_ab(a, b, c); }
extern "C" __global__ void mmm_ab_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { mmm_ab(a, b, c); }
extern "C" __global__ void mmm_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { mmm(a, b, c); }
extern "C" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { mmm(a, b, c); }

// The twin the streams chronograms launch (stamps.cuh): the same product, stamped with when it ran.
extern "C" __global__ void mmm_f64_stamped(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c, Stamp* stamp) {
    stamp_start(stamp);
    mmm(a, b, c);
    stamp_end(stamp);
}
