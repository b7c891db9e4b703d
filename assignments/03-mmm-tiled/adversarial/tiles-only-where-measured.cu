// Red team (issue 61): a tiled kernel at 256 x 256 x 256, the one size the counters measured until
// then, and the naive body at every other size.
// expect: FAIL tiling, measured: global loads per element of C (ncu)
// why: the counters measure every case whose size tells tiling from the naive body, the teacher's hidden ones included.
#include "matrix_view.cuh"
#include "stamps.cuh"

template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    T sum = 0;
    if (a.rows == 256 && a.cols == 256 && b.cols == 256) {  // the size that was measured
        for (int tile = 0; tile < a.cols; tile += BLOCK_SIZE) {
            as[ty][tx] = a(row, tile + tx);
            bs[ty][tx] = b(tile + ty, col);
            __syncthreads();
            for (int k = 0; k < BLOCK_SIZE; ++k) sum += as[ty][k] * bs[k][tx];
            __syncthreads();
        }
    } else if (row < a.rows && col < b.cols) {
        for (int k = 0; k < a.cols; ++k) sum += a(row, k) * b(k, col);
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
