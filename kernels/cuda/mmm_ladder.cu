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

// Plain C names for the host, one per step and precision.
extern "C" __global__ void __launch_bounds__(THREADS) register_blocked_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { register_blocked(a, b, c); }
extern "C" __global__ void __launch_bounds__(THREADS) register_blocked_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { register_blocked(a, b, c); }
extern "C" __global__ void __launch_bounds__(THREADS) wide_loads_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { wide_loads(a, b, c); }
extern "C" __global__ void __launch_bounds__(THREADS) wide_loads_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { wide_loads(a, b, c); }

// Steps 3 to 5 need newer GPUs: cp.async and FP64 mma m8n8k4 came with sm_80 (Ampere), m16n8k4 with
// sm_90 (Hopper). A build for an older architecture leaves these kernels out instead of compiling
// empty ones, so nothing can launch what is not there; the host's list (kernels::NEEDS) says the same,
// and a test checks every build against it.
#if __CUDA_ARCH__ >= 800
extern "C" __global__ void __launch_bounds__(THREADS) async_copies_f32(MatrixView<float> a, MatrixView<float> b, MatrixView<float> c) { async_copies(a, b, c); }
extern "C" __global__ void __launch_bounds__(THREADS) async_copies_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { async_copies(a, b, c); }
// Steps 4 and 5: the same block tile of 128 x 64 (4 x 2 warps of 32 x 32), with each instruction.
extern "C" __global__ void __launch_bounds__(256) dmma_m8n8k4_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { dmma<4, 2, 4, 4, false>(a, b, c); }
#endif
#if __CUDA_ARCH__ >= 900
extern "C" __global__ void __launch_bounds__(256) dmma_m16n8k4_f64(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) { dmma<4, 2, 2, 4, true>(a, b, c); }
#endif
