// pointer-walk.cu: an honest week-2 kernel, written differently from ours (issue 61's corpus): two
// pointers walk A's row and B's column, one element and one row of B at a time.
// expect: PASS
#include "matrix_view.cuh"
#include "stamps.cuh"

#ifndef BLOCK_SIZE
#error "compile with -DBLOCK_SIZE=16 or 32"
#endif

// One thread per c(row, col); threads outside C do nothing.
template <typename T>
__device__ void mmm_ab(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    if (row >= c.rows || col >= c.cols) return;
    const T* in_a = a.data + (size_t)row * a.cols;
    const T* in_b = b.data + col;
    T sum = 0;
    for (const T* end = in_a + a.cols; in_a != end; ++in_a, in_b += b.cols) sum += *in_a * *in_b;
    c.data[(size_t)row * c.cols + col] = sum;
}

// mmm: week 3's tiled kernel, not written yet (week 2 checks mmm_ab alone).
template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {}

// Plain C names for the host to look up, one per precision.
extern "C" __global__ void mmm_ab_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { mmm_ab(a, b, c); }
extern "C" __global__ void mmm_ab_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { mmm_ab(a, b, c); }
extern "C" __global__ void mmm_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { mmm(a, b, c); }
extern "C" __global__ void mmm_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { mmm(a, b, c); }

// The twin the streams chronograms launch (stamps.cuh): the same product, stamped with when it ran.
extern "C" __global__ void mmm_f64_stamped(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c, Stamp* stamp) {
    stamp_start(stamp);
    mmm(a, b, c);
    stamp_end(stamp);
}
