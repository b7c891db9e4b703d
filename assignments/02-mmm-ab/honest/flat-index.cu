// flat-index.cu: an honest week-2 kernel (issue 61's corpus): raw pointers and flat 64-bit indices
// instead of the view's operator(), marked __restrict__, read through __ldg.
// expect: PASS
#include "matrix_view.cuh"
#include "stamps.cuh"

#ifndef BLOCK_SIZE
#error "compile with -DBLOCK_SIZE=16 or 32"
#endif

// One thread per c(row, col); threads outside C do nothing.
template <typename T>
__device__ void mmm_ab(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    const size_t row = (size_t)blockIdx.y * blockDim.y + threadIdx.y;
    const size_t col = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (row >= (size_t)c.rows || col >= (size_t)c.cols) return;
    const T* __restrict__ pa = a.data;
    const T* __restrict__ pb = b.data;
    const size_t K = a.cols, N = b.cols;
    T sum = T(0);
    for (size_t k = 0; k < K; ++k) sum += __ldg(pa + row * K + k) * __ldg(pb + k * N + col);
    c.data[row * N + col] = sum;
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
