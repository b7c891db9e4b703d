// mapped.cu: where zero-copy (mapped) host memory pays: every element touched once.

// The Korean notes' zero-copy vectorAdd: c = a + b, read and written over the bus when the pointers
// are mapped host memory.
extern "C" __global__ void vector_add(const float* a, const float* b, float* c, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) c[i] = a[i] + b[i];
}

// Writes only: out[i] = (i mod 1000) / 4, no reads at all, the case the slides call best for mapped
// memory.
extern "C" __global__ void write_only(float* out, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)(i % 1000) * 0.25f;
}
