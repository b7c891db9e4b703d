// Issue 65, run 68: a stand-in for a class's other checks on the GPU while ncu makes its first
// measured launch: it launches a kernel that spins for about MS milliseconds (clock64), over and
// over, for SECONDS, waiting for each. Several of these at once keep the GPU as busy as a class's
// timed loops and sanitized launches keep it, with no CPU load beyond their own launches.
//
//   gpu-busy MS SECONDS
#include <chrono>
#include <cstdio>
#include <cstdlib>

__global__ void spin(long long cycles) {
    long long start = clock64();
    while (clock64() - start < cycles) {
    }
}

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: gpu-busy MS SECONDS\n");
        return 2;
    }
    double ms = std::atof(argv[1]), seconds = std::atof(argv[2]);
    int rate_khz = 0;
    cudaDeviceGetAttribute(&rate_khz, cudaDevAttrClockRate, 0);
    long long cycles = (long long)(ms * rate_khz);
    auto start = std::chrono::steady_clock::now();
    int launches = 0;
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
        spin<<<132, 128>>>(cycles);
        if (cudaDeviceSynchronize() != cudaSuccess) return 1;
        ++launches;
    }
    std::printf("%d launches of %.0f ms\n", launches, ms);
    return 0;
}
