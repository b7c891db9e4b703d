#!/usr/bin/env bash
# Issue 65, run 89 (one H200): what holds the SM clock at about 1.5 GHz while bf16 GEMMs run (run 88:
# 1545 to 1560 MHz at 4096, and NVML's 320 to 350 W of a 700 W limit, which this run found had not
# caught up with runs under half a second)? Run 88's bench with each GEMM launched
# 20000 times back to back at 4096 (about 4 s each), with nvidia-smi's clocks, power, temperature
# and clock event reasons every 100 ms beside it, and `nvidia-smi -q -d PERFORMANCE,CLOCK` twice
# while it runs. Reads the GPU's state only. Into $OUT/issue65-run-89.tgz.
set -u
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-89.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version,power.limit,clocks.max.sm --format=csv,noheader; date -u; } >"$logs/gpu.txt"
src=$(mktemp -d)
patch -s -o "$src/bf16-bench.cu" results/h200/issue65/run-85/bf16-bench.cu results/h200/issue65/run-88/bf16-bench.diff || exit 1
/usr/local/cuda/bin/nvcc -std=c++17 -O3 -arch=sm_90a -I kernels/cuda "$src/bf16-bench.cu" \
  -lcublas -lcuda -lnvidia-ml -o "$src/bench" >"$logs/build.log" 2>&1
echo "build rc=$?" >>"$logs/rc.txt"
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_event_reasons.active \
  --format=csv -lms 100 >"$logs/smi.csv" 2>&1 &
smi=$!
timeout 150 "$src/bench" 4096x4096x4096 --sustained 20000 >"$logs/sustained-4096.log" 2>&1 &
bench=$!
sleep 4; nvidia-smi -q -d PERFORMANCE,CLOCK >"$logs/query-1.txt" 2>&1
sleep 5; nvidia-smi -q -d PERFORMANCE,CLOCK >"$logs/query-2.txt" 2>&1
wait "$bench"
echo "bench rc=$?" >>"$logs/rc.txt"
kill "$smi"
cat "$logs/rc.txt"
grep -hE "^(step 16|pairs|one group|cuBLAS Gemm)" "$logs/sustained-4096.log" | cut -c1-150
awk -F', ' 'NR > 1 && $2+0 > 0 { n[$5]++; c[$5] += $2; p[$5] += $3; t[$5] += $4 }
  END { for (r in n) printf "reasons %s: %d samples, %.0f MHz, %.0f W, %.0f C\n", r, n[r], c[r] / n[r], p[r] / n[r], t[r] / n[r] }' "$logs/smi.csv"
grep -A12 "Clocks Event Reasons" "$logs/query-1.txt" | head -14
