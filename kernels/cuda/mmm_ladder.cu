// mmm_ladder.cu: from the slides' tiled mmm towards cuBLAS, one step and one lesson at a time.
// Every kernel computes C = A * B for row-major A (m x k), B (k x n) and C (m x n) of any size, as
// mmm.cu does: tile elements outside A or B are zero, threads outside C store nothing.
//
//   1. register_blocked: each thread computes TM x TN elements of C, so every number it reads from
//      shared memory feeds TN (or TM) multiply-adds instead of one.
//   2. wide_loads: 16-byte loads from global memory and a shared-memory layout without bank conflicts:
//      the A tile stored transposed (k-major) with a padding column, so a thread reads its TM numbers
//      of A as vectors; its TN numbers of B taken as 16-byte pieces BN / (TN / V) columns apart, so
//      neighbouring threads read neighbouring pieces.
//   3. async_copies: two shared-memory stages filled with cp.async, so the copy of the next tile runs
//      while the multiprocessor computes on this one.
//   4. dmma_m8n8k4 (f64 only): the FP64 tensor cores, mma.sync m8n8k4 (Ampere's shape, SASS DMMA.8):
//      256 multiply-adds per warp instruction.
//   5. dmma_m16n8k4 (f64 only): the shape Hopper added, m16n8k4 (SASS DMMA.16): 512 per instruction,
//      and twice the throughput of m8n8k4 on an H200.
//   6. warp_tiled (f32 only): the plain-FMA kernel built as cuBLAS's and CUTLASS's SIMT GEMMs are:
//      128 x 256 tiles, each warp a 64 x 64 piece of them and each thread 8 x 16, the next k step's
//      numbers loaded during this one, three cp.async stages and one barrier per tile.
//   7. mma_tiled (f64): Hopper's m16n8k8 in step 6's build, on C's transpose so that every fragment is
//      one 16-byte load: 128 x 64 tiles, each warp 64 x 32 of them, fragments loaded a step ahead,
//      three stages, 16 k deep, two blocks per multiprocessor.
//   8. mma_tiled (tf32, from f32 matrices): the same kernel on the TF32 tensor cores (mma m16n8k8,
//      sm_80): f32 numbers rounded to 10 bits of mantissa, products summed in f32.
#include "matrix_view.cuh"

// Steps 1 to 3: a block computes a BM x BN tile of C, BK deep at a time, with 256 threads.
constexpr int BM = 128;
constexpr int BN = 128;
constexpr int BK = 8;
constexpr int TM = 8;
constexpr int TN = 8;
constexpr int THREADS = (BM / TM) * (BN / TN);

// 16 bytes: four floats or two doubles, the widest load a thread can make.
template <typename T> struct Wide;
template <> struct Wide<float> { using type = float4; static constexpr int N = 4; };
template <> struct Wide<double> { using type = double2; static constexpr int N = 2; };

// The padding column of the transposed A tile: 16 bytes, so rows stay 16-byte aligned and the
// transposed stores of a warp fall into different banks.
template <typename T> constexpr int PAD = Wide<T>::N;

// The TM x TN outer product of one k step: af from A's column, bf from B's row.
template <typename T>
__device__ __forceinline__ void outer_product(T (&acc)[TM][TN], const T (&af)[TM], const T (&bf)[TN]) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            acc[i][j] += af[i] * bf[j];
        }
    }
}

// Column j (0 to TN - 1) of thread tc's results within the block tile. Step 1 gives a thread TN
// neighbouring columns; from step 2 on, TN / V pieces of V columns, BN / (TN / V) apart, so that the
// 16-byte reads of a warp's threads from one row of the B tile are neighbours (no bank conflicts).
template <typename T, bool INTERLEAVED>
__device__ __forceinline__ int column_of(int tc, int j) {
    if (!INTERLEAVED) return tc * TN + j;
    constexpr int V = Wide<T>::N;
    return (j / V) * (BN / (TN / V)) + tc * V + j % V;
}

// Writes a thread's TM x TN results: rows r0 + i of C, columns col0 + column_of(tc, j).
template <typename T, bool INTERLEAVED>
__device__ __forceinline__ void store_tile(MatrixView<T> c, const T (&acc)[TM][TN], int r0, int col0, int tc) {
#pragma unroll
    for (int i = 0; i < TM; ++i) {
#pragma unroll
        for (int j = 0; j < TN; ++j) {
            const int col = col0 + column_of<T, INTERLEAVED>(tc, j);
            if (r0 + i < c.rows && col < c.cols) {
                c(r0 + i, col) = acc[i][j];
            }
        }
    }
}

// ---- Step 1: register blocking ---------------------------------------------------------------------

template <typename T>
__device__ void register_blocked(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ T as[BM][BK];
    __shared__ T bs[BK][BN];
    const int tr = threadIdx.x / (BN / TN);  // this thread's rows: tr * TM ...
    const int tc = threadIdx.x % (BN / TN);  // and columns: tc * TN ...
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;
    T acc[TM][TN] = {};
    for (int k0 = 0; k0 < a.cols; k0 += BK) {
        for (int e = threadIdx.x; e < BM * BK; e += THREADS) {
            const int r = e / BK, kk = e % BK;
            as[r][kk] = (row0 + r < a.rows && k0 + kk < a.cols) ? a(row0 + r, k0 + kk) : T(0);
        }
        for (int e = threadIdx.x; e < BK * BN; e += THREADS) {
            const int kk = e / BN, n = e % BN;
            bs[kk][n] = (k0 + kk < b.rows && col0 + n < b.cols) ? b(k0 + kk, col0 + n) : T(0);
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < BK; ++kk) {
            T af[TM], bf[TN];
#pragma unroll
            for (int i = 0; i < TM; ++i) af[i] = as[tr * TM + i][kk];
#pragma unroll
            for (int j = 0; j < TN; ++j) bf[j] = bs[kk][tc * TN + j];
            outer_product(acc, af, bf);
        }
        __syncthreads();
    }
    store_tile<T, false>(c, acc, row0 + tr * TM, col0, tc);
}

// ---- Step 2: wide loads, transposed and padded A tile ----------------------------------------------

// One 16-byte piece of A's rows (along k) or B's rows (along n), zero outside the matrix. `wide` says
// the row length is a multiple of the piece, so a piece lies wholly inside or wholly outside.
template <typename T>
__device__ __forceinline__ void load_piece(MatrixView<T> m, int r, int col, bool wide, T (&x)[Wide<T>::N]) {
    constexpr int V = Wide<T>::N;
    if (wide) {
        if (r < m.rows && col < m.cols) {
            const typename Wide<T>::type piece = *reinterpret_cast<const typename Wide<T>::type*>(&m(r, col));
            *reinterpret_cast<typename Wide<T>::type*>(x) = piece;
        } else {
#pragma unroll
            for (int q = 0; q < V; ++q) x[q] = T(0);
        }
    } else {
#pragma unroll
        for (int q = 0; q < V; ++q) x[q] = (r < m.rows && col + q < m.cols) ? m(r, col + q) : T(0);
    }
}

// A's BM x BK tile, stored k-major: as[k][m].
template <typename T>
__device__ __forceinline__ void load_a_transposed(MatrixView<T> a, T (*as)[BM + PAD<T>], int row0, int k0, bool wide) {
    constexpr int V = Wide<T>::N;
    for (int v = threadIdx.x; v < BM * BK / V; v += THREADS) {
        const int r = v / (BK / V), kk = (v % (BK / V)) * V;
        T x[V];
        load_piece(a, row0 + r, k0 + kk, wide, x);
#pragma unroll
        for (int q = 0; q < V; ++q) as[kk + q][r] = x[q];
    }
}

// B's BK x BN tile, as it lies: bs[k][n].
template <typename T>
__device__ __forceinline__ void load_b(MatrixView<T> b, T (*bs)[BN], int k0, int col0, bool wide) {
    constexpr int V = Wide<T>::N;
    for (int v = threadIdx.x; v < BK * BN / V; v += THREADS) {
        const int kk = v / (BN / V), n = (v % (BN / V)) * V;
        T x[V];
        load_piece(b, k0 + kk, col0 + n, wide, x);
        *reinterpret_cast<typename Wide<T>::type*>(&bs[kk][n]) = *reinterpret_cast<typename Wide<T>::type*>(x);
    }
}

// The BK k steps on one pair of tiles: a thread's TM numbers of A are contiguous in shared memory and
// its TN of B are TN / V pieces (column_of), all read with 16-byte loads.
template <typename T>
__device__ __forceinline__ void multiply_tiles(T (&acc)[TM][TN], const T (*as)[BM + PAD<T>], const T (*bs)[BN], int tr, int tc) {
    using W = typename Wide<T>::type;
    constexpr int V = Wide<T>::N;
#pragma unroll
    for (int kk = 0; kk < BK; ++kk) {
        T af[TM], bf[TN];
#pragma unroll
        for (int i = 0; i < TM; i += V) *reinterpret_cast<W*>(&af[i]) = *reinterpret_cast<const W*>(&as[kk][tr * TM + i]);
#pragma unroll
        for (int j = 0; j < TN; j += V) *reinterpret_cast<W*>(&bf[j]) = *reinterpret_cast<const W*>(&bs[kk][column_of<T, true>(tc, j)]);
        outer_product(acc, af, bf);
    }
}

template <typename T>
__device__ void wide_loads(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ alignas(16) T as[BK][BM + PAD<T>];
    __shared__ alignas(16) T bs[BK][BN];
    const int tr = threadIdx.x / (BN / TN);
    const int tc = threadIdx.x % (BN / TN);
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;
    const bool wide_a = a.cols % Wide<T>::N == 0;
    const bool wide_b = b.cols % Wide<T>::N == 0;
    T acc[TM][TN] = {};
    for (int k0 = 0; k0 < a.cols; k0 += BK) {
        load_a_transposed(a, as, row0, k0, wide_a);
        load_b(b, bs, k0, col0, wide_b);
        __syncthreads();
        multiply_tiles(acc, as, bs, tr, tc);
        __syncthreads();
    }
    store_tile<T, true>(c, acc, row0 + tr * TM, col0, tc);
}

// ---- Step 3: asynchronous copies into two stages -------------------------------------------------

// cp.async of BYTES (4, 8 or 16) from global to shared memory; outside the matrix it reads nothing and
// writes zeros (source size 0). Completes at cp_async_wait.
template <int BYTES>
__device__ __forceinline__ void cp_async(void* shared, const void* global, bool inside) {
    const unsigned destination = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(destination), "l"(global), "n"(BYTES),
                 "r"(inside ? BYTES : 0));
}

__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }

// Waits until at most `N` of this thread's committed groups are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// One element of m at (r, col) into `shared`, zero outside (the address read is then m's first).
template <typename T>
__device__ __forceinline__ void copy_element(T* shared, MatrixView<T> m, int r, int col) {
    const bool inside = r < m.rows && col < m.cols;
    cp_async<sizeof(T)>(shared, inside ? &m(r, col) : m.data, inside);
}

// A 16-byte piece of m's row r from column col into `shared`: one cp.async where `wide` (the row length
// is a multiple of the piece, so the piece lies wholly inside or outside), else element by element.
template <typename T>
__device__ __forceinline__ void copy_piece(T* shared, MatrixView<T> m, int r, int col, bool wide) {
    if (wide) {
        const bool inside = r < m.rows && col < m.cols;
        cp_async<16>(shared, inside ? &m(r, col) : m.data, inside);
    } else {
#pragma unroll
        for (int q = 0; q < Wide<T>::N; ++q) copy_element(shared + q, m, r, col + q);
    }
}

// The next pair of tiles, started: A element by element into its transposed place, B in 16-byte
// pieces where its rows allow.
template <typename T>
__device__ __forceinline__ void start_tiles(MatrixView<T> a, MatrixView<T> b, T (*as)[BM + PAD<T>], T (*bs)[BN], int row0,
                                            int col0, int k0, bool wide_b) {
    constexpr int V = Wide<T>::N;
    for (int e = threadIdx.x; e < BM * BK; e += THREADS) {
        const int r = e / BK, kk = e % BK;  // neighbouring threads read neighbouring k of one row
        copy_element(&as[kk][r], a, row0 + r, k0 + kk);
    }
    for (int v = threadIdx.x; v < BK * BN / V; v += THREADS) {
        const int kk = v / (BN / V), n = (v % (BN / V)) * V;
        copy_piece(&bs[kk][n], b, k0 + kk, col0 + n, wide_b);
    }
    cp_async_commit();
}

template <typename T>
__device__ void async_copies(MatrixView<T> a, MatrixView<T> b, MatrixView<T> c) {
    __shared__ alignas(16) T as[2][BK][BM + PAD<T>];
    __shared__ alignas(16) T bs[2][BK][BN];
    const int tr = threadIdx.x / (BN / TN);
    const int tc = threadIdx.x % (BN / TN);
    const int row0 = blockIdx.y * BM;
    const int col0 = blockIdx.x * BN;
    const bool wide_b = b.cols % Wide<T>::N == 0;
    const int tiles = (a.cols + BK - 1) / BK;
    T acc[TM][TN] = {};
    start_tiles(a, b, as[0], bs[0], row0, col0, 0, wide_b);
    for (int t = 0; t < tiles; ++t) {
        const int stage = t % 2;
        if (t + 1 < tiles) {
            start_tiles(a, b, as[1 - stage], bs[1 - stage], row0, col0, (t + 1) * BK, wide_b);
            cp_async_wait<1>();  // tile t is in; tile t + 1 may still be on its way
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();  // everyone's copies of tile t are visible
        multiply_tiles(acc, as[stage], bs[stage], tr, tc);
        __syncthreads();  // everyone is done with this stage before it is refilled
    }
    store_tile<T, true>(c, acc, row0 + tr * TM, col0, tc);
}

// ---- Step 4: FP64 tensor cores -------------------------------------------------------------------

// A block of WARPS_M x WARPS_N warps computes a tile of C, DK deep at a time; each warp MI x NI tiles
// of 8 x 8, each updated by one m8n8k4 instruction per 4 k. The two stages live in dynamic shared
// memory (more than the 48 KiB a block may declare statically).
constexpr int DK = 16;
constexpr int DPAD = 4;  // rows of 20 and (DN + 4) doubles: a half-warp's fragment loads hit 32 banks

// D = A * B + D for one 8 x 8 tile: A 8 x 4 (this thread holds a[lane / 4][lane % 4]), B 4 x 8 (this
// thread holds b[lane % 4][lane / 4]), D 8 x 8 (this thread holds d[lane / 4][2 * (lane % 4) + 0, 1]).
__device__ __forceinline__ void dmma_8x8x4(double (&d)[2], double a, double b) {
    asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0, %1}, {%2}, {%3}, {%0, %1};\n"
                 : "+d"(d[0]), "+d"(d[1])
                 : "d"(a), "d"(b));
}

// The same for a 16 x 8 tile, the f64 shape Hopper added (sm_90): A 16 x 4 (this thread holds
// a[lane / 4][lane % 4] and a[lane / 4 + 8][lane % 4]), B 4 x 8 as above, D 16 x 8 (this thread holds
// d[lane / 4][2 * (lane % 4) + 0, 1] and the same 8 rows further down).
__device__ __forceinline__ void dmma_16x8x4(double (&d)[4], const double (&a)[2], double b) {
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(b));
}

// And with 8 k (sm_90, SASS DMMA.16x8x8), step 7's: this thread holds A's (lane / 4, lane % 4),
// (lane / 4 + 8, lane % 4) and the same 4 k on, B's (lane % 4, lane / 4) and (lane % 4 + 4, lane / 4),
// and D as for m16n8k4.
__device__ __forceinline__ void dmma_16x8x8(double (&d)[4], const double (&a)[4], const double (&b)[2]) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}

template <int WARPS_M, int WARPS_N, int MI, int NI>
struct DmmaShape {
    static constexpr int THREADS = 32 * WARPS_M * WARPS_N;
    static constexpr int DM = WARPS_M * MI * 8;  // rows of the block tile
    static constexpr int DN = WARPS_N * NI * 8;  // columns of the block tile
    static constexpr int A_STAGE = DM * (DK + DPAD);
    static constexpr int B_STAGE = DK * (DN + DPAD);
    static constexpr int SHARED_BYTES = 2 * (A_STAGE + B_STAGE) * sizeof(double);
};

// The next pair of tiles, started with cp.async (copy_piece).
template <class S>
__device__ __forceinline__ void start_dmma_tiles(MatrixView<double> a, MatrixView<double> b, double* as, double* bs,
                                                 int row0, int col0, int k0, bool wide_a, bool wide_b) {
    for (int v = threadIdx.x; v < S::DM * DK / 2; v += S::THREADS) {
        const int r = v / (DK / 2), kk = (v % (DK / 2)) * 2;
        copy_piece(&as[r * (DK + DPAD) + kk], a, row0 + r, k0 + kk, wide_a);
    }
    for (int v = threadIdx.x; v < DK * S::DN / 2; v += S::THREADS) {
        const int kk = v / (S::DN / 2), n = (v % (S::DN / 2)) * 2;
        copy_piece(&bs[kk * (S::DN + DPAD) + n], b, k0 + kk, col0 + n, wide_b);
    }
    cp_async_commit();
}

// MI x NI tiles per warp, of 8 x 8 (m8n8k4) or, with TALL, of 16 x 8 (m16n8k4).
template <int WARPS_M, int WARPS_N, int MI, int NI, bool TALL>
__device__ void dmma(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) {
    constexpr int TILE_M = TALL ? 16 : 8;
    constexpr int HALVES = TALL ? 2 : 1;  // 8-row halves of a tile
    using S = DmmaShape<WARPS_M, WARPS_N, MI * HALVES, NI>;
    extern __shared__ __align__(16) double shared[];  // A stage 0, A stage 1, B stage 0, B stage 1
    auto as = [&](int stage) { return shared + stage * S::A_STAGE; };
    auto bs = [&](int stage) { return shared + 2 * S::A_STAGE + stage * S::B_STAGE; };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = (warp / WARPS_N) * MI * TILE_M, wn = (warp % WARPS_N) * NI * 8;  // the warp's part of the tile
    const int row0 = blockIdx.y * S::DM, col0 = blockIdx.x * S::DN;
    const bool wide_a = a.cols % 2 == 0, wide_b = b.cols % 2 == 0;
    const int tiles = (a.cols + DK - 1) / DK;
    double acc[MI][NI][2 * HALVES] = {};
    start_dmma_tiles<S>(a, b, as(0), bs(0), row0, col0, 0, wide_a, wide_b);
    for (int t = 0; t < tiles; ++t) {
        const int stage = t % 2;
        if (t + 1 < tiles) {
            start_dmma_tiles<S>(a, b, as(1 - stage), bs(1 - stage), row0, col0, (t + 1) * DK, wide_a, wide_b);
            cp_async_wait<1>();
        } else {
            cp_async_wait<0>();
        }
        __syncthreads();
#pragma unroll
        for (int k4 = 0; k4 < DK; k4 += 4) {
            double af[MI][HALVES], bf[NI];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
#pragma unroll
                for (int h = 0; h < HALVES; ++h) af[i][h] = as(stage)[(wm + i * TILE_M + h * 8 + lane / 4) * (DK + DPAD) + k4 + lane % 4];
            }
#pragma unroll
            for (int j = 0; j < NI; ++j) bf[j] = bs(stage)[(k4 + lane % 4) * (S::DN + DPAD) + wn + j * 8 + lane / 4];
#pragma unroll
            for (int i = 0; i < MI; ++i) {
#pragma unroll
                for (int j = 0; j < NI; ++j) {
                    if constexpr (TALL) {
                        dmma_16x8x4(acc[i][j], af[i], bf[j]);
                    } else {
                        dmma_8x8x4(*reinterpret_cast<double(*)[2]>(acc[i][j]), af[i][0], bf[j]);
                    }
                }
            }
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < MI; ++i) {
#pragma unroll
        for (int j = 0; j < NI; ++j) {
#pragma unroll
            for (int h = 0; h < HALVES; ++h) {
                const int r = row0 + wm + i * TILE_M + h * 8 + lane / 4;
                const int col = col0 + wn + j * 8 + 2 * (lane % 4);
#pragma unroll
                for (int q = 0; q < 2; ++q) {
                    if (r < c.rows && col + q < c.cols) c(r, col + q) = acc[i][j][2 * h + q];
                }
            }
        }
    }
}

// ---- Step 6: warp tiling, three cp.async stages (f32) ---------------------------------------------

// Step 3 gets about two thirds of cuBLAS's SGEMM. Per tile of 8 k a thread does 512 FMAs, and around
// them 32 shared loads, 5 copies whose addresses and bounds it works out afresh, two barriers and a
// wait; between its loads and the FMAs that need them it has nothing else to do. cuBLAS's SGEMM on
// Hopper (its kernel's name begins sm80_xmma_gemm_f32f32_..._tilesize256x128x8) does the same
// arithmetic in bigger tiles. Step 6 is built as CUTLASS's SIMT GEMM is:
//
// - Warp tiling and a bigger tile. A block of 256 threads computes 128 x 256 elements of C, 16 k deep
//   at a time; its 8 warps (2 x 4) own 64 x 64 of them each, and a warp's 32 lanes, 8 x 4 of them,
//   8 x 16 each: lane (tr, tc) = (lane / 4, lane % 4) has rows 4 tr ... 4 tr + 3 of its warp's piece
//   and the same 32 rows on, and columns 4 tc ... 4 tc + 3 and every 16 columns on (4 pieces). Per k a
//   thread reads 8 numbers of A and 16 of B, six 16-byte loads, for 128 FMAs: 21 FMAs a load instead
//   of 16. A warp's loads have no bank conflicts: 8 pieces of A side by side (128 bytes) or 4 of B,
//   lanes that need the same piece getting it in the same pass (a broadcast).
// - The next k step's numbers loaded during this one. The registers hold two sets of a thread's
//   8 + 16 numbers: while the FMAs of step k run on one, the loads of step k + 1 fill the other, also
//   across tiles (the next tile's first step is loaded before this tile's last is computed). 128
//   accumulators and 48 numbers take about 230 registers, so one block, 8 warps, fits a
//   multiprocessor, as for cuBLAS.
// - Three stages, one barrier per tile. While the block computes on tile t, tiles t + 1 and t + 2 are
//   on their way. The copies started during tile t refill the stage of tile t - 1: the one barrier per
//   tile, which makes tile t visible before its first loads, also says that every thread has read the
//   last of tile t - 1.
// - Copies with nothing to check. Where a tile lies wholly inside A and B (every tile at 4096 x 4096
//   x 4096; the block decides once per tile, all its threads alike), the copies test no bounds and
//   their addresses are fixed offsets from two pointers; only edge tiles take step 3's checked copies.
//   B comes in 16-byte pieces, with cp.async.cg (past L1: a block reads each piece once). A is stored
//   transposed, k-major as in steps 2 and 3, so that a thread's 8 numbers of A are two 16-byte loads;
//   its copies are of 4 bytes, as in CUTLASS's SIMT kernels for a row-major A, a warp's 32 of them 8 k
//   of 4 rows (4 pieces of 32 bytes) into 32 different banks. Kept row-major with 16-byte copies, A
//   would be read 4 k of a row at a time, 32 registers for a thread's 8 rows, which the two sets of
//   numbers cannot spare.
// - Other shapes are WarpTiling's arguments: lanes of 4 x 8 (16 x 8 a thread), 256 x 128 tiles,
//   BK = 8 or 32, two or four stages.
// - The stages take 3 x (16 x (128 + 4) + 16 x 256) floats = 74496 bytes: dynamic shared memory, as in
//   step 4 (at most 99 KiB a block on the smallest GPUs that run it, sm_86, sm_89 and sm_120).
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int LANES_M_ = 8>
struct WarpTiling {
    static constexpr int BM = BM_, BN = BN_, BK = BK_;  // the block tile, BK deep
    static constexpr int WM = WM_, WN = WN_;            // a warp's piece of it
    static constexpr int STAGES = STAGES_;
    static constexpr int WARPS_N = BN / WN;
    static constexpr int THREADS = 32 * (BM / WM) * WARPS_N;
    static constexpr int LANES_M = LANES_M_, LANES_N = 32 / LANES_M;  // the lanes of a warp
    static constexpr int TM = WM / LANES_M;  // a thread's rows: pieces of 4, 4 * LANES_M apart
    static constexpr int TN = WN / LANES_N;  // its columns: pieces of 4, 4 * LANES_N apart
    static constexpr int A_STRIDE = BM + 4;  // the A tile k-major: as[k][m], rows padded as in step 2
    static constexpr int A_STAGE = BK * A_STRIDE;  // floats
    static constexpr int B_STAGE = BK * BN;
    static constexpr int A_ROWS = THREADS / 8;         // rows of A one pass of 4-byte copies covers, 8 k each
    static constexpr int B_ROWS = THREADS / (BN / 4);  // rows of B one pass of 16-byte copies covers
    static constexpr int SHARED_BYTES = STAGES * (A_STAGE + B_STAGE) * sizeof(float);
    static_assert(BM % WM == 0 && BN % WN == 0 && TM % 4 == 0 && TN % 4 == 0, "threads own whole pieces of 4 x 4");
    static_assert(BK % 8 == 0 && BM % A_ROWS == 0 && BK % B_ROWS == 0 && THREADS % (BN / 4) == 0, "every thread copies as much");
    static_assert(STAGES >= 2, "a stage to compute on and one to fill");
};

// cp.async of 16 bytes with .cg: through L2 only, not kept in L1 (step 3's .ca keeps it).
__device__ __forceinline__ void cp_async_cg(void* shared, const void* global) {
    const unsigned destination = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(destination), "l"(global));
}

// cp.async of 4 bytes that lie inside the matrix (no source size: nothing to fill with zeros).
__device__ __forceinline__ void cp_async_4(void* shared, const void* global) {
    const unsigned destination = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4;\n" ::"r"(destination), "l"(global));
}

// The copies of the tiles at k0 into one stage: A transposed (as[k][m]), B as it lies (bs[k][n]).
// A thread copies A's row r (r = tid / 8, then every A_ROWS rows) at k = tid % 8 (then every 8 k),
// and B's pieces n (n = 4 (tid % (BN / 4))) of rows tid / (BN / 4) (then every B_ROWS rows).
template <class S>
__device__ __forceinline__ void start_warp_tiles(MatrixView<float> a, MatrixView<float> b, float* as, float* bs, int row0, int col0,
                                                 int k0, bool inside) {
    const int ar = threadIdx.x / 8, ak = threadIdx.x % 8;
    const int br = threadIdx.x / (S::BN / 4), bn = threadIdx.x % (S::BN / 4) * 4;
    if (inside) {  // the whole tile lies inside A and B, and B's rows are whole pieces
        const float* a_from = &a(row0 + ar, k0 + ak);
        const float* b_from = &b(k0 + br, col0 + bn);
#pragma unroll
        for (int i = 0; i < S::BM / S::A_ROWS; ++i) {
#pragma unroll
            for (int h = 0; h < S::BK / 8; ++h) {
                cp_async_4(&as[(ak + 8 * h) * S::A_STRIDE + ar + i * S::A_ROWS], a_from + (size_t)i * S::A_ROWS * a.cols + 8 * h);
            }
        }
#pragma unroll
        for (int i = 0; i < S::BK / S::B_ROWS; ++i) cp_async_cg(&bs[(br + i * S::B_ROWS) * S::BN + bn], b_from + (size_t)i * S::B_ROWS * b.cols);
    } else {  // at an edge of A, B or C, or B's rows no multiple of 4 floats: step 3's checked copies
        const bool wide_b = b.cols % 4 == 0;
#pragma unroll
        for (int i = 0; i < S::BM / S::A_ROWS; ++i) {
#pragma unroll
            for (int h = 0; h < S::BK / 8; ++h) {
                copy_element(&as[(ak + 8 * h) * S::A_STRIDE + ar + i * S::A_ROWS], a, row0 + ar + i * S::A_ROWS, k0 + ak + 8 * h);
            }
        }
#pragma unroll
        for (int i = 0; i < S::BK / S::B_ROWS; ++i) copy_piece(&bs[(br + i * S::B_ROWS) * S::BN + bn], b, k0 + br + i * S::B_ROWS, col0 + bn, wide_b);
    }
}

// A thread's numbers for one k step: TM of A (its rows) and TN of B (its columns), each in pieces of 4.
template <class S>
struct Fragment {
    float a[S::TM];
    float b[S::TN];
};

// Step k's fragment from one stage; `as` and `bs` point at the thread's first row and column in it.
template <class S>
__device__ __forceinline__ void load_fragment(Fragment<S>& f, const float* as, const float* bs, int k) {
#pragma unroll
    for (int i = 0; i < S::TM; i += 4) *reinterpret_cast<float4*>(&f.a[i]) = *reinterpret_cast<const float4*>(&as[k * S::A_STRIDE + i * S::LANES_M]);
#pragma unroll
    for (int j = 0; j < S::TN; j += 4) *reinterpret_cast<float4*>(&f.b[j]) = *reinterpret_cast<const float4*>(&bs[k * S::BN + j * S::LANES_N]);
}

// C (or one slice of k's partial product, step 9) from A's columns and B's rows of k tiles
// first_tile to end_tile - 1.
template <class S>
__device__ void warp_tiled(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c, int first_tile, int end_tile) {
    extern __shared__ __align__(16) float warp_shared[];  // A stages 0, 1, ..., then B stages 0, 1, ...
    auto as = [&](int stage) { return warp_shared + stage * S::A_STAGE; };
    auto bs = [&](int stage) { return warp_shared + S::STAGES * S::A_STAGE + stage * S::B_STAGE; };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int wm = (warp / S::WARPS_N) * S::WM, wn = (warp % S::WARPS_N) * S::WN;  // the warp's piece of the tile
    const int m0 = wm + 4 * (lane / S::LANES_N), n0 = wn + 4 * (lane % S::LANES_N);  // the thread's first row and column
    const int row0 = blockIdx.y * S::BM, col0 = blockIdx.x * S::BN;
    const bool block_inside = row0 + S::BM <= a.rows && col0 + S::BN <= b.cols && b.cols % 4 == 0;  // but for k
    const int tiles = end_tile - first_tile;
    auto start = [&](int stage, int t) {
        const int k0 = (first_tile + t) * S::BK;
        start_warp_tiles<S>(a, b, as(stage), bs(stage), row0, col0, k0, block_inside && k0 + S::BK <= a.cols);
    };
    float acc[S::TM][S::TN] = {};
    // Tiles 0 to STAGES - 2 on their way: one commit group per tile, empty ones past the last tile, so
    // that "all but the newest STAGES - 2 groups" always includes the tile needed next.
    for (int s = 0; s < S::STAGES - 1; ++s) {
        if (s < tiles) start(s, s);
        cp_async_commit();
    }
    cp_async_wait<S::STAGES - 2>();
    __syncthreads();
    int read = 0, write = S::STAGES - 1;  // the stage of tile t, and the one tile t + STAGES - 1 goes to
    Fragment<S> f[2];
    load_fragment<S>(f[0], as(0) + m0, bs(0) + n0, 0);
    for (int t = 0; t < tiles; ++t) {
        if (t + S::STAGES - 1 < tiles) start(write, t + S::STAGES - 1);  // into tile t - 1's stage
        cp_async_commit();
#pragma unroll
        for (int k = 0; k < S::BK; ++k) {
            if (k == S::BK - 1) {
                // Tile t + 1 in and visible to all; everyone has loaded the last step of tile t.
                cp_async_wait<S::STAGES - 2>();
                __syncthreads();
                read = read + 1 == S::STAGES ? 0 : read + 1;
                write = write + 1 == S::STAGES ? 0 : write + 1;
            }
            // The next step's fragment (past the last tile: unused numbers from a stage never filled).
            load_fragment<S>(f[(k + 1) % 2], as(read) + m0, bs(read) + n0, (k + 1) % S::BK);
            const Fragment<S>& now = f[k % 2];
#pragma unroll
            for (int i = 0; i < S::TM; ++i) {
#pragma unroll
                for (int j = 0; j < S::TN; ++j) acc[i][j] += now.a[i] * now.b[j];
            }
        }
    }
    cp_async_wait<0>();  // only empty groups are left, but leave none behind
    // Rows row0 + m0 + 4 LANES_M p + q, columns col0 + n0 + 4 LANES_N s + u: 16-byte stores where C's
    // rows allow.
    const bool wide_c = c.cols % 4 == 0;
#pragma unroll
    for (int i = 0; i < S::TM; ++i) {
        const int r = row0 + m0 + (i / 4) * 4 * S::LANES_M + i % 4;
        if (r >= c.rows) continue;
#pragma unroll
        for (int j = 0; j < S::TN; j += 4) {
            const int col = col0 + n0 + j * S::LANES_N;
            if (wide_c && col < c.cols) {
                *reinterpret_cast<float4*>(&c(r, col)) = make_float4(acc[i][j], acc[i][j + 1], acc[i][j + 2], acc[i][j + 3]);
            } else {
#pragma unroll
                for (int q = 0; q < 4; ++q) {
                    if (col + q < c.cols) c(r, col + q) = acc[i][j + q];
                }
            }
        }
    }
}

using WarpTiled = WarpTiling<128, 256, 16, 64, 64, 3>;

// ---- Step 7: the FP64 tensor cores in warp tiles, on C's transpose -----------------------------------

// Step 5 reaches about two thirds of cuBLAS's DGEMM. Step 7 first built step 5's m16n8k4 into step 6's
// pipeline (128 x 128 tiles of 8 k, 8 warps, one block per multiprocessor: step 8's MmaTiling below)
// and stayed at 88% of cuBLAS at 4096 and 86% at 8192 (results/h100/mmm/ladder.log,
// results/h100/issue41/ladder-sweep.log). ncu said why
// (results/h100/mmm/ncu-ladder.log): its FP64 tensor pipe was busy 82.62% of the time, cuBLAS's 97.91%;
// it issued 719,749,120 instructions to cuBLAS's 432,398,336 (twice the mma instructions, and an 8-byte
// shared load per fragment number), and its warps waited at barriers 0.78 cycles per instruction
// (cuBLAS: 0.16). m16n8k8 in that code needed twice the fragment registers and spilled
// (results/h100/mmm/tile-trials-1.log). Step 7 now has cuBLAS's shape (its kernel's name:
// ..._tilesize128x64x16_stage3_warpsize2x2x1_tensor16x8x8) and is built so that the bigger instruction
// costs no register it does not need:
//
// - m16n8k8 on C's transpose. Lane (g, t) = (lane / 4, lane % 4) gives the instruction its A's (g, t),
//   (g + 8, t), (g, t + 4), (g + 8, t + 4) and its B's (t, g), (t + 4, g), in that order. The sum over k
//   does not care which k is which: call the instruction's k t and t + 4 the tile's k 2t and 2t + 1.
//   Then, with A as the instruction's A, a 16-byte load of A's (g, 2t), (g, 2t + 1) brings the
//   instruction's first and third number (which must sit in neighbouring registers with the second
//   between them: moves), and B's (2t, g), (2t + 1, g) lie in different rows (two 8-byte loads).
//   Computing C^T = B^T A^T instead, B gives the instruction's A (16 columns of B) and A its B (8 rows
//   of A); calling the instruction's rows g and g + 8 B's columns 2g and 2g + 1, a lane's part is B's
//   (2t, 2g), (2t, 2g + 1), (2t + 1, 2g), (2t + 1, 2g + 1) and A's (g, 2t), (g, 2t + 1): three 16-byte
//   loads, each landing in the registers the instruction reads, in its order. The result is C^T's
//   tile: lane (g, t) holds C's rows 2t and 2t + 1, columns 2g and 2g + 1, stored as two pairs.
// - A 128 x 64 tile, 4 warps (2 x 2) of 64 x 32, 16 k deep, three cp.async stages. Per 8 k a lane loads
//   8 pieces of A and 4 of B (16 bytes each) for 16 instructions of 8 k, where the 128 x 128 tile of
//   m16n8k4 loaded 24 numbers of 8 bytes for 32 instructions of 4 k.
// - Two blocks per multiprocessor (__launch_bounds__(128, 2)): a block waiting at its barrier stops 4
//   warps, not 8, while the other block's mma run. That leaves 255 registers a thread, and 64
//   accumulators and two sets of 24 fragment numbers (this step's, and the next step's being loaded)
//   take 224 of them: the copies must cost few. Their addresses are two running pointers, moved on tile
//   by tile, and the bounds-checked copies of edge tiles stay in rolled loops (no spills).
// - No bank conflicts. A's rows are unpadded (16 doubles, 128 bytes), and odd rows have their 16-byte
//   chunks swapped by halves (chunk c at c ^ 4): the 8 lanes of a quarter-warp (rows g = 0 and 1,
//   chunks t = 0 to 3) read all 32 banks. B's rows are BN + 2 doubles: its rows 2t + r, t = 0 to 3,
//   start 32 bytes apart in the banks, and columns 2g, g = 0 and 1, fill the 16 bytes between.
//
// Trials (results/h100/issue41/step7-trials.log, the program beside it) chose this among 128 x 128
// tiles with one block per multiprocessor, 16 or 32 k, and other orders of the fragment loads. On an
// H100 it reaches 94% of cuBLAS at 4096 and 90% at 8192 (results/h100/issue41/step7-ladder-f64-*.log);
// ncu (step7-ncu-4096.log): tensor pipe busy 93.06% (cuBLAS 97.89%), 405,856,256 instructions,
// barrier stalls 0.03 cycles per instruction.
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int BLOCKS_>
struct DmmaTiling {
    static constexpr int BM = BM_, BN = BN_, BK = BK_;  // the block tile, BK deep
    static constexpr int WM = WM_, WN = WN_;            // a warp's piece of it
    static constexpr int STAGES = STAGES_;
    static constexpr int BLOCKS = BLOCKS_;  // blocks per multiprocessor that __launch_bounds__ asks for
    static constexpr int WARPS_N = BN / WN;
    static constexpr int THREADS = 32 * (BM / WM) * WARPS_N;
    static constexpr int MI = WM / 16;    // a warp's pieces of 16 rows of A: 2 instructions' B each
    static constexpr int NP = WN / 16;    // its pieces of 16 columns of B: 1 instruction's A each
    static constexpr int STEPS = BK / 8;  // instruction steps per tile
    static constexpr int A_STRIDE = BK;      // A row-major, unpadded, chunks swizzled: as[m][k]
    static constexpr int B_STRIDE = BN + 2;  // B as it lies, rows 16 bytes longer: bs[k][n]
    static constexpr int A_STAGE = BM * A_STRIDE, B_STAGE = BK * B_STRIDE;  // doubles
    static constexpr int A_ROWS = THREADS / (BK / 2);  // rows of A one pass of 16-byte copies covers
    static constexpr int B_ROWS = THREADS / (BN / 2);  // rows of B likewise
    static constexpr int SHARED_BYTES = STAGES * (A_STAGE + B_STAGE) * sizeof(double);
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "warps own whole 16 x 16 pieces");
    // 16 k: rows of 8 chunks, odd rows' halves swapped (the swizzle), and two instruction steps per tile,
    // so that the two fragment sets alternate the same way in every tile.
    static_assert(BK == 16, "the swizzle and the fragment sets' order are written for 16 k");
    static_assert(THREADS % (BK / 2) == 0 && BM % A_ROWS == 0 && THREADS % (BN / 2) == 0 && BK % B_ROWS == 0,
                  "every thread copies as much");
    static_assert(B_STRIDE % 8 == 2, "B's rows 2t + r start 32 bytes apart in the banks");
    static_assert(STAGES >= 2, "a stage to compute on and one to fill");
};

// A lane's fragments for one step of 8 k, each as the instruction takes it, in pieces of 16 bytes.
template <class S>
struct DmmaFragment {
    alignas(16) double b[S::NP][4];     // the instruction's A: B's (2t, 2g), (2t, 2g + 1), (2t + 1, 2g), (2t + 1, 2g + 1)
    alignas(16) double a[S::MI][2][2];  // its B: A's (g, 2t), (g, 2t + 1), of rows 16i and 16i + 8 on
};

// Step s's fragments, one 16-byte load each; `as` points at the lane's A in the stage (row g of the
// warp's first, its chunk t of step s after the swizzle), `bs` at its B (row 2t, column 2g of the
// warp's first).
template <class S>
__device__ __forceinline__ void load_dmma_fragment(DmmaFragment<S>& f, const double* as, const double* bs, int s) {
#pragma unroll
    for (int i = 0; i < S::MI; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) *reinterpret_cast<double2*>(f.a[i][h]) = *reinterpret_cast<const double2*>(&as[(16 * i + 8 * h) * S::A_STRIDE]);
    }
#pragma unroll
    for (int p = 0; p < S::NP; ++p) {
#pragma unroll
        for (int r = 0; r < 2; ++r) {
            *reinterpret_cast<double2*>(&f.b[p][2 * r]) = *reinterpret_cast<const double2*>(&bs[(8 * s + r) * S::B_STRIDE + 16 * p]);
        }
    }
}

// Two neighbouring numbers of C with one store (C's rows of even length keep every pair aligned).
__device__ __forceinline__ void store_pair(double* to, double x, double y) { *reinterpret_cast<double2*>(to) = make_double2(x, y); }
__device__ __forceinline__ void store_pair(float* to, float x, float y) { *reinterpret_cast<float2*>(to) = make_float2(x, y); }

// C (or one slice of k's partial product, step 10) from k tiles first_tile to end_tile - 1.
template <class S>
__device__ void dmma_tiled(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c, int first_tile, int end_tile) {
    extern __shared__ __align__(16) double dmma_shared[];  // A stages 0, 1, ..., then B stages
    auto as = [&](int stage) { return dmma_shared + stage * S::A_STAGE; };
    auto bs = [&](int stage) { return dmma_shared + S::STAGES * S::A_STAGE + stage * S::B_STAGE; };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int wm = warp / S::WARPS_N * S::WM, wn = warp % S::WARPS_N * S::WN;  // the warp's piece of the tile
    const int row0 = blockIdx.y * S::BM, col0 = blockIdx.x * S::BN;
    const bool block_inside = row0 + S::BM <= a.rows && col0 + S::BN <= b.cols && a.cols % 2 == 0 && b.cols % 2 == 0;  // but for k
    const int tiles = end_tile - first_tile;
    // The copies: thread p copies A's row p / (BK / 2) (then every A_ROWS rows), chunk p % (BK / 2), to
    // its swizzled place, and B's row p / (BN / 2) (then every B_ROWS rows), columns 2 (p % (BN / 2)) and
    // on. `start` takes the tiles in order, moving the two source pointers on by a tile each time.
    const int ar = threadIdx.x / (S::BK / 2), achunk = threadIdx.x % (S::BK / 2);
    const int br = threadIdx.x / (S::BN / 2), bn = threadIdx.x % (S::BN / 2) * 2;
    const int a_to = ar * S::A_STRIDE + 2 * (achunk ^ (ar & 1) * 4), b_to = br * S::B_STRIDE + bn;
    int k0 = first_tile * S::BK;  // the next tile's first k
    const double* a_from = a.data + (size_t)(row0 + ar) * a.cols + k0 + 2 * achunk;
    const double* b_from = b.data + (size_t)(k0 + br) * b.cols + col0 + bn;
    auto start = [&](int stage) {
        double* const a_stage = as(stage) + a_to;
        double* const b_stage = bs(stage) + b_to;
        if (block_inside && k0 + S::BK <= a.cols) {
            const double* from = a_from;
#pragma unroll
            for (int i = 0; i < S::BM / S::A_ROWS; ++i, from += (size_t)S::A_ROWS * a.cols) cp_async_cg(a_stage + i * S::A_ROWS * S::A_STRIDE, from);
            from = b_from;
#pragma unroll
            for (int i = 0; i < S::BK / S::B_ROWS; ++i, from += (size_t)S::B_ROWS * b.cols) cp_async_cg(b_stage + i * S::B_ROWS * S::B_STRIDE, from);
        } else {  // an edge tile: step 3's checked copies, in loops that hold no registers per copy
#pragma unroll 1
            for (int i = 0; i < S::BM / S::A_ROWS; ++i) {
                copy_piece(a_stage + i * S::A_ROWS * S::A_STRIDE, a, row0 + ar + i * S::A_ROWS, k0 + 2 * achunk, a.cols % 2 == 0);
            }
#pragma unroll 1
            for (int i = 0; i < S::BK / S::B_ROWS; ++i) {
                copy_piece(b_stage + i * S::B_ROWS * S::B_STRIDE, b, k0 + br + i * S::B_ROWS, col0 + bn, b.cols % 2 == 0);
            }
        }
        a_from += S::BK;
        b_from += (size_t)S::BK * b.cols;
        k0 += S::BK;
    };
    // The lane's A in a stage, for each step: row wm + g, chunk 4s + t, swizzled on odd rows (step 0
    // reads the second half of those, step 1 the first). Its B: row 2t, column wn + 2g.
    const int a_lane[2] = {(wm + g) * S::A_STRIDE + 2 * t + 8 * (g & 1), (wm + g) * S::A_STRIDE + 2 * t + 8 * (~g & 1)};
    const int b_lane = 2 * t * S::B_STRIDE + wn + 2 * g;
    double acc[S::MI][2][S::NP][4] = {};  // [i][h][p]: C's rows 16i + 8h on, columns 16p on (C^T's tile)
    // The pipeline of step 6: STAGES - 1 tiles on their way, one commit group per tile.
    for (int s = 0; s < S::STAGES - 1; ++s) {
        if (s < tiles) start(s);
        cp_async_commit();
    }
    cp_async_wait<S::STAGES - 2>();
    __syncthreads();
    int read = 0, write = S::STAGES - 1;
    DmmaFragment<S> f[2];
    load_dmma_fragment<S>(f[0], as(0) + a_lane[0], bs(0) + b_lane, 0);
    for (int tile = 0; tile < tiles; ++tile) {
        if (tile + S::STAGES - 1 < tiles) start(write);
        cp_async_commit();
#pragma unroll
        for (int step = 0; step < S::STEPS; ++step) {
            if (step == S::STEPS - 1) {
                cp_async_wait<S::STAGES - 2>();  // the next tile is in and, after the barrier, visible
                __syncthreads();
                read = read + 1 == S::STAGES ? 0 : read + 1;
                write = write + 1 == S::STAGES ? 0 : write + 1;
            }
            const int next = (step + 1) % S::STEPS;
            load_dmma_fragment<S>(f[(step + 1) % 2], as(read) + a_lane[next], bs(read) + b_lane, next);
            const DmmaFragment<S>& now = f[step % 2];
#pragma unroll
            for (int i = 0; i < S::MI; ++i) {
#pragma unroll
                for (int h = 0; h < 2; ++h) {
#pragma unroll
                    for (int p = 0; p < S::NP; ++p) dmma_16x8x8(acc[i][h][p], now.b[p], now.a[i][h]);
                }
            }
        }
    }
    cp_async_wait<0>();
    // Of each 8 x 16 piece, lane (g, t) holds C's rows 2t (d0, d2) and 2t + 1 (d1, d3), columns 2g and
    // 2g + 1: one 16-byte store per row where C's rows are of even length.
    const bool pairs = c.cols % 2 == 0;
#pragma unroll
    for (int i = 0; i < S::MI; ++i) {
#pragma unroll
        for (int h = 0; h < 2; ++h) {
#pragma unroll
            for (int p = 0; p < S::NP; ++p) {
#pragma unroll
                for (int q = 0; q < 2; ++q) {
                    const int r = row0 + wm + 16 * i + 8 * h + 2 * t + q, col = col0 + wn + 16 * p + 2 * g;
                    if (r >= c.rows) continue;
                    const double x = acc[i][h][p][q], y = acc[i][h][p][2 + q];
                    if (pairs && col < c.cols) {
                        store_pair(&c(r, col), x, y);
                    } else {
                        if (col < c.cols) c(r, col) = x;
                        if (col + 1 < c.cols) c(r, col + 1) = y;
                    }
                }
            }
        }
    }
}

using MmaTiledF64 = DmmaTiling<128, 64, 16, 64, 32, 3, 2>;

// ---- Step 8: the TF32 tensor cores in warp tiles ------------------------------------------------

// Step 8 is step 7's first build, step 6's pipeline around the tensor cores, on the TF32 ones: mma
// m16n8k8 takes A and B as tf32 (f32's 8 bits of exponent, 10 of mantissa: each number rounded, cvt.rna)
// and sums in f32. The tile is step 6's, 128 x 256, warps of 64 x 64, 16 k, one block per
// multiprocessor. A and B are stored as they lie (A row-major, 16-byte cp.async.cg for both), each row
// padded so that a warp's fragment loads fall into different banks: A's rows BK + 4 numbers long, B's
// BN + 32 bytes. cuBLAS's TF32 GEMM on Hopper runs faster still, on the warpgroup instructions (wgmma)
// of sm_90a: steps 12 to 17 (mmm_wgmma.cu).

// The lane's fragments of A (16 x 8), B (8 x 8) and its 4 numbers of the 16 x 8 tile of C. Lane (g, t)
// = (lane / 4, lane % 4) holds A's (g, t) and (g + 8, t), then the same 4 k on; B's (t, g), then
// (t + 4, g); C's (g, 2t), (g, 2t + 1) and the same 8 rows down.
template <typename T> struct TensorCore;
template <> struct TensorCore<float> {
    static constexpr int K = 8;  // mma m16n8k8, tf32 in, f32 out (sm_80)
    static __device__ __forceinline__ unsigned tf32(float x) {
        unsigned rounded;
        asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(rounded) : "f"(x));
        return rounded;
    }
    static __device__ __forceinline__ void mma(float (&d)[4], const float (&a)[4], const float (&b)[2]) {
        asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                     : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
                     : "r"(tf32(a[0])), "r"(tf32(a[1])), "r"(tf32(a[2])), "r"(tf32(a[3])), "r"(tf32(b[0])), "r"(tf32(b[1])));
    }
};

template <typename T_, int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_>
struct MmaTiling {
    using T = T_;
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_;
    static constexpr int KI = TensorCore<T>::K;      // k of one instruction
    static constexpr int V = Wide<T>::N;             // numbers in a 16-byte copy
    static constexpr int WARPS_N = BN / WN;
    static constexpr int THREADS = 32 * (BM / WM) * WARPS_N;
    static constexpr int MI = WM / 16, NI = WN / 8;  // a warp's tiles of 16 x 8
    static constexpr int A_STRIDE = BK + 4;          // A row-major: as[m][k]
    static constexpr int B_STRIDE = BN + 32 / sizeof(T);  // B as it lies: bs[k][n]
    static constexpr int A_STAGE = BM * A_STRIDE, B_STAGE = BK * B_STRIDE;  // numbers
    static constexpr int A_COPIES = BM * BK / V / THREADS, B_COPIES = BK * BN / V / THREADS;  // per thread
    static constexpr int SHARED_BYTES = STAGES * (A_STAGE + B_STAGE) * sizeof(T);
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 8 == 0, "warps own whole 16 x 8 tiles");
    static_assert(BM * BK % (V * THREADS) == 0 && BK * BN % (V * THREADS) == 0, "every thread copies as much");
    // The fragments alternate between two register sets, step by step and across tiles: with an odd
    // number of instruction steps per tile, every tile after the first would compute its first step
    // on the set loaded for another step.
    static_assert(BK % (2 * KI) == 0, "an even number of instruction steps per tile");
    static_assert(STAGES >= 2, "a stage to compute on and one to fill");
};

// The copies of the tiles at k0 into one stage, 16 bytes each: A's row p / (BK / V) (then every
// THREADS / (BK / V) rows), B's row p / (BN / V) likewise, where p is the thread's index.
template <class S>
__device__ __forceinline__ void start_mma_tiles(MatrixView<typename S::T> a, MatrixView<typename S::T> b, typename S::T* as,
                                                typename S::T* bs, int row0, int col0, int k0, bool inside) {
#pragma unroll
    for (int i = 0; i < S::A_COPIES; ++i) {
        const int p = threadIdx.x + i * S::THREADS, r = p / (S::BK / S::V), k = p % (S::BK / S::V) * S::V;
        if (inside) cp_async_cg(&as[r * S::A_STRIDE + k], &a(row0 + r, k0 + k));
        else copy_piece(&as[r * S::A_STRIDE + k], a, row0 + r, k0 + k, a.cols % S::V == 0);
    }
#pragma unroll
    for (int i = 0; i < S::B_COPIES; ++i) {
        const int p = threadIdx.x + i * S::THREADS, k = p / (S::BN / S::V), n = p % (S::BN / S::V) * S::V;
        if (inside) cp_async_cg(&bs[k * S::B_STRIDE + n], &b(k0 + k, col0 + n));
        else copy_piece(&bs[k * S::B_STRIDE + n], b, k0 + k, col0 + n, b.cols % S::V == 0);
    }
}

// A lane's fragments for one instruction step: MI tiles of A, NI of B.
template <class S>
struct MmaFragment {
    typename S::T a[S::MI][S::KI / 2];
    typename S::T b[S::NI][S::KI / 4];
};

// Step k's fragments; `as` and `bs` point at the lane's first number in the stage: A's (g, t) of the
// warp's first row, B's (t, g) of its first column.
template <class S>
__device__ __forceinline__ void load_mma_fragment(MmaFragment<S>& f, const typename S::T* as, const typename S::T* bs, int k) {
#pragma unroll
    for (int i = 0; i < S::MI; ++i) {
#pragma unroll
        for (int q = 0; q < S::KI / 2; ++q) f.a[i][q] = as[(i * 16 + q % 2 * 8) * S::A_STRIDE + k + q / 2 * 4];
    }
#pragma unroll
    for (int j = 0; j < S::NI; ++j) {
#pragma unroll
        for (int q = 0; q < S::KI / 4; ++q) f.b[j][q] = bs[(k + q * 4) * S::B_STRIDE + j * 8];
    }
}

// C (or one slice of k's partial product, step 11) from k tiles first_tile to end_tile - 1.
template <class S>
__device__ void mma_tiled(MatrixView<typename S::T> a, MatrixView<typename S::T> b, MatrixView<typename S::T> c, int first_tile,
                          int end_tile) {
    using T = typename S::T;
    extern __shared__ __align__(16) unsigned char mma_shared[];  // A stages 0, 1, ..., then B stages
    T* const shared = reinterpret_cast<T*>(mma_shared);
    auto as = [&](int stage) { return shared + stage * S::A_STAGE; };
    auto bs = [&](int stage) { return shared + S::STAGES * S::A_STAGE + stage * S::B_STAGE; };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int wm = warp / S::WARPS_N * S::WM, wn = warp % S::WARPS_N * S::WN;  // the warp's piece of the tile
    const int row0 = blockIdx.y * S::BM, col0 = blockIdx.x * S::BN;
    const bool block_inside = row0 + S::BM <= a.rows && col0 + S::BN <= b.cols && a.cols % S::V == 0 && b.cols % S::V == 0;  // but for k
    const int tiles = end_tile - first_tile;
    auto start = [&](int stage, int tile) {
        const int k0 = (first_tile + tile) * S::BK;
        start_mma_tiles<S>(a, b, as(stage), bs(stage), row0, col0, k0, block_inside && k0 + S::BK <= a.cols);
    };
    const int a_lane = (wm + g) * S::A_STRIDE + t, b_lane = t * S::B_STRIDE + wn + g;
    T acc[S::MI][S::NI][4] = {};
    // The pipeline of step 6: STAGES - 1 tiles on their way, one commit group per tile.
    for (int s = 0; s < S::STAGES - 1; ++s) {
        if (s < tiles) start(s, s);
        cp_async_commit();
    }
    cp_async_wait<S::STAGES - 2>();
    __syncthreads();
    int read = 0, write = S::STAGES - 1;
    constexpr int STEPS = S::BK / S::KI;
    MmaFragment<S> f[2];
    load_mma_fragment<S>(f[0], as(0) + a_lane, bs(0) + b_lane, 0);
    for (int tile = 0; tile < tiles; ++tile) {
        if (tile + S::STAGES - 1 < tiles) start(write, tile + S::STAGES - 1);
        cp_async_commit();
#pragma unroll
        for (int step = 0; step < STEPS; ++step) {
            if (step == STEPS - 1) {
                cp_async_wait<S::STAGES - 2>();  // the next tile is in and, after the barrier, visible
                __syncthreads();
                read = read + 1 == S::STAGES ? 0 : read + 1;
                write = write + 1 == S::STAGES ? 0 : write + 1;
            }
            load_mma_fragment<S>(f[(step + 1) % 2], as(read) + a_lane, bs(read) + b_lane, (step + 1) % STEPS * S::KI);
            const MmaFragment<S>& now = f[step % 2];
#pragma unroll
            for (int i = 0; i < S::MI; ++i) {
#pragma unroll
                for (int j = 0; j < S::NI; ++j) TensorCore<T>::mma(acc[i][j], now.a[i], now.b[j]);
            }
        }
    }
    cp_async_wait<0>();
    // Lane (g, t) holds C's rows g and g + 8 of each tile, columns 2t and 2t + 1: one 8- or 16-byte
    // store per pair where C's rows are of even length.
    const bool pairs = c.cols % 2 == 0;
#pragma unroll
    for (int i = 0; i < S::MI; ++i) {
#pragma unroll
        for (int j = 0; j < S::NI; ++j) {
#pragma unroll
            for (int h = 0; h < 2; ++h) {
                const int r = row0 + wm + i * 16 + h * 8 + g, col = col0 + wn + j * 8 + 2 * t;
                if (r >= c.rows) continue;
                if (pairs && col < c.cols) {
                    store_pair(&c(r, col), acc[i][j][2 * h], acc[i][j][2 * h + 1]);
                } else {
                    if (col < c.cols) c(r, col) = acc[i][j][2 * h];
                    if (col + 1 < c.cols) c(r, col + 1) = acc[i][j][2 * h + 1];
                }
            }
        }
    }
}

using MmaTiledTf32 = MmaTiling<float, 128, 256, 16, 64, 64, 3>;
// The host launches these with the dynamic shared memory of Step::shape() in lab-mmm/src/ladder/step.rs.
static_assert(WarpTiled::SHARED_BYTES == 74496, "Step::WarpTiled.shape() in ladder/step.rs");
static_assert(MmaTiledF64::SHARED_BYTES == 74496 && MmaTiledF64::THREADS == 128, "Step::MmaTiled.shape() in ladder/step.rs");
static_assert(MmaTiledTf32::SHARED_BYTES == 81408, "Step::Tf32.shape() in ladder/step.rs");

// ---- Steps 9 to 11: split-K ------------------------------------------------------------------------

// A C of few tiles leaves most multiprocessors idle: a 256 x 256 C is 2 blocks of steps 6 and 8 and 8
// of step 7 on an H100's 132, whatever k is. Split-K gives each block a slice of k as well as a tile of C: block (x, y, z)
// computes tile (x, y)'s partial product over k tiles z * tiles_per_slice on, into slab z of
// `partial` (slices x C's size), and sum_slices adds the slabs into C, in the same order for every
// element, so that C is the same from run to run. The host picks the slices (`Split::choose` in
// lab-mmm/src/split_k.rs) so that the blocks fill the GPU once (as many blocks as its multiprocessors hold
// at once: two each for step 10); where one slice would do, it runs the
// step being split instead.
template <class Kernel, typename T>
__device__ __forceinline__ void k_slice(Kernel kernel, MatrixView<T> a, MatrixView<T> b, MatrixView<T> partial, int tiles_per_slice,
                                        int bk) {
    const int tiles = (a.cols + bk - 1) / bk, first = blockIdx.z * tiles_per_slice;
    const MatrixView<T> slab{partial.rows, partial.cols, partial.data + (size_t)blockIdx.z * partial.rows * partial.cols};
    kernel(a, b, slab, first, min(tiles, first + tiles_per_slice));
}

// C = the sum of `slices` slabs of C's size, one element per thread and grid stride.
template <typename T>
__device__ void sum_slices(const T* partial, int slices, MatrixView<T> c) {
    const size_t count = (size_t)c.rows * c.cols;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < count; i += (size_t)gridDim.x * blockDim.x) {
        T sum = partial[i];
        for (int z = 1; z < slices; ++z) sum += partial[z * count + i];
        c.data[i] = sum;
    }
}
extern "C" __global__ void sum_slices_f32(const float* partial, int slices, MatrixView<float> c) { sum_slices(partial, slices, c); }
extern "C" __global__ void sum_slices_f64(const double* partial, int slices, MatrixView<double> c) { sum_slices(partial, slices, c); }

// Plain C names for the host, one per step and precision.
extern "C" __global__ void __launch_bounds__(THREADS) register_blocked_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { register_blocked(a, b, c); }
extern "C" __global__ void __launch_bounds__(THREADS) register_blocked_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { register_blocked(a, b, c); }
extern "C" __global__ void __launch_bounds__(THREADS) wide_loads_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { wide_loads(a, b, c); }
extern "C" __global__ void __launch_bounds__(THREADS) wide_loads_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { wide_loads(a, b, c); }

// Steps 3 to 8 need newer GPUs: cp.async, FP64 mma m8n8k4 and TF32 mma came with sm_80 (Ampere),
// m16n8k4 and m16n8k8 in f64 with sm_90 (Hopper). A build for an older architecture leaves these kernels out instead of
// compiling empty ones, so nothing can launch what is not there; the host's list (kernels::NEEDS) says
// the same, and a test checks every build against it.
#if __CUDA_ARCH__ >= 800
extern "C" __global__ void __launch_bounds__(THREADS) async_copies_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { async_copies(a, b, c); }
extern "C" __global__ void __launch_bounds__(THREADS) async_copies_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { async_copies(a, b, c); }
// Steps 4 and 5: the same block tile of 128 x 64 (4 x 2 warps of 32 x 32), with each instruction.
extern "C" __global__ void __launch_bounds__(256) dmma_m8n8k4_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { dmma<4, 2, 4, 4, false>(a, b, c); }
// Step 6, f32 only: 128 x 256 x 16 tiles, warps of 64 x 64, three stages; one block per multiprocessor.
extern "C" __global__ void __launch_bounds__(WarpTiled::THREADS, 1) warp_tiled_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) {
    warp_tiled<WarpTiled>(a, b, c, 0, (a.cols + WarpTiled::BK - 1) / WarpTiled::BK);
}
// Step 8: TF32 tensor cores (mma m16n8k8 tf32 came with sm_80).
extern "C" __global__ void __launch_bounds__(MmaTiledTf32::THREADS, 1) mma_tiled_tf32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) {
    mma_tiled<MmaTiledTf32>(a, b, c, 0, (a.cols + MmaTiledTf32::BK - 1) / MmaTiledTf32::BK);
}
// Steps 9 (f32) and 11 (tf32): steps 6 and 8 over slices of k.
extern "C" __global__ void __launch_bounds__(WarpTiled::THREADS, 1) warp_tiled_split_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> partial, int tiles_per_slice) {
    k_slice(warp_tiled<WarpTiled>, a, b, partial, tiles_per_slice, WarpTiled::BK);
}
extern "C" __global__ void __launch_bounds__(MmaTiledTf32::THREADS, 1) mma_tiled_split_tf32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> partial, int tiles_per_slice) {
    k_slice(mma_tiled<MmaTiledTf32>, a, b, partial, tiles_per_slice, MmaTiledTf32::BK);
}
#endif
#if __CUDA_ARCH__ >= 900
extern "C" __global__ void __launch_bounds__(256) dmma_m16n8k4_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { dmma<4, 2, 2, 4, true>(a, b, c); }
// Step 7: m16n8k8 on C^T in 128 x 64 tiles, warps of 64 x 32, three stages of 16 k; two blocks per
// multiprocessor.
extern "C" __global__ void __launch_bounds__(MmaTiledF64::THREADS, MmaTiledF64::BLOCKS) mma_tiled_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) {
    dmma_tiled<MmaTiledF64>(a, b, c, 0, (a.cols + MmaTiledF64::BK - 1) / MmaTiledF64::BK);
}
// Step 10 (f64): step 7 over slices of k.
extern "C" __global__ void __launch_bounds__(MmaTiledF64::THREADS, MmaTiledF64::BLOCKS) mma_tiled_split_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> partial, int tiles_per_slice) {
    k_slice(dmma_tiled<MmaTiledF64>, a, b, partial, tiles_per_slice, MmaTiledF64::BK);
}
#endif
