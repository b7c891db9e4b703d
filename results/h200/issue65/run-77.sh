#!/usr/bin/env bash
# Issue 65, run 77 (one H200): why run 76's step 18 (stream-K on every one of 132 multiprocessors) was
# slower than step 16 at 4096. lab-mmm-probe is run 76's build with one line more in wgmma::tail: no
# tile shared out where NO_SK is set (`std::env::var_os("NO_SK").is_none() &&` before its test, never
# committed), so that step 18 runs 132 blocks without stream-K. bf16 at 4096 with and without it,
# three times each in turn; ncu's Speed of Light and memory workload on steps 16 and 18 (SM
# frequency, duration, L2), and on step 18 without stream-K. Into $OUT/issue65-run-77.tgz.
set -u
c=$(mktemp -d); tar -C "$c" -xzf .gpu277z/c.tgz
logs=$(mktemp -d); trap 'tar -C "$logs" -czf "$OUT/issue65-run-77.tgz" .' EXIT
p=$c/bin/lab-mmm-probe
for i in 1 2 3; do
  timeout 60 $p --ladder --precision bf16 >"$logs/sk-$i.log" 2>&1
  NO_SK=1 timeout 60 $p --ladder --precision bf16 >"$logs/nosk-$i.log" 2>&1
done
timeout 120 /usr/local/cuda/bin/ncu --clock-control none --section SpeedOfLight --section MemoryWorkloadAnalysis -k regex:'wgmma_tma_bf16_(stored|streamk)' -c 6 $p --ladder --precision bf16 >"$logs/ncu-sk.log" 2>&1
NO_SK=1 timeout 120 /usr/local/cuda/bin/ncu --clock-control none --section SpeedOfLight -k regex:'wgmma_tma_bf16_streamk' -c 2 $p --ladder --precision bf16 >"$logs/ncu-nosk.log" 2>&1
grep -hE "^\| (16|18)\." "$logs"/sk-*.log "$logs"/nosk-*.log
grep -hE "^  wgmma|SM Frequency|Duration|Memory Throughput|L2 Hit|DRAM Through" "$logs"/ncu-*.log
