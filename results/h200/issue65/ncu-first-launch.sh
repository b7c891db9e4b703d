#!/usr/bin/env bash
# Issue 65: what ncu's first measured launch in a process costs, and whether a launch of a kernel of
# our own before the GPU's lock is taken can bear it (ncu-first-launch.cu says what the program
# prints). With week 3's usual metrics and options (grading::measure):
#   plain        no warm-up; ncu measures mmm_f32
#   unmeasured   a warm-up kernel ncu does not measure, then mmm_f32
#   measured     a warm-up kernel ncu measures too, then mmm_f32
#   two          two of `measured` at once, the second 0.3 s later: does it wait in its warm-up
#                until the first's process ends, or its last launch?
#   busy         `measured` beside 16 processes spinning on the CPU (the cores of the machine)
# Each timed by bash (the CPU ncu and the program used). Into DIR.
#
#   bash results/h200/issue65/ncu-first-launch.sh DIR
set -u
dir=$1
mkdir -p "$dir"
here=$(dirname "$0")
/usr/local/cuda/bin/nvcc -arch=sm_90 -o "$dir/nfl" "$here/ncu-first-launch.cu" >"$dir/nvcc.log" 2>&1 || exit 1
metrics=smsp__inst_executed_op_global_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum
metrics+=,smsp__inst_executed_op_shared_ld.sum,launch__shared_mem_per_block_static,smsp__inst_executed_op_ldgsts.sum
under_ncu() { # NAME FILTER ARG
  local TIMEFORMAT="$1: %R s wall, %U s user, %S s sys"
  { time /usr/local/cuda/bin/ncu --csv --page raw --print-units base --clock-control none --cache-control none \
    --kernel-name "$2" --metrics "$metrics" --log-file "$dir/$1.csv" "$dir/nfl" "$3" >"$dir/$1.log" 2>&1; } 2>>"$dir/time.txt"
}
for round in 1 2; do
  under_ncu plain-$round "regex:^mmm_f32$" none
  under_ncu unmeasured-$round "regex:^mmm_f32$" warmup
  under_ncu measured-$round "regex:^(warmup|mmm_f32)$" warmup
done
under_ncu two-a "regex:^(warmup|mmm_f32)$" warmup &
sleep 0.3
under_ncu two-b "regex:^(warmup|mmm_f32)$" warmup
wait
for i in $(seq 16); do timeout 20 sh -c 'while :; do :; done' & done
sleep 0.5
under_ncu busy-measured "regex:^(warmup|mmm_f32)$" warmup
under_ncu busy-plain "regex:^mmm_f32$" none
pkill -f 'while :; do :; done'
wait
cat "$dir/time.txt"
for f in "$dir"/*.log; do echo "== $(basename "$f")"; grep -v "^==PROF==" "$f" | grep -E "context|warmup|pause|mmm|end" ; done
