#!/usr/bin/env bash
# Issues 66 and 60 on the GPU, run 4 (bundle of 65e31a8 in .gpu67/): after run 3 found every case of a
# marked check FAULT (the case children waited for a key), grade.sh with real labs again (week 1:
# ours, the starter, a broken kernel; week 5's mmm-streamed on tiny products: ours and the starter),
# the mark's GPU test, and the program weeks' tests whose rules run 3 or the margins of issue 66 touch.
# Into $OUT/logs.tgz, re-made after every step.
set -u
mkdir -p .gpu67/b && tar -C .gpu67/b -xzf .gpu67/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu67/b/bin B=$PWD/.gpu67/b/bin T=$PWD/.gpu67/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t simpson-mark 60 $T/simpson --include-ignored --test-threads 1 week_1_a_marked_check
subs=$(mktemp -d); cp kernels/cuda/simpson.cu "$subs/ours.cu"; cp assignments/01-simpson/simpson.cu "$subs/starter.cu"; cp assignments/01-simpson/broken/off-by-one.cu "$subs/off-by-one.cu"
t week1-grade 90 bash assignments/grade.sh 01-simpson "$subs"
printf '3 7 1\n16 32 2\n64 8 3\n' > "$logs/tiny-products.txt"
subs=$(mktemp -d); cp reference/weeks/mmm_streamed.cu "$subs/ours.cu"; cp assignments/05-streams/mmm_streamed.cu "$subs/starter.cu"
t week5-mmm-grade 120 bash assignments/grade.sh --cases "$logs/tiny-products.txt" 05-mmm-streamed "$subs"
t week6-mmm 120 $T/mapped --include-ignored --test-threads 1 week_6_mmm_streamed_and_pinned_is_judged
t week6-programs 150 $T/mapped --include-ignored --test-threads 1 week_6_programs_are_judged
t week5-programs 200 $T/streams --include-ignored --test-threads 1 week_5_programs_are_judged
tail -n 3 "$logs"/*.log
