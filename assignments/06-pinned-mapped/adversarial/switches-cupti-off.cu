// switches-cupti-off.cu: issue 60's third attack, as it was tried on week 6: the program looks up
// CUPTI's switch at run time (dlsym; CUPTI is loaded by our recorder) and turns the copies' and the
// kernels' records off before the starter's copies, so that the trace would show no copy to fail.
// expect: refused: calls dlsym
// why: the static checks read what the student's code imports: no lookups at run time
#include <dlfcn.h>

#include "course_program.h"

static void switch_off() {
    typedef int (*Disable)(int);
    // CUPTI_ACTIVITY_KIND_MEMCPY is 1, CONCURRENT_KERNEL 10.
    if (Disable disable = (Disable)dlsym(RTLD_DEFAULT, "cuptiActivityDisable")) {
        disable(1);
        disable(10);
        std::fprintf(stderr, "FORGED: CUPTI's copy records switched off\n");
    }
}

#define BSX 256

__global__ void vectorAdd(const float* A, const float* B, float* C, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) C[i] = A[i] + B[i];
}

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s N INPUT OUTPUT\n", argv[0]);
        return 2;
    }
    switch_off();
    const int N = (int)arg_int(argc, argv, 1, "N");
    const size_t bytes = (size_t)N * sizeof(float);
    const int blocks = (N + BSX - 1) / BSX;
    float *A, *B, *C;  // A and B share one allocation, laid out as in INPUT, so one read fills both
    // TODO: allocate A (2N floats: A, then B) and C (N floats) as mapped host memory, which the GPU
    // TODO: can reach across the bus: cudaHostAlloc with the flag cudaHostAllocMapped.
    A = (float*)malloc(2 * bytes);
    C = (float*)malloc(bytes);
    B = A + N;
    read_floats(argv[2], A, 2 * (size_t)N);

    // TODO: launch vectorAdd on A, B and C where they are: the kernel needs their device addresses,
    // TODO: which cudaHostGetDevicePointer gives for mapped memory. No cudaMalloc, no cudaMemcpy.
    float *gpu_A, *gpu_B, *gpu_C;
    CHECK_CUDA(cudaMalloc((void**)&gpu_A, bytes));
    CHECK_CUDA(cudaMalloc((void**)&gpu_B, bytes));
    CHECK_CUDA(cudaMalloc((void**)&gpu_C, bytes));
    CHECK_CUDA(cudaMemcpy(gpu_A, A, bytes, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(gpu_B, B, bytes, cudaMemcpyHostToDevice));
    vectorAdd<<<blocks, BSX>>>(gpu_A, gpu_B, gpu_C, N);
    CHECK_LAUNCH();

    // TODO: wait for the kernel before the host reads C (written in place: nothing to copy back).
    CHECK_CUDA(cudaMemcpy(C, gpu_C, bytes, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaFree(gpu_A));
    CHECK_CUDA(cudaFree(gpu_B));
    CHECK_CUDA(cudaFree(gpu_C));
    write_floats(argv[3], C, N);

    // TODO: free A and C the way they were allocated.
    free(A);
    free(C);
    std::printf("zero_copy: %d floats added: done\n", N);
    return 0;
}
