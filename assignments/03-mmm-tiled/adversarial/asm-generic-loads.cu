// Red team (issue 61): the naive body whose loads of A and B are inline assembly in braces of its
// own ("{ ld.f64 ... }"), generic loads the count of global load instructions does not see and a
// reader of the PTX line by line took for a line starting with "{"; tiles declared and read, volatile,
// often enough for the shared-memory rule, and a barrier in the loop.
// expect: FAIL tiling, measured: global loads per element of C (ncu)
// why: L1's requests for global loads count generic loads that reach global memory, however they were written (issue 61).
#include "matrix_view.cuh"
#include "stamps.cuh"

__device__ double load(const double* p) {
    double v;
    asm volatile("{ ld.f64 %0, [%1]; }" : "=d"(v) : "l"(p));
    return v;
}
__device__ float load(const float* p) {
    float v;
    asm volatile("{ ld.f32 %0, [%1]; }" : "=f"(v) : "l"(p));
    return v;
}

template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    as[ty][tx] = T(0);
    bs[ty][tx] = T(0);
    __syncthreads();
    T sum = 0, dummy = 0;
    for (int k = 0; k < a.cols; ++k) {
        if (row < a.rows && col < b.cols) sum += load(&a.data[(size_t)row * a.cols + k]) * load(&b.data[(size_t)k * b.cols + col]);
        dummy += ((volatile T*)&as[0][0])[k % BLOCK_SIZE] + ((volatile T*)&bs[0][0])[k % BLOCK_SIZE];
        if (k % BLOCK_SIZE == 0) __syncthreads();
    }
    if (row < c.rows && col < c.cols) c(row, col) = sum + dummy * T(0);
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
