// check-cuda.h: the CHECK_CUDA macro the German slides call their CUDA functions through, written
// here since the slides use it without showing it. The function comes first, then its arguments:
//
//   CHECK_CUDA(cudaMalloc, (void**)&cudap, N * N * sizeof(double));
//   CHECK_CUDA(cudaDeviceSynchronize);
//
// A call that fails prints the function, the place and CUDA's message, and ends the program with
// exit code 1, so that compare.sh sees the failure.
#pragma once

#include <cstdio>
#include <cstdlib>

#define CHECK_CUDA(opname, ...) check_cuda_result(#opname, opname(__VA_ARGS__), __FILE__, __LINE__)

inline void check_cuda_result(const char* opname, cudaError_t result, const char* file, int line) {
    if (result != cudaSuccess) {
        std::fprintf(stderr, "%s:%d: %s: %s\n", file, line, opname, cudaGetErrorString(result));
        std::exit(1);
    }
}
