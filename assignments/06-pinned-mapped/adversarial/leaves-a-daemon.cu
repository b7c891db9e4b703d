// leaves-a-daemon.cu: issue 60's fourth attack, its second half, as it was tried on week 6: the
// program starts a process of its own that leaves the process group (setsid) and outlives the case,
// holding the output pipes to write into later.
// expect: refused: calls fork
// why: the static checks read what the student's code imports: no new processes; the box's filter
//      and PID namespace stop one all the same (sandbox's tests)
#include <unistd.h>

#include "course_program.h"

static void leave_a_daemon() {
    if (fork() == 0) {
        setsid();
        sleep(30);
        std::fprintf(stderr, "FORGED: the daemon outlived its case\n");
        std::exit(0);
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
    leave_a_daemon();
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
