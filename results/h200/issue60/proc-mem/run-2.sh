#!/usr/bin/env bash
# Issue 60, run 2: which /proc files a CUDA program opens and how (run 1: in the new box
# cudaHostAlloc failed, "OS call failed"). proc-opens.c logs every open of a /proc path;
# host-alloc.cu makes the program weeks' calls. Outside any box. Into $OUT/proc-mem-2.tgz.
set -u
d=results/h200/issue60/proc-mem
logs=$(mktemp -d) && w=$(mktemp -d)
gcc -shared -fPIC -O1 -o $w/proc-opens.so $d/proc-opens.c -ldl > $logs/build.log 2>&1
/usr/local/cuda/bin/nvcc -o $w/host-alloc $d/host-alloc.cu >> $logs/build.log 2>&1
LD_PRELOAD=$w/proc-opens.so $w/host-alloc > $logs/opens.log 2>&1
which strace >> $logs/build.log 2>&1
tar -C "$logs" -czf "$OUT/proc-mem-2.tgz" .
cat $logs/build.log; sort $logs/opens.log | uniq -c
