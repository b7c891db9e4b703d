#!/bin/bash
# Step 7's new kernel (issue 41) on the GPU machine, from the repository root: release builds of lab-mmm
# and its GPU tests in .gpu-step7/. Every log goes to /tmp/r and, after each command, into
# $OUT/results.tar (what comes back is at most 8 files).
B=.gpu-step7
R=/tmp/r
mkdir -p $R
export LAB_BIN_DIR=$B
pack() { tar -C $R -cf "$OUT/results.tar" . ; }
stamp() { echo "$1: ${SECONDS} s since the start" >> $R/times.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
date -u +%Y-%m-%d >> $R/gpu.txt
for i in 1 2; do
  timeout 60 $B/lab-mmm --ladder --precision f64 --random 4096 > $R/ladder-f64-4096-$i.log 2>&1; stamp "4096 $i rc $?"; pack
done
timeout 120 $B/lab-mmm --ladder --precision f64 --random 8192 > $R/ladder-f64-8192.log 2>&1; stamp "8192 rc $?"; pack
timeout 40 $B/lab-mmm --ladder --precision f64 --random 1024 > $R/ladder-f64-1024.log 2>&1; stamp "1024 rc $?"; pack
timeout 40 $B/lab-mmm --ladder --precision f64 --size 256 8192 256 > $R/ladder-f64-256x8192x256.log 2>&1; stamp "thin rc $?"; pack
timeout 90 $B/lab-mmm --ladder --sweep --precision f64 --plot $R/sweep-f64.svg > $R/sweep-f64.log 2>&1; stamp "sweep rc $?"; pack
timeout 150 $B/gpu-mmm --ignored --test-threads 1 --nocapture every_step_of_the_ladder split_k_splits hopper_steps cublas_in_tf32 > $R/test-ladder.log 2>&1; stamp "tests rc $?"; pack
# ncu on one launch of step 7 and of cuBLAS's DGEMM at 4096 (the second of each), if time is left.
M=sm__cycles_elapsed.avg,sm__inst_executed_pipe_tensor_op_dmma.sum,sm__pipe_tensor_op_dmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__inst_executed.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,gpu__time_duration.sum
for k in mma_tiled_f64 xmma_gemm_f64; do
  [ $SECONDS -lt 300 ] || { echo "ncu $k skipped: ${SECONDS} s" >> $R/times.txt; continue; }
  echo "## ncu --kernel-name regex:$k --launch-skip 1 --launch-count 1" >> $R/ncu-4096.log
  timeout 60 /usr/local/cuda/bin/ncu --kernel-name regex:$k --launch-skip 1 --launch-count 1 --metrics $M \
    $B/lab-mmm --ladder --precision f64 --random 4096 --repetitions 1 2>&1 | grep -v '^==PROF== Profiling' >> $R/ncu-4096.log
  stamp "ncu $k"; pack
done
cat $R/times.txt
grep -h "^| 7\.\|^| 10\.\|^| cuBLAS\|^Result\|^test result\|FAILED\|panicked" $R/*.log
