#!/usr/bin/env bash
# Issue 65, run 48 (one H200): run 47 again (the class of 300, --jobs 32) after it stalled as run 46
# did (five checks holding the GPU 60 s each in ncu, one after another) with at most eight measured
# runs alive at once: run-48/ncu-slot.patch on the branch's first commit, a trial not kept (it
# stalled the same way). Also: ncu's options about ports and connections, and every 5 s how many ncu
# processes are alive ($OUT/ncu-alive.txt). The bundle: the release grader and lab-mmm of that code in
# .gpu254/bin (.gpu254z/c.tgz carried).
set -u
tar xzf .gpu254z/c.tgz
/usr/local/cuda/bin/ncu --help 2>&1 | grep -i -B1 -A3 'port\|connection\|lock' >"$OUT/ncu-help.txt"
while sleep 5; do echo "$(date -u +%T) $(pgrep -xc ncu) ncu, $(pgrep -xc lab-mmm) lab-mmm"; done >"$OUT/ncu-alive.txt" &
watch=$!
bash results/h200/issue65/class-run.sh .gpu254 32 520 run-48
kill "$watch"
