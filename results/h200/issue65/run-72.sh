#!/usr/bin/env bash
# Issue 65, run 72 (one H200): what slows a request of ncu's batch in a class? In run 67's class a
# request took 2.03 s of its batch (run 69: 1.44 s), where ncu-batch.cu's submissions after the first
# took 0.30 s alone (run 57) and 0.5 to 0.7 s beside 16 cores spinning (run 59). Here ncu-batch.cu
# measures our kernel and the honest week-3 submissions in one ncu process, alone and then beside 8
# processes of one kind of load each: CPU spinning (16 of them), GPU kernels of 20 ms (gpu-busy.cu),
# the same under racecheck, and churn.cu's contexts, driver calls, pageable copies and host memory;
# alone again at the end. Per load: each submission's line, ncu's wall, user and sys time, and the
# loads' rounds; then the median of each part over the submissions after the first.
# (The steps it shares with run 74 were written out here as it ran; now in batch-beside.sh.)
set -u
dir=$OUT/run-72
source results/h200/issue65/batch-beside.sh
build || exit 1
measure alone
beside cpu 16 timeout 40 sh -c 'while :; do :; done'
beside gpu 8 "$dir/busy" 20 40
beside racecheck 8 /usr/local/cuda/bin/compute-sanitizer --tool racecheck "$dir/busy" 20 40
for kind in contexts calls copies memory; do beside "$kind" 8 "$dir/churn" "$kind" 40; done
measure alone-again
cat "$dir/nvcc.log" "$dir/time.txt"
medians alone cpu gpu racecheck contexts calls copies memory alone-again
