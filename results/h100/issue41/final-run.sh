#!/bin/bash
# Final run of this stop (issue 41): item 1's phases, step 7/10 after the split rule and the rename,
# and the GPU tests the changes touch. Logs into $OUT/results.tar after each command.
B=.gpu04
R=/tmp/r
mkdir -p $R
export LAB_BIN_DIR=$B
pack() { tar -C $R -cf "$OUT/results.tar" . ; }
stamp() { echo "$1: rc $2, ${SECONDS} s since the start" >> $R/times.txt; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee $R/gpu.txt
date -u +%Y-%m-%d >> $R/gpu.txt
for i in 1 2 3; do LAB_PHASES=1 timeout 60 $B/lab-mmm --random 8192 --kernel tiled --repetitions 1 > $R/phases-final-8192-$i.log 2>&1; stamp "phases 8192 $i" $?; done
LAB_PHASES=1 timeout 90 $B/lab-mmm --random 20000 --kernel tiled --repetitions 1 > $R/phases-final-20000.log 2>&1; stamp "phases 20000" $?
for i in 1 2; do LAB_PHASES=1 timeout 30 $B/lab-mmm > $R/phases-final-default-$i.log 2>&1; stamp "default $i" $?; done
pack
timeout 60 $B/lab-mmm --ladder --precision f64 --random 4096 > $R/step7-final-ladder-f64-4096.log 2>&1; stamp "ladder 4096" $?
timeout 40 $B/lab-mmm --ladder --precision f64 --random 1024 > $R/step7-final-ladder-f64-1024.log 2>&1; stamp "ladder 1024" $?
timeout 90 $B/lab-mmm --ladder --sweep --precision f64 --plot $R/step7-final-sweep-f64.svg > $R/step7-final-sweep-f64.log 2>&1; stamp "sweep" $?
pack
timeout 60 $B/gpu-matrix --ignored --test-threads 1 > $R/test-final-matrix.log 2>&1; stamp "matrix tests" $?
timeout 300 $B/gpu-mmm --ignored --test-threads 1 every_step_of_the_ladder split_k_splits hopper_steps cublas_in_tf32 a_large_product every_kernel_precision copies_go_both weeks_2_and_3_the_solution_passes week_2_broken week_3_broken > $R/test-final-lab-mmm.log 2>&1; stamp "lab-mmm tests" $?
pack
cat $R/times.txt
grep -h "^phases\|^| 7\.\|^| 10\.\|^| cuBLAS\|^Result\|^test result\|FAILED\|panicked" $R/*.log
