// Red team (issue 39): the naive body reading A and B through pointers whose memory space the
// compiler cannot know (they might point into shared memory), so the hardware counts no global load
// instruction; tiles declared and read, volatile, often enough for the shared-memory rule.
// expect: FAIL tiling, measured: global loads per element of C (ncu)
// why: L1's requests for global loads count loads through generic pointers that reach global memory (issue 61; before, a PTX rule refused every generic load, an honest kernel's too).
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
    // Never true, but the compiler cannot tell: A and B may be shared memory, so every load is generic.
    const T* pa = (a.rows < 0) ? &as[0][0] : a.data;
    const T* pb = (a.rows < 0) ? &bs[0][0] : b.data;
    T sum = 0, dummy = 0;
    for (int k = 0; k < a.cols; ++k) {
        if (row < a.rows && col < b.cols) sum += pa[(size_t)row * a.cols + k] * pb[(size_t)k * b.cols + col];
        dummy += ((volatile T*)&as[0][0])[k % BLOCK_SIZE];  // shared-memory loads that feed nothing
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
