#!/usr/bin/env bash
# Issue 65, run 93 (one H200; 283 of 300 graded by the limit): the committed form of run 92's B, the grader
# setting CUDA_DEVICE_MAX_CONNECTIONS=1 for each kernel week's lab (grader's Lab::on_gpu):
# .gpu293z/c.tgz holds bin/ with a bundle's grader, lab-mmm, feedback and libcupti.so.13 (from
# scripts/gpu-bundle.sh at a597c68 or later; lab-mmm as at c9058df). The whole class of 300
# with --jobs 16, for at most 550 s (run 92's rate gives about 510 s), and beside it every 0.5 s
# /proc/PID/environ of each lab-mmm, compute-sanitizer and ncu process (environ-summary.txt: how many
# processes had which value; "unset" also where a process's environ could not be read as it ended,
# and for lab-mmm's --list-cases, --help and --verify-mark, which the grader starts without the
# variable: they launch no kernel). Into $OUT/issue65-run-93.tgz (class-run.sh's files) and
# $OUT/run-93/.
set -u
mkdir -p .gpu293 && tar -C .gpu293 -xzf .gpu293z/c.tgz
logs=$OUT/run-93
mkdir -p "$logs"
(while :; do
  for pid in $(pgrep -f 'lab-mmm|compute-sanitizer|ncu'); do
    value=$(tr '\0' '\n' <"/proc/$pid/environ" 2>/dev/null | grep '^CUDA_DEVICE_MAX_CONNECTIONS=' || echo unset)
    echo "$pid $value $(cat "/proc/$pid/comm" 2>/dev/null)"
  done
  sleep 0.5
done) >"$logs/environ.txt" 2>/dev/null &
watcher=$!
bash results/h200/issue65/class-run.sh .gpu293 16 550 run-93
kill "$watcher"
sort -u "$logs/environ.txt" | awk '{print $2, $3}' | sort | uniq -c >"$logs/environ-summary.txt"
gzip "$logs/environ.txt"
cat "$logs/environ-summary.txt"
