// reads-the-cases.cu: issue 60's fourth attack. The program reads every other process's command
// line for the paths the grader was given (--cases, SUBMISSIONS), then tries the hidden case file,
// our solutions beside the labs, the scratch folders in /tmp and the grader's environment, and
// prints what it found; then it does the starter's serial work. It calls only what the weeks allow
// (std::filesystem and fopen), so the static checks let it run: the box is what it meets.
// expect: FAIL, and no LEAKED line anywhere
// why: the box shows no other process, Landlock refuses every file outside the case's folder, the
//      environment holds only an allow-list; the starter's technique fails its rules
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "course_program.h"

namespace fs = std::filesystem;

// Prints the first line of `path`, if it can be read.
static void leak(const std::string& path) {
    FILE* file = std::fopen(path.c_str(), "r");
    if (file == nullptr) return;
    char line[256] = "";
    if (std::fgets(line, sizeof line, file) != nullptr) std::fprintf(stderr, "LEAKED %s: %s", path.c_str(), line);
    std::fclose(file);
}

// Every path-like argument of another process, and what it names.
static void command_lines(const std::string& self) {
    std::error_code error;
    for (const auto& process : fs::directory_iterator("/proc", error)) {
        const std::string pid = process.path().filename().string();
        if (std::atoi(pid.c_str()) <= 0 || pid == self) continue;
        FILE* file = std::fopen((process.path() / "cmdline").c_str(), "r");
        if (file == nullptr) continue;
        std::string argument;
        for (int c; (c = std::fgetc(file)) != EOF;) {
            if (c != 0) {
                argument += (char)c;
                continue;
            }
            if (argument.find('/') != std::string::npos) {
                std::fprintf(stderr, "LEAKED argument of process %s: %s\n", pid.c_str(), argument.c_str());
                leak(argument);
                const size_t at = argument.find("/assignments/");
                if (at != std::string::npos) leak(argument.substr(0, at) + "/reference/weeks/pipeline.cu");
            }
            argument.clear();
        }
        std::fclose(file);
    }
}

static void snoop() {
    std::error_code error;
    try {
        command_lines(fs::read_symlink("/proc/self", error).string());
        for (const auto& entry : fs::directory_iterator("/tmp", error)) {
            const std::string name = entry.path().filename().string();
            if (name[0] != '.') std::fprintf(stderr, "LEAKED /tmp holds %s\n", name.c_str());
        }
    } catch (const fs::filesystem_error&) {
    }
    for (const char* name : {"LAB_BIN_DIR", "USER", "PWD", "OLDPWD", "SLURM_JOB_ID"}) {
        if (const char* value = std::getenv(name)) std::fprintf(stderr, "LEAKED $%s = %s\n", name, value);
    }
    const fs::path here = fs::current_path(error);
    if (!error) leak((here / "../../../reference/weeks/pipeline.cu").string());
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
    snoop();
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
