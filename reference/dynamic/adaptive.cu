// adaptive.cu: dynamic parallelism (German slides: kernels that launch kernels, the master/worker
// pattern without the CPU). Adaptive Simpson integration of 1/((x-0.3)^2 + 1e-4) over [0, 1]: a master
// thread starts a worker grid for the two halves of the interval; every worker whose half is not yet
// accurate enough launches a child grid for its own two halves.
//
//   adaptive [REPETITIONS]     default 10; tolerance 1e-10, depth limit 20: lab-dynamic-parallel's defaults
//
// Beside: lab-dynamic-parallel, row device-driven. CUDA 12 removed cudaDeviceSynchronize from device
// code: children go to cudaStreamFireAndForget, and a grid ends only when all its children have ended.
// build: -rdc=true -lcudadevrt
#include "../check.h"

__device__ __host__ double f(double x) { return 1.0 / ((x - 0.3) * (x - 0.3) + 1.0e-4); }

__device__ __host__ double simpson(double a, double b) {
    const double h = b - a;
    return h / 6.0 * (f(a) + 4.0 * f(a + h / 2.0) + f(a + h));
}

struct Result {
    double integral;
    unsigned long long intervals, launch_failures;
};

const int MAX_DEPTH = 20;

// Thread 0 takes [a, middle], thread 1 [middle, b]; `whole` is its half's estimate from the parent.
__global__ void workers(double a, double b, double whole_left, double whole_right, double tolerance, int depth, Result* result) {
    const double middle = a + (b - a) / 2.0;
    const double lo = threadIdx.x == 0 ? a : middle, hi = threadIdx.x == 0 ? middle : b;
    const double whole = threadIdx.x == 0 ? whole_left : whole_right;
    const double half = lo + (hi - lo) / 2.0;
    const double left = simpson(lo, half), right = simpson(half, hi);
    const double delta = left + right - whole;
    if (fabs(delta) <= 15.0 * tolerance || depth >= MAX_DEPTH) {
        atomicAdd(&result->integral, left + right + delta / 15.0);
        atomicAdd(&result->intervals, 1ULL);
        return;
    }
    workers<<<1, 2, 0, cudaStreamFireAndForget>>>(lo, hi, left, right, tolerance / 2.0, depth + 1, result);
    if (cudaGetLastError() != cudaSuccess) {  // typically the pending-launch limit
        atomicAdd(&result->launch_failures, 1ULL);
        atomicAdd(&result->integral, left + right);
        atomicAdd(&result->intervals, 1ULL);
    }
}

__global__ void master(double a, double b, double tolerance, Result* result) {
    const double middle = a + (b - a) / 2.0;
    workers<<<1, 2, 0, cudaStreamFireAndForget>>>(a, b, simpson(a, middle), simpson(middle, b), tolerance / 2.0, 1, result);
}

// The same recursion on the CPU.
static double adaptive(double a, double b, double whole, double tolerance, int depth, unsigned long long* intervals) {
    const double middle = a + (b - a) / 2.0;
    const double left = simpson(a, middle), right = simpson(middle, b);
    const double delta = left + right - whole;
    if (std::fabs(delta) <= 15.0 * tolerance || depth >= MAX_DEPTH) {
        ++*intervals;
        return left + right + delta / 15.0;
    }
    return adaptive(a, middle, left, tolerance / 2.0, depth + 1, intervals) +
           adaptive(middle, b, right, tolerance / 2.0, depth + 1, intervals);
}

int main(int argc, char** argv) {
    const int repetitions = (int)argument(argc, argv, 1, 10);
    const double a = 0, b = 1, tolerance = 1e-10;
    CHECK_CUDA(cudaDeviceSetLimit, cudaLimitDevRuntimePendingLaunchCount, 32768);
    Result* cuda_result;
    CHECK_CUDA(cudaMalloc, (void**)&cuda_result, sizeof(Result));
    const Result zero = {0, 0, 0};
    std::printf("Adaptive Simpson of 1/((x-0.3)^2+1e-4) over [0, 1], tolerance 1e-10, depth limit %d\n", MAX_DEPTH);
    const Timing timing = time_gpu(repetitions, [&] {
        CHECK_CUDA(cudaMemcpyAsync, cuda_result, &zero, sizeof(Result), cudaMemcpyHostToDevice, (cudaStream_t)0);
        master<<<1, 1>>>(a, b, tolerance, cuda_result);
        CHECK_LAUNCH();
    });
    print_time("device-driven (master + workers):", timing);
    Result result;
    CHECK_CUDA(cudaMemcpy, &result, cuda_result, sizeof(Result), cudaMemcpyDeviceToHost);
    CHECK_CUDA(cudaFree, cuda_result);
    unsigned long long intervals = 0;
    // As on the GPU, the master's two halves are the first intervals to decide.
    const double middle = a + (b - a) / 2.0;
    const double cpu = adaptive(a, middle, simpson(a, middle), tolerance / 2.0, 1, &intervals) +
                       adaptive(middle, b, simpson(middle, b), tolerance / 2.0, 1, &intervals);
    std::printf("GPU %.15f from %llu intervals (%llu launches refused), CPU %.15f from %llu intervals\n", result.integral,
                result.intervals, result.launch_failures, cpu, intervals);
    return print_result(std::fabs(result.integral - cpu) <= tolerance && result.intervals == intervals);
}
