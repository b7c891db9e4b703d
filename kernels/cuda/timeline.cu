// timeline.cu: the chronograms' clock. The recorder launches this once at its origin, so the stamps of
// the kernels (stamps.cuh) can be placed on the same axis as the events around the copies.
#include "stamps.cuh"

extern "C" __global__ void read_global_timer(unsigned long long* now) {
    *now = global_timer();
}
