// registers.cu: one kernel that wants more registers than the tighter caps give it (lab-memory
// --mode registers). build.rs compiles it once per cap (-maxrregcount=16, 24, 32, 64) and once without:
// below what the kernel needs, ptxas spills the rest to local memory (DRAM, cached in L1 and L2).

#define LIVE 32

// Each thread keeps LIVE floats live across the whole loop: acc[j] = (acc[j] * acc[j+1] + acc[j+5]) / 4
// + 1/2, in place, j = 0 .. LIVE-1 (indices wrap). With |acc| <= 1 the values stay within [-1, 1].
extern "C" __global__ void register_pressure(const float* in, float* out, int n, int rounds) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) {
        return;
    }
    float acc[LIVE];
#pragma unroll
    for (int j = 0; j < LIVE; ++j) {
        acc[j] = in[(size_t)j * n + i];
    }
    for (int r = 0; r < rounds; ++r) {
#pragma unroll
        for (int j = 0; j < LIVE; ++j) {
            acc[j] = fmaf(fmaf(acc[j], acc[(j + 1) % LIVE], acc[(j + 5) % LIVE]), 0.25f, 0.5f);
        }
    }
    float sum = 0.0f;
#pragma unroll
    for (int j = 0; j < LIVE; ++j) {
        sum += acc[j];
    }
    out[i] = sum;
}
