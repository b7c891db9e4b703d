// Red team (issue 61, second round): the naive body with its loads of A and B in generic inline
// assembly, as asm-generic-loads.cu, plus a printf that never runs, so that the kernel is judged as
// one that prints: its global loads are then counted as load instructions only (printf's own generic
// loads would otherwise swamp the count), which leave its generic ones out.
// expect: FAIL loads: where mmm_f64 or mmm_f32 prints, both load through global or shared pointers, none generic (PTX)
// why: in a kernel that prints, the PTX may hold no generic load, which the counters could not tell from printf's.
#include <cstdio>

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
    if (a.rows < 0) printf("never: %d\n", row);  // A has no negative number of rows
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
