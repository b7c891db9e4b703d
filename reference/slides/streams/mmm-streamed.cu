// mmm-streamed.cu, German slides (000, streams: the "mmm-streamed.cu" slide and the third program of
// the nvprof table; the slide printed "GPU time in ms: 1850.16"). The COUNT products of mmm.cu, each
// on its own stream (fork and join): A[i] and B[i] copied to the GPU, the kernel, C[i] copied back,
// all queued on stream[i]. From pageable host memory (matrix.hpp) a copy holds the host until the
// driver has staged its data, so little overlaps: the slides' point before pinned memory.
// The timing is the slides' events slide around the mmm-streamed slide's code: the start event, the
// loop, which creates each stream as it goes and ends with cudaDeviceSynchronize (the join), then the
// end event; one run.
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
    cudaStream_t stream[COUNT];
    for (unsigned int i = 0; i < COUNT; ++i) {
        CHECK_CUDA(cudaStreamCreate, &stream[i]);
        /* A and B to the GPU */
        A[i].copy_to_gpu(stream[i]); B[i].copy_to_gpu(stream[i]);
        /* their product on the GPU */
        mmm<<<grid, block, 0, stream[i]>>>(A[i], B[i], C[i]);
        CHECK_CUDA(cudaGetLastError);  // not on the slides: a launch reports its own errors only here
        /* C back to the host */
        C[i].copy_from_gpu(stream[i]);
    }
    CHECK_CUDA(cudaDeviceSynchronize);  // the join: every stream has finished
    CHECK_CUDA(cudaEventRecord, end_event);
    CHECK_CUDA(cudaDeviceSynchronize);  // the end event is recorded asynchronously: wait for it
    float timeInMillisecs;
    CHECK_CUDA(cudaEventElapsedTime, &timeInMillisecs, start_event, end_event);
    std::cerr << "GPU time in ms: " << timeInMillisecs << std::endl;
    CHECK_CUDA(cudaEventDestroy, start_event);
    CHECK_CUDA(cudaEventDestroy, end_event);
    for (unsigned int i = 0; i < COUNT; ++i) {
        CHECK_CUDA(cudaStreamDestroy, stream[i]);  // not on the slides, which end at the join
    }
}
