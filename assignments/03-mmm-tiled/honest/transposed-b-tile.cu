// transposed-b-tile.cu: an honest week-3 kernel (issue 61's corpus): B's tile stored transposed, so
// that both tiles are read along a row.
// expect: PASS
#include "matrix_view.cuh"
#include "stamps.cuh"

#ifndef BLOCK_SIZE
#error "compile with -DBLOCK_SIZE=16 or 32"
#endif

// mmm-ab, as in week 2.
template <typename T>
__device__ void mmm_ab(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    const int row = blockIdx.y * blockDim.y + threadIdx.y;
    const int col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < c.rows && col < c.cols) {
        T sum = 0;
        for (int k = 0; k < a.cols; ++k) sum += a(row, k) * b(k, col);
        c(row, col) = sum;
    }
}

// One BLOCK_SIZE x BLOCK_SIZE tile of C per block; bt holds B's tile transposed.
template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T at[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bt[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    T sum = 0;
    for (int base = 0; base < a.cols; base += BLOCK_SIZE) {
        at[ty][tx] = (row < a.rows && base + tx < a.cols) ? a(row, base + tx) : T(0);
        bt[tx][ty] = (base + ty < b.rows && col < b.cols) ? b(base + ty, col) : T(0);
        __syncthreads();
        for (int k = 0; k < BLOCK_SIZE; ++k) sum += at[ty][k] * bt[tx][k];
        __syncthreads();
    }
    if (row < c.rows && col < c.cols) c(row, col) = sum;
}

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
