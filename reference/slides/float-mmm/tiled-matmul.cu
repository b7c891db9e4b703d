// tiled-matmul.cu, Greek lecture 9 (002, "Πολλαπλασιασμός μητρώων με tiles": the basic kernel, the
// tiled kernel and the choice of TILE_WIDTH, 16 or 32). P = M * N for Width x Width float matrices,
// one thread per element of P in TILE_WIDTH x TILE_WIDTH blocks:
// - basic::MatrixMulKernel: each thread reads its row of d_M and column of d_N from global memory;
// - tiled::MatrixMulKernel: in phase m, the block's threads load one TILE_WIDTH x TILE_WIDTH tile of
//   d_M and one of d_N into shared memory (ds_M, ds_N), one element each, then every thread uses the
//   whole tiles; Width / TILE_WIDTH phases, a barrier after the loads and after the use.
// Both are named MatrixMulKernel on the slides; TILE_WIDTH, a #define there, is a template parameter
// here, so that one program runs the tiled kernel with 16 (256 threads) and 32 (1024 threads).
//
// The slides show only the kernels; the host code, MatrixMulOnDevice (allocate, copy in, launch, copy
// back, free: the structure of their last figure), and main are ours. The slides time nothing and
// print nothing; neither does this program (run it under a profiler, e.g. nsys profile --stats=true).
// float-mmm/matmul.cu, the Chinese notes' program, is the one compare.sh builds for the float rows.
// Sizes, not on the slides: Width = 1024, the size of compare.sh's float rows.
// Fixed from the slides: the second barrier was spelled synchthreads(); it is __syncthreads().
// Added: every CUDA call is checked (CHECK), so a failure ends the program with exit code 1.
#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                                             \
    do {                                                                                        \
        cudaError_t result = (call);                                                            \
        if (result != cudaSuccess) {                                                            \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #call,                  \
                         cudaGetErrorString(result));                                           \
            std::exit(1);                                                                       \
        }                                                                                       \
    } while (0)

namespace basic {

template <int TILE_WIDTH>
__global__ void MatrixMulKernel(float* d_M, float* d_N, float* d_P, int Width) {
    // the row of d_P (and d_M) this thread works on
    int Row = blockIdx.y * TILE_WIDTH + threadIdx.y;
    // the column of d_P (and d_N)
    int Col = blockIdx.x * TILE_WIDTH + threadIdx.x;
    float Pvalue = 0;
    for (int k = 0; k < Width; ++k) {
        Pvalue += d_M[Row * Width + k] * d_N[k * Width + Col];
    }
    d_P[Row * Width + Col] = Pvalue;
}

}  // namespace basic

namespace tiled {

template <int TILE_WIDTH>
__global__ void MatrixMulKernel(float* d_M, float* d_N, float* d_P, int Width) {
    __shared__ float ds_M[TILE_WIDTH][TILE_WIDTH];
    __shared__ float ds_N[TILE_WIDTH][TILE_WIDTH];
    int bx = blockIdx.x;
    int by = blockIdx.y;
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    // the element of d_P this thread computes
    int Row = by * TILE_WIDTH + ty;
    int Col = bx * TILE_WIDTH + tx;
    float Pvalue = 0;
    // phase m: the m-th tile along the block's rows of d_M and down its columns of d_N
    for (int m = 0; m < Width / TILE_WIDTH; ++m) {
        // every thread loads one element of each tile, consecutive threads consecutive elements
        ds_M[ty][tx] = d_M[Row * Width + m * TILE_WIDTH + tx];
        ds_N[ty][tx] = d_N[Col + (m * TILE_WIDTH + ty) * Width];
        __syncthreads();  // the tiles are complete
        for (int k = 0; k < TILE_WIDTH; ++k) {
            Pvalue += ds_M[ty][k] * ds_N[k][tx];
        }
        __syncthreads();  // the tiles are used up (slides: synchthreads())
    }
    d_P[Row * Width + Col] = Pvalue;
}

}  // namespace tiled

typedef void (*Kernel)(float*, float*, float*, int);

// P = M * N on the GPU with `kernel` in TILE_WIDTH x TILE_WIDTH blocks (TILE_WIDTH divides Width).
void MatrixMulOnDevice(float* M, float* N, float* P, int Width, int TILE_WIDTH, Kernel kernel) {
    int size = Width * Width * sizeof(float);
    float *d_M, *d_N, *d_P;
    CHECK(cudaMalloc((void**)&d_M, size));
    CHECK(cudaMalloc((void**)&d_N, size));
    CHECK(cudaMalloc((void**)&d_P, size));
    CHECK(cudaMemcpy(d_M, M, size, cudaMemcpyHostToDevice));
    CHECK(cudaMemcpy(d_N, N, size, cudaMemcpyHostToDevice));
    dim3 dimGrid(Width / TILE_WIDTH, Width / TILE_WIDTH);
    dim3 dimBlock(TILE_WIDTH, TILE_WIDTH);
    kernel<<<dimGrid, dimBlock>>>(d_M, d_N, d_P, Width);
    CHECK(cudaGetLastError());  // a launch reports its own errors only here
    CHECK(cudaMemcpy(P, d_P, size, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d_M));
    CHECK(cudaFree(d_N));
    CHECK(cudaFree(d_P));
}

int main() {
    const int Width = 1024;
    float* M = new float[Width * Width];
    float* N = new float[Width * Width];
    float* P = new float[Width * Width];
    for (int i = 0; i < Width * Width; ++i) {
        M[i] = (float)(i % 17) / 17.0f;
        N[i] = (float)(i % 13) / 13.0f;
    }
    MatrixMulOnDevice(M, N, P, Width, 16, basic::MatrixMulKernel<16>);
    MatrixMulOnDevice(M, N, P, Width, 16, tiled::MatrixMulKernel<16>);
    MatrixMulOnDevice(M, N, P, Width, 32, tiled::MatrixMulKernel<32>);
    delete[] M;
    delete[] N;
    delete[] P;
    return 0;
}
