#!/usr/bin/env bash
# Issue 62, run 3 (bundle in .gpu97/: lab-simpson, lab-mmm and the grader of 5c4cd7a), on two GPUs of
# one host: the default number of jobs (one per GPU) gives the CSV of --jobs 1 for week 1's honest,
# broken and our files; a --details file the machine cannot write (under /proc) is the machine's
# (exit code 3, "machine: ..."), and the grader's row for it is MACHINE, never 0. Into $OUT/issue62-3.tgz.
set -u
mkdir -p .gpu97/b && tar -C .gpu97/b -xzf .gpu97/bundle.tgz
export LAB_BIN_DIR=$PWD/.gpu97/b/bin GRADER=$PWD/.gpu97/b/bin/grader
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/issue62-3.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
subs=$logs/subs && mkdir -p "$subs"
for f in assignments/01-simpson/honest/*.cu assignments/01-simpson/broken/*.cu; do cp "$f" "$subs/$(basename "$(dirname "$f")")-$(basename "$f")"; done
cp kernels/cuda/simpson.cu "$subs/ours.cu"
t w1-default 200 bash assignments/grade.sh 01-simpson "$subs" --out "$logs/w1-default.csv"
t w1-one 200 bash assignments/grade.sh --jobs 1 01-simpson "$subs" --out "$logs/w1-one.csv"
t details-proc 60 .gpu97/b/bin/lab-simpson --kernel-source kernels/cuda/simpson.cu --check --csv --details /proc/no-such-folder/x.json
( cd "$logs" && python3 - > "$logs/compare.log" 2>&1 <<'PY'
import csv
a = list(csv.reader(open("w1-default.csv"))); b = list(csv.reader(open("w1-one.csv")))
h = a[0]; cols = h[2:h.index("passed") + 1] + ["score"]
same = sum(1 for x, y in zip(a[1:], b[1:]) if x[0] == y[0] and [x[h.index(c)] for c in cols] == [y[h.index(c)] for c in cols])
print(f"default jobs against --jobs 1: {same} of {len(a) - 1} rows with the same verdicts and score")
PY
)
grep -o "grading with [0-9]* jobs\|graded [0-9]* of [0-9]*" "$logs/w1-default.log" | tail -n 1 >> "$logs/compare.log"
tar -C "$logs" -czf "$OUT/issue62-3.tgz" .
cat "$logs/compare.log"; tail -qn 1 "$logs"/*.log | grep exit; grep -E "machine|error" "$logs/details-proc.log" | head -3
