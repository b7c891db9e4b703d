// streamed.hpp: mmm-streamed's loop, one stream per product (copy A and B in, kernel, copy C back),
// shared by mmm-streamed.cu (pageable memory), mmm-streamed-and-pinned.cu (pinned memory) and
// mmm-mapped.cu (mapped memory, where the copies do nothing: mapped-matrix.hpp on the slides).
#pragma once
#include "matrix.hpp"

// The streamed loop, timed (one warm-up, then batch.repetitions runs).
static Timing time_streamed(Batch& batch, const std::vector<cudaStream_t>& stream) {
    return time_gpu(batch.repetitions, [&] {
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
}

static std::vector<cudaStream_t> create_streams(unsigned int count) {
    std::vector<cudaStream_t> stream(count);
    for (cudaStream_t& s : stream) CHECK_CUDA(cudaStreamCreate, &s);
    return stream;
}

static void destroy_streams(std::vector<cudaStream_t>& stream) {
    for (cudaStream_t s : stream) CHECK_CUDA(cudaStreamDestroy, s);
}

static int run_streamed(int argc, char** argv, HostMemory memory, const char* label) {
    Batch batch(argc, argv, memory);
    std::vector<cudaStream_t> stream = create_streams(batch.COUNT);
    print_time(label, time_streamed(batch, stream));
    destroy_streams(stream);
    return batch.check();
}
