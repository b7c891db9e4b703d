#!/usr/bin/env bash
# Issue 65, run 19 (one H200): after the floor rule came to judge the student's fastest timed launch
# instead of the median (cd1c6a1): weeks 1 and 4 graded through grade.sh with its defaults, every
# honest, broken and adversarial submission, so that no honest kernel meets the floor and the others
# keep their verdicts. Release grader and labs in .gpu238/bin (from .gpu238z/c.tgz). Into
# $OUT/issue65-run-19.tgz.
set -u
c=$PWD/.gpu238
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-19.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
for week in 01-simpson 04-constant-tracer; do
  for kind in honest broken adversarial; do
    [[ -d assignments/$week/$kind ]] || continue
    s=$(date +%s)
    timeout 200 bash assignments/grade.sh "$week" "assignments/$week/$kind" --out "$logs/$week-$kind.csv" \
      --keep "$logs/$week-$kind-checks" >"$logs/$week-$kind.log" 2>&1
    echo "$week $kind rc=$? $(( $(date +%s) - s )) s" >>"$logs/rc.txt"
  done
done
cat "$logs/rc.txt"; cat "$logs"/*.csv | cut -c1-200; grep -rh "faster than the GPU" "$logs" | head -5
