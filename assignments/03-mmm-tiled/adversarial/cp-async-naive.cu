// Red team (issue 61): the naive body, each of its 2 K operands copied from global into a shared
// slot of its own with cp.async, which passes no register and is no load
// instruction, then read from there: no global load is counted, the shared-memory loads are 2 K per
// element, two tiles' worth of shared memory is declared and a barrier sits in the loop.
// expect: FAIL tiling, measured: global loads per element of C (ncu)
// why: cp.async copies count as global reads where the GPU has them (sm_80 on; an older GPU makes them loads): 2 K per element, far above a tiled kernel's.
#include "matrix_view.cuh"
#include "stamps.cuh"

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

template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    const bool inside = row < c.rows && col < c.cols;
    T sum = 0;
    for (int k = 0; k < a.cols; ++k) {
        if (inside) {
            copy_async(&as[ty][tx], &a(row, k));
            copy_async(&bs[ty][tx], &b(k, col));
            wait_for_copies();
            sum += as[ty][tx] * bs[ty][tx];
        }
        if (k % BLOCK_SIZE == 0) __syncthreads();
    }
    if (inside) c(row, col) = sum;
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
