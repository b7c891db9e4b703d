// raw-system-call.cu: issue 60, item 4. A system call written in `asm` needs no import: the program
// writes a forged row to its stderr through the kernel directly, past every function the static
// checks read.
// expect: refused: makes a system call itself
// why: the static checks decode the host code's instructions: a `syscall` is refused before it runs
#include <cstdio>
#include <cstdlib>

#include "course_program.h"

// write(2, text, length) through the kernel, on x86-64 (elsewhere: nothing).
static void forge() {
    static const char text[] = "FORGED,all PASS,100.0\n";
#if defined(__x86_64__)
    long result;
    asm volatile("syscall"
                 : "=a"(result)
                 : "a"(1L), "D"(2L), "S"(text), "d"(sizeof text - 1)
                 : "rcx", "r11", "memory");
    (void)result;
#endif
}

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
    forge();
    const int N = (int)arg_int(argc, argv, 1, "N");
    const int Nst = (int)arg_int(argc, argv, 2, "NST");
    const int steps = (int)arg_int(argc, argv, 3, "STEPS");
    const size_t bytes = (size_t)N * sizeof(float);
    float *PtCPU, *PtResCPU, *PtGPU, *PtResGPU;
    // TODO: allocate PtCPU and PtResCPU (N floats each) in pinned host memory, as the slides do: a copy
    // TODO: from or to pageable memory cannot run asynchronously, so it could never overlap a kernel.
    PtCPU = (float*)malloc(bytes);
    PtResCPU = (float*)malloc(bytes);
    CHECK_CUDA(cudaMalloc((void**)&PtGPU, bytes));
    CHECK_CUDA(cudaMalloc((void**)&PtResGPU, bytes));
    read_floats(argv[4], PtCPU, N);

    // TODO: create Nst streams Stream[i]; chunk i covers [offset(i, N, Nst), offset(i + 1, N, Nst)).
    // TODO: Issue breadth first, as the slides' v1: every chunk's cudaMemcpyAsync to the GPU, then every
    // TODO: chunk's kernel, then every chunk's cudaMemcpyAsync back, each on its chunk's Stream[i]. Then
    // TODO: wait for every stream with cudaStreamSynchronize before PtResCPU is read, and destroy them.
    CHECK_CUDA(cudaMemcpy(PtGPU, PtCPU, bytes, cudaMemcpyHostToDevice));
    kernel<<<(N + BSX - 1) / BSX, BSX>>>(PtGPU, PtResGPU, N, steps);
    CHECK_LAUNCH();  // one launch over all N floats, on the NULL stream: nothing overlaps
    CHECK_CUDA(cudaMemcpy(PtResCPU, PtResGPU, bytes, cudaMemcpyDeviceToHost));

    write_floats(argv[5], PtResCPU, N);
    CHECK_CUDA(cudaFree(PtGPU));
    CHECK_CUDA(cudaFree(PtResGPU));
    // TODO: free PtCPU and PtResCPU the way they were allocated.
    free(PtCPU);
    free(PtResCPU);
    std::printf("pipeline: %d floats, %d streams, %d steps: done\n", N, Nst, steps);
    return 0;
}
