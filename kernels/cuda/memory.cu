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
