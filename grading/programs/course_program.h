// course_program.h: the one header of ours a week-5 or week-6 program may include, besides the CUDA
// toolkit's and the system's. Those weeks grade a whole program, host code and all: the checker writes
// this file beside the student's .cu, compiles the two with nvcc, runs the program with its arguments
// while recording every copy and kernel it makes, and compares the file it writes with a CPU result.
//
// The contract, so that the checker can run every program the same way:
//   - sizes come from the command line through arg_int (a bad or missing one: a usage line, exit 2);
//   - data comes in through read_floats (read_doubles) and goes out through write_floats
//     (write_doubles): raw little-endian float32 (float64), no header, exactly as many as asked for (a
//     wrong size is an error, never a silent truncation);
//   - every CUDA call is wrapped in CHECK_CUDA and every kernel launch followed by CHECK_LAUNCH, so a
//     failure says where it happened and ends the program with exit 1 instead of a wrong file;
//   - exit 0 means the output file is complete;
//   - write_floats and write_doubles tell the checker's recorder when they start reading the results
//     (a function the recorder exports, declared weak below: outside a check there is none, its
//     address is null and nothing happens), so that a program that writes them before its copies
//     back have ended fails even when it was lucky.
// Host code only: nothing here touches the GPU, so every record the checker sees is the program's own.
#pragma once

#include <cuda_runtime.h>

#include <cerrno>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "course_program.h reads and writes float32 as they lie in memory: little-endian machines only"
#endif
static_assert(sizeof(float) == 4 && sizeof(double) == 8, "the data files hold 4-byte floats or 8-byte doubles");

// CHECK_CUDA(cudaMalloc(&p, bytes)): the whole call goes in, so the message can quote it. Variadic so
// that a call whose arguments hold a template's comma still counts as one argument.
#define CHECK_CUDA(...) course_check_cuda((__VA_ARGS__), #__VA_ARGS__, __FILE__, __LINE__)

// A launch returns nothing: a bad configuration only shows when the error is asked for, right after.
#define CHECK_LAUNCH() CHECK_CUDA(cudaGetLastError())

inline void course_check_cuda(cudaError_t error, const char* call, const char* file, int line) {
    if (error != cudaSuccess) {
        std::fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, cudaGetErrorString(error));
        std::exit(1);
    }
}

// Positional argument `index` (1 = the first after the program's name) as a positive integer that
// fits an int. Only digits are accepted: strtoll alone would let "12abc", " 12", "+12" and an overflow through.
inline long long arg_int(int argc, char** argv, int index, const char* name) {
    const char* program = argc > 0 ? argv[0] : "program";
    if (index < 1 || index >= argc) {
        std::fprintf(stderr, "%s: usage error: argument %d (%s) is missing\n", program, index, name);
        std::exit(2);
    }
    const char* text = argv[index];
    char* end = nullptr;
    errno = 0;
    const long long value = std::strtoll(text, &end, 10);
    // Up to INT_MAX: the programs keep their sizes in an int, which a larger value would wrap.
    if (text[0] < '0' || text[0] > '9' || *end != '\0' || errno == ERANGE || value <= 0 || value > INT_MAX) {
        std::fprintf(stderr, "%s: usage error: argument %d (%s) must be a positive integer up to %d, not '%s'\n",
                     program, index, name, INT_MAX, text);
        std::exit(2);
    }
    return value;
}

// Exactly n values of type T from `path` (read_floats, read_doubles); `data` may be pinned, mapped or
// ordinary memory (fread only sees bytes). A file longer than n values is an error too: it means the
// program and the checker disagree on the sizes.
template <typename T>
inline void course_read(const char* path, T* data, size_t n, const char* what) {
    FILE* file = std::fopen(path, "rb");
    if (file == nullptr) {
        std::fprintf(stderr, "%s: cannot open for reading: %s\n", path, std::strerror(errno));
        std::exit(1);
    }
    const size_t got = std::fread(data, sizeof(T), n, file);
    if (got != n) {
        std::fprintf(stderr, "%s: %s after %zu of %zu %s\n", path,
                     std::ferror(file) ? "read error" : "file ends", got, n, what);
        std::exit(1);
    }
    if (std::fgetc(file) != EOF) {
        std::fprintf(stderr, "%s: holds more than the %zu %s expected\n", path, n, what);
        std::exit(1);
    }
    std::fclose(file);
}

// n values of type T to `path`, replacing it (write_floats, write_doubles); `mark` tells the recorder
// that the results are being read now. fclose is checked as well: a full disk often shows only there,
// when the last buffer is flushed.
// The recorder's mark: weak, so a program linked without the recorder finds it null; the dynamic
// loader binds it to the preloaded recorder's during a check.
extern "C" void lab_recorder_mark(const char* name) __attribute__((weak));

template <typename T>
inline void course_write(const char* path, const T* data, size_t n, const char* mark_name) {
    if (lab_recorder_mark != nullptr) lab_recorder_mark(mark_name);
    FILE* file = std::fopen(path, "wb");
    if (file == nullptr) {
        std::fprintf(stderr, "%s: cannot open for writing: %s\n", path, std::strerror(errno));
        std::exit(1);
    }
    const size_t put = std::fwrite(data, sizeof(T), n, file);
    if (put != n) {
        std::fprintf(stderr, "%s: write error after %zu of %zu values: %s\n", path, put, n, std::strerror(errno));
        std::exit(1);
    }
    if (std::fclose(file) != 0) {
        std::fprintf(stderr, "%s: write error on closing: %s\n", path, std::strerror(errno));
        std::exit(1);
    }
}

// The programs' inputs and results: raw little-endian float32 (pipeline, zero_copy) or float64 (the
// German products, double as on the slides).
inline void read_floats(const char* path, float* data, size_t n) { course_read(path, data, n, "floats"); }
inline void read_doubles(const char* path, double* data, size_t n) { course_read(path, data, n, "doubles"); }
inline void write_floats(const char* path, const float* data, size_t n) { course_write(path, data, n, "write_floats"); }
inline void write_doubles(const char* path, const double* data, size_t n) {
    course_write(path, data, n, "write_doubles");
}
