// dgemm_kernels.cu: step 7 (f64 mma.sync + cp.async) variants for the DGEMM trials. C = A * B, all
// row-major: A m x k, B k x n, C m x n; any m, n, k. Built locally to an object (device code for sm_90)
// and linked on the GPU machine with dgemm_main.cu (cuBLAS, timing, checks).
//
// Variants:
//  - Orig: a copy of the ladder's MmaTiling<double, 128, 128, 8, 64, 32, 3> (m16n8k4), the baseline.
//  - K8: mma m16n8k8 f64 on C's transpose (C^T = B^T A^T), with a k permutation and an n permutation,
//    so that every fragment is one 16-byte LDS.128 that lands in the registers in the order the
//    instruction takes them (no moves):
//      k: instruction k t and t + 4 of lane (g, t) are physical k 2t and 2t + 1 of the 8-k step (the
//         same for both operands: the sum over k does not care).
//      the mma's A (16 x 8) = 16 columns n of B: instruction row g = column 2g, row g + 8 = column
//         2g + 1; a0, a1 = B's (2t, 2g), (2t, 2g + 1), neighbours; a2, a3 the same from row 2t + 1.
//      the mma's B (8 x 8) = 8 rows m of A: b0, b1 = A's (g, 2t), (g, 2t + 1), neighbours.
//    A's rows are BK numbers (no padding), 16-byte chunks XOR-swizzled by (row & 1) * 4 where a row is
//    128 bytes or more, so that a quarter-warp's LDS.128 (rows g = 0, 1; chunks t = 0..3) hits all
//    32 banks. B's rows BN + 2 numbers: rows 0, 2, 4, 6 fall into different 32-byte windows.
#include <cuda_runtime.h>
#include <cstdio>
#include "dgemm_common.h"

// ---- shared helpers (as in kernels/cuda/mmm_ladder.cu) ----------------------------------------
template <int BYTES>
__device__ __forceinline__ void cp_async(void* shared, const void* global, bool inside) {
    const unsigned destination = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(destination), "l"(global), "n"(BYTES),
                 "r"(inside ? BYTES : 0));
}
__device__ __forceinline__ void cp_async_cg(void* shared, const void* global) {
    const unsigned destination = static_cast<unsigned>(__cvta_generic_to_shared(shared));
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(destination), "l"(global));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ void copy_element(double* shared, MatrixView<double> m, int r, int col) {
    const bool inside = r < m.rows && col < m.cols;
    cp_async<8>(shared, inside ? &m(r, col) : m.data, inside);
}
// 2 doubles of row r from column col: one 16-byte copy where `wide`, else element by element.
__device__ __forceinline__ void copy_piece(double* shared, MatrixView<double> m, int r, int col, bool wide) {
    if (wide) {
        const bool inside = r < m.rows && col < m.cols;
        cp_async<16>(shared, inside ? &m(r, col) : m.data, inside);
    } else {
        copy_element(shared, m, r, col);
        copy_element(shared + 1, m, r, col + 1);
    }
}

__device__ __forceinline__ void dmma_16x8x4(double (&d)[4], const double (&a)[2], double b) {
    asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5}, {%6}, {%0, %1, %2, %3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a[0]), "d"(a[1]), "d"(b));
}
// m16n8k8 f64 (sm_90): A a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); B b0 (t, g), b1 (t + 4, g).
__device__ __forceinline__ void dmma_16x8x8(double (&d)[4], double a0, double a1, double a2, double a3, double b0, double b1) {
    asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, {%0, %1, %2, %3};\n"
                 : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3])
                 : "d"(a0), "d"(a1), "d"(a2), "d"(a3), "d"(b0), "d"(b1));
}

__device__ __forceinline__ void store_pair(double* to, double x, double y) { *reinterpret_cast<double2*>(to) = make_double2(x, y); }

// Tile order: GROUP_M == 0 row-major (as blockIdx.y, blockIdx.x), else groups of GROUP_M tile rows
// walked column by column (L2 reuse of B's panels).
template <int GROUP_M>
__device__ __forceinline__ void tile_of_block(int tiles_m, int tiles_n, int& tm, int& tn) {
    const int pid = blockIdx.x;
    if (GROUP_M == 0) {
        tm = pid / tiles_n;
        tn = pid % tiles_n;
    } else {
        const int width = GROUP_M * tiles_n, group = pid / width, first = group * GROUP_M;
        const int rows = min(tiles_m - first, GROUP_M), in = pid % width;
        tm = first + in % rows;
        tn = in / rows;
    }
}

// ---- Orig: the ladder's step 7 (copy) ------------------------------------------------------------
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_>
struct Orig {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_, KI = 4, V = 2, MINB = 1;
    static constexpr int WARPS_N = BN / WN, THREADS = 32 * (BM / WM) * WARPS_N, MI = WM / 16, NI = WN / 8;
    static constexpr int A_STRIDE = BK + 4, B_STRIDE = BN + 4;
    static constexpr int A_STAGE = BM * A_STRIDE, B_STAGE = BK * B_STRIDE;
    static constexpr int A_COPIES = BM * BK / V / THREADS, B_COPIES = BK * BN / V / THREADS;
    static constexpr int SHARED_BYTES = STAGES * (A_STAGE + B_STAGE) * 8;
};
template <class S>
struct OrigFragment {
    double a[S::MI][2];
    double b[S::NI][1];
};
template <class S>
__device__ __forceinline__ void orig_load(OrigFragment<S>& f, const double* as, const double* bs, int k) {
#pragma unroll
    for (int i = 0; i < S::MI; ++i)
#pragma unroll
        for (int q = 0; q < 2; ++q) f.a[i][q] = as[(i * 16 + q * 8) * S::A_STRIDE + k];
#pragma unroll
    for (int j = 0; j < S::NI; ++j) f.b[j][0] = bs[k * S::B_STRIDE + j * 8];
}
template <class S>
__global__ void __launch_bounds__(S::THREADS, 1) orig_kernel(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) {
    extern __shared__ __align__(16) unsigned char raw[];
    double* const shared = reinterpret_cast<double*>(raw);
    auto as = [&](int stage) { return shared + stage * S::A_STAGE; };
    auto bs = [&](int stage) { return shared + S::STAGES * S::A_STAGE + stage * S::B_STAGE; };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int wm = warp / S::WARPS_N * S::WM, wn = warp % S::WARPS_N * S::WN;
    const int tiles_n = (c.cols + S::BN - 1) / S::BN;
    const int row0 = blockIdx.x / tiles_n * S::BM, col0 = blockIdx.x % tiles_n * S::BN;
    const bool block_inside = row0 + S::BM <= a.rows && col0 + S::BN <= b.cols && a.cols % 2 == 0 && b.cols % 2 == 0;
    const int tiles = (a.cols + S::BK - 1) / S::BK;
    auto start = [&](int stage, int tile) {
        const int k0 = tile * S::BK;
        const bool inside = block_inside && k0 + S::BK <= a.cols;
        double* A = as(stage);
        double* B = bs(stage);
#pragma unroll
        for (int i = 0; i < S::A_COPIES; ++i) {
            const int p = threadIdx.x + i * S::THREADS, r = p / (S::BK / 2), k = p % (S::BK / 2) * 2;
            if (inside) cp_async_cg(&A[r * S::A_STRIDE + k], &a(row0 + r, k0 + k));
            else copy_piece(&A[r * S::A_STRIDE + k], a, row0 + r, k0 + k, a.cols % 2 == 0);
        }
#pragma unroll
        for (int i = 0; i < S::B_COPIES; ++i) {
            const int p = threadIdx.x + i * S::THREADS, k = p / (S::BN / 2), n = p % (S::BN / 2) * 2;
            if (inside) cp_async_cg(&B[k * S::B_STRIDE + n], &b(k0 + k, col0 + n));
            else copy_piece(&B[k * S::B_STRIDE + n], b, k0 + k, col0 + n, b.cols % 2 == 0);
        }
    };
    const int a_lane = (wm + g) * S::A_STRIDE + t, b_lane = t * S::B_STRIDE + wn + g;
    double acc[S::MI][S::NI][4] = {};
    for (int s = 0; s < S::STAGES - 1; ++s) {
        if (s < tiles) start(s, s);
        cp_async_commit();
    }
    cp_async_wait<S::STAGES - 2>();
    __syncthreads();
    int read = 0, write = S::STAGES - 1;
    constexpr int STEPS = S::BK / S::KI;
    OrigFragment<S> f[2];
    orig_load<S>(f[0], as(0) + a_lane, bs(0) + b_lane, 0);
    for (int tile = 0; tile < tiles; ++tile) {
        if (tile + S::STAGES - 1 < tiles) start(write, tile + S::STAGES - 1);
        cp_async_commit();
#pragma unroll
        for (int step = 0; step < STEPS; ++step) {
            if (step == STEPS - 1) {
                cp_async_wait<S::STAGES - 2>();
                __syncthreads();
                read = read + 1 == S::STAGES ? 0 : read + 1;
                write = write + 1 == S::STAGES ? 0 : write + 1;
            }
            orig_load<S>(f[(step + 1) % 2], as(read) + a_lane, bs(read) + b_lane, (step + 1) % STEPS * S::KI);
            const OrigFragment<S>& now = f[step % 2];
#pragma unroll
            for (int i = 0; i < S::MI; ++i)
#pragma unroll
                for (int j = 0; j < S::NI; ++j) dmma_16x8x4(acc[i][j], now.a[i], now.b[j][0]);
        }
    }
    cp_async_wait<0>();
    const bool pairs = c.cols % 2 == 0;
#pragma unroll
    for (int i = 0; i < S::MI; ++i)
#pragma unroll
        for (int j = 0; j < S::NI; ++j)
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

// ---- K8: m16n8k8 with permuted k and n -------------------------------------------------------------
template <int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int MINB_, int GROUP_M_, int SCHED_>
struct K8 {
    static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_, MINB = MINB_, GROUP_M = GROUP_M_;
    // SCHED 0: one set of fragments, loaded at the start of each step (the compiler may hoist);
    //       1: two sets, the next step's loaded before this step's mma;
    //       2: B in two sets, A rolling: row i's next fragment loaded right after row i's mma.
    static constexpr int SCHED = SCHED_;
    static constexpr int WARPS_N = BN / WN, THREADS = 32 * (BM / WM) * WARPS_N;
    static constexpr int MI = WM / 16, NI = WN / 8, NP = NI / 2, STEPS = BK / 8;
    static constexpr int A_STRIDE = BK;                  // A row-major, chunks swizzled
    static constexpr int SWIZZLE = BK >= 16 ? 4 : 0;     // chunk ^= (row & 1) * SWIZZLE
    static constexpr int B_STRIDE = BN + 2;              // B as it lies, rows padded by 16 bytes
    static constexpr int A_STAGE = BM * A_STRIDE, B_STAGE = BK * B_STRIDE;
    static constexpr int A_COPIES = BM * BK / 2 / THREADS, B_COPIES = BK * BN / 2 / THREADS;
    static constexpr int SHARED_BYTES = STAGES * (A_STAGE + B_STAGE) * 8;
    static_assert(BM % WM == 0 && BN % WN == 0 && WM % 16 == 0 && WN % 16 == 0, "warps own whole pairs of 16 x 8 tiles");
    static_assert(BK % 8 == 0 && BM * BK % (2 * THREADS) == 0 && BK * BN % (2 * THREADS) == 0, "every thread copies as much");
    static_assert(B_STRIDE % 8 == 2 || B_STRIDE % 8 == 6, "B rows 0, 2, 4, 6 in different 32-byte windows");
    static_assert(STAGES >= 2, "");
};

template <class S>
struct K8Fragment {
    double2 a[S::MI][2];  // a[i][h]: A's (16i + 8h + g, 2t), (.., 2t + 1): the mma's b0, b1 (instruction k t, t + 4)
    double2 b[S::NP][2];  // b[p][r]: B's (2t + r, 16p + 2g), (.., 16p + 2g + 1): the mma's a0, a1 (r = 0), a2, a3 (r = 1)
};

// Step s's fragments. a_even / a_odd: the lane's A base for steps of even / odd s (the swizzle), at
// row wm + g, chunk t; b_lane: B's row 2t, column wn + 2g.
template <class S>
__device__ __forceinline__ void k8_load(K8Fragment<S>& f, const double* a_even, const double* a_odd, const double* b_lane, int s) {
    const double* a_lane = (s % 2 == 0) ? a_even : a_odd;
#pragma unroll
    for (int i = 0; i < S::MI; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h)
            f.a[i][h] = *reinterpret_cast<const double2*>(a_lane + (i * 16 + h * 8) * S::A_STRIDE + 8 * s);
#pragma unroll
    for (int p = 0; p < S::NP; ++p)
#pragma unroll
        for (int r = 0; r < 2; ++r) f.b[p][r] = *reinterpret_cast<const double2*>(b_lane + (8 * s + r) * S::B_STRIDE + 16 * p);
}

// The mma computes tiles of C's transpose, C^T = B^T A^T, so that both operands come from one LDS.128
// each in the order the instruction takes them: its A (16 x 8) is B^T, 16 columns n of B, instruction
// row g = column 2g, row g + 8 = column 2g + 1 (a0, a1 = B's (2t, 2g), (2t, 2g + 1): one double2; a2, a3
// the same from row 2t + 1); its B (8 x 8) is A^T, 8 rows m of A (b0, b1 = A's (g, 2t), (g, 2t + 1)).
// acc[h][p]: m rows 16i + 8h + .., n columns 16p + ..; lane (g, t) holds C's (2t, 2g) d0, (2t + 1, 2g) d1,
// (2t, 2g + 1) d2, (2t + 1, 2g + 1) d3 of that 8 x 16 piece.
template <class S>
__device__ __forceinline__ void k8_mma_row(double (&acc)[2][S::NP][4], const double2 (&fa)[2], const double2 (&fb)[S::NP][2]) {
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
        for (int p = 0; p < S::NP; ++p) dmma_16x8x8(acc[h][p], fb[p][0].x, fb[p][0].y, fb[p][1].x, fb[p][1].y, fa[h].x, fa[h].y);
}
template <class S>
__device__ __forceinline__ void k8_mma(double (&acc)[S::MI][2][S::NP][4], const K8Fragment<S>& f) {
#pragma unroll
    for (int i = 0; i < S::MI; ++i) k8_mma_row<S>(acc[i], f.a[i], f.b);
}

template <class S>
__global__ void __launch_bounds__(S::THREADS, S::MINB) k8_kernel(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c) {
    extern __shared__ __align__(16) unsigned char raw[];
    double* const shared = reinterpret_cast<double*>(raw);
    auto as = [&](int stage) { return shared + stage * S::A_STAGE; };
    auto bs = [&](int stage) { return shared + S::STAGES * S::A_STAGE + stage * S::B_STAGE; };
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
    const int wm = warp / S::WARPS_N * S::WM, wn = warp % S::WARPS_N * S::WN;
    int tm, tn;
    tile_of_block<S::GROUP_M>((c.rows + S::BM - 1) / S::BM, (c.cols + S::BN - 1) / S::BN, tm, tn);
    const int row0 = tm * S::BM, col0 = tn * S::BN;
    const bool block_inside = row0 + S::BM <= a.rows && col0 + S::BN <= b.cols && a.cols % 2 == 0 && b.cols % 2 == 0;
    const int tiles = (a.cols + S::BK - 1) / S::BK;
    // The copies: thread p copies A's rows p / (BK / 2) + i A_RP at chunk p % (BK / 2), and B's rows
    // p / (BN / 2) + i B_RP at columns 2 (p % (BN / 2)) and on: running pointers, advanced tile by tile
    // (start is called for tiles 0, 1, 2, ... in order), so that no per-copy address stays live.
    constexpr int A_RP = S::THREADS / (S::BK / 2), B_RP = S::THREADS / (S::BN / 2);
    const int a_r = threadIdx.x / (S::BK / 2), a_ch = threadIdx.x % (S::BK / 2);
    const int b_k = threadIdx.x / (S::BN / 2), b_n = threadIdx.x % (S::BN / 2) * 2;
    const int a_to = a_r * S::A_STRIDE + 2 * (a_ch ^ ((a_r & 1) * S::SWIZZLE)), b_to = b_k * S::B_STRIDE + b_n;
    const double* a_from = a.data + (size_t)(row0 + a_r) * a.cols + 2 * a_ch;
    const double* b_from = b.data + (size_t)b_k * b.cols + col0 + b_n;
    const size_t a_step = (size_t)A_RP * a.cols, b_step = (size_t)B_RP * b.cols, b_tile = (size_t)S::BK * b.cols;
    int k_next = 0;
    auto start = [&](int stage) {
        const bool inside = block_inside && k_next + S::BK <= a.cols;
        double* A = as(stage) + a_to;
        double* B = bs(stage) + b_to;
        if (inside) {
            const double* from = a_from;
#pragma unroll
            for (int i = 0; i < S::A_COPIES; ++i, from += a_step) cp_async_cg(A + i * A_RP * S::A_STRIDE, from);
            from = b_from;
#pragma unroll
            for (int i = 0; i < S::B_COPIES; ++i, from += b_step) cp_async_cg(B + i * B_RP * S::B_STRIDE, from);
        } else {  // bounds-checked, in loops kept rolled: the edge path holds no per-copy registers
#pragma unroll 1
            for (int i = 0; i < S::A_COPIES; ++i)
                copy_piece(A + i * A_RP * S::A_STRIDE, a, row0 + a_r + i * A_RP, k_next + 2 * a_ch, a.cols % 2 == 0);
#pragma unroll 1
            for (int i = 0; i < S::B_COPIES; ++i)
                copy_piece(B + i * B_RP * S::B_STRIDE, b, k_next + b_k + i * B_RP, col0 + b_n, b.cols % 2 == 0);
        }
        a_from += S::BK;
        b_from += b_tile;
        k_next += S::BK;
    };
    // Lane offsets: A row wm + g, chunk t ^ swizzle (bit 2 of the chunk = step parity ^ (g & 1)).
    const int swz = (g & 1) * S::SWIZZLE * 2;  // in doubles: +8 for even steps, -8 for odd steps
    const int a_base = (wm + g) * S::A_STRIDE + 2 * t;
    const int a_even = a_base + swz, a_odd = a_base - swz;
    const int b_lane = 2 * t * S::B_STRIDE + wn + 2 * g;
    double acc[S::MI][2][S::NP][4] = {};
    for (int s = 0; s < S::STAGES - 1; ++s) {
        if (s < tiles) start(s);
        cp_async_commit();
    }
    cp_async_wait<S::STAGES - 2>();
    __syncthreads();
    int read = 0, write = S::STAGES - 1;
    constexpr int STEPS = S::STEPS;
    auto advance = [&] {
        read = read + 1 == S::STAGES ? 0 : read + 1;
        write = write + 1 == S::STAGES ? 0 : write + 1;
    };
    if constexpr (S::SCHED == 1) {
        K8Fragment<S> f[2];
        k8_load<S>(f[0], as(0) + a_even, as(0) + a_odd, bs(0) + b_lane, 0);
        // P: the fragment set of the tile's step 0 (alternates from tile to tile when STEPS is odd).
        auto body = [&](int tile, auto parity) {
            constexpr int P = decltype(parity)::value;
            if (tile + S::STAGES - 1 < tiles) start(write);
            cp_async_commit();
#pragma unroll
            for (int step = 0; step < STEPS; ++step) {
                if (step == STEPS - 1) {
                    cp_async_wait<S::STAGES - 2>();
                    __syncthreads();
                    advance();
                }
                const int next = (step + 1) % STEPS;
                k8_load<S>(f[(P + step + 1) % 2], as(read) + a_even, as(read) + a_odd, bs(read) + b_lane, next);
                k8_mma<S>(acc, f[(P + step) % 2]);
            }
        };
        if constexpr (STEPS % 2 == 0) {
            for (int tile = 0; tile < tiles; ++tile) body(tile, Int<0>{});
        } else {
            for (int tile = 0; tile < tiles; tile += 2) {
                body(tile, Int<0>{});
                if (tile + 1 < tiles) body(tile + 1, Int<1>{});
            }
        }
    } else if constexpr (S::SCHED == 2) {
        double2 fa[S::MI][2], fb[2][S::NP][2];
        auto load_a = [&](int i, const double* stage, int s) {
            const double* lane_a = stage + (s % 2 == 0 ? a_even : a_odd);
#pragma unroll
            for (int h = 0; h < 2; ++h) fa[i][h] = *reinterpret_cast<const double2*>(lane_a + (i * 16 + h * 8) * S::A_STRIDE + 8 * s);
        };
        auto load_b = [&](double2 (&fbs)[S::NP][2], const double* stage, int s) {
#pragma unroll
            for (int p = 0; p < S::NP; ++p)
#pragma unroll
                for (int r = 0; r < 2; ++r)
                    fbs[p][r] = *reinterpret_cast<const double2*>(stage + b_lane + (8 * s + r) * S::B_STRIDE + 16 * p);
        };
#pragma unroll
        for (int i = 0; i < S::MI; ++i) load_a(i, as(0), 0);
        load_b(fb[0], bs(0), 0);
        auto body = [&](int tile, auto parity) {
            constexpr int P = decltype(parity)::value;
            if (tile + S::STAGES - 1 < tiles) start(write);
            cp_async_commit();
#pragma unroll
            for (int step = 0; step < STEPS; ++step) {
                if (step == STEPS - 1) {
                    cp_async_wait<S::STAGES - 2>();
                    __syncthreads();
                    advance();
                }
                const int next = (step + 1) % STEPS;
                const double* A = as(read);
                load_b(fb[(P + step + 1) % 2], bs(read), next);
                const double2 (&b)[S::NP][2] = fb[(P + step) % 2];
#pragma unroll
                for (int i = 0; i < S::MI; ++i) {
                    k8_mma_row<S>(acc[i], fa[i], b);
                    load_a(i, A, next);
                }
            }
        };
        if constexpr (STEPS % 2 == 0) {
            for (int tile = 0; tile < tiles; ++tile) body(tile, Int<0>{});
        } else {
            for (int tile = 0; tile < tiles; tile += 2) {
                body(tile, Int<0>{});
                if (tile + 1 < tiles) body(tile + 1, Int<1>{});
            }
        }
    } else {
        for (int tile = 0; tile < tiles; ++tile) {
            if (tile + S::STAGES - 1 < tiles) start(write);
            cp_async_commit();
#pragma unroll
            for (int step = 0; step < STEPS; ++step) {
                K8Fragment<S> f;
                k8_load<S>(f, as(read) + a_even, as(read) + a_odd, bs(read) + b_lane, step);
                k8_mma<S>(acc, f);
            }
            cp_async_wait<S::STAGES - 2>();
            __syncthreads();
            advance();
        }
    }
    cp_async_wait<0>();
    // Lane (g, t): of each 8 x 16 piece (m rows 16i + 8h + .., n columns 16p + ..) rows 2t and 2t + 1,
    // columns 2g and 2g + 1: (d0, d2) and (d1, d3), one 16-byte store each.
    const bool pairs = c.cols % 2 == 0;
#pragma unroll
    for (int i = 0; i < S::MI; ++i)
#pragma unroll
        for (int h = 0; h < 2; ++h)
#pragma unroll
            for (int p = 0; p < S::NP; ++p)
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

// ---- the variant table -------------------------------------------------------------------------
template <class S, class K>
static void launch_any(K kernel, MatrixView<double> a, MatrixView<double> b, MatrixView<double> c, cudaStream_t stream) {
    static bool ready = false;
    if (!ready) {
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, S::SHARED_BYTES);
        ready = true;
    }
    const int blocks = ((c.rows + S::BM - 1) / S::BM) * ((c.cols + S::BN - 1) / S::BN);
    kernel<<<blocks, S::THREADS, S::SHARED_BYTES, stream>>>(a, b, c);
}
template <class S>
static void launch_orig(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c, cudaStream_t s) { launch_any<S>(orig_kernel<S>, a, b, c, s); }
template <class S>
static void launch_k8(MatrixView<double> a, MatrixView<double> b, MatrixView<double> c, cudaStream_t s) { launch_any<S>(k8_kernel<S>, a, b, c, s); }
template <class S>
static const void* func_orig() { return (const void*)orig_kernel<S>; }
template <class S>
static const void* func_k8() { return (const void*)k8_kernel<S>; }

#define ORIG(name, ...) {name, launch_orig<Orig<__VA_ARGS__>>, func_orig<Orig<__VA_ARGS__>>, Orig<__VA_ARGS__>::SHARED_BYTES}
#define KV(name, ...) {name, launch_k8<K8<__VA_ARGS__>>, func_k8<K8<__VA_ARGS__>>, K8<__VA_ARGS__>::SHARED_BYTES}
//                          BM   BN  BK  WM  WN  S  MINB  GROUP DBUF
static const Variant table[] = {
    ORIG("orig 128x128x8 k4 s3", 128, 128, 8, 64, 32, 3),
    KV("k8t 128x64x16 s3 b2 sch0", 128, 64, 16, 64, 32, 3, 2, 0, 0),
    KV("k8t 128x64x16 s3 b2 sch1", 128, 64, 16, 64, 32, 3, 2, 0, 1),
    KV("k8t 128x64x16 s3 b2 sch2", 128, 64, 16, 64, 32, 3, 2, 0, 2),
    KV("k8t 128x64x16 s3 b2 sch2 g8", 128, 64, 16, 64, 32, 3, 2, 8, 2),
    KV("k8t 128x64x16 s4 b2 sch2", 128, 64, 16, 64, 32, 4, 2, 0, 2),
    KV("k8t 128x64x16 w32x64 s3 b2 sch1", 128, 64, 16, 32, 64, 3, 2, 0, 1),
    KV("k8t 128x64x16 w32x64 s3 b2 sch2", 128, 64, 16, 32, 64, 3, 2, 0, 2),
    KV("k8t 64x128x16 s3 b2 sch1", 64, 128, 16, 32, 64, 3, 2, 0, 1),
    KV("k8t 128x64x32 s2 b2 sch0", 128, 64, 32, 64, 32, 2, 2, 0, 0),
    KV("k8t 128x64x32 s2 b2 sch1", 128, 64, 32, 64, 32, 2, 2, 0, 1),
    KV("k8t 128x64x32 s2 b2 sch2", 128, 64, 32, 64, 32, 2, 2, 0, 2),
    KV("k8t 128x128x16 s3 b1 sch1", 128, 128, 16, 64, 32, 3, 1, 0, 1),
    KV("k8t 128x128x16 s3 b1 sch2", 128, 128, 16, 64, 32, 3, 1, 0, 2),
    KV("k8t 128x128x16 s4 b1 sch1", 128, 128, 16, 64, 32, 4, 1, 0, 1),
    KV("k8t 128x128x32 s2 b1 sch0", 128, 128, 32, 64, 32, 2, 1, 0, 0),
    KV("k8t 128x128x32 s2 b1 sch1", 128, 128, 32, 64, 32, 2, 1, 0, 1),
};

const Variant* variants(int* count) {
    *count = sizeof(table) / sizeof(table[0]);
    return table;
}
