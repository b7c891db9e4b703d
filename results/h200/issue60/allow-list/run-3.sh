#!/usr/bin/env bash
# Issues 60 and 66 on the GPU, run 3 (the bundle of run 1): the forged trace again, now written into
# the recorder's pipe alone (run 2's went into every pipe and broke CUDA's own), with what its program
# printed; then week 5's legal cases, 100 random ones per program beside the fixed ones (issue 66).
# Into $OUT/logs.tgz, re-made after every step.
set -u
mkdir -p .gpu70/b && tar -C .gpu70/b -xzf .gpu70/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu70/b/bin B=$PWD/.gpu70/b/bin U=$PWD/.gpu70/b/bin-unboxed T=$PWD/.gpu70/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
t forges-trace 60 $B/lab-streams --program-source assignments/05-streams/adversarial/forges-trace.cu --show-output --check
LAB_LEGAL_CASES=100 t week5-legal 480 $T/streams --include-ignored --test-threads 1 --nocapture week_5_our_solutions_pass_legal_cases
tar -C "$logs" -czf "$OUT/logs.tgz" .
tail -n 4 "$logs"/*.log | grep -v "^$"
grep -h "^forge:\|trace is not usable" "$logs"/forges-trace.log | sort | uniq -c
