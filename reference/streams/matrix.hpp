// matrix.hpp: the German slides' stream programs share this: a SquareMatrix whose host memory is
// pageable (new[]), pinned (cudaMallocHost: pinned-matrix.hpp on the slides) or mapped (cudaHostAlloc
// with cudaHostAllocMapped: mapped-matrix.hpp), copy_to_gpu / copy_from_gpu on a stream, the tiled
// kernel, and the batch of COUNT random products with its check.
//
//   PROGRAM [N [COUNT [REPETITIONS]]]     defaults 2048, 10, 3: lab-streams' defaults
#pragma once
#include <cassert>

#include "../check.h"
#include "../product_check.h"

#define BLOCK_SIZE 16

enum HostMemory { Pageable, Pinned, Mapped };

template <typename T>
struct SquareMatrix {
    unsigned int N;
    HostMemory memory;
    T* data;
    T* cuda_data;
    bool cloned;

    SquareMatrix(unsigned int N_, HostMemory memory_) : N(N_), memory(memory_), data(0), cuda_data(0), cloned(false) {
        allocate_data();
    }
    SquareMatrix(const SquareMatrix& other)
        : N(other.N), memory(other.memory), data(other.data), cuda_data(other.cuda_data), cloned(true) {}
    ~SquareMatrix() {
        if (cloned) return;
        if (memory == Pageable) delete[] data;
        else CHECK_CUDA(cudaFreeHost, data);
        if (memory != Mapped && cuda_data) CHECK_CUDA(cudaFree, cuda_data);
    }
    size_t get_size() const { return (size_t)N * N * sizeof(T); }

    void allocate_data() {
        switch (memory) {
            case Pageable: data = new T[(size_t)N * N]; break;
            case Pinned: CHECK_CUDA(cudaMallocHost, (void**)&data, get_size()); break;
            case Mapped: CHECK_CUDA(cudaHostAlloc, (void**)&data, get_size(), cudaHostAllocMapped); break;
        }
    }
    void allocate_cuda_data() {
        if (cuda_data) return;
        if (memory == Mapped) {
            // not actually allocating but accessing mapped host memory
            CHECK_CUDA(cudaHostGetDevicePointer, (void**)&cuda_data, (void*)data, 0);
        } else {
            CHECK_CUDA(cudaMalloc, (void**)&cuda_data, get_size());
        }
    }
    // matrix.hpp of the first slides: synchronous copies (the host waits for each).
    void copy_to_gpu() {
        allocate_cuda_data();
        if (memory != Mapped) CHECK_CUDA(cudaMemcpy, cuda_data, data, get_size(), cudaMemcpyHostToDevice);
    }
    void copy_from_gpu() {
        if (memory != Mapped) CHECK_CUDA(cudaMemcpy, data, cuda_data, get_size(), cudaMemcpyDeviceToHost);
    }
    // mmm-streamed's: asynchronous copies, queued on `stream`.
    void copy_to_gpu(cudaStream_t stream) {
        assert(data); allocate_cuda_data();
        if (memory != Mapped) CHECK_CUDA(cudaMemcpyAsync, cuda_data, data, get_size(), cudaMemcpyHostToDevice, stream);
    }
    void copy_from_gpu(cudaStream_t stream) {
        assert(cuda_data);
        if (memory != Mapped) CHECK_CUDA(cudaMemcpyAsync, data, cuda_data, get_size(), cudaMemcpyDeviceToHost, stream);
    }
    __device__ T& operator()(unsigned int i, unsigned int j) { return cuda_data[i * N + j]; }
};

// The tiled kernel of mmm.cu, here as mmm<SquareMatrix<double>>.
#include "../mmm/kernel.cuh"

// COUNT products C[i] = A[i] * B[i] of random N x N matrices, and what every program needs around them.
struct Batch {
    unsigned int N, COUNT;
    int repetitions;
    std::vector<SquareMatrix<double>*> A, B, C;
    dim3 block, grid;

    Batch(int argc, char** argv, HostMemory memory)
        : N((unsigned int)argument(argc, argv, 1, 2048)), COUNT((unsigned int)argument(argc, argv, 2, 10)),
          repetitions((int)argument(argc, argv, 3, 3)), block(BLOCK_SIZE, BLOCK_SIZE), grid(N / BLOCK_SIZE, N / BLOCK_SIZE) {
        if (N % BLOCK_SIZE) {
            std::fprintf(stderr, "%s: N = %u is not a multiple of BLOCK_SIZE = %d\n", argv[0], N, BLOCK_SIZE);
            std::exit(1);
        }
        Random random(1);
        for (unsigned int i = 0; i < COUNT; ++i) {
            A.push_back(new SquareMatrix<double>(N, memory));
            B.push_back(new SquareMatrix<double>(N, memory));
            C.push_back(new SquareMatrix<double>(N, memory));
            for (size_t k = 0; k < (size_t)N * N; ++k) {
                A[i]->data[k] = random.uniform(-1, 1);
                B[i]->data[k] = random.uniform(-1, 1);
                C[i]->data[k] = NAN;  // a product that never comes back fails the check
            }
            // Allocated now: cudaMalloc during the timed runs would synchronize the device.
            A[i]->allocate_cuda_data(); B[i]->allocate_cuda_data(); C[i]->allocate_cuda_data();
        }
        std::printf("COUNT = %u products of random %u x %u doubles, tiled mmm with BLOCK_SIZE %d, %s host memory\n", COUNT,
                    N, N, BLOCK_SIZE, memory == Pageable ? "pageable" : memory == Pinned ? "pinned" : "mapped");
    }
    ~Batch() {
        for (unsigned int i = 0; i < COUNT; ++i) delete A[i], delete B[i], delete C[i];
    }
    // Every product against the CPU (Freivalds); prints the worst and says whether all passed.
    bool passed() {
        Random random(2);
        double worst = 0;
        for (unsigned int i = 0; i < COUNT; ++i) {
            const double error = product_error(A[i]->data, B[i]->data, C[i]->data, N, N, N, random);
            if (!(error <= worst)) worst = error;
        }
        std::printf("max relative error (Freivalds) %.1e\n", worst);
        return worst <= 1e-12;
    }
    // The check's "Result = ..." line and the exit code.
    int check() { return print_result(passed()); }
    // NaN into every C again, so a product that a later run does not write fails that run's check.
    void poison() {
        for (unsigned int i = 0; i < COUNT; ++i)
            for (size_t k = 0; k < (size_t)N * N; ++k) C[i]->data[k] = NAN;
    }
};
