#!/usr/bin/env bash
# Issue 65: one class run on the GPU machine, what runs 41, 44 and 46 did each in a script of their
# own: a class of 300 week-3 copies (scripts/make-class.sh) graded by grade.sh with the bundle's
# grader and lab-mmm, for at most SECONDS, with LAB_PHASES, nvidia-smi's GPU use every 500 ms and
# vmstat every 2 s; then held-summary.py over the phases and same-verdicts.py against the --jobs 1
# outputs (run 10's; from run 97 on same-as-alone.sh, with run 97's for the kinds run 10 lacks);
# from run 65 on grade.sh's log with the time of each line, and the rate past the first minute;
# from run 69 on /proc/locks every 20 ms (locks.py watch, then its use and states of gpu-0.lock),
# which runs 65 to 67 ran beside it. Everything into $OUT/issue65-NAME.tgz.
#
#   bash results/h200/issue65/class-run.sh BUNDLE JOBS SECONDS NAME     (BUNDLE/bin: grader, lab-mmm)
set -u
[[ $# == 4 ]] || { echo "usage: class-run.sh BUNDLE JOBS SECONDS NAME" >&2; exit 2; }
bundle=$(realpath "$1") jobs=$2 seconds=$3 name=$4
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-$name.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$bundle/bin
work=$(mktemp -d)
bash scripts/make-class.sh 03-mmm-tiled 300 "$work/class" >"$logs/make-class.log" 2>&1
cp "$work/class/originals.txt" "$logs/class-originals.txt"
start=$(date +%s%N)
nvidia-smi --query-gpu=timestamp,utilization.gpu,memory.used --format=csv,noheader -lms 500 >"$logs/smi.csv" 2>&1 &
smi=$!
vmstat 2 >"$logs/vmstat.txt" 2>&1 &
vm=$!
python3 results/h200/issue65/locks.py watch "$logs/locks.tsv" 20 &
watcher=$!
# Each line of grade.sh's log begins with the seconds since the class began (from run 65 on).
LAB_PHASES=$logs/phases.txt timeout -k 10 "$seconds" bash assignments/grade.sh --jobs "$jobs" 03-mmm-tiled "$work/class" \
  --out "$logs/class-300.csv" --keep "$logs/class-300-checks" 2>&1 \
  | python3 -u -c 'import sys, time
t0 = float(sys.argv[1])
for line in sys.stdin:
    print(f"{time.time() - t0:7.2f} {line}", end="", flush=True)' "$(date +%s.%N)" >"$logs/class-300.log"
rc=${PIPESTATUS[0]}
took=$(( ($(date +%s%N) - start) / 1000000 ))
echo "class of 300: --jobs $jobs, rc=$rc $took ms" >>"$logs/times.txt"
# Past the first minute (the class's start, when nothing has ended yet): submissions a minute.
awk -v end="$(( took / 1000 ))" '$2 == "grade.sh:" && $3 == "graded" && $1 >= 60 { n++ }
  END { if (end > 60) printf "after the first 60 s: %d graded in %d s, %.1f a minute\n", n, end - 60, 60 * n / (end - 60) }' \
  "$logs/class-300.log" >>"$logs/times.txt"
# From run 95 on, how many were graded in each 30 s.
{ echo "graded in each 30 s:"; bash results/h200/issue65/windows.sh "$logs/class-300.log"; } >>"$logs/times.txt"
kill "$smi" "$vm" "$watcher"
gzip "$logs/locks.tsv"
{ python3 results/h200/issue65/locks.py use "$logs/locks.tsv.gz" gpu-0.lock
  python3 results/h200/issue65/locks.py states "$logs/locks.tsv.gz"; } >"$logs/locks-states.log" 2>&1
python3 results/h200/issue65/held-summary.py "$logs/phases.txt" "$(( took / 1000 ))" >"$logs/held-summary.log"
bash results/h200/issue65/same-as-alone.sh "$logs" >"$logs/same-verdicts.log" 2>&1
echo "same-verdicts rc=$?" >>"$logs/times.txt"
cat "$logs/times.txt" "$logs/held-summary.log" | head -30
head -8 "$logs/locks-states.log"
tail -5 "$logs/same-verdicts.log"
