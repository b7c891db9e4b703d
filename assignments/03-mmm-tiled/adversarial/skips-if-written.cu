// Red team (issue 39): a correct tiled kernel that returns at once when C(0, 0) already holds a
// number, hoping the timed launches find the checked launch's product still there.
// expect: FAIL mmm f64, 1000 x 999 times 999 x 1001
// why: every launch, timed or checked, starts from a poisoned C, so no launch finds a finished product;
// within one launch, the blocks that start after block (0, 0) has written C(0, 0) skip their work.
#include "matrix_view.cuh"
#include "stamps.cuh"

template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE];
    if (!isnan((double)c(0, 0))) return;  // "already computed"
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

extern "C" __global__ void mmm_ab_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { mmm(a, b, c); }
extern "C" __global__ void mmm_ab_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { mmm(a, b, c); }
extern "C" __global__ void mmm_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { mmm(a, b, c); }
extern "C" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { mmm(a, b, c); }
extern "C" __global__ void mmm_f64_stamped(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c, Stamp* stamp) {
    stamp_start(stamp);
    mmm(a, b, c);
    stamp_end(stamp);
}
