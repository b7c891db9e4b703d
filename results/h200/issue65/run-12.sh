#!/usr/bin/env bash
# Issue 65, run 12 (one H200): how long a kernel that prints one line from each thread takes, with
# the printf FIFO at its default, at 16384 bytes (the driver makes that 524288) and at 256 MB, on
# 255 x 255 and 1000 x 1000 threads, three launches each (run-12/printf-fifo.cu, built there; the
# lines go to /dev/null, the times to stderr). Each size and FIFO at most 60 s.
set -u
cd "$(dirname "$0")/run-12"
/usr/local/cuda/bin/nvcc -O2 -arch=sm_90 -o "${TMPDIR:-/tmp}/printf-fifo" printf-fifo.cu
for n in 255 1000; do
  for fifo in 0 16384 268435456; do timeout 60 "${TMPDIR:-/tmp}/printf-fifo" "$fifo" "$n" >/dev/null; done
done 2>&1
