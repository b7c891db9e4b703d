// streams15.cu: the Korean notes' stream sample. N = 512 x 65535 ints over nStreams = 15 streams,
// host_In[i] = i and host_Out[i] = 0 as printed. Out is cleared once on the GPU (cudaMemset); then, in
// three loops over the streams, every stream copies its
// part of In to the GPU, every stream runs the kernel on its part (Out += In five times, 512 threads
// per block), and every stream copies its part of Out back. Pinned memory (cudaMallocHost): the notes
// say streams need it.
//
//   streams15 [REPETITIONS [ORDER]]     REPETITIONS default 3; runs 1 stream, then 15
//                                       ORDER: breadth-first (the notes, default) or stream-by-stream
//
// Beside: lab-streams --mode fifteen [--order stream-by-stream]. Fixed from the notes:
// - their copies move Size bytes (all of the buffer) from every stream's offset, past the buffer's end;
//   each stream copies its part here (N / nStreams ints from i * (N / nStreams), the last stream the
//   rest; at the notes' N the parts are equal).
// - the kernel checks tid < n, so a part that is not a whole number of blocks stays inside its buffer.
// - the timed runs repeat (one warm-up, then REPETITIONS), and Out is never copied in, so run k adds to
//   what run k - 1 left: the check expects Out = 5 x runs x In, which also shows that every run did
//   its work (the sums wrap past 2^31 from the 13th run, on both sides alike, as the lab's do).
// - cutilSafeCall came from the old SDK's cutil; CHECK_CUDA does its job.
#include <cstring>

#include "../check.h"

__global__ void kernel(const int* In, int* Out, int n) {
    const int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < n) {
        for (int i = 0; i < 5; i++) Out[tid] += In[tid];
    }
}

int main(int argc, char** argv) {
    const int repetitions = (int)argument(argc, argv, 1, 3);
    const bool stream_by_stream = argc > 2 && std::strcmp(argv[2], "stream-by-stream") == 0;
    if (argc > 2 && !stream_by_stream && std::strcmp(argv[2], "breadth-first") != 0) {
        std::fprintf(stderr, "%s: argument 2: '%s' is neither breadth-first nor stream-by-stream\n", argv[0], argv[2]);
        return 1;
    }
    const int nThreads = 512;
    const int N = 512 * 65535;
    const size_t Size = N * sizeof(int);
    int *host_In, *host_Out, *dev_In, *dev_Out;
    CHECK_CUDA(cudaMallocHost, (void**)&host_In, Size);
    CHECK_CUDA(cudaMallocHost, (void**)&host_Out, Size);
    for (int i = 0; i < N; i++) host_In[i] = i;
    CHECK_CUDA(cudaMalloc, (void**)&dev_In, Size);
    CHECK_CUDA(cudaMalloc, (void**)&dev_Out, Size);
    CHECK_CUDA(cudaMemset, dev_In, 0, Size);
    std::printf("Korean notes' sample: N = 512 x 65535 = %d ints, In[i] = i, Out += In five times, %d threads per block, pinned host memory\n",
                N, nThreads);
    std::printf("Issued %s\n\n", stream_by_stream ? "stream by stream (stream-by-stream)" : "breadth first (all copies in, all kernels, all copies out)");
    std::printf("| streams | GPU time in ms | speedup | check |\n");
    std::printf("|---------|----------------|---------|-------|\n");
    bool pass = true;
    double one_stream_ms = 0;
    for (int nStreams : {1, 15}) {
        std::vector<cudaStream_t> streams(nStreams);
        for (int i = 0; i < nStreams; i++) CHECK_CUDA(cudaStreamCreate, &streams[i]);
        auto offset = [&](int i) { return i == nStreams ? N : i * (N / nStreams); };
        auto copy_in = [&](int i) {
            const int n = offset(i + 1) - offset(i);
            CHECK_CUDA(cudaMemcpyAsync, dev_In + offset(i), host_In + offset(i), n * sizeof(int), cudaMemcpyHostToDevice, streams[i]);
        };
        auto launch = [&](int i) {
            const int n = offset(i + 1) - offset(i);
            kernel<<<(n + nThreads - 1) / nThreads, nThreads, 0, streams[i]>>>(dev_In + offset(i), dev_Out + offset(i), n);
            CHECK_LAUNCH();
        };
        auto copy_out = [&](int i) {
            const int n = offset(i + 1) - offset(i);
            CHECK_CUDA(cudaMemcpyAsync, host_Out + offset(i), dev_Out + offset(i), n * sizeof(int), cudaMemcpyDeviceToHost, streams[i]);
        };
        CHECK_CUDA(cudaMemset, dev_Out, 0, Size);
        for (int i = 0; i < N; i++) host_Out[i] = 0;
        int runs = 0;
        const Timing timing = time_gpu(repetitions, [&] {
            if (stream_by_stream) {
                for (int i = 0; i < nStreams; i++) copy_in(i), launch(i), copy_out(i);
            } else {
                for (int i = 0; i < nStreams; i++) copy_in(i);   // host to device
                for (int i = 0; i < nStreams; i++) launch(i);    // the additions
                for (int i = 0; i < nStreams; i++) copy_out(i);  // device to host
            }
            runs++;
        });
        int wrong = 0;
        for (int i = 0; i < N; i++) wrong += host_Out[i] != (int)(5u * (unsigned)runs * (unsigned)host_In[i]);
        pass = pass && wrong == 0;
        if (nStreams == 1) one_stream_ms = timing.median();
        std::printf("| %d | %.3f | %.2fx | %s |\n", nStreams, timing.median(), one_stream_ms / timing.median(), wrong ? "FAIL" : "PASS");
        if (nStreams == 15) std::printf("스트림 실행시간: %f msec\n", timing.median());  // the notes' line
        for (int i = 0; i < nStreams; i++) CHECK_CUDA(cudaStreamDestroy, streams[i]);
    }
    CHECK_CUDA(cudaFree, dev_In); CHECK_CUDA(cudaFree, dev_Out);
    CHECK_CUDA(cudaFreeHost, host_In); CHECK_CUDA(cudaFreeHost, host_Out);
    return print_result(pass);
}
