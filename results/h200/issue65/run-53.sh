#!/usr/bin/env bash
# Issue 65, run 53 (one H200), the code of run 52: (1) weeks 4 and 7 (the other measured weeks,
# whose measured child now also makes its context before it takes the GPU): every honest, broken
# and adversarial submission through grade.sh with --jobs 4, CSVs against run 27's --jobs 1;
# (2) the class of 300 with --jobs 12 for 360 s (all the device time left), as run 52 did with 32,
# whose checks' measured children held the GPU longer beside more jobs (locks.py every 20 ms into
# $OUT/locks.tsv). The bundle: .gpu258/bin (.gpu258z/c.tgz carried).
set -u
tar xzf .gpu258z/c.tgz
logs=$OUT/weeks
mkdir -p "$logs"
export LAB_BIN_DIR=$PWD/.gpu258/bin
for week in 04-constant-tracer 07-dynamic-parallelism; do
  subs=$(mktemp -d)
  for kind in honest broken adversarial; do
    for f in assignments/$week/$kind/*.cu; do cp "$f" "$subs/$kind-$(basename "$f")"; done
  done
  start=$(date +%s%N)
  LAB_PHASES=$logs/$week-phases.txt timeout 100 bash assignments/grade.sh --jobs 4 "$week" "$subs" \
    --out "$logs/$week-j4.csv" --keep "$logs/$week-j4-checks" >"$logs/$week-j4.log" 2>&1
  echo "$week --jobs 4: rc=$? $(( ($(date +%s%N) - start) / 1000000 )) ms" >>"$logs/times.txt"
  python3 results/h200/issue65/same-verdicts.py rounds results/h200/issue65/run-27/$week-j1.csv "$logs/$week-j4.csv" \
    >"$logs/$week-same.txt" 2>&1
  echo "$week same verdicts as run 27's --jobs 1: rc=$?" >>"$logs/times.txt"
done
cat "$logs/times.txt" "$logs"/*-same.txt
python3 results/h200/issue65/locks.py watch "$OUT/locks.tsv" 20 &
watcher=$!
bash results/h200/issue65/class-run.sh .gpu258 12 360 run-53
kill "$watcher"
gzip "$OUT/locks.tsv"
