// An honest submission (issue 61's corpus): an event recorded after the kernel, polled with cudaEventQuery until it has happened.
// expect: PASS
// Made from reference/weeks/zero_copy.cu by `cargo run -p grading --bin templates` (assignments/README.md).

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
    CHECK_CUDA(cudaHostAlloc((void**)&A, 2 * bytes, cudaHostAllocMapped));
    CHECK_CUDA(cudaHostAlloc((void**)&C, bytes, cudaHostAllocMapped));
    B = A + N;
    read_floats(argv[2], A, 2 * (size_t)N);

    float *dev_A, *dev_B, *dev_C;
    CHECK_CUDA(cudaHostGetDevicePointer((void**)&dev_A, A, 0));
    CHECK_CUDA(cudaHostGetDevicePointer((void**)&dev_B, B, 0));
    CHECK_CUDA(cudaHostGetDevicePointer((void**)&dev_C, C, 0));
    cudaEvent_t done;
    CHECK_CUDA(cudaEventCreate(&done));
    vectorAdd<<<blocks, BSX>>>(dev_A, dev_B, dev_C, N);
    CHECK_CUDA(cudaEventRecord(done));
    CHECK_LAUNCH();

    cudaError_t state;
    while ((state = cudaEventQuery(done)) == cudaErrorNotReady) {
    }
    CHECK_CUDA(state);
    CHECK_CUDA(cudaEventDestroy(done));
    write_floats(argv[3], C, N);

    CHECK_CUDA(cudaFreeHost(A));
    CHECK_CUDA(cudaFreeHost(C));
    std::printf("zero_copy: %d floats added: done\n", N);
    return 0;
}
