// mmm_wgmma.cu: the ladder's steps 12 and 13, Hopper's own way to multiply: what cuBLAS runs on an
// H100. C = A * B for row-major f32 A (m x k), B (k x n) and C (m x n) of any size, as in mmm_ladder.cu.
//
//  12. wgmma_tma_tf32: A and B in TF32 (rounded by the copy engine), sums in f32.
//  13. wgmma_tma_bf16: A and B converted to bf16 first (8 bits of mantissa), sums in f32.
//
// What is new against steps 7 and 8 (mma.sync, one warp at a time, cp.async by every thread):
//  - wgmma.mma_async: a warpgroup (4 warps, 128 threads) multiplies a 64 x 256 tile of C by reading
//    its A and B tiles straight from shared memory; no thread loads fragments into registers. The
//    instruction is asynchronous: the warpgroup commits a group of them and waits for it later.
//  - TMA (cp.async.bulk.tensor): one thread asks the copy engine for a whole 2D tile, described on
//    the host by a tensor map (cuTensorMapEncodeTiled: the matrix's address, sizes, row stride, the
//    box and the shared-memory swizzle); parts of the box outside the matrix arrive as zeros, so no
//    thread checks bounds while loading.
//  - mbarriers: shared-memory barriers that count arrivals and bytes. full[s] completes when both
//    copies of stage s have landed; empty[s] when every consumer warp is done reading it.
//  - Warp specialization: warpgroup 0 is the producer (one of its threads issues the copies, stages
//    ahead), warpgroups 1 and 2 are consumers (each the 64-row half of a 128 x 256 tile). setmaxnreg
//    moves registers from the producer (24 per thread) to the consumers (240: 128 accumulators).
//  - A persistent grid: one block per multiprocessor walks the tiles, so the producer already loads
//    the next tile while the consumers store this one.
//  - Split-K where C has too few tiles for the multiprocessors (1024 x 1024 is 32 tiles for an H100's
//    132): a block's unit of work is a tile and a slice of k's stages, whose partial product goes to
//    slab `slice` of `c`, and the host sums the slabs (sum_slices_f32 in mmm_ladder.cu), as steps 9
//    to 11 do. With one slice, c is C and the kernel is the unsplit step.
// All of it is sm_90a: architecture-specific code that runs on compute capability 9.0 only. Builds for
// any other architecture leave the two kernels out (__CUDA_ARCH_FEAT_SM90_ALL) and keep the prep
// kernels below, which run everywhere.
//
// The layout both kernels read: per stage, a 128 x 128-byte tile of A and a 256 x 128-byte tile of
// B^T, each row 128 bytes of k (32 tf32 or 64 bf16), K-major, swizzled in 128-byte rows. TF32 wgmma
// reads only K-major operands from shared memory, so B (row-major, k x n) is transposed into B^T
// (n x k) first; bf16 needs a conversion pass anyway, which writes B^T as it converts. TMA also needs
// each row of a matrix to start 16 bytes after the previous one's start: A is copied into rows of
// k rounded up to 4 floats when k % 4 != 0 (TF32); the bf16 copies have rows of k rounded up to 8.
#include <cuda.h>
#include "matrix_view.cuh"

constexpr int BM = 128;             // rows of a tile of C: 2 consumer warpgroups x 64
constexpr int BN = 256;             // columns: one m64n256 wgmma per consumer
constexpr int KBYTES = 128;         // bytes of k per stage and row: one 128-byte swizzle row
constexpr int STAGES = 4;
constexpr int STAGE_A = BM * KBYTES;  // 16 KiB
constexpr int STAGE_B = BN * KBYTES;  // 32 KiB
// Dynamic shared memory: the stages and 1024 bytes to align them to the swizzle's 1024-byte pattern.
constexpr int SHARED_BYTES = STAGES * (STAGE_A + STAGE_B) + 1024;
static_assert(SHARED_BYTES <= 227 * 1024, "more than a Hopper block may have");
constexpr int GROUP_M = 16;         // tile rows walked together, so neighbouring blocks share B's tiles in L2

// A bf16 number: the upper 16 bits of an f32 (8 bits of mantissa). cuda_bf16.h would need CCCL's
// headers, which the course's toolchain lacks; the rounding is three integer operations.
struct Bf16 {
    unsigned short bits;
};

// Rounds to the nearest bf16, ties to even (as __float2bfloat16_rn, for finite numbers).
__device__ __forceinline__ Bf16 to_bf16(float x) {
    const unsigned int u = __float_as_uint(x);
    return Bf16{static_cast<unsigned short>((u + 0x7FFFu + ((u >> 16) & 1u)) >> 16)};
}
__device__ __forceinline__ float convert(float x, float*) { return x; }
__device__ __forceinline__ Bf16 convert(float x, Bf16*) { return to_bf16(x); }

// Which tile (row tm, column tn of tiles) is the block's tile-th: down GROUP_M tile rows, then right,
// so the blocks running at once read few distinct tiles of B.
__device__ __forceinline__ void tile_coords(int tile, int tiles_m, int tiles_n, int& tm, int& tn) {
    const int span = GROUP_M * tiles_n;
    const int first_m = tile / span * GROUP_M;
    const int rows = min(tiles_m - first_m, GROUP_M);
    const int r = tile % span;
    tm = first_m + r % rows;
    tn = r / rows;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
constexpr int CONSUMERS = 2;                    // warpgroups computing, each 64 rows of the tile
constexpr int THREADS = 128 * (CONSUMERS + 1);  // and the producer's warpgroup

__device__ __forceinline__ unsigned int shared_address(const void* p) {
    return static_cast<unsigned int>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbarrier_init(unsigned int bar, unsigned int count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count));
}
// One arrival that also says how many bytes the copies of this phase will bring.
__device__ __forceinline__ void mbarrier_expect_bytes(unsigned int bar, unsigned int bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbarrier_arrive(unsigned int bar) {
    asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Waits until the barrier's phase `parity` has completed.
__device__ __forceinline__ void mbarrier_wait(unsigned int bar, unsigned int parity) {
    asm volatile(
        "{\n"
        ".reg .pred done;\n"
        "WAIT_%=:\n"
        "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
        "@!done bra WAIT_%=;\n"
        "}\n" ::"r"(bar),
        "r"(parity)
        : "memory");
}
// The copy engine brings the box at (k0, row0) of `map` into shared memory at `dst` and counts its
// bytes on the mbarrier `bar`.
__device__ __forceinline__ void tma_load(unsigned int dst, const CUtensorMap* map, unsigned int bar, int k0, int row0) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(k0), "r"(row0)
        : "memory");
}
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
// Waits until at most N committed groups of wgmma are still running.
template <int N>
__device__ __forceinline__ void wgmma_wait() {
    asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from touching the accumulators before wgmma_wait says they are written.
__device__ __forceinline__ void fence_accumulators(float (&d)[128]) {
#pragma unroll
    for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// The shared-memory descriptor of a K-major tile in the 128-byte swizzle: the start address / 16,
// 1024 bytes (8 rows of 128 bytes, one swizzle pattern) from one 8-row group to the next, layout 1
// (128-byte swizzle). The leading offset is unused for this layout (1, as CUTLASS sets it). A step
// along k within the 128-byte row adds its bytes / 16 to the start address.
__device__ __forceinline__ unsigned long long descriptor(unsigned int address) {
    return (unsigned long long)((address & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ull << 62);
}

// The 128 accumulators of a thread, as wgmma's operand list: "+f"(d[0]), ..., "+f"(d[127]).
#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define D64(i) D8(i), D8(i + 8), D8(i + 16), D8(i + 24), D8(i + 32), D8(i + 40), D8(i + 48), D8(i + 56)
#define REGS                                                                                                   \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
    "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, " \
    "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, " \
    "%65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, " \
    "%86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, " \
    "%106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, "     \
    "%123, %124, %125, %126, %127}"

// One wgmma of the 64 x 256 half-tile, k 32 bytes deep (8 tf32 or 16 bf16): d += A * B^T, or d = A * B^T
// where `accumulate` is 0. The tf32 form has no transpose flags: its operands are always K-major.
template <typename T> struct Wgmma;
template <> struct Wgmma<float> {
    static __device__ __forceinline__ void mma(float (&d)[128], unsigned long long a, unsigned long long b, int accumulate) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " REGS ", %128, %129, p, 1, 1;\n}\n"
                     : D64(0), D64(64)
                     : "l"(a), "l"(b), "r"(accumulate));
    }
};
template <> struct Wgmma<Bf16> {
    static __device__ __forceinline__ void mma(float (&d)[128], unsigned long long a, unsigned long long b, int accumulate) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " REGS ", %128, %129, p, 1, 1, 0, 0;\n}\n"
                     : D64(0), D64(64)
                     : "l"(a), "l"(b), "r"(accumulate));
    }
};

// A block's units of work: tile (tm, tn) of C over k stages first to end - 1, the stages of slice
// `slice`. Units go slice by slice, so one slice walks the tiles as the unsplit kernel does.
struct Unit {
    int tm, tn, slice, first, end;
};
__device__ __forceinline__ Unit unit_of(int unit, int tiles_m, int tiles_n, int k_stages, int stages_per_slice) {
    Unit u;
    const int tiles = tiles_m * tiles_n;
    tile_coords(unit % tiles, tiles_m, tiles_n, u.tm, u.tn);
    u.slice = unit / tiles;
    u.first = u.slice * stages_per_slice;
    u.end = min(k_stages, u.first + stages_per_slice);
    return u;
}

// The producer: one thread walks the block's units and their k stages, waits until a stage is free,
// and asks the copy engine for its A and B^T tiles.
__device__ __forceinline__ void produce(const CUtensorMap* a, const CUtensorMap* b_t, unsigned long long* full,
                                        unsigned long long* empty, unsigned int s_a, unsigned int s_b, int tiles_m,
                                        int tiles_n, int k_stages, int stages_per_slice, int units, int bk) {
    int stage = 0;
    unsigned int phase = 0;
    for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
        const Unit u = unit_of(unit, tiles_m, tiles_n, k_stages, stages_per_slice);
        const int tm = u.tm, tn = u.tn;
        for (int ks = u.first; ks < u.end; ++ks) {
            mbarrier_wait(shared_address(&empty[stage]), phase ^ 1);
            const unsigned int bar = shared_address(&full[stage]);
            mbarrier_expect_bytes(bar, STAGE_A + STAGE_B);  // whole boxes, zeros included
            tma_load(s_a + stage * STAGE_A, a, bar, ks * bk, tm * BM);
            tma_load(s_b + stage * STAGE_B, b_t, bar, ks * bk, tn * BN);
            if (++stage == STAGES) {
                stage = 0;
                phase ^= 1;
            }
        }
    }
}

// Writes a consumer's 64 x 256 half-tile from its accumulators. wgmma's layout: d[4i + {0, 1}] is row
// 16 warp + lane / 4, columns 8i + 2 (lane % 4) + {0, 1}; d[4i + {2, 3}] the row 8 below. Threads outside C
// store nothing.
__device__ __forceinline__ void store_half_tile(MatrixView<float> c, const float (&d)[128], int row0, int col0) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const int row = row0 + warp * 16 + lane / 4;
    const int col = col0 + 2 * (lane % 4);
    const bool whole = row0 + 64 <= c.rows && col0 + BN <= c.cols && c.cols % 2 == 0;
#pragma unroll
    for (int i = 0; i < 32; ++i) {
#pragma unroll
        for (int half = 0; half < 2; ++half) {
            const int r = row + 8 * half, cc = col + 8 * i;
            const float x = d[4 * i + 2 * half], y = d[4 * i + 2 * half + 1];
            if (whole) {
                *reinterpret_cast<float2*>(&c(r, cc)) = make_float2(x, y);
            } else if (r < c.rows) {
                if (cc < c.cols) c(r, cc) = x;
                if (cc + 1 < c.cols) c(r, cc + 1) = y;
            }
        }
    }
}

// A consumer warpgroup: for each of the block's units, waits for each stage, runs 4 wgmmas on it (128
// bytes of k), keeps one group in flight and frees the stage before it, then stores its half-tile into
// the unit's slab of c (C itself with one slice).
template <typename T>
__device__ __forceinline__ void consume(MatrixView<float> c, unsigned long long* full, unsigned long long* empty,
                                       unsigned int s_a, unsigned int s_b, int tiles_m, int tiles_n, int k_stages,
                                       int stages_per_slice, int units) {
    const int half = threadIdx.x / 128 - 1;  // which 64 rows of the tile
    const bool arrives = threadIdx.x % 32 == 0;  // lane 0 of each warp frees a stage
    float d[128];
#pragma unroll
    for (int i = 0; i < 128; ++i) d[i] = 0.0f;
    int stage = 0;
    unsigned int phase = 0;
    for (int unit = blockIdx.x; unit < units; unit += gridDim.x) {
        const Unit u = unit_of(unit, tiles_m, tiles_n, k_stages, stages_per_slice);
        int previous = 0;
        for (int ks = u.first; ks < u.end; ++ks) {
            mbarrier_wait(shared_address(&full[stage]), phase);
            const unsigned long long a = descriptor(s_a + stage * STAGE_A + half * 64 * KBYTES);
            const unsigned long long b = descriptor(s_b + stage * STAGE_B);
            wgmma_fence();
#pragma unroll
            for (int kk = 0; kk < KBYTES / 32; ++kk) {
                Wgmma<T>::mma(d, a + 2 * kk, b + 2 * kk, ks > u.first || kk > 0);
            }
            wgmma_commit();
            wgmma_wait<1>();  // the previous stage's wgmmas are done: its buffers go back to the producer
            if (ks > u.first && arrives) mbarrier_arrive(shared_address(&empty[previous]));
            previous = stage;
            if (++stage == STAGES) {
                stage = 0;
                phase ^= 1;
            }
        }
        wgmma_wait<0>();
        fence_accumulators(d);
        if (arrives) mbarrier_arrive(shared_address(&empty[previous]));
        const MatrixView<float> slab{c.rows, c.cols, c.data + (size_t)u.slice * c.rows * c.cols};
        store_half_tile(slab, d, u.tm * BM + half * 64, u.tn * BN);
    }
}

// a: A (m x k) in T, box 128 bytes of k x BM rows; b_t: B^T (n x k) in T, box 128 bytes x BN rows; both
// swizzled in 128-byte rows. k: A's true columns (the maps' inner size). c: C, or with more than one
// slice of stages_per_slice k stages each, the slabs of C's size the slices' partial products go to
// (the host's Split::choose, lab-mmm/src/ladder.rs). There are ceil(k_stages / stages_per_slice)
// slices, so none is empty.
template <typename T>
__device__ __forceinline__ void wgmma_tma(const CUtensorMap* a, const CUtensorMap* b_t, MatrixView<float> c, int k,
                                          int stages_per_slice) {
    extern __shared__ unsigned char shared[];
    __shared__ __align__(8) unsigned long long full[STAGES];
    __shared__ __align__(8) unsigned long long empty[STAGES];
    // The host launches with its own copy of THREADS and SHARED_BYTES (lab-mmm/src/wgmma.rs): fewer
    // threads would leave the empty barriers waiting for ever, less shared memory would let TMA write
    // past it; a slice of no stages would store accumulators no wgmma wrote. Each stops the kernel here.
    unsigned int dynamic_bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dynamic_bytes));
    if (blockDim.x != THREADS || dynamic_bytes < SHARED_BYTES || stages_per_slice < 1) __trap();
    const unsigned int s_a = (shared_address(shared) + 1023u) & ~1023u;  // STAGES x 16 KiB
    const unsigned int s_b = s_a + STAGES * STAGE_A;                      // STAGES x 32 KiB
    const int bk = KBYTES / (int)sizeof(T);
    const int tiles_m = (c.rows + BM - 1) / BM, tiles_n = (c.cols + BN - 1) / BN;
    const int k_stages = (k + bk - 1) / bk;
    const int units = tiles_m * tiles_n * ((k_stages + stages_per_slice - 1) / stages_per_slice);
    if (threadIdx.x == 0) {
        for (int s = 0; s < STAGES; ++s) {
            mbarrier_init(shared_address(&full[s]), 1);                  // the producer's arrival
            mbarrier_init(shared_address(&empty[s]), CONSUMERS * 4);     // one per consumer warp
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    __syncthreads();
    if (threadIdx.x < 128) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 24;\n");
        if (threadIdx.x == 0) produce(a, b_t, full, empty, s_a, s_b, tiles_m, tiles_n, k_stages, stages_per_slice, units, bk);
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 240;\n");
        consume<T>(c, full, empty, s_a, s_b, tiles_m, tiles_n, k_stages, stages_per_slice, units);
    }
}

extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_tma_tf32(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b_t, MatrixView<float> c, int k, int stages_per_slice) {
    wgmma_tma<float>(&a, &b_t, c, k, stages_per_slice);
}
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_tma_bf16(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b_t, MatrixView<float> c, int k, int stages_per_slice) {
    wgmma_tma<Bf16>(&a, &b_t, c, k, stages_per_slice);
}
#endif  // __CUDA_ARCH_FEAT_SM90_ALL

// ---- Prep kernels, every architecture: the operands as the tensor maps want them ------------------

// dst[r * ld + c] = src(r, c) as Out: a copy with rows of ld elements (ld >= src.cols). Launched with
// 256 threads a block, blocks over the columns (x) and rows (y), each striding on where the grid ends.
template <typename Out>
__device__ __forceinline__ void copy_padded(MatrixView<float> src, Out* dst, int ld) {
    for (int r = blockIdx.y; r < src.rows; r += gridDim.y) {
        for (int c = blockIdx.x * blockDim.x + threadIdx.x; c < src.cols; c += gridDim.x * blockDim.x) {
            dst[(size_t)r * ld + c] = convert(src(r, c), dst);
        }
    }
}

// dst[c * ld + r] = src(r, c) as Out: the transpose (src.cols x src.rows, rows of ld elements), through
// a padded 32 x 33 shared tile so both the reads and the writes are coalesced. Blocks of 32 x 8 threads,
// one 32 x 32 tile each.
template <typename Out>
__device__ __forceinline__ void transpose_padded(MatrixView<float> src, Out* dst, int ld) {
    __shared__ float tile[32][33];
    const int c0 = blockIdx.x * 32, r0 = blockIdx.y * 32;
    for (int i = threadIdx.y; i < 32; i += 8) {
        const int r = r0 + i, c = c0 + threadIdx.x;
        if (r < src.rows && c < src.cols) tile[i][threadIdx.x] = src(r, c);
    }
    __syncthreads();
    for (int i = threadIdx.y; i < 32; i += 8) {
        const int c = c0 + i, r = r0 + threadIdx.x;
        if (r < src.rows && c < src.cols) dst[(size_t)c * ld + r] = convert(tile[threadIdx.x][i], dst);
    }
}

extern "C" __global__ void copy_pad_f32(MatrixView<float> src, float* dst, int ld) { copy_padded(src, dst, ld); }
extern "C" __global__ void copy_pad_bf16(MatrixView<float> src, Bf16* dst, int ld) { copy_padded(src, dst, ld); }
extern "C" __global__ void transpose_pad_f32(MatrixView<float> src, float* dst, int ld) { transpose_padded(src, dst, ld); }
extern "C" __global__ void transpose_pad_bf16(MatrixView<float> src, Bf16* dst, int ld) { transpose_padded(src, dst, ld); }
