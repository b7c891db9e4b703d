// streams.cu: the vector jobs of the streams lectures.

// The French slides' (Vialle) chunked job: each element goes through `steps` multiply-adds, so the
// kernel's time can be set against the copies' time. fmaf makes the rounding explicit: the CPU
// reference uses the same fused multiply-add and gets the same bits.
extern "C" __global__ void vector_work(const float* in, float* out, int n, int steps) {
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
extern "C" __global__ void add_five_times(const int* in, int* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        for (int k = 0; k < 5; ++k) {
            out[i] += in[i];
        }
    }
}
