// copies.cuh: the copy out[place(i)] = in[place(i)] + 1 that lab-memory's coalescing sweep (memory.cu)
// and lab-mapped's reads of mapped host memory (mapped.cu) both time. A module cannot call another
// module's device functions, so the one definition lives here and each .cu file includes it.
//
// Each thread copies PER_THREAD elements a block apart and loads all of them before it stores any
// (__restrict__ allows it): with several loads in flight per thread, enough bytes are on their way to
// reach the memory's (or the bus's) bandwidth, which one load per thread does not.
#pragma once

// Adds 1 to every part of a word, so that an element the copy missed shows. The byte-sized words wrap
// around (255 + 1 = 0), as the host's check expects. Every overload the template below uses is declared
// before it: for plain types like unsigned char, C++ looks a name up where the template is defined.
__device__ inline float plus_one(float w) { return w + 1.0f; }
__device__ inline float2 plus_one(float2 w) { return make_float2(w.x + 1.0f, w.y + 1.0f); }
__device__ inline float4 plus_one(float4 w) { return make_float4(w.x + 1.0f, w.y + 1.0f, w.z + 1.0f, w.w + 1.0f); }
__device__ inline unsigned char plus_one(unsigned char w) { return (unsigned char)(w + 1u); }
__device__ inline unsigned short plus_one(unsigned short w) { return (unsigned short)(w + 1u); }
__device__ inline uchar4 plus_one(uchar4 w) {
    return make_uchar4(plus_one(w.x), plus_one(w.y), plus_one(w.z), plus_one(w.w));
}

// Element i of the copy sits at place(i) in both buffers, for i < n.
template <int PER_THREAD, typename Word, typename Place>
__device__ void copy_plus_one(const Word* __restrict__ in, Word* __restrict__ out, Place place, int n) {
    const int first = blockIdx.x * blockDim.x * PER_THREAD + threadIdx.x;
    Word value[PER_THREAD];
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        const int i = first + k * blockDim.x;
        if (i < n) {
            value[k] = in[place(i)];
        }
    }
#pragma unroll
    for (int k = 0; k < PER_THREAD; ++k) {
        const int i = first + k * blockDim.x;
        if (i < n) {
            out[place(i)] = plus_one(value[k]);
        }
    }
}

// Element i at offset + i * stride.
template <int PER_THREAD, typename Word>
__device__ void copy_plus_one(const Word* __restrict__ in, Word* __restrict__ out, int stride, int offset, int n) {
    copy_plus_one<PER_THREAD>(in, out, [=](int i) { return offset + (size_t)i * stride; }, n);
}
