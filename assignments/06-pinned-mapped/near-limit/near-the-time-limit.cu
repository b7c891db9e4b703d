// near-the-time-limit.cu: an honest zero-copy vectorAdd (week 6) that then keeps the GPU busy for
// 38% longer than its kernel took, on purpose: its GPU time sits near the rule's 1.5x ours, inside the
// 15% at which the check measures a case again (issue 65). It should pass, the same way every time;
// it is kept out of honest/ until ten gradings show it does (see this folder's README).
//
//   zero_copy N INPUT OUTPUT     INPUT holds 2N float32, A then B; OUTPUT gets C = A + B, N float32
#include "course_program.h"

#define BSX 256

__global__ void vectorAdd(const float* A, const float* B, float* C, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) C[i] = A[i] + B[i];
}

// Waits on the GPU for `ns` nanoseconds of its global timer: work of a known length, and nothing else.
__global__ void spin(long long ns) {
    long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s N INPUT OUTPUT\n", argv[0]);
        return 2;
    }
    const int N = (int)arg_int(argc, argv, 1, "N");
    const size_t bytes = (size_t)N * sizeof(float);
    const int blocks = (N + BSX - 1) / BSX;
    float *A, *B, *C;  // A and B share one allocation, laid out as in INPUT, so one read fills both
    CHECK_CUDA(cudaHostAlloc((void**)&A, 2 * bytes, cudaHostAllocMapped));
    CHECK_CUDA(cudaHostAlloc((void**)&C, bytes, cudaHostAllocMapped));
    B = A + N;
    read_floats(argv[2], A, 2 * (size_t)N);

    float *dev_A, *dev_B, *dev_C;
    CHECK_CUDA(cudaHostGetDevicePointer((void**)&dev_A, A, 0));
    CHECK_CUDA(cudaHostGetDevicePointer((void**)&dev_B, B, 0));
    CHECK_CUDA(cudaHostGetDevicePointer((void**)&dev_C, C, 0));
    // Both kernels loaded before anything is timed (CUDA loads a module at its first launch).
    spin<<<1, 1>>>(0);
    vectorAdd<<<1, 1>>>(dev_A, dev_B, dev_C, 0);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaDeviceSynchronize());
    cudaEvent_t began, ended;
    CHECK_CUDA(cudaEventCreate(&began));
    CHECK_CUDA(cudaEventCreate(&ended));
    CHECK_CUDA(cudaEventRecord(began, 0));
    vectorAdd<<<blocks, BSX>>>(dev_A, dev_B, dev_C, N);
    CHECK_LAUNCH();

    CHECK_CUDA(cudaEventRecord(ended, 0));
    CHECK_CUDA(cudaDeviceSynchronize());
    // 38% more than the kernel took on the GPU.
    float took_ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&took_ms, began, ended));
    spin<<<1, 1>>>((long long)(0.38 * took_ms * 1e6));
    CHECK_LAUNCH();
    CHECK_CUDA(cudaDeviceSynchronize());
    write_floats(argv[3], C, N);

    CHECK_CUDA(cudaFreeHost(A));
    CHECK_CUDA(cudaFreeHost(C));
    std::printf("zero_copy: %d floats added: done\n", N);
    return 0;
}
