// Diagnostic: why the lab's cold mmm-streamed is slower than the slides' program.
#include <iostream>
#include <cstring>
#include <sys/mman.h>
#include "matrix.hpp"
#include "products.cuh"

static void fresh(SquareMatrix<double>* C) {
    for (unsigned i = 0; i < COUNT; ++i) {
        size_t page = 4096, start = ((size_t)C[i].data + page - 1) / page * page;
        size_t end = ((size_t)C[i].data + C[i].get_size()) / page * page;
        madvise((void*)start, end - start, MADV_DONTNEED);
    }
}

int main(int argc, char** argv) {
    const char* mode = argv[1];
    SquareMatrix<double> A[COUNT], B[COUNT], C[COUNT];
    prepare_matrices(A, B, C);
    dim3 block(BLOCK_SIZE, BLOCK_SIZE), grid(N / BLOCK_SIZE, N / BLOCK_SIZE);
    bool pre = strcmp(mode, "plain") != 0;
    bool forkjoin = !strcmp(mode, "forkjoin") || !strcmp(mode, "serialfirst");
    cudaStream_t stream[COUNT], main_stream = 0;
    cudaEvent_t forked, done[COUNT];
    if (pre) for (unsigned i = 0; i < COUNT; ++i) cudaStreamCreate(&stream[i]);
    if (forkjoin) {
        cudaStreamCreate(&main_stream);
        cudaEventCreateWithFlags(&forked, cudaEventDisableTiming);
        for (unsigned i = 0; i < COUNT; ++i) cudaEventCreateWithFlags(&done[i], cudaEventDisableTiming);
    }
    if (!strcmp(mode, "serialfirst")) {
        for (unsigned i = 0; i < COUNT; ++i) {
            A[i].copy_to_gpu(); B[i].copy_to_gpu();
            mmm<<<grid, block>>>(A[i], B[i], C[i]);
            C[i].copy_from_gpu();
        }
        cudaDeviceSynchronize();
        for (unsigned i = 0; i < COUNT; ++i) memset(C[i].data, 0xff, C[i].get_size());
        fresh(C);
    }
    cudaEvent_t s, e; cudaEventCreate(&s); cudaEventCreate(&e);
    cudaEventRecord(s, main_stream);
    if (forkjoin) { cudaEventRecord(forked, main_stream); }
    for (unsigned i = 0; i < COUNT; ++i) {
        if (!pre) cudaStreamCreate(&stream[i]);
        if (forkjoin) cudaStreamWaitEvent(stream[i], forked, 0);
        A[i].copy_to_gpu(stream[i]); B[i].copy_to_gpu(stream[i]);
        mmm<<<grid, block, 0, stream[i]>>>(A[i], B[i], C[i]);
        C[i].copy_from_gpu(stream[i]);
    }
    if (forkjoin) {
        for (unsigned i = 0; i < COUNT; ++i) { cudaEventRecord(done[i], stream[i]); cudaStreamWaitEvent(main_stream, done[i], 0); }
        cudaEventRecord(e, main_stream);
    } else {
        cudaDeviceSynchronize();
        cudaEventRecord(e, 0);
    }
    cudaDeviceSynchronize();
    float ms; cudaEventElapsedTime(&ms, s, e);
    printf("%s %.3f\n", mode, ms);
}
