#!/usr/bin/env bash
# Issue 65, run 96 (one H200): the whole class of 300 to its end, committed grader, --jobs 16 (run 93's
# setting: 283 graded in its 550 s limit; run 95's --jobs 24 graded 273 in as long). A device call
# ends after 600 s and a class may take about as long, so the class runs in a session of its own
# (setsid: it outlives the call while the machine is held) with a limit of 900 s, and the call
# waits for it at most 585 s; `run-96.sh collect`, the next call, waits for the rest. Both copy what
# there is to $OUT: the class's tarball once it ended, else the log so far.
# The class ended in the first call (571 s).
#   bash results/h200/issue65/run-96.sh          (carry .gpu293z: run 93's bundle)
#   bash results/h200/issue65/run-96.sh collect
set -u
state=/tmp/run-96
wait_for_the_class() {
  for _ in $(seq "$1"); do [[ -e $state/done ]] && break; sleep 1; done
  if [[ -e $state/done ]]; then cp "$state"/out/* "$OUT"/; else cp "$state"/tmp/tmp.*/class-300.log "$OUT"/ 2>/dev/null; fi
  cp "$state/class.log" "$OUT/run-96-output.log"
}
if [[ ${1-} == collect ]]; then wait_for_the_class 560; exit; fi
echo "uid $(id -u)"
mkdir -p .gpu293 "$state/out" "$state/tmp" && tar -C .gpu293 -xzf .gpu293z/c.tgz
OUT=$state/out TMPDIR=$state/tmp setsid bash -c \
  'bash results/h200/issue65/class-run.sh .gpu293 16 900 run-96; touch '"$state"'/done' \
  >"$state/class.log" 2>&1 </dev/null &
wait_for_the_class 585
