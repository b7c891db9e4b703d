// streamed.hpp: mmm-streamed's loop, one stream per product (copy A and B in, kernel, copy C back),
// shared by mmm-streamed.cu (pageable memory) and mmm-streamed-and-pinned.cu (pinned memory).
#pragma once
#include "matrix.hpp"

static int run_streamed(int argc, char** argv, HostMemory memory, const char* label) {
    Batch batch(argc, argv, memory);
    std::vector<cudaStream_t> stream(batch.COUNT);
    for (unsigned int i = 0; i < batch.COUNT; ++i) CHECK_CUDA(cudaStreamCreate, &stream[i]);
    const Timing timing = time_gpu(batch.repetitions, [&] {
        for (unsigned int i = 0; i < batch.COUNT; ++i) {
            /* copy data to GPU */
            batch.A[i]->copy_to_gpu(stream[i]); batch.B[i]->copy_to_gpu(stream[i]);
            /* execute kernel on GPU */
            mmm<<<batch.grid, batch.block, 0, stream[i]>>>(*batch.A[i], *batch.B[i], *batch.C[i]);
            CHECK_LAUNCH();
            /* copy resulting data back to host */
            batch.C[i]->copy_from_gpu(stream[i]);
        }
        // The slide joins with cudaDeviceSynchronize here; the stop event on the NULL stream waits for
        // all (blocking) streams just the same, and time_gpu synchronizes before it reads the events.
    });
    print_time(label, timing);
    for (unsigned int i = 0; i < batch.COUNT; ++i) CHECK_CUDA(cudaStreamDestroy, stream[i]);
    return batch.check();
}
