// Issue 65, run 72: stand-ins for what a class's other checks do beside ncu's batch, one kind of load
// each, with no GPU kernel running (gpu-busy.cu is the GPU's own load). For SECONDS, over and over:
//   contexts   a CUDA context made, 8 MiB allocated in it and written from pageable memory, destroyed
//              (the driver's heavy calls: a case's, a sanitizer's or a request's process starting)
//   launched   the same with an empty kernel launched before the context is destroyed (run 74)
//   roomy      `launched` with 256 MiB of printf FIFO set before the launch, as a check's children
//              set it (grading's PRINTF_ROOM; run 74)
//   calls      in one context: a stream and two events made and destroyed, 8 MiB allocated, set and
//              freed (the small driver calls of every timed loop of a case)
//   copies     in one context: 16 MiB written from pageable memory and read back (a case's fresh
//              inputs and its outputs)
//   memory     no CUDA: 64 MiB allocated, touched and freed (the CPU's products and matrices: page
//              faults and unmaps, which interrupt every core that ran the process)
// and prints how many rounds it did.
//
//   churn MODE SECONDS
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <cuda.h>
#include <cuda_runtime.h>
#include <vector>

__global__ void empty() {}

static bool ok(CUresult r) {
    if (r != CUDA_SUCCESS) std::fprintf(stderr, "CUDA error %d\n", (int)r);
    return r == CUDA_SUCCESS;
}

int main(int argc, char **argv) {
    if (argc != 3) {
        std::fprintf(stderr, "usage: churn contexts|launched|roomy|calls|copies|memory SECONDS\n");
        return 2;
    }
    const char *mode = argv[1];
    double seconds = std::atof(argv[2]);
    const size_t bytes = 8u << 20;
    std::vector<char> host(2 * bytes, 1);
    CUdevice device;
    CUcontext context = nullptr;
    bool cuda = std::strcmp(mode, "memory") != 0;
    if (cuda && !(ok(cuInit(0)) && ok(cuDeviceGet(&device, 0)))) return 1;
    bool launched = std::strcmp(mode, "launched") == 0, roomy = std::strcmp(mode, "roomy") == 0;
    bool contexts = std::strcmp(mode, "contexts") == 0 || launched || roomy;
    if (cuda && !contexts && !ok(cuCtxCreate(&context, nullptr, 0, device))) return 1;
    CUdeviceptr kept = 0;
    if (std::strcmp(mode, "copies") == 0 && !ok(cuMemAlloc(&kept, 2 * bytes))) return 1;
    auto start = std::chrono::steady_clock::now();
    long rounds = 0;
    while (std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() < seconds) {
        CUdeviceptr buffer;
        if (contexts) {
            CUcontext own;
            if (!(ok(cuCtxCreate(&own, nullptr, 0, device)) && ok(cuMemAlloc(&buffer, bytes)) &&
                  ok(cuMemcpyHtoD(buffer, host.data(), bytes))))
                return 1;
            if (roomy && !ok(cuCtxSetLimit(CU_LIMIT_PRINTF_FIFO_SIZE, 256u << 20))) return 1;
            if (launched || roomy) {
                empty<<<1, 1>>>();
                if (!ok(cuCtxSynchronize())) return 1;
            }
            if (!(ok(cuMemFree(buffer)) && ok(cuCtxDestroy(own)))) return 1;
        } else if (std::strcmp(mode, "calls") == 0) {
            CUstream stream;
            CUevent events[2];
            if (!(ok(cuStreamCreate(&stream, 0)) && ok(cuEventCreate(&events[0], 0)) &&
                  ok(cuEventCreate(&events[1], 0)) && ok(cuMemAlloc(&buffer, bytes)) &&
                  ok(cuMemsetD8(buffer, 0xff, bytes)) && ok(cuMemFree(buffer)) && ok(cuEventDestroy(events[0])) &&
                  ok(cuEventDestroy(events[1])) && ok(cuStreamDestroy(stream))))
                return 1;
        } else if (std::strcmp(mode, "copies") == 0) {
            if (!(ok(cuMemcpyHtoD(kept, host.data(), 2 * bytes)) && ok(cuMemcpyDtoH(host.data(), kept, 2 * bytes))))
                return 1;
        } else if (std::strcmp(mode, "memory") == 0) {
            std::vector<char> touched(64u << 20);
            std::memset(touched.data(), (int)rounds, touched.size());
            host[rounds % host.size()] = touched[rounds % touched.size()];
        } else {
            std::fprintf(stderr, "unknown mode %s\n", mode);
            return 2;
        }
        ++rounds;
    }
    double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::printf("%s: %ld rounds in %.1f s, %.1f ms a round\n", mode, rounds, took, 1e3 * took / rounds);
    return 0;
}
