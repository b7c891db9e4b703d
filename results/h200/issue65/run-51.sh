#!/usr/bin/env bash
# Issue 65, run 51 (one H200): where a measured run's hold of the GPU goes. The first 18 copies of
# the class (make-class.sh: the honest kernels and the first ten broken ones, traps and
# printf-every-thread among them) graded with --jobs 4, with LAB_PHASES (the measured child's own
# line: its context, modules, inputs, first launch and other launches) and locks.py watching
# /proc/locks (who holds the grader's GPU lock and ncu's own lock file, and when); then the first 12
# again with each ncu in a temporary folder of its own (ncu-own-tmp.sh). The bundle: the release
# grader and lab-mmm of this commit in .gpu257/bin (.gpu257z/c.tgz carried).
set -u
tar xzf .gpu257z/c.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-51.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$PWD/.gpu257/bin
work=$(mktemp -d)
bash scripts/make-class.sh 03-mmm-tiled 18 "$work/class" >"$logs/make-class.log" 2>&1
cp "$work/class/originals.txt" "$logs/class-originals.txt"
mkdir "$work/twelve"
cp "$work"/class/s00{01..12}-*.cu "$work/twelve/"
grade() {  # NAME FOLDER SECONDS
    python3 results/h200/issue65/locks.py watch "$logs/$1-locks.tsv" &
    local watcher=$! start=$(date +%s%N)
    LAB_PHASES=$logs/$1-phases.txt timeout "$3" bash assignments/grade.sh --jobs 4 03-mmm-tiled "$2" \
        --out "$logs/$1.csv" --keep "$logs/$1-checks" >"$logs/$1.log" 2>&1
    echo "$1: rc=$? $(( ($(date +%s%N) - start) / 1000000 )) ms" >>"$logs/times.txt"
    kill "$watcher"
    python3 results/h200/issue65/locks.py spans "$logs/$1-locks.tsv" >"$logs/$1-spans.txt"
    python3 results/h200/issue65/held-summary.py "$logs/$1-phases.txt" 600 >"$logs/$1-held.log"
}
grade shared "$work/class" 170
REAL_NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu) NCU=$PWD/results/h200/issue65/ncu-own-tmp.sh \
    grade own-tmp "$work/twelve" 120
python3 results/h200/issue65/same-verdicts.py kept-runs "$logs/class-originals.txt" results/h200/issue65/run-10/j1-checks \
    "$logs/shared-checks" >"$logs/same-verdicts-shared.log" 2>&1
python3 results/h200/issue65/same-verdicts.py kept-runs "$logs/class-originals.txt" results/h200/issue65/run-10/j1-checks \
    "$logs/own-tmp-checks" >"$logs/same-verdicts-own-tmp.log" 2>&1
cat "$logs/times.txt" "$logs/shared-held.log" "$logs/own-tmp-held.log"
grep "^#" "$logs"/*-spans.txt
tail -3 "$logs"/same-verdicts-*.log
