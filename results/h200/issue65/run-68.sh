#!/usr/bin/env bash
# Issue 65, run 68 (one H200): does a busy GPU, not busy cores, slow ncu's batch? In run 67's class a
# batch's CUDA contexts together took a median of 1.17 s and ncu's first launches in them 2.88 s (26
# batches of 109 requests), against 0.17 s and 0.63 s for a batch of 1 alone (run 67's tests).
# ncu-first-launch.sh's `measured` run (its context and ncu's first launch, timed by the program)
# alone, twice; then beside 8 processes of gpu-busy.cu spinning kernels of 20 ms on the GPU, twice;
# then beside 8 of them under compute-sanitizer --tool racecheck (as a class's race cases), twice.
set -u
here=results/h200/issue65
dir=$OUT/ncu-first-launch-busy
mkdir -p "$dir"
/usr/local/cuda/bin/nvcc -arch=sm_90 -o "$dir/nfl" "$here/ncu-first-launch.cu" >"$dir/nvcc.log" 2>&1 || exit 1
/usr/local/cuda/bin/nvcc -arch=sm_90 -o "$dir/busy" "$here/gpu-busy.cu" >>"$dir/nvcc.log" 2>&1 || exit 1
metrics=smsp__inst_executed_op_global_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
metrics+=,smsp__inst_executed_op_shared_ld.sum,launch__shared_mem_per_block_static,smsp__inst_executed_op_ldgsts.sum
measured() { # NAME
  local TIMEFORMAT="$1: %R s wall, %U s user, %S s sys"
  { time /usr/local/cuda/bin/ncu --csv --page raw --print-units base --clock-control none --cache-control none \
    --kernel-name "regex:^(warmup|mmm_f32)$" --metrics "$metrics" --log-file "$dir/$1.csv" "$dir/nfl" warmup \
    >"$dir/$1.log" 2>&1; } 2>>"$dir/time.txt"
  grep -E "context|warmup " "$dir/$1.log" | sed "s/^/$1: /" >>"$dir/time.txt"
}
measured alone-1
measured alone-2
for i in $(seq 8); do "$dir/busy" 20 25 >"$dir/busy-$i.log" 2>&1 & done
sleep 2
measured busy-gpu-1
measured busy-gpu-2
wait
for i in $(seq 8); do /usr/local/cuda/bin/compute-sanitizer --tool racecheck "$dir/busy" 20 25 >"$dir/raced-$i.log" 2>&1 & done
sleep 4
measured raced-gpu-1
measured raced-gpu-2
wait
cat "$dir/time.txt"
cat "$dir"/busy-1.log "$dir"/raced-1.log | tail -3
