// mmm_wgmma.cu: the ladder's steps 12 to 17, Hopper's own way to multiply: what cuBLAS runs on an
// H100. C = A * B for row-major f32 A (m x k), B (k x n) and C (m x n) of any size, as in mmm_ladder.cu.
//
//  12. wgmma_tma_tf32: A and B in TF32 (rounded by the copy engine), sums in f32.
//  13. wgmma_tma_bf16: A and B converted to bf16 first (8 bits of mantissa), sums in f32.
//  14. wgmma_tma_bf16_once: 13's GEMM alone, on bf16 copies made before the timed launches (as
//      cuBLAS's bf16 row is timed), each stage given back as soon as it is read.
//  15. wgmma_tma_bf16_pair: 14 in clusters of two blocks that share B^T's tiles (TMA multicast).
//  16. wgmma_tma_bf16_stored: 14 storing C through shared memory by TMA, while the next tile runs.
//  17. wgmma_tma_tf32_wide: 12 with no transpose of B on a large C: C^T on 256 x 128 tiles, B's tile
//      through registers (Tf32Wide), C stored as 16 does.
//
// What is new against steps 7 and 8 (mma.sync, one warp at a time, cp.async by every thread):
//  - wgmma.mma_async: a warpgroup (4 warps, 128 threads) multiplies a 64 x N tile (N up to 256) by
//    reading its operands straight from shared memory, or the first from registers; the instruction is
//    asynchronous: the warpgroup commits a group of them and waits for it later.
//  - TMA (cp.async.bulk.tensor): one thread asks the copy engine for a whole 2D tile, described on
//    the host by a tensor map (cuTensorMapEncodeTiled: the matrix's address, sizes, row stride, the
//    box and the shared-memory swizzle); parts of the box outside the matrix arrive as zeros, so no
//    thread checks bounds while loading.
//  - mbarriers: shared-memory barriers that count arrivals and bytes. full[s] completes when every
//    copy of stage s has landed; empty[s] when every consumer warp is done reading it.
//  - Warp specialization: warpgroup 0 is the producer (one of its threads issues the copies, stages
//    ahead), warpgroups 1 and 2 are consumers (step 12's narrow tiles need only warpgroup 1; 2 leaves
//    at once). setmaxnreg moves registers from the producer (40 per thread) to the consumers (232: up
//    to 128 accumulators).
//  - A persistent grid: one block per multiprocessor walks the tiles, so the producer already loads
//    the next tile while the consumers store this one.
//  - Split-K where C has too few tiles for the multiprocessors: a block's unit of work is a tile and a
//    slice of k's stages, whose partial product goes to slab `slice` of `c`, and the host sums the
//    slabs (sum_slices_f32 in mmm_ladder.cu), as steps 9 to 11 do. With one slice, c is C.
//  - Stream-K (step 18) where C has more tiles than blocks but not a whole number of rounds of them,
//    and the last round would leave the multiprocessors idle long (8192 x 8192: 2048 tiles, 15 rounds
//    of 132 and 68 left; the host's wgmma::tail): the whole rounds go tile by tile, and the
//    k stages of the tiles left are cut into one even run per block, across tile boundaries. The
//    block that has a tile's first stage stores it, once the blocks with its later stages have left
//    their partial sums in global memory and counted themselves in (Tail, below).
// All of it is sm_90a: architecture-specific code that runs on compute capability 9.0 only. Builds for
// any other architecture leave the GEMMs out (__CUDA_ARCH_FEAT_SM90_ALL) and keep the prep
// kernels below, which run everywhere.
//
// Which operand goes where. wgmma reads TF32 from shared memory only K-major (k contiguous): A is,
// B (k x n, n contiguous) is not. Two ways round it:
//  - SharedTiles (step 12 on a large C, and steps 13 to 16): B is transposed into B^T first, by a pass of its
//    own (TF32; an eighth of the step at 4096) or by bf16's conversion pass, which writes B^T as it
//    converts. Both operands come from shared memory in 128 x 256 tiles (two consumers of 64 rows,
//    m64n256), the shape that keeps the tensor cores busiest.
//  - Tf32Narrow (step 12 where 128 x 256 tiles would leave half the multiprocessors idle): no pass.
//    The step multiplies C^T = B^T A^T: wgmma's first operand, the one it can take from registers, is
//    B^T, which the consumer loads from B's tile (TMA rounded it to TF32) as the layout wants; its
//    second, from shared memory, is A^T, whose K-major layout is A's rows. The accumulators, a
//    tile of C^T, are stored transposed. Tiles of 128 x 64 (1024 x 1024 is 128 of them), one
//    consumer, m64n128k8. At 1024 the transpose and the sum of split-K's slabs took two fifths of
//    the step's time before.
//  - Tf32Wide (step 17 on a large C): the same C^T on the tiles of SharedTiles, turned: 256 x 128
//    of C, two consumers of 64 columns, m64n256k8, with no pass at all.
//
// TMA needs each row of a matrix to start 16 bytes after the previous one's start. In TF32 the step
// reads A as it is where k % 4 == 0, and B as it is (C^T's tiles) where n % 4 == 0; otherwise a prep
// kernel copies it into rows rounded up to 4 floats. B^T is always a copy (the transpose), and so are
// the bf16 operands (rows rounded up to 8).
#include <cuda.h>
#include "matrix_view.cuh"


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

// Which tile (row tm, column tn of tiles) is the block's tile-th: down `group` tile rows, then right,
// so the blocks running at once read few distinct tiles of B.
__device__ __forceinline__ void tile_coords(int tile, int tiles_m, int tiles_n, int group, int& tm, int& tn) {
    const int span = group * tiles_n;
    const int first_m = tile / span * group;
    const int rows = min(tiles_m - first_m, group);
    const int r = tile % span;
    tm = first_m + r % rows;
    tn = r / rows;
}

#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
constexpr int GROUP_M = 16;  // tile rows walked together, so neighbouring blocks share B's tiles in L2
constexpr int THREADS = 128 * 3;  // the producer's warpgroup and up to two consumers
constexpr int KBYTES = 128;  // bytes of k per stage and row of A: one 128-byte swizzle row
// Dynamic shared memory: 192 KiB of stages and 1024 bytes to align them to the swizzle's 1024-byte
// pattern. Each tile shape fits as many stages as it can, up to MAX_STAGES.
constexpr int SHARED_BYTES = 192 * 1024 + 1024;
static_assert(SHARED_BYTES <= 227 * 1024, "more than a Hopper block may have");
constexpr int MAX_STAGES = 8;
// Step 16's buffers for storing C through shared memory: two of 8 KiB per consumer, past the stages.
constexpr int STORE_BYTES = 2 * 2 * 8192;
static_assert(SHARED_BYTES + STORE_BYTES <= 227 * 1024, "more than a Hopper block may have");
// How many stages of `stage_bytes` the shared memory holds, up to MAX_STAGES.
constexpr int stages_that_fit(int stage_bytes) {
    return (SHARED_BYTES - 1024) / stage_bytes < MAX_STAGES ? (SHARED_BYTES - 1024) / stage_bytes : MAX_STAGES;
}

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
// The copy engine brings the box at (x, y) of `map` (x along the rows, y down them) into shared
// memory at `dst` and counts its bytes on the mbarrier `bar`.
__device__ __forceinline__ void tma_load(unsigned int dst, const CUtensorMap* map, unsigned int bar, int x, int y) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(x), "r"(y)
        : "memory");
}
// The same copy, multicast: the box lands at `dst` in every block of the cluster that `blocks` has a
// bit for, each counting its bytes on its own mbarrier at `bar` (shared offsets are alike in each).
__device__ __forceinline__ void tma_load_multicast(unsigned int dst, const CUtensorMap* map, unsigned int bar, int x, int y,
                                                   unsigned short blocks) {
    asm volatile(
        "cp.async.bulk.tensor.2d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%3, %4}], [%2], %5;\n" ::"r"(dst),
        "l"(reinterpret_cast<unsigned long long>(map)), "r"(bar), "r"(x), "r"(y), "h"(blocks)
        : "memory");
}
// This block's rank in its cluster, and how many blocks the cluster has.
__device__ __forceinline__ unsigned int cluster_rank() {
    unsigned int rank;
    asm volatile("mov.u32 %0, %%cluster_ctarank;\n" : "=r"(rank));
    return rank;
}
__device__ __forceinline__ unsigned int cluster_blocks() {
    unsigned int blocks;
    asm volatile("mov.u32 %0, %%cluster_nctarank;\n" : "=r"(blocks));
    return blocks;
}
// Every thread of every block of the cluster waits here for all the others (the non-aligned form:
// the producer's warp comes here diverged).
__device__ __forceinline__ void cluster_sync() {
    asm volatile("barrier.cluster.arrive.release;\nbarrier.cluster.wait.acquire;\n" ::: "memory");
}
// One arrival on the mbarrier at `bar`'s shared offset in block `rank` of the cluster (this one's too).
__device__ __forceinline__ void mbarrier_arrive_in(unsigned int bar, unsigned int rank) {
    asm volatile(
        "{\n.reg .b32 remote;\n"
        "mapa.shared::cluster.u32 remote, %0, %1;\n"
        "mbarrier.arrive.shared::cluster.b64 _, [remote];\n}\n" ::"r"(bar),
        "r"(rank)
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
template <int N>
__device__ __forceinline__ void fence_accumulators(float (&d)[N]) {
#pragma unroll
    for (int i = 0; i < N; ++i) asm volatile("" : "+f"(d[i])::"memory");
}
// The shared-memory descriptor of a K-major tile in the 128-byte swizzle: the start address / 16,
// 1024 bytes (8 rows of 128 bytes, one swizzle pattern) from one 8-row group to the next, layout 1
// (128-byte swizzle). The leading offset is unused for this layout (1, as CUTLASS sets it). A step
// along k within the 128-byte row adds its bytes / 16 to the start address.
__device__ __forceinline__ unsigned long long descriptor(unsigned int address) {
    return (unsigned long long)((address & 0x3FFFF) >> 4) | (1ull << 16) | ((unsigned long long)(1024 >> 4) << 32) |
           (1ull << 62);
}
// Where element (row, byte) of a tile of 128-byte rows lies in the 128-byte swizzle that TMA writes
// and the descriptors read: the row's eight 16-byte pieces are permuted by the row's place in its
// group of eight (piece ^= row % 8).
__device__ __forceinline__ unsigned int swizzled(int row, int byte) {
    return row * 128 + ((((byte >> 4) ^ row) & 7) << 4) + (byte & 15);
}

// Accumulator lists as wgmma's operands: "+f"(d[0]), ..., "+f"(d[N - 1]), and the strings naming them.
#define D8(i) "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), "+f"(d[i + 7])
#define D64(i) D8(i), D8(i + 8), D8(i + 16), D8(i + 24), D8(i + 32), D8(i + 40), D8(i + 48), D8(i + 56)
#define REGS64                                                                                                 \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
    "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, " \
    "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define REGS128                                                                                                \
    "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, " \
    "%23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, " \
    "%44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, " \
    "%65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, " \
    "%86, %87, %88, %89, %90, %91, %92, %93, %94, %95, %96, %97, %98, %99, %100, %101, %102, %103, %104, %105, " \
    "%106, %107, %108, %109, %110, %111, %112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, "     \
    "%123, %124, %125, %126, %127}"

// One wgmma, k 32 bytes deep: d += A * B, or d = A * B where `accumulate` is 0. m64n256, both operands
// from shared memory, K-major: the tf32 form has no transpose flags, bf16's are 0. m64n128k8 in TF32
// takes its first operand from registers (four per thread, 64 x 8).
template <typename T> struct Wgmma;
template <> struct Wgmma<float> {
    static __device__ __forceinline__ void mma(float (&d)[128], unsigned long long a, unsigned long long b, int accumulate) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " REGS128 ", %128, %129, p, 1, 1;\n}\n"
                     : D64(0), D64(64)
                     : "l"(a), "l"(b), "r"(accumulate));
    }
};
template <> struct Wgmma<Bf16> {
    static __device__ __forceinline__ void mma(float (&d)[128], unsigned long long a, unsigned long long b, int accumulate) {
        asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"
                     "wgmma.mma_async.sync.aligned.m64n256k16.f32.bf16.bf16 " REGS128 ", %128, %129, p, 1, 1, 0, 0;\n}\n"
                     : D64(0), D64(64)
                     : "l"(a), "l"(b), "r"(accumulate));
    }
};
__device__ __forceinline__ void mma_tf32(float (&d)[64], const unsigned (&a)[4], unsigned long long b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %69, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n128k8.f32.tf32.tf32 " REGS64 ", {%64, %65, %66, %67}, %68, p, 1, 1;\n}\n"
                 : D64(0)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}
// The same, m64n256k8: step 17's consumers, 128 accumulators each.
__device__ __forceinline__ void mma_tf32(float (&d)[128], const unsigned (&a)[4], unsigned long long b, int accumulate) {
    asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %133, 0;\n"
                 "wgmma.mma_async.sync.aligned.m64n256k8.f32.tf32.tf32 " REGS128 ", {%128, %129, %130, %131}, %132, p, 1, 1;\n}\n"
                 : D64(0), D64(64)
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(b), "r"(accumulate));
}
// The tiles both operands of which come from shared memory (steps 13 to 16, and step 12 on a large C): 128 x
// 256 of C, two consumers of 64 rows each; per stage A's 128 rows and B^T's 256 rows of 128 bytes (32
// tf32 or 64 bf16 of k), both K-major and swizzled, read by four m64n256 wgmmas per consumer.
template <typename T>
struct SharedTiles {
    static constexpr int TILE_M = 128, TILE_N = 256, CONSUMERS = 2, ACCUMULATORS = 128;
    static constexpr int BK = KBYTES / sizeof(T);  // k per stage
    static constexpr int STAGE_A = TILE_M * KBYTES, STAGE = (TILE_M + TILE_N) * KBYTES;
    static constexpr int STAGES = stages_that_fit(STAGE);
    static constexpr bool WAITS_BEFORE_FRAGMENTS = false;
    struct Fragments {};  // nothing in registers: both operands are read from shared memory

    // The producer's copies for stage ks of tile (tm, tn) into `dst`: A's box, then B^T's. In a
    // cluster, whose blocks have tiles of one column tn, block `rank` brings its share of B^T's rows
    // (the map's box is TILE_N / CLUSTER rows) into every block's stage at once.
    template <int CLUSTER>
    static __device__ __forceinline__ void load(unsigned int dst, const CUtensorMap* a, const CUtensorMap* b_t, unsigned int bar,
                                                int ks, int tm, int tn, unsigned int rank) {
        tma_load(dst, a, bar, ks * BK, tm * TILE_M);
        if (CLUSTER == 1) {
            tma_load(dst + STAGE_A, b_t, bar, ks * BK, tn * TILE_N);
        } else {
            constexpr int SHARE = TILE_N / CLUSTER;  // rows of B^T each block brings
            tma_load_multicast(dst + STAGE_A + rank * SHARE * KBYTES, b_t, bar, ks * BK, tn * TILE_N + rank * SHARE,
                               (1u << CLUSTER) - 1);
        }
    }
    static __device__ __forceinline__ void load_fragments(Fragments&, unsigned int, int) {}
    static __device__ __forceinline__ void mma(float (&d)[ACCUMULATORS], Fragments&, unsigned int stage, int consumer,
                                               bool first) {
        const unsigned long long a = descriptor(stage + consumer * 64 * KBYTES), b = descriptor(stage + STAGE_A);
#pragma unroll
        for (int kk = 0; kk < KBYTES / 32; ++kk) Wgmma<T>::mma(d, a + 2 * kk, b + 2 * kk, !first || kk > 0);
    }
    // The consumer's 64 x 256 half-tile. wgmma's layout: d[4i + {0, 1}] is row 16 warp + lane / 4,
    // columns 8i + 2 (lane % 4) + {0, 1}; d[4i + {2, 3}] the row 8 below. Threads outside C store nothing.
    static __device__ __forceinline__ void store(MatrixView<float> c, const float (&d)[ACCUMULATORS], int tm, int tn,
                                                 int consumer) {
        const int row0 = tm * TILE_M + consumer * 64, col0 = tn * TILE_N;
        const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
        const int row = row0 + warp * 16 + lane / 4;
        const int col = col0 + 2 * (lane % 4);
        const bool whole = row0 + 64 <= c.rows && col0 + TILE_N <= c.cols && c.cols % 2 == 0;
#pragma unroll
        for (int i = 0; i < ACCUMULATORS / 4; ++i) {
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
    // Step 16: the same half-tile stored through shared memory, so the consumer can go on to the next
    // tile while the copy engine writes this one. 8 chunks of 64 rows x 32 floats (128 bytes: the
    // 128-byte swizzle, so the 8 rows a warp writes at once fall on different banks) go through two
    // 8 KiB buffers at `buffers` (this consumer's); one thread hands each chunk to the copy engine, a
    // bulk tensor store into slab `slice` of `c_map` (C, or the slabs, as n x m x slices floats),
    // which leaves out what lies past C. Only a buffer's reuse waits: for the store two chunks back to
    // have read it. The consumer's last stores are waited for when it ends (consume).
    static __device__ __forceinline__ void store_through_shared(const CUtensorMap* c_map, const float (&d)[ACCUMULATORS],
                                                                int tm, int tn, int slice, int consumer,
                                                                MatrixView<float> c, unsigned int buffers) {
        const int row0 = tm * TILE_M + consumer * 64, col0 = tn * TILE_N;
        if (row0 >= c.rows) return;  // the whole consumer alike: its rows lie below C
        const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
        const int row = warp * 16 + lane / 4;
#pragma unroll
        for (int j = 0; j < TILE_N / 32; ++j) {
            const unsigned int buffer = buffers + (j % 2) * 8192;
            if (t == 0) asm volatile("cp.async.bulk.wait_group.read 1;\n" ::: "memory");
            asm volatile("bar.sync %0, 128;\n" ::"r"(1 + consumer) : "memory");  // the buffer is free
#pragma unroll
            for (int ii = 0; ii < 4; ++ii) {
                const int i = 4 * j + ii, byte = (8 * ii + 2 * (lane % 4)) * 4;
                asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(buffer + swizzled(row, byte)), "f"(d[4 * i]),
                             "f"(d[4 * i + 1])
                             : "memory");
                asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(buffer + swizzled(row + 8, byte)),
                             "f"(d[4 * i + 2]), "f"(d[4 * i + 3])
                             : "memory");
            }
            // The writes made visible to the copy engine (the async proxy), by all 128 threads.
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            asm volatile("bar.sync %0, 128;\n" ::"r"(1 + consumer) : "memory");
            if (t == 0) {
                asm volatile(
                    "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n"
                    "cp.async.bulk.commit_group;\n" ::"l"(reinterpret_cast<unsigned long long>(c_map)),
                    "r"(col0 + 32 * j), "r"(row0), "r"(slice), "r"(buffer)
                    : "memory");
            }
        }
    }
};

// ---- The tiles computed as C^T = B^T A^T (see the top): step 12's narrow ones and step 17's ----
// wgmma's first operand, B^T, comes from registers: each consumer loads it from B's tile as TMA
// brought it (32 rows of k by 32 columns a box, 128 bytes, swizzled; TF32 already: the map's TFLOAT32
// type rounds as TMA copies, as for A). Its second, A^T, is A's tile, K-major, from shared memory.

constexpr int TF32_BOX = 32 * KBYTES;  // a box of B: 32 rows of k by 32 columns

// Which of a consumer's 64 columns of C the lane's row of its wgmma tile is; the row 8 below is the
// next column. wgmma's A fragment gives the lanes of a warp rows 16 warp + lane / 4 (a0, a2) and the
// row 8 below (a1, a3), k lane % 4 (+ 4): as columns c and c + 1 of B, a0 and a1 are one 8-byte
// load. Any order of the columns is right if the store keeps it. This one makes each 8-byte load
// conflict-free: a half-warp (4 k by 4 pairs of columns) reads two 16-byte pieces of each of 4 rows
// of k, pieces 0 and 4 (or 1 and 5, ...), which the swizzle of the 4 rows (piece ^ k) spreads over
// all 32 banks. Warp w's pairs start at 32 (w / 2) + 8 (w % 2) + {0, 2, 16, 18, 4, 6, 20, 22}.
__device__ __forceinline__ int fragment_column(int warp, int lane) {
    const int r = lane / 4;
    return 32 * (warp / 2) + 8 * (warp % 2) + 2 * (r % 2) + 16 * (r / 2 % 2) + 4 * (r / 4);
}

// B^T's part of a stage in registers, as wgmma's tf32 fragment wants it: a0..a3 of each k step of 8.
struct Tf32Fragments {
    unsigned a[KBYTES / 32][4];
};

// Loads k step kk of the thread's fragment from the consumer's two boxes of B, the first at `boxes`.
// a0: (row, k), a1: (row + 8, k), a2: (row, k + 4), a3: (row + 8, k + 4); rows row and row + 8 are
// columns col and col + 1. Each k step is 8 rows of 128 bytes on, the swizzle's whole pattern.
__device__ __forceinline__ void load_fragment(unsigned (&a)[4], int kk, unsigned int boxes) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const int col = fragment_column(warp, lane), k = 8 * kk + lane % 4;
    const unsigned int at = boxes + (col / 32) * TF32_BOX;
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n"
                 : "=r"(a[0]), "=r"(a[1])
                 : "r"(at + swizzled(k, 4 * (col % 32)))
                 : "memory");
    asm volatile("ld.shared.v2.b32 {%0, %1}, [%2];\n"
                 : "=r"(a[2]), "=r"(a[3])
                 : "r"(at + swizzled(k + 4, 4 * (col % 32)))
                 : "memory");
}

// A consumer's tile of C^T (N accumulators: 2N rows of C by 64 columns), stored into C from row0,
// col0: d[4i + {0, 1}] is wgmma row 16 warp + lane / 4 (C's column `fragment_column`), wgmma columns
// 8i + 2 (lane % 4) + {0, 1} (C's rows); d[4i + {2, 3}] the row 8 below (the next column). So the
// thread has pairs of neighbours in each of its rows: d[4i + j] and d[4i + 2 + j], stored as one
// float2 where they are 8-byte aligned (C on 8 bytes, its rows of even length). Threads outside C
// store nothing. One pointer walks down the columns (8 rows a step), which keeps step 17's 128
// accumulators and the addresses within the registers a thread has.
template <int N>
__device__ __forceinline__ void store_transposed(MatrixView<float> c, const float (&d)[N], int row0, int col0) {
    const int warp = threadIdx.x % 128 / 32, lane = threadIdx.x % 32;
    const int first = row0 + 2 * (lane % 4), col = col0 + fragment_column(warp, lane);
    if (col >= c.cols) return;
    const bool pair = col + 1 < c.cols && c.cols % 2 == 0 && reinterpret_cast<unsigned long long>(c.data) % 8 == 0;
    float* at = c.data + (size_t)first * c.cols + col;
#pragma unroll
    for (int i = 0; i < N / 4; ++i, at += 8 * (size_t)c.cols) {
#pragma unroll
        for (int j = 0; j < 2; ++j) {
            if (first + 8 * i + j >= c.rows) continue;
            float* p = at + j * (size_t)c.cols;
            if (pair) {
                *reinterpret_cast<float2*>(p) = make_float2(d[4 * i + j], d[4 * i + 2 + j]);
            } else {
                p[0] = d[4 * i + j];
                if (col + 1 < c.cols) p[1] = d[4 * i + 2 + j];
            }
        }
    }
}

// What the tiles computed as C^T share: M x N of C; per stage A's M rows of 128 bytes (32 k), then
// B's 32 rows of k in boxes of 32 columns; one block a cluster.
template <int M, int N>
struct Tf32Transposed {
    static constexpr int TILE_M = M, TILE_N = N;
    static constexpr int BK = KBYTES / 4;  // k per stage
    static constexpr int STAGE_A = TILE_M * KBYTES, STAGE = (TILE_M + TILE_N) * KBYTES;
    static constexpr int STAGES = stages_that_fit(STAGE);
    using Fragments = Tf32Fragments;

    // The producer's copies for stage ks of tile (tm, tn) into `dst`: A's box, then B's boxes.
    template <int CLUSTER>
    static __device__ __forceinline__ void load(unsigned int dst, const CUtensorMap* a, const CUtensorMap* b, unsigned int bar,
                                                int ks, int tm, int tn, unsigned int) {
        static_assert(CLUSTER == 1, "the tiles computed as C^T run one block a cluster");
        tma_load(dst, a, bar, ks * BK, tm * TILE_M);
#pragma unroll
        for (int box = 0; box < TILE_N / 32; ++box)
            tma_load(dst + STAGE_A + box * TF32_BOX, b, bar, tn * TILE_N + 32 * box, ks * BK);
    }
};

// Step 12's tiles on a small C: 128 x 64, one consumer, m64n128k8, B in two boxes.
struct Tf32Narrow : Tf32Transposed<128, 64> {
    static constexpr int CONSUMERS = 1, ACCUMULATORS = TILE_M / 2;
    // The consumer waits for its wgmmas before it loads the next stage's fragments, all four k steps
    // at once (step 17 loads half of them while the wgmmas before run).
    static constexpr bool WAITS_BEFORE_FRAGMENTS = true;

    static __device__ __forceinline__ void load_fragments(Fragments& f, unsigned int stage, int) {
#pragma unroll
        for (int kk = 0; kk < KBYTES / 32; ++kk) load_fragment(f.a[kk], kk, stage + STAGE_A);
    }
    static __device__ __forceinline__ void mma(float (&d)[ACCUMULATORS], Fragments& f, unsigned int stage, int,
                                               bool first) {
        const unsigned long long a_t = descriptor(stage);
#pragma unroll
        for (int kk = 0; kk < KBYTES / 32; ++kk) mma_tf32(d, f.a[kk], a_t + 2 * kk, !first || kk > 0);
    }
    static __device__ __forceinline__ void store(MatrixView<float> c, const float (&d)[ACCUMULATORS], int tm, int tn,
                                                 int) {
        store_transposed(c, d, tm * TILE_M, tn * TILE_N);
    }
};

// Step 17's tiles on a large C: 256 x 128, two consumers of 64 columns each, m64n256k8: as cuBLAS's
// TF32 kernel, 128 x 256 tiles of C^T with no transpose of B. Per stage A's 256 rows of 128 bytes (32
// k), which both consumers read, and B's 32 rows of k in four boxes of 32 columns, two per consumer.
// The fragments go two k steps at a time, in four sets of registers: a consumer loads steps 0 and 1
// and issues their wgmmas as one group; waits for the group before (the last stage's steps 2 and 3),
// which frees those sets; loads steps 2 and 3 into them and issues their group. While it loads, its
// own group before and the other consumer's wgmmas keep the tensor cores busy. (A group a k step,
// two sets, was 2.5% slower at 4096: issue 65's run 34; four 4-byte loads a k step instead of
// load_fragment's two 8-byte ones, 5% slower: runs 35 and 38.) Stored through shared memory by TMA
// (step 16's way) in chunks of 32 rows by 64 columns.
struct Tf32Wide : Tf32Transposed<256, 128> {
    static constexpr int CONSUMERS = 2, ACCUMULATORS = 128;
    static constexpr bool WAITS_BEFORE_FRAGMENTS = false;

    // The consumer's boxes of B in the stage at `stage`.
    static __device__ __forceinline__ unsigned int boxes(unsigned int stage, int consumer) {
        return stage + STAGE_A + 2 * consumer * TF32_BOX;
    }
    // k steps 0 and 1: the last stage's wgmmas that read their sets are done (consume waited).
    static __device__ __forceinline__ void load_fragments(Fragments& f, unsigned int stage, int consumer) {
        load_fragment(f.a[0], 0, boxes(stage, consumer));
        load_fragment(f.a[1], 1, boxes(stage, consumer));
    }
    // The stage's two groups of two wgmmas (see above). The second is committed by consume.
    static __device__ __forceinline__ void mma(float (&d)[ACCUMULATORS], Fragments& f, unsigned int stage, int consumer,
                                               bool first) {
        const unsigned long long a_t = descriptor(stage);
        mma_tf32(d, f.a[0], a_t, !first);
        mma_tf32(d, f.a[1], a_t + 2, 1);
        wgmma_commit();
        wgmma_wait<1>();
        load_fragment(f.a[2], 2, boxes(stage, consumer));
        load_fragment(f.a[3], 3, boxes(stage, consumer));
        wgmma_fence();
        mma_tf32(d, f.a[2], a_t + 4, 1);
        mma_tf32(d, f.a[3], a_t + 6, 1);
    }
    static __device__ __forceinline__ void store(MatrixView<float> c, const float (&d)[ACCUMULATORS], int tm, int tn,
                                                 int consumer) {
        store_transposed(c, d, tm * TILE_M, tn * TILE_N + 64 * consumer);
    }
    // As SharedTiles' (step 16), for a tile of C^T: 8 chunks of 32 rows by the consumer's 64 columns,
    // each two boxes of 32 x 32 floats (4 KiB, the 128-byte swizzle) in one of two 8 KiB buffers and
    // two bulk stores. A thread's pairs of neighbours (store_transposed) go 8 bytes at a time.
    static __device__ __forceinline__ void store_through_shared(const CUtensorMap* c_map, const float (&d)[ACCUMULATORS],
                                                                int tm, int tn, int slice, int consumer,
                                                                MatrixView<float> c, unsigned int buffers) {
        const int row0 = tm * TILE_M, col0 = tn * TILE_N + 64 * consumer;
        if (col0 >= c.cols) return;  // the whole consumer alike: its columns lie right of C
        const int t = threadIdx.x % 128, lane = t % 32, col = fragment_column(t / 32, lane);
#pragma unroll
        for (int j = 0; j < TILE_M / 32; ++j) {
            const unsigned int buffer = buffers + (j % 2) * 8192;
            if (t == 0) asm volatile("cp.async.bulk.wait_group.read 1;\n" ::: "memory");
            asm volatile("bar.sync %0, 128;\n" ::"r"(1 + consumer) : "memory");  // the buffer is free
            const unsigned int at = buffer + (col / 32) * 4096;
#pragma unroll
            for (int ii = 0; ii < 4; ++ii) {
#pragma unroll
                for (int jj = 0; jj < 2; ++jj) {
                    const int row = 8 * ii + 2 * (lane % 4) + jj, i = 4 * j + ii;
                    asm volatile("st.shared.v2.f32 [%0], {%1, %2};\n" ::"r"(at + swizzled(row, 4 * (col % 32))),
                                 "f"(d[4 * i + jj]), "f"(d[4 * i + 2 + jj])
                                 : "memory");
                }
            }
            asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
            asm volatile("bar.sync %0, 128;\n" ::"r"(1 + consumer) : "memory");
            if (t == 0) {
#pragma unroll
                for (int box = 0; box < 2; ++box) {
                    asm volatile(
                        "cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                            reinterpret_cast<unsigned long long>(c_map)),
                        "r"(col0 + 32 * box), "r"(row0 + 32 * j), "r"(slice), "r"(buffer + box * 4096)
                        : "memory");
                }
                asm volatile("cp.async.bulk.commit_group;\n" ::: "memory");
            }
        }
    }
};

// What the host (lab-mmm/src/wgmma.rs) and the code above take for granted: every stage and box starts
// on the swizzle's 1024-byte pattern, the narrow tile's B is whole boxes of 32 columns, and its
// accumulators are those of one m64n128 (mma_tf32).
static_assert(Tf32Narrow::STAGE % 1024 == 0 && Tf32Narrow::STAGE_A % 1024 == 0 && TF32_BOX % 1024 == 0, "");
static_assert(Tf32Wide::STAGE % 1024 == 0 && Tf32Wide::STAGE_A % 1024 == 0, "");
static_assert(SharedTiles<float>::STAGE % 1024 == 0 && SharedTiles<float>::STAGE_A % 1024 == 0, "");
static_assert(Tf32Narrow::TILE_N == 64 && Tf32Narrow::ACCUMULATORS == 64, "one consumer's m64n128k8");
static_assert(Tf32Wide::TILE_N == 2 * 64 && Tf32Wide::TILE_M == 256 && Tf32Wide::ACCUMULATORS == 128,
              "two consumers' m64n256k8, each 64 columns of C");
static_assert(Tf32Wide::BK == 4 * 8, "Tf32Wide::mma: four k steps of 8 a stage");

// A block's units of work: tile (tm, tn) of C over k stages first to end - 1, the stages of slice
// `slice`. Units go slice by slice, so one slice walks the tiles as the unsplit kernel does. A unit
// is a cluster's: CLUSTER tiles of one column, one per block (`rank`); where C's tile rows run out,
// the last blocks' tiles lie below C, and they load zeros and store nothing.
struct Unit {
    int tm, tn, slice, first, end;
    int tail;  // step 18: which of the last round's tiles this is, shared out along k; -1 for a whole tile
};
template <int CLUSTER>
__device__ __forceinline__ Unit unit_of(int unit, int tiles_m, int tiles_n, int k_stages, int stages_per_slice,
                                        unsigned int rank) {
    Unit u;
    const int rows = (tiles_m + CLUSTER - 1) / CLUSTER, tiles = rows * tiles_n;  // rows of clusters' units
    tile_coords(unit % tiles, rows, tiles_n, GROUP_M / CLUSTER, u.tm, u.tn);
    u.tm = u.tm * CLUSTER + rank;
    u.slice = unit / tiles;
    u.first = u.slice * stages_per_slice;
    u.end = min(k_stages, u.first + stages_per_slice);
    u.tail = -1;
    return u;
}

// What a block's warpgroups share: the stages in shared memory, their barriers and the units.
struct Pipeline {
    unsigned long long* full;
    unsigned long long* empty;
    unsigned int stages;  // shared address of stage 0
    int tiles_m, tiles_n, k_stages, stages_per_slice, units;
    unsigned int rank;  // in the cluster
    // Step 16: C's map where C is stored through shared memory (else null: stored from registers),
    // and the shared address of the consumers' store buffers.
    const CUtensorMap* c_map;
    unsigned int buffers;
    // Step 18: the last `tail` tiles are shared out along k (none where 0), the units before them go
    // whole; `partials` holds a block's partial sums, `arrivals` counts them per tile and consumer.
    int tail, whole_units;
    float* partials;
    unsigned int* arrivals;
};

// Where a block is in its units: the next whole one, and its run of the shared-out tiles' stages,
// numbered tile after tile (tile j's stage s is j * k_stages + s), at to end.
struct Walk {
    int unit, at, end;
};

// Step 18's even runs: block b gets stages [b * S / G, (b + 1) * S / G) of the S shared-out ones, G
// blocks. The first block whose run starts at `stage` or later (G where none does).
__device__ __forceinline__ int first_run_from(long long stage, long long stages) {
    return (int)((stage * gridDim.x + stages - 1) / stages);
}

// Without STREAM_K (steps 12 to 17) the walk is the units alone, as the kernels had it before step 18.
template <int CLUSTER, bool STREAM_K>
__device__ __forceinline__ Walk walk_start(const Pipeline& p) {
    if (!STREAM_K) return Walk{(int)blockIdx.x / CLUSTER, 0, 0};
    const long long stages = (long long)p.tail * p.k_stages;
    return Walk{(int)blockIdx.x / CLUSTER, (int)(stages * blockIdx.x / gridDim.x),
                (int)(stages * (blockIdx.x + 1) / gridDim.x)};
}

// The block's next unit: its whole units first, then the pieces of its run, one per tile it
// crosses; false once there are none. Producer and consumers walk the same units.
template <int CLUSTER, bool STREAM_K>
__device__ __forceinline__ bool next_unit(const Pipeline& p, Walk& w, Unit& u) {
    if (w.unit < (STREAM_K ? p.whole_units : p.units)) {
        u = unit_of<CLUSTER>(w.unit, p.tiles_m, p.tiles_n, p.k_stages, p.stages_per_slice, p.rank);
        w.unit += gridDim.x / CLUSTER;
        return true;
    }
    if (!STREAM_K || w.at >= w.end) return false;
    const int tail = w.at / p.k_stages;
    u = unit_of<CLUSTER>(p.whole_units + tail, p.tiles_m, p.tiles_n, p.k_stages, p.stages_per_slice, p.rank);
    u.tail = tail;
    u.first = w.at % p.k_stages;
    u.end = min(p.k_stages, u.first + (w.end - w.at));
    w.at += u.end - u.first;
    return true;
}

// Step 18's partial sums, a consumer's 128 accumulators per thread: a block leaves at most one (its
// run's first piece, where the run starts inside a tile), in its own slot, laid out so that a warp's
// 16-byte stores fall side by side.
template <int ACCUMULATORS>
__device__ __forceinline__ float4* partial_slot(const Pipeline& p, int block, int consumer) {
    return reinterpret_cast<float4*>(p.partials) + ((size_t)block * 2 + consumer) * (ACCUMULATORS / 4) * 128;
}

// A piece that is not a tile's first: its sums go to this block's slot, then the consumer counts
// itself in on the tile's arrivals (the fence orders all 128 threads' stores, which the named barrier
// gathered, before the count: the pattern of CUTLASS's semaphores).
template <int ACCUMULATORS>
__device__ __forceinline__ void give_partial(const Pipeline& p, const float (&d)[ACCUMULATORS], int tail, int consumer) {
    const int t = threadIdx.x % 128;
    float4* slot = partial_slot<ACCUMULATORS>(p, blockIdx.x, consumer);
#pragma unroll
    for (int i = 0; i < ACCUMULATORS / 4; ++i) {
        __stcg(&slot[i * 128 + t], make_float4(d[4 * i], d[4 * i + 1], d[4 * i + 2], d[4 * i + 3]));
    }
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + consumer) : "memory");
    if (t == 0) {
        asm volatile("fence.acq_rel.gpu;\n" ::: "memory");
        asm volatile("red.relaxed.gpu.global.add.u32 [%0], 1;\n" ::"l"(&p.arrivals[2 * tail + consumer]) : "memory");
    }
}

// A tile's first piece: waits until every block whose run starts inside the tile has left its sums,
// adds them, in the order of the blocks (the same sums each launch), and sets the count back to zero
// for the next launch. The blocks it waits for are numbered above it and leave their sums at the
// start of their runs, before any wait of their own, while it ends its own run with this: with one
// block per multiprocessor they run at once, and where fewer fit, the lowest blocks still end first.
template <int ACCUMULATORS>
__device__ __forceinline__ void take_partials(const Pipeline& p, float (&d)[ACCUMULATORS], int tail, int consumer) {
    const long long stages = (long long)p.tail * p.k_stages, first = (long long)tail * p.k_stages;
    const int from = first_run_from(first + 1, stages), to = first_run_from(first + p.k_stages, stages);
    if (to <= from) return;
    const int t = threadIdx.x % 128;
    if (t == 0) {
        unsigned int* count = &p.arrivals[2 * tail + consumer];
        unsigned int arrived = 0;
        do {
            asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(arrived) : "l"(count) : "memory");
        } while (arrived < (unsigned int)(to - from));
        if (arrived != (unsigned int)(to - from)) __trap();  // a count left over: an earlier launch's
        *count = 0;
    }
    asm volatile("bar.sync %0, 128;\n" ::"r"(1 + consumer) : "memory");
    for (int block = from; block < to; ++block) {
        const float4* slot = partial_slot<ACCUMULATORS>(p, block, consumer);
#pragma unroll
        for (int i = 0; i < ACCUMULATORS / 4; ++i) {
            const float4 v = __ldcg(&slot[i * 128 + t]);
            d[4 * i] += v.x;
            d[4 * i + 1] += v.y;
            d[4 * i + 2] += v.z;
            d[4 * i + 3] += v.w;
        }
    }
}

// The producer: one thread walks the block's units and their k stages, waits until a stage is free,
// and asks the copy engine for its tiles.
template <class Tiles, int CLUSTER, bool STREAM_K>
__device__ __forceinline__ void produce(const Pipeline& p, const CUtensorMap* a, const CUtensorMap* b) {
    int stage = 0;
    unsigned int phase = 0;
    Walk w = walk_start<CLUSTER, STREAM_K>(p);
    Unit u;
    while (next_unit<CLUSTER, STREAM_K>(p, w, u)) {
        for (int ks = u.first; ks < u.end; ++ks) {
            mbarrier_wait(shared_address(&p.empty[stage]), phase ^ 1);
            const unsigned int bar = shared_address(&p.full[stage]);
            mbarrier_expect_bytes(bar, Tiles::STAGE);  // whole boxes, zeros included
            Tiles::template load<CLUSTER>(p.stages + stage * Tiles::STAGE, a, b, bar, ks, u.tm, u.tn, p.rank);
            if (++stage == Tiles::STAGES) {
                stage = 0;
                phase ^= 1;
            }
        }
    }
}

// A consumer warp gives a stage back to the producer. In a cluster a stage is freed in every block:
// each one's producer may then write it in all of them.
template <int CLUSTER>
__device__ __forceinline__ void free_stage(const Pipeline& p, int stage) {
    const unsigned int bar = shared_address(&p.empty[stage]);
    if (CLUSTER == 1) {
        mbarrier_arrive(bar);
    } else {
#pragma unroll
        for (unsigned int rank = 0; rank < CLUSTER; ++rank) mbarrier_arrive_in(bar, rank);
    }
}
// x, which is the same in every thread of the warp, said so to ptxas: lane 0's, broadcast. ptxas keeps
// values it knows to be warp-uniform in uniform registers, where wgmma reads its descriptors from; one
// it cannot prove uniform (anything from threadIdx, or what step 18's walk makes of blockIdx) it builds
// in each thread's registers and moves over (R2UR), about a dozen instructions more for each wgmma.
// Where ptxas proves x uniform itself, the shuffle is gone from the machine code.
__device__ __forceinline__ unsigned int warp_uniform(unsigned int x) { return __shfl_sync(0xffffffffu, x, 0); }

// A consumer warpgroup: for each of the block's units, waits for each stage, loads what it reads from
// registers, runs 4 wgmmas on it (128 bytes of k), then stores its part of the tile into the unit's
// slab of c (C itself with one slice). With IN_FLIGHT 1 it keeps one group of wgmmas in flight and
// frees the stage before it; with 0 it waits for this stage's and frees it at once. Where wgmma's
// first operand comes from registers, step 12's narrow tiles wait for the wgmmas reading them before
// they load the next stage's fragments; step 17's load half of them between two wgmma groups (Tf32Wide::mma).
template <class Tiles, int CLUSTER, int IN_FLIGHT, bool TMA_STORE, bool STREAM_K>
__device__ __forceinline__ void consume(const Pipeline& p, MatrixView<float> c) {
    const int consumer = warp_uniform(threadIdx.x / 128 - 1);
    if (consumer >= Tiles::CONSUMERS) return;    // the narrow tiles need one consumer
    const bool arrives = threadIdx.x % 32 == 0;  // lane 0 of each warp frees a stage
    float d[Tiles::ACCUMULATORS];
#pragma unroll
    for (int i = 0; i < Tiles::ACCUMULATORS; ++i) d[i] = 0.0f;
    typename Tiles::Fragments f;
    int stage = 0;
    unsigned int phase = 0;
    Walk w = walk_start<CLUSTER, STREAM_K>(p);
    Unit u;
    while (next_unit<CLUSTER, STREAM_K>(p, w, u)) {
        int previous = 0;
        for (int ks = u.first; ks < u.end; ++ks) {
            mbarrier_wait(shared_address(&p.full[stage]), phase);
            const unsigned int at = warp_uniform(p.stages + stage * Tiles::STAGE);
            if (Tiles::WAITS_BEFORE_FRAGMENTS) wgmma_wait<0>();
            Tiles::load_fragments(f, at, consumer);
            wgmma_fence();
            Tiles::mma(d, f, at, consumer, ks == u.first);
            wgmma_commit();
            if (IN_FLIGHT == 0) {
                wgmma_wait<0>();  // this stage's wgmmas are done: its buffers go back at once
                if (arrives) free_stage<CLUSTER>(p, stage);
            } else {
                wgmma_wait<1>();  // the previous stage's wgmmas are done: its buffers go back to the producer
                if (ks > u.first && arrives) free_stage<CLUSTER>(p, previous);
            }
            previous = stage;
            if (++stage == Tiles::STAGES) {
                stage = 0;
                phase ^= 1;
            }
        }
        wgmma_wait<0>();
        fence_accumulators(d);
        if (IN_FLIGHT == 1 && arrives) free_stage<CLUSTER>(p, previous);
        if (STREAM_K && u.tail >= 0) {  // step 18: a piece of a shared-out tile
            if (u.first > 0) {
                give_partial(p, d, u.tail, consumer);
                continue;
            }
            take_partials(p, d, u.tail, consumer);
        }
        if constexpr (TMA_STORE) {
            if (p.c_map != nullptr) {
                Tiles::store_through_shared(p.c_map, d, u.tm, u.tn, u.slice, consumer, c,
                                            p.buffers + consumer * (STORE_BYTES / 2));
                continue;
            }
        }
        const MatrixView<float> slab{c.rows, c.cols, c.data + (size_t)u.slice * c.rows * c.cols};
        Tiles::store(slab, d, u.tm, u.tn, consumer);
    }
    // The shared memory a bulk store reads must outlive it: the thread that issued them waits.
    if (TMA_STORE) asm volatile("cp.async.bulk.wait_group.read 0;\n" ::: "memory");
}

// a: A (m x k), box 128 bytes of k x TILE_M rows; b: B^T (n x k, SharedTiles) or B (k x n,
// Tf32Narrow), as Tiles::load reads them; all swizzled in 128-byte rows. k: A's true columns. c: C,
// or with more than one slice of stages_per_slice k stages each, the slabs of C's size the slices'
// partial products go to (the host's Split::choose, lab-mmm/src/split_k.rs). There are
// ceil(k_stages / stages_per_slice) slices, so none is empty. CLUSTER: blocks a cluster, which share
// B^T's tiles (the host launches CLUSTER times the blocks, and B^T's box is TILE_N / CLUSTER rows).
// IN_FLIGHT: wgmma groups a consumer keeps running while it waits for the next stage (consume).
// TMA_STORE: C may be stored through shared memory, where `c_map` is given (step 16).
// STREAM_K (step 18), tail, partials, arrivals: the shared-out tiles (Pipeline); with tail > 0 k must
// be one slice, and the grid should fit on the GPU at once (a block waits for higher blocks' sums).
template <class Tiles, int CLUSTER = 1, int IN_FLIGHT = 1, bool TMA_STORE = false, bool STREAM_K = false>
__device__ __forceinline__ void wgmma_tma(const CUtensorMap* a, const CUtensorMap* b, MatrixView<float> c, int k,
                                          int stages_per_slice, const CUtensorMap* c_map = nullptr, int tail = 0,
                                          float* partials = nullptr, unsigned int* arrivals = nullptr) {
    extern __shared__ unsigned char shared[];
    __shared__ __align__(8) unsigned long long full[MAX_STAGES];
    __shared__ __align__(8) unsigned long long empty[MAX_STAGES];
    // The host launches with its own copy of THREADS and SHARED_BYTES (lab-mmm/src/wgmma.rs): fewer
    // threads would leave the empty barriers waiting for ever, less shared memory would let TMA write
    // past it; a slice of no stages would store accumulators no wgmma wrote. Each stops the kernel here.
    unsigned int dynamic_bytes;
    asm("mov.u32 %0, %%dynamic_smem_size;" : "=r"(dynamic_bytes));
    const unsigned int needed = SHARED_BYTES + (TMA_STORE ? STORE_BYTES : 0);
    if (blockDim.x != THREADS || dynamic_bytes < needed || stages_per_slice < 1 || cluster_blocks() != CLUSTER) __trap();
    Pipeline p;
    p.full = full;
    p.empty = empty;
    p.stages = (shared_address(shared) + 1023u) & ~1023u;  // STAGES x STAGE bytes
    p.tiles_m = (c.rows + Tiles::TILE_M - 1) / Tiles::TILE_M;
    p.tiles_n = (c.cols + Tiles::TILE_N - 1) / Tiles::TILE_N;
    p.k_stages = (k + Tiles::BK - 1) / Tiles::BK;
    p.stages_per_slice = stages_per_slice;
    p.units = (p.tiles_m + CLUSTER - 1) / CLUSTER * p.tiles_n * ((p.k_stages + stages_per_slice - 1) / stages_per_slice);
    p.rank = CLUSTER == 1 ? 0 : cluster_rank();
    p.c_map = c_map;
    p.buffers = p.stages + Tiles::STAGES * Tiles::STAGE;
    // Step 18: the tiles shared out are whole ones of one slice, each block's run is at least a stage
    // (a run of none would leave a tile's count short for ever), and a round of whole tiles comes first.
    p.tail = tail;
    p.whole_units = p.units - tail;
    p.partials = partials;
    p.arrivals = arrivals;
    if (tail > 0 && (!STREAM_K || CLUSTER != 1 || stages_per_slice < p.k_stages || (long long)tail * p.k_stages < gridDim.x ||
                     p.whole_units < (int)gridDim.x || partials == nullptr || arrivals == nullptr))
        __trap();
    if (threadIdx.x == 0) {
        for (int s = 0; s < Tiles::STAGES; ++s) {
            mbarrier_init(shared_address(&full[s]), 1);  // the producer's arrival
            // one arrival per consumer warp of each block of the cluster
            mbarrier_init(shared_address(&empty[s]), Tiles::CONSUMERS * 4 * CLUSTER);
        }
        asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    }
    // A cluster's blocks arrive on and copy into each other's barriers and stages: none may start
    // before all have set theirs up, nor leave while another may still arrive on its barriers.
    if (CLUSTER == 1) {
        __syncthreads();
    } else {
        cluster_sync();
    }
    if (threadIdx.x < 128) {
        asm volatile("setmaxnreg.dec.sync.aligned.u32 40;\n");
        if (threadIdx.x == 0) produce<Tiles, CLUSTER, STREAM_K>(p, a, b);
    } else {
        asm volatile("setmaxnreg.inc.sync.aligned.u32 232;\n");
        consume<Tiles, CLUSTER, IN_FLIGHT, TMA_STORE, STREAM_K>(p, c);
    }
    if (CLUSTER > 1) cluster_sync();
}

// Step 12: `narrow` (the host's choice, wgmma.rs) picks the 128 x 64 tiles, and then `b` is B's map,
// else B^T's.
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_tma_tf32(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b, MatrixView<float> c, int k,
                   int stages_per_slice, int narrow) {
    if (narrow) {
        wgmma_tma<Tf32Narrow>(&a, &b, c, k, stages_per_slice);
    } else {
        wgmma_tma<SharedTiles<float>>(&a, &b, c, k, stages_per_slice);
    }
}
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_tma_bf16(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b_t, MatrixView<float> c, int k, int stages_per_slice) {
    wgmma_tma<SharedTiles<Bf16>>(&a, &b_t, c, k, stages_per_slice);
}
// Step 14: step 13's GEMM on operands converted before the timed launches (the host's part), its
// consumers freeing each stage as soon as its own wgmmas are done (IN_FLIGHT 0): the other consumer's
// wgmmas keep the tensor cores busy meanwhile, and the producer gets the stage a wgmma group sooner.
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_tma_bf16_once(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b_t, MatrixView<float> c, int k, int stages_per_slice) {
    wgmma_tma<SharedTiles<Bf16>, 1, 0>(&a, &b_t, c, k, stages_per_slice);
}
// Step 15: step 14 in clusters of two blocks, on tiles one above the other, that each bring half of
// B^T's tile into both (TMA multicast): B^T is read from L2 once for two tiles. b_t's box is 128 rows.
extern "C" __global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(THREADS, 1)
    wgmma_tma_bf16_pair(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b_t, MatrixView<float> c, int k, int stages_per_slice) {
    wgmma_tma<SharedTiles<Bf16>, 2, 0>(&a, &b_t, c, k, stages_per_slice);
}
// Step 16: step 14 storing C through shared memory by TMA where `tma_store` (the host's choice: C's
// rows must be whole 16-byte pieces, n % 4 == 0), `c_map` describing C, or with more than one slice
// the slabs, as n x m x slices floats; elsewhere from registers, as step 14 does.
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_tma_bf16_stored(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b_t,
                          const __grid_constant__ CUtensorMap c_map, MatrixView<float> c, int k, int stages_per_slice,
                          int tma_store) {
    wgmma_tma<SharedTiles<Bf16>, 1, 0, true>(&a, &b_t, c, k, stages_per_slice, tma_store ? &c_map : nullptr);
}
// Step 17: TF32 with no transpose of B, on 256 x 128 tiles computed as C^T (Tf32Wide), stored by
// TMA where `tma_store` (as step 16: n % 4 == 0), `c_map` in boxes of 32 x 32 floats; where
// `narrow` (the host's choice, as for step 12), step 12's narrow tiles, which need no transpose
// either. `b` is B's map in both.
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_tma_tf32_wide(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b,
                        const __grid_constant__ CUtensorMap c_map, MatrixView<float> c, int k, int stages_per_slice,
                        int tma_store, int narrow) {
    if (narrow) {
        wgmma_tma<Tf32Narrow>(&a, &b, c, k, stages_per_slice);
    } else {
        wgmma_tma<Tf32Wide, 1, 1, true>(&a, &b, c, k, stages_per_slice, tma_store ? &c_map : nullptr);
    }
}
// Step 18: step 16 with the last, partial round of tiles shared out along k (stream-K) where `tail` >
// 0 (the host's choice, wgmma::tail: a grid of one block per multiprocessor, C of one slice, more
// tiles than blocks and not a multiple of them, the idle multiprocessors of the last round adding up
// to MIN_IDLE_STAGES stage-times a block or more): the last `tail` tiles' stages cut evenly over the blocks,
// `partials` room for a consumer's sums per block and consumer, `arrivals` a zero per tile and
// consumer (zero again when the launch ends). Where `tail` is 0 it runs step 16's code itself: with
// the stream-K walk compiled in, ptxas no longer keeps the consumers' loop in uniform registers (see
// warp_uniform), and step 18 would be slower than step 16 where it shares nothing out (4096 x 4096).
extern "C" __global__ void __launch_bounds__(THREADS, 1)
    wgmma_tma_bf16_streamk(const __grid_constant__ CUtensorMap a, const __grid_constant__ CUtensorMap b_t,
                           const __grid_constant__ CUtensorMap c_map, MatrixView<float> c, int k, int stages_per_slice,
                           int tma_store, int tail, float* partials, unsigned int* arrivals) {
    static_assert(SharedTiles<Bf16>::CONSUMERS == 2, "partial_slot: two consumers a block");
    const CUtensorMap* store = tma_store ? &c_map : nullptr;
    if (tail == 0) {
        wgmma_tma<SharedTiles<Bf16>, 1, 0, true>(&a, &b_t, c, k, stages_per_slice, store);
    } else {
        wgmma_tma<SharedTiles<Bf16>, 1, 0, true, true>(&a, &b_t, c, k, stages_per_slice, store, tail, partials, arrivals);
    }
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
