#!/usr/bin/env bash
# Issue 65, run 81 (one H200): the sweep and its plot with step 18 as committed in be18b20 (sharing
# the last round out along k only past wgmma::MIN_IDLE_STAGES; run 78's sweep shared it out
# everywhere). Release lab-mmm in .gpu280z/c.tgz (bin). Into $OUT/issue65-run-81.tgz.
set -u
c=$(mktemp -d)
tar -C "$c" -xzf .gpu280z/c.tgz
logs=$(mktemp -d)
trap 'tar -C "$logs" -czf "$OUT/issue65-run-81.tgz" .' EXIT
{ nvidia-smi -L; nvidia-smi --query-gpu=driver_version --format=csv,noheader; date -u; } >"$logs/gpu.txt"
timeout 300 "$c/bin/lab-mmm" --ladder --sweep --plot "$logs/sweep.svg" >"$logs/sweep.log" 2>&1
echo "sweep rc=$?" | tee "$logs/rc.txt"
grep "^|" "$logs/sweep.log" | grep -E "bf16|tf32"
