mkdir -p /tmp/m
cat > /tmp/m/m.cu <<'CU'
#include <cstdio>
int main(){ void* p; cudaError_t e = cudaMalloc(&p, 1<<20); printf("cudaMalloc: %s; ", cudaGetErrorString(e)); float* h; e = cudaHostAlloc((void**)&h, 1<<20, 0); printf("cudaHostAlloc: %s\n", cudaGetErrorString(e)); return 0; }
CU
/usr/local/cuda/bin/nvcc -o /tmp/m/m /tmp/m/m.cu 2>&1 | tail -2
for n in $(seq 0 15); do echo "== $n: minus $(SKIP=1 LL=procminus$n .gpu61/probe-bin /tmp/m/m 2>&1 | head -1 | cut -c1-40) | only $(SKIP=1 LL=proc$n .gpu61/probe-bin /tmp/m/m 2>&1 | head -1 | cut -c1-40)"; done
