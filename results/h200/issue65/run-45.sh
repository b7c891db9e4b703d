#!/usr/bin/env bash
# Issue 65, run 45 (one H200): after run 44 (ncu's warm-up launch outside the GPU's lock; two checks'
# measured rules FAULT, and bulk-copy-naive's ncu held the GPU 60 s where run 41's held 8 to 13 s),
# (1) do ncu processes that measure a launch at the same time disturb each other? One ncu reads the
# six launches of run-42/ncu-passes.cu three times while eight others each measure one launch again
# and again; every line of ncu's that is no result, and each run's launches and times. (2)
# bulk-copy-naive.cu graded alone (--jobs 1, .gpu250's grader and lab-mmm): its phases. Into
# $OUT/run-45.log.
set -u
here=results/h200/issue65/run-42
log=$OUT/run-45.log
export PATH=/usr/local/cuda/bin:$PATH
{ nvidia-smi -L; date -u; } >"$log"
nvcc -arch=sm_90 -O3 -I kernels/cuda -DBLOCK_SIZE=16 "-DKERNELS=\"$PWD/kernels/cuda/mmm.cu\"" -o /tmp/np-ours "$here/ncu-passes.cu" || exit 1
CHEAP=smsp__inst_executed_op_global_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum,smsp__inst_executed_op_shared_ld.sum,launch__shared_mem_per_block_static,smsp__inst_executed_op_ldgsts.sum
ncu_run() { # CSV OUT ERR [OPTIONS]
  ncu --clock-control none --cache-control none --kernel-name 'regex:^mmm_f(32|64)$' --metrics "$CHEAP" --csv "${@:4}" \
    --log-file "$1" /tmp/np-ours run >"$2" 2>"$3"
}
{
  echo "## alone"
  ncu_run /tmp/alone.csv /tmp/alone.out /tmp/alone.err
  echo "rc=$? rows $(grep -c '"mmm_f' /tmp/alone.csv)"; grep -h "launch" /tmp/alone.err | tr '\n' ';'; echo
  echo "## beside eight ncu processes that each measure one launch, again and again"
  stop=/tmp/stop-others; rm -f $stop
  for i in 1 2 3 4 5 6 7 8; do
    ( n=0; while [[ ! -e $stop ]]; do n=$((n+1)); ncu_run /tmp/other-$i-$n.csv /dev/null /tmp/other-$i-$n.err --launch-count 1; echo "other $i run $n rc=$? rows $(grep -c '"mmm_f' /tmp/other-$i-$n.csv)" >>/tmp/others.txt; done ) &
  done
  sleep 3
  for r in 1 2 3; do
    ncu_run /tmp/beside-$r.csv /tmp/beside-$r.out /tmp/beside-$r.err
    echo "beside $r: rc=$? rows $(grep -c '"mmm_f' /tmp/beside-$r.csv)"; grep -h "launch" /tmp/beside-$r.err | tr '\n' ';'; echo
    grep -h "==ERROR==\|==WARNING==" /tmp/beside-$r.csv /tmp/beside-$r.err | grep -v "uncontrolled GPU caches\|unmodified GPU clocks" | sort | uniq -c | head -5
  done
  touch $stop; wait
  echo "the others: $(wc -l </tmp/others.txt) runs; rows per run:"; grep -o "rows [0-9]*" /tmp/others.txt | sort | uniq -c
  cat /tmp/other-*.csv /tmp/other-*.err | grep -h "==ERROR==\|==WARNING==" | grep -v "uncontrolled GPU caches\|unmodified GPU clocks" | sort | uniq -c | head -5
  echo "## bulk-copy-naive.cu graded alone"
  mkdir -p /tmp/bulk && cp assignments/03-mmm-tiled/adversarial/bulk-copy-naive.cu /tmp/bulk/
  s=$(date +%s%N)
  LAB_BIN_DIR=$PWD/.gpu250/bin LAB_PHASES=/tmp/bulk-phases.txt timeout 200 bash assignments/grade.sh --jobs 1 03-mmm-tiled /tmp/bulk \
    --out /tmp/bulk.csv --keep /tmp/bulk-checks >/tmp/bulk.log 2>&1
  echo "rc=$? $(( ($(date +%s%N) - s) / 1000000 )) ms"; cat /tmp/bulk-phases.txt; tail -c 600 /tmp/bulk.csv
} >>"$log" 2>&1
tail -c 5000 "$log"
