// matrix.hpp: the German slides' Matrix class (host data and GPU data in one object, copy_to_gpu /
// copy_from_gpu, operator() on both sides) and mmm.cu's main program, shared by mmm.cu (the tiled
// kernel) and mmm-ab.cu (the naive one), which hand their kernel to run().
//
//   mmm A B               multiplies the matrices of two files (one row per line, as lab-mmm reads)
//   mmm --random N [R]    beyond the slide: random N x N matrices, the kernel timed R times (default 10)
#pragma once
#include <cassert>
#include <fstream>
#include <iomanip>
#include <iostream>
#include <sstream>
#include <string>

#include "../check.h"
#include "../product_check.h"

#ifndef BLOCK_SIZE
#define BLOCK_SIZE 16
#endif

struct Matrix {
    unsigned int N;
    double* data;
    double* cuda_data;
    bool cuda_allocated;
    bool cloned;

    Matrix() : N(0), data(0), cuda_data(0), cuda_allocated(false), cloned(false) {}
    // A kernel argument is a copy; it must not free what the original owns.
    Matrix(const Matrix& other)
        : N(other.N), data(other.data), cuda_data(other.cuda_data), cuda_allocated(other.cuda_allocated), cloned(true) {}
    ~Matrix() {
        if (!cloned) {
            delete[] data;  // the slide had `delete data` for memory from new[]
            release_cuda_data();
        }
    }
    void resize(unsigned int N_) {
        if (N != N_) {
            double* rp = new double[(size_t)N_ * N_];
            delete[] data;
            release_cuda_data();
            data = rp;
            N = N_;
        }
    }
    void allocate_cuda_data() {
        if (!cuda_allocated) {
            CHECK_CUDA(cudaMalloc, (void**)&cuda_data, bytes());
            cuda_allocated = true;
        }
    }
    void release_cuda_data() {
        if (cuda_allocated) {
            CHECK_CUDA(cudaFree, cuda_data);
            cuda_data = 0;
            cuda_allocated = false;
        }
    }
    void copy_to_gpu() {
        allocate_cuda_data();
        CHECK_CUDA(cudaMemcpy, cuda_data, data, bytes(), cudaMemcpyHostToDevice);
    }
    void copy_from_gpu() {
        assert(cuda_allocated);
        CHECK_CUDA(cudaMemcpy, data, cuda_data, bytes(), cudaMemcpyDeviceToHost);
    }
    size_t bytes() const { return (size_t)N * N * sizeof(double); }

    __device__ __host__ double& operator()(unsigned int i, unsigned int j) {
#ifdef __CUDA_ARCH__
        return cuda_data[i * N + j];
#else
        return data[i * N + j];
#endif
    }
};

static const char* cmdname;

static void usage() {
    std::cerr << "Usage: " << cmdname << " A B  |  " << cmdname << " --random N [REPETITIONS]" << std::endl;
    exit(1);
}

// Reads a square matrix: one row per line, blank lines and lines starting with # skipped.
static bool read_matrix(const char* name, Matrix& A) {
    std::ifstream in(name);
    if (!in) return false;
    std::vector<std::vector<double>> rows;
    std::string line;
    while (std::getline(in, line)) {
        if (line.find_first_not_of(" \t\r") == std::string::npos || line[line.find_first_not_of(" \t")] == '#') continue;
        std::istringstream fields(line);
        rows.emplace_back();
        for (double value; fields >> value;) rows.back().push_back(value);
    }
    for (const std::vector<double>& row : rows) {
        if (row.size() != rows.size()) {
            std::cerr << cmdname << ": " << name << " is not a square matrix" << std::endl;
            return false;
        }
    }
    A.resize((unsigned int)rows.size());
    for (unsigned int i = 0; i < A.N; ++i)
        for (unsigned int j = 0; j < A.N; ++j) A(i, j) = rows[i][j];
    return A.N > 0;
}

static std::ostream& operator<<(std::ostream& out, Matrix& A) {
    for (unsigned int i = 0; i < A.N; ++i) {
        for (unsigned int j = 0; j < A.N; ++j) out << " " << A(i, j);
        out << std::endl;
    }
    return out;
}

// mmm.cu's main, for `kernel` (the tiled mmm or mmm-ab); `name` labels the timing line.
static int run(int argc, char** argv, const char* name, void (*kernel)(Matrix, Matrix, Matrix)) {
    cmdname = argv[0];
    Matrix A, B;
    int repetitions = 1;
    if (argc >= 3 && std::string(argv[1]) == "--random") {
        const long long n = argument(argc, argv, 2, 1);
        repetitions = (int)argument(argc, argv, 3, 10);
        Random random(1);
        A.resize((unsigned int)n); B.resize((unsigned int)n);
        for (size_t i = 0; i < (size_t)n * n; ++i) A.data[i] = random.uniform(-1, 1), B.data[i] = random.uniform(-1, 1);
    } else {
        if (argc != 3) usage();
        if (!read_matrix(argv[1], A)) usage();
        if (!read_matrix(argv[2], B)) usage();
        if (A.N <= 16) std::cout << "A = " << std::endl << A << std::endl << "B = " << std::endl << B << std::endl;
    }
    if (A.N != B.N) {
        std::cerr << cmdname << ": sizes of the matrices do not match" << std::endl;
        exit(1);
    }
    if (A.N % BLOCK_SIZE) {
        std::cerr << cmdname << ": size of matrices is not a multiple of " << BLOCK_SIZE << std::endl;
        exit(1);
    }
    A.copy_to_gpu(); B.copy_to_gpu();
    Matrix C; C.resize(A.N); C.allocate_cuda_data();
    CHECK_CUDA(cudaMemset, C.cuda_data, 0xFF, C.bytes());  // NaN: an element never written shows

    dim3 block(BLOCK_SIZE, BLOCK_SIZE);
    dim3 grid(A.N / BLOCK_SIZE, A.N / BLOCK_SIZE);
    const Timing timing = time_gpu(repetitions, [&] {
        kernel<<<grid, block>>>(A, B, C);
        CHECK_LAUNCH();
    });
    C.copy_from_gpu();
    std::printf("%s f64 BLOCK_SIZE %d:", name, BLOCK_SIZE);
    print_time("", timing);
    if (C.N <= 16) std::cout << "C = " << std::endl << std::setprecision(14) << C << std::endl;
    Random random(2);
    const double error = product_error(A.data, B.data, C.data, A.N, A.N, A.N, random);
    std::printf("max relative error (Freivalds) %.1e\n", error);
    return print_result(error <= 1e-12);
}
