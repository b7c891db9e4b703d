#!/usr/bin/env bash
# Issue 65, run 42 (one H200): what ncu's passes and printf's flush cost a week-3 check's hold of the
# GPU. ncu-passes.cu (run-42/) launches the six cases a check measures; ncu reads them with the week's
# ten metrics (lab-mmm/src/check.rs: METRICS and COPIES), with each alone, with groups of them and
# with the SASS-counted ones, as the measured child runs it (--clock-control none --cache-control
# none), and says how many passes each kernel took; the harness prints each launch's host time.
# Then printf-every-thread's kernel: the time to its end event against the time to a synchronize
# that flushes its lines, written to /dev/null, a file and a pipe. Into $OUT/run-42.log.
set -u
here=results/h200/issue65/run-42
log=$OUT/run-42.log
export PATH=/usr/local/cuda/bin:$PATH
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; ncu --version | tail -1; } >"$log"
build() { nvcc -arch=sm_90 -O3 -I kernels/cuda -DBLOCK_SIZE=16 "-DKERNELS=\"$PWD/$1\"" -o "$2" "$here/ncu-passes.cu"; }
build kernels/cuda/mmm.cu /tmp/np-ours || exit 1
build assignments/03-mmm-tiled/broken/printf-every-thread.cu /tmp/np-printf || exit 1
M1=smsp__inst_executed_op_global_ld.sum
M2=l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
M3=l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum
M4=l1tex__t_requests_pipe_lsu_mem_global_op_red.sum
M5=l1tex__t_requests_pipe_tex_mem_texture.sum
M6=l1tex__t_requests_pipe_tex_mem_surface.sum
M7=smsp__inst_executed_op_shared_ld.sum
M8=launch__shared_mem_per_block_static
N1=smsp__inst_executed_op_ldgsts.sum
N2=l1tex__m_xbar2l1tex_read_bytes_mem_global_op_tma_ld.sum
ALL=$M1,$M2,$M3,$M4,$M5,$M6,$M7,$M8,$N1,$N2
measure() { # NAME PROGRAM METRICS
  local s e rc
  s=$(date +%s%N)
  ncu --clock-control none --cache-control none --kernel-name 'regex:^mmm_f(32|64)$' --metrics "$3" --csv \
    --log-file /tmp/ncu-$1.csv "$2" run >/tmp/ncu-$1.out 2>/tmp/ncu-$1.err
  rc=$?
  e=$(date +%s%N)
  echo "== $1: rc=$rc wall $(( (e - s) / 1000000 )) ms; metrics $3"
  grep -o '[0-9]* pass[es]*' /tmp/ncu-$1.out /tmp/ncu-$1.err /tmp/ncu-$1.csv | sort | uniq -c
  grep -h "^launch" /tmp/ncu-$1.err | tr '\n' ';'; echo
  grep -h "ERR\|WARN\|error" /tmp/ncu-$1.out /tmp/ncu-$1.err /tmp/ncu-$1.csv | head -3
}
{
  echo "## the harness alone"; /tmp/np-ours run
  measure all /tmp/np-ours "$ALL"
  measure all-again /tmp/np-ours "$ALL"
  i=0; for m in $M1 $M2 $M3 $M4 $M5 $M6 $M7 $M8 $N1 $N2; do i=$((i+1)); measure "one-$i" /tmp/np-ours "$m"; done
  measure smsp /tmp/np-ours "$M1,$M7,$N1"
  measure l1-requests /tmp/np-ours "$M2,$M3,$M4,$M5,$M6"
  measure l1-ld-atom-red /tmp/np-ours "$M2,$M3,$M4"
  measure l1-tex-surf-tma /tmp/np-ours "$M5,$M6,$N2"
  measure launch-only /tmp/np-ours "$M8"
  measure sass /tmp/np-ours "smsp__sass_inst_executed_op_global_ld.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_ldgsts.sum,smsp__sass_inst_executed_op_generic_ld.sum,smsp__sass_inst_executed_op_global_atom.sum,smsp__sass_inst_executed_op_global_red.sum,$M8"
  measure sass-plus-l1 /tmp/np-ours "smsp__sass_inst_executed_op_global_ld.sum,smsp__sass_inst_executed_op_shared_ld.sum,smsp__sass_inst_executed_op_ldgsts.sum,$M2,$M8"
  echo "## the SASS-counted metrics ncu knows on this GPU"
  ncu --query-metrics 2>&1 | grep -o "smsp__sass_inst_executed_op_[a-z_]*" | sort -u | tr '\n' ' '; echo
  echo "## printf-every-thread: end event polled, then a synchronize that flushes the FIFO"
  echo "stdout to /dev/null:"; /tmp/np-printf flush >/dev/null
  echo "stdout to a file:"; /tmp/np-printf flush >/tmp/printf.txt; ls -l /tmp/printf.txt | awk '{print $5 " bytes"}'
  echo "stdout to a pipe:"; /tmp/np-printf flush | wc -c
  echo "## printf-every-thread under ncu, stdout to a pipe"
  measure printf-all /tmp/np-printf "$ALL"
  measure printf-launch-only /tmp/np-printf "$M8"
  cat /tmp/ncu-printf-all.out | wc -c
} >>"$log" 2>&1
tail -c 6000 "$log"
