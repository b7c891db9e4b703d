// stamps.cuh: when a kernel really ran, as its blocks saw it.
#pragma once
//
// An event recorded before a launch fires when the stream reaches the launch, which can be long before
// the kernel gets a multiprocessor (other streams' kernels may hold them all). So the chronograms time
// kernels from inside: every block reads the GPU's global nanosecond timer when it starts and when all
// its threads are done; the earliest start and the latest end are the kernel's real interval. Kernels
// the chronograms draw have a twin `<name>_stamped` that wraps the same body in these two calls.

// What the host reads back per kernel: start = UINT64_MAX and end = 0 before the launch.
struct Stamp {
    unsigned long long start;
    unsigned long long end;
};

// %globaltimer: nanoseconds, the same clock for every multiprocessor of the GPU.
__device__ __forceinline__ unsigned long long global_timer() {
    unsigned long long now;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(now));
    return now;
}

__device__ __forceinline__ bool first_thread_of_block() {
    return threadIdx.x == 0 && threadIdx.y == 0 && threadIdx.z == 0;
}

// First thing in every block.
__device__ __forceinline__ void stamp_start(Stamp* stamp) {
    if (first_thread_of_block()) {
        atomicMin(&stamp->start, global_timer());
    }
}

// Last thing in every block: after the barrier, every thread of the block is done.
__device__ __forceinline__ void stamp_end(Stamp* stamp) {
    __syncthreads();
    if (first_thread_of_block()) {
        atomicMax(&stamp->end, global_timer());
    }
}
