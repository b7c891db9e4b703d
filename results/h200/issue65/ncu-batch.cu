// Issue 65: can one Nsight Compute process measure many submissions, so that ncu's preparation
// (0.6 to 1.9 s a process, runs 54 to 56) is paid once a batch and not once a check? Run under ncu
// by ncu-batch.sh with week 3's metrics and options. For each cubin named on the command line, in
// order, in a primary context of its own (made by cudaFree(0), destroyed by cudaDeviceReset, so no
// two submissions' memory is ever on the GPU at once):
//   separator   a one-thread kernel `ncu_first_launch` of ours, which also tells the submissions'
//               rows apart in ncu's file (ncu-batch.py splits the file at each of its rows)
//   launches    the cubin's mmm_f64 and mmm_f32 on week 3's measured cases at BLOCK_SIZE 16
//               (64 x 64 x 64, 255 x 257 x 256, 1000 x 999 x 1001), f64 first, each waited for
// and prints one line: the cubin, the seconds each part took, and the first CUDA error, if any. A
// submission whose kernel faults is reset like the others, and the batch goes on: does ncu go on
// measuring the next one?
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cuda.h>
#include <cuda_runtime.h>
#include <vector>

__global__ void ncu_first_launch() {}

template <typename T> struct MatrixView {
    int rows;
    int cols;
    T *data;
};

static const auto start = std::chrono::steady_clock::now();

static double now() {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// One launch of `name` from `module` on an m x k x n product of values 1/(i % 7 + 1), waited for.
template <typename T> static CUresult launch(CUmodule module, const char *name, int m, int k, int n) {
    CUfunction f;
    CUresult r = cuModuleGetFunction(&f, module, name);
    if (r != CUDA_SUCCESS) return r;
    std::vector<T> host((size_t)(m > n ? m : n) * k);
    for (size_t i = 0; i < host.size(); ++i) host[i] = T(1) / T(i % 7 + 1);
    T *a, *b, *c;
    cudaMalloc(&a, sizeof(T) * m * k);
    cudaMalloc(&b, sizeof(T) * k * n);
    cudaMalloc(&c, sizeof(T) * m * n);
    cudaMemcpy(a, host.data(), sizeof(T) * m * k, cudaMemcpyHostToDevice);
    cudaMemcpy(b, host.data(), sizeof(T) * k * n, cudaMemcpyHostToDevice);
    cudaMemset(c, 0xff, sizeof(T) * m * n);
    MatrixView<T> va{m, k, a}, vb{k, n, b}, vc{m, n, c};
    void *params[] = {&va, &vb, &vc};
    r = cuLaunchKernel(f, (n + 15) / 16, (m + 15) / 16, 1, 16, 16, 1, 0, nullptr, params, nullptr);
    if (r == CUDA_SUCCESS) r = cuCtxSynchronize();
    cudaFree(a);
    cudaFree(b);
    cudaFree(c);
    return r;
}

int main(int argc, char **argv) {
    const int sizes[3][3] = {{64, 64, 64}, {255, 257, 256}, {1000, 999, 1001}};
    cuInit(0);
    for (int i = 1; i < argc; ++i) {
        double t0 = now();
        cudaFree(0);
        double t1 = now();
        ncu_first_launch<<<1, 1>>>();
        cudaDeviceSynchronize();
        double t2 = now();
        CUmodule module;
        CUresult r = cuModuleLoad(&module, argv[i]);
        for (int f64 = 1; f64 >= 0 && r == CUDA_SUCCESS; --f64)
            for (int s = 0; s < 3 && r == CUDA_SUCCESS; ++s)
                r = f64 ? launch<double>(module, "mmm_f64", sizes[s][0], sizes[s][1], sizes[s][2])
                        : launch<float>(module, "mmm_f32", sizes[s][0], sizes[s][1], sizes[s][2]);
        double t3 = now();
        const char *error = "no error";
        if (r != CUDA_SUCCESS) cuGetErrorName(r, &error);
        cudaDeviceReset();
        double t4 = now();
        printf("batch %d %s: context %.3f separator %.3f launches %.3f reset %.3f all %.3f (at %.3f) %s\n", i,
               argv[i], t1 - t0, t2 - t1, t3 - t2, t4 - t3, t4 - t0, t4, error);
        fflush(stdout);
    }
    return 0;
}
