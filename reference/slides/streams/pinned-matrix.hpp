// pinned-matrix.hpp: matrix.hpp's SquareMatrix<T> with host memory that cannot be paged out (German
// slides, 000, pinned memory: the "pinned-matrix.hpp" slide, allocate_data and release_data with
// cudaMallocHost and cudaFreeHost). The copy engine reads and writes such memory directly, so a
// stream's copies run while other streams' kernels do. Everything else is as in matrix.hpp.
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
            CHECK_CUDA(cudaMallocHost, (void**)&data, get_size());
        }
    }
    void release_data() {
        if (data) {
            CHECK_CUDA(cudaFreeHost, data);
            data = 0;
        }
    }
    void allocate_cuda_data() {
        if (!cuda_data) {
            CHECK_CUDA(cudaMalloc, (void**)&cuda_data, get_size());
        }
    }
    void release_cuda_data() {
        if (cuda_data) {
            CHECK_CUDA(cudaFree, cuda_data);
            cuda_data = 0;
        }
    }

    // Queued on `stream`: from pinned memory the copy engine moves the data and the host goes on.
    void copy_to_gpu(cudaStream_t stream = 0) {
        assert(data); allocate_cuda_data();
        CHECK_CUDA(cudaMemcpyAsync, cuda_data, data, get_size(), cudaMemcpyHostToDevice, stream);
    }
    void copy_from_gpu(cudaStream_t stream = 0) {
        assert(cuda_data); if (!data) allocate_data();  // slide: data = new T[N * N]
        CHECK_CUDA(cudaMemcpyAsync, data, cuda_data, get_size(), cudaMemcpyDeviceToHost, stream);
    }

    __device__ __host__ T& operator()(unsigned int i, unsigned int j) {
#ifdef __CUDA_ARCH__
        return cuda_data[i * N + j];
#else
        return data[i * N + j];
#endif
    }
};
