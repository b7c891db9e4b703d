#!/usr/bin/env bash
# Issue 60 on the GPU, run 1 (bundle of the allow-list change in .gpu70/): both program weeks' red
# teams (the new static checks: imports as an allow-list, system-call instructions; the trace against
# the process's wall time), the sandbox's cost (the labs
# built with `grading/unboxed-for-measurement` beside the real ones, alternated, 5 runs each), and a
# kept trace's clock beside the host's. Into $OUT/logs.tgz, re-made after every step.
set -u
mkdir -p .gpu70/b && tar -C .gpu70/b -xzf .gpu70/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu70/b/bin B=$PWD/.gpu70/b/bin U=$PWD/.gpu70/b/bin-unboxed T=$PWD/.gpu70/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t week5-red-team 150 $T/streams --include-ignored --test-threads 1 --nocapture week_5_red_team
t week6-red-team 100 $T/mapped --include-ignored --test-threads 1 --nocapture week_6_red_team
# The sandbox's cost: the same check with the real lab (boxed) and the measurement build (no layer),
# alternated so that a warm cache favours neither; wall time of each whole --check.
cost() { local name=$1; shift; for i in 1 2 3 4 5; do for kind in boxed unboxed; do
  dir=$B; [[ $kind == unboxed ]] && dir=$U
  start=$(date +%s%N); "$dir/$@" > "$logs/$name-$kind-$i.out" 2>&1; code=$?
  echo "$name $kind run $i: exit $code, $(( ($(date +%s%N) - start) / 1000000 )) ms"; done; done; }
t cost-week3 200 cost week3 lab-mmm --kernel-source kernels/cuda/mmm.cu --kernel tiled --check
t cost-week6-zero-copy 200 cost week6-zero-copy lab-mapped --program-source reference/weeks/zero_copy.cu --unsandboxed --check
t clock 60 bash -c "date +%s%N; $B/lab-streams --program-source reference/weeks/pipeline.cu --check --chronograms $logs/kept; date +%s%N; head -3 $logs/kept/*.trace | cut -c1-80"
tar -C "$logs" -czf "$OUT/logs.tgz" .
tail -n 3 "$logs"/*.log | grep -v "^$"
grep -h "run [0-9]:" "$logs"/cost-*.log
