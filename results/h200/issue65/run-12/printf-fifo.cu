// How long a kernel that prints from each of a million threads takes, for several printf FIFO sizes.
#include <cstdio>
#include <cstdlib>
#include <cuda_runtime.h>
__global__ void chatty(double *c, int rows, int cols) {
    int row = blockIdx.y * blockDim.y + threadIdx.y, col = blockIdx.x * blockDim.x + threadIdx.x;
    if (row < rows && col < cols) {
        double sum = row * 0.5 + col;
        c[row * cols + col] = sum;
        printf("block (%d, %d) thread (%d, %d): c(%d, %d) = %g\n", blockIdx.x, blockIdx.y, threadIdx.x, threadIdx.y, row, col, sum);
    }
}
int main(int argc, char **argv) {
    size_t fifo = strtoull(argv[1], nullptr, 10);
    int n = atoi(argv[2]);
    if (fifo) cudaDeviceSetLimit(cudaLimitPrintfFifoSize, fifo);
    size_t got; cudaDeviceGetLimit(&got, cudaLimitPrintfFifoSize);
    double *c; cudaMalloc(&c, sizeof(double) * n * n);
    dim3 block(16, 16), grid((n + 15) / 16, (n + 15) / 16);
    cudaEvent_t a, b; cudaEventCreate(&a); cudaEventCreate(&b);
    for (int i = 0; i < 3; ++i) {
        cudaEventRecord(a); chatty<<<grid, block>>>(c, n, n); cudaEventRecord(b); cudaEventSynchronize(b);
        float ms; cudaEventElapsedTime(&ms, a, b);
        fprintf(stderr, "fifo %zu n %d launch %d: %.1f ms (%s)\n", got, n, i, ms, cudaGetErrorString(cudaGetLastError()));
    }
    return 0;
}
