// memory.cu: the memory chapters' small programs (lab-memory).

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
// enough bytes are in flight to reach the memory's bandwidth: one float per thread is not.

#define COPIES_PER_THREAD 4

extern "C" __global__ void strided_copy(const float* __restrict__ in, float* __restrict__ out, int stride, int offset, int n) {
    const int first = blockIdx.x * blockDim.x * COPIES_PER_THREAD + threadIdx.x;
    float value[COPIES_PER_THREAD];
#pragma unroll
    for (int k = 0; k < COPIES_PER_THREAD; ++k) {
        const int i = first + k * blockDim.x;
        if (i < n) {
            value[k] = in[offset + (size_t)i * stride];
        }
    }
#pragma unroll
    for (int k = 0; k < COPIES_PER_THREAD; ++k) {
        const int i = first + k * blockDim.x;
        if (i < n) {
            out[offset + (size_t)i * stride] = value[k] + 1.0f;
        }
    }
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
