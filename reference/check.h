// check.h: what every reference program shares, in the slides' style.
//
//   CHECK_CUDA(cudaMalloc, (void**)&p, bytes);   // as on the slides: the function, then its arguments
//
// A failing call prints what was called, where, and CUDA's message, and ends the program with exit 1.
// time_gpu() times work the way the Rust labs do (one warm-up run, then `repetitions` runs between CUDA
// events on the NULL stream, median reported), and print_time() prints the labs' line:
//
//   mmm-streamed  GPU time in ms: 38.7299 (median of 3, min 38.6814, max 38.7445)
//
// scripts/compare.sh reads these lines and "Result = PASS" / "Result = FAIL" from both sides.
#pragma once

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#define CHECK_CUDA(opname, ...) check_cuda_call(#opname, opname(__VA_ARGS__), __FILE__, __LINE__)

inline void check_cuda_call(const char* opname, cudaError_t error, const char* file, int line) {
    if (error != cudaSuccess) {
        std::fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, opname, cudaGetErrorString(error));
        std::exit(1);
    }
}

// A kernel launch reports nothing itself: ask right after it (bad configurations show here).
#define CHECK_LAUNCH() CHECK_CUDA(cudaGetLastError)

struct Timing {
    std::vector<double> samples_ms;
    double median() const {
        std::vector<double> sorted = samples_ms;
        std::sort(sorted.begin(), sorted.end());
        const size_t n = sorted.size();
        return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2.0;
    }
    double min() const { return *std::min_element(samples_ms.begin(), samples_ms.end()); }
    double max() const { return *std::max_element(samples_ms.begin(), samples_ms.end()); }
};

// One warm-up run, then `repetitions` runs, each between two events recorded on the NULL stream (the
// slides: time with events of the NULL stream, since other streams' work may slip in between).
template <typename Work>
Timing time_gpu(int repetitions, Work work) {
    work();
    std::vector<cudaEvent_t> events(2 * repetitions);
    for (cudaEvent_t& event : events) CHECK_CUDA(cudaEventCreate, &event);
    for (int i = 0; i < repetitions; ++i) {
        CHECK_CUDA(cudaEventRecord, events[2 * i], (cudaStream_t)0);
        work();
        CHECK_CUDA(cudaEventRecord, events[2 * i + 1], (cudaStream_t)0);
    }
    CHECK_CUDA(cudaDeviceSynchronize);  // wait for everything to finish
    Timing timing;
    for (int i = 0; i < repetitions; ++i) {
        float ms;
        CHECK_CUDA(cudaEventElapsedTime, &ms, events[2 * i], events[2 * i + 1]);
        timing.samples_ms.push_back(ms);
    }
    for (cudaEvent_t event : events) CHECK_CUDA(cudaEventDestroy, event);
    return timing;
}

// The same with the host's clock, for work whose host-side waiting is part of the lesson.
template <typename Work>
Timing time_host(int repetitions, Work work) {
    work();
    Timing timing;
    for (int i = 0; i < repetitions; ++i) {
        const auto start = std::chrono::steady_clock::now();
        work();
        timing.samples_ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    return timing;
}

inline void print_time(const char* label, const char* clock, const Timing& t) {
    std::printf("%s %s time in ms: %.4f (median of %zu, min %.4f, max %.4f)\n", label, clock, t.median(),
                t.samples_ms.size(), t.min(), t.max());
}

inline void print_time(const char* label, const Timing& t) { print_time(label, "GPU", t); }

inline int print_result(bool pass) {
    std::printf("Result = %s\n", pass ? "PASS" : "FAIL");
    return pass ? 0 : 1;
}

// Uniform random numbers in [low, high) from a fixed seed (xorshift64*): every run sees the same inputs,
// none of them zero.
struct Random {
    unsigned long long state;
    explicit Random(unsigned long long seed) : state(seed * 0x9E3779B97F4A7C15ULL | 1) {}
    unsigned long long next() {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        return state * 0x2545F4914F6CDD1DULL;
    }
    double uniform(double low, double high) { return low + (high - low) * (next() >> 11) * 0x1.0p-53; }
};

// The n-th command-line argument as a positive number, or `fallback` when it is not given.
inline long long argument(int argc, char** argv, int n, long long fallback) {
    if (argc <= n) return fallback;
    char* end;
    const long long value = std::strtoll(argv[n], &end, 10);
    if (*end != '\0' || value <= 0) {
        std::fprintf(stderr, "%s: argument %d: '%s' is not a positive number\n", argv[0], n, argv[n]);
        std::exit(1);
    }
    return value;
}
