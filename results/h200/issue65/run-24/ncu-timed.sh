#!/usr/bin/env bash
# ncu timed (issue 65, run 24): runs /usr/local/cuda/bin/ncu with the arguments given, then, where
# NCU_LOG_DIR is set, writes there its wall time, its command line and the ==PROF== lines of its log
# (the passes per kernel); then the same run again profiling no kernel (ncu's own start and end),
# its waits unreported so the check's held time stays the first run's.
ncu=/usr/local/cuda/bin/ncu
start=$(date +%s%N)
"$ncu" "$@"
rc=$?
took=$(( ($(date +%s%N) - start) / 1000000 ))
[ -n "${NCU_LOG_DIR:-}" ] || exit $rc
log= prev= again=()
for arg in "$@"; do
  case $prev in
    --log-file) log=$arg; arg=$NCU_LOG_DIR/none.csv ;;
    --kernel-name) arg='regex:^no-such-kernel$' ;;
  esac
  again+=("$arg"); prev=$arg
done
start=$(date +%s%N)
env -u LAB_GPU_WAITS "$ncu" "${again[@]}" >/dev/null 2>&1
none=$(( ($(date +%s%N) - start) / 1000000 ))
n=$(ls "$NCU_LOG_DIR" | grep -c '^ncu-')
{ echo "profiled: $took ms (rc $rc); profiling no kernel: $none ms"; grep '==PROF==' "$log"; printf '%q ' "$@"; echo; } >"$NCU_LOG_DIR/ncu-$n.txt"
exit $rc
