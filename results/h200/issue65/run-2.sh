#!/usr/bin/env bash
# Issue 65, run 2 (two H200s of one host): after run 1's class graded none in 9 minutes, the
# measured (ncu) child starts only once its check holds the GPU. Release labs and grader in
# .gpu201/bin (from .gpu201z/c.tgz).
#   GPU 0: a class of 32 week-3 submissions, --jobs 16, at most 200 s, the processes listed every
#          20 s (ps-*.txt: who waits on what).
#   GPU 1: weeks 5 and 6, their four test programs checked at once (one GPU lock between them), once.
# Into $OUT/issue65-run-2.tgz.
set -u
c=$PWD/.gpu201
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-2.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; nproc; date -u; } >"$logs/gpu.txt"
export LAB_BIN_DIR=$c/bin
work=$(mktemp -d)
elapsed() { local s=$1; echo $(( ($(date +%s%N) - s) / 1000000 )); }
bash scripts/make-class.sh 03-mmm-tiled 32 "$work/class" >"$logs/make-class.log" 2>&1
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
  CUDA_VISIBLE_DEVICES=0 timeout 200 bash assignments/grade.sh --jobs 16 03-mmm-tiled "$work/class" \
    --out "$logs/class-32.csv" --keep "$logs/class-32-checks" >"$logs/class-32.log" 2>&1
  echo "class of 32, --jobs 16, rc=$?: $(elapsed "$s") ms" >>"$logs/times.txt"
) &
class=$!
(
  for t in 20 40 60 80 100 140 180; do
    sleep 20
    { date -u; ls -la /tmp/nsight-compute-lock* 2>&1;
      ps -eo pid,ppid,stat,etimes,wchan:24,args --forest | grep -E "lab-mmm|ncu|sanitizer|nvcc|cicc|ptxas|grader" | grep -v grep | cut -c1-260; } >"$logs/ps-$t.txt" 2>&1
    kill -0 $class 2>/dev/null || break
  done
) &
(
  check_round 1 05-streams lab-streams 1
  check_round 1 06-pinned-mapped lab-mapped 1
) &
wait
cat "$logs/times.txt"
