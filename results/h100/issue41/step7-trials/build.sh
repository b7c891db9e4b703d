#!/bin/bash
# Local build (no GPU, no cuBLAS here): the kernels' object for sm_90 with ptxas -v, one line per kernel.
cd "$(dirname "$0")"
NVCC=${NVCC:-/work/main/.toolchain/cuda/bin/nvcc}
$NVCC -std=c++17 -arch=sm_90 -O3 -Xptxas -v -c dgemm_kernels.cu -o dgemm_kernels.o 2>&1 | tee build.log | grep -E "error|warning" 
grep -E "Compiling|registers|spill" build.log | sed 's/ptxas info    : //' | paste - - - | sed -E "s/Compiling entry function '_Z[0-9]+(k8|orig)_kernelI[0-9]*(K8|Orig)I/\1 /; s/EEEv10.*for .sm_90.//; s/Li//g; s/E/,/g" | awk -F'\t' '{print $1 " |" $3 " |" $2}' > ptxas.txt
cat ptxas.txt
