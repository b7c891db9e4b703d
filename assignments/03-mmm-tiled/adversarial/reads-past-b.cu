// Red team (issue 39): a correct tiled product that also reads one element past the end of B
// (multiplied by zero, so with any number there the result is right).
// expect: FAIL mmm f64, 1 x 1 times 1 x 1
// why: B lies between guard zones of NaN, and 0 x NaN is NaN: "read outside B" in a plain --check.
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
        for (int k = 0; k < BLOCK_SIZE; ++k) sum += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    sum += T(0) * b.data[(size_t)b.rows * b.cols];  // one element past the end of B
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
