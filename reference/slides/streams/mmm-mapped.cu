// mmm-mapped.cu, German slides (000, mapped memory: the program run under nvprof after the
// "mapped-matrix.hpp" slide; the slide printed "GPU time in ms: 3047.22"). mmm-streamed.cu with
// mapped-matrix.hpp instead of matrix.hpp: A, B and C live in mapped host memory (cudaHostAlloc with
// cudaHostAllocMapped), copy_to_gpu and copy_from_gpu copy nothing, and each stream's kernel reads A
// and B and writes C across the bus (nvprof lists kernels only). `diff mmm-streamed.cu mmm-mapped.cu`
// shows only the header and these lines.
// The timing is the slides' events slide around the mmm-streamed slide's code: the start event, the
// loop, which creates each stream as it goes and ends with cudaDeviceSynchronize (the join), then the
// end event; one run.
// Sizes: N = 1024, COUNT = 10, compile-time constants as on the slides (products.cuh says why).
// Added: each launch's own error is checked (cudaGetLastError), so a failed launch exits with 1.
#include <iostream>

#include "mapped-matrix.hpp"
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
