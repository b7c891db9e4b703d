// mapped-matrix.hpp: matrix.hpp's SquareMatrix<T> in host memory mapped into the GPU's address space
// (German slides, 000, mapped memory: the "mapped-matrix.hpp" slide, allocate_data with cudaHostAlloc
// and cudaHostAllocMapped, allocate_cuda_data with cudaHostGetDevicePointer). A kernel reads and
// writes the host memory across the bus; copy_to_gpu and copy_from_gpu copy nothing, as the slide
// says. Everything else is as in matrix.hpp.
//
// No cudaSetDeviceFlags(cudaDeviceMapHost) first: with unified addressing (every 64-bit system CUDA 13
// runs on) cudaHostAllocMapped memory is mapped without it.
#pragma once

#include <cassert>
#include <cstddef>

#include "../check-cuda.h"

template<typename T>
class SquareMatrix {
public:
    unsigned int N;
    T* data;       // in the CPU's address space
    T* cuda_data;  // in the GPU's
    bool cloned;   // a copy (a kernel argument): frees nothing

    SquareMatrix() : N(0), data(0), cuda_data(0), cloned(false) {
    }
    SquareMatrix(const SquareMatrix& other)
        : N(other.N), data(other.data), cuda_data(other.cuda_data), cloned(true) {
    }
    SquareMatrix& operator=(const SquareMatrix&) = delete;  // would share memory without `cloned`
    ~SquareMatrix() {
        if (!cloned) {
            release_data();
            release_cuda_data();
        }
    }

    // An N x N matrix with host memory, not yet on the GPU.
    void resize(unsigned int N_) {
        release_data(); release_cuda_data();
        N = N_;
        allocate_data();
    }
    std::size_t get_size() const {
        return (std::size_t)N * N * sizeof(T);
    }

    void allocate_data() {
        if (!data) {
            CHECK_CUDA(cudaHostAlloc, (void**)&data, get_size(), cudaHostAllocMapped);
        }
    }
    void release_data() {
        if (data) {
            CHECK_CUDA(cudaFreeHost, data);
            data = 0;
        }
    }
    void allocate_cuda_data() {
        /* allocates nothing: the GPU's address of the mapped host memory */
        if (!cuda_data) {
            allocate_data();
            CHECK_CUDA(cudaHostGetDevicePointer, (void**)&cuda_data, (void*)data, 0);
        }
    }
    void release_cuda_data() {
        cuda_data = 0;  // nothing of its own on the GPU: release_data frees the memory
    }

    // No transfers: the kernel reaches the host memory itself. The stream stays in the signature, so
    // that mmm-mapped.cu is mmm-streamed.cu with another header.
    void copy_to_gpu(cudaStream_t = 0) {
        assert(data); allocate_cuda_data();
    }
    void copy_from_gpu(cudaStream_t = 0) {
        assert(cuda_data);
    }

    __device__ __host__ T& operator()(unsigned int i, unsigned int j) {
#ifdef __CUDA_ARCH__
        return cuda_data[i * N + j];
#else
        return data[i * N + j];
#endif
    }
};
