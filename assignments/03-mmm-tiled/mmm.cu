// mmm.cu: the starter of this week's assignment (the week's README.md says what to write).
// Write the parts marked TODO; the README says how the lab compiles this file and checks it with --check.

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
    // TODO: (week 3: paste your mmm_ab from week 2 here; question 2 times it against mmm.)
    // TODO: one thread per element c(row, col): row from the y coordinates (block and thread), col from x.
    // TODO: The grid may be larger than C: threads outside it do nothing. The others add
    // TODO: a(row, k) * b(k, col) for k = 0 .. a.cols - 1 and write the sum to c(row, col).
}

// mmm: BLOCK_SIZE x BLOCK_SIZE threads stage one tile of A and one of B in shared memory, then each
// thread reads BLOCK_SIZE pairs from the tiles: BLOCK_SIZE operations per float loaded from global.
template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    // TODO: blocks of BLOCK_SIZE x BLOCK_SIZE threads, one per element of a BLOCK_SIZE x BLOCK_SIZE tile of C.
    // TODO: For each tile of A's row band and B's column band: every thread loads one element of each into
    // TODO: __shared__ T as[BLOCK_SIZE][BLOCK_SIZE], bs[BLOCK_SIZE][BLOCK_SIZE] (0 outside A or B),
    // TODO: __syncthreads(), adds as[ty][k] * bs[k][tx] over k, __syncthreads() again. Write c(row, col) if inside C.
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
