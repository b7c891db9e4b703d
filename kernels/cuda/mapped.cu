// mapped.cu: where zero-copy (mapped) host memory pays (every element touched once) and what it needs
// (coalesced reads).

#include "copies.cuh"

// The Korean notes' zero-copy vectorAdd: c = a + b, read and written over the bus when the pointers
// are mapped host memory.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// Writes only: out[i] = (i mod 1000) / 4, no reads at all, the case the slides call best for mapped
// memory.
extern "C" __global__ void write_only(float* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)(i % 1000) * 0.25f;
}

// The Korean notes' two warnings on zero-copy: a kernel must read mapped memory under the same
// coalescing conditions as global memory, and many small reads of it cost more than one ordinary copy.
// out[offset + i*stride] = in[offset + i*stride] + 1 for i < n, `in` in device memory or mapped host
// memory, `out` in device memory: a warp's 32 reads fall into as few 32-byte sectors as the stride and
// the offset allow, and across the bus every sector is a request of its own. Each thread reads
// READS_PER_THREAD elements a block apart, every load before any store (__restrict__ allows it), so
// that enough requests are in flight to cover the bus's microsecond of latency. memory.cu's
// strided_copy, which lab-memory sweeps on device memory, is the same copy: both call copy_plus_one
// from copies.cuh.
#define READS_PER_THREAD 4

extern "C" __global__ void strided_read(const float* __restrict__ in, float* __restrict__ out, int stride, int offset, int n) {
    copy_plus_one<READS_PER_THREAD>(in, out, stride, offset, n);
}
