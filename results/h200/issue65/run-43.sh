#!/usr/bin/env bash
# Issue 65, run 43 (one H200): after run 42 (the surface requests cost a week-3 kernel about 80 ms of
# ncu's 120, and ncu's first measured launch 0.6 s), the metric sets that could replace the week's,
# and whether a launch before the measured ones takes ncu's start out of them. Same harness
# (run-42/ncu-passes.cu, its first-other and first-same modes added after run 42). Into
# $OUT/run-43.log.
set -u
here=results/h200/issue65/run-42
log=$OUT/run-43.log
export PATH=/usr/local/cuda/bin:$PATH
{ nvidia-smi -L; date -u; } >"$log"
nvcc -arch=sm_90 -O3 -I kernels/cuda -DBLOCK_SIZE=16 "-DKERNELS=\"$PWD/kernels/cuda/mmm.cu\"" -o /tmp/np-ours "$here/ncu-passes.cu" || exit 1
nvcc -arch=sm_90 -O3 -I kernels/cuda -DBLOCK_SIZE=16 "-DKERNELS=\"$PWD/assignments/03-mmm-tiled/broken/printf-every-thread.cu\"" -o /tmp/np-printf "$here/ncu-passes.cu" || exit 1
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
TEX=l1tex__t_requests_pipe_tex.sum
measure() { # NAME PROGRAM MODE METRICS [NCU OPTIONS]
  local s e rc
  s=$(date +%s%N)
  ncu --clock-control none --cache-control none --kernel-name 'regex:^mmm_f(32|64)$' --metrics "$4" --csv "${@:5}" \
    --log-file /tmp/ncu-$1.csv "$2" "$3" >/tmp/ncu-$1.out 2>/tmp/ncu-$1.err
  rc=$?
  e=$(date +%s%N)
  echo "== $1: rc=$rc wall $(( (e - s) / 1000000 )) ms; $3; metrics $4 ${*:5}"
  grep -h "launch\|skipped" /tmp/ncu-$1.err | tr '\n' ';'; echo
  grep -c '"mmm_f' /tmp/ncu-$1.csv
  grep -h "ERR\|error" /tmp/ncu-$1.out /tmp/ncu-$1.err /tmp/ncu-$1.csv | head -3
}
{
  echo "## the tex pipe's and surface's metrics ncu knows"
  ncu --query-metrics 2>&1 | grep -io "[a-z0-9_]*\(surface\|pipe_tex\)[a-z0-9_]*" | sort -u | tr '\n' ' '; echo
  measure all-1 /tmp/np-ours run "$M1,$M2,$M3,$M4,$M5,$M6,$M7,$M8,$N1,$N2"
  measure no-surface /tmp/np-ours run "$M1,$M2,$M3,$M4,$M5,$M7,$M8,$N1,$N2"
  measure tex-pipe /tmp/np-ours run "$M1,$M2,$M3,$M4,$TEX,$M7,$M8,$N1,$N2"
  measure tex-pipe-alone /tmp/np-ours run "$TEX"
  measure no-tex-no-tma /tmp/np-ours run "$M1,$M2,$M3,$M4,$M7,$M8,$N1"
  measure no-tex /tmp/np-ours run "$M1,$M2,$M3,$M4,$M7,$M8,$N1,$N2"
  measure first-other /tmp/np-ours first-other "$M1,$M2,$M3,$M4,$TEX,$M7,$M8,$N1,$N2"
  measure first-same /tmp/np-ours first-same "$M1,$M2,$M3,$M4,$TEX,$M7,$M8,$N1,$N2" --launch-skip 1
  measure all-2 /tmp/np-ours run "$M1,$M2,$M3,$M4,$M5,$M6,$M7,$M8,$N1,$N2"
  measure printf-tex-pipe /tmp/np-printf run "$M1,$M2,$M3,$M4,$TEX,$M7,$M8,$N1,$N2"
  echo "## the counts of ours, all ten against tex-pipe"
  cat /tmp/ncu-all-2.csv | grep '"mmm_f' | cut -c1-400 | head -20
  cat /tmp/ncu-tex-pipe.csv | grep '"mmm_f' | cut -c1-400 | head -20
} >>"$log" 2>&1
grep -v "^\"" "$log" | tail -c 5000
