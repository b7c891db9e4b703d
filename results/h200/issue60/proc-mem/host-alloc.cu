// host-alloc.cu: the CUDA calls of the program weeks, for proc-opens.c to watch (run-2.sh).
#include <cstdio>
__global__ void twice(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2; }
int main() {
    const int n = 1 << 20;
    float *d, *h;
    cudaError_t e = cudaMalloc(&d, n * sizeof(float));
    std::printf("cudaMalloc: %s\n", cudaGetErrorString(e));
    e = cudaHostAlloc((void**)&h, n * sizeof(float), cudaHostAllocDefault);
    std::printf("cudaHostAlloc: %s\n", cudaGetErrorString(e));
    cudaStream_t s;
    cudaStreamCreate(&s);
    cudaMemcpyAsync(d, h, n * sizeof(float), cudaMemcpyHostToDevice, s);
    twice<<<n / 256, 256, 0, s>>>(d, n);
    cudaMemcpyAsync(h, d, n * sizeof(float), cudaMemcpyDeviceToHost, s);
    std::printf("stream: %s\n", cudaGetErrorString(cudaStreamSynchronize(s)));
    return 0;
}
