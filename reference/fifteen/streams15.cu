// streams15.cu: the Korean notes' stream sample. N = 512 x 65535 ints over nStreams = 15 streams: each
// stream copies its part of In and Out to the GPU, adds In to Out five times, and copies Out back.
// Pinned memory (cudaMallocHost): the notes say streams need it.
//
//   streams15 [REPETITIONS]     default 3; runs 1 stream, then 15
//
// Beside: lab-streams --mode fifteen. Fixed from the notes:
// - their copies move Size bytes (all of the buffer) from every stream's offset, past the buffer's end;
//   each stream copies its part here (N / nStreams ints, the last stream the rest).
// - they copy Out in only once (a cudaMemset to 0); timed runs repeat, so each run copies its Out in.
// - cutilSafeCall came from the old SDK's cutil; CHECK_CUDA does its job.
#include <climits>

#include "../check.h"

__global__ void kernel(const int* In, int* Out, int n) {
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        for (int i = 0; i < 5; i++) Out[tid] += In[tid];
    }
}

int main(int argc, char** argv) {
    const int repetitions = (int)argument(argc, argv, 1, 3);
    const int nThreads = 256;  // the notes launch 512; lab-streams' BLOCK_SIZE is 256
    const int N = 512 * 65535;
    const size_t Size = N * sizeof(int);
    int *host_In, *host_Original, *host_Out, *dev_In, *dev_Out;
    CHECK_CUDA(cudaMallocHost, (void**)&host_In, Size);
    CHECK_CUDA(cudaMallocHost, (void**)&host_Original, Size);
    CHECK_CUDA(cudaMallocHost, (void**)&host_Out, Size);
    Random random(1);
    for (int i = 0; i < N; i++) {
        host_In[i] = 1 + (int)(random.next() % 1000);
        host_Original[i] = 1 + (int)(random.next() % 1000);
    }
    CHECK_CUDA(cudaMalloc, (void**)&dev_In, Size);
    CHECK_CUDA(cudaMalloc, (void**)&dev_Out, Size);
    std::printf("Korean notes' sample: N = 512 x 65535 = %d ints, Out += In five times, pinned host memory\n\n", N);
    std::printf("| streams | GPU time in ms | speedup | check |\n");
    std::printf("|---------|----------------|---------|-------|\n");
    bool pass = true;
    double one_stream_ms = 0;
    for (int nStreams : {1, 15}) {
        std::vector<cudaStream_t> streams(nStreams);
        for (int i = 0; i < nStreams; i++) CHECK_CUDA(cudaStreamCreate, &streams[i]);
        auto offset = [&](int i) { return (int)((long long)i * N / nStreams); };
        for (int i = 0; i < N; i++) host_Out[i] = INT_MIN;
        const Timing timing = time_gpu(repetitions, [&] {
            for (int i = 0; i < nStreams; i++) {
                const int n = offset(i + 1) - offset(i);
                CHECK_CUDA(cudaMemcpyAsync, dev_In + offset(i), host_In + offset(i), n * sizeof(int), cudaMemcpyHostToDevice, streams[i]);
                CHECK_CUDA(cudaMemcpyAsync, dev_Out + offset(i), host_Original + offset(i), n * sizeof(int), cudaMemcpyHostToDevice, streams[i]);
                kernel<<<(n + nThreads - 1) / nThreads, nThreads, 0, streams[i]>>>(dev_In + offset(i), dev_Out + offset(i), n);
                CHECK_LAUNCH();
                CHECK_CUDA(cudaMemcpyAsync, host_Out + offset(i), dev_Out + offset(i), n * sizeof(int), cudaMemcpyDeviceToHost, streams[i]);
            }
        });
        int wrong = 0;
        for (int i = 0; i < N; i++) wrong += host_Out[i] != host_Original[i] + 5 * host_In[i];
        pass = pass && wrong == 0;
        if (nStreams == 1) one_stream_ms = timing.median();
        std::printf("| %d | %.3f | %.2fx | %s |\n", nStreams, timing.median(), one_stream_ms / timing.median(), wrong ? "FAIL" : "PASS");
        for (int i = 0; i < nStreams; i++) CHECK_CUDA(cudaStreamDestroy, streams[i]);
    }
    CHECK_CUDA(cudaFree, dev_In); CHECK_CUDA(cudaFree, dev_Out);
    CHECK_CUDA(cudaFreeHost, host_In); CHECK_CUDA(cudaFreeHost, host_Original); CHECK_CUDA(cudaFreeHost, host_Out);
    return print_result(pass);
}
