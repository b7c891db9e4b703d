#!/bin/bash
# On the GPU machine: link the locally built kernels (fallback: compile them here), run the table,
# then ncu on cuBLAS and the variants named in $NCU_VARIANTS. Logs to $OUT.
set -o pipefail
D="$(cd "$(dirname "$0")" && pwd)"
OUT=${OUT:-/tmp/dgemm_out}; mkdir -p "$OUT"
TAG=${TAG:-run}
NVCC=/usr/local/cuda/bin/nvcc
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm,power.limit --format=csv,noheader | tee "$OUT/$TAG.log"
if ! $NVCC -std=c++17 -arch=sm_90 -O3 -o /tmp/dgemm "$D/dgemm_main.cu" "$D/dgemm_kernels.o" -lcublas >"$OUT/$TAG-build.log" 2>&1; then
  echo "link of local object failed; compiling kernels here" | tee -a "$OUT/$TAG.log"
  $NVCC -std=c++17 -arch=sm_90 -O3 -Xptxas -v -o /tmp/dgemm "$D/dgemm_main.cu" "$D/dgemm_kernels.cu" -lcublas >>"$OUT/$TAG-build.log" 2>&1 || { cat "$OUT/$TAG-build.log"; exit 3; }
fi
timeout 300 /tmp/dgemm 2>&1 | tee -a "$OUT/$TAG.log"
if [ -n "$NCU_VARIANTS" ]; then
  timeout 200 /usr/local/cuda/bin/ncu --kernel-name regex:"xmma_gemm|k8_kernel|orig_kernel" --launch-skip 0 --launch-count 20 \
    --section SpeedOfLight --section WarpStateStats --section InstructionStats \
    --metrics sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__inst_executed_pipe_tensor_op_dmma.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio \
    /tmp/dgemm ncu "$NCU_VARIANTS" > "$OUT/$TAG-ncu.log" 2>&1
  tail -5 "$OUT/$TAG-ncu.log"
fi
