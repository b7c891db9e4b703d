#!/usr/bin/env bash
# ncu and variants of it (issue 65, run 25): runs /usr/local/cuda/bin/ncu with the arguments given
# (the measured child of a week-3 check), then, while the check's files are still there, runs the
# same child again under each variant named in NCU_VARIANTS (its waits unreported, so that the
# check's held time stays the first run's), writing each one's wall time to NCU_LOG_DIR/variants.txt:
#   again    the same metrics again
#   shared   launch__shared_mem_per_block_static alone (a launch attribute)
#   smsp     the three instruction counts (smsp__inst_executed_op_*)
#   l1tex    the six L1 counters (l1tex__*)
#   first    every metric, the first kernel launch alone (--launch-count 1)
#   passes   every metric, ncu's own progress lines kept (passes per kernel) instead of the CSV
ncu=/usr/local/cuda/bin/ncu
"$ncu" "$@"
rc=$?
[ -n "${NCU_LOG_DIR:-}" ] || exit $rc
metrics= prev=
for arg in "$@"; do [ "$prev" = --metrics ] && metrics=$arg; prev=$arg; done
pick() { tr ',' '\n' <<<"$metrics" | grep -E "$1" | paste -sd, -; }
for variant in ${NCU_VARIANTS:-}; do
  case $variant in
    again|first|passes) m=$metrics ;;
    shared) m=launch__shared_mem_per_block_static ;;
    smsp) m=$(pick '^smsp__') ;;
    l1tex) m=$(pick '^l1tex__') ;;
  esac
  args=() prev= skip=
  for arg in "$@"; do
    if [ -n "$skip" ]; then skip=; prev=$arg; continue; fi
    case $prev in
      --metrics) arg=$m ;;
      --log-file) arg=$NCU_LOG_DIR/$variant.csv ;;
    esac
    # passes: no CSV and no log file, so that ncu's progress lines reach stdout
    if [ "$variant" = passes ]; then
      case $arg in
        --csv) prev=$arg; continue ;;
        --page|--print-units|--log-file) skip=1; prev=$arg; continue ;;
      esac
    fi
    args+=("$arg"); prev=$arg
  done
  extra=()
  [ "$variant" = first ] && extra=(--launch-count 1)
  s=$(date +%s%N)
  # ncu's own lines only: a kernel that prints from every thread writes a million lines a launch
  env -u LAB_GPU_WAITS "$ncu" "${extra[@]}" "${args[@]}" 2>&1 | grep -a '==PROF==' >"$NCU_LOG_DIR/$variant.out"
  echo "$variant: rc ${PIPESTATUS[0]} $(( ($(date +%s%N) - s) / 1000000 )) ms, $(grep -c passes "$NCU_LOG_DIR/$variant.out") lines with passes" >>"$NCU_LOG_DIR/variants.txt"
done
exit $rc
