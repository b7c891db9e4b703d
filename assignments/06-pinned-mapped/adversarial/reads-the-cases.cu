// reads-the-cases.cu: issue 60's fourth attack as it was tried on week 6: the program reads every
// other process's command line for the paths the grader was given (--cases, SUBMISSIONS), then the
// hidden case file, our solution beside the labs, the scratch folders in /tmp and the grader's
// environment, and prints what it found; then it does the starter's work (device buffers and
// copies). It calls only what the weeks allow (std::filesystem and fopen): the box is what it meets.
// expect: FAIL, and no LEAKED line anywhere
// why: the box shows no other process, Landlock refuses every file outside the case's folder, the
//      environment holds only an allow-list; the starter's copies fail the rule that there be none
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
                if (at != std::string::npos) leak(argument.substr(0, at) + "/reference/weeks/zero_copy.cu");
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
    if (!error) leak((here / "../../../reference/weeks/zero_copy.cu").string());
}
#define BSX 256

__global__ void vectorAdd(const float* A, const float* B, float* C, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) C[i] = A[i] + B[i];
}

int main(int argc, char** argv) {
    if (argc != 4) {
        std::fprintf(stderr, "usage: %s N INPUT OUTPUT\n", argv[0]);
        return 2;
    }
    snoop();
    const int N = (int)arg_int(argc, argv, 1, "N");
    const size_t bytes = (size_t)N * sizeof(float);
    const int blocks = (N + BSX - 1) / BSX;
    float *A, *B, *C;  // A and B share one allocation, laid out as in INPUT, so one read fills both
    // TODO: allocate A (2N floats: A, then B) and C (N floats) as mapped host memory, which the GPU
    // TODO: can reach across the bus: cudaHostAlloc with the flag cudaHostAllocMapped.
    A = (float*)malloc(2 * bytes);
    C = (float*)malloc(bytes);
    B = A + N;
    read_floats(argv[2], A, 2 * (size_t)N);

    // TODO: launch vectorAdd on A, B and C where they are: the kernel needs their device addresses,
    // TODO: which cudaHostGetDevicePointer gives for mapped memory. No cudaMalloc, no cudaMemcpy.
    float *gpu_A, *gpu_B, *gpu_C;
    CHECK_CUDA(cudaMalloc((void**)&gpu_A, bytes));
    CHECK_CUDA(cudaMalloc((void**)&gpu_B, bytes));
    CHECK_CUDA(cudaMalloc((void**)&gpu_C, bytes));
    CHECK_CUDA(cudaMemcpy(gpu_A, A, bytes, cudaMemcpyHostToDevice));
    CHECK_CUDA(cudaMemcpy(gpu_B, B, bytes, cudaMemcpyHostToDevice));
    vectorAdd<<<blocks, BSX>>>(gpu_A, gpu_B, gpu_C, N);
    CHECK_LAUNCH();

    // TODO: wait for the kernel before the host reads C (written in place: nothing to copy back).
    CHECK_CUDA(cudaMemcpy(C, gpu_C, bytes, cudaMemcpyDeviceToHost));
    CHECK_CUDA(cudaFree(gpu_A));
    CHECK_CUDA(cudaFree(gpu_B));
    CHECK_CUDA(cudaFree(gpu_C));
    write_floats(argv[3], C, N);

    // TODO: free A and C the way they were allocated.
    free(A);
    free(C);
    std::printf("zero_copy: %d floats added: done\n", N);
    return 0;
}
