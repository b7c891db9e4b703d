// near-the-time-limit.cu: an honest pipeline (week 5) that then keeps the GPU busy for 38% longer
// than the pipeline took, on purpose: its GPU time sits near the rule's 1.5x ours, inside the 15% at
// which the check measures a case again (issue 65). It should pass, the same way every time; it is
// kept out of honest/ until it does on a GPU (see this folder's README).
//
//   pipeline N NST STEPS INPUT OUTPUT     INPUT holds N float32; OUTPUT gets the N results
#include <vector>

#include "course_program.h"

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

// Waits on the GPU for `ns` nanoseconds of its global timer: work of a known length, and nothing else.
__global__ void spin(long long ns) {
    long long start, now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(start));
    do {
        asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    } while (now - start < ns);
}

// Chunk i of Nst covers [offset(i), offset(i + 1)), so the chunks differ by at most one float when Nst
// does not divide N. In 64 bits: i * N passes 2^31 long before N does.
long long offset(int i, int N, int Nst) { return (long long)i * N / Nst; }

int main(int argc, char** argv) {
    if (argc != 6) {
        std::fprintf(stderr, "usage: %s N NST STEPS INPUT OUTPUT\n", argv[0]);
        return 2;
    }
    const int N = (int)arg_int(argc, argv, 1, "N");
    const int Nst = (int)arg_int(argc, argv, 2, "NST");
    const int steps = (int)arg_int(argc, argv, 3, "STEPS");
    const size_t bytes = (size_t)N * sizeof(float);
    float *PtCPU, *PtResCPU, *PtGPU, *PtResGPU;
    CHECK_CUDA(cudaHostAlloc((void**)&PtCPU, bytes, cudaHostAllocDefault));
    CHECK_CUDA(cudaHostAlloc((void**)&PtResCPU, bytes, cudaHostAllocDefault));
    CHECK_CUDA(cudaMalloc((void**)&PtGPU, bytes));
    CHECK_CUDA(cudaMalloc((void**)&PtResGPU, bytes));
    read_floats(argv[4], PtCPU, N);

    // Both kernels loaded before anything is timed (CUDA loads a module at its first launch).
    spin<<<1, 1>>>(0);
    kernel<<<1, 1>>>(PtGPU, PtResGPU, 0, steps);
    CHECK_LAUNCH();
    CHECK_CUDA(cudaDeviceSynchronize());
    // The streams made before the clock starts: the NULL stream's events would count the host's time
    // to make them (run 3 of issue 65, with them inside: 14.41x ours on one stream).
    std::vector<cudaStream_t> Stream(Nst);
    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamCreate(&Stream[i]));
    cudaEvent_t began, ended;
    CHECK_CUDA(cudaEventCreate(&began));
    CHECK_CUDA(cudaEventCreate(&ended));
    CHECK_CUDA(cudaEventRecord(began, 0));  // the NULL stream: before every stream's work, and
    for (int i = 0; i < Nst; ++i) {  // copies in: while chunk i copies, chunk i - 1 may already compute
        const long long first = offset(i, N, Nst), size = offset(i + 1, N, Nst) - first;
        CHECK_CUDA(cudaMemcpyAsync(PtGPU + first, PtCPU + first, size * sizeof(float),
                                   cudaMemcpyHostToDevice, Stream[i]));
    }
    for (int i = 0; i < Nst; ++i) {  // kernels: each waits only for its own chunk's copy, in its stream
        const long long first = offset(i, N, Nst), size = offset(i + 1, N, Nst) - first;
        kernel<<<(int)((size + BSX - 1) / BSX), BSX, 0, Stream[i]>>>(PtGPU + first, PtResGPU + first, (int)size, steps);
        CHECK_LAUNCH();
    }
    for (int i = 0; i < Nst; ++i) {  // copies back
        const long long first = offset(i, N, Nst), size = offset(i + 1, N, Nst) - first;
        CHECK_CUDA(cudaMemcpyAsync(PtResCPU + first, PtResGPU + first, size * sizeof(float),
                                   cudaMemcpyDeviceToHost, Stream[i]));
    }
    CHECK_CUDA(cudaEventRecord(ended, 0));  // after it
    // Every call above returned at once: the results are in PtResCPU only once every stream is done.
    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamSynchronize(Stream[i]));
    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamDestroy(Stream[i]));
    // 38% more than the pipeline took on the GPU.
    float took_ms = 0;
    CHECK_CUDA(cudaEventElapsedTime(&took_ms, began, ended));
    spin<<<1, 1>>>((long long)(0.38 * took_ms * 1e6));
    CHECK_LAUNCH();
    CHECK_CUDA(cudaDeviceSynchronize());

    write_floats(argv[5], PtResCPU, N);
    CHECK_CUDA(cudaFree(PtGPU));
    CHECK_CUDA(cudaFree(PtResGPU));
    CHECK_CUDA(cudaFreeHost(PtCPU));
    CHECK_CUDA(cudaFreeHost(PtResCPU));
    std::printf("pipeline: %d floats, %d streams, %d steps: done\n", N, Nst, steps);
    return 0;
}
