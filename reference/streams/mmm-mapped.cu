// mmm-mapped.cu (German table): the matrices in mapped host memory (cudaHostAlloc with
// cudaHostAllocMapped); the kernels read A and B and write C across the bus, no copies at all.
// Beside: lab-mapped, row mmm-mapped.
#include "matrix.hpp"

int main(int argc, char** argv) {
    Batch batch(argc, argv, Mapped);
    const Timing timing = time_gpu(batch.repetitions, [&] {
        for (unsigned int i = 0; i < batch.COUNT; ++i) {
            mmm<<<batch.grid, batch.block>>>(*batch.A[i], *batch.B[i], *batch.C[i]);
            CHECK_LAUNCH();
        }
    });
    print_time("mmm-mapped            ", timing);
    CHECK_CUDA(cudaDeviceSynchronize);
    return batch.check();
}
