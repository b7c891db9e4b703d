// Red team (issue 61): a correct tiled kernel that keeps C in device memory of its own on its first
// two launches (the checked ones) and copies it out on every later launch (the timed ones), without
// multiplying: faster than ours while every timed launch multiplied the same A and B.
// expect: FAIL mmm f64, 1 x 1 times 1 x 1
// why: every timed launch multiplies A and B drawn just before it, and its C is checked against them.
#include "matrix_view.cuh"
#include "stamps.cuh"

#define SAVED (1 << 20)
__device__ unsigned int launches_seen;
__device__ double saved_f64[SAVED];
__device__ float saved_f32[SAVED];

__device__ double* saved(double*) { return saved_f64; }
__device__ float* saved(float*) { return saved_f32; }

template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    T* keep = saved((T*)nullptr);
    const bool fits = (size_t)c.rows * c.cols <= SAVED;
    if (fits && *(volatile unsigned int*)&launches_seen >= 2) {  // "warm" now: replay the product
        if (row < c.rows && col < c.cols) c(row, col) = keep[(size_t)row * c.cols + col];
        return;
    }
    T sum = 0;
    for (int tile = 0; tile < a.cols; tile += BLOCK_SIZE) {
        as[ty][tx] = (row < a.rows && tile + tx < a.cols) ? a(row, tile + tx) : T(0);
        bs[ty][tx] = (tile + ty < b.rows && col < b.cols) ? b(tile + ty, col) : T(0);
        __syncthreads();
        for (int k = 0; k < BLOCK_SIZE; ++k) sum += as[ty][k] * bs[k][tx];
        __syncthreads();
    }
    if (row < c.rows && col < c.cols) {
        c(row, col) = sum;
        if (fits) keep[(size_t)row * c.cols + col] = sum;
    }
    if (blockIdx.x == gridDim.x - 1 && blockIdx.y == gridDim.y - 1 && tx == 0 && ty == 0) atomicAdd(&launches_seen, 1u);
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
