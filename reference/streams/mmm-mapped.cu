// mmm-mapped.cu (German table): mmm-streamed with the matrices in mapped host memory (cudaHostAlloc with
// cudaHostAllocMapped, mapped-matrix.hpp on the slides): copy_to_gpu and copy_from_gpu do nothing, so
// each product's kernel, on its own stream, reads A and B and writes C across the bus.
// Then, as a contrast, the same kernels one after the other on one stream (the NULL stream).
// Beside: lab-mapped, rows mmm-mapped and mmm-mapped (one stream).
#include "streamed.hpp"

int main(int argc, char** argv) {
    Batch batch(argc, argv, Mapped);
    std::vector<cudaStream_t> stream = create_streams(batch.COUNT);
    print_time("mmm-mapped              ", time_streamed(batch, stream));
    bool pass = batch.passed();
    batch.poison();
    const Timing one_stream = time_gpu(batch.repetitions, [&] {
        for (unsigned int i = 0; i < batch.COUNT; ++i) {
            mmm<<<batch.grid, batch.block>>>(*batch.A[i], *batch.B[i], *batch.C[i]);
            CHECK_LAUNCH();
        }
    });
    print_time("mmm-mapped (one stream) ", one_stream);
    pass = batch.passed() && pass;
    destroy_streams(stream);
    return print_result(pass);
}
