// bf16-bench.cu: issue 65, run 108 (one H200): step 16's GEMM against a trial of it that stores C in
// 16 chunks of 64 rows x 16 floats through four 4 KiB buffers a consumer (the 64-byte swizzle), so
// that a buffer is written again four chunks on, not two (stored_in_four, the IN_FOUR of
// run-108/mmm_wgmma-in-four.diff), and cuBLAS's on the same bf16 numbers. Run 107 found that
// writing a buffer again without the wait that PTX asks for gains about half a percent at 4096 (and
// makes C wrong): does the wait find the buffer read, when it comes four chunks on? Timed as run 98
// times.
//
// Builds against kernels/cuda/mmm_wgmma.cu of commit 896d7e0 with run-108/mmm_wgmma-in-four.diff
// applied (git apply), as run 108 ran. From the repository's root:
//   nvcc -std=c++17 -O3 -arch=sm_90a -I kernels/cuda results/h200/issue65/run-108/bf16-bench.cu
//        -lcublas -lcuda -lnvidia-ml -o bench && ./bench [MxKxN ...] [--sustained N | --ladder] [--reverse] [--flush]
#include <cuda.h>
#include <cuda_runtime.h>
#include <library_types.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <thread>
#include <vector>

// mmm_wgmma.cu keeps its GEMMs inside `#if defined(__CUDA_ARCH_FEAT_SM90_ALL)`, which nvcc defines only
// in the sm_90a device pass: the host pass would not see the kernels and could not make their launch
// stubs. The host pass gets the macro too; cudafe++ parses the device bodies there but emits only the
// stubs, and the launches find the kernels in the sm_90a cubin by their extern "C" names.
#if !defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define __CUDA_ARCH_FEAT_SM90_ALL 1
#define BENCH_HOST_SEES_SM90A
#endif
#include "mmm_wgmma.cu"
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Step 16's GEMM storing C in 16 chunks through four buffers; `c_map`'s boxes are 16 floats by 64 rows
// in the 64-byte swizzle.
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    stored_in_four(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b_t,
                   const __grid_constant__ CUtensorMap c_map, MatrixView<float> c, int k, int stages_per_slice) {
    wgmma_tma<SharedTiles<Bf16>, 1, 0, true, false, true>(&a, &b_t, c, k, stages_per_slice, &c_map);
}
#endif
#ifdef BENCH_HOST_SEES_SM90A
#undef __CUDA_ARCH_FEAT_SM90_ALL
#endif

// Deterministic operands without curand: a 64-bit mix of (seed, index) to an odd multiple of 2^-24 in
// (-1, 1), never zero, so no product term vanishes by accident.
__global__ void fill_hash(float* x, size_t count, unsigned long long seed) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        unsigned long long h = (i + 1) * 0x9E3779B97F4A7C15ull ^ seed;
        h ^= h >> 31;
        h *= 0xBF58476D1CE4E5B9ull;
        h ^= h >> 29;
        const int odd = (int)(((unsigned)(h >> 32) >> 7) | 1u) - (1 << 24);  // odd, |odd| < 2^24: exact in f32
        x[i] = odd * (1.0f / 16777216.0f);
    }
}
// cuBLAS's operands: a plain row-major bf16 copy, rounded by mmm_wgmma.cu's own to_bf16, so cuBLAS and
// the wgmma kernels multiply the very same numbers.
__global__ void to_bf16_plain(const float* src, Bf16* dst, size_t count) {
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x)
        dst[i] = to_bf16(src[i]);
}

// The host's part, for the host pass only: nvcc also builds compute_90 PTX for -arch=sm_90a, a pass
// with no __CUDA_ARCH_FEAT_SM90_ALL, hence none of the GEMMs for the launches below to name. The GPU
// (compute capability 9.0) runs the sm_90a cubin, which has them.
#if !defined(__CUDA_ARCH__)

// The host's copies of mmm_wgmma.cu's THREADS and SHARED_BYTES (which, like the GEMMs, only sm_90a
// builds see: here, thanks to the macro above), the launch configuration the kernels trap without.
constexpr int HOST_THREADS = 384;
constexpr int HOST_SHARED_BYTES = 192 * 1024 + 1024, HOST_STORE_BYTES = 2 * 2 * 8192;
static_assert(HOST_THREADS == THREADS && HOST_SHARED_BYTES == SHARED_BYTES && HOST_STORE_BYTES == STORE_BYTES,
              "out of step with mmm_wgmma.cu");

// cuBLAS, declared here: the toolchain this file is checked with has no cuBLAS headers. Enums are
// passed as int (their C ABI), with the values of cublas_api.h.
extern "C" {
typedef struct cublasContext* cublasHandle_t;
int cublasCreate_v2(cublasHandle_t* handle);
int cublasDestroy_v2(cublasHandle_t handle);
const char* cublasGetStatusString(int status);
int cublasGemmEx(cublasHandle_t handle, int transa, int transb, int m, int n, int k, const void* alpha, const void* A,
                 cudaDataType Atype, int lda, const void* B, cudaDataType Btype, int ldb, const void* beta, void* C,
                 cudaDataType Ctype, int ldc, int computeType, int algo);
}
// NVML, declared here as cuBLAS is: the power in milliwatts and the SM clock in MHz of GPU 0 (the
// only one on the machine these runs use).
extern "C" {
typedef struct nvmlDevice_st* nvmlDevice_t;
int nvmlInit_v2();
int nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t* device);
int nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int* milliwatts);
int nvmlDeviceGetClockInfo(nvmlDevice_t device, int type, unsigned int* mhz);
int nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device, unsigned long long* millijoules);
}
constexpr int NVML_CLOCK_SM = 1;
static nvmlDevice_t nvml_device = nullptr;
constexpr int CUBLAS_OP_N = 0, CUBLAS_COMPUTE_32F = 68, CUBLAS_GEMM_DEFAULT = -1;

// Every call checked: the call, where, and the library's own words, then exit(1).
#define CUDA_CHECK(call) check_cuda((call), #call, __FILE__, __LINE__)
#define CU_CHECK(call) check_cu((call), #call, __FILE__, __LINE__)
#define CUBLAS_CHECK(call) check_cublas((call), #call, __FILE__, __LINE__)
static void fail(const char* call, const char* file, int line, const char* what) {
    fflush(stdout);
    fprintf(stderr, "%s:%d: %s failed: %s\n", file, line, call, what);
    exit(1);
}
static void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
    if (e != cudaSuccess) fail(call, file, line, cudaGetErrorString(e));
}
static void check_cu(CUresult e, const char* call, const char* file, int line) {
    if (e == CUDA_SUCCESS) return;
    const char* what = "unknown CUresult";
    cuGetErrorString(e, &what);
    fail(call, file, line, what);
}
static void check_cublas(int s, const char* call, const char* file, int line) {
    if (s != 0) fail(call, file, line, cublasGetStatusString(s));
}
// Waits for the GPU (everything here runs on the legacy default stream), at most `seconds`: a kernel
// that deadlocks (a barrier never completed) ends the run with its name instead of hanging it. _Exit
// skips the runtime's teardown, which could wait on that kernel; the process's end stops it.
static void wait_for_gpu(const std::string& what, double seconds = 60) {
    const auto start = std::chrono::steady_clock::now();
    cudaError_t e;
    while ((e = cudaStreamQuery(0)) == cudaErrorNotReady) {
        if (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() > seconds) {
            fflush(stdout);
            fprintf(stderr, "%s: still running after %.0f s, taken for a hang\n", what.c_str(), seconds);
            std::_Exit(1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (e != cudaSuccess) fail(what.c_str(), __FILE__, __LINE__, cudaGetErrorString(e));
}

// A K-major bf16 operand (`rows` x k, rows `row_length` elements apart) as step 13 reads it: boxes of
// 64 bf16 (128 bytes) by `box_rows`, the 128-byte swizzle, zeros past the matrix (as wgmma.rs encodes).
static CUtensorMap bf16_map(const Bf16* base, int rows, int k, int row_length, unsigned box_rows) {
    alignas(64) CUtensorMap map;
    const cuuint64_t dims[2] = {(cuuint64_t)k, (cuuint64_t)rows};
    const cuuint64_t row_bytes[1] = {(cuuint64_t)row_length * sizeof(Bf16)};
    const cuuint32_t box[2] = {64, box_rows}, element_strides[2] = {1, 1};
    CU_CHECK(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 2, const_cast<Bf16*>(base), dims,
                                    row_bytes, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                    CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return map;
}

// The map of an f32 C (rows x cols, n % 4 == 0) for step 16's bulk tensor stores, as lab-mmm's
// wgmma::store_map makes it: n x m x 1 floats (one slice), boxes of 32 floats (128 bytes) by 64 rows
// by 1, the 128-byte swizzle; with `in_four`, boxes of 16 floats in the 64-byte swizzle.
static CUtensorMap f32_store_map(const float* base, int rows, int cols, bool in_four = false) {
    alignas(64) CUtensorMap map;
    const cuuint64_t dims[3] = {(cuuint64_t)cols, (cuuint64_t)rows, 1};
    const cuuint64_t row_bytes[2] = {(cuuint64_t)cols * sizeof(float), (cuuint64_t)cols * sizeof(float) * rows};
    const cuuint32_t box[3] = {in_four ? 16u : 32u, 64, 1}, element_strides[3] = {1, 1, 1};
    CU_CHECK(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, const_cast<float*>(base), dims, row_bytes,
                                    box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                    in_four ? CU_TENSOR_MAP_SWIZZLE_64B : CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return map;
}

static int ceil_div(long long a, long long b) { return (int)((a + b - 1) / b); }
static float bf16_to_float(unsigned short bits) {
    const unsigned u = (unsigned)bits << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}
static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5f * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// One row of the table: a GEMM writing its own C, its launch, and its 20 timed launches.
struct Variant {
    std::string name;
    int grid;  // 0: cuBLAS picks
    float* c;
    std::function<void()> launch;
    std::vector<cudaEvent_t> start, stop;
    float median_ms = 0, min_ms = 0, max_ms = 0, rel_err = 0;
    double watts = 0, sm_mhz = 0;  // --sustained: NVML's means while it ran
    double mj_per_gemm = 0;        // --sustained: NVML's energy over all its launches, per launch
    long long nans = 0;
};

constexpr int WARMUP = 3, REPS = 20, SPOT_CHECKS = 64;
constexpr double TOLERANCE = 1e-3;

static void bench(int m, int k, int n, int sms, cublasHandle_t cublas, bool ncu_once, int sustained, bool reverse,
                  bool ladder, float* flush, size_t flush_bytes) {
    printf("\n== m %d  k %d  n %d ==\n", m, k, n);
    fflush(stdout);
    const size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    const int ldk = (k + 7) / 8 * 8;  // TMA: each row starts 16 bytes (8 bf16) after the last one's start

    // f32 operands, then everything the GEMMs read, made once here, outside any timing.
    float *a, *b;
    Bf16 *a_pad, *bt_pad, *a_plain, *b_plain;
    CUDA_CHECK(cudaMalloc(&a, mk * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b, kn * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&a_pad, (size_t)m * ldk * sizeof(Bf16)));
    CUDA_CHECK(cudaMalloc(&bt_pad, (size_t)n * ldk * sizeof(Bf16)));
    CUDA_CHECK(cudaMalloc(&a_plain, mk * sizeof(Bf16)));
    CUDA_CHECK(cudaMalloc(&b_plain, kn * sizeof(Bf16)));
    // The padding is never read (the maps say k), but zeros keep the buffers deterministic.
    CUDA_CHECK(cudaMemset(a_pad, 0, (size_t)m * ldk * sizeof(Bf16)));
    CUDA_CHECK(cudaMemset(bt_pad, 0, (size_t)n * ldk * sizeof(Bf16)));
    fill_hash<<<1024, 256>>>(a, mk, 0xA11CEull);
    fill_hash<<<1024, 256>>>(b, kn, 0xB0Bull);
    CUDA_CHECK(cudaGetLastError());
    copy_pad_bf16<<<dim3(std::min(ceil_div(k, 256), 64), std::min(m, 4096)), 256>>>(MatrixView<float>{m, k, a}, a_pad, ldk);
    transpose_pad_bf16<<<dim3(ceil_div(n, 32), ceil_div(k, 32)), dim3(32, 8)>>>(MatrixView<float>{k, n, b}, bt_pad, ldk);
    to_bf16_plain<<<1024, 256>>>(a, a_plain, mk);
    to_bf16_plain<<<1024, 256>>>(b, b_plain, kn);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    const CUtensorMap map_a = bf16_map(a_pad, m, k, ldk, 128);
    const CUtensorMap map_bt = bf16_map(bt_pad, n, k, ldk, 256);  // one block loads B^T's whole 256 rows
    const int stages = ceil_div(k, 64);                          // one slice: c is C itself
    const int tiles = ceil_div(m, 128) * ceil_div(n, 256);

    std::vector<Variant> variants;
    auto add = [&](std::string name, int grid, std::function<void(float*)> launch) {
        Variant v;
        v.name = std::move(name);
        v.grid = grid;
        CUDA_CHECK(cudaMalloc(&v.c, mn * sizeof(float)));
        float* c = v.c;
        v.launch = [launch, c] { launch(c); };
        variants.push_back(std::move(v));
    };
    // The grids lab-mmm's wgmma::blocks gives: no wider than the rounds of units need.
    const int grid = ceil_div(tiles, ceil_div(tiles, sms));
    const int stored_bytes = HOST_SHARED_BYTES + HOST_STORE_BYTES;
    for (const void* f : {(const void*)wgmma_tma_bf16_stored, (const void*)stored_in_four})
        CUDA_CHECK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, stored_bytes));
    // Each variant stores into its own C, hence its own map of C (n % 4 == 0: TMA's 16-byte rows).
    add("step 16 (wgmma_tma_bf16_stored)", grid, [=](float* c) {
        const CUtensorMap map_c = f32_store_map(c, m, n);
        wgmma_tma_bf16_stored<<<grid, HOST_THREADS, stored_bytes>>>(map_a, map_bt, map_c, MatrixView<float>{m, n, c}, k,
                                                                   stages, 1);
        CUDA_CHECK(cudaGetLastError());
    });
    add("four buffers of 4 KiB (stored_in_four)", grid, [=](float* c) {
        const CUtensorMap map_c = f32_store_map(c, m, n, true);
        stored_in_four<<<grid, HOST_THREADS, stored_bytes>>>(map_a, map_bt, map_c, MatrixView<float>{m, n, c}, k, stages);
        CUDA_CHECK(cudaGetLastError());
    });
    // C = A B in row-major is C^T = B^T A^T in cuBLAS's column-major: B as an n x k matrix, A as k x m.
    add("cuBLAS GemmEx bf16->f32", 0, [=](float* c) {
        const float one = 1.0f, zero = 0.0f;
        CUBLAS_CHECK(cublasGemmEx(cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b_plain, CUDA_R_16BF, n, a_plain,
                                  CUDA_R_16BF, k, &zero, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    });
    Variant& ref = variants.back();

    // NaN everywhere first: an element a GEMM never writes shows up as a NaN in the check.
    for (Variant& v : variants) CUDA_CHECK(cudaMemset(v.c, 0xFF, mn * sizeof(float)));
    // Each variant's first launch is waited for alone, so a fault or a hang names its kernel.
    for (Variant& v : variants) {
        v.launch();
        wait_for_gpu("first launch of " + v.name);
    }
    const int reps = sustained ? sustained : REPS;
    if (!ncu_once) {
        for (Variant& v : variants) {
            v.start.resize(reps);
            v.stop.resize(reps);
            for (int rep = 0; rep < reps; ++rep) {
                CUDA_CHECK(cudaEventCreate(&v.start[rep]));
                CUDA_CHECK(cudaEventCreate(&v.stop[rep]));
            }
        }
    }
    if (!ncu_once && !sustained) {
        // Round-robin, rep by rep, so clock and thermal drift hits every variant alike.
        for (int rep = 1; rep < WARMUP; ++rep)
            for (Variant& v : variants) v.launch();
        for (int rep = 0; rep < REPS; ++rep) {
            for (Variant& v : variants) {
                if (flush) CUDA_CHECK(cudaMemsetAsync(flush, rep & 0xFF, flush_bytes));  // L2 emptied, untimed
                CUDA_CHECK(cudaEventRecord(v.start[rep]));
                v.launch();
                CUDA_CHECK(cudaEventRecord(v.stop[rep]));
            }
        }
    }
    if (sustained) {
        // One GEMM after the other, each launched `reps` times back to back after a second's pause (the
        // GPU idle, as between the ladder's rows), NVML sampled every 10 ms while its second half runs.
        std::vector<Variant*> order;
        for (Variant& v : variants) order.push_back(&v);
        if (reverse) std::reverse(order.begin(), order.end());  // cuBLAS first: a drift shows as a change of order
        for (Variant* each : order) {
            Variant& v = *each;
            wait_for_gpu("the launches before " + v.name);
            std::this_thread::sleep_for(std::chrono::seconds(1));
            unsigned long long energy_before = 0, energy_after = 0;
            const bool energy = nvmlDeviceGetTotalEnergyConsumption(nvml_device, &energy_before) == 0;
            for (int rep = 0; rep < reps; ++rep) {
                if (flush) CUDA_CHECK(cudaMemsetAsync(flush, rep & 0xFF, flush_bytes));  // L2 emptied, untimed
                CUDA_CHECK(cudaEventRecord(v.start[rep]));
                v.launch();
                CUDA_CHECK(cudaEventRecord(v.stop[rep]));
            }
            double watts = 0, mhz = 0;
            int samples = 0;
            while (cudaEventQuery(v.stop[reps - 1]) == cudaErrorNotReady) {
                std::this_thread::sleep_for(std::chrono::milliseconds(10));
                if (cudaEventQuery(v.stop[reps / 2]) == cudaErrorNotReady) continue;  // the first half
                unsigned int mw = 0, clock = 0;
                if (nvmlDeviceGetPowerUsage(nvml_device, &mw) == 0 && nvmlDeviceGetClockInfo(nvml_device, NVML_CLOCK_SM, &clock) == 0) {
                    watts += mw / 1000.0;
                    mhz += clock;
                    ++samples;
                }
            }
            // The counter moves in steps of its own: only a run of a second or more says much.
            if (energy && nvmlDeviceGetTotalEnergyConsumption(nvml_device, &energy_after) == 0)
                v.mj_per_gemm = (double)(energy_after - energy_before) / reps;
            v.watts = samples ? watts / samples : 0;
            v.sm_mhz = samples ? mhz / samples : 0;
        }
    }
    wait_for_gpu("the timed launches");
    for (Variant& v : variants) {
        std::vector<float> ms(v.start.size());
        for (size_t rep = 0; rep < ms.size(); ++rep) {
            CUDA_CHECK(cudaEventElapsedTime(&ms[rep], v.start[rep], v.stop[rep]));
            CUDA_CHECK(cudaEventDestroy(v.start[rep]));
            CUDA_CHECK(cudaEventDestroy(v.stop[rep]));
        }
        // --ladder: all but the first (the warm-up); --sustained: the second half.
        if (sustained) ms.erase(ms.begin(), ms.begin() + (ladder ? 1 : ms.size() / 2));
        if (!ms.empty()) {
            v.median_ms = median(ms);
            v.min_ms = *std::min_element(ms.begin(), ms.end());
            v.max_ms = *std::max_element(ms.begin(), ms.end());
        }
    }

    // Every variant against cuBLAS's C: max |x - ref| / max |ref|, NaNs counted apart.
    std::vector<float> want(mn), got(mn);
    CUDA_CHECK(cudaMemcpy(want.data(), ref.c, mn * sizeof(float), cudaMemcpyDeviceToHost));
    double ref_max = 0;
    for (size_t i = 0; i < mn; ++i)
        if (!std::isnan(want[i])) ref_max = std::max(ref_max, (double)std::fabs(want[i]));
    for (Variant& v : variants) {
        if (&v == &ref) continue;
        CUDA_CHECK(cudaMemcpy(got.data(), v.c, mn * sizeof(float), cudaMemcpyDeviceToHost));
        double worst = 0;
        for (size_t i = 0; i < mn; ++i) {
            if (std::isnan(got[i])) ++v.nans;
            else worst = std::max(worst, std::fabs((double)got[i] - want[i]));
        }
        v.rel_err = (float)(worst / ref_max);
    }
    // cuBLAS itself against double-precision dot products of the same bf16 numbers, at a few places.
    std::vector<unsigned short> ha(mk), hb(kn);
    CUDA_CHECK(cudaMemcpy(ha.data(), a_plain, mk * sizeof(Bf16), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaMemcpy(hb.data(), b_plain, kn * sizeof(Bf16), cudaMemcpyDeviceToHost));
    unsigned long long lcg = 0x5EEDull;
    auto next = [&](int below) {
        lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
        return (int)((lcg >> 33) % (unsigned long long)below);
    };
    double spot = 0;
    for (int s = 0; s < SPOT_CHECKS; ++s) {
        const int i = next(m), j = next(n);
        double dot = 0;
        for (int p = 0; p < k; ++p) dot += (double)bf16_to_float(ha[(size_t)i * k + p]) * bf16_to_float(hb[(size_t)p * n + j]);
        const float x = want[(size_t)i * n + j];
        spot = std::isnan(x) ? INFINITY : std::max(spot, std::fabs(x - dot));  // NaNs are counted below too
    }
    ref.rel_err = (float)(spot / ref_max);
    printf("cuBLAS vs CPU double at %d places: max rel err %.3g (its row's error column)\n", SPOT_CHECKS, ref.rel_err);
    for (size_t i = 0; i < mn; ++i) ref.nans += std::isnan(want[i]);

    // The table. % of cuBLAS: cuBLAS's median time / the variant's (above 100: faster than cuBLAS).
    const double flops = 2.0 * m * n * k;
    printf("%s%s\n",
           ladder      ? "each GEMM by itself as a ladder row (--ladder): one warm-up, then the median of 10"
           : sustained ? "each GEMM by itself, back to back (--sustained): median of its second half; W, MHz: NVML's means then"
                       : "the GEMMs in turn, launch by launch: median of 20",
           flush ? "; L2 emptied before each launch (--flush)" : "");
    printf("%-36s | %5s | %9s | %9s | %9s | %8s | %11s | %6s | %6s | %7s | %11s | %s\n", "variant", "grid", "median ms", "min",
           "max", "TFLOP/s", "% of cuBLAS", "W", "MHz", "mJ/GEMM", "max rel err", "ok");
    fflush(stdout);
    for (const Variant& v : variants) {
        const bool ok = v.nans == 0 && v.rel_err < TOLERANCE;
        char grid[16] = "-";
        if (v.grid) snprintf(grid, sizeof grid, "%d", v.grid);
        if (ncu_once) {
            printf("%-36s | %5s | %9s | %9s | %9s | %8s | %11s | %6s | %6s | %7s | %11.3g | %s", v.name.c_str(), grid, "-", "-", "-",
                   "-", "-", "-", "-", "-", v.rel_err, ok ? "ok" : "FAIL");
        } else {
            printf("%-36s | %5s | %9.4f | %9.4f | %9.4f | %8.1f | %10.1f%% | %6.1f | %6.0f | %7.1f | %11.3g | %s", v.name.c_str(),
                   grid, v.median_ms, v.min_ms, v.max_ms, flops / (v.median_ms * 1e-3) / 1e12, 100.0 * ref.median_ms / v.median_ms,
                   v.watts, v.sm_mhz, v.mj_per_gemm, v.rel_err, ok ? "ok" : "FAIL");
        }
        if (v.nans) printf(" (%lld NaN)", v.nans);
        printf("\n");
        fflush(stdout);
    }

    for (Variant& v : variants) CUDA_CHECK(cudaFree(v.c));
    for (void* p : {(void*)a, (void*)b, (void*)a_pad, (void*)bt_pad, (void*)a_plain, (void*)b_plain}) CUDA_CHECK(cudaFree(p));
}

int main(int argc, char** argv) {
    struct Size {
        int m, k, n;
    };
    std::vector<Size> sizes;
    bool ncu_once = false;
    int sustained = 0;
    bool reverse = false, ladder = false, flush = false;
    for (int i = 1; i < argc; ++i) {
        Size s;
        if (!strcmp(argv[i], "--ncu-once")) {
            ncu_once = true;
        } else if (!strcmp(argv[i], "--reverse")) {
            reverse = true;
        } else if (!strcmp(argv[i], "--ladder")) {
            ladder = true;
            sustained = 11;
        } else if (!strcmp(argv[i], "--flush")) {
            flush = true;
        } else if (!strcmp(argv[i], "--sustained") && i + 1 < argc && atoi(argv[i + 1]) >= 2) {
            sustained = atoi(argv[++i]);
        } else if (sscanf(argv[i], "%dx%dx%d", &s.m, &s.k, &s.n) == 3 && s.m > 0 && s.k > 0 && s.n > 0) {
            sizes.push_back(s);
        } else {
            fprintf(stderr, "usage: %s [MxKxN ...] [--ncu-once] [--sustained N | --ladder] [--reverse] [--flush]   (not understood: %s)\n", argv[0], argv[i]);
            return 1;
        }
    }
    if (sizes.empty()) sizes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {4000, 4000, 4000}};

    int device = 0, driver = 0, runtime = 0, clock_khz = 0, mem_khz = 0;
    CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    // CUDA 13's cudaDeviceProp has no clock fields any more: the attributes still say them.
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&mem_khz, cudaDevAttrMemoryClockRate, device));
    CUDA_CHECK(cudaDriverGetVersion(&driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
    printf("device: %s (cc %d.%d), %d SMs, SM clock %d MHz, memory clock %d MHz, L2 %d MiB\n", prop.name, prop.major,
           prop.minor, prop.multiProcessorCount, clock_khz / 1000, mem_khz / 1000, prop.l2CacheSize >> 20);
    printf("driver API %d, runtime %d%s\n", driver, runtime, ncu_once ? ", --ncu-once: one untimed launch each" : "");
    fflush(stdout);

    if (nvmlInit_v2() != 0 || nvmlDeviceGetHandleByIndex_v2(0, &nvml_device) != 0) {
        fprintf(stderr, "NVML: no GPU 0\n");
        return 1;
    }
    cublasHandle_t cublas;
    CUBLAS_CHECK(cublasCreate_v2(&cublas));
    // --flush: a memset of twice L2's size before each timed launch leaves none of the GEMMs' data there.
    float* scratch = nullptr;
    const size_t flush_bytes = 2 * (size_t)prop.l2CacheSize;
    if (flush) CUDA_CHECK(cudaMalloc(&scratch, flush_bytes));
    for (const Size& s : sizes)
        bench(s.m, s.k, s.n, prop.multiProcessorCount, cublas, ncu_once, sustained, reverse, ladder, scratch, flush_bytes);
    if (scratch) CUDA_CHECK(cudaFree(scratch));
    CUBLAS_CHECK(cublasDestroy_v2(cublas));
    return 0;
}
#endif  // !__CUDA_ARCH__
