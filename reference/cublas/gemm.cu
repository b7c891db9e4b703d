// gemm.cu: not a slide program: cuBLAS's DGEMM and SGEMM at the size of lab-mmm's products, the speed
// limit that scripts/compare.sh sets beside the slides' mmm (compare rows "cuBLAS DGEMM" and "SGEMM").
//
//   gemm [N [REPETITIONS]]     defaults 1024, 10
//
// build: -lcublas
#include <cublas_v2.h>

#include "../check.h"
#include "../product_check.h"

#define CHECK_CUBLAS(opname, ...)                                                                          \
    do {                                                                                                   \
        cublasStatus_t status = opname(__VA_ARGS__);                                                       \
        if (status != CUBLAS_STATUS_SUCCESS) {                                                             \
            std::fprintf(stderr, "%s:%d: %s failed: status %d\n", __FILE__, __LINE__, #opname, (int)status); \
            std::exit(1);                                                                                  \
        }                                                                                                  \
    } while (0)

// C = A * B for row-major N x N matrices: cuBLAS is column-major, so it computes C^T = B^T * A^T.
template <typename T, typename Gemm>
static bool run(const char* label, Gemm gemm, cublasHandle_t handle, int N, int repetitions, double tolerance) {
    const size_t size = (size_t)N * N * sizeof(T);
    std::vector<T> A((size_t)N * N), B((size_t)N * N), C((size_t)N * N);
    Random random(1);
    for (size_t i = 0; i < A.size(); ++i) A[i] = (T)random.uniform(-1, 1), B[i] = (T)random.uniform(-1, 1);
    T *d_A, *d_B, *d_C;
    CHECK_CUDA(cudaMalloc, (void**)&d_A, size);
    CHECK_CUDA(cudaMalloc, (void**)&d_B, size);
    CHECK_CUDA(cudaMalloc, (void**)&d_C, size);
    CHECK_CUDA(cudaMemcpy, d_A, A.data(), size, cudaMemcpyHostToDevice);
    CHECK_CUDA(cudaMemcpy, d_B, B.data(), size, cudaMemcpyHostToDevice);
    CHECK_CUDA(cudaMemset, d_C, 0xFF, size);
    const T one = 1, zero = 0;
    const Timing timing = time_gpu(repetitions, [&] {
        CHECK_CUBLAS(gemm, handle, CUBLAS_OP_N, CUBLAS_OP_N, N, N, N, &one, d_B, N, d_A, N, &zero, d_C, N);
    });
    CHECK_CUDA(cudaMemcpy, C.data(), d_C, size, cudaMemcpyDeviceToHost);
    const double error = product_error(A.data(), B.data(), C.data(), N, N, N, random);
    std::printf("%s", label);
    print_time("", timing);
    std::printf("    %.0f GFLOP/s, max relative error (Freivalds) %.1e\n", 2.0 * N * N * N / timing.median() / 1e6, error);
    CHECK_CUDA(cudaFree, d_A); CHECK_CUDA(cudaFree, d_B); CHECK_CUDA(cudaFree, d_C);
    return error <= tolerance;
}

int main(int argc, char** argv) {
    const int N = (int)argument(argc, argv, 1, 1024);
    const int repetitions = (int)argument(argc, argv, 2, 10);
    cublasHandle_t handle;
    CHECK_CUBLAS(cublasCreate, &handle);
    // The default math mode: DGEMM on the FP64 tensor cores where there are any, SGEMM in full FP32.
    bool pass = run<double>("cuBLAS DGEMM:", cublasDgemm, handle, N, repetitions, 1e-12);
    pass &= run<float>("cuBLAS SGEMM:", cublasSgemm, handle, N, repetitions, 1e-4);
    CHECK_CUBLAS(cublasDestroy, handle);
    return print_result(pass);
}
