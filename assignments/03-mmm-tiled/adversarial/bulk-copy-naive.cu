// Red team (issue 61): the naive body, each of its 2 K operands brought into shared memory by the
// copy engine of sm_90 on (`cp.async.bulk`, the TMA unit's one-dimensional copy, completing on an
// mbarrier of the thread's own): 16 aligned bytes around the operand, read from there. No load
// instruction and no cp.async is counted, the shared-memory loads are 2 K per element, two tiles'
// worth of shared memory is declared and a barrier sits in the loop. Before sm_90 it loads as the
// naive body does.
// expect: FAIL tiling, measured: global loads per element of C (ncu)
// why: bytes the TMA unit reads count as global reads where the GPU has one (sm_90 on): 16 bytes per operand, far above a tiled kernel's.
#include "matrix_view.cuh"
#include "stamps.cuh"

// The shared-memory address of p, as the copy and the barrier instructions take it.
__device__ unsigned shared_address(const void* p) { return (unsigned)__cvta_generic_to_shared(p); }

// The 16 bytes around `from`, copied into `slot` (16-byte aligned), the copy counted on `barrier`;
// returns the operand.
template <typename T>
__device__ T through_the_copy_engine(const T* from, T* slot, unsigned long long* barrier, unsigned& phase) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    const size_t skew = (size_t)from & 15;
    const char* aligned = (const char*)from - skew;
    asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], 16;" ::"r"(shared_address(barrier)) : "memory");
    asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], 16, [%2];"
                 ::"r"(shared_address(slot)), "l"(aligned), "r"(shared_address(barrier)) : "memory");
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "WAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT_%=;\n"
        "}\n" ::"r"(shared_address(barrier)),
        "r"(phase)
        : "memory");
    phase ^= 1;
    return *(const T*)((const char*)slot + skew);
#else
    (void)slot, (void)barrier, (void)phase;
    return *from;
#endif
}

template <typename T>
__device__ void mmm(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ T bs[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ alignas(16) char slots[BLOCK_SIZE][BLOCK_SIZE][2][16];
    __shared__ unsigned long long barriers[BLOCK_SIZE][BLOCK_SIZE];
    const int tx = threadIdx.x, ty = threadIdx.y;
    const int row = blockIdx.y * BLOCK_SIZE + ty, col = blockIdx.x * BLOCK_SIZE + tx;
    const bool inside = row < c.rows && col < c.cols;
    unsigned long long* barrier = &barriers[ty][tx];
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
    asm volatile("mbarrier.init.shared::cta.b64 [%0], 1;" ::"r"(shared_address(barrier)) : "memory");
    asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
#endif
    as[ty][tx] = T(0);
    bs[ty][tx] = T(0);
    __syncthreads();
    unsigned phase = 0;
    T sum = 0, dummy = 0;
    for (int k = 0; k < a.cols; ++k) {
        if (inside) {
            const T x = through_the_copy_engine(&a(row, k), (T*)slots[ty][tx][0], barrier, phase);
            const T y = through_the_copy_engine(&b(k, col), (T*)slots[ty][tx][1], barrier, phase);
            sum += x * y;
        }
        dummy += ((volatile T*)&as[0][0])[k % BLOCK_SIZE] + ((volatile T*)&bs[0][0])[k % BLOCK_SIZE];
        if (k % BLOCK_SIZE == 0) __syncthreads();
    }
    if (inside) c(row, col) = sum + dummy * T(0);
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
