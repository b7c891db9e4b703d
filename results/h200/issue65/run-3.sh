#!/usr/bin/env bash
# Issue 65, run 3 (two H200s of one host): a kernel week's plain cases now hold the GPU alone for
# at most 5 s, and the near-limit programs time themselves with events after a warm-up. Release labs
# and grader in .gpu202/bin (from .gpu202z/c.tgz).
#   GPU 0: a class of 300 week-3 submissions (make-class.sh), --jobs 16 as on one H200 machine's 16
#          cores, at most 550 s.
#   GPU 1: weeks 5 and 6, their four test programs each checked at once (one GPU lock between them),
#          round after round while time is left.
# Into $OUT/issue65-run-3.tgz.
set -u
c=$PWD/.gpu202
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-3.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
start=$(date +%s%N)
elapsed() { local s=$1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
bash scripts/make-class.sh 03-mmm-tiled 300 "$work/class" >"$logs/make-class.log" 2>&1
cp "$work/class/originals.txt" "$logs/class-originals.txt"
sets() {  # WEEK SOLUTION STARTER BROKEN
  local dir=$work/$1; mkdir -p "$dir"
  cp "reference/weeks/$2" "$dir/ours.cu"; cp "assignments/$1/$3" "$dir/starter.cu"
  cp "assignments/$1/broken/$4" "$dir/$4"; cp "assignments/$1/honest/near-the-time-limit.cu" "$dir/near-the-time-limit.cu"
}
sets 05-streams pipeline.cu pipeline.cu synchronous-copies.cu
sets 06-pinned-mapped zero_copy.cu zero_copy.cu copies-anyway.cu
check_round() {  # GPU WEEK LAB ROUND
  local gpu=$1 week=$2 lab=$3 round=$4 pids=() s
  s=$(date +%s%N)
  for f in "$work/$week"/*.cu; do
    name=$(basename "$f" .cu)
    CUDA_VISIBLE_DEVICES=$gpu LAB_GPU_LOCK=$work/gpu-$gpu.lock timeout 200 "$c/bin/$lab" --program-source "$f" --check \
      >"$logs/$week-$name-$round.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  echo "$week round $round: $(elapsed "$s") ms" >>"$logs/times.txt"
}
(
  s=$(date +%s%N)
  CUDA_VISIBLE_DEVICES=0 timeout 550 bash assignments/grade.sh --jobs 16 03-mmm-tiled "$work/class" \
    --out "$logs/class-300.csv" --keep "$logs/class-300-checks" >"$logs/class-300.log" 2>&1
  echo "class of 300, --jobs 16, rc=$?: $(elapsed "$s") ms" >>"$logs/times.txt"
) &
(
  round=1
  # A round of both weeks took about 235 s in run 2: start one only where it can end by 560 s.
  while (( $(elapsed "$start") < 560000 - 240000 )); do
    check_round 1 05-streams lab-streams $round
    check_round 1 06-pinned-mapped lab-mapped $round
    round=$((round + 1))
  done
) &
wait
cat "$logs/times.txt"
