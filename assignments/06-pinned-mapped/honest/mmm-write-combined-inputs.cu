// An honest submission (issue 61's corpus): the inputs in write-combined pinned memory, which the host only writes and the GPU reads.
// expect: PASS
// Made from reference/weeks/mmm_streamed_and_pinned.cu by `cargo run -p grading --bin templates` (assignments/README.md).

// mmm_streamed_and_pinned.cu: week 6 as a graded program, the German slides' "mmm-streamed-and-pinned":
// week 5's mmm_streamed.cu (COUNT products C_i = A_i * B_i of N x N doubles, each on its own stream)
// from pinned host memory, so that one product's copies can run while another's kernel does.
//
//   mmm_streamed_and_pinned COUNT N INPUT OUTPUT
//
// INPUT holds A_0, B_0, A_1, B_1, ... (row-major float64); OUTPUT gets C_0, C_1, ...
//
// The checker compares OUTPUT with its own CPU products, and reads the CUDA activity the program made:
// every matrix copied once, from pinned memory, COUNT streams that each carry a whole product,
// kernels beside copies, and a GPU time near the lab's own mmm-streamed-and-pinned.
#include <vector>

#include "course_program.h"

#define BLOCK_SIZE 16

// C = A * B for N x N row-major matrices, one BLOCK_SIZE x BLOCK_SIZE tile of C per block; N need not
// be a multiple of BLOCK_SIZE (the tiles at the edges are padded with zeros).
__global__ void mmm(const double* A, const double* B, double* C, int N) {
    __shared__ double As[BLOCK_SIZE][BLOCK_SIZE];
    __shared__ double Bs[BLOCK_SIZE][BLOCK_SIZE];
    const int row = blockIdx.y * BLOCK_SIZE + threadIdx.y;
    const int col = blockIdx.x * BLOCK_SIZE + threadIdx.x;
    double sum = 0;
    for (int k0 = 0; k0 < N; k0 += BLOCK_SIZE) {
        const int ka = k0 + threadIdx.x, kb = k0 + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = row < N && ka < N ? A[(size_t)row * N + ka] : 0.0;
        Bs[threadIdx.y][threadIdx.x] = kb < N && col < N ? B[(size_t)kb * N + col] : 0.0;
        __syncthreads();
        for (int k = 0; k < BLOCK_SIZE; ++k) sum += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < N && col < N) C[(size_t)row * N + col] = sum;
}

int main(int argc, char** argv) {
    if (argc != 5) {
        std::fprintf(stderr, "usage: %s COUNT N INPUT OUTPUT\n", argv[0]);
        return 2;
    }
    const int COUNT = (int)arg_int(argc, argv, 1, "COUNT");
    const int N = (int)arg_int(argc, argv, 2, "N");
    const size_t elements = (size_t)N * N, bytes = elements * sizeof(double);
    // A_i at in + 2 i N^2, B_i right after it; C_i at out + i N^2.
    double *in, *out;
    CHECK_CUDA(cudaHostAlloc((void**)&in, 2 * COUNT * bytes, cudaHostAllocWriteCombined));
    CHECK_CUDA(cudaMallocHost((void**)&out, COUNT * bytes));
    read_doubles(argv[3], in, 2 * COUNT * elements);
    double *A_gpu, *B_gpu, *C_gpu;  // every product's matrices, one after the other
    CHECK_CUDA(cudaMalloc((void**)&A_gpu, COUNT * bytes));
    CHECK_CUDA(cudaMalloc((void**)&B_gpu, COUNT * bytes));
    CHECK_CUDA(cudaMalloc((void**)&C_gpu, COUNT * bytes));
    const dim3 block(BLOCK_SIZE, BLOCK_SIZE);
    const dim3 grid((N + BLOCK_SIZE - 1) / BLOCK_SIZE, (N + BLOCK_SIZE - 1) / BLOCK_SIZE);

    std::vector<cudaStream_t> stream(COUNT);
    for (int i = 0; i < COUNT; ++i) {
        CHECK_CUDA(cudaStreamCreate(&stream[i]));
        double *A = A_gpu + i * elements, *B = B_gpu + i * elements, *C = C_gpu + i * elements;
        CHECK_CUDA(cudaMemcpyAsync(A, in + 2 * i * elements, bytes, cudaMemcpyHostToDevice, stream[i]));
        CHECK_CUDA(cudaMemcpyAsync(B, in + (2 * i + 1) * elements, bytes, cudaMemcpyHostToDevice, stream[i]));
        mmm<<<grid, block, 0, stream[i]>>>(A, B, C, N);
        CHECK_LAUNCH();
        CHECK_CUDA(cudaMemcpyAsync(out + i * elements, C, bytes, cudaMemcpyDeviceToHost, stream[i]));
    }
    // The join: the copies back are only queued; `out` holds the products once every stream is done.
    for (int i = 0; i < COUNT; ++i) CHECK_CUDA(cudaStreamSynchronize(stream[i]));
    for (int i = 0; i < COUNT; ++i) CHECK_CUDA(cudaStreamDestroy(stream[i]));

    write_doubles(argv[4], out, COUNT * elements);
    CHECK_CUDA(cudaFree(A_gpu));
    CHECK_CUDA(cudaFree(B_gpu));
    CHECK_CUDA(cudaFree(C_gpu));
    CHECK_CUDA(cudaFreeHost(in));
    CHECK_CUDA(cudaFreeHost(out));
    std::printf("mmm_streamed_and_pinned: %d products of %d x %d doubles: done\n", COUNT, N, N);
    return 0;
}
