#!/usr/bin/env bash
# Issues 60 and 66 on the GPU, run 5 (the labs of run 4's bundle in .gpu67/, grade.sh of e62bb0d):
# grade.sh on week 1 with a compile error among the submissions, one of them in a file named like an
# old lab's no-GPU error: the notes name paths relative to SUBMISSIONS, and both compile errors are
# the students' 0.0, not MACHINE. Into $OUT/logs.tgz.
set -u
mkdir -p .gpu67/b && tar -C .gpu67/b -xzf .gpu67/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu67/b/bin
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
subs=$(mktemp -d); cp kernels/cuda/simpson.cu "$subs/ours.cu"; cp assignments/01-simpson/simpson.cu "$subs/starter.cu"
printf '#include <cuda_runtime.h>\n__global__ void simpson() { undefined_name = 1; }\n' > "$subs/compile error.cu"
cp "$subs/compile error.cu" "$subs/the cases need a GPU.cu"
t week1-grade 120 bash assignments/grade.sh 01-simpson "$subs"
tail -n 8 "$logs"/*.log
