// backwards.cu: an honest week-2 kernel (issue 61's corpus): the sum taken from the last k down to
// the first, in a helper that returns it.
// expect: PASS
#include "matrix_view.cuh"
#include "stamps.cuh"

#ifndef BLOCK_SIZE
#error "compile with -DBLOCK_SIZE=16 or 32"
#endif

// The dot product of A's row and B's column, from the end.
template <typename T>
__device__ T row_times_column(MatrixView<T> a, MatrixView<T> b, int row, int col) {
    T sum = 0;
    for (int k = a.cols - 1; k >= 0; --k) sum += a(row, k) * b(k, col);
    return sum;
}

// One thread per c(row, col); threads outside C do nothing.
template <typename T>
__device__ void mmm_ab(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < c.rows && col < c.cols) c(row, col) = row_times_column(a, b, row, col);
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
