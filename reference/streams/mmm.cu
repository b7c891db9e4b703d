// mmm.cu (German table, first row): COUNT products one after the other, each copied in, computed and
// copied back on the NULL stream, from pageable memory. Beside: lab-streams --mode mmm, row mmm.
#include "matrix.hpp"

int main(int argc, char** argv) {
    Batch batch(argc, argv, Pageable);
    const Timing timing = time_gpu(batch.repetitions, [&] {
        for (unsigned int i = 0; i < batch.COUNT; ++i) {
            batch.A[i]->copy_to_gpu(); batch.B[i]->copy_to_gpu();
            mmm<<<batch.grid, batch.block>>>(*batch.A[i], *batch.B[i], *batch.C[i]);
            CHECK_LAUNCH();
            batch.C[i]->copy_from_gpu();
        }
    });
    print_time("mmm                   ", timing);
    return batch.check();
}
