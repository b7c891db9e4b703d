#!/usr/bin/env bash
# Issue 60 on the GPU, run 5 (the bundle of run 1): nothing of a hidden case and no folder of the
# grading machine reaches a student's page. grade.sh grades week 1 with a hidden case file, with
# --feedback and --feedback-hide-cases: ours, the starter, a kernel that includes the case file and
# one that does not compile; then every student's page (not the teacher's class page) is searched
# for the cases' lines and numbers and for /tmp/ paths.
# Into $OUT/logs.tgz, re-made after every step.
set -u
mkdir -p .gpu70/b && tar -C .gpu70/b -xzf .gpu70/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu70/b/bin B=$PWD/.gpu70/b/bin U=$PWD/.gpu70/b/bin-unboxed T=$PWD/.gpu70/b/tests
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/logs.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
top=$(mktemp -d); cases=$top/hidden-cases.txt subs=$top/submissions fb=$top/feedback
printf 'sin 100 200 999999 999\npeak 0.29 0.31 65536 512\n' > "$cases"
mkdir "$subs"; cp kernels/cuda/simpson.cu "$subs/ours.cu"; cp assignments/01-simpson/simpson.cu "$subs/starter.cu"
printf '#include "%s"\n__global__ void k() {}\n' "$cases" > "$subs/includes-the-cases.cu"
printf 'this is not CUDA\n' > "$subs/does-not-compile.cu"
t grade 300 bash assignments/grade.sh --cases "$cases" --feedback "$fb" --feedback-hide-cases 01-simpson "$subs"
{ ls -R "$fb"; echo
  for page in $(find "$fb" -maxdepth 1 -type f \( -name '*.html' -o -name '*.md' \) ! -name 'index.*'); do
    echo "$(basename "$page"): case lines or numbers $(grep -c 'sin 100\|0\.29\|0\.31\|999999\|65536' "$page"), /tmp/ paths $(grep -c '/tmp/' "$page")"
  done; } > "$logs/pages.log" 2>&1
cp -r "$fb" "$logs/feedback"
tar -C "$logs" -czf "$OUT/logs.tgz" .
tail -n 12 "$logs"/*.log | grep -v "^$"
