// vectorAdd.cu: the Korean notes' zero-copy sample. c = a + b with a, b and c in mapped host memory
// (cudaHostAlloc with cudaHostAllocMapped, pointers from cudaHostGetDevicePointer): the kernel reads
// and writes across the bus, no copies. Next to it the same job with explicit copies from pinned memory.
//
//   vectorAdd [N [REPETITIONS]]     defaults 2^24 elements, 3: lab-mapped's defaults
//
// Beside: lab-mapped, row vectorAdd. The notes' kernel takes int*; floats here, as in lab-mapped (the
// same 4 bytes per element, so the same traffic).
#include "../check.h"

__global__ void vectorAdd(const float* a, const float* b, float* c, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

int main(int argc, char** argv) {
    const int N = (int)argument(argc, argv, 1, 1 << 24);
    const int repetitions = (int)argument(argc, argv, 2, 3);
    const size_t size = N * sizeof(float);
    const int threads = 256, blocks = (N + threads - 1) / threads;
    float *a, *b, *c;  // mapped host memory
    CHECK_CUDA(cudaHostAlloc, (void**)&a, size, cudaHostAllocMapped);
    CHECK_CUDA(cudaHostAlloc, (void**)&b, size, cudaHostAllocMapped);
    CHECK_CUDA(cudaHostAlloc, (void**)&c, size, cudaHostAllocMapped);
    float *dev_a, *dev_b, *dev_c;  // where the kernel sees them
    CHECK_CUDA(cudaHostGetDevicePointer, (void**)&dev_a, a, 0);
    CHECK_CUDA(cudaHostGetDevicePointer, (void**)&dev_b, b, 0);
    CHECK_CUDA(cudaHostGetDevicePointer, (void**)&dev_c, c, 0);
    float *gpu_a, *gpu_b, *gpu_c;  // device memory for the explicit copies (from the same pinned a, b)
    CHECK_CUDA(cudaMalloc, (void**)&gpu_a, size);
    CHECK_CUDA(cudaMalloc, (void**)&gpu_b, size);
    CHECK_CUDA(cudaMalloc, (void**)&gpu_c, size);
    Random random(1);
    for (int i = 0; i < N; i++) a[i] = (float)random.uniform(-1, 1), b[i] = (float)random.uniform(-1, 1);
    auto wrong_elements = [&] {
        int wrong = 0;
        for (int i = 0; i < N; i++) wrong += c[i] != a[i] + b[i];
        return wrong;
    };

    for (int i = 0; i < N; i++) c[i] = NAN;
    const Timing explicit_copies = time_gpu(repetitions, [&] {
        CHECK_CUDA(cudaMemcpyAsync, gpu_a, a, size, cudaMemcpyHostToDevice, (cudaStream_t)0);
        CHECK_CUDA(cudaMemcpyAsync, gpu_b, b, size, cudaMemcpyHostToDevice, (cudaStream_t)0);
        vectorAdd<<<blocks, threads>>>(gpu_a, gpu_b, gpu_c, N);
        CHECK_LAUNCH();
        CHECK_CUDA(cudaMemcpyAsync, c, gpu_c, size, cudaMemcpyDeviceToHost, (cudaStream_t)0);
    });
    int wrong = wrong_elements();

    for (int i = 0; i < N; i++) c[i] = NAN;
    const Timing zero_copy = time_gpu(repetitions, [&] {
        vectorAdd<<<blocks, threads>>>(dev_a, dev_b, dev_c, N);
        CHECK_LAUNCH();
    });
    wrong += wrong_elements();

    std::printf("Touched once: %d floats; explicit = pinned buffers copied with cudaMemcpyAsync, zero-copy = mapped\n\n", N);
    std::printf("| job | explicit copies GPU ms | zero-copy GPU ms | zero-copy / explicit | check |\n");
    std::printf("|-----|------------------------|------------------|----------------------|-------|\n");
    std::printf("| vectorAdd (2 reads, 1 write) | %.3f | %.3f | %.2f | %s |\n", explicit_copies.median(), zero_copy.median(),
                zero_copy.median() / explicit_copies.median(), wrong ? "FAIL" : "PASS");
    CHECK_CUDA(cudaFree, gpu_a); CHECK_CUDA(cudaFree, gpu_b); CHECK_CUDA(cudaFree, gpu_c);
    CHECK_CUDA(cudaFreeHost, a); CHECK_CUDA(cudaFreeHost, b); CHECK_CUDA(cudaFreeHost, c);
    return print_result(wrong == 0);
}
