// matrix.hpp: the Matrix class of the German slides (000, "mmm.cu" slides: struct Matrix with N, data,
// cuda_data and cloned; copy constructor and destructor; copy_to_gpu / copy_from_gpu;
// allocate_cuda_data / release_cuda_data; resize; operator() on both sides), with what mmm.cu needs
// around it but the slides do not show: cmdname, usage(), read_matrix() and printing a matrix. The
// slides keep all of it in mmm.cu; it sits in this header because mmm.cu and mmm-ab.cu share it.
//
// Matrix files: one row per line, numbers separated by blanks; blank lines and lines starting with #
// are skipped (the format lab-mmm reads). The matrix must be square.
//
// Fixed from the slides:
// - `delete data` for memory from new[] is `delete[] data` (destructor and resize).
// - release_cuda_data also clears cuda_allocated, so that a matrix resized after its GPU copy was
//   made allocates a new one (the slide left the flag set, and copy_to_gpu would then write to 0).
// - cuda_allocated, used by the slides' copy_to_gpu but not among the members they show, is a member.
#pragma once

#include <cassert>
#include <cstddef>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <sstream>
#include <string>
#include <vector>

#include "../check-cuda.h"

struct Matrix {
    unsigned int N;
    double* data;
    double* cuda_data;
    bool cuda_allocated;
    bool cloned;

    Matrix() : N(0), data(0), cuda_data(0), cuda_allocated(false), cloned(false) {
    }
    // A kernel gets its Matrix arguments as copies: a copy shares the memory and never frees it.
    Matrix(const Matrix& other)
        : N(other.N), data(other.data), cuda_data(other.cuda_data), cuda_allocated(other.cuda_allocated),
          cloned(true) {
    }
    ~Matrix() {
        if (!cloned) {
            if (data) delete[] data;  // slide: delete data (memory from new[])
            if (cuda_data) release_cuda_data();
        }
    }

    void resize(unsigned int N_) {
        if (N != N_) {
            double* rp = new double[(std::size_t)N_ * N_];
            if (data) delete[] data;  // slide: delete data
            release_cuda_data();
            data = rp; N = N_;
        }
    }

    void allocate_cuda_data() {
        if (!cuda_allocated) {
            double* cudap;
            CHECK_CUDA(cudaMalloc, (void**)&cudap, (std::size_t)N * N * sizeof(double));
            cuda_data = cudap;
            cuda_allocated = true;
        }
    }
    void release_cuda_data() {
        if (cuda_data) {
            CHECK_CUDA(cudaFree, cuda_data);
            cuda_data = 0;
            cuda_allocated = false;  // slide: left set, so a later allocate_cuda_data did nothing
        }
    }

    void copy_to_gpu() {
        if (!cuda_allocated) {
            allocate_cuda_data();
        }
        CHECK_CUDA(cudaMemcpy, cuda_data, data, (std::size_t)N * N * sizeof(double), cudaMemcpyHostToDevice);
    }
    void copy_from_gpu() {
        assert(cuda_allocated);
        CHECK_CUDA(cudaMemcpy, data, cuda_data, (std::size_t)N * N * sizeof(double), cudaMemcpyDeviceToHost);
    }

    // Element (i, j): from cuda_data in code compiled for the GPU, from data on the CPU.
    __device__ __host__ double& operator()(unsigned int i, unsigned int j) {
#ifdef __CUDA_ARCH__
        return cuda_data[i * N + j];
#else
        return data[i * N + j];
#endif
    }
    __device__ __host__ const double& operator()(unsigned int i, unsigned int j) const {
#ifdef __CUDA_ARCH__
        return cuda_data[i * N + j];
#else
        return data[i * N + j];
#endif
    }
};

static const char* cmdname;

static void usage() {
    std::cerr << "Usage: " << cmdname << " matrix-A matrix-B" << std::endl;
    exit(1);
}

// Reads the square matrix in the file `name` into A; false if the file cannot be read or is not square.
static bool read_matrix(const char* name, Matrix& A) {
    std::ifstream in(name);
    if (!in) return false;
    std::vector<std::vector<double> > rows;
    std::string line;
    while (std::getline(in, line)) {
        std::size_t first = line.find_first_not_of(" \t\r");
        if (first == std::string::npos || line[first] == '#') continue;
        std::istringstream numbers(line);
        std::vector<double> row;
        double value;
        while (numbers >> value) row.push_back(value);
        if (!numbers.eof()) return false;  // something that is not a number
        rows.push_back(row);
    }
    if (rows.empty()) return false;
    for (std::size_t i = 0; i < rows.size(); ++i) {
        if (rows[i].size() != rows.size()) return false;
    }
    A.resize((unsigned int)rows.size());
    for (unsigned int i = 0; i < A.N; ++i) {
        for (unsigned int j = 0; j < A.N; ++j) {
            A(i, j) = rows[i][j];
        }
    }
    return true;
}

// One row per line, as read_matrix reads them.
static std::ostream& operator<<(std::ostream& out, const Matrix& A) {
    for (unsigned int i = 0; i < A.N; ++i) {
        for (unsigned int j = 0; j < A.N; ++j) {
            out << (j ? " " : "") << A(i, j);
        }
        out << std::endl;
    }
    return out;
}
