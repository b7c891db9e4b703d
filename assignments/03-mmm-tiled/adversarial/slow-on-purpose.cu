// Red team (issue 39): a correct tiled kernel that is slow on every other launch on purpose, so its
// times spread and (before issue 39) its cases left the CSV's mean as "not comparable".
// expect: PASS
// why: the ratio is of medians over twelve launches and every passing case counts in the mean; being
// slow on purpose only makes this kernel's own ratio worse ("unsteady" is shown, nothing is left out).
#include "matrix_view.cuh"
#include "stamps.cuh"

__device__ unsigned int launches_seen;

template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE];
    // Every other launch waits about 1 ms before it starts (clock ticks at ~1.5 GHz).
    if (launches_seen % 2 == 1) {
        const long long start = clock64();
        while (clock64() - start < 1500000) {
        }
    }
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
    __syncthreads();
    if (blockIdx.x == 0 && blockIdx.y == 0 && tx == 0 && ty == 0) atomicAdd(&launches_seen, 1u);
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
