// pipeline.cu: the French slides' (Vialle) overlap of transfers and computation. One job of N floats
// cut into Nst chunks on Nst streams, NVIDIA's way: first every chunk's copy to the GPU, then every
// chunk's kernel, then every chunk's copy back; the host then waits per stream (v1,
// cudaStreamSynchronize) or for the device (v2, cudaDeviceSynchronize). Pinned memory (cudaHostAlloc),
// as the slides require for asynchronous copies.
//
//   pipeline [N [STEPS [REPETITIONS]]]     defaults 2^24 floats, 2000 steps, 3: lab-streams' defaults
//
// Beside: lab-streams --mode chunked. Host time, since how the host waits is part of the lesson.
#include "../check.h"

#define BSX 256

// out[i] = in[i] after `steps` fused multiply-adds: enough work per element to weigh against the copies.
__global__ void kernel(const float* in, float* out, int n, int steps) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float x = in[i];
        for (int k = 0; k < steps; ++k) x = fmaf(x, 0.999f, 0.001f);
        out[i] = x;
    }
}

int main(int argc, char** argv) {
    const int N = (int)argument(argc, argv, 1, 1 << 24);
    const int steps = (int)argument(argc, argv, 2, 2000);
    const int repetitions = (int)argument(argc, argv, 3, 3);
    float *PtCPU, *PtResCPU, *PtGPU, *PtResGPU;
    CHECK_CUDA(cudaHostAlloc, (void**)&PtCPU, N * sizeof(float), cudaHostAllocDefault);
    CHECK_CUDA(cudaHostAlloc, (void**)&PtResCPU, N * sizeof(float), cudaHostAllocDefault);
    CHECK_CUDA(cudaMalloc, (void**)&PtGPU, N * sizeof(float));
    CHECK_CUDA(cudaMalloc, (void**)&PtResGPU, N * sizeof(float));
    Random random(1);
    for (int i = 0; i < N; ++i) PtCPU[i] = (float)random.uniform(-1, 1);
    std::printf("Chunked pipeline: %d floats (%d MiB each way), %d fused multiply-adds each, pinned host memory\n\n", N,
                (int)((N * sizeof(float)) >> 20), steps);
    std::printf("| streams | synchronize | host time in ms | speedup over 1 stream | check |\n");
    std::printf("|---------|-------------|-----------------|-----------------------|-------|\n");
    bool pass = true;
    for (int v = 1; v <= 2; ++v) {
        double one_stream_ms = 0;
        for (int Nst = 1; Nst <= 16; Nst *= 2) {
            std::vector<cudaStream_t> Stream(Nst);
            for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamCreate, &Stream[i]);
            // Chunk i starts at i * (N / Nst) and holds N / Nst floats, as on the slides, which assume Nst | N;
            // the last one also takes the N % Nst left over (offset(Nst) is N).
            auto offset = [&](int i) { return i == Nst ? N : i * (N / Nst); };
            for (int i = 0; i < N; ++i) PtResCPU[i] = NAN;
            const Timing timing = time_host(repetitions, [&] {
                for (int i = 0; i < Nst; ++i) {
                    const int size = offset(i + 1) - offset(i);
                    CHECK_CUDA(cudaMemcpyAsync, PtGPU + offset(i), PtCPU + offset(i), size * sizeof(float),
                               cudaMemcpyHostToDevice, Stream[i]);
                }
                for (int i = 0; i < Nst; ++i) {
                    const int size = offset(i + 1) - offset(i);
                    kernel<<<(size + BSX - 1) / BSX, BSX, 0, Stream[i]>>>(PtGPU + offset(i), PtResGPU + offset(i), size, steps);
                    CHECK_LAUNCH();
                }
                for (int i = 0; i < Nst; ++i) {
                    const int size = offset(i + 1) - offset(i);
                    CHECK_CUDA(cudaMemcpyAsync, PtResCPU + offset(i), PtResGPU + offset(i), size * sizeof(float),
                               cudaMemcpyDeviceToHost, Stream[i]);
                }
                if (v == 1) {
                    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamSynchronize, Stream[i]);
                } else {
                    CHECK_CUDA(cudaDeviceSynchronize);
                }
            });
            // Every element written (no NaN left), and at every 4099th the CPU's fused multiply-adds give
            // the same bits.
            int wrong = 0;
            for (int i = 0; i < N; ++i) wrong += PtResCPU[i] != PtResCPU[i];
            for (int i = 0; i < N; i += 4099) {
                float x = PtCPU[i];
                for (int k = 0; k < steps; ++k) x = std::fmaf(x, 0.999f, 0.001f);
                wrong += PtResCPU[i] != x;
            }
            pass = pass && wrong == 0;
            if (Nst == 1) one_stream_ms = timing.median();
            std::printf("| %d | %s | %.3f | %.2fx | %s |\n", Nst, v == 1 ? "PerStream" : "Device", timing.median(),
                        one_stream_ms / timing.median(), wrong ? "FAIL" : "PASS");
            for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamDestroy, Stream[i]);
        }
    }
    CHECK_CUDA(cudaFreeHost, PtCPU); CHECK_CUDA(cudaFreeHost, PtResCPU);
    CHECK_CUDA(cudaFree, PtGPU); CHECK_CUDA(cudaFree, PtResGPU);
    return print_result(pass);
}
