#!/usr/bin/env bash
# Issue 65: weeks 4 and 7 (the other measured weeks) graded by grade.sh with --jobs JOBS, each
# week's honest, broken and adversarial corpus as one class, against run 27's --jobs 1 CSVs
# (same-verdicts.py rounds), what runs 53 and 56 did in their own scripts. With LAB_BIN_DIR set to
# the bundle's labs. Into DIR: each week's CSV, log, phases and comparison, and times.txt.
#
#   bash results/h200/issue65/weeks-run.sh JOBS DIR
set -u
[[ $# == 2 ]] || { echo "usage: weeks-run.sh JOBS DIR" >&2; exit 2; }
jobs=$1 logs=$2
mkdir -p "$logs"
for week in 04-constant-tracer 07-dynamic-parallelism; do
  subs=$(mktemp -d)
  for kind in honest broken adversarial; do
    for f in assignments/$week/$kind/*.cu; do cp "$f" "$subs/$kind-$(basename "$f")"; done
  done
  start=$(date +%s%N)
  LAB_PHASES=$logs/$week-phases.txt timeout 100 bash assignments/grade.sh --jobs "$jobs" "$week" "$subs" \
    --out "$logs/$week-j$jobs.csv" >"$logs/$week-j$jobs.log" 2>&1
  echo "$week --jobs $jobs: rc=$? $(( ($(date +%s%N) - start) / 1000000 )) ms" >>"$logs/times.txt"
  python3 results/h200/issue65/same-verdicts.py rounds results/h200/issue65/run-27/$week-j1.csv "$logs/$week-j$jobs.csv" \
    >"$logs/$week-same.txt" 2>&1
  echo "$week same verdicts as run 27's --jobs 1: rc=$?" >>"$logs/times.txt"
done
cat "$logs/times.txt" "$logs"/*-same.txt
