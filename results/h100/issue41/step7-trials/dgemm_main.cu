// dgemm_main.cu: times every variant of dgemm_kernels.cu beside cuBLAS's DGEMM in the same process.
// Per size: A, B uniform in [-1, 1]; cuBLAS's C is the reference; every kernel's C is poisoned (NaN)
// before its first launch and compared (max |C - ref| / max |ref|). Timing: ROUNDS rounds, each
// cuBLAS then every variant once, each launch between two events; the median per kernel.
// Usage: dgemm [ncu name-substring...]  ("ncu": 4096 only, one warm-up and one launch per kernel).
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>
#include <cuda_runtime.h>
#ifndef NO_CUBLAS
#include <cublas_v2.h>
#endif
#include "dgemm_common.h"

#define CK(x)                                                                                  \
    do {                                                                                       \
        cudaError_t err_ = (x);                                                                   \
        if (err_ != cudaSuccess) {                                                              \
            printf("%s: %s (line %d)\n", #x, cudaGetErrorString(err_), __LINE__);                \
            exit(1);                                                                           \
        }                                                                                      \
    } while (0)

struct Size {
    int m, n, k;
};

#ifndef NO_CUBLAS
static cublasHandle_t handle;
// Row-major C = A B is column-major C^T = B^T A^T.
static void cublas_dgemm(const Size& s, const double* a, const double* b, double* c) {
    const double one = 1, zero = 0;
    cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, s.n, s.m, s.k, &one, b, s.n, a, s.k, &zero, c, s.n);
}
#else
static void cublas_dgemm(const Size&, const double*, const double*, double*) {}
#endif

static float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int main(int argc, char** argv) {
    const bool ncu = argc > 1 && !strcmp(argv[1], "ncu");
    std::vector<std::string> only;
    for (int i = 2; i < argc; ++i) {  // substrings of variant names, split at ','
        std::string arg = argv[i];
        for (size_t from = 0, to; from <= arg.size(); from = to + 1) {
            to = arg.find(',', from);
            if (to == std::string::npos) to = arg.size();
            if (to > from) only.push_back(arg.substr(from, to - from));
        }
    }
#ifndef NO_CUBLAS
    cublasCreate(&handle);
#endif
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, 0));
    printf("# %s, %d SMs, CC %d.%d\n", prop.name, prop.multiProcessorCount, prop.major, prop.minor);
    int count;
    const Variant* all = variants(&count);
    std::vector<const Variant*> vs;
    for (int i = 0; i < count; ++i) {
        bool keep = only.empty();
        for (auto& o : only) keep |= std::string(all[i].name).find(o) != std::string::npos;
        if (keep) vs.push_back(&all[i]);
    }
    printf("# %-32s %5s %6s %7s %9s\n", "variant", "regs", "local", "smem", "blocks/SM");
    for (auto* v : vs) {
        cudaFuncAttributes at;
        CK(cudaFuncGetAttributes(&at, v->func()));
        CK(cudaFuncSetAttribute(v->func(), cudaFuncAttributeMaxDynamicSharedMemorySize, v->shared_bytes));
        int per_sm = 0;
        CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, v->func(), at.maxThreadsPerBlock, v->shared_bytes));
        printf("# %-32s %5d %6zu %7d %9d\n", v->name, at.numRegs, at.localSizeBytes, v->shared_bytes, per_sm);
    }
    std::vector<Size> sizes = {{4096, 4096, 4096}, {8192, 8192, 8192}, {1024, 1024, 1024},
                               {1000, 1531, 777},  {129, 257, 33},     {1030, 1026, 1034},
                               {4096, 4096, 4096}};  // 4096 again: the spread between two passes
    if (ncu) sizes = {{4096, 4096, 4096}};
    printf("%-32s %16s %9s %8s %9s %12s\n", "variant", "m x n x k", "ms", "TFLOP/s", "%cuBLAS", "rel.err");
    for (const Size& s : sizes) {
        const int rounds = ncu ? 1 : (s.m >= 8192 ? 11 : 21);
        const size_t na = (size_t)s.m * s.k, nb = (size_t)s.k * s.n, nc = (size_t)s.m * s.n;
        std::vector<double> ha(na), hb(nb), hc(nc), hr(nc);
        std::mt19937_64 rng(12345);
        std::uniform_real_distribution<double> u(-1, 1);
        for (auto& x : ha) x = u(rng);
        for (auto& x : hb) x = u(rng);
        double *a, *b, *c, *ref;
        CK(cudaMalloc(&a, na * 8));
        CK(cudaMalloc(&b, nb * 8));
        CK(cudaMalloc(&c, nc * 8));
        CK(cudaMalloc(&ref, nc * 8));
        CK(cudaMemcpy(a, ha.data(), na * 8, cudaMemcpyHostToDevice));
        CK(cudaMemcpy(b, hb.data(), nb * 8, cudaMemcpyHostToDevice));
        MatrixView<double> va{s.m, s.k, a}, vb{s.k, s.n, b}, vc{s.m, s.n, c};
        cublas_dgemm(s, a, b, ref);
        CK(cudaDeviceSynchronize());
        CK(cudaMemcpy(hr.data(), ref, nc * 8, cudaMemcpyDeviceToHost));
        double big = 0;
        for (double x : hr) big = std::max(big, std::fabs(x));
        // Correctness (first launch on a poisoned C) and warm-up.
        std::vector<double> err(vs.size());
        for (size_t i = 0; i < vs.size(); ++i) {
            CK(cudaMemset(c, 0xff, nc * 8));
            vs[i]->launch(va, vb, vc, 0);
            CK(cudaGetLastError());
            CK(cudaDeviceSynchronize());
            CK(cudaMemcpy(hc.data(), c, nc * 8, cudaMemcpyDeviceToHost));
            double e = 0;
            for (size_t j = 0; j < nc; ++j) {
                const double d = std::fabs(hc[j] - hr[j]);
                if (!(d <= e)) e = std::isnan(d) ? INFINITY : d;
            }
            err[i] = e / big;
        }
        // Timing, interleaved: cuBLAS, then each variant, per round.
        const int kernels = 1 + (int)vs.size();
        std::vector<cudaEvent_t> ev(2 * kernels);
        for (auto& e : ev) CK(cudaEventCreate(&e));
        std::vector<std::vector<float>> ms(kernels);
        for (int r = 0; r < rounds; ++r) {
            for (int q = 0; q < kernels; ++q) {
                CK(cudaEventRecord(ev[2 * q]));
                if (q == 0) cublas_dgemm(s, a, b, ref);
                else vs[q - 1]->launch(va, vb, vc, 0);
                CK(cudaEventRecord(ev[2 * q + 1]));
            }
            CK(cudaEventSynchronize(ev[2 * kernels - 1]));
            for (int q = 0; q < kernels; ++q) {
                float x;
                CK(cudaEventElapsedTime(&x, ev[2 * q], ev[2 * q + 1]));
                ms[q].push_back(x);
            }
        }
        CK(cudaGetLastError());
        const double flop = 2.0 * s.m * s.n * s.k;
        const float blas = median(ms[0]);
        char dims[64];
        snprintf(dims, sizeof dims, "%dx%dx%d", s.m, s.n, s.k);
        printf("%-32s %16s %9.4f %8.2f %9s %12s\n", "cuBLAS DGEMM", dims, blas, flop / (blas * 1e9), "100.0%", "-");
        for (size_t i = 0; i < vs.size(); ++i) {
            const float t = median(ms[i + 1]);
            char pct[16];
            snprintf(pct, sizeof pct, "%.1f%%", 100.0 * blas / t);
            printf("%-32s %16s %9.4f %8.2f %9s %12.1e%s\n", vs[i]->name, dims, t, flop / (t * 1e9), pct, err[i],
                   err[i] < 1e-12 ? "" : "  WRONG");
        }
        fflush(stdout);
        for (auto& e : ev) cudaEventDestroy(e);
        cudaFree(a);
        cudaFree(b);
        cudaFree(c);
        cudaFree(ref);
    }
    return 0;
}
