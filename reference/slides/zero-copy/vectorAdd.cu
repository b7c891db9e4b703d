// vectorAdd.cu, Korean notes (004, the post on pinned, zero-copy and portable memory, "고정 메모리와
// 제로 메모리 그리고 포터블 메모리", and the nvprof run of its ZeroCopy sample). c = a + b for N ints
// in zero-copy memory: a, b and c allocated with cudaHostAlloc(..., cudaHostAllocMapped), the
// kernel given their addresses from cudaHostGetDevicePointer, so it reads a and b and writes c across
// the bus, with no copies. One launch, then the host waits for it.
//
// The notes show the sample's nvprof output, not its code; this follows that output's calls: 3 x
// cudaHostAlloc, 3 x cudaHostGetDevicePointer, one launch of vectorAdd(int*, int*, int*) (three
// arguments: the grid covers N exactly), one synchronization, 3 x cudaFreeHost, and nothing else:
// no events, no copies. Like the sample it prints nothing: nvprof timed it (vectorAdd 371.14 us).
// Run it under a profiler for the same figure (nsys profile --stats=true, or ncu).
//
// N is not printed. Chosen: N = 1 << 19 ints, 2 MiB per vector, which fits the notes' 371 us: the
// kernel reads 4 MiB across the bus (and writes 2 MiB the other way), about 11 GB/s, what PCIe 3 x16
// gives (N = 1 << 24 would have taken some 12 ms). 256 threads per block (not printed either).
// Fixed from the notes: cudaThreadSynchronize, removed in CUDA 13, is cudaDeviceSynchronize.
// Added: every CUDA call is checked (CHECK), so a failure ends the program with exit code 1.
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                             \
    do {                                                                                        \
        cudaError_t result = (call);                                                            \
        if (result != cudaSuccess) {                                                            \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
                         cudaGetErrorString(result));                                           \
            std::exit(1);                                                                       \
        }                                                                                       \
    } while (0)

const int N = 1 << 19;
const int nThreads = 256;

__global__ void vectorAdd(int* a, int* b, int* c) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    c[tid] = a[tid] + b[tid];
}

int main() {
    const size_t size = N * sizeof(int);
    int *a, *b, *c;  // zero-copy host memory
    CHECK(cudaHostAlloc((void**)&a, size, cudaHostAllocMapped));
    CHECK(cudaHostAlloc((void**)&b, size, cudaHostAllocMapped));
    CHECK(cudaHostAlloc((void**)&c, size, cudaHostAllocMapped));
    for (int i = 0; i < N; i++) {
        a[i] = i;
        b[i] = 2 * i;
    }

    int *dev_a, *dev_b, *dev_c;  // the same memory, as the kernel addresses it
    CHECK(cudaHostGetDevicePointer((void**)&dev_a, a, 0));
    CHECK(cudaHostGetDevicePointer((void**)&dev_b, b, 0));
    CHECK(cudaHostGetDevicePointer((void**)&dev_c, c, 0));

    vectorAdd<<<N / nThreads, nThreads>>>(dev_a, dev_b, dev_c);
    CHECK(cudaGetLastError());  // not in the notes: a launch reports its own errors only here
    CHECK(cudaDeviceSynchronize());  // notes: cudaThreadSynchronize, removed in CUDA 13

    CHECK(cudaFreeHost(a));
    CHECK(cudaFreeHost(b));
    CHECK(cudaFreeHost(c));
    return 0;
}
