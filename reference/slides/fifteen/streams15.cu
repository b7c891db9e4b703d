// streams15.cu, Korean notes (004, the post on streams, "스트림": its sample code). N = 512 x 65535 ints
// in pinned host memory (cudaMallocHost), cut into nStreams = 15 parts, one per stream, issued breadth
// first: every stream's copy of In to the GPU, then every stream's kernel (nBlocks / nStreams blocks
// of nThreads = 512; each thread adds In to Out five times), then every stream's copy of Out back.
// Timed with two events on stream 0 and printed as the notes print it: "스트림 실행시간: %f msec".
// One run. The sizes are the notes' own.
//
// Fixed from the notes:
// - every copy moved Size bytes (the whole buffer) from its stream's offset, past the end of both
//   buffers from the second stream on; each stream copies its own part, Size / nStreams bytes (65535
//   = 15 x 4369, so the parts are whole blocks and cover the buffers exactly).
// - cutilSafeCall, from the old SDK's cutil, no longer exists; CHECK does its job, and guards every
//   CUDA call (the notes checked only cudaStreamCreate), so a failure ends the program with exit code 1.
// - the malloc'ed array of streams is freed at the end.
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

__global__ void kernel(int* In, int* Out) {
    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    for (int i = 0; i < 5; i++) {
        Out[tid] += In[tid];
    }
}

int main() {
    const int nStreams = 15;              // number of streams the data is split over
    const int nBlocks = 65535;            // blocks over all streams
    const int nThreads = 512;             // threads per block
    const int N = 512 * 65535;            // number of ints
    const int Size = N * sizeof(int);     // bytes of each buffer

    // Host memory, pinned: streams need it for asynchronous copies.
    int* host_In;
    int* host_Out;
    CHECK(cudaMallocHost((void**)&host_In, Size));
    CHECK(cudaMallocHost((void**)&host_Out, Size));
    for (int i = 0; i < N; i++) {
        host_In[i] = i;
        host_Out[i] = 0;
    }

    // Device memory, cleared.
    int* dev_In;
    int* dev_Out;
    CHECK(cudaMalloc((void**)&dev_In, Size));
    CHECK(cudaMalloc((void**)&dev_Out, Size));
    CHECK(cudaMemset(dev_In, 0, Size));
    CHECK(cudaMemset(dev_Out, 0, Size));

    cudaStream_t* streams = (cudaStream_t*)malloc(nStreams * sizeof(cudaStream_t));
    for (int i = 0; i < nStreams; i++) {
        CHECK(cudaStreamCreate(&(streams[i])));  // notes: cutilSafeCall(...)
    }

    // The time of all three phases, between two events on stream 0.
    cudaEvent_t StreamStart, StreamStop;
    float StreamTime;
    CHECK(cudaEventCreate(&StreamStart));
    CHECK(cudaEventCreate(&StreamStop));

    int offset = 0;
    CHECK(cudaEventRecord(StreamStart, 0));
    // Host to device: In, each stream its part.
    for (int i = 0; i < nStreams; i++) {
        offset = i * N / nStreams;
        // notes: Size bytes, past the buffers' end; a stream's part is Size / nStreams bytes
        CHECK(cudaMemcpyAsync(dev_In + offset, host_In + offset, Size / nStreams, cudaMemcpyHostToDevice,
                              streams[i]));
    }
    // The additions, each stream on its part.
    for (int i = 0; i < nStreams; i++) {
        offset = i * N / nStreams;
        kernel<<<nBlocks / nStreams, nThreads, 0, streams[i]>>>(dev_In + offset, dev_Out + offset);
        CHECK(cudaGetLastError());  // not in the notes: a launch reports its own errors only here
    }
    // Device to host: Out, each stream its part.
    for (int i = 0; i < nStreams; i++) {
        offset = i * N / nStreams;
        // notes: Size bytes, as above
        CHECK(cudaMemcpyAsync(host_Out + offset, dev_Out + offset, Size / nStreams, cudaMemcpyDeviceToHost,
                              streams[i]));
    }
    CHECK(cudaEventRecord(StreamStop, 0));
    CHECK(cudaEventSynchronize(StreamStop));
    CHECK(cudaEventElapsedTime(&StreamTime, StreamStart, StreamStop));
    printf("스트림 실행시간: %f msec\n", StreamTime);

    CHECK(cudaEventDestroy(StreamStart));
    CHECK(cudaEventDestroy(StreamStop));
    for (int i = 0; i < nStreams; i++) {
        CHECK(cudaStreamDestroy(streams[i]));
    }
    free(streams);  // not in the notes
    CHECK(cudaFree(dev_In));
    CHECK(cudaFree(dev_Out));
    CHECK(cudaFreeHost(host_In));
    CHECK(cudaFreeHost(host_Out));
    return 0;
}
