// Red team (issue 61, a reviewer's): printf in mmm_f64 only, where it never runs, so that the file
// is measured as one that prints (load instructions only, since printf's own generic loads would
// swamp L1's count), and mmm_f32 the naive body through generic pointers, which a rule that looked
// only at the printing kernel's PTX let through.
// expect: FAIL loads: where mmm_f64 or mmm_f32 prints, both load through global or shared pointers, none generic (PTX)
// why: one kernel that prints makes both be measured by their load instructions, so the PTX of both may hold no generic load.
#include <cstdio>

#include "matrix_view.cuh"
#include "stamps.cuh"

template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    as[ty][tx] = T(0);
    bs[ty][tx] = T(0);
    __syncthreads();
    // Only the f32 kernel reads A and B through generic pointers (never shared memory, but the
    // compiler cannot tell); only the f64 kernel prints, in a branch that never runs.
    const bool f32 = sizeof(T) == 4;
    const T* pa = (f32 && a.rows < 0) ? &as[0][0] : a.data;
    const T* pb = (f32 && a.rows < 0) ? &bs[0][0] : b.data;
    if (!f32 && a.rows < 0) printf("never: %d\n", row);
    T sum = 0, dummy = 0;
    for (int k = 0; k < a.cols; ++k) {
        if (row < a.rows && col < b.cols) sum += pa[(size_t)row * a.cols + k] * pb[(size_t)k * b.cols + col];
        dummy += ((volatile T*)&as[0][0])[k % BLOCK_SIZE] + ((volatile T*)&bs[0][0])[k % BLOCK_SIZE];  // feed nothing
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
