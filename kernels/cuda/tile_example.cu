// tile_example.cu: the Greek slides' "processing block (0, 0) for TILE_WIDTH = 2", recorded by the GPU.
// Compiled with -DBLOCK_SIZE=2 (kernels::TILE_EXAMPLE_WIDTH) and running mmm.cu's tiled mmm<T> itself,
// unchanged: only its element type is ours. A Traced element is a double that knows which element of
// Md or Nd it is, and writes down every store of it into shared memory (as[ty][tx] = ..., bs[ty][tx] =
// ...) and every product of two of them (as[ty][k] * bs[k][tx]): who did it, in which phase, where.
// What lab-mmm --tile-example prints is that record, checked against what the slide says. mmm.cu's own
// kernels (mmm_f64 and the rest) come along at BLOCK_SIZE 2; the host launches mmm_traced alone.
#include "mmm.cu"

// Which matrix an element comes from. A product, a sum or the zero padding comes from none.
enum Origin : int { MD = 0, ND = 1, COMPUTED = 2 };

// An element's origin: Md(row, col), Nd(row, col), or COMPUTED with row = col = -1.
struct Source {
    int matrix;
    int row;
    int col;
};

// One store into a shared tile, by the thread, phase and matrix of its slot in Trace::loads.
struct Load {
    int written;              // how many times the slot was written: exactly once when all is well
    Source source;            // the element stored
    unsigned shared_address;  // where in the block's shared memory it went (as or bs, [ty][tx])
};

// One product as[ty][k] * bs[k][tx], by the thread, phase and k of its slot in Trace::products.
struct Product {
    int written;
    int from_shared;  // 1 when both factors were read from shared memory
    Source m;
    Source n;
};

// Where the records go: set by the host (cuModuleGetGlobal, then a copy) before the launch, so that
// mmm_traced takes mmm_f64's parameters and nothing else, and the tiles are all its shared memory (a
// __shared__ copy of this struct, set by one thread, is split by the compiler into scalars whose
// padding differs by architecture: 220 bytes of shared memory on sm_75, 224 on sm_120).
struct Trace {
    Load* loads;          // [block][thread][phase][MD or ND], blocks and threads row-major
    Product* products;    // [block][thread][phase][k]
    unsigned* unplaced;   // records without a slot (padding, or an element no phase has): must stay 0
    int phases;           // k / BLOCK_SIZE, rounded up
};
__constant__ Trace trace;

// The slot of this thread, block and phase: blocks and threads in row-major order, as the host reads
// them.
__device__ inline int thread_slot(int phase) {
    const int block = blockIdx.y * gridDim.x + blockIdx.x;
    const int thread = threadIdx.y * blockDim.x + threadIdx.x;
    return (block * blockDim.x * blockDim.y + thread) * trace.phases + phase;
}

// The element type. Its default constructor does nothing, as a double's: a __shared__ array may not
// have one that does (nvcc refuses any dynamic initialization of shared memory).
struct Traced {
    double value;
    Source source;

    Traced() = default;
    // `T sum = 0` and the padding `T(0)` of mmm: a value that comes from no matrix.
    __device__ Traced(double v) : value(v), source{COMPUTED, -1, -1} {}

    // The copy into a tile: mmm's `as[ty][tx] = ...` and `bs[ty][tx] = ...` are the only assignments
    // whose target is in shared memory (c(row, col) = sum writes global memory).
    __device__ Traced& operator=(const Traced& other) {
        value = other.value;
        source = other.source;
        if (__isShared(this)) {
            record_load();
        }
        return *this;
    }

    __device__ Traced& operator+=(const Traced& other) {
        value += other.value;
        return *this;
    }

    // The phase of a load follows from its k: Md(row, k) or Nd(k, col) is in phase k / BLOCK_SIZE.
    __device__ void record_load() const {
        const int k = source.matrix == MD ? source.col : source.row;
        const int phase = k / BLOCK_SIZE;
        if (source.matrix == COMPUTED || k < 0 || phase >= trace.phases) {
            atomicAdd(trace.unplaced, 1u);
            return;
        }
        Load& load = trace.loads[thread_slot(phase) * 2 + source.matrix];
        load.written += 1;  // the slot is this thread's alone
        load.source = source;
        load.shared_address = (unsigned)__cvta_generic_to_shared(this);
    }
};

// mmm's `as[ty][k] * bs[k][tx]`: recorded by the k of Md's factor, Md(row, k).
__device__ Traced operator*(const Traced& m, const Traced& n) {
    const int k = m.source.col;
    const int phase = k / BLOCK_SIZE;
    if (m.source.matrix != MD || k < 0 || phase >= trace.phases) {
        atomicAdd(trace.unplaced, 1u);
    } else {
        Product& product = trace.products[thread_slot(phase) * BLOCK_SIZE + k % BLOCK_SIZE];
        product.written += 1;
        product.from_shared = __isShared(&m) && __isShared(&n);
        product.m = m.source;
        product.n = n.source;
    }
    return Traced(m.value * n.value);
}

// mmm.cu's tiled kernel on Traced elements; blocks of BLOCK_SIZE x BLOCK_SIZE threads, one per element
// of C, as for mmm_f64. Its shared memory is mmm's two tiles alone: 2 * BLOCK_SIZE^2 Traced elements.
extern "C" __global__ void mmm_traced(MatrixView<Traced> a, MatrixView<Traced> b, MatrixView<Traced> c) { mmm(a, b, c); }
