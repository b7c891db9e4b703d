// tf32-bench.cu: issue 65, run 36 (one H200): run 30's bench with three trials of step 17 as it is in
// the ladder (two k steps a wgmma group; below the include): each stage freed as soon as its wgmmas
// are done (IN_FLIGHT 0), and a stage's four fragments loaded at once after its consumer's wgmmas
// are done (as step 12's narrow tiles), with IN_FLIGHT 1 and 0. Run 30: step 17's GEMM (wgmma_tma_tf32_wide in mmm_wgmma.cu:
// TF32 with no transpose of B, 256 x 128 tiles computed as C^T, B's tile through registers k step by
// k step, C stored by TMA) against step 12 (wgmma_tma_tf32 on 128 x 256 tiles, on a B^T made
// before the timing, and with its transpose as the ladder times it) and cuBLAS's TF32 GEMM on the
// same f32 operands, timed kernel by kernel, interleaved, median of 20. Each C is checked against
// cuBLAS's.
//
// From the repository's root:
//   nvcc -std=c++17 -O3 -arch=sm_90a -I kernels/cuda results/h200/issue65/run-36/tf32-bench.cu
//        -lcublas -lcuda -o bench && ./bench [MxKxN ...] [--ncu-once]
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

// As run 20's bench: the host pass sees the sm_90a kernels' declarations, to make their launch stubs.
#if !defined(__CUDA_ARCH__) && !defined(__CUDA_ARCH_FEAT_SM90_ALL)
#define __CUDA_ARCH_FEAT_SM90_ALL 1
#define BENCH_HOST_SEES_SM90A
#endif
#include "mmm_wgmma.cu"
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
// Trial: a stage's four fragments loaded at once, after the consumer's wgmmas are done, and its four
// wgmmas issued as one group (the other consumer's keep the tensor cores busy meanwhile).
struct WideWholeStage : Tf32Wide {
    static constexpr bool WAITS_BEFORE_FRAGMENTS = true;
    static __device__ __forceinline__ void load_fragments(Fragments& f, unsigned int stage, int consumer) {
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) load_fragment(f.a[kk], kk, boxes(stage, consumer));
    }
    static __device__ __forceinline__ void mma(float (&d)[ACCUMULATORS], Fragments& f, unsigned int stage, int,
                                               bool first) {
        const unsigned long long a_t = descriptor(stage);
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) mma_tf32(d, f.a[kk], a_t + 2 * kk, !first || kk > 0);
    }
};
#define WIDE_TRIAL(name, Tiles, IN_FLIGHT)                                                                            \
    extern "C" __global__ void __launch_bounds__(THREADS, 1)                                                          \
        name(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b,                            \
             const __grid_constant__ CUtensorMap c_map, MatrixView<float> c, int k, int stages_per_slice, int) {      \
        wgmma_tma<Tiles, 1, IN_FLIGHT, true>(&a, &b, c, k, stages_per_slice, &c_map);                                \
    }
WIDE_TRIAL(wide_in_flight_0, Tf32Wide, 0)
WIDE_TRIAL(whole_stage_1, WideWholeStage, 1)
WIDE_TRIAL(whole_stage_0, WideWholeStage, 0)
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
constexpr int CUBLAS_OP_N = 0, CUBLAS_COMPUTE_32F_FAST_TF32 = 77, CUBLAS_GEMM_DEFAULT = -1;

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

// An f32 operand read through TMA as TF32: `rows` x `cols` (rows `row_length` apart), boxes of 32
// floats (128 bytes) by `box_rows`, the 128-byte swizzle, zeros past the matrix (as wgmma.rs encodes).
static CUtensorMap tf32_map(const float* base, int rows, int cols, int row_length, unsigned box_rows) {
    alignas(64) CUtensorMap map;
    const cuuint64_t dims[2] = {(cuuint64_t)cols, (cuuint64_t)rows};
    const cuuint64_t row_bytes[1] = {(cuuint64_t)row_length * sizeof(float)};
    const cuuint32_t box[2] = {32, box_rows}, element_strides[2] = {1, 1};
    CU_CHECK(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_TFLOAT32, 2, const_cast<float*>(base), dims,
                                    row_bytes, box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE,
                                    CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                                    CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return map;
}
// C (rows x cols, n % 4 == 0) as step 17 stores it: cols x rows x 1 slice, boxes of 32 x 32 x 1.
static CUtensorMap c_map_32(const float* base, int rows, int cols) {
    alignas(64) CUtensorMap map;
    const cuuint64_t dims[3] = {(cuuint64_t)cols, (cuuint64_t)rows, 1};
    const cuuint64_t strides[2] = {(cuuint64_t)cols * sizeof(float), (cuuint64_t)cols * rows * sizeof(float)};
    const cuuint32_t box[3] = {32, 32, 1}, element_strides[3] = {1, 1, 1};
    CU_CHECK(cuTensorMapEncodeTiled(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 3, const_cast<float*>(base), dims, strides,
                                    box, element_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                    CU_TENSOR_MAP_L2_PROMOTION_NONE, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE));
    return map;
}

static int ceil_div(long long a, long long b) { return (int)((a + b - 1) / b); }
static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : 0.5f * (v[v.size() / 2 - 1] + v[v.size() / 2]);
}

// One row of the table: a GEMM writing its own C, its launch, and its timed launches.
struct Variant {
    std::string name;
    int grid;  // 0: cuBLAS picks
    float* c;
    std::function<void()> launch;
    std::vector<cudaEvent_t> start, stop;
    float median_ms = 0, min_ms = 0, max_ms = 0, rel_err = 0;
    long long nans = 0;
};

constexpr int WARMUP = 3, REPS = 20;
constexpr double TOLERANCE = 5e-3;  // the ladder's TF32 tolerance, of C's largest element

static void bench(int m, int k, int n, int sms, cublasHandle_t cublas, bool ncu_once) {
    printf("\n== m %d  k %d  n %d ==\n", m, k, n);
    fflush(stdout);
    const size_t mk = (size_t)m * k, kn = (size_t)k * n, mn = (size_t)m * n;
    const int ldk = (k + 3) / 4 * 4, ldn = (n + 3) / 4 * 4;  // TMA: rows on 16 bytes
    float *a, *b, *a_pad, *b_pad, *bt_pad;
    CUDA_CHECK(cudaMalloc(&a, mk * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b, kn * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&a_pad, (size_t)m * ldk * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&b_pad, (size_t)k * ldn * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&bt_pad, (size_t)n * ldk * sizeof(float)));
    CUDA_CHECK(cudaMemset(a_pad, 0, (size_t)m * ldk * sizeof(float)));
    CUDA_CHECK(cudaMemset(b_pad, 0, (size_t)k * ldn * sizeof(float)));
    CUDA_CHECK(cudaMemset(bt_pad, 0, (size_t)n * ldk * sizeof(float)));
    fill_hash<<<1024, 256>>>(a, mk, 0xA11CEull);
    fill_hash<<<1024, 256>>>(b, kn, 0xB0Bull);
    CUDA_CHECK(cudaGetLastError());
    copy_pad_f32<<<dim3(std::min(ceil_div(k, 256), 64), std::min(m, 4096)), 256>>>(MatrixView<float>{m, k, a}, a_pad, ldk);
    copy_pad_f32<<<dim3(std::min(ceil_div(n, 256), 64), std::min(k, 4096)), 256>>>(MatrixView<float>{k, n, b}, b_pad, ldn);
    transpose_pad_f32<<<dim3(ceil_div(n, 32), ceil_div(k, 32)), dim3(32, 8)>>>(MatrixView<float>{k, n, b}, bt_pad, ldk);
    CUDA_CHECK(cudaGetLastError());
    CUDA_CHECK(cudaDeviceSynchronize());

    const int stages = ceil_div(k, 32);  // one slice: c is C itself
    const CUtensorMap map_a128 = tf32_map(a_pad, m, k, ldk, 128), map_bt = tf32_map(bt_pad, n, k, ldk, 256);
    const CUtensorMap map_a256 = tf32_map(a_pad, m, k, ldk, 256), map_b = tf32_map(b_pad, k, n, ldn, 32);

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
    const int tiles12 = ceil_div(m, 128) * ceil_div(n, 256), tiles17 = ceil_div(m, 256) * ceil_div(n, 128);
    const int grid12 = std::min(tiles12, sms);
    add("step 12 GEMM on B^T made before", grid12, [=](float* c) {
        wgmma_tma_tf32<<<grid12, HOST_THREADS, HOST_SHARED_BYTES>>>(map_a128, map_bt, MatrixView<float>{m, n, c}, k, stages, 0);
        CUDA_CHECK(cudaGetLastError());
    });
    add("step 12 as timed: transpose + GEMM", grid12, [=](float* c) {
        transpose_pad_f32<<<dim3(ceil_div(n, 32), ceil_div(k, 32)), dim3(32, 8)>>>(MatrixView<float>{k, n, b}, bt_pad, ldk);
        wgmma_tma_tf32<<<grid12, HOST_THREADS, HOST_SHARED_BYTES>>>(map_a128, map_bt, MatrixView<float>{m, n, c}, k, stages, 0);
        CUDA_CHECK(cudaGetLastError());
    });
    // Step 17: grids of one block per multiprocessor, and of the fewest blocks that need no more
    // rounds of tiles (wgmma::blocks for steps 14 to 16).
    const int grid_sms = std::min(tiles17, sms), grid_rounds = ceil_div(tiles17, ceil_div(tiles17, sms));
    for (int tma_store = 1; tma_store >= 0; --tma_store) {
        if (tma_store && n % 4 != 0) continue;
        for (int grid : {grid_sms, grid_rounds}) {
            if (!tma_store && grid != grid_sms) continue;
            add(std::string("step 17 ") + (tma_store ? "TMA store" : "register store"), grid, [=](float* c) {
                const CUtensorMap map_c = tma_store ? c_map_32(c, m, n) : CUtensorMap{};
                wgmma_tma_tf32_wide<<<grid, HOST_THREADS, HOST_SHARED_BYTES + HOST_STORE_BYTES>>>(
                    map_a256, map_b, map_c, MatrixView<float>{m, n, c}, k, stages, tma_store, 0);
                CUDA_CHECK(cudaGetLastError());
            });
        }
    }
    using Wide = void (*)(const CUtensorMap, const CUtensorMap, const CUtensorMap, MatrixView<float>, int, int, int);
    const std::pair<const char*, Wide> trials[] = {{"trial: IN_FLIGHT 0", wide_in_flight_0},
                                                   {"trial: whole stage, IN_FLIGHT 1", whole_stage_1},
                                                   {"trial: whole stage, IN_FLIGHT 0", whole_stage_0}};
    for (auto [name, kernel] : trials) {
        if (n % 4 != 0) continue;
        add(name, grid_rounds, [=](float* c) {
            const CUtensorMap map_c = c_map_32(c, m, n);
            kernel<<<grid_rounds, HOST_THREADS, HOST_SHARED_BYTES + HOST_STORE_BYTES>>>(
                map_a256, map_b, map_c, MatrixView<float>{m, n, c}, k, stages, 1);
            CUDA_CHECK(cudaGetLastError());
        });
    }
    // C = A B in row-major is C^T = B^T A^T in cuBLAS's column-major: B as an n x k matrix, A as k x m.
    add("cuBLAS GemmEx TF32", 0, [=](float* c) {
        const float one = 1.0f, zero = 0.0f;
        CUBLAS_CHECK(cublasGemmEx(cublas, CUBLAS_OP_N, CUBLAS_OP_N, n, m, k, &one, b, CUDA_R_32F, n, a, CUDA_R_32F, k,
                                  &zero, c, CUDA_R_32F, n, CUBLAS_COMPUTE_32F_FAST_TF32, CUBLAS_GEMM_DEFAULT));
    });
    Variant& ref = variants.back();

    for (Variant& v : variants) CUDA_CHECK(cudaMemset(v.c, 0xFF, mn * sizeof(float)));  // NaN: unwritten shows
    for (Variant& v : variants) {
        v.launch();
        wait_for_gpu("first launch of " + v.name);
    }
    if (!ncu_once) {
        for (int rep = 1; rep < WARMUP; ++rep)
            for (Variant& v : variants) v.launch();
        for (Variant& v : variants) {
            v.start.resize(REPS);
            v.stop.resize(REPS);
            for (int rep = 0; rep < REPS; ++rep) {
                CUDA_CHECK(cudaEventCreate(&v.start[rep]));
                CUDA_CHECK(cudaEventCreate(&v.stop[rep]));
            }
        }
        for (int rep = 0; rep < REPS; ++rep) {
            for (Variant& v : variants) {
                CUDA_CHECK(cudaEventRecord(v.start[rep]));
                v.launch();
                CUDA_CHECK(cudaEventRecord(v.stop[rep]));
            }
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
    for (size_t i = 0; i < mn; ++i) {
        if (std::isnan(want[i])) ++ref.nans;
        else ref_max = std::max(ref_max, (double)std::fabs(want[i]));
    }
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
    const double flops = 2.0 * m * n * k;
    printf("%-36s | %5s | %9s | %9s | %9s | %8s | %11s | %11s | %s\n", "variant", "grid", "median ms", "min", "max",
           "TFLOP/s", "% of cuBLAS", "max rel err", "ok");
    for (const Variant& v : variants) {
        const bool ok = v.nans == 0 && v.rel_err < TOLERANCE;
        char grid[16] = "-";
        if (v.grid) snprintf(grid, sizeof grid, "%d", v.grid);
        if (ncu_once) {
            printf("%-36s | %5s | %9s | %9s | %9s | %8s | %11s | %11.3g | %s", v.name.c_str(), grid, "-", "-", "-", "-",
                   "-", v.rel_err, ok ? "ok" : "FAIL");
        } else {
            printf("%-36s | %5s | %9.4f | %9.4f | %9.4f | %8.1f | %10.1f%% | %11.3g | %s", v.name.c_str(), grid,
                   v.median_ms, v.min_ms, v.max_ms, flops / (v.median_ms * 1e-3) / 1e12, 100.0 * ref.median_ms / v.median_ms,
                   v.rel_err, ok ? "ok" : "FAIL");
        }
        if (v.nans) printf(" (%lld NaN)", v.nans);
        printf("\n");
        fflush(stdout);
    }
    for (Variant& v : variants) CUDA_CHECK(cudaFree(v.c));
    for (void* p : {(void*)a, (void*)b, (void*)a_pad, (void*)b_pad, (void*)bt_pad}) CUDA_CHECK(cudaFree(p));
}

int main(int argc, char** argv) {
    struct Size {
        int m, k, n;
    };
    std::vector<Size> sizes;
    bool ncu_once = false;
    for (int i = 1; i < argc; ++i) {
        Size s;
        if (!strcmp(argv[i], "--ncu-once")) {
            ncu_once = true;
        } else if (sscanf(argv[i], "%dx%dx%d", &s.m, &s.k, &s.n) == 3 && s.m > 0 && s.k > 0 && s.n > 0) {
            sizes.push_back(s);
        } else {
            fprintf(stderr, "usage: %s [MxKxN ...] [--ncu-once]   (not understood: %s)\n", argv[0], argv[i]);
            return 1;
        }
    }
    if (sizes.empty()) sizes = {{4096, 4096, 4096}, {8192, 8192, 8192}};
    int device = 0, clock_khz = 0;
    CUDA_CHECK(cudaSetDevice(device));
    cudaDeviceProp prop;
    CUDA_CHECK(cudaGetDeviceProperties(&prop, device));
    CUDA_CHECK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, device));
    printf("device: %s (cc %d.%d), %d SMs, SM clock %d MHz%s\n", prop.name, prop.major, prop.minor,
           prop.multiProcessorCount, clock_khz / 1000, ncu_once ? ", --ncu-once: one untimed launch each" : "");
    fflush(stdout);
    CUDA_CHECK(cudaFuncSetAttribute((const void*)wgmma_tma_tf32, cudaFuncAttributeMaxDynamicSharedMemorySize, HOST_SHARED_BYTES));
    for (const void* wide : {(const void*)wgmma_tma_tf32_wide, (const void*)wide_in_flight_0, (const void*)whole_stage_1,
                             (const void*)whole_stage_0})
        CUDA_CHECK(cudaFuncSetAttribute(wide, cudaFuncAttributeMaxDynamicSharedMemorySize, HOST_SHARED_BYTES + HOST_STORE_BYTES));
    cublasHandle_t cublas;
    CUBLAS_CHECK(cublasCreate_v2(&cublas));
    for (const Size& s : sizes) bench(s.m, s.k, s.n, prop.multiProcessorCount, cublas, ncu_once);
    CUBLAS_CHECK(cublasDestroy_v2(cublas));
    return 0;
}
#endif  // !__CUDA_ARCH__
