#!/usr/bin/env bash
# Issue 60 on the GPU, run 2 (the bundle of run 1): the sandbox's cost again (run 1 handed a shell
# function to timeout, which cannot run one), the forged trace with what its program printed (did it
# find the recorder's word?), and both program weeks' tests with our solutions, starters and broken
# programs under the new static checks. Into $OUT/logs.tgz, re-made after every step.
set -u
mkdir -p .gpu70/b && tar -C .gpu70/b -xzf .gpu70/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu70/b/bin B=$PWD/.gpu70/b/bin U=$PWD/.gpu70/b/bin-unboxed T=$PWD/.gpu70/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
# The sandbox's cost: the same check with the real lab (boxed) and the measurement build (no layer),
# alternated so that a warm cache favours neither; wall time of each whole --check.
cost() { local name=$1; shift; for i in 1 2 3 4 5; do for kind in boxed unboxed; do
  dir=$B; [[ $kind == unboxed ]] && dir=$U
  start=$(date +%s%N); "$dir/$@" > "$logs/$name-$kind-$i.out" 2>&1; code=$?
  echo "$name $kind run $i: exit $code, $(( ($(date +%s%N) - start) / 1000000 )) ms"; done; done; }
export -f cost; export logs
t cost-week3 200 bash -c 'cost "$@"' cost week3 lab-mmm --kernel-source kernels/cuda/mmm.cu --kernel tiled --check
t cost-week6-zero-copy 200 bash -c 'cost "$@"' cost week6-zero-copy lab-mapped --program-source reference/weeks/zero_copy.cu --unsandboxed --check
t forges-trace 60 $B/lab-streams --program-source assignments/05-streams/adversarial/forges-trace.cu --show-output --check
t week5-programs 240 $T/streams --include-ignored --test-threads 1 week_5_programs_are_judged
t week6-programs 150 $T/mapped --include-ignored --test-threads 1 week_6_programs_are_judged
tar -C "$logs" -czf "$OUT/logs.tgz" .
tail -n 3 "$logs"/*.log | grep -v "^$"
grep -h "run [0-9]:" "$logs"/cost-*.log
