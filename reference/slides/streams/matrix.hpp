// matrix.hpp: the SquareMatrix<T> class of the German slides' stream programs (000, streams: the
// "matrix.hpp" slide shows copy_to_gpu / copy_from_gpu on a stream; the rest of the class is hidden
// behind "// ..." and written here after the Matrix class of mmm.cu). Host memory from new[]
// (pageable). pinned-matrix.hpp and mapped-matrix.hpp are this class with the allocations their
// slides show; `diff matrix.hpp pinned-matrix.hpp` shows just that change.
//
// Beyond what the slide shows: copy_from_gpu gets missing host memory from allocate_data (the slide
// wrote new T[N * N] there, which the pinned and mapped classes must not free with delete[]); the
// copy functions' stream defaults to 0, the NULL stream, for the serial mmm.cu; memory from new[] is
// freed with delete[] (the slides' Matrix class used delete).
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
            data = new T[(std::size_t)N * N];
        }
    }
    void release_data() {
        if (data) {
            delete[] data;
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

    // Queued on `stream`: from pageable memory the host waits while the driver stages the data.
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
