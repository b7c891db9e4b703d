// dgemm_common.h: what dgemm_kernels.cu (built locally) and dgemm_main.cu (built with cuBLAS) share.
#pragma once
#include <cuda_runtime.h>

template <typename T>
struct MatrixView {
    int rows;
    int cols;
    T* data;
    __host__ __device__ T& operator()(int i, int j) const { return data[(size_t)i * cols + j]; }
};

template <int N>
struct Int {
    static constexpr int value = N;
};

struct Variant {
    const char* name;
    void (*launch)(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c, cudaStream_t stream);
    const void* (*func)();  // the kernel, for cudaFuncGetAttributes
    int shared_bytes;
};

const Variant* variants(int* count);
