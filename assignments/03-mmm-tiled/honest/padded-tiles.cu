// padded-tiles.cu: an honest week-3 kernel (issue 61's corpus): each tile one column wider than it
// needs, the usual cure for shared-memory bank conflicts, so the two tiles take more than the
// slides' 2 x BLOCK_SIZE x BLOCK_SIZE elements.
// expect: PASS
#include "matrix_view.cuh"
#include "stamps.cuh"

#ifndef BLOCK_SIZE
#error "compile with -DBLOCK_SIZE=16 or 32"
#endif

// mmm-ab, as in week 2.
template <typename T>
__device__ void mmm_ab(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < c.rows && col < c.cols) {
        T sum = 0;
        for (int k = 0; k < a.cols; ++k) sum += a(row, k) * b(k, col);
        c(row, col) = sum;
    }
}

// One BLOCK_SIZE x BLOCK_SIZE tile of C per block; the tiles padded by a column.
template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE + 1];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE + 1];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    T sum = 0;
    for (int tile = 0; tile < a.cols; tile += BLOCK_SIZE) {
        as[ty][tx] = (row < a.rows && tile + tx < a.cols) ? a(row, tile + tx) : T(0);
        bs[ty][tx] = (tile + ty < b.rows && col < b.cols) ? b(tile + ty, col) : T(0);
        __syncthreads();
        for (int k = 0; k < BLOCK_SIZE; ++k) sum += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    if (row < c.rows && col < c.cols) c(row, col) = sum;
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
