// An honest submission (issue 61's corpus): the wait by polling: cudaStreamQuery on each stream until it no longer answers cudaErrorNotReady.
// expect: PASS
// Made from reference/weeks/pipeline.cu by `cargo run -p grading --bin templates` (assignments/README.md).

// pipeline.cu: week 5 as a graded program, the French slides' (Vialle) chunked pipeline. N floats go
// to the GPU, through STEPS fused multiply-adds each, and back, cut into NST chunks on NST streams so
// that one chunk's copies can run while another chunk's kernel does.
//
//   pipeline N NST STEPS INPUT OUTPUT     INPUT holds N float32; OUTPUT gets the N results
//
// The checker compares OUTPUT with its own CPU result, and reads the CUDA activity the program made:
// copies from pinned memory, NST streams, and copies overlapping kernels.
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

    std::vector<cudaStream_t> Stream(Nst);
    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamCreate(&Stream[i]));
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
    // Every call above returned at once: the results are in PtResCPU only once every stream is done.
    for (int i = 0; i < Nst; ++i) {  // asks until stream i's work is done
        cudaError_t state;
        while ((state = cudaStreamQuery(Stream[i])) == cudaErrorNotReady) {
        }
        CHECK_CUDA(state);
    }
    for (int i = 0; i < Nst; ++i) CHECK_CUDA(cudaStreamDestroy(Stream[i]));

    write_floats(argv[5], PtResCPU, N);
    CHECK_CUDA(cudaFree(PtGPU));
    CHECK_CUDA(cudaFree(PtResGPU));
    CHECK_CUDA(cudaFreeHost(PtCPU));
    CHECK_CUDA(cudaFreeHost(PtResCPU));
    std::printf("pipeline: %d floats, %d streams, %d steps: done\n", N, Nst, steps);
    return 0;
}
