#!/usr/bin/env bash
# Issue 65: one ncu process measuring many week-3 submissions (ncu-batch.cu) against one process a
# submission, as a check's measured child is now. With week 3's usual metrics and options
# (grading::measure, as ncu-first-launch.sh). Every .cu of assignments/03-mmm-tiled/{honest,broken,
# adversarial} and our kernels/cuda/mmm.cu compiled to a cubin (sm_90, BLOCK_SIZE 16; a file that
# does not compile alone is left out, as nvcc.log says), then:
#   solo      each honest cubin and ours in an ncu process of its own, one after another
#   batch     the same in one ncu process
#   all       every cubin but those that print (which run for minutes under ncu's replays) in one ncu
#             process: the broken and adversarial ones first (a kernel that traps among them), so
#             that the honest ones and ours show whether ncu measures the same after a fault
#   busy      `all` again beside 16 processes spinning on the CPU
# Each timed by bash; ncu-batch.py then splits each file at the separator's rows and compares each
# submission's counters across the runs. Into DIR.
#
#   bash results/h200/issue65/ncu-batch.sh DIR
set -u
dir=$(realpath -m "$1")
here=$(dirname "$0")
mkdir -p "$dir/cubins"
/usr/local/cuda/bin/nvcc -arch=sm_90 -o "$dir/batch" "$here/ncu-batch.cu" -lcuda >"$dir/nvcc.log" 2>&1 || exit 1
cubins=()
for kind in honest broken adversarial; do
  for f in assignments/03-mmm-tiled/$kind/*.cu; do cubins+=("$f|$dir/cubins/$kind-$(basename "$f" .cu).cubin"); done
done
cubins+=("kernels/cuda/mmm.cu|$dir/cubins/ours-mmm.cubin")
printf '%s\n' "${cubins[@]}" | xargs -P 16 -I{} sh -c 'src=${1%%|*}; out=${1#*|};
  /usr/local/cuda/bin/nvcc -cubin -arch=sm_90 -DBLOCK_SIZE=16 -I kernels/cuda -o "$out" "$src" >"$out.log" 2>&1 || echo "$src: does not compile alone"' _ {} >>"$dir/nvcc.log"
honest=("$dir"/cubins/honest-*.cubin "$dir/cubins/ours-mmm.cubin")
all=()
for c in "$dir"/cubins/broken-*.cubin "$dir"/cubins/adversarial-*.cubin "${honest[@]}"; do
  [[ $c == *printf* ]] || all+=("$c")
done
metrics=smsp__inst_executed_op_global_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum
metrics+=,smsp__inst_executed_op_shared_ld.sum,launch__shared_mem_per_block_static,smsp__inst_executed_op_ldgsts.sum
under_ncu() { # NAME CUBIN...
  local name=$1 TIMEFORMAT="$1: %R s wall, %U s user, %S s sys"
  shift
  { time timeout 100 /usr/local/cuda/bin/ncu --csv --page raw --print-units base --clock-control none --cache-control none \
    --kernel-name 'regex:^ncu_first_launch$|^mmm_f(32|64)$' --metrics "$metrics" --log-file "$dir/$name.csv" \
    "$dir/batch" "$@" >"$dir/$name.log" 2>&1; } 2>>"$dir/time.txt"
}
start=$(date +%s.%N)
for c in "${honest[@]}"; do under_ncu "solo-$(basename "$c" .cubin)" "$c"; done
echo "solo, ${#honest[@]} processes: $(python3 -c "print(round($(date +%s.%N) - $start, 3))") s" >>"$dir/time.txt"
under_ncu batch "${honest[@]}"
under_ncu all "${all[@]}"
for i in $(seq 16); do timeout 60 sh -c 'while :; do :; done' & done
sleep 0.5
under_ncu busy "${all[@]}"
pkill -f 'while :; do :; done'
wait
cat "$dir/nvcc.log" "$dir/time.txt"
grep -h "^batch" "$dir/all.log" "$dir/busy.log" | awk '{print $1, $2, $3, $5, $7, $9, $11, $13, $16, $17}'
python3 "$here/ncu-batch.py" "$dir"
