// Red team (issue 61): the naive body reading A and B through atomics that change nothing
// (atomicOr(p, 0)), which the count of global load instructions does not see; tiles declared and
// read, volatile, often enough for the shared-memory rule, and a barrier in the loop.
// expect: FAIL tiling, measured: global loads per element of C (ncu)
// why: atomics and reductions on global memory count as global reads: 2 K per element, far above a tiled kernel's.
#include "matrix_view.cuh"
#include "stamps.cuh"

__device__ double read(const double* p) {
    return __longlong_as_double((long long)atomicOr((unsigned long long*)p, 0ull));
}
__device__ float read(const float* p) { return __int_as_float(atomicOr((int*)p, 0)); }

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
        if (row < a.rows && col < b.cols) sum += read(&a.data[(size_t)row * a.cols + k]) * read(&b.data[(size_t)k * b.cols + col]);
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
