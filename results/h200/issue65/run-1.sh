#!/usr/bin/env bash
# Issue 65, run 1 (two H200s of one host, nvidia-h200-x2): a first look at the GPU lock and at the
# repeated runs of the program weeks. Release labs and grader in .gpu200/bin (from .gpu200z/c.tgz).
#   GPU 0: a class of 48 week-3 submissions (scripts/make-class.sh) graded with --jobs 16, as one
#          H200 machine's 16 cores would; then week 5's four test programs, checked at once, once.
#   GPU 1: the 37 distinct week-3 submissions graded with --jobs 1; then week 6's four, once.
# Into $OUT/issue65-run-1.tgz.
set -u
c=$PWD/.gpu200
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-1.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
elapsed() { local s=$1; echo $(( ($(date +%s%N) - s) / 1000000 )); }

# Week 3: the class, and the originals one at a time.
bash scripts/make-class.sh 03-mmm-tiled 48 "$work/class" >"$logs/make-class.log" 2>&1
mkdir -p "$work/originals"
for kind in honest broken adversarial; do
  for f in assignments/03-mmm-tiled/$kind/*.cu; do cp "$f" "$work/originals/$kind-$(basename "$f")"; done
done
cp "$work/class/originals.txt" "$logs/class-originals.txt"

# Weeks 5 and 6: our solution, the starter, a broken program and one near the GPU time limit.
sets() {  # WEEK SOLUTION STARTER BROKEN
  local dir=$work/$1; mkdir -p "$dir"
  cp "reference/weeks/$2" "$dir/ours.cu"; cp "assignments/$1/$3" "$dir/starter.cu"
  cp "assignments/$1/broken/$4" "$dir/$4"; cp "assignments/$1/honest/near-the-time-limit.cu" "$dir/near-the-time-limit.cu"
}
sets 05-streams pipeline.cu pipeline.cu synchronous-copies.cu
sets 06-pinned-mapped zero_copy.cu zero_copy.cu copies-anyway.cu
check_round() {  # GPU WEEK LAB ROUND: the week's programs checked at once, one GPU lock between them
  local gpu=$1 week=$2 lab=$3 round=$4 pids=() s
  s=$(date +%s%N)
  for f in "$work/$week"/*.cu; do
    name=$(basename "$f" .cu)
    CUDA_VISIBLE_DEVICES=$gpu LAB_GPU_LOCK=$work/gpu-$gpu.lock timeout 300 "$c/bin/$lab" --program-source "$f" --check \
      >"$logs/$week-$name-$round.log" 2>&1 &
    pids+=($!)
  done
  for p in "${pids[@]}"; do wait "$p"; done
  echo "$week round $round: $(elapsed "$s") ms" >>"$logs/times.txt"
}

(
  s=$(date +%s%N)
  CUDA_VISIBLE_DEVICES=0 timeout 540 bash assignments/grade.sh --jobs 16 03-mmm-tiled "$work/class" \
    --out "$logs/class-48.csv" --keep "$logs/class-48-checks" >"$logs/class-48.log" 2>&1
  echo "class of 48, --jobs 16, rc=$?: $(elapsed "$s") ms" >>"$logs/times.txt"
  check_round 0 05-streams lab-streams 1
) &
(
  s=$(date +%s%N)
  CUDA_VISIBLE_DEVICES=1 timeout 540 bash assignments/grade.sh --jobs 1 03-mmm-tiled "$work/originals" \
    --out "$logs/originals-1-job.csv" --keep "$logs/originals-checks" >"$logs/originals-1-job.log" 2>&1
  echo "37 originals, --jobs 1, rc=$?: $(elapsed "$s") ms" >>"$logs/times.txt"
  check_round 1 06-pinned-mapped lab-mapped 1
) &
wait
python3 results/h200/issue65/same-verdicts.py copies "$logs/class-48.csv" "$logs/class-originals.txt" \
  "$logs/originals-1-job.csv" >"$logs/class-48-same.txt" 2>&1
cat "$logs/times.txt" "$logs/class-48-same.txt" | tail -20
