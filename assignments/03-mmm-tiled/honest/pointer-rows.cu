// pointer-rows.cu: an honest week-3 kernel (issue 61's corpus): each thread walks pointers into A's
// row and B's column from tile to tile instead of computing indices, with a tile count up front.
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

// One BLOCK_SIZE x BLOCK_SIZE tile of C per block.
template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    const bool row_in = row < a.rows, col_in = col < b.cols;
    const T* pa = a.data + (size_t)(row_in ? row : 0) * a.cols + tx;
    const T* pb = b.data + (size_t)ty * b.cols + (col_in ? col : 0);
    const size_t step_b = (size_t)BLOCK_SIZE * b.cols;
    T sum = 0;
    for (int k0 = 0, tiles = (a.cols + BLOCK_SIZE - 1) / BLOCK_SIZE; tiles > 0; --tiles, k0 += BLOCK_SIZE) {
        as[ty][tx] = row_in && k0 + tx < a.cols ? *pa : T(0);
        bs[ty][tx] = col_in && k0 + ty < b.rows ? *pb : T(0);
        __syncthreads();
#pragma unroll
        for (int k = 0; k < BLOCK_SIZE; ++k) sum += as[ty][k] * bs[k][tx];
        __syncthreads();
        pa += BLOCK_SIZE;
        pb += step_b;
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
