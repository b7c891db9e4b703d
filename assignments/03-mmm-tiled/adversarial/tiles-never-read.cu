// Red team (issue 39): tiles filled and synchronised in a loop as the slide does, but the sum is the
// naive body's, read straight from global memory.
// expect: FAIL tiling, measured: global loads per element of C (ncu)
// why: the counters count 2 K + 2 K / BLOCK_SIZE global loads per element, far above a tiled kernel's.
#include "matrix_view.cuh"
#include "stamps.cuh"

template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    T sum = 0;
    for (int tile = 0; tile < a.cols; tile += BLOCK_SIZE) {
        as[ty][tx] = (row < a.rows && tile + tx < a.cols) ? a(row, tile + tx) : T(0);
        bs[ty][tx] = (tile + ty < b.rows && col < b.cols) ? b(tile + ty, col) : T(0);
        __syncthreads();
        for (int k = tile; k < tile + BLOCK_SIZE && k < a.cols; ++k) {
            if (row < a.rows && col < b.cols) sum += a(row, k) * b(k, col);  // not as[][] * bs[][]
        }
        if (tx == 99) sum += as[ty][0] * bs[0][tx];  // a read of the tiles that never happens
        __syncthreads();
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
