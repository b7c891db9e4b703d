// mmm.cu, German slides (000, streams: the first program of the nvprof table; the slide printed
// "GPU time in ms: 2034.15"). COUNT products C[i] = A[i] * B[i], one after the other on the NULL
// stream: A[i] and B[i] copied to the GPU, the tiled kernel, C[i] copied back, from pageable host
// memory (matrix.hpp). Timed between two events on the NULL stream and printed through std::cerr, as
// the slides' events slide shows; one run.
//
// The slides print this program's output and its nvprof table, not its code: its loop is
// mmm-streamed's without the streams (the copies on the NULL stream, whose copies from pageable
// memory hold the host until the data is staged, and whose copy back waits for the kernel).
// Sizes: N = 1024, COUNT = 10, compile-time constants as on the slides (products.cuh says why).
// Added: each launch's own error is checked (cudaGetLastError), so a failed launch exits with 1.
#include <iostream>

#include "matrix.hpp"
#include "products.cuh"

int main() {
    SquareMatrix<double> A[COUNT], B[COUNT], C[COUNT];
    prepare_matrices(A, B, C);
    dim3 block(BLOCK_SIZE, BLOCK_SIZE);
    dim3 grid(N / BLOCK_SIZE, N / BLOCK_SIZE);

    cudaEvent_t start_event; CHECK_CUDA(cudaEventCreate, &start_event);
    cudaEvent_t end_event; CHECK_CUDA(cudaEventCreate, &end_event);
    CHECK_CUDA(cudaEventRecord, start_event);
    for (unsigned int i = 0; i < COUNT; ++i) {
        A[i].copy_to_gpu(); B[i].copy_to_gpu();
        mmm<<<grid, block>>>(A[i], B[i], C[i]);
        CHECK_CUDA(cudaGetLastError);  // not on the slides: a launch reports its own errors only here
        C[i].copy_from_gpu();
    }
    CHECK_CUDA(cudaEventRecord, end_event);
    CHECK_CUDA(cudaDeviceSynchronize);  // the end event is recorded asynchronously: wait for it
    float timeInMillisecs;
    CHECK_CUDA(cudaEventElapsedTime, &timeInMillisecs, start_event, end_event);
    std::cerr << "GPU time in ms: " << timeInMillisecs << std::endl;
    CHECK_CUDA(cudaEventDestroy, start_event);
    CHECK_CUDA(cudaEventDestroy, end_event);
}
