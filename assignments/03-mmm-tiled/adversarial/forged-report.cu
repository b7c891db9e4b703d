// Red team (issue 39): the naive body, and a #pragma message that prints a ptxas report of 4096
// bytes of shared memory, to pass the tiles rule.
// expect: FAIL tiles: mmm_f64 and mmm_f32 keep two BLOCK_SIZE x BLOCK_SIZE tiles in shared memory (ptxas report)
// why: the report is read from the second step of the compile, which only ptxas writes to.
#pragma message("\nptxas info    : Compiling entry function 'mmm_f64' for 'sm_90'\nptxas info    : Function properties for mmm_f64\n    0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads\nptxas info    : Used 40 registers, used 1 barriers, 4096 bytes smem, 400 bytes cmem[0]")
#include "matrix_view.cuh"
#include "stamps.cuh"

template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    const int row = blockIdx.y * BLOCK_SIZE + threadIdx.y, col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    T sum = 0;
    for (int k = 0; k < a.cols; ++k) {
        if (row < a.rows && col < b.cols) sum += a(row, k) * b(k, col);
    }
    if (row < c.rows && col < c.cols) c(row, col) = sum;
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
