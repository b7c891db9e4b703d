// tile-trials.cu: the program that printed tile-trials-1.log and tile-trials-2.log (issue 24), kept as
// the record of how those numbers were made; not part of any build. It instantiates a copy of the
// ladder's MmaTiling template (kernels/cuda/mmm_ladder.cu, steps 7 and 8, before its fragment-parity
// static_assert) with other arguments and times each beside cuBLAS on the same matrices. This is
// trial 2's TRY list; trial 1 ran the lines its log names. On a GPU machine:
//
//     nvcc -std=c++17 -arch=sm_90 -O3 -Xptxas -v tile-trials.cu -o tile-trials -lcublas && ./tile-trials
//
// Exploration: FP64 mma warp-tiled kernels vs cuBLAS DGEMM, and TF32 vs cuBLAS SGEMM TF32.
#include <cstdio>
#include <cstdlib>
#include <vector>
#include <algorithm>
#include <cmath>
#include <cublas_v2.h>
#include <cuda_runtime.h>

template <typename T> struct MatrixView { int rows, cols; T* data;
  __device__ T& operator()(int i, int j) { return data[(size_t)i * cols + j]; } };

template <int BYTES>
__device__ __forceinline__ void cp_async(void* s, const void* g, bool inside) {
  unsigned d = (unsigned)__cvta_generic_to_shared(s);
  asm volatile("cp.async.ca.shared.global [%0], [%1], %2, %3;\n" ::"r"(d), "l"(g), "n"(BYTES), "r"(inside ? BYTES : 0));
}
__device__ __forceinline__ void cp_async_cg(void* s, const void* g) {
  unsigned d = (unsigned)__cvta_generic_to_shared(s);
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(d), "l"(g));
}
__device__ __forceinline__ void commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void wait_groups() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

template <typename T> struct Mma;
template <> struct Mma<double> {
  // k chunks of 4: A frag a[2*c+h] (row g+8h, col t+4c), B b[c] (row t+4c, col g)
  template <int KI> static __device__ __forceinline__ void run(double (&d)[4], const double* a, const double* b);
};
template <> template <> __device__ __forceinline__ void Mma<double>::run<4>(double (&d)[4], const double* a, const double* b) {
  asm volatile("mma.sync.aligned.m16n8k4.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5}, {%6}, {%0,%1,%2,%3};\n"
    : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3]) : "d"(a[0]), "d"(a[1]), "d"(b[0]));
}
template <> template <> __device__ __forceinline__ void Mma<double>::run<8>(double (&d)[4], const double* a, const double* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
    : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3]) : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(b[0]), "d"(b[1]));
}
template <> template <> __device__ __forceinline__ void Mma<double>::run<16>(double (&d)[4], const double* a, const double* b) {
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f64.f64.f64.f64 {%0,%1,%2,%3}, {%4,%5,%6,%7,%8,%9,%10,%11}, {%12,%13,%14,%15}, {%0,%1,%2,%3};\n"
    : "+d"(d[0]), "+d"(d[1]), "+d"(d[2]), "+d"(d[3]) : "d"(a[0]), "d"(a[1]), "d"(a[2]), "d"(a[3]), "d"(a[4]), "d"(a[5]), "d"(a[6]), "d"(a[7]),
      "d"(b[0]), "d"(b[1]), "d"(b[2]), "d"(b[3]));
}
template <> struct Mma<float> {
  template <int KI> static __device__ __forceinline__ void run(float (&d)[4], const float* a, const float* b);
};
__device__ __forceinline__ unsigned tf32(float x) { unsigned r; asm("cvt.rna.tf32.f32 %0, %1;\n" : "=r"(r) : "f"(x)); return r; }
template <> template <> __device__ __forceinline__ void Mma<float>::run<8>(float (&d)[4], const float* a, const float* b) {
  asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
    : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]) : "r"(tf32(a[0])), "r"(tf32(a[1])), "r"(tf32(a[2])), "r"(tf32(a[3])), "r"(tf32(b[0])), "r"(tf32(b[1])));
}

template <typename T, int BM_, int BN_, int BK_, int WM_, int WN_, int STAGES_, int KI_, int MINB_ = 1>
struct Tiling {
  using E = T;
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WM = WM_, WN = WN_, STAGES = STAGES_, KI = KI_, MINB = MINB_;
  static constexpr int V = 16 / sizeof(T);
  static constexpr int WARPS_N = BN / WN, THREADS = 32 * (BM / WM) * (BN / WN);
  static constexpr int MI = WM / 16, NI = WN / 8, CH = KI / 4;
  static constexpr int A_STRIDE = BK + 4;
  static constexpr int B_STRIDE = BN + 32 / sizeof(T);
  static constexpr int A_STAGE = BM * A_STRIDE, B_STAGE = BK * B_STRIDE;
  static constexpr int SHARED = STAGES * (A_STAGE + B_STAGE) * sizeof(T);
  static constexpr int A_PIECES = BM * BK / V / THREADS, B_PIECES = BK * BN / V / THREADS;
  static_assert(BM * BK % (V * THREADS) == 0 && BK * BN % (V * THREADS) == 0, "even copies");
};

template <typename T>
__device__ __forceinline__ void copy_checked(T* s, MatrixView<T> m, int r, int col, bool wide) {
  constexpr int V = 16 / sizeof(T);
  if (wide) { bool in = r < m.rows && col < m.cols; cp_async<16>(s, in ? &m(r, col) : m.data, in); }
  else {
#pragma unroll
    for (int q = 0; q < V; ++q) { bool in = r < m.rows && col + q < m.cols; cp_async<sizeof(T)>(s + q, in ? &m(r, col + q) : m.data, in); }
  }
}

template <class S>
__device__ __forceinline__ void start(MatrixView<typename S::E> a, MatrixView<typename S::E> b, typename S::E* as, typename S::E* bs, int row0, int col0, int k0, bool inside) {
  using T = typename S::E;
  constexpr int V = S::V;
  constexpr int A_PER_ROW = S::BK / V, B_PER_ROW = S::BN / V;
#pragma unroll
  for (int i = 0; i < S::A_PIECES; ++i) {
    int p = threadIdx.x + i * S::THREADS; int r = p / A_PER_ROW, k = p % A_PER_ROW * V;
    if (inside) cp_async_cg(&as[r * S::A_STRIDE + k], &a(row0 + r, k0 + k));
    else copy_checked(&as[r * S::A_STRIDE + k], a, row0 + r, k0 + k, a.cols % V == 0);
  }
#pragma unroll
  for (int i = 0; i < S::B_PIECES; ++i) {
    int p = threadIdx.x + i * S::THREADS; int k = p / B_PER_ROW, n = p % B_PER_ROW * V;
    if (inside) cp_async_cg(&bs[k * S::B_STRIDE + n], &b(k0 + k, col0 + n));
    else copy_checked(&bs[k * S::B_STRIDE + n], b, k0 + k, col0 + n, b.cols % V == 0);
  }
}

template <class S> struct Frag { typename S::E a[S::MI][2 * S::CH]; typename S::E b[S::NI][S::CH]; };

template <class S>
__device__ __forceinline__ void load_frag(Frag<S>& f, const typename S::E* as, const typename S::E* bs, int k) {
#pragma unroll
  for (int i = 0; i < S::MI; ++i)
#pragma unroll
    for (int c = 0; c < S::CH; ++c)
#pragma unroll
      for (int h = 0; h < 2; ++h) f.a[i][2 * c + h] = as[(i * 16 + h * 8) * S::A_STRIDE + k + 4 * c];
#pragma unroll
  for (int j = 0; j < S::NI; ++j)
#pragma unroll
    for (int c = 0; c < S::CH; ++c) f.b[j][c] = bs[(k + 4 * c) * S::B_STRIDE + j * 8];
}

template <class S>
__global__ void __launch_bounds__(S::THREADS, S::MINB) mma_tiled(MatrixView<typename S::E> a, MatrixView<typename S::E> b, MatrixView<typename S::E> c) {
  using T = typename S::E;
  extern __shared__ __align__(16) unsigned char raw[];
  T* sh = reinterpret_cast<T*>(raw);
  auto as = [&](int s) { return sh + s * S::A_STAGE; };
  auto bs = [&](int s) { return sh + S::STAGES * S::A_STAGE + s * S::B_STAGE; };
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32, g = lane / 4, t = lane % 4;
  const int wm = warp / S::WARPS_N * S::WM, wn = warp % S::WARPS_N * S::WN;
  const int row0 = blockIdx.y * S::BM, col0 = blockIdx.x * S::BN;
  const bool block_inside = row0 + S::BM <= a.rows && col0 + S::BN <= b.cols && a.cols % S::V == 0 && b.cols % S::V == 0;
  const int tiles = (a.cols + S::BK - 1) / S::BK;
  auto go = [&](int stage, int tt) { start<S>(a, b, as(stage), bs(stage), row0, col0, tt * S::BK, block_inside && (tt + 1) * S::BK <= a.cols); };
  T acc[S::MI][S::NI][4] = {};
  for (int s = 0; s < S::STAGES - 1; ++s) { if (s < tiles) go(s, s); commit(); }
  wait_groups<S::STAGES - 2>();
  __syncthreads();
  int read = 0, write = S::STAGES - 1;
  const int aoff = (wm + g) * S::A_STRIDE + t, boff = t * S::B_STRIDE + wn + g;
  Frag<S> f[2];
  load_frag<S>(f[0], as(0) + aoff, bs(0) + boff, 0);
  constexpr int KSTEPS = S::BK / S::KI;
  for (int tt = 0; tt < tiles; ++tt) {
    if (tt + S::STAGES - 1 < tiles) go(write, tt + S::STAGES - 1);
    commit();
#pragma unroll
    for (int ks = 0; ks < KSTEPS; ++ks) {
      if (ks == KSTEPS - 1) {
        wait_groups<S::STAGES - 2>();
        __syncthreads();
        read = read + 1 == S::STAGES ? 0 : read + 1;
        write = write + 1 == S::STAGES ? 0 : write + 1;
      }
      load_frag<S>(f[(ks + 1) % 2], as(read) + aoff, bs(read) + boff, ((ks + 1) % KSTEPS) * S::KI);
      const Frag<S>& now = f[ks % 2];
#pragma unroll
      for (int i = 0; i < S::MI; ++i)
#pragma unroll
        for (int j = 0; j < S::NI; ++j) Mma<T>::template run<S::KI>(acc[i][j], now.a[i], now.b[j]);
    }
  }
  wait_groups<0>();
#pragma unroll
  for (int i = 0; i < S::MI; ++i)
#pragma unroll
    for (int j = 0; j < S::NI; ++j)
#pragma unroll
      for (int h = 0; h < 2; ++h) {
        int r = row0 + wm + i * 16 + h * 8 + g, col = col0 + wn + j * 8 + 2 * t;
        if (r < c.rows) {
          if (col + 1 < c.cols && c.cols % 2 == 0) {
            if constexpr (sizeof(T) == 8) *reinterpret_cast<double2*>(&c(r, col)) = make_double2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
            else *reinterpret_cast<float2*>(&c(r, col)) = make_float2(acc[i][j][2 * h], acc[i][j][2 * h + 1]);
          } else {
            if (col < c.cols) c(r, col) = acc[i][j][2 * h];
            if (col + 1 < c.cols) c(r, col + 1) = acc[i][j][2 * h + 1];
          }
        }
      }
}

#define CK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { printf("%s: %s line %d\n", #x, cudaGetErrorString(e), __LINE__); exit(1); } } while (0)

template <typename T>
void fill(std::vector<T>& v, unsigned seed) { srand(seed); for (auto& x : v) x = (T)(rand() / (double)RAND_MAX * 2 - 1); }

template <typename T>
struct Problem {
  int m, k, n; T *a, *b, *c, *ref; std::vector<T> hc, hr;
  Problem(int m_, int k_, int n_) : m(m_), k(k_), n(n_), hc((size_t)m_ * n_), hr((size_t)m_ * n_) {
    std::vector<T> ha((size_t)m * k), hb((size_t)k * n); fill(ha, 1); fill(hb, 2);
    CK(cudaMalloc(&a, ha.size() * sizeof(T))); CK(cudaMalloc(&b, hb.size() * sizeof(T)));
    CK(cudaMalloc(&c, hc.size() * sizeof(T))); CK(cudaMalloc(&ref, hc.size() * sizeof(T)));
    CK(cudaMemcpy(a, ha.data(), ha.size() * sizeof(T), cudaMemcpyHostToDevice));
    CK(cudaMemcpy(b, hb.data(), hb.size() * sizeof(T), cudaMemcpyHostToDevice));
  }
};

cublasHandle_t handle;
template <typename T> float blas(Problem<T>& p, T* out, bool tf32mode, int reps) {
  T one = 1, zero = 0;
  cublasSetMathMode(handle, tf32mode ? CUBLAS_TF32_TENSOR_OP_MATH : CUBLAS_DEFAULT_MATH);
  auto run = [&] {
    if constexpr (sizeof(T) == 8) cublasDgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &one, p.b, p.n, p.a, p.k, &zero, out, p.n);
    else cublasSgemm(handle, CUBLAS_OP_N, CUBLAS_OP_N, p.n, p.m, p.k, &one, p.b, p.n, p.a, p.k, &zero, out, p.n);
  };
  run(); CK(cudaDeviceSynchronize());
  std::vector<float> ms;
  cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int r = 0; r < reps; ++r) { cudaEventRecord(e0); run(); cudaEventRecord(e1); cudaEventSynchronize(e1); float x; cudaEventElapsedTime(&x, e0, e1); ms.push_back(x); }
  std::sort(ms.begin(), ms.end()); return ms[ms.size() / 2];
}

template <class S> float ours(Problem<typename S::E>& p, int reps) {
  using T = typename S::E;
  CK(cudaFuncSetAttribute(mma_tiled<S>, cudaFuncAttributeMaxDynamicSharedMemorySize, S::SHARED));
  dim3 grid((p.n + S::BN - 1) / S::BN, (p.m + S::BM - 1) / S::BM);
  MatrixView<T> va{p.m, p.k, p.a}, vb{p.k, p.n, p.b}, vc{p.m, p.n, p.c};
  CK(cudaMemset(p.c, 0xff, p.hc.size() * sizeof(T)));
  mma_tiled<S><<<grid, S::THREADS, S::SHARED>>>(va, vb, vc); CK(cudaGetLastError()); CK(cudaDeviceSynchronize());
  std::vector<float> ms; cudaEvent_t e0, e1; cudaEventCreate(&e0); cudaEventCreate(&e1);
  for (int r = 0; r < reps; ++r) { cudaEventRecord(e0); mma_tiled<S><<<grid, S::THREADS, S::SHARED>>>(va, vb, vc); cudaEventRecord(e1); cudaEventSynchronize(e1); float x; cudaEventElapsedTime(&x, e0, e1); ms.push_back(x); }
  std::sort(ms.begin(), ms.end()); return ms[ms.size() / 2];
}

template <class S> void try_one(const char* name, Problem<typename S::E>& p, float blas_ms, int reps) {
  using T = typename S::E;
  float ms = ours<S>(p, reps);
  CK(cudaMemcpy(p.hc.data(), p.c, p.hc.size() * sizeof(T), cudaMemcpyDeviceToHost));
  double err = 0, big = 0;
  for (size_t i = 0; i < p.hc.size(); ++i) { err = fmax(err, fabs((double)p.hc[i] - (double)p.hr[i])); big = fmax(big, fabs((double)p.hr[i])); }
  if (std::isnan(err) || p.hc[0] != p.hc[0]) err = INFINITY;
  double tf = 2.0 * p.m * p.n * p.k / (ms * 1e9);
  printf("%-40s %5dx%5dx%5d %8.3f ms %6.2f TF/s %5.1f%% of cuBLAS  rel err vs cublas %.1e  regs-smem %d B\n", name, p.m, p.k, p.n, ms, tf,
         100.0 * blas_ms / ms, err / big, S::SHARED);
}

#define TRY(name, ...) try_one<__VA_ARGS__>(name, p, bms, reps)

int main(int argc, char** argv) {
  cublasCreate(&handle);
  int sizes[][3] = {{4096, 4096, 4096}, {1000, 777, 1531}, {8192, 8192, 8192}};
  for (auto& s : sizes) {
    int reps = s[0] == 8192 ? 5 : 11;
    {
      Problem<double> p(s[0], s[1], s[2]);
      float bms = blas(p, p.ref, false, reps);
      CK(cudaMemcpy(p.hr.data(), p.ref, p.hr.size() * 8, cudaMemcpyDeviceToHost));
      printf("cuBLAS DGEMM %dx%dx%d: %.3f ms %.2f TF/s\n", s[0], s[1], s[2], bms, 2.0 * s[0] * s[1] * s[2] / (bms * 1e9));
      TRY("f64 128x128 w64x32 k8 s4 ki4", Tiling<double, 128, 128, 8, 64, 32, 4, 4>);
      TRY("f64 128x128 w64x32 k8 s3 ki4", Tiling<double, 128, 128, 8, 64, 32, 3, 4>);
      TRY("f64 128x128 w64x32 k8 s5 ki4", Tiling<double, 128, 128, 8, 64, 32, 5, 4>);
      TRY("f64 128x128 w64x32 k8 s6 ki4", Tiling<double, 128, 128, 8, 64, 32, 6, 4>);
      TRY("f64 128x128 w32x64 k8 s4 ki4", Tiling<double, 128, 128, 8, 32, 64, 4, 4>);
      TRY("f64 128x128 w64x32 k8 s4 ki8", Tiling<double, 128, 128, 8, 64, 32, 4, 8>);
      TRY("f64 128x128 w64x32 k4 s6 ki4", Tiling<double, 128, 128, 4, 64, 32, 6, 4>);
    }
    {
      Problem<float> p(s[0], s[1], s[2]);
      float bms = blas(p, p.ref, false, reps);
      float tms = blas(p, p.ref, true, reps);
      printf("cuBLAS SGEMM %.3f ms; TF32 %.3f ms %.2f TF/s\n", bms, tms, 2.0 * s[0] * s[1] * s[2] / (tms * 1e9));
      CK(cudaMemcpy(p.hr.data(), p.ref, p.hr.size() * 4, cudaMemcpyDeviceToHost));
      bms = tms;
      TRY("tf32 128x256 w64x64 k16 s4", Tiling<float, 128, 256, 16, 64, 64, 4, 8>);
      TRY("tf32 128x256 w64x64 k16 s3", Tiling<float, 128, 256, 16, 64, 64, 3, 8>);
      TRY("tf32 128x256 w64x64 k8 s4", Tiling<float, 128, 256, 8, 64, 64, 4, 8>);
      TRY("tf32 128x256 w64x64 k8 s6", Tiling<float, 128, 256, 8, 64, 64, 6, 8>);
      TRY("tf32 128x128 w64x32 k16 s4", Tiling<float, 128, 128, 16, 64, 32, 4, 8>);
    }
  }
}
