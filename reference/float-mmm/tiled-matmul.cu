// tiled-matmul.cu: the Greek lecture's float matrix products (lecture 9: the basic kernel, then the
// tiled one with TILE_WIDTH 16 and 32), P = M * N for Width x Width matrices, with the kernels as the
// slides print them (their synchthreads() spelt __syncthreads()). Timed and checked as matmul.cu, the
// Chinese notes' version of the same products, is; reference/slides/float-mmm/tiled-matmul.cu is the
// slide program itself, which times and checks nothing.
//
//   tiled-matmul [N [REPETITIONS]]     defaults 1024, 10
//
// Beside: lab-mmm --precision f32 (mmm-ab is the basic kernel, mmm the tiled one).
#include "float_product.h"

// Each thread reads its row of d_M and its column of d_N from global memory.
template <int TILE_WIDTH>
__global__ void MatrixMulKernel(float* d_M, float* d_N, float* d_P, int Width) {
    int Row = blockIdx.y * TILE_WIDTH + threadIdx.y;
    int Col = blockIdx.x * TILE_WIDTH + threadIdx.x;
    float Pvalue = 0;
    for (int k = 0; k < Width; ++k) {
        Pvalue += d_M[Row * Width + k] * d_N[k * Width + Col];
    }
    d_P[Row * Width + Col] = Pvalue;
}

// Phase m: every thread of the block loads one element of the m-th tile of d_M and of d_N into
// shared memory, then all use the whole tiles.
template <int TILE_WIDTH>
__global__ void MatrixMulTiledKernel(float* d_M, float* d_N, float* d_P, int Width) {
    __shared__ float ds_M[TILE_WIDTH][TILE_WIDTH];
    __shared__ float ds_N[TILE_WIDTH][TILE_WIDTH];
    int bx = blockIdx.x, by = blockIdx.y, tx = threadIdx.x, ty = threadIdx.y;
    int Row = by * TILE_WIDTH + ty;
    int Col = bx * TILE_WIDTH + tx;
    float Pvalue = 0;
    for (int m = 0; m < Width / TILE_WIDTH; ++m) {
        ds_M[ty][tx] = d_M[Row * Width + m * TILE_WIDTH + tx];
        ds_N[ty][tx] = d_N[Col + (m * TILE_WIDTH + ty) * Width];
        __syncthreads();
        for (int k = 0; k < TILE_WIDTH; ++k) {
            Pvalue += ds_M[ty][k] * ds_N[k][tx];
        }
        __syncthreads();
    }
    d_P[Row * Width + Col] = Pvalue;
}

int main(int argc, char** argv) {
    int Width, repetitions;
    if (!read_sizes(argc, argv, Width, repetitions)) return 1;
    Operands o = make_operands(Width);
    bool pass = run_product("mmm-ab", 16, [&](dim3 grid, dim3 block) { MatrixMulKernel<16><<<grid, block>>>(o.d_A, o.d_B, o.d_C, Width); }, o, repetitions);
    pass &= run_product("mmm", 16, [&](dim3 grid, dim3 block) { MatrixMulTiledKernel<16><<<grid, block>>>(o.d_A, o.d_B, o.d_C, Width); }, o, repetitions);
    pass &= run_product("mmm", 32, [&](dim3 grid, dim3 block) { MatrixMulTiledKernel<32><<<grid, block>>>(o.d_A, o.d_B, o.d_C, Width); }, o, repetitions);
    free_operands(o);
    return print_result(pass);
}
