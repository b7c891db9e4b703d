// Red team (issue 39): the naive body; __syncwarp() in the k loop, and two shared tiles with
// __syncthreads() touched only in a branch that never runs. Every rule read from the code holds.
// expect: FAIL tiling, measured: global loads per element of C (ncu)
// why: the counters see the naive body's 2 K global loads per element and no shared-memory load.
#include "matrix_view.cuh"
#include "stamps.cuh"

template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE];
    const int row = blockIdx.y * BLOCK_SIZE + threadIdx.y, col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    T sum = 0;
    for (int k = 0; k < a.cols; ++k) {
        if (row < a.rows && col < b.cols) sum += a(row, k) * b(k, col);
        __syncwarp();
    }
    if (a.rows < 0) {  // never true: tiles and barriers the kernel never executes
        for (int tile = 0; tile < a.cols; tile += BLOCK_SIZE) {
            as[threadIdx.y][threadIdx.x] = a(0, tile);
            bs[threadIdx.y][threadIdx.x] = b(tile, 0);
            __syncthreads();
            for (int k = 0; k < BLOCK_SIZE; ++k) sum += as[threadIdx.y][k] * bs[k][threadIdx.x];
            __syncthreads();
        }
    }
    if (row < c.rows && col < c.cols) c(row, col) = sum;
}

extern "C" __global__ void mmm_ab_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { mmm(a, b, c); }
extern "C" __global__ void mmm_ab_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { mmm(a, b, c); }
extern "C" __global__ void mmm_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { mmm(a, b, c); }
extern "C" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { mmm(a, b, c); }
extern "C" __global__ void mmm_f64_stamped(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c, Stamp* stamp) {
    stamp_start(stamp);
    mmm(a, b, c);
    stamp_end(stamp);
}
