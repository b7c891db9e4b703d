// cp-async-tiles.cu: an honest week-3 kernel (issue 61's corpus): the tiles are copied from global
// into shared memory with cp.async (sm_80 on; an older GPU gets a load and a store), which passes no register. The counters see one cp.async per tile of A and one of B per
// thread, as a tiled kernel's two loads; a tile's slot past A or B is written with a zero.
// expect: PASS
#include "matrix_view.cuh"
#include "stamps.cuh"

#ifndef BLOCK_SIZE
#error "compile with -DBLOCK_SIZE=16 or 32"
#endif

// cp.async (sm_80 on): one element copied from global into shared memory without passing a register;
// an older GPU loads and stores it.
template <typename T>
__device__ void copy_async(T* slot, const T* from) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2;" ::"r"((unsigned)__cvta_generic_to_shared(slot)), "l"(from),
                 "n"(sizeof(T))
                 : "memory");
#else
    *slot = *from;
#endif
}

// Waits for this thread's copies.
__device__ void wait_for_copies() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    asm volatile("cp.async.commit_group;\ncp.async.wait_group 0;" ::: "memory");
#endif
}

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

// One element of a tile: copied asynchronously where it lies inside its matrix, else a zero.
template <typename T>
__device__ void stage(T* slot, MatrixView<T> m, int i, int j) {
    if (i < m.rows && j < m.cols) {
        copy_async(slot, &m(i, j));
    } else {
        *slot = T(0);
    }
}

// One BLOCK_SIZE x BLOCK_SIZE tile of C per block; each step's two tiles arrive through cp.async.
template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    T sum = 0;
    for (int t = 0; t < a.cols; t += BLOCK_SIZE) {
        stage(&as[ty][tx], a, row, t + tx);
        stage(&bs[ty][tx], b, t + ty, col);
        wait_for_copies();  // this thread's copies have landed
        __syncthreads();           // and everyone's
        for (int k = 0; k < BLOCK_SIZE; ++k) sum += as[ty][k] * bs[k][tx];
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
