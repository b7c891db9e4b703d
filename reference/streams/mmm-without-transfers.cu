// mmm-without-transfers.cu (German table): only the COUNT kernels, the matrices copied once before
// timing and C once after: the lower bound for the other programs. Beside: lab-streams --mode mmm.
#include "matrix.hpp"

int main(int argc, char** argv) {
    Batch batch(argc, argv, Pageable);
    for (unsigned int i = 0; i < batch.COUNT; ++i) batch.A[i]->copy_to_gpu(), batch.B[i]->copy_to_gpu();
    const Timing timing = time_gpu(batch.repetitions, [&] {
        for (unsigned int i = 0; i < batch.COUNT; ++i) {
            mmm<<<batch.grid, batch.block>>>(*batch.A[i], *batch.B[i], *batch.C[i]);
            CHECK_LAUNCH();
        }
    });
    print_time("mmm-without-transfers ", timing);
    for (unsigned int i = 0; i < batch.COUNT; ++i) batch.C[i]->copy_from_gpu();
    return batch.check();
}
