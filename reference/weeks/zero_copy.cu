// zero_copy.cu: week 6 as a graded program, the Korean notes' zero-copy vectorAdd. A, B and C live in
// mapped host memory; the kernel reads A and B and writes C across the bus, and no copy is ever made.
//
//   zero_copy N INPUT OUTPUT     INPUT holds 2N float32, A then B; OUTPUT gets C = A + B, N float32
//
// The checker compares OUTPUT with its own CPU sum, and reads the CUDA activity the program made: one
// kernel, and no cudaMemcpy of any kind.
#include "course_program.h"

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
    const int N = (int)arg_int(argc, argv, 1, "N");
    const size_t bytes = (size_t)N * sizeof(float);
    const int blocks = (N + BSX - 1) / BSX;
    float *A, *B, *C;  // A and B share one allocation, laid out as in INPUT, so one read fills both
    // BEGIN ASSIGNMENT
    // TODO: allocate A (2N floats: A, then B) and C (N floats) as mapped host memory, which the GPU
    // TODO: can reach across the bus: cudaHostAlloc with the flag cudaHostAllocMapped.
    // STARTER: A = (float*)malloc(2 * bytes);
    // STARTER: C = (float*)malloc(bytes);
    CHECK_CUDA(cudaHostAlloc((void**)&A, 2 * bytes, cudaHostAllocMapped));
    CHECK_CUDA(cudaHostAlloc((void**)&C, bytes, cudaHostAllocMapped));
    // END ASSIGNMENT
    B = A + N;
    read_floats(argv[2], A, 2 * (size_t)N);

    // BEGIN ASSIGNMENT
    // TODO: launch vectorAdd on A, B and C where they are: the kernel needs their device addresses,
    // TODO: which cudaHostGetDevicePointer gives for mapped memory. No cudaMalloc, no cudaMemcpy.
    // STARTER: float *gpu_A, *gpu_B, *gpu_C;
    // STARTER: CHECK_CUDA(cudaMalloc((void**)&gpu_A, bytes));
    // STARTER: CHECK_CUDA(cudaMalloc((void**)&gpu_B, bytes));
    // STARTER: CHECK_CUDA(cudaMalloc((void**)&gpu_C, bytes));
    // STARTER: CHECK_CUDA(cudaMemcpy(gpu_A, A, bytes, cudaMemcpyHostToDevice));
    // STARTER: CHECK_CUDA(cudaMemcpy(gpu_B, B, bytes, cudaMemcpyHostToDevice));
    // STARTER: vectorAdd<<<blocks, BSX>>>(gpu_A, gpu_B, gpu_C, N);
    float *dev_A, *dev_B, *dev_C;
    CHECK_CUDA(cudaHostGetDevicePointer((void**)&dev_A, A, 0));
    CHECK_CUDA(cudaHostGetDevicePointer((void**)&dev_B, B, 0));
    CHECK_CUDA(cudaHostGetDevicePointer((void**)&dev_C, C, 0));
    vectorAdd<<<blocks, BSX>>>(dev_A, dev_B, dev_C, N);
    // END ASSIGNMENT
    CHECK_LAUNCH();

    // BEGIN ASSIGNMENT
    // TODO: wait for the kernel before the host reads C (written in place: nothing to copy back).
    // STARTER: CHECK_CUDA(cudaMemcpy(C, gpu_C, bytes, cudaMemcpyDeviceToHost));
    // STARTER: CHECK_CUDA(cudaFree(gpu_A));
    // STARTER: CHECK_CUDA(cudaFree(gpu_B));
    // STARTER: CHECK_CUDA(cudaFree(gpu_C));
    CHECK_CUDA(cudaDeviceSynchronize());
    // END ASSIGNMENT
    write_floats(argv[3], C, N);

    // BEGIN ASSIGNMENT
    // TODO: free A and C the way they were allocated.
    // STARTER: free(A);
    // STARTER: free(C);
    CHECK_CUDA(cudaFreeHost(A));
    CHECK_CUDA(cudaFreeHost(C));
    // END ASSIGNMENT
    std::printf("zero_copy: %d floats added: done\n", N);
    return 0;
}
