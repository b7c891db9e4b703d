// transposed-b-tile.cu: an honest week-3 kernel (issue 61's corpus): B's tile stored transposed, so
// that both tiles are read along a row through a pointer to it; counted in tiles, each load decided
// by a branch of its own.
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

// One BLOCK_SIZE x BLOCK_SIZE tile of C per block; bt holds B's tile transposed, so that the inner
// loop walks a row of each tile. Counted in tiles, each load decided by a branch of its own.
template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T at[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bt[BLOCK_SIZE][BLOCK_SIZE];
    const int i = blockIdx.y * blockDim.y + threadIdx.y;  // the row of C
    const int j = blockIdx.x * blockDim.x + threadIdx.x;  // the column of C
    const int tiles = (a.cols + BLOCK_SIZE - 1) / BLOCK_SIZE;
    T acc = T(0);
    for (int t = 0; t < tiles; ++t) {
        const int ka = t * BLOCK_SIZE + threadIdx.x;  // the column of A this thread loads
        const int kb = t * BLOCK_SIZE + threadIdx.y;  // the row of B this thread loads
        T from_a = T(0), from_b = T(0);
        if (i < a.rows && ka < a.cols) from_a = a(i, ka);
        if (kb < b.rows && j < b.cols) from_b = b(kb, j);
        at[threadIdx.y][threadIdx.x] = from_a;
        bt[threadIdx.x][threadIdx.y] = from_b;
        __syncthreads();
        const T* ra = at[threadIdx.y];
        const T* rb = bt[threadIdx.x];
#pragma unroll 8
        for (int k = 0; k < BLOCK_SIZE; ++k) acc = acc + ra[k] * rb[k];
        __syncthreads();
    }
    if (i < c.rows && j < c.cols) c(i, j) = acc;
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
