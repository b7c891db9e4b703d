// memory.cu: the memory chapters' small programs (lab-memory).

#include "copies.cuh"

// ---- Thread indexing: the Korean notes' getGlobalIdx helpers, one per grid and block shape --------
// The global index counts blocks in x, then y, then z order, and threads within a block the same way.

__device__ int getGlobalIdx_1D_1D() { return blockIdx.x * blockDim.x + threadIdx.x; }

__device__ int getGlobalIdx_1D_2D() {
    return blockIdx.x * blockDim.x * blockDim.y + threadIdx.y * blockDim.x + threadIdx.x;
}

__device__ int getGlobalIdx_1D_3D() {
    return blockIdx.x * blockDim.x * blockDim.y * blockDim.z + threadIdx.z * blockDim.y * blockDim.x +
           threadIdx.y * blockDim.x + threadIdx.x;
}

__device__ int getGlobalIdx_2D_1D() {
    const int blockId = blockIdx.y * gridDim.x + blockIdx.x;
    return blockId * blockDim.x + threadIdx.x;
}

__device__ int getGlobalIdx_2D_2D() {
    const int blockId = blockIdx.x + blockIdx.y * gridDim.x;
    return blockId * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x;
}

__device__ int getGlobalIdx_2D_3D() {
    const int blockId = blockIdx.x + blockIdx.y * gridDim.x;
    return blockId * (blockDim.x * blockDim.y * blockDim.z) + threadIdx.z * (blockDim.x * blockDim.y) +
           threadIdx.y * blockDim.x + threadIdx.x;
}

__device__ int getGlobalIdx_3D_1D() {
    const int blockId = blockIdx.x + blockIdx.y * gridDim.x + gridDim.x * gridDim.y * blockIdx.z;
    return blockId * blockDim.x + threadIdx.x;
}

__device__ int getGlobalIdx_3D_2D() {
    const int blockId = blockIdx.x + blockIdx.y * gridDim.x + gridDim.x * gridDim.y * blockIdx.z;
    return blockId * (blockDim.x * blockDim.y) + threadIdx.y * blockDim.x + threadIdx.x;
}

__device__ int getGlobalIdx_3D_3D() {
    const int blockId = blockIdx.x + blockIdx.y * gridDim.x + gridDim.x * gridDim.y * blockIdx.z;
    return blockId * (blockDim.x * blockDim.y * blockDim.z) + threadIdx.z * (blockDim.x * blockDim.y) +
           threadIdx.y * blockDim.x + threadIdx.x;
}

// Where a thread sits: what it writes at its global index, so the host can check the helper against
// its own arithmetic and print the mapping.
struct Placement {
    int block[3];
    int thread[3];
};

__device__ void place(Placement* out, int n, int idx) {
    if (idx >= 0 && idx < n) {
        out[idx] = Placement{{(int)blockIdx.x, (int)blockIdx.y, (int)blockIdx.z},
                             {(int)threadIdx.x, (int)threadIdx.y, (int)threadIdx.z}};
    }
}

extern "C" __global__ void index_1d_1d(Placement* out, int n) { place(out, n, getGlobalIdx_1D_1D()); }
extern "C" __global__ void index_1d_2d(Placement* out, int n) { place(out, n, getGlobalIdx_1D_2D()); }
extern "C" __global__ void index_1d_3d(Placement* out, int n) { place(out, n, getGlobalIdx_1D_3D()); }
extern "C" __global__ void index_2d_1d(Placement* out, int n) { place(out, n, getGlobalIdx_2D_1D()); }
extern "C" __global__ void index_2d_2d(Placement* out, int n) { place(out, n, getGlobalIdx_2D_2D()); }
extern "C" __global__ void index_2d_3d(Placement* out, int n) { place(out, n, getGlobalIdx_2D_3D()); }
extern "C" __global__ void index_3d_1d(Placement* out, int n) { place(out, n, getGlobalIdx_3D_1D()); }
extern "C" __global__ void index_3d_2d(Placement* out, int n) { place(out, n, getGlobalIdx_3D_2D()); }
extern "C" __global__ void index_3d_3d(Placement* out, int n) { place(out, n, getGlobalIdx_3D_3D()); }

// ---- Symbols: the Chinese notes' __device__ variables, reached with cudaMemcpyToSymbol -----------

#define SYMBOL_LENGTH 256

__device__ float devData;
__device__ float devArray[SYMBOL_LENGTH];

// devData *= factor; devArray[i] = devArray[i] * factor + i. One block of SYMBOL_LENGTH threads.
extern "C" __global__ void scale_symbols(float factor) {
    const int i = threadIdx.x;
    if (i == 0) {
        devData *= factor;
    }
    if (i < SYMBOL_LENGTH) {
        devArray[i] = devArray[i] * factor + i;
    }
}

// The notes' other symbols. devPointer holds a cudaMalloc'd address the host copies in with
// cudaMemcpyToSymbol(devPointer, &ptr, sizeof(ptr)); constData is __constant__, written and read back
// with cudaMemcpyToSymbol / cudaMemcpyFromSymbol (or cudaGetSymbolAddress and a plain cudaMemcpy).
__device__ float* devPointer;
__constant__ float constData[SYMBOL_LENGTH];

// devPointer[i] = 2 * constData[i] + i. One block of SYMBOL_LENGTH threads.
extern "C" __global__ void through_pointer(void) {
    const int i = threadIdx.x;
    if (i < SYMBOL_LENGTH) {
        devPointer[i] = 2.0f * constData[i] + i;
    }
}

// The notes' `__device__ int reduction_lock = 0;` used as a lock: each block sums its part of `in` into
// a `__shared__ int` that one thread set to zero (the notes' `__shared__ int x_dim`: one value for the
// whole block), then its thread 0 takes the lock and adds the block's sum to two plain __device__
// variables with ordinary loads and stores. Only the lock keeps those updates from overwriting each
// other. One thread per block spins, so no warp waits on a lane of its own.
__device__ int reduction_lock = 0;
__device__ long long lockedTotal;
__device__ int lockedBlocks;

extern "C" __global__ void locked_sum(const int* in, int n) {
    __shared__ int blockSum;
    if (threadIdx.x == 0) {
        blockSum = 0;
    }
    __syncthreads();
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        atomicAdd(&blockSum, in[i]);
    }
    __syncthreads();
    if (threadIdx.x == 0) {
        while (atomicCAS(&reduction_lock, 0, 1) != 0) {
        }
        __threadfence();  // see the writes of the block that held the lock before
        volatile long long* total = &lockedTotal;
        volatile int* blocks = &lockedBlocks;
        *total = *total + blockSum;
        *blocks = *blocks + 1;
        __threadfence();  // the writes reach every block before the lock is free again
        atomicExch(&reduction_lock, 0);
    }
}

// ---- Local arrays: the Chinese notes' float a[3] --------------------------------------------------------
// The notes: a small array like float a[3] becomes three registers; "in complex cases" it goes to local
// memory. Both kernels update a[3] the same way, three updates a round; local_array_fixed names each
// element with a constant, local_array_indexed picks the element with an index that changes at run time,
// so the array has no registers to live in: ptxas gives it a stack frame in local memory.

extern "C" __global__ void local_array_fixed(const float* __restrict__ in, float* __restrict__ out, int n, int rounds) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float a[3] = {in[i], in[n + i], in[2 * n + i]};
        for (int r = 0; r < rounds; ++r) {
            a[0] = fmaf(a[0], 0.5f, a[1]);
            a[1] = fmaf(a[1], 0.5f, a[2]);
            a[2] = fmaf(a[2], 0.5f, a[0]);
        }
        out[i] = a[0] + a[1] + a[2];
    }
}

// `first[i]` (0, 1 or 2) is where thread i starts; at 0 it computes what local_array_fixed computes.
extern "C" __global__ void local_array_indexed(const float* __restrict__ in, const int* __restrict__ first, float* __restrict__ out, int n, int rounds) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float a[3] = {in[i], in[n + i], in[2 * n + i]};
        int j = first[i];
        for (int r = 0; r < 3 * rounds; ++r) {
            const int k = j == 2 ? 0 : j + 1;
            a[j] = fmaf(a[j], 0.5f, a[k]);
            j = k;
        }
        out[i] = a[0] + a[1] + a[2];
    }
}

// ---- Warp divergence (the Chinese notes, section 4) ----------------------------------------------------
// Half the threads take one path, half the other, in both kernels. branch_by_lane splits every warp
// (threadIdx.x % 2): the warp runs both paths one after the other, half its lanes idle in each.
// branch_by_warp splits by warp ((threadIdx.x / 32) % 2): each warp runs one path. Each kernel also
// counts the warps whose lanes disagreed at the branch (a ballot), which the CPU predicts.

template <bool BY_WARP>
__device__ void branch(const float* __restrict__ in, float* __restrict__ out, int n, int rounds, unsigned* divergent) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const bool odd = BY_WARP ? (threadIdx.x / 32) % 2 : threadIdx.x % 2;  // 32: the warp size
    const unsigned active = __activemask();
    const unsigned voted = __ballot_sync(active, odd);
    if (threadIdx.x % 32 == 0 && voted != 0 && voted != active) {
        atomicAdd(divergent, 1u);
    }
    if (i < n) {
        float x = in[i];
        if (odd) {
            for (int r = 0; r < rounds; ++r) {
                x = fmaf(x, 0.999f, 0.5f);
            }
        } else {
            for (int r = 0; r < rounds; ++r) {
                x = fmaf(x * x, 0.25f, 0.5f);
            }
        }
        out[i] = x;
    }
}

extern "C" __global__ void branch_by_lane(const float* __restrict__ in, float* __restrict__ out, int n, int rounds, unsigned* divergent) {
    branch<false>(in, out, n, rounds, divergent);
}

extern "C" __global__ void branch_by_warp(const float* __restrict__ in, float* __restrict__ out, int n, int rounds, unsigned* divergent) {
    branch<true>(in, out, n, rounds, divergent);
}

// ---- Coalescing: the Chinese notes' kernel_1 and kernel_2, then any stride and offset ----------------
// kernel_1: a warp's 32 threads write 32 neighbouring floats, 128 bytes in four 32-byte sectors.
// kernel_2: each thread of the warp writes its own sector, 4000 bytes from the next.
// As in the notes, neither checks a bound: the grid must cover exactly the threads the buffer was made for.

extern "C" __global__ void kernel_1(float* x) {
    int tid = threadIdx.x + blockDim.x * blockIdx.x;
    x[tid] = threadIdx.x;
}

extern "C" __global__ void kernel_2(float* x) {
    int tid = threadIdx.x + blockDim.x * blockIdx.x;
    x[1000 * tid] = threadIdx.x;
}

// The random input the host can recompute: a 32-bit hash of the index, as a float in [0.5, 1.5)
// (never zero; exact in float, so the host's value is the GPU's bit for bit).
__device__ unsigned mix(unsigned x) {
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

__device__ float pattern(size_t j, unsigned seed) {
    return 0.5f + (float)(mix((unsigned)j ^ seed) >> 8) * (1.0f / 16777216.0f);
}

extern "C" __global__ void fill_pattern(float* x, size_t len, unsigned seed) {
    for (size_t j = blockIdx.x * (size_t)blockDim.x + threadIdx.x; j < len; j += (size_t)gridDim.x * blockDim.x) {
        x[j] = pattern(j, seed);
    }
}

// out[offset + i * stride] = in[offset + i * stride] + 1 for i < n: the 32 reads (and writes) of a warp
// fall into as few 32-byte sectors as the stride and the offset allow. Each thread copies
// COPIES_PER_THREAD elements a block apart, loading all before storing any (__restrict__ allows it), so
// enough bytes are in flight to reach the memory's bandwidth: one float per thread is not
// (copy_plus_one, in copies.cuh).

#define COPIES_PER_THREAD 4

extern "C" __global__ void strided_copy(const float* __restrict__ in, float* __restrict__ out, int stride, int offset, int n) {
    copy_plus_one<COPIES_PER_THREAD>(in, out, stride, offset, n);
}

// The German slides: since Fermi the order of a warp's accesses within a 128-byte line does not matter,
// only that they fit in it. Element i of the copy goes to place within_line(i, order): the same 32
// floats of each line, in order (0), reversed (1) or shuffled (2: 13 is odd, so lane * 13 + 7 modulo
// 32 is a permutation of the lanes). n is a multiple of 32, so every line is whole.
__device__ int within_line(int i, int order) {
    const int lane = i & 31;
    const int line = i & ~31;
    switch (order) {
        case 1: return line | (31 - lane);
        case 2: return line | ((lane * 13 + 7) & 31);
        default: return i;
    }
}

extern "C" __global__ void line_order_copy(const float* __restrict__ in, float* __restrict__ out, int order, int n) {
    copy_plus_one<COPIES_PER_THREAD>(in, out, [=](int i) { return within_line(i, order); }, n);
}

// The German slides' alignment table: a half-warp's first word should sit on a 64-, 128- or 256-byte
// boundary for 32-, 64- and 128-bit words. word_copy_64 and word_copy_128 copy n such words (float2,
// float4) as strided_copy copies floats at stride 1, adding 1 to every float; the host shifts the
// buffers' start to misalign them.
extern "C" __global__ void word_copy_64(const float2* __restrict__ in, float2* __restrict__ out, int n) {
    copy_plus_one<COPIES_PER_THREAD>(in, out, 1, 0, n);
}
extern "C" __global__ void word_copy_128(const float4* __restrict__ in, float4* __restrict__ out, int n) {
    copy_plus_one<COPIES_PER_THREAD>(in, out, 1, 0, n);
}

// The German slides' first condition: global accesses are fast only for words of at least 32 bits.
// word_copy_8 and word_copy_16 copy n bytes or 16-bit words the same way, adding 1 to each (wrapping
// at 256 and 65536): a warp's load asks for 32 or 64 bytes, 1 or 2 sectors, where a float's asks for
// 128. word_copy_8x4 copies the same bytes four to a thread, as one 32-bit uchar4 each: the fix.
extern "C" __global__ void word_copy_8(const unsigned char* __restrict__ in, unsigned char* __restrict__ out, int n) {
    copy_plus_one<COPIES_PER_THREAD>(in, out, 1, 0, n);
}
extern "C" __global__ void word_copy_16(const unsigned short* __restrict__ in, unsigned short* __restrict__ out, int n) {
    copy_plus_one<COPIES_PER_THREAD>(in, out, 1, 0, n);
}
extern "C" __global__ void word_copy_8x4(const uchar4* __restrict__ in, uchar4* __restrict__ out, int n) {
    copy_plus_one<COPIES_PER_THREAD>(in, out, 1, 0, n);
}

// ---- L1 lines against L2 sectors (German slides: a hit in L1 moves a 128-byte line at once, data
// only in L2 comes 32 bytes a transaction) ----------------------------------------------------------
// Every warp reads a table of `words` 32-bit words (a power of two) 128 contiguous bytes at a time:
// lane l of warp w reads word (32 (LINE_SPREAD w + s) + l) mod words at step s, so each load of a warp
// is one whole aligned line, and neighbouring warps start LINE_SPREAD lines apart (in a table larger
// than L1, a warp does not find the lines its neighbour just brought in). CACHED selects __ldca (cached in L1 and L2) or __ldcg (L2 only, L1 skipped).
// LINE_READS_UNROLL loads are in flight per thread before their sums are needed. Each thread adds what
// it read (wrapping) and writes its sum: with steps * 32 a multiple of `words`, lane l visits every
// word of its column l mod 32 equally often, so the host knows every sum.

#define LINE_READS_UNROLL 8
#define LINE_SPREAD 97

template <bool CACHED>
__device__ void read_lines(const unsigned* __restrict__ table, unsigned words, int steps, unsigned* __restrict__ out) {
    const unsigned thread = blockIdx.x * blockDim.x + threadIdx.x;
    const unsigned mask = words - 1;
    unsigned at = (thread >> 5) * 32u * LINE_SPREAD + (thread & 31u);
    unsigned sum[LINE_READS_UNROLL] = {};
    for (int s = 0; s < steps; s += LINE_READS_UNROLL) {
#pragma unroll
        for (int u = 0; u < LINE_READS_UNROLL; ++u) {
            const unsigned* p = table + ((at + 32u * u) & mask);
            sum[u] += CACHED ? __ldca(p) : __ldcg(p);
        }
        at += 32u * LINE_READS_UNROLL;
    }
    unsigned total = 0;
#pragma unroll
    for (int u = 0; u < LINE_READS_UNROLL; ++u) {
        total += sum[u];
    }
    out[thread] = total;
}

extern "C" __global__ void read_lines_l1(const unsigned* __restrict__ table, unsigned words, int steps, unsigned* __restrict__ out) {
    read_lines<true>(table, words, steps, out);
}
extern "C" __global__ void read_lines_l2(const unsigned* __restrict__ table, unsigned words, int steps, unsigned* __restrict__ out) {
    read_lines<false>(table, words, steps, out);
}

// ---- Shared-memory banks ----------------------------------------------------------------------------
// Each warp walks a table in shared memory: lane l starts at word l * stride and every step moves it on
// by 32 * stride words, so it stays in its bank and the warp's conflict stays the same at every step.
// Each step is one shared load whose address comes from the load before, so the time counts the loads.

#define BANK_TABLE_BYTES 16384

template <typename Word>
__device__ void bank_walk(unsigned* out, int stride, int steps) {
    constexpr unsigned words = BANK_TABLE_BYTES / sizeof(Word);
    __shared__ Word table[words];
    for (unsigned i = threadIdx.x; i < words; i += blockDim.x) {
        table[i] = (Word)((i + 32u * stride) % words);
    }
    __syncthreads();
    unsigned index = ((threadIdx.x % 32) * stride) % words;
    for (int step = 0; step < steps; ++step) {
        index = (unsigned)table[index];
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = index;
}

extern "C" __global__ void bank_walk_32(unsigned* out, int stride, int steps) { bank_walk<unsigned>(out, stride, steps); }
extern "C" __global__ void bank_walk_64(unsigned* out, int stride, int steps) { bank_walk<unsigned long long>(out, stride, steps); }

// The Korean notes' element types, read as `shared[BaseIndex + tid]` (SPREAD 1) or, for their char fix,
// `shared[BaseIndex + 4 * tid]` (SPREAD 4). Each step lane l reads element index_l, and every index moves
// on by 32 * SPREAD elements, so the banks a warp touches are the same at every step. An element holds
// the next index in its first member (its other members are zero, and the kernel adds them all, so every
// member is loaded); a char holds zero and is added to the index. Each load waits for the one before.
// SHIFT moves the whole array 4 bytes off the shared memory's (16-byte aligned) start.
struct Float3 { float x, y, z; };  // 12 bytes, aligned to 4: three 32-bit loads
// 8 bytes, aligned to 4. At SHIFT 0 the compiler sees every element on an 8-byte boundary and reads it
// with one 64-bit load; at SHIFT 4 it cannot, and reads it member by member, as the notes assume.
struct Float2 { float x, y; };
struct __align__(8) Float2Aligned { float x, y; };  // one 64-bit load wherever the array is

__device__ unsigned next_index(float v, unsigned, unsigned) { return __float_as_uint(v); }
__device__ unsigned next_index(double v, unsigned, unsigned) {
    const unsigned long long bits = __double_as_longlong(v);  // both halves, so the load stays 64-bit
    return (unsigned)bits + (unsigned)(bits >> 32);
}
__device__ unsigned next_index(Float3 v, unsigned, unsigned) {
    return __float_as_uint(v.x) + __float_as_uint(v.y) + __float_as_uint(v.z);
}
__device__ unsigned next_index(Float2 v, unsigned, unsigned) { return __float_as_uint(v.x) + __float_as_uint(v.y); }
__device__ unsigned next_index(Float2Aligned v, unsigned, unsigned) { return __float_as_uint(v.x) + __float_as_uint(v.y); }
// count is a power of two for char (16384), so the wrap is a mask.
static_assert((BANK_TABLE_BYTES & (BANK_TABLE_BYTES - 1)) == 0, "the char walk wraps with a mask");
__device__ unsigned next_index(unsigned char v, unsigned index, unsigned advance) {
    return (index + v + advance) & (BANK_TABLE_BYTES - 1);
}

__device__ void set_element(float& e, unsigned next) { e = __uint_as_float(next); }
__device__ void set_element(double& e, unsigned next) { e = __longlong_as_double(next); }
__device__ void set_element(Float3& e, unsigned next) { e = {__uint_as_float(next), 0.0f, 0.0f}; }
__device__ void set_element(Float2& e, unsigned next) { e = {__uint_as_float(next), 0.0f}; }
__device__ void set_element(Float2Aligned& e, unsigned next) { e = {__uint_as_float(next), 0.0f}; }
__device__ void set_element(unsigned char& e, unsigned) { e = 0; }

template <typename T, unsigned SPREAD, unsigned SHIFT = 0>
__device__ void element_walk(unsigned* out, int steps) {
    constexpr unsigned advance = 32 * SPREAD;
    // Whole rounds of `advance` elements, so a warp never straddles the wrap.
    constexpr unsigned count = BANK_TABLE_BYTES / sizeof(T) / advance * advance;
    __shared__ __align__(16) unsigned char bytes[SHIFT + count * sizeof(T)];
    T* table = reinterpret_cast<T*>(bytes + SHIFT);
    for (unsigned i = threadIdx.x; i < count; i += blockDim.x) {
        set_element(table[i], (i + advance) % count);
    }
    __syncthreads();
    unsigned index = (threadIdx.x % 32) * SPREAD;
    for (int step = 0; step < steps; ++step) {
        index = next_index(table[index], index, advance);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = index;
}

extern "C" __global__ void walk_float(unsigned* out, int steps) { element_walk<float, 1>(out, steps); }
extern "C" __global__ void walk_float3(unsigned* out, int steps) { element_walk<Float3, 1>(out, steps); }
extern "C" __global__ void walk_float2(unsigned* out, int steps) { element_walk<Float2, 1>(out, steps); }
extern "C" __global__ void walk_float2_shifted(unsigned* out, int steps) { element_walk<Float2, 1, 4>(out, steps); }
extern "C" __global__ void walk_float2_aligned(unsigned* out, int steps) { element_walk<Float2Aligned, 1>(out, steps); }
extern "C" __global__ void walk_char(unsigned* out, int steps) { element_walk<unsigned char, 1>(out, steps); }
extern "C" __global__ void walk_char_spread(unsigned* out, int steps) { element_walk<unsigned char, 4>(out, steps); }
extern "C" __global__ void walk_double(unsigned* out, int steps) { element_walk<double, 1>(out, steps); }

// A matrix transpose through a shared tile (rows x cols in, cols x rows out), blocks of TILE_DIM x
// BLOCK_ROWS threads. Reading a tile's column hits one bank 32 times; one padding column per row shifts
// every row by a bank, and the column is spread over all 32.

#define TILE_DIM 32
#define BLOCK_ROWS 8

template <int PADDING>
__device__ void transpose_tile(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    __shared__ float tile[TILE_DIM][TILE_DIM + PADDING];
    int x = blockIdx.x * TILE_DIM + threadIdx.x;
    int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            tile[threadIdx.y + j][threadIdx.x] = in[(size_t)(y + j) * cols + x];
        }
    }
    __syncthreads();
    x = blockIdx.y * TILE_DIM + threadIdx.x;
    y = blockIdx.x * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < rows && y + j < cols) {
            out[(size_t)(y + j) * rows + x] = tile[threadIdx.x][threadIdx.y + j];
        }
    }
}

extern "C" __global__ void transpose_shared(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    transpose_tile<0>(in, out, rows, cols);
}

extern "C" __global__ void transpose_padded(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    transpose_tile<1>(in, out, rows, cols);
}

// Without shared memory: reads coalesced, writes a column, 32 sectors per warp. (__restrict__ here and
// in copy_tiles lets the four loads of a thread go out together, as they do into the tile above.)
extern "C" __global__ void transpose_naive(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    const int x = blockIdx.x * TILE_DIM + threadIdx.x;
    const int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            out[(size_t)x * rows + y + j] = in[(size_t)(y + j) * cols + x];
        }
    }
}

// The same blocks copying instead of transposing: how fast the tiles could move at best.
extern "C" __global__ void copy_tiles(const float* __restrict__ in, float* __restrict__ out, int rows, int cols) {
    const int x = blockIdx.x * TILE_DIM + threadIdx.x;
    const int y = blockIdx.y * TILE_DIM + threadIdx.y;
    for (int j = 0; j < TILE_DIM; j += BLOCK_ROWS) {
        if (x < cols && y + j < rows) {
            out[(size_t)(y + j) * cols + x] = in[(size_t)(y + j) * cols + x];
        }
    }
}

// ---- Cache configuration: a kernel that feels the L1 size ---------------------------------------------
// Every thread adds `reads` table entries at hashed positions. All blocks read the same table, so it
// stays in each multiprocessor's L1 when the carveout leaves L1 room for it, and comes from L2 when not.

extern "C" __global__ void cached_gather(const float* table, unsigned table_words, float* out, int n, int reads) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float sum = 0.0f;
        for (int r = 0; r < reads; ++r) {
            sum += table[mix((unsigned)i * 131u + (unsigned)r) % table_words];
        }
        out[i] = sum;
    }
}

// ---- The read-only data path (the notes' "texture memory") -------------------------------------------
// out[i] = in[index[i]] three ways: plain loads; const __restrict__ with __ldg, which lets the compiler
// use the read-only (non-coherent) path; and a texture object over the same memory.

extern "C" __global__ void gather_plain(const float* in, const int* index, float* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = in[index[i]];
    }
}

extern "C" __global__ void gather_readonly(const float* __restrict__ in, const int* __restrict__ index, float* __restrict__ out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = __ldg(&in[__ldg(&index[i])]);
    }
}

extern "C" __global__ void gather_texture(cudaTextureObject_t in, const int* index, float* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        out[i] = tex1Dfetch<float>(in, index[i]);
    }
}

// ---- Latency: one thread follows a chain, each step waiting for the one before -------------------------
// The Greek slides' cycles per access (registers ~1, shared ~5, global ~500, cached constant ~5),
// measured with clock64() around `steps` dependent steps. A chase table holds, at each visited word, the
// index of the next one (a random cycle the host made), so no load can start before the previous one
// has returned. The warm-up walk (warm != 0) brings the chain into the cache the row is about; without
// it, the first walk after the host emptied the L2 comes from DRAM. out[0] is the last index reached
// (the host checks it against its own walk), out[1] the cycles.

#define CHASE_SHARED_WORDS 4096
#define CHASE_CONSTANT_WORDS 256

__constant__ unsigned chase_constant[CHASE_CONSTANT_WORDS];

template <typename Load>
__device__ void chase(Load load, unsigned start, int steps, int warm, unsigned long long* out) {
    unsigned j = start;
    if (warm) {
        for (int s = 0; s < steps; ++s) {
            j = load(j);
        }
    }
    const long long begin = clock64();
#pragma unroll 8
    for (int s = 0; s < steps; ++s) {
        j = load(j);
    }
    const long long end = clock64();
    out[0] = j;
    out[1] = (unsigned long long)(end - begin);
}

// Through L1 (ld.global.ca) and through L2 only (ld.global.cg, which skips L1).
extern "C" __global__ void chase_l1(const unsigned* table, unsigned start, int steps, int warm, unsigned long long* out) {
    chase([=](unsigned j) { return __ldca(&table[j]); }, start, steps, warm, out);
}

extern "C" __global__ void chase_l2(const unsigned* table, unsigned start, int steps, int warm, unsigned long long* out) {
    chase([=](unsigned j) { return __ldcg(&table[j]); }, start, steps, warm, out);
}

extern "C" __global__ void chase_constant_memory(unsigned start, int steps, unsigned long long* out) {
    chase([](unsigned j) { return chase_constant[j]; }, start, steps, 1, out);
}

// One thread copies the table into shared memory first; the copy is not timed.
extern "C" __global__ void chase_shared(const unsigned* table, unsigned start, int steps, unsigned long long* out) {
    __shared__ unsigned shared_table[CHASE_SHARED_WORDS];
    for (int w = 0; w < CHASE_SHARED_WORDS; ++w) {
        shared_table[w] = table[w];
    }
    chase([&](unsigned j) { return shared_table[j]; }, start, steps, 1, out);
}

// Registers: a chain of fused multiply-adds, each needing the result of the one before. out[0] holds the
// float's bits, which the host recomputes with the same fused operations.
extern "C" __global__ void chase_registers(float x, float a, float b, int steps, unsigned long long* out) {
    const long long begin = clock64();
#pragma unroll 8
    for (int s = 0; s < steps; ++s) {
        x = fmaf(x, a, b);
    }
    const long long end = clock64();
    out[0] = __float_as_uint(x);
    out[1] = (unsigned long long)(end - begin);
}

// ---- Coherence: only the L2 is shared ---------------------------------------------------------------
// The German slides: accesses go through L1 and L2, coherence is kept only in the L2, and writes go
// straight to it. Two blocks of one thread each, on two multiprocessors as a rule: the reader loads x
// through its L1 (ld.global.ca), which keeps the line; the writer then stores a new x and raises a
// flag; the reader, seeing the flag, loads x again three ways: through its L1 (which may still hold the
// old line), through L2 only (ld.global.cg) and as a volatile load (which does not use L1 either).
// Flags go through atomics, which the L2 serves. A wait gives up after `patience` clock cycles rather
// than hang (two blocks that are not resident together would wait for ever).
// out: [0] x before, [1] x again through L1, [2] through L2, [3] volatile, [4] the writer's and [5] the
// reader's multiprocessor, [6] waits given up (the host sets it to 0).

// The loads as volatile asm: the compiler may neither merge the two L1 loads nor move them.
__device__ unsigned load_through_l1(const unsigned* p) {
    unsigned v;
    asm volatile("ld.global.ca.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ unsigned load_through_l2(const unsigned* p) {
    unsigned v;
    asm volatile("ld.global.cg.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}

__device__ bool wait_for(unsigned* flag, long long patience) {
    const long long start = clock64();
    while (atomicAdd(flag, 0u) == 0u) {
        if (clock64() - start > patience) return false;
    }
    return true;
}

__device__ unsigned smid() {
    unsigned id;
    asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
    return id;
}

extern "C" __global__ void l1_coherence(unsigned* x, unsigned* flags, unsigned new_value, long long patience, unsigned* out) {
    if (blockIdx.x == 1) {  // the reader
        out[0] = load_through_l1(x);
        out[5] = smid();
        atomicExch(&flags[0], 1u);
        if (!wait_for(&flags[1], patience)) atomicAdd(&out[6], 1u);
        out[1] = load_through_l1(x);
        out[2] = load_through_l2(x);
        out[3] = *(volatile unsigned*)x;
    } else {  // the writer
        out[4] = smid();
        if (!wait_for(&flags[0], patience)) atomicAdd(&out[6], 1u);
        *x = new_value;
        __threadfence();
        atomicExch(&flags[1], 1u);
    }
}
