#!/usr/bin/env bash
# Issue 65, run 93 (one H200, the device time left): the committed form of run 92's B, the grader
# setting CUDA_DEVICE_MAX_CONNECTIONS=1 for each kernel week's lab (grader's Lab::on_gpu), with
# c9058df's lab-mmm (.gpu293z/c.tgz, bin). The first 12 of a class of week-3 copies with --jobs 12 for
# at most 70 s, /proc/PID/environ of every lab-mmm, compute-sanitizer and ncu process every 0.2 s
# (environ-summary.txt: how many processes had which value), and the kept outputs against run 10's
# --jobs 1. Into $OUT/run-93/.
set -u
mkdir -p .gpu293 && tar -C .gpu293 -xzf .gpu293z/c.tgz
export LAB_BIN_DIR=$(realpath .gpu293/bin)
logs=$OUT/run-93 work=$(mktemp -d)
mkdir -p "$logs"
bash scripts/make-class.sh 03-mmm-tiled 12 "$work/class" >"$logs/make-class.log" 2>&1
cp "$work/class/originals.txt" "$logs/class-originals.txt"
(while :; do
  for pid in $(pgrep -f 'lab-mmm|compute-sanitizer|ncu'); do
    value=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep '^CUDA_DEVICE_MAX_CONNECTIONS=' || echo unset)
    echo "$pid $value $(cat "/proc/$pid/comm" 2>/dev/null)"
  done
  sleep 0.2
done) >"$logs/environ.txt" 2>/dev/null &
watcher=$!
timeout -k 5 70 bash assignments/grade.sh --jobs 12 03-mmm-tiled "$work/class" --out "$logs/class.csv" \
  --keep "$logs/checks" >"$logs/grade.log" 2>&1
echo "grade.sh rc=$?" >>"$logs/grade.log"
kill "$watcher"
sort -u "$logs/environ.txt" | awk '{print $2, $3}' | sort | uniq -c >"$logs/environ-summary.txt"
python3 results/h200/issue65/same-verdicts.py kept-runs "$logs/class-originals.txt" results/h200/issue65/run-10/j1-checks \
  "$logs/checks" >"$logs/same-verdicts.log" 2>&1
echo "same-verdicts rc=$?" >>"$logs/same-verdicts.log"
cat "$logs/environ-summary.txt"; tail -3 "$logs/grade.log"; tail -3 "$logs/same-verdicts.log"
