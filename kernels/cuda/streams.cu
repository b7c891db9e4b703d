// streams.cu: the vector jobs of the streams lectures, and the small kernels of the concurrency lesson.
// Each kernel the chronograms draw has a `_stamped` twin: the same body between stamp_start and
// stamp_end (stamps.cuh), which record when its blocks really ran.
#include "stamps.cuh"

// The French slides' (Vialle) chunked job: each element goes through `steps` multiply-adds, so the
// kernel's time can be set against the copies' time. fmaf makes the rounding explicit: the CPU
// reference uses the same fused multiply-add and gets the same bits.
__device__ void vector_work_body(const float* in, float* out, int n, int steps) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = in[i];
        for (int k = 0; k < steps; ++k) {
            x = fmaf(x, 0.999f, 0.001f);
        }
        out[i] = x;
    }
}

// The Korean notes' sample: adds In to Out five times.
__device__ void add_five_times_body(const int* in, int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        for (int k = 0; k < 5; ++k) {
            out[i] += in[i];
        }
    }
}

// The concurrency lesson's small kernel: every thread advances a linear congruential generator
// `steps` times from its seed. Dependent integer multiply-adds, no memory traffic in the loop, so the
// kernel's time is set by `steps` alone; the CPU checks each result in log2(steps) operations by
// jumping ahead.
__device__ void lcg_work_body(const unsigned* seeds, unsigned* out, int n, int steps) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        unsigned x = seeds[i];
        for (int k = 0; k < steps; ++k) {
            x = x * 1664525u + 1013904223u;
        }
        out[i] = x;
    }
}

extern "C" __global__ void vector_work(const float* in, float* out, int n, int steps) {
    vector_work_body(in, out, n, steps);
}
extern "C" __global__ void add_five_times(const int* in, int* out, int n) {
    add_five_times_body(in, out, n);
}
extern "C" __global__ void lcg_work(const unsigned* seeds, unsigned* out, int n, int steps) {
    lcg_work_body(seeds, out, n, steps);
}

extern "C" __global__ void vector_work_stamped(const float* in, float* out, int n, int steps, Stamp* stamp) {
    stamp_start(stamp);
    vector_work_body(in, out, n, steps);
    stamp_end(stamp);
}
extern "C" __global__ void add_five_times_stamped(const int* in, int* out, int n, Stamp* stamp) {
    stamp_start(stamp);
    add_five_times_body(in, out, n);
    stamp_end(stamp);
}
extern "C" __global__ void lcg_work_stamped(const unsigned* seeds, unsigned* out, int n, int steps, Stamp* stamp) {
    stamp_start(stamp);
    lcg_work_body(seeds, out, n, steps);
    stamp_end(stamp);
}
