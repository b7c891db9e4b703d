#!/bin/bash
# GPU tests on a857a1a: matrix, lab-streams, lab-pinned, lab-mapped, then every lab-mmm GPU test.
B=.gpu05
R=/tmp/r
mkdir -p $R
export LAB_BIN_DIR=$PWD/$B/bin
pack() { tar -C $R -cf "$OUT/results.tar" . ; }
stamp() { echo "$1: rc $2, ${SECONDS} s since the start" >> $R/times.txt; }
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader > $R/gpu.txt
for t in matrix streams pinned mapped; do timeout 120 $B/gpu-$t --ignored --test-threads 1 > $R/test-a857a1a-$t.log 2>&1; stamp $t $?; pack; done
timeout 420 $B/gpu-mmm --ignored --test-threads 1 > $R/test-a857a1a-lab-mmm.log 2>&1; stamp lab-mmm $?; pack
cat $R/times.txt
grep -h "^test result\|FAILED\|panicked" $R/*.log
