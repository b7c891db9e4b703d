# Issue 65, runs 72 and 74: what both source. With `dir` set (a new folder under $OUT):
#   build          ncu-batch.cu, churn.cu and gpu-busy.cu built into DIR, and a cubin of each honest
#                  week-3 submission and of our kernels/cuda/mmm.cu (sm_90, BLOCK_SIZE 16)
#   measure LOAD   ncu-batch.cu's batch of those cubins under ncu with week 3's usual metrics and
#                  options (as ncu-batch.sh), into DIR/LOAD.log; its wall, user and sys time to
#                  DIR/time.txt
#   beside LOAD COUNT COMMAND...
#                  COUNT processes of COMMAND started, `measure LOAD` beside them, then they are
#                  stopped; the first one's first line to DIR/time.txt
#   medians LOAD.. for each LOAD, the median of each part over the submissions after the first
nvcc=/usr/local/cuda/bin/nvcc
here=results/h200/issue65
metrics=smsp__inst_executed_op_global_ld.sum,l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum
metrics+=,l1tex__t_requests_pipe_lsu_mem_global_op_atom.sum,l1tex__t_requests_pipe_lsu_mem_global_op_red.sum
metrics+=,smsp__inst_executed_op_shared_ld.sum,launch__shared_mem_per_block_static,smsp__inst_executed_op_ldgsts.sum

build() {
  mkdir -p "$dir/cubins"
  $nvcc -arch=sm_90 -o "$dir/batch" "$here/ncu-batch.cu" -lcuda >"$dir/nvcc.log" 2>&1 || return 1
  $nvcc -arch=sm_90 -o "$dir/churn" "$here/churn.cu" -lcuda >>"$dir/nvcc.log" 2>&1 || return 1
  $nvcc -arch=sm_90 -o "$dir/busy" "$here/gpu-busy.cu" >>"$dir/nvcc.log" 2>&1 || return 1
  for f in assignments/03-mmm-tiled/honest/*.cu kernels/cuda/mmm.cu; do
    $nvcc -cubin -arch=sm_90 -DBLOCK_SIZE=16 -I kernels/cuda -o "$dir/cubins/$(basename "$f" .cu).cubin" "$f" \
      >>"$dir/nvcc.log" 2>&1 || echo "$f: does not compile alone" >>"$dir/nvcc.log"
  done
}

measure() { # LOAD
  local TIMEFORMAT="$1: %R s wall, %U s user, %S s sys"
  { time timeout 100 /usr/local/cuda/bin/ncu --csv --page raw --print-units base --clock-control none \
    --cache-control none --kernel-name 'regex:^ncu_first_launch$|^mmm_f(32|64)$' --metrics "$metrics" \
    --log-file "$dir/$1.csv" "$dir/batch" "$dir"/cubins/*.cubin >"$dir/$1.log" 2>&1; } 2>>"$dir/time.txt"
}

beside() { # LOAD COUNT COMMAND...
  local load=$1 count=$2
  shift 2
  for i in $(seq "$count"); do "$@" >"$dir/$load-load-$i.log" 2>&1 & done
  sleep 3
  measure "$load"
  kill $(jobs -p) 2>/dev/null
  pkill -f "$dir/(busy|churn)" 2>/dev/null
  wait
  head -1 "$dir/$load-load-1.log" | sed "s/^/$load load: /" >>"$dir/time.txt"
}

medians() { # LOAD...
  for load in "$@"; do
    grep "^batch" "$dir/$load.log" | tail -n +2 | awk -v load="$load" '
      { c[NR] = $5; s[NR] = $7; l[NR] = $9; r[NR] = $11; a[NR] = $13 }
      function median(x, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
        return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2 }
      END { printf "%-12s %d submissions after the first, medians: context %.3f, first launch %.3f, launches %.3f, reset %.3f, all %.3f s\n",
        load, NR, median(c, NR), median(s, NR), median(l, NR), median(r, NR), median(a, NR) }'
  done
}
