#!/usr/bin/env bash
# Issue 62, run 2 (bundle in .gpu96/: the dev-profile labs, grader and feedback of the final code, laid
# out as gpu-bundle.sh lays out its grading part, with its grade.sh): grading from the bundle alone,
# run from a folder outside the repository: week 3 with --feedback (pages, "N of M", the starter, the
# rule cap), weeks 5 and 6 (the untouched starter, which scored 61.5 to 88.9 before), week 1 twice
# (the same verdicts); and a machine whose ncu may not read the counters (results/h200/issue62/
# fake-ncu.sh): a student's own --check passes with the measured rules left to grading, the grader's
# rows are MACHINE. Into $OUT/issue62-2.tgz.
set -u
repo=$PWD
work=$(mktemp -d)
mkdir -p "$work/bundle" && tar -C "$work/bundle" -xzf .gpu96/bundle.tgz
bundle=$work/bundle/b
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/issue62-2.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
# folder NAME FILES...: a submissions folder of the given files, each under its own name.
folder() { local dir=$logs/subs-$1; shift; mkdir -p "$dir"; for f in "$@"; do cp "$repo/$f" "$dir/$(basename "$(dirname "$f")")-$(basename "$f")"; done; }
folder w3 kernels/cuda/mmm.cu assignments/03-mmm-tiled/mmm.cu assignments/03-mmm-tiled/honest/flat-tiles.cu \
    assignments/03-mmm-tiled/honest/padded-tiles.cu assignments/03-mmm-tiled/broken/naive-body-in-tiled.cu \
    assignments/03-mmm-tiled/broken/missing-syncthreads.cu
cp "$repo/kernels/cuda/mmm.cu" "$logs/subs-w3/renamed-copy.cu"
folder w5 reference/weeks/pipeline.cu assignments/05-streams/pipeline.cu assignments/05-streams/broken/one-stream.cu
folder w6 reference/weeks/zero_copy.cu assignments/06-pinned-mapped/zero_copy.cu assignments/06-pinned-mapped/broken/copies-anyway.cu
folder w1 kernels/cuda/simpson.cu assignments/01-simpson/simpson.cu assignments/01-simpson/honest/middle-first.cu assignments/01-simpson/broken/off-by-one.cu
cd "$work"
t w3-feedback 200 bash "$bundle/grade.sh" --feedback "$logs/pages-w3" 03-mmm-tiled "$logs/subs-w3" --out "$logs/w3.csv"
t w5 200 bash "$bundle/grade.sh" 05-streams "$logs/subs-w5" --out "$logs/w5.csv"
t w6 120 bash "$bundle/grade.sh" 06-pinned-mapped "$logs/subs-w6" --out "$logs/w6.csv"
t w1-first 60 bash "$bundle/grade.sh" 01-simpson "$logs/subs-w1" --out "$logs/w1-first.csv"
t w1-second 60 bash "$bundle/grade.sh" 01-simpson "$logs/subs-w1" --out "$logs/w1-second.csv"
t no-counters-student 60 env NCU="$repo/results/h200/issue62/fake-ncu.sh" "$bundle/bin/lab-mmm" --kernel-source "$repo/kernels/cuda/mmm.cu" --kernel tiled --check
mkdir -p "$logs/subs-one" && cp "$repo/kernels/cuda/mmm.cu" "$logs/subs-one/ours.cu"
t no-counters-grader 60 env NCU="$repo/results/h200/issue62/fake-ncu.sh" bash "$bundle/grade.sh" 03-mmm-tiled "$logs/subs-one" --out "$logs/no-counters.csv"
cd "$logs"
python3 - > "$logs/summary.log" 2>&1 <<'PY'
import csv, glob
for path in sorted(glob.glob("*.csv")):
    rows = list(csv.reader(open(path, newline="", encoding="utf-8")))
    header = rows[0]
    print(path)
    for row in rows[1:]:
        print("  ", row[0], "|", row[header.index("passed")], "|", row[header.index("score")], "|", row[header.index("note")][:100])
a = list(csv.reader(open("w1-first.csv"))); b = list(csv.reader(open("w1-second.csv")))
h = a[0]; cols = h[2:h.index("passed") + 1] + ["score"]
same = sum(1 for x, y in zip(a[1:], b[1:]) if [x[h.index(c)] for c in cols] == [y[h.index(c)] for c in cols])
print(f"week 1 graded twice: {same} of {len(a) - 1} rows with the same verdicts and score")
PY
ls "$logs/pages-w3" > "$logs/pages.txt" 2>&1
tar -C "$logs" -czf "$OUT/issue62-2.tgz" .
cat "$logs/summary.log"; tail -qn 1 "$logs"/*.log | grep exit; grep -E "measured|Solution|checks that ran" "$logs/no-counters-student.log" | head -8
