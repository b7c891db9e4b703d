// pipeline.cu, French slides (003, Vialle, "CUDA : Transferts rapides et recouvrements", part 3,
// "Recouvrement de transferts et de calculs GPU": the basic approach, then NVIDIA's approach on Nst
// streams with its two endings, v1 and v2). One job of N floats, in pinned host memory (cudaHostAlloc,
// part 1 of the slides):
// - basic approach: one synchronous copy to the GPU, then one grid over all N elements;
// - NVIDIA's approach: the job cut into Nst chunks of size bytes, one per stream; first every
//   chunk's copy to the GPU is queued, then every chunk's small grid, then every chunk's copy back;
//   then the host waits, per stream (v1, cudaStreamSynchronize on each) or once for the whole
//   device (v2, cudaDeviceSynchronize). The program runs the basic approach, then v1, then v2.
//
// The slides show chronograms, not times, and print nothing; neither does this program. Run it under
// a profiler to see its chronogram (nsys profile, then the timeline of nsys-ui or nsys stats).
//
// The slides give neither N, BSX, Nst nor the kernel's work. Chosen: Nst = 16, the streams Fermi ran
// at once (the slides' example), N = 1 << 24 floats, BSX = 256 threads per block, so that Nst and BSX
// divide N as the slides assume; each element gets STEPS = 2000 multiply-adds, so that a chunk's
// kernel takes about as long as its copies (on an H200), where overlap shows most. These are
// lab-streams --mode chunked's defaults (16777216 elements, 2000 steps): its 16-stream runs are the
// lab's side of this program.
// Fixed from the slides:
// - the kernel got only PtGPU + offset, while the results are copied back from PtResGPU + offset; it
//   gets both;
// - v2 ended with cudaMemcpyDeviceSynchronize(), a function CUDA does not have: cudaDeviceSynchronize.
// Regrouped: the slides print the three loops once and give v1 and v2 only their endings; here the
// loops are one function, transfers_and_kernels, called before each ending.
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

#define N (1 << 24)  // floats in the job
#define BSX 256      // threads per block
#define Nst 16       // streams, one chunk each
#define STEPS 2000   // multiply-adds per element

// PtResGPU[i] from PtGPU[i] after STEPS multiply-adds.
__global__ void kernel(float* PtGPU, float* PtResGPU) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    float x = PtGPU[i];
    for (int step = 0; step < STEPS; step++) {
        x = x * 0.999f + 0.001f;
    }
    PtResGPU[i] = x;
}

// NVIDIA's approach up to the synchronization: all copies in, all small grids, all copies out, each
// operation queued on its chunk's stream.
void transfers_and_kernels(cudaStream_t Stream[], float* PtCPU, float* PtGPU, float* PtResGPU, float* PtResCPU) {
    int size = N * sizeof(float) / Nst;  // one chunk's bytes
    int offset;
    // each chunk's copy to the GPU, queued on its stream
    for (int i = 0; i < Nst; i++) {
        offset = i * N / Nst;
        CHECK(cudaMemcpyAsync(PtGPU + offset, PtCPU + offset, size, cudaMemcpyHostToDevice, Stream[i]));
    }
    // each chunk's grid, queued behind its copy
    for (int i = 0; i < Nst; i++) {
        offset = i * N / Nst;
        // slides: (PtGPU + offset) only, though the results come back from PtResGPU
        kernel<<<dim3(N / Nst / BSX, 1, 1), dim3(BSX, 1, 1), 0, Stream[i]>>>(PtGPU + offset, PtResGPU + offset);
        CHECK(cudaGetLastError());  // not on the slides: a launch reports its own errors only here
    }
    // each chunk's results back to the host, queued behind its grid
    for (int i = 0; i < Nst; i++) {
        offset = i * N / Nst;
        CHECK(cudaMemcpyAsync(PtResCPU + offset, PtResGPU + offset, size, cudaMemcpyDeviceToHost, Stream[i]));
    }
}

int main() {
    float *PtCPU, *PtResCPU, *PtGPU, *PtResGPU;
    CHECK(cudaHostAlloc((void**)&PtCPU, N * sizeof(float), cudaHostAllocDefault));
    CHECK(cudaHostAlloc((void**)&PtResCPU, N * sizeof(float), cudaHostAllocDefault));
    CHECK(cudaMalloc((void**)&PtGPU, N * sizeof(float)));
    CHECK(cudaMalloc((void**)&PtResGPU, N * sizeof(float)));
    for (int i = 0; i < N; i++) {
        PtCPU[i] = (float)(i % 1000) / 1000.0f;
    }

    // Basic approach: a synchronous transfer, then a 1D grid of 1D blocks over the whole job; the GPU
    // and the PCIe bus take turns.
    CHECK(cudaMemcpy(PtGPU, PtCPU, N * sizeof(float), cudaMemcpyHostToDevice));
    kernel<<<dim3(N / BSX, 1, 1), dim3(BSX, 1, 1)>>>(PtGPU, PtResGPU);  // slides: (PtGPU) only, as above
    CHECK(cudaGetLastError());  // not on the slides: a launch reports its own errors only here

    // one stream per chunk
    cudaStream_t Stream[Nst];
    for (int i = 0; i < Nst; i++) {
        CHECK(cudaStreamCreate(&Stream[i]));
    }

    // v1: the host waits for each stream in turn
    transfers_and_kernels(Stream, PtCPU, PtGPU, PtResGPU, PtResCPU);
    for (int i = 0; i < Nst; i++) {
        CHECK(cudaStreamSynchronize(Stream[i]));
    }

    // v2: the host waits once, for everything on the device
    transfers_and_kernels(Stream, PtCPU, PtGPU, PtResGPU, PtResCPU);
    CHECK(cudaDeviceSynchronize());

    // streams and memory released
    for (int i = 0; i < Nst; i++) {
        CHECK(cudaStreamDestroy(Stream[i]));
    }
    CHECK(cudaFreeHost(PtCPU));
    CHECK(cudaFreeHost(PtResCPU));
    CHECK(cudaFree(PtGPU));
    CHECK(cudaFree(PtResGPU));
    return 0;
}
