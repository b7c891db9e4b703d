#!/usr/bin/env bash
# Issue 62, run 4 (one H200): the bundle as scripts/gpu-bundle.sh itself made it (--no-dev, from the
# kernel weeks' KernelWeek code), unpacked outside the repository, grades every kernel week through
# its own grade.sh from a folder outside the repository: weeks 1 and 3 on run 1's folders (compared
# with run 1's CSVs: the same verdicts and scores), weeks 2, 4 and 7 on all their files (ours, the
# starter, broken, red-team and honest). Into $OUT/issue62-4.tgz.
set -u
repo=$PWD
work=$(mktemp -d)
tar -C "$work" -xzf .gpu98/bundle.tgz
bundle=$work/gpu-bundle
logs=$(mktemp -d)
t() { local name=$1 limit=$2; shift 2; { echo "\$ $*"; start=$(date +%s%N); timeout "$limit" "$@"; code=$?; echo "exit $code, wall $(( ($(date +%s%N) - start) / 1000000 )) ms"; } >"$logs/$name.log" 2>&1; tar -C "$logs" -czf "$OUT/issue62-4.tgz" .; }
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; uname -r; date -u; } > "$logs/gpu.txt"
# folder WEEK OURS STARTER COUNT: the submissions folder of a week, as run 1 made it.
folder() {
    local dir=$logs/subs-$1 kind
    mkdir -p "$dir"
    for kind in honest broken adversarial; do
        ls "$repo/assignments/$1/$kind/"*.cu 2>/dev/null | head -n "$4" | while read -r f; do cp "$f" "$dir/$kind-$(basename "$f")"; done
    done
    cp "$repo/$2" "$dir/ours.cu"
    cp "$repo/$3" "$dir/starter.cu"
}
folder 01-simpson kernels/cuda/simpson.cu assignments/01-simpson/simpson.cu 99
folder 03-mmm-tiled kernels/cuda/mmm.cu assignments/03-mmm-tiled/mmm.cu 4
folder 02-mmm-ab kernels/cuda/mmm.cu assignments/02-mmm-ab/mmm.cu 99
folder 04-constant-tracer kernels/cuda/tracer.cu assignments/04-constant-tracer/tracer.cu 99
folder 07-dynamic-parallelism kernels/cuda/adaptive_simpson.cu assignments/07-dynamic-parallelism/adaptive_simpson.cu 99
cd "$work"
ls -la "$bundle" > "$logs/bundle.txt"
t help 10 bash "$bundle/grade.sh" --help
for week in 01-simpson 03-mmm-tiled 02-mmm-ab 04-constant-tracer 07-dynamic-parallelism; do
    t "$week" 200 bash "$bundle/grade.sh" "$week" "$logs/subs-$week" --out "$logs/$week.csv"
done
cd "$logs"
python3 "$repo/results/h200/issue62/run-1/compare.py" "$repo/results/h200/issue62/run-1/01-simpson-new.csv" 01-simpson.csv > compare.log 2>&1
python3 "$repo/results/h200/issue62/run-1/compare.py" "$repo/results/h200/issue62/run-1/03-mmm-tiled-new.csv" 03-mmm-tiled.csv >> compare.log 2>&1
python3 - > summary.log 2>&1 <<'PY'
import csv, glob
for path in sorted(glob.glob("*.csv")):
    rows = list(csv.reader(open(path, newline="", encoding="utf-8")))
    header = rows[0]
    print(path)
    for row in rows[1:]:
        print("  ", row[0], "|", row[header.index("passed")], "|", row[header.index("score")], "|", row[header.index("note")][:90])
PY
tar -C "$logs" -czf "$OUT/issue62-4.tgz" .
cat compare.log summary.log; tail -qn 1 "$logs"/*.log | grep exit
